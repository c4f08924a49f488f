/* The Vulkan backend under the runtime's API: devices, memory round trips,
 * streams, events and host functions. Run twice by meson: on the device's
 * own memory, and with NPU_VULKAN_DEVICE_MEMORY=opaque, where buffers are
 * not mapped and every host copy goes through a staging buffer. */
#include <string.h>
#include <unistd.h>

#include "vk_test.h"

static void test_device_listed(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  g_assert_cmpstr(props.backend, ==, "vulkan");
  g_assert_cmpuint(props.index, >=, 1); /* the CPU is device 0 */
  g_assert_cmpuint(strlen(props.name), >, 0);
  g_assert_cmpuint(props.memory_total, >, 0);
  g_assert_cmpuint(props.memory_free, <=, props.memory_total);
  g_assert_true(props.caps.async_copy);
  g_assert_true(props.caps.cross_stream_events);
  const char *memory = g_getenv("NPU_VULKAN_DEVICE_MEMORY");
  if (memory && strcmp(memory, "opaque") == 0)
    g_assert_false(props.caps.host_visible_memory);
  g_test_message("%s: %llu MiB, host-visible %s", props.name,
                 (unsigned long long)(props.memory_total >> 20),
                 props.caps.host_visible_memory ? "yes" : "no");

  /* The global index and NPU_BACKEND reach the same shared device. */
  npu_device *again;
  NPU_ASSERT_OK(npu_device_open(props.index, &again));
  g_assert_true(again == device);
  NPU_ASSERT_OK(npu_device_release(again));
  g_setenv("NPU_BACKEND", "vulkan", TRUE);
  NPU_ASSERT_OK(npu_device_open_default(&again));
  g_assert_true(again == device);
  NPU_ASSERT_OK(npu_device_release(again));
  g_setenv("NPU_DEVICE", "99", TRUE);
  NPU_ASSERT_STATUS(npu_device_open_default(&again), NPU_ERROR_NOT_FOUND);
  g_unsetenv("NPU_BACKEND");
  g_unsetenv("NPU_DEVICE");
  NPU_ASSERT_OK(npu_device_release(device));
}

static void fill_pattern(guint8 *bytes, size_t size, guint seed)
{
  for (size_t i = 0; i < size; i++)
    bytes[i] = (guint8)(i * 31 + seed);
}

/* Synchronous copies at odd offsets and sizes, fills with unaligned edges,
 * device-to-device copies, and the mapping where memory is host-visible. */
