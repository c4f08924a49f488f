/**
 * SECTION:element-npuoverlay
 *
 * Draws every GstVideoRegionOfInterestMeta of a frame: its box, in a colour
 * per label, and a caption with the label, the confidence and any recognised
 * text (npudecode's params), rendered with Pango/Cairo like GStreamer's own
 * text elements. Frames are drawn on in place (BGRx/BGRA, system memory or
 * host-mappable NPU memory); put videoconvert around it for other formats.
 *
 * |[
 * gst-launch-1.0 ... ! npudecode method=ctc labels=dict.txt ! videoconvert ! npuoverlay ! videoconvert ! pngenc ! multifilesink location=frame%03d.png
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
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES("memory:NPUMemory", "{ BGRx, BGRA }") ";"               \
  GST_VIDEO_CAPS_MAKE("{ BGRx, BGRA }")

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

static GstFlowReturn gst_npu_overlay_transform_frame_ip(GstVideoFilter *filter,
                                                        GstVideoFrame *frame)
{
  GstNpuOverlay *self = GST_NPU_OVERLAY(filter);
  if (!gst_buffer_get_video_region_of_interest_meta(frame->buffer))
    return GST_FLOW_OK;
  cairo_surface_t *surface = cairo_image_surface_create_for_data(
      GST_VIDEO_FRAME_PLANE_DATA(frame, 0),
      GST_VIDEO_FRAME_FORMAT(frame) == GST_VIDEO_FORMAT_BGRA ? CAIRO_FORMAT_ARGB32
                                                             : CAIRO_FORMAT_RGB24,
      GST_VIDEO_FRAME_WIDTH(frame), GST_VIDEO_FRAME_HEIGHT(frame),
      GST_VIDEO_FRAME_PLANE_STRIDE(frame, 0));
  cairo_t *cr = cairo_create(surface);
  PangoLayout *layout = pango_cairo_create_layout(cr);
  PangoFontDescription *font = pango_font_description_from_string(self->font);
  pango_layout_set_font_description(layout, font);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(frame->buffer, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    const GstVideoRegionOfInterestMeta *roi = (const GstVideoRegionOfInterestMeta *)meta;
    double rgb[3];
    colour_of(g_quark_to_string(roi->roi_type), rgb);
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, self->line_width);
    double half = self->line_width / 2.0;
    cairo_rectangle(cr, roi->x + half, roi->y + half, MAX(roi->w - 2 * half, 1),
                    MAX(roi->h - 2 * half, 1));
    cairo_stroke(cr);
    gchar *caption = caption_of(roi);
    pango_layout_set_text(layout, caption, -1);
    int text_w, text_h;
    pango_layout_get_pixel_size(layout, &text_w, &text_h);
    /* above the box when there is room, else inside its top edge */
    double y = (int)roi->y - text_h >= 0 ? (double)roi->y - text_h : (double)roi->y;
    cairo_rectangle(cr, roi->x, y, text_w + 4, text_h);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, roi->x + 2, y);
    pango_cairo_show_layout(cr, layout);
    g_free(caption);
  }
  pango_font_description_free(font);
  g_object_unref(layout);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  cairo_surface_destroy(surface);
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
