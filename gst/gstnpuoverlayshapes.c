#include "gstnpuoverlayshapes.h"

#include <math.h>

/* How a zone's inside shows through its fill. */
#define ZONE_FILL_ALPHA 0.25

GstNpuOverlayColour gst_npu_overlay_colour_of_number(guint64 number)
{
  static const GstNpuOverlayColour palette[] = {
      {1.0, 0.2, 0.2}, {0.2, 0.9, 0.2}, {0.2, 0.6, 1.0}, {1.0, 0.8, 0.1},
      {0.9, 0.3, 0.9}, {0.1, 0.9, 0.9}, {1.0, 0.5, 0.1}, {0.6, 0.9, 0.3},
  };
  return palette[number % G_N_ELEMENTS(palette)];
}

GstNpuOverlayColour gst_npu_overlay_colour_of_name(const gchar *name)
{
  return gst_npu_overlay_colour_of_number(g_str_hash(name ? name : ""));
}

static void set_colour(cairo_t *cr, GstNpuOverlayColour colour)
{
  cairo_set_source_rgb(cr, colour.r, colour.g, colour.b);
}

/* The bounds of a set of points, grown by a margin on every side. */
typedef struct {
  double x0, y0, x1, y1;
} Bounds;

static Bounds bounds_of(const GstNpuOverlayPoint *points, guint count, double margin)
{
  Bounds b = {INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (guint i = 0; i < count; i++) {
    b.x0 = MIN(b.x0, points[i].x - margin);
    b.y0 = MIN(b.y0, points[i].y - margin);
    b.x1 = MAX(b.x1, points[i].x + margin);
    b.y1 = MAX(b.y1, points[i].y + margin);
  }
  return b;
}

static void paint_bounds(GstNpuOverlayCanvas *canvas, Bounds b, GstNpuOverlayPaint paint,
                         gconstpointer shape)
{
  gst_npu_overlay_canvas_paint(canvas, b.x0, b.y0, b.x1, b.y1, paint, shape);
}

typedef struct {
  double x, y, w, h;
  GstNpuOverlayColour colour;
} FilledRectangle;

static void paint_filled_rectangle(cairo_t *cr, gconstpointer shape)
{
  const FilledRectangle *r = shape;
  set_colour(cr, r->colour);
  cairo_rectangle(cr, r->x, r->y, r->w, r->h);
  cairo_fill(cr);
}

static void fill_rectangle(GstNpuOverlayCanvas *canvas, FilledRectangle r)
{
  gst_npu_overlay_canvas_paint(canvas, r.x, r.y, r.x + r.w, r.y + r.h, paint_filled_rectangle,
                               &r);
}

void gst_npu_overlay_draw_box(GstNpuOverlayCanvas *canvas, double x, double y, double w,
                              double h, double line, GstNpuOverlayColour colour)
{
  /* four edges, each a shape of its own: a large box costs what a small one does */
  double edge = MIN(line, MIN(w, h));
  fill_rectangle(canvas, (FilledRectangle){x, y, w, edge, colour});
  fill_rectangle(canvas, (FilledRectangle){x, y + h - edge, w, edge, colour});
  fill_rectangle(canvas, (FilledRectangle){x, y, edge, h, colour});
  fill_rectangle(canvas, (FilledRectangle){x + w - edge, y, edge, h, colour});
}

typedef struct {
  PangoLayout *layout;
  FilledRectangle background;
} Caption;

static void paint_caption(cairo_t *cr, gconstpointer shape)
{
  const Caption *c = shape;
  paint_filled_rectangle(cr, &c->background);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_move_to(cr, c->background.x + 2, c->background.y);
  pango_cairo_update_layout(cr, c->layout);
  pango_cairo_show_layout(cr, c->layout);
}

void gst_npu_overlay_draw_caption(GstNpuOverlayCanvas *canvas, PangoLayout *layout,
                                  const gchar *text, double x, double y, gboolean above,
                                  GstNpuOverlayColour colour)
{
  gint w, h;
  pango_layout_set_text(layout, text, -1);
  pango_layout_get_pixel_size(layout, &w, &h);
  if (above && y - h >= 0)
    y -= h;
  Caption caption = {layout, {x, y, w + 4, h, colour}};
  gst_npu_overlay_canvas_paint(canvas, x, y, x + w + 4, y + h, paint_caption, &caption);
}

typedef struct {
  const GstNpuOverlayPoint *points;
  guint count;
  double line;
  GstNpuOverlayColour colour;
} Path;

static void paint_path(cairo_t *cr, gconstpointer shape)
{
  const Path *p = shape;
  set_colour(cr, p->colour);
  cairo_set_line_width(cr, p->line);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_move_to(cr, p->points[0].x, p->points[0].y);
  for (guint i = 1; i < p->count; i++)
    cairo_line_to(cr, p->points[i].x, p->points[i].y);
  cairo_stroke(cr);
}

void gst_npu_overlay_draw_trail(GstNpuOverlayCanvas *canvas, const GstNpuOverlayPoint *points,
                                guint count, double line, GstNpuOverlayColour colour)
{
  if (count < 2)
    return;
  Path path = {points, count, line, colour};
  paint_bounds(canvas, bounds_of(points, count, line), paint_path, &path);
}

void gst_npu_overlay_draw_counting_line(GstNpuOverlayCanvas *canvas, PangoLayout *layout,
                                        GstNpuOverlayPoint a, GstNpuOverlayPoint b,
                                        const gchar *text, double line,
                                        GstNpuOverlayColour colour)
{
  GstNpuOverlayPoint ends[] = {a, b};
  Path counting_line = {ends, 2, line, colour};
  paint_bounds(canvas, bounds_of(ends, 2, line), paint_path, &counting_line);
  GstNpuOverlayPoint middle = {(a.x + b.x) / 2, (a.y + b.y) / 2}, label_at = middle;
  double length = hypot(b.x - a.x, b.y - a.y);
  if (length > 0) {
    /* forward: the normal (d.y, -d.x) of d = b - a, towards cross(d, p - a) < 0 */
    double nx = (b.y - a.y) / length, ny = -(b.x - a.x) / length;
    double reach = 16 + 4 * line, head = 4 + 2 * line;
    GstNpuOverlayPoint tip = {middle.x + nx * reach, middle.y + ny * reach};
    GstNpuOverlayPoint arrow[] = {
        {tip.x - nx * head + ny * head, tip.y - ny * head - nx * head},
        tip,
        {tip.x - nx * head - ny * head, tip.y - ny * head + nx * head},
    };
    GstNpuOverlayPoint shaft[] = {middle, tip};
    Path shaft_path = {shaft, 2, line, colour}, head_path = {arrow, 3, line, colour};
    paint_bounds(canvas, bounds_of(shaft, 2, line), paint_path, &shaft_path);
    paint_bounds(canvas, bounds_of(arrow, 3, line), paint_path, &head_path);
    label_at = (GstNpuOverlayPoint){tip.x + 4, tip.y + 4};
  }
  gst_npu_overlay_draw_caption(canvas, layout, text, label_at.x, label_at.y, FALSE, colour);
}

static void paint_zone(cairo_t *cr, gconstpointer shape)
{
  const Path *p = shape;
  cairo_move_to(cr, p->points[0].x, p->points[0].y);
  for (guint i = 1; i < p->count; i++)
    cairo_line_to(cr, p->points[i].x, p->points[i].y);
  cairo_close_path(cr);
  cairo_set_source_rgba(cr, p->colour.r, p->colour.g, p->colour.b, ZONE_FILL_ALPHA);
  cairo_fill_preserve(cr);
  set_colour(cr, p->colour);
  cairo_set_line_width(cr, p->line);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_stroke(cr);
}

void gst_npu_overlay_draw_zone(GstNpuOverlayCanvas *canvas, PangoLayout *layout,
                               const GstNpuOverlayPoint *corners, guint count, const gchar *text,
                               double line, GstNpuOverlayColour colour)
{
  if (count < 3)
    return;
  Path zone = {corners, count, line, colour};
  Bounds bounds = bounds_of(corners, count, line);
  paint_bounds(canvas, bounds, paint_zone, &zone);
  gst_npu_overlay_draw_caption(canvas, layout, text, bounds.x0 + line, bounds.y0 + line, FALSE,
                               colour);
}

typedef struct {
  double x, y, w, h;
  const guint8 *data;
  gint width, height;
  double alpha;
  const GstNpuOverlayColour *mask_colour;
} Raster;

static guint32 argb_of(GstNpuOverlayColour colour)
{
  return 0xff000000u | (guint32)lround(colour.r * 255) << 16 |
         (guint32)lround(colour.g * 255) << 8 | (guint32)lround(colour.b * 255);
}

static void paint_raster(cairo_t *cr, gconstpointer shape)
{
  const Raster *r = shape;
  cairo_surface_t *image = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, r->width, r->height);
  guint32 *pixels = (guint32 *)cairo_image_surface_get_data(image);
  gint stride = cairo_image_surface_get_stride(image) / 4;
  guint32 mask_argb = r->mask_colour ? argb_of(*r->mask_colour) : 0;
  for (gint row = 0; row < r->height; row++)
    for (gint col = 0; col < r->width; col++) {
      guint8 value = r->data[(gsize)row * r->width + col];
      guint32 argb = value == 0 ? 0
                     : r->mask_colour ? mask_argb
                                      : argb_of(gst_npu_overlay_colour_of_number(value));
      pixels[(gsize)row * stride + col] = argb;
    }
  cairo_surface_mark_dirty(image);
  cairo_translate(cr, r->x, r->y);
  cairo_scale(cr, r->w / r->width, r->h / r->height);
  cairo_rectangle(cr, 0, 0, r->width, r->height);
  cairo_clip(cr);
  cairo_set_source_surface(cr, image, 0, 0);
  /* each value covers its cell of the box, unblurred */
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_paint_with_alpha(cr, r->alpha);
  cairo_surface_destroy(image);
}

