/* Whole models on the Vulkan device: what its kernels take runs there, the
 * rest on the CPU backend through the runtime's partitioning (copies on the
 * Vulkan stream, waits both ways). Outputs must equal the CPU backend's
 * alone within 1e-5 relative L2, or within twice the CPU's own difference
 * where that is larger: the same model with every operator refused by the
 * device ("vulkan-refusing", all on the host in the layouts a partitioned
 * plan gives the host) differs from the CPU alone by rounding already
 * (1.1e-5 on PP-OCRv4 det). The partition and each device's time per run
 * are printed. The loader's test model always; PP-OCRv4 det/rec and
 * squeezenet when they are cached, each with at most the subgraphs its
 * operators need now (a kernel lost would add hand-overs); MobileNetV2,
 * ResNet-50 and YOLOv8n from the zoo: their partition planned always, run
 * against the CPU in /vulkan/vision-models (many minutes on lavapipe:
 * meson test vulkan_vision_models, suite zoo). */
#include <dlfcn.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "npu_internal.h"
#include "vk_test.h"
#include "vulkan/vk_internal.h"

#define MAX_OUTPUTS 8

typedef struct model_outputs {
  uint32_t count;
  float *values[MAX_OUTPUTS];
  size_t floats[MAX_OUTPUTS];
  npu_context_stats stats;
  double ms_per_run;
} model_outputs;

static size_t floats_in(const npu_tensor_info *info)
{
  size_t count = 1;
  for (uint32_t d = 0; d < info->rank; d++)
    count *= (size_t)info->dims[d];
  return count;
}

/* Runs `model` on `device` at `shape` with `input` (runs times, on a
 * stream of the device), keeping the outputs of the last run. */
static void run_on(npu_model *model, npu_device *device, const npu_tensor_info *shape,
                   const float *input, size_t input_floats, int runs, model_outputs *out)
{
  npu_context *context;
  NPU_ASSERT_OK(npu_context_create(model, device, shape, 1, &context));
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  npu_buffer *in, *outs[MAX_OUTPUTS];
  NPU_ASSERT_OK(npu_buffer_alloc(device, input_floats * sizeof(float), &in));
  NPU_ASSERT_OK(npu_memcpy_h2d(in, 0, input, input_floats * sizeof(float)));
  NPU_ASSERT_OK(npu_model_output_count(model, &out->count));
  g_assert_cmpuint(out->count, <=, MAX_OUTPUTS);
  for (uint32_t o = 0; o < out->count; o++) {
    npu_tensor_info info;
    NPU_ASSERT_OK(npu_context_output_info(context, o, &info));
    g_assert_cmpint(info.dtype, ==, NPU_DTYPE_FLOAT32);
    out->floats[o] = floats_in(&info);
    NPU_ASSERT_OK(npu_buffer_alloc(device, out->floats[o] * sizeof(float), &outs[o]));
  }
  /* The first run warms up (pipelines, plans); the others are timed. */
  gint64 start = 0;
  for (int r = 0; r < runs; r++) {
    if (r == 1) { /* the warm-up run done first, so that it is not timed */
      NPU_ASSERT_OK(npu_stream_synchronize(stream));
      start = g_get_monotonic_time();
    }
    NPU_ASSERT_OK(npu_context_run(context, stream, &in, outs));
  }
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  out->ms_per_run = runs > 1 ? (double)(g_get_monotonic_time() - start) / 1000.0 / (runs - 1)
                             : 0;
  for (uint32_t o = 0; o < out->count; o++) {
    out->values[o] = g_new(float, out->floats[o]);
    NPU_ASSERT_OK(npu_memcpy_d2h(out->values[o], outs[o], 0, out->floats[o] * sizeof(float)));
    NPU_ASSERT_OK(npu_buffer_release(outs[o]));
  }
  NPU_ASSERT_OK(npu_context_get_stats(context, &out->stats));
  NPU_ASSERT_OK(npu_buffer_release(in));
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_context_destroy(context));
}

static double relative_l2(const float *reference, const float *other, size_t count)
{
  double diff = 0, norm = 0;
  for (size_t i = 0; i < count; i++) {
    double d = (double)reference[i] - other[i];
    diff += d * d;
    norm += (double)reference[i] * reference[i];
  }
  return sqrt(diff / (norm > 1e-20 ? norm : 1.0));
}

