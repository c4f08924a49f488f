/**
 * SECTION:element-npuoverlay
 *
 * Draws the results on a frame: each GstVideoRegionOfInterestMeta's box,
 * in a colour per label, with a caption ("#3 person 0.87": nputrack's
 * object id, the label, the confidence and any recognised text); each
 * tracked object's trail (the last trail-length points of its box's bottom
 * centre, where npuanalytics places it, per stream, forgotten when its
 * track ends or it goes unseen as many frames); npuanalytics' counting
 * lines (an arrow across each in its forward direction, "name:
 * forward/backward") and zones (a translucent fill, "name: occupancy");
 * class maps ("segmentation" param: a colour per class, class 0 left
 * clear), instance masks ("mask" param: the label's colour) and keypoints
 * ("keypoints" param: dots, and COCO's skeleton for 17 points).
 *
 * Frames are drawn on in place, in system memory or host-mappable NPU
 * memory: BGRx/BGRA directly with Cairo, every other raw format (NV12,
 * I420, RGB...) by blending each shape as an overlay rectangle of its
 * bounds (GstVideoOverlayComposition), so decoded video needs no conversion
 * around it. A result whose param is malformed (a raster whose data is not
 * width x height bytes, keypoint arrays of different lengths) is left out
 * with a warning.
 *
 * |[
 * gst-launch-1.0 ... ! npudecode method=yolo ! nputrack ! \
 *   npuanalytics lines="door:320,0,320,480" ! npuoverlay trail-length=60 ! videoconvert ! autovideosink
 * ]|
 */
#include "gstnpuoverlay.h"

#include <math.h>

#include "gstnpuframejson.h"
#include "gstnpuframemeta.h"
#include "gstnpuoverlaytrails.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_overlay_debug);
#define GST_CAT_DEFAULT gst_npu_overlay_debug

/* What npuoverlay draws (its "draw" property). */
typedef enum {
  DRAW_BOXES = 1 << 0,
  DRAW_TRAILS = 1 << 1,
  DRAW_LINES = 1 << 2,
  DRAW_ZONES = 1 << 3,
  DRAW_MASKS = 1 << 4,
  DRAW_KEYPOINTS = 1 << 5,
} GstNpuOverlayDraw;
#define DRAW_ALL (DRAW_BOXES | DRAW_TRAILS | DRAW_LINES | DRAW_ZONES | DRAW_MASKS | DRAW_KEYPOINTS)

#define GST_TYPE_NPU_OVERLAY_DRAW (gst_npu_overlay_draw_get_type())
static GType gst_npu_overlay_draw_get_type(void)
{
  static gsize type = 0;
  static const GFlagsValue values[] = {
      {DRAW_BOXES, "Region boxes and captions", "boxes"},
      {DRAW_TRAILS, "Tracked objects' trails", "trails"},
      {DRAW_LINES, "npuanalytics' counting lines and counts", "lines"},
      {DRAW_ZONES, "npuanalytics' zones and occupancy", "zones"},
      {DRAW_MASKS, "Class maps and instance masks", "masks"},
      {DRAW_KEYPOINTS, "Keypoints and skeletons", "keypoints"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_flags_register_static("GstNpuOverlayDraw", values));
  return type;
}

/* The properties, as one frame is drawn with them. */
typedef struct {
  gint line_width;
  guint trail_length;
  gdouble mask_alpha, keypoint_threshold;
  guint draw;
} OverlaySettings;

struct _GstNpuOverlay {
  GstVideoFilter parent;
  gchar *font;
  OverlaySettings settings;
  /* streaming thread */
  GstNpuOverlayTrails *trails;
  GArray *sightings; /* GstNpuOverlaySighting, scratch */
  GArray *ended;     /* guint64, scratch */
  gboolean warned;   /* a bad param was posted as a warning message */
};

G_DEFINE_TYPE(GstNpuOverlay, gst_npu_overlay, GST_TYPE_VIDEO_FILTER)
GST_ELEMENT_REGISTER_DEFINE(npuoverlay, "npuoverlay", GST_RANK_NONE, GST_TYPE_NPU_OVERLAY)

enum {
  PROP_0,
  PROP_FONT,
  PROP_LINE_WIDTH,
  PROP_TRAIL_LENGTH,
  PROP_MASK_ALPHA,
  PROP_KEYPOINT_THRESHOLD,
  PROP_DRAW,
};

#define OVERLAY_CAPS                                                                        \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES("memory:NPUMemory",                                    \
                                    GST_VIDEO_OVERLAY_COMPOSITION_BLEND_FORMATS) ";"        \
  GST_VIDEO_CAPS_MAKE(GST_VIDEO_OVERLAY_COMPOSITION_BLEND_FORMATS)

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(OVERLAY_CAPS));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(OVERLAY_CAPS));