void gst_npu_overlay_draw_raster(GstNpuOverlayCanvas *canvas, double x, double y, double w,
                                 double h, const guint8 *data, gint width, gint height,
                                 double alpha, const GstNpuOverlayColour *mask_colour)
{
  if (width <= 0 || height <= 0 || w <= 0 || h <= 0 || alpha <= 0)
    return;
  Raster raster = {x, y, w, h, data, width, height, alpha, mask_colour};
  gst_npu_overlay_canvas_paint(canvas, x, y, x + w, y + h, paint_raster, &raster);
}

/* COCO's skeleton: the limbs between its 17 keypoints (nose, eyes, ears,
 * shoulders, elbows, wrists, hips, knees, ankles). */
static const guint8 coco_limbs[][2] = {
    {15, 13}, {13, 11}, {16, 14}, {14, 12}, {11, 12}, {5, 11}, {6, 12},
    {5, 6},   {5, 7},   {6, 8},   {7, 9},   {8, 10},  {1, 2},  {0, 1},
    {0, 2},   {1, 3},   {2, 4},   {3, 5},   {4, 6},
};
#define COCO_KEYPOINTS 17

typedef struct {
  const GstNpuOverlayPoint *points;
  const double *confidence;
  guint count;
  double threshold, line;
  GstNpuOverlayColour colour;
} Keypoints;

