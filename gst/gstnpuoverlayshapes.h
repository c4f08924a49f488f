/* What npuoverlay draws for each kind of result, on a canvas in frame
 * pixels: region boxes and captions, object trails, counting lines with
 * their direction, zones, class maps, instance masks and keypoints. */
#ifndef GST_NPU_OVERLAY_SHAPES_H
#define GST_NPU_OVERLAY_SHAPES_H

#include <pango/pangocairo.h>

#include "gstnpuoverlaycanvas.h"

G_BEGIN_DECLS

typedef struct {
  double x, y;
} GstNpuOverlayPoint;

typedef struct {
  double r, g, b;
} GstNpuOverlayColour;

/* A bright colour per name (a label, a line's or a zone's), the same on
 * every frame; and one per number (an object id, a class id). */
GstNpuOverlayColour gst_npu_overlay_colour_of_name(const gchar *name);
GstNpuOverlayColour gst_npu_overlay_colour_of_number(guint64 number);

/* A box's outline, @line pixels wide inside the box. */
void gst_npu_overlay_draw_box(GstNpuOverlayCanvas *canvas, double x, double y, double w,
                              double h, double line, GstNpuOverlayColour colour);

/* @text in black on a box of @colour whose top-left corner is at (x, y),
 * or, when @above, whose bottom-left corner is there and, where that
 * leaves the frame, inside below it. */
void gst_npu_overlay_draw_caption(GstNpuOverlayCanvas *canvas, PangoLayout *layout,
                                  const gchar *text, double x, double y, gboolean above,
                                  GstNpuOverlayColour colour);

/* A path through @count points (nothing under 2). */
void gst_npu_overlay_draw_trail(GstNpuOverlayCanvas *canvas, const GstNpuOverlayPoint *points,
                                guint count, double line, GstNpuOverlayColour colour);

/* A counting line from @a to @b, an arrow from its middle across it in
 * its forward direction (from the side where cross(b - a, p - a) > 0), and
 * @text by the arrow. */
void gst_npu_overlay_draw_counting_line(GstNpuOverlayCanvas *canvas, PangoLayout *layout,
                                        GstNpuOverlayPoint a, GstNpuOverlayPoint b,
                                        const gchar *text, double line,
                                        GstNpuOverlayColour colour);

/* A polygon zone: a translucent fill, its outline and @text at its
 * top-left bound. */
void gst_npu_overlay_draw_zone(GstNpuOverlayCanvas *canvas, PangoLayout *layout,
                               const GstNpuOverlayPoint *corners, guint count, const gchar *text,
                               double line, GstNpuOverlayColour colour);

/* A raster of @width x @height bytes stretched over the box (x, y, w, h),
 * blended at @alpha: a class map (a colour per class id, class 0 the
 * background left clear) or, with @mask_colour, an instance mask (0
 * clear, anything else that colour). */
void gst_npu_overlay_draw_raster(GstNpuOverlayCanvas *canvas, double x, double y, double w,
                                 double h, const guint8 *data, gint width, gint height,
                                 double alpha, const GstNpuOverlayColour *mask_colour);

/* Dots at the @count points of at least @threshold confidence and, for
 * COCO's 17 keypoints, the limbs between two such points. */
void gst_npu_overlay_draw_keypoints(GstNpuOverlayCanvas *canvas, const GstNpuOverlayPoint *points,
                                    const double *confidence, guint count, double threshold,
                                    double line, GstNpuOverlayColour colour);

G_END_DECLS

#endif
