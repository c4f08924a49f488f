/**
 * SECTION:element-npuoverlay
 *
 * Draws every GstVideoRegionOfInterestMeta of a frame: its box, in a colour
 * per label, and a caption with the label, the confidence and any recognised
 * text (npudecode's params), rendered with Pango/Cairo like GStreamer's own
 * text elements. Frames are drawn on in place, in system memory or
 * host-mappable NPU memory: BGRx/BGRA directly with Cairo, every other raw
 * format (NV12, I420, RGB...) by blending the boxes' edges and the captions
 * as overlay rectangles (GstVideoOverlayComposition), so decoded video needs
 * no conversion around it.
 *
 * |[
 * gst-launch-1.0 ... ! npudecode method=ctc labels=dict.txt ! npuoverlay ! videoconvert ! pngenc ! multifilesink location=frame%03d.png
 * ]|
 */
#include "gstnpuoverlay.h"

#include <cairo.h>
#include <pango/pangocairo.h>

GST_DEBUG_CATEGORY_STATIC(gst_npu_overlay_debug);
#define GST_CAT_DEFAULT gst_npu_overlay_debug

struct _GstNpuOverlay {
  GstVideoFilter parent;
  gchar *font;
  gint line_width;
};

G_DEFINE_TYPE(GstNpuOverlay, gst_npu_overlay, GST_TYPE_VIDEO_FILTER)
GST_ELEMENT_REGISTER_DEFINE(npuoverlay, "npuoverlay", GST_RANK_NONE, GST_TYPE_NPU_OVERLAY)

enum { PROP_0, PROP_FONT, PROP_LINE_WIDTH };

#define OVERLAY_CAPS                                                                        \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES("memory:NPUMemory",                                    \
                                    GST_VIDEO_OVERLAY_COMPOSITION_BLEND_FORMATS) ";"        \
  GST_VIDEO_CAPS_MAKE(GST_VIDEO_OVERLAY_COMPOSITION_BLEND_FORMATS)

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(OVERLAY_CAPS));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(OVERLAY_CAPS));

/* A bright colour per label, the same on every frame. */
static void colour_of(const gchar *label, double rgb[3])
{
  static const double palette[][3] = {
      {1.0, 0.2, 0.2}, {0.2, 0.9, 0.2}, {0.2, 0.6, 1.0}, {1.0, 0.8, 0.1},
      {0.9, 0.3, 0.9}, {0.1, 0.9, 0.9}, {1.0, 0.5, 0.1}, {0.6, 0.9, 0.3},
  };
  guint i = g_str_hash(label ? label : "") % G_N_ELEMENTS(palette);
  for (int c = 0; c < 3; c++)
    rgb[c] = palette[i][c];
}

/* "label 0.97 \"text\"" from the ROI and its params. */
static gchar *caption_of(const GstVideoRegionOfInterestMeta *roi)
{
  GString *caption = g_string_new(g_quark_to_string(roi->roi_type));
  for (GList *p = roi->params; p; p = p->next) {
    const GstStructure *param = p->data;
    gdouble confidence;
    const gchar *text = gst_structure_get_string(param, "text");
    if (text)
      g_string_append_printf(caption, " \"%s\"", text);
    else if (gst_structure_get_double(param, "confidence", &confidence))
      g_string_append_printf(caption, " %.2f", confidence);
  }
  return g_string_free(caption, FALSE);
}

/* Where one ROI is drawn: its box, and its caption's box above it when
 * there is room, else inside its top edge. */
typedef struct roi_drawing {
  double rgb[3];
  gint x, y, w, h;
  gint caption_y, caption_w, caption_h;
} roi_drawing;

/* `start` and `size` of a box along an axis of `extent` pixels, cut where
 * nothing more is visible (a line's width past the frame): any ROI, however
 * large, then has coordinates whose sums fit in a gint. */
static void clip_to_view(guint start, guint size, gint extent, gint line, gint *clipped_start,
                         gint *clipped_size)
{
  guint64 view = (guint64)extent + (guint64)line + 1;
  guint64 begin = MIN(start, view), end = MIN((guint64)start + size, view);
  *clipped_start = (gint)begin;
  *clipped_size = (gint)MAX(end - begin, 1);
}

static roi_drawing layout_roi(const GstVideoRegionOfInterestMeta *roi, PangoLayout *layout,
                              const GstVideoFrame *frame, gint line)
{
  roi_drawing d;
  clip_to_view(roi->x, roi->w, GST_VIDEO_FRAME_WIDTH(frame), line, &d.x, &d.w);
  clip_to_view(roi->y, roi->h, GST_VIDEO_FRAME_HEIGHT(frame), line, &d.y, &d.h);
  colour_of(g_quark_to_string(roi->roi_type), d.rgb);
  gchar *caption = caption_of(roi);
  pango_layout_set_text(layout, caption, -1);
  g_free(caption);
  pango_layout_get_pixel_size(layout, &d.caption_w, &d.caption_h);
  d.caption_w += 4;
  d.caption_y = d.y - d.caption_h >= 0 ? d.y - d.caption_h : d.y;
  return d;
}

