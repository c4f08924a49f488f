/* Memory shared with the device without copying: host pointers imported
 * (VK_EXT_external_memory_host; the pages around them from the aligned
 * start the driver asks, the buffer's byte 0 at `base` in them), and fds
 * imported by mapping their range and importing that (a memfd, a dma-buf:
 * fd_map.c), exported again as that fd. Device memory itself is not
 * exported: an opaque fd (VK_KHR_external_memory_fd) is not mappable
 * memory (lavapipe's holds a header before the bytes). */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>

#include "vk_internal.h"

/* A buffer over `bytes` of imported `memory` of `type` (which it then
 * owns), its byte 0 at `base`. */
static npu_status wrap_memory(npu_hal_device *device, VkDeviceMemory memory, uint32_t type,
                              VkDeviceSize bytes, VkDeviceSize base, size_t size, void *mapped,
                              npu_hal_buffer **out)
{
  npu_hal_buffer *buffer = NULL;
  npu_status status = vk_buffer_shell(
      device, bytes, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, &buffer);
  if (status != NPU_OK) {
    vkFreeMemory(device->device, memory, NULL);
    return status;
  }
  buffer->imported = memory;
  VkMemoryRequirements needs;
  vkGetBufferMemoryRequirements(device->device, buffer->buffer, &needs);
  VkResult result = (needs.memoryTypeBits & (1u << type)) && needs.size <= bytes
                        ? vkBindBufferMemory(device->device, buffer->buffer, memory, 0)
                        : VK_ERROR_FEATURE_NOT_PRESENT;
  if (result != VK_SUCCESS) {
    vk_buffer_destroy(device, buffer);
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Vulkan device '%s' cannot bind imported "
                         "memory to a buffer: %s", device->properties.deviceName,
                         vk_result_name(result));
  }
  buffer->base = base;
  buffer->size = size;
  buffer->mapped = mapped;
  *out = buffer;
  return NPU_OK;
}

npu_status vk_buffer_import_host(npu_hal_device *device, void *host_ptr, size_t size,
                                 npu_hal_buffer **out)
{
  uintptr_t align = (uintptr_t)device->host_import_alignment;
  uintptr_t start = (uintptr_t)host_ptr / align * align;
  uintptr_t end = ((uintptr_t)host_ptr + size + align - 1) / align * align;
  VkMemoryHostPointerPropertiesEXT props = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  VkResult result = device->get_host_pointer_properties(
      device->device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, (void *)start,
      &props);
  int type = -1;
  for (uint32_t t = 0; t < device->memory.memoryTypeCount && type < 0; t++)
    if (props.memoryTypeBits & (1u << t))
      type = (int)t;
  if (result != VK_SUCCESS || type < 0)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Vulkan device '%s' cannot import host memory "
                         "at %p: %s", device->properties.deviceName, host_ptr,
                         result != VK_SUCCESS ? vk_result_name(result) : "no memory type");
  VkImportMemoryHostPointerInfoEXT import = {
      .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
      .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
      .pHostPointer = (void *)start};
  VkMemoryAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &import,
                               .allocationSize = end - start, .memoryTypeIndex = (uint32_t)type};
  VkDeviceMemory memory;
  result = vkAllocateMemory(device->device, &info, NULL, &memory);
  if (result != VK_SUCCESS)
    return npu_set_error(vk_status_of(result) == NPU_ERROR_OUT_OF_MEMORY
                             ? NPU_ERROR_OUT_OF_MEMORY
                             : NPU_ERROR_NOT_SUPPORTED,
                         "Vulkan device '%s' cannot import %zu bytes of host memory: %s",
                         device->properties.deviceName, size, vk_result_name(result));
  return wrap_memory(device, memory, (uint32_t)type, end - start,
                     (uintptr_t)host_ptr - start, size, host_ptr, out);
}

npu_status vk_buffer_import_fd(npu_hal_device *device, int fd, size_t offset, size_t size,
                               npu_hal_buffer **out)
{
  npu_fd_map map;
  npu_status status = npu_fd_map_import(fd, offset, size, &map);
  if (status != NPU_OK)
    return status;
  status = vk_buffer_import_host(device, map.ptr, size, out);
  if (status != NPU_OK) {
    npu_fd_unmap(&map);
    return status;
  }
  (*out)->fd_map = map;
  (*out)->fd_offset = offset;
  return NPU_OK;
}

npu_status vk_buffer_export_fd(npu_hal_buffer *buffer, int *fd, size_t *offset)
{
  if (buffer->fd_map.mapping) { /* imported from an fd: that fd again */
    *fd = fcntl(buffer->fd_map.fd, F_DUPFD_CLOEXEC, 0);
    *offset = buffer->fd_offset;
    return *fd >= 0 ? NPU_OK
                    : npu_set_error(NPU_ERROR_IO, "cannot duplicate the buffer's fd");
  }
  return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "only Vulkan buffers imported from an fd have "
                       "one to export (device memory is not exported yet)");
}
