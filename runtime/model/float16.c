/* float16 models computed in float32 (float16.h): the kernels are float32
 * ones, so at load float16 constants become float32, Casts to float16
 * inside the graph cast to float32, and the graph's float16 inputs and
 * outputs are converted by Cast nodes added at its edges. */
#include <stdlib.h>
#include <string.h>

#include "float16.h"
#include "npu_half.h"

#define OUT_OF_MEMORY() npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory converting float16")

/* A node proto like `like` (its name and other attributes), or a fresh
 * one, whose `to` attribute is `to`: the Cast the rewrite wants. */
static Onnx__NodeProto *cast_proto(npu_graph *g, const Onnx__NodeProto *like, npu_dtype to)
{
  Onnx__AttributeProto *attribute = npu_graph_calloc(g, 1, sizeof *attribute);
  if (!attribute)
    return NULL;
  onnx__attribute_proto__init(attribute);
  attribute->name = "to";
  attribute->has_type = true;
  attribute->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  attribute->has_i = true;
  attribute->i = to;
  Onnx__NodeProto *node = npu_graph_node_with(g, like, &attribute, 1);
  if (node)
    node->op_type = "Cast";
  return node;
}

static bool is_output(const npu_graph *g, int32_t tensor)
{
  for (size_t i = 0; i < g->output_count; i++)
    if (g->outputs[i] == tensor)
      return true;
  return false;
}

static npu_status widen_constant(npu_graph *g, npu_graph_tensor *t)
{
  size_t count = t->data_size / sizeof(uint16_t);
  float *values = npu_graph_calloc(g, count, sizeof *values);
  if (!values)
    return OUT_OF_MEMORY();
  for (size_t i = 0; i < count; i++) {
    uint16_t half;
    memcpy(&half, (const uint8_t *)t->data + i * sizeof half, sizeof half);
    values[i] = npu_half_to_float(half);
  }
  t->data = values;
  t->data_size = count * sizeof *values;
  t->dtype = NPU_DTYPE_FLOAT32;
  return NPU_OK;
}

/* A new intermediate tensor named as `like`; -1 when out of memory. */
static int32_t add_tensor(npu_graph *g, int32_t like)
{
  npu_graph_tensor *grown = realloc(g->tensors, (g->tensor_count + 1) * sizeof *grown);
  if (!grown)
    return -1;
  g->tensors = grown;
  g->tensors[g->tensor_count] = g->tensors[like];
  g->tensors[g->tensor_count].constant = false;
  g->tensors[g->tensor_count].data = NULL;
  g->tensors[g->tensor_count].data_size = 0;
  g->tensors[g->tensor_count].producer = -1;
  return (int32_t)g->tensor_count++;
}

/* A Cast to `to` from `from` into `into`, after the existing nodes (the
 * caller puts it in the order). */
static npu_status add_cast(npu_graph *g, int32_t from, int32_t into, npu_dtype to)
{
  Onnx__NodeProto *proto = cast_proto(g, NULL, to);
  if (!proto)
    return OUT_OF_MEMORY();
  proto->name = "float16 conversion";
  return npu_graph_append_node(g, proto, &from, 1, into) ? NPU_OK : OUT_OF_MEMORY();
}

/* Graph input `input` (float16) is read as float32 from a Cast. */
static npu_status widen_input(npu_graph *g, int32_t input)
{
  int32_t wide = add_tensor(g, input);
  if (wide < 0)
    return OUT_OF_MEMORY();
  g->tensors[wide].dtype = NPU_DTYPE_FLOAT32;
  for (size_t n = 0; n < g->node_count; n++)
    for (uint32_t i = 0; i < g->nodes[n].input_count; i++)
      if (g->nodes[n].inputs[i] == input)
        g->nodes[n].inputs[i] = wide;
  return add_cast(g, input, wide, NPU_DTYPE_FLOAT32);
}

/* Graph output `output` (declared float16) is written by a Cast from the
 * float32 its producer now computes. */
static npu_status narrow_output(npu_graph *g, int32_t output)
{
  int32_t wide = add_tensor(g, output);
  if (wide < 0)
    return OUT_OF_MEMORY();
  npu_graph_node *producer = &g->nodes[g->tensors[output].producer];
  g->tensors[wide].dtype = NPU_DTYPE_UNDEFINED; /* (inferred when planning) */
  g->tensors[wide].has_shape = false;
  for (uint32_t o = 0; o < producer->output_count; o++)
    if (producer->outputs[o] == output)
      producer->outputs[o] = wide;
  for (size_t n = 0; n < g->node_count; n++) /* other readers take the float32 */
    for (uint32_t i = 0; i < g->nodes[n].input_count; i++)
      if (g->nodes[n].inputs[i] == output)
        g->nodes[n].inputs[i] = wide;
  g->tensors[wide].producer = g->tensors[output].producer;
  return add_cast(g, wide, output, NPU_DTYPE_FLOAT16);
}

static bool is_cast_to_half(const npu_graph_node *n)
{
  if (strcmp(n->proto->op_type, "Cast") != 0)
    return false;
  for (size_t i = 0; i < n->proto->n_attribute; i++) {
    const Onnx__AttributeProto *a = n->proto->attribute[i];
    if (a->name && strcmp(a->name, "to") == 0)
      return a->i == NPU_DTYPE_FLOAT16;
  }
  return false;
}

npu_status npu_graph_float16_to_float32(npu_graph *g)
{
  size_t first_added = g->node_count;
  npu_status status = NPU_OK;
  for (size_t t = 0; t < g->tensor_count && status == NPU_OK; t++)
    if (g->tensors[t].constant && g->tensors[t].dtype == NPU_DTYPE_FLOAT16)
      status = widen_constant(g, &g->tensors[t]);
  for (size_t n = 0; n < g->node_count && status == NPU_OK; n++) {
    npu_graph_node *node = &g->nodes[n];
    if (!node->folded && is_cast_to_half(node) && !is_output(g, node->outputs[0])) {
      node->proto = cast_proto(g, node->proto, NPU_DTYPE_FLOAT32);
      if (!node->proto)
        status = OUT_OF_MEMORY();
    }
  }
  size_t inputs_added = 0;
  for (size_t i = 0; i < g->input_count && status == NPU_OK; i++)
    if (g->tensors[g->inputs[i]].dtype == NPU_DTYPE_FLOAT16) {
      status = widen_input(g, g->inputs[i]);
      inputs_added++;
    }
  for (size_t o = 0; o < g->output_count && status == NPU_OK; o++) {
    int32_t out = g->outputs[o];
    const npu_graph_tensor *t = &g->tensors[out];
    if (t->dtype == NPU_DTYPE_FLOAT16 && !t->constant && t->producer >= 0 &&
        (size_t)t->producer < first_added && !is_cast_to_half(&g->nodes[t->producer]))
      status = narrow_output(g, out);
  }
  if (status != NPU_OK || g->node_count == first_added)
    return status;
  /* The input Casts run first, the output Casts last. */
  uint32_t *order = malloc(g->node_count * sizeof *order);
  if (!order)
    return OUT_OF_MEMORY();
  size_t next = 0;
  for (size_t i = 0; i < inputs_added; i++)
    order[next++] = (uint32_t)(first_added + i);
  for (size_t i = 0; i < first_added; i++)
    order[next++] = g->order[i];
  for (size_t i = first_added + inputs_added; i < g->node_count; i++)
    order[next++] = (uint32_t)i;
  free(g->order);
  g->order = order;
  return NPU_OK;
}
