/* CPU graph kernels: creation by operator name, and running a plan's
 * launches as one task on the stream (kernels parallelise inside with the
 * device's worker pool). */
#include <omp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu_stream.h"
#include "cpu_kernels.h"
#include "compile_profile.h"
#include "deferred_primitives.h"
#include "quant_kernels.h"

size_t cpu_tensor_elements(const npu_hal_tensor_desc *t)
{
  size_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++)
    n *= (size_t)t->dims[i];
  return n;
}

cpu_channel_walk cpu_channel_walk_of(const npu_hal_tensor_desc *t)
{
  size_t channels = (size_t)t->dims[1], pixels = 1;
  for (uint32_t d = 2; d < t->rank; d++)
    pixels *= (size_t)t->dims[d];
  if (t->layout == NPU_HAL_LAYOUT_CHANNELS_LAST)
    return (cpu_channel_walk){channels * pixels, channels, 0, 0};
  size_t block = npu_hal_channel_block(t); /* plain: blocks of one channel */
  return (cpu_channel_walk){channels * pixels, block, pixels * block, block};
}

void cpu_strides(const npu_hal_tensor_desc *t, int64_t *strides)
{
  int64_t s = 1;
  for (uint32_t i = t->rank; i-- > 0;) {
    strides[i] = s;
    s *= t->dims[i];
  }
}

void cpu_broadcast_strides(const npu_hal_tensor_desc *in, uint32_t rank, int64_t *strides)
{
  int64_t own[NPU_MAX_RANK];
  cpu_strides(in, own);
  uint32_t shift = rank - in->rank;
  for (uint32_t d = 0; d < rank; d++)
    strides[d] = d < shift || in->dims[d - shift] == 1 ? 0 : own[d - shift];
}

npu_status cpu_unsupported(const npu_hal_op *op, const char *why)
{
  return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "CPU backend: %s (opset %lld): %s", op->op_type,
                       (long long)op->opset, why);
}

/* oneDNN first: where it takes an operator, it is the fast path. */
static const cpu_kernel_entry *const tables[] = {
    cpu_deconv_patch_kernels, /* before oneDNN's ConvTranspose, for the cases it does badly */
    cpu_pointwise_kernels,    /* before oneDNN's Conv, for products too small for it */
    cpu_dnnl_kernels,
    cpu_elementwise_kernels,
    cpu_layout_kernels,
    cpu_nn_kernels,
    cpu_batch_norm_kernels,
    cpu_reduce_kernels,
    cpu_resize_kernels,
    cpu_index_map_kernels,
    cpu_scatter_kernels,
    cpu_pattern_kernels,
    cpu_sampling_kernels,
    cpu_recurrent_kernels,
    cpu_quantize_kernels,
    cpu_qdnnl_kernels, /* oneDNN's int8 convolution and matmul, before the reference loops */
    cpu_qmatmul_dnnl_kernels,
    cpu_integer_kernels,
};

size_t cpu_rows_per_task(size_t width)
{
  return width >= 4096 ? 1 : 4096 / (width ? width : 1);
}

/* Whether every tensor of `op` of rank 3 or more is in one relaid layout. */
static bool same_relaid_layout(const npu_hal_op *op)
{
  const npu_hal_tensor_desc *out = &op->outputs[0];
  if (out->layout == NPU_HAL_LAYOUT_PLAIN)
    return false;
  for (uint32_t i = 0; i < op->input_count + op->output_count; i++) {
    const npu_hal_tensor_desc *d = i < op->input_count ? &op->inputs[i]
                                                       : &op->outputs[i - op->input_count];
    if (d->dtype != NPU_DTYPE_UNDEFINED && d->rank >= 3 && !npu_hal_same_layout(d, out))
      return false; /* (lower ranks: Split's sizes) */
  }
  return true;
}

/* Whether every tensor of rank 3 or more is in one layout, with the batch
 * and channel counts of the first. */
static bool same_layout_batch_channels(const npu_hal_op *op)
{
  const npu_hal_tensor_desc *first = &op->inputs[0];
  for (uint32_t i = 1; i < op->input_count + op->output_count; i++) {
    const npu_hal_tensor_desc *d = i < op->input_count ? &op->inputs[i]
                                                       : &op->outputs[i - op->input_count];
    if (d->dtype != NPU_DTYPE_UNDEFINED && d->rank >= 3 &&
        (!npu_hal_same_layout(d, first) || d->rank != first->rank || d->dims[0] != first->dims[0] ||
         d->dims[1] != first->dims[1]))
      return false;
  }
  return first->rank >= 3;
}

