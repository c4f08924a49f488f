/* The Vulkan backend's sub-allocator (hal/vulkan/vk_suballoc.c): many
 * allocations and frees from several threads land at the alignment asked,
 * never overlap (each writes its own pattern into mapped memory and finds it
 * intact when freed), give their blocks back, and a heap past its budget
 * answers NPU_ERROR_OUT_OF_MEMORY with a message; through the runtime, a
 * pool's worth of buffers takes one block from the driver. */
#include <string.h>

#include "npu_internal.h"
#include "vk_test.h"
#include "vulkan/vk_internal.h"

enum { THREADS = 4, ROUNDS = 3000, SLOTS = 64 };
#define BLOCK ((VkDeviceSize)1 << 20)

typedef struct live {
  vk_allocation allocation;
  guint8 pattern;
} live;

typedef struct worker {
  npu_hal_device *device;
  vk_heap *heap;
  guint seed;
  guint64 allocations, refused;
} worker;

static void check_pattern(const live *l)
{
  const guint8 *bytes = l->allocation.mapped;
  for (VkDeviceSize i = 0; i < l->allocation.size; i++)
    if (bytes[i] != l->pattern)
      g_error("byte %llu of an allocation at %llu (%llu bytes) was overwritten: %u, not %u",
              (unsigned long long)i, (unsigned long long)l->allocation.offset,
              (unsigned long long)l->allocation.size, bytes[i], l->pattern);
}

/* Random sizes (1 byte to 200 KiB) and alignments (1 to 64 KiB), freed in
 * random order; every allocation filled with its own byte. */
static gpointer churn(gpointer data)
{
  worker *w = data;
  static const VkDeviceSize alignments[] = {1, 4, 16, 256, 4096, 65536};
  GRand *rand = g_rand_new_with_seed(w->seed);
  live slots[SLOTS] = {0};
  for (int round = 0; round < ROUNDS; round++) {
    live *slot = &slots[g_rand_int_range(rand, 0, SLOTS)];
    if (slot->allocation.block) {
      check_pattern(slot);
      vk_heap_free(w->device->device, w->heap, &slot->allocation);
      slot->allocation.block = NULL;
      continue;
    }
    VkDeviceSize size = (VkDeviceSize)g_rand_int_range(rand, 1, g_rand_boolean(rand) ? 256 : 200000);
    VkDeviceSize alignment = alignments[g_rand_int_range(rand, 0, G_N_ELEMENTS(alignments))];
    npu_status status = vk_heap_alloc(w->device->device, w->heap, size, alignment, &slot->allocation);
    if (status == NPU_ERROR_OUT_OF_MEMORY) { /* the budget is shared by the threads */
      w->refused++;
      slot->allocation.block = NULL;
      continue;
    }
    NPU_ASSERT_OK(status);
    w->allocations++;
    g_assert_cmpuint(slot->allocation.offset % alignment, ==, 0);
    g_assert_cmpuint(slot->allocation.size, >=, size);
    g_assert_cmpuint(slot->allocation.offset + slot->allocation.size, <=, BLOCK);
    slot->pattern = (guint8)g_rand_int_range(rand, 1, 256);
    memset(slot->allocation.mapped, slot->pattern, slot->allocation.size);
  }
  for (int s = 0; s < SLOTS; s++)
    if (slots[s].allocation.block) {
      check_pattern(&slots[s]);
      vk_heap_free(w->device->device, w->heap, &slots[s].allocation);
    }
  g_rand_free(rand);
  return NULL;
}

/* A mappable heap of 1 MiB blocks with room for 6 of them. */
static npu_hal_device *open_test_heap(npu_device **device, vk_heap *heap)
{
  *device = vk_test_open_device();
  if (!*device)
    return NULL;
  npu_hal_device *hal = npu_device_hal(*device);
  vk_heap_init(heap, hal->staging_memory_type, true, BLOCK, 6 * BLOCK);
  return hal;
}

