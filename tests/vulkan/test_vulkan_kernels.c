/* Every Vulkan kernel against the CPU backend's on random inputs: the same
 * operator (attributes, fused activations) created on both backends through
 * the HAL, run once each; outputs within 1e-5 relative of the CPU's (summation
 * order and exp/tanh differ; elementwise results are bit-exact or close).
 * Vulkan inputs and outputs sit at unaligned offsets of their buffers, and
 * the output starts as NaNs, so that every element must be written. Also:
 * what op_supported refuses, and a convolution's time on both (printed). */
#include <math.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "npu_hal_graph.h"
#include "npu_internal.h"
#include "vk_test.h"
#include "window.h"

/* The attributes a case sets; everything else answers the fallback. */
typedef struct test_node {
  int64_t group, count_include_pad, ceil_mode;
  int64_t strides[2], pads[4], dilations[2], kernel_shape[2];
  const char *auto_pad;
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
  return fallback;
}

static float node_float(const void *node, const char *name, float fallback)
{
  (void)node;
  (void)name;
  return fallback;
}

static size_t node_ints(const void *node, const char *name, const int64_t **values)
{
  const test_node *n = node;
  struct { const char *name; const int64_t *values; size_t count; } table[] = {
      {"strides", n->strides, 2}, {"pads", n->pads, 4}, {"dilations", n->dilations, 2},
      {"kernel_shape", n->kernel_shape, 2}};
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++)
    if (strcmp(name, table[i].name) == 0 && table[i].values[0]) {
      *values = table[i].values;
      return table[i].count;
    }
  return 0;
}

static const char *node_string(const void *node, const char *name, const char *fallback)
{
  const test_node *n = node;
  return strcmp(name, "auto_pad") == 0 && n->auto_pad ? n->auto_pad : fallback;
}

#define T4(n, c, h, w) {NPU_DTYPE_FLOAT32, 4, {n, c, h, w}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define T1(n) {NPU_DTYPE_FLOAT32, 1, {n}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define SCALAR {NPU_DTYPE_FLOAT32, 0, {0}, NPU_HAL_LAYOUT_PLAIN, {0}}
#define ABSENT {NPU_DTYPE_UNDEFINED, 0, {0}, NPU_HAL_LAYOUT_PLAIN, {0}}

typedef struct kernel_case {
  const char *name;
  const char *op_type;
  uint32_t input_count;
  npu_hal_tensor_desc inputs[3];
  npu_hal_tensor_desc output;
  test_node node;
  uint32_t constants;            /* bit i: input i's values are known when planning */
  float low[3], high[3];         /* random range per input; both 0: [-1, 1] */
  uint32_t activation_count;
  npu_hal_activation activations[2];
  bool residual;                 /* one fused input shaped like the output */
} kernel_case;

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
  npu_hal_window window;
  test_node node;
  npu_hal_tensor_desc inputs[3], fused;
  const void *values[3];
  float *host[4];              /* the op's inputs, then the residual */
  size_t counts[4];
  uint32_t host_count;
} case_data;

static void case_setup(const kernel_case *c, GRand *rand, case_data *d)
{
  memset(d, 0, sizeof *d);
  d->node = c->node;
  memcpy(d->inputs, c->inputs, sizeof d->inputs);
  d->fused = c->output;
  d->host_count = c->input_count + (c->residual ? 1 : 0);
  for (uint32_t i = 0; i < d->host_count; i++) {
    const npu_hal_tensor_desc *t = i < c->input_count ? &c->inputs[i] : &c->output;
    d->counts[i] = count_of(t);
    d->host[i] = g_new(float, d->counts[i]);
    float low = i < 3 && (c->low[i] || c->high[i]) ? c->low[i] : -1;
    float high = i < 3 && (c->low[i] || c->high[i]) ? c->high[i] : 1;
    for (size_t e = 0; e < d->counts[i]; e++)
      d->host[i][e] = low == high ? low : (float)g_rand_double_range(rand, low, high);
    if (i < c->input_count && (c->constants & (1u << i)))
      d->values[i] = d->host[i];
  }
  d->op = (npu_hal_op){c->op_type, 13,
                       {&d->node, node_int, node_float, node_ints, node_string},
                       c->input_count, 1, d->inputs, &c->output, d->values,
                       c->activations, c->activation_count,
                       c->residual ? &d->fused : NULL, c->residual ? 1 : 0};
  if (npu_window_op(c->op_type)) {
    NPU_ASSERT_OK(npu_window_resolve(&d->op, &d->window, c->name));
    d->op.window = &d->window;
  }
}

