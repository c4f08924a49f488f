/* gst-npu HAL: the interface every device backend implements.
 *
 * runtime/ and vpp/ decide *what* to compute and call only this interface;
 * a backend (hal/<name>/) decides *how*. Entries marked optional may be NULL;
 * what a backend can do is told by npu_device_caps, never by versions.
 *
 * Ownership: the runtime validates arguments, keeps reference counts and
 * statistics; a backend trusts its arguments and only reports device
 * failures (setting the thread's error message with npu_set_error()). */
#ifndef NPU_HAL_H
#define NPU_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <npu/npu.h>

typedef struct npu_hal_device npu_hal_device; /* defined by each backend */
typedef struct npu_hal_buffer npu_hal_buffer;
typedef struct npu_hal_stream npu_hal_stream;
typedef struct npu_hal_event npu_hal_event;

/* Kernel families a backend may provide (NULL when it has none). */
typedef struct npu_hal_vpp_ops npu_hal_vpp_ops;
typedef struct npu_hal_graph_ops npu_hal_graph_ops;

typedef void (*npu_hal_task_fn)(void *user_data);

/* One end of a copy: device memory (buffer + offset) or host memory (host). */
typedef struct npu_hal_mem_ref {
  npu_hal_buffer *buffer; /* NULL: `host` is a host pointer */
  void *host;
  size_t offset;
} npu_hal_mem_ref;

typedef struct npu_hal_backend {
  const char *name;

  /* Devices. */
  uint32_t (*device_count)(void);
  npu_status (*device_open)(uint32_t index, npu_hal_device **device);
  void (*device_close)(npu_hal_device *device);
  void (*device_properties)(npu_hal_device *device, npu_device_properties *props);

  /* Device memory. */
  npu_status (*buffer_alloc)(npu_hal_device *device, size_t size, npu_hal_buffer **buffer);
  void (*buffer_free)(npu_hal_device *device, npu_hal_buffer *buffer);
  /* optional: CPU address of a host-visible buffer */
  void *(*buffer_host_ptr)(npu_hal_buffer *buffer);
  /* optional: wrap host memory without copying */
  npu_status (*buffer_import_host)(npu_hal_device *device, void *host_ptr, size_t size,
                                   npu_hal_buffer **buffer);
  /* optional: a new fd mapping the buffer's bytes from *offset */
  npu_status (*buffer_export_fd)(npu_hal_buffer *buffer, int *fd, size_t *offset);
  /* optional: the `size` bytes at `offset` in `fd` (dma-buf or memfd) as a
   * device buffer without copying; `fd` stays the caller's (the backend keeps
   * its own reference to the memory). Bad fds and ranges are reported. */
  npu_status (*buffer_import_fd)(npu_hal_device *device, int fd, size_t offset, size_t size,
                                 npu_hal_buffer **buffer);

  /* Host memory that the device copies fastest from/to. */
  npu_status (*host_alloc)(npu_hal_device *device, size_t size, void **host_ptr);
  void (*host_free)(npu_hal_device *device, void *host_ptr);

  /* Copy or fill `size` bytes. stream == NULL: synchronous. Otherwise queued
   * on the stream; `done` (may be NULL) runs on completion with `done_data`. */
  npu_status (*copy)(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst,
                     npu_hal_mem_ref src, size_t size, npu_hal_task_fn done, void *done_data);
  npu_status (*fill)(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst,
                     int value, size_t size, npu_hal_task_fn done, void *done_data);
  /* optional: `rows` rows of `row_bytes` each, the rows `dst_pitch` and
   * `src_pitch` bytes apart (an image plane with its stride) in one call;
   * the runtime copies row by row where a backend has none. */
  npu_status (*copy_2d)(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst,
                        size_t dst_pitch, npu_hal_mem_ref src, size_t src_pitch,
                        size_t row_bytes, size_t rows, npu_hal_task_fn done, void *done_data);

  /* Streams: in-order queues. */
  npu_status (*stream_create)(npu_hal_device *device, npu_hal_stream **stream);
  void (*stream_destroy)(npu_hal_stream *stream); /* drains first */
  npu_status (*stream_submit)(npu_hal_stream *stream, npu_hal_task_fn fn, void *user_data);
  npu_status (*stream_synchronize)(npu_hal_stream *stream);
  bool (*stream_idle)(npu_hal_stream *stream);
  npu_status (*stream_wait_event)(npu_hal_stream *stream, npu_hal_event *event);
  void (*stream_stats)(npu_hal_stream *stream, npu_stream_stats *stats);

  /* Events: fences usable across streams. */
  npu_status (*event_create)(npu_hal_device *device, uint32_t flags, npu_hal_event **event);
  void (*event_destroy)(npu_hal_event *event); /* safe while still pending */
  npu_status (*event_record)(npu_hal_event *event, npu_hal_stream *stream);
  npu_status (*event_synchronize)(npu_hal_event *event);
  bool (*event_done)(npu_hal_event *event);
  /* NPU_ERROR_NOT_READY if either is pending, NOT_SUPPORTED without timing */
  npu_status (*event_elapsed_ms)(npu_hal_event *start, npu_hal_event *end, float *ms);

  /* Kernel families; NULL where the backend has none. */
  const npu_hal_vpp_ops *vpp;
  const npu_hal_graph_ops *graph;
} npu_hal_backend;

/* Registry (hal_registry.c): backends compiled in, CPU first, then those
 * added (from one thread, before devices are enumerated or opened). */
uint32_t npu_hal_backend_count(void);
const npu_hal_backend *npu_hal_backend_get(uint32_t index);
npu_status npu_hal_backend_add(const npu_hal_backend *backend);

/* Sets the calling thread's last-error message (runtime/status.c); returns `status`. */
npu_status npu_set_error(npu_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

#endif
