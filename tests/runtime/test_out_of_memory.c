/* Device out of memory, with the CPU device capped by NPU_CPU_MEMORY_LIMIT
 * (set to 1M by meson for this test): a clear status, nothing leaked, and
 * the memory usable again once freed. */
#include <string.h>

#include "npu_test.h"

static void test_out_of_memory(void)
{
  g_assert_cmpstr(g_getenv("NPU_CPU_MEMORY_LIMIT"), ==, "1M");
  npu_device *device = npu_test_open_device();
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  g_assert_cmpuint(props.memory_total, ==, 1 << 20);

  npu_buffer *a, *b;
  NPU_ASSERT_OK(npu_buffer_alloc(device, 768 * 1024, &a));
  NPU_ASSERT_STATUS(npu_buffer_alloc(device, 512 * 1024, &b), NPU_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull(strstr(npu_last_error_message(), "out of memory"));

  /* A pool frees its idle cache and retries before giving up. */
  npu_mem_pool *pool;
  NPU_ASSERT_OK(npu_mem_pool_create(device, NULL, &pool));
  NPU_ASSERT_OK(npu_mem_pool_alloc(pool, 200 * 1024, &b));
  NPU_ASSERT_OK(npu_buffer_release(b)); /* cached */
  NPU_ASSERT_OK(npu_buffer_release(a));
  NPU_ASSERT_OK(npu_mem_pool_alloc(pool, 900 * 1024, &a)); /* needs the cached bytes */
  NPU_ASSERT_OK(npu_buffer_release(a));
  NPU_ASSERT_OK(npu_mem_pool_destroy(pool));
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  g_assert_cmpuint(props.memory_free, ==, props.memory_total);
  NPU_ASSERT_OK(npu_device_release(device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/memory/out-of-memory", test_out_of_memory);
  return g_test_run();
}
