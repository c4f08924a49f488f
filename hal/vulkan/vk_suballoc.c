/* Device memory taken from the driver in large blocks and carved into
 * ranges for buffers, so that pools, VPP job tables and per-frame buffers do
 * not each cost a vkAllocateMemory (slow on most drivers, and limited to
 * maxMemoryAllocationCount, often 4096). One heap per memory type, each
 * with its own lock; a block keeps its free ranges sorted by offset and
 * merges neighbours on free; a request is placed first-fit at the
 * alignment its VkMemoryRequirements ask. Requests of more than half a
 * block get a block of their own, given back when freed; one empty shared
 * block is kept per heap so that a buffer freed and made again (a pool
 * refilling) does not go back to the driver. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

typedef struct vk_range {
  VkDeviceSize offset, size;
} vk_range;

struct vk_block {
  VkDeviceMemory memory;
  VkDeviceSize size;
  void *mapped;          /* the whole block, when its memory type is host-visible */
  bool dedicated;        /* one allocation's own block */
  uint32_t live;         /* allocations in it */
  uint32_t free_count, free_capacity;
  vk_range *free;        /* sorted by offset, no two adjacent */
  vk_block *next;
};

static VkDeviceSize align_up(VkDeviceSize value, VkDeviceSize alignment)
{
  return alignment > 1 ? (value + alignment - 1) / alignment * alignment : value;
}

void vk_heap_init(vk_heap *heap, uint32_t memory_type, bool mappable, VkDeviceSize block_size,
                  VkDeviceSize budget)
{
  memset(heap, 0, sizeof *heap);
  pthread_mutex_init(&heap->lock, NULL);
  heap->memory_type = memory_type;
  heap->mappable = mappable;
  heap->block_size = block_size;
  if (budget && heap->block_size > budget)
    heap->block_size = budget;
  heap->budget = budget;
}

static void release_block(VkDevice device, vk_heap *heap, vk_block *block)
{
  vkFreeMemory(device, block->memory, NULL); /* unmaps too */
  heap->reserved -= block->size;
  free(block->free);
  free(block);
}

void vk_heap_destroy(VkDevice device, vk_heap *heap)
{
  while (heap->blocks) {
    vk_block *block = heap->blocks;
    heap->blocks = block->next;
    release_block(device, heap, block);
  }
  pthread_mutex_destroy(&heap->lock);
}

static npu_status new_block(VkDevice device, vk_heap *heap, VkDeviceSize size, bool dedicated,
                            vk_block **out)
{
  if (heap->budget && (heap->reserved > heap->budget || size > heap->budget - heap->reserved))
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY,
                         "Vulkan memory type %u: %llu more bytes would exceed its heap "
                         "(%llu of %llu taken)",
                         heap->memory_type, (unsigned long long)size,
                         (unsigned long long)heap->reserved, (unsigned long long)heap->budget);
  vk_block *block = calloc(1, sizeof *block);
  vk_range *ranges = malloc(4 * sizeof *ranges);
  if (!block || !ranges) {
    free(block);
    free(ranges);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for a memory block");
  }
  VkExportMemoryAllocateInfo exportable = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                           .handleTypes = heap->export_types};
  VkMemoryAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .pNext = heap->export_types ? &exportable : NULL,
                               .allocationSize = size, .memoryTypeIndex = heap->memory_type};
  const char *what = "allocate";
  VkResult result = vkAllocateMemory(device, &info, NULL, &block->memory);
  if (result == VK_SUCCESS && heap->mappable) {
    what = "map";
    result = vkMapMemory(device, block->memory, 0, VK_WHOLE_SIZE, 0, &block->mapped);
    if (result != VK_SUCCESS)
      vkFreeMemory(device, block->memory, NULL);
  }
  if (result != VK_SUCCESS) {
    free(block);
    free(ranges);
    return npu_set_error(vk_status_of(result), "cannot %s %llu bytes of Vulkan memory type %u: %s",
                         what, (unsigned long long)size, heap->memory_type,
                         vk_result_name(result));
  }
  block->size = size;
  block->dedicated = dedicated;
  block->free = ranges;
  block->free_capacity = 4;
  block->free[0] = (vk_range){0, size};
  block->free_count = 1;
  heap->reserved += size;
  heap->driver_allocations++;
  block->next = heap->blocks;
  heap->blocks = block;
  *out = block;
  return NPU_OK;
}

static bool make_room(vk_block *block, uint32_t extra)
{
  if (block->free_count + extra <= block->free_capacity)
    return true;
  uint32_t capacity = block->free_capacity * 2 + extra;
  vk_range *grown = realloc(block->free, capacity * sizeof *grown);
  if (!grown)
    return false;
  block->free = grown;
  block->free_capacity = capacity;
  return true;
}

/* Carves `size` bytes at `alignment` out of the first free range that holds
 * them; false when none does (or the free list cannot grow). */