/* Whether the inputs of the output's shape share its layout (fusion keeps
 * such chains in one layout) and broadcast inputs in channel blocks have
 * the output's blocks. */
static bool broadcast_layouts_fit(const npu_hal_op *op)
{
  const npu_hal_tensor_desc *out = &op->outputs[0];
  for (uint32_t i = 0; i < op->input_count; i++) {
    const npu_hal_tensor_desc *d = &op->inputs[i];
    if (d->dtype == NPU_DTYPE_UNDEFINED || cpu_tensor_elements(d) == 1)
      continue;
    bool same_shape = d->rank == out->rank &&
                      memcmp(d->dims, out->dims, d->rank * sizeof d->dims[0]) == 0;
    bool blocked = d->rank >= 3 && npu_hal_channel_block(d) > 1;
    if ((same_shape || blocked) && (!npu_hal_same_layout(d, out) || d->rank != out->rank))
      return false;
  }
  return true;
}

static bool works_on_channel_axis(const npu_hal_op *op)
{
  if (op->axes)
    return op->axes->axes[0] == 1;
  /* QLinearConcat resolves no axes (its first inputs are scalars): its
   * axis counts in the output's rank */
  if (strcmp(op->op_type, "QLinearConcat") != 0 || op->output_count == 0)
    return false;
  int64_t axis = op->attributes.get_int(op->attributes.node, "axis", 0);
  return axis == 1 || axis + (int64_t)op->outputs[0].rank == 1;
}

bool cpu_reduces_spatial_axes(const npu_hal_op *op)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (!op->axes || x->rank < 3 || op->axes->count != x->rank - 2)
    return false;
  for (uint32_t i = 0; i < op->axes->count; i++)
    if (op->axes->axes[i] != 2 + (int64_t)i)
      return false;
  return true;
}

/* Whether kernel entry `e` takes the layouts of `op`'s tensors. */
static bool entry_takes_layouts(const cpu_kernel_entry *e, const npu_hal_op *op)
{
  const npu_hal_tensor_desc *first = NULL;
  bool relaid = false, shared = true, blocked = false;
  for (uint32_t i = 0; i < op->input_count + op->output_count; i++) {
    const npu_hal_tensor_desc *d = i < op->input_count ? &op->inputs[i]
                                                       : &op->outputs[i - op->input_count];
    if (d->dtype == NPU_DTYPE_UNDEFINED || cpu_tensor_elements(d) == 1)
      continue; /* left out, or a scalar: the same in every layout */
    relaid |= d->layout != NPU_HAL_LAYOUT_PLAIN;
    uint32_t block = npu_hal_channel_block(d);
    blocked |= block > 1;
    if (d->layout != NPU_HAL_LAYOUT_PLAIN && (d->rank < 3 || block == 0 || d->dims[1] % block))
      return false; /* no layout for it, or a partial channel block */
    if (e->blocks && block > 1 && ((block & (block - 1)) || !(e->blocks & block)))
      return false; /* a block size the kernel has no format for */
    if (first)
      shared &= npu_hal_same_layout(d, first) && d->rank == first->rank &&
                memcmp(d->dims, first->dims, d->rank * sizeof d->dims[0]) == 0;
    else
      first = d;
  }
  return !relaid || e->layouts == CPU_LAYOUTS_ANY ||
         (e->layouts == CPU_LAYOUTS_SHARED && shared) ||
         (e->layouts == CPU_LAYOUTS_CHANNEL_AXIS && same_relaid_layout(op) &&
          works_on_channel_axis(op)) ||
         (e->layouts == CPU_LAYOUTS_SHARED_SPATIAL && same_layout_batch_channels(op)) ||
         (e->layouts == CPU_LAYOUTS_BROADCAST && broadcast_layouts_fit(op)) ||
         (e->layouts == CPU_LAYOUTS_SPATIAL_REDUCTION && cpu_reduces_spatial_axes(op)) ||
         (e->layouts == CPU_LAYOUTS_UNBLOCKED && !blocked);
}


static npu_hal_layout cpu_preferred_layout(npu_hal_device *device,
                                           const npu_hal_tensor_desc *tensor, uint32_t *block)
{
  (void)device;
  /* oneDNN's int8 convolutions run channels-last. */
  if (tensor->dtype == NPU_DTYPE_UINT8 || tensor->dtype == NPU_DTYPE_INT8)
    return NPU_HAL_LAYOUT_CHANNELS_LAST;
  return cpu_dnnl_preferred_layout(tensor, block);
}

