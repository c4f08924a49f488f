/* CPU backend streams: one worker thread per stream running an in-order
 * task queue. Events are fences with a generation counter: recording queues
 * a "signal generation g" task; a waiting stream queues a task that blocks
 * its own worker until the event reaches the generation it saw, so the
 * submitting thread never blocks. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_stream.h"

typedef enum task_kind { TASK_HOST_FN, TASK_COPY, TASK_SIGNAL_EVENT, TASK_WAIT_EVENT } task_kind;

typedef struct stream_task {
  struct stream_task *next;
  task_kind kind;
  union {
    struct {
      npu_hal_task_fn fn;
      void *user_data;
    } host;
    struct {
      void *dst;
      const void *src;
      int fill_value; /* < 0: copy from src */
      size_t size;
      npu_hal_task_fn done;
      void *done_data;
    } copy;
    struct {
      npu_hal_event *event;
      uint64_t generation;
    } fence;
  } u;
} stream_task;

struct npu_hal_event {
  atomic_uint refcount; /* the owner + queued tasks */
  pthread_mutex_t lock;
  pthread_cond_t reached;
  uint64_t recorded;    /* generation of the last record() */
  uint64_t completed;   /* highest generation signalled */
  uint64_t signalled_at_ns;
  bool timing;
};

struct npu_hal_stream {
  pthread_t worker;
  pthread_mutex_t lock;
  pthread_cond_t work_queued;
  pthread_cond_t drained;
  stream_task *head, *tail;
  stream_task *spare; /* finished tasks kept for reuse: no malloc per submit */
  uint64_t submitted, completed;
  uint64_t busy_ns;
  bool stopping;
  npu_status failure;       /* what a task reported (cpu_stream_fail), until synchronize */
  char failure_message[256];
};

static uint64_t monotonic_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void event_unref(npu_hal_event *event)
{
  if (atomic_fetch_sub(&event->refcount, 1) != 1)
    return;
  pthread_cond_destroy(&event->reached);
  pthread_mutex_destroy(&event->lock);
  free(event);
}

static void event_signal(npu_hal_event *event, uint64_t generation)
{
  pthread_mutex_lock(&event->lock);
  if (generation > event->completed) {
    event->completed = generation;
    if (event->timing)
      event->signalled_at_ns = monotonic_ns();
  }
  pthread_cond_broadcast(&event->reached);
  pthread_mutex_unlock(&event->lock);
}

static void event_wait_generation(npu_hal_event *event, uint64_t generation)
{
  pthread_mutex_lock(&event->lock);
  while (event->completed < generation)
    pthread_cond_wait(&event->reached, &event->lock);
  pthread_mutex_unlock(&event->lock);
}

static void run_task(stream_task *task)
{
  switch (task->kind) {
  case TASK_HOST_FN:
    task->u.host.fn(task->u.host.user_data);
    break;
  case TASK_COPY:
    if (task->u.copy.fill_value >= 0)
      memset(task->u.copy.dst, task->u.copy.fill_value, task->u.copy.size);
    else
      memmove(task->u.copy.dst, task->u.copy.src, task->u.copy.size);
    if (task->u.copy.done)
      task->u.copy.done(task->u.copy.done_data);
    break;
  case TASK_SIGNAL_EVENT:
    event_signal(task->u.fence.event, task->u.fence.generation);
    event_unref(task->u.fence.event);
    break;
  case TASK_WAIT_EVENT:
    event_wait_generation(task->u.fence.event, task->u.fence.generation);
    event_unref(task->u.fence.event);
    break;
  }
}

