/* Load-time conversion of float16 models to float32 computation: float16
 * initializers and Constant values become float32, Casts to float16 inside
 * the graph cast to float32, and graph inputs and outputs declared float16
 * stay float16 for the caller, converted by Cast nodes at the graph's edges.
 * Outputs keep float16's range, not its rounding in between. */
#ifndef NPU_FLOAT16_H
#define NPU_FLOAT16_H

#include "graph.h"

npu_status npu_graph_float16_to_float32(npu_graph *graph);

#endif
