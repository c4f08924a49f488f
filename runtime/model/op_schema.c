/* Operator table: what a model may use and with how many inputs/outputs
 * (ONNX's own limits across opsets: e.g. Clip gained min/max inputs in
 * opset 11, Slice its inputs in 10, Split its `split` input in 13), the
 * first opset whose form of each operator the runtime handles (Reshape took
 * its shape as an attribute before 5, TopK its k before 10, Cast its type
 * as a string before 6...), and the rules on attributes and small inputs
 * that every reader of the op relies on (see op_schema.h). */
#include <stdio.h>
#include <string.h>

#include "npu_checked.h"
#include "npu_hal.h"
#include "op_schema.h"
#include "quant_ops.h"
#include "shape_inference.h"

static npu_status window_relation(const npu_hal_op *op, const char *const *input_names,
                                  const char *label);
static npu_status gemm_relation(const npu_hal_op *op, const char *const *input_names,
                                const char *label);
static npu_status mod_relation(const npu_hal_op *op, const char *const *input_names,
                               const char *label);
static npu_status gelu_relation(const npu_hal_op *op, const char *const *input_names,
                                const char *label);
static npu_status scatter_nd_relation(const npu_hal_op *op, const char *const *input_names,
                                      const char *label);
static npu_status scatter_relation(const npu_hal_op *op, const char *const *input_names,
                                   const char *label);
static npu_status cumsum_relation(const npu_hal_op *op, const char *const *input_names,
                                  const char *label);
static npu_status bitshift_relation(const npu_hal_op *op, const char *const *input_names,
                                    const char *label);
static npu_status block_relation(const npu_hal_op *op, const char *const *input_names,
                                 const char *label);
static npu_status group_norm_relation(const npu_hal_op *op, const char *const *input_names,
                                      const char *label);
static npu_status lrn_relation(const npu_hal_op *op, const char *const *input_names,
                               const char *label);
static npu_status lp_norm_relation(const npu_hal_op *op, const char *const *input_names,
                                   const char *label);
static npu_status sampling_relation(const npu_hal_op *op, const char *const *input_names,
                                    const char *label);
static npu_status recurrent_relation(const npu_hal_op *op, const char *const *input_names,
                                     const char *label);

#define V NPU_OP_VARIADIC
#define SAME NPU_DTYPES_SAME_AS_INPUT0
#define INT64 NPU_DTYPE_BIT(INT64)
#define ANY NPU_EXTENT_ANY
#define AXES NPU_EXTENT_AXES
#define ONE NPU_EXTENT_ONE
#define RANK NPU_EXTENT_RANK
#define TWICE_RANK NPU_EXTENT_TWICE_RANK
#define SPATIAL NPU_EXTENT_SPATIAL
#define SPATIAL_OR_RANK NPU_EXTENT_SPATIAL_OR_RANK
#define CHANNELS NPU_EXTENT_CHANNELS
#define OUT_CHANNELS NPU_EXTENT_OUT_CHANNELS
#define OUTPUTS NPU_EXTENT_OUTPUTS
#define LIKE_INPUT1 NPU_EXTENT_LIKE_INPUT1
#define RANK_OR_EMPTY NPU_EXTENT_RANK_OR_EMPTY
#define POSITIVE NPU_VALUES_POSITIVE
#define NON_NEGATIVE NPU_VALUES_NON_NEGATIVE
#define FLOAT32 NPU_DTYPE_BIT(FLOAT32)
#define INDEX NPU_DTYPES_INDEX
#define BOOL NPU_DTYPE_BIT(BOOL)
#define FLOATS (FLOAT32 | NPU_DTYPE_BIT(FLOAT64))
/* Numbers a kernel reads as indices or counts (OneHot's indices and depth). */
#define NUMBERS (FLOATS | INDEX)
#define UNSIGNED                                                                              \
  (NPU_DTYPE_BIT(UINT8) | NPU_DTYPE_BIT(UINT16) | NPU_DTYPE_BIT(UINT32) | NPU_DTYPE_BIT(UINT64))
/* And, Or, Xor: two bool tensors, broadcast. */
#define LOGICAL .inputs = {{0, BOOL, ANY}, {1, BOOL, ANY}}, INFER(compare)
/* Every present input has input 0's (Where: input 1's) element type: the kernels read them
 * as one type (a bool matrix read as float32 went past its end). */
#define ALIKE .same_dtypes = 1
#define ALIKE_FROM_1 .same_dtypes = 2
/* Convolution and pooling windows. */
#define WINDOW                                                                               \
  {"kernel_shape", SPATIAL, POSITIVE}, {"strides", SPATIAL, POSITIVE},                       \
      {"pads", NPU_EXTENT_TWICE_SPATIAL, NON_NEGATIVE}, {"dilations", SPATIAL, POSITIVE}
/* Reductions, Squeeze, Unsqueeze: axes as an attribute (older opsets) or input 1. */
#define AXES_RULES .attributes = {{"axes", AXES}}, .inputs = {{1, INT64, AXES, CONSTANT}}
/* Quantised operators: their parameters' types and shapes, and their outputs' (quant_ops.c). */
#define QUANT .relation = npu_quant_relation, .infer = npu_quant_infer_shapes
#define MICROSOFT .domain = "com.microsoft"
/* An input whose values shape inference or kernels read when planning. */
#define CONSTANT .constant = true
#define INFER(name) .infer = npu_infer_##name
/* One axis, from attribute `axis` or this fallback. */
#define ONE_AXIS(fallback) .axes = {NPU_AXES_ONE, fallback}
/* Softmax, LogSoftmax: axis 1 (flattening the axes from it) before opset 13, the last after. */
#define SOFTMAX_AXIS .axes = {NPU_AXES_ONE, 1, .last_from_opset_13 = true}
/* LSTM, GRU, RNN: weights W, R, bias B (and LSTM's peepholes P, input 7)
 * packed by the kernels; sequence_lens and the initial states may be computed. */
#define RECURRENT(peepholes)                                                                 \
  .inputs = {{1, SAME, ANY, CONSTANT}, {2, SAME, ANY, CONSTANT}, {3, SAME, ANY, CONSTANT},    \
             {peepholes, SAME, ANY, CONSTANT}},                                               \
  .relation = recurrent_relation, INFER(recurrent)

