/* Vulkan streams and events. A stream is a timeline semaphore and a worker
 * thread: each piece of work (a command buffer, or host work such as a host
 * function or a copy into mapped memory) takes the next point of the
 * timeline. The worker hands work over in order: a command buffer is
 * submitted to the device's queue waiting for the previous point and
 * signalling its own, without waiting for it to run; host work waits on the
 * host for the previous point, runs, and signals its point from the host.
 * So host functions run in stream order (from the worker: the stream's
 * completion thread), and no submission ever waits for a point that has not
 * been submitted yet (no wait-before-signal, which drivers may serialise).
 * An event is a point of a timeline: another stream waits for it with a
 * semaphore wait in its next submission, on the device. Where the queue
 * writes timestamps, each command buffer is submitted between two that write
 * one, so that the stream's statistics count the device's time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vk_internal.h"

/* A stream's semaphore and progress, shared with the events recorded on it
 * (which may outlive the stream). */
typedef struct vk_timeline {
  atomic_uint refcount;
  npu_hal_device *device;
  VkSemaphore semaphore;
  pthread_mutex_t lock;      /* also guards the owning stream's queues */
  pthread_cond_t progress;   /* `submitted` moved on */
  uint64_t enqueued;         /* the last point handed out */
  uint64_t submitted;        /* the last point given to the queue or signalled */
} vk_timeline;

typedef enum item_kind { ITEM_COMMANDS, ITEM_HOST_FN, ITEM_HOST_COPY } item_kind;

typedef struct stream_item {
  struct stream_item *next;
  item_kind kind;
  uint64_t point;
  VkCommandBuffer commands;   /* COMMANDS; VK_NULL_HANDLE: only a wait */
  npu_hal_task_fn finished;   /* COMMANDS recorded elsewhere: told when they have run */
  void *finished_data;
  vk_timeline *wait;          /* COMMANDS: another stream's point to wait for */
  uint64_t wait_value;
  npu_hal_buffer *temporary;  /* destroyed once the work is done */
  npu_hal_event *timed_event; /* released once the work is done */
  uint32_t timing_slot;       /* COMMANDS: 1 + the timestamp pair it ran between; 0: untimed */
  npu_hal_task_fn fn;         /* HOST_FN */
  void *user_data;
  void *dst;                  /* HOST_COPY */
  const void *src;
  size_t size;
} stream_item;

/* Submissions a stream times at once (a bit each in free_slots); more in
 * flight run untimed. */
#define TIMING_SLOTS 64

struct npu_hal_stream {
  npu_hal_device *device;
  vk_timeline *timeline;            /* its lock guards the fields below */
  pthread_t worker;
  pthread_cond_t work_queued;
  stream_item *head, *tail;         /* not handed over yet */
  stream_item *in_flight, *in_flight_tail; /* submitted command buffers */
  stream_item *spare;               /* kept for reuse: no malloc per item */
  VkCommandBuffer *idle_commands;   /* done, ready to be recorded again */
  size_t idle_count, idle_capacity;
  size_t commands_made;             /* idle_capacity >= commands_made: all fit back */
  npu_status failure;               /* the first failure since the last synchronize */
  char failure_message[256];
  uint64_t host_ns;
  uint64_t device_ns;               /* command buffers' time, from their timestamps */
  uint64_t free_slots;              /* bit i: timestamp pair i is not in flight */
  bool stopping;
  pthread_mutex_t pool_lock;        /* held from vk_stream_begin to submit/abandon */
  VkCommandPool pool;
  /* Timestamp pairs (VK_NULL_HANDLE: the queue writes none): query 2i
   * before a submission's commands, 2i + 1 after, each written by a command
   * buffer of its own recorded once; the pool is the worker's alone. */
  VkQueryPool timing_queries;
  VkCommandPool timing_pool;
  VkCommandBuffer timing_commands[TIMING_SLOTS][2];
};

struct npu_hal_event {
  atomic_uint refcount; /* the owner + command buffers writing its timestamp */
  npu_hal_device *device;
  pthread_mutex_t lock;
  vk_timeline *timeline; /* of the last record; NULL: never recorded */
  uint64_t value;
  VkQueryPool timestamp; /* VK_NULL_HANDLE: created without timing */
};

