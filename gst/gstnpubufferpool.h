/* GstNpuBufferPool: video buffers in device memory from a runtime memory
 * pool, with GstVideoMeta. */
#ifndef GST_NPU_BUFFER_POOL_H
#define GST_NPU_BUFFER_POOL_H

#include <gst/video/video.h>
#include <npu/npu.h>

G_BEGIN_DECLS

#define GST_TYPE_NPU_BUFFER_POOL (gst_npu_buffer_pool_get_type())
G_DECLARE_FINAL_TYPE(GstNpuBufferPool, gst_npu_buffer_pool, GST, NPU_BUFFER_POOL, GstBufferPool)

/* A pool of `device` memory; a failed allocation is an element error of
 * `owner` (the element that offered the pool), which says why: the pool's
 * users (a source activating it) only see not-negotiated. */
GstBufferPool *gst_npu_buffer_pool_new(npu_device *device, GstElement *owner);

/* Device-pool statistics (allocations, hits, bytes), for the elements' stats. */
gboolean gst_npu_buffer_pool_get_stats(GstBufferPool *pool, npu_mem_pool_stats *stats);

G_END_DECLS

#endif
