/* Device buffers (reference counted handles over backend buffers), host
 * memory and copies. Validation and statistics live here; the backend only
 * moves bytes. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "npu_checked.h"
#include "npu_internal.h"

struct npu_buffer {
  atomic_uint refcount;
  atomic_int map_count;
  npu_device *device;
  npu_hal_buffer *hal;
  size_t size;
  size_t capacity;          /* bytes the backend allocation holds */
  npu_mem_pool *pool;       /* owning pool, NULL otherwise */
  npu_release_fn release;   /* imports: the owner's release of the host memory */
  void *release_data;
  int imported;
};

npu_hal_buffer *npu_buffer_hal(npu_buffer *buffer)
{
  return buffer->hal;
}

/* A handle around a backend buffer (an allocation or an
 * import), holding a device reference; frees `hal` on failure. */
static npu_status wrap_backend_buffer(npu_device *device, size_t size, npu_hal_buffer *hal,
                                      npu_buffer **out)
{
  npu_buffer *buffer = calloc(1, sizeof *buffer);
  if (!buffer) {
    npu_device_backend(device)->buffer_free(npu_device_hal(device), hal);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for a buffer handle");
  }
  atomic_init(&buffer->refcount, 1);
  npu_device_retain(device);
  buffer->device = device;
  buffer->hal = hal;
  buffer->size = size;
  buffer->capacity = size;
  *out = buffer;
  return NPU_OK;
}

static npu_status new_buffer(npu_device *device, size_t size, npu_buffer **out)
{
  npu_hal_buffer *hal;
  npu_status status = npu_device_backend(device)->buffer_alloc(npu_device_hal(device), size, &hal);
  if (status == NPU_OK)
    status = wrap_backend_buffer(device, size, hal, out);
  if (status == NPU_OK)
    npu_device_count_allocation(device, size);
  return status;
}

NPU_API npu_status npu_buffer_alloc(npu_device *device, size_t size, npu_buffer **out)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (!out || size == 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_buffer_alloc: buffer is NULL or size is 0");
  status = new_buffer(device, size, out);
  if (status == NPU_OK)
    npu_handle_register(*out, NPU_HANDLE_BUFFER);
  return status;
}

npu_status npu_buffer_create_pooled(npu_device *device, npu_mem_pool *pool, size_t capacity,
                                    npu_buffer **out)
{
  npu_status status = new_buffer(device, capacity, out);
  if (status == NPU_OK)
    (*out)->pool = pool;
  return status;
}

void npu_buffer_revive_pooled(npu_buffer *buffer, size_t size)
{
  atomic_store(&buffer->refcount, 1);
  atomic_store(&buffer->map_count, 0);
  buffer->size = size;
  npu_handle_register(buffer, NPU_HANDLE_BUFFER);
}

size_t npu_buffer_capacity(npu_buffer *buffer)
{
  return buffer->capacity;
}

static void destroy_buffer(npu_buffer *buffer)
{
  npu_device *device = buffer->device;
  npu_device_backend(device)->buffer_free(npu_device_hal(device), buffer->hal);
  if (buffer->imported) {
    if (buffer->release)
      buffer->release(buffer->release_data);
  } else {
    npu_device_count_free(device, buffer->capacity);
  }
  free(buffer);
  npu_device_release(device);
}

void npu_buffer_destroy_pooled(npu_buffer *buffer)
{
  destroy_buffer(buffer);
}

/* Completes an import: `status` is the backend's answer, `hal` its buffer.
 * The buffer gives its memory back through `release` when it goes. */
static npu_status finish_import(npu_device *device, npu_status status, npu_hal_buffer *hal,
                                size_t size, npu_release_fn release, void *user_data,
                                npu_buffer **out)
{
  npu_buffer *buffer;
  if (status == NPU_OK)
    status = wrap_backend_buffer(device, size, hal, &buffer);
  if (status != NPU_OK)
    return status;
  buffer->release = release;
  buffer->release_data = user_data;
  buffer->imported = 1;
  npu_device_count_import(device);
  npu_handle_register(buffer, NPU_HANDLE_BUFFER);
  *out = buffer;
  return NPU_OK;
}

