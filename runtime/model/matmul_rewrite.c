/* Load-time rewrites around MatMul (see matmul_rewrite.h). */
#include <stdlib.h>
#include <string.h>

#include "matmul_rewrite.h"

static bool op_is(const npu_graph_node *n, const char *type)
{
  return strcmp(n->proto->op_type, type) == 0;
}

static bool float_scalar_constant(const npu_graph *g, int32_t tensor)
{
  const npu_graph_tensor *t = tensor >= 0 ? &g->tensors[tensor] : NULL;
  return t && t->constant && t->data && t->dtype == NPU_DTYPE_FLOAT32 &&
         t->data_size == sizeof(float);
}

/* Whether `tensor` comes from an operator that only moves data (or from
 * outside the graph): nothing would apply a scaling of it as it is written.
 * A scaling after anything else may end a chain its producer fuses (GELU's
 * last * 0.5, a Conv's scale), which it must not leave. */
static bool moved_data(const npu_graph *g, int32_t tensor)
{
  static const char *const movers[] = {"Transpose", "Reshape", "Slice",   "Gather",
                                       "Split",     "Squeeze", "Unsqueeze", "Flatten",
                                       "Identity",  "Concat",  "Expand"};
  int32_t p = g->tensors[tensor].producer;
  if (p < 0)
    return true;
  for (size_t i = 0; i < sizeof movers / sizeof movers[0]; i++)
    if (op_is(&g->nodes[p], movers[i]))
      return true;
  return false;
}

/* The node scaling the operand `tensor` of a MatMul by a scalar constant,
 * read by nothing else (the MatMul), of moved data; -1 when there is none. */
static int32_t scaling_producer(const npu_graph *g, const npu_consumers *c, int32_t tensor)
{
  if (npu_consumers_only_reader(g, c, tensor) < 0)
    return -1;
  int32_t p = g->tensors[tensor].producer;
  const npu_graph_node *n = p >= 0 ? &g->nodes[p] : NULL;
  if (!n || n->folded || n->input_count != 2 || n->output_count != 1)
    return -1;
  bool scales = (op_is(n, "Mul") && (float_scalar_constant(g, n->inputs[0]) ||
                                     float_scalar_constant(g, n->inputs[1]))) ||
                (op_is(n, "Div") && float_scalar_constant(g, n->inputs[1]));
  if (!scales || n->inputs[0] == n->inputs[1])
    return -1;
  return moved_data(g, n->inputs[float_scalar_constant(g, n->inputs[1]) ? 0 : 1]) ? p : -1;
}

/* Node `moved` takes its place in the node order just after `anchor`
 * (`after`) or just before it. */
static void reorder_next_to(npu_graph *g, uint32_t moved, uint32_t anchor, bool after)
{
  size_t at = 0, count = g->node_count;
  while (g->order[at] != moved)
    at++;
  memmove(g->order + at, g->order + at + 1, (count - at - 1) * sizeof *g->order);
  at = 0;
  while (g->order[at] != anchor)
    at++;
  at += after;
  memmove(g->order + at + 1, g->order + at, (count - at - 1) * sizeof *g->order);
  g->order[at] = moved;
}

/* The entry of `tensor` in the consumer table naming `from` now names `to`. */
static void replace_reader(npu_consumers *c, int32_t tensor, uint32_t from, uint32_t to)
{
  for (uint32_t k = c->offsets[tensor]; k < c->offsets[tensor + 1]; k++)
    if (c->nodes[k] == from) {
      c->nodes[k] = to;
      return;
    }
}

/* Scale node s (t = x op k) and MatMul m (y = MatMul(.., t, ..)) trade
 * places: t = MatMul(.., x, ..), y = t op k. s moves to just after m in the
 * node order (nothing between them reads t, and x and k come before s). */