static uint64_t monotonic_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void timeline_unref(vk_timeline *timeline)
{
  if (!timeline || atomic_fetch_sub(&timeline->refcount, 1) != 1)
    return;
  /* A driver with a submission thread (Mesa's lavapipe) may still be
   * handling the last signal once its value shows: drain the queue first. */
  npu_hal_device *device = timeline->device;
  pthread_mutex_lock(&device->queue_lock);
  vkQueueWaitIdle(device->queue);
  pthread_mutex_unlock(&device->queue_lock);
  vkDestroySemaphore(device->device, timeline->semaphore, NULL);
  pthread_cond_destroy(&timeline->progress);
  pthread_mutex_destroy(&timeline->lock);
  free(timeline);
}

static uint64_t timeline_reached(vk_timeline *timeline)
{
  uint64_t value = 0;
  if (vkGetSemaphoreCounterValue(timeline->device->device, timeline->semaphore, &value) !=
      VK_SUCCESS)
    return 0;
  return value;
}

static VkResult timeline_wait(vk_timeline *timeline, uint64_t value)
{
  VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                              .semaphoreCount = 1, .pSemaphores = &timeline->semaphore,
                              .pValues = &value};
  return value ? vkWaitSemaphores(timeline->device->device, &info, UINT64_MAX) : VK_SUCCESS;
}

/* Until the worker of `timeline` has handed point `value` over. */
static void timeline_wait_submitted(vk_timeline *timeline, uint64_t value)
{
  pthread_mutex_lock(&timeline->lock);
  while (timeline->submitted < value)
    pthread_cond_wait(&timeline->progress, &timeline->lock);
  pthread_mutex_unlock(&timeline->lock);
}

static void event_unref(npu_hal_event *event)
{
  if (!event || atomic_fetch_sub(&event->refcount, 1) != 1)
    return;
  if (event->timestamp)
    vkDestroyQueryPool(event->device->device, event->timestamp, NULL);
  timeline_unref(event->timeline);
  pthread_mutex_destroy(&event->lock);
  free(event);
}

/* The event's last recorded point: its timeline (a reference the caller
 * releases; NULL when never recorded) and *value. */
static vk_timeline *event_point(npu_hal_event *event, uint64_t *value)
{
  pthread_mutex_lock(&event->lock);
  vk_timeline *timeline = event->timeline;
  *value = event->value;
  if (timeline)
    atomic_fetch_add(&timeline->refcount, 1);
  pthread_mutex_unlock(&event->lock);
  return timeline;
}

/* ---- the worker ------------------------------------------------------------ */

static void note_failure(npu_hal_stream *stream, npu_status status, const char *what,
                         VkResult result)
{
  pthread_mutex_lock(&stream->timeline->lock);
  if (stream->failure == NPU_OK) {
    stream->failure = status;
    snprintf(stream->failure_message, sizeof stream->failure_message,
             "Vulkan stream work failed: %s: %s", what, vk_result_name(result));
  }
  pthread_mutex_unlock(&stream->timeline->lock);
}

/* Signals `point` from the host once the point before it is reached. */
static void signal_in_order(npu_hal_stream *stream, uint64_t point)
{
  vk_timeline *timeline = stream->timeline;
  VkResult result = timeline_wait(timeline, point - 1);
  if (result != VK_SUCCESS)
    note_failure(stream, vk_status_of(result), "waiting for earlier work", result);
  VkSemaphoreSignalInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                .semaphore = timeline->semaphore, .value = point};
  result = vkSignalSemaphore(timeline->device->device, &info);
  if (result != VK_SUCCESS)
    note_failure(stream, vk_status_of(result), "signalling the stream's timeline", result);
}

/* The two command buffers writing timestamp pair `slot`, recorded on first
 * use (by the worker, which alone uses timing_pool); false on failure. */
static bool timing_commands(npu_hal_stream *stream, uint32_t slot)
{
  VkCommandBuffer *pair = stream->timing_commands[slot];
  if (pair[0])
    return true;
  VkDevice device = stream->device->device;
  VkCommandBufferAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = stream->timing_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 2};
  if (vkAllocateCommandBuffers(device, &info, pair) != VK_SUCCESS) {
    pair[0] = pair[1] = VK_NULL_HANDLE;
    return false;
  }
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bool recorded = true;
  for (uint32_t end = 0; end < 2 && recorded; end++) {
    if (vkBeginCommandBuffer(pair[end], &begin) != VK_SUCCESS) {
      recorded = false;
      break;
    }
    if (!end)
      vkCmdResetQueryPool(pair[end], stream->timing_queries, 2 * slot, 2);
    vkCmdWriteTimestamp(pair[end],
                        end ? VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT
                            : VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                        stream->timing_queries, 2 * slot + end);
    recorded = vkEndCommandBuffer(pair[end]) == VK_SUCCESS;
  }
  if (!recorded) {
    vkFreeCommandBuffers(device, stream->timing_pool, 2, pair);
    pair[0] = pair[1] = VK_NULL_HANDLE;
  }
  return recorded;
}

