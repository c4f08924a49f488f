/* Every Vulkan kernel against the CPU backend's on random inputs: the same
 * operator (attributes, fused activations) created on both backends through
 * the HAL, run once each; outputs within each case's tolerance of the CPU's,
 * relative to 1 + |expected| (1e-5 unless stated: summation order and
 * exp/tanh/pow differ; copies and most elementwise results are exact).
 * Vulkan inputs and outputs sit at unaligned offsets of their buffers, and
 * the output starts as NaNs, so that every element must be written. The
 * products and convolutions run in whichever shaders the device has
 * (NPU_VULKAN_SHADERS=tiled or blocked: the suite runs both). Also: what
 * op_supported refuses, which shaders NPU_VULKAN_SHADERS picks, and the
 * products' and convolutions' speed on both backends and with both shader
 * variants (printed: /vulkan/kernel-time, left out of the suite's runs). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "npu_hal_graph.h"
#include "npu_internal.h"
#include "vk_test.h"
#include "op_params.h"
#include "vulkan/vk_kernels.h"

/* The attributes a case sets; everything else answers the fallback. */
typedef struct test_node {
  int64_t group, count_include_pad, ceil_mode;
  int64_t strides[2], pads[4], dilations[2], kernel_shape[2];
  const char *auto_pad;
  bool has_axis;
  int64_t axis, trans_a, trans_b;
  int64_t perm[6], axes[4], starts[4], ends[4];
  size_t perm_count, axes_count, starts_count; /* ends: as many as starts */
  float alpha, beta;             /* both 0: the operator's defaults */
  const char *mode, *coordinate_mode, *nearest_mode;
} test_node;

static int64_t node_int(const void *node, const char *name, int64_t fallback)
{
  const test_node *n = node;
  if (strcmp(name, "group") == 0 && n->group)
    return n->group;
  if (strcmp(name, "count_include_pad") == 0)
    return n->count_include_pad;
  if (strcmp(name, "ceil_mode") == 0)
    return n->ceil_mode;
  if (strcmp(name, "axis") == 0 && n->has_axis)
    return n->axis;
  if (strcmp(name, "transA") == 0)
    return n->trans_a;
  if (strcmp(name, "transB") == 0)
    return n->trans_b;
  return fallback;
}

static float node_float(const void *node, const char *name, float fallback)
{
  const test_node *n = node;
  if (!n->alpha && !n->beta)
    return fallback;
  if (strcmp(name, "alpha") == 0)
    return n->alpha;
  return strcmp(name, "beta") == 0 ? n->beta : fallback;
}

static size_t node_ints(const void *node, const char *name, const int64_t **values)
{
  const test_node *n = node;
  struct { const char *name; const int64_t *values; size_t count; } table[] = {
      {"strides", n->strides, 2}, {"pads", n->pads, 4}, {"dilations", n->dilations, 2},
      {"kernel_shape", n->kernel_shape, 2}};
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
    bool set = false; /* any value given (pads may start with 0) */
    for (size_t v = 0; v < table[i].count; v++)
      set = set || table[i].values[v];
    if (strcmp(name, table[i].name) == 0 && set) {
      *values = table[i].values;
      return table[i].count;
    }
  }
  struct { const char *name; const int64_t *values; size_t count; } lists[] = {
      {"perm", n->perm, n->perm_count}, {"axes", n->axes, n->axes_count},
      {"starts", n->starts, n->starts_count}, {"ends", n->ends, n->starts_count}};
  for (size_t i = 0; i < G_N_ELEMENTS(lists); i++)
    if (strcmp(name, lists[i].name) == 0 && lists[i].count) {
      *values = lists[i].values;
      return lists[i].count;
    }
  return 0;
}

static const char *node_string(const void *node, const char *name, const char *fallback)
{
  const test_node *n = node;
  const char *value = strcmp(name, "auto_pad") == 0 ? n->auto_pad
                      : strcmp(name, "mode") == 0 ? n->mode
                      : strcmp(name, "coordinate_transformation_mode") == 0 ? n->coordinate_mode
                      : strcmp(name, "nearest_mode") == 0 ? n->nearest_mode
                                                            : NULL;
  return value ? value : fallback;
}

#define T4(n, c, h, w) {NPU_DTYPE_FLOAT32, 4, {n, c, h, w}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define T1(n) {NPU_DTYPE_FLOAT32, 1, {n}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define SCALAR {NPU_DTYPE_FLOAT32, 0, {0}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define ABSENT {NPU_DTYPE_UNDEFINED, 0, {0}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define T2(a, b) {NPU_DTYPE_FLOAT32, 2, {a, b}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define T3(a, b, c) {NPU_DTYPE_FLOAT32, 3, {a, b, c}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define T5(a, b, c, d, e) {NPU_DTYPE_FLOAT32, 5, {a, b, c, d, e}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define I64(n) {NPU_DTYPE_INT64, 1, {n}, NPU_HAL_LAYOUT_PLAIN, {0}}

#define MAX_INPUTS 5
#define MAX_OUTPUTS 3

typedef struct kernel_case {
  const char *name;
  const char *op_type;
  uint32_t input_count;
  npu_hal_tensor_desc inputs[MAX_INPUTS];
  npu_hal_tensor_desc output;
  test_node node;
  uint32_t constants;            /* bit i: input i's values are known when planning */
  float low[MAX_INPUTS], high[MAX_INPUTS]; /* random range per input; both 0: [-1, 1] */
  uint32_t activation_count;
  npu_hal_activation activations[4];
  bool residual;                 /* one fused input shaped like the output... */
  npu_hal_tensor_desc addend;    /* ...or like this (rank 0: the output's shape) */
  const void *values[MAX_INPUTS]; /* given values (int64 shapes, scales), else random */
  npu_hal_tensor_desc more_outputs[MAX_OUTPUTS - 1];
  uint32_t output_count;         /* 0: one */
  double tolerance;              /* 0: 1e-5 */
  int64_t opset;                 /* 0: 13 */
} kernel_case;

static const int64_t starts_1_0[] = {1, 0}, ends_big[] = {INT64_MAX, -1}, axes_1_3[] = {1, 3},
                     steps_1_2[] = {1, 2}, start_m1[] = {-1}, end_min[] = {INT64_MIN},
                     axis_2[] = {2}, step_m2[] = {-2}, shape_flat[] = {2, -1},
                     split_4_8_4[] = {4, 8, 4};
static const float scales_2x[] = {1, 1, 2, 2}, scales_odd[] = {1, 1, 1.5f, 0.6f};

