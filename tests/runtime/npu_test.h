/* Shared helpers for the runtime's GLib tests. */
#ifndef NPU_TEST_H
#define NPU_TEST_H

#include <glib.h>
#include <npu/npu.h>

/* Asserts a runtime call succeeded, showing the runtime's message if not. */
#define NPU_ASSERT_OK(call)                                                                  \
  do {                                                                                       \
    npu_status npu_assert_status_ = (call);                                                  \
    if (npu_assert_status_ != NPU_OK)                                                        \
      g_error("%s failed: %s: %s", #call, npu_status_name(npu_assert_status_),               \
              npu_last_error_message());                                                     \
  } while (0)

/* Asserts a runtime call failed with `expected` and left a non-empty message. */
#define NPU_ASSERT_STATUS(call, expected)                                                    \
  do {                                                                                       \
    npu_clear_error();                                                                       \
    npu_status npu_assert_status_ = (call);                                                  \
    g_assert_cmpstr(npu_status_name(npu_assert_status_), ==, npu_status_name(expected));     \
    g_assert_cmpstr(npu_last_error_message(), !=, "");                                       \
  } while (0)

static inline npu_device *npu_test_open_device(void)
{
  npu_device *device = NULL;
  NPU_ASSERT_OK(npu_device_open_default(&device));
  return device;
}

#endif
