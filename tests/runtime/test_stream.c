/* Streams and events: ordering, synchronize/query, cross-stream waits,
 * timing, stats and errors on dead handles. */
#include <string.h>
#include <unistd.h>

#include "npu_test.h"

typedef struct order_log {
  GMutex lock;
  int values[1000];
  int count;
} order_log;

typedef struct order_task {
  order_log *log;
  int value;
} order_task;

static void append_value(void *data)
{
  order_task *task = data;
  g_mutex_lock(&task->log->lock);
  task->log->values[task->log->count++] = task->value;
  g_mutex_unlock(&task->log->lock);
}

static void test_in_order_and_synchronize(void)
{
  npu_device *device = npu_test_open_device();
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  order_log log = {0};
  g_mutex_init(&log.lock);
  order_task tasks[1000];
  for (int i = 0; i < 1000; i++) {
    tasks[i] = (order_task){&log, i};
    NPU_ASSERT_OK(npu_stream_launch_host_func(stream, append_value, &tasks[i]));
  }
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  NPU_ASSERT_OK(npu_stream_query(stream));
  g_assert_cmpint(log.count, ==, 1000);
  for (int i = 0; i < 1000; i++)
    g_assert_cmpint(log.values[i], ==, i);

  npu_stream_stats stats;
  NPU_ASSERT_OK(npu_stream_get_stats(stream, &stats));
  g_assert_cmpuint(stats.tasks_submitted, ==, 1000);
  g_assert_cmpuint(stats.tasks_completed, ==, 1000);
  npu_device *owner;
  NPU_ASSERT_OK(npu_stream_device(stream, &owner));
  g_assert_true(owner == device);
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  g_mutex_clear(&log.lock);
  NPU_ASSERT_OK(npu_device_release(device));
}

typedef struct gate {
  GMutex lock;
  GCond cond;
  gboolean open;
} gate;

static void wait_at_gate(void *data)
{
  gate *g = data;
  g_mutex_lock(&g->lock);
  while (!g->open)
    g_cond_wait(&g->cond, &g->lock);
  g_mutex_unlock(&g->lock);
}

static void open_gate(gate *g)
{
  g_mutex_lock(&g->lock);
  g->open = TRUE;
  g_cond_broadcast(&g->cond);
  g_mutex_unlock(&g->lock);
}

static void test_query_reports_pending_work(void)
{
  npu_device *device = npu_test_open_device();
  npu_stream *stream;
  npu_event *event;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DEFAULT, &event));
  NPU_ASSERT_OK(npu_event_query(event)); /* never recorded: complete */
  gate g = {0};
  g_mutex_init(&g.lock);
  g_cond_init(&g.cond);
  NPU_ASSERT_OK(npu_stream_launch_host_func(stream, wait_at_gate, &g));
  NPU_ASSERT_OK(npu_event_record(event, stream));
  g_assert_cmpint(npu_stream_query(stream), ==, NPU_ERROR_NOT_READY);
  g_assert_cmpint(npu_event_query(event), ==, NPU_ERROR_NOT_READY);
  float ms;
  NPU_ASSERT_STATUS(npu_event_elapsed_ms(event, event, &ms), NPU_ERROR_NOT_READY);
  open_gate(&g);
  NPU_ASSERT_OK(npu_event_synchronize(event));
  NPU_ASSERT_OK(npu_event_query(event));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  NPU_ASSERT_OK(npu_stream_query(stream));
  NPU_ASSERT_OK(npu_event_destroy(event));
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  g_mutex_clear(&g.lock);
  g_cond_clear(&g.cond);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* The producer writes a pattern slowly; the consumer stream waits on the
 * producer's event and then copies the data: it must see all of it. */
typedef struct slow_fill {
  guint8 *bytes;
  size_t size;
  guint8 value;
} slow_fill;

static void fill_slowly(void *data)
{
  slow_fill *fill = data;
  g_usleep(20000);
  memset(fill->bytes, fill->value, fill->size);
}

