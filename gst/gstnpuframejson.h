/* A frame's results as one JSON object (npumetaconvert's lines,
 * npupublish's messages): pts, stream, every region of interest with its
 * box and params, and the frame metas of nputrack ("tracking") and
 * npuanalytics ("analytics"). */
#ifndef GST_NPU_FRAME_JSON_H
#define GST_NPU_FRAME_JSON_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* The stream a frame belongs to: npuinfer's sink pad index from its tensor
 * meta, else -1. */
gint gst_npu_frame_stream(GstBuffer *buffer);

gchar *gst_npu_frame_to_json(GstBuffer *buffer);

G_END_DECLS

#endif