static const npu_op_schema schemas[] = {
    {"Abs", 1, 1, 1, 1, 1, INFER(same)},
    {"Acos", 1, 1, 1, 1, 7, INFER(same)},
    {"Acosh", 1, 1, 1, 1, 9, INFER(same)},
    {"Add", 2, 2, 1, 1, 1, ALIKE, INFER(broadcast)},
    {"And", 2, 2, 1, 1, 7, LOGICAL},
    {"ArgMax", 1, 1, 1, 1, 1, INFER(arg), ONE_AXIS(0)},
    {"ArgMin", 1, 1, 1, 1, 1, INFER(arg), ONE_AXIS(0)},
    {"Asin", 1, 1, 1, 1, 7, INFER(same)},
    {"Asinh", 1, 1, 1, 1, 9, INFER(same)},
    {"Atan", 1, 1, 1, 1, 7, INFER(same)},
    {"Atanh", 1, 1, 1, 1, 9, INFER(same)},
    {"AveragePool", 1, 1, 1, 1, 1, .min_rank = 3, .attributes = {WINDOW}, INFER(pool)},
    {"BatchNormalization", 5, 5, 1, 3, 7, .min_rank = 2,
     .inputs = {{1, SAME, CHANNELS}, {2, SAME, CHANNELS}, {3, SAME, CHANNELS},
                {4, SAME, CHANNELS}}, INFER(same)},
    {"BitShift", 2, 2, 1, 1, 11, .inputs = {{0, UNSIGNED, ANY}}, ALIKE,
     .relation = bitshift_relation, INFER(broadcast)},
    {"Cast", 1, 1, 1, 1, 6, INFER(cast)},
    {"CastLike", 2, 2, 1, 1, 15, INFER(cast_like)},
    {"Ceil", 1, 1, 1, 1, 1, INFER(same)},
    {"Celu", 1, 1, 1, 1, 12, INFER(same)},
    {"Clip", 1, 3, 1, 1, 1, .inputs = {{1, SAME, ONE, CONSTANT}, {2, SAME, ONE, CONSTANT}},
     INFER(same)},
    {"Concat", 1, V, 1, 1, 4, ALIKE, INFER(concat), ONE_AXIS(0)},
    {"Constant", 0, 0, 1, 1, 1},
    {"ConstantOfShape", 1, 1, 1, 1, 9, .inputs = {{0, INT64, AXES, CONSTANT}},
     INFER(constant_of_shape)},
    {"Conv", 2, 3, 1, 1, 1, .min_rank = 3, .attributes = {WINDOW},
     .inputs = {{2, SAME, OUT_CHANNELS}}, .relation = window_relation, INFER(conv)},
    {"ConvTranspose", 2, 3, 1, 1, 1, .min_rank = 3,
     .attributes = {WINDOW, {"output_padding", SPATIAL, NON_NEGATIVE},
                    {"output_shape", SPATIAL_OR_RANK}},
     .inputs = {{2, SAME, OUT_CHANNELS}}, .relation = window_relation, INFER(conv_transpose)},
    {"Cos", 1, 1, 1, 1, 7, INFER(same)},
    {"Cosh", 1, 1, 1, 1, 9, INFER(same)},
    {"CumSum", 2, 2, 1, 1, 11, .min_rank = 1, .inputs = {{1, INDEX, ONE, CONSTANT}}, .relation = cumsum_relation,
     INFER(same)},
    {"ConvInteger", 2, 4, 1, 1, 10, .min_rank = 3, .attributes = {WINDOW}, QUANT},
    {"DequantizeLinear", 2, 3, 1, 1, 10, QUANT},
    {"DepthToSpace", 1, 1, 1, 1, 1, .relation = block_relation, INFER(rearrange_blocks)},
    {"Div", 2, 2, 1, 1, 1, ALIKE, INFER(broadcast)},
    {"Dropout", 1, 3, 1, 2, 7, .inputs = {{2, NPU_DTYPE_BIT(BOOL), ONE, CONSTANT}},
     INFER(dropout)},
    {"DynamicQuantizeLinear", 1, 1, 3, 3, 11, .inputs = {{0, FLOAT32, ANY}}},
    {"Einsum", 1, V, 1, 1, 12}, /* lowered at load (einsum_rewrite.h) */
    {"Elu", 1, 1, 1, 1, 1, INFER(same)},
    {"Equal", 2, 2, 1, 1, 1, ALIKE, INFER(compare)},
    {"Erf", 1, 1, 1, 1, 9, INFER(same)},
    {"Exp", 1, 1, 1, 1, 1, INFER(same)},
    {"Expand", 2, 2, 1, 1, 8, .inputs = {{1, INT64, AXES, CONSTANT}}, INFER(expand)},
    {"EyeLike", 1, 1, 1, 1, 9, INFER(eye_like)},
    {"Flatten", 1, 1, 1, 1, 1, INFER(flatten), .axes = {NPU_AXES_FLATTEN, 1}},
    {"Floor", 1, 1, 1, 1, 1, INFER(same)},
    {"GRU", 3, 6, 0, 2, 7, RECURRENT(3)},
    {"Gelu", 1, 1, 1, 1, 20, .relation = gelu_relation, INFER(same)},
    {"Gather", 2, 2, 1, 1, 1, .inputs = {{1, INDEX, ANY}}, INFER(gather), ONE_AXIS(0)},
    {"GatherElements", 2, 2, 1, 1, 11, .min_rank = 1, .inputs = {{1, INDEX, ANY}}, INFER(gather_elements),
     ONE_AXIS(0)},
    {"GatherND", 2, 2, 1, 1, 11, .min_rank = 1, .inputs = {{1, INT64, ANY}}, INFER(gather_nd)},
    {"Gemm", 2, 3, 1, 1, 7, ALIKE, .relation = gemm_relation, INFER(gemm)},
    {"GlobalAveragePool", 1, 1, 1, 1, 1, INFER(global_pool)},
    {"GlobalMaxPool", 1, 1, 1, 1, 1, INFER(global_pool)},
    {"Greater", 2, 2, 1, 1, 1, ALIKE, INFER(compare)},
    {"GreaterOrEqual", 2, 2, 1, 1, 12, ALIKE, INFER(compare)},
    {"GridSample", 2, 2, 1, 1, 16, ALIKE, .relation = sampling_relation, INFER(sample)},
    /* Opset 18's scale and bias are per group, opset 21's per channel. */
    {"GroupNormalization", 3, 3, 1, 1, 18, .min_rank = 3, ALIKE,
     .relation = group_norm_relation, INFER(same)},
    {"Hardmax", 1, 1, 1, 1, 1, INFER(same), SOFTMAX_AXIS},
    {"HardSigmoid", 1, 1, 1, 1, 1, INFER(same)},
    {"HardSwish", 1, 1, 1, 1, 14, INFER(same)},
    {"Identity", 1, 1, 1, 1, 1, INFER(same)},
    {"InstanceNormalization", 3, 3, 1, 1, 1, .min_rank = 3,
     .inputs = {{1, SAME, CHANNELS}, {2, SAME, CHANNELS}}, INFER(same)},
    {"IsInf", 1, 1, 1, 1, 10, .inputs = {{0, FLOATS, ANY}}, INFER(compare)},
    {"IsNaN", 1, 1, 1, 1, 9, .inputs = {{0, FLOATS, ANY}}, INFER(compare)},
    {"LSTM", 3, 8, 0, 3, 7, RECURRENT(7)},
    {"LayerNormalization", 2, 3, 1, 3, 17, INFER(layer_norm), ONE_AXIS(-1)},
    {"LeakyRelu", 1, 1, 1, 1, 1, INFER(same)},
    {"LpNormalization", 1, 1, 1, 1, 1, .relation = lp_norm_relation, INFER(same), ONE_AXIS(-1)},
    {"LRN", 1, 1, 1, 1, 1, .min_rank = 3, .relation = lrn_relation, INFER(same)},
    {"Less", 2, 2, 1, 1, 1, ALIKE, INFER(compare)},
    {"LessOrEqual", 2, 2, 1, 1, 12, ALIKE, INFER(compare)},
    {"Log", 1, 1, 1, 1, 1, INFER(same)},
    {"LogSoftmax", 1, 1, 1, 1, 1, INFER(same), SOFTMAX_AXIS},
    {"MatMul", 2, 2, 1, 1, 1, ALIKE, INFER(matmul)},
    {"MatMulInteger", 2, 4, 1, 1, 10, QUANT},
    {"Max", 1, V, 1, 1, 8, ALIKE, INFER(broadcast)},
    {"MaxPool", 1, 1, 1, 2, 1, .min_rank = 3, .attributes = {WINDOW}, INFER(pool)},
    {"MaxUnpool", 2, 3, 1, 1, 9, .min_rank = 3,
     .attributes = {{"kernel_shape", SPATIAL, POSITIVE}, {"strides", SPATIAL, POSITIVE},
                    {"pads", NPU_EXTENT_TWICE_SPATIAL, NON_NEGATIVE}},
     .inputs = {{1, INT64, ANY}, {2, INT64, RANK, CONSTANT}}, INFER(max_unpool)},
    {"Mean", 1, V, 1, 1, 8, ALIKE, INFER(broadcast)},
    {"MeanVarianceNormalization", 1, 1, 1, 1, 9, .attributes = {{"axes", AXES}}, INFER(same),
     .axes = {NPU_AXES_NORMALIZED}},
    {"Min", 1, V, 1, 1, 8, ALIKE, INFER(broadcast)},
    {"Mish", 1, 1, 1, 1, 18, INFER(same)},
    {"Mod", 2, 2, 1, 1, 10, ALIKE, .relation = mod_relation, INFER(broadcast)},
    {"Mul", 2, 2, 1, 1, 1, ALIKE, INFER(broadcast)},
    {"Neg", 1, 1, 1, 1, 1, INFER(same)},
    {"Not", 1, 1, 1, 1, 1, .inputs = {{0, NPU_DTYPE_BIT(BOOL), ANY}}, INFER(same)},
    {"OneHot", 3, 3, 1, 1, 9, .inputs = {{0, NUMBERS, ANY}, {1, NUMBERS, ONE, CONSTANT}},
     INFER(one_hot)},
    {"Or", 2, 2, 1, 1, 7, LOGICAL},
    {"PRelu", 2, 2, 1, 1, 9, ALIKE, INFER(broadcast)},
    {"Pad", 1, 4, 1, 1, 2, .later = {11, 2}, .attributes = {{"pads", TWICE_RANK}},
     .inputs = {{1, INT64, TWICE_RANK, CONSTANT}, {2, SAME, ONE, CONSTANT}}, INFER(pad),
     .ranges = NPU_RANGES_PAD},
    {"Pow", 2, 2, 1, 1, 1, INFER(broadcast)},
    {"QLinearAdd", 7, 8, 1, 1, 1, MICROSOFT, QUANT},
    /* gst-npu's own, made by the QDQ rewriting (qdq_rewrite.c): QLinearAdd's
     * inputs (B of A's shape, one value or one per channel), then the 65536
     * output values of every pair of byte values (B * 256 + A). */
    {"QLinearBinaryLookup", 9, 9, 1, 1, 1, .domain = "ai.gst-npu", QUANT},
    {"QLinearConcat", 5, V, 1, 1, 1, MICROSOFT, QUANT},
    {"QLinearConv", 8, 9, 1, 1, 10, .min_rank = 3, .attributes = {WINDOW}, QUANT},
    /* gst-npu's own, made by the QDQ rewriting (qdq_rewrite.c): ConvTranspose
     * in QLinearConv's inputs and arithmetic, its weights [C, M/group, k...]
     * with scales and zero points per tensor or along axis 1. */
    {"QLinearConvTranspose", 8, 9, 1, 1, 1, .domain = "ai.gst-npu", .min_rank = 3,
     .attributes = {WINDOW, {"output_padding", SPATIAL, NON_NEGATIVE},
                    {"output_shape", SPATIAL_OR_RANK}},
     QUANT},
    {"QLinearGlobalAveragePool", 5, 5, 1, 1, 1, MICROSOFT, .min_rank = 3, QUANT},
    {"QLinearMatMul", 8, 8, 1, 1, 10, QUANT},
    /* gst-npu's own, made by the QDQ rewriting (qdq_rewrite.c): QLinearMatMul's
     * inputs, then an int32 bias per column of B at scale a_scale * b_scale. */
    {"QLinearMatMulBias", 9, 9, 1, 1, 1, .domain = "ai.gst-npu", QUANT},
    /* gst-npu's own, made by the QDQ rewriting (qdq_rewrite.c): QLinearSigmoid's
     * inputs, then the 256 output values of the input's every byte value. */
    {"QLinearLookup", 6, 6, 1, 1, 1, .domain = "ai.gst-npu", QUANT},
    {"QLinearMul", 7, 8, 1, 1, 1, MICROSOFT, QUANT},
    /* gst-npu's own, made by the QDQ rewriting (qdq_rewrite.c): Softmax along
     * the last axis of 8-bit values, QLinearSigmoid's inputs. */
    {"QLinearSoftmax", 5, 5, 1, 1, 1, .domain = "ai.gst-npu", QUANT},
    {"QLinearSigmoid", 4, 5, 1, 1, 1, MICROSOFT, QUANT},
    {"QuantizeLinear", 2, 3, 1, 1, 10, QUANT},
    {"RNN", 3, 6, 0, 2, 7, RECURRENT(3)},
    {"Range", 3, 3, 1, 1, 11,
     .inputs = {{0, NPU_DTYPES_ANY, ONE, CONSTANT}, {1, SAME, ONE, CONSTANT},
                {2, SAME, ONE, CONSTANT}}, INFER(range)},
    {"Reciprocal", 1, 1, 1, 1, 1, INFER(same)},
    {"ReduceL1", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"ReduceL2", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"ReduceLogSum", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"ReduceLogSumExp", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"ReduceMax", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"ReduceMean", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"ReduceMin", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"ReduceProd", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"ReduceSum", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"ReduceSumSquare", 1, 2, 1, 1, 1, AXES_RULES, INFER(reduce), .axes = {NPU_AXES_REDUCED}},
    {"Relu", 1, 1, 1, 1, 1, INFER(same)},
    {"Reshape", 2, 2, 1, 1, 5, .inputs = {{1, INT64, AXES, CONSTANT}}, INFER(reshape)},
    {"RoiAlign", 3, 3, 1, 1, 10, .inputs = {{1, SAME, ANY}, {2, INT64, ANY}},
     .relation = sampling_relation, INFER(sample)},
    {"Round", 1, 1, 1, 1, 11, INFER(same)},
    {"Resize", 1, 4, 1, 1, 10,
     .attributes = {{"axes", AXES}},
     .inputs = {{1, FLOAT32, RANK, .before = 11, CONSTANT}, {2, FLOAT32, ANY, CONSTANT},
                {3, INT64, ANY, CONSTANT}}, INFER(resize)}, /* (lengths: by `axes`) */
    {"ScatterND", 3, 3, 1, 1, 11, .min_rank = 1, .inputs = {{1, INT64, ANY}},
     .relation = scatter_nd_relation, INFER(same)},
    /* Scatter (opset 9 and 10) is ScatterElements under its first name. */
    {"Scatter", 3, 3, 1, 1, 9, .min_rank = 1, .inputs = {{1, INDEX, ANY}}, .relation = scatter_relation,
     INFER(scatter_elements), ONE_AXIS(0)},
    {"ScatterElements", 3, 3, 1, 1, 11, .min_rank = 1, .inputs = {{1, INDEX, ANY}},
     .relation = scatter_relation, INFER(scatter_elements), ONE_AXIS(0)},
    {"Selu", 1, 1, 1, 1, 1, INFER(same)},
    {"Shrink", 1, 1, 1, 1, 9, INFER(same)},
    {"Shape", 1, 1, 1, 1, 1},
    {"Sigmoid", 1, 1, 1, 1, 1, INFER(same)},
    {"Sign", 1, 1, 1, 1, 9, INFER(same)},
    {"Sin", 1, 1, 1, 1, 7, INFER(same)},
    {"Sinh", 1, 1, 1, 1, 9, INFER(same)},
    {"Size", 1, 1, 1, 1, 1},
    {"Slice", 1, 5, 1, 1, 1, .later = {10, 3},
     .attributes = {{"starts", AXES}, {"ends", AXES}, {"axes", AXES}},
     .inputs = {{1, INDEX, AXES, CONSTANT}, {2, INDEX, LIKE_INPUT1, CONSTANT},
                {3, INDEX, LIKE_INPUT1, CONSTANT}, {4, INDEX, LIKE_INPUT1, CONSTANT}},
     INFER(slice), .ranges = NPU_RANGES_SLICE},
    {"Softmax", 1, 1, 1, 1, 1, INFER(same), SOFTMAX_AXIS},
    {"Softplus", 1, 1, 1, 1, 1, INFER(same)},
    {"Softsign", 1, 1, 1, 1, 1, INFER(same)},
    {"SpaceToDepth", 1, 1, 1, 1, 1, .relation = block_relation, INFER(rearrange_blocks)},
    {"Split", 1, 2, 1, V, 2, .attributes = {{"split", OUTPUTS}},
     .inputs = {{1, INT64, OUTPUTS, CONSTANT}}, INFER(split), ONE_AXIS(0)},
    {"Sqrt", 1, 1, 1, 1, 1, INFER(same)},
    {"Squeeze", 1, 2, 1, 1, 1, AXES_RULES, INFER(squeeze), .axes = {NPU_AXES_SQUEEZED}},
    {"Sub", 2, 2, 1, 1, 1, ALIKE, INFER(broadcast)},
    {"Sum", 1, V, 1, 1, 8, ALIKE, INFER(broadcast)},
    {"Tan", 1, 1, 1, 1, 7, INFER(same)},
    {"Tanh", 1, 1, 1, 1, 1, INFER(same)},
    {"ThresholdedRelu", 1, 1, 1, 1, 10, INFER(same)},
    {"Tile", 2, 2, 1, 1, 6, .inputs = {{1, INT64, RANK, CONSTANT}}, INFER(tile)},
    {"TopK", 2, 2, 2, 2, 10, .inputs = {{1, INT64, ONE, CONSTANT}}, INFER(topk), ONE_AXIS(-1)},
    {"Trilu", 1, 2, 1, 1, 14, .min_rank = 2, .inputs = {{1, INT64, ONE, CONSTANT}}, INFER(same)},
    {"Transpose", 1, 1, 1, 1, 1, .attributes = {{"perm", RANK}}, INFER(transpose),
     .axes = {NPU_AXES_PERMUTED}},
    {"Unsqueeze", 1, 2, 1, 1, 1, AXES_RULES, INFER(unsqueeze), .axes = {NPU_AXES_INSERTED}},
    {"Upsample", 2, 2, 1, 1, 9, .inputs = {{1, FLOAT32, RANK, CONSTANT}}, INFER(resize)},
    {"Where", 3, 3, 1, 1, 9, .inputs = {{0, NPU_DTYPE_BIT(BOOL), ANY}}, ALIKE_FROM_1, INFER(where)},
    {"Xor", 2, 2, 1, 1, 7, LOGICAL},
};