static void swap_scale_and_product(npu_graph *g, npu_consumers *c, uint32_t s, uint32_t m,
                                   uint32_t operand)
{
  npu_graph_node *scale = &g->nodes[s], *product = &g->nodes[m];
  uint32_t x_slot = float_scalar_constant(g, scale->inputs[1]) ? 0 : 1;
  int32_t x = scale->inputs[x_slot], t = scale->outputs[0], y = product->outputs[0];
  product->inputs[operand] = x;
  product->outputs[0] = t;
  scale->inputs[x_slot] = t;
  scale->outputs[0] = y;
  g->tensors[t].producer = (int32_t)m;
  g->tensors[y].producer = (int32_t)s;
  g->tensors[t].dtype = NPU_DTYPE_UNDEFINED; /* now the product's: inferred when planning */
  g->tensors[t].has_shape = false;
  replace_reader(c, x, s, m);
  replace_reader(c, t, m, s);
  reorder_next_to(g, s, m, true);
}

void npu_graph_move_scales_past_matmuls(npu_graph *g, npu_consumers *c)
{
  for (size_t m = 0; m < g->node_count; m++) {
    npu_graph_node *n = &g->nodes[m];
    if (n->folded || !op_is(n, "MatMul") || n->input_count != 2 || n->output_count != 1 ||
        n->outputs[0] < 0)
      continue;
    for (uint32_t operand = 0; operand < 2; operand++) {
      int32_t s = scaling_producer(g, c, n->inputs[operand]);
      if (s >= 0)
        swap_scale_and_product(g, c, (uint32_t)s, (uint32_t)m, operand);
    }
  }
}

/* ---- constant scales across Transposes ------------------------------------------- */

/* The permutation of Transpose `n` (false when it has none: the reversal
 * of an axis count not known here, or a perm that is not a permutation,
 * which planning refuses with its message). */
static bool permutation_of(const npu_graph_node *n, uint32_t *perm, uint32_t *rank)
{
  for (size_t i = 0; i < n->proto->n_attribute; i++) {
    const Onnx__AttributeProto *a = n->proto->attribute[i];
    if (!a->name || strcmp(a->name, "perm") != 0 || a->n_ints == 0 || a->n_ints > NPU_MAX_RANK)
      continue;
    *rank = (uint32_t)a->n_ints;
    uint32_t seen = 0; /* a bit per axis: an axis named twice leaves another unnamed */
    for (uint32_t d = 0; d < *rank; d++) {
      if (a->ints[d] < 0 || a->ints[d] >= (int64_t)*rank || seen & (1u << a->ints[d]))
        return false;
      perm[d] = (uint32_t)a->ints[d];
      seen |= 1u << perm[d];
    }
    return true;
  }
  return false;
}

/* Constant `c` (broadcast to `rank` axes) as it lines up with the input of
 * Transpose `perm` instead of its output (axis perm[d] of the input is axis
 * d of the output), its leading 1s dropped; -1 when out of memory. */
static int32_t permuted_constant(npu_graph *g, int32_t c, const uint32_t *perm, uint32_t rank)
{
  const npu_graph_tensor *t = &g->tensors[c];
  int64_t out_dims[NPU_MAX_RANK], in_dims[NPU_MAX_RANK], in_strides[NPU_MAX_RANK];
  for (uint32_t d = 0; d < rank; d++)
    out_dims[d] = d < rank - t->rank ? 1 : t->dims[d - (rank - t->rank)];
  for (uint32_t d = 0; d < rank; d++)
    in_dims[perm[d]] = out_dims[d];
  int64_t step = 1;
  for (uint32_t d = rank; d-- > 0;) {
    in_strides[d] = step;
    step *= in_dims[d];
  }
  size_t count = t->data_size / sizeof(float);
  float *data = malloc(count * sizeof *data);
  if (!data || !npu_graph_own(g, data)) {
    free(data);
    return -1;
  }
  const float *from = t->data;
  int64_t index[NPU_MAX_RANK] = {0}; /* over the output's axes, in c's element order */
  for (size_t e = 0; e < count; e++) {
    int64_t to = 0;
    for (uint32_t d = 0; d < rank; d++)
      to += index[d] * in_strides[perm[d]];
    data[to] = from[e];
    for (uint32_t d = rank; d-- > 0 && ++index[d] == out_dims[d];)
      index[d] = 0;
  }
  uint32_t first = 0;
  while (first + 1 < rank && in_dims[first] == 1)
    first++;
  return npu_graph_add_constant(g, t->name, NPU_DTYPE_FLOAT32, data, in_dims + first,
                                rank - first);
}