static const kernel_case cases[] = {
    {"relu", "Relu", 1, {T4(2, 3, 17, 19)}, T4(2, 3, 17, 19)},
    {"sigmoid", "Sigmoid", 1, {T4(2, 3, 17, 19)}, T4(2, 3, 17, 19), .low = {-8}, .high = {8}},
    {"clip", "Clip", 3, {T4(1, 5, 7, 9), SCALAR, SCALAR}, T4(1, 5, 7, 9), .constants = 6,
     .low = {-1, -0.25f, 0.5f}, .high = {1, -0.25f, 0.5f}},
    {"add", "Add", 2, {T4(2, 4, 9, 11), T4(2, 4, 9, 11)}, T4(2, 4, 9, 11)},
    {"add-scalar", "Add", 2, {T4(2, 4, 9, 11), T1(1)}, T4(2, 4, 9, 11)},
    {"mul", "Mul", 2, {T4(1, 8, 16, 16), T4(1, 8, 16, 16)}, T4(1, 8, 16, 16)},
    {"mul-scalar-first", "Mul", 2, {SCALAR, T4(1, 8, 16, 16)}, T4(1, 8, 16, 16)},
    {"sub", "Sub", 2, {T4(1, 3, 5, 7), T4(1, 3, 5, 7)}, T4(1, 3, 5, 7)},
    {"div", "Div", 2, {T4(1, 3, 5, 7), T4(1, 3, 5, 7)}, T4(1, 3, 5, 7), .low = {-1, 0.5f},
     .high = {1, 2}},
    {"conv-1x1", "Conv", 2, {T4(2, 8, 13, 13), T4(16, 8, 1, 1)}, T4(2, 16, 13, 13),
     .constants = 2},
    {"conv-3x3-bias-relu", "Conv", 3, {T4(1, 6, 15, 17), T4(12, 6, 3, 3), T1(12)},
     T4(1, 12, 15, 17), {.pads = {1, 1, 1, 1}, .strides = {1, 1}}, .constants = 6,
     .activation_count = 1, .activations = {{NPU_HAL_ACTIVATION_RELU}}},
    {"conv-3x3-stride2-groups", "Conv", 3, {T4(1, 8, 16, 16), T4(8, 4, 3, 3), T1(8)},
     T4(1, 8, 8, 8), {.group = 2, .pads = {1, 1, 1, 1}, .strides = {2, 2}}, .constants = 6},
    {"conv-depthwise-relu6", "Conv", 3, {T4(1, 16, 12, 12), T4(16, 1, 3, 3), T1(16)},
     T4(1, 16, 12, 12), {.group = 16, .pads = {1, 1, 1, 1}}, .constants = 6,
     .activation_count = 1, .activations = {{NPU_HAL_ACTIVATION_CLIP, 0, 6}}},
    {"conv-5x5-dilated", "Conv", 2, {T4(1, 3, 20, 20), T4(4, 3, 5, 5)}, T4(1, 4, 12, 12),
     {.dilations = {2, 2}}, .constants = 2},
    {"conv-residual-relu", "Conv", 3, {T4(1, 8, 10, 10), T4(8, 8, 3, 3), T1(8)},
     T4(1, 8, 10, 10), {.pads = {1, 1, 1, 1}}, .constants = 6, .activation_count = 2,
     .activations = {{NPU_HAL_ACTIVATION_ADD}, {NPU_HAL_ACTIVATION_RELU}}, .residual = true},
    {"conv-1x1-gemm-bias-residual-clip", "Conv", 3, {T4(2, 24, 7, 9), T4(40, 24, 1, 1), T1(40)},
     T4(2, 40, 7, 9), .constants = 6, .activation_count = 2,
     .activations = {{NPU_HAL_ACTIVATION_ADD}, {NPU_HAL_ACTIVATION_CLIP, 0, 6}},
     .residual = true},
    {"maxpool-3x3-s2", "MaxPool", 1, {T4(2, 4, 15, 15)}, T4(2, 4, 8, 8),
     {.kernel_shape = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}},
    {"maxpool-2x2-ceil", "MaxPool", 1, {T4(1, 3, 7, 7)}, T4(1, 3, 4, 4),
     {.kernel_shape = {2, 2}, .strides = {2, 2}, .ceil_mode = 1}},
    {"averagepool-3x3", "AveragePool", 1, {T4(1, 5, 9, 9)}, T4(1, 5, 9, 9),
     {.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}}},
    {"averagepool-3x3-include-pad", "AveragePool", 1, {T4(1, 5, 9, 9)}, T4(1, 5, 9, 9),
     {.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}, .count_include_pad = 1}},
    {"global-average-pool", "GlobalAveragePool", 1, {T4(2, 7, 9, 13)}, T4(2, 7, 1, 1)},
    {"global-max-pool", "GlobalMaxPool", 1, {T4(2, 7, 9, 13)}, T4(2, 7, 1, 1)},

    /* Elementwise activations on their own. */
    {"tanh", "Tanh", 1, {T4(1, 3, 7, 9)}, T4(1, 3, 7, 9), .low = {-4}, .high = {4}},
    {"hard-sigmoid", "HardSigmoid", 1, {T4(1, 3, 7, 9)}, T4(1, 3, 7, 9),
     {.alpha = 1.0f / 6, .beta = 0.5f}, .low = {-5}, .high = {5}},
    {"hard-swish", "HardSwish", 1, {T4(1, 3, 7, 9)}, T4(1, 3, 7, 9), .low = {-5}, .high = {5}},
    {"leaky-relu", "LeakyRelu", 1, {T3(3, 7, 9)}, T3(3, 7, 9), {.alpha = 0.1f}},
    {"sqrt", "Sqrt", 1, {T2(13, 7)}, T2(13, 7), .low = {0}, .high = {4}},
    {"exp", "Exp", 1, {T2(13, 7)}, T2(13, 7), .low = {-3}, .high = {3}},
    {"erf", "Erf", 1, {T2(19, 23)}, T2(19, 23), .low = {-3}, .high = {3}},
    {"log", "Log", 1, {T2(13, 7)}, T2(13, 7), .low = {0.01f}, .high = {10}},
    {"floor", "Floor", 1, {T2(13, 7)}, T2(13, 7), .low = {-5}, .high = {5}},
    {"ceil", "Ceil", 1, {T2(13, 7)}, T2(13, 7), .low = {-5}, .high = {5}},
    {"round", "Round", 1, {T2(13, 7)}, T2(13, 7), .low = {-5}, .high = {5}},
    {"sign", "Sign", 1, {T2(13, 7)}, T2(13, 7)},
    {"elu", "Elu", 1, {T3(3, 7, 9)}, T3(3, 7, 9), {.alpha = 0.7f}, .low = {-4}, .high = {4}},
    {"selu", "Selu", 1, {T3(3, 7, 9)}, T3(3, 7, 9), .low = {-4}, .high = {4}},
    {"celu", "Celu", 1, {T3(3, 7, 9)}, T3(3, 7, 9), {.alpha = 2.0f}, .low = {-4}, .high = {4}},
    {"softplus", "Softplus", 1, {T3(3, 7, 9)}, T3(3, 7, 9), .low = {-30}, .high = {30}},
    {"softsign", "Softsign", 1, {T3(3, 7, 9)}, T3(3, 7, 9), .low = {-4}, .high = {4}},
    {"thresholded-relu", "ThresholdedRelu", 1, {T3(3, 7, 9)}, T3(3, 7, 9), {.alpha = 0.3f}},
    {"mish", "Mish", 1, {T3(3, 7, 9)}, T3(3, 7, 9), .low = {-30}, .high = {30}},
    {"batch-norm", "BatchNormalization", 5, {T4(2, 6, 5, 7), T1(6), T1(6), T1(6), T1(6)},
     T4(2, 6, 5, 7), .low = {-1, 0.5f, -1, -1, 0.1f}, .high = {1, 2, 1, 1, 2}},
    /* Broadcasting binary operators. */
    {"mul-per-channel", "Mul", 2, {T4(2, 16, 9, 11), T4(1, 16, 1, 1)}, T4(2, 16, 9, 11)},
    {"add-bias-last-axis", "Add", 2, {T3(2, 7, 33), T1(33)}, T3(2, 7, 33)},
    {"sub-both-broadcast", "Sub", 2, {T4(2, 1, 5, 7), T3(3, 1, 7)}, T4(2, 3, 5, 7)},
    {"div-row-mean", "Div", 2, {T3(2, 9, 17), T3(2, 9, 1)}, T3(2, 9, 17), .low = {-1, 0.5f},
     .high = {1, 2}},
    {"div-scalar-first", "Div", 2, {SCALAR, T3(3, 4, 5)}, T3(3, 4, 5), .low = {-1, 0.5f},
     .high = {1, 2}},
    {"pow-square", "Pow", 2, {T3(2, 6, 10), SCALAR}, T3(2, 6, 10), .low = {-2, 2},
     .high = {2, 2}},
    {"pow-broadcast", "Pow", 2, {T3(2, 6, 10), T1(10)}, T3(2, 6, 10), .low = {0.1f, -2},
     .high = {2, 2}},
    {"max-broadcast", "Max", 2, {T4(1, 4, 6, 1), T2(1, 8)}, T4(1, 4, 6, 8)},
    {"min-rank-6", "Min", 2, {{NPU_DTYPE_FLOAT32, 6, {2, 1, 3, 1, 2, 5}},
                              {NPU_DTYPE_FLOAT32, 6, {1, 2, 1, 3, 1, 5}}},
     {NPU_DTYPE_FLOAT32, 6, {2, 2, 3, 3, 2, 5}}},
    /* Data movement. */
    {"reshape", "Reshape", 2, {T4(2, 3, 4, 5), I64(2)}, T2(2, 60), .constants = 2,
     .values = {NULL, shape_flat}},
    {"flatten", "Flatten", 1, {T4(2, 3, 4, 5)}, T2(2, 60)},
    {"squeeze", "Squeeze", 1, {T4(2, 1, 4, 5)}, T3(2, 4, 5)},
    {"unsqueeze", "Unsqueeze", 1, {T3(2, 4, 5)}, T4(2, 4, 1, 5)},
    {"transpose-0213", "Transpose", 1, {T4(2, 3, 5, 7)}, T4(2, 5, 3, 7),
     {.perm = {0, 2, 1, 3}, .perm_count = 4}},
    {"transpose-reverse", "Transpose", 1, {T3(3, 5, 7)}, T3(7, 5, 3)},
    {"transpose-5d", "Transpose", 1, {T5(2, 3, 4, 5, 6)}, T5(4, 2, 6, 3, 5),
     {.perm = {2, 0, 4, 1, 3}, .perm_count = 5}},
    {"slice-steps", "Slice", 5, {T4(2, 5, 6, 9), I64(2), I64(2), I64(2), I64(2)},
     T4(2, 4, 6, 4), .constants = 30,
     .values = {NULL, starts_1_0, ends_big, axes_1_3, steps_1_2}},
    {"slice-negative-step", "Slice", 5, {T3(2, 3, 7), I64(1), I64(1), I64(1), I64(1)},
     T3(2, 3, 4), .constants = 30, .values = {NULL, start_m1, end_min, axis_2, step_m2}},
    {"slice-opset-9-attributes", "Slice", 1, {T5(3, 1, 8, 12, 2)}, T5(1, 1, 8, 12, 2),
     {.starts = {2, 0}, .ends = {3, 2}, .starts_count = 2, .axes = {0, 4}, .axes_count = 2},
     .opset = 9},
    {"concat-channels", "Concat", 3, {T4(1, 3, 5, 7), T4(1, 1, 5, 7), T4(1, 4, 5, 7)},
     T4(1, 8, 5, 7), {.has_axis = true, .axis = 1}},
    {"concat-last-negative", "Concat", 2, {T3(2, 3, 5), T3(2, 3, 2)}, T3(2, 3, 7),
     {.has_axis = true, .axis = -1}},
    {"split-uneven", "Split", 2, {T4(2, 16, 3, 5), I64(3)}, T4(2, 4, 3, 5), {.has_axis = true,
     .axis = 1}, .constants = 2, .values = {NULL, split_4_8_4},
     .more_outputs = {T4(2, 8, 3, 5), T4(2, 4, 3, 5)}, .output_count = 3},
    {"resize-nearest-2x", "Resize", 3, {T4(1, 3, 5, 7), ABSENT, T1(4)}, T4(1, 3, 10, 14),
     {.mode = "nearest", .coordinate_mode = "asymmetric", .nearest_mode = "floor"},
     .constants = 4, .values = {NULL, NULL, scales_2x}},
    {"resize-nearest-half-pixel", "Resize", 3, {T4(2, 2, 6, 5), ABSENT, T1(4)},
     T4(2, 2, 9, 3), {.mode = "nearest"}, .constants = 4, .values = {NULL, NULL, scales_odd}},
    {"resize-bilinear-half-pixel", "Resize", 3, {T4(1, 3, 5, 7), ABSENT, T1(4)},
     T4(1, 3, 10, 14), {.mode = "linear"}, .constants = 4, .values = {NULL, NULL, scales_2x}},
    {"resize-bilinear-align-corners", "Resize", 3, {T4(2, 2, 6, 5), ABSENT, T1(4)},
     T4(2, 2, 9, 3), {.mode = "linear", .coordinate_mode = "align_corners"}, .constants = 4,
     .values = {NULL, NULL, scales_odd}},
    /* Reductions and Softmax. */
    {"softmax-last", "Softmax", 1, {T3(2, 5, 300)}, T3(2, 5, 300), .low = {-6}, .high = {6}},
    {"softmax-axis-1", "Softmax", 1, {T4(1, 16, 4, 33)}, T4(1, 16, 4, 33),
     {.has_axis = true, .axis = 1}, .low = {-6}, .high = {6}},
    {"softmax-opset-11", "Softmax", 1, {T3(3, 4, 5)}, T3(3, 4, 5), .opset = 11},
    {"log-softmax", "LogSoftmax", 1, {T2(7, 129)}, T2(7, 129)},
    {"layer-norm-last", "LayerNormalization", 3, {T3(2, 17, 768), T1(768), T1(768)},
     T3(2, 17, 768), .opset = 17, .low = {-3, 0.5f, -1}, .high = {5, 2, 1}},
    {"layer-norm-two-axes-no-bias", "LayerNormalization", 2, {T4(2, 5, 7, 16), T2(7, 16)},
     T4(2, 5, 7, 16), {.has_axis = true, .axis = -2}, .opset = 17},
    {"reduce-mean-last", "ReduceMean", 1, {T3(2, 25, 120)}, T3(2, 25, 1),
     {.axes = {-1}, .axes_count = 1}},
    {"reduce-sum-middle", "ReduceSum", 1, {T4(2, 6, 5, 3)}, T2(2, 3),
     {.axes = {1, 2}, .axes_count = 2}, .opset = 11},
    {"reduce-max-all", "ReduceMax", 1, {T3(3, 70, 5)}, T3(1, 1, 1)},
    {"reduce-mean-axes-apart", "ReduceMean", 1, {T3(4, 5, 6)}, T3(1, 5, 1),
     {.axes = {0, 2}, .axes_count = 2}, .opset = 11},
    {"reduce-sum-square-alternating", "ReduceSumSquare", 1, {T5(3, 4, 5, 6, 7)}, T2(4, 6),
     {.axes = {0, 2, 4}, .axes_count = 3}, .opset = 11},
    {"reduce-l1-first", "ReduceL1", 1, {T3(33, 4, 5)}, T2(4, 5), {.axes = {0}, .axes_count = 1},
     .opset = 11},
    {"reduce-l2-middle", "ReduceL2", 1, {T4(2, 40, 3, 3)}, T4(2, 1, 3, 3),
     {.axes = {1}, .axes_count = 1}, .opset = 11},
    {"reduce-log-sum", "ReduceLogSum", 1, {T3(3, 5, 8)}, T3(3, 1, 8),
     {.axes = {1}, .axes_count = 1}, .opset = 11, .low = {0.1f}, .high = {2}},
    {"reduce-log-sum-exp", "ReduceLogSumExp", 1, {T3(6, 5, 90)}, T3(6, 5, 1),
     {.axes = {-1}, .axes_count = 1}, .opset = 11, .low = {-60}, .high = {90}},
    {"reduce-prod", "ReduceProd", 1, {T3(4, 9, 3)}, T3(4, 1, 3), {.axes = {1}, .axes_count = 1},
     .opset = 11, .low = {0.5f}, .high = {1.5f}},
    /* Matrix products. */
    {"matmul-2d", "MatMul", 2, {T2(37, 45), T2(45, 19)}, T2(37, 19), .constants = 2},
    {"matmul-batched-broadcast", "MatMul", 2, {T4(2, 3, 17, 20), T2(20, 33)},
     T4(2, 3, 17, 33)},
    {"matmul-batch-both", "MatMul", 2, {T4(2, 1, 9, 16), T4(1, 3, 16, 18)}, T4(2, 3, 9, 18)},
    {"gemm-bias-transb", "Gemm", 3, {T2(5, 64), T2(10, 64), T1(10)}, T2(5, 10),
     {.trans_b = 1}, .constants = 6},
    {"conv-transpose-2x2-s2", "ConvTranspose", 3, {T4(1, 8, 5, 6), T4(8, 4, 2, 2), T1(4)},
     T4(1, 4, 10, 12), {.strides = {2, 2}}, .constants = 6},
    {"conv-transpose-3x3-pad-groups", "ConvTranspose", 2, {T4(2, 4, 5, 5), T4(4, 3, 3, 3)},
     T4(2, 6, 9, 9), {.group = 2, .strides = {2, 2}, .pads = {1, 1, 1, 1}}, .constants = 2},
    /* uneven strides, dilation, pads apart: every phase of the columns, a
     * part-filled channel block */
    {"conv-transpose-3x2-s3x2-d2", "ConvTranspose", 3, {T4(2, 5, 4, 7), T4(5, 11, 3, 2), T1(11)},
     T4(2, 11, 11, 13), {.strides = {3, 2}, .dilations = {2, 1}, .pads = {1, 0, 2, 1}},
     .constants = 6},
    {"conv-transpose-5x5-groups-3", "ConvTranspose", 2, {T4(1, 6, 9, 10), T4(6, 3, 5, 5)},
     T4(1, 9, 9, 10), {.group = 3, .pads = {2, 2, 2, 2}}, .constants = 2},
    {"gemm-transa-alpha-beta", "Gemm", 3, {T2(30, 17), T2(30, 21), T2(17, 1)}, T2(17, 21),
     {.trans_a = 1, .alpha = 0.5f, .beta = 2.0f}},
    /* Matrix products with the activations the runtime's fusion gives them:
     * a bias per column (a Linear's Add), GELU, HardSwish, a residual. */
    {"matmul-bias-gelu", "MatMul", 2, {T3(2, 21, 32), T2(32, 40)}, T3(2, 21, 40),
     .constants = 2, .activation_count = 2,
     .activations = {{NPU_HAL_ACTIVATION_ADD}, {NPU_HAL_ACTIVATION_GELU}}, .residual = true,
     .addend = T1(40), .low = {-2, -1, -1}, .high = {2, 1, 1}},
    {"matmul-bias-hardswish-linear", "MatMul", 2, {T3(1, 13, 24), T2(24, 48)}, T3(1, 13, 48),
     .constants = 2, .activation_count = 3,
     .activations = {{NPU_HAL_ACTIVATION_ADD}, {NPU_HAL_ACTIVATION_HARD_SWISH},
                     {NPU_HAL_ACTIVATION_LINEAR, 0.5f, -0.25f}},
     .residual = true, .addend = T2(1, 48), .low = {-4, -1, -1}, .high = {4, 1, 1}},
    {"matmul-batched-residual-sigmoid", "MatMul", 2, {T4(2, 3, 9, 16), T4(2, 3, 16, 11)},
     T4(2, 3, 9, 11), .activation_count = 2,
     .activations = {{NPU_HAL_ACTIVATION_ADD}, {NPU_HAL_ACTIVATION_SIGMOID}}, .residual = true},
    {"gemm-bias-relu", "Gemm", 3, {T2(7, 50), T2(30, 50), T1(30)}, T2(7, 30), {.trans_b = 1},
     .constants = 6, .activation_count = 1, .activations = {{NPU_HAL_ACTIVATION_RELU}}},
    {"gemm-swish-tanh-clip", "Gemm", 2, {T2(9, 20), T2(20, 12)}, T2(9, 12),
     .activation_count = 3,
     .activations = {{NPU_HAL_ACTIVATION_SWISH}, {NPU_HAL_ACTIVATION_TANH},
                     {NPU_HAL_ACTIVATION_CLIP, -0.5f, 0.5f}}},
    {"conv-1x1-gelu", "Conv", 2, {T4(1, 8, 6, 7), T4(12, 8, 1, 1)}, T4(1, 12, 6, 7),
     .constants = 2, .activation_count = 1, .activations = {{NPU_HAL_ACTIVATION_GELU}},
     .low = {-3, -1}, .high = {3, 1}},
    {"conv-3x3-leaky-hardsigmoid", "Conv", 2, {T4(1, 3, 9, 9), T4(4, 3, 3, 3)}, T4(1, 4, 7, 7),
     .constants = 2, .activation_count = 2,
     .activations = {{NPU_HAL_ACTIVATION_LEAKY_RELU, 0.1f}, {NPU_HAL_ACTIVATION_HARD_SIGMOID,
                                                             0.2f, 0.5f}}},
};

