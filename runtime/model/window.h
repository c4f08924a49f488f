/* The sliding window of convolutions and poolings (npu_hal_window),
 * resolved from the operator's attributes and its input's shape: the one
 * place that reads auto_pad, pads, strides, dilations and kernel_shape. */
#ifndef NPU_WINDOW_H
#define NPU_WINDOW_H

#include <stdbool.h>

#include "npu_hal_graph.h"

/* Whether operators of this type have a window (Conv, ConvTranspose,
 * MaxPool, AveragePool, QLinearConv, ConvInteger). */
bool npu_window_op(const char *op_type);

/* Fills *window for `op` from its attributes and its inputs' shapes (not its
 * outputs': the window's output dims are computed here). NPU_ERROR_INVALID_MODEL
 * for a window that does not fit; messages start with `label`. */
npu_status npu_window_resolve(const npu_hal_op *op, npu_hal_window *window, const char *label);

#endif
