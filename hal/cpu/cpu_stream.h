/* CPU backend streams and events (cpu_stream.c), used by cpu_backend.c. */
#ifndef NPU_CPU_STREAM_H
#define NPU_CPU_STREAM_H

#include "npu_hal.h"

/* Queues a copy (fill_value < 0) or a fill of `size` bytes. */
npu_status cpu_stream_submit_copy(npu_hal_stream *stream, void *dst, const void *src, int fill_value,
                                  size_t size, npu_hal_task_fn done, void *done_data);

npu_status cpu_stream_create(npu_hal_device *device, npu_hal_stream **stream);
void cpu_stream_destroy(npu_hal_stream *stream);
npu_status cpu_stream_submit(npu_hal_stream *stream, npu_hal_task_fn fn, void *user_data);
/* Waits for the queued work; returns the failure a task recorded since the
 * last synchronize (cpu_stream_fail), if any, and forgets it. */
npu_status cpu_stream_synchronize(npu_hal_stream *stream);
/* From a task: the stream's work failed (the first failure is kept). */
void cpu_stream_fail(npu_hal_stream *stream, npu_status status, const char *message);
bool cpu_stream_idle(npu_hal_stream *stream);
npu_status cpu_stream_wait_event(npu_hal_stream *stream, npu_hal_event *event);
void cpu_stream_stats(npu_hal_stream *stream, npu_stream_stats *stats);

npu_status cpu_event_create(npu_hal_device *device, uint32_t flags, npu_hal_event **event);
void cpu_event_destroy(npu_hal_event *event);
npu_status cpu_event_record(npu_hal_event *event, npu_hal_stream *stream);
npu_status cpu_event_synchronize(npu_hal_event *event);
bool cpu_event_done(npu_hal_event *event);
npu_status cpu_event_elapsed_ms(npu_hal_event *start, npu_hal_event *end, float *ms);

#endif
