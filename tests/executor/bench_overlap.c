/* Whether the transfers of heterogeneous execution overlap compute: a
 * benchmark that prints figures (no timed assertion). The device is a
 * simulated slow accelerator: the CPU backend declaring convolutions only
 * (the rest runs on the host), whose kernel launches occupy a compute
 * engine for COMPUTE_MS each and whose copies occupy a copy engine for
 * COPY_LATENCY_MS + bytes / COPY_BYTES_PER_MS, by sleeping on the stream
 * that queued them (the CPU stays free, as beside a real accelerator).
 * Each engine takes one job at a time and logs when it was busy.
 *
 * The model is run first serially (one context, the caller synchronising
 * after each run), then as two contexts on two streams, queued alternately
 * and synchronised only at the end: the runtime orders each run's copies
 * and kernels on its streams with events, so one run's copies may proceed
 * while the other's kernels run. Printed: the engines' busy time per run,
 * how long the copy engine was busy while the compute engine was (from
 * their logs), the wall time per run of both ways, and how long
 * npu_context_run takes to return against the run itself (no host sync).
 * The outputs of the overlapped runs must equal the serial ones (exit 1
 * otherwise).
 *
 *   bench_overlap MODEL.onnx [RUNS]   (default: tests' channel_blocks.onnx, 20) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <npu/npu.h>

#include "cpu/cpu_internal.h"
#include "npu_hal_graph.h"

#define COMPUTE_MS 1.0
#define COPY_LATENCY_MS 0.2
#define COPY_BYTES_PER_MS (64.0 * 1024) /* 64 MB/s: a slow bus, to make copies count */
#define MAX_JOBS (1 << 20)

typedef struct engine {
  const char *name;
  pthread_mutex_t lock;
} engine;

/* One job an engine ran: queued on a stream, it sleeps its time under the
 * engine's lock and notes when it ran. */
typedef struct job {
  engine *engine;
  double ms, start, end;
} job;

static engine compute_engine = {"compute", PTHREAD_MUTEX_INITIALIZER};
static engine copy_engine = {"copy", PTHREAD_MUTEX_INITIALIZER};
static job jobs[MAX_JOBS];
static size_t job_count; /* queued by the benchmark's one thread */

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void run_job(void *data)
{
  job *j = data;
  pthread_mutex_lock(&j->engine->lock);
  j->start = now_ms();
  struct timespec pause = {0, (long)(j->ms * 1e6)};
  nanosleep(&pause, NULL);
  j->end = now_ms();
  pthread_mutex_unlock(&j->engine->lock);
}

static npu_status occupy(npu_hal_stream *stream, engine *e, double ms)
{
  if (job_count == MAX_JOBS)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "bench_overlap: job log full");
  job *j = &jobs[job_count++];
  *j = (job){e, ms, 0, 0};
  return npu_cpu_backend.stream_submit(stream, run_job, j);
}

static bool convolutions_only(npu_hal_device *device, const npu_hal_op *op)
{
  (void)device;
  return strcmp(op->op_type, "Conv") == 0;
}

static npu_status slow_run(npu_hal_device *device, npu_hal_stream *stream,
                           const npu_hal_launch *launches, size_t count, npu_hal_task_fn done,
                           void *done_data)
{
  npu_status status = occupy(stream, &compute_engine, COMPUTE_MS * (double)count);
  return status == NPU_OK ? npu_cpu_backend.graph->run(device, stream, launches, count, done,
                                                       done_data)
                          : status;
}

static npu_status slow_copy(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst,
                            npu_hal_mem_ref src, size_t size, npu_hal_task_fn done,
                            void *done_data)
{
  /* Synchronous copies (no stream: weights, the inputs' upload) are set-up, not timed. */
  npu_status status = stream ? occupy(stream, &copy_engine,
                                      COPY_LATENCY_MS + (double)size / COPY_BYTES_PER_MS)
                             : NPU_OK;
  return status == NPU_OK ? npu_cpu_backend.copy(device, stream, dst, src, size, done, done_data)
                          : status;
}

static npu_hal_graph_ops slow_graph;
static npu_hal_backend slow_backend;

static npu_status add_slow_backend(void)
{
  slow_graph = *npu_cpu_backend.graph;
  slow_graph.op_supported = convolutions_only;
  slow_graph.run = slow_run;
  slow_backend = npu_cpu_backend;
  slow_backend.name = "slow-accelerator";
  slow_backend.copy = slow_copy;
  slow_backend.copy_2d = NULL;
  slow_backend.graph = &slow_graph;
  return npu_hal_backend_add(&slow_backend);
}

/* Busy time of the engines over jobs [first, end), per engine, and how long
 * both were busy at once (each engine's jobs never overlap each other). */
typedef struct busy {
  double compute, copy, both;
} busy;