static void paint_keypoints(cairo_t *cr, gconstpointer shape)
{
  const Keypoints *k = shape;
  set_colour(cr, k->colour);
  cairo_set_line_width(cr, k->line);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  for (guint i = 0; k->count == COCO_KEYPOINTS && i < G_N_ELEMENTS(coco_limbs); i++) {
    guint from = coco_limbs[i][0], to = coco_limbs[i][1];
    if (k->confidence[from] < k->threshold || k->confidence[to] < k->threshold)
      continue;
    cairo_move_to(cr, k->points[from].x, k->points[from].y);
    cairo_line_to(cr, k->points[to].x, k->points[to].y);
    cairo_stroke(cr);
  }
  for (guint i = 0; i < k->count; i++) {
    if (k->confidence[i] < k->threshold)
      continue;
    cairo_arc(cr, k->points[i].x, k->points[i].y, k->line + 1.5, 0, 2 * G_PI);
    cairo_fill(cr);
  }
}

void gst_npu_overlay_draw_keypoints(GstNpuOverlayCanvas *canvas, const GstNpuOverlayPoint *points,
                                    const double *confidence, guint count, double threshold,
                                    double line, GstNpuOverlayColour colour)
{
  Keypoints keypoints = {points, confidence, count, threshold, line, colour};
  Bounds bounds = {INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (guint i = 0; i < count; i++) {
    if (confidence[i] < threshold)
      continue;
    Bounds dot = bounds_of(&points[i], 1, line + 3);
    bounds = (Bounds){MIN(bounds.x0, dot.x0), MIN(bounds.y0, dot.y0), MAX(bounds.x1, dot.x1),
                      MAX(bounds.y1, dot.y1)};
  }
  if (bounds.x0 < bounds.x1)
    paint_bounds(canvas, bounds, paint_keypoints, &keypoints);
}