const npu_op_schema *npu_op_schema_find(const char *domain, const char *op_type)
{
  if (domain && (!*domain || strcmp(domain, "ai.onnx") == 0))
    domain = NULL;
  /* Once per node at load: a plain scan keeps the table free of an order to keep. */
  for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++)
    if (strcmp(op_type, schemas[i].op_type) == 0 &&
        (domain ? schemas[i].domain && strcmp(domain, schemas[i].domain) == 0
                : !schemas[i].domain))
      return &schemas[i];
  return NULL;
}

unsigned npu_op_min_inputs(const npu_op_schema *schema, int64_t opset)
{
  return schema->later.opset && opset >= schema->later.opset ? schema->later.min_inputs
                                                             : schema->min_inputs;
}

/* Whether input rule `rule` applies in `opset`. */
static bool rule_applies(const npu_input_rule *rule, int64_t opset)
{
  return !rule->before || opset < rule->before;
}

uint32_t npu_op_constant_inputs(const npu_op_schema *schema, int64_t opset)
{
  uint32_t mask = 0;
  for (size_t r = 0; r < NPU_OP_MAX_INPUT_RULES && schema->inputs[r].dtypes; r++)
    if (schema->inputs[r].constant && rule_applies(&schema->inputs[r], opset))
      mask |= 1u << schema->inputs[r].input;
  return mask;
}

