/* Memory pools: reuse, zero steady-state allocations, statistics, trim,
 * destroy with buffers still out, and device out-of-memory. */
#include "npu_test.h"

static void test_steady_state_makes_no_allocations(void)
{
  npu_device *device = npu_test_open_device();
  npu_mem_pool *pool;
  NPU_ASSERT_OK(npu_mem_pool_create(device, NULL, &pool));
  const size_t sizes[] = {1920 * 1080 * 3 / 2, 640 * 640 * 3 * 4, 1000, 4096, 4097};
  enum { N = G_N_ELEMENTS(sizes) };
  npu_buffer *held[N];

  /* Warm-up frame, then 100 frames of the same shape. */
  for (int frame = 0; frame <= 100; frame++) {
    if (frame == 1) {
      npu_mem_pool_stats warm;
      NPU_ASSERT_OK(npu_mem_pool_get_stats(pool, &warm));
      g_assert_cmpuint(warm.allocations, ==, N);
      g_assert_cmpuint(warm.hits, ==, 0);
    }
    for (int i = 0; i < N; i++) {
      NPU_ASSERT_OK(npu_mem_pool_alloc(pool, sizes[i], &held[i]));
      size_t size;
      NPU_ASSERT_OK(npu_buffer_size(held[i], &size));
      g_assert_cmpuint(size, ==, sizes[i]);
    }
    for (int i = 0; i < N; i++)
      NPU_ASSERT_OK(npu_buffer_release(held[i]));
  }
  npu_mem_pool_stats stats;
  NPU_ASSERT_OK(npu_mem_pool_get_stats(pool, &stats));
  g_assert_cmpuint(stats.allocations, ==, N); /* nothing new after warm-up */
  g_assert_cmpuint(stats.requests, ==, 101 * N);
  g_assert_cmpuint(stats.hits, ==, 100 * N);
  g_assert_cmpuint(stats.bytes_live, ==, 0);
  g_assert_cmpuint(stats.bytes_cached, >=, 1920 * 1080 * 3 / 2 + 640 * 640 * 12);
  g_assert_cmpuint(stats.bytes_live_peak, ==, stats.bytes_cached);

  NPU_ASSERT_OK(npu_mem_pool_trim(pool));
  NPU_ASSERT_OK(npu_mem_pool_get_stats(pool, &stats));
  g_assert_cmpuint(stats.bytes_cached, ==, 0);
  g_assert_cmpuint(stats.frees, ==, N);
  NPU_ASSERT_OK(npu_mem_pool_destroy(pool));
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_size_classes_bound_slack(void)
{
  npu_device *device = npu_test_open_device();
  npu_mem_pool *pool;
  NPU_ASSERT_OK(npu_mem_pool_create(device, NULL, &pool));
  for (size_t size = 1; size < (1u << 22); size = size * 3 + 1) {
    npu_buffer *buffer;
    NPU_ASSERT_OK(npu_mem_pool_alloc(pool, size, &buffer));
    npu_mem_pool_stats stats;
    NPU_ASSERT_OK(npu_mem_pool_get_stats(pool, &stats));
    g_assert_cmpuint(stats.bytes_live, >=, size);
    if (size > 4096)
      g_assert_cmpuint(stats.bytes_live, <=, size + size / 4 + 1);
    /* The pooled memory is real, writable device memory. */
    NPU_ASSERT_OK(npu_memset(buffer, size - 1, 0x11, 1));
    NPU_ASSERT_OK(npu_buffer_release(buffer));
  }
  NPU_ASSERT_OK(npu_mem_pool_destroy(pool));
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_cache_limit_and_destroy_with_buffers_out(void)
{
  npu_device *device = npu_test_open_device();
  npu_device_stats device_before, device_after;
  NPU_ASSERT_OK(npu_device_get_stats(device, &device_before));
  npu_mem_pool *pool;
  npu_mem_pool_config config = {.max_cached_bytes = 64 * 1024};
  NPU_ASSERT_OK(npu_mem_pool_create(device, &config, &pool));
  npu_buffer *big, *small;
  NPU_ASSERT_OK(npu_mem_pool_alloc(pool, 128 * 1024, &big));
  NPU_ASSERT_OK(npu_mem_pool_alloc(pool, 4096, &small));
  NPU_ASSERT_OK(npu_buffer_release(big)); /* over the cache limit: freed */
  npu_mem_pool_stats stats;
  NPU_ASSERT_OK(npu_mem_pool_get_stats(pool, &stats));
  g_assert_cmpuint(stats.frees, ==, 1);
  g_assert_cmpuint(stats.bytes_cached, ==, 0);

  NPU_ASSERT_OK(npu_mem_pool_destroy(pool));
  NPU_ASSERT_STATUS(npu_mem_pool_alloc(pool, 16, &big), NPU_ERROR_INVALID_HANDLE);
  NPU_ASSERT_STATUS(npu_mem_pool_destroy(pool), NPU_ERROR_INVALID_HANDLE);
  /* The buffer outlives its pool and is freed on release. */
  NPU_ASSERT_OK(npu_memset(small, 0, 1, 4096));
  NPU_ASSERT_OK(npu_buffer_release(small));
  NPU_ASSERT_OK(npu_device_get_stats(device, &device_after));
  g_assert_cmpuint(device_after.allocations - device_before.allocations, ==, 2);
  g_assert_cmpuint(device_after.frees - device_before.frees, ==, 2);
  g_assert_cmpuint(device_after.bytes_allocated, ==, device_before.bytes_allocated);
  NPU_ASSERT_OK(npu_device_release(device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/pool/steady-state-makes-no-allocations",
                  test_steady_state_makes_no_allocations);
  g_test_add_func("/pool/size-classes-bound-slack", test_size_classes_bound_slack);
  g_test_add_func("/pool/cache-limit-and-destroy-with-buffers-out",
                  test_cache_limit_and_destroy_with_buffers_out);
  return g_test_run();
}
