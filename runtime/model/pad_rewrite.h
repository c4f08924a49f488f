/* Load-time rewrite: a zero Pad of the spatial axes taken into the
 * convolution or average pooling that reads it. */
#ifndef NPU_PAD_REWRITE_H
#define NPU_PAD_REWRITE_H

#include "fusion.h"
#include "graph.h"

/* Conv(Pad(x)) and AveragePool(Pad(x)), the Pad constant mode with value 0
 * on the spatial axes only and read by that node alone, become the node
 * with the pads added to its own (an AveragePool then counts the padded
 * positions, as it counted the Pad's zeros): one pass over the tensor
 * instead of a padded copy (Inception-v3's nine). `consumers` is the
 * table built before; the Pads are folded. */
npu_status npu_graph_merge_pads(npu_graph *graph, const npu_consumers *consumers);

#endif