/* The model on the CPU and on the Vulkan device: the same outputs. Returns
 * the Vulkan run's statistics. */
static npu_context_stats compare_with_cpu(npu_device *device, const char *path,
                                          const int64_t *dims, uint32_t rank)
{
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_tensor_info shape;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &shape));
  shape.rank = rank;
  memcpy(shape.dims, dims, rank * sizeof *dims);
  size_t input_floats = floats_in(&shape);
  float *input = g_new(float, input_floats);
  GRand *rand = g_rand_new_with_seed(16);
  for (size_t i = 0; i < input_floats; i++)
    input[i] = (float)g_rand_double_range(rand, -1.0, 1.0);
  g_rand_free(rand);
  npu_device *cpu;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &cpu));
  npu_device *refusing;
  NPU_ASSERT_OK(npu_device_open_by_backend("vulkan-refusing", 0, &refusing));
  model_outputs on_cpu = {0}, on_host = {0}, on_vulkan = {0};
  run_on(model, cpu, &shape, input, input_floats, 2, &on_cpu);
  run_on(model, refusing, &shape, input, input_floats, 1, &on_host);
  run_on(model, device, &shape, input, input_floats, 2, &on_vulkan);
  const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  for (uint32_t o = 0; o < on_cpu.count; o++) {
    double error = relative_l2(on_cpu.values[o], on_vulkan.values[o], on_cpu.floats[o]);
    double floor = relative_l2(on_cpu.values[o], on_host.values[o], on_cpu.floats[o]);
    g_test_message("%s output %u: relative L2 difference %.2e (the CPU's own: %.2e)", name, o,
                   error, floor);
    g_assert_cmpfloat(error, <=, MAX(1e-5, 2 * floor));
    g_free(on_cpu.values[o]);
    g_free(on_host.values[o]);
    g_free(on_vulkan.values[o]);
  }
  g_assert_cmpuint(on_host.stats.host_kernels, ==, on_host.stats.kernels);
  NPU_ASSERT_OK(npu_device_release(refusing));
  const npu_context_stats *s = &on_vulkan.stats;
  g_test_message("%s on Vulkan: %u subgraphs, %u of %u kernels on the CPU, %llu bytes copied "
                 "per run; %.1f ms a run (CPU backend alone: %.1f ms)",
                 name, s->subgraphs, s->host_kernels, s->kernels,
                 (unsigned long long)s->transfer_bytes, on_vulkan.ms_per_run, on_cpu.ms_per_run);
  g_assert_cmpuint(on_cpu.stats.host_kernels, ==, 0);
  g_assert_cmpuint(s->host_kernels, <, s->kernels); /* some of it ran on the device */
  NPU_ASSERT_OK(npu_device_release(cpu));
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(input);
  return on_vulkan.stats;
}

/* The loader's model (Conv + Relu, pooling, Reshape, Gemm) all on the
 * device; and partitioned, on a Vulkan backend that declines Gemm: Conv to
 * Reshape on the device, Gemm on the CPU. */
static void test_small_model(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  gchar *path = g_build_filename(g_getenv("NPU_TEST_MODELS"), "good.onnx", NULL);
  const int64_t dims[] = {2, 3, 8, 8};
  npu_context_stats stats = compare_with_cpu(device, path, dims, 4);
  g_assert_cmpuint(stats.subgraphs, ==, 1);
  g_assert_cmpuint(stats.host_kernels, ==, 0);
  npu_device *without_gemm;
  NPU_ASSERT_OK(npu_device_open_by_backend("vulkan-without-gemm", 0, &without_gemm));
  stats = compare_with_cpu(without_gemm, path, dims, 4);
  g_assert_cmpuint(stats.subgraphs, ==, 2);
  g_assert_cmpuint(stats.host_kernels, ==, 1);
  NPU_ASSERT_OK(npu_device_release(without_gemm));
  g_free(path);
  NPU_ASSERT_OK(npu_device_release(device));
}

typedef struct replay_counts {
  guint64 runs, recorded, descriptor_updates;
} replay_counts;

