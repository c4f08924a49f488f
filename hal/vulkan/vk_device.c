/* Vulkan devices: one instance for the process, made on first use (so that
 * programs that never look past the CPU device never load a Vulkan driver);
 * every physical device with a compute queue and timeline semaphores (core
 * in Vulkan 1.2) is an npu device of backend "vulkan". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"
#include "vulkan/shaders/tiles.h"

#define MAX_PHYSICAL_DEVICES 16

static struct {
  pthread_once_t once;
  pthread_mutex_t lock;
  VkInstance instance;
  uint32_t count;
  VkPhysicalDevice physical[MAX_PHYSICAL_DEVICES];
  uint32_t queue_family[MAX_PHYSICAL_DEVICES];
  uint32_t open_devices; /* the instance outlives them */
  char failure[160];     /* why there are no devices, when there is a reason */
} vk_instance = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

const char *vk_result_name(VkResult result)
{
  switch (result) {
  case VK_SUCCESS: return "success";
  case VK_TIMEOUT: return "timeout";
  case VK_ERROR_OUT_OF_HOST_MEMORY: return "out of host memory";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "out of device memory";
  case VK_ERROR_INITIALIZATION_FAILED: return "initialization failed";
  case VK_ERROR_DEVICE_LOST: return "device lost";
  case VK_ERROR_MEMORY_MAP_FAILED: return "memory map failed";
  case VK_ERROR_LAYER_NOT_PRESENT: return "layer not present";
  case VK_ERROR_EXTENSION_NOT_PRESENT: return "extension not present";
  case VK_ERROR_FEATURE_NOT_PRESENT: return "feature not present";
  case VK_ERROR_INCOMPATIBLE_DRIVER: return "incompatible driver (no Vulkan 1.2 driver installed?)";
  case VK_ERROR_TOO_MANY_OBJECTS: return "too many objects";
  case VK_ERROR_INVALID_SHADER_NV: return "invalid shader";
  default: return "Vulkan error";
  }
}

npu_status vk_status_of(VkResult result)
{
  switch (result) {
  case VK_SUCCESS: return NPU_OK;
  case VK_ERROR_OUT_OF_HOST_MEMORY:
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
  case VK_ERROR_TOO_MANY_OBJECTS: return NPU_ERROR_OUT_OF_MEMORY;
  case VK_ERROR_EXTENSION_NOT_PRESENT:
  case VK_ERROR_FEATURE_NOT_PRESENT:
  case VK_ERROR_INCOMPATIBLE_DRIVER: return NPU_ERROR_NOT_SUPPORTED;
  default: return NPU_ERROR_IO; /* device lost, driver failures: no closer status */
  }
}

/* At exit, when no device is left open, so that leak checkers see the
 * driver's memory given back. */
static void destroy_instance(void)
{
  pthread_mutex_lock(&vk_instance.lock);
  if (vk_instance.instance && vk_instance.open_devices == 0) {
    vkDestroyInstance(vk_instance.instance, NULL);
    vk_instance.instance = VK_NULL_HANDLE;
    vk_instance.count = 0;
  }
  pthread_mutex_unlock(&vk_instance.lock);
}

static bool find_compute_queue(VkPhysicalDevice physical, uint32_t *family)
{
  VkQueueFamilyProperties families[16];
  uint32_t count = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families);
  /* A family with compute and no graphics runs beside a display's work. */
  for (int dedicated = 1; dedicated >= 0; dedicated--)
    for (uint32_t f = 0; f < count; f++) {
      VkQueueFlags flags = families[f].queueFlags;
      if ((flags & VK_QUEUE_COMPUTE_BIT) && (!dedicated || !(flags & VK_QUEUE_GRAPHICS_BIT))) {
        *family = f;
        return true;
      }
    }
  return false;
}