static size_t count_of(const npu_hal_tensor_desc *t)
{
  size_t count = 1;
  for (uint32_t d = 0; d < t->rank; d++)
    count *= (size_t)t->dims[d];
  return count;
}

typedef struct case_data {
  npu_hal_op op;
  npu_op_params params;
  test_node node;
  npu_hal_tensor_desc inputs[MAX_INPUTS], outputs[MAX_OUTPUTS], fused;
  const void *values[MAX_INPUTS];
  void *host[MAX_INPUTS + 1];  /* the op's inputs, then the residual */
  size_t bytes[MAX_INPUTS + 1];
  uint32_t host_count, output_count;
} case_data;

static void case_setup(const kernel_case *c, GRand *rand, case_data *d)
{
  memset(d, 0, sizeof *d);
  d->node = c->node;
  memcpy(d->inputs, c->inputs, sizeof d->inputs);
  d->output_count = c->output_count ? c->output_count : 1;
  d->outputs[0] = c->output;
  memcpy(d->outputs + 1, c->more_outputs, sizeof c->more_outputs);
  d->fused = c->addend.rank ? c->addend : c->output;
  d->host_count = c->input_count + (c->residual ? 1 : 0);
  for (uint32_t i = 0; i < d->host_count; i++) {
    const npu_hal_tensor_desc *t = i < c->input_count ? &c->inputs[i] : &d->fused;
    if (t->dtype == NPU_DTYPE_UNDEFINED)
      continue;
    d->bytes[i] = count_of(t) * npu_dtype_size(t->dtype);
    d->host[i] = g_malloc(d->bytes[i]);
    if (i < c->input_count && c->values[i]) {
      memcpy(d->host[i], c->values[i], d->bytes[i]);
    } else {
      float low = i < MAX_INPUTS && (c->low[i] || c->high[i]) ? c->low[i] : -1;
      float high = i < MAX_INPUTS && (c->low[i] || c->high[i]) ? c->high[i] : 1;
      float *floats = d->host[i];
      for (size_t e = 0; e < count_of(t); e++)
        floats[e] = low == high ? low : (float)g_rand_double_range(rand, low, high);
    }
    if (i < c->input_count && (c->constants & (1u << i)))
      d->values[i] = d->host[i];
  }
  d->op = (npu_hal_op){c->op_type, c->opset ? c->opset : 13,
                       {&d->node, node_int, node_float, node_ints, node_string},
                       c->input_count, d->output_count, d->inputs, d->outputs, d->values,
                       c->activations, c->activation_count,
                       c->residual ? &d->fused : NULL, c->residual ? 1 : 0};
  /* the window, axes and ranges, resolved as the runtime resolves them for
   * an op that passes validation (the refusals include some that do not:
   * a backend must decline them too) */
  const npu_op_schema *schema = npu_op_schema_find("", c->op_type);
  g_assert_nonnull(schema);
  static const char *const names[MAX_INPUTS] = {"a", "b", "c", "d", "e"};
  if (npu_op_validate(schema, &d->op, names, c->name) == NPU_OK)
    NPU_ASSERT_OK(npu_op_params_attach(schema, &d->op, &d->params, c->name));
}

