/* GstNpuBaseTransform: what npuupload, npudownload and npuvpp share: the
 * device (chosen by device-id or shared through a "gst.npu.device"
 * GstContext), a runtime stream of the element's own, and the read-only
 * `stats` property. */
#ifndef GST_NPU_BASE_TRANSFORM_H
#define GST_NPU_BASE_TRANSFORM_H

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <npu/npu.h>

#include "gstnpumemorytransfer.h"

G_BEGIN_DECLS

#define GST_TYPE_NPU_BASE_TRANSFORM (gst_npu_base_transform_get_type())
G_DECLARE_DERIVABLE_TYPE(GstNpuBaseTransform, gst_npu_base_transform, GST, NPU_BASE_TRANSFORM,
                         GstBaseTransform)

struct _GstNpuBaseTransformClass {
  GstBaseTransformClass parent_class;
};

/* Valid between start and stop. */
npu_device *gst_npu_base_transform_get_device(GstNpuBaseTransform *self);
npu_stream *gst_npu_base_transform_get_stream(GstNpuBaseTransform *self);
GstAllocator *gst_npu_base_transform_get_allocator(GstNpuBaseTransform *self);

/* After a frame's work is queued on the stream: waits until at most a few
 * frames' work is queued (else a producer faster than the device queues
 * work, and the buffers it holds, without end); posts an element error and
 * returns FALSE if the stream fails. */
gboolean gst_npu_base_transform_end_frame(GstNpuBaseTransform *self);

/* Whether `buffer` holds a whole frame of `info`, its planes where its
 * video meta (or `info`) puts them; posts an element error saying what is
 * wrong otherwise (a buffer smaller than its caps or its meta say, a meta
 * that contradicts the caps). */
gboolean gst_npu_base_transform_check_frame(GstNpuBaseTransform *self, const GstVideoInfo *info,
                                            GstBuffer *buffer);

/* Counters shown in `stats`. */
typedef enum {
  GST_NPU_FRAME_ZERO_COPY, /* passed on in place or imported without copy */
  GST_NPU_FRAME_COPIED,    /* went through a copy */
  GST_NPU_FRAME_PROCESSED, /* ran a device kernel */
  GST_NPU_PLANE_COPIED_2D, /* a plane copied between layouts in one pitched (2D) copy */
  GST_NPU_FRAME_COUNTER_COUNT,
} GstNpuFrameCounter;

void gst_npu_base_transform_count_frame(GstNpuBaseTransform *self, GstNpuFrameCounter counter);

/* Offers/decides a GstNpuBufferPool for `caps` in an allocation query. */
gboolean gst_npu_base_transform_offer_pool(GstNpuBaseTransform *self, GstQuery *query,
                                           GstCaps *caps, gboolean remember_for_stats);

/* Adds "sink" and "src" always-pad templates: the VPP's formats as
 * video/x-raw in the memory kinds given, in the order NPU, system, DMABuf. */
void gst_npu_element_class_add_pad_templates(GstElementClass *klass, GstNpuMemoryKinds sink,
                                             GstNpuMemoryKinds src);

G_END_DECLS

#endif
