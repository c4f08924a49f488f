/* What the Vulkan suite's tests share: the Vulkan device, or a clean skip
 * where the machine has none (no driver: install mesa-vulkan-drivers). */
#ifndef NPU_VK_TEST_H
#define NPU_VK_TEST_H

#include "../runtime/npu_test.h"

/* The first Vulkan device, or NULL after g_test_skip() where there is none. */
static inline npu_device *vk_test_open_device(void)
{
  npu_device *device = NULL;
  npu_status status = npu_device_open_by_backend("vulkan", 0, &device);
  if (status == NPU_ERROR_NOT_FOUND) {
    gchar *why = g_strdup_printf("no Vulkan device: %s", npu_last_error_message());
    g_test_skip(why);
    g_free(why);
    return NULL;
  }
  NPU_ASSERT_OK(status);
  return device;
}

#endif