/* One frame being drawn. */
typedef struct {
  GstNpuOverlay *self;
  GstNpuOverlayCanvas *canvas;
  PangoLayout *layout;
  OverlaySettings settings;
  gint width, height;
} FrameDrawing;

/* A result left out: logged, and posted once as a warning message. */
static void warn_bad_param(GstNpuOverlay *self, const GstVideoRegionOfInterestMeta *roi,
                           const gchar *param, const gchar *reason)
{
  GST_WARNING_OBJECT(self, "%s region %d: \"%s\" param not drawn: %s",
                     g_quark_to_string(roi->roi_type), roi->id, param, reason);
  if (!self->warned)
    GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("Result not drawn: bad \"%s\" param", param),
                        ("%s region %d: %s", g_quark_to_string(roi->roi_type), roi->id, reason));
  self->warned = TRUE;
}

/* The object id of nputrack's "tracking" param (FALSE: not tracked). */
static gboolean object_id_of(const GstVideoRegionOfInterestMeta *roi, guint64 *id)
{
  GstStructure *tracking =
      gst_video_region_of_interest_meta_get_param((GstVideoRegionOfInterestMeta *)roi,
                                                  "tracking");
  return tracking && gst_structure_get_uint64(tracking, "object-id", id);
}

/* "#3 label 0.97 \"text\"" from the ROI and its params. */
static gchar *caption_of(const GstVideoRegionOfInterestMeta *roi)
{
  GString *caption = g_string_new(NULL);
  guint64 id;
  if (object_id_of(roi, &id))
    g_string_append_printf(caption, "#%" G_GUINT64_FORMAT " ", id);
  g_string_append(caption, g_quark_to_string(roi->roi_type));
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

/* `start` and `size` of a box along an axis of `extent` pixels, cut where
 * nothing more is visible (a line's width past the frame): any ROI, however
 * large, is then drawn with coordinates Cairo can hold. */
static void clip_to_view(guint start, guint size, gint extent, gint line, double *clipped_start,
                         double *clipped_size)
{
  guint64 view = (guint64)extent + (guint64)line + 1;
  guint64 begin = MIN(start, view), end = MIN((guint64)start + size, view);
  *clipped_start = (double)begin;
  *clipped_size = (double)MAX(end - begin, 1);
}

/* A width x height byte raster of @param (a class map or a mask); FALSE,
 * with a warning, when it is missing or not width x height bytes. */
static gboolean raster_of(FrameDrawing *f, const GstVideoRegionOfInterestMeta *roi,
                          const GstStructure *param, gint *width, gint *height,
                          const guint8 **data)
{
  const gchar *name = gst_structure_get_name(param);
  const GValue *bytes = gst_structure_get_value(param, "data");
  if (!gst_structure_get_int(param, "width", width) ||
      !gst_structure_get_int(param, "height", height) || *width <= 0 || *height <= 0 ||
      !bytes || !G_VALUE_HOLDS(bytes, G_TYPE_BYTES) || !g_value_get_boxed(bytes)) {
    warn_bad_param(f->self, roi, name, "needs width and height (positive ints) and data (bytes)");
    return FALSE;
  }
  gsize size;
  *data = g_bytes_get_data(g_value_get_boxed(bytes), &size);
  if ((guint64)*width * (guint64)*height != size) {
    gchar *reason = g_strdup_printf("%" G_GSIZE_FORMAT " bytes of data for %d x %d", size,
                                    *width, *height);
    warn_bad_param(f->self, roi, name, reason);
    g_free(reason);
    return FALSE;
  }
  return TRUE;
}

/* Cairo's coordinates are exact to about 2^23: boxes reaching further
 * are no frame's. */
#define DRAWABLE_EXTENT (1 << 22)

static void draw_raster(FrameDrawing *f, const GstVideoRegionOfInterestMeta *roi,
                        const GstStructure *param, const GstNpuOverlayColour *mask_colour)
{
  gint width, height;
  const guint8 *data;
  if (!raster_of(f, roi, param, &width, &height, &data))
    return;
  if ((guint64)roi->x + roi->w > DRAWABLE_EXTENT || (guint64)roi->y + roi->h > DRAWABLE_EXTENT) {
    warn_bad_param(f->self, roi, gst_structure_get_name(param), "box far beyond the frame");
    return;
  }
  gst_npu_overlay_draw_raster(f->canvas, roi->x, roi->y, roi->w, roi->h, data, width, height,
                              f->settings.mask_alpha, mask_colour);
}

/* A number of a param (a double, or an int), FALSE for anything else. */
static gboolean number_of(const GValue *value, double *number)
{
  if (G_VALUE_HOLDS_DOUBLE(value))
    *number = g_value_get_double(value);
  else if (G_VALUE_HOLDS_INT(value))
    *number = g_value_get_int(value);
  else
    return FALSE;
  return TRUE;
}

/* Element @i of the array field @field of @param. */
static gboolean array_number(const GstStructure *param, const gchar *field, guint i,
                             double *number)
{
  const GValue *array = gst_structure_get_value(param, field);
  return array && GST_VALUE_HOLDS_ARRAY(array) && i < gst_value_array_get_size(array) &&
         number_of(gst_value_array_get_value(array, i), number);
}

static guint array_size(const GstStructure *param, const gchar *field)
{
  const GValue *array = gst_structure_get_value(param, field);
  return array && GST_VALUE_HOLDS_ARRAY(array) ? gst_value_array_get_size(array) : 0;
}

static void draw_keypoints(FrameDrawing *f, const GstVideoRegionOfInterestMeta *roi,
                           const GstStructure *param)
{
  guint count = array_size(param, "x");
  if (count == 0 || array_size(param, "y") != count ||
      array_size(param, "confidence") != count) {
    warn_bad_param(f->self, roi, "keypoints",
                   "needs x, y and confidence: arrays of doubles of one length");
    return;
  }
  GstNpuOverlayPoint *points = g_new(GstNpuOverlayPoint, count);
  double *confidence = g_new(double, count);
  gboolean numbers = TRUE;
  for (guint i = 0; i < count && numbers; i++) {
    numbers = array_number(param, "x", i, &points[i].x) &&
              array_number(param, "y", i, &points[i].y) &&
              array_number(param, "confidence", i, &confidence[i]);
    /* a point off any frame is not drawn (nor is a NaN one) */
    if (numbers && !(fabs(points[i].x) < DRAWABLE_EXTENT && fabs(points[i].y) < DRAWABLE_EXTENT))
      confidence[i] = -1;
  }
  if (numbers)
    gst_npu_overlay_draw_keypoints(f->canvas, points, confidence, count,
                                   f->settings.keypoint_threshold, f->settings.line_width,
                                   gst_npu_overlay_colour_of_name(
                                       g_quark_to_string(roi->roi_type)));
  else
    warn_bad_param(f->self, roi, "keypoints", "x, y and confidence must hold numbers");
  g_free(points);
  g_free(confidence);
}

/* The region's box and caption; its class map, mask and keypoints. */
static void draw_region(FrameDrawing *f, GstVideoRegionOfInterestMeta *roi)
{
  const gchar *label = g_quark_to_string(roi->roi_type);
  GstNpuOverlayColour colour = gst_npu_overlay_colour_of_name(label);
  guint draw = f->settings.draw;
  GstStructure *class_map = gst_video_region_of_interest_meta_get_param(roi, "segmentation");
  GstStructure *mask = gst_video_region_of_interest_meta_get_param(roi, "mask");
  GstStructure *keypoints = gst_video_region_of_interest_meta_get_param(roi, "keypoints");
  if ((draw & DRAW_MASKS) && f->settings.mask_alpha > 0) {
    if (class_map)
      draw_raster(f, roi, class_map, NULL);
    if (mask)
      draw_raster(f, roi, mask, &colour);
  }
  if ((draw & DRAW_KEYPOINTS) && keypoints)
    draw_keypoints(f, roi, keypoints);
  /* a class map is no object: no box around it */
  if (!(draw & DRAW_BOXES) || class_map)
    return;
  gint line = f->settings.line_width;
  double x, y, w, h;
  clip_to_view(roi->x, roi->w, f->width, line, &x, &w);
  clip_to_view(roi->y, roi->h, f->height, line, &y, &h);
  gst_npu_overlay_draw_box(f->canvas, x, y, w, h, line, colour);
  gchar *caption = caption_of(roi);
  gst_npu_overlay_draw_caption(f->canvas, f->layout, caption, x, y, TRUE, colour);
  g_free(caption);
}

/* The "points" of an analytics line or zone ([[x, y], ...]) into @points. */
static gboolean points_of(const GstStructure *entry, GArray *points)
{
  g_array_set_size(points, 0);
  guint count = array_size(entry, "points");
  const GValue *list = gst_structure_get_value(entry, "points");
  for (guint i = 0; i < count; i++) {
    const GValue *pair = gst_value_array_get_value(list, i);
    GstNpuOverlayPoint p;
    if (!GST_VALUE_HOLDS_ARRAY(pair) || gst_value_array_get_size(pair) != 2 ||
        !number_of(gst_value_array_get_value(pair, 0), &p.x) ||
        !number_of(gst_value_array_get_value(pair, 1), &p.y) ||
        !(fabs(p.x) < DRAWABLE_EXTENT && fabs(p.y) < DRAWABLE_EXTENT))
      return FALSE;
    g_array_append_val(points, p);
  }
  return TRUE;
}

/* The entries of the array field @field of npuanalytics' meta. */
static guint analytics_count(const GstStructure *analytics, const gchar *field)
{
  return analytics ? array_size(analytics, field) : 0;
}

static const GstStructure *analytics_entry(const GstStructure *analytics, const gchar *field,
                                           guint i)
{
  const GValue *entry = gst_value_array_get_value(gst_structure_get_value(analytics, field), i);
  return GST_VALUE_HOLDS_STRUCTURE(entry) ? gst_value_get_structure(entry) : NULL;
}

/* npuanalytics' zones (under everything) and counting lines. */
static void draw_analytics(FrameDrawing *f, GstBuffer *buffer)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta(buffer, GST_NPU_ANALYTICS_META_NAME);
  const GstStructure *analytics = meta ? gst_custom_meta_get_structure(meta) : NULL;
  GArray *points = g_array_new(FALSE, FALSE, sizeof(GstNpuOverlayPoint));
  guint n_zones = f->settings.draw & DRAW_ZONES ? analytics_count(analytics, "zones") : 0;
  for (guint i = 0; i < n_zones; i++) {
    const GstStructure *zone = analytics_entry(analytics, "zones", i);
    const gchar *name = zone ? gst_structure_get_string(zone, "name") : NULL;
    guint64 occupancy;
    if (!name || !gst_structure_get_uint64(zone, "occupancy", &occupancy) ||
        !points_of(zone, points) || points->len < 3)
      continue;
    gchar *text = g_strdup_printf("%s: %" G_GUINT64_FORMAT, name, occupancy);
    gst_npu_overlay_draw_zone(f->canvas, f->layout, (GstNpuOverlayPoint *)points->data,
                              points->len, text, f->settings.line_width,
                              gst_npu_overlay_colour_of_name(name));
    g_free(text);
  }
  guint n_lines = f->settings.draw & DRAW_LINES ? analytics_count(analytics, "lines") : 0;
  for (guint i = 0; i < n_lines; i++) {
    const GstStructure *line = analytics_entry(analytics, "lines", i);
    const gchar *name = line ? gst_structure_get_string(line, "name") : NULL;
    guint64 forward, backward;
    if (!name || !gst_structure_get_uint64(line, "forward", &forward) ||
        !gst_structure_get_uint64(line, "backward", &backward) || !points_of(line, points) ||
        points->len != 2)
      continue;
    gchar *text = g_strdup_printf("%s: %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, name, forward,
                                  backward);
    const GstNpuOverlayPoint *ends = (GstNpuOverlayPoint *)points->data;
    gst_npu_overlay_draw_counting_line(f->canvas, f->layout, ends[0], ends[1], text,
                                       f->settings.line_width,
                                       gst_npu_overlay_colour_of_name(name));
    g_free(text);
  }
  g_array_unref(points);
}

