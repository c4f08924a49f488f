/* npu-run: runs an ONNX model on the default device and reports load time,
 * latency, throughput with concurrent streams, planned memory, allocations
 * after warm-up and peak RSS; writes the outputs as .npy files.
 *   npu-run MODEL [--input NAME=FILE.npy ...] [--shape NAME=1x3x640x640 ...]
 *           [--output-dir DIR] [--batch N] [--streams N] [--iterations N]
 *           [--warmup N] [--threads N] [--planned-at N] [--planned-shape NAME=DIMS ...]
 *           [--precision fp32|bf16] [--json] */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <npu/npu.h>

#include "npy.h"

typedef struct options {
  gchar **inputs, **shapes;
  gchar **planned_shapes; /* contexts planned for these first, then re-planned for --shape */
  gchar *output_dir;
  gint batch, streams, iterations, warmup, threads;
  gint planned_at; /* > 0: contexts planned for this batch first, then re-planned for --batch */
  gchar *precision_name;
  npu_precision precision;
  gboolean json;
} options;

/* Where a plan's time went: per phase, wall and planning-thread CPU ms
 * (npu_context_stats), and the CPU time of the process's other threads
 * meanwhile (a backend's compile helpers). */
typedef struct plan_phases {
  double wall_ms[NPU_PLAN_PHASE_COUNT], cpu_ms[NPU_PLAN_PHASE_COUNT];
  double other_threads_cpu_ms;
} plan_phases;

typedef struct report {
  double load_ms, plan_ms;
  double plan_cpu_ms;        /* the process's CPU time while planning (other loads do not count) */
  double replan_ms;          /* the first context planned again for another batch; < 0: none */
  double first_replan_ms;    /* --planned-at/-shape: the first context re-planned for --batch */
  double first_replan_cpu_ms;
  double first_run_ms;       /* the first run after planning (before any warm-up) */
  double planned_run_ms;     /* with --planned-*: the first run at the planned shapes */
  double settle_ms, settle_cpu_ms; /* after the first run: npu_context_settle */
  char planned[160];         /* the shapes the contexts were planned for first */
  plan_phases plan_phases;   /* the first context's first plan, per phase */
  plan_phases replan_phases; /* with --planned-*: its re-plan */
  double min_ms, median_ms, p90_ms, max_ms;
  double throughput;         /* inferences per second over all streams */
  double cores_busy;         /* the process's CPU time over the throughput run's wall time */
  double busy_ms, device_ms; /* a latency run's stream statistics: busy, of it timed on the device */
  npu_context_stats stats;
  bool bf16_compute;         /* the device's: whether --precision bf16 takes effect */
  uint64_t allocations_after_warmup;
  long peak_rss_kib;
} report;

static double now_ms(void)
{
  return (double)g_get_monotonic_time() / 1000.0;
}

/* CPU time of all this process's threads. */
static double process_cpu_ms(void)
{
  struct timespec used;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
  return (double)used.tv_sec * 1000.0 + (double)used.tv_nsec / 1e6;
}

/* This process's peak resident set (VmHWM), KiB; -1 if unreadable. Not
 * getrusage's ru_maxrss: Linux carries that across exec from the process that
 * started us (a benchmark's Python of 80 MiB made a 27 MiB run read 80). */
static long peak_rss_kib(void)
{
  long kib = -1;
  FILE *status = fopen("/proc/self/status", "r");
  if (!status)
    return -1;
  char line[256];
  while (fgets(line, sizeof line, status))
    if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
      break;
  fclose(status);
  return kib;
}

static int compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of `count` sorted values: one rule for every
 * percentile, so that they never come out of order. */
static double percentile(const double *sorted, size_t count, unsigned p)
{
  size_t rank = (count * p + 99) / 100; /* ceil(count * p / 100), 1-based */
  return sorted[rank ? rank - 1 : 0];
}

/* NAME=VALUE from a list, or NULL. */
static const char *lookup(gchar **pairs, const char *name)
{
  size_t length = strlen(name);
  for (gchar **p = pairs; p && *p; p++)
    if (strncmp(*p, name, length) == 0 && (*p)[length] == '=')
      return *p + length + 1;
  return NULL;
}

static gboolean die(const char *what)
{
  fprintf(stderr, "npu-run: %s\n", what);
  return FALSE;
}

