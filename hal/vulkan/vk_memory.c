/* Vulkan device memory: one VkBuffer per npu buffer, bound to a range of
 * a block of the device's sub-allocator (vk_suballoc.c). Where device memory is host-visible and coherent
 * (lavapipe, integrated GPUs) buffers stay mapped: the HAL maps them and
 * host copies are memcpys run in stream order by the stream's worker.
 * Elsewhere host copies go through a staging buffer and a copy command.
 * Device-to-device copies and fills are always commands on the stream. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vk_internal.h"

static bool reserve_bytes(npu_hal_device *device, VkDeviceSize size, uint64_t total)
{
  uint64_t in_use = atomic_load(&device->bytes_in_use);
  do {
    if (in_use > total || size > total - in_use)
      return false;
  } while (!atomic_compare_exchange_weak(&device->bytes_in_use, &in_use, in_use + size));
  return true;
}

npu_status vk_buffer_shell(npu_hal_device *device, VkDeviceSize bytes,
                           VkExternalMemoryHandleTypeFlags handle_types, npu_hal_buffer **out)
{
  npu_hal_buffer *buffer = calloc(1, sizeof *buffer);
  if (!buffer)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for a buffer descriptor");
  static atomic_uint_fast64_t serials = 1;
  buffer->serial = atomic_fetch_add(&serials, 1);
  buffer->device = device;
  buffer->dma_buf_fd = -1;
  buffer->size = bytes;
  VkExternalMemoryBufferCreateInfo external = {
      .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
      .handleTypes = handle_types};
  /* Whole 32-bit words, so that shaders reading bytes as words may bind the last one. */
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .pNext = handle_types ? &external : NULL,
                             .size = (bytes + 3) & ~(VkDeviceSize)3,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult result = vkCreateBuffer(device->device, &info, NULL, &buffer->buffer);
  if (result != VK_SUCCESS) {
    free(buffer);
    return npu_set_error(vk_status_of(result), "Vulkan device '%s': cannot create a buffer of "
                         "%llu bytes: %s", device->properties.deviceName,
                         (unsigned long long)bytes, vk_result_name(result));
  }
  *out = buffer;
  return NPU_OK;
}

npu_status vk_buffer_create(npu_hal_device *device, VkDeviceSize size, bool staging,
                            npu_hal_buffer **out)
{
  if (device->max_allocation && size > device->max_allocation)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY,
                         "Vulkan device '%s' allocates at most %llu bytes at once, not %llu",
                         device->properties.deviceName,
                         (unsigned long long)device->max_allocation, (unsigned long long)size);
  vk_heap *heap = &device->heaps[staging ? device->staging_memory_type : device->buffer_memory_type];
  npu_hal_buffer *buffer;
  npu_status status = vk_buffer_shell(device, size, heap->export_types, &buffer);
  if (status != NPU_OK)
    return status;
  VkResult result;
  VkMemoryRequirements needs;
  vkGetBufferMemoryRequirements(device->device, buffer->buffer, &needs);
  status = vk_heap_alloc(device->device, heap, needs.size, needs.alignment, &buffer->memory);
  if (status == NPU_OK) {
    buffer->heap = heap;
    result = vkBindBufferMemory(device->device, buffer->buffer, buffer->memory.memory,
                                buffer->memory.offset);
    if (result != VK_SUCCESS)
      status = npu_set_error(vk_status_of(result), "Vulkan device '%s': cannot bind memory "
                             "to a buffer: %s", device->properties.deviceName,
                             vk_result_name(result));
  }
  if (status != NPU_OK) {
    vk_buffer_destroy(device, buffer);
    return status;
  }
  /* Opaque device memory stays unmapped even where its type could map. */
  buffer->mapped = staging || device->host_visible ? buffer->memory.mapped : NULL;
  *out = buffer;
  return NPU_OK;
}

void vk_buffer_destroy(npu_hal_device *device, npu_hal_buffer *buffer)
{
  if (buffer->buffer)
    vkDestroyBuffer(device->device, buffer->buffer, NULL);
  if (buffer->heap)
    vk_heap_free(device->device, buffer->heap, &buffer->memory);
  if (buffer->imported)
    vkFreeMemory(device->device, buffer->imported, NULL);
  if (buffer->fd_map.mapping) /* (after the memory imported from it) */
    npu_fd_unmap(&buffer->fd_map);
  if (buffer->dma_buf_fd >= 0)
    close(buffer->dma_buf_fd);
  if (buffer->counted)
    atomic_fetch_sub(&device->bytes_in_use, buffer->size);
  free(buffer);
}

npu_status vk_buffer_alloc(npu_hal_device *device, size_t size, npu_hal_buffer **out)
{
  npu_device_properties props = {0};
  vk_device_properties(device, &props);
  if (!reserve_bytes(device, size, props.memory_total))
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY,
                         "Vulkan device '%s' out of memory: %zu bytes asked, %llu of %llu in use",
                         device->properties.deviceName, size,
                         (unsigned long long)atomic_load(&device->bytes_in_use),
                         (unsigned long long)props.memory_total);
  npu_status status = vk_buffer_create(device, size, false, out);
  if (status != NPU_OK) {
    atomic_fetch_sub(&device->bytes_in_use, size);
    return status;
  }
  (*out)->counted = true;
  return NPU_OK;
}

void vk_buffer_free(npu_hal_device *device, npu_hal_buffer *buffer)
{
  vk_buffer_destroy(device, buffer);
}

void *vk_buffer_host_ptr(npu_hal_buffer *buffer)
{
  return buffer->mapped;
}