/* Where each tracked object of the frame stands (its box's bottom centre,
 * as npuanalytics counts it) and the tracks that ended, into the trails
 * of the frame's stream. */
static void update_trails(GstNpuOverlay *self, GstBuffer *buffer, gint stream, guint length)
{
  g_array_set_size(self->sightings, 0);
  g_array_set_size(self->ended, 0);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    const GstVideoRegionOfInterestMeta *roi = (const GstVideoRegionOfInterestMeta *)meta;
    GstNpuOverlaySighting seen = {0, {roi->x + roi->w / 2.0, (double)roi->y + roi->h}};
    if (object_id_of(roi, &seen.id))
      g_array_append_val(self->sightings, seen);
  }
  GstCustomMeta *tracking = gst_buffer_get_custom_meta(buffer, GST_NPU_TRACKING_META_NAME);
  const GstStructure *ended = tracking ? gst_custom_meta_get_structure(tracking) : NULL;
  guint n_ended = ended ? array_size(ended, "ended") : 0;
  for (guint i = 0; i < n_ended; i++) {
    const GstStructure *track = analytics_entry(ended, "ended", i);
    guint64 id;
    if (track && gst_structure_get_uint64(track, "object-id", &id))
      g_array_append_val(self->ended, id);
  }
  gst_npu_overlay_trails_update(self->trails, stream,
                                (const GstNpuOverlaySighting *)self->sightings->data,
                                self->sightings->len, (const guint64 *)self->ended->data,
                                self->ended->len, length);
}