static gboolean die_status(const char *what)
{
  fprintf(stderr, "npu-run: %s: %s\n", what, npu_last_error_message());
  return FALSE;
}

/* `shape`'s dims from `given` (1x3x640x640) as `option` gave them. */
static gboolean parse_dims(const char *option, const char *given, npu_tensor_info *shape)
{
  gchar **parts = g_strsplit(given, "x", -1);
  uint32_t rank = g_strv_length(parts);
  gboolean ok = rank == shape->rank;
  for (uint32_t d = 0; ok && d < rank; d++) {
    guint64 dim;
    ok = g_ascii_string_to_unsigned(parts[d], 10, 0, INT64_MAX, &dim, NULL);
    shape->dims[d] = (int64_t)dim;
  }
  g_strfreev(parts);
  if (!ok)
    fprintf(stderr, "npu-run: %s %s=%s: give the input's %u dimensions as numbers joined by x\n",
            option, shape->name, given, shape->rank);
  return ok;
}

/* The concrete shape of each input: --shape, else the --input file's (read
 * here into `files`), else the model's with a dynamic first axis set to
 * --batch; any other open axis must be given. */
static gboolean choose_shapes(npu_model *model, const options *o, npu_tensor_info *shapes,
                              npy_array *files, uint32_t count)
{
  for (uint32_t i = 0; i < count; i++) {
    npu_model_input_info(model, i, &shapes[i]);
    const char *file = lookup(o->inputs, shapes[i].name);
    char error[512];
    if (file && !npy_read(file, &files[i], error, sizeof error))
      return die(error);
    if (file && files[i].info.rank == shapes[i].rank && !lookup(o->shapes, shapes[i].name)) {
      for (uint32_t d = 0; d < shapes[i].rank; d++)
        if (shapes[i].dims[d] < 0)
          shapes[i].dims[d] = files[i].info.dims[d];
      continue;
    }
    const char *given = lookup(o->shapes, shapes[i].name);
    if (given) {
      if (!parse_dims("--shape", given, &shapes[i]))
        return FALSE;
      continue;
    }
    for (uint32_t d = 0; d < shapes[i].rank; d++) {
      if (shapes[i].dims[d] >= 0)
        continue;
      if (d == 0) {
        shapes[i].dims[0] = o->batch;
        continue;
      }
      fprintf(stderr, "npu-run: input '%s' axis %u is dynamic: give it with --shape %s=", shapes[i].name, d,
              shapes[i].name);
      for (uint32_t k = 0; k < shapes[i].rank; k++)
        fprintf(stderr, "%s%s", k ? "x" : "", shapes[i].dims[k] >= 0 ? "N" : "?");
      fprintf(stderr, "\n");
      return FALSE;
    }
  }
  return TRUE;
}

static size_t tensor_bytes(const npu_tensor_info *t)
{
  size_t n = npu_dtype_size(t->dtype);
  for (uint32_t d = 0; d < t->rank; d++)
    n *= (size_t)t->dims[d];
  return n;
}

/* Input data: the --input file (already read), else fixed-seed uniform
 * [0, 1) (zeros for integer inputs). */
static gboolean input_data(const options *o, const npu_tensor_info *shape, npy_array *array)
{
  const char *file = lookup(o->inputs, shape->name);
  if (file) {
    if (array->info.dtype != shape->dtype || array->info.rank != shape->rank ||
        memcmp(array->info.dims, shape->dims, shape->rank * sizeof shape->dims[0]) != 0) {
      fprintf(stderr, "npu-run: %s does not hold a %s tensor of the input's shape "
              "(give --shape for dynamic axes)\n", file, npu_dtype_name(shape->dtype));
      return FALSE;
    }
    return TRUE;
  }
  array->info = *shape;
  array->size = tensor_bytes(shape);
  array->data = calloc(1, array->size ? array->size : 1);
  if (!array->data)
    return die("out of memory");
  if (shape->dtype == NPU_DTYPE_FLOAT32) {
    GRand *rand = g_rand_new_with_seed(42);
    for (size_t i = 0; i < array->size / 4; i++)
      ((float *)array->data)[i] = (float)g_rand_double(rand);
    g_rand_free(rand);
  }
  return TRUE;
}

typedef struct worker {
  npu_context *context;
  npu_stream *stream;
  npu_buffer **inputs, **outputs;
} worker;

