/* The driver's pipeline cache kept on disk, so that a second process skips
 * the driver's shader compiles: $XDG_CACHE_HOME/gst-npu (else
 * ~/.cache/gst-npu)/vulkan-pipelines-<deviceUUID>.bin, read when the device
 * opens and written after pipelines are made. The file is our header (the
 * device, driver and cache UUID it was made by, the data's size and a
 * checksum) and the driver's data; a file that fails any check is ignored
 * with a warning on stderr (and replaced by the next save). Written to a
 * temporary file and renamed, so that processes saving at once never leave
 * a torn file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vk_internal.h"

#define CACHE_MAGIC "NPUVKPC"
#define CACHE_FORMAT 1u

typedef struct cache_header {
  char magic[8];
  uint32_t format;
  uint32_t vendor_id, device_id, driver_version;
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE];
  uint64_t data_bytes;
  uint64_t checksum; /* FNV-1a of the data */
} cache_header;

static uint64_t fnv1a(const uint8_t *bytes, size_t count)
{
  uint64_t hash = 0xcbf29ce484222325u;
  for (size_t i = 0; i < count; i++)
    hash = (hash ^ bytes[i]) * 0x100000001b3u;
  return hash;
}

static cache_header header_of(const npu_hal_device *device, uint64_t data_bytes,
                              uint64_t checksum)
{
  cache_header header = {.magic = CACHE_MAGIC, .format = CACHE_FORMAT,
                         .vendor_id = device->properties.vendorID,
                         .device_id = device->properties.deviceID,
                         .driver_version = device->properties.driverVersion,
                         .data_bytes = data_bytes, .checksum = checksum};
  memcpy(header.pipeline_cache_uuid, device->properties.pipelineCacheUUID, VK_UUID_SIZE);
  return header;
}

/* The cache file's path for the device, or false where there is no cache
 * directory (no XDG_CACHE_HOME nor HOME). */
static bool cache_path(npu_hal_device *device, char *path, size_t size)
{
  VkPhysicalDeviceIDProperties ids = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                       .pNext = &ids};
  vkGetPhysicalDeviceProperties2(device->physical, &props);
  char uuid[2 * VK_UUID_SIZE + 1];
  for (uint32_t i = 0; i < VK_UUID_SIZE; i++)
    snprintf(uuid + 2 * i, 3, "%02x", ids.deviceUUID[i]);
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int length;
  if (xdg && xdg[0])
    length = snprintf(path, size, "%s/gst-npu/vulkan-pipelines-%s.bin", xdg, uuid);
  else if (home && home[0])
    length = snprintf(path, size, "%s/.cache/gst-npu/vulkan-pipelines-%s.bin", home, uuid);
  else
    return false;
  return length > 0 && (size_t)length < size;
}

static void warn(const char *path, const char *why)
{
  fprintf(stderr, "gst-npu: warning: ignoring the Vulkan pipeline cache %s: %s\n", path, why);
}

/* The driver's data from the file, checked; NULL (with *why, when the file
 * exists) where it cannot be used. */
static void *read_cache(npu_hal_device *device, const char *path, size_t *bytes,
                        const char **why)
{
  *why = NULL;
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL; /* none yet */
  cache_header header;
  void *data = NULL;
  if (fread(&header, sizeof header, 1, file) != 1 ||
      memcmp(header.magic, CACHE_MAGIC, sizeof header.magic) != 0 ||
      header.format != CACHE_FORMAT) {
    *why = "not a gst-npu pipeline cache (bad header)";
  } else if (header.vendor_id != device->properties.vendorID ||
             header.device_id != device->properties.deviceID ||
             header.driver_version != device->properties.driverVersion ||
             memcmp(header.pipeline_cache_uuid, device->properties.pipelineCacheUUID,
                    VK_UUID_SIZE) != 0) {
    *why = "made by another device or driver version";
  } else if (header.data_bytes == 0 || header.data_bytes > ((uint64_t)1 << 30) ||
             !(data = malloc(header.data_bytes))) {
    *why = "an unlikely size";
  } else if (fread(data, header.data_bytes, 1, file) != 1 || fgetc(file) != EOF) {
    *why = "truncated or too long";
  } else if (fnv1a(data, header.data_bytes) != header.checksum) {
    *why = "its checksum does not match";
  }
  fclose(file);
  if (*why) {
    free(data);
    return NULL;
  }
  *bytes = header.data_bytes;
  return data;
}

