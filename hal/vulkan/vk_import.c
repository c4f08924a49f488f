/* Memory shared with the device without copying: host pointers imported
 * (VK_EXT_external_memory_host; the pages around them from the aligned
 * start the driver asks, the buffer's byte 0 at `base` in them); dma-bufs
 * where the device has VK_EXT_external_memory_dma_buf (with
 * VK_KHR_external_memory_fd): device buffers exported as their block's
 * dma-buf at their offset in it, dma-bufs imported as device memory; other
 * fds (a memfd, or a dma-buf where the device takes none) imported by
 * mapping their range and importing that as host memory (fd_map.c), and
 * exported again as that fd. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

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

/* What the driver says of dma-bufs for buffers as ours (usage as
 * vk_buffer_shell's): exportable and importable without a dedicated
 * allocation (ranges of shared blocks, imports of any range). */
static VkExternalMemoryFeatureFlags dma_buf_features(npu_hal_device *device)
{
  VkPhysicalDeviceExternalBufferInfo info = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT};
  VkExternalBufferProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
  vkGetPhysicalDeviceExternalBufferProperties(device->physical, &info, &props);
  VkExternalMemoryFeatureFlags features = props.externalMemoryProperties.externalMemoryFeatures;
  return features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT ? 0 : features;
}

/* Whether an exportable allocation of the device buffers' memory type is
 * made and gives a dma-buf: every block of that type will be made so, so a
 * driver that says yes and then fails must not take all allocations down
 * with it. */
static bool exports_dma_buf(npu_hal_device *device)
{
  VkExportMemoryAllocateInfo exportable = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                           .handleTypes =
                                               VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT};
  VkMemoryAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .pNext = &exportable, .allocationSize = 65536,
                               .memoryTypeIndex = device->buffer_memory_type};
  VkDeviceMemory memory;
  if (vkAllocateMemory(device->device, &info, NULL, &memory) != VK_SUCCESS)
    return false;
  VkMemoryGetFdInfoKHR get = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                              .memory = memory,
                              .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT};
  int fd = -1;
  bool exported = device->get_memory_fd(device->device, &get, &fd) == VK_SUCCESS && fd >= 0;
  if (fd >= 0)
    close(fd);
  vkFreeMemory(device->device, memory, NULL);
  return exported;
}