static void reclaim_finished(npu_hal_stream *stream);

/* A free timestamp pair for the item's commands (item->timing_slot), if any. */
static void take_timing_slot(npu_hal_stream *stream, stream_item *item)
{
  if (!stream->timing_queries || !item->commands)
    return;
  pthread_mutex_lock(&stream->timeline->lock);
  if (!stream->free_slots)
    reclaim_finished(stream); /* (elsewhere only callers queuing work do) */
  uint32_t slot = stream->free_slots ? (uint32_t)__builtin_ctzll(stream->free_slots) : 0;
  bool taken = stream->free_slots != 0;
  if (taken)
    stream->free_slots &= ~(UINT64_C(1) << slot);
  pthread_mutex_unlock(&stream->timeline->lock);
  if (!taken)
    return;
  if (timing_commands(stream, slot)) {
    item->timing_slot = slot + 1;
    return;
  }
  pthread_mutex_lock(&stream->timeline->lock);
  stream->free_slots |= UINT64_C(1) << slot;
  pthread_mutex_unlock(&stream->timeline->lock);
}

/* Adds the finished item's device time and frees its timestamp pair. Call
 * with the lock held. */
static void count_device_time(npu_hal_stream *stream, const stream_item *item)
{
  if (!item->timing_slot)
    return;
  uint32_t slot = item->timing_slot - 1;
  npu_hal_device *device = stream->device;
  uint64_t ticks[2];
  /* (not ready only where the submission failed and the host signalled it) */
  if (vkGetQueryPoolResults(device->device, stream->timing_queries, 2 * slot, 2, sizeof ticks,
                            ticks, sizeof ticks[0], VK_QUERY_RESULT_64_BIT) == VK_SUCCESS)
    stream->device_ns += (uint64_t)((double)((ticks[1] - ticks[0]) & device->timestamp_mask) *
                                    device->properties.limits.timestampPeriod);
  stream->free_slots |= UINT64_C(1) << slot;
}

static void submit_commands(npu_hal_stream *stream, stream_item *item)
{
  vk_timeline *timeline = stream->timeline;
  npu_hal_device *device = stream->device;
  VkSemaphore waits[2] = {timeline->semaphore};
  uint64_t wait_values[2] = {item->point - 1};
  VkPipelineStageFlags stages[2] = {VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                    VK_PIPELINE_STAGE_ALL_COMMANDS_BIT};
  uint32_t wait_count = 1;
  if (item->wait) {
    timeline_wait_submitted(item->wait, item->wait_value);
    waits[wait_count] = item->wait->semaphore;
    wait_values[wait_count++] = item->wait_value;
  }
  take_timing_slot(stream, item);
  VkCommandBuffer commands[3] = {item->commands};
  uint32_t command_count = item->commands ? 1 : 0;
  if (item->timing_slot) {
    VkCommandBuffer *pair = stream->timing_commands[item->timing_slot - 1];
    commands[0] = pair[0];
    commands[1] = item->commands;
    commands[2] = pair[1];
    command_count = 3;
  }
  VkTimelineSemaphoreSubmitInfo values = {
      .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
      .waitSemaphoreValueCount = wait_count, .pWaitSemaphoreValues = wait_values,
      .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &item->point};
  VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &values,
                         .waitSemaphoreCount = wait_count, .pWaitSemaphores = waits,
                         .pWaitDstStageMask = stages,
                         .commandBufferCount = command_count, .pCommandBuffers = commands,
                         .signalSemaphoreCount = 1, .pSignalSemaphores = &timeline->semaphore};
  pthread_mutex_lock(&device->queue_lock);
  VkResult result = vkQueueSubmit(device->queue, 1, &submit, VK_NULL_HANDLE);
  pthread_mutex_unlock(&device->queue_lock);
  if (result != VK_SUCCESS) {
    note_failure(stream, vk_status_of(result), "vkQueueSubmit", result);
    /* Nothing will signal this point: the host does, so that no wait hangs. */
    signal_in_order(stream, item->point);
  }
}

