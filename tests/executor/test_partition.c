/* Partitioning and heterogeneous execution. The device under test is a
 * test backend: the CPU backend declaring that it runs convolutions only,
 * so every other operator goes to the host device (the real CPU backend),
 * with copies between the two devices' memories and waits between their
 * streams. Its outputs must equal the CPU backend's alone, on the loader's
 * test model and on the PP-OCR models when they are cached. The test
 * backend has no pitched copy either: the runtime's row-by-row one is
 * tested on it. Two more test backends plan layouts their own way: one
 * with plain tensors only, one asking for channel blocks of a size the test
 * chooses. Compiled subgraphs are tested the same way on a backend that
 * compiles each of its subgraphs into one executable (compiling_backend.c). */
#include <math.h>
#include <string.h>

#include "../runtime/npu_test.h"
#include "compiling_backend.h"
#include "held_plan.h"
#include "cpu/cpu_internal.h"
#include "cpu/kernels/direct_conv.h"
#include "cpu/kernels/packed_weights.h"
#include "model_internal.h"
#include "npu_hal_graph.h"

static npu_hal_graph_ops convolutions_graph;
static npu_hal_backend convolutions_backend;

static bool convolutions_only(npu_hal_device *device, const npu_hal_op *op)
{
  (void)device;
  return strcmp(op->op_type, "Conv") == 0;
}

/* A backend that claims every operator but refuses, when asked for the
 * kernel, all but convolutions: as a compiler that finds out late. */
static npu_hal_graph_ops late_refusals_graph;
static npu_hal_backend late_refusals_backend;

static npu_status create_convolutions_only(npu_hal_device *device, const npu_hal_op *op,
                                           npu_hal_kernel **kernel)
{
  if (strcmp(op->op_type, "Conv") != 0)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "late-refusals: no %s kernel", op->op_type);
  return npu_cpu_backend.graph->kernel_create(device, op, kernel);
}

/* The channel-block backend: the CPU backend asking for blocks of
 * `wanted_block` channels, counting the blocks its kernels get. */
static npu_hal_graph_ops blocks_graph, plain_graph;
static npu_hal_backend blocks_backend, plain_backend;
static uint32_t wanted_block;
static guint kernel_tensors_in_blocks[65]; /* by block size */

static npu_hal_layout prefer_wanted_block(npu_hal_device *device,
                                          const npu_hal_tensor_desc *tensor, uint32_t *block)
{
  (void)device, (void)tensor;
  *block = wanted_block;
  return NPU_HAL_LAYOUT_CHANNEL_BLOCKS;
}

static npu_status create_counting_blocks(npu_hal_device *device, const npu_hal_op *op,
                                         npu_hal_kernel **kernel)
{
  for (uint32_t i = 0; i < op->input_count + op->output_count; i++) {
    const npu_hal_tensor_desc *d = i < op->input_count ? &op->inputs[i]
                                                       : &op->outputs[i - op->input_count];
    if (d->layout == NPU_HAL_LAYOUT_CHANNEL_BLOCKS) {
      g_assert_cmpuint(d->block, <=, 64);
      kernel_tensors_in_blocks[d->block]++;
    }
  }
  return npu_cpu_backend.graph->kernel_create(device, op, kernel);
}

static void add_layout_backends(void)
{
  blocks_graph = *npu_cpu_backend.graph;
  blocks_graph.preferred_layout = prefer_wanted_block;
  blocks_graph.kernel_create = create_counting_blocks;
  blocks_backend = npu_cpu_backend;
  blocks_backend.name = "channel-blocks";
  blocks_backend.graph = &blocks_graph;
  NPU_ASSERT_OK(npu_hal_backend_add(&blocks_backend));

  plain_graph = *npu_cpu_backend.graph;
  plain_graph.layout_supported = NULL;
  plain_graph.preferred_layout = NULL;
  plain_backend = npu_cpu_backend;
  plain_backend.name = "plain-layouts";
  plain_backend.graph = &plain_graph;
  NPU_ASSERT_OK(npu_hal_backend_add(&plain_backend));
}

static void add_test_backend(void)
{
  add_layout_backends();
  late_refusals_graph = *npu_cpu_backend.graph;
  late_refusals_graph.op_supported = NULL;
  late_refusals_graph.kernel_create = create_convolutions_only;
  late_refusals_backend = npu_cpu_backend;
  late_refusals_backend.name = "late-refusals";
  late_refusals_backend.graph = &late_refusals_graph;
  NPU_ASSERT_OK(npu_hal_backend_add(&late_refusals_backend));

  convolutions_graph = *npu_cpu_backend.graph;
  convolutions_graph.op_supported = convolutions_only;
  convolutions_backend = npu_cpu_backend;
  convolutions_backend.name = "conv-only";
  convolutions_backend.copy_2d = NULL;
  convolutions_backend.graph = &convolutions_graph;
  NPU_ASSERT_OK(npu_hal_backend_add(&convolutions_backend));

  NPU_ASSERT_OK(compiling_backend_add("compiler"));
}

typedef struct model_run {
  uint32_t output_count;
  float *outputs[8];
  size_t output_floats[8];
  npu_context_stats stats;
} model_run;

static size_t elements_of(const npu_tensor_info *info)
{
  size_t count = 1;
  for (uint32_t d = 0; d < info->rank; d++)
    count *= (size_t)info->dims[d];
  return count;
}

/* Inputs are uniform in [input_low, 1): -1 but for the zoo's models, whose
 * BatchNorm statistics were measured on inputs in [0, 1) (make_zoo.py). On
 * [-1, 1) lraspp_mobilenet_v3_large's random weights amplify float32
 * rounding so much that float32 engines land 2e-4 (ORT) to 1.7e-3 (this
 * CPU backend) from its float64 forward: two correct runs then differ by
 * more than any tolerance that would still catch a wrong kernel. */
static double input_low = -1.0;

/* Runs the context for its current shapes on fixed-seed inputs in [input_low,
 * 1), the seed's first `skip` values left out (image k of a batch alone). */
