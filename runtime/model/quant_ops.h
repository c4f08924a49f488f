/* The quantised operators as the planner sees them (QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, ConvInteger, MatMulInteger,
 * QLinearConv, QLinearMatMul and com.microsoft's QLinearAdd, QLinearMul,
 * QLinearGlobalAveragePool, QLinearSigmoid, QLinearConcat): the rules their
 * scales and zero points obey, and their output types and shapes. */
#ifndef NPU_QUANT_OPS_H
#define NPU_QUANT_OPS_H

#include <stdbool.h>

#include "npu_hal_graph.h"

/* The op schema's relation for these operators: every (scale, zero point)
 * pair is float32 and int8/uint8 (int32 for DequantizeLinear of int32), of one
 * element or one per index of its axis, the zero point of its tensor's
 * type; windows and matrix shapes as Conv and MatMul want them. */
npu_status npu_quant_relation(const npu_hal_op *op, const char *const *input_names,
                              const char *label);

bool npu_quant_is_quantised_op(const char *op_type);

/* Output types and shapes; each integer output's desc carries its
 * quantisation (npu_hal_quant) where the parameters are constants. */
npu_status npu_quant_infer_shapes(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                  const char *label);

#endif