static size_t elements_of(const npu_hal_tensor_desc *t)
{
  size_t count;
  return npu_dims_elements(t->dims, t->rank, &count) ? count : SIZE_MAX;
}

/* The value `extent` asks for on `op`; false with the error set when the
 * tensors it is measured on do not have it. */
static bool extent_value(npu_extent extent, const npu_hal_op *op, const char *label,
                         int64_t *value)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  switch (extent) {
  case NPU_EXTENT_ONE: *value = 1; return true;
  case NPU_EXTENT_AXES: *value = NPU_MAX_RANK; return true;
  case NPU_EXTENT_RANK:
  case NPU_EXTENT_RANK_OR_EMPTY: *value = x->rank; return true;
  case NPU_EXTENT_TWICE_RANK: *value = 2 * (int64_t)x->rank; return true;
  case NPU_EXTENT_SPATIAL:
  case NPU_EXTENT_SPATIAL_OR_RANK: *value = x->rank >= 2 ? x->rank - 2 : 0; return true;
  case NPU_EXTENT_TWICE_SPATIAL: *value = x->rank >= 2 ? 2 * ((int64_t)x->rank - 2) : 0; return true;
  case NPU_EXTENT_CHANNELS: *value = x->rank >= 2 ? x->dims[1] : 0; return true;
  case NPU_EXTENT_OUTPUTS: *value = op->output_count; return true;
  case NPU_EXTENT_LIKE_INPUT1: *value = (int64_t)elements_of(&op->inputs[1]); return true;
  case NPU_EXTENT_OUT_CHANNELS: {
    /* Conv's weights are [M, C/group, k...], ConvTranspose's [C, M/group, k...]. */
    const npu_hal_tensor_desc *w = &op->inputs[1];
    if (w->rank < 2) {
      npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: weights of rank %u", label, w->rank);
      return false;
    }
    if (strcmp(op->op_type, "ConvTranspose") != 0) {
      *value = w->dims[0];
      return true;
    }
    int64_t group = op->attributes.get_int(op->attributes.node, "group", 1);
    if (group < 1 || !npu_mul_i64(w->dims[1], group, value)) {
      npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: group %lld", label, (long long)group);
      return false;
    }
    return true;
  }
  case NPU_EXTENT_NONE:
  case NPU_EXTENT_ANY: break;
  }
  return false;
}