static bool has_timeline_semaphores(VkPhysicalDevice physical)
{
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical, &props);
  if (props.apiVersion < VK_API_VERSION_1_2)
    return false;
  VkPhysicalDeviceVulkan12Features v12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                        .pNext = &v12};
  vkGetPhysicalDeviceFeatures2(physical, &features);
  return v12.timelineSemaphore;
}

static void create_instance(void)
{
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "gst-npu", .pEngineName = "gst-npu",
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pApplicationInfo = &app};
  VkResult result = vkCreateInstance(&info, NULL, &vk_instance.instance);
  if (result != VK_SUCCESS) {
    snprintf(vk_instance.failure, sizeof vk_instance.failure,
             "no Vulkan instance: %s (install a driver, e.g. mesa-vulkan-drivers)",
             vk_result_name(result));
    vk_instance.instance = VK_NULL_HANDLE;
    return;
  }
  atexit(destroy_instance);
  VkPhysicalDevice physical[MAX_PHYSICAL_DEVICES];
  uint32_t count = MAX_PHYSICAL_DEVICES;
  result = vkEnumeratePhysicalDevices(vk_instance.instance, &count, physical);
  if (result != VK_SUCCESS && result != VK_INCOMPLETE)
    count = 0;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t family;
    if (!find_compute_queue(physical[i], &family) || !has_timeline_semaphores(physical[i]))
      continue;
    vk_instance.physical[vk_instance.count] = physical[i];
    vk_instance.queue_family[vk_instance.count] = family;
    vk_instance.count++;
  }
  if (!vk_instance.count)
    snprintf(vk_instance.failure, sizeof vk_instance.failure,
             "no Vulkan 1.2 device with a compute queue and timeline semaphores");
}

uint32_t vk_device_count(void)
{
  pthread_once(&vk_instance.once, create_instance);
  pthread_mutex_lock(&vk_instance.lock);
  uint32_t count = vk_instance.count;
  pthread_mutex_unlock(&vk_instance.lock);
  return count;
}

static bool has_extension(VkPhysicalDevice physical, const char *name)
{
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, NULL, &count, NULL);
  VkExtensionProperties *extensions = calloc(count ? count : 1, sizeof *extensions);
  bool found = false;
  if (extensions &&
      vkEnumerateDeviceExtensionProperties(physical, NULL, &count, extensions) == VK_SUCCESS)
    for (uint32_t i = 0; i < count && !found; i++)
      found = strcmp(extensions[i].extensionName, name) == 0;
  free(extensions);
  return found;
}

/* The first memory type among `allowed` with all of `flags`; -1 if none. */
static int memory_type_with(const VkPhysicalDeviceMemoryProperties *memory, uint32_t allowed,
                            VkMemoryPropertyFlags flags)
{
  for (uint32_t t = 0; t < memory->memoryTypeCount; t++)
    if ((allowed & (1u << t)) && (memory->memoryTypes[t].propertyFlags & flags) == flags)
      return (int)t;
  return -1;
}

/* Chooses the memory types for device buffers and staging. Where device
 * memory is also host-visible and coherent (integrated GPUs, lavapipe),
 * buffers are mapped and host copies need no staging; NPU_VULKAN_DEVICE_MEMORY=opaque
 * refuses that so that the staging path can be tested on any device. */