static void case_clear(case_data *d)
{
  for (uint32_t i = 0; i < d->host_count; i++)
    g_free(d->host[i]);
}

/* Runs the op on the CPU backend over host memory, into out[o]; `repeats`
 * more runs are timed (ms each). */
static void run_on_cpu(npu_device *cpu, case_data *d, float **out, int repeats, double *ms)
{
  const npu_hal_graph_ops *graph = npu_cpu_backend.graph;
  npu_hal_kernel *kernel;
  NPU_ASSERT_OK(graph->kernel_create(npu_device_hal(cpu), &d->op, &kernel));
  npu_hal_mem_ref inputs[MAX_INPUTS + 1], outputs[MAX_OUTPUTS];
  for (uint32_t o = 0; o < d->output_count; o++) {
    out[o] = g_new0(float, count_of(&d->outputs[o]));
    outputs[o] = (npu_hal_mem_ref){NULL, out[o], 0};
  }
  for (uint32_t i = 0; i < d->host_count; i++)
    inputs[i] = (npu_hal_mem_ref){NULL, d->host[i], 0};
  size_t workspace = graph->kernel_workspace ? graph->kernel_workspace(kernel) : 0;
  void *scratch = workspace ? g_malloc(workspace) : NULL;
  npu_hal_launch launch = {kernel, d->host_count, d->output_count, inputs, outputs,
                           {NULL, scratch, 0}};
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(cpu, &stream));
  for (int r = 0; r <= repeats; r++) {
    gint64 start = g_get_monotonic_time();
    NPU_ASSERT_OK(graph->run(npu_device_hal(cpu), npu_stream_hal(stream), &launch, 1, NULL, NULL));
    NPU_ASSERT_OK(npu_stream_synchronize(stream));
    if (ms && r == repeats)
      *ms = (double)(g_get_monotonic_time() - start) / 1000.0;
  }
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  graph->kernel_destroy(kernel);
  g_free(scratch);
}

