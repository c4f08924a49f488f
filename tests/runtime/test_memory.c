/* Device memory: alloc/map, copies in every direction (sync and async),
 * memset, fd export, zero-copy import of host memory and of fds, copy
 * statistics and bad arguments. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu_test.h"

static void fill_pattern(guint8 *bytes, size_t size, guint seed)
{
  for (size_t i = 0; i < size; i++)
    bytes[i] = (guint8)(i * 31 + seed);
}

static void test_alloc_map_and_sync_copies(void)
{
  npu_device *device = npu_test_open_device();
  const size_t size = 100003; /* not a page multiple */
  npu_buffer *a, *b;
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &a));
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &b));
  size_t reported;
  NPU_ASSERT_OK(npu_buffer_size(a, &reported));
  g_assert_cmpuint(reported, ==, size);
  npu_device *owner;
  NPU_ASSERT_OK(npu_buffer_device(a, &owner));
  g_assert_true(owner == device);

  guint8 *src = g_malloc(size), *dst = g_malloc0(size);
  fill_pattern(src, size, 7);
  npu_device_stats before, after;
  NPU_ASSERT_OK(npu_device_get_stats(device, &before));
  NPU_ASSERT_OK(npu_memcpy_h2d(a, 0, src, size));
  NPU_ASSERT_OK(npu_memcpy_d2d(b, 3, a, 0, size - 3));
  NPU_ASSERT_OK(npu_memcpy_d2h(dst, b, 3, size - 3));
  g_assert_cmpmem(dst, size - 3, src, size - 3);
  NPU_ASSERT_OK(npu_device_get_stats(device, &after));
  g_assert_cmpuint(after.bytes_h2d - before.bytes_h2d, ==, size);
  g_assert_cmpuint(after.bytes_d2d - before.bytes_d2d, ==, size - 3);
  g_assert_cmpuint(after.bytes_d2h - before.bytes_d2h, ==, size - 3);
  g_assert_cmpuint(after.copies - before.copies, ==, 3);

  void *mapped;
  NPU_ASSERT_OK(npu_buffer_map(a, NPU_MAP_READ, &mapped));
  g_assert_cmpuint((guintptr)mapped % NPU_BUFFER_ALIGNMENT, ==, 0);
  g_assert_cmpmem(mapped, size, src, size);
  NPU_ASSERT_OK(npu_buffer_unmap(a));
  NPU_ASSERT_STATUS(npu_buffer_unmap(a), NPU_ERROR_INVALID_ARGUMENT);

  NPU_ASSERT_OK(npu_memset(a, 10, 0xab, 20));
  NPU_ASSERT_OK(npu_memcpy_d2h(dst, a, 0, 40));
  for (int i = 0; i < 40; i++)
    g_assert_cmpuint(dst[i], ==, i >= 10 && i < 30 ? 0xab : src[i]);

  NPU_ASSERT_OK(npu_buffer_release(a));
  NPU_ASSERT_OK(npu_buffer_release(b));
  g_free(src);
  g_free(dst);
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_async_copies_land(void)
{
  npu_device *device = npu_test_open_device();
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  const size_t size = 1 << 20;
  guint8 *src, *dst;
  NPU_ASSERT_OK(npu_host_alloc(device, size, (void **)&src));
  NPU_ASSERT_OK(npu_host_alloc(device, size, (void **)&dst));
  fill_pattern(src, size, 3);
  memset(dst, 0, size);
  npu_buffer *a, *b;
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &a));
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &b));
  NPU_ASSERT_OK(npu_memcpy_h2d_async(a, 0, src, size, stream));
  NPU_ASSERT_OK(npu_memcpy_d2d_async(b, 0, a, 0, size, stream));
  NPU_ASSERT_OK(npu_memset_async(b, 0, 0x5a, 64, stream));
  NPU_ASSERT_OK(npu_memcpy_d2h_async(dst, b, 0, size, stream));
  /* Queued work keeps its buffers alive: releasing now is safe. */
  NPU_ASSERT_OK(npu_buffer_release(a));
  NPU_ASSERT_OK(npu_buffer_release(b));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  for (size_t i = 0; i < 64; i++)
    g_assert_cmpuint(dst[i], ==, 0x5a);
  g_assert_cmpmem(dst + 64, size - 64, src + 64, size - 64);
  NPU_ASSERT_STATUS(npu_buffer_release(a), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_OK(npu_host_free(device, src));
  NPU_ASSERT_OK(npu_host_free(device, dst));
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_device_release(device));
}