static void run_context_skipping(npu_model *model, npu_device *device, npu_context *context,
                                 size_t skip, model_run *run)
{
  npu_tensor_info in_info, out_info;
  NPU_ASSERT_OK(npu_context_input_info(context, 0, &in_info));
  g_assert_cmpint(in_info.dtype, ==, NPU_DTYPE_FLOAT32);
  size_t in_count = elements_of(&in_info);
  float *pixels = g_new(float, in_count);
  GRand *rand = g_rand_new_with_seed(7);
  for (size_t i = 0; i < skip; i++)
    g_rand_double_range(rand, input_low, 1.0);
  for (size_t i = 0; i < in_count; i++)
    pixels[i] = (float)g_rand_double_range(rand, input_low, 1.0);
  g_rand_free(rand);
  npu_buffer *input, *outputs[8];
  NPU_ASSERT_OK(npu_buffer_alloc(device, in_count * sizeof(float), &input));
  NPU_ASSERT_OK(npu_memcpy_h2d(input, 0, pixels, in_count * sizeof(float)));
  NPU_ASSERT_OK(npu_model_output_count(model, &run->output_count));
  g_assert_cmpuint(run->output_count, <=, 8);
  for (uint32_t o = 0; o < run->output_count; o++) {
    NPU_ASSERT_OK(npu_context_output_info(context, o, &out_info));
    g_assert_cmpint(out_info.dtype, ==, NPU_DTYPE_FLOAT32);
    run->output_floats[o] = elements_of(&out_info);
    NPU_ASSERT_OK(npu_buffer_alloc(device, run->output_floats[o] * sizeof(float) + 1,
                                   &outputs[o]));
  }
  /* Twice: the second run reuses every copy, event and arena. */
  for (int pass = 0; pass < 2; pass++)
    NPU_ASSERT_OK(npu_context_run_sync(context, &input, outputs));
  for (uint32_t o = 0; o < run->output_count; o++) {
    run->outputs[o] = g_new(float, run->output_floats[o] + 1);
    NPU_ASSERT_OK(npu_memcpy_d2h(run->outputs[o], outputs[o], 0,
                                 run->output_floats[o] * sizeof(float)));
    NPU_ASSERT_OK(npu_buffer_release(outputs[o]));
  }
  NPU_ASSERT_OK(npu_context_get_stats(context, &run->stats));
  NPU_ASSERT_OK(npu_buffer_release(input));
  g_free(pixels);
}

static void run_context(npu_model *model, npu_device *device, npu_context *context,
                        model_run *run)
{
  run_context_skipping(model, device, context, 0, run);
}

/* Runs the model on `device` with input dims `shape` (NULL: the model's). */
static void run_model(npu_model *model, npu_device *device, const npu_tensor_info *shape,
                      model_run *run)
{
  npu_context *context;
  NPU_ASSERT_OK(npu_context_create(model, device, shape, shape ? 1 : 0, &context));
  run_context(model, device, context, run);
  NPU_ASSERT_OK(npu_context_destroy(context));
}

static void model_run_clear(model_run *run)
{
  for (uint32_t o = 0; o < run->output_count; o++)
    g_free(run->outputs[o]);
}

/* Relative L2 error of b against a (absolute where a is near zero). */
static double relative_error(const float *a, const float *b, size_t count)
{
  double diff = 0, norm = 0;
  for (size_t i = 0; i < count; i++) {
    diff += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    norm += (double)a[i] * a[i];
  }
  return norm > 1e-10 ? sqrt(diff / norm) : sqrt(diff);
}

/* Partitions run the same kernels as the CPU alone; the compiling backend
 * runs its nodes unfused, so fused activations (Swish, Sigmoid) round
 * differently there (the zoo's models: 3e-7 to 1.3e-6; more on inputs a
 * model amplifies rounding at, see input_low). */
static double tolerance_of(const char *backend)
{
  return strcmp(backend, "compiler") == 0 ? 5e-4 : 1e-5;
}

static void assert_same_outputs(const char *path, const model_run *reference,
                                const model_run *other, double tolerance)
{
  g_assert_cmpuint(reference->output_count, ==, other->output_count);
  for (uint32_t o = 0; o < reference->output_count; o++) {
    g_assert_cmpuint(reference->output_floats[o], ==, other->output_floats[o]);
    double error = relative_error(reference->outputs[o], other->outputs[o],
                                  reference->output_floats[o]);
    g_test_message("%s output %u: relative L2 error %.2e", path, o, error);
    g_assert_cmpfloat(error, <=, tolerance);
  }
}

/* The model on the CPU alone and on backend `partial_backend`: the same
 * outputs. */
static model_run compare_with_cpu(const char *partial_backend, const char *path,
                                  const npu_tensor_info *shape)
{
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_device *cpu, *partial;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &cpu));
  NPU_ASSERT_OK(npu_device_open_by_backend(partial_backend, 0, &partial));
  npu_tensor_info concrete;
  if (shape) {
    NPU_ASSERT_OK(npu_model_input_info(model, 0, &concrete));
    memcpy(concrete.dims, shape->dims, sizeof concrete.dims);
    shape = &concrete;
  }
  model_run reference = {0}, split = {0};
  run_model(model, cpu, shape, &reference);
  run_model(model, partial, shape, &split);
  g_assert_cmpuint(reference.stats.subgraphs, ==, 1);
  g_assert_cmpuint(reference.stats.host_kernels, ==, 0);
  g_assert_cmpuint(reference.stats.compiled_subgraphs, ==, 0);
  assert_same_outputs(path, &reference, &split, tolerance_of(partial_backend));
  g_test_message("%s: %u subgraphs (%u compiled, of %u nodes), %u of %u kernels on the host, "
                 "%llu bytes copied per run", path, split.stats.subgraphs,
                 split.stats.compiled_subgraphs, split.stats.compiled_nodes,
                 split.stats.host_kernels, split.stats.kernels,
                 (unsigned long long)split.stats.transfer_bytes);
  model_run_clear(&reference);
  NPU_ASSERT_OK(npu_device_release(partial));
  NPU_ASSERT_OK(npu_device_release(cpu));
  NPU_ASSERT_OK(npu_model_release(model));
  return split;
}

/* The same, split between the backend and the host. */
static model_run compare_partitioned_on(const char *partial_backend, const char *path,
                                        const npu_tensor_info *shape)
{
  model_run split = compare_with_cpu(partial_backend, path, shape);
  g_assert_cmpuint(split.stats.subgraphs, >, 1);
  g_assert_cmpuint(split.stats.host_kernels, >, 0);
  g_assert_cmpuint(split.stats.host_kernels, <,
                   split.stats.kernels + split.stats.compiled_subgraphs);
  return split;
}