static const char *extent_name(npu_extent extent)
{
  switch (extent) {
  case NPU_EXTENT_ONE: return "a scalar";
  case NPU_EXTENT_AXES: return "axes of a tensor";
  case NPU_EXTENT_RANK: return "the input's rank";
  case NPU_EXTENT_RANK_OR_EMPTY: return "the input's rank, or none";
  case NPU_EXTENT_TWICE_RANK: return "2 x the input's rank";
  case NPU_EXTENT_SPATIAL: return "the spatial axes";
  case NPU_EXTENT_SPATIAL_OR_RANK: return "the spatial axes, or all axes";
  case NPU_EXTENT_TWICE_SPATIAL: return "2 x the spatial axes";
  case NPU_EXTENT_CHANNELS: return "the input's channels";
  case NPU_EXTENT_OUT_CHANNELS: return "the output channels";
  case NPU_EXTENT_OUTPUTS: return "the outputs";
  case NPU_EXTENT_LIKE_INPUT1: return "as many as input 1";
  case NPU_EXTENT_NONE:
  case NPU_EXTENT_ANY: break;
  }
  return "any";
}

/* Whether `count` values satisfy `extent`; else the error names `what`. */
static bool count_fits(npu_extent extent, size_t count, const npu_hal_op *op, const char *label,
                       const char *what)
{
  int64_t want;
  if (extent == NPU_EXTENT_ANY)
    return true;
  if (!extent_value(extent, op, label, &want))
    return false;
  bool fits = extent == NPU_EXTENT_AXES ? count <= (size_t)want
              : extent == NPU_EXTENT_SPATIAL_OR_RANK
                  ? count == (size_t)want || count == op->inputs[0].rank
              : extent == NPU_EXTENT_RANK_OR_EMPTY ? count == (size_t)want || count == 0
                                                   : want >= 0 && count == (size_t)want;
  if (!fits)
    npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: %s has %zu values, expected %s%lld (%s)", label,
                  what, count, extent == NPU_EXTENT_AXES ? "at most " : "", (long long)want,
                  extent_name(extent));
  return fits;
}

static void dtype_list(uint16_t dtypes, char *buffer, size_t size)
{
  size_t used = 0;
  buffer[0] = '\0';
  for (int type = 1; type < 15 && used < size; type++)
    if (dtypes & (1u << type))
      used += (size_t)snprintf(buffer + used, size - used, "%s%s", used ? " or " : "",
                               npu_dtype_name((npu_dtype)type));
}

npu_status npu_op_validate(const npu_op_schema *schema, const npu_hal_op *op,
                           const char *const *input_names, const char *label)
{
  const npu_hal_tensor_desc *x = op->input_count ? &op->inputs[0] : NULL;
  if (x && x->dtype != NPU_DTYPE_UNDEFINED && x->rank < schema->min_rank)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' has rank %u, %s needs at "
                         "least %u", label, input_names[0], x->rank, op->op_type,
                         schema->min_rank);
  for (size_t r = 0; r < NPU_OP_MAX_ATTRIBUTE_RULES && schema->attributes[r].name; r++) {
    const npu_attribute_rule *rule = &schema->attributes[r];
    const int64_t *values;
    size_t count = op->attributes.get_ints(op->attributes.node, rule->name, &values);
    char what[64];
    snprintf(what, sizeof what, "attribute '%s'", rule->name);
    if (count && !count_fits(rule->count, count, op, label, what))
      return NPU_ERROR_INVALID_MODEL;
    int64_t least = rule->values == NPU_VALUES_POSITIVE ? 1 : 0;
    for (size_t i = 0; i < count && rule->values != NPU_VALUES_ANY; i++)
      if (values[i] < least)
        return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: %s value %lld, expected %s", label,
                             what, (long long)values[i],
                             least ? "a positive one" : "none negative");
  }
  for (size_t r = 0; r < NPU_OP_MAX_INPUT_RULES && schema->inputs[r].dtypes; r++) {
    const npu_input_rule *rule = &schema->inputs[r];
    if (rule->input >= op->input_count || op->inputs[rule->input].dtype == NPU_DTYPE_UNDEFINED ||
        !rule_applies(rule, op->opset))
      continue; /* an optional input left out, or another opset's */
    const npu_hal_tensor_desc *t = &op->inputs[rule->input];
    uint16_t dtypes = rule->dtypes & NPU_DTYPES_SAME_AS_INPUT0 ? NPU_DTYPE_BIT_OF(x->dtype)
                                                                : rule->dtypes;
    if (!(dtypes & NPU_DTYPE_BIT_OF(t->dtype))) {
      char expected[96];
      dtype_list(dtypes, expected, sizeof expected);
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' is %s, %s takes %s there",
                           label, input_names[rule->input], npu_dtype_name(t->dtype),
                           op->op_type, expected);
    }
    char what[160];
    snprintf(what, sizeof what, "input '%s'", input_names[rule->input]);
    if (!count_fits(rule->length, elements_of(t), op, label, what))
      return NPU_ERROR_INVALID_MODEL;
  }
  for (uint32_t i = schema->same_dtypes; schema->same_dtypes && i < op->input_count; i++) {
    npu_dtype first = op->inputs[schema->same_dtypes - 1].dtype, dtype = op->inputs[i].dtype;
    if (dtype != NPU_DTYPE_UNDEFINED && first != NPU_DTYPE_UNDEFINED && dtype != first)
      return npu_set_error(NPU_ERROR_INVALID_MODEL,
                           "%s: input '%s' is %s, input '%s' %s: %s takes one element type",
                           label, input_names[i], npu_dtype_name(dtype),
                           input_names[schema->same_dtypes - 1], npu_dtype_name(first),
                           op->op_type);
  }
  uint32_t constants = npu_op_constant_inputs(schema, op->opset);
  for (uint32_t i = 0; i < op->input_count; i++)
    if ((constants >> i & 1) && op->inputs[i].dtype != NPU_DTYPE_UNDEFINED &&
        elements_of(&op->inputs[i]) && !op->input_values[i])
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: input '%s' is computed at run time; "
                           "%s needs its values when planning", label, input_names[i],
                           op->op_type);
  return schema->relation ? schema->relation(op, input_names, label) : NPU_OK;
}

