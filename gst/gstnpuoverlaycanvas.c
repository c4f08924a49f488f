#include "gstnpuoverlaycanvas.h"

#include <math.h>

struct _GstNpuOverlayCanvas {
  GstVideoFrame *frame;
  /* in place: a surface on the frame's pixels */
  cairo_surface_t *surface;
  cairo_t *cr;
  /* blended: the rectangles painted so far */
  GstVideoOverlayComposition *composition;
};

GstNpuOverlayCanvas *gst_npu_overlay_canvas_begin(GstVideoFrame *frame)
{
  GstNpuOverlayCanvas *canvas = g_new0(GstNpuOverlayCanvas, 1);
  canvas->frame = frame;
  GstVideoFormat format = GST_VIDEO_FRAME_FORMAT(frame);
  if (format == GST_VIDEO_FORMAT_BGRx || format == GST_VIDEO_FORMAT_BGRA) {
    canvas->surface = cairo_image_surface_create_for_data(
        GST_VIDEO_FRAME_PLANE_DATA(frame, 0),
        format == GST_VIDEO_FORMAT_BGRA ? CAIRO_FORMAT_ARGB32 : CAIRO_FORMAT_RGB24,
        GST_VIDEO_FRAME_WIDTH(frame), GST_VIDEO_FRAME_HEIGHT(frame),
        GST_VIDEO_FRAME_PLANE_STRIDE(frame, 0));
    canvas->cr = cairo_create(canvas->surface);
  }
  return canvas;
}

/* @v within 0..@extent; 0 for NaN. */
static double clamp_to(double v, double extent)
{
  return v >= 0 ? MIN(v, extent) : 0;
}

/* Blended: a transparent rectangle of the shape's bounds within the frame,
 * the shape painted on it, added to the composition. */
static void paint_rectangle(GstNpuOverlayCanvas *canvas, double x0, double y0, double x1,
                            double y1, GstNpuOverlayPaint paint, gconstpointer shape)
{
  /* bounds as large as a double holds are cut before they become ints */
  gdouble width = GST_VIDEO_FRAME_WIDTH(canvas->frame);
  gdouble height = GST_VIDEO_FRAME_HEIGHT(canvas->frame);
  gint left = (gint)floor(clamp_to(x0, width)), top = (gint)floor(clamp_to(y0, height));
  gint right = (gint)ceil(clamp_to(x1, width)), bottom = (gint)ceil(clamp_to(y1, height));
  if (right <= left || bottom <= top)
    return;
  gint w = right - left, h = bottom - top;
  GstBuffer *pixels = gst_buffer_new_allocate(NULL, (gsize)w * (gsize)h * 4, NULL);
  gst_buffer_add_video_meta(pixels, GST_VIDEO_FRAME_FLAG_NONE,
                            GST_VIDEO_OVERLAY_COMPOSITION_FORMAT_RGB, (guint)w, (guint)h);
  GstMapInfo map;
  gst_buffer_map(pixels, &map, GST_MAP_WRITE);
  cairo_surface_t *surface =
      cairo_image_surface_create_for_data(map.data, CAIRO_FORMAT_ARGB32, w, h, w * 4);
  cairo_t *cr = cairo_create(surface);
  cairo_set_operator(cr, CAIRO_OPERATOR_CLEAR);
  cairo_paint(cr);
  cairo_set_operator(cr, CAIRO_OPERATOR_OVER);
  cairo_translate(cr, -left, -top);
  paint(cr, shape);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  cairo_surface_destroy(surface);
  gst_buffer_unmap(pixels, &map);
  GstVideoOverlayRectangle *rectangle = gst_video_overlay_rectangle_new_raw(
      pixels, left, top, (guint)w, (guint)h, GST_VIDEO_OVERLAY_FORMAT_FLAG_PREMULTIPLIED_ALPHA);
  gst_buffer_unref(pixels);
  if (canvas->composition)
    gst_video_overlay_composition_add_rectangle(canvas->composition, rectangle);
  else
    canvas->composition = gst_video_overlay_composition_new(rectangle);
  gst_video_overlay_rectangle_unref(rectangle);
}

void gst_npu_overlay_canvas_paint(GstNpuOverlayCanvas *canvas, double x0, double y0, double x1,
                                  double y1, GstNpuOverlayPaint paint, gconstpointer shape)
{
  if (!canvas->cr) {
    paint_rectangle(canvas, x0, y0, x1, y1, paint, shape);
    return;
  }
  cairo_save(canvas->cr);
  paint(canvas->cr, shape);
  cairo_restore(canvas->cr);
}

void gst_npu_overlay_canvas_end(GstNpuOverlayCanvas *canvas)
{
  if (canvas->cr) {
    cairo_destroy(canvas->cr);
    cairo_surface_flush(canvas->surface);
    cairo_surface_destroy(canvas->surface);
  }
  if (canvas->composition) {
    gst_video_overlay_composition_blend(canvas->composition, canvas->frame);
    gst_video_overlay_composition_unref(canvas->composition);
  }
  g_free(canvas);
}