static void draw_caption(cairo_t *cr, PangoLayout *layout, const roi_drawing *d, double x,
                         double y)
{
  cairo_set_source_rgb(cr, d->rgb[0], d->rgb[1], d->rgb[2]);
  cairo_rectangle(cr, x, y, d->caption_w, d->caption_h);
  cairo_fill(cr);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_move_to(cr, x + 2, y);
  pango_cairo_update_layout(cr, layout);
  pango_cairo_show_layout(cr, layout);
}

/* BGRx/BGRA: Cairo draws on the frame itself. */
static void draw_in_place(GstNpuOverlay *self, GstVideoFrame *frame, PangoLayout *layout)
{
  cairo_surface_t *surface = cairo_image_surface_create_for_data(
      GST_VIDEO_FRAME_PLANE_DATA(frame, 0),
      GST_VIDEO_FRAME_FORMAT(frame) == GST_VIDEO_FORMAT_BGRA ? CAIRO_FORMAT_ARGB32
                                                             : CAIRO_FORMAT_RGB24,
      GST_VIDEO_FRAME_WIDTH(frame), GST_VIDEO_FRAME_HEIGHT(frame),
      GST_VIDEO_FRAME_PLANE_STRIDE(frame, 0));
  cairo_t *cr = cairo_create(surface);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(frame->buffer, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    roi_drawing d = layout_roi((const GstVideoRegionOfInterestMeta *)meta, layout, frame,
                               self->line_width);
    cairo_set_source_rgb(cr, d.rgb[0], d.rgb[1], d.rgb[2]);
    cairo_set_line_width(cr, self->line_width);
    double half = self->line_width / 2.0;
    cairo_rectangle(cr, d.x + half, d.y + half, MAX(d.w - 2 * half, 1), MAX(d.h - 2 * half, 1));
    cairo_stroke(cr);
    draw_caption(cr, layout, &d, d.x, d.caption_y);
  }
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  cairo_surface_destroy(surface);
}

/* Adds a w x h overlay rectangle at (x, y), clipped to the frame (nothing
 * when nothing is left): the ROI's colour, with its caption on it when
 * `caption`. */
static void add_rectangle(GstVideoOverlayComposition **composition, const GstVideoFrame *frame,
                          PangoLayout *layout, const roi_drawing *d, gint x, gint y, gint w,
                          gint h, gboolean caption)
{
  gint left = MAX(x, 0), top = MAX(y, 0);
  gint right = MIN(x + w, GST_VIDEO_FRAME_WIDTH(frame));
  gint bottom = MIN(y + h, GST_VIDEO_FRAME_HEIGHT(frame));
  if (right <= left || bottom <= top)
    return;
  w = right - left;
  h = bottom - top;
  GstBuffer *pixels = gst_buffer_new_allocate(NULL, (gsize)w * (gsize)h * 4, NULL);
  gst_buffer_add_video_meta(pixels, GST_VIDEO_FRAME_FLAG_NONE,
                            GST_VIDEO_OVERLAY_COMPOSITION_FORMAT_RGB, (guint)w, (guint)h);
  GstMapInfo map;
  gst_buffer_map(pixels, &map, GST_MAP_WRITE);
  cairo_surface_t *surface =
      cairo_image_surface_create_for_data(map.data, CAIRO_FORMAT_ARGB32, w, h, w * 4);
  cairo_t *cr = cairo_create(surface);
  cairo_set_source_rgb(cr, d->rgb[0], d->rgb[1], d->rgb[2]);
  cairo_paint(cr);
  if (caption)
    draw_caption(cr, layout, d, x - left, y - top);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  cairo_surface_destroy(surface);
  gst_buffer_unmap(pixels, &map);
  GstVideoOverlayRectangle *rectangle = gst_video_overlay_rectangle_new_raw(
      pixels, left, top, (guint)w, (guint)h, GST_VIDEO_OVERLAY_FORMAT_FLAG_PREMULTIPLIED_ALPHA);
  gst_buffer_unref(pixels);
  if (*composition)
    gst_video_overlay_composition_add_rectangle(*composition, rectangle);
  else
    *composition = gst_video_overlay_composition_new(rectangle);
  gst_video_overlay_rectangle_unref(rectangle);
}