static void run_on_host(npu_hal_stream *stream, stream_item *item)
{
  VkResult result = timeline_wait(stream->timeline, item->point - 1);
  if (result != VK_SUCCESS)
    note_failure(stream, vk_status_of(result), "waiting for earlier work", result);
  uint64_t start = monotonic_ns();
  if (item->kind == ITEM_HOST_FN)
    item->fn(item->user_data);
  else if (result == VK_SUCCESS)
    memcpy(item->dst, item->src, item->size);
  uint64_t elapsed = monotonic_ns() - start;
  pthread_mutex_lock(&stream->timeline->lock);
  stream->host_ns += elapsed;
  pthread_mutex_unlock(&stream->timeline->lock);
  signal_in_order(stream, item->point);
}

static void *stream_worker(void *arg)
{
  npu_hal_stream *stream = arg;
  vk_timeline *timeline = stream->timeline;
  pthread_mutex_lock(&timeline->lock);
  for (;;) {
    while (!stream->head && !stream->stopping)
      pthread_cond_wait(&stream->work_queued, &timeline->lock);
    stream_item *item = stream->head;
    if (!item)
      break; /* stopping, and everything handed over */
    stream->head = item->next;
    if (!stream->head)
      stream->tail = NULL;
    pthread_mutex_unlock(&timeline->lock);

    if (item->kind == ITEM_COMMANDS)
      submit_commands(stream, item);
    else
      run_on_host(stream, item);

    pthread_mutex_lock(&timeline->lock);
    timeline->submitted = item->point;
    pthread_cond_broadcast(&timeline->progress);
    item->next = NULL;
    if (item->kind == ITEM_COMMANDS) {
      if (stream->in_flight_tail)
        stream->in_flight_tail->next = item;
      else
        stream->in_flight = item;
      stream->in_flight_tail = item;
    } else {
      if (item->temporary)
        vk_buffer_destroy(stream->device, item->temporary);
      memset(item, 0, sizeof *item);
      item->next = stream->spare;
      stream->spare = item;
    }
  }
  pthread_mutex_unlock(&timeline->lock);
  return NULL;
}

/* ---- queuing --------------------------------------------------------------- */

/* Takes back what finished command buffers held. Call with the lock held. */
static void reclaim_finished(npu_hal_stream *stream)
{
  if (!stream->in_flight)
    return;
  uint64_t reached = timeline_reached(stream->timeline);
  while (stream->in_flight && stream->in_flight->point <= reached) {
    stream_item *item = stream->in_flight;
    stream->in_flight = item->next;
    if (!stream->in_flight)
      stream->in_flight_tail = NULL;
    if (item->temporary)
      vk_buffer_destroy(stream->device, item->temporary);
    event_unref(item->timed_event);
    timeline_unref(item->wait);
    count_device_time(stream, item);
    if (item->finished) /* (lock-free: it runs under the timeline's lock) */
      item->finished(item->finished_data);
    else if (item->commands) /* the array has room for every command buffer made */
      stream->idle_commands[stream->idle_count++] = item->commands;
    memset(item, 0, sizeof *item);
    item->next = stream->spare;
    stream->spare = item;
  }
}

/* Queues `count` pieces of work, consecutive on the timeline: all or none. */
static npu_status enqueue(npu_hal_stream *stream, const stream_item *protos, size_t count)
{
  vk_timeline *timeline = stream->timeline;
  stream_item *items[4];
  pthread_mutex_lock(&timeline->lock);
  reclaim_finished(stream);
  size_t ready = 0;
  for (; ready < count; ready++) {
    items[ready] = stream->spare;
    if (items[ready])
      stream->spare = items[ready]->next;
    else if (!(items[ready] = malloc(sizeof *items[ready])))
      break;
  }
  if (ready < count) {
    while (ready--) {
      items[ready]->next = stream->spare;
      stream->spare = items[ready];
    }
    pthread_mutex_unlock(&timeline->lock);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory queuing stream work");
  }
  for (size_t i = 0; i < count; i++) {
    stream_item *item = items[i];
    *item = protos[i];
    item->next = NULL;
    item->point = ++timeline->enqueued;
    if (stream->tail)
      stream->tail->next = item;
    else
      stream->head = item;
    stream->tail = item;
  }
  pthread_cond_signal(&stream->work_queued);
  pthread_mutex_unlock(&timeline->lock);
  return NPU_OK;
}