static void test_memory_round_trips(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  enum { SIZE = 4099 };
  guint8 src[SIZE], back[SIZE], expected[SIZE];
  fill_pattern(src, SIZE, 3);
  npu_buffer *a, *b;
  NPU_ASSERT_OK(npu_buffer_alloc(device, SIZE, &a));
  NPU_ASSERT_OK(npu_buffer_alloc(device, SIZE, &b));
  NPU_ASSERT_OK(npu_memcpy_h2d(a, 0, src, SIZE));
  NPU_ASSERT_OK(npu_memcpy_d2h(back, a, 0, SIZE));
  g_assert_cmpmem(back, SIZE, src, SIZE);

  /* Fills: aligned, unaligned at both ends, shorter than a word. */
  static const struct { size_t offset, size; int value; } fills[] = {
      {0, SIZE, 0x5a}, {1, 9, 0xff}, {4, 8, 0x11}, {6, 1, 0x22}, {13, 2000, 0x7e},
      {SIZE - 3, 3, 0x01}};
  NPU_ASSERT_OK(npu_memcpy_h2d(b, 0, src, SIZE));
  memcpy(expected, src, SIZE);
  for (size_t f = 0; f < G_N_ELEMENTS(fills); f++) {
    NPU_ASSERT_OK(npu_memset(b, fills[f].offset, fills[f].value, fills[f].size));
    memset(expected + fills[f].offset, fills[f].value, fills[f].size);
  }
  NPU_ASSERT_OK(npu_memcpy_d2h(back, b, 0, SIZE));
  g_assert_cmpmem(back, SIZE, expected, SIZE);

  /* Device to device, unaligned; host copies into the middle. */
  NPU_ASSERT_OK(npu_memcpy_d2d(b, 7, a, 3, 1000));
  memcpy(expected + 7, src + 3, 1000);
  NPU_ASSERT_OK(npu_memcpy_h2d(b, 2001, src + 5, 77));
  memcpy(expected + 2001, src + 5, 77);
  NPU_ASSERT_OK(npu_memcpy_d2h(back, b, 0, SIZE));
  g_assert_cmpmem(back, SIZE, expected, SIZE);
  NPU_ASSERT_OK(npu_memcpy_d2h(back, b, 1, 5));
  g_assert_cmpmem(back, 5, expected + 1, 5);

  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  void *mapped = NULL;
  if (props.caps.host_visible_memory) {
    NPU_ASSERT_OK(npu_buffer_map(b, NPU_MAP_READ | NPU_MAP_WRITE, &mapped));
    g_assert_cmpmem(mapped, SIZE, expected, SIZE);
    ((guint8 *)mapped)[10] = 0xab;
    NPU_ASSERT_OK(npu_buffer_unmap(b));
    NPU_ASSERT_OK(npu_memcpy_d2h(back, b, 10, 1));
    g_assert_cmpuint(back[0], ==, 0xab);
  } else {
    NPU_ASSERT_STATUS(npu_buffer_map(b, NPU_MAP_READ, &mapped), NPU_ERROR_NOT_SUPPORTED);
  }
  /* Out of range is the runtime's to refuse, before the backend. */
  NPU_ASSERT_STATUS(npu_memcpy_h2d(a, SIZE - 2, src, 3), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_OK(npu_buffer_release(b));
  NPU_ASSERT_OK(npu_buffer_release(a));
  NPU_ASSERT_OK(npu_device_release(device));
}

/* Device memory shared as a dma-buf (VK_EXT_external_memory_dma_buf with
 * VK_KHR_external_memory_fd): a device buffer's export, imported as a
 * second buffer, is the same memory: writes through either (host copies,
 * fills, device copies) are read through the other, and the import exports
 * its fd again at the same offset. Skipped where the device exports no
 * dma-bufs (lavapipe 22.3 has neither extension). */
static void test_dma_buf_shared(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  if (!props.caps.fd_export) {
    g_test_skip("the device exports no dma-bufs (no VK_EXT_external_memory_dma_buf)");
    NPU_ASSERT_OK(npu_device_release(device));
    return;
  }
  g_assert_true(props.caps.fd_import);
  enum { SIZE = 3 * 4096 + 17 };
  static guint8 src[SIZE], back[SIZE], expected[SIZE];
  fill_pattern(src, SIZE, 9);
  npu_buffer *spare, *exported, *imported;
  /* (a buffer before it, so that the exported one need not start its block) */
  NPU_ASSERT_OK(npu_buffer_alloc(device, 1000, &spare));
  NPU_ASSERT_OK(npu_buffer_alloc(device, SIZE, &exported));
  NPU_ASSERT_OK(npu_memcpy_h2d(exported, 0, src, SIZE));
  int fd = -1;
  size_t offset = 0;
  NPU_ASSERT_OK(npu_buffer_export_fd(exported, &fd, &offset));
  g_assert_cmpint(fd, >=, 0);
  g_test_message("%s: a buffer exported as dma-buf fd %d at offset %zu", props.name, fd, offset);
  NPU_ASSERT_OK(npu_buffer_import_fd(device, fd, offset, SIZE, NULL, NULL, &imported));
  close(fd); /* the caller's: the import keeps its own */
  NPU_ASSERT_OK(npu_memcpy_d2h(back, imported, 0, SIZE));
  g_assert_cmpmem(back, SIZE, src, SIZE);

  /* Written through the import, read through the export, and back. */
  memcpy(expected, src, SIZE);
  NPU_ASSERT_OK(npu_memset(imported, 101, 0xee, 50));
  memset(expected + 101, 0xee, 50);
  NPU_ASSERT_OK(npu_memcpy_h2d(imported, 4000, src + 7, 333));
  memcpy(expected + 4000, src + 7, 333);
  NPU_ASSERT_OK(npu_memcpy_d2d(imported, 9000, imported, 3, 2000));
  memmove(expected + 9000, expected + 3, 2000);
  NPU_ASSERT_OK(npu_memcpy_d2h(back, exported, 0, SIZE));
  g_assert_cmpmem(back, SIZE, expected, SIZE);
  NPU_ASSERT_OK(npu_memset(exported, SIZE - 9, 0x33, 9));
  memset(expected + SIZE - 9, 0x33, 9);
  NPU_ASSERT_OK(npu_memcpy_d2h(back, imported, 0, SIZE));
  g_assert_cmpmem(back, SIZE, expected, SIZE);

  /* The import exports the fd it came from, at its offset. */
  size_t again_offset = 0;
  NPU_ASSERT_OK(npu_buffer_export_fd(imported, &fd, &again_offset));
  g_assert_cmpint(fd, >=, 0);
  g_assert_cmpuint(again_offset, ==, offset);
  close(fd);
  NPU_ASSERT_OK(npu_buffer_release(imported));
  NPU_ASSERT_OK(npu_buffer_release(exported));
  NPU_ASSERT_OK(npu_buffer_release(spare));
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_out_of_memory(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  npu_buffer *buffer;
  NPU_ASSERT_STATUS(npu_buffer_alloc(device, props.memory_total + 1, &buffer),
                    NPU_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull(strstr(npu_last_error_message(), "out of memory"));
  NPU_ASSERT_OK(npu_device_release(device));
}

typedef struct order_log {
  GMutex lock;
  int entries[64];
  int count;
  GThread *threads[64];
} order_log;

typedef struct order_entry {
  order_log *log;
  int value;
} order_entry;

static void log_value(void *data)
{
  order_entry *entry = data;
  g_mutex_lock(&entry->log->lock);
  entry->log->threads[entry->log->count] = g_thread_self();
  entry->log->entries[entry->log->count++] = entry->value;
  g_mutex_unlock(&entry->log->lock);
}

static void write_pattern(void *data)
{
  fill_pattern(data, 1 << 16, 0);
}

/* Async copies and host functions in one stream run in order: a host
 * function sees the copy queued before it, and a copy queued after a host
 * function reads what the function wrote. Host functions run on one thread,
 * never the caller's. */
static void test_stream_order_and_host_functions(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  enum { SIZE = 1 << 16, ROUNDS = 16 };
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  npu_buffer *buffer;
  NPU_ASSERT_OK(npu_buffer_alloc(device, SIZE, &buffer));
  guint8 *src = g_malloc(SIZE), *back = g_malloc(SIZE * ROUNDS);
  order_log log = {0};
  g_mutex_init(&log.lock);
  order_entry entries[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    NPU_ASSERT_OK(npu_memset_async(buffer, 0, r, SIZE, stream));
    NPU_ASSERT_OK(npu_memset_async(buffer, 100, r + 1, 1, stream));
    entries[r] = (order_entry){&log, r};
    NPU_ASSERT_OK(npu_stream_launch_host_func(stream, log_value, &entries[r]));
    NPU_ASSERT_OK(npu_memcpy_d2h_async(back + (size_t)r * SIZE, buffer, 0, SIZE, stream));
  }
  /* A host function that writes the source of the copy queued after it. */
  memset(src, 0, SIZE);
  NPU_ASSERT_OK(npu_stream_launch_host_func(stream, write_pattern, src));
  NPU_ASSERT_OK(npu_memcpy_h2d_async(buffer, 0, src, SIZE, stream));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  g_assert_cmpint(npu_stream_query(stream), ==, NPU_OK);
  g_assert_cmpint(log.count, ==, ROUNDS);
  for (int r = 0; r < ROUNDS; r++) {
    g_assert_cmpint(log.entries[r], ==, r);
    g_assert_true(log.threads[r] == log.threads[0]);
    g_assert_true(log.threads[r] != g_thread_self());
    g_assert_cmpuint(back[(size_t)r * SIZE], ==, r);
    g_assert_cmpuint(back[(size_t)r * SIZE + 100], ==, r + 1);
    g_assert_cmpuint(back[(size_t)r * SIZE + SIZE - 1], ==, r);
  }
  NPU_ASSERT_OK(npu_memcpy_d2h(back, buffer, 0, SIZE));
  fill_pattern(back + SIZE, SIZE, 0);
  g_assert_cmpmem(back, SIZE, back + SIZE, SIZE);
  npu_stream_stats stats;
  NPU_ASSERT_OK(npu_stream_get_stats(stream, &stats));
  g_assert_cmpuint(stats.tasks_completed, ==, stats.tasks_submitted);
  g_assert_cmpuint(stats.tasks_submitted, >=, ROUNDS * 4);
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  g_mutex_clear(&log.lock);
  g_free(src);
  g_free(back);
  NPU_ASSERT_OK(npu_device_release(device));
}

typedef struct gate {
  GMutex lock;
  GCond opened;
  gboolean open;
  gboolean entered; /* the host function is running (and waiting) */
} gate;

static void wait_for_gate(void *data)
{
  gate *g = data;
  g_mutex_lock(&g->lock);
  g->entered = TRUE;
  g_cond_broadcast(&g->opened);
  while (!g->open)
    g_cond_wait(&g->opened, &g->lock);
  g_mutex_unlock(&g->lock);
}

static void wait_until_entered(gate *g)
{
  g_mutex_lock(&g->lock);
  while (!g->entered)
    g_cond_wait(&g->opened, &g->lock);
  g_mutex_unlock(&g->lock);
}

/* Stream B waits for an event of stream A (on the device: B's next
 * submission waits for A's semaphore); A is held back by a host function
 * until the test opens it, so B cannot have run early. */
static void test_events_across_streams(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  enum { SIZE = 4096 };
  npu_stream *a, *b;
  NPU_ASSERT_OK(npu_stream_create(device, &a));
  NPU_ASSERT_OK(npu_stream_create(device, &b));
  npu_event *written, *start, *end;
  NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DISABLE_TIMING, &written));
  NPU_ASSERT_OK(npu_event_create(device, 0, &start));
  NPU_ASSERT_OK(npu_event_create(device, 0, &end));
  g_assert_cmpint(npu_event_query(written), ==, NPU_OK); /* never recorded: done */
  npu_buffer *shared, *copy;
  NPU_ASSERT_OK(npu_buffer_alloc(device, SIZE, &shared));
  NPU_ASSERT_OK(npu_buffer_alloc(device, SIZE, &copy));
  NPU_ASSERT_OK(npu_memset(shared, 0, 0, SIZE));
  NPU_ASSERT_OK(npu_memset(copy, 0, 0, SIZE));

  gate g = {0};
  g_mutex_init(&g.lock);
  g_cond_init(&g.opened);
  NPU_ASSERT_OK(npu_event_record(start, a));
  NPU_ASSERT_OK(npu_stream_launch_host_func(a, wait_for_gate, &g));
  NPU_ASSERT_OK(npu_memset_async(shared, 0, 0x42, SIZE, a));
  NPU_ASSERT_OK(npu_event_record(written, a));
  NPU_ASSERT_OK(npu_event_record(end, a));
  NPU_ASSERT_OK(npu_stream_wait_event(b, written));
  NPU_ASSERT_OK(npu_memcpy_d2d_async(copy, 0, shared, 0, SIZE, b));
  /* The 20 ms count from when the host function runs, after the start
   * event: a loaded machine may start stream A late. */
  wait_until_entered(&g);
  g_usleep(20000);
  g_assert_cmpint(npu_event_query(written), ==, NPU_ERROR_NOT_READY);
  g_assert_cmpint(npu_stream_query(b), ==, NPU_ERROR_NOT_READY);
  float ms;
  NPU_ASSERT_STATUS(npu_event_elapsed_ms(start, end, &ms), NPU_ERROR_NOT_READY);
  g_mutex_lock(&g.lock);
  g.open = TRUE;
  g_cond_signal(&g.opened);
  g_mutex_unlock(&g.lock);
  NPU_ASSERT_OK(npu_stream_synchronize(b));
  g_assert_cmpint(npu_event_query(written), ==, NPU_OK);
  guint8 back[SIZE];
  NPU_ASSERT_OK(npu_memcpy_d2h(back, copy, 0, SIZE));
  for (size_t i = 0; i < SIZE; i++)
    g_assert_cmpuint(back[i], ==, 0x42);

  /* Timestamps: the held-back host function took at least the 20 ms (the
   * bound leaves room for the device's timestamp granularity). */
  NPU_ASSERT_OK(npu_event_synchronize(end));
  NPU_ASSERT_OK(npu_event_elapsed_ms(start, end, &ms));
  g_test_message("elapsed between the events: %.3f ms", ms);
  g_assert_cmpfloat(ms, >=, 15.0);
  NPU_ASSERT_STATUS(npu_event_elapsed_ms(start, written, &ms), NPU_ERROR_NOT_SUPPORTED);

  NPU_ASSERT_OK(npu_buffer_release(copy));
  NPU_ASSERT_OK(npu_buffer_release(shared));
  NPU_ASSERT_OK(npu_event_destroy(end));
  NPU_ASSERT_OK(npu_event_destroy(start));
  NPU_ASSERT_OK(npu_event_destroy(written));
  NPU_ASSERT_OK(npu_stream_destroy(b));
  NPU_ASSERT_OK(npu_stream_destroy(a));
  g_cond_clear(&g.opened);
  g_mutex_clear(&g.lock);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* A CPU stream and a Vulkan stream wait on each other's events (the
 * partitioned executor's pattern): the runtime turns a wait for another
 * device's event into a host function on the waiting stream. */
static void test_events_across_devices(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  enum { SIZE = 8192 };
  npu_device *cpu;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &cpu));
  npu_stream *gpu_stream, *cpu_stream;
  NPU_ASSERT_OK(npu_stream_create(device, &gpu_stream));
  NPU_ASSERT_OK(npu_stream_create(cpu, &cpu_stream));
  npu_event *gpu_done, *cpu_done;
  NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DISABLE_TIMING, &gpu_done));
  NPU_ASSERT_OK(npu_event_create(cpu, NPU_EVENT_DISABLE_TIMING, &cpu_done));
  npu_buffer *on_gpu, *on_cpu;
  NPU_ASSERT_OK(npu_buffer_alloc(device, SIZE, &on_gpu));
  NPU_ASSERT_OK(npu_buffer_alloc(cpu, SIZE, &on_cpu));
  guint8 *host = g_malloc0(SIZE), *back = g_malloc(SIZE);
  for (int round = 1; round <= 5; round++) {
    NPU_ASSERT_OK(npu_memset_async(on_gpu, 0, round, SIZE, gpu_stream));
    NPU_ASSERT_OK(npu_memcpy_d2h_async(host, on_gpu, 0, SIZE, gpu_stream));
    NPU_ASSERT_OK(npu_event_record(gpu_done, gpu_stream));
    NPU_ASSERT_OK(npu_stream_wait_event(cpu_stream, gpu_done));
    NPU_ASSERT_OK(npu_memcpy_h2d_async(on_cpu, 0, host, SIZE, cpu_stream));
    NPU_ASSERT_OK(npu_memset_async(on_cpu, 0, round + 100, 16, cpu_stream));
    NPU_ASSERT_OK(npu_memcpy_d2h_async(host, on_cpu, 0, SIZE, cpu_stream));
    NPU_ASSERT_OK(npu_event_record(cpu_done, cpu_stream));
    NPU_ASSERT_OK(npu_stream_wait_event(gpu_stream, cpu_done));
    NPU_ASSERT_OK(npu_memcpy_h2d_async(on_gpu, 0, host, SIZE, gpu_stream));
    NPU_ASSERT_OK(npu_stream_synchronize(gpu_stream));
    NPU_ASSERT_OK(npu_memcpy_d2h(back, on_gpu, 0, SIZE));
    g_assert_cmpuint(back[0], ==, round + 100);
    g_assert_cmpuint(back[15], ==, round + 100);
    g_assert_cmpuint(back[16], ==, round);
    g_assert_cmpuint(back[SIZE - 1], ==, round);
  }
  g_free(back);
  g_free(host);
  NPU_ASSERT_OK(npu_buffer_release(on_cpu));
  NPU_ASSERT_OK(npu_buffer_release(on_gpu));
  NPU_ASSERT_OK(npu_event_destroy(cpu_done));
  NPU_ASSERT_OK(npu_event_destroy(gpu_done));
  NPU_ASSERT_OK(npu_stream_destroy(cpu_stream));
  NPU_ASSERT_OK(npu_stream_destroy(gpu_stream));
  NPU_ASSERT_OK(npu_device_release(cpu));
  NPU_ASSERT_OK(npu_device_release(device));
}