static model_run compare_partitioned(const char *path, const npu_tensor_info *shape)
{
  return compare_partitioned_on("conv-only", path, shape);
}

static model_run compare_compiled(const char *path, const npu_tensor_info *shape);

/* Conv (Relu fused) on the device; pooling, Reshape and Gemm on the host:
 * the convolution's output goes over, the scores come back. */
static void test_small_model_splits_in_two(void)
{
  gchar *path = g_build_filename(g_getenv("NPU_TEST_MODELS"), "good.onnx", NULL);
  npu_tensor_info shape = {.rank = 4, .dims = {2, 3, 8, 8}};
  model_run split = compare_partitioned(path, &shape);
  g_assert_cmpuint(split.stats.subgraphs, ==, 2);
  g_assert_cmpuint(split.stats.transfer_bytes, ==, sizeof(float) * 2 * (4 * 8 * 8 + 5));
  model_run_clear(&split);
  g_free(path);
}

/* PP-OCR's detector (convolutions, with resizes and concats between) and
 * recogniser (a transformer after the convolutions) cut into many
 * subgraphs. */
static void test_ocr_models(void)
{
  const char *dir = g_getenv("NPU_OCR_MODELS");
  gchar *fallback = g_build_filename(g_get_home_dir(), ".cache", "gst-npu", "ocr", "package",
                                     "assets", NULL);
  if (!dir)
    dir = fallback;
  static const struct {
    const char *file;
    npu_tensor_info shape;
  } models[] = {
      {"ch_PP-OCRv4_det_infer.onnx", {.rank = 4, .dims = {1, 3, 96, 160}}},
      {"ch_PP-OCRv4_rec_infer.onnx", {.rank = 4, .dims = {2, 3, 48, 160}}},
  };
  for (size_t m = 0; m < G_N_ELEMENTS(models); m++) {
    gchar *path = g_build_filename(dir, models[m].file, NULL);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
      g_test_skip("the PP-OCR models are not cached (tests/models/fetch_assets.sh fetches them)");
      g_free(path);
      break;
    }
    model_run split = compare_partitioned(path, &models[m].shape);
    g_assert_cmpuint(split.stats.subgraphs, >=, 3);
    model_run_clear(&split);
    split = compare_compiled(path, &models[m].shape);
    g_assert_cmpuint(split.stats.subgraphs, >=, 3);
    g_assert_cmpuint(split.stats.host_kernels, >, 0);
    model_run_clear(&split);
    g_free(path);
  }
  g_free(fallback);
}

/* Zoo models of many families (tests/models/make_zoo.py caches them), at
 * batch 1: squeeze-and-excitation, channel shuffles, grouped and 3D
 * convolutions, attention, segmentation heads. */
static void test_zoo_models(void)
{
  if (g_getenv("NPU_TEST_SKIP_ZOO")) {
    g_test_skip("NPU_TEST_SKIP_ZOO is set (the sanitizer run: the zoo's models take minutes there)");
    return;
  }
  gchar *dir = g_build_filename(g_get_home_dir(), ".cache", "gst-npu", "zoo", NULL);
  static const char *const names[] = {
      "squeezenet1_1",  "shufflenet_v2_x0_5", "mobilenet_v3_small",        "efficientnet_b0",
      "regnet_x_400mf", "vit_b_16",           "lraspp_mobilenet_v3_large", "r3d_18",
  };
  guint done = 0;
  input_low = 0.0;
  for (size_t m = 0; m < G_N_ELEMENTS(names); m++) {
    gchar *file = g_strconcat(names[m], ".onnx", NULL);
    gchar *path = g_build_filename(dir, file, NULL);
    if (g_file_test(path, G_FILE_TEST_EXISTS)) {
      npu_model *model;
      NPU_ASSERT_OK(npu_model_load_file(path, &model));
      npu_tensor_info shape;
      NPU_ASSERT_OK(npu_model_input_info(model, 0, &shape));
      NPU_ASSERT_OK(npu_model_release(model));
      shape.dims[0] = 1;
      model_run split = compare_partitioned(path, &shape);
      model_run_clear(&split);
      split = compare_compiled(path, &shape);
      model_run_clear(&split);
      done++;
    }
    g_free(path);
    g_free(file);
  }
  input_low = -1.0;
  if (!done)
    g_test_skip("the model zoo is not cached (tests/models/make_zoo.py makes it)");
  g_free(dir);
}

/* Kernels the device's backend refuses at creation run on the host: the
 * same partition as a backend that says so up front. */
static void test_refused_kernels_run_on_the_host(void)
{
  gchar *path = g_build_filename(g_getenv("NPU_TEST_MODELS"), "good.onnx", NULL);
  npu_tensor_info shape = {.rank = 4, .dims = {2, 3, 8, 8}};
  model_run late = compare_partitioned_on("late-refusals", path, &shape);
  model_run early = compare_partitioned(path, &shape);
  g_assert_cmpuint(late.stats.subgraphs, ==, early.stats.subgraphs);
  g_assert_cmpuint(late.stats.host_kernels, ==, early.stats.host_kernels);
  g_assert_cmpuint(late.stats.transfer_bytes, ==, early.stats.transfer_bytes);
  model_run_clear(&late);
  model_run_clear(&early);
  g_free(path);
}

/* Channel blocks of the size a backend asks for (4, 32) run every kernel
 * that takes relaid tensors, the conversions from and to plain ones
 * included: the outputs of the plain run. Blocks of 64, for which oneDNN's
 * kernels have no format, are refused by the capability answer, and the
 * runtime falls back to 32. */