static npu_status choose_memory_types(npu_hal_device *device)
{
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 256,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  VkBuffer probe;
  VkResult result = vkCreateBuffer(device->device, &info, NULL, &probe);
  if (result != VK_SUCCESS)
    return npu_set_error(vk_status_of(result), "cannot create a Vulkan buffer: %s",
                         vk_result_name(result));
  VkMemoryRequirements needs;
  vkGetBufferMemoryRequirements(device->device, probe, &needs);
  vkDestroyBuffer(device->device, probe, NULL);
  const VkMemoryPropertyFlags mappable =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const char *mode = getenv("NPU_VULKAN_DEVICE_MEMORY");
  bool opaque = mode && strcmp(mode, "opaque") == 0;
  int unified = memory_type_with(&device->memory, needs.memoryTypeBits,
                                 mappable | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  int local = memory_type_with(&device->memory, needs.memoryTypeBits,
                               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  int staging = memory_type_with(&device->memory, needs.memoryTypeBits, mappable);
  if (staging < 0)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                         "Vulkan device '%s' has no host-visible coherent memory for transfers",
                         device->properties.deviceName);
  device->host_visible = unified >= 0 && !opaque;
  device->buffer_memory_type = (uint32_t)(device->host_visible ? unified
                                          : local >= 0         ? local
                                                               : staging);
  device->staging_memory_type = (uint32_t)staging;
  return NPU_OK;
}

/* VK_EXT_external_memory_host's entry and the alignment it imports at. */
static void find_host_import(npu_hal_device *device)
{
  VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                       .pNext = &host};
  vkGetPhysicalDeviceProperties2(device->physical, &props);
  device->get_host_pointer_properties = (PFN_vkGetMemoryHostPointerPropertiesEXT)
      vkGetDeviceProcAddr(device->device, "vkGetMemoryHostPointerPropertiesEXT");
  if (device->get_host_pointer_properties && host.minImportedHostPointerAlignment)
    device->host_import_alignment = host.minImportedHostPointerAlignment;
}

static npu_status create_logical_device(npu_hal_device *device)
{
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = device->queue_family, .queueCount = 1,
                                   .pQueuePriorities = &priority};
  VkPhysicalDeviceVulkan12Features v12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                          .timelineSemaphore = VK_TRUE};
  VkPhysicalDeviceVulkan12Features supported12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                         .pNext = &supported12};
  vkGetPhysicalDeviceFeatures2(device->physical, &features2);
  device->update_after_bind = supported12.descriptorBindingStorageBufferUpdateAfterBind;
  v12.descriptorBindingStorageBufferUpdateAfterBind = device->update_after_bind;
  const char *extensions[3];
  uint32_t extension_count = 0;
  if (has_extension(device->physical, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME))
    extensions[extension_count++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
  /* dma-bufs in and out (vk_import.c): both extensions or neither */
  device->dma_buf = has_extension(device->physical, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) &&
                    has_extension(device->physical, VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME);
  if (device->dma_buf) {
    extensions[extension_count++] = VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
    extensions[extension_count++] = VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME;
  }
  VkPhysicalDeviceFeatures supported;
  vkGetPhysicalDeviceFeatures(device->physical, &supported);
  device->buffer_array_indexing = supported.shaderStorageBufferArrayDynamicIndexing;
  VkPhysicalDeviceFeatures features = {
      .shaderStorageBufferArrayDynamicIndexing = supported.shaderStorageBufferArrayDynamicIndexing};
  VkDeviceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &v12,
                             .pEnabledFeatures = &features,
                             .queueCreateInfoCount = 1, .pQueueCreateInfos = &queue,
                             .enabledExtensionCount = extension_count,
                             .ppEnabledExtensionNames = extensions};
  VkResult result = vkCreateDevice(device->physical, &info, NULL, &device->device);
  if (result != VK_SUCCESS) {
    device->device = VK_NULL_HANDLE;
    return npu_set_error(vk_status_of(result), "cannot open Vulkan device '%s': %s",
                         device->properties.deviceName, vk_result_name(result));
  }
  vkGetDeviceQueue(device->device, device->queue_family, 0, &device->queue);
  for (uint32_t e = 0; e < extension_count; e++)
    if (strcmp(extensions[e], VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) == 0)
      find_host_import(device);
  return NPU_OK;
}

/* Which shaders run the products and convolutions: the shared-memory tiled
 * ones on GPUs (discrete, integrated, virtual) whose limits take their
 * workgroups, the register-blocked ones on a CPU driver (lavapipe gathers
 * shared memory lane by lane as any other load) and elsewhere;
 * NPU_VULKAN_SHADERS=tiled or blocked picks either (tests run both on
 * lavapipe; A/B benchmarks). */
