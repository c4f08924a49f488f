/* DRM render and accel node discovery. Render nodes come from libdrm's
 * drmGetDevices2(); accel nodes (/dev/accel, Linux 6.2+) are not known to
 * libdrm 2.4.114, so they are listed from the directory. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "npu_hal.h"

#ifdef NPU_HAVE_DRM
#include <xf86drm.h>

static void read_driver_name(const char *path, char *driver, size_t size)
{
  driver[0] = '\0';
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return;
  drmVersionPtr version = drmGetVersion(fd);
  if (version) {
    snprintf(driver, size, "%s", version->name);
    drmFreeVersion(version);
  }
  close(fd);
}

static void add_node(npu_drm_node *nodes, uint32_t capacity, uint32_t *count,
                     const npu_drm_node *node)
{
  if (*count < capacity)
    nodes[*count] = *node;
  (*count)++;
}

static void list_render_nodes(npu_drm_node *nodes, uint32_t capacity, uint32_t *count)
{
  drmDevicePtr devices[64];
  int found = drmGetDevices2(0, devices, 64);
  for (int i = 0; i < found; i++) {
    drmDevicePtr dev = devices[i];
    if (!(dev->available_nodes & (1 << DRM_NODE_RENDER)))
      continue;
    npu_drm_node node = {0};
    snprintf(node.path, sizeof node.path, "%s", dev->nodes[DRM_NODE_RENDER]);
    snprintf(node.kind, sizeof node.kind, "render");
    read_driver_name(node.path, node.driver, sizeof node.driver);
    if (dev->bustype == DRM_BUS_PCI) {
      drmPciBusInfoPtr bus = dev->businfo.pci;
      snprintf(node.bus, sizeof node.bus, "pci %04x:%02x:%02x.%u", bus->domain, bus->bus,
               bus->dev, bus->func);
      node.vendor_id = dev->deviceinfo.pci->vendor_id;
      node.device_id = dev->deviceinfo.pci->device_id;
    } else if (dev->bustype == DRM_BUS_PLATFORM) {
      snprintf(node.bus, sizeof node.bus, "platform");
    }
    add_node(nodes, capacity, count, &node);
  }
  if (found > 0)
    drmFreeDevices(devices, found);
}

static void list_accel_nodes(npu_drm_node *nodes, uint32_t capacity, uint32_t *count)
{
  DIR *dir = opendir("/dev/accel");
  if (!dir)
    return;
  struct dirent *entry;
  while ((entry = readdir(dir))) {
    if (strncmp(entry->d_name, "accel", 5) != 0)
      continue;
    npu_drm_node node = {0};
    snprintf(node.path, sizeof node.path, "/dev/accel/%.40s", entry->d_name);
    snprintf(node.kind, sizeof node.kind, "accel");
    read_driver_name(node.path, node.driver, sizeof node.driver);
    add_node(nodes, capacity, count, &node);
  }
  closedir(dir);
}
#endif

NPU_API npu_status npu_drm_nodes(npu_drm_node *nodes, uint32_t capacity, uint32_t *count)
{
  if (!count || (capacity && !nodes))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_drm_nodes: count is NULL, or nodes "
                                                     "is NULL with a non-zero capacity");
#ifdef NPU_HAVE_DRM
  *count = 0;
  list_render_nodes(nodes, capacity, count);
  list_accel_nodes(nodes, capacity, count);
  return NPU_OK;
#else
  *count = 0;
  return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "built without libdrm: no DRM discovery");
#endif
}
