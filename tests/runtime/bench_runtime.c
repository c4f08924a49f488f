/* Runtime micro-benchmarks: prints figures, asserts nothing about time.
 *   task submit-to-complete latency on a stream
 *   event round trip between two streams
 *   async copy bandwidth against plain memcpy
 *   pool alloc/release cost against malloc/free and raw device allocation */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_test.h"

typedef struct latch {
  GMutex lock;
  GCond cond;
  gboolean done;
} latch;

static void release_latch(void *data)
{
  latch *l = data;
  g_mutex_lock(&l->lock);
  l->done = TRUE;
  g_cond_signal(&l->cond);
  g_mutex_unlock(&l->lock);
}

static double now_us(void)
{
  return (double)g_get_monotonic_time();
}

static int compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *what, double *samples, int n)
{
  qsort(samples, (size_t)n, sizeof *samples, compare_doubles);
  printf("%-44s median %8.2f us   p99 %8.2f us\n", what, samples[n / 2],
         samples[n * 99 / 100]);
}

static void bench_task_latency(npu_device *device)
{
  enum { N = 20000 };
  static double samples[N];
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  latch l;
  g_mutex_init(&l.lock);
  g_cond_init(&l.cond);
  for (int i = 0; i < N; i++) {
    l.done = FALSE;
    double start = now_us();
    NPU_ASSERT_OK(npu_stream_launch_host_func(stream, release_latch, &l));
    g_mutex_lock(&l.lock);
    while (!l.done)
      g_cond_wait(&l.cond, &l.lock);
    g_mutex_unlock(&l.lock);
    samples[i] = now_us() - start;
  }
  report("task submit -> complete (host func)", samples, N);

  double start = now_us();
  for (int i = 0; i < N; i++)
    NPU_ASSERT_OK(npu_stream_launch_host_func(stream, release_latch, &l));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  printf("%-44s %8.0f tasks/s\n", "task throughput (queued, one stream)",
         N / ((now_us() - start) / 1e6));
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  g_mutex_clear(&l.lock);
  g_cond_clear(&l.cond);
}

static void bench_event_round_trip(npu_device *device)
{
  enum { N = 10000 };
  static double samples[N];
  npu_stream *a, *b;
  npu_event *ping, *pong;
  NPU_ASSERT_OK(npu_stream_create(device, &a));
  NPU_ASSERT_OK(npu_stream_create(device, &b));
  NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DISABLE_TIMING, &ping));
  NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DISABLE_TIMING, &pong));
  for (int i = 0; i < N; i++) {
    double start = now_us();
    NPU_ASSERT_OK(npu_event_record(ping, a));
    NPU_ASSERT_OK(npu_stream_wait_event(b, ping));
    NPU_ASSERT_OK(npu_event_record(pong, b));
    NPU_ASSERT_OK(npu_event_synchronize(pong));
    samples[i] = now_us() - start;
  }
  report("event round trip (A record, B wait+record)", samples, N);
  NPU_ASSERT_OK(npu_event_destroy(ping));
  NPU_ASSERT_OK(npu_event_destroy(pong));
  NPU_ASSERT_OK(npu_stream_destroy(a));
  NPU_ASSERT_OK(npu_stream_destroy(b));
}

static void bench_copy_bandwidth(npu_device *device)
{
  const size_t size = 64u << 20;
  const int reps = 10;
  void *host;
  NPU_ASSERT_OK(npu_host_alloc(device, size, &host));
  void *plain = malloc(size);
  memset(host, 1, size);
  memset(plain, 2, size);
  npu_buffer *buffer;
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &buffer));
  NPU_ASSERT_OK(npu_memcpy_h2d(buffer, 0, host, size)); /* fault pages in */
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));

  double start = now_us();
  for (int i = 0; i < reps; i++)
    memcpy(plain, host, size);
  double memcpy_gbs = size * (double)reps / ((now_us() - start) * 1e3);

  start = now_us();
  for (int i = 0; i < reps; i++)
    NPU_ASSERT_OK(npu_memcpy_h2d_async(buffer, 0, host, size, stream));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  double h2d_gbs = size * (double)reps / ((now_us() - start) * 1e3);

  start = now_us();
  for (int i = 0; i < reps; i++)
    NPU_ASSERT_OK(npu_memcpy_d2h_async(host, buffer, 0, size, stream));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  double d2h_gbs = size * (double)reps / ((now_us() - start) * 1e3);

  printf("%-44s %8.2f GB/s\n", "plain memcpy 64 MiB", memcpy_gbs);
  printf("%-44s %8.2f GB/s\n", "async H2D copy 64 MiB", h2d_gbs);
  printf("%-44s %8.2f GB/s\n", "async D2H copy 64 MiB", d2h_gbs);
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  NPU_ASSERT_OK(npu_host_free(device, host));
  free(plain);
}

static void bench_pool(npu_device *device)
{
  enum { N = 20000 };
  const size_t size = 1920 * 1080 * 3 / 2;
  npu_mem_pool *pool;
  NPU_ASSERT_OK(npu_mem_pool_create(device, NULL, &pool));
  npu_buffer *buffer;

  double start = now_us();
  for (int i = 0; i < N; i++) {
    NPU_ASSERT_OK(npu_mem_pool_alloc(pool, size, &buffer));
    NPU_ASSERT_OK(npu_buffer_release(buffer));
  }
  double pool_ns = (now_us() - start) * 1e3 / N;

  start = now_us();
  for (int i = 0; i < N; i++) {
    void *p = malloc(size);
    ((volatile char *)p)[0] = 0;
    free(p);
  }
  double malloc_ns = (now_us() - start) * 1e3 / N;

  enum { RAW = 500 };
  start = now_us();
  for (int i = 0; i < RAW; i++) {
    NPU_ASSERT_OK(npu_buffer_alloc(device, size, &buffer));
    NPU_ASSERT_OK(npu_buffer_release(buffer));
  }
  double raw_ns = (now_us() - start) * 1e3 / RAW;

  printf("%-44s %8.0f ns\n", "pool alloc+release (3 MB NV12 frame)", pool_ns);
  printf("%-44s %8.0f ns\n", "malloc+free (same size)", malloc_ns);
  printf("%-44s %8.0f ns\n", "device alloc+free, no pool (memfd+mmap)", raw_ns);
  NPU_ASSERT_OK(npu_mem_pool_destroy(pool));
}

int main(void)
{
  npu_device *device = npu_test_open_device();
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  printf("gst-npu runtime benchmark on %s (%s backend, %u threads)\n\n", props.name,
         props.backend, props.compute_units);
  bench_task_latency(device);
  bench_event_round_trip(device);
  bench_copy_bandwidth(device);
  bench_pool(device);
  NPU_ASSERT_OK(npu_device_release(device));
  return 0;
}
