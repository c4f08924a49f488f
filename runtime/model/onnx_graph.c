/* Builds the graph IR from a parsed ONNX model and validates everything a
 * kernel will later rely on: operators and their arity, every input defined
 * exactly once, element types, dimensions, constant data matching its
 * shape, external data inside the model's directory, and no cycles. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "external_data.h"
#include "graph.h"
#include "npu_hal.h"

#define MIN_OPSET 1
#define MAX_OPSET 21

/* ---- name table: tensor name -> index ---------------------------------- */

typedef struct name_table {
  const char **names;
  int32_t *indices;
  size_t capacity; /* power of two */
} name_table;

static size_t hash_name(const char *name)
{
  size_t h = 1469598103934665603u;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++)
    h = (h ^ *c) * 1099511628211u;
  return h;
}

static bool table_init(name_table *t, size_t entries)
{
  t->capacity = 16;
  while (t->capacity < entries * 2)
    t->capacity *= 2;
  t->names = calloc(t->capacity, sizeof *t->names);
  t->indices = calloc(t->capacity, sizeof *t->indices);
  return t->names && t->indices;
}

static void table_free(name_table *t)
{
  free(t->names);
  free(t->indices);
}

static int32_t table_find(const name_table *t, const char *name)
{
  for (size_t i = hash_name(name) & (t->capacity - 1);; i = (i + 1) & (t->capacity - 1)) {
    if (!t->names[i])
      return -1;
    if (strcmp(t->names[i], name) == 0)
      return t->indices[i];
  }
}

/* False when the name is already there. */
static bool table_add(name_table *t, const char *name, int32_t index)
{
  size_t i = hash_name(name) & (t->capacity - 1);
  for (; t->names[i]; i = (i + 1) & (t->capacity - 1))
    if (strcmp(t->names[i], name) == 0)
      return false;
  t->names[i] = name;
  t->indices[i] = index;
  return true;
}

/* ---- helpers --------------------------------------------------------------- */

typedef struct builder {
  const Onnx__ModelProto *model;
  const Onnx__GraphProto *proto;
  const char *base_dir;
  npu_graph *graph;
  name_table names;
} builder;

static const char *node_label(const Onnx__NodeProto *node, size_t index, char *buffer,
                              size_t size)
{
  if (node->name && *node->name)
    snprintf(buffer, size, "node '%s' (#%zu, %s)", node->name, index,
             node->op_type ? node->op_type : "?");
  else
    snprintf(buffer, size, "node #%zu (%s)", index, node->op_type ? node->op_type : "?");
  return buffer;
}

bool npu_graph_own(npu_graph *graph, void *data)
{
  void **grown = realloc(graph->owned, (graph->owned_count + 1) * sizeof *grown);
  if (!grown)
    return false;
  graph->owned = grown;
  graph->owned[graph->owned_count++] = data;
  return true;
}

void *npu_graph_calloc(npu_graph *graph, size_t count, size_t size)
{
  void *p = calloc(count ? count : 1, size);
  if (p && !npu_graph_own(graph, p)) {
    free(p);
    return NULL;
  }
  return p;
}

const Onnx__AttributeProto *npu_graph_attribute(const Onnx__NodeProto *node, const char *name)
{
  for (size_t i = 0; i < node->n_attribute; i++)
    if (node->attribute[i]->name && strcmp(node->attribute[i]->name, name) == 0)
      return node->attribute[i];
  return NULL;
}

static bool replaced(const Onnx__AttributeProto *a, Onnx__AttributeProto *const *replacing,
                     size_t count)
{
  for (size_t r = 0; r < count; r++)
    if (a->name && strcmp(a->name, replacing[r]->name) == 0)
      return true;
  return false;
}

Onnx__NodeProto *npu_graph_node_with(npu_graph *graph, const Onnx__NodeProto *like,
                                     Onnx__AttributeProto *const *replacing, size_t count)
{
  Onnx__NodeProto *node = npu_graph_calloc(graph, 1, sizeof *node);
  size_t before = like ? like->n_attribute : 0, kept = 0;
  Onnx__AttributeProto **attributes = npu_graph_calloc(graph, before + count, sizeof *attributes);
  if (!node || !attributes)
    return NULL;
  if (like)
    *node = *like;
  else
    onnx__node_proto__init(node);
  for (size_t i = 0; i < before; i++)
    if (!replaced(like->attribute[i], replacing, count))
      attributes[kept++] = like->attribute[i];
  for (size_t r = 0; r < count; r++)
    attributes[kept++] = replacing[r];
  node->n_attribute = kept;
  node->attribute = attributes;
  return node;
}

