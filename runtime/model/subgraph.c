/* Compiled subgraphs on the runtime's side (subgraph.h). */
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "op_params.h"
#include "subgraph.h"

struct registered_executable {
  uint32_t *nodes;
  uint32_t node_count;
  const npu_hal_executable *executable;
};

void npu_subgraph_clear(npu_subgraph *subgraph)
{
  free(subgraph->nodes);
  free(subgraph->graph_tensors);
  free(subgraph->hal_nodes);
  free(subgraph->descs);
  free(subgraph->values);
  free(subgraph->indices);
  free(subgraph->params);
  memset(subgraph, 0, sizeof *subgraph);
}

typedef enum { ROLE_NONE, ROLE_INPUT, ROLE_CONSTANT, ROLE_WRITTEN } tensor_role;

/* Whether a tensor the subgraph writes is read after it. */
static bool read_outside(const npu_subgraph_source *source, const bool *inside, int32_t tensor)
{
  const npu_graph *g = source->graph;
  for (size_t i = 0; i < g->output_count; i++)
    if (g->outputs[i] == tensor)
      return true;
  const npu_consumers *c = source->consumers;
  for (uint32_t k = c->offsets[tensor]; k < c->offsets[tensor + 1]; k++)
    if (source->runs[c->nodes[k]] && !inside[c->nodes[k]])
      return true;
  return false;
}

/* Numbers the tensors the nodes touch (-1 in `numbers` elsewhere) and
 * tells each one's role. */
static uint32_t number_tensors(const npu_subgraph_source *source, const uint32_t *nodes,
                               uint32_t count, int32_t *numbers, int32_t *graph_tensors,
                               tensor_role *roles)
{
  const npu_graph *g = source->graph;
  uint32_t tensors = 0;
  for (uint32_t k = 0; k < count; k++) {
    const npu_graph_node *n = &g->nodes[nodes[k]];
    for (uint32_t i = 0; i < n->input_count + n->output_count; i++) {
      bool output = i >= n->input_count;
      int32_t id = output ? n->outputs[i - n->input_count] : n->inputs[i];
      if (id < 0 || numbers[id] >= 0)
        continue;
      numbers[id] = (int32_t)tensors;
      graph_tensors[tensors] = id;
      const void *value;
      source->tensor(source->data, id, &value);
      roles[tensors++] = output ? ROLE_WRITTEN : value ? ROLE_CONSTANT : ROLE_INPUT;
    }
  }
  return tensors;
}