/* Runs the op on the Vulkan device into out[o], its tensors at odd
 * (float-aligned) offsets of their buffers; `repeats` more runs are timed
 * (ms each). */
static void run_on_vulkan(npu_device *device, case_data *d, float **out, int repeats,
                          double *ms)
{
  const npu_hal_graph_ops *graph = npu_device_backend(device)->graph;
  npu_hal_kernel *kernel;
  NPU_ASSERT_OK(graph->kernel_create(npu_device_hal(device), &d->op, &kernel));
  g_assert_true(graph->op_supported(npu_device_hal(device), &d->op));
  npu_buffer *buffers[MAX_INPUTS + 1] = {NULL}, *out_buffers[MAX_OUTPUTS];
  npu_hal_mem_ref inputs[MAX_INPUTS + 1] = {{0}}, outputs[MAX_OUTPUTS];
  for (uint32_t i = 0; i < d->host_count; i++) {
    if (!d->host[i])
      continue; /* left out */
    size_t offset = 12 * (i + 1) + 64;
    NPU_ASSERT_OK(npu_buffer_alloc(device, offset + d->bytes[i], &buffers[i]));
    NPU_ASSERT_OK(npu_memcpy_h2d(buffers[i], offset, d->host[i], d->bytes[i]));
    inputs[i] = (npu_hal_mem_ref){npu_buffer_hal(buffers[i]), NULL, offset};
  }
  size_t out_offset = 20;
  for (uint32_t o = 0; o < d->output_count; o++) {
    size_t bytes = count_of(&d->outputs[o]) * sizeof(float);
    NPU_ASSERT_OK(npu_buffer_alloc(device, out_offset + bytes + 8, &out_buffers[o]));
    NPU_ASSERT_OK(npu_memset(out_buffers[o], 0, 0xff, out_offset + bytes + 8)); /* NaNs */
    outputs[o] = (npu_hal_mem_ref){npu_buffer_hal(out_buffers[o]), NULL, out_offset};
  }
  npu_hal_launch launch = {kernel, d->host_count, d->output_count, inputs, outputs,
                           {NULL, NULL, 0}};
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  NPU_ASSERT_OK(graph->run(npu_device_hal(device), npu_stream_hal(stream), &launch, 1, NULL,
                           NULL));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  gint64 start = g_get_monotonic_time();
  for (int r = 0; r < repeats; r++)
    NPU_ASSERT_OK(graph->run(npu_device_hal(device), npu_stream_hal(stream), &launch, 1, NULL,
                             NULL));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  if (ms)
    *ms = repeats ? (double)(g_get_monotonic_time() - start) / 1000.0 / repeats : 0;
  for (uint32_t o = 0; o < d->output_count; o++) {
    size_t bytes = count_of(&d->outputs[o]) * sizeof(float);
    out[o] = g_malloc(bytes);
    NPU_ASSERT_OK(npu_memcpy_d2h(out[o], out_buffers[o], out_offset, bytes));
    guint8 after[8];
    NPU_ASSERT_OK(npu_memcpy_d2h(after, out_buffers[o], out_offset + bytes, sizeof after));
    for (size_t i = 0; i < sizeof after; i++)
      g_assert_cmpuint(after[i], ==, 0xff); /* nothing written past the output */
    NPU_ASSERT_OK(npu_buffer_release(out_buffers[o]));
  }
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  for (uint32_t i = 0; i < d->host_count; i++)
    if (buffers[i])
      NPU_ASSERT_OK(npu_buffer_release(buffers[i]));
  graph->kernel_destroy(kernel);
}

/* Runs case `c` on both backends and fails unless every output is within
 * its tolerance of the CPU's; the largest relative difference. */
static double check_case(npu_device *device, npu_device *cpu, const kernel_case *c, GRand *rand)
{
  case_data d;
  case_setup(c, rand, &d);
  float *expected[MAX_OUTPUTS], *got[MAX_OUTPUTS];
  run_on_cpu(cpu, &d, expected, 0, NULL);
  run_on_vulkan(device, &d, got, 0, NULL);
  double worst = 0, tolerance = c->tolerance ? c->tolerance : 1e-5;
  size_t out_count = 0;
  for (uint32_t o = 0; o < d.output_count; o++) {
    for (size_t i = 0; i < count_of(&d.outputs[o]); i++) {
      double error =
          fabs((double)got[o][i] - expected[o][i]) / (1.0 + fabs((double)expected[o][i]));
      if (!(error <= tolerance))
        g_error("%s: output %u element %zu is %.9g on Vulkan, %.9g on the CPU", c->name, o, i,
                got[o][i], expected[o][i]);
      worst = error > worst ? error : worst;
    }
    out_count += count_of(&d.outputs[o]);
    g_free(got[o]);
    g_free(expected[o]);
  }
  g_test_message("%-30s %6zu outputs, largest relative difference %.2e (tolerance %.0e)", c->name,
                 out_count, worst, tolerance);
  case_clear(&d);
  return worst;
}

static void test_kernels_match_cpu(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_device *cpu;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &cpu));
  GRand *rand = g_rand_new_with_seed(16);
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++)
    check_case(device, cpu, &cases[c], rand);
  g_rand_free(rand);
  NPU_ASSERT_OK(npu_device_release(cpu));
  NPU_ASSERT_OK(npu_device_release(device));
}

/* A random fused epilogue for a convolution or product case: none, Relu,
 * Clip to [0, 6], or a residual Add then Relu. */
static void random_activations(GRand *rand, kernel_case *c)
{
  switch (g_rand_int_range(rand, 0, 4)) {
  case 1:
    c->activation_count = 1;
    c->activations[0] = (npu_hal_activation){NPU_HAL_ACTIVATION_RELU};
    break;
  case 2:
    c->activation_count = 1;
    c->activations[0] = (npu_hal_activation){NPU_HAL_ACTIVATION_CLIP, 0, 6};
    break;
  case 3:
    c->activation_count = 2;
    c->activations[0] = (npu_hal_activation){NPU_HAL_ACTIVATION_ADD};
    c->activations[1] = (npu_hal_activation){NPU_HAL_ACTIVATION_RELU};
    c->residual = true;
    break;
  default:
    break;
  }
}