NPU_API npu_status npu_buffer_import_host(npu_device *device, void *host_ptr, size_t size,
                                          npu_release_fn release, void *user_data,
                                          npu_buffer **out)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (!host_ptr || !out || size == 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_buffer_import_host: host_ptr or buffer is NULL, or size is 0");
  const npu_hal_backend *backend = npu_device_backend(device);
  if (!backend->buffer_import_host || !npu_device_caps_of(device)->host_import)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                         "the %s backend cannot import host memory", backend->name);
  npu_hal_buffer *hal = NULL;
  status = backend->buffer_import_host(npu_device_hal(device), host_ptr, size, &hal);
  return finish_import(device, status, hal, size, release, user_data, out);
}

NPU_API npu_status npu_buffer_import_fd(npu_device *device, int fd, size_t offset, size_t size,
                                        npu_release_fn release, void *user_data,
                                        npu_buffer **out)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (fd < 0 || !out || size == 0 || offset > SIZE_MAX - size)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_buffer_import_fd: fd %d is negative, buffer is NULL, size is 0 or "
                         "offset + size overflows", fd);
  const npu_hal_backend *backend = npu_device_backend(device);
  if (!backend->buffer_import_fd || !npu_device_caps_of(device)->fd_import)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                         "the %s backend cannot import file descriptors", backend->name);
  npu_hal_buffer *hal = NULL;
  status = backend->buffer_import_fd(npu_device_hal(device), fd, offset, size, &hal);
  return finish_import(device, status, hal, size, release, user_data, out);
}

NPU_API npu_status npu_buffer_retain(npu_buffer *buffer)
{
  npu_status status = npu_handle_check(buffer, NPU_HANDLE_BUFFER, "buffer");
  if (status == NPU_OK)
    atomic_fetch_add(&buffer->refcount, 1);
  return status;
}

/* Drops a reference taken internally (queued work): no handle lookup. */
static void release_reference(npu_buffer *buffer)
{
  if (atomic_fetch_sub(&buffer->refcount, 1) != 1)
    return;
  npu_handle_unregister(buffer, NPU_HANDLE_BUFFER, "buffer");
  if (buffer->pool)
    npu_mem_pool_reclaim(buffer->pool, buffer);
  else
    destroy_buffer(buffer);
}

NPU_API npu_status npu_buffer_release(npu_buffer *buffer)
{
  npu_status status = npu_handle_check(buffer, NPU_HANDLE_BUFFER, "buffer");
  if (status == NPU_OK)
    release_reference(buffer);
  return status;
}

NPU_API npu_status npu_buffer_size(npu_buffer *buffer, size_t *size)
{
  npu_status status = npu_handle_check(buffer, NPU_HANDLE_BUFFER, "buffer");
  if (status != NPU_OK)
    return status;
  if (!size)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_buffer_size: size is NULL");
  *size = buffer->size;
  return NPU_OK;
}

NPU_API npu_status npu_buffer_device(npu_buffer *buffer, npu_device **device)
{
  npu_status status = npu_handle_check(buffer, NPU_HANDLE_BUFFER, "buffer");
  if (status != NPU_OK)
    return status;
  if (!device)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_buffer_device: device is NULL");
  *device = buffer->device;
  return NPU_OK;
}

NPU_API npu_status npu_buffer_map(npu_buffer *buffer, uint32_t map_flags, void **host_ptr)
{
  npu_status status = npu_handle_check(buffer, NPU_HANDLE_BUFFER, "buffer");
  if (status != NPU_OK)
    return status;
  if (!host_ptr || !(map_flags & (NPU_MAP_READ | NPU_MAP_WRITE)) ||
      (map_flags & ~(uint32_t)(NPU_MAP_READ | NPU_MAP_WRITE)))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_buffer_map: host_ptr is NULL or flags are not READ/WRITE");
  const npu_hal_backend *backend = npu_device_backend(buffer->device);
  if (!backend->buffer_host_ptr || !npu_device_caps_of(buffer->device)->host_visible_memory)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                         "%s device memory is not host-visible: copy it with npu_memcpy_d2h",
                         backend->name);
  *host_ptr = backend->buffer_host_ptr(buffer->hal);
  atomic_fetch_add(&buffer->map_count, 1);
  return NPU_OK;
}

