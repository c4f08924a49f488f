/* Streams and events: validation and device bookkeeping over the backend's
 * queues and fences. */
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"

struct npu_stream {
  npu_device *device;
  npu_hal_stream *hal;
};

struct npu_event {
  npu_device *device;
  npu_hal_event *hal;
};

npu_hal_stream *npu_stream_hal(npu_stream *stream)
{
  return stream->hal;
}

npu_hal_event *npu_event_hal(npu_event *event)
{
  return event->hal;
}

NPU_API npu_status npu_stream_create(npu_device *device, npu_stream **out)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (!out)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_stream_create: stream is NULL");
  const npu_hal_backend *backend = npu_device_backend(device);
  npu_stream *stream = calloc(1, sizeof *stream);
  if (!stream)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory creating a stream");
  status = backend->stream_create(npu_device_hal(device), &stream->hal);
  if (status != NPU_OK)
    goto fail;
  status = npu_device_track_stream(device, stream->hal);
  if (status != NPU_OK) {
    backend->stream_destroy(stream->hal);
    goto fail;
  }
  npu_device_retain(device);
  stream->device = device;
  npu_handle_register(stream, NPU_HANDLE_STREAM);
  *out = stream;
  return NPU_OK;
fail:
  free(stream);
  return status;
}

NPU_API npu_status npu_stream_destroy(npu_stream *stream)
{
  npu_status status = npu_handle_unregister(stream, NPU_HANDLE_STREAM, "stream");
  if (status != NPU_OK)
    return status;
  npu_device_untrack_stream(stream->device, stream->hal);
  npu_device_backend(stream->device)->stream_destroy(stream->hal);
  npu_device_release(stream->device);
  free(stream);
  return NPU_OK;
}

NPU_API npu_status npu_stream_synchronize(npu_stream *stream)
{
  npu_status status = npu_handle_check(stream, NPU_HANDLE_STREAM, "stream");
  if (status != NPU_OK)
    return status;
  return npu_device_backend(stream->device)->stream_synchronize(stream->hal);
}

NPU_API npu_status npu_stream_query(npu_stream *stream)
{
  npu_status status = npu_handle_check(stream, NPU_HANDLE_STREAM, "stream");
  if (status != NPU_OK)
    return status;
  if (npu_device_backend(stream->device)->stream_idle(stream->hal))
    return NPU_OK;
  /* Not a failure: no message. */
  return NPU_ERROR_NOT_READY;
}

NPU_API npu_status npu_stream_launch_host_func(npu_stream *stream, npu_host_fn fn,
                                               void *user_data)
{
  npu_status status = npu_handle_check(stream, NPU_HANDLE_STREAM, "stream");
  if (status != NPU_OK)
    return status;
  if (!fn)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_stream_launch_host_func: fn is NULL");
  return npu_device_backend(stream->device)->stream_submit(stream->hal, fn, user_data);
}

static npu_status check_same_device(npu_device *a, npu_device *b, const char *what)
{
  if (a == b)
    return NPU_OK;
  return npu_set_error(NPU_ERROR_DEVICE_MISMATCH, "%s: the stream and event belong to "
                                                  "different devices", what);
}

typedef struct foreign_wait {
  const npu_hal_backend *backend;
  npu_hal_event *event;
} foreign_wait;

/* Runs in the waiting stream's order: holds the stream back until the
 * other device's event is done. */
static void wait_for_foreign_event(void *data)
{
  foreign_wait *wait = data;
  wait->backend->event_synchronize(wait->event);
  free(wait);
}

NPU_API npu_status npu_stream_wait_event(npu_stream *stream, npu_event *event)
{
  npu_status status = npu_handle_check(stream, NPU_HANDLE_STREAM, "stream");
  if (status == NPU_OK)
    status = npu_handle_check(event, NPU_HANDLE_EVENT, "event");
  if (status != NPU_OK)
    return status;
  const npu_hal_backend *backend = npu_device_backend(stream->device);
  if (stream->device == event->device)
    return backend->stream_wait_event(stream->hal, event->hal);
  /* Another device's event: a task on this stream waits for it, so the
   * caller never blocks (one device's queue cannot wait on another's). */
  foreign_wait *wait = malloc(sizeof *wait);
  if (!wait)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory queuing a wait");
  *wait = (foreign_wait){npu_device_backend(event->device), event->hal};
  status = backend->stream_submit(stream->hal, wait_for_foreign_event, wait);
  if (status != NPU_OK)
    free(wait);
  return status;
}

