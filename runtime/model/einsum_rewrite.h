/* Load-time rewrite: each Einsum becomes operators every backend runs fast
 * (Transpose, Reshape, Slice, ReduceSum, Unsqueeze, Squeeze, MatMul, Mul). */
#ifndef NPU_EINSUM_REWRITE_H
#define NPU_EINSUM_REWRITE_H

#include "graph.h"

/* Every Einsum (1 or 2 inputs; `...`, implicit output, repeated labels)
 * becomes: per input, a diagonal taken for a label repeated in it (Reshape
 * of the two axes into n*n and a Slice of step n + 1: n must be known at
 * load) and a ReduceSum of the labels only it has and the output lacks;
 * then for two inputs a MatMul over the contracted labels (merged into one
 * axis by a Reshape, the other labels on the batch axes, where MatMul
 * broadcasts) or, with none contracted, a broadcasting Mul; a Transpose
 * into the output's order. An Einsum of 3 or more inputs, or whose `...`
 * spans axes unknown at load (an input of unknown rank), is refused with
 * NPU_ERROR_NOT_SUPPORTED naming its equation; a malformed equation with
 * NPU_ERROR_INVALID_MODEL. */
npu_status npu_graph_lower_einsums(npu_graph *graph);

#endif