bool npu_graph_append_node(npu_graph *g, Onnx__NodeProto *proto, const int32_t *inputs,
                           uint32_t input_count, int32_t output)
{
  int32_t *in = malloc((input_count ? input_count : 1) * sizeof *in);
  int32_t *out = malloc(sizeof *out);
  npu_graph_node *grown = realloc(g->nodes, (g->node_count + 1) * sizeof *grown);
  if (grown)
    g->nodes = grown;
  if (!in || !out || !grown) {
    free(in);
    free(out);
    return false;
  }
  memcpy(in, inputs, input_count * sizeof *in);
  out[0] = output;
  g->nodes[g->node_count] = (npu_graph_node){proto, npu_op_schema_find(NULL, proto->op_type),
                                             input_count, 1, in, out, false};
  g->tensors[output].producer = (int32_t)g->node_count++;
  return true;
}

static int32_t new_tensor(npu_graph *graph, const char *name)
{
  npu_graph_tensor *t = &graph->tensors[graph->tensor_count];
  memset(t, 0, sizeof *t);
  t->name = name;
  t->producer = -1;
  return (int32_t)graph->tensor_count++;
}

/* ---- constants --------------------------------------------------------------- */

/* A decimal offset or length of external data; false unless all of `text` is one. */
static bool parse_external_number(const char *text, long long *value)
{
  char *end;
  errno = 0;
  *value = strtoll(text, &end, 10);
  return end != text && *end == '\0' && errno == 0;
}

static npu_status read_external(builder *b, const Onnx__TensorProto *tp, size_t size,
                                const void **data)
{
  const char *location = NULL;
  long long offset = 0, length = -1;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const Onnx__StringStringEntryProto *kv = tp->external_data[i];
    if (!kv->key || !kv->value)
      continue;
    bool number = true;
    if (strcmp(kv->key, "location") == 0)
      location = kv->value;
    else if (strcmp(kv->key, "offset") == 0)
      number = parse_external_number(kv->value, &offset);
    else if (strcmp(kv->key, "length") == 0)
      number = parse_external_number(kv->value, &length);
    if (!number)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': external data %s '%s' is "
                           "not a number", tp->name, kv->key, kv->value);
  }
  if (!location || !*location)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': external data without a "
                         "location", tp->name);
  if (!b->base_dir)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': external data '%s' needs "
                         "the model's directory (load the model from a file)", tp->name,
                         location);
  if (offset < 0 || (length >= 0 && (size_t)length != size))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': external data offset %lld / "
                         "length %lld do not match its %zu bytes", tp->name, offset, length, size);
  void *bytes;
  npu_status status = npu_external_data_read(b->base_dir, tp->name, location, offset, size, &bytes);
  if (status != NPU_OK)
    return status;
  if (!npu_graph_own(b->graph, bytes)) {
    free(bytes);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "initializer '%s': out of memory", tp->name);
  }
  *data = bytes;
  return NPU_OK;
}

/* Packs the typed repeated fields ONNX allows instead of raw_data. */
static npu_status pack_typed(builder *b, const Onnx__TensorProto *tp, npu_dtype dtype,
                             size_t count, const void **data)
{
  size_t esize = npu_dtype_size(dtype);
  size_t available;
  switch (dtype) {
  case NPU_DTYPE_FLOAT32: available = tp->n_float_data; break;
  case NPU_DTYPE_INT64: available = tp->n_int64_data; break;
  case NPU_DTYPE_FLOAT64: available = tp->n_double_data; break;
  case NPU_DTYPE_UINT32:
  case NPU_DTYPE_UINT64: available = tp->n_uint64_data; break;
  default: available = tp->n_int32_data; break; /* int32 and narrower, bool, float16 */
  }
  if (available != count)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': %zu values for a shape of "
                         "%zu elements", tp->name, available, count);
  uint8_t *bytes = malloc(count * esize + 1);
  if (!bytes || !npu_graph_own(b->graph, bytes)) {
    free(bytes);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "initializer '%s': out of memory", tp->name);
  }
  if (count == 0)
    ; /* an empty tensor: its typed field may be absent */
  else if (dtype == NPU_DTYPE_FLOAT32)
    memcpy(bytes, tp->float_data, count * esize);
  else if (dtype == NPU_DTYPE_INT64)
    memcpy(bytes, tp->int64_data, count * esize);
  else if (dtype == NPU_DTYPE_FLOAT64)
    memcpy(bytes, tp->double_data, count * esize);
  else if (dtype == NPU_DTYPE_UINT32 || dtype == NPU_DTYPE_UINT64)
    for (size_t i = 0; i < count; i++) /* (uint32: narrowed to its low bytes, as below) */
      memcpy(bytes + i * esize, &tp->uint64_data[i], esize);
  else
    for (size_t i = 0; i < count; i++) { /* narrow each int32 to the element size */
      int32_t v = tp->int32_data[i];
      memcpy(bytes + i * esize, &v, esize); /* little-endian: the low bytes */
    }
  *data = bytes;
  return NPU_OK;
}