/* Conv and ConvTranspose: the groups divide the channels, and the weights
 * ([M, C/group, k...], transposed [C, M/group, k...]) match the input's
 * channels and the kernel_shape attribute. */
static npu_status window_relation(const npu_hal_op *op, const char *const *input_names,
                                  const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *w = &op->inputs[1];
  bool transposed = strcmp(op->op_type, "ConvTranspose") == 0;
  int64_t group = op->attributes.get_int(op->attributes.node, "group", 1), per_group;
  if (w->rank != x->rank)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: weights '%s' of rank %u for an input of "
                         "rank %u", label, input_names[1], w->rank, x->rank);
  if (transposed ? w->dims[0] != x->dims[1]
                 : group < 1 || !npu_mul_i64(w->dims[1], group, &per_group) ||
                       per_group != x->dims[1])
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: weights '%s' [%lld, %lld, ...] do not "
                         "fit %lld input channels in %lld groups", label, input_names[1],
                         (long long)w->dims[0], (long long)w->dims[1], (long long)x->dims[1],
                         (long long)group);
  if (group < 1 || x->dims[1] % group || (!transposed && w->dims[0] % group))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: %lld groups do not divide the channels",
                         label, (long long)group);
  const int64_t *kernel;
  size_t n = op->attributes.get_ints(op->attributes.node, "kernel_shape", &kernel);
  for (size_t s = 0; s < n; s++) /* (its count is the spatial rank: checked) */
    if (kernel[s] != w->dims[2 + s])
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: kernel_shape differs from the weights "
                           "'%s' on spatial axis %zu", label, input_names[1], s);
  return NPU_OK;
}

/* Gemm: A and B are matrices whose inner dimensions agree, and C
 * broadcasts one way to the (M, N) result. */
static npu_status gemm_relation(const npu_hal_op *op, const char *const *input_names,
                                const char *label)
{
  const npu_hal_tensor_desc *a = &op->inputs[0], *b = &op->inputs[1];
  bool ta = op->attributes.get_int(op->attributes.node, "transA", 0) != 0;
  bool tb = op->attributes.get_int(op->attributes.node, "transB", 0) != 0;
  if (a->rank != 2 || b->rank != 2 || a->dims[ta ? 0 : 1] != b->dims[tb ? 1 : 0])
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: Gemm of incompatible matrices '%s' and "
                         "'%s'", label, input_names[0], input_names[1]);
  if (op->input_count < 3 || op->inputs[2].dtype == NPU_DTYPE_UNDEFINED)
    return NPU_OK;
  const npu_hal_tensor_desc *c = &op->inputs[2];
  int64_t result[2] = {a->dims[ta ? 1 : 0], b->dims[tb ? 0 : 1]};
  bool fits = c->rank <= 2;
  for (uint32_t d = 0; d < c->rank && fits; d++) {
    int64_t dim = c->dims[d], want = result[2 - c->rank + d];
    fits = dim == 1 || dim == want;
  }
  return fits ? NPU_OK
              : npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: C '%s' does not broadcast to the "
                              "%lld x %lld result", label, input_names[2],
                              (long long)result[0], (long long)result[1]);
}

/* Mod: ONNX defines a floating-point Mod only as C's fmod (fmod = 1). */
static npu_status mod_relation(const npu_hal_op *op, const char *const *input_names,
                               const char *label)
{
  int64_t fmod = op->attributes.get_int(op->attributes.node, "fmod", 0);
  npu_dtype dtype = op->inputs[0].dtype;
  bool floating = dtype == NPU_DTYPE_FLOAT32 || dtype == NPU_DTYPE_FLOAT64 ||
                  dtype == NPU_DTYPE_FLOAT16;
  if (fmod != 0 && fmod != 1)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: fmod %lld, expected 0 or 1", label,
                         (long long)fmod);
  if (floating && !fmod)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' is %s, which Mod takes only "
                         "with fmod = 1", label, input_names[0], npu_dtype_name(dtype));
  return NPU_OK;
}

/* Gelu: approximate is "none" (the erf form) or "tanh". */
static npu_status gelu_relation(const npu_hal_op *op, const char *const *input_names,
                                const char *label)
{
  (void)input_names;
  const char *approximate = op->attributes.get_string(op->attributes.node, "approximate", "none");
  if (strcmp(approximate, "none") != 0 && strcmp(approximate, "tanh") != 0)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: approximate '%s', expected 'none' or "
                         "'tanh'", label, approximate);
  return NPU_OK;
}

/* The scatters: the updates are of the data's element type, and the
 * reduction is one of the opset's (ScatterElements, Scatter: the shapes
 * along the axis are the shape function's to check, which knows the axis). */
static npu_status scatter_relation(const npu_hal_op *op, const char *const *input_names,
                                   const char *label)
{
  const npu_hal_tensor_desc *data = &op->inputs[0], *updates = &op->inputs[2];
  if (updates->dtype != data->dtype)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: updates '%s' are %s, the data '%s' %s",
                         label, input_names[2], npu_dtype_name(updates->dtype), input_names[0],
                         npu_dtype_name(data->dtype));
  const char *reduction = op->attributes.get_string(op->attributes.node, "reduction", "none");
  bool known = strcmp(reduction, "none") == 0 ||
               (op->opset >= 16 && (!strcmp(reduction, "add") || !strcmp(reduction, "mul"))) ||
               (op->opset >= 18 && (!strcmp(reduction, "max") || !strcmp(reduction, "min")));
  if (!known)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: reduction '%s' (opset %lld has none, "
                         "%s)", label, reduction, (long long)op->opset,
                         op->opset >= 18   ? "add, mul, max and min"
                         : op->opset >= 16 ? "add and mul"
                                           : "no other");
  return NPU_OK;
}