static void test_cross_stream_event_wait(void)
{
  npu_device *device = npu_test_open_device();
  npu_stream *producer, *consumer;
  npu_event *ready;
  npu_buffer *buffer;
  const size_t size = 1 << 16;
  NPU_ASSERT_OK(npu_stream_create(device, &producer));
  NPU_ASSERT_OK(npu_stream_create(device, &consumer));
  NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DISABLE_TIMING, &ready));
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &buffer));
  void *mapped;
  NPU_ASSERT_OK(npu_buffer_map(buffer, NPU_MAP_WRITE, &mapped));
  guint8 *result = g_malloc0(size);

  for (int round = 1; round <= 5; round++) {
    slow_fill fill = {mapped, size, (guint8)round};
    NPU_ASSERT_OK(npu_stream_launch_host_func(producer, fill_slowly, &fill));
    NPU_ASSERT_OK(npu_event_record(ready, producer));
    NPU_ASSERT_OK(npu_stream_wait_event(consumer, ready));
    NPU_ASSERT_OK(npu_memcpy_d2h_async(result, buffer, 0, size, consumer));
    NPU_ASSERT_OK(npu_stream_synchronize(consumer));
    for (size_t i = 0; i < size; i += 997)
      g_assert_cmpuint(result[i], ==, round);
    g_assert_cmpuint(result[size - 1], ==, round);
  }
  float ms;
  NPU_ASSERT_STATUS(npu_event_elapsed_ms(ready, ready, &ms), NPU_ERROR_NOT_SUPPORTED);

  NPU_ASSERT_OK(npu_buffer_unmap(buffer));
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  NPU_ASSERT_OK(npu_event_destroy(ready));
  NPU_ASSERT_OK(npu_stream_destroy(consumer));
  NPU_ASSERT_OK(npu_stream_destroy(producer));
  g_free(result);
  NPU_ASSERT_OK(npu_device_release(device));
}

static void sleep_10ms(void *data)
{
  (void)data;
  g_usleep(10000);
}

static void test_event_elapsed_time(void)
{
  npu_device *device = npu_test_open_device();
  npu_stream *stream;
  npu_event *start, *end;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DEFAULT, &start));
  NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DEFAULT, &end));
  float ms;
  NPU_ASSERT_STATUS(npu_event_elapsed_ms(start, end, &ms), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_OK(npu_event_record(start, stream));
  NPU_ASSERT_OK(npu_stream_launch_host_func(stream, sleep_10ms, NULL));
  NPU_ASSERT_OK(npu_event_record(end, stream));
  NPU_ASSERT_OK(npu_event_synchronize(end));
  NPU_ASSERT_OK(npu_event_elapsed_ms(start, end, &ms));
  g_assert_cmpfloat(ms, >=, 9.0f); /* the task slept 10 ms between the events */
  /* Destroying an event that a queued task still references is safe. */
  NPU_ASSERT_OK(npu_event_record(end, stream));
  NPU_ASSERT_OK(npu_event_destroy(end));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  NPU_ASSERT_OK(npu_event_destroy(start));
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_device_release(device));
}

static void noop(void *data)
{
  (void)data;
}

static void test_dead_and_foreign_handles(void)
{
  npu_device *device = npu_test_open_device();
  npu_stream *stream;
  npu_event *event;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DEFAULT, &event));
  NPU_ASSERT_STATUS(npu_stream_launch_host_func(stream, NULL, NULL),
                    NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_stream_create(device, NULL), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_event_create(device, 0x80, &event), NPU_ERROR_INVALID_ARGUMENT);
  /* An event handle is not a stream and vice versa. */
  NPU_ASSERT_STATUS(npu_stream_synchronize((npu_stream *)event), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_event_query((npu_event *)stream), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_STATUS(npu_stream_destroy(stream), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_stream_launch_host_func(stream, noop, NULL), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_stream_synchronize(stream), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_stream_query(stream), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_event_record(event, stream), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_stream_wait_event(stream, event), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_OK(npu_event_destroy(event));
  NPU_ASSERT_STATUS(npu_event_destroy(event), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_event_synchronize(event), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_event_synchronize(NULL), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_OK(npu_device_release(device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/stream/in-order-and-synchronize", test_in_order_and_synchronize);
  g_test_add_func("/stream/query-reports-pending-work", test_query_reports_pending_work);
  g_test_add_func("/event/cross-stream-wait", test_cross_stream_event_wait);
  g_test_add_func("/event/elapsed-time", test_event_elapsed_time);
  g_test_add_func("/stream/dead-and-foreign-handles", test_dead_and_foreign_handles);
  return g_test_run();
}