npu_status vk_pipeline_cache_open(npu_hal_device *device)
{
  size_t bytes = 0;
  void *data = NULL;
  if (cache_path(device, device->pipeline_cache_path, sizeof device->pipeline_cache_path)) {
    const char *why;
    data = read_cache(device, device->pipeline_cache_path, &bytes, &why);
    if (why)
      warn(device->pipeline_cache_path, why);
  } else {
    device->pipeline_cache_path[0] = '\0';
  }
  VkPipelineCacheCreateInfo info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                    .initialDataSize = bytes, .pInitialData = data};
  VkResult result = vkCreatePipelineCache(device->device, &info, NULL, &device->pipeline_cache);
  if (result != VK_SUCCESS && data) { /* the driver refused the data: start empty */
    warn(device->pipeline_cache_path, "the driver refused its data");
    info.initialDataSize = 0;
    info.pInitialData = NULL;
    bytes = 0;
    result = vkCreatePipelineCache(device->device, &info, NULL, &device->pipeline_cache);
  }
  free(data);
  if (result != VK_SUCCESS) {
    device->pipeline_cache = VK_NULL_HANDLE;
    return npu_set_error(vk_status_of(result), "Vulkan device '%s': cannot create a pipeline "
                         "cache: %s", device->properties.deviceName, vk_result_name(result));
  }
  device->pipeline_cache_loaded = bytes;
  return NPU_OK;
}

static bool make_directories(const char *path)
{
  char dir[sizeof ((npu_hal_device *)0)->pipeline_cache_path];
  snprintf(dir, sizeof dir, "%s", path);
  for (char *slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    bool made = mkdir(dir, 0755) == 0 || errno == EEXIST;
    *slash = '/';
    if (!made)
      return false;
  }
  return true;
}

void vk_pipeline_cache_save(npu_hal_device *device)
{
  const char *path = device->pipeline_cache_path;
  if (!path[0] || !device->pipeline_cache)
    return;
  size_t bytes = 0;
  void *data = NULL;
  VkResult result = vkGetPipelineCacheData(device->device, device->pipeline_cache, &bytes, NULL);
  if (result == VK_SUCCESS && bytes > 0 && (data = malloc(bytes)))
    result = vkGetPipelineCacheData(device->device, device->pipeline_cache, &bytes, data);
  char temporary[sizeof device->pipeline_cache_path + 32];
  snprintf(temporary, sizeof temporary, "%s.%ld.tmp", path, (long)getpid());
  FILE *file = NULL;
  bool saved = result == VK_SUCCESS && data && make_directories(path) &&
               (file = fopen(temporary, "wb"));
  if (saved) {
    cache_header header = header_of(device, bytes, fnv1a(data, bytes));
    saved = fwrite(&header, sizeof header, 1, file) == 1 && fwrite(data, bytes, 1, file) == 1;
    saved = fclose(file) == 0 && saved;
    saved = saved && rename(temporary, path) == 0;
    if (!saved)
      unlink(temporary);
  }
  if (!saved && data)
    fprintf(stderr, "gst-npu: warning: cannot save the Vulkan pipeline cache %s: %s\n", path,
            result != VK_SUCCESS ? vk_result_name(result) : strerror(errno));
  free(data);
}

void vk_pipeline_cache_close(npu_hal_device *device)
{
  if (device->pipeline_cache)
    vkDestroyPipelineCache(device->device, device->pipeline_cache, NULL);
  device->pipeline_cache = VK_NULL_HANDLE;
}