static bool place(vk_block *block, VkDeviceSize size, VkDeviceSize alignment,
                  VkDeviceSize *offset)
{
  for (uint32_t i = 0; i < block->free_count; i++) {
    vk_range range = block->free[i];
    VkDeviceSize start = align_up(range.offset, alignment);
    if (start < range.offset || start + size < start || start + size > range.offset + range.size)
      continue;
    vk_range before = {range.offset, start - range.offset};
    vk_range after = {start + size, range.offset + range.size - (start + size)};
    uint32_t pieces = (before.size > 0) + (after.size > 0);
    if (pieces == 2 && !make_room(block, 1))
      return false;
    vk_range *tail = &block->free[i + 1];
    size_t tail_count = block->free_count - i - 1;
    if (pieces != 1)
      memmove(tail + (pieces == 2 ? 1 : -1), tail, tail_count * sizeof *tail);
    uint32_t at = i;
    if (before.size)
      block->free[at++] = before;
    if (after.size)
      block->free[at++] = after;
    block->free_count = block->free_count - 1 + pieces;
    *offset = start;
    return true;
  }
  return false;
}

/* Gives the range back, merged with the free ranges it touches; false only
 * when the free list cannot grow (the range is then lost to the block). */
static bool unplace(vk_block *block, VkDeviceSize offset, VkDeviceSize size)
{
  uint32_t low = 0, high = block->free_count; /* first free range after `offset` */
  while (low < high) {
    uint32_t mid = (low + high) / 2;
    if (block->free[mid].offset < offset)
      low = mid + 1;
    else
      high = mid;
  }
  uint32_t i = low;
  bool joins_before = i > 0 && block->free[i - 1].offset + block->free[i - 1].size == offset;
  bool joins_after = i < block->free_count && offset + size == block->free[i].offset;
  if (joins_before && joins_after) {
    block->free[i - 1].size += size + block->free[i].size;
    memmove(&block->free[i], &block->free[i + 1],
            (block->free_count - i - 1) * sizeof *block->free);
    block->free_count--;
  } else if (joins_before) {
    block->free[i - 1].size += size;
  } else if (joins_after) {
    block->free[i].offset = offset;
    block->free[i].size += size;
  } else {
    if (!make_room(block, 1))
      return false;
    memmove(&block->free[i + 1], &block->free[i], (block->free_count - i) * sizeof *block->free);
    block->free[i] = (vk_range){offset, size};
    block->free_count++;
  }
  return true;
}

npu_status vk_heap_alloc(VkDevice device, vk_heap *heap, VkDeviceSize size,
                         VkDeviceSize alignment, vk_allocation *out)
{
  if (size == 0)
    size = 1;
  pthread_mutex_lock(&heap->lock);
  npu_status status = NPU_OK;
  bool dedicated = size > heap->block_size / 2;
  vk_block *block = NULL;
  VkDeviceSize offset = 0;
  for (vk_block *b = dedicated ? NULL : heap->blocks; b && !block; b = b->next)
    if (!b->dedicated && place(b, size, alignment, &offset))
      block = b;
  if (!block) {
    status = new_block(device, heap, dedicated ? size : heap->block_size, dedicated, &block);
    if (status == NPU_OK && !place(block, size, alignment, &offset))
      status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "a new memory block held no room");
  }
  if (status == NPU_OK) {
    block->live++;
    *out = (vk_allocation){block, block->memory, offset, size,
                           block->mapped ? (uint8_t *)block->mapped + offset : NULL};
  }
  pthread_mutex_unlock(&heap->lock);
  return status;
}

static bool spare_shared_block(const vk_heap *heap, const vk_block *except)
{
  for (const vk_block *b = heap->blocks; b; b = b->next)
    if (b != except && !b->dedicated && b->live == 0)
      return true;
  return false;
}

void vk_heap_free(VkDevice device, vk_heap *heap, const vk_allocation *allocation)
{
  vk_block *block = allocation->block;
  pthread_mutex_lock(&heap->lock);
  unplace(block, allocation->offset, allocation->size);
  block->live--;
  if (block->live == 0 && (block->dedicated || spare_shared_block(heap, block))) {
    vk_block **link = &heap->blocks;
    while (*link != block)
      link = &(*link)->next;
    *link = block->next;
    release_block(device, heap, block);
  }
  pthread_mutex_unlock(&heap->lock);
}

void vk_heap_stats(vk_heap *heap, vk_heap_counts *counts)
{
  pthread_mutex_lock(&heap->lock);
  *counts = (vk_heap_counts){.driver_allocations = heap->driver_allocations,
                             .reserved = heap->reserved};
  for (const vk_block *b = heap->blocks; b; b = b->next)
    counts->blocks++;
  pthread_mutex_unlock(&heap->lock);
}