/* ScatterND: indices [..., k] are tuples fixing the first k axes of the
 * data (1 <= k <= its rank), the updates have the indices' leading shape
 * then the data's trailing one, the reduction is one of the opset's, and
 * constant indices are in range (the kernel checks computed ones). */
static npu_status scatter_nd_relation(const npu_hal_op *op, const char *const *input_names,
                                      const char *label)
{
  const npu_hal_tensor_desc *data = &op->inputs[0], *indices = &op->inputs[1];
  const npu_hal_tensor_desc *updates = &op->inputs[2];
  npu_status status = scatter_relation(op, input_names, label);
  if (status != NPU_OK)
    return status;
  int64_t k = indices->rank ? indices->dims[indices->rank - 1] : 0;
  if (k < 1 || k > data->rank)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: indices '%s' end in tuples of %lld, "
                         "expected 1 to the data's rank %u", label, input_names[1],
                         (long long)k, data->rank);
  uint32_t want_rank = indices->rank - 1 + data->rank - (uint32_t)k;
  bool fits = updates->rank == want_rank;
  for (uint32_t d = 0; d < want_rank && fits; d++)
    fits = updates->dims[d] == (d < indices->rank - 1 ? indices->dims[d]
                                                      : data->dims[d - (indices->rank - 1) + k]);
  if (!fits)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: updates '%s' are not shaped as the "
                         "indices '%s' less their last axis, then the data '%s' past axis %lld",
                         label, input_names[2], input_names[1], input_names[0], (long long)k);
  const int64_t *values = op->input_values[1];
  size_t count = elements_of(indices);
  for (size_t t = 0; values && t < count / (size_t)k; t++) {
    int64_t position;
    uint32_t axis;
    const int64_t *tuple = values + t * (size_t)k;
    if (!npu_index_tuple_position(tuple, (uint32_t)k, data->dims, &position, &axis))
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: index %lld (tuple %zu of indices '%s') "
                           "is out of range for axis %u of the data '%s', of size %lld", label,
                           (long long)tuple[axis], t, input_names[1], axis, input_names[0],
                           (long long)data->dims[axis]);
  }
  return NPU_OK;
}

/* CumSum: its axis (a constant) is one of the input's. */
static npu_status cumsum_relation(const npu_hal_op *op, const char *const *input_names,
                                  const char *label)
{
  int64_t axis = npu_op_index_value(op, 1, 0), rank = op->inputs[0].rank;
  if (axis < -rank || axis >= rank)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: axis %lld ('%s') out of range for rank "
                         "%lld", label, (long long)axis, input_names[1], (long long)rank);
  return NPU_OK;
}

/* BitShift: direction is "LEFT" or "RIGHT". */
static npu_status bitshift_relation(const npu_hal_op *op, const char *const *input_names,
                                    const char *label)
{
  (void)input_names;
  const char *direction = op->attributes.get_string(op->attributes.node, "direction", "");
  if (strcmp(direction, "LEFT") != 0 && strcmp(direction, "RIGHT") != 0)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: direction '%s', expected 'LEFT' or "
                         "'RIGHT'", label, direction);
  return NPU_OK;
}

/* DepthToSpace and SpaceToDepth: a 4-D input, a positive blocksize that
 * divides the channels (DepthToSpace, squared) or the height and width
 * (SpaceToDepth), and a known mode. */
static npu_status block_relation(const npu_hal_op *op, const char *const *input_names,
                                 const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  int64_t block = op->attributes.get_int(op->attributes.node, "blocksize", 0), square;
  bool to_space = strcmp(op->op_type, "DepthToSpace") == 0;
  if (x->rank != 4)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' has rank %u, %s takes 4",
                         label, input_names[0], x->rank, op->op_type);
  if (block < 1 || !npu_mul_i64(block, block, &square))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: blocksize %lld, expected a positive "
                         "one", label, (long long)block);
  if (to_space ? x->dims[1] % square != 0 : (x->dims[2] % block || x->dims[3] % block))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: blocksize %lld does not divide the %s "
                         "of input '%s'", label, (long long)block,
                         to_space ? "channels (squared)" : "height and width", input_names[0]);
  const char *mode = op->attributes.get_string(op->attributes.node, "mode", "DCR");
  if (to_space && strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: mode '%s', expected 'DCR' or 'CRD'",
                         label, mode);
  return NPU_OK;
}

/* GroupNormalization: num_groups divides the channels; scale and bias have
 * one value per group (opset 18) or per channel (opset 21). */
static npu_status group_norm_relation(const npu_hal_op *op, const char *const *input_names,
                                      const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  int64_t groups = op->attributes.get_int(op->attributes.node, "num_groups", 0);
  if (groups < 1 || x->dims[1] % groups)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: num_groups %lld does not divide the %lld "
                         "channels of input '%s'", label, (long long)groups,
                         (long long)x->dims[1], input_names[0]);
  size_t want = op->opset >= 21 ? (size_t)x->dims[1] : (size_t)groups;
  for (uint32_t i = 1; i < 3; i++)
    if (elements_of(&op->inputs[i]) != want)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' has %zu values, expected "
                           "one per %s (%zu)", label, input_names[i],
                           elements_of(&op->inputs[i]), op->opset >= 21 ? "channel" : "group",
                           want);
  return NPU_OK;
}

/* LRN: a positive window size across the channels. */
static npu_status lrn_relation(const npu_hal_op *op, const char *const *input_names,
                               const char *label)
{
  (void)input_names;
  int64_t size = op->attributes.get_int(op->attributes.node, "size", 0);
  return size >= 1 ? NPU_OK
                   : npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: size %lld, expected a positive "
                                   "one", label, (long long)size);
}

/* LpNormalization: the L1 or the L2 norm. */
static npu_status lp_norm_relation(const npu_hal_op *op, const char *const *input_names,
                                   const char *label)
{
  (void)input_names;
  int64_t p = op->attributes.get_int(op->attributes.node, "p", 2);
  return p == 1 || p == 2 ? NPU_OK
                          : npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: p %lld, expected 1 or 2",
                                          label, (long long)p);
}

/* Whether attribute `name` (default `fallback`) is one of `count` names. */
static bool known_name(const npu_hal_op *op, const char *name, const char *fallback,
                       const char *const *names, size_t count, const char *label)
{
  const char *value = op->attributes.get_string(op->attributes.node, name, fallback);
  for (size_t i = 0; i < count; i++)
    if (strcmp(value, names[i]) == 0)
      return true;
  npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: %s '%s' is not one of ONNX's", label, name, value);
  return false;
}