static void test_any_channel_block(void)
{
  gchar *path = g_build_filename(g_getenv("NPU_TEST_MODELS"), "channel_blocks.onnx", NULL);
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_device *plain_device, *blocks_device;
  NPU_ASSERT_OK(npu_device_open_by_backend("plain-layouts", 0, &plain_device));
  NPU_ASSERT_OK(npu_device_open_by_backend("channel-blocks", 0, &blocks_device));
  model_run plain = {0};
  run_model(model, plain_device, NULL, &plain);
  g_assert_cmpuint(plain.stats.relaid_tensors, ==, 0);
  static const struct {
    uint32_t wanted, planned;
  } cases[] = {{4, 4}, {32, 32}, {64, 32}};
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    wanted_block = cases[c].wanted;
    memset(kernel_tensors_in_blocks, 0, sizeof kernel_tensors_in_blocks);
    model_run blocked = {0};
    run_model(model, blocks_device, NULL, &blocked);
    double error = relative_error(plain.outputs[0], blocked.outputs[0], plain.output_floats[0]);
    g_test_message("C0 = %u: %u tensors relaid, %u kernel tensors in blocks of %u, relative L2 "
                   "error %.2e", cases[c].wanted, blocked.stats.relaid_tensors,
                   kernel_tensors_in_blocks[cases[c].planned], cases[c].planned, error);
    g_assert_cmpfloat(error, <=, 1e-5);
    g_assert_cmpuint(blocked.stats.relaid_tensors, >=, 8);
    g_assert_cmpuint(kernel_tensors_in_blocks[cases[c].planned], >=, 8);
    g_assert_cmpuint(kernel_tensors_in_blocks[64], ==, 0);
    model_run_clear(&blocked);
  }
  model_run_clear(&plain);
  NPU_ASSERT_OK(npu_device_release(blocks_device));
  NPU_ASSERT_OK(npu_device_release(plain_device));
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(path);
}

/* Without the backend's pitched copy, the runtime copies row by row: the
 * same bytes, on a stream too. */
static void test_pitched_copy_without_backend_support(void)
{
  enum { ROWS = 5, ROW = 12, PITCH = 20 };
  npu_device *device;
  NPU_ASSERT_OK(npu_device_open_by_backend("conv-only", 0, &device));
  npu_buffer *buffer;
  NPU_ASSERT_OK(npu_buffer_alloc(device, PITCH * ROWS, &buffer));
  NPU_ASSERT_OK(npu_memset(buffer, 0, 0, PITCH * ROWS));
  guint8 src[ROW * ROWS], back[PITCH * ROWS] = {0};
  for (size_t i = 0; i < sizeof src; i++)
    src[i] = (guint8)(i * 7 + 1);
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  NPU_ASSERT_OK(npu_memcpy_2d_h2d(buffer, 0, PITCH, src, ROW, ROW, ROWS, stream));
  NPU_ASSERT_OK(npu_memcpy_2d_d2h(back, PITCH, buffer, 0, PITCH, ROW, ROWS, stream));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  for (size_t y = 0; y < ROWS; y++) {
    g_assert_cmpmem(back + y * PITCH, ROW, src + y * ROW, ROW);
    g_assert_cmpuint(back[y * PITCH + ROW], ==, 0);
  }
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  NPU_ASSERT_OK(npu_device_release(device));
}

/* ---- compiled subgraphs ------------------------------------------------------------ */

/* What the compiling backend declines in the partitioned tests: heads,
 * resizes, concatenations and attention go to the host. */
static const char *const host_operators[] = {
    "Gemm", "MatMul", "GlobalAveragePool", "Resize", "Concat", "Softmax", "Transpose", "Reshape",
    NULL,
};

static void reset_compiler(const char *const *unsupported)
{
  memset(&compiling_stats, 0, sizeof compiling_stats);
  compiling_settings = (compiling_backend_settings){false, false, unsupported};
}

/* What every compiled run must have seen: host values for every constant,
 * its own workspace apart from the boundary, no reference to a constant it
 * packed, and nothing left packed once the contexts are gone. */
static void assert_compiler_served(void)
{
  g_assert_cmpuint(compiling_stats.constants_without_value, ==, 0);
  g_assert_cmpuint(compiling_stats.bad_workspaces, ==, 0);
  g_assert_cmpuint(compiling_stats.bad_constants, ==, 0);
  g_assert_cmpuint(compiling_stats.packed_bytes, ==, 0);
}

/* A backend that takes every operator gets the whole model as one
 * subgraph, compiled once and run as one launch. */
static void test_compiled_whole_model(void)
{
  gchar *path = g_build_filename(g_getenv("NPU_TEST_MODELS"), "good.onnx", NULL);
  npu_tensor_info shape = {.rank = 4, .dims = {2, 3, 8, 8}};
  reset_compiler(NULL);
  model_run compiled = compare_with_cpu("compiler", path, &shape);
  g_assert_cmpuint(compiled.stats.subgraphs, ==, 1);
  g_assert_cmpuint(compiled.stats.compiled_subgraphs, ==, 1);
  g_assert_cmpuint(compiled.stats.kernels, ==, 0);
  g_assert_cmpuint(compiled.stats.compiled_nodes, ==, compiling_stats.nodes_compiled);
  g_assert_cmpuint(compiling_stats.compiles, ==, 1);
  g_assert_cmpuint(compiling_stats.runs, ==, 2);
  assert_compiler_served();
  model_run_clear(&compiled);
  g_free(path);
}

/* A backend that declines some operators (host_operators): each of its
 * subgraphs compiled once, the outputs those of the CPU alone. */
static model_run compare_compiled(const char *path, const npu_tensor_info *shape)
{
  reset_compiler(host_operators);
  model_run split = compare_with_cpu("compiler", path, shape);
  g_assert_cmpuint(split.stats.compiled_subgraphs, >=, 1);
  g_assert_cmpuint(compiling_stats.compiles, ==, split.stats.compiled_subgraphs);
  g_assert_cmpuint(compiling_stats.nodes_compiled, ==, split.stats.compiled_nodes);
  g_assert_cmpuint(compiling_stats.runs, ==, 2 * split.stats.compiled_subgraphs);
  assert_compiler_served();
  return split;
}

/* Conv and Relu compiled; pooling, Reshape and Gemm on the host. */
static void test_compiled_partition(void)
{
  gchar *path = g_build_filename(g_getenv("NPU_TEST_MODELS"), "good.onnx", NULL);
  npu_tensor_info shape = {.rank = 4, .dims = {2, 3, 8, 8}};
  model_run split = compare_compiled(path, &shape);
  g_assert_cmpuint(split.stats.subgraphs, ==, 2);
  g_assert_cmpuint(split.stats.compiled_subgraphs, ==, 1);
  g_assert_cmpuint(split.stats.compiled_nodes, ==, 2);
  g_assert_cmpuint(split.stats.host_kernels, ==, split.stats.kernels);
  model_run_clear(&split);
  g_free(path);
}

/* A subgraph the backend refuses runs on per-op kernels of the same
 * device: the same kernels as the CPU backend's alone. */