/* A random 2-D convolution: batch 1-3, odd sizes, kernels 1-5 (not square),
 * strides and dilations 1-3, pads 0-2 on each side apart, 1-4 groups of
 * 1-9 input and 1-13 output channels (so channel blocks end part-filled)
 * or, half the time, 14-79 (past conv2d_tiled.comp's 64-channel tiles);
 * `depthwise`: a channel a group, square 3x3, 5x5 or 7x7 windows at stride
 * 1 or 2 (the shapes depthwise.comp unrolls) and now and then dilated (then
 * conv2d.comp runs them). */
static void random_convolution(GRand *rand, bool depthwise, kernel_case *c, char *name,
                               size_t name_size)
{
  memset(c, 0, sizeof *c);
  int64_t batch = g_rand_int_range(rand, 1, 4), height, width, out_h, out_w;
  int64_t groups, group_in, group_out, kh, kw, stride[2], dilation[2], pads[4];
  do {
    height = g_rand_int_range(rand, 1, 24);
    width = g_rand_int_range(rand, 1, 24);
    if (depthwise) {
      groups = g_rand_int_range(rand, 1, 20);
      group_in = group_out = 1;
      kh = kw = 3 + 2 * g_rand_int_range(rand, 0, 3);
      stride[0] = stride[1] = g_rand_int_range(rand, 1, 3);
      dilation[0] = dilation[1] = g_rand_int_range(rand, 0, 5) == 0 ? 2 : 1;
      for (int i = 0; i < 4; i++)
        pads[i] = g_rand_int_range(rand, 0, kh / 2 + 1);
    } else {
      groups = g_rand_int_range(rand, 1, 5);
      group_in = g_rand_int_range(rand, 1, 10);
      group_out = g_rand_boolean(rand) ? g_rand_int_range(rand, 1, 14)
                                       : g_rand_int_range(rand, 14, 80);
      kh = g_rand_int_range(rand, 1, 6);
      kw = g_rand_int_range(rand, 1, 6);
      for (int i = 0; i < 2; i++) {
        stride[i] = g_rand_int_range(rand, 1, 4);
        dilation[i] = g_rand_int_range(rand, 1, 4);
      }
      for (int i = 0; i < 4; i++)
        pads[i] = g_rand_int_range(rand, 0, 3);
    }
    out_h = (height + pads[0] + pads[2] - dilation[0] * (kh - 1) - 1) / stride[0] + 1;
    out_w = (width + pads[1] + pads[3] - dilation[1] * (kw - 1) - 1) / stride[1] + 1;
  } while (height + pads[0] + pads[2] < dilation[0] * (kh - 1) + 1 ||
           width + pads[1] + pads[3] < dilation[1] * (kw - 1) + 1);
  bool bias = g_rand_boolean(rand);
  int64_t channels = groups * group_in, out_channels = groups * group_out;
  c->op_type = "Conv";
  c->input_count = bias ? 3 : 2;
  c->inputs[0] = (npu_hal_tensor_desc)T4(batch, channels, height, width);
  c->inputs[1] = (npu_hal_tensor_desc)T4(out_channels, group_in, kh, kw);
  c->inputs[2] = (npu_hal_tensor_desc)T1(out_channels);
  c->output = (npu_hal_tensor_desc)T4(batch, out_channels, out_h, out_w);
  c->node = (test_node){.group = groups, .strides = {stride[0], stride[1]},
                        .dilations = {dilation[0], dilation[1]}, .kernel_shape = {kh, kw},
                        .pads = {pads[0], pads[1], pads[2], pads[3]}};
  c->constants = bias ? 6 : 2;
  random_activations(rand, c);
  snprintf(name, name_size,
           "conv %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
           " w %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
           " g%" G_GINT64_FORMAT " s%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT " d%" G_GINT64_FORMAT
           ",%" G_GINT64_FORMAT " p%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
           ",%" G_GINT64_FORMAT "%s, %u activations",
           batch, channels, height, width, out_channels, group_in, kh, kw, groups, stride[0],
           stride[1], dilation[0], dilation[1], pads[0], pads[1], pads[2], pads[3],
           bias ? " bias" : "", c->activation_count);
  c->name = name;
}

/* A random matrix product: MatMul with 0-2 batch axes (one side broadcast
 * now and then) or Gemm with transposes, alpha, beta and a C of any
 * broadcast shape; M 1-70, N 1-150, K 1-90 (past matmul.comp's blocks of 8
 * rows and 4 columns, 64 of them a workgroup, and matmul_tiled.comp's
 * 64 x 64 tiles and 16-deep slices). */
static void random_product(GRand *rand, kernel_case *c, char *name, size_t name_size)
{
  memset(c, 0, sizeof *c);
  int64_t m = g_rand_int_range(rand, 1, 71), n = g_rand_int_range(rand, 1, 151),
          k = g_rand_int_range(rand, 1, 91);
  if (g_rand_boolean(rand)) {
    int64_t b0 = g_rand_int_range(rand, 1, 4), b1 = g_rand_int_range(rand, 1, 3);
    bool broadcast_b = g_rand_boolean(rand);
    c->op_type = "MatMul";
    c->input_count = 2;
    c->inputs[0] = (npu_hal_tensor_desc)T4(b0, b1, m, k);
    c->inputs[1] = broadcast_b ? (npu_hal_tensor_desc)T2(k, n)
                               : (npu_hal_tensor_desc)T4(b0, b1, k, n);
    c->output = (npu_hal_tensor_desc)T4(b0, b1, m, n);
    c->constants = broadcast_b ? 2 : 0;
    random_activations(rand, c);
    snprintf(name, name_size,
             "matmul %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT "x%"
             G_GINT64_FORMAT " by %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "%s, %u activations",
             b0, b1, m, k, k, n, broadcast_b ? " (B broadcast)" : "", c->activation_count);
  } else {
    bool trans_a = g_rand_boolean(rand), trans_b = g_rand_boolean(rand);
    int c_shape = g_rand_int_range(rand, 0, 4); /* none, [N], [M, 1], [M, N] */
    c->op_type = "Gemm";
    c->input_count = c_shape ? 3 : 2;
    c->inputs[0] = trans_a ? (npu_hal_tensor_desc)T2(k, m) : (npu_hal_tensor_desc)T2(m, k);
    c->inputs[1] = trans_b ? (npu_hal_tensor_desc)T2(n, k) : (npu_hal_tensor_desc)T2(k, n);
    c->inputs[2] = c_shape == 1   ? (npu_hal_tensor_desc)T1(n)
                   : c_shape == 2 ? (npu_hal_tensor_desc)T2(m, 1)
                                  : (npu_hal_tensor_desc)T2(m, n);
    c->output = (npu_hal_tensor_desc)T2(m, n);
    random_activations(rand, c);
    /* (the CPU backend scales by alpha and beta without fused activations only) */
    bool scaled = !c->activation_count;
    c->node = (test_node){.trans_a = trans_a, .trans_b = trans_b, .alpha = scaled ? 0.75f : 0,
                          .beta = scaled ? 1.5f : 0};
    c->constants = 2;
    snprintf(name, name_size,
             "gemm %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
             " transA %d transB %d, C shape %d, %u activations",
             m, n, k, trans_a, trans_b, c_shape, c->activation_count);
  }
  c->name = name;
}

/* Whether the CPU backend runs case `c` (the reference). */
static bool cpu_takes(npu_device *cpu, const kernel_case *c, GRand *rand)
{
  case_data d;
  case_setup(c, rand, &d);
  npu_hal_kernel *kernel;
  bool takes = npu_cpu_backend.graph->kernel_create(npu_device_hal(cpu), &d.op, &kernel) == NPU_OK;
  if (takes)
    npu_cpu_backend.graph->kernel_destroy(kernel);
  case_clear(&d);
  return takes;
}