/* Other formats: each box's four edges and its caption as rectangles of
 * their own (small: a large box costs no more than a small one), blended
 * into the frame. */
static void draw_blended(GstNpuOverlay *self, GstVideoFrame *frame, PangoLayout *layout)
{
  GstVideoOverlayComposition *composition = NULL;
  gint line = self->line_width;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(frame->buffer, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    roi_drawing d = layout_roi((const GstVideoRegionOfInterestMeta *)meta, layout, frame,
                               self->line_width);
    gint edge = MIN(line, MIN(d.w, d.h));
    add_rectangle(&composition, frame, layout, &d, d.x, d.y, d.w, edge, FALSE);
    add_rectangle(&composition, frame, layout, &d, d.x, d.y + d.h - edge, d.w, edge, FALSE);
    add_rectangle(&composition, frame, layout, &d, d.x, d.y, edge, d.h, FALSE);
    add_rectangle(&composition, frame, layout, &d, d.x + d.w - edge, d.y, edge, d.h, FALSE);
    add_rectangle(&composition, frame, layout, &d, d.x, d.caption_y, d.caption_w, d.caption_h,
                  TRUE);
  }
  if (composition) {
    gst_video_overlay_composition_blend(composition, frame);
    gst_video_overlay_composition_unref(composition);
  }
}

static GstFlowReturn gst_npu_overlay_transform_frame_ip(GstVideoFilter *filter,
                                                        GstVideoFrame *frame)
{
  GstNpuOverlay *self = GST_NPU_OVERLAY(filter);
  if (!gst_buffer_get_video_region_of_interest_meta(frame->buffer))
    return GST_FLOW_OK;
  PangoContext *context = pango_font_map_create_context(pango_cairo_font_map_get_default());
  PangoLayout *layout = pango_layout_new(context);
  PangoFontDescription *font = pango_font_description_from_string(self->font);
  pango_layout_set_font_description(layout, font);
  GstVideoFormat format = GST_VIDEO_FRAME_FORMAT(frame);
  if (format == GST_VIDEO_FORMAT_BGRx || format == GST_VIDEO_FORMAT_BGRA)
    draw_in_place(self, frame, layout);
  else
    draw_blended(self, frame, layout);
  pango_font_description_free(font);
  g_object_unref(layout);
  g_object_unref(context);
  return GST_FLOW_OK;
}

static void gst_npu_overlay_set_property(GObject *object, guint id, const GValue *value,
                                         GParamSpec *pspec)
{
  GstNpuOverlay *self = GST_NPU_OVERLAY(object);
  GST_OBJECT_LOCK(self);
  if (id == PROP_FONT) {
    g_free(self->font);
    self->font = g_value_dup_string(value);
  } else if (id == PROP_LINE_WIDTH) {
    self->line_width = g_value_get_int(value);
  } else {
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_npu_overlay_get_property(GObject *object, guint id, GValue *value,
                                         GParamSpec *pspec)
{
  GstNpuOverlay *self = GST_NPU_OVERLAY(object);
  GST_OBJECT_LOCK(self);
  if (id == PROP_FONT)
    g_value_set_string(value, self->font);
  else if (id == PROP_LINE_WIDTH)
    g_value_set_int(value, self->line_width);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  GST_OBJECT_UNLOCK(self);
}

static void gst_npu_overlay_finalize(GObject *object)
{
  g_free(GST_NPU_OVERLAY(object)->font);
  G_OBJECT_CLASS(gst_npu_overlay_parent_class)->finalize(object);
}

static void gst_npu_overlay_class_init(GstNpuOverlayClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  object_class->set_property = gst_npu_overlay_set_property;
  object_class->get_property = gst_npu_overlay_get_property;
  object_class->finalize = gst_npu_overlay_finalize;
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
  g_object_class_install_property(object_class, PROP_FONT,
      g_param_spec_string("font-desc", "Font description",
                          "Pango font description of the captions", "Sans 12", flags));
  g_object_class_install_property(object_class, PROP_LINE_WIDTH,
      g_param_spec_int("line-width", "Line width", "Width of the boxes' outline in pixels", 1,
                       64, 2, flags));
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "NPU result overlay", "Filter/Editor/Video",
      "Draws regions of interest with a colour per label and captions with label, confidence "
      "and recognised text", "gst-npu developers");
  GST_VIDEO_FILTER_CLASS(klass)->transform_frame_ip = gst_npu_overlay_transform_frame_ip;
  GST_DEBUG_CATEGORY_INIT(gst_npu_overlay_debug, "npuoverlay", 0, "NPU result overlay");
}

static void gst_npu_overlay_init(GstNpuOverlay *self)
{
  self->font = g_strdup("Sans 12");
  self->line_width = 2;
}