static void test_refused_subgraph_falls_back(void)
{
  gchar *path = g_build_filename(g_getenv("NPU_TEST_MODELS"), "good.onnx", NULL);
  npu_tensor_info shape = {.rank = 4, .dims = {2, 3, 8, 8}};
  reset_compiler(NULL);
  compiling_settings.refuse = true;
  model_run fallback = compare_with_cpu("compiler", path, &shape);
  reset_compiler(NULL);
  g_assert_cmpuint(fallback.stats.compiled_subgraphs, ==, 0);
  g_assert_cmpuint(fallback.stats.subgraphs, ==, 1);
  g_assert_cmpuint(fallback.stats.host_kernels, ==, 0);
  g_assert_cmpuint(fallback.stats.kernels, >, 0);
  model_run_clear(&fallback);
  g_free(path);
}

/* The context on `device` made current for `dims`; the time it took (ms). */
static double reshape_to(npu_context *context, const npu_tensor_info *model_input,
                         const int64_t *dims)
{
  npu_tensor_info shape = *model_input;
  memcpy(shape.dims, dims, shape.rank * sizeof dims[0]);
  gint64 start = g_get_monotonic_time();
  NPU_ASSERT_OK(npu_context_reshape(context, &shape, 1));
  return (double)(g_get_monotonic_time() - start) / 1000.0;
}

/* The context's outputs for its current shape equal the CPU's. */
static void assert_context_matches_cpu(const char *path, npu_model *model, npu_device *device,
                                       npu_context *context)
{
  npu_tensor_info shape;
  NPU_ASSERT_OK(npu_context_input_info(context, 0, &shape));
  npu_device *cpu;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &cpu));
  model_run reference = {0}, compiled = {0};
  run_model(model, cpu, &shape, &reference);
  run_context(model, device, context, &compiled);
  assert_same_outputs(path, &reference, &compiled, tolerance_of("compiler"));
  model_run_clear(&reference);
  model_run_clear(&compiled);
  NPU_ASSERT_OK(npu_device_release(cpu));
}

/* Three shapes of the model's input on the compiling backend, which takes
 * every operator: the second is reshaped from the first's executable
 * (packing nothing again), going back to the first costs nothing, and the
 * third, with reshaping off, is compiled again (packing its own copy). */
static void check_compiled_reshape(const char *path, const int64_t shapes[3][NPU_MAX_RANK])
{
  reset_compiler(NULL);
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_tensor_info input;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &input));
  npu_device *device;
  NPU_ASSERT_OK(npu_device_open_by_backend("compiler", 0, &device));
  npu_tensor_info first = input;
  memcpy(first.dims, shapes[0], first.rank * sizeof first.dims[0]);
  npu_context *context;
  gint64 start = g_get_monotonic_time();
  NPU_ASSERT_OK(npu_context_create(model, device, &first, 1, &context));
  double plan_ms = (double)(g_get_monotonic_time() - start) / 1000.0;
  g_assert_cmpuint(compiling_stats.compiles, ==, 1);
  guint64 packed = compiling_stats.packed_bytes;
  g_assert_cmpuint(packed, >, 0);

  double replan_ms = reshape_to(context, &input, shapes[1]);
  g_assert_cmpuint(compiling_stats.compiles, ==, 1);
  g_assert_cmpuint(compiling_stats.reshapes, ==, 1);
  g_assert_cmpuint(compiling_stats.packed_bytes, ==, packed);
  assert_context_matches_cpu(path, model, device, context);
  g_test_message("%s: first plan %.1f ms (compiled), another shape %.1f ms (reshaped, %.0f%%), "
                 "%llu bytes packed once", path, plan_ms, replan_ms, 100.0 * replan_ms / plan_ms,
                 (unsigned long long)packed);

  reshape_to(context, &input, shapes[0]);
  g_assert_cmpuint(compiling_stats.compiles + compiling_stats.reshapes, ==, 2);

  compiling_settings.no_reshape = true;
  reshape_to(context, &input, shapes[2]);
  g_assert_cmpuint(compiling_stats.compiles, ==, 2);
  g_assert_cmpuint(compiling_stats.packed_bytes, ==, 2 * packed);
  assert_context_matches_cpu(path, model, device, context);

  NPU_ASSERT_OK(npu_context_destroy(context));
  assert_compiler_served();
  NPU_ASSERT_OK(npu_device_release(device));
  NPU_ASSERT_OK(npu_model_release(model));
}

static void test_compiled_reshape(void)
{
  gchar *path = g_build_filename(g_getenv("NPU_TEST_MODELS"), "good.onnx", NULL);
  static const int64_t batches[3][NPU_MAX_RANK] = {{2, 3, 8, 8}, {3, 3, 8, 8}, {4, 3, 8, 8}};
  check_compiled_reshape(path, batches);
  g_free(path);
}

/* PP-OCR's detector at three image sizes, when cached. */
static void test_compiled_reshape_ocr(void)
{
  const char *dir = g_getenv("NPU_OCR_MODELS");
  gchar *fallback = g_build_filename(g_get_home_dir(), ".cache", "gst-npu", "ocr", "package",
                                     "assets", NULL);
  gchar *path = g_build_filename(dir ? dir : fallback, "ch_PP-OCRv4_det_infer.onnx", NULL);
  static const int64_t sizes[3][NPU_MAX_RANK] = {
      {1, 3, 96, 160}, {1, 3, 128, 160}, {1, 3, 96, 192}};
  if (g_file_test(path, G_FILE_TEST_EXISTS))
    check_compiled_reshape(path, sizes);
  else
    g_test_skip("the PP-OCR models are not cached (tests/models/fetch_assets.sh fetches them)");
  g_free(path);
  g_free(fallback);
}

/* One model, many batch sizes on the CPU backend. Re-plans of one context
 * for other batch sizes, in order, each checked against a plan made at its
 * batch alone (oneDNN may run another Winograd variant there: rounding
 * apart) and for the packings it added, which the backend's registry
 * counts (`weighted` once the first plan is made, at most `added[i]` more
 * once re-planned at batches[i]), and for its arena: a batch no larger than
 * an earlier one takes the context's arena, a larger one makes a new one.
 * `image`: the input's shape past the batch. */
