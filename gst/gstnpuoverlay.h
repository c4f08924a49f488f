/* npuoverlay: draws the frame's regions of interest and their results. */
#ifndef GST_NPU_OVERLAY_H
#define GST_NPU_OVERLAY_H

#include <gst/video/gstvideofilter.h>

G_BEGIN_DECLS

#define GST_TYPE_NPU_OVERLAY (gst_npu_overlay_get_type())
G_DECLARE_FINAL_TYPE(GstNpuOverlay, gst_npu_overlay, GST, NPU_OVERLAY, GstVideoFilter)

GST_ELEMENT_REGISTER_DECLARE(npuoverlay);

G_END_DECLS

#endif