void vk_dma_buf_init(npu_hal_device *device)
{
  device->get_memory_fd =
      (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(device->device, "vkGetMemoryFdKHR");
  device->get_memory_fd_properties = (PFN_vkGetMemoryFdPropertiesKHR)vkGetDeviceProcAddr(
      device->device, "vkGetMemoryFdPropertiesKHR");
  if (!device->get_memory_fd || !device->get_memory_fd_properties)
    return;
  VkExternalMemoryFeatureFlags features = dma_buf_features(device);
  device->dma_buf_import = features & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT;
  /* Exportable where a buffer made for dma-bufs may live in the memory
   * type device buffers take. */
  npu_hal_buffer *probe;
  if (!(features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) ||
      vk_buffer_shell(device, 256, VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT, &probe) !=
          NPU_OK)
    return;
  VkMemoryRequirements needs;
  vkGetBufferMemoryRequirements(device->device, probe->buffer, &needs);
  vk_buffer_destroy(device, probe);
  device->dma_buf_export = (needs.memoryTypeBits & (1u << device->buffer_memory_type)) &&
                           exports_dma_buf(device);
  if (device->dma_buf_export)
    device->heaps[device->buffer_memory_type].export_types =
        VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT;
}

/* The `size` bytes at `offset` of dma-buf `fd` as device memory;
 * NPU_ERROR_NOT_SUPPORTED where the device takes no such fd (a memfd is
 * none). */
static npu_status import_dma_buf(npu_hal_device *device, int fd, size_t offset, size_t size,
                                 npu_hal_buffer **out)
{
  VkMemoryFdPropertiesKHR props = {.sType = VK_STRUCTURE_TYPE_MEMORY_FD_PROPERTIES_KHR};
  VkResult result = device->get_memory_fd_properties(
      device->device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT, fd, &props);
  if (result != VK_SUCCESS)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Vulkan device '%s' takes fd %d as no "
                         "dma-buf: %s", device->properties.deviceName, fd,
                         vk_result_name(result));
  off_t end = lseek(fd, 0, SEEK_END);
  if (end < 0 || offset > (size_t)end || size > (size_t)end - offset)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%zu bytes from %zu overrun dma-buf fd %d "
                         "of %lld bytes", size, offset, fd, (long long)end);
  npu_hal_buffer *buffer;
  npu_status status =
      vk_buffer_shell(device, offset + size, VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT, &buffer);
  if (status != NPU_OK)
    return status;
  VkMemoryRequirements needs;
  vkGetBufferMemoryRequirements(device->device, buffer->buffer, &needs);
  uint32_t types = needs.memoryTypeBits & props.memoryTypeBits;
  int own = types && needs.size <= (VkDeviceSize)end ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  int kept = own >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1; /* exported again */
  result = VK_ERROR_FEATURE_NOT_PRESENT;
  if (kept >= 0) {
    VkImportMemoryFdInfoKHR import = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
                                      .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT,
                                      .fd = own};
    VkMemoryAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                 .pNext = &import, .allocationSize = (VkDeviceSize)end,
                                 .memoryTypeIndex = (uint32_t)__builtin_ctz(types)};
    VkDeviceMemory memory;
    result = vkAllocateMemory(device->device, &info, NULL, &memory);
    if (result == VK_SUCCESS) { /* the driver owns `own` now */
      buffer->imported = memory;
      result = vkBindBufferMemory(device->device, buffer->buffer, memory, 0);
    } else {
      close(own);
    }
    buffer->dma_buf_fd = kept;
  } else if (own >= 0) {
    close(own);
  }
  if (result != VK_SUCCESS) {
    vk_buffer_destroy(device, buffer);
    return npu_set_error(vk_status_of(result) == NPU_ERROR_OUT_OF_MEMORY
                             ? NPU_ERROR_OUT_OF_MEMORY
                             : NPU_ERROR_NOT_SUPPORTED,
                         "Vulkan device '%s' cannot import %zu bytes of dma-buf fd %d: %s",
                         device->properties.deviceName, size, fd,
                         types ? vk_result_name(result) : "no memory type fits");
  }
  buffer->base = offset;
  buffer->size = size;
  buffer->fd_offset = offset;
  *out = buffer;
  return NPU_OK;
}

npu_status vk_buffer_import_fd(npu_hal_device *device, int fd, size_t offset, size_t size,
                               npu_hal_buffer **out)
{
  if (device->dma_buf_import) {
    npu_status status = import_dma_buf(device, fd, offset, size, out);
    if (status != NPU_ERROR_NOT_SUPPORTED || !device->host_import_alignment)
      return status;
    /* no dma-buf the device takes (a memfd): mapped and imported as host memory */
  }
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
  int imported = buffer->fd_map.mapping ? buffer->fd_map.fd : buffer->dma_buf_fd;
  if (imported >= 0) { /* imported from an fd: that fd again */
    *fd = fcntl(imported, F_DUPFD_CLOEXEC, 0);
    *offset = buffer->fd_offset;
    return *fd >= 0 ? NPU_OK
                    : npu_set_error(NPU_ERROR_IO, "cannot duplicate the buffer's fd");
  }
  npu_hal_device *device = buffer->device;
  if (!buffer->heap || !(buffer->heap->export_types & VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT))
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Vulkan device '%s' exports no dma-bufs of its "
                         "memory (it needs VK_EXT_external_memory_dma_buf; only buffers imported "
                         "from an fd have one to export)", device->properties.deviceName);
  /* The block's dma-buf, the buffer at its offset in the block. */
  VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                               .memory = buffer->memory.memory,
                               .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT};
  VkResult result = device->get_memory_fd(device->device, &info, fd);
  if (result != VK_SUCCESS)
    return npu_set_error(vk_status_of(result), "Vulkan device '%s' cannot export a dma-buf: %s",
                         device->properties.deviceName, vk_result_name(result));
  *offset = (size_t)(buffer->memory.offset + buffer->base);
  return NPU_OK;
}