static void test_threads_alignment_no_overlap(void)
{
  npu_device *device;
  vk_heap heap;
  npu_hal_device *hal = open_test_heap(&device, &heap);
  if (!hal)
    return;
  worker workers[THREADS];
  GThread *threads[THREADS];
  for (int t = 0; t < THREADS; t++) {
    workers[t] = (worker){hal, &heap, 77 + t, 0, 0};
    threads[t] = g_thread_new("churn", churn, &workers[t]);
  }
  guint64 allocations = 0, refused = 0;
  for (int t = 0; t < THREADS; t++) {
    g_thread_join(threads[t]);
    allocations += workers[t].allocations;
    refused += workers[t].refused;
  }
  vk_heap_counts counts;
  vk_heap_stats(&heap, &counts);
  g_test_message("%llu allocations (%llu refused at the budget) from %llu driver allocations",
                 (unsigned long long)allocations, (unsigned long long)refused,
                 (unsigned long long)counts.driver_allocations);
  g_assert_cmpuint(allocations, >, THREADS * ROUNDS / 4);
  g_assert_cmpuint(counts.driver_allocations, <, allocations / 20);
  /* Everything freed: at most the one spare block is kept. */
  g_assert_cmpuint(counts.blocks, <=, 1);
  g_assert_cmpuint(counts.reserved, <=, BLOCK);
  vk_heap_destroy(hal->device, &heap);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* Past the budget: an error status with a message, and the heap still works. */
static void test_out_of_memory(void)
{
  npu_device *device;
  vk_heap heap;
  npu_hal_device *hal = open_test_heap(&device, &heap);
  if (!hal)
    return;
  vk_allocation big[6], more;
  for (int i = 0; i < 6; i++)
    NPU_ASSERT_OK(vk_heap_alloc(hal->device, &heap, BLOCK, 1, &big[i]));
  NPU_ASSERT_STATUS(vk_heap_alloc(hal->device, &heap, 16, 16, &more), NPU_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull(strstr(npu_last_error_message(), "exceed its heap"));
  /* Larger than the budget at once, and a size that would wrap. */
  vk_heap_free(hal->device, &heap, &big[0]);
  NPU_ASSERT_STATUS(vk_heap_alloc(hal->device, &heap, 7 * BLOCK, 1, &more),
                    NPU_ERROR_OUT_OF_MEMORY);
  NPU_ASSERT_STATUS(vk_heap_alloc(hal->device, &heap, UINT64_MAX - 8, 1, &more),
                    NPU_ERROR_OUT_OF_MEMORY);
  NPU_ASSERT_OK(vk_heap_alloc(hal->device, &heap, 1000, 256, &more));
  vk_heap_free(hal->device, &heap, &more);
  for (int i = 1; i < 6; i++)
    vk_heap_free(hal->device, &heap, &big[i]);
  vk_heap_counts counts;
  vk_heap_stats(&heap, &counts);
  g_assert_cmpuint(counts.reserved, <=, BLOCK);
  vk_heap_destroy(hal->device, &heap);

  /* Through the runtime: more than the device has. */
  npu_device_properties props;
  NPU_ASSERT_OK(npu_device_properties_of(device, &props));
  npu_buffer *buffer;
  NPU_ASSERT_STATUS(npu_buffer_alloc(device, props.memory_total + 1, &buffer),
                    NPU_ERROR_OUT_OF_MEMORY);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* A pool's worth of runtime buffers (what npuinfer's per-frame buffers and
 * npuupload's pool are) comes from one block: the driver is asked once. */
static void test_runtime_buffers_share_blocks(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_hal_device *hal = npu_device_hal(device);
  vk_heap *heap = &hal->heaps[hal->buffer_memory_type];
  vk_heap_counts before, after;
  vk_heap_stats(heap, &before);
  enum { COUNT = 300 };
  npu_buffer *buffers[COUNT];
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < COUNT; i++)
      NPU_ASSERT_OK(npu_buffer_alloc(device, 1000 + 37 * i, &buffers[i]));
    for (int i = 0; i < COUNT; i++)
      NPU_ASSERT_OK(npu_buffer_release(buffers[i]));
  }
  vk_heap_stats(heap, &after);
  g_test_message("%d buffers made twice: %llu driver allocations", COUNT,
                 (unsigned long long)(after.driver_allocations - before.driver_allocations));
  g_assert_cmpuint(after.driver_allocations - before.driver_allocations, <=, 1);
  NPU_ASSERT_OK(npu_device_release(device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vulkan/suballoc/threads-alignment-no-overlap", test_threads_alignment_no_overlap);
  g_test_add_func("/vulkan/suballoc/out-of-memory", test_out_of_memory);
  g_test_add_func("/vulkan/suballoc/runtime-buffers-share-blocks", test_runtime_buffers_share_blocks);
  return g_test_run();
}
