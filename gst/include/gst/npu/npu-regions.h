/* The frame's regions of interest for language bindings (the GstNpu-1.0
 * typelib: Python's gi.repository.GstNpu), which cannot iterate a buffer's
 * metas nor read a region's params list: npudecode's results are
 * GstVideoRegionOfInterestMeta params (classification, detection,
 * text-region, text, segmentation, keypoints, mask). C code uses
 * GStreamer's own calls instead. */
#ifndef GST_NPU_REGIONS_H
#define GST_NPU_REGIONS_H

#include <gst/video/video.h>

G_BEGIN_DECLS

GList *gst_buffer_get_npu_region_metas(GstBuffer *buffer);
GList *gst_npu_region_get_params(GstVideoRegionOfInterestMeta *region);

G_END_DECLS

#endif
