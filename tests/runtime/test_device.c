/* Devices and backends: enumeration, properties, sharing, selection, errors. */
#include <stdlib.h>
#include <string.h>

#include "npu_test.h"

static void test_enumerate(void)
{
  uint32_t backends = 0, devices = 0;
  NPU_ASSERT_OK(npu_backend_count(&backends));
  g_assert_cmpuint(backends, >=, 1);
  const char *name = NULL;
  NPU_ASSERT_OK(npu_backend_name(0, &name));
  g_assert_cmpstr(name, ==, "cpu");
  NPU_ASSERT_STATUS(npu_backend_name(backends, &name), NPU_ERROR_NOT_FOUND);

  NPU_ASSERT_OK(npu_device_count(&devices));
  g_assert_cmpuint(devices, >=, 1);
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_get_properties(0, &props));
  g_assert_cmpstr(props.backend, ==, "cpu");
  g_assert_cmpuint(props.index, ==, 0);
  g_assert_cmpuint(props.memory_total, >, 0);
  g_assert_cmpuint(props.memory_free, <=, props.memory_total);
  g_assert_cmpuint(props.compute_units, >=, 1);
  g_assert_true(props.caps.host_visible_memory);
  g_assert_true(props.caps.fd_export);
  g_assert_true(props.caps.fd_import);
  g_assert_true(props.caps.cross_stream_events);
  NPU_ASSERT_STATUS(npu_device_get_properties(devices, &props), NPU_ERROR_NOT_FOUND);
}

static void test_open_shares_one_device(void)
{
  npu_device *a = NULL, *b = NULL;
  NPU_ASSERT_OK(npu_device_open(0, &a));
  NPU_ASSERT_OK(npu_device_open(0, &b));
  g_assert_true(a == b);
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(a, &props));
  g_assert_cmpstr(props.backend, ==, "cpu");
  NPU_ASSERT_OK(npu_device_release(b));
  NPU_ASSERT_OK(npu_device_properties_of(a, &props)); /* still open: a holds it */
  NPU_ASSERT_OK(npu_device_release(a));
  /* The last reference is gone: the handle is dead. */
  NPU_ASSERT_STATUS(npu_device_release(a), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_device_properties_of(a, &props), NPU_ERROR_INVALID_HANDLE);
}

static void test_environment_selects_device(void)
{
  npu_device *device = NULL;
  g_setenv("NPU_BACKEND", "cpu", TRUE);
  g_setenv("NPU_DEVICE", "0", TRUE);
  NPU_ASSERT_OK(npu_device_open_default(&device));
  NPU_ASSERT_OK(npu_device_release(device));

  g_setenv("NPU_BACKEND", "no-such-backend", TRUE);
  NPU_ASSERT_STATUS(npu_device_open_default(&device), NPU_ERROR_NOT_FOUND);
  g_assert_nonnull(strstr(npu_last_error_message(), "no-such-backend"));

  g_setenv("NPU_BACKEND", "cpu", TRUE);
  g_setenv("NPU_DEVICE", "7", TRUE);
  NPU_ASSERT_STATUS(npu_device_open_default(&device), NPU_ERROR_NOT_FOUND);
  g_unsetenv("NPU_BACKEND");
  g_unsetenv("NPU_DEVICE");

  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &device));
  NPU_ASSERT_OK(npu_device_release(device));
}

/* The CPU device asks for 4-byte rows (GStreamer's default layouts) unless
 * NPU_CPU_ROW_ALIGNMENT says otherwise; a value that is not a power of two
 * from 1 to 4096 keeps the device from opening, saying why. */
static void test_row_alignment(void)
{
  npu_device *device = NULL;
  npu_device_properties props;
  g_unsetenv("NPU_CPU_ROW_ALIGNMENT");
  NPU_ASSERT_OK(npu_device_get_properties(0, &props));
  g_assert_cmpuint(props.row_alignment, ==, 4);

  static const struct {
    const char *text;
    uint32_t bytes;
  } good[] = {{"1", 1}, {"256", 256}, {"4k", 4096}, {"4096", 4096}};
  for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
    g_setenv("NPU_CPU_ROW_ALIGNMENT", good[i].text, TRUE);
    NPU_ASSERT_OK(npu_device_open(0, &device));
    NPU_ASSERT_OK(npu_device_properties_of(device, &props));
    g_assert_cmpuint(props.row_alignment, ==, good[i].bytes);
    NPU_ASSERT_OK(npu_device_release(device));
  }

  static const char *const bad[] = {"0", "3", "100", "8192", "-4", "64 ", "sixteen", "1G"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_setenv("NPU_CPU_ROW_ALIGNMENT", bad[i], TRUE);
    NPU_ASSERT_STATUS(npu_device_open(0, &device), NPU_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(npu_last_error_message(), "NPU_CPU_ROW_ALIGNMENT"));
    g_assert_nonnull(strstr(npu_last_error_message(), bad[i]));
  }
  g_unsetenv("NPU_CPU_ROW_ALIGNMENT");
  NPU_ASSERT_OK(npu_device_open(0, &device));
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_bad_arguments(void)
{
  npu_device_properties props;
  npu_device_stats stats;
  int not_a_device = 0;
  NPU_ASSERT_STATUS(npu_backend_count(NULL), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_device_count(NULL), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_device_open(0, NULL), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_device_open(1000, &(npu_device *){NULL}), NPU_ERROR_NOT_FOUND);
  NPU_ASSERT_STATUS(npu_device_retain(NULL), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_device_retain((npu_device *)&not_a_device), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_device_get_stats((npu_device *)&not_a_device, &stats),
                    NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_device_properties_of(NULL, &props), NPU_ERROR_INVALID_ARGUMENT);
  npu_device *device = npu_test_open_device();
  NPU_ASSERT_STATUS(npu_device_get_stats(device, NULL), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_OK(npu_device_synchronize(device));
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_drm_discovery(void)
{
  uint32_t count = 99;
  npu_drm_node nodes[8];
  npu_status status = npu_drm_nodes(nodes, 8, &count);
  g_assert_true(status == NPU_OK || status == NPU_ERROR_NOT_SUPPORTED);
  if (status == NPU_OK) {
    for (uint32_t i = 0; i < count && i < 8; i++) {
      g_assert_true(g_str_has_prefix(nodes[i].path, "/dev/"));
      g_assert_true(strcmp(nodes[i].kind, "render") == 0 || strcmp(nodes[i].kind, "accel") == 0);
    }
    g_assert_cmpint(count == 0, ==, !g_file_test("/dev/dri/renderD128", G_FILE_TEST_EXISTS) &&
                                        !g_file_test("/dev/accel/accel0", G_FILE_TEST_EXISTS));
  }
  NPU_ASSERT_STATUS(npu_drm_nodes(NULL, 4, &count), NPU_ERROR_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/device/enumerate", test_enumerate);
  g_test_add_func("/device/open-shares-one-device", test_open_shares_one_device);
  g_test_add_func("/device/environment-selects-device", test_environment_selects_device);
  g_test_add_func("/device/row-alignment", test_row_alignment);
  g_test_add_func("/device/bad-arguments", test_bad_arguments);
  g_test_add_func("/device/drm-discovery", test_drm_discovery);
  return g_test_run();
}
