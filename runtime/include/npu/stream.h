/* gst-npu runtime: streams and events.
 *
 * A stream is an in-order queue of device work. Work submitted to one stream
 * runs in submission order; work on different streams may run concurrently.
 * Submitting from many threads to one stream is safe; the order between two
 * threads' submissions is the order in which the calls returned.
 *
 * An event marks a point in a stream. Recording it captures all work
 * submitted to that stream so far; another stream can wait for it on the
 * device (npu_stream_wait_event) without blocking the calling thread. */
#ifndef NPU_STREAM_H
#define NPU_STREAM_H

#include <stdint.h>

#include <npu/device.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npu_stream npu_stream;
typedef struct npu_event npu_event;

/* A host function queued on a stream: runs after all earlier work on the
 * stream and before any later work, like cudaLaunchHostFunc. It must not
 * synchronize the stream it runs on. */
typedef void (*npu_host_fn)(void *user_data);

typedef struct npu_stream_stats {
  uint64_t tasks_submitted;
  uint64_t tasks_completed;
  uint64_t busy_ns;         /* time the stream spent executing work */
  uint64_t device_ns;       /* of busy_ns, what the device's own clock measured running
                               the stream's commands (Vulkan: timestamp queries around
                               each submission); 0 where all of it is host work (CPU) */
} npu_stream_stats;

NPU_API npu_status npu_stream_create(npu_device *device, npu_stream **stream);

/* Waits for all queued work, then destroys the stream. */
NPU_API npu_status npu_stream_destroy(npu_stream *stream);

/* Blocks until all work queued so far has finished. */
NPU_API npu_status npu_stream_synchronize(npu_stream *stream);

/* NPU_OK when idle, NPU_ERROR_NOT_READY while work is pending. */
NPU_API npu_status npu_stream_query(npu_stream *stream);

NPU_API npu_status npu_stream_launch_host_func(npu_stream *stream, npu_host_fn fn,
                                               void *user_data);

/* Work queued after this call starts only once `event`'s recorded work is
 * done. The event may belong to another device (of any backend): the
 * stream then waits for it in its own queue; the event must not be
 * recorded again or destroyed before that wait is over. */
NPU_API npu_status npu_stream_wait_event(npu_stream *stream, npu_event *event);

NPU_API npu_status npu_stream_get_stats(npu_stream *stream, npu_stream_stats *stats);
NPU_API npu_status npu_stream_device(npu_stream *stream, npu_device **device);

enum {
  NPU_EVENT_DEFAULT = 0,
  NPU_EVENT_DISABLE_TIMING = 1 << 0, /* cheaper: no timestamp taken */
};

NPU_API npu_status npu_event_create(npu_device *device, uint32_t flags, npu_event **event);
NPU_API npu_status npu_event_destroy(npu_event *event);

/* Captures the work queued on `stream` so far. Re-recording moves the event. */
NPU_API npu_status npu_event_record(npu_event *event, npu_stream *stream);

/* Blocks until the recorded work is done (immediately if never recorded). */
NPU_API npu_status npu_event_synchronize(npu_event *event);

/* NPU_OK when done (or never recorded), NPU_ERROR_NOT_READY otherwise. */
NPU_API npu_status npu_event_query(npu_event *event);

/* Milliseconds between two completed, timed events. */
NPU_API npu_status npu_event_elapsed_ms(npu_event *start, npu_event *end, float *ms);

#ifdef __cplusplus
}
#endif
#endif