static void give_back_commands(npu_hal_stream *stream, VkCommandBuffer commands);

/* An idle command buffer, or a new one with room kept for it in
 * idle_commands. Call with pool_lock held. */
static npu_status take_command_buffer(npu_hal_stream *stream, VkCommandBuffer *out)
{
  pthread_mutex_lock(&stream->timeline->lock);
  reclaim_finished(stream);
  bool idle = stream->idle_count > 0;
  if (idle)
    *out = stream->idle_commands[--stream->idle_count];
  bool room = idle || stream->commands_made < stream->idle_capacity;
  if (!room) {
    size_t capacity = stream->idle_capacity ? stream->idle_capacity * 2 : 8;
    VkCommandBuffer *grown = realloc(stream->idle_commands, capacity * sizeof *grown);
    if (grown) {
      stream->idle_commands = grown;
      stream->idle_capacity = capacity;
      room = true;
    }
  }
  pthread_mutex_unlock(&stream->timeline->lock);
  if (idle)
    return NPU_OK;
  if (!room)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for a command buffer");
  VkCommandBufferAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = stream->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
  VkResult result = vkAllocateCommandBuffers(stream->device->device, &info, out);
  if (result != VK_SUCCESS)
    return npu_set_error(vk_status_of(result), "cannot allocate a command buffer: %s",
                         vk_result_name(result));
  stream->commands_made++;
  return NPU_OK;
}

npu_status vk_stream_begin(npu_hal_stream *stream, VkCommandBuffer *out)
{
  pthread_mutex_lock(&stream->pool_lock);
  VkCommandBuffer commands;
  npu_status status = take_command_buffer(stream, &commands);
  if (status != NPU_OK) {
    pthread_mutex_unlock(&stream->pool_lock);
    return status;
  }
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult result = vkBeginCommandBuffer(commands, &begin);
  if (result != VK_SUCCESS) {
    vk_stream_abandon(stream, commands);
    return npu_set_error(vk_status_of(result), "cannot record a command buffer: %s",
                         vk_result_name(result));
  }
  *out = commands;
  return NPU_OK;
}

void vk_stream_abandon(npu_hal_stream *stream, VkCommandBuffer commands)
{
  give_back_commands(stream, commands);
  pthread_mutex_unlock(&stream->pool_lock);
}

void vk_cmd_barrier(VkCommandBuffer commands)
{
  VkMemoryBarrier barrier = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT |
                                              VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
                                              VK_ACCESS_SHADER_WRITE_BIT |
                                              VK_ACCESS_TRANSFER_READ_BIT |
                                              VK_ACCESS_TRANSFER_WRITE_BIT |
                                              VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT};
  vkCmdPipelineBarrier(commands,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                           VK_PIPELINE_STAGE_HOST_BIT,
                       0, 1, &barrier, 0, NULL, 0, NULL);
}

/* Ends a command buffer begun with vk_stream_begin and gives back the pool. */
static npu_status end_commands(npu_hal_stream *stream, VkCommandBuffer commands)
{
  vk_cmd_barrier(commands); /* the host reads what it wrote once the point is reached */
  VkResult result = vkEndCommandBuffer(commands);
  if (result != VK_SUCCESS) {
    vk_stream_abandon(stream, commands);
    return npu_set_error(vk_status_of(result), "cannot record a command buffer: %s",
                         vk_result_name(result));
  }
  pthread_mutex_unlock(&stream->pool_lock);
  return NPU_OK;
}

static void give_back_commands(npu_hal_stream *stream, VkCommandBuffer commands)
{
  pthread_mutex_lock(&stream->timeline->lock);
  stream->idle_commands[stream->idle_count++] = commands;
  pthread_mutex_unlock(&stream->timeline->lock);
}

void vk_stream_reclaim(npu_hal_stream *stream)
{
  pthread_mutex_lock(&stream->timeline->lock);
  reclaim_finished(stream);
  pthread_mutex_unlock(&stream->timeline->lock);
}

