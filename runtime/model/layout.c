/* Layout planning (see layout.h). */
#include <stdlib.h>
#include <string.h>

#include "layout.h"

static bool is_elementwise(const char *op_type)
{
  static const char *const names[] = {
      "Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Clip", "Add",
      "Sub",  "Mul",       "Div",     "Max",  "Min",         "Pow",       "Exp",  "Log",
      "Sqrt", "Abs",       "Neg",     "Erf",  "Reciprocal",  "Floor",     "Ceil",
      "Elu",  "Selu",      "Celu",    "Softplus", "Softsign", "Sign",    "ThresholdedRelu",
      "Mish", "Round", "Gelu", "Mod", "QLinearAdd", "QLinearLookup",
      "QLinearBinaryLookup",
      "BatchNormalization", /* (its statistics are [C] vectors: left out of the group) */
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(op_type, names[i]) == 0)
      return true;
  return false;
}

static int32_t find(int32_t *parent, int32_t t)
{
  while (parent[t] != t)
    t = parent[t] = parent[parent[t]];
  return t;
}

static bool same_dims(const npu_hal_tensor_desc *a, const npu_hal_tensor_desc *b)
{
  return a->rank == b->rank && memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}

static bool scalar(const npu_hal_tensor_desc *d)
{
  size_t n;
  return npu_dims_elements(d->dims, d->rank, &n) && n == 1;
}

/* Operators whose tensors take one layout (the backend says which it runs
 * them in): Concat, QLinearConcat and Split along the channel axis, and Resize where it
 * keeps the batch and channel axes. */
static bool shares_layout(const npu_layout_query *q, const npu_graph_node *node)
{
  const char *op = node->proto->op_type;
  bool requantised = strcmp(op, "QLinearConcat") == 0; /* (its first X is input 2) */
  uint32_t first = requantised ? 2 : 0;
  if (node->output_count == 0 || node->outputs[0] < 0 || node->input_count <= first ||
      node->inputs[first] < 0)
    return false; /* (an omitted first output, as an LSTM's Y may be) */
  const npu_hal_tensor_desc *in = q->activation(q->data, node->inputs[first]);
  const npu_hal_tensor_desc *out = q->activation(q->data, node->outputs[0]);
  if (!in || !out)
    return false;
  if (strcmp(op, "Resize") == 0 || strcmp(op, "Upsample") == 0)
    return in->rank == out->rank && in->rank >= 3 && in->dims[0] == out->dims[0] &&
           in->dims[1] == out->dims[1];
  if (strcmp(op, "Concat") != 0 && strcmp(op, "Split") != 0 && !requantised)
    return false;
  int64_t axis = 0;
  for (size_t i = 0; i < node->proto->n_attribute; i++)
    if (node->proto->attribute[i]->name && strcmp(node->proto->attribute[i]->name, "axis") == 0)
      axis = node->proto->attribute[i]->i;
  return axis == 1 || axis + (int64_t)out->rank == 1;
}

/* Ties the same-shape tensors of elementwise nodes, and the tensors of the
 * operators above, into groups that take one layout; marks (bad) every
 * tensor that must stay plain. */
static void group_tensors(const npu_layout_query *q, int32_t *parent, bool *bad)
{
  const npu_graph *g = q->graph;
  for (size_t t = 0; t < g->tensor_count; t++) {
    const npu_hal_tensor_desc *d = q->activation(q->data, (int32_t)t);
    parent[t] = (int32_t)t;
    bool activation_type = d && (d->dtype == NPU_DTYPE_FLOAT32 || d->dtype == NPU_DTYPE_UINT8 ||
                                 d->dtype == NPU_DTYPE_INT8);
    bad[t] = !activation_type || d->rank < 3 || d->rank > 5;
  }
  for (uint32_t n = 0; n < g->node_count; n++) {
    const npu_graph_node *node = &g->nodes[n];
    if (!q->runs(q->data, n))
      continue;
    bool joins = shares_layout(q, node);
    if (!joins && !is_elementwise(node->proto->op_type))
      continue;
    /* Tensors of the output's shape take one layout; broadcast operands keep
     * their own, which the backend accepts or not (then they stay plain). */
    int32_t first = node->output_count ? node->outputs[0] : -1;
    const npu_hal_tensor_desc *out = first >= 0 ? q->activation(q->data, first) : NULL;
    for (uint32_t i = 0; i < node->input_count + node->output_count && out; i++) {
      int32_t t = i < node->input_count ? node->inputs[i] : node->outputs[i - node->input_count];
      const npu_hal_tensor_desc *d = t >= 0 ? q->activation(q->data, t) : NULL;
      if (!d || scalar(d))
        continue; /* left out, constant or scalar: any layout reads it */
      if (joins || same_dims(d, out))
        parent[find(parent, t)] = find(parent, first);
    }
  }
}