/* The stream's statistics count the device's time running its commands,
 * from timestamps around each submission: none before any work, some after
 * it, and inside busy_ns. Device time is never compared with the events:
 * device timestamps and event times come from different clocks, and a
 * loaded machine orders them any way (CI once saw 7.3 ms of device time
 * between events 5.7 ms apart). The work (fills and copies of 4 MiB) is
 * queued while a host function holds the stream back, so that the device
 * runs it back to back. */
static void test_stream_device_time(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  enum { SIZE = 4 << 20, ROUNDS = 8 };
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  npu_buffer *a, *b;
  NPU_ASSERT_OK(npu_buffer_alloc(device, SIZE, &a));
  NPU_ASSERT_OK(npu_buffer_alloc(device, SIZE, &b));
  npu_event *start, *end;
  NPU_ASSERT_OK(npu_event_create(device, 0, &start));
  NPU_ASSERT_OK(npu_event_create(device, 0, &end));
  npu_stream_stats before, after;
  NPU_ASSERT_OK(npu_stream_get_stats(stream, &before));
  g_assert_cmpuint(before.device_ns, ==, 0);
  gate held = {0};
  g_mutex_init(&held.lock);
  g_cond_init(&held.opened);
  NPU_ASSERT_OK(npu_stream_launch_host_func(stream, wait_for_gate, &held));
  NPU_ASSERT_OK(npu_event_record(start, stream));
  for (int r = 0; r < ROUNDS; r++) {
    NPU_ASSERT_OK(npu_memset_async(a, 0, r, SIZE, stream));
    NPU_ASSERT_OK(npu_memcpy_d2d_async(b, 0, a, 0, SIZE, stream));
  }
  NPU_ASSERT_OK(npu_event_record(end, stream));
  g_mutex_lock(&held.lock);
  held.open = TRUE;
  g_cond_signal(&held.opened);
  g_mutex_unlock(&held.lock);
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  NPU_ASSERT_OK(npu_stream_get_stats(stream, &after));
  float elapsed_ms;
  NPU_ASSERT_OK(npu_event_elapsed_ms(start, end, &elapsed_ms));
  double device_ms = (double)(after.device_ns - before.device_ns) / 1e6;
  double busy_ms = (double)(after.busy_ns - before.busy_ns) / 1e6;
  g_test_message("%d fills and copies of %d MiB: %.2f ms timed on the device, %.2f ms between "
                 "the events, %.2f ms busy (host work too)",
                 ROUNDS, SIZE >> 20, device_ms, elapsed_ms, busy_ms);
  g_assert_cmpfloat(device_ms, >, 0);
  g_assert_cmpfloat(busy_ms, >=, device_ms); /* busy counts host work and device time */
  guint8 last[1];
  NPU_ASSERT_OK(npu_memcpy_d2h(last, b, SIZE - 1, 1));
  g_assert_cmpuint(last[0], ==, ROUNDS - 1);
  g_cond_clear(&held.opened);
  g_mutex_clear(&held.lock);
  NPU_ASSERT_OK(npu_event_destroy(end));
  NPU_ASSERT_OK(npu_event_destroy(start));
  NPU_ASSERT_OK(npu_buffer_release(b));
  NPU_ASSERT_OK(npu_buffer_release(a));
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_device_release(device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vulkan/device-listed", test_device_listed);
  g_test_add_func("/vulkan/memory-round-trips", test_memory_round_trips);
  g_test_add_func("/vulkan/dma-buf-shared", test_dma_buf_shared);
  g_test_add_func("/vulkan/out-of-memory", test_out_of_memory);
  g_test_add_func("/vulkan/stream-order-and-host-functions", test_stream_order_and_host_functions);
  g_test_add_func("/vulkan/events-across-streams", test_events_across_streams);
  g_test_add_func("/vulkan/events-across-devices", test_events_across_devices);
  g_test_add_func("/vulkan/stream-device-time", test_stream_device_time);
  return g_test_run();
}