npu_status vk_stream_queue(npu_hal_stream *stream, const vk_work *work)
{
  bool own_commands = work->commands && !work->finished;
  if (own_commands) {
    npu_status status = end_commands(stream, work->commands);
    if (status != NPU_OK)
      return status;
  }
  stream_item items[4];
  size_t count = 0;
  stream_item host_copy = {.kind = ITEM_HOST_COPY, .dst = work->copy_dst, .src = work->copy_src,
                           .size = work->copy_size};
  if (work->copy_size && !work->copy_after)
    items[count++] = host_copy;
  if (work->commands)
    items[count++] = (stream_item){.kind = ITEM_COMMANDS, .commands = work->commands,
                                   .finished = work->finished,
                                   .finished_data = work->finished_data};
  if (work->copy_size && work->copy_after)
    items[count++] = host_copy;
  if (work->done)
    items[count++] = (stream_item){.kind = ITEM_HOST_FN, .fn = work->done,
                                   .user_data = work->done_data};
  if (count)
    items[count - 1].temporary = work->temporary;
  npu_status status = count ? enqueue(stream, items, count) : NPU_OK;
  if (status != NPU_OK && own_commands)
    give_back_commands(stream, work->commands);
  return status;
}

npu_status vk_stream_host_fn(npu_hal_stream *stream, npu_hal_task_fn fn, void *user_data)
{
  stream_item item = {.kind = ITEM_HOST_FN, .fn = fn, .user_data = user_data};
  return enqueue(stream, &item, 1);
}

npu_hal_device *vk_stream_device(npu_hal_stream *stream)
{
  return stream->device;
}

/* ---- streams ---------------------------------------------------------------- */

static npu_status timeline_create(npu_hal_device *device, vk_timeline **out)
{
  vk_timeline *timeline = calloc(1, sizeof *timeline);
  if (!timeline)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory creating a stream");
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  VkResult result = vkCreateSemaphore(device->device, &info, NULL, &timeline->semaphore);
  if (result != VK_SUCCESS) {
    free(timeline);
    return npu_set_error(vk_status_of(result), "cannot create a timeline semaphore: %s",
                         vk_result_name(result));
  }
  atomic_init(&timeline->refcount, 1);
  timeline->device = device;
  pthread_mutex_init(&timeline->lock, NULL);
  pthread_cond_init(&timeline->progress, NULL);
  *out = timeline;
  return NPU_OK;
}

/* (its command buffers go with their pool) */
static void destroy_timing(npu_hal_stream *stream)
{
  if (stream->timing_queries)
    vkDestroyQueryPool(stream->device->device, stream->timing_queries, NULL);
  if (stream->timing_pool)
    vkDestroyCommandPool(stream->device->device, stream->timing_pool, NULL);
}

npu_status vk_stream_create(npu_hal_device *device, npu_hal_stream **out)
{
  npu_hal_stream *stream = calloc(1, sizeof *stream);
  if (!stream)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory creating a stream");
  stream->device = device;
  pthread_mutex_init(&stream->pool_lock, NULL);
  pthread_cond_init(&stream->work_queued, NULL);
  npu_status status = timeline_create(device, &stream->timeline);
  if (status == NPU_OK) {
    VkCommandPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = device->queue_family};
    VkResult result = vkCreateCommandPool(device->device, &info, NULL, &stream->pool);
    if (result == VK_SUCCESS && device->timestamps)
      result = vkCreateCommandPool(device->device, &info, NULL, &stream->timing_pool);
    if (result != VK_SUCCESS)
      status = npu_set_error(vk_status_of(result), "cannot create a command pool: %s",
                             vk_result_name(result));
  }
  if (status == NPU_OK && device->timestamps) {
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = 2 * TIMING_SLOTS};
    VkResult result = vkCreateQueryPool(device->device, &info, NULL, &stream->timing_queries);
    if (result != VK_SUCCESS)
      status = npu_set_error(vk_status_of(result), "cannot create timestamp queries: %s",
                             vk_result_name(result));
    stream->free_slots = UINT64_MAX; /* TIMING_SLOTS bits */
  }
  if (status == NPU_OK) {
    int rc = pthread_create(&stream->worker, NULL, stream_worker, stream);
    if (rc != 0)
      status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "cannot start a stream worker thread: %s",
                             strerror(rc));
  }
  if (status != NPU_OK) {
    destroy_timing(stream);
    if (stream->pool)
      vkDestroyCommandPool(device->device, stream->pool, NULL);
    timeline_unref(stream->timeline);
    pthread_cond_destroy(&stream->work_queued);
    pthread_mutex_destroy(&stream->pool_lock);
    free(stream);
    return status;
  }
  *out = stream;
  return NPU_OK;
}

