/* Load-time rewrites around MatMul (see matmul_rewrite.h). */
#include <string.h>

#include "matmul_rewrite.h"

static bool op_is(const npu_graph_node *n, const char *type)
{
  return strcmp(n->proto->op_type, type) == 0;
}

static bool is_output(const npu_graph *g, int32_t tensor)
{
  for (size_t i = 0; i < g->output_count; i++)
    if (g->outputs[i] == tensor)
      return true;
  return false;
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
  if (tensor < 0 || is_output(g, tensor) || c->offsets[tensor + 1] - c->offsets[tensor] != 1)
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
  size_t from = 0;
  while (g->order[from] != s)
    from++;
  for (; g->order[from + 1] != m; from++)
    g->order[from] = g->order[from + 1];
  g->order[from] = m;
  g->order[from + 1] = s;
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
