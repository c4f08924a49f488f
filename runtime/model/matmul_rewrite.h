/* Load-time rewrites around MatMul (transformer blocks): constant scalings
 * moved to where a product applies them (post-ops, or its weights). */
#ifndef NPU_MATMUL_REWRITE_H
#define NPU_MATMUL_REWRITE_H

#include "fusion.h"
#include "graph.h"

/* MatMul(x * s, B) or MatMul(x / s, B) (s a float scalar constant, x * s read
 * by the MatMul only, x from a data-movement operator; either operand) becomes MatMul(x, B) * s: attention's
 * query scaling then runs as the product's fused post-op instead of a pass
 * over the queries. Keeps `consumers` current. */
void npu_graph_move_scales_past_matmuls(npu_graph *graph, npu_consumers *consumers);

/* Mul(Transpose(x), c) (c a float constant, the Transpose read by the Mul
 * only) becomes Transpose(Mul(x, c')), c' permuted to x's axes: a layer
 * scale after a Transpose then lies next to the product before it (see
 * npu_graph_optimize). */
npu_status npu_graph_move_scales_before_transposes(npu_graph *graph, npu_consumers *consumers);

#endif
