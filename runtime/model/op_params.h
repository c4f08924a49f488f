/* An operator's parameters as shape inference and backends read them
 * (npu_hal_op's window, axes and ranges), resolved once from its ONNX
 * attributes, constant inputs and input shapes, as its schema says where
 * they come from. */
#ifndef NPU_OP_PARAMS_H
#define NPU_OP_PARAMS_H

#include "npu_hal_graph.h"
#include "op_schema.h"

typedef struct npu_op_params {
  npu_hal_window window;
  npu_hal_axes axes;
  npu_hal_ranges ranges;
} npu_op_params;

/* Resolves what `op` has of a window, axes and ranges into *params and
 * points op->window, ->axes and ->ranges at them (the others stay NULL).
 * `op` has passed npu_op_validate. NPU_ERROR_INVALID_MODEL for parameters
 * that do not fit its inputs (an axis out of range, a window larger than
 * its input...), NPU_ERROR_NOT_SUPPORTED for forms the runtime does not
 * take; messages start with `label`. */
npu_status npu_op_params_attach(const npu_op_schema *schema, npu_hal_op *op,
                                npu_op_params *params, const char *label);

#endif