void vk_stream_destroy(npu_hal_stream *stream)
{
  vk_timeline *timeline = stream->timeline;
  pthread_mutex_lock(&timeline->lock);
  stream->stopping = true;
  pthread_cond_signal(&stream->work_queued);
  pthread_mutex_unlock(&timeline->lock);
  pthread_join(stream->worker, NULL);
  timeline_wait(timeline, timeline->enqueued);
  pthread_mutex_lock(&timeline->lock);
  reclaim_finished(stream);
  while (stream->spare) {
    stream_item *item = stream->spare;
    stream->spare = item->next;
    free(item);
  }
  pthread_mutex_unlock(&timeline->lock);
  destroy_timing(stream);
  vkDestroyCommandPool(stream->device->device, stream->pool, NULL);
  free(stream->idle_commands);
  pthread_cond_destroy(&stream->work_queued);
  pthread_mutex_destroy(&stream->pool_lock);
  timeline_unref(timeline);
  free(stream);
}

npu_status vk_stream_synchronize(npu_hal_stream *stream)
{
  vk_timeline *timeline = stream->timeline;
  pthread_mutex_lock(&timeline->lock);
  uint64_t target = timeline->enqueued;
  pthread_mutex_unlock(&timeline->lock);
  VkResult result = timeline_wait(timeline, target);
  pthread_mutex_lock(&timeline->lock);
  /* The device may reach a point before the worker, back from
   * vkQueueSubmit, has put its item in flight: reclaimed only then, its
   * command buffer (a replayed slot) would stay busy after this returns. */
  while (timeline->submitted < target)
    pthread_cond_wait(&timeline->progress, &timeline->lock);
  npu_status status = stream->failure;
  char message[sizeof stream->failure_message];
  memcpy(message, stream->failure_message, sizeof message);
  stream->failure = NPU_OK;
  reclaim_finished(stream);
  pthread_mutex_unlock(&timeline->lock);
  if (status != NPU_OK)
    return npu_set_error(status, "%s", message);
  if (result != VK_SUCCESS)
    return npu_set_error(vk_status_of(result), "waiting for a Vulkan stream: %s",
                         vk_result_name(result));
  return NPU_OK;
}

bool vk_stream_idle(npu_hal_stream *stream)
{
  pthread_mutex_lock(&stream->timeline->lock);
  uint64_t target = stream->timeline->enqueued;
  pthread_mutex_unlock(&stream->timeline->lock);
  return timeline_reached(stream->timeline) >= target;
}

void vk_stream_stats(npu_hal_stream *stream, npu_stream_stats *stats)
{
  uint64_t reached = timeline_reached(stream->timeline);
  pthread_mutex_lock(&stream->timeline->lock);
  reclaim_finished(stream); /* (counts the device time of what has run) */
  stats->tasks_submitted = stream->timeline->enqueued;
  stats->tasks_completed = reached;
  stats->device_ns = stream->device_ns;
  stats->busy_ns = stream->host_ns + stream->device_ns;
  pthread_mutex_unlock(&stream->timeline->lock);
}

npu_status vk_stream_wait_event(npu_hal_stream *stream, npu_hal_event *event)
{
  uint64_t value;
  vk_timeline *timeline = event_point(event, &value);
  /* Never recorded, already reached, or this stream's own earlier work. */
  if (!timeline || timeline == stream->timeline || timeline_reached(timeline) >= value) {
    timeline_unref(timeline);
    return NPU_OK;
  }
  stream_item item = {.kind = ITEM_COMMANDS, .wait = timeline, .wait_value = value};
  npu_status status = enqueue(stream, &item, 1);
  if (status != NPU_OK)
    timeline_unref(timeline);
  return status;
}

/* ---- events ----------------------------------------------------------------- */

npu_status vk_event_create(npu_hal_device *device, uint32_t flags, npu_hal_event **out)
{
  npu_hal_event *event = calloc(1, sizeof *event);
  if (!event)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory creating an event");
  atomic_init(&event->refcount, 1);
  event->device = device;
  pthread_mutex_init(&event->lock, NULL);
  if (!(flags & NPU_EVENT_DISABLE_TIMING) && device->timestamps) {
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 1};
    VkResult result = vkCreateQueryPool(device->device, &info, NULL, &event->timestamp);
    if (result != VK_SUCCESS) {
      pthread_mutex_destroy(&event->lock);
      free(event);
      return npu_set_error(vk_status_of(result), "cannot create a timestamp query: %s",
                           vk_result_name(result));
    }
  }
  *out = event;
  return NPU_OK;
}