static void case_clear(case_data *d)
{
  for (uint32_t i = 0; i < d->host_count; i++)
    g_free(d->host[i]);
}

/* Runs the op on the CPU backend over host memory; `repeats` more runs are
 * timed (ms each). */
static float *run_on_cpu(npu_device *cpu, case_data *d, size_t out_count, int repeats, double *ms)
{
  const npu_hal_graph_ops *graph = npu_cpu_backend.graph;
  npu_hal_kernel *kernel;
  NPU_ASSERT_OK(graph->kernel_create(npu_device_hal(cpu), &d->op, &kernel));
  float *out = g_new0(float, out_count);
  npu_hal_mem_ref inputs[4], output = {NULL, out, 0};
  for (uint32_t i = 0; i < d->host_count; i++)
    inputs[i] = (npu_hal_mem_ref){NULL, d->host[i], 0};
  size_t workspace = graph->kernel_workspace ? graph->kernel_workspace(kernel) : 0;
  void *scratch = workspace ? g_malloc(workspace) : NULL;
  npu_hal_launch launch = {kernel, d->host_count, 1, inputs, &output, {NULL, scratch, 0}};
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
  return out;
}

/* Runs the op on the Vulkan device, its tensors at odd (float-aligned)
 * offsets of their buffers; `repeats` more runs are timed (ms each). */
static float *run_on_vulkan(npu_device *device, case_data *d, size_t out_count, int repeats,
                            double *ms)
{
  const npu_hal_graph_ops *graph = npu_device_backend(device)->graph;
  g_assert_true(graph->op_supported(npu_device_hal(device), &d->op));
  npu_hal_kernel *kernel;
  NPU_ASSERT_OK(graph->kernel_create(npu_device_hal(device), &d->op, &kernel));
  npu_buffer *buffers[5];
  npu_hal_mem_ref inputs[4], output;
  for (uint32_t i = 0; i < d->host_count; i++) {
    size_t offset = 12 * (i + 1) + 64;
    NPU_ASSERT_OK(npu_buffer_alloc(device, offset + d->counts[i] * sizeof(float), &buffers[i]));
    NPU_ASSERT_OK(npu_memcpy_h2d(buffers[i], offset, d->host[i], d->counts[i] * sizeof(float)));
    inputs[i] = (npu_hal_mem_ref){npu_buffer_hal(buffers[i]), NULL, offset};
  }
  size_t out_offset = 20, out_bytes = out_count * sizeof(float);
  npu_buffer *out_buffer;
  NPU_ASSERT_OK(npu_buffer_alloc(device, out_offset + out_bytes + 8, &out_buffer));
  NPU_ASSERT_OK(npu_memset(out_buffer, 0, 0xff, out_offset + out_bytes + 8)); /* NaNs */
  output = (npu_hal_mem_ref){npu_buffer_hal(out_buffer), NULL, out_offset};
  npu_hal_launch launch = {kernel, d->host_count, 1, inputs, &output, {NULL, NULL, 0}};
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
  float *out = g_new(float, out_count);
  NPU_ASSERT_OK(npu_memcpy_d2h(out, out_buffer, out_offset, out_bytes));
  guint8 after[8];
  NPU_ASSERT_OK(npu_memcpy_d2h(after, out_buffer, out_offset + out_bytes, sizeof after));
  for (size_t i = 0; i < sizeof after; i++)
    g_assert_cmpuint(after[i], ==, 0xff); /* nothing written past the output */
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_buffer_release(out_buffer));
  for (uint32_t i = 0; i < d->host_count; i++)
    NPU_ASSERT_OK(npu_buffer_release(buffers[i]));
  graph->kernel_destroy(kernel);
  return out;
}