static bool cpu_layout_supported(npu_hal_device *device, const npu_hal_op *op)
{
  (void)device;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const cpu_kernel_entry *e = tables[t]; e->op_type; e++)
      if (strcmp(e->op_type, op->op_type) == 0 && entry_takes_layouts(e, op))
        return true;
  return false;
}

static void cpu_kernel_destroy(npu_hal_kernel *kernel)
{
  if (kernel->free_params)
    kernel->free_params(kernel->params);
  else
    free(kernel->params);
  free(kernel);
}

/* oneDNN fixes a primitive's thread count when it is created, from the
 * creating thread's OpenMP setting: kernels are created under the device's
 * thread budget, and the caller's setting is given back. */
static npu_status create_in_thread_budget(const cpu_kernel_entry *e, const npu_hal_op *op,
                                          npu_hal_kernel *kernel)
{
  int saved = omp_get_max_threads();
  omp_set_num_threads((int)npu_cpu_thread_budget(kernel->device));
  npu_status status = e->create(op, kernel);
  omp_set_num_threads(saved);
  return status;
}

/* The first table whose kernel accepts this variant wins. */
static npu_status create_from_tables(npu_hal_device *device, const npu_hal_op *op,
                                     npu_hal_kernel **out)
{
  npu_status status = cpu_unsupported(op, "no CPU kernel");
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
    for (const cpu_kernel_entry *e = tables[t]; e->op_type; e++) {
      if (strcmp(e->op_type, op->op_type) != 0 || !entry_takes_layouts(e, op) ||
          (op->activation_count && !e->takes_activations))
        continue;
      npu_hal_kernel *kernel = calloc(1, sizeof *kernel);
      if (!kernel)
        return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
      kernel->device = device;
      snprintf(kernel->op_type, sizeof kernel->op_type, "%s", op->op_type);
      if (op->name && *op->name)
        snprintf(kernel->label, sizeof kernel->label, "node '%.80s' (%s)", op->name,
                 kernel->op_type);
      else
        snprintf(kernel->label, sizeof kernel->label, "%s", kernel->op_type);
      kernel->input_count = op->input_count;
      kernel->output_count = op->output_count;
      for (uint32_t i = 0; i < op->input_count && i < 8; i++)
        kernel->inputs[i] = op->inputs[i];
      for (uint32_t i = 0; i < op->output_count && i < 8; i++)
        kernel->outputs[i] = op->outputs[i];
      status = create_in_thread_budget(e, op, kernel);
      if (status == NPU_OK) {
        *out = kernel;
        return NPU_OK;
      }
      cpu_kernel_destroy(kernel);
      if (status != NPU_ERROR_NOT_SUPPORTED)
        return status;
    }
  }
  return status;
}

static npu_status cpu_kernel_create(npu_hal_device *device, const npu_hal_op *op,
                                    npu_hal_kernel **out)
{
  /* (Kernels keep the descs of the first 8 inputs; these read the rest by pointer.) */
  if (op->input_count > 8 && strcmp(op->op_type, "Concat") != 0 &&
      strcmp(op->op_type, "QLinearConcat") != 0 && strncmp(op->op_type, "QLinearConv", 11) != 0 &&
      strcmp(op->op_type, "QLinearBinaryLookup") != 0 &&
      strcmp(op->op_type, "QLinearMatMulBias") != 0)
    return cpu_unsupported(op, "more than 8 inputs");
  double started = cpu_compile_profile_clock();
  npu_status status = create_from_tables(device, op, out);
  cpu_compile_profile_add("kernel ", op->op_type, started);
  return status;
}


/* The plan's primitives compiled on the device's thread budget of threads. */
static void cpu_kernels_begin(npu_hal_device *device)
{
  cpu_deferred_begin(npu_cpu_thread_budget(device));
}

static npu_status cpu_kernels_ready(npu_hal_device *device)
{
  (void)device;
  npu_status status = cpu_deferred_compile();
  cpu_compile_profile_print("while planning");
  return status;
}

/* A re-plan's whole-batch primitives (dnnl_kernels.c: build_planned_slices). */
static void cpu_kernels_settle(npu_hal_device *device)
{
  (void)device;
  cpu_deferred_wait_background();
  cpu_compile_profile_print("in the background");
}

static uint32_t cpu_kernel_packed_inputs(const npu_hal_kernel *kernel)
{
  return kernel->packed_inputs;
}