static npu_status load_constant(builder *b, const Onnx__TensorProto *tp, npu_graph_tensor *t)
{
  npu_dtype dtype = tp->has_data_type ? (npu_dtype)tp->data_type : NPU_DTYPE_UNDEFINED;
  if (npu_dtype_size(dtype) == 0)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': element type %d is not "
                         "supported", tp->name, (int)dtype);
  if (tp->n_dims > NPU_MAX_RANK)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': rank %zu exceeds %d",
                         tp->name, tp->n_dims, NPU_MAX_RANK);
  t->dtype = dtype;
  t->rank = (uint32_t)tp->n_dims;
  t->has_shape = true;
  t->constant = true;
  for (size_t i = 0; i < tp->n_dims; i++)
    t->dims[i] = tp->dims[i];
  size_t count;
  if (!npu_dims_elements(t->dims, t->rank, &count) ||
      !npu_dims_bytes(t->dims, t->rank, npu_dtype_size(dtype), &t->data_size))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': negative or overflowing "
                         "dimensions", tp->name);
  if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return read_external(b, tp, t->data_size, &t->data);
  if (tp->has_raw_data) {
    if (tp->raw_data.len != t->data_size)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': %zu bytes of data for %zu "
                           "elements of %s (%zu bytes)", tp->name, tp->raw_data.len, count,
                           npu_dtype_name(dtype), t->data_size);
    t->data = tp->raw_data.data;
    return NPU_OK;
  }
  return pack_typed(b, tp, dtype, count, &t->data);
}

/* ---- graph inputs and outputs ------------------------------------------------ */

static npu_status read_value_info(const Onnx__ValueInfoProto *vi, npu_graph_tensor *t,
                                  bool required)
{
  const Onnx__TypeProto *type = vi->type;
  if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type) {
    if (!required)
      return NPU_OK;
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "graph input '%s' is not a tensor", vi->name);
  }
  const Onnx__TypeProto__Tensor *tt = type->tensor_type;
  npu_dtype dtype = tt->has_elem_type ? (npu_dtype)tt->elem_type : NPU_DTYPE_UNDEFINED;
  if (npu_dtype_size(dtype) == 0)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "'%s': element type %d is not supported",
                         vi->name, (int)dtype);
  t->dtype = dtype;
  if (!tt->shape)
    return required ? npu_set_error(NPU_ERROR_INVALID_MODEL, "graph input '%s' has no shape",
                                    vi->name)
                    : NPU_OK;
  if (tt->shape->n_dim > NPU_MAX_RANK)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "'%s': rank %zu exceeds %d", vi->name,
                         tt->shape->n_dim, NPU_MAX_RANK);
  t->rank = (uint32_t)tt->shape->n_dim;
  t->has_shape = true;
  for (uint32_t i = 0; i < t->rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    t->dims[i] = NPU_DIM_DYNAMIC;
    t->dim_names[i] = NULL;
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if (d->dim_value < 0)
        return npu_set_error(NPU_ERROR_INVALID_MODEL, "'%s': dimension %u is %lld", vi->name, i,
                             (long long)d->dim_value);
      t->dims[i] = d->dim_value;
    } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
      t->dim_names[i] = d->dim_param;
    }
  }
  return NPU_OK;
}

/* A graph output that is a constant or a graph input already has its type and
 * shape; its declaration may only agree with them, never resize them. */