/* The worker's buffers and stream, for its planned context. */
static gboolean make_worker(npu_device *device, uint32_t in_count, uint32_t out_count,
                            npy_array *data, worker *w)
{
  if (npu_stream_create(device, &w->stream) != NPU_OK)
    return die_status("creating a stream");
  w->inputs = g_new0(npu_buffer *, in_count + 1);
  w->outputs = g_new0(npu_buffer *, out_count + 1);
  for (uint32_t i = 0; i < in_count; i++) {
    size_t size = data[i].size ? data[i].size : 1;
    if (npu_buffer_alloc(device, size, &w->inputs[i]) != NPU_OK ||
        (data[i].size && npu_memcpy_h2d(w->inputs[i], 0, data[i].data, data[i].size) != NPU_OK))
      return die_status("uploading an input");
  }
  for (uint32_t o = 0; o < out_count; o++) {
    npu_tensor_info info;
    npu_context_output_info(w->context, o, &info);
    size_t size = tensor_bytes(&info);
    if (npu_buffer_alloc(device, size ? size : 1, &w->outputs[o]) != NPU_OK)
      return die_status("allocating an output");
  }
  return TRUE;
}

static void free_worker(worker *w, uint32_t in_count, uint32_t out_count)
{
  for (uint32_t i = 0; w->inputs && i < in_count; i++)
    if (w->inputs[i])
      npu_buffer_release(w->inputs[i]);
  for (uint32_t o = 0; w->outputs && o < out_count; o++)
    if (w->outputs[o])
      npu_buffer_release(w->outputs[o]);
  g_free(w->inputs);
  g_free(w->outputs);
  if (w->stream)
    npu_stream_destroy(w->stream);
  if (w->context)
    npu_context_destroy(w->context);
}

/* One run of the context at the shapes it was first planned for, on zeroed
 * inputs, as a pipeline runs before its input's shape changes: the first
 * run after the re-plan then finds what such runs leave behind. */
static gboolean run_at_planned_shapes(npu_device *device, npu_context *context, uint32_t in_count,
                                      uint32_t out_count, double *ms)
{
  uint32_t count = in_count + out_count;
  npu_buffer **buffers = g_new0(npu_buffer *, count + 1);
  gboolean ok = TRUE;
  for (uint32_t b = 0; b < count && ok; b++) {
    npu_tensor_info info;
    bool input = b < in_count;
    ok = (input ? npu_context_input_info(context, b, &info)
                : npu_context_output_info(context, b - in_count, &info)) == NPU_OK;
    size_t size = ok && tensor_bytes(&info) ? tensor_bytes(&info) : 1;
    ok = ok && npu_buffer_alloc(device, size, &buffers[b]) == NPU_OK &&
         (!input || npu_memset(buffers[b], 0, 0, size) == NPU_OK);
  }
  double start = now_ms();
  ok = ok && npu_context_run_sync(context, buffers, buffers + in_count) == NPU_OK;
  *ms = now_ms() - start;
  for (uint32_t b = 0; b < count; b++)
    if (buffers[b])
      npu_buffer_release(buffers[b]);
  g_free(buffers);
  return ok ? TRUE : die_status("running at the planned shapes");
}

static gboolean run_once(worker *w)
{
  if (npu_context_run(w->context, w->stream, w->inputs, w->outputs) != NPU_OK ||
      npu_stream_synchronize(w->stream) != NPU_OK)
    return die_status("running the model");
  return TRUE;
}

