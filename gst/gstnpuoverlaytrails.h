/* npuoverlay's memory of where each tracked object has been: per stream,
 * the last points of each object id, oldest first. An object is
 * forgotten when its track ends or when it has not been seen for as many
 * frames of its stream as a trail holds points. */
#ifndef GST_NPU_OVERLAY_TRAILS_H
#define GST_NPU_OVERLAY_TRAILS_H

#include "gstnpuoverlayshapes.h"

G_BEGIN_DECLS

typedef struct _GstNpuOverlayTrails GstNpuOverlayTrails;

typedef struct {
  guint64 id;
  GstNpuOverlayPoint at;
} GstNpuOverlaySighting;

GstNpuOverlayTrails *gst_npu_overlay_trails_new(void);
void gst_npu_overlay_trails_free(GstNpuOverlayTrails *trails);
/* Forgets every stream. */
void gst_npu_overlay_trails_clear(GstNpuOverlayTrails *trails);

/* One frame of @stream: where its objects are (@seen), which tracks
 * ended (@ended ids); trails keep their last @length points. */
void gst_npu_overlay_trails_update(GstNpuOverlayTrails *trails, gint stream,
                                   const GstNpuOverlaySighting *seen, guint n_seen,
                                   const guint64 *ended, guint n_ended, guint length);

/* Calls @visit with each object's trail of @stream (points oldest first). */
typedef void (*GstNpuOverlayTrailVisit)(guint64 id, const GstNpuOverlayPoint *points,
                                        guint count, gpointer data);
void gst_npu_overlay_trails_foreach(GstNpuOverlayTrails *trails, gint stream,
                                    GstNpuOverlayTrailVisit visit, gpointer data);

G_END_DECLS

#endif