npu_status npu_subgraph_describe(const npu_subgraph_source *source, const uint32_t *nodes,
                                 uint32_t count, npu_subgraph *sg)
{
  const npu_graph *g = source->graph;
  memset(sg, 0, sizeof *sg);
  size_t io = 0, inputs = 0;
  for (uint32_t k = 0; k < count; k++) {
    io += g->nodes[nodes[k]].input_count + g->nodes[nodes[k]].output_count;
    inputs += g->nodes[nodes[k]].input_count;
  }
  int32_t *numbers = malloc((g->tensor_count + 1) * sizeof *numbers);
  tensor_role *roles = malloc((io + 1) * sizeof *roles);
  bool *inside = calloc(g->node_count + 1, sizeof *inside);
  sg->nodes = malloc((count + 1) * sizeof *sg->nodes);
  sg->graph_tensors = malloc((io + 1) * sizeof *sg->graph_tensors);
  sg->hal_nodes = calloc(count + 1, sizeof *sg->hal_nodes);
  sg->descs = calloc(2 * io + 1, sizeof *sg->descs);
  sg->values = calloc(io + inputs + 1, sizeof *sg->values);
  sg->indices = malloc((2 * io + 1) * sizeof *sg->indices);
  sg->params = calloc(count + 1, sizeof *sg->params);
  npu_status status = NPU_OK;
  if (!numbers || !roles || !inside || !sg->nodes || !sg->graph_tensors || !sg->hal_nodes ||
      !sg->descs || !sg->values || !sg->indices || !sg->params)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory describing a subgraph");
  if (status != NPU_OK) {
    free(numbers);
    free(roles);
    free(inside);
    npu_subgraph_clear(sg);
    return status;
  }
  for (size_t t = 0; t < g->tensor_count; t++)
    numbers[t] = -1;
  memcpy(sg->nodes, nodes, count * sizeof *nodes);
  for (uint32_t k = 0; k < count; k++)
    inside[nodes[k]] = true;
  uint32_t tensors = number_tensors(source, nodes, count, numbers, sg->graph_tensors, roles);
  for (uint32_t t = 0; t < tensors; t++)
    sg->descs[t] = *source->tensor(source->data, sg->graph_tensors[t], &sg->values[t]);

  /* Each node's operator, over the subgraph's tensors. */
  npu_hal_tensor_desc *op_descs = sg->descs + tensors;
  const void **op_values = sg->values + tensors;
  uint32_t *ends = sg->indices;
  for (uint32_t k = 0; k < count; k++) {
    const npu_graph_node *n = &g->nodes[nodes[k]];
    npu_hal_subgraph_node *hn = &sg->hal_nodes[k];
    hn->inputs = ends;
    hn->outputs = ends + n->input_count;
    hn->op = (npu_hal_op){n->proto->op_type, g->opset, source->attributes(source->data, nodes[k]),
                          n->input_count, n->output_count, op_descs, op_descs + n->input_count,
                          op_values, .name = n->proto->name,
                          .precision = source->precision};
    for (uint32_t i = 0; i < n->input_count + n->output_count; i++) {
      bool output = i >= n->input_count;
      int32_t id = output ? n->outputs[i - n->input_count] : n->inputs[i];
      ends[i] = id < 0 ? NPU_HAL_SUBGRAPH_ABSENT : (uint32_t)numbers[id];
      if (id >= 0)
        op_descs[i] = sg->descs[numbers[id]];
      if (id >= 0 && !output)
        op_values[i] = sg->values[numbers[id]];
    }
    npu_op_params_attach(n->schema, &hn->op, &sg->params[k], ""); /* (resolved when planned) */
    ends += n->input_count + n->output_count;
    op_descs += n->input_count + n->output_count;
    op_values += n->input_count;
  }

  /* The boundary: inputs, then outputs, then constants. */
  npu_hal_subgraph *h = &sg->hal;
  uint32_t *boundary = ends;
  for (uint32_t t = 0; t < tensors; t++)
    if (roles[t] == ROLE_INPUT)
      boundary[h->input_count++] = t;
  for (uint32_t t = 0; t < tensors; t++)
    if (roles[t] == ROLE_WRITTEN && read_outside(source, inside, sg->graph_tensors[t]))
      boundary[h->input_count + h->output_count++] = t;
  for (uint32_t t = 0; t < tensors; t++)
    if (roles[t] == ROLE_CONSTANT)
      boundary[h->input_count + h->output_count + h->constant_count++] = t;
  h->node_count = count;
  h->nodes = sg->hal_nodes;
  h->tensor_count = tensors;
  h->tensors = sg->descs;
  h->values = sg->values;
  h->inputs = boundary;
  h->outputs = boundary + h->input_count;
  h->constants = boundary + h->input_count + h->output_count;
  free(numbers);
  free(roles);
  free(inside);
  return NPU_OK;
}

/* ---- the registry ------------------------------------------------------------------- */

static struct registered_executable *find_entry(npu_subgraph_registry *registry,
                                                const npu_subgraph *sg)
{
  for (size_t e = 0; e < registry->count; e++) {
    struct registered_executable *entry = &registry->entries[e];
    if (entry->node_count == sg->hal.node_count &&
        memcmp(entry->nodes, sg->nodes, entry->node_count * sizeof *entry->nodes) == 0)
      return entry;
  }
  return NULL;
}

