/* nputrack: multi-object tracking of each stream's regions of interest. */
#ifndef GST_NPU_TRACK_H
#define GST_NPU_TRACK_H

#include "gstnpustreamfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_NPU_TRACK (gst_npu_track_get_type())
G_DECLARE_FINAL_TYPE(GstNpuTrack, gst_npu_track, GST, NPU_TRACK, GstNpuStreamFilter)

GST_ELEMENT_REGISTER_DECLARE(nputrack);

G_END_DECLS

#endif