static gboolean write_outputs(const options *o, worker *w, uint32_t out_count)
{
  if (g_mkdir_with_parents(o->output_dir, 0755) != 0)
    return die("cannot create the output directory");
  for (uint32_t i = 0; i < out_count; i++) {
    npu_tensor_info info;
    npu_context_output_info(w->context, i, &info);
    size_t size = tensor_bytes(&info);
    void *host = g_malloc(size + 1);
    gchar *name = g_strdelimit(g_strdup(info.name), "/\\:", '_');
    gchar *path = g_strdup_printf("%s/%s.npy", o->output_dir, name);
    char error[512];
    gboolean ok = (!size || npu_memcpy_d2h(host, w->outputs[i], 0, size) == NPU_OK) &&
                  npy_write(path, &info, host, error, sizeof error);
    if (!ok)
      fprintf(stderr, "npu-run: %s\n", error);
    g_free(path);
    g_free(name);
    g_free(host);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

/* The phases of the plan `context` holds now, which took `process_cpu`
 * ms of the process's CPU (one context planned at a time). */
static plan_phases phases_of(npu_context *context, double process_cpu)
{
  npu_context_stats stats;
  plan_phases p = {0};
  if (npu_context_get_stats(context, &stats) != NPU_OK)
    return p;
  p.other_threads_cpu_ms = process_cpu;
  for (int i = 0; i < NPU_PLAN_PHASE_COUNT; i++) {
    p.wall_ms[i] = stats.plan_phase_ms[i];
    p.cpu_ms[i] = stats.plan_phase_cpu_ms[i];
    p.other_threads_cpu_ms -= p.cpu_ms[i];
  }
  return p;
}

static void print_phases(const char *title, const plan_phases *p, bool json)
{
  if (json) {
    printf("\"%s\": {", title);
    for (int i = 0; i < NPU_PLAN_PHASE_COUNT; i++)
      printf("\"%s\": {\"ms\": %.3f, \"cpu_ms\": %.3f}, ", npu_plan_phase_name(i),
             p->wall_ms[i], p->cpu_ms[i]);
    printf("\"other_threads_cpu_ms\": %.3f}, ", p->other_threads_cpu_ms);
    return;
  }
  printf("%-14s", title);
  for (int i = 0; i < NPU_PLAN_PHASE_COUNT; i++)
    printf("%s%s %.1f/%.1f", i ? ", " : "", npu_plan_phase_name(i), p->wall_ms[i],
           p->cpu_ms[i]);
  printf(" ms (wall/CPU of the planning thread); other threads %.1f ms of CPU\n",
         p->other_threads_cpu_ms);
}

static void print_report(const char *model_path, const options *o, const npu_tensor_info *shapes,
                         uint32_t in_count, const report *r)
{
  const npu_context_stats *s = &r->stats;
  double saved = s->naive_bytes ? 100.0 * (double)s->arena_bytes / (double)s->naive_bytes : 0;
  if (o->json) {
    printf("{\"model\": \"%s\", \"inputs\": [", model_path);
    for (uint32_t i = 0; i < in_count; i++) {
      printf("%s{\"name\": \"%s\", \"shape\": [", i ? ", " : "", shapes[i].name);
      for (uint32_t d = 0; d < shapes[i].rank; d++)
        printf("%s%" PRId64, d ? ", " : "", shapes[i].dims[d]);
      printf("]}");
    }
    printf("], ");
    print_phases("plan_phases", &r->plan_phases, true);
    if (o->planned_at || o->planned_shapes)
      print_phases("replan_phases", &r->replan_phases, true);
    printf("\"precision\": \"%s\", \"batch\": %d, \"streams\": %d, \"threads\": %d, "
           "\"iterations\": %d, "
           "\"load_ms\": %.3f, \"plan_ms\": %.3f, \"plan_cpu_ms\": %.3f, \"replan_ms\": %.3f, "
           "\"first_replan_ms\": %.3f, \"first_replan_cpu_ms\": %.3f, "
           "\"planned_run_ms\": %.3f, \"first_run_ms\": %.3f, \"settle_ms\": %.3f, "
           "\"settle_cpu_ms\": %.3f, \"latency_ms\": {\"min\": %.3f, "
           "\"median\": %.3f, \"p90\": %.3f, \"max\": %.3f}, \"throughput_per_s\": %.2f, \"cores_busy\": %.2f, "
           "\"stream_busy_ms\": %.3f, \"stream_device_ms\": %.3f, \"arena_bytes\": %" PRIu64 ", \"naive_bytes\": %" PRIu64 ", \"constant_bytes\": %"
           PRIu64 ", \"kernels\": %u, \"folded_nodes\": %u, \"fused_nodes\": %u, "
           "\"relaid_tensors\": %u, \"subgraphs\": %u, \"host_kernels\": %u, \"transfer_bytes\": %"
           PRIu64 ", \"compiled_subgraphs\": %u, \"compiled_nodes\": %u, \"allocations_after_warmup\": %" PRIu64 ", \"peak_rss_kib\": %ld}\n",
           npu_precision_name(o->precision), o->batch, o->streams, o->threads, o->iterations,
           r->load_ms, r->plan_ms, r->plan_cpu_ms, r->replan_ms, r->first_replan_ms,
           r->first_replan_cpu_ms, r->planned_run_ms, r->first_run_ms, r->settle_ms,
           r->settle_cpu_ms, r->min_ms,
           r->median_ms, r->p90_ms, r->max_ms, r->throughput, r->cores_busy, r->busy_ms,
           r->device_ms, s->arena_bytes, s->naive_bytes,
           s->constant_bytes, s->kernels, s->folded_nodes, s->fused_nodes,
           s->relaid_tensors, s->subgraphs, s->host_kernels, s->transfer_bytes,
           s->compiled_subgraphs, s->compiled_nodes,
           r->allocations_after_warmup, r->peak_rss_kib);
    return;
  }
  printf("model:        %s\n", model_path);
  for (uint32_t i = 0; i < in_count; i++) {
    printf("input:        %s ", shapes[i].name);
    for (uint32_t d = 0; d < shapes[i].rank; d++)
      printf("%s%" PRId64, d ? "x" : "", shapes[i].dims[d]);
    printf(" %s\n", npu_dtype_name(shapes[i].dtype));
  }
  printf("precision:    %s%s\n", npu_precision_name(o->precision),
         o->precision != NPU_PRECISION_FP32 && !r->bf16_compute
             ? " asked, ignored: the device computes float32"
             : "");
  printf("load:         %.1f ms (planning %.1f ms, %.1f ms of CPU)\n", r->load_ms, r->plan_ms,
         r->plan_cpu_ms);
  if (o->planned_at || o->planned_shapes)
    printf("planned at:   %s first, re-planned for the input above in %.1f ms (%.1f%% of the "
           "first plan), %.1f ms of CPU (%.1f%%; the figures below are the re-planned "
           "shape's)\n", r->planned, r->first_replan_ms,
           r->plan_ms > 0 ? 100.0 * r->first_replan_ms / r->plan_ms : 0, r->first_replan_cpu_ms,
           r->plan_cpu_ms > 0 ? 100.0 * r->first_replan_cpu_ms / r->plan_cpu_ms : 0);
  print_phases("plan phases:", &r->plan_phases, false);
  if (o->planned_at || o->planned_shapes)
    print_phases("re-plan phases:", &r->replan_phases, false);
  if (r->replan_ms >= 0)
    printf("re-planning:  %.1f ms for another batch size (%.0f%% of the first plan; weights "
           "kept)\n", r->replan_ms, r->plan_ms > 0 ? 100.0 * r->replan_ms / r->plan_ms : 0);
  if (o->planned_at || o->planned_shapes)
    printf("planned run:  %.2f ms (the first at the planned shapes, before re-planning)\n",
           r->planned_run_ms);
  printf("first run:    %.2f ms (the first after planning, before warm-up)\n", r->first_run_ms);
  printf("settled:      %.1f ms later, %.1f ms of CPU (kernels compiled in the background "
         "swapped in: what follows is the steady state)\n", r->settle_ms, r->settle_cpu_ms);
  printf("latency:      min %.2f  median %.2f  p90 %.2f  max %.2f ms (%d iterations)\n",
         r->min_ms, r->median_ms, r->p90_ms, r->max_ms, o->iterations);
  printf("throughput:   %.1f inferences/s (batch %d, %d stream%s; %.2f cores busy)\n",
         r->throughput, o->batch, o->streams, o->streams == 1 ? "" : "s", r->cores_busy);
  if (r->device_ms > 0)
    printf("stream:       busy %.2f ms a run, %.2f ms of it timed on the device (timestamp "
           "queries)\n", r->busy_ms, r->device_ms);
  else
    printf("stream:       busy %.2f ms a run (host work)\n", r->busy_ms);
  printf("memory:       arena %.2f MiB, naive %.2f MiB (%.0f%%), constants %.2f MiB\n",
         (double)s->arena_bytes / 1048576.0, (double)s->naive_bytes / 1048576.0, saved,
         (double)s->constant_bytes / 1048576.0);
  printf("kernels:      %u per run, %u nodes folded at load, %u fused, %u tensors "
         "in the backend's layout\n", s->kernels, s->folded_nodes, s->fused_nodes,
         s->relaid_tensors);
  if (s->subgraphs > 1)
    printf("partition:    %u subgraphs, %u of %u kernels on the host (the CPU backend), "
           "%.2f MiB copied per run\n", s->subgraphs, s->host_kernels, s->kernels,
           (double)s->transfer_bytes / 1048576.0);
  if (s->compiled_subgraphs)
    printf("compiled:     %u subgraphs compiled by the backend (%u nodes), %u per-op kernels\n",
           s->compiled_subgraphs, s->compiled_nodes, s->kernels);
  printf("allocations:  %" PRIu64 " after warm-up\n", r->allocations_after_warmup);
  printf("peak RSS:     %.1f MiB\n", (double)r->peak_rss_kib / 1024.0);
}

/* How long the context takes to plan another batch size (the first
 * dynamic axis of the first input one larger), and to come back: the
 * weights are not packed or uploaded again. < 0 when no axis is open. */
static double measure_replan(npu_model *model, npu_context *context, const npu_tensor_info *shapes,
                             uint32_t in_count)
{
  npu_tensor_info declared, other[in_count + 1];
  if (in_count == 0 || npu_model_input_info(model, 0, &declared) != NPU_OK)
    return -1;
  uint32_t axis = 0;
  while (axis < declared.rank && declared.dims[axis] != NPU_DIM_DYNAMIC)
    axis++;
  if (axis == declared.rank)
    return -1;
  memcpy(other, shapes, in_count * sizeof *shapes);
  other[0].dims[axis]++;
  double start = now_ms();
  if (npu_context_reshape(context, other, in_count) != NPU_OK)
    return -1;
  double elapsed = now_ms() - start;
  if (npu_context_reshape(context, shapes, in_count) != NPU_OK)
    return -1;
  return elapsed;
}

/* The shapes with every dynamic first axis at batch `batch`. */
static void with_batch(npu_model *model, const npu_tensor_info *shapes, uint32_t count,
                       int batch, npu_tensor_info *out)
{
  for (uint32_t i = 0; i < count; i++) {
    npu_tensor_info declared;
    out[i] = shapes[i];
    if (npu_model_input_info(model, i, &declared) == NPU_OK && declared.rank > 0 &&
        declared.dims[0] == NPU_DIM_DYNAMIC)
      out[i].dims[0] = batch;
  }
}

static gboolean measure(const char *model_path, const options *o)
{
  report r = {0};
  double start = now_ms();
  npu_model *model = NULL;
  npu_device *device = NULL;
  worker *workers = g_new0(worker, o->streams);
  npy_array *data = NULL;
  npu_tensor_info *shapes = NULL, *first_shapes = NULL;
  uint32_t in_count = 0, out_count = 0;
  gboolean ok = FALSE;
  if (npu_model_load_file(model_path, &model) != NPU_OK) {
    die_status("loading the model");
    goto done;
  }
  if (npu_device_open_default(&device) != NPU_OK) {
    die_status("opening the device");
    goto done;
  }
  npu_model_input_count(model, &in_count);
  npu_model_output_count(model, &out_count);
  shapes = g_new0(npu_tensor_info, in_count + 1);
  data = g_new0(npy_array, in_count + 1);
  if (!choose_shapes(model, o, shapes, data, in_count))
    goto done;
  /* Planning first: it refuses shapes beyond the device's memory before
   * any input of that shape is made. */
  first_shapes = g_new0(npu_tensor_info, in_count + 1);
  memcpy(first_shapes, shapes, in_count * sizeof *shapes);
  if (o->planned_at)
    with_batch(model, shapes, in_count, o->planned_at, first_shapes);
  for (uint32_t i = 0; i < in_count; i++) {
    const char *given = lookup(o->planned_shapes, first_shapes[i].name);
    if (given && !parse_dims("--planned-shape", given, &first_shapes[i]))
      goto done;
  }
  npu_device_properties properties;
  if (npu_device_properties_of(device, &properties) == NPU_OK)
    r.bf16_compute = properties.caps.bf16_compute;
  npu_context_options context_options = {.precision = o->precision};
  double planned = now_ms(), planned_cpu = process_cpu_ms();
  for (int s = 0; s < o->streams; s++)
    if (npu_context_create_with_options(model, device, first_shapes, in_count, &context_options,
                                        &workers[s].context) != NPU_OK) {
      die_status("planning the model");
      goto done;
    }
  r.plan_ms = (now_ms() - planned) / o->streams;
  r.plan_cpu_ms = (process_cpu_ms() - planned_cpu) / o->streams;
  r.plan_phases = phases_of(workers[0].context, r.plan_cpu_ms);
  bool replans = o->planned_at || o->planned_shapes;
  if (replans && !run_at_planned_shapes(device, workers[0].context, in_count, out_count,
                                        &r.planned_run_ms))
    goto done;
  double replanned = now_ms(), replanned_cpu = process_cpu_ms();
  for (int s = 0; replans && s < o->streams; s++)
    if (npu_context_reshape(workers[s].context, shapes, in_count) != NPU_OK) {
      die_status("re-planning the model for --batch");
      goto done;
    }
  r.first_replan_ms = (now_ms() - replanned) / o->streams;
  r.first_replan_cpu_ms = (process_cpu_ms() - replanned_cpu) / o->streams;
  if (replans)
    r.replan_phases = phases_of(workers[0].context, r.first_replan_cpu_ms);
  size_t at = 0;
  for (uint32_t i = 0; i < in_count && at < sizeof r.planned; i++)
    for (uint32_t d = 0; d < first_shapes[i].rank && at < sizeof r.planned; d++)
      at += (size_t)snprintf(r.planned + at, sizeof r.planned - at, "%s%" PRId64,
                             d ? "x" : i ? " " : "", first_shapes[i].dims[d]);
  for (uint32_t i = 0; i < in_count; i++)
    if (!input_data(o, &shapes[i], &data[i]))
      goto done;
  for (int s = 0; s < o->streams; s++)
    if (!make_worker(device, in_count, out_count, data, &workers[s]))
      goto done;
  r.load_ms = now_ms() - start - r.planned_run_ms;
  npu_context_get_stats(workers[0].context, &r.stats);

  double first_run = now_ms();
  if (!run_once(&workers[0]))
    goto done;
  r.first_run_ms = now_ms() - first_run;
  double settling = now_ms(), settling_cpu = process_cpu_ms();
  for (int s = 0; s < o->streams; s++)
    if (npu_context_settle(workers[s].context) != NPU_OK) {
      die_status("settling the plan");
      goto done;
    }
  r.settle_ms = now_ms() - settling;
  r.settle_cpu_ms = process_cpu_ms() - settling_cpu;
  /* After the figures above, which it would disturb (its background
   * compiles), and settled too before the steady runs. */
  r.replan_ms = measure_replan(model, workers[0].context, shapes, in_count);
  if (npu_context_settle(workers[0].context) != NPU_OK) {
    die_status("settling the plan");
    goto done;
  }
  for (int i = 0; i < o->warmup; i++)
    for (int s = 0; s < o->streams; s++)
      if (!run_once(&workers[s]))
        goto done;
  npu_device_stats before, after;
  npu_device_get_stats(device, &before);
  npu_stream_stats stream_before, stream_after;
  npu_stream_get_stats(workers[0].stream, &stream_before);
  double *latencies = g_new(double, o->iterations);
  for (int i = 0; i < o->iterations; i++) {
    double t0 = now_ms();
    if (!run_once(&workers[0])) {
      g_free(latencies);
      goto done;
    }
    latencies[i] = now_ms() - t0;
  }
  npu_stream_get_stats(workers[0].stream, &stream_after);
  r.busy_ms = (double)(stream_after.busy_ns - stream_before.busy_ns) / 1e6 / o->iterations;
  r.device_ms = (double)(stream_after.device_ns - stream_before.device_ns) / 1e6 / o->iterations;
  qsort(latencies, (size_t)o->iterations, sizeof *latencies, compare_doubles);
  r.min_ms = latencies[0];
  r.median_ms = percentile(latencies, (size_t)o->iterations, 50);
  r.p90_ms = percentile(latencies, (size_t)o->iterations, 90);
  r.max_ms = latencies[o->iterations - 1];
  g_free(latencies);
  /* Throughput: every stream queues its runs; they overlap on the device. */
  double t0 = now_ms(), cpu0 = process_cpu_ms();
  for (int i = 0; i < o->iterations; i++)
    for (int s = 0; s < o->streams; s++)
      if (npu_context_run(workers[s].context, workers[s].stream, workers[s].inputs,
                          workers[s].outputs) != NPU_OK) {
        die_status("running the model");
        goto done;
      }
  for (int s = 0; s < o->streams; s++)
    if (npu_stream_synchronize(workers[s].stream) != NPU_OK) {
      die_status("running the model");
      goto done;
    }
  double elapsed = now_ms() - t0;
  r.throughput = elapsed > 0 ? 1000.0 * o->iterations * o->streams * o->batch / elapsed : 0;
  r.cores_busy = elapsed > 0 ? (process_cpu_ms() - cpu0) / elapsed : 0;
  npu_device_get_stats(device, &after);
  r.allocations_after_warmup = after.allocations - before.allocations;
  r.peak_rss_kib = peak_rss_kib();
  if (o->output_dir && !write_outputs(o, &workers[0], out_count))
    goto done;
  print_report(model_path, o, shapes, in_count, &r);
  ok = TRUE;
done:
  for (int s = 0; s < o->streams; s++)
    free_worker(&workers[s], in_count, out_count);
  g_free(workers);
  for (uint32_t i = 0; data && i < in_count; i++)
    npy_clear(&data[i]);
  g_free(data);
  g_free(shapes);
  g_free(first_shapes);
  if (device)
    npu_device_release(device);
  if (model)
    npu_model_release(model);
  return ok;
}

int main(int argc, char **argv)
{
  options o = {.batch = 1, .streams = 1, .iterations = 20, .warmup = 3};
  GOptionEntry entries[] = {
      {"input", 'i', 0, G_OPTION_ARG_STRING_ARRAY, &o.inputs,
       "Input data from a NumPy file (default: fixed-seed random)", "NAME=FILE.npy"},
      {"shape", 's', 0, G_OPTION_ARG_STRING_ARRAY, &o.shapes,
       "Concrete shape of an input with dynamic axes", "NAME=1x3x640x640"},
      {"output-dir", 'o', 0, G_OPTION_ARG_FILENAME, &o.output_dir,
       "Write each output as DIR/NAME.npy", "DIR"},
      {"batch", 'b', 0, G_OPTION_ARG_INT, &o.batch, "Batch size for a dynamic first axis", "N"},
      {"streams", 0, 0, G_OPTION_ARG_INT, &o.streams,
       "Concurrent streams (contexts) for the throughput run", "N"},
      {"iterations", 'n', 0, G_OPTION_ARG_INT, &o.iterations, "Timed runs", "N"},
      {"warmup", 'w', 0, G_OPTION_ARG_INT, &o.warmup, "Untimed runs first", "N"},
      {"threads", 't', 0, G_OPTION_ARG_INT, &o.threads,
       "Threads of the CPU backend (default: NPU_NUM_THREADS or all cores)", "N"},
      {"planned-at", 0, 0, G_OPTION_ARG_INT, &o.planned_at,
       "Plan for batch N first, then re-plan for --batch and measure that", "N"},
      {"planned-shape", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.planned_shapes,
       "Plan for this input shape first, then re-plan for --shape and measure that",
       "NAME=1x3x736x1280"},
      {"precision", 0, 0, G_OPTION_ARG_STRING, &o.precision_name,
       "Arithmetic of convolutions and matrix products: fp32 (default) or bf16 (where the "
       "device has it)", "fp32|bf16"},
      {"json", 0, 0, G_OPTION_ARG_NONE, &o.json, "Print the report as one JSON object", NULL},
      {NULL}};
  GOptionContext *context = g_option_context_new("MODEL.onnx - run an ONNX model and measure it");
  g_option_context_add_main_entries(context, entries, NULL);
  GError *error = NULL;
  gboolean parsed = g_option_context_parse(context, &argc, &argv, &error);
  g_option_context_free(context);
  if (!parsed || argc != 2 || o.batch < 1 || o.streams < 1 || o.iterations < 1 || o.warmup < 0 ||
      o.threads < 0 || o.planned_at < 0) {
    fprintf(stderr, "npu-run: %s\n", error ? error->message
                                           : "give one MODEL and positive counts (see --help)");
    g_clear_error(&error);
    g_free(o.precision_name);
    return 2;
  }
  if (o.precision_name && npu_precision_from_name(o.precision_name, &o.precision) != NPU_OK) {
    fprintf(stderr, "npu-run: --precision: %s\n", npu_last_error_message());
    g_free(o.precision_name);
    return 2;
  }
  if (o.threads) { /* before the device opens */
    gchar *threads = g_strdup_printf("%d", o.threads);
    g_setenv("NPU_NUM_THREADS", threads, TRUE);
    g_free(threads);
  }
  gboolean ok = measure(argv[1], &o);
  g_strfreev(o.inputs);
  g_strfreev(o.shapes);
  g_strfreev(o.planned_shapes);
  g_free(o.output_dir);
  g_free(o.precision_name);
  return ok ? 0 : 1;
}