static npu_status check_declared_output(const Onnx__ValueInfoProto *vi,
                                        const npu_graph_tensor *t)
{
  npu_graph_tensor declared = {0};
  npu_status status = read_value_info(vi, &declared, false);
  if (status != NPU_OK)
    return status;
  bool agrees = declared.dtype == NPU_DTYPE_UNDEFINED || declared.dtype == t->dtype;
  if (declared.has_shape) {
    agrees = agrees && declared.rank == t->rank;
    for (uint32_t i = 0; agrees && i < t->rank; i++)
      agrees = declared.dims[i] == NPU_DIM_DYNAMIC || t->dims[i] == NPU_DIM_DYNAMIC ||
               declared.dims[i] == t->dims[i];
  }
  if (!agrees)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "graph output '%s' is declared with another "
                         "type or shape than the %s it names", vi->name,
                         t->constant ? "constant" : "graph input");
  return NPU_OK;
}

/* ---- nodes ---------------------------------------------------------------------- */

static npu_status check_node(builder *b, size_t index)
{
  const Onnx__NodeProto *node = b->proto->node[index];
  char label[160];
  node_label(node, index, label, sizeof label);
  if (!node->op_type || !*node->op_type)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s has no operator type", label);
  const npu_op_schema *schema = npu_op_schema_find(node->domain, node->op_type);
  bool own_domain = !node->domain || !*node->domain || strcmp(node->domain, "ai.onnx") == 0;
  if (!schema && own_domain)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: operator '%s' is not supported", label,
                         node->op_type);
  if (!schema)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: operator '%s' of domain '%s' is not "
                         "supported", label, node->op_type, node->domain);
  if (b->graph->opset < schema->since)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: %s before opset %u is not supported "
                         "(the model uses opset %lld)", label, node->op_type, schema->since,
                         (long long)b->graph->opset);
  unsigned min_inputs = npu_op_min_inputs(schema, b->graph->opset);
  if (node->n_input < min_inputs ||
      (schema->max_inputs != NPU_OP_VARIADIC && node->n_input > schema->max_inputs))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: %zu inputs, %s (opset %lld) takes %u to "
                         "%u", label, node->n_input, node->op_type, (long long)b->graph->opset,
                         min_inputs, schema->max_inputs);
  if (node->n_output < schema->min_outputs ||
      (schema->max_outputs != NPU_OP_VARIADIC && node->n_output > schema->max_outputs))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: %zu outputs, %s gives %u to %u", label,
                         node->n_output, node->op_type, schema->min_outputs, schema->max_outputs);
  b->graph->nodes[index].proto = node;
  b->graph->nodes[index].schema = schema;
  return NPU_OK;
}

static npu_status add_node_outputs(builder *b, size_t index)
{
  const Onnx__NodeProto *node = b->proto->node[index];
  npu_graph_node *n = &b->graph->nodes[index];
  char label[160];
  n->output_count = (uint32_t)node->n_output;
  n->outputs = malloc((node->n_output + 1) * sizeof *n->outputs);
  if (!n->outputs)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory building the graph");
  for (size_t o = 0; o < node->n_output; o++) {
    const char *name = node->output[o];
    n->outputs[o] = -1;
    if (!name || !*name)
      continue; /* an optional output nobody wants */
    int32_t t = new_tensor(b->graph, name);
    if (!table_add(&b->names, name, t))
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: output '%s' is defined more than once",
                           node_label(node, index, label, sizeof label), name);
    b->graph->tensors[t].producer = (int32_t)index;
    n->outputs[o] = t;
  }
  return NPU_OK;
}

static npu_status resolve_node_inputs(builder *b, size_t index)
{
  const Onnx__NodeProto *node = b->proto->node[index];
  npu_graph_node *n = &b->graph->nodes[index];
  char label[160];
  n->input_count = (uint32_t)node->n_input;
  n->inputs = malloc((node->n_input + 1) * sizeof *n->inputs);
  if (!n->inputs)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory building the graph");
  for (size_t i = 0; i < node->n_input; i++) {
    const char *name = node->input[i];
    if (!name || !*name) {
      if (i < npu_op_min_inputs(n->schema, b->graph->opset))
        return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: required input %zu is empty",
                             node_label(node, index, label, sizeof label), i);
      n->inputs[i] = -1;
      continue;
    }
    n->inputs[i] = table_find(&b->names, name);
    if (n->inputs[i] < 0)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' is not produced by any node, "
                           "initializer or graph input",
                           node_label(node, index, label, sizeof label), name);
  }
  return NPU_OK;
}