npu_status vk_host_alloc(npu_hal_device *device, size_t size, void **host_ptr)
{
  (void)device;
  if (posix_memalign(host_ptr, NPU_BUFFER_ALIGNMENT, size) != 0)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", size);
  return NPU_OK;
}

void vk_host_free(npu_hal_device *device, void *host_ptr)
{
  (void)device;
  free(host_ptr);
}

static uint8_t *host_address(npu_hal_mem_ref ref)
{
  return ref.buffer ? (uint8_t *)ref.buffer->mapped + ref.offset : (uint8_t *)ref.host;
}

/* Queues a copy between a device buffer and the host through a staging
 * buffer: the host side is read (or written) when the stream gets there. */
static npu_status queue_staged_copy(npu_hal_stream *stream, npu_hal_mem_ref dst,
                                    npu_hal_mem_ref src, size_t size, vk_work *work)
{
  npu_hal_device *device = vk_stream_device(stream);
  bool upload = dst.buffer != NULL;
  npu_hal_buffer *staging;
  npu_status status = vk_buffer_create(device, size, true, &staging);
  if (status != NPU_OK)
    return status;
  status = vk_stream_begin(stream, &work->commands);
  if (status != NPU_OK) {
    vk_buffer_destroy(device, staging);
    return status;
  }
  npu_hal_buffer *device_side = upload ? dst.buffer : src.buffer;
  VkDeviceSize device_offset = upload ? vk_offset(dst) : vk_offset(src);
  VkBufferCopy region = {.srcOffset = upload ? 0 : device_offset,
                         .dstOffset = upload ? device_offset : 0, .size = size};
  vkCmdCopyBuffer(work->commands, upload ? staging->buffer : device_side->buffer,
                  upload ? device_side->buffer : staging->buffer, 1, &region);
  work->copy_dst = upload ? staging->mapped : host_address(dst);
  work->copy_src = upload ? host_address(src) : staging->mapped;
  work->copy_size = size;
  work->copy_after = !upload;
  work->temporary = staging;
  status = vk_stream_queue(stream, work);
  if (status != NPU_OK)
    vk_buffer_destroy(device, staging);
  return status;
}

static npu_status queue_copy(npu_hal_stream *stream, npu_hal_mem_ref dst, npu_hal_mem_ref src,
                             size_t size, npu_hal_task_fn done, void *done_data)
{
  vk_work work = {.done = done, .done_data = done_data};
  bool host_end = !dst.buffer || !src.buffer;
  if (host_end && vk_stream_device(stream)->host_visible) {
    work.copy_dst = host_address(dst);
    work.copy_src = host_address(src);
    work.copy_size = size;
    return vk_stream_queue(stream, &work);
  }
  if (host_end)
    return queue_staged_copy(stream, dst, src, size, &work);
  npu_status status = vk_stream_begin(stream, &work.commands);
  if (status != NPU_OK)
    return status;
  VkBufferCopy region = {.srcOffset = vk_offset(src), .dstOffset = vk_offset(dst), .size = size};
  vkCmdCopyBuffer(work.commands, src.buffer->buffer, dst.buffer->buffer, 1, &region);
  return vk_stream_queue(stream, &work);
}

/* Fills with vkCmdFillBuffer where it can (4-byte aligned words) and copies
 * the unaligned edges from the device's byte patterns. */
static npu_status queue_fill(npu_hal_stream *stream, npu_hal_mem_ref dst, uint8_t value,
                             size_t size, npu_hal_task_fn done, void *done_data)
{
  npu_hal_device *device = vk_stream_device(stream);
  vk_work work = {.done = done, .done_data = done_data};
  npu_status status = vk_stream_begin(stream, &work.commands);
  if (status != NPU_OK)
    return status;
  size_t start = vk_offset(dst), end = vk_offset(dst) + size;
  size_t head_end = (start + 3) & ~(size_t)3;
  if (head_end > end)
    head_end = end;
  size_t tail_start = end & ~(size_t)3;
  if (tail_start < head_end)
    tail_start = head_end;
  if (tail_start > head_end)
    vkCmdFillBuffer(work.commands, dst.buffer->buffer, head_end, tail_start - head_end,
                    0x01010101u * value);
  VkDeviceSize pattern = (VkDeviceSize)value * 4;
  VkBufferCopy edges[2] = {{pattern, start, head_end - start}, {pattern, tail_start, end - tail_start}};
  for (int e = 0; e < 2; e++)
    if (edges[e].size)
      vkCmdCopyBuffer(work.commands, device->byte_patterns->buffer, dst.buffer->buffer, 1,
                      &edges[e]);
  return vk_stream_queue(stream, &work);
}

/* Synchronous copies and fills run on the device's own stream, waited for. */
static npu_status finish_on_sync_stream(npu_hal_device *device, npu_status status)
{
  if (status != NPU_OK)
    return status;
  return vk_stream_synchronize(device->sync_stream);
}

npu_status vk_copy(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst,
                   npu_hal_mem_ref src, size_t size, npu_hal_task_fn done, void *done_data)
{
  if (stream)
    return queue_copy(stream, dst, src, size, done, done_data);
  bool host_end = !dst.buffer || !src.buffer;
  if (host_end && device->host_visible) {
    memmove(host_address(dst), host_address(src), size);
    if (done)
      done(done_data);
    return NPU_OK;
  }
  return finish_on_sync_stream(
      device, queue_copy(device->sync_stream, dst, src, size, done, done_data));
}

npu_status vk_fill(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst, int value,
                   size_t size, npu_hal_task_fn done, void *done_data)
{
  if (stream)
    return queue_fill(stream, dst, (uint8_t)value, size, done, done_data);
  return finish_on_sync_stream(
      device, queue_fill(device->sync_stream, dst, (uint8_t)value, size, done, done_data));
}