static busy busy_of(size_t first, size_t end)
{
  busy b = {0, 0, 0};
  for (size_t i = first; i < end; i++) {
    double length = jobs[i].end - jobs[i].start;
    *(jobs[i].engine == &compute_engine ? &b.compute : &b.copy) += length;
    if (jobs[i].engine != &copy_engine)
      continue;
    for (size_t k = first; k < end; k++) {
      if (jobs[k].engine != &compute_engine)
        continue;
      double from = jobs[i].start > jobs[k].start ? jobs[i].start : jobs[k].start;
      double to = jobs[i].end < jobs[k].end ? jobs[i].end : jobs[k].end;
      if (to > from)
        b.both += to - from;
    }
  }
  return b;
}

typedef struct lane {
  npu_context *context;
  npu_stream *stream;
  npu_buffer *input, *outputs[8];
  size_t output_bytes[8];
} lane;

static npu_status lane_open(npu_model *model, npu_device *device, const float *pixels,
                            size_t input_bytes, uint32_t output_count, lane *l)
{
  npu_status status = npu_context_create(model, device, NULL, 0, &l->context);
  if (status == NPU_OK)
    status = npu_stream_create(device, &l->stream);
  if (status == NPU_OK)
    status = npu_buffer_alloc(device, input_bytes, &l->input);
  if (status == NPU_OK)
    status = npu_memcpy_h2d(l->input, 0, pixels, input_bytes);
  for (uint32_t o = 0; o < output_count && status == NPU_OK; o++) {
    npu_tensor_info info;
    status = npu_context_output_info(l->context, o, &info);
    size_t count = 1;
    for (uint32_t d = 0; d < info.rank; d++)
      count *= (size_t)info.dims[d];
    l->output_bytes[o] = count * npu_dtype_size(info.dtype);
    if (status == NPU_OK)
      status = npu_buffer_alloc(device, l->output_bytes[o], &l->outputs[o]);
  }
  return status;
}

static void lane_close(lane *l, uint32_t output_count)
{
  for (uint32_t o = 0; o < output_count; o++)
    if (l->outputs[o])
      npu_buffer_release(l->outputs[o]);
  if (l->input)
    npu_buffer_release(l->input);
  if (l->stream)
    npu_stream_destroy(l->stream);
  if (l->context)
    npu_context_destroy(l->context);
}

/* Whether the lanes' outputs are the same bytes. */
static bool same_outputs(const lane *a, const lane *b, uint32_t output_count)
{
  bool same = true;
  for (uint32_t o = 0; o < output_count && same; o++) {
    size_t bytes = a->output_bytes[o];
    char *x = malloc(bytes), *y = malloc(bytes);
    same = x && y && npu_memcpy_d2h(x, a->outputs[o], 0, bytes) == NPU_OK &&
           npu_memcpy_d2h(y, b->outputs[o], 0, bytes) == NPU_OK && memcmp(x, y, bytes) == 0;
    free(x);
    free(y);
  }
  return same;
}

/* One way of running: wall time and engine use per run. */
typedef struct figures {
  double wall, queued, compute, copy, both;
} figures;

static figures per_run(double wall, busy b, int runs)
{
  return (figures){wall / runs, 0, b.compute / runs, b.copy / runs, b.both / runs};
}

/* Serially: one context, the caller waiting for each run. */
static npu_status run_serially(lane *l, int runs, figures *f)
{
  size_t first = job_count;
  double start = now_ms(), queued = 0;
  npu_status status = NPU_OK;
  for (int r = 0; r < runs && status == NPU_OK; r++) {
    double before = now_ms();
    status = npu_context_run(l->context, l->stream, &l->input, l->outputs);
    queued += now_ms() - before;
    if (status == NPU_OK)
      status = npu_stream_synchronize(l->stream);
  }
  *f = per_run(now_ms() - start, busy_of(first, job_count), runs);
  f->queued = queued / runs;
  return status;
}

/* Two contexts on two streams, queued alternately, waited for at the end. */
static npu_status run_overlapped(lane lanes[2], int runs, figures *f)
{
  size_t first = job_count;
  double start = now_ms();
  npu_status status = NPU_OK;
  for (int r = 0; r < runs && status == NPU_OK; r++) {
    lane *l = &lanes[r % 2];
    status = npu_context_run(l->context, l->stream, &l->input, l->outputs);
  }
  for (int i = 0; i < 2 && status == NPU_OK; i++)
    status = npu_stream_synchronize(lanes[i].stream);
  *f = per_run(now_ms() - start, busy_of(first, job_count), runs);
  return status;
}