/* The constant behind Identity nodes (exporters share a parameter between
 * layers so: ConvNeXt's layer scales), else `tensor` itself. */
static int32_t through_identities(const npu_graph *g, int32_t tensor)
{
  while (tensor >= 0 && !g->tensors[tensor].constant && g->tensors[tensor].producer >= 0 &&
         op_is(&g->nodes[g->tensors[tensor].producer], "Identity"))
    tensor = g->nodes[g->tensors[tensor].producer].inputs[0];
  return tensor;
}

/* Transpose t (y = transpose(x)) and Mul m (z = y * c) trade places:
 * y = x * c', z = transpose(y); m moves to t's place in the node order. */
static void swap_transpose_and_scale(npu_graph *g, npu_consumers *c, uint32_t t, uint32_t m,
                                     int32_t permuted)
{
  npu_graph_node *transpose = &g->nodes[t], *mul = &g->nodes[m];
  int32_t x = transpose->inputs[0], y = transpose->outputs[0], z = mul->outputs[0];
  uint32_t y_slot = mul->inputs[0] == y ? 0 : 1;
  mul->inputs[y_slot] = x;
  mul->inputs[1 - y_slot] = permuted;
  mul->outputs[0] = y;
  transpose->inputs[0] = y;
  transpose->outputs[0] = z;
  g->tensors[y].producer = (int32_t)m;
  g->tensors[z].producer = (int32_t)t;
  g->tensors[y].dtype = NPU_DTYPE_UNDEFINED; /* now x's shape: inferred when planning */
  g->tensors[y].has_shape = false;
  replace_reader(c, x, t, m);
  replace_reader(c, y, m, t);
  reorder_next_to(g, m, t, false);
}

npu_status npu_graph_move_scales_before_transposes(npu_graph *g, npu_consumers *c)
{
  size_t nodes = g->node_count;
  for (size_t t = 0; t < nodes; t++) {
    npu_graph_node *n = &g->nodes[t];
    uint32_t perm[NPU_MAX_RANK], rank;
    if (n->folded || !op_is(n, "Transpose") || n->input_count != 1 || n->output_count != 1 ||
        !permutation_of(n, perm, &rank))
      continue;
    int32_t y = n->outputs[0], reader = npu_consumers_only_reader(g, c, y);
    if (reader < 0)
      continue;
    uint32_t m = (uint32_t)reader;
    const npu_graph_node *mul = &g->nodes[m];
    if (mul->folded || !op_is(mul, "Mul") || mul->input_count != 2 || mul->output_count != 1 ||
        mul->inputs[0] == mul->inputs[1])
      continue;
    int32_t k = through_identities(g, mul->inputs[mul->inputs[0] == y ? 1 : 0]);
    const npu_graph_tensor *kt = k >= 0 ? &g->tensors[k] : NULL;
    if (!kt || !kt->constant || !kt->data || kt->dtype != NPU_DTYPE_FLOAT32 || kt->rank > rank ||
        !kt->has_shape)
      continue;
    int32_t permuted = permuted_constant(g, k, perm, rank);
    if (permuted < 0)
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory moving a scale");
    swap_transpose_and_scale(g, c, (uint32_t)t, m, permuted);
  }
  return NPU_OK;
}