static npu_status choose_shaders(npu_hal_device *device)
{
  const VkPhysicalDeviceLimits *limits = &device->properties.limits;
  bool tiled_fits = limits->maxComputeWorkGroupInvocations >= TILED_SIDE * TILED_SIDE &&
                    limits->maxComputeWorkGroupSize[0] >= TILED_SIDE &&
                    limits->maxComputeWorkGroupSize[1] >= TILED_SIDE &&
                    limits->maxComputeSharedMemorySize >= TILED_SHARED_BYTES;
  const char *choice = getenv("NPU_VULKAN_SHADERS");
  if (!choice || !*choice) {
    device->tiled_shaders =
        tiled_fits && device->properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    return NPU_OK;
  }
  if (strcmp(choice, "tiled") != 0 && strcmp(choice, "blocked") != 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "NPU_VULKAN_SHADERS is '%s': it must be 'tiled' or 'blocked'", choice);
  device->tiled_shaders = strcmp(choice, "tiled") == 0;
  if (device->tiled_shaders && !tiled_fits)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                         "NPU_VULKAN_SHADERS=tiled: Vulkan device '%s' has no workgroups of "
                         "%u x %u invocations with %u bytes of shared memory",
                         device->properties.deviceName, TILED_SIDE, TILED_SIDE,
                         TILED_SHARED_BYTES);
  return NPU_OK;
}

/* A sub-allocator per memory type, never taking more than the type's heap. */
static void init_heaps(npu_hal_device *device)
{
  for (uint32_t t = 0; t < VK_MAX_MEMORY_TYPES; t++) {
    const VkMemoryType *type = &device->memory.memoryTypes[t];
    bool known = t < device->memory.memoryTypeCount;
    VkDeviceSize budget = known ? device->memory.memoryHeaps[type->heapIndex].size : 0;
    VkDeviceSize block = device->max_allocation < VK_HEAP_BLOCK_BYTES ? device->max_allocation
                                                                     : VK_HEAP_BLOCK_BYTES;
    vk_heap_init(&device->heaps[t], t,
                 known && (type->propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT), block,
                 budget);
  }
}

/* 4 copies of every byte value, so that a fill's unaligned edges are copies. */
static npu_status make_byte_patterns(npu_hal_device *device)
{
  npu_status status = vk_buffer_create(device, 1024, true, &device->byte_patterns);
  if (status != NPU_OK)
    return status;
  uint8_t *bytes = device->byte_patterns->mapped;
  for (int i = 0; i < 1024; i++)
    bytes[i] = (uint8_t)(i / 4);
  return NPU_OK;
}

npu_status vk_device_open(uint32_t index, npu_hal_device **out)
{
  if (index >= vk_device_count())
    return npu_set_error(NPU_ERROR_NOT_FOUND, "the Vulkan backend has %u device(s), not %u%s%s",
                         vk_device_count(), index, vk_instance.failure[0] ? ": " : "",
                         vk_instance.failure);
  npu_hal_device *device = calloc(1, sizeof *device);
  if (!device)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory opening a Vulkan device");
  pthread_mutex_lock(&vk_instance.lock);
  vk_instance.open_devices++;
  device->instance = vk_instance.instance;
  device->physical = vk_instance.physical[index];
  device->queue_family = vk_instance.queue_family[index];
  pthread_mutex_unlock(&vk_instance.lock);
  pthread_mutex_init(&device->queue_lock, NULL);
  pthread_mutex_init(&device->pipelines_lock, NULL);
  pthread_mutex_init(&device->recordings_lock, NULL);
  vkGetPhysicalDeviceProperties(device->physical, &device->properties);
  vkGetPhysicalDeviceMemoryProperties(device->physical, &device->memory);
  VkPhysicalDeviceMaintenance3Properties maintenance3 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceProperties2 props2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                        .pNext = &maintenance3};
  vkGetPhysicalDeviceProperties2(device->physical, &props2);
  device->max_allocation = maintenance3.maxMemoryAllocationSize;
  VkQueueFamilyProperties families[16];
  uint32_t family_count = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(device->physical, &family_count, families);
  device->timestamps = device->queue_family < family_count &&
                       families[device->queue_family].timestampValidBits > 0;
  if (device->timestamps) {
    uint32_t bits = families[device->queue_family].timestampValidBits;
    device->timestamp_mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  }

  npu_status status = choose_shaders(device);
  if (status == NPU_OK)
    status = create_logical_device(device);
  init_heaps(device);
  if (status == NPU_OK)
    status = choose_memory_types(device);
  if (status == NPU_OK && device->dma_buf)
    vk_dma_buf_init(device);
  if (status == NPU_OK)
    status = vk_pipeline_cache_open(device);
  if (status == NPU_OK)
    status = make_byte_patterns(device);
  if (status == NPU_OK)
    status = vk_stream_create(device, &device->sync_stream);
  if (status != NPU_OK) {
    vk_device_close(device);
    return status;
  }
  *out = device;
  return NPU_OK;
}