/* Pitched copies move exactly the rows (the bytes between them stay as
 * they were), synchronously and on a stream, and refuse pitches below the
 * row or rows past the buffer's end. */
static void test_pitched_copies(void)
{
  enum { ROWS = 7, ROW = 30, HOST_PITCH = 40, DEVICE_PITCH = 32, BACK_PITCH = 33, OFFSET = 5 };
  npu_device *device = npu_test_open_device();
  const size_t size = OFFSET + DEVICE_PITCH * (ROWS - 1) + ROW;
  npu_buffer *buffer;
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &buffer));
  NPU_ASSERT_OK(npu_memset(buffer, 0, 0xee, size));
  guint8 src[HOST_PITCH * ROWS], back[BACK_PITCH * ROWS];
  fill_pattern(src, sizeof src, 11);
  memset(back, 0x55, sizeof back);
  npu_device_stats before, after;
  NPU_ASSERT_OK(npu_device_get_stats(device, &before));
  NPU_ASSERT_OK(npu_memcpy_2d_h2d(buffer, OFFSET, DEVICE_PITCH, src, HOST_PITCH, ROW, ROWS,
                                  NULL));
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  NPU_ASSERT_OK(npu_memcpy_2d_d2h(back, BACK_PITCH, buffer, OFFSET, DEVICE_PITCH, ROW, ROWS,
                                  stream));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  NPU_ASSERT_OK(npu_device_get_stats(device, &after));
  g_assert_cmpuint(after.bytes_h2d - before.bytes_h2d, ==, ROW * ROWS);
  g_assert_cmpuint(after.bytes_d2h - before.bytes_d2h, ==, ROW * ROWS);
  guint8 *device_bytes = g_malloc(size);
  NPU_ASSERT_OK(npu_memcpy_d2h(device_bytes, buffer, 0, size));
  for (size_t y = 0; y < ROWS; y++) {
    g_assert_cmpmem(back + y * BACK_PITCH, ROW, src + y * HOST_PITCH, ROW);
    if (y + 1 < ROWS) {
      g_assert_cmpuint(back[y * BACK_PITCH + ROW], ==, 0x55);
      g_assert_cmpuint(device_bytes[OFFSET + y * DEVICE_PITCH + ROW], ==, 0xee);
    }
  }
  g_assert_cmpuint(device_bytes[OFFSET - 1], ==, 0xee);
  NPU_ASSERT_STATUS(npu_memcpy_2d_h2d(buffer, OFFSET, ROW - 1, src, HOST_PITCH, ROW, ROWS, NULL),
                    NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memcpy_2d_h2d(buffer, OFFSET + 1, DEVICE_PITCH, src, HOST_PITCH, ROW,
                                      ROWS, NULL),
                    NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memcpy_2d_d2h(back, BACK_PITCH, buffer, 0, SIZE_MAX / 2, ROW, ROWS,
                                      NULL),
                    NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memcpy_2d_d2h(back, BACK_PITCH, buffer, 0, DEVICE_PITCH, ROW, 0, NULL),
                    NPU_ERROR_INVALID_ARGUMENT);
  g_free(device_bytes);
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_fd_export_maps_same_bytes(void)
{
  npu_device *device = npu_test_open_device();
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  if (!props.caps.fd_export) {
    g_test_skip("the device exports no fds of its own memory");
    NPU_ASSERT_OK(npu_device_release(device));
    return;
  }
  const size_t size = 3 * 4096 + 17;
  npu_buffer *buffer;
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &buffer));
  guint8 *pattern = g_malloc(size);
  fill_pattern(pattern, size, 11);
  NPU_ASSERT_OK(npu_memcpy_h2d(buffer, 0, pattern, size));

  int fd = -1;
  size_t offset = 1;
  NPU_ASSERT_OK(npu_buffer_export_fd(buffer, &fd, &offset));
  g_assert_cmpint(fd, >=, 0);
  guint8 *view = mmap(NULL, size + offset, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (view == MAP_FAILED && props.caps.dmabuf_export) {
    /* a GPU driver's dma-buf of its own memory need not map (the Vulkan backend's exports) */
    g_test_skip("the device's exported dma-buf does not map into the host");
    close(fd);
    NPU_ASSERT_OK(npu_buffer_release(buffer));
    g_free(pattern);
    NPU_ASSERT_OK(npu_device_release(device));
    return;
  }
  g_assert_true(view != MAP_FAILED);
  g_assert_cmpmem(view + offset, size, pattern, size);
  /* Writes through the fd are seen by the device buffer. */
  view[offset + 5] = 0xee;
  guint8 byte;
  NPU_ASSERT_OK(npu_memcpy_d2h(&byte, buffer, 5, 1));
  g_assert_cmpuint(byte, ==, 0xee);
  munmap(view, size + offset);
  close(fd);
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  g_free(pattern);
  NPU_ASSERT_OK(npu_device_release(device));
}