static void *stream_worker(void *arg)
{
  npu_hal_stream *stream = arg;
  pthread_mutex_lock(&stream->lock);
  for (;;) {
    while (!stream->head && !stream->stopping)
      pthread_cond_wait(&stream->work_queued, &stream->lock);
    if (!stream->head)
      break; /* stopping and drained */
    stream_task *task = stream->head;
    stream->head = task->next;
    if (!stream->head)
      stream->tail = NULL;
    pthread_mutex_unlock(&stream->lock);

    uint64_t start = monotonic_ns();
    run_task(task);
    uint64_t elapsed = monotonic_ns() - start;

    pthread_mutex_lock(&stream->lock);
    stream->busy_ns += elapsed;
    stream->completed++;
    task->next = stream->spare;
    stream->spare = task;
    if (stream->completed == stream->submitted)
      pthread_cond_broadcast(&stream->drained);
  }
  pthread_mutex_unlock(&stream->lock);
  return NULL;
}

static npu_status enqueue(npu_hal_stream *stream, const stream_task *proto)
{
  pthread_mutex_lock(&stream->lock);
  stream_task *task = stream->spare;
  if (task) {
    stream->spare = task->next;
  } else {
    task = malloc(sizeof *task);
    if (!task) {
      pthread_mutex_unlock(&stream->lock);
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory queuing stream work");
    }
  }
  *task = *proto;
  task->next = NULL;
  if (stream->tail)
    stream->tail->next = task;
  else
    stream->head = task;
  stream->tail = task;
  stream->submitted++;
  pthread_cond_signal(&stream->work_queued);
  pthread_mutex_unlock(&stream->lock);
  return NPU_OK;
}

npu_status cpu_stream_create(npu_hal_device *device, npu_hal_stream **out)
{
  (void)device;
  npu_hal_stream *stream = calloc(1, sizeof *stream);
  if (!stream)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory creating a stream");
  pthread_mutex_init(&stream->lock, NULL);
  pthread_cond_init(&stream->work_queued, NULL);
  pthread_cond_init(&stream->drained, NULL);
  int rc = pthread_create(&stream->worker, NULL, stream_worker, stream);
  if (rc != 0) {
    pthread_cond_destroy(&stream->drained);
    pthread_cond_destroy(&stream->work_queued);
    pthread_mutex_destroy(&stream->lock);
    free(stream);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "cannot start a stream worker thread: %s",
                         strerror(rc));
  }
  *out = stream;
  return NPU_OK;
}

void cpu_stream_destroy(npu_hal_stream *stream)
{
  pthread_mutex_lock(&stream->lock);
  stream->stopping = true;
  pthread_cond_signal(&stream->work_queued);
  pthread_mutex_unlock(&stream->lock);
  pthread_join(stream->worker, NULL);
  while (stream->spare) {
    stream_task *task = stream->spare;
    stream->spare = task->next;
    free(task);
  }
  pthread_cond_destroy(&stream->drained);
  pthread_cond_destroy(&stream->work_queued);
  pthread_mutex_destroy(&stream->lock);
  free(stream);
}

npu_status cpu_stream_submit(npu_hal_stream *stream, npu_hal_task_fn fn, void *user_data)
{
  stream_task task = {.kind = TASK_HOST_FN, .u.host = {fn, user_data}};
  return enqueue(stream, &task);
}

npu_status cpu_stream_submit_copy(npu_hal_stream *stream, void *dst, const void *src,
                                  int fill_value, size_t size, npu_hal_task_fn done,
                                  void *done_data)
{
  stream_task task = {.kind = TASK_COPY,
                      .u.copy = {dst, src, fill_value, size, done, done_data}};
  return enqueue(stream, &task);
}

npu_status cpu_stream_synchronize(npu_hal_stream *stream)
{
  pthread_mutex_lock(&stream->lock);
  uint64_t target = stream->submitted;
  while (stream->completed < target)
    pthread_cond_wait(&stream->drained, &stream->lock);
  npu_status failure = stream->failure;
  char message[sizeof stream->failure_message];
  memcpy(message, stream->failure_message, sizeof message);
  stream->failure = NPU_OK;
  pthread_mutex_unlock(&stream->lock);
  return failure == NPU_OK ? NPU_OK : npu_set_error(failure, "%s", message);
}