static void replan_in_order(npu_model *model, npu_device *cpu, const char *path,
                            const int64_t image[3], size_t weighted, const int64_t *batches,
                            const size_t *added, size_t count, const model_run *alone,
                            const int64_t *all_batches)
{
  npu_tensor_info input;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &input));
  int64_t dims[NPU_MAX_RANK] = {batches[0], image[0], image[1], image[2]};
  npu_tensor_info first = input;
  memcpy(first.dims, dims, first.rank * sizeof dims[0]);
  npu_context *context;
  NPU_ASSERT_OK(npu_context_create(model, cpu, &first, 1, &context));
  size_t first_packings, first_bytes, packings, bytes;
  cpu_packed_weights_totals(&first_packings, &first_bytes);
  g_assert_cmpuint(first_packings, ==, weighted);
  /* every weight packed: the originals left memory (read back from the file
   * where a re-plan packs them again) */
  size_t resident, droppable;
  npu_weight_store_totals(npu_model_weight_store(model), &resident, &droppable);
  g_assert_cmpuint(droppable, >, 0);
  g_assert_cmpuint(resident, ==, 0);
  int64_t largest = batches[0];
  for (size_t i = 1; i < count; i++) {
    dims[0] = batches[i];
    npu_device_stats before, after;
    NPU_ASSERT_OK(npu_device_get_stats(cpu, &before));
    reshape_to(context, &input, dims);
    NPU_ASSERT_OK(npu_device_get_stats(cpu, &after));
    npu_context_stats planned;
    NPU_ASSERT_OK(npu_context_get_stats(context, &planned));
    /* a batch no larger than one planned before runs in the context's
     * arena (already faulted in), allocating none */
    if (batches[i] <= largest)
      g_assert_cmpuint(after.bytes_allocated - before.bytes_allocated, <, planned.arena_bytes);
    else
      g_assert_cmpuint(after.bytes_allocated - before.bytes_allocated, >=, planned.arena_bytes);
    largest = MAX(largest, batches[i]);
    model_run reshaped = {0};
    run_context(model, cpu, context, &reshaped);
    size_t a = 0;
    while (all_batches[a] != batches[i])
      a++;
    assert_same_outputs(path, &alone[a], &reshaped, 1e-5);
    model_run_clear(&reshaped);
    cpu_packed_weights_totals(&packings, &bytes);
    g_assert_cmpuint(packings - first_packings, <=, added[i]);
  }
  g_test_message("%s planned at batch %lld: %zu packings of %zu bytes, %zu added by re-plans",
                 path, (long long)batches[0], first_packings, first_bytes,
                 packings - first_packings);
  NPU_ASSERT_OK(npu_context_destroy(context));
}

/* Each plan made at a batch (`alone`, run in slices of batch 1 where
 * layers are large: build_planned_slices) gives every image the outputs a
 * plan at batch 1 gives it alone. */
static void assert_batches_match_images(npu_model *model, npu_device *cpu, const char *path,
                                        const int64_t image[3], const int64_t *batches,
                                        size_t count, const model_run *alone)
{
  npu_tensor_info input;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &input));
  int64_t dims[NPU_MAX_RANK] = {1, image[0], image[1], image[2]};
  memcpy(input.dims, dims, input.rank * sizeof dims[0]);
  npu_context *context;
  NPU_ASSERT_OK(npu_context_create(model, cpu, &input, 1, &context));
  size_t image_elements = elements_of(&input);
  for (size_t i = 0; i < count; i++)
    for (int64_t k = 0; k < batches[i]; k++) {
      model_run one = {0};
      run_context_skipping(model, cpu, context, (size_t)k * image_elements, &one);
      for (uint32_t o = 0; o < one.output_count; o++)
        g_assert_cmpfloat(relative_error(one.outputs[o],
                                         alone[i].outputs[o] + (size_t)k * one.output_floats[o],
                                         one.output_floats[o]),
                          <, 1e-5);
      model_run_clear(&one);
    }
  g_test_message("%s: every image of batches up to %lld as at batch 1 alone", path,
                 (long long)batches[count - 1]);
  NPU_ASSERT_OK(npu_context_destroy(context));
}

/* A context planned at batch 1 and re-planned at a multiple of it runs its
 * batch-1 kernels a slice at a time at once, and whole-batch kernels on the
 * same packed weights once the background compiler has made them
 * (npu_context_settle): outputs are those of a plan made at that batch
 * alone before the swap (the background compiler held back) and after it,
 * and no weights are packed again. A context destroyed while its kernels
 * wait for the background compiler leaves cleanly. */
static void check_whole_batch_swapped_in(npu_model *model, npu_device *cpu, const char *path,
                                         const int64_t image[3], size_t weighted,
                                         const int64_t *batches, size_t count,
                                         const model_run *alone)
{
  npu_tensor_info input;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &input));
  int64_t dims[NPU_MAX_RANK] = {1, image[0], image[1], image[2]};
  npu_context *context;
  npu_tensor_info first = input;
  memcpy(first.dims, dims, first.rank * sizeof dims[0]);
  NPU_ASSERT_OK(npu_context_create(model, cpu, &first, 1, &context));
  held_plan plan;
  for (size_t i = 0; i < count; i++) {
    hold_background(&plan);
    dims[0] = batches[i];
    reshape_to(context, &input, dims);
    model_run sliced = {0}, whole = {0};
    run_context(model, cpu, context, &sliced);
    assert_same_outputs(path, &alone[i], &sliced, 1e-5);
    release_background(&plan);
    NPU_ASSERT_OK(npu_context_settle(context));
    run_context(model, cpu, context, &whole);
    assert_same_outputs(path, &alone[i], &whole, 1e-5);
    size_t packings, bytes;
    cpu_packed_weights_totals(&packings, &bytes);
    g_assert_cmpuint(packings, ==, weighted);
    model_run_clear(&sliced);
    model_run_clear(&whole);
  }
  hold_background(&plan);
  dims[0] = 2 * batches[count - 1];
  reshape_to(context, &input, dims);
  NPU_ASSERT_OK(npu_context_destroy(context));
  release_background(&plan);
}

/* A re-plan test's model (of the test models), its first input and the CPU device. */
typedef struct replan_test {
  gchar *path;
  npu_model *model;
  npu_device *cpu;
  npu_tensor_info input;
} replan_test;