static uint32_t cpu_kernel_in_place_inputs(const npu_hal_kernel *kernel)
{
  return kernel->in_place_inputs;
}

static size_t cpu_kernel_workspace(const npu_hal_kernel *kernel)
{
  return kernel->workspace_bytes;
}

/* NPU_CPU_PROFILE=1: time per operator type, printed to stderr at exit;
 * NPU_CPU_PROFILE=shapes: per operator type and tensor shapes, slowest first;
 * NPU_CPU_PROFILE=nodes: per kernel (its node's name) and tensor shapes, in
 * the order of their first launch, to line up with another engine's
 * per-node profile. These two also print each key's fastest launch, which a
 * loaded machine moves least. */
typedef struct op_time {
  char key[256];
  double seconds, fastest;
  uint64_t launches;
} op_time;

static op_time profile[4096]; /* swin_t: some 1500 nodes run while planning, 485 a run */
static size_t profile_count;
static pthread_mutex_t profile_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t profile_once = PTHREAD_ONCE_INIT;
static bool profiling, profiling_shapes, profiling_nodes;

static int slower_first(const void *a, const void *b)
{
  double ta = ((const op_time *)a)->seconds, tb = ((const op_time *)b)->seconds;
  return ta < tb ? 1 : ta > tb ? -1 : 0;
}

static void print_profile(void)
{
  double total = 0;
  for (size_t i = 0; i < profile_count; i++)
    total += profile[i].seconds;
  if (profiling_shapes && !profiling_nodes)
    qsort(profile, profile_count, sizeof profile[0], slower_first);
  fprintf(stderr, "CPU kernel profile (%.1f ms in all):\n", total * 1e3);
  for (size_t i = 0; i < profile_count; i++) {
    fprintf(stderr, "  %-22s %9.2f ms %5.1f%% %8llu launches", profile[i].key,
            profile[i].seconds * 1e3, total > 0 ? 100 * profile[i].seconds / total : 0,
            (unsigned long long)profile[i].launches);
    if (profiling_shapes)
      fprintf(stderr, " %9.4f ms fastest", profile[i].fastest * 1e3);
    fputc('\n', stderr);
  }
}

/* Per model run (any NPU_CPU_PROFILE): from its submission to its first
 * kernel, from its first kernel's start to its last one's end on the engine
 * (its wall time there), and the sum of its kernels' times, so that the
 * time between kernels (the engine's dispatch, a parallel team's wake-up
 * after an idle gap) and before the first (the hand-over to the engine) are
 * told apart from the kernels'. Printed for the runs of the launch count
 * most runs had: the steady runs of the plan, not its planning-time ones. */
typedef struct run_time {
  size_t launches;
  double queued, wall, kernels;
} run_time;

static run_time run_times[8192];
static size_t run_count;

static void record_run(size_t launches, double submitted, double started, double ended,
                       double kernels)
{
  pthread_mutex_lock(&profile_lock);
  if (run_count < sizeof run_times / sizeof run_times[0])
    run_times[run_count++] = (run_time){launches, started - submitted, ended - started, kernels};
  pthread_mutex_unlock(&profile_lock);
}

