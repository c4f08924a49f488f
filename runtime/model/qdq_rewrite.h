/* QDQ rewriting: the DequantizeLinear -> op -> QuantizeLinear patterns of
 * QDQ models (ONNX Runtime's quantiser, NNCF, TensorRT's exporters, our
 * npu-quantize) turned into int8 operators, so that activations stay int8
 * from one convolution to the next. */
#ifndef NPU_QDQ_REWRITE_H
#define NPU_QDQ_REWRITE_H

#include "graph.h"

/* Rewrites every Conv whose input and constant weights come from
 * DequantizeLinear (per-tensor activations; weights per tensor or per
 * output channel) and whose output, through at most one Relu or Clip that
 * the output's quantisation makes a saturation, goes only to a per-tensor
 * QuantizeLinear, into QLinearConv (the float bias becomes int32 at scale
 * x_scale * w_scale); a ConvTranspose (weights per tensor or along axis
 * 1, its output channels in each group) the same way into gst-npu's
 * QLinearConvTranspose. A MatMul or Gemm (transA 0, alpha 1) of a
 * per-tensor DequantizeLinear and constant 2-D weights (per tensor or per
 * output column; Gemm's transB weights transposed once, here) the same way
 * into QLinearMatMul, or with a bias (Gemm's C at beta 1, or an Add of one
 * constant per column after the product, directly or through a Q/DQ pair
 * whose step is at most the output's) into gst-npu's QLinearMatMulBias.
 * A MatMul of two per-tensor DequantizeLinear whose B is no such weights
 * (attention's products of two activations, batched, batch axes
 * broadcast) into QLinearMatMul.
 * With per-tensor DequantizeLinear inputs and such an
 * output, the same way: Add -> QLinearAdd; MaxPool, Transpose, Reshape,
 * Flatten, Squeeze, Unsqueeze (input and output parameters equal) and Split (every output's equal to the input's) -> the
 * same op on 8-bit values; Concat -> Concat of 8-bit values (all parameters
 * equal) or QLinearConcat; GlobalAveragePool -> QLinearGlobalAveragePool. Elementwise float nodes (Add, Sub, Mul, Div
 * by one-value constants, Relu, Clip, Sigmoid, HardSigmoid, HardSwish,
 * Tanh, LeakyRelu, Neg, Abs: SiLU, HardSwish written out, affine scalings)
 * between one per-tensor DequantizeLinear and a QuantizeLinear, whose
 * inner outputs nothing else reads -> QLinearLookup, a table of 256 values. DequantizeLinear nodes left without
 * readers are folded. Everything else, and an activation that is not
 * exactly a saturation, stays in float. */
npu_status npu_graph_rewrite_qdq(npu_graph *graph);

#endif
