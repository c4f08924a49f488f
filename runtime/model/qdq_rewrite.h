/* QDQ rewriting: the DequantizeLinear -> Conv -> QuantizeLinear pattern of
 * QDQ models (ONNX Runtime's quantiser, NNCF, TensorRT's exporters) turned
 * into QLinearConv, so that the backend's int8 convolution runs it. */
#ifndef NPU_QDQ_REWRITE_H
#define NPU_QDQ_REWRITE_H

#include "graph.h"

/* Rewrites every Conv whose input and constant weights come from
 * DequantizeLinear (per-tensor activations; weights per tensor or per
 * output channel) and whose output, through at most one Relu or Clip that
 * the output's quantisation makes a saturation, goes only to a per-tensor
 * QuantizeLinear. The float bias becomes int32 at scale x_scale * w_scale.
 * DequantizeLinear nodes left without readers are folded. Other Convs, and
 * those whose activation is not exactly a saturation, stay in float. */
npu_status npu_graph_rewrite_qdq(npu_graph *graph);

#endif
