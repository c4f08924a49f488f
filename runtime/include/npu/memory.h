/* gst-npu runtime: device memory, host memory and copies.
 *
 * Device memory is held in npu_buffer handles, reference counted and safe to
 * share between threads. A buffer is freed (or returned to its pool) when its
 * last reference is released; queued async work holds references of its own,
 * so releasing a buffer right after queuing a copy is safe.
 *
 * Host pointers given to async calls must stay valid until the work is done
 * (synchronize the stream or an event recorded after it). */
#ifndef NPU_MEMORY_H
#define NPU_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include <npu/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npu_buffer npu_buffer;

/* Called when an imported buffer's last reference goes: the host memory (or
 * the imported fd's memory) may be reused from then on. */
typedef void (*npu_release_fn)(void *user_data);

enum {
  NPU_MAP_READ = 1 << 0,
  NPU_MAP_WRITE = 1 << 1,
};

/* Buffers are aligned to at least this many bytes. */
#define NPU_BUFFER_ALIGNMENT 64

NPU_API npu_status npu_buffer_alloc(npu_device *device, size_t size, npu_buffer **buffer);

/* Wraps `size` bytes at `host_ptr` as a device buffer without copying
 * (NPU_ERROR_NOT_SUPPORTED where the backend cannot). `release` (may be NULL)
 * is called with `user_data` once the buffer is gone. */
NPU_API npu_status npu_buffer_import_host(npu_device *device, void *host_ptr, size_t size,
                                          npu_release_fn release, void *user_data,
                                          npu_buffer **buffer);

/* Wraps the `size` bytes at `offset` in the file descriptor `fd` (a dma-buf
 * or a memfd) as a device buffer without copying: device work reads and
 * writes that memory itself (NPU_ERROR_NOT_SUPPORTED where the backend
 * cannot, npu_device_caps.fd_import; NPU_ERROR_INVALID_ARGUMENT for an fd
 * that is not mappable memory or too small). `fd` stays the caller's: it may
 * be closed at once. `release` (may be NULL) is called with `user_data` once
 * the buffer is gone, from when the memory may be reused. */
NPU_API npu_status npu_buffer_import_fd(npu_device *device, int fd, size_t offset, size_t size,
                                        npu_release_fn release, void *user_data,
                                        npu_buffer **buffer);

NPU_API npu_status npu_buffer_retain(npu_buffer *buffer);
NPU_API npu_status npu_buffer_release(npu_buffer *buffer);

NPU_API npu_status npu_buffer_size(npu_buffer *buffer, size_t *size);
NPU_API npu_status npu_buffer_device(npu_buffer *buffer, npu_device **device);

/* Direct CPU access where the device memory is host-visible
 * (npu_device_caps.host_visible_memory); NPU_ERROR_NOT_SUPPORTED otherwise,
 * in which case copy with npu_memcpy_*. Mapping does not synchronize: wait for
 * the streams that write the buffer first. */
NPU_API npu_status npu_buffer_map(npu_buffer *buffer, uint32_t map_flags, void **host_ptr);
NPU_API npu_status npu_buffer_unmap(npu_buffer *buffer);

/* Exports the buffer as a file descriptor (memfd or dma-buf) that maps the
 * same bytes; the caller owns and closes `*fd`. The buffer's bytes start at
 * `*offset` within the fd. */
NPU_API npu_status npu_buffer_export_fd(npu_buffer *buffer, int *fd, size_t *offset);

/* Page-locked host memory suitable for fast async copies. */
NPU_API npu_status npu_host_alloc(npu_device *device, size_t size, void **host_ptr);
NPU_API npu_status npu_host_free(npu_device *device, void *host_ptr);

/* Synchronous copies: return when the bytes have landed. */
NPU_API npu_status npu_memcpy_h2d(npu_buffer *dst, size_t dst_offset, const void *src,
                                  size_t size);
NPU_API npu_status npu_memcpy_d2h(void *dst, npu_buffer *src, size_t src_offset, size_t size);
NPU_API npu_status npu_memcpy_d2d(npu_buffer *dst, size_t dst_offset, npu_buffer *src,
                                  size_t src_offset, size_t size);
NPU_API npu_status npu_memset(npu_buffer *dst, size_t offset, int value, size_t size);

/* Asynchronous copies, queued in order on `stream` (NULL: synchronous). */
NPU_API npu_status npu_memcpy_h2d_async(npu_buffer *dst, size_t dst_offset, const void *src,
                                        size_t size, npu_stream *stream);
NPU_API npu_status npu_memcpy_d2h_async(void *dst, npu_buffer *src, size_t src_offset,
                                        size_t size, npu_stream *stream);
NPU_API npu_status npu_memcpy_d2d_async(npu_buffer *dst, size_t dst_offset, npu_buffer *src,
                                        size_t src_offset, size_t size, npu_stream *stream);
/* Pitched copies: `rows` rows of `row_bytes`, each row `*_pitch` bytes after
 * the one before at its end (an image plane and its stride), in one call
 * the backend may do in one operation. stream NULL: synchronous. */
NPU_API npu_status npu_memcpy_2d_h2d(npu_buffer *dst, size_t dst_offset, size_t dst_pitch,
                                    const void *src, size_t src_pitch, size_t row_bytes,
                                    size_t rows, npu_stream *stream);
NPU_API npu_status npu_memcpy_2d_d2h(void *dst, size_t dst_pitch, npu_buffer *src,
                                    size_t src_offset, size_t src_pitch, size_t row_bytes,
                                    size_t rows, npu_stream *stream);
NPU_API npu_status npu_memset_async(npu_buffer *dst, size_t offset, int value, size_t size,
                                    npu_stream *stream);

#ifdef __cplusplus
}
#endif
#endif
