/* Where npuoverlay paints: a video frame seen as one Cairo surface in
 * frame pixels, whatever its format. BGRx/BGRA frames are painted on in
 * place; any other raw format gets each shape painted on a small ARGB
 * rectangle of its own (its bounds) and blended in at the end
 * (GstVideoOverlayComposition), so a shape costs its bounds, not the
 * frame. */
#ifndef GST_NPU_OVERLAY_CANVAS_H
#define GST_NPU_OVERLAY_CANVAS_H

#include <cairo.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

typedef struct _GstNpuOverlayCanvas GstNpuOverlayCanvas;

/* Paints one shape on @cr, in frame pixels. */
typedef void (*GstNpuOverlayPaint)(cairo_t *cr, gconstpointer shape);

/* A canvas on @frame (mapped writable, kept until the end). */
GstNpuOverlayCanvas *gst_npu_overlay_canvas_begin(GstVideoFrame *frame);

/* Paints @shape, all of whose ink lies within x0 <= x < x1, y0 <= y < y1
 * (frame pixels; beyond the frame is cut). */
void gst_npu_overlay_canvas_paint(GstNpuOverlayCanvas *canvas, double x0, double y0, double x1,
                                  double y1, GstNpuOverlayPaint paint, gconstpointer shape);

/* Puts what was painted into the frame and frees the canvas. */
void gst_npu_overlay_canvas_end(GstNpuOverlayCanvas *canvas);

G_END_DECLS

#endif
