/* The Vulkan compute backend's entries: devices (vk_device.c), memory and
 * copies (vk_memory.c), imports and exports (vk_import.c), streams and events (vk_stream.c), graph kernels
 * (vk_kernels.c), the VPP (vk_vpp.c). */
#include "vk_internal.h"

const npu_hal_backend npu_vulkan_backend = {
    .name = "vulkan",
    .device_count = vk_device_count,
    .device_open = vk_device_open,
    .device_close = vk_device_close,
    .device_properties = vk_device_properties,
    .buffer_alloc = vk_buffer_alloc,
    .buffer_free = vk_buffer_free,
    .buffer_host_ptr = vk_buffer_host_ptr,
    .buffer_import_host = vk_buffer_import_host,
    .buffer_export_fd = vk_buffer_export_fd,
    .buffer_import_fd = vk_buffer_import_fd,
    .host_alloc = vk_host_alloc,
    .host_free = vk_host_free,
    .copy = vk_copy,
    .fill = vk_fill,
    .stream_create = vk_stream_create,
    .stream_destroy = vk_stream_destroy,
    .stream_submit = vk_stream_host_fn,
    .stream_synchronize = vk_stream_synchronize,
    .stream_idle = vk_stream_idle,
    .stream_wait_event = vk_stream_wait_event,
    .stream_stats = vk_stream_stats,
    .event_create = vk_event_create,
    .event_destroy = vk_event_destroy,
    .event_record = vk_event_record,
    .event_synchronize = vk_event_synchronize,
    .event_done = vk_event_done,
    .event_elapsed_ms = vk_event_elapsed_ms,
    .vpp = &npu_vulkan_vpp_ops,
    .graph = &npu_vulkan_graph_ops,
};
