/* GstNpuMemory: GstMemory over a runtime device buffer (caps feature
 * memory:NPUMemory), and its allocator. */
#ifndef GST_NPU_MEMORY_H
#define GST_NPU_MEMORY_H

#include <gst/gst.h>
#include <npu/npu.h>

G_BEGIN_DECLS

#define GST_CAPS_FEATURE_MEMORY_NPU "memory:NPUMemory"
#define GST_NPU_MEMORY_TYPE_NAME "NPUMemory"

/* The runtime device as a GBoxed type (copy = retain, free = release), so it
 * can travel in GstContext and GstStructure. */
typedef npu_device GstNpuDevice;
#define GST_TYPE_NPU_DEVICE (gst_npu_device_get_type())
GType gst_npu_device_get_type(void);

#define GST_TYPE_NPU_ALLOCATOR (gst_npu_allocator_get_type())
G_DECLARE_FINAL_TYPE(GstNpuAllocator, gst_npu_allocator, GST, NPU_ALLOCATOR, GstAllocator)

/* An allocator for `device` (one reference taken). */
GstAllocator *gst_npu_allocator_new(npu_device *device);
npu_device *gst_npu_allocator_get_device(GstAllocator *allocator);

/* Wraps `buffer` (ownership taken) as a GstMemory of `size` bytes. */
GstMemory *gst_npu_memory_wrap(GstAllocator *allocator, npu_buffer *buffer, gsize size);

gboolean gst_is_npu_memory(GstMemory *mem);

/* True when every memory of `buffer` is NPU memory of `device`. */
gboolean gst_npu_buffer_is_on_device(GstBuffer *buffer, npu_device *device);

/* The device buffer behind an NPU memory (no reference taken). Before using
 * it on a stream, call gst_npu_memory_sync_for_device(); after writing it on
 * a stream, call gst_npu_memory_mark_written(). */
npu_buffer *gst_npu_memory_get_buffer(GstMemory *mem);

/* Makes `stream` wait (on the device) for the memory's last device write and
 * pushes any pending CPU writes to the device. */
gboolean gst_npu_memory_sync_for_device(GstMemory *mem, npu_stream *stream);

/* Records that `stream` has work queued that writes the memory: CPU maps
 * wait for it, and any staging copy is stale. */
gboolean gst_npu_memory_mark_written(GstMemory *mem, npu_stream *stream);

G_END_DECLS

#endif
