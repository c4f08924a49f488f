/* GStreamer video frames as the runtime's VPP images. */
#ifndef GST_NPU_VIDEO_H
#define GST_NPU_VIDEO_H

#include <gst/video/video.h>
#include <npu/npu.h>

G_BEGIN_DECLS

/* The VPP's format code for a GStreamer video format, 0 when it has none. */
uint32_t gst_npu_format_of(GstVideoFormat format);

/* Describes the frame of `info` (planes placed by `meta` when there is one)
 * whose bytes start `offset` bytes into the device buffer `memory`. */
gboolean gst_npu_image_describe(const GstVideoInfo *info, const GstVideoMeta *meta,
                                npu_buffer *memory, gsize offset, npu_image *image);

G_END_DECLS

#endif
