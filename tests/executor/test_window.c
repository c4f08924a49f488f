/* npu_window_resolve: the one reader of a window's attributes. Kernel,
 * strides, dilations and pads after auto_pad, and the output size, against
 * values worked out by hand from the ONNX operator definitions. */
#include <glib.h>
#include <string.h>

#include "../runtime/npu_test.h"
#include "window.h"

typedef struct window_attributes {
  const char *auto_pad;
  int64_t kernel_shape[2], strides[2], dilations[2], pads[4], output_padding[2];
  int64_t group, ceil_mode;
} window_attributes;

static int64_t get_int(const void *node, const char *name, int64_t fallback)
{
  const window_attributes *a = node;
  int64_t value = strcmp(name, "group") == 0 ? a->group
                  : strcmp(name, "ceil_mode") == 0 ? a->ceil_mode : 0;
  return value ? value : fallback;
}

static float get_float(const void *node, const char *name, float fallback)
{
  (void)node, (void)name;
  return fallback;
}

/* An attribute whose first value is 0 is absent (2-D windows only). */
static size_t get_ints(const void *node, const char *name, const int64_t **values)
{
  const window_attributes *a = node;
  *values = strcmp(name, "kernel_shape") == 0     ? a->kernel_shape
            : strcmp(name, "strides") == 0        ? a->strides
            : strcmp(name, "dilations") == 0      ? a->dilations
            : strcmp(name, "pads") == 0           ? a->pads
            : strcmp(name, "output_padding") == 0 ? a->output_padding
                                                  : NULL;
  if (!*values || (*values)[0] == 0)
    return 0;
  return *values == a->pads ? 4 : 2;
}

static const char *get_string(const void *node, const char *name, const char *fallback)
{
  const window_attributes *a = node;
  return strcmp(name, "auto_pad") == 0 && a->auto_pad ? a->auto_pad : fallback;
}

/* Resolves op_type over an (1, 4, h, w) input and 3x3 weights (8 outputs,
 * or 4 -> 8 transposed); weights sit at input 3 for QLinearConv. */
static npu_status resolve(const char *op_type, const window_attributes *a, int64_t h, int64_t w,
                          npu_hal_window *window)
{
  npu_hal_tensor_desc inputs[4] = {{NPU_DTYPE_FLOAT32, 4, {1, 4, h, w}}};
  npu_hal_tensor_desc weights = {NPU_DTYPE_FLOAT32, 4, {8, 4, 3, 3}};
  if (strcmp(op_type, "ConvTranspose") == 0)
    weights = (npu_hal_tensor_desc){NPU_DTYPE_FLOAT32, 4, {4, 8, 3, 3}};
  inputs[strcmp(op_type, "QLinearConv") == 0 ? 3 : 1] = weights;
  const void *values[4] = {NULL};
  npu_hal_op op = {op_type, 13, {a, get_int, get_float, get_ints, get_string}, 4, 1, inputs,
                   NULL, values};
  return npu_window_resolve(&op, window, op_type);
}

static void assert_axis(const npu_hal_window *w, uint32_t s, int64_t kernel, int64_t stride,
                        int64_t begin, int64_t end, int64_t output)
{
  g_assert_cmpint(w->kernel[s], ==, kernel);
  g_assert_cmpint(w->strides[s], ==, stride);
  g_assert_cmpint(w->pad_begin[s], ==, begin);
  g_assert_cmpint(w->pad_end[s], ==, end);
  g_assert_cmpint(w->output[s], ==, output);
}

/* SAME: out = ceil(in / stride); the padding that needs, split with the odd
 * one at the end (UPPER) or the beginning (LOWER). */
static void test_same(void)
{
  npu_hal_window w;
  window_attributes a = {.auto_pad = "SAME_UPPER", .strides = {2, 1}};
  NPU_ASSERT_OK(resolve("Conv", &a, 6, 5, &w));
  g_assert_cmpuint(w.spatial, ==, 2);
  assert_axis(&w, 0, 3, 2, 0, 1, 3); /* total (3-1)*2 + 3 - 6 = 1 */
  assert_axis(&w, 1, 3, 1, 1, 1, 5); /* total 2 */
  a.auto_pad = "SAME_LOWER";
  NPU_ASSERT_OK(resolve("Conv", &a, 6, 5, &w));
  assert_axis(&w, 0, 3, 2, 1, 0, 3);
  assert_axis(&w, 1, 3, 1, 1, 1, 5);
  /* pads given alongside are ignored */
  a = (window_attributes){.auto_pad = "SAME_UPPER", .pads = {5, 5, 5, 5}, .dilations = {2, 2}};
  NPU_ASSERT_OK(resolve("Conv", &a, 7, 7, &w));
  assert_axis(&w, 0, 3, 1, 2, 2, 7); /* span 5: total 4 */
  g_assert_cmpint(w.dilations[0], ==, 2);
}