NPU_API npu_status npu_buffer_unmap(npu_buffer *buffer)
{
  npu_status status = npu_handle_check(buffer, NPU_HANDLE_BUFFER, "buffer");
  if (status != NPU_OK)
    return status;
  int mapped = atomic_load(&buffer->map_count);
  do {
    if (mapped <= 0)
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_buffer_unmap: buffer is not mapped");
  } while (!atomic_compare_exchange_weak(&buffer->map_count, &mapped, mapped - 1));
  return NPU_OK;
}

NPU_API npu_status npu_buffer_export_fd(npu_buffer *buffer, int *fd, size_t *offset)
{
  npu_status status = npu_handle_check(buffer, NPU_HANDLE_BUFFER, "buffer");
  if (status != NPU_OK)
    return status;
  if (!fd || !offset)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_buffer_export_fd: fd or offset is NULL");
  const npu_hal_backend *backend = npu_device_backend(buffer->device);
  if (!backend->buffer_export_fd)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "the %s backend cannot export buffers as fds",
                         backend->name);
  return backend->buffer_export_fd(buffer->hal, fd, offset);
}

NPU_API npu_status npu_host_alloc(npu_device *device, size_t size, void **host_ptr)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (!host_ptr || size == 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_host_alloc: host_ptr is NULL or size is 0");
  status = npu_device_backend(device)->host_alloc(npu_device_hal(device), size, host_ptr);
  if (status == NPU_OK)
    npu_handle_register(*host_ptr, NPU_HANDLE_HOST_MEMORY);
  return status;
}

NPU_API npu_status npu_host_free(npu_device *device, void *host_ptr)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status == NPU_OK)
    status = npu_handle_unregister(host_ptr, NPU_HANDLE_HOST_MEMORY,
                                   "host memory (not from npu_host_alloc, or freed twice)");
  if (status == NPU_OK)
    npu_device_backend(device)->host_free(npu_device_hal(device), host_ptr);
  return status;
}

/* ---- copies ---------------------------------------------------------------- */

/* What an async copy keeps alive until the backend says it is done. */
typedef struct copy_references {
  npu_buffer *first;
  npu_buffer *second; /* d2d source, else NULL */
} copy_references;

static void release_copy_references(void *data)
{
  copy_references *refs = data;
  release_reference(refs->first);
  if (refs->second)
    release_reference(refs->second);
  free(refs);
}

static npu_status check_range(npu_buffer *buffer, size_t offset, size_t size, const char *what)
{
  if (size == 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s: size is 0", what);
  if (offset > buffer->size || size > buffer->size - offset)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "%s: %zu bytes at offset %zu overrun a %zu-byte buffer", what, size,
                         offset, buffer->size);
  return NPU_OK;
}

typedef struct copy_request {
  const char *what;
  npu_copy_kind kind;
  npu_buffer *dst, *src; /* device ends; NULL where the end is host memory */
  size_t dst_offset, src_offset;
  void *dst_host;
  const void *src_host;
  int fill_value;        /* >= 0: a fill, no source */
  size_t size;           /* of a row */
  size_t rows;           /* > 1: a pitched copy */
  size_t dst_pitch, src_pitch;
  npu_stream *stream;    /* NULL: synchronous */
  bool async;
} copy_request;

