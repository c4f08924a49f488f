/* A device whose memory the CPU cannot map (NPU_CPU_DEVICE_MEMORY=opaque, set
 * by meson for this test): map and host import are refused with a clear
 * status, copies and fd imports still work. This is the path a discrete
 * accelerator takes. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu_test.h"

static void test_opaque_memory(void)
{
  npu_device *device = npu_test_open_device();
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  g_assert_false(props.caps.host_visible_memory);
  g_assert_false(props.caps.host_import);
  npu_buffer *buffer;
  NPU_ASSERT_OK(npu_buffer_alloc(device, 256, &buffer));
  void *mapped;
  NPU_ASSERT_STATUS(npu_buffer_map(buffer, NPU_MAP_READ, &mapped), NPU_ERROR_NOT_SUPPORTED);
  g_assert_nonnull(strstr(npu_last_error_message(), "not host-visible"));
  guint8 host[256], back[256];
  for (int i = 0; i < 256; i++)
    host[i] = (guint8)i;
  npu_buffer *imported;
  NPU_ASSERT_STATUS(npu_buffer_import_host(device, host, sizeof host, NULL, NULL, &imported),
                    NPU_ERROR_NOT_SUPPORTED);
  NPU_ASSERT_OK(npu_memcpy_h2d(buffer, 0, host, sizeof host));
  NPU_ASSERT_OK(npu_memcpy_d2h(back, buffer, 0, sizeof back));
  g_assert_cmpmem(back, sizeof back, host, sizeof host);
  /* An fd (dma-buf, memfd) is still imported: device memory shared by fd,
   * the way a discrete accelerator imports a decoder's dma-buf. */
  g_assert_true(props.caps.fd_import);
  int fd = memfd_create("opaque-import", MFD_CLOEXEC);
  g_assert_cmpint(write(fd, host, sizeof host), ==, (ssize_t)sizeof host);
  NPU_ASSERT_OK(npu_buffer_import_fd(device, fd, 16, 128, NULL, NULL, &imported));
  close(fd);
  NPU_ASSERT_STATUS(npu_buffer_map(imported, NPU_MAP_READ, &mapped), NPU_ERROR_NOT_SUPPORTED);
  NPU_ASSERT_OK(npu_memcpy_d2h(back, imported, 0, 128));
  g_assert_cmpmem(back, 128, host + 16, 128);
  NPU_ASSERT_OK(npu_buffer_release(imported));
  NPU_ASSERT_OK(npu_buffer_release(buffer));
  NPU_ASSERT_OK(npu_device_release(device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/memory/opaque-device-memory", test_opaque_memory);
  return g_test_run();
}