static replan_test open_replan_test(const char *file)
{
  replan_test t = {g_build_filename(g_getenv("NPU_TEST_MODELS"), file, NULL), NULL, NULL, {0}};
  NPU_ASSERT_OK(npu_model_load_file(t.path, &t.model));
  NPU_ASSERT_OK(npu_model_input_info(t.model, 0, &t.input));
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &t.cpu));
  return t;
}

/* Releases it and its runs at each shape alone. */
static void close_replan_test(replan_test *t, model_run *alone, size_t count)
{
  for (size_t i = 0; i < count; i++)
    model_run_clear(&alone[i]);
  g_free(alone);
  NPU_ASSERT_OK(npu_device_release(t->cpu));
  NPU_ASSERT_OK(npu_model_release(t->model));
  g_free(t->path);
}

/* One order of re-plans: the first plan's batch, then the others. */
typedef struct replan_order {
  const int64_t *batches;
  const size_t *added;
  size_t count;
} replan_order;

/* `file` (of the test models, input shape past the batch: `image`, with
 * `weighted` packings once planned) run at each of `batches` in a plan of
 * its own, then re-planned from batch 1 before and after the background
 * swap-in, and in each of `orders`, against those runs. */
static void check_batch_replans(const char *file, const int64_t image[3], size_t weighted,
                                const int64_t *batches, size_t count,
                                const replan_order *orders, size_t order_count)
{
  replan_test t = open_replan_test(file);
  model_run *alone = g_new0(model_run, count);
  for (size_t i = 0; i < count; i++) { /* each alone: its packings gone with it */
    npu_tensor_info shape = t.input;
    int64_t dims[NPU_MAX_RANK] = {batches[i], image[0], image[1], image[2]};
    memcpy(shape.dims, dims, shape.rank * sizeof dims[0]);
    run_model(t.model, t.cpu, &shape, &alone[i]);
    size_t packings, bytes;
    cpu_packed_weights_totals(&packings, &bytes);
    g_assert_cmpuint(packings, ==, 0);
  }
  assert_batches_match_images(t.model, t.cpu, t.path, image, batches, count, alone);
  check_whole_batch_swapped_in(t.model, t.cpu, t.path, image, weighted, batches, count, alone);
  for (size_t o = 0; o < order_count; o++)
    replan_in_order(t.model, t.cpu, t.path, image, weighted, orders[o].batches, orders[o].added,
                    orders[o].count, alone, batches);
  close_replan_test(&t, alone, count);
}

/* A context planned at batch 1 re-plans 2, 3, 8 and 16 on the kernels of
 * batch 1, run a slice at a time (residual addend, plain input and output
 * reordered per slice): no weights packed again. One planned at 8 re-plans
 * 16 in slices of 8 (none packed); at 1 the 3x3 convolutions' Winograd
 * weights of batch 8 may be refused (oneDNN's Winograd formats depend on
 * the batch: so on 2 threads) and packed again for batch 1, which 3 then
 * runs in slices. Outputs are those of a plan made at that batch alone, and
 * every image's those of batch 1. Five packings: the five convolutions'
 * weights. */
static void test_cpu_reshape_shares_packed_weights(void)
{
  static const int64_t batches[] = {1, 2, 3, 8, 16}, image[] = {16, 28, 28};
  static const int64_t from_one[] = {1, 2, 3, 8, 16}, from_eight[] = {8, 16, 1, 3};
  static const size_t none_added[] = {0, 0, 0, 0, 0}, winograd_added[] = {0, 0, 2, 2};
  static const replan_order orders[] = {{from_one, none_added, 5},
                                        {from_eight, winograd_added, 4}};
  check_batch_replans("replan_convs.onnx", image, 5, batches, 5, orders, 2);
}

/* A convolution on 20x20 positions and a deconvolution planned at batch 1
 * re-plan 2, 4 and 8 in slices of batch 1 (DNNL_VERBOSE=2 shows cache hits
 * of the batch-1 primitives only): outputs those of a plan made at that
 * batch alone, no weights packed again (two packings: the convolution's and
 * the deconvolution's). */
static void test_cpu_reshape_slices_deconvolution(void)
{
  static const int64_t batches[] = {1, 2, 4, 8}, image[] = {16, 20, 20};
  static const size_t none_added[] = {0, 0, 0, 0};
  static const replan_order in_order = {batches, none_added, 4};
  check_batch_replans("replan_deconv.onnx", image, 2, batches, 4, &in_order, 1);
}

/* The same model at 14x14 (every layer too small for slices to stay):
 * re-planned from batch 1, its layers run slices of batch 1 until their
 * whole-batch primitives are swapped in, outputs equal before and after
 * (check_whole_batch_swapped_in), and no weights are packed again where
 * oneDNN takes the batch-1 packing for the whole batch. */
static void test_cpu_reshape_swaps_in_small_layers(void)
{
  static const int64_t batches[] = {1, 2, 3, 8, 16}, image[] = {16, 14, 14};
  static const size_t none_added[] = {0, 0, 0, 0, 0};
  static const replan_order from_one = {batches, none_added, 5};
  check_batch_replans("replan_small.onnx", image, 5, batches, 5, &from_one, 1);
}

/* Residual Adds summed by a Winograd convolution and moved out of channel
 * blocks into 24 channels channels-last (replan_residuals.onnx), planned at
 * batch 1 and re-planned at 2, 3 and 8 in slices of batch 1: every slice's
 * addend copied before, every slice unblocked after its primitive; outputs
 * those of a plan made at that batch alone. Seven packings: its seven
 * convolutions' weights. */
static void test_cpu_reshape_slices_residuals(void)
{
  static const int64_t batches[] = {1, 2, 3, 8}, image[] = {16, 28, 28};
  static const size_t none_added[] = {0, 0, 0, 0};
  static const replan_order in_order = {batches, none_added, 4};
  check_batch_replans("replan_residuals.onnx", image, 7, batches, 4, &in_order, 1);
}

/* A context planned at one shape of `file` and re-planned at others
 * (`shapes`, of the input's rank, the first plan's last), the background
 * compiler held back: its convolutions and products run the direct loops
 * on the first plan's packed weights (cpu_direct_conv_launches counts
 * them), outputs equal a plan made at that shape alone; after
 * npu_context_settle oneDNN's primitives for the shape run instead (no more
 * direct launches), outputs equal again. No weights are packed again
 * throughout. Going back to the first shape re-plans nothing. Destroyed
 * while its kernels wait for the background compiler (re-planned at
 * `last`), it leaves cleanly. */