void vk_event_destroy(npu_hal_event *event)
{
  event_unref(event);
}

/* The event becomes the stream's latest point: a new point that writes a
 * timestamp where the event is timed, else the point of the last work. */
npu_status vk_event_record(npu_hal_event *event, npu_hal_stream *stream)
{
  vk_timeline *timeline = stream->timeline;
  if (event->timestamp) {
    VkCommandBuffer commands;
    npu_status status = vk_stream_begin(stream, &commands);
    if (status != NPU_OK)
      return status;
    vkCmdResetQueryPool(commands, event->timestamp, 0, 1);
    vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, event->timestamp, 0);
    status = end_commands(stream, commands);
    if (status != NPU_OK)
      return status;
    atomic_fetch_add(&event->refcount, 1);
    stream_item item = {.kind = ITEM_COMMANDS, .commands = commands, .timed_event = event};
    status = enqueue(stream, &item, 1);
    if (status != NPU_OK) {
      give_back_commands(stream, commands);
      event_unref(event);
      return status;
    }
  }
  pthread_mutex_lock(&timeline->lock);
  uint64_t value = timeline->enqueued;
  atomic_fetch_add(&timeline->refcount, 1);
  pthread_mutex_unlock(&timeline->lock);
  pthread_mutex_lock(&event->lock);
  vk_timeline *previous = event->timeline;
  event->timeline = timeline;
  event->value = value;
  pthread_mutex_unlock(&event->lock);
  timeline_unref(previous);
  return NPU_OK;
}

npu_status vk_event_synchronize(npu_hal_event *event)
{
  uint64_t value;
  vk_timeline *timeline = event_point(event, &value);
  if (!timeline)
    return NPU_OK;
  VkResult result = timeline_wait(timeline, value);
  timeline_unref(timeline);
  if (result != VK_SUCCESS)
    return npu_set_error(vk_status_of(result), "waiting for a Vulkan event: %s",
                         vk_result_name(result));
  return NPU_OK;
}

bool vk_event_done(npu_hal_event *event)
{
  pthread_mutex_lock(&event->lock);
  bool done = !event->timeline || timeline_reached(event->timeline) >= event->value;
  pthread_mutex_unlock(&event->lock);
  return done;
}

static npu_status read_timestamp(npu_hal_event *event, uint64_t *ticks)
{
  VkResult result = vkGetQueryPoolResults(event->device->device, event->timestamp, 0, 1,
                                          sizeof *ticks, ticks, sizeof *ticks,
                                          VK_QUERY_RESULT_64_BIT);
  if (result == VK_NOT_READY)
    return npu_set_error(NPU_ERROR_NOT_READY, "event has not completed yet");
  if (result != VK_SUCCESS)
    return npu_set_error(vk_status_of(result), "cannot read an event's timestamp: %s",
                         vk_result_name(result));
  return NPU_OK;
}

npu_status vk_event_elapsed_ms(npu_hal_event *start, npu_hal_event *end, float *ms)
{
  if (!start->timestamp || !end->timestamp)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                         start->device->timestamps
                             ? "event created with NPU_EVENT_DISABLE_TIMING has no timestamp"
                             : "this Vulkan queue writes no timestamps");
  pthread_mutex_lock(&start->lock);
  bool recorded = start->timeline != NULL;
  pthread_mutex_unlock(&start->lock);
  pthread_mutex_lock(&end->lock);
  recorded = recorded && end->timeline != NULL;
  pthread_mutex_unlock(&end->lock);
  if (!recorded)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "event was never recorded");
  if (!vk_event_done(start) || !vk_event_done(end))
    return npu_set_error(NPU_ERROR_NOT_READY, "event has not completed yet");
  uint64_t t0, t1;
  npu_status status = read_timestamp(start, &t0);
  if (status == NPU_OK)
    status = read_timestamp(end, &t1);
  if (status != NPU_OK)
    return status;
  double period_ns = start->device->properties.limits.timestampPeriod;
  *ms = (float)((double)(int64_t)(t1 - t0) * period_ns / 1e6);
  return NPU_OK;
}