/* Convolutions and matrix products of random shapes and attributes (the
 * shaders' edge blocks, groups, pads, strides, dilations, batches) against
 * the CPU backend: within 1e-5 relative to 1 + |expected| (sums of up to
 * 9 x 25 or 90 products in another order). */
static void test_random_shapes(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_device *cpu;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &cpu));
  GRand *rand = g_rand_new_with_seed(28);
  double worst = 0;
  char name[256];
  kernel_case c;
  for (int i = 0; i < 120; i++) {
    if (i % 3 == 2)
      random_product(rand, &c, name, sizeof name);
    else
      random_convolution(rand, i % 3 == 1, &c, name, sizeof name);
    if (!cpu_takes(cpu, &c, rand)) { /* oneDNN fuses activations into some shapes only */
      c.activation_count = 0;
      c.residual = false;
    }
    double error = check_case(device, cpu, &c, rand);
    worst = error > worst ? error : worst;
  }
  g_test_message("120 random convolutions and products: largest relative difference %.2e",
                 worst);
  g_rand_free(rand);
  NPU_ASSERT_OK(npu_device_release(cpu));
  NPU_ASSERT_OK(npu_device_release(device));
}

/* op_supported says no, and kernel_create says why, to what the backend
 * does not run: those go to the CPU through the partitioning. */