/* Constant nodes become constant tensors at load. */
static npu_status fold_constant_node(builder *b, size_t index)
{
  const Onnx__NodeProto *node = b->proto->node[index];
  npu_graph_node *n = &b->graph->nodes[index];
  char label[160];
  if (strcmp(node->op_type, "Constant") != 0 || n->outputs[0] < 0)
    return NPU_OK;
  npu_graph_tensor *t = &b->graph->tensors[n->outputs[0]];
  for (size_t i = 0; i < node->n_attribute; i++) {
    const Onnx__AttributeProto *attr = node->attribute[i];
    if (!attr->name)
      continue;
    npu_status status = NPU_OK;
    if (strcmp(attr->name, "value") == 0 && attr->t) {
      const char *name = attr->t->name;
      attr->t->name = (char *)t->name; /* messages name the tensor */
      status = load_constant(b, attr->t, t);
      attr->t->name = (char *)name;
    } else if (strcmp(attr->name, "value_float") == 0 || strcmp(attr->name, "value_int") == 0) {
      bool is_float = attr->name[6] == 'f';
      t->dtype = is_float ? NPU_DTYPE_FLOAT32 : NPU_DTYPE_INT64;
      t->rank = 0;
      t->has_shape = t->constant = true;
      t->data = is_float ? (const void *)&attr->f : (const void *)&attr->i;
      t->data_size = npu_dtype_size(t->dtype);
    } else if (strcmp(attr->name, "value_floats") == 0 || strcmp(attr->name, "value_ints") == 0) {
      bool is_float = attr->name[6] == 'f';
      t->dtype = is_float ? NPU_DTYPE_FLOAT32 : NPU_DTYPE_INT64;
      t->rank = 1;
      t->dims[0] = (int64_t)(is_float ? attr->n_floats : attr->n_ints);
      t->has_shape = t->constant = true;
      t->data = is_float ? (const void *)attr->floats : (const void *)attr->ints;
      t->data_size = (size_t)t->dims[0] * npu_dtype_size(t->dtype);
    } else {
      continue;
    }
    if (status == NPU_OK)
      n->folded = true;
    return status;
  }
  return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s has no value attribute it can use",
                       node_label(node, index, label, sizeof label));
}

/* Kahn's algorithm; a node left over is on a cycle. */
static npu_status sort_nodes(builder *b)
{
  npu_graph *g = b->graph;
  size_t n = g->node_count;
  uint32_t *pending = calloc(n + 1, sizeof *pending);
  g->order = malloc((n + 1) * sizeof *g->order);
  if (!pending || !g->order) {
    free(pending);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory sorting the graph");
  }
  for (size_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < g->nodes[i].input_count; k++) {
      int32_t t = g->nodes[i].inputs[k];
      if (t >= 0 && g->tensors[t].producer >= 0)
        pending[i]++;
    }
  size_t head = 0, tail = 0;
  for (size_t i = 0; i < n; i++)
    if (pending[i] == 0)
      g->order[tail++] = (uint32_t)i;
  while (head < tail) {
    uint32_t done = g->order[head++];
    /* Consumers of this node's outputs: a linear scan keeps this simple; models
     * have at most a few thousand nodes. */
    for (size_t i = 0; i < n; i++)
      for (uint32_t k = 0; k < g->nodes[i].input_count; k++) {
        int32_t t = g->nodes[i].inputs[k];
        if (t >= 0 && g->tensors[t].producer == (int32_t)done && --pending[i] == 0)
          g->order[tail++] = (uint32_t)i;
      }
  }
  npu_status status = NPU_OK;
  if (tail < n) {
    for (size_t i = 0; i < n; i++) {
      if (pending[i] != 0) {
        char label[160];
        status = npu_set_error(NPU_ERROR_INVALID_MODEL, "the graph has a cycle through %s",
                               node_label(g->nodes[i].proto, i, label, sizeof label));
        break;
      }
    }
  }
  free(pending);
  return status;
}

/* ---- the whole graph ------------------------------------------------------------- */

static npu_status read_opset(const Onnx__ModelProto *model, int64_t *opset)
{
  *opset = -1;
  for (size_t i = 0; i < model->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *id = model->opset_import[i];
    if (!id->domain || !*id->domain || strcmp(id->domain, "ai.onnx") == 0)
      *opset = id->has_version ? id->version : -1;
  }
  if (*opset < MIN_OPSET || *opset > MAX_OPSET)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "opset %lld of the default domain is not "
                         "supported (%d to %d are)", (long long)*opset, MIN_OPSET, MAX_OPSET);
  return NPU_OK;
}

