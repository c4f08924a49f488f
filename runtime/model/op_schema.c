/* Operator table: what a model may use and with how many inputs/outputs
 * (ONNX's own limits across opsets: e.g. Clip gained min/max inputs in
 * opset 11, Slice its inputs in 10, Split its `split` input in 13), and the
 * first opset whose form of each operator the runtime handles (Reshape took
 * its shape as an attribute before 5, TopK its k before 10, Cast its type
 * as a string before 6...). */
#include <string.h>

#include "op_schema.h"

#define V NPU_OP_VARIADIC

static const npu_op_schema schemas[] = {
    {"Abs", 1, 1, 1, 1, 1},
    {"Add", 2, 2, 1, 1, 1},
    {"ArgMax", 1, 1, 1, 1, 1},
    {"ArgMin", 1, 1, 1, 1, 1},
    {"AveragePool", 1, 1, 1, 1, 1},
    {"BatchNormalization", 5, 5, 1, 3, 7},
    {"Cast", 1, 1, 1, 1, 6},
    {"Ceil", 1, 1, 1, 1, 1},
    {"Celu", 1, 1, 1, 1, 12},
    {"Clip", 1, 3, 1, 1, 1},
    {"Concat", 1, V, 1, 1, 4},
    {"Constant", 0, 0, 1, 1, 1},
    {"ConstantOfShape", 1, 1, 1, 1, 9},
    {"Conv", 2, 3, 1, 1, 1},
    {"ConvTranspose", 2, 3, 1, 1, 1},
    {"Div", 2, 2, 1, 1, 1},
    {"Dropout", 1, 3, 1, 2, 7},
    {"Elu", 1, 1, 1, 1, 1},
    {"Equal", 2, 2, 1, 1, 1},
    {"Erf", 1, 1, 1, 1, 9},
    {"Exp", 1, 1, 1, 1, 1},
    {"Expand", 2, 2, 1, 1, 8},
    {"Flatten", 1, 1, 1, 1, 1},
    {"Floor", 1, 1, 1, 1, 1},
    {"Gather", 2, 2, 1, 1, 1},
    {"Gemm", 2, 3, 1, 1, 7},
    {"GlobalAveragePool", 1, 1, 1, 1, 1},
    {"GlobalMaxPool", 1, 1, 1, 1, 1},
    {"Greater", 2, 2, 1, 1, 1},
    {"HardSigmoid", 1, 1, 1, 1, 1},
    {"HardSwish", 1, 1, 1, 1, 14},
    {"Identity", 1, 1, 1, 1, 1},
    {"LayerNormalization", 2, 3, 1, 3, 17},
    {"LeakyRelu", 1, 1, 1, 1, 1},
    {"Less", 2, 2, 1, 1, 1},
    {"Log", 1, 1, 1, 1, 1},
    {"LogSoftmax", 1, 1, 1, 1, 1},
    {"MatMul", 2, 2, 1, 1, 1},
    {"Max", 1, V, 1, 1, 8},
    {"MaxPool", 1, 1, 1, 2, 1},
    {"Min", 1, V, 1, 1, 8},
    {"Mish", 1, 1, 1, 1, 18},
    {"Mul", 2, 2, 1, 1, 1},
    {"Neg", 1, 1, 1, 1, 1},
    {"PRelu", 2, 2, 1, 1, 9},
    {"Pad", 1, 4, 1, 1, 2},
    {"Pow", 2, 2, 1, 1, 1},
    {"Range", 3, 3, 1, 1, 11},
    {"Reciprocal", 1, 1, 1, 1, 1},
    {"ReduceL1", 1, 2, 1, 1, 1},
    {"ReduceL2", 1, 2, 1, 1, 1},
    {"ReduceLogSum", 1, 2, 1, 1, 1},
    {"ReduceLogSumExp", 1, 2, 1, 1, 1},
    {"ReduceMax", 1, 2, 1, 1, 1},
    {"ReduceMean", 1, 2, 1, 1, 1},
    {"ReduceMin", 1, 2, 1, 1, 1},
    {"ReduceProd", 1, 2, 1, 1, 1},
    {"ReduceSum", 1, 2, 1, 1, 1},
    {"ReduceSumSquare", 1, 2, 1, 1, 1},
    {"Relu", 1, 1, 1, 1, 1},
    {"Reshape", 2, 2, 1, 1, 5},
    {"Resize", 1, 4, 1, 1, 10},
    {"Selu", 1, 1, 1, 1, 1},
    {"Shape", 1, 1, 1, 1, 1},
    {"Sigmoid", 1, 1, 1, 1, 1},
    {"Sign", 1, 1, 1, 1, 9},
    {"Size", 1, 1, 1, 1, 1},
    {"Slice", 1, 5, 1, 1, 1},
    {"Softmax", 1, 1, 1, 1, 1},
    {"Softplus", 1, 1, 1, 1, 1},
    {"Softsign", 1, 1, 1, 1, 1},
    {"Split", 1, 2, 1, V, 2},
    {"Sqrt", 1, 1, 1, 1, 1},
    {"Squeeze", 1, 2, 1, 1, 1},
    {"Sub", 2, 2, 1, 1, 1},
    {"Tanh", 1, 1, 1, 1, 1},
    {"ThresholdedRelu", 1, 1, 1, 1, 10},
    {"Tile", 2, 2, 1, 1, 6},
    {"TopK", 1, 2, 2, 2, 10},
    {"Transpose", 1, 1, 1, 1, 1},
    {"Unsqueeze", 1, 2, 1, 1, 1},
    {"Upsample", 1, 2, 1, 1, 9},
    {"Where", 3, 3, 1, 1, 9},
};

const npu_op_schema *npu_op_schema_find(const char *op_type)
{
  /* Once per node at load: a plain scan keeps the table free of an order to keep. */
  for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++)
    if (strcmp(op_type, schemas[i].op_type) == 0)
      return &schemas[i];
  return NULL;
}