static void test_valid_and_explicit(void)
{
  npu_hal_window w;
  window_attributes a = {.auto_pad = "VALID", .strides = {2, 2}, .group = 2};
  NPU_ASSERT_OK(resolve("Conv", &a, 7, 8, &w));
  assert_axis(&w, 0, 3, 2, 0, 0, 3);
  assert_axis(&w, 1, 3, 2, 0, 0, 3);
  g_assert_cmpint(w.group, ==, 2);
  a = (window_attributes){.pads = {1, 0, 2, 1}};
  NPU_ASSERT_OK(resolve("Conv", &a, 5, 5, &w));
  assert_axis(&w, 0, 3, 1, 1, 2, 6);
  assert_axis(&w, 1, 3, 1, 0, 1, 4);
  g_assert_cmpint(w.group, ==, 1);
}

/* Pooling: the kernel from kernel_shape; ceil_mode counts a last partial
 * window unless it would start in the end padding. */
static void test_pooling(void)
{
  npu_hal_window w;
  window_attributes a = {.kernel_shape = {2, 3}, .strides = {2, 2}, .ceil_mode = 1};
  NPU_ASSERT_OK(resolve("MaxPool", &a, 7, 8, &w));
  g_assert_true(w.ceil_mode);
  assert_axis(&w, 0, 2, 2, 0, 0, 4); /* ceil(5 / 2) + 1 */
  assert_axis(&w, 1, 3, 2, 0, 0, 4); /* ceil(5 / 2) + 1 */
  a.ceil_mode = 0;
  NPU_ASSERT_OK(resolve("AveragePool", &a, 7, 8, &w));
  assert_axis(&w, 0, 2, 2, 0, 0, 3);
  assert_axis(&w, 1, 3, 2, 0, 0, 3);
  a = (window_attributes){.kernel_shape = {2, 2}, .strides = {2, 2}, .pads = {1, 1, 1, 1},
                          .ceil_mode = 1};
  NPU_ASSERT_OK(resolve("MaxPool", &a, 5, 5, &w));
  /* ceil(5 / 2) + 1 = 4 windows, but the 4th would start at 6: in the end padding */
  assert_axis(&w, 0, 2, 2, 1, 1, 3);
}

/* ConvTranspose: stride * (in - 1) + output_padding + span - pads, or
 * in * stride for SAME, the padding then what makes it so. */
static void test_transposed(void)
{
  npu_hal_window w;
  window_attributes a = {.strides = {2, 2}, .pads = {1, 0, 1, 0}, .output_padding = {1, 1}};
  NPU_ASSERT_OK(resolve("ConvTranspose", &a, 3, 3, &w));
  assert_axis(&w, 0, 3, 2, 1, 1, 6);
  assert_axis(&w, 1, 3, 2, 0, 0, 8);
  g_assert_cmpint(w.output_padding[0], ==, 1);
  a = (window_attributes){.auto_pad = "SAME_UPPER", .strides = {2, 2}};
  NPU_ASSERT_OK(resolve("ConvTranspose", &a, 3, 4, &w));
  assert_axis(&w, 0, 3, 2, 0, 1, 6); /* total 2*2 + 3 - 6 = 1 */
  assert_axis(&w, 1, 3, 2, 0, 1, 8);
  g_assert_cmpint(w.output_padding[0], ==, 0);
}

static void test_integer_forms(void)
{
  npu_hal_window w;
  window_attributes a = {.strides = {2, 2}, .pads = {1, 1, 1, 1}};
  NPU_ASSERT_OK(resolve("QLinearConv", &a, 8, 8, &w));
  assert_axis(&w, 0, 3, 2, 1, 1, 4);
  NPU_ASSERT_OK(resolve("ConvInteger", &a, 8, 8, &w));
  assert_axis(&w, 1, 3, 2, 1, 1, 4);
  g_assert_true(npu_window_op("QLinearConv") && npu_window_op("MaxPool"));
  g_assert_false(npu_window_op("GlobalAveragePool") || npu_window_op("MatMul"));
}

static void test_bad_windows(void)
{
  npu_hal_window w;
  window_attributes a = {.auto_pad = "SAME"};
  NPU_ASSERT_STATUS(resolve("Conv", &a, 5, 5, &w), NPU_ERROR_INVALID_MODEL);
  g_assert_nonnull(strstr(npu_last_error_message(), "auto_pad 'SAME'"));
  a = (window_attributes){0}; /* pooling without kernel_shape */
  NPU_ASSERT_STATUS(resolve("MaxPool", &a, 5, 5, &w), NPU_ERROR_INVALID_MODEL);
  a = (window_attributes){.kernel_shape = {7, 7}};
  NPU_ASSERT_STATUS(resolve("MaxPool", &a, 5, 5, &w), NPU_ERROR_INVALID_MODEL);
  g_assert_nonnull(strstr(npu_last_error_message(), "larger than its padded input"));
  a = (window_attributes){.strides = {-1, 1}};
  NPU_ASSERT_STATUS(resolve("Conv", &a, 5, 5, &w), NPU_ERROR_INVALID_MODEL);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/window/same", test_same);
  g_test_add_func("/window/valid-and-explicit", test_valid_and_explicit);
  g_test_add_func("/window/pooling", test_pooling);
  g_test_add_func("/window/transposed", test_transposed);
  g_test_add_func("/window/integer-forms", test_integer_forms);
  g_test_add_func("/window/bad", test_bad_windows);
  return g_test_run();
}