static npu_status check_request(const copy_request *req)
{
  npu_status status = NPU_OK;
  if (req->dst)
    status = npu_handle_check(req->dst, NPU_HANDLE_BUFFER, "destination buffer");
  else if (!req->dst_host)
    status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s: destination is NULL", req->what);
  if (status == NPU_OK && req->src)
    status = npu_handle_check(req->src, NPU_HANDLE_BUFFER, "source buffer");
  else if (status == NPU_OK && req->fill_value < 0 && !req->src && !req->src_host)
    status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s: source is NULL", req->what);
  if (status == NPU_OK && req->async)
    status = npu_handle_check(req->stream, NPU_HANDLE_STREAM, "stream");
  size_t dst_extent = req->size, src_extent = req->size;
  if (status == NPU_OK && req->rows > 1 &&
      (req->dst_pitch < req->size || req->src_pitch < req->size ||
       !npu_mul_size(req->dst_pitch, req->rows - 1, &dst_extent) ||
       !npu_add_size(dst_extent, req->size, &dst_extent) ||
       !npu_mul_size(req->src_pitch, req->rows - 1, &src_extent) ||
       !npu_add_size(src_extent, req->size, &src_extent)))
    status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s: %zu rows of %zu bytes do not fit "
                           "pitches of %zu (destination) and %zu (source) bytes", req->what,
                           req->rows, req->size, req->dst_pitch, req->src_pitch);
  if (status == NPU_OK && req->rows == 0)
    status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s: no rows", req->what);
  if (status == NPU_OK && req->dst)
    status = check_range(req->dst, req->dst_offset, dst_extent, req->what);
  if (status == NPU_OK && req->src)
    status = check_range(req->src, req->src_offset, src_extent, req->what);
  if (status == NPU_OK && !req->dst && !req->src)
    status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s: no device buffer", req->what);
  if (status != NPU_OK)
    return status;
  npu_device *device = req->dst ? req->dst->device : req->src->device;
  npu_device *stream_device = NULL;
  if (req->async)
    npu_stream_device(req->stream, &stream_device);
  if ((req->src && req->src->device != device) || (stream_device && stream_device != device))
    return npu_set_error(NPU_ERROR_DEVICE_MISMATCH,
                         "%s: buffers and stream belong to different devices", req->what);
  return NPU_OK;
}

/* The end of a copy `skip` bytes further on. */
static npu_hal_mem_ref row_of(npu_hal_mem_ref ref, size_t skip)
{
  if (ref.buffer)
    ref.offset += skip;
  else
    ref.host = (uint8_t *)ref.host + skip;
  return ref;
}

static npu_status run_copy(const copy_request *req)
{
  npu_status status = check_request(req);
  if (status != NPU_OK)
    return status;
  npu_device *device = req->dst ? req->dst->device : req->src->device;
  const npu_hal_backend *backend = npu_device_backend(device);
  npu_hal_mem_ref dst = {req->dst ? req->dst->hal : NULL, req->dst_host, req->dst_offset};
  npu_hal_mem_ref src = {req->src ? req->src->hal : NULL, (void *)req->src_host,
                         req->src_offset};
  npu_hal_stream *stream = req->async ? npu_stream_hal(req->stream) : NULL;

  copy_references *refs = NULL;
  if (req->async) {
    refs = malloc(sizeof *refs);
    if (!refs)
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "%s: out of host memory", req->what);
    refs->first = req->dst ? req->dst : req->src;
    refs->second = req->dst && req->src ? req->src : NULL;
    atomic_fetch_add(&refs->first->refcount, 1);
    if (refs->second)
      atomic_fetch_add(&refs->second->refcount, 1);
  }
  npu_hal_task_fn done = refs ? release_copy_references : NULL;
  if (req->fill_value >= 0)
    status = backend->fill(npu_device_hal(device), stream, dst, req->fill_value, req->size, done,
                           refs);
  else if (req->rows > 1 && backend->copy_2d)
    status = backend->copy_2d(npu_device_hal(device), stream, dst, req->dst_pitch, src,
                              req->src_pitch, req->size, req->rows, done, refs);
  else /* a row at a time where the backend has no pitched copy; `done` after the last */
    for (size_t y = 0; y < req->rows && status == NPU_OK; y++) {
      bool last = y + 1 == req->rows;
      status = backend->copy(npu_device_hal(device), stream, row_of(dst, y * req->dst_pitch),
                             row_of(src, y * req->src_pitch), req->size, last ? done : NULL,
                             last ? refs : NULL);
    }
  if (status != NPU_OK) {
    if (refs)
      release_copy_references(refs);
    return status;
  }
  if (req->fill_value < 0)
    npu_device_count_copy(device, req->kind, req->size * req->rows);
  return NPU_OK;
}

NPU_API npu_status npu_memcpy_h2d(npu_buffer *dst, size_t dst_offset, const void *src,
                                  size_t size)
{
  return npu_memcpy_h2d_async(dst, dst_offset, src, size, NULL);
}

NPU_API npu_status npu_memcpy_d2h(void *dst, npu_buffer *src, size_t src_offset, size_t size)
{
  return npu_memcpy_d2h_async(dst, src, src_offset, size, NULL);
}