static replay_counts counts_of(npu_device *device)
{
  npu_hal_device *hal = npu_device_hal(device);
  return (replay_counts){atomic_load(&hal->replay_counts.runs),
                         atomic_load(&hal->replay_counts.recorded),
                         atomic_load(&hal->replay_counts.descriptor_updates)};
}

/* Runs the context from `in` into `out` and waits; returns the outputs' floats. */
static float *run_once(npu_context *context, npu_stream *stream, npu_buffer *in, npu_buffer *out,
                       size_t floats)
{
  NPU_ASSERT_OK(npu_context_run(context, stream, &in, &out));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  float *values = g_new(float, floats);
  NPU_ASSERT_OK(npu_memcpy_d2h(values, out, 0, floats * sizeof(float)));
  return values;
}

/* The backend's submissions go through this definition, which the test
 * binary's interposes on libvulkan's (real_queue_submit): while
 * `slow_submits` is set, each returns 2 ms late, as from a stream worker
 * preempted there (a loaded machine), long after the device has run it. */
static PFN_vkQueueSubmit real_queue_submit;
static atomic_bool slow_submits;

VKAPI_ATTR VkResult VKAPI_CALL vkQueueSubmit(VkQueue queue, uint32_t count,
                                             const VkSubmitInfo *submits, VkFence fence)
{
  VkResult result = real_queue_submit(queue, count, submits, fence);
  if (atomic_load(&slow_submits))
    usleep(2000);
  return result;
}

/* The loader's model recorded on its first run and replayed after: later
 * runs record nothing. Input and output buffers alternating as a pool's
 * do: where the device updates descriptor sets after bind, only those are
 * rewritten; elsewhere the second pair gets a recording of its own, once.
 * Then an input imported from host memory. The outputs stay the same.
 * `slow` (non-NULL): with slow submissions, where a synchronize that
 * returned before the stream had taken back its finished runs left their
 * slots busy, and the next run recorded another (1 run in 100 under load). */
static void test_replay(gconstpointer slow)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  atomic_store(&slow_submits, slow != NULL);
  gchar *path = g_build_filename(g_getenv("NPU_TEST_MODELS"), "good.onnx", NULL);
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_tensor_info shape = {.dtype = NPU_DTYPE_FLOAT32, .rank = 4, .dims = {2, 3, 8, 8}};
  npu_context *context;
  NPU_ASSERT_OK(npu_context_create(model, device, &shape, 1, &context));
  npu_tensor_info out_info;
  NPU_ASSERT_OK(npu_context_output_info(context, 0, &out_info));
  size_t in_floats = floats_in(&shape), out_floats = floats_in(&out_info);
  float *input = g_new(float, in_floats);
  for (size_t i = 0; i < in_floats; i++)
    input[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  npu_buffer *in[2], *out[2];
  for (int b = 0; b < 2; b++) {
    NPU_ASSERT_OK(npu_buffer_alloc(device, in_floats * sizeof(float), &in[b]));
    NPU_ASSERT_OK(npu_memcpy_h2d(in[b], 0, input, in_floats * sizeof(float)));
    NPU_ASSERT_OK(npu_buffer_alloc(device, out_floats * sizeof(float), &out[b]));
  }
  replay_counts start = counts_of(device);
  float *first = run_once(context, stream, in[0], out[0], out_floats);
  replay_counts recorded = counts_of(device);
  g_assert_cmpuint(recorded.runs - start.runs, ==, 1);
  g_assert_cmpuint(recorded.recorded - start.recorded, ==, 1);
  for (int r = 0; r < 3; r++) {
    float *again = run_once(context, stream, in[0], out[0], out_floats);
    g_assert_cmpmem(again, out_floats * sizeof(float), first, out_floats * sizeof(float));
    g_free(again);
  }
  replay_counts replayed = counts_of(device);
  g_assert_cmpuint(replayed.runs - recorded.runs, ==, 3);
  g_assert_cmpuint(replayed.recorded, ==, recorded.recorded);
  g_assert_cmpuint(replayed.descriptor_updates, ==, recorded.descriptor_updates);
  /* Other buffers, alternating, as a pool's frames come. */
  replay_counts rebound = replayed;
  gboolean updatable = npu_device_hal(device)->update_after_bind;
  for (int round = 0; round < 2; round++) {
    replay_counts before = counts_of(device);
    for (int r = 0; r < 4; r++) {
      float *other = run_once(context, stream, in[(r + 1) % 2], out[(r + 1) % 2], out_floats);
      g_assert_cmpmem(other, out_floats * sizeof(float), first, out_floats * sizeof(float));
      g_free(other);
    }
    rebound = counts_of(device);
    if (round == 0) {
      g_assert_cmpuint(rebound.descriptor_updates, >, before.descriptor_updates);
      g_assert_cmpuint(rebound.recorded - before.recorded, ==, updatable ? 0 : 1);
    } else { /* every pair has its recording now */
      g_assert_cmpuint(rebound.recorded, ==, before.recorded);
      if (!updatable)
        g_assert_cmpuint(rebound.descriptor_updates, ==, before.descriptor_updates);
    }
  }
  /* An input in imported host memory: the buffer starts inside its first
   * imported page (at g_malloc's address), which the bindings follow. */
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  if (props.caps.host_import) {
    float *host = g_new(float, in_floats + 3);
    memcpy(host + 3, input, in_floats * sizeof(float));
    npu_buffer *imported;
    NPU_ASSERT_OK(npu_buffer_import_host(device, host + 3, in_floats * sizeof(float), NULL, NULL,
                                         &imported));
    float *from_host = run_once(context, stream, imported, out[0], out_floats);
    g_assert_cmpmem(from_host, out_floats * sizeof(float), first, out_floats * sizeof(float));
    g_free(from_host);
    NPU_ASSERT_OK(npu_buffer_release(imported));
    g_free(host);
  }
  g_test_message("runs %llu, recorded %llu, descriptor sets rewritten %llu (update after bind: %s)",
                 (unsigned long long)(rebound.runs - start.runs),
                 (unsigned long long)(rebound.recorded - start.recorded),
                 (unsigned long long)(rebound.descriptor_updates - start.descriptor_updates),
                 updatable ? "yes" : "no");
  for (int b = 0; b < 2; b++) {
    NPU_ASSERT_OK(npu_buffer_release(in[b]));
    NPU_ASSERT_OK(npu_buffer_release(out[b]));
  }
  g_free(first);
  g_free(input);
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_context_destroy(context));
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(path);
  NPU_ASSERT_OK(npu_device_release(device));
  atomic_store(&slow_submits, false);
}