static int ascending(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* "min 1.234 median 1.456 ms" of the `count` values, sorted in place. */
static void print_spread(const char *what, double *values, size_t count)
{
  qsort(values, count, sizeof *values, ascending);
  fprintf(stderr, "  %-34s min %8.3f  median %8.3f ms\n", what, values[0] * 1e3,
          values[count / 2] * 1e3);
}

static void print_run_times(void)
{
  size_t launches = 0, most = 0;
  for (size_t i = 0; i < run_count; i++) {
    size_t same = 0;
    for (size_t j = 0; j < run_count; j++)
      same += run_times[j].launches == run_times[i].launches;
    if (same > most) {
      most = same;
      launches = run_times[i].launches;
    }
  }
  double *values = most ? malloc(4 * most * sizeof *values) : NULL;
  if (!values)
    return;
  double *queued = values, *wall = values + most, *kernels = wall + most, *between = kernels + most;
  size_t n = 0;
  for (size_t i = 0; i < run_count; i++)
    if (run_times[i].launches == launches) {
      queued[n] = run_times[i].queued;
      wall[n] = run_times[i].wall;
      kernels[n] = run_times[i].kernels;
      between[n++] = run_times[i].wall - run_times[i].kernels;
    }
  fprintf(stderr, "CPU model runs of %zu launches (%zu runs), per run:\n", launches, n);
  print_spread("submission to first kernel", queued, n);
  print_spread("first kernel to last (engine wall)", wall, n);
  print_spread("kernels", kernels, n);
  print_spread("between kernels", between, n);
  free(values);
}

static void start_profile(void)
{
  const char *env = getenv("NPU_CPU_PROFILE");
  profiling_nodes = env && strcmp(env, "nodes") == 0;
  profiling_shapes = profiling_nodes || (env && strcmp(env, "shapes") == 0);
  profiling = profiling_shapes || (env && strcmp(env, "1") == 0);
  if (profiling) {
    atexit(print_profile);
    atexit(print_run_times); /* (printed first) */
  }
}

static double seconds_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* "1x96x56x56/c16": dims, and the layout when not plain. */
static size_t describe_tensor(const npu_hal_tensor_desc *t, char *to, size_t size)
{
  size_t at = 0;
  for (uint32_t d = 0; d < t->rank && at < size; d++)
    at += (size_t)snprintf(to + at, size - at, "%s%lld", d ? "x" : "", (long long)t->dims[d]);
  if (at < size && t->layout == NPU_HAL_LAYOUT_CHANNELS_LAST)
    at += (size_t)snprintf(to + at, size - at, "/nhwc");
  else if (at < size && t->layout == NPU_HAL_LAYOUT_CHANNEL_BLOCKS)
    at += (size_t)snprintf(to + at, size - at, "/c%u", t->block);
  return at < size ? at : size;
}

static void profile_key(const npu_hal_kernel *kernel, char *key, size_t size)
{
  size_t at = (size_t)snprintf(key, size, "%s", profiling_nodes ? kernel->label : kernel->op_type);
  if (!profiling_shapes || at >= size)
    return;
  at += (size_t)snprintf(key + at, size - at, " ");
  if (kernel->input_count && at < size)
    at += describe_tensor(&kernel->inputs[0], key + at, size - at);
  if (kernel->output_count && at + 2 < size) {
    at += (size_t)snprintf(key + at, size - at, "->");
    describe_tensor(&kernel->outputs[0], key + at, size - at);
  }
}

static void record_launch(const npu_hal_kernel *kernel, double seconds)
{
  char key[sizeof profile[0].key];
  profile_key(kernel, key, sizeof key);
  pthread_mutex_lock(&profile_lock);
  size_t i = 0;
  while (i < profile_count && strcmp(profile[i].key, key) != 0)
    i++;
  if (i == profile_count && profile_count < sizeof profile / sizeof profile[0]) {
    memcpy(profile[profile_count++].key, key, sizeof key);
    profile[i].fastest = seconds;
  }
  if (i < profile_count) {
    profile[i].seconds += seconds;
    if (seconds < profile[i].fastest)
      profile[i].fastest = seconds;
    profile[i].launches++;
  }
  pthread_mutex_unlock(&profile_lock);
}

/* A launch's failure (cpu_kernel_fail), on the thread that ran its kernel:
 * run functions return nothing, and parallel parts of a kernel report
 * through the function that started them. */
typedef struct launch_failure {
  npu_status status; /* NPU_OK: none */
  char message[256];
} launch_failure;

static _Thread_local launch_failure current_failure;

void cpu_kernel_fail(const npu_hal_kernel *kernel, npu_status status, const char *format, ...)
{
  if (current_failure.status != NPU_OK)
    return;
  current_failure.status = status;
  int at = snprintf(current_failure.message, sizeof current_failure.message, "%s: ",
                    kernel->label);
  va_list args;
  va_start(args, format);
  vsnprintf(current_failure.message + at, sizeof current_failure.message - (size_t)at, format,
            args);
  va_end(args);
}

typedef struct plan_run {
  npu_hal_device *device;
  npu_hal_stream *stream;
  const npu_hal_launch *launches;
  size_t count;
  npu_hal_task_fn done;
  void *done_data;
  size_t next;            /* the launch the engine runs next */
  launch_failure failure; /* the launch that failed, ending the run */
  double submitted, started, kernels; /* profiling: see record_run */
} plan_run;

/* Empty tensors have no memory: their kernels get this address, so that
 * NULL only ever means a tensor left out (copying 0 bytes from NULL is
 * undefined behaviour all the same). */
static max_align_t empty_tensor;

/* Where tensor `ref` is; `desc` (NULL past the kernel's first 8) is UNDEFINED when left out. */
static void *tensor_ptr(npu_hal_mem_ref ref, const npu_hal_tensor_desc *desc)
{
  if (ref.buffer || ref.host)
    return npu_cpu_mem_ref_ptr(ref);
  return desc && desc->dtype == NPU_DTYPE_UNDEFINED ? NULL : &empty_tensor;
}

/* One step on the engine: the next launch of the plan. */
static bool run_next_launch(void *data)
{
  plan_run *run = data;
  if (run->next == run->count)
    return false;
  const npu_hal_launch *launch = &run->launches[run->next++];
  const npu_hal_kernel *kernel = launch->kernel;
  void *inputs[64], *outputs[9];
  for (uint32_t i = 0; i < launch->input_count && i < 64; i++) /* (fused addends: past the op's) */
    inputs[i] = tensor_ptr(launch->inputs[i],
                           i < kernel->input_count && i < 8 ? &kernel->inputs[i] : NULL);
  for (uint32_t i = 0; i < launch->output_count && i < 8; i++)
    outputs[i] = tensor_ptr(launch->outputs[i], &kernel->outputs[i]);
  outputs[launch->output_count < 8 ? launch->output_count : 8] =
      launch->workspace.buffer || launch->workspace.host
          ? npu_cpu_mem_ref_ptr(launch->workspace)
          : NULL;
  double start = profiling ? seconds_now() : 0;
  launch->kernel->run(launch->kernel, inputs, outputs);
  if (profiling) {
    double end = seconds_now();
    record_launch(launch->kernel, end - start);
    if (run->next == 1)
      run->started = start;
    run->kernels += end - start;
    if (run->next == run->count)
      record_run(run->count, run->submitted, run->started, end, run->kernels);
  }
  if (current_failure.status != NPU_OK) { /* what follows would read what it left unwritten */
    run->failure = current_failure;
    current_failure.status = NPU_OK;
    return false;
  }
  return run->next < run->count;
}

/* The stream's task: the stream waits, in order, while the engine runs. */
static void run_launches(void *data)
{
  plan_run *run = data;
  npu_cpu_run_steps_on_engine(run->device, run_next_launch, run);
  if (run->failure.status != NPU_OK)
    cpu_stream_fail(run->stream, run->failure.status, run->failure.message);
  npu_hal_task_fn done = run->done;
  void *done_data = run->done_data;
  free(run);
  if (done)
    done(done_data);
}

bool cpu_profiling(void)
{
  pthread_once(&profile_once, start_profile);
  return profiling;
}

/* The engine runs them while this thread waits: no stream worker between. */
static npu_status cpu_graph_run_now(npu_hal_device *device, const npu_hal_launch *launches,
                                    size_t count)
{
  pthread_once(&profile_once, start_profile);
  plan_run run = {device, NULL, launches, count, NULL, NULL, 0, {NPU_OK, ""},
                  profiling ? seconds_now() : 0, 0, 0};
  if (count)
    npu_cpu_run_steps_on_engine(device, run_next_launch, &run);
  return run.failure.status == NPU_OK
             ? NPU_OK
             : npu_set_error(run.failure.status, "%s", run.failure.message);
}

static npu_status cpu_graph_run(npu_hal_device *device, npu_hal_stream *stream,
                                const npu_hal_launch *launches, size_t count, npu_hal_task_fn done,
                                void *done_data)
{
  pthread_once(&profile_once, start_profile);
  plan_run *run = malloc(sizeof *run);
  if (!run)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory queuing a model run");
  *run = (plan_run){device, stream, launches, count, done, done_data, 0, {NPU_OK, ""},
                    profiling ? seconds_now() : 0, 0, 0};
  npu_status status = cpu_stream_submit(stream, run_launches, run);
  if (status != NPU_OK)
    free(run);
  return status;
}

const npu_hal_graph_ops npu_cpu_graph_ops = {
    .kernel_create = cpu_kernel_create,
    .kernel_destroy = cpu_kernel_destroy,
    .layout_supported = cpu_layout_supported,
    .preferred_layout = cpu_preferred_layout,
    .kernel_packed_inputs = cpu_kernel_packed_inputs,
    .kernel_in_place_inputs = cpu_kernel_in_place_inputs,
    .kernel_workspace = cpu_kernel_workspace,
    .kernels_begin = cpu_kernels_begin,
    .kernels_ready = cpu_kernels_ready,
    .run_now = cpu_graph_run_now,
    .kernels_settle = cpu_kernels_settle,
    .run = cpu_graph_run,
};