void cpu_stream_fail(npu_hal_stream *stream, npu_status status, const char *message)
{
  pthread_mutex_lock(&stream->lock);
  if (stream->failure == NPU_OK) {
    stream->failure = status;
    snprintf(stream->failure_message, sizeof stream->failure_message, "%s", message);
  }
  pthread_mutex_unlock(&stream->lock);
}

bool cpu_stream_idle(npu_hal_stream *stream)
{
  pthread_mutex_lock(&stream->lock);
  bool idle = stream->completed == stream->submitted;
  pthread_mutex_unlock(&stream->lock);
  return idle;
}

void cpu_stream_stats(npu_hal_stream *stream, npu_stream_stats *stats)
{
  pthread_mutex_lock(&stream->lock);
  stats->tasks_submitted = stream->submitted;
  stats->tasks_completed = stream->completed;
  stats->busy_ns = stream->busy_ns;
  pthread_mutex_unlock(&stream->lock);
}

npu_status cpu_stream_wait_event(npu_hal_stream *stream, npu_hal_event *event)
{
  pthread_mutex_lock(&event->lock);
  uint64_t target = event->recorded;
  bool reached = event->completed >= target;
  pthread_mutex_unlock(&event->lock);
  if (reached)
    return NPU_OK;
  atomic_fetch_add(&event->refcount, 1);
  stream_task task = {.kind = TASK_WAIT_EVENT, .u.fence = {event, target}};
  npu_status status = enqueue(stream, &task);
  if (status != NPU_OK)
    event_unref(event);
  return status;
}

npu_status cpu_event_create(npu_hal_device *device, uint32_t flags, npu_hal_event **out)
{
  (void)device;
  npu_hal_event *event = calloc(1, sizeof *event);
  if (!event)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory creating an event");
  atomic_init(&event->refcount, 1);
  pthread_mutex_init(&event->lock, NULL);
  pthread_cond_init(&event->reached, NULL);
  event->timing = !(flags & NPU_EVENT_DISABLE_TIMING);
  *out = event;
  return NPU_OK;
}

void cpu_event_destroy(npu_hal_event *event)
{
  event_unref(event);
}

npu_status cpu_event_record(npu_hal_event *event, npu_hal_stream *stream)
{
  pthread_mutex_lock(&event->lock);
  uint64_t generation = ++event->recorded;
  pthread_mutex_unlock(&event->lock);
  atomic_fetch_add(&event->refcount, 1);
  stream_task task = {.kind = TASK_SIGNAL_EVENT, .u.fence = {event, generation}};
  npu_status status = enqueue(stream, &task);
  if (status != NPU_OK) {
    /* Nothing will signal this generation: complete it so waiters don't hang. */
    event_signal(event, generation);
    event_unref(event);
  }
  return status;
}

npu_status cpu_event_synchronize(npu_hal_event *event)
{
  pthread_mutex_lock(&event->lock);
  uint64_t target = event->recorded;
  pthread_mutex_unlock(&event->lock);
  event_wait_generation(event, target);
  return NPU_OK;
}

bool cpu_event_done(npu_hal_event *event)
{
  pthread_mutex_lock(&event->lock);
  bool done = event->completed >= event->recorded;
  pthread_mutex_unlock(&event->lock);
  return done;
}

npu_status cpu_event_elapsed_ms(npu_hal_event *start, npu_hal_event *end, float *ms)
{
  if (!start->timing || !end->timing)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                         "event created with NPU_EVENT_DISABLE_TIMING has no timestamp");
  if (!start->recorded || !end->recorded)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "event was never recorded");
  if (!cpu_event_done(start) || !cpu_event_done(end))
    return npu_set_error(NPU_ERROR_NOT_READY, "event has not completed yet");
  pthread_mutex_lock(&start->lock);
  uint64_t t0 = start->signalled_at_ns;
  pthread_mutex_unlock(&start->lock);
  pthread_mutex_lock(&end->lock);
  uint64_t t1 = end->signalled_at_ns;
  pthread_mutex_unlock(&end->lock);
  *ms = (float)((double)((int64_t)(t1 - t0)) / 1e6);
  return NPU_OK;
}