static npu_status build(builder *b)
{
  const Onnx__GraphProto *proto = b->proto;
  npu_graph *g = b->graph;
  size_t outputs = 0;
  for (size_t i = 0; i < proto->n_node; i++)
    outputs += proto->node[i] ? proto->node[i]->n_output : 0;
  size_t capacity = proto->n_initializer + proto->n_input + outputs;
  g->tensors = calloc(capacity + 1, sizeof *g->tensors);
  g->nodes = calloc(proto->n_node + 1, sizeof *g->nodes);
  g->inputs = calloc(proto->n_input + 1, sizeof *g->inputs);
  g->outputs = calloc(proto->n_output + 1, sizeof *g->outputs);
  if (!g->tensors || !g->nodes || !g->inputs || !g->outputs || !table_init(&b->names, capacity))
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory building the graph");
  g->node_count = proto->n_node;

  for (size_t i = 0; i < proto->n_initializer; i++) {
    const Onnx__TensorProto *tp = proto->initializer[i];
    if (!tp->name || !*tp->name)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer #%zu has no name", i);
    int32_t t = new_tensor(g, tp->name);
    if (!table_add(&b->names, tp->name, t))
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s' is defined twice",
                           tp->name);
    npu_status status = load_constant(b, tp, &g->tensors[t]);
    if (status != NPU_OK)
      return status;
  }
  for (size_t i = 0; i < proto->n_input; i++) {
    const Onnx__ValueInfoProto *vi = proto->input[i];
    if (!vi->name || !*vi->name)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "graph input #%zu has no name", i);
    if (table_find(&b->names, vi->name) >= 0)
      continue; /* an initializer listed as input (IR < 4): a constant */
    int32_t t = new_tensor(g, vi->name);
    table_add(&b->names, vi->name, t);
    npu_status status = read_value_info(vi, &g->tensors[t], true);
    if (status != NPU_OK)
      return status;
    g->inputs[g->input_count++] = t;
  }
  for (size_t i = 0; i < proto->n_node; i++) {
    if (!proto->node[i])
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "node #%zu is empty", i);
    npu_status status = check_node(b, i);
    if (status == NPU_OK)
      status = add_node_outputs(b, i);
    if (status != NPU_OK)
      return status;
  }
  for (size_t i = 0; i < proto->n_node; i++) {
    npu_status status = resolve_node_inputs(b, i);
    if (status == NPU_OK)
      status = fold_constant_node(b, i);
    if (status != NPU_OK)
      return status;
  }
  if (proto->n_output == 0)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "the graph has no outputs");
  for (size_t i = 0; i < proto->n_output; i++) {
    const Onnx__ValueInfoProto *vi = proto->output[i];
    int32_t t = vi->name ? table_find(&b->names, vi->name) : -1;
    if (t < 0)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "graph output '%s' is not produced by the "
                           "graph", vi->name ? vi->name : "");
    npu_status status = g->tensors[t].has_shape ? check_declared_output(vi, &g->tensors[t])
                                                : read_value_info(vi, &g->tensors[t], false);
    if (status != NPU_OK)
      return status;
    g->outputs[g->output_count++] = t;
  }
  return sort_nodes(b);
}

npu_status npu_graph_from_onnx(const Onnx__ModelProto *model, const char *base_dir,
                               npu_graph *graph)
{
  memset(graph, 0, sizeof *graph);
  if (!model->graph)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "the model has no graph");
  npu_status status = read_opset(model, &graph->opset);
  if (status != NPU_OK)
    return status;
  builder b = {model, model->graph, base_dir, graph, {0}};
  status = build(&b);
  table_free(&b.names);
  if (status != NPU_OK)
    npu_graph_clear(graph);
  return status;
}

void npu_graph_clear(npu_graph *graph)
{
  for (size_t i = 0; i < graph->node_count; i++) {
    free(graph->nodes[i].inputs);
    free(graph->nodes[i].outputs);
  }
  for (size_t i = 0; i < graph->owned_count; i++)
    free(graph->owned[i]);
  free(graph->owned);
  free(graph->tensors);
  free(graph->nodes);
  free(graph->order);
  free(graph->inputs);
  free(graph->outputs);
  memset(graph, 0, sizeof *graph);
}
