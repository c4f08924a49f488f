/* Load-time rewrites around MatMul (transformer blocks): constant scalings
 * moved to where a product's post-ops apply them. */
#ifndef NPU_MATMUL_REWRITE_H
#define NPU_MATMUL_REWRITE_H

#include "fusion.h"
#include "graph.h"

/* MatMul(x * s, B) or MatMul(x / s, B) (s a float scalar constant, x * s read
 * by the MatMul only, x from a data-movement operator; either operand) becomes MatMul(x, B) * s: attention's
 * query scaling then runs as the product's fused post-op instead of a pass
 * over the queries. Keeps `consumers` current. */
void npu_graph_move_scales_past_matmuls(npu_graph *graph, npu_consumers *consumers);

#endif