NPU_API npu_status npu_stream_get_stats(npu_stream *stream, npu_stream_stats *stats)
{
  npu_status status = npu_handle_check(stream, NPU_HANDLE_STREAM, "stream");
  if (status != NPU_OK)
    return status;
  if (!stats)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_stream_get_stats: stats is NULL");
  memset(stats, 0, sizeof *stats); /* (what a backend does not measure stays 0) */
  npu_device_backend(stream->device)->stream_stats(stream->hal, stats);
  return NPU_OK;
}

NPU_API npu_status npu_stream_device(npu_stream *stream, npu_device **device)
{
  npu_status status = npu_handle_check(stream, NPU_HANDLE_STREAM, "stream");
  if (status != NPU_OK)
    return status;
  if (!device)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_stream_device: device is NULL");
  *device = stream->device;
  return NPU_OK;
}

NPU_API npu_status npu_event_create(npu_device *device, uint32_t flags, npu_event **out)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (!out)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_event_create: event is NULL");
  if (flags & ~(uint32_t)NPU_EVENT_DISABLE_TIMING)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_event_create: unknown flags 0x%x",
                         flags);
  npu_event *event = calloc(1, sizeof *event);
  if (!event)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory creating an event");
  status = npu_device_backend(device)->event_create(npu_device_hal(device), flags, &event->hal);
  if (status != NPU_OK) {
    free(event);
    return status;
  }
  npu_device_retain(device);
  event->device = device;
  npu_handle_register(event, NPU_HANDLE_EVENT);
  *out = event;
  return NPU_OK;
}

NPU_API npu_status npu_event_destroy(npu_event *event)
{
  npu_status status = npu_handle_unregister(event, NPU_HANDLE_EVENT, "event");
  if (status != NPU_OK)
    return status;
  npu_device_backend(event->device)->event_destroy(event->hal);
  npu_device_release(event->device);
  free(event);
  return NPU_OK;
}

NPU_API npu_status npu_event_record(npu_event *event, npu_stream *stream)
{
  npu_status status = npu_handle_check(event, NPU_HANDLE_EVENT, "event");
  if (status == NPU_OK)
    status = npu_handle_check(stream, NPU_HANDLE_STREAM, "stream");
  if (status == NPU_OK)
    status = check_same_device(stream->device, event->device, "npu_event_record");
  if (status != NPU_OK)
    return status;
  return npu_device_backend(event->device)->event_record(event->hal, stream->hal);
}

NPU_API npu_status npu_event_synchronize(npu_event *event)
{
  npu_status status = npu_handle_check(event, NPU_HANDLE_EVENT, "event");
  if (status != NPU_OK)
    return status;
  return npu_device_backend(event->device)->event_synchronize(event->hal);
}

NPU_API npu_status npu_event_query(npu_event *event)
{
  npu_status status = npu_handle_check(event, NPU_HANDLE_EVENT, "event");
  if (status != NPU_OK)
    return status;
  return npu_device_backend(event->device)->event_done(event->hal) ? NPU_OK
                                                                   : NPU_ERROR_NOT_READY;
}

NPU_API npu_status npu_event_elapsed_ms(npu_event *start, npu_event *end, float *ms)
{
  npu_status status = npu_handle_check(start, NPU_HANDLE_EVENT, "start event");
  if (status == NPU_OK)
    status = npu_handle_check(end, NPU_HANDLE_EVENT, "end event");
  if (status != NPU_OK)
    return status;
  if (!ms)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_event_elapsed_ms: ms is NULL");
  if (start->device != end->device)
    return npu_set_error(NPU_ERROR_DEVICE_MISMATCH,
                         "npu_event_elapsed_ms: events of different devices");
  return npu_device_backend(start->device)->event_elapsed_ms(start->hal, end->hal, ms);
}