/* RoiAlign: a 4-D image, regions [R, 4] and their batch indices [R], known
 * modes, an output of at least one bin. GridSample: a 4-D image and a grid
 * [N, H', W', 2] of its batch, known modes. */
static npu_status sampling_relation(const npu_hal_op *op, const char *const *input_names,
                                    const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *second = &op->inputs[1];
  if (x->rank != 4)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' has rank %u, %s takes 4-D "
                         "images", label, input_names[0], x->rank, op->op_type);
  if (strcmp(op->op_type, "GridSample") == 0) {
    static const char *const modes[] = {"bilinear", "nearest", "bicubic"};
    static const char *const paddings[] = {"zeros", "border", "reflection"};
    if (second->rank != 4 || second->dims[0] != x->dims[0] || second->dims[3] != 2)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: grid '%s' is not [N, H, W, 2] for "
                           "the %lld images of '%s'", label, input_names[1],
                           (long long)x->dims[0], input_names[0]);
    return known_name(op, "mode", "bilinear", modes, 3, label) &&
                   known_name(op, "padding_mode", "zeros", paddings, 3, label)
               ? NPU_OK
               : NPU_ERROR_INVALID_MODEL;
  }
  static const char *const modes[] = {"avg", "max"};
  static const char *const coordinates[] = {"half_pixel", "output_half_pixel"};
  const npu_hal_tensor_desc *batch = &op->inputs[2];
  if (second->rank != 2 || second->dims[1] != 4 || batch->rank != 1 ||
      batch->dims[0] != second->dims[0])
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: regions '%s' are not [R, 4] with R "
                         "batch indices '%s'", label, input_names[1], input_names[2]);
  int64_t height = op->attributes.get_int(op->attributes.node, "output_height", 1);
  int64_t width = op->attributes.get_int(op->attributes.node, "output_width", 1);
  int64_t ratio = op->attributes.get_int(op->attributes.node, "sampling_ratio", 0);
  if (height < 1 || width < 1 || ratio < 0)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: output %lld x %lld, sampling_ratio %lld",
                         label, (long long)height, (long long)width, (long long)ratio);
  return known_name(op, "mode", "avg", modes, 2, label) &&
                 known_name(op, "coordinate_transformation_mode", "half_pixel", coordinates, 2,
                            label)
             ? NPU_OK
             : NPU_ERROR_INVALID_MODEL;
}

/* The element types and shapes of a recurrent operator's inputs (X
 * [seq, batch, input] or, with layout 1, [batch, seq, input]), its
 * attributes' values, and hidden_size against the weights. */
static npu_status recurrent_relation(const npu_hal_op *op, const char *const *input_names,
                                     const char *label)
{
  const npu_hal_attributes *a = &op->attributes;
  bool lstm = strcmp(op->op_type, "LSTM") == 0, gru = strcmp(op->op_type, "GRU") == 0;
  int64_t gates = lstm ? 4 : gru ? 3 : 1, activations_per_direction = lstm ? 3 : gru ? 2 : 1;
  int64_t layout = a->get_int(a->node, "layout", 0);
  const char *direction = a->get_string(a->node, "direction", "forward");
  int64_t directions = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
  const npu_hal_tensor_desc *x = &op->inputs[0], *r = &op->inputs[2];
  if (strcmp(direction, "forward") && strcmp(direction, "reverse") && directions != 2)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: direction '%s', expected forward, "
                         "reverse or bidirectional", label, direction);
  if (layout != 0 && layout != 1)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: layout %lld, expected 0 or 1", label,
                         (long long)layout);
  const char *flag = lstm ? "input_forget" : gru ? "linear_before_reset" : NULL;
  int64_t flag_value = flag ? a->get_int(a->node, flag, 0) : 0;
  if (flag_value != 0 && flag_value != 1)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: %s %lld, expected 0 or 1", label, flag,
                         (long long)flag_value);
  if (a->get_float(a->node, "clip", 1.0f) <= 0)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: clip is not positive", label);
  size_t activations = a->get_string_count(a->node, "activations");
  if (activations && activations != (size_t)(activations_per_direction * directions))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: %zu activations, expected %lld (%lld "
                         "per direction)", label, activations,
                         (long long)(activations_per_direction * directions),
                         (long long)activations_per_direction);
  if (x->rank != 3 || r->rank != 3)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' and recurrence weights '%s' "
                         "must be of rank 3", label, input_names[0], input_names[2]);
  int64_t hidden = r->dims[2], batch = x->dims[layout ? 0 : 1], bias_width;
  int64_t hidden_size = a->get_int(a->node, "hidden_size", hidden);
  /* (an empty R bounds no hidden size: the widths below are checked through B's, the widest) */
  if (!npu_mul_i64(2 * gates, hidden, &bias_width))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: hidden size %lld is too large", label,
                         (long long)hidden);
  if (hidden_size != hidden || hidden < 1)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: hidden_size %lld, the weights '%s' "
                         "give %lld", label, (long long)hidden_size, input_names[2],
                         (long long)hidden);
  /* Each input's expected dims; rank 0: not checked here (X, or left out). */
  struct {
    uint32_t rank;
    int64_t dims[3];
  } expected[8] = {
      {0, {0}},
      {3, {directions, gates * hidden, x->dims[2]}},
      {3, {directions, gates * hidden, hidden}},
      {2, {directions, bias_width}},
      {1, {batch}},
      {3, {layout ? batch : directions, layout ? directions : batch, hidden}},
      {3, {layout ? batch : directions, layout ? directions : batch, hidden}},
      {2, {directions, 3 * hidden}},
  };
  for (uint32_t i = 1; i < op->input_count; i++) {
    const npu_hal_tensor_desc *t = &op->inputs[i];
    if (t->dtype == NPU_DTYPE_UNDEFINED)
      continue;
    npu_dtype want = i == 4 ? NPU_DTYPE_INT32 : x->dtype;
    if (t->dtype != want)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' is %s, expected %s", label,
                           input_names[i], npu_dtype_name(t->dtype), npu_dtype_name(want));
    bool fits = t->rank == expected[i].rank;
    for (uint32_t d = 0; d < t->rank && fits; d++)
      fits = t->dims[d] == expected[i].dims[d];
    if (!fits)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: input '%s' (input %u) is not shaped "
                           "[%lld, %lld, %lld] (up to rank %u) for %lld direction(s), batch "
                           "%lld, hidden size %lld", label, input_names[i], i,
                           (long long)expected[i].dims[0], (long long)expected[i].dims[1],
                           (long long)expected[i].dims[2], expected[i].rank,
                           (long long)directions, (long long)batch, (long long)hidden);
  }
  return NPU_OK;
}