void vk_device_close(npu_hal_device *device)
{
  if (device->sync_stream)
    vk_stream_destroy(device->sync_stream);
  if (device->device) {
    vkDeviceWaitIdle(device->device);
    vk_pipelines_destroy(device);
    vk_vpp_destroy(device);
    if (device->byte_patterns)
      vk_buffer_destroy(device, device->byte_patterns);
  }
  vk_pipeline_cache_close(device);
  /* (blocks exist only where the logical device does) */
  for (uint32_t t = 0; t < VK_MAX_MEMORY_TYPES; t++)
    vk_heap_destroy(device->device, &device->heaps[t]);
  if (device->device)
    vkDestroyDevice(device->device, NULL);
  pthread_mutex_destroy(&device->pipelines_lock);
  pthread_mutex_destroy(&device->recordings_lock);
  pthread_mutex_destroy(&device->queue_lock);
  pthread_mutex_lock(&vk_instance.lock);
  vk_instance.open_devices--;
  pthread_mutex_unlock(&vk_instance.lock);
  free(device);
}

void vk_device_properties(npu_hal_device *device, npu_device_properties *props)
{
  /* Device names run to 256 bytes; the runtime keeps 64. */
  size_t length = strnlen(device->properties.deviceName, sizeof props->name - 1);
  memcpy(props->name, device->properties.deviceName, length);
  props->name[length] = '\0';
  snprintf(props->backend, sizeof props->backend, "vulkan");
  uint64_t total = 0;
  for (uint32_t h = 0; h < device->memory.memoryHeapCount; h++)
    if (device->memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      total += device->memory.memoryHeaps[h].size;
  uint64_t in_use = atomic_load(&device->bytes_in_use);
  props->memory_total = total;
  props->memory_free = in_use < total ? total - in_use : 0;
  props->compute_units = 1; /* one compute queue */
  /* Image planes are bound as storage buffers at their offsets. */
  VkDeviceSize align = device->properties.limits.minStorageBufferOffsetAlignment;
  props->row_alignment = align > 0 && align <= 4096 ? (uint32_t)align : 1;
  props->caps = (npu_device_caps){
      .host_visible_memory = device->host_visible,
      .host_import = device->host_import_alignment > 0,
      /* Device buffers exported as dma-bufs where the driver has them. */
      .fd_export = device->dma_buf_export,
      .dmabuf_export = device->dma_buf_export,
      /* A dma-buf imported as one where the driver takes it; other fds (and
       * dma-bufs elsewhere) are mapped and their pages imported as host memory. */
      .fd_import = device->host_import_alignment > 0 || device->dma_buf_import,
      .async_copy = true,
      .cross_stream_events = true,
      .bf16_compute = false, /* its shaders compute float32: NPU_PRECISION_BF16 is ignored */
  };
}