static gchar *cached_model(const char *subdir, const char *file)
{
  gchar *path = g_build_filename(g_get_home_dir(), ".cache", "gst-npu", subdir, file, NULL);
  if (g_file_test(path, G_FILE_TEST_EXISTS))
    return path;
  g_free(path);
  return NULL;
}

typedef struct cached_case {
  const char *subdir, *file;
  int64_t dims[4];
  uint32_t max_subgraphs, max_host_kernels;
} cached_case;

/* Runs those of `models` that are cached; skips the test when none is. */
static void run_cached(const cached_case *models, size_t count, const char *missing)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  guint done = 0;
  for (size_t m = 0; m < count; m++) {
    gchar *path = cached_model(models[m].subdir, models[m].file);
    if (!path)
      continue;
    npu_context_stats stats = compare_with_cpu(device, path, models[m].dims, 4);
    g_assert_cmpuint(stats.subgraphs, <=, models[m].max_subgraphs);
    g_assert_cmpuint(stats.host_kernels, <=, models[m].max_host_kernels);
    done++;
    g_free(path);
  }
  if (!done)
    g_test_skip(missing);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* Real models, small inputs where they take any (lavapipe is slow). */
static void test_cached_models(void)
{
  static const cached_case models[] = {
      {"ocr/package/assets", "ch_PP-OCRv4_det_infer.onnx", {1, 3, 96, 160}, 1, 0},
      {"ocr/package/assets", "ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 96}, 1, 0},
      {"zoo", "squeezenet1_1.onnx", {1, 3, 224, 224}, 1, 0},
  };
  run_cached(models, G_N_ELEMENTS(models),
             "neither the PP-OCR models nor the zoo are cached "
             "(tests/models/fetch_assets.sh, tests/models/make_zoo.py)");
}

/* The vision models of issue 16 at their export's input size. */
static const cached_case vision_models[] = {
    {"zoo", "mobilenet_v2.onnx", {1, 3, 224, 224}, 1, 0},
    {"zoo", "resnet50.onnx", {1, 3, 224, 224}, 1, 0},
    {"zoo", "yolov8n.onnx", {1, 3, 640, 640}, 1, 0},
};

/* Their partition on the device (planned, not run: a run takes minutes on
 * lavapipe): printed for all, then checked. */
static void test_vision_partition(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_context_stats stats[G_N_ELEMENTS(vision_models)] = {{0}};
  bool cached[G_N_ELEMENTS(vision_models)] = {false};
  for (size_t m = 0; m < G_N_ELEMENTS(vision_models); m++) {
    gchar *path = cached_model(vision_models[m].subdir, vision_models[m].file);
    if (!path)
      continue;
    npu_model *model;
    NPU_ASSERT_OK(npu_model_load_file(path, &model));
    npu_tensor_info shape;
    NPU_ASSERT_OK(npu_model_input_info(model, 0, &shape));
    shape.rank = 4;
    memcpy(shape.dims, vision_models[m].dims, sizeof vision_models[m].dims);
    npu_context *context;
    NPU_ASSERT_OK(npu_context_create(model, device, &shape, 1, &context));
    NPU_ASSERT_OK(npu_context_get_stats(context, &stats[m]));
    cached[m] = true;
    g_test_message("%s planned on Vulkan: %u subgraphs, %u of %u kernels on the CPU",
                   vision_models[m].file, stats[m].subgraphs, stats[m].host_kernels,
                   stats[m].kernels);
    NPU_ASSERT_OK(npu_context_destroy(context));
    NPU_ASSERT_OK(npu_model_release(model));
    g_free(path);
  }
  for (size_t m = 0; m < G_N_ELEMENTS(vision_models); m++) {
    g_assert_cmpuint(stats[m].subgraphs, <=, vision_models[m].max_subgraphs);
    g_assert_cmpuint(stats[m].host_kernels, <=, vision_models[m].max_host_kernels);
  }
  if (!cached[0] && !cached[1] && !cached[2])
    g_test_skip("the zoo is not cached (tests/models/make_zoo.py)");
  NPU_ASSERT_OK(npu_device_release(device));
}

/* ... and run, against the CPU. */
static void test_vision_models(void)
{
  run_cached(vision_models, G_N_ELEMENTS(vision_models),
             "the zoo is not cached (tests/models/make_zoo.py)");
}

static bool refuse_every_operator(npu_hal_device *device, const npu_hal_op *op)
{
  (void)device;
  (void)op;
  return false;
}

static bool refuse_gemm(npu_hal_device *device, const npu_hal_op *op)
{
  return strcmp(op->op_type, "Gemm") != 0 && npu_vulkan_graph_ops.op_supported(device, op);
}

/* The Vulkan backend under another name, declining what `op_supported` does. */
static void add_declining_backend(const char *name, bool (*op_supported)(npu_hal_device *,
                                                                         const npu_hal_op *))
{
  npu_hal_graph_ops *graph = g_new(npu_hal_graph_ops, 1);
  npu_hal_backend *backend = g_new(npu_hal_backend, 1);
  *graph = npu_vulkan_graph_ops;
  graph->op_supported = op_supported;
  *backend = npu_vulkan_backend;
  backend->name = name;
  backend->graph = graph;
  NPU_ASSERT_OK(npu_hal_backend_add(backend));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  real_queue_submit = (PFN_vkQueueSubmit)dlsym(RTLD_NEXT, "vkQueueSubmit");
  g_assert_nonnull(real_queue_submit);
  /* Every kernel on the host, in the layouts a partitioned plan gives it. */
  add_declining_backend("vulkan-refusing", refuse_every_operator);
  add_declining_backend("vulkan-without-gemm", refuse_gemm);
  g_test_add_func("/vulkan/small-model", test_small_model);
  g_test_add_data_func("/vulkan/replay", NULL, test_replay);
  g_test_add_data_func("/vulkan/replay/slow-submit", "slow", test_replay);
  g_test_add_func("/vulkan/cached-models", test_cached_models);
  g_test_add_func("/vulkan/vision-partition", test_vision_partition);
  g_test_add_func("/vulkan/vision-models", test_vision_models);
  return g_test_run();
}
