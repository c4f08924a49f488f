/* gst-npu runtime: internals shared by runtime/, vpp/ and the tools.
 * Not installed; everything here is hidden in libnpu. */
#ifndef NPU_INTERNAL_H
#define NPU_INTERNAL_H

#include <npu/npu.h>

#include "npu_hal.h"

/* The backend and backend device behind a runtime device. */
const npu_hal_backend *npu_device_backend(npu_device *device);
npu_hal_device *npu_device_hal(npu_device *device);
const npu_device_caps *npu_device_caps_of(npu_device *device);

/* Backend objects behind runtime handles (no reference taken: the caller
 * keeps the runtime handle alive while it uses them). */
npu_hal_buffer *npu_buffer_hal(npu_buffer *buffer);
npu_hal_stream *npu_stream_hal(npu_stream *stream);
npu_hal_event *npu_event_hal(npu_event *event);

/* Handle validation: NPU_OK if `handle` is a live object of `kind`, else
 * NPU_ERROR_INVALID_HANDLE with a message naming `what`. */
typedef enum npu_handle_kind {
  NPU_HANDLE_DEVICE = 1,
  NPU_HANDLE_STREAM,
  NPU_HANDLE_EVENT,
  NPU_HANDLE_BUFFER,
  NPU_HANDLE_POOL,
  NPU_HANDLE_HOST_MEMORY,
  NPU_HANDLE_MODEL,
  NPU_HANDLE_CONTEXT,
} npu_handle_kind;

void npu_handle_register(const void *handle, npu_handle_kind kind);
/* Returns NPU_OK and removes it, or INVALID_HANDLE if not live (double free). */
npu_status npu_handle_unregister(const void *handle, npu_handle_kind kind, const char *what);
npu_status npu_handle_check(const void *handle, npu_handle_kind kind, const char *what);

/* Adds to the device's copy counters (bytes_h2d/d2h/d2d). */
typedef enum npu_copy_kind { NPU_COPY_H2D, NPU_COPY_D2H, NPU_COPY_D2D } npu_copy_kind;
void npu_device_count_copy(npu_device *device, npu_copy_kind kind, size_t bytes);

/* Allocation counters: a backend allocation made (+) or freed (-), an import. */
void npu_device_count_allocation(npu_device *device, size_t bytes);
void npu_device_count_free(npu_device *device, size_t bytes);
void npu_device_count_import(npu_device *device);

/* Streams the device knows of, for npu_device_synchronize(). */
npu_status npu_device_track_stream(npu_device *device, npu_hal_stream *stream);
void npu_device_untrack_stream(npu_device *device, npu_hal_stream *stream);

/* Pool support (memory.c <-> pool.c). A pooled buffer owns a backend
 * allocation of `capacity` bytes; its last release calls
 * npu_mem_pool_reclaim() instead of freeing. */
npu_status npu_buffer_create_pooled(npu_device *device, npu_mem_pool *pool, size_t capacity,
                                    npu_buffer **buffer);
void npu_buffer_revive_pooled(npu_buffer *buffer, size_t size); /* reuse from the cache */
size_t npu_buffer_capacity(npu_buffer *buffer);
void npu_buffer_destroy_pooled(npu_buffer *buffer);
void npu_mem_pool_reclaim(npu_mem_pool *pool, npu_buffer *buffer);

#endif
