/* 16 streams x 10 000 tasks submitted from 8 threads: no task lost, none
 * run twice, and each submitter's tasks run in its submission order on
 * every stream, with events chaining the streams at the end. */
#include "npu_test.h"

enum { STREAMS = 16, TASKS_PER_STREAM = 10000, THREADS = 8 };
enum { TASKS_PER_THREAD = STREAMS * TASKS_PER_STREAM / THREADS };

typedef struct stream_log {
  int last_seq[THREADS]; /* touched only by the stream's own worker */
  int executed;
  int out_of_order;
} stream_log;

typedef struct task {
  stream_log *log;
  int thread;
  int seq;
} task;

static npu_stream *streams[STREAMS];
static stream_log logs[STREAMS];
static task *tasks;

static void run_task(void *data)
{
  task *t = data;
  if (t->seq <= t->log->last_seq[t->thread])
    t->log->out_of_order++;
  t->log->last_seq[t->thread] = t->seq;
  t->log->executed++;
}

static gpointer submitter(gpointer data)
{
  int thread = GPOINTER_TO_INT(data);
  for (int k = 0; k < TASKS_PER_THREAD; k++) {
    int s = k % STREAMS;
    task *t = &tasks[thread * TASKS_PER_THREAD + k];
    *t = (task){&logs[s], thread, k};
    NPU_ASSERT_OK(npu_stream_launch_host_func(streams[s], run_task, t));
  }
  return NULL;
}

static void test_many_streams_many_submitters(void)
{
  npu_device *device = npu_test_open_device();
  tasks = g_new(task, STREAMS * TASKS_PER_STREAM);
  for (int s = 0; s < STREAMS; s++) {
    NPU_ASSERT_OK(npu_stream_create(device, &streams[s]));
    for (int t = 0; t < THREADS; t++)
      logs[s].last_seq[t] = -1;
  }
  GThread *threads[THREADS];
  for (int t = 0; t < THREADS; t++)
    threads[t] = g_thread_new("submitter", submitter, GINT_TO_POINTER(t));
  for (int t = 0; t < THREADS; t++)
    g_thread_join(threads[t]);

  /* Chain: every stream waits for the previous one's event; syncing the last
   * stream then implies all are done. */
  npu_event *events[STREAMS];
  for (int s = 0; s < STREAMS; s++) {
    NPU_ASSERT_OK(npu_event_create(device, NPU_EVENT_DISABLE_TIMING, &events[s]));
    if (s > 0)
      NPU_ASSERT_OK(npu_stream_wait_event(streams[s], events[s - 1]));
    NPU_ASSERT_OK(npu_event_record(events[s], streams[s]));
  }
  NPU_ASSERT_OK(npu_event_synchronize(events[STREAMS - 1]));
  for (int s = 0; s < STREAMS; s++)
    NPU_ASSERT_OK(npu_event_query(events[s]));

  for (int s = 0; s < STREAMS; s++) {
    g_assert_cmpint(logs[s].executed, ==, TASKS_PER_STREAM);
    g_assert_cmpint(logs[s].out_of_order, ==, 0);
    npu_stream_stats stats;
    NPU_ASSERT_OK(npu_stream_get_stats(streams[s], &stats));
    g_assert_cmpuint(stats.tasks_completed, >=, TASKS_PER_STREAM);
  }
  NPU_ASSERT_OK(npu_device_synchronize(device));
  for (int s = 0; s < STREAMS; s++) {
    NPU_ASSERT_OK(npu_event_destroy(events[s]));
    NPU_ASSERT_OK(npu_stream_destroy(streams[s]));
  }
  g_free(tasks);
  NPU_ASSERT_OK(npu_device_release(device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/stress/many-streams-many-submitters", test_many_streams_many_submitters);
  return g_test_run();
}