NPU_API npu_status npu_memcpy_d2d(npu_buffer *dst, size_t dst_offset, npu_buffer *src,
                                  size_t src_offset, size_t size)
{
  return npu_memcpy_d2d_async(dst, dst_offset, src, src_offset, size, NULL);
}

NPU_API npu_status npu_memset(npu_buffer *dst, size_t offset, int value, size_t size)
{
  return npu_memset_async(dst, offset, value, size, NULL);
}

NPU_API npu_status npu_memcpy_h2d_async(npu_buffer *dst, size_t dst_offset, const void *src,
                                        size_t size, npu_stream *stream)
{
  copy_request req = {.what = "npu_memcpy_h2d", .kind = NPU_COPY_H2D, .dst = dst,
                      .dst_offset = dst_offset, .src_host = src, .fill_value = -1, .rows = 1,
                      .size = size, .stream = stream, .async = stream != NULL};
  if (!dst)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_memcpy_h2d: destination is NULL");
  return run_copy(&req);
}

NPU_API npu_status npu_memcpy_d2h_async(void *dst, npu_buffer *src, size_t src_offset,
                                        size_t size, npu_stream *stream)
{
  copy_request req = {.what = "npu_memcpy_d2h", .kind = NPU_COPY_D2H, .src = src,
                      .src_offset = src_offset, .dst_host = dst, .fill_value = -1, .rows = 1,
                      .size = size, .stream = stream, .async = stream != NULL};
  if (!src)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_memcpy_d2h: source is NULL");
  return run_copy(&req);
}

NPU_API npu_status npu_memcpy_2d_h2d(npu_buffer *dst, size_t dst_offset, size_t dst_pitch,
                                    const void *src, size_t src_pitch, size_t row_bytes,
                                    size_t rows, npu_stream *stream)
{
  copy_request req = {.what = "npu_memcpy_2d_h2d", .kind = NPU_COPY_H2D, .dst = dst,
                      .dst_offset = dst_offset, .src_host = src, .fill_value = -1,
                      .size = row_bytes, .rows = rows, .dst_pitch = dst_pitch,
                      .src_pitch = src_pitch, .stream = stream, .async = stream != NULL};
  if (!dst)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_memcpy_2d_h2d: destination is NULL");
  return run_copy(&req);
}

NPU_API npu_status npu_memcpy_2d_d2h(void *dst, size_t dst_pitch, npu_buffer *src,
                                    size_t src_offset, size_t src_pitch, size_t row_bytes,
                                    size_t rows, npu_stream *stream)
{
  copy_request req = {.what = "npu_memcpy_2d_d2h", .kind = NPU_COPY_D2H, .src = src,
                      .src_offset = src_offset, .dst_host = dst, .fill_value = -1,
                      .size = row_bytes, .rows = rows, .dst_pitch = dst_pitch,
                      .src_pitch = src_pitch, .stream = stream, .async = stream != NULL};
  if (!src)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_memcpy_2d_d2h: source is NULL");
  return run_copy(&req);
}

NPU_API npu_status npu_memcpy_d2d_async(npu_buffer *dst, size_t dst_offset, npu_buffer *src,
                                        size_t src_offset, size_t size, npu_stream *stream)
{
  copy_request req = {.what = "npu_memcpy_d2d", .kind = NPU_COPY_D2D, .dst = dst,
                      .dst_offset = dst_offset, .src = src, .src_offset = src_offset,
                      .fill_value = -1, .rows = 1, .size = size, .stream = stream,
                      .async = stream != NULL};
  if (!dst || !src)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_memcpy_d2d: a buffer is NULL");
  return run_copy(&req);
}

NPU_API npu_status npu_memset_async(npu_buffer *dst, size_t offset, int value, size_t size,
                                    npu_stream *stream)
{
  if (value < -128 || value > 255)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_memset: value %d does not fit in a byte", value);
  copy_request req = {.what = "npu_memset", .dst = dst, .dst_offset = offset,
                      .fill_value = value & 0xff, .rows = 1, .size = size, .stream = stream,
                      .async = stream != NULL};
  if (!dst)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_memset: destination is NULL");
  return run_copy(&req);
}
