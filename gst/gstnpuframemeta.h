/* Results that belong to a frame rather than to one region: nputrack's
 * ended tracks, npuanalytics' counts and events. Each is a GstCustomMeta
 * (its GstStructure readable by any GStreamer code with
 * gst_buffer_get_custom_meta (buffer, name)) registered by the plugin. */
#ifndef GST_NPU_FRAME_META_H
#define GST_NPU_FRAME_META_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* "tracking": ended (array of "track" structures: object-id, label, x, y, w, h, hits, age) */
#define GST_NPU_TRACKING_META_NAME "GstNpuTrackingMeta"
/* "analytics": lines, zones (their counts) and events (arrays of structures) */
#define GST_NPU_ANALYTICS_META_NAME "GstNpuAnalyticsMeta"

void gst_npu_frame_meta_register(void);

/* The frame's structure of that meta, added first when missing; @buffer
 * must be writable. */
GstStructure *gst_npu_frame_meta_get_or_add(GstBuffer *buffer, const gchar *meta_name);

/* Appends @item (taken) to the array field @field of @structure. */
void gst_npu_structure_append(GstStructure *structure, const gchar *field, GstStructure *item);

G_END_DECLS

#endif