static void check_direct_replans(const char *file, const int64_t (*shapes)[4], size_t count,
                                 const int64_t *last)
{
  replan_test t = open_replan_test(file);
  model_run *alone = g_new0(model_run, count);
  for (size_t i = 0; i < count; i++) {
    npu_tensor_info shape = t.input;
    memcpy(shape.dims, shapes[i], t.input.rank * sizeof shapes[i][0]);
    run_model(t.model, t.cpu, &shape, &alone[i]);
  }
  npu_context *context;
  npu_tensor_info first = t.input;
  memcpy(first.dims, shapes[0], t.input.rank * sizeof shapes[0][0]);
  NPU_ASSERT_OK(npu_context_create(t.model, t.cpu, &first, 1, &context));
  size_t packings, bytes, first_packings;
  cpu_packed_weights_totals(&first_packings, &bytes);
  g_assert_cmpuint(first_packings, >, 0);
  held_plan plan;
  for (size_t i = 1; i < count; i++) {
    bool new_shape = i < count - 1;
    hold_background(&plan);
    reshape_to(context, &t.input, shapes[i]);
    uint64_t launches = cpu_direct_conv_launches();
    model_run direct = {0}, settled = {0};
    run_context(t.model, t.cpu, context, &direct);
    assert_same_outputs(t.path, &alone[i], &direct, 1e-5);
    if (new_shape)
      g_assert_cmpuint(cpu_direct_conv_launches(), >, launches);
    else
      g_assert_cmpuint(cpu_direct_conv_launches(), ==, launches);
    release_background(&plan);
    NPU_ASSERT_OK(npu_context_settle(context));
    launches = cpu_direct_conv_launches();
    run_context(t.model, t.cpu, context, &settled);
    g_assert_cmpuint(cpu_direct_conv_launches(), ==, launches);
    assert_same_outputs(t.path, &alone[i], &settled, 1e-5);
    cpu_packed_weights_totals(&packings, &bytes);
    g_assert_cmpuint(packings, ==, first_packings);
    model_run_clear(&direct);
    model_run_clear(&settled);
  }
  hold_background(&plan);
  reshape_to(context, &t.input, last);
  NPU_ASSERT_OK(npu_context_destroy(context));
  release_background(&plan);
  close_replan_test(&t, alone, count);
}

/* replan_images.onnx (every kind of window the direct loops take) at odd,
 * tiny and larger image sizes and other batches. */
static void test_cpu_reshape_image_sizes(void)
{
  static const int64_t shapes[][4] = {{1, 3, 32, 48}, {1, 3, 20, 20}, {2, 3, 37, 29},
                                      {3, 3, 64, 64}, {1, 3, 9, 7},   {1, 3, 32, 48}};
  static const int64_t last[4] = {1, 3, 40, 56};
  check_direct_replans("replan_images.onnx", shapes, sizeof shapes / sizeof shapes[0], last);
}

/* replan_tokens.onnx (MatMuls with a bias row and a residual, a Gemm with
 * C) at other sequence lengths and batches. */
static void test_cpu_reshape_sequence_lengths(void)
{
  static const int64_t shapes[][4] = {{1, 10, 32}, {1, 23, 32}, {3, 7, 32},
                                      {2, 64, 32}, {1, 1, 32},  {1, 10, 32}};
  static const int64_t last[4] = {2, 33, 32};
  check_direct_replans("replan_tokens.onnx", shapes, sizeof shapes / sizeof shapes[0], last);
}

/* A classifier head (replan_head.onnx: 1x1 convolutions, the second into 24
 * channels channels-last, then a Gemm of 1000 outputs) planned at batch 1
 * and re-planned at 2, 3, 8 and 16: the Gemm runs batch 1's matmul a row
 * at a time until the whole batch's is compiled in the background; outputs
 * those of a plan made at that batch alone before and after the swap
 * (check_whole_batch_swapped_in), no weights packed again (three packings:
 * the two convolutions' and the Gemm's). */
static void test_cpu_reshape_slices_gemm(void)
{
  static const int64_t batches[] = {1, 2, 3, 8, 16}, image[] = {16, 14, 14};
  static const size_t none_added[] = {0, 0, 0, 0, 0};
  static const replan_order from_one = {batches, none_added, 5};
  check_batch_replans("replan_head.onnx", image, 3, batches, 5, &from_one, 1);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  add_test_backend();
  g_test_add_func("/partition/small-model-splits-in-two", test_small_model_splits_in_two);
  g_test_add_func("/partition/ocr-models", test_ocr_models);
  g_test_add_func("/partition/zoo-models", test_zoo_models);
  g_test_add_func("/partition/refused-kernels-run-on-the-host",
                  test_refused_kernels_run_on_the_host);
  g_test_add_func("/partition/any-channel-block", test_any_channel_block);
  g_test_add_func("/partition/pitched-copy-without-backend-support",
                  test_pitched_copy_without_backend_support);
  g_test_add_func("/partition/compiled/whole-model", test_compiled_whole_model);
  g_test_add_func("/partition/compiled/partition", test_compiled_partition);
  g_test_add_func("/partition/compiled/refused-subgraph-falls-back",
                  test_refused_subgraph_falls_back);
  g_test_add_func("/partition/compiled/reshape", test_compiled_reshape);
  g_test_add_func("/partition/compiled/reshape-ocr", test_compiled_reshape_ocr);
  g_test_add_func("/partition/cpu-reshape-shares-packed-weights",
                  test_cpu_reshape_shares_packed_weights);
  g_test_add_func("/partition/cpu-reshape-slices-residuals", test_cpu_reshape_slices_residuals);
  g_test_add_func("/partition/cpu-reshape-slices-deconvolution",
                  test_cpu_reshape_slices_deconvolution);
  g_test_add_func("/partition/cpu-reshape-swaps-in-small-layers",
                  test_cpu_reshape_swaps_in_small_layers);
  g_test_add_func("/partition/cpu-reshape-slices-gemm", test_cpu_reshape_slices_gemm);
  g_test_add_func("/partition/cpu-reshape-image-sizes", test_cpu_reshape_image_sizes);
  g_test_add_func("/partition/cpu-reshape-sequence-lengths",
                  test_cpu_reshape_sequence_lengths);
  return g_test_run();
}