static int by_value(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Min and median of `count` values (sorted in place). */
static void print_spread(const char *what, double *values, int count)
{
  qsort(values, (size_t)count, sizeof *values, by_value);
  printf("  %-44s min %7.2f  median %7.2f\n", what, values[0], values[count / 2]);
}

#define ROUNDS 5

/* Serial and overlapped runs alternating, ROUNDS rounds of `runs` runs each. */
static npu_status benchmark(lane lanes[2], int runs)
{
  double serial_wall[ROUNDS], overlapped_wall[ROUNDS], ratio[ROUNDS], queued[ROUNDS];
  double copy_under_compute[ROUNDS], overlapped_busy[ROUNDS];
  npu_status status = NPU_OK;
  for (int round = 0; round < ROUNDS && status == NPU_OK; round++) {
    figures serial, overlapped;
    status = run_serially(&lanes[0], runs, &serial);
    if (status == NPU_OK)
      status = run_overlapped(lanes, runs, &overlapped);
    if (status != NPU_OK)
      break;
    printf("round %d: serial wall %6.2f ms/run (compute engine %5.2f, copy engine %5.2f, "
           "copies under compute %5.2f); overlapped wall %6.2f ms/run (compute %5.2f, copy "
           "%5.2f, copies under compute %5.2f)\n",
           round + 1, serial.wall, serial.compute, serial.copy, serial.both, overlapped.wall,
           overlapped.compute, overlapped.copy, overlapped.both);
    serial_wall[round] = serial.wall;
    overlapped_wall[round] = overlapped.wall;
    ratio[round] = overlapped.wall / serial.wall;
    queued[round] = serial.queued;
    copy_under_compute[round] = overlapped.copy > 0 ? 100 * overlapped.both / overlapped.copy : 0;
    overlapped_busy[round] = overlapped.wall / (overlapped.compute + overlapped.copy);
  }
  if (status != NPU_OK)
    return status;
  printf("over %d rounds of %d runs:\n", ROUNDS, runs);
  print_spread("npu_context_run returns in (ms)", queued, ROUNDS);
  print_spread("serial wall (ms/run)", serial_wall, ROUNDS);
  print_spread("overlapped wall (ms/run)", overlapped_wall, ROUNDS);
  print_spread("overlapped / serial wall", ratio, ROUNDS);
  print_spread("overlapped wall / (compute + copy busy)", overlapped_busy, ROUNDS);
  print_spread("copy time under compute, overlapped (%)", copy_under_compute, ROUNDS);
  return NPU_OK;
}

int main(int argc, char **argv)
{
  const char *dir = getenv("NPU_TEST_MODELS");
  char fallback[1024];
  snprintf(fallback, sizeof fallback, "%s/channel_blocks.onnx", dir ? dir : ".");
  const char *path = argc > 1 ? argv[1] : fallback;
  int runs = argc > 2 ? atoi(argv[2]) : 20;
  if (runs < 2) {
    fprintf(stderr, "usage: bench_overlap [MODEL.onnx [RUNS >= 2]]\n");
    return 2;
  }
  npu_device *device = NULL;
  npu_model *model = NULL;
  lane lanes[2] = {{0}};
  uint32_t output_count = 0;
  float *pixels = NULL;
  npu_status status = add_slow_backend();
  if (status == NPU_OK)
    status = npu_device_open_by_backend(slow_backend.name, 0, &device);
  if (status == NPU_OK)
    status = npu_model_load_file(path, &model);
  if (status == NPU_OK)
    status = npu_model_output_count(model, &output_count);
  npu_tensor_info input = {0};
  if (status == NPU_OK)
    status = npu_model_input_info(model, 0, &input);
  size_t count = 1;
  for (uint32_t d = 0; d < input.rank; d++)
    count *= (size_t)(input.dims[d] > 0 ? input.dims[d] : 1);
  if (status == NPU_OK && (output_count > 8 || input.dtype != NPU_DTYPE_FLOAT32 ||
                           !(pixels = malloc(count * sizeof *pixels))))
    status = npu_set_error(NPU_ERROR_NOT_SUPPORTED, "bench_overlap: a model of one float32 "
                           "input and up to 8 outputs");
  for (size_t i = 0; status == NPU_OK && i < count; i++)
    pixels[i] = (float)((i * 7919) % 2000) / 1000.0f - 1.0f;
  for (int i = 0; i < 2 && status == NPU_OK; i++)
    status = lane_open(model, device, pixels, count * sizeof *pixels, output_count, &lanes[i]);
  for (int i = 0; i < 2 && status == NPU_OK; i++) /* warm-up */
    status = npu_context_run_sync(lanes[i].context, &lanes[i].input, lanes[i].outputs);
  npu_context_stats stats;
  if (status == NPU_OK)
    status = npu_context_get_stats(lanes[0].context, &stats);
  if (status == NPU_OK) {
    printf("partition: %u subgraphs, %u kernels on the host, %llu bytes copied per run\n",
           stats.subgraphs, stats.host_kernels, (unsigned long long)stats.transfer_bytes);
    printf("simulated device: %.1f ms per kernel launch, copies %.1f ms + %.0f KiB/ms\n",
           COMPUTE_MS, COPY_LATENCY_MS, COPY_BYTES_PER_MS / 1024);
    status = benchmark(lanes, runs);
  }
  bool same = status == NPU_OK && same_outputs(&lanes[0], &lanes[1], output_count);
  if (status == NPU_OK && !same)
    fprintf(stderr, "bench_overlap: the two contexts' outputs differ\n");
  if (status != NPU_OK)
    fprintf(stderr, "bench_overlap: %s\n", npu_last_error_message());
  for (int i = 0; i < 2; i++)
    lane_close(&lanes[i], output_count);
  if (model)
    npu_model_release(model);
  if (device)
    npu_device_release(device);
  free(pixels);
  return status == NPU_OK && same ? 0 : 1;
}