static void draw_trail(guint64 id, const GstNpuOverlayPoint *points, guint count, gpointer data)
{
  FrameDrawing *f = data;
  gst_npu_overlay_draw_trail(f->canvas, points, count, f->settings.line_width,
                             gst_npu_overlay_colour_of_number(id));
}

static GstFlowReturn gst_npu_overlay_transform_frame_ip(GstVideoFilter *filter,
                                                        GstVideoFrame *frame)
{
  GstNpuOverlay *self = GST_NPU_OVERLAY(filter);
  FrameDrawing f = {self, NULL, NULL, {0}, GST_VIDEO_FRAME_WIDTH(frame),
                    GST_VIDEO_FRAME_HEIGHT(frame)};
  GST_OBJECT_LOCK(self);
  f.settings = self->settings;
  PangoFontDescription *font = pango_font_description_from_string(self->font);
  GST_OBJECT_UNLOCK(self);
  gint stream = gst_npu_frame_stream(frame->buffer);
  gboolean trails = f.settings.trail_length > 0 && (f.settings.draw & DRAW_TRAILS);
  if (trails)
    update_trails(self, frame->buffer, stream, f.settings.trail_length);
  PangoContext *context = pango_font_map_create_context(pango_cairo_font_map_get_default());
  f.layout = pango_layout_new(context);
  pango_layout_set_font_description(f.layout, font);
  f.canvas = gst_npu_overlay_canvas_begin(frame);
  draw_analytics(&f, frame->buffer);
  if (trails)
    gst_npu_overlay_trails_foreach(self->trails, stream, draw_trail, &f);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(frame->buffer, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    draw_region(&f, (GstVideoRegionOfInterestMeta *)meta);
  gst_npu_overlay_canvas_end(f.canvas);
  pango_font_description_free(font);
  g_object_unref(f.layout);
  g_object_unref(context);
  return GST_FLOW_OK;
}

/* A new stream, a seek: the trails start again. */
static gboolean gst_npu_overlay_sink_event(GstBaseTransform *transform, GstEvent *event)
{
  GstEventType type = GST_EVENT_TYPE(event);
  if (type == GST_EVENT_FLUSH_STOP || type == GST_EVENT_STREAM_START)
    gst_npu_overlay_trails_clear(GST_NPU_OVERLAY(transform)->trails);
  return GST_BASE_TRANSFORM_CLASS(gst_npu_overlay_parent_class)->sink_event(transform, event);
}

static gboolean gst_npu_overlay_stop(GstBaseTransform *transform)
{
  gst_npu_overlay_trails_clear(GST_NPU_OVERLAY(transform)->trails);
  return TRUE;
}

static void gst_npu_overlay_set_property(GObject *object, guint id, const GValue *value,
                                         GParamSpec *pspec)
{
  GstNpuOverlay *self = GST_NPU_OVERLAY(object);
  OverlaySettings *s = &self->settings;
  GST_OBJECT_LOCK(self);
  switch (id) {
  case PROP_FONT:
    g_free(self->font);
    self->font = g_value_dup_string(value);
    break;
  case PROP_LINE_WIDTH:
    s->line_width = g_value_get_int(value);
    break;
  case PROP_TRAIL_LENGTH:
    s->trail_length = g_value_get_uint(value);
    break;
  case PROP_MASK_ALPHA:
    s->mask_alpha = g_value_get_double(value);
    break;
  case PROP_KEYPOINT_THRESHOLD:
    s->keypoint_threshold = g_value_get_double(value);
    break;
  case PROP_DRAW:
    s->draw = g_value_get_flags(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_npu_overlay_get_property(GObject *object, guint id, GValue *value,
                                         GParamSpec *pspec)
{
  GstNpuOverlay *self = GST_NPU_OVERLAY(object);
  const OverlaySettings *s = &self->settings;
  GST_OBJECT_LOCK(self);
  switch (id) {
  case PROP_FONT:
    g_value_set_string(value, self->font);
    break;
  case PROP_LINE_WIDTH:
    g_value_set_int(value, s->line_width);
    break;
  case PROP_TRAIL_LENGTH:
    g_value_set_uint(value, s->trail_length);
    break;
  case PROP_MASK_ALPHA:
    g_value_set_double(value, s->mask_alpha);
    break;
  case PROP_KEYPOINT_THRESHOLD:
    g_value_set_double(value, s->keypoint_threshold);
    break;
  case PROP_DRAW:
    g_value_set_flags(value, s->draw);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_npu_overlay_finalize(GObject *object)
{
  GstNpuOverlay *self = GST_NPU_OVERLAY(object);
  g_free(self->font);
  gst_npu_overlay_trails_free(self->trails);
  g_array_unref(self->sightings);
  g_array_unref(self->ended);
  G_OBJECT_CLASS(gst_npu_overlay_parent_class)->finalize(object);
}

#define DEFAULT_TRAIL_LENGTH 30
#define DEFAULT_MASK_ALPHA 0.5
#define DEFAULT_KEYPOINT_THRESHOLD 0.5

static void gst_npu_overlay_class_init(GstNpuOverlayClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *transform_class = GST_BASE_TRANSFORM_CLASS(klass);
  object_class->set_property = gst_npu_overlay_set_property;
  object_class->get_property = gst_npu_overlay_get_property;
  object_class->finalize = gst_npu_overlay_finalize;
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
  g_object_class_install_property(object_class, PROP_FONT,
      g_param_spec_string("font-desc", "Font description",
                          "Pango font description of the captions", "Sans 12", flags));
  g_object_class_install_property(object_class, PROP_LINE_WIDTH,
      g_param_spec_int("line-width", "Line width",
                       "Width in pixels of the boxes' outline, trails, lines and limbs", 1, 64,
                       2, flags));
  g_object_class_install_property(object_class, PROP_TRAIL_LENGTH,
      g_param_spec_uint("trail-length", "Trail length",
                        "Points (frames) of each tracked object's trail, its box's bottom "
                        "centre; an object unseen for as many frames is forgotten (0: no trails)",
                        0, 10000, DEFAULT_TRAIL_LENGTH, flags));
  g_object_class_install_property(object_class, PROP_MASK_ALPHA,
      g_param_spec_double("mask-alpha", "Mask alpha",
                          "Opacity of class maps and instance masks over the frame (0: not drawn)",
                          0, 1, DEFAULT_MASK_ALPHA, flags));
  g_object_class_install_property(object_class, PROP_KEYPOINT_THRESHOLD,
      g_param_spec_double("keypoint-threshold", "Keypoint threshold",
                          "Least confidence of a keypoint drawn (and of both ends of a limb)", 0,
                          1, DEFAULT_KEYPOINT_THRESHOLD, flags));
  g_object_class_install_property(object_class, PROP_DRAW,
      g_param_spec_flags("draw", "Draw",
                         "Which results are drawn (boxes+trails+lines+zones+masks+keypoints)",
                         GST_TYPE_NPU_OVERLAY_DRAW, DRAW_ALL, flags));
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "NPU result overlay", "Filter/Editor/Video",
      "Draws regions of interest (a colour per label, captions with track id, label, "
      "confidence and recognised text), tracked objects' trails, counting lines and zones with "
      "their counts, class maps, instance masks and keypoints",
      "gst-npu developers");
  transform_class->sink_event = gst_npu_overlay_sink_event;
  transform_class->stop = gst_npu_overlay_stop;
  GST_VIDEO_FILTER_CLASS(klass)->transform_frame_ip = gst_npu_overlay_transform_frame_ip;
  GST_DEBUG_CATEGORY_INIT(gst_npu_overlay_debug, "npuoverlay", 0, "NPU result overlay");
  gst_npu_frame_meta_register();
  gst_type_mark_as_plugin_api(GST_TYPE_NPU_OVERLAY_DRAW, 0);
}

static void gst_npu_overlay_init(GstNpuOverlay *self)
{
  self->font = g_strdup("Sans 12");
  self->settings = (OverlaySettings){2, DEFAULT_TRAIL_LENGTH, DEFAULT_MASK_ALPHA,
                                     DEFAULT_KEYPOINT_THRESHOLD, DRAW_ALL};
  self->trails = gst_npu_overlay_trails_new();
  self->sightings = g_array_new(FALSE, FALSE, sizeof(GstNpuOverlaySighting));
  self->ended = g_array_new(FALSE, FALSE, sizeof(guint64));
}