/* Whether every kernel around the group takes its layouts, and one of
 * them is not elementwise (else nothing would gain). */
static bool group_accepted(const npu_layout_query *q, const int32_t *members, size_t count,
                           const npu_layout *layouts)
{
  const npu_graph *g = q->graph;
  const npu_consumers *c = q->consumers;
  bool gains = false;
  for (size_t m = 0; m < count; m++) {
    int32_t t = members[m];
    int32_t producer = g->tensors[t].producer;
    if (producer >= 0 && q->runs(q->data, (uint32_t)producer)) {
      if (!q->accepts(q->data, (uint32_t)producer, layouts))
        return false;
      gains |= !is_elementwise(g->nodes[producer].proto->op_type);
    }
    for (uint32_t k = c->offsets[t]; k < c->offsets[t + 1]; k++) {
      uint32_t reader = c->nodes[k];
      if (!q->runs(q->data, reader))
        continue;
      if (!q->accepts(q->data, reader, layouts))
        return false;
      gains |= !is_elementwise(g->nodes[reader].proto->op_type);
    }
  }
  return gains;
}

/* Tries `layout` for the group; true when every kernel around takes it. */
static bool try_layout(const npu_layout_query *q, const int32_t *members, size_t count,
                       npu_layout layout, npu_layout *layouts)
{
  for (size_t m = 0; m < count; m++)
    layouts[members[m]] = layout;
  bool accepted = group_accepted(q, members, count, layouts);
  for (size_t m = 0; m < count && !accepted; m++)
    layouts[members[m]] = (npu_layout){NPU_HAL_LAYOUT_PLAIN, 0};
  return accepted;
}

npu_status npu_layout_plan(const npu_layout_query *q, npu_layout *layouts,
                           uint32_t *moved)
{
  size_t count = q->graph->tensor_count;
  int32_t *parent = malloc((count + 1) * sizeof *parent);
  int32_t *members = malloc((count + 1) * sizeof *members);
  bool *bad = malloc(count + 1);
  if (!parent || !members || !bad) {
    free(parent);
    free(members);
    free(bad);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning layouts");
  }
  *moved = 0;
  for (size_t t = 0; t < count; t++)
    layouts[t] = (npu_layout){NPU_HAL_LAYOUT_PLAIN, 0};
  group_tensors(q, parent, bad);
  for (size_t t = 0; t < count; t++)
    if (bad[t])
      bad[find(parent, (int32_t)t)] = true;
  for (size_t root = 0; root < count; root++) {
    if (find(parent, (int32_t)root) != (int32_t)root || bad[root])
      continue;
    size_t size = 0;
    for (size_t t = 0; t < count; t++)
      if (find(parent, (int32_t)t) == (int32_t)root)
        members[size++] = (int32_t)t;
    /* The first member's preference, then halves of its channel blocks down
     * to 8 (a Concat of 16 and 8 channels takes blocks of 8; a kernel may
     * take fewer block sizes), then channels-last. */
    npu_layout best = q->preferred(q->data, q->activation(q->data, members[0]));
    bool blocked = best.kind == NPU_HAL_LAYOUT_CHANNEL_BLOCKS;
    bool accepted = best.kind != NPU_HAL_LAYOUT_PLAIN && (!blocked || best.block > 0) &&
                    try_layout(q, members, size, best, layouts);
    for (uint32_t block = best.block / 2; blocked && !accepted && block >= 8; block /= 2)
      accepted = try_layout(q, members, size, (npu_layout){best.kind, block}, layouts);
    if (!accepted && best.kind != NPU_HAL_LAYOUT_CHANNELS_LAST)
      accepted = try_layout(q, members, size, (npu_layout){NPU_HAL_LAYOUT_CHANNELS_LAST, 0},
                            layouts);
    *moved += accepted ? (uint32_t)size : 0;
  }
  free(parent);
  free(members);
  free(bad);
  return NPU_OK;
}