/* Makes `executable` the one to reshape for its nodes. A registry short of
 * memory only forgets: the next shape compiles again. */
static void remember(npu_subgraph_registry *registry, const npu_subgraph *sg,
                     const npu_hal_executable *executable)
{
  struct registered_executable *entry = find_entry(registry, sg);
  if (entry) {
    entry->executable = executable;
    return;
  }
  uint32_t *nodes = malloc((sg->hal.node_count + 1) * sizeof *nodes);
  struct registered_executable *grown =
      nodes ? realloc(registry->entries, (registry->count + 1) * sizeof *grown) : NULL;
  if (!grown) {
    free(nodes);
    return;
  }
  memcpy(nodes, sg->nodes, sg->hal.node_count * sizeof *nodes);
  registry->entries = grown;
  registry->entries[registry->count++] =
      (struct registered_executable){nodes, sg->hal.node_count, executable};
}

static void forget(npu_subgraph_registry *registry, const npu_hal_executable *executable)
{
  for (size_t e = 0; e < registry->count;) {
    if (registry->entries[e].executable != executable) {
      e++;
      continue;
    }
    free(registry->entries[e].nodes);
    registry->entries[e] = registry->entries[--registry->count];
  }
}

void npu_subgraph_registry_clear(npu_subgraph_registry *registry)
{
  for (size_t e = 0; e < registry->count; e++)
    free(registry->entries[e].nodes);
  free(registry->entries);
  memset(registry, 0, sizeof *registry);
}

/* ---- compiling ----------------------------------------------------------------------- */

static npu_status make_executable(npu_subgraph_registry *registry, npu_device *device,
                                  const npu_hal_graph_ops *ops, const npu_subgraph *sg,
                                  npu_hal_executable **executable)
{
  struct registered_executable *entry = find_entry(registry, sg);
  if (entry && ops->executable_reshape) {
    npu_status status = ops->executable_reshape(npu_device_hal(device), entry->executable,
                                                &sg->hal, executable);
    if (status != NPU_ERROR_NOT_SUPPORTED)
      return status;
  }
  return ops->subgraph_compile(npu_device_hal(device), &sg->hal, executable);
}

npu_status npu_subgraph_compile(npu_subgraph_registry *registry, npu_device *device,
                                npu_subgraph *sg, npu_compiled_subgraph *compiled)
{
  const npu_hal_graph_ops *ops = npu_device_backend(device)->graph;
  memset(compiled, 0, sizeof *compiled);
  compiled->ops = ops;
  compiled->graph = *sg;
  memset(sg, 0, sizeof *sg);
  npu_status status = make_executable(registry, device, ops, &compiled->graph,
                                      &compiled->executable);
  uint32_t constants = compiled->graph.hal.constant_count;
  if (status == NPU_OK) {
    compiled->packed_constants = calloc(constants + 1, sizeof *compiled->packed_constants);
    if (!compiled->packed_constants)
      status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory compiling a subgraph");
  }
  if (status != NPU_OK) {
    npu_compiled_subgraph_clear(registry, compiled);
    return status;
  }
  for (uint32_t c = 0; c < constants && ops->executable_packed_constant; c++) {
    compiled->packed_constants[c] = ops->executable_packed_constant(compiled->executable, c);
    compiled->packed += compiled->packed_constants[c];
  }
  compiled->workspace =
      ops->executable_workspace ? ops->executable_workspace(compiled->executable) : 0;
  remember(registry, &compiled->graph, compiled->executable);
  return NPU_OK;
}

void npu_compiled_subgraph_clear(npu_subgraph_registry *registry,
                                 npu_compiled_subgraph *compiled)
{
  if (compiled->executable) {
    forget(registry, compiled->executable);
    compiled->ops->executable_destroy(compiled->executable);
  }
  free(compiled->packed_constants);
  npu_subgraph_clear(&compiled->graph);
  memset(compiled, 0, sizeof *compiled);
}