static int released_count;

static void count_release(void *data)
{
  g_assert_cmpint(GPOINTER_TO_INT(data), ==, 42);
  released_count++;
}

static void test_import_is_zero_copy(void)
{
  npu_device *device = npu_test_open_device();
  const size_t size = 8192;
  guint8 *host = g_malloc(size);
  fill_pattern(host, size, 1);
  npu_device_stats before, after;
  NPU_ASSERT_OK(npu_device_get_stats(device, &before));
  npu_buffer *buffer;
  released_count = 0;
  NPU_ASSERT_OK(npu_buffer_import_host(device, host, size, count_release, GINT_TO_POINTER(42),
                                       &buffer));
  void *mapped;
  NPU_ASSERT_OK(npu_buffer_map(buffer, NPU_MAP_READ | NPU_MAP_WRITE, &mapped));
  g_assert_true(mapped == host); /* same memory, no copy */
  NPU_ASSERT_OK(npu_buffer_unmap(buffer));
  host[100] = 0x77;
  guint8 byte;
  NPU_ASSERT_OK(npu_memcpy_d2h(&byte, buffer, 100, 1));
  g_assert_cmpuint(byte, ==, 0x77);
  int fd;
  size_t offset;
  NPU_ASSERT_STATUS(npu_buffer_export_fd(buffer, &fd, &offset), NPU_ERROR_NOT_SUPPORTED);
  NPU_ASSERT_OK(npu_device_get_stats(device, &after));
  g_assert_cmpuint(after.imports - before.imports, ==, 1);
  g_assert_cmpuint(after.allocations - before.allocations, ==, 0);
  g_assert_cmpuint(after.bytes_h2d - before.bytes_h2d, ==, 0);
  NPU_ASSERT_OK(npu_buffer_retain(buffer));
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  g_assert_cmpint(released_count, ==, 0);
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  g_assert_cmpint(released_count, ==, 1);
  g_free(host);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* A memfd of `size` bytes holding fill_pattern(seed). */
static int pattern_memfd(size_t size, guint seed)
{
  int fd = memfd_create("test-frame", MFD_CLOEXEC);
  g_assert_cmpint(fd, >=, 0);
  guint8 *bytes = g_malloc(size);
  fill_pattern(bytes, size, seed);
  g_assert_cmpint(pwrite(fd, bytes, size, 0), ==, (ssize_t)size);
  g_free(bytes);
  return fd;
}

static void test_fd_import_is_zero_copy(void)
{
  npu_device *device = npu_test_open_device();
  const size_t file_size = 4 * 4096 + 100, offset = 5000, size = 6000; /* offset not page-aligned */
  int fd = pattern_memfd(file_size, 9);
  guint8 *pattern = g_malloc(file_size);
  fill_pattern(pattern, file_size, 9);
  npu_device_stats before, after;
  NPU_ASSERT_OK(npu_device_get_stats(device, &before));
  npu_buffer *buffer;
  released_count = 0;
  NPU_ASSERT_OK(npu_buffer_import_fd(device, fd, offset, size, count_release, GINT_TO_POINTER(42),
                                     &buffer));
  /* The caller's fd is its own: the buffer holds the memory. */
  int probe = dup(fd);
  close(fd);
  size_t reported;
  NPU_ASSERT_OK(npu_buffer_size(buffer, &reported));
  g_assert_cmpuint(reported, ==, size);
  guint8 *back = g_malloc(size);
  NPU_ASSERT_OK(npu_memcpy_d2h(back, buffer, 0, size));
  g_assert_cmpmem(back, size, pattern + offset, size);
  /* Device writes land in the fd's pages, and the fd's writes in the buffer. */
  NPU_ASSERT_OK(npu_memset(buffer, 10, 0xc3, 4));
  guint8 byte = 0;
  g_assert_cmpint(pread(probe, &byte, 1, offset + 12), ==, 1);
  g_assert_cmpuint(byte, ==, 0xc3);
  byte = 0x5e;
  g_assert_cmpint(pwrite(probe, &byte, 1, offset + size - 1), ==, 1);
  NPU_ASSERT_OK(npu_memcpy_d2h(&byte, buffer, size - 1, 1));
  g_assert_cmpuint(byte, ==, 0x5e);
  NPU_ASSERT_OK(npu_device_get_stats(device, &after));
  g_assert_cmpuint(after.imports - before.imports, ==, 1);
  g_assert_cmpuint(after.allocations - before.allocations, ==, 0);
  g_assert_cmpuint(after.bytes_h2d - before.bytes_h2d, ==, 0);

  /* Exported again, it is the same memory at the same offset. */
  int exported;
  size_t exported_offset;
  NPU_ASSERT_OK(npu_buffer_export_fd(buffer, &exported, &exported_offset));
  g_assert_cmpuint(exported_offset, ==, offset);
  guint8 *view = mmap(NULL, offset + size, PROT_READ, MAP_SHARED, exported, 0);
  g_assert_true(view != MAP_FAILED);
  g_assert_cmpuint(view[offset + 12], ==, 0xc3);
  g_assert_cmpmem(view + offset + 20, 100, pattern + offset + 20, 100);
  munmap(view, offset + size);
  close(exported);

  g_assert_cmpint(released_count, ==, 0);
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  g_assert_cmpint(released_count, ==, 1);
  close(probe);
  g_free(back);
  g_free(pattern);
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_fd_import_refuses_bad_fds(void)
{
  npu_device *device = npu_test_open_device();
  npu_device_stats before, after;
  NPU_ASSERT_OK(npu_device_get_stats(device, &before));
  npu_buffer *buffer = NULL;
  int fd = pattern_memfd(4096, 1);
  NPU_ASSERT_STATUS(npu_buffer_import_fd(device, -1, 0, 16, NULL, NULL, &buffer),
                    NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_buffer_import_fd(device, fd, 0, 0, NULL, NULL, &buffer),
                    NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_buffer_import_fd(device, fd, SIZE_MAX, 2, NULL, NULL, &buffer),
                    NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_buffer_import_fd(NULL, fd, 0, 16, NULL, NULL, &buffer),
                    NPU_ERROR_INVALID_ARGUMENT);
  /* More bytes than the fd holds would fault on access: refused. */
  NPU_ASSERT_STATUS(npu_buffer_import_fd(device, fd, 1, 4096, NULL, NULL, &buffer),
                    NPU_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(npu_last_error_message(), "overrun"));
  /* A pipe is not memory; a closed fd is nothing. */
  int pipe_fds[2];
  g_assert_cmpint(pipe(pipe_fds), ==, 0);
  NPU_ASSERT_STATUS(npu_buffer_import_fd(device, pipe_fds[0], 0, 16, NULL, NULL, &buffer),
                    NPU_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(npu_last_error_message(), "not mappable"));
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  NPU_ASSERT_STATUS(npu_buffer_import_fd(device, pipe_fds[0], 0, 16, NULL, NULL, &buffer),
                    NPU_ERROR_INVALID_ARGUMENT);
  /* Device memory is written as well as read: a read-only fd cannot be it. */
  gchar *path = g_strdup_printf("/proc/self/fd/%d", fd);
  int read_only = open(path, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint(read_only, >=, 0);
  NPU_ASSERT_STATUS(npu_buffer_import_fd(device, read_only, 0, 16, NULL, NULL, &buffer),
                    NPU_ERROR_IO);
  g_assert_null(buffer);
  NPU_ASSERT_OK(npu_device_get_stats(device, &after));
  g_assert_cmpuint(after.imports, ==, before.imports);
  close(read_only);
  g_free(path);
  close(fd);
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_bad_arguments(void)
{
  npu_device *device = npu_test_open_device();
  npu_buffer *buffer, *other;
  guint8 host[64];
  NPU_ASSERT_STATUS(npu_buffer_alloc(device, 0, &buffer), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_buffer_alloc(device, 16, NULL), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_buffer_alloc(NULL, 16, &buffer), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_buffer_import_host(device, NULL, 16, NULL, NULL, &buffer),
                    NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_OK(npu_buffer_alloc(device, 64, &buffer));
  NPU_ASSERT_OK(npu_buffer_alloc(device, 32, &other));
  NPU_ASSERT_STATUS(npu_memcpy_h2d(buffer, 0, host, 65), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memcpy_h2d(buffer, 60, host, 8), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memcpy_h2d(buffer, SIZE_MAX, host, 2), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memcpy_h2d(buffer, 0, host, 0), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memcpy_h2d(buffer, 0, NULL, 8), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memcpy_d2h(NULL, buffer, 0, 8), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memcpy_d2d(other, 0, buffer, 0, 64), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_memset(buffer, 0, 300, 8), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_buffer_map(buffer, 0, &(void *){NULL}), NPU_ERROR_INVALID_ARGUMENT);
  /* A host pointer is not a device buffer. */
  NPU_ASSERT_STATUS(npu_memcpy_d2h(host, (npu_buffer *)host, 0, 8), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_OK(npu_buffer_release(other));
  /* Double free and use after free are reported, not crashed on. */
  NPU_ASSERT_STATUS(npu_buffer_release(other), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_memcpy_d2d(other, 0, buffer, 0, 8), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_buffer_retain(other), NPU_ERROR_INVALID_HANDLE);
  /* A destroyed stream is refused by async copies. */
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_STATUS(npu_memcpy_h2d_async(buffer, 0, host, 8, stream), NPU_ERROR_INVALID_HANDLE);
  /* Host memory must come from npu_host_alloc and be freed once. */
  void *pinned;
  NPU_ASSERT_STATUS(npu_host_free(device, host), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_OK(npu_host_alloc(device, 100, &pinned));
  NPU_ASSERT_OK(npu_host_free(device, pinned));
  NPU_ASSERT_STATUS(npu_host_free(device, pinned), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_host_alloc(device, 0, &pinned), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  NPU_ASSERT_OK(npu_device_release(device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/memory/alloc-map-and-sync-copies", test_alloc_map_and_sync_copies);
  g_test_add_func("/memory/async-copies-land", test_async_copies_land);
  g_test_add_func("/memory/pitched-copies", test_pitched_copies);
  g_test_add_func("/memory/fd-export-maps-same-bytes", test_fd_export_maps_same_bytes);
  g_test_add_func("/memory/import-is-zero-copy", test_import_is_zero_copy);
  g_test_add_func("/memory/fd-import-is-zero-copy", test_fd_import_is_zero_copy);
  g_test_add_func("/memory/fd-import-refuses-bad-fds", test_fd_import_refuses_bad_fds);
  g_test_add_func("/memory/bad-arguments", test_bad_arguments);
  return g_test_run();
}
