/* Output element types and shapes of an operator from its inputs' (and,
 * where the shape depends on them, the values of constant inputs). */
#ifndef NPU_SHAPE_INFERENCE_H
#define NPU_SHAPE_INFERENCE_H

#include "npu_hal_graph.h"

/* `values[i]` is the host data of input i when it is a constant, else NULL.
 * On failure the message starts with `label` (the node). */
npu_status npu_infer_shapes(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                            const char *label);

#endif