static void test_refusals(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  const npu_hal_graph_ops *graph = npu_device_backend(device)->graph;
  npu_hal_device *hal = npu_device_hal(device);
  GRand *rand = g_rand_new_with_seed(1);
  case_data d;
  case_setup(&cases[0], rand, &d);
  g_assert_true(graph->op_supported(hal, &d.op));

  npu_hal_tensor_desc channels_last = T4(2, 3, 17, 19);
  channels_last.layout = NPU_HAL_LAYOUT_CHANNELS_LAST;
  d.op.inputs = &channels_last;
  g_assert_false(graph->op_supported(hal, &d.op));
  npu_hal_tensor_desc integers = T4(2, 3, 17, 19);
  integers.dtype = NPU_DTYPE_INT32;
  d.op.inputs = &integers;
  g_assert_false(graph->op_supported(hal, &d.op));
  d.op.inputs = d.inputs;
  d.op.op_type = "NonMaxSuppression";
  g_assert_false(graph->op_supported(hal, &d.op));
  npu_hal_kernel *kernel = NULL;
  NPU_ASSERT_STATUS(graph->kernel_create(hal, &d.op, &kernel), NPU_ERROR_NOT_SUPPORTED);
  g_assert_nonnull(strstr(npu_last_error_message(), "NonMaxSuppression"));
  /* Activations fuse into convolutions and matrix products only. */
  d.op.op_type = "Relu";
  npu_hal_activation relu = {NPU_HAL_ACTIVATION_RELU};
  d.op.activations = &relu;
  d.op.activation_count = 1;
  NPU_ASSERT_STATUS(graph->kernel_create(hal, &d.op, &kernel), NPU_ERROR_NOT_SUPPORTED);
  case_clear(&d);

  /* What the new kernels decline: shapes that do not broadcast, a 1-D
   * convolution, cubic resizing, a fused Add per row of a product or per
   * column of a convolution, four fused activations, starts not known when
   * planning, batch axes that do not broadcast, an int64 tensor the kernel
   * would read. */
  static const int64_t starts[] = {0}, ends[] = {2};
  const kernel_case refused[] = {
      {"add-mismatch", "Add", 2, {T4(1, 4, 3, 3), T4(1, 3, 1, 1)}, T4(1, 4, 3, 3)},
      {"conv1d", "Conv", 2, {T3(1, 4, 9), T3(4, 4, 3)}, T3(1, 4, 7)},
      {"resize-cubic", "Resize", 3, {T4(1, 3, 5, 7), ABSENT, T1(4)}, T4(1, 3, 10, 14),
       {.mode = "cubic"}, .constants = 4, .values = {NULL, NULL, scales_2x}},
      {"matmul-add-per-row", "MatMul", 2, {T2(6, 8), T2(8, 5)}, T2(6, 5), .activation_count = 1,
       .activations = {{NPU_HAL_ACTIVATION_ADD}}, .residual = true, .addend = T2(6, 1)},
      {"conv-add-bias", "Conv", 2, {T4(1, 4, 5, 5), T4(4, 4, 1, 1)}, T4(1, 4, 5, 5),
       .constants = 2, .activation_count = 1, .activations = {{NPU_HAL_ACTIVATION_ADD}},
       .residual = true, .addend = T1(5)},
      {"gemm-four-activations", "Gemm", 2, {T2(3, 4), T2(4, 5)}, T2(3, 5), .activation_count = 4,
       .activations = {{NPU_HAL_ACTIVATION_RELU}, {NPU_HAL_ACTIVATION_TANH},
                       {NPU_HAL_ACTIVATION_RELU}, {NPU_HAL_ACTIVATION_TANH}}},
      {"slice-runtime-starts", "Slice", 3, {T2(4, 5), I64(1), I64(1)}, T2(2, 5),
       .values = {NULL, starts, ends}},
      {"matmul-batch-mismatch", "MatMul", 2, {T3(2, 3, 4), T3(3, 4, 5)}, T3(3, 3, 5)},
      {"matmul-vector", "MatMul", 2, {T1(20), T3(2, 20, 7)}, T2(2, 7)},
      {"reshape-int64", "Reshape", 2, {I64(6), I64(2)}, {NPU_DTYPE_INT64, 2, {2, 3}},
       .constants = 2, .values = {NULL, shape_flat}},
  };
  for (size_t r = 0; r < G_N_ELEMENTS(refused); r++) {
    case_setup(&refused[r], rand, &d);
    if (graph->op_supported(hal, &d.op))
      g_error("%s: the Vulkan backend takes it", refused[r].name);
    NPU_ASSERT_STATUS(graph->kernel_create(hal, &d.op, &kernel), NPU_ERROR_NOT_SUPPORTED);
    g_test_message("%-24s refused: %s", refused[r].name, npu_last_error_message());
    case_clear(&d);
  }
  g_rand_free(rand);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* Opens the Vulkan device with NPU_VULKAN_SHADERS set to `variant` (NULL:
 * unset), the variable restored after; NULL after g_test_skip() where
 * there is no device. The device must not be open already (the variable is
 * read when it opens). */
static npu_device *open_with_shaders(const char *variant)
{
  gchar *saved = g_strdup(g_getenv("NPU_VULKAN_SHADERS"));
  if (variant)
    g_setenv("NPU_VULKAN_SHADERS", variant, TRUE);
  else
    g_unsetenv("NPU_VULKAN_SHADERS");
  npu_device *device = vk_test_open_device();
  if (saved)
    g_setenv("NPU_VULKAN_SHADERS", saved, TRUE);
  else
    g_unsetenv("NPU_VULKAN_SHADERS");
  g_free(saved);
  return device;
}

/* The shader a one-dispatch case plans on `device`. */
static vk_shader planned_shader(npu_device *device, const kernel_case *c, GRand *rand)
{
  case_data d;
  case_setup(c, rand, &d);
  npu_hal_kernel *kernel;
  NPU_ASSERT_OK(npu_device_backend(device)->graph->kernel_create(npu_device_hal(device), &d.op,
                                                                  &kernel));
  g_assert_cmpuint(kernel->dispatch_count, ==, 1);
  vk_shader shader = kernel->dispatches[0].shader;
  npu_device_backend(device)->graph->kernel_destroy(kernel);
  case_clear(&d);
  return shader;
}

/* NPU_VULKAN_SHADERS picks the products' and convolutions' shaders: tiled
 * in shared memory or blocked in registers (a device's type picks when it
 * is unset: lavapipe, a CPU, gets the blocked ones); the depthwise windows
 * and narrow groups stay in their own shaders either way; another value
 * fails the device's opening with a message. */
static void test_shader_choice(void)
{
  const kernel_case shapes[] = {
      {"3x3 32->32", "Conv", 2, {T4(1, 32, 9, 9), T4(32, 32, 3, 3)}, T4(1, 32, 9, 9),
       {.pads = {1, 1, 1, 1}}, .constants = 2},
      {"1x1 32->32", "Conv", 2, {T4(1, 32, 9, 9), T4(32, 32, 1, 1)}, T4(1, 32, 9, 9),
       .constants = 2},
      {"3x3 4 groups of 8", "Conv", 2, {T4(1, 32, 9, 9), T4(32, 8, 3, 3)}, T4(1, 32, 9, 9),
       {.group = 4, .pads = {1, 1, 1, 1}}, .constants = 2},
      {"7x7 depthwise", "Conv", 2, {T4(1, 8, 9, 9), T4(8, 1, 7, 7)}, T4(1, 8, 9, 9),
       {.group = 8, .pads = {3, 3, 3, 3}}, .constants = 2},
      {"matmul", "MatMul", 2, {T2(5, 7), T2(7, 3)}, T2(5, 3)},
  };
  const vk_shader blocked[] = {VK_SHADER_CONV2D, VK_SHADER_MATMUL, VK_SHADER_CONV2D,
                               VK_SHADER_DEPTHWISE_K7_S1, VK_SHADER_MATMUL};
  const vk_shader tiled[] = {VK_SHADER_CONV2D_TILED, VK_SHADER_MATMUL_TILED, VK_SHADER_CONV2D,
                             VK_SHADER_DEPTHWISE_K7_S1, VK_SHADER_MATMUL_TILED};
  GRand *rand = g_rand_new_with_seed(5);
  for (int variant = 0; variant < 2; variant++) {
    npu_device *device = open_with_shaders(variant ? "tiled" : "blocked");
    if (!device)
      break;
    for (size_t c = 0; c < G_N_ELEMENTS(shapes); c++)
      g_assert_cmpint(planned_shader(device, &shapes[c], rand), ==,
                      variant ? tiled[c] : blocked[c]);
    NPU_ASSERT_OK(npu_device_release(device));
  }
  npu_device *device = open_with_shaders(NULL);
  if (device) {
    bool cpu_driver = npu_device_hal(device)->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    g_assert_cmpint(planned_shader(device, &shapes[0], rand), ==,
                    cpu_driver ? VK_SHADER_CONV2D : VK_SHADER_CONV2D_TILED);
    g_test_message("unset, '%s' gets the %s shaders", npu_device_hal(device)->properties.deviceName,
                   cpu_driver ? "blocked" : "tiled");
    NPU_ASSERT_OK(npu_device_release(device));
    g_setenv("NPU_VULKAN_SHADERS", "shared", TRUE);
    NPU_ASSERT_STATUS(npu_device_open_by_backend("vulkan", 0, &device), NPU_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(npu_last_error_message(), "NPU_VULKAN_SHADERS"));
    g_unsetenv("NPU_VULKAN_SHADERS");
  }
  g_rand_free(rand);
}

/* GPU-sized convolutions and products (ResNet's 3x3 and 1x1, MobileNet's
 * depthwise, a 1024 x 1024 x 1024 product and a ViT-Base layer's 197 x 768
 * by 768 x 768 at batch 8) on the CPU backend and on the Vulkan device with
 * each shader variant, 2 rounds of both in turn: GFLOP/s printed, the
 * results checked (relative L2 within 1e-5), no speed asserted. Each
 * figure is the mean of as many runs, queued back to back, as fill about
 * half a second (from a first run's time; at least 1). */
static void test_kernel_time(void)
{
  const kernel_case shapes[] = {
      {"conv 3x3 64->64 at 56x56", "Conv", 3, {T4(1, 64, 56, 56), T4(64, 64, 3, 3), T1(64)},
       T4(1, 64, 56, 56), {.pads = {1, 1, 1, 1}}, .constants = 6},
      {"conv 1x1 256->64 at 56x56", "Conv", 3, {T4(1, 256, 56, 56), T4(64, 256, 1, 1), T1(64)},
       T4(1, 64, 56, 56), .constants = 6},
      {"depthwise 3x3 144 at 56x56", "Conv", 3, {T4(1, 144, 56, 56), T4(144, 1, 3, 3), T1(144)},
       T4(1, 144, 56, 56), {.group = 144, .pads = {1, 1, 1, 1}}, .constants = 6},
      {"matmul 1024x1024x1024", "MatMul", 2, {T2(1024, 1024), T2(1024, 1024)}, T2(1024, 1024)},
      {"matmul 8x197x768 by 768x768", "MatMul", 2, {T3(8, 197, 768), T2(768, 768)},
       T3(8, 197, 768), .constants = 2},
  };
  enum { SHAPES = G_N_ELEMENTS(shapes) };
  npu_device *cpu;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &cpu));
  GRand *rand = g_rand_new_with_seed(3);
  case_data data[SHAPES];
  float *expected[SHAPES];
  double gflop[SHAPES];
  for (size_t c = 0; c < SHAPES; c++) {
    case_setup(&shapes[c], rand, &data[c]);
    const npu_hal_tensor_desc *weights = &shapes[c].inputs[1];
    /* products per output: a convolution's weights per output channel, a product's K */
    double depth = strcmp(shapes[c].op_type, "Conv") == 0
                       ? (double)(weights->dims[1] * weights->dims[2] * weights->dims[3])
                       : (double)weights->dims[0];
    gflop[c] = 2.0 * depth * (double)count_of(&shapes[c].output) / 1e9;
    double cpu_ms;
    run_on_cpu(cpu, &data[c], &expected[c], 3, &cpu_ms);
    g_test_message("%-30s %.2f GFLOP: CPU backend %8.2f ms (%7.1f GFLOP/s, plain NCHW)",
                   shapes[c].name, gflop[c], cpu_ms, gflop[c] / cpu_ms * 1e3);
  }
  for (int round = 0; round < 2; round++)
    for (int variant = 0; variant < 2; variant++) {
      const char *name = variant ? "tiled" : "blocked";
      npu_device *device = open_with_shaders(name);
      if (!device)
        goto done;
      for (size_t c = 0; c < SHAPES; c++) {
        float *got;
        double ms;
        run_on_vulkan(device, &data[c], &got, 1, &ms);
        g_free(got);
        int repeats = (int)CLAMP(500.0 / (ms > 0.01 ? ms : 0.01), 1, 200);
        run_on_vulkan(device, &data[c], &got, repeats, &ms);
        double diff = 0, norm = 0;
        for (size_t i = 0; i < count_of(&shapes[c].output); i++) {
          double e = expected[c][i];
          diff += ((double)got[i] - e) * ((double)got[i] - e);
          norm += e * e;
        }
        g_assert_cmpfloat(sqrt(diff / norm), <=, 1e-5);
        g_free(got);
        g_test_message("round %d %-7s %-30s Vulkan %8.3f ms a run (%7.1f GFLOP/s, %d runs)",
                       round + 1, name, shapes[c].name, ms, gflop[c] / ms * 1e3, repeats);
      }
      NPU_ASSERT_OK(npu_device_release(device));
    }
done:
  for (size_t c = 0; c < SHAPES; c++) {
    g_free(expected[c]);
    case_clear(&data[c]);
  }
  g_rand_free(rand);
  NPU_ASSERT_OK(npu_device_release(cpu));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vulkan/kernels-match-cpu", test_kernels_match_cpu);
  g_test_add_func("/vulkan/random-shapes", test_random_shapes);
  g_test_add_func("/vulkan/refusals", test_refusals);
  g_test_add_func("/vulkan/shader-choice", test_shader_choice);
  g_test_add_func("/vulkan/kernel-time", test_kernel_time);
  return g_test_run();
}
