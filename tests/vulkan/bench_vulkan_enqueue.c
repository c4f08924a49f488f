/* How long the host takes to queue one run of a model on the Vulkan device
 * (npu_context_run returning: recording or replaying its commands), apart
 * from the device's time to run it (the wait after). Prints min and median
 * of both over the runs.
 *   bench_vulkan_enqueue MODEL.onnx [RUNS] [NxCxHxW] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <npu/npu.h>

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int fail(const char *what)
{
  fprintf(stderr, "bench_vulkan_enqueue: %s: %s\n", what, npu_last_error_message());
  return 1;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: bench_vulkan_enqueue MODEL.onnx [RUNS] [NxCxHxW]\n");
    return 2;
  }
  int runs = argc > 2 ? atoi(argv[2]) : 10;
  if (runs < 1 || runs > 10000)
    runs = 10;
  npu_device *device;
  if (npu_device_open_by_backend("vulkan", 0, &device) != NPU_OK)
    return fail("no Vulkan device");
  npu_model *model;
  if (npu_model_load_file(argv[1], &model) != NPU_OK)
    return fail("cannot load the model");
  npu_tensor_info shape;
  npu_model_input_info(model, 0, &shape);
  if (argc > 3)
    sscanf(argv[3], "%ldx%ldx%ldx%ld", (long *)&shape.dims[0], (long *)&shape.dims[1],
           (long *)&shape.dims[2], (long *)&shape.dims[3]);
  for (uint32_t d = 0; d < shape.rank; d++)
    if (shape.dims[d] < 1)
      shape.dims[d] = 1;
  npu_context *context;
  npu_stream *stream;
  if (npu_context_create(model, device, &shape, 1, &context) != NPU_OK ||
      npu_stream_create(device, &stream) != NPU_OK)
    return fail("cannot plan the model");
  size_t in_bytes = sizeof(float);
  for (uint32_t d = 0; d < shape.rank; d++)
    in_bytes *= (size_t)shape.dims[d];
  uint32_t outputs = 0;
  npu_model_output_count(model, &outputs);
  npu_buffer *in, *outs[16];
  if (outputs > 16 || npu_buffer_alloc(device, in_bytes, &in) != NPU_OK ||
      npu_memset(in, 0, 0, in_bytes) != NPU_OK)
    return fail("cannot make the input");
  for (uint32_t o = 0; o < outputs; o++) {
    npu_tensor_info info;
    npu_context_output_info(context, o, &info);
    size_t bytes = 4;
    for (uint32_t d = 0; d < info.rank; d++)
      bytes *= (size_t)info.dims[d];
    if (npu_buffer_alloc(device, bytes, &outs[o]) != NPU_OK)
      return fail("cannot make an output");
  }
  double *queue = calloc((size_t)runs, sizeof *queue), *wait = calloc((size_t)runs, sizeof *wait);
  for (int r = -1; r < runs; r++) { /* run -1: the first, which records */
    double start = now_ms();
    if (npu_context_run(context, stream, &in, outs) != NPU_OK)
      return fail("run");
    double queued = now_ms();
    if (npu_stream_synchronize(stream) != NPU_OK)
      return fail("synchronize");
    if (r >= 0) {
      queue[r] = queued - start;
      wait[r] = now_ms() - queued;
    } else {
      printf("first run: queued in %.3f ms\n", queued - start);
    }
  }
  qsort(queue, (size_t)runs, sizeof *queue, compare);
  qsort(wait, (size_t)runs, sizeof *wait, compare);
  printf("queue a run: min %.3f median %.3f ms; device: min %.1f median %.1f ms (%d runs)\n",
         queue[0], queue[runs / 2], wait[0], wait[runs / 2], runs);
  free(queue);
  free(wait);
  return 0;
}
