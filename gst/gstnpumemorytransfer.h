/* Caps transforms shared by npuupload, npudownload and the pad templates:
 * the same video caps with the memory feature swapped. */
#ifndef GST_NPU_MEMORY_TRANSFER_H
#define GST_NPU_MEMORY_TRANSFER_H

#include <gst/gst.h>

/* Where frames live, as told by a caps structure's features (flags). */
typedef enum {
  GST_NPU_MEMORY_NPU = 1 << 0,    /* memory:NPUMemory */
  GST_NPU_MEMORY_SYSTEM = 1 << 1, /* no memory feature */
  GST_NPU_MEMORY_DMABUF = 1 << 2, /* memory:DMABuf (fd memories) */
} GstNpuMemoryKinds;

/* Each structure of `caps` in every kind its own kind maps to (from_npu for
 * NPU memory, ...), all structures of one kind before the next, in the order
 * NPU, system, DMABuf; then intersected with `filter` (may be NULL). */
GstCaps *gst_npu_caps_with_memory(GstCaps *caps, GstNpuMemoryKinds from_npu,
                                  GstNpuMemoryKinds from_system, GstNpuMemoryKinds from_dmabuf,
                                  GstCaps *filter);

/* The kind of memory negotiated caps carry. */
GstNpuMemoryKinds gst_npu_caps_memory_kind(GstCaps *caps);

#endif