static void test_kernels_match_cpu(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_device *cpu;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &cpu));
  GRand *rand = g_rand_new_with_seed(16);
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    case_data d;
    case_setup(&cases[c], rand, &d);
    size_t out_count = count_of(&cases[c].output);
    float *expected = run_on_cpu(cpu, &d, out_count, 0, NULL);
    float *got = run_on_vulkan(device, &d, out_count, 0, NULL);
    double worst = 0;
    for (size_t i = 0; i < out_count; i++) {
      double error = fabs((double)got[i] - expected[i]) / (1.0 + fabs((double)expected[i]));
      if (!(error <= 1e-5))
        g_error("%s: element %zu is %.9g on Vulkan, %.9g on the CPU", cases[c].name, i, got[i],
                expected[i]);
      worst = error > worst ? error : worst;
    }
    g_test_message("%-28s %6zu outputs, largest relative difference %.2e", cases[c].name,
                   out_count, worst);
    g_free(got);
    g_free(expected);
    case_clear(&d);
  }
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
  d.op.op_type = "Softmax";
  g_assert_false(graph->op_supported(hal, &d.op));
  npu_hal_kernel *kernel = NULL;
  NPU_ASSERT_STATUS(graph->kernel_create(hal, &d.op, &kernel), NPU_ERROR_NOT_SUPPORTED);
  g_assert_nonnull(strstr(npu_last_error_message(), "Softmax"));
  /* Activations fuse into convolutions only. */
  d.op.op_type = "Relu";
  npu_hal_activation relu = {NPU_HAL_ACTIVATION_RELU};
  d.op.activations = &relu;
  d.op.activation_count = 1;
  NPU_ASSERT_STATUS(graph->kernel_create(hal, &d.op, &kernel), NPU_ERROR_NOT_SUPPORTED);
  case_clear(&d);

  /* A broadcast other than a scalar; a 1-D convolution. */
  kernel_case broadcast = {"bias-add", "Add", 2, {T4(1, 4, 3, 3), T4(1, 4, 1, 1)}, T4(1, 4, 3, 3)};
  case_setup(&broadcast, rand, &d);
  g_assert_false(graph->op_supported(hal, &d.op));
  case_clear(&d);
  kernel_case conv1d = {"conv1d", "Conv", 2, {{NPU_DTYPE_FLOAT32, 3, {1, 4, 9}}, {NPU_DTYPE_FLOAT32, 3, {4, 4, 3}}},
                        {NPU_DTYPE_FLOAT32, 3, {1, 4, 7}}};
  case_setup(&conv1d, rand, &d);
  g_assert_false(graph->op_supported(hal, &d.op));
  case_clear(&d);
  g_rand_free(rand);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* A ResNet-sized 3x3 convolution on both: figures, not assertions. */
static void test_convolution_time(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_device *cpu;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &cpu));
  kernel_case conv = {"conv-3x3-64", "Conv", 3, {T4(1, 64, 56, 56), T4(64, 64, 3, 3), T1(64)},
                      T4(1, 64, 56, 56), {.pads = {1, 1, 1, 1}}, .constants = 6};
  GRand *rand = g_rand_new_with_seed(3);
  case_data d;
  case_setup(&conv, rand, &d);
  size_t out_count = count_of(&conv.output);
  double cpu_ms, vulkan_ms;
  float *expected = run_on_cpu(cpu, &d, out_count, 3, &cpu_ms);
  float *got = run_on_vulkan(device, &d, out_count, 3, &vulkan_ms);
  double diff = 0, norm = 0;
  for (size_t i = 0; i < out_count; i++) {
    diff += ((double)got[i] - expected[i]) * ((double)got[i] - expected[i]);
    norm += (double)expected[i] * expected[i];
  }
  g_assert_cmpfloat(sqrt(diff / norm), <=, 1e-5);
  double gflop = 2.0 * 64 * 64 * 9 * 56 * 56 / 1e9;
  g_test_message("3x3 convolution 64->64 at 56x56 (%.2f GFLOP): Vulkan %.1f ms a run (%.1f "
                 "GFLOP/s); CPU backend %.1f ms (%.1f GFLOP/s, plain NCHW)",
                 gflop, vulkan_ms, gflop / vulkan_ms * 1e3, cpu_ms, gflop / cpu_ms * 1e3);
  g_free(got);
  g_free(expected);
  case_clear(&d);
  g_rand_free(rand);
  NPU_ASSERT_OK(npu_device_release(cpu));
  NPU_ASSERT_OK(npu_device_release(device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vulkan/kernels-match-cpu", test_kernels_match_cpu);
  g_test_add_func("/vulkan/refusals", test_refusals);
  g_test_add_func("/vulkan/convolution-time", test_convolution_time);
  return g_test_run();
}
