/**
 * SECTION:element-npuanalytics
 *
 * Counts tracked objects (regions with nputrack's "tracking" param) that
 * cross lines, in each direction, and follows them into and out of polygon
 * zones (entries, exits, occupancy, dwell time). An object stands at its
 * box's bottom centre. A line's forward direction: from the left of the
 * line to its right when it is drawn from top to bottom (in general, from
 * the side where cross(b - a, p - a) > 0). Each stream counts on its own.
 *
 * Each frame gets a GstNpuAnalyticsMeta ("analytics": "lines" with each
 * line's points and forward and backward totals, "zones" with each zone's
 * points (its corners), occupancy, entered and left totals, points as
 * [[x, y], ...] in pixels, for npuoverlay to draw them, and "events" of
 * this frame: type "cross"
 * (with direction), "enter" or "leave" (with dwell, seconds), name and
 * object-id), which npumetaconvert writes as "analytics"; a frame with
 * events also posts them as an element message "npuanalytics" (stream,
 * pts, events). An ended track (nputrack's GstNpuTrackingMeta) leaves the
 * zones it was in.
 *
 * |[
 * gst-launch-1.0 ... ! npudecode method=yolo ! nputrack ! \
 *   npuanalytics lines="door:320,0,320,480" zones="lobby:0,0,200,0,200,480,0,480" ! \
 *   npumetaconvert ! fakesink
 * ]|
 */
#include "gstnpuanalytics.h"

#include <gst/video/video.h>

#include "gstnpuanalyticsconfig.h"
#include "gstnpuframemeta.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_analytics_debug);
#define GST_CAT_DEFAULT gst_npu_analytics_debug

struct _GstNpuAnalytics {
  GstNpuStreamFilter parent;
  GMutex lock; /* the properties */
  gchar *lines, *zones, *config_file;
  gboolean post_messages;
  /* from start to stop */
  GstNpuAnalyticsConfig *config;
};

G_DEFINE_TYPE(GstNpuAnalytics, gst_npu_analytics, GST_TYPE_NPU_STREAM_FILTER)
GST_ELEMENT_REGISTER_DEFINE(npuanalytics, "npuanalytics", GST_RANK_NONE, GST_TYPE_NPU_ANALYTICS)

enum { PROP_0, PROP_LINES, PROP_ZONES, PROP_CONFIG, PROP_POST_MESSAGES };

typedef struct {
  npu_analytics *analytics;
  GArray *objects; /* npu_tracked_object */
  GArray *ended;   /* guint64 */
} AnalyticsStream;

static void analytics_stream_free(gpointer data)
{
  AnalyticsStream *stream = data;
  npu_analytics_free(stream->analytics);
  g_array_unref(stream->objects);
  g_array_unref(stream->ended);
  g_free(stream);
}

static gboolean gst_npu_analytics_start(GstNpuStreamFilter *filter)
{
  GstNpuAnalytics *self = GST_NPU_ANALYTICS(filter);
  GstNpuAnalyticsConfig *config = gst_npu_analytics_config_new();
  GError *error = NULL;
  g_mutex_lock(&self->lock);
  gboolean ok = gst_npu_analytics_config_add_strings(config, self->lines, self->zones, &error) &&
                (!self->config_file ||
                 gst_npu_analytics_config_add_file(config, self->config_file, &error));
  g_mutex_unlock(&self->lock);
  if (!ok) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("Invalid lines or zones: %s", error->message),
                      (NULL));
    g_error_free(error);
    gst_npu_analytics_config_free(config);
    return FALSE;
  }
  if (config->lines->len == 0 && config->zone_names->len == 0)
    GST_ELEMENT_WARNING(self, LIBRARY, SETTINGS, ("No lines nor zones: nothing to count"),
                        ("set lines, zones or config"));
  self->config = config;
  return TRUE;
}

static void gst_npu_analytics_stop(GstNpuStreamFilter *filter)
{
  GstNpuAnalytics *self = GST_NPU_ANALYTICS(filter);
  gst_npu_analytics_config_free(self->config);
  self->config = NULL;
}

static gpointer gst_npu_analytics_stream_new(GstNpuStreamFilter *filter, gint stream_index)
{
  GstNpuAnalytics *self = GST_NPU_ANALYTICS(filter);
  GArray *zones = gst_npu_analytics_config_zones(self->config);
  npu_analytics *analytics =
      npu_analytics_new((const npu_line *)self->config->lines->data, self->config->lines->len,
                        (const npu_zone *)zones->data, zones->len);
  g_array_unref(zones);
  if (!analytics) {
    GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Out of memory"),
                      ("no analytics for stream %d", stream_index));
    return NULL;
  }
  AnalyticsStream *stream = g_new0(AnalyticsStream, 1);
  stream->analytics = analytics;
  stream->objects = g_array_new(FALSE, FALSE, sizeof(npu_tracked_object));
  stream->ended = g_array_new(FALSE, FALSE, sizeof(guint64));
  return stream;
}

static void collect(AnalyticsStream *stream, GstBuffer *frame)
{
  g_array_set_size(stream->objects, 0);
  g_array_set_size(stream->ended, 0);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(frame, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)meta;
    GstStructure *tracking = gst_video_region_of_interest_meta_get_param(roi, "tracking");
    guint64 id;
    if (!tracking || !gst_structure_get_uint64(tracking, "object-id", &id))
      continue;
    npu_tracked_object o = {id, {(float)roi->x, (float)roi->y, (float)roi->w, (float)roi->h}};
    g_array_append_val(stream->objects, o);
  }
  GstCustomMeta *tracks = gst_buffer_get_custom_meta(frame, GST_NPU_TRACKING_META_NAME);
  const GValue *ended =
      tracks ? gst_structure_get_value(gst_custom_meta_get_structure(tracks), "ended") : NULL;
  for (guint i = 0; ended && GST_VALUE_HOLDS_ARRAY(ended) && i < gst_value_array_get_size(ended);
       i++) {
    const GValue *track = gst_value_array_get_value(ended, i);
    guint64 id;
    if (GST_VALUE_HOLDS_STRUCTURE(track) &&
        gst_structure_get_uint64(gst_value_get_structure(track), "object-id", &id))
      g_array_append_val(stream->ended, id);
  }
}

static GstStructure *event_structure(GstNpuAnalytics *self, const npu_event *e)
{
  gboolean on_line = e->kind == NPU_EVENT_CROSS_FORWARD || e->kind == NPU_EVENT_CROSS_BACKWARD;
  const gchar *name = g_ptr_array_index(on_line ? self->config->line_names
                                                : self->config->zone_names, e->index);
  static const gchar *types[] = {"cross", "cross", "enter", "leave"};
  GstStructure *s = gst_structure_new("event", "type", G_TYPE_STRING, types[e->kind], "name",
                                      G_TYPE_STRING, name, "object-id", G_TYPE_UINT64,
                                      (guint64)e->object_id, NULL);
  if (on_line)
    gst_structure_set(s, "direction", G_TYPE_STRING,
                      e->kind == NPU_EVENT_CROSS_FORWARD ? "forward" : "backward", NULL);
  if (e->kind == NPU_EVENT_LEAVE && e->dwell >= 0)
    gst_structure_set(s, "dwell", G_TYPE_DOUBLE, (gdouble)e->dwell / GST_SECOND, NULL);
  return s;
}

/* [[x, y], ...]: a line's ends or a zone's corners, pixels. */
static GstStructure *with_points(GstStructure *entry, const npu_point *points, guint count)
{
  GValue list = G_VALUE_INIT;
  g_value_init(&list, GST_TYPE_ARRAY);
  for (guint i = 0; i < count; i++) {
    GValue point = G_VALUE_INIT, coordinate = G_VALUE_INIT;
    g_value_init(&point, GST_TYPE_ARRAY);
    g_value_init(&coordinate, G_TYPE_DOUBLE);
    g_value_set_double(&coordinate, points[i].x);
    gst_value_array_append_value(&point, &coordinate);
    g_value_set_double(&coordinate, points[i].y);
    gst_value_array_append_value(&point, &coordinate);
    gst_value_array_append_and_take_value(&list, &point);
  }
  gst_structure_take_value(entry, "points", &list);
  return entry;
}

static void attach_results(GstNpuAnalytics *self, AnalyticsStream *stream, gint stream_index,
                           GstBuffer *frame)
{
  GstStructure *results = gst_npu_frame_meta_get_or_add(frame, GST_NPU_ANALYTICS_META_NAME);
  const npu_line_counts *lines = npu_analytics_line_counts(stream->analytics);
  for (guint l = 0; l < self->config->lines->len; l++) {
    const npu_line *line = &g_array_index(self->config->lines, npu_line, l);
    const npu_point ends[] = {line->a, line->b};
    gst_npu_structure_append(
        results, "lines",
        with_points(gst_structure_new("line", "name", G_TYPE_STRING,
                                      g_ptr_array_index(self->config->line_names, l), "forward",
                                      G_TYPE_UINT64, (guint64)lines[l].forward, "backward",
                                      G_TYPE_UINT64, (guint64)lines[l].backward, NULL),
                    ends, 2));
  }
  const npu_zone_counts *zones = npu_analytics_zone_counts(stream->analytics);
  for (guint z = 0; z < self->config->zone_names->len; z++) {
    GArray *corners = g_ptr_array_index(self->config->zone_corners, z);
    gst_npu_structure_append(
        results, "zones",
        with_points(gst_structure_new("zone", "name", G_TYPE_STRING,
                                      g_ptr_array_index(self->config->zone_names, z),
                                      "occupancy", G_TYPE_UINT64, (guint64)zones[z].occupancy,
                                      "entered", G_TYPE_UINT64, (guint64)zones[z].entered,
                                      "left", G_TYPE_UINT64, (guint64)zones[z].left, NULL),
                    (const npu_point *)corners->data, corners->len));
  }
  size_t count;
  const npu_event *events = npu_analytics_events(stream->analytics, &count);
  GValue list = G_VALUE_INIT;
  g_value_init(&list, GST_TYPE_ARRAY);
  for (size_t i = 0; i < count; i++) {
    GValue event = G_VALUE_INIT;
    g_value_init(&event, GST_TYPE_STRUCTURE);
    g_value_take_boxed(&event, event_structure(self, &events[i]));
    gst_value_array_append_and_take_value(&list, &event);
  }
  g_mutex_lock(&self->lock);
  gboolean post = self->post_messages;
  g_mutex_unlock(&self->lock);
  if (count > 0 && post) {
    GstStructure *message = gst_structure_new("npuanalytics", "stream", G_TYPE_INT, stream_index,
                                              "pts", G_TYPE_UINT64, GST_BUFFER_PTS(frame), NULL);
    gst_structure_set_value(message, "events", &list);
    gst_element_post_message(GST_ELEMENT(self),
                             gst_message_new_element(GST_OBJECT(self), message));
  }
  gst_structure_take_value(results, "events", &list);
}

static GstFlowReturn gst_npu_analytics_process(GstNpuStreamFilter *filter, gpointer state,
                                               gint stream_index, GstBuffer *frame)
{
  GstNpuAnalytics *self = GST_NPU_ANALYTICS(filter);
  AnalyticsStream *stream = state;
  collect(stream, frame);
  gint64 time = GST_BUFFER_PTS_IS_VALID(frame) ? (gint64)GST_BUFFER_PTS(frame) : -1;
  if (!npu_analytics_update(stream->analytics, (npu_tracked_object *)stream->objects->data,
                            stream->objects->len, time) ||
      !npu_analytics_forget(stream->analytics, (guint64 *)stream->ended->data,
                            stream->ended->len, time)) {
    GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Out of memory counting objects"), (NULL));
    return GST_FLOW_ERROR;
  }
  attach_results(self, stream, stream_index, frame);
  return GST_FLOW_OK;
}

static gchar **string_property(GstNpuAnalytics *self, guint id)
{
  return id == PROP_LINES ? &self->lines : id == PROP_ZONES ? &self->zones : &self->config_file;
}

static void gst_npu_analytics_set_property(GObject *object, guint id, const GValue *value,
                                           GParamSpec *pspec)
{
  GstNpuAnalytics *self = GST_NPU_ANALYTICS(object);
  g_mutex_lock(&self->lock);
  if (id == PROP_LINES || id == PROP_ZONES || id == PROP_CONFIG) {
    gchar **field = string_property(self, id);
    g_free(*field);
    *field = g_value_dup_string(value);
  } else if (id == PROP_POST_MESSAGES) {
    self->post_messages = g_value_get_boolean(value);
  } else {
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  g_mutex_unlock(&self->lock);
}

static void gst_npu_analytics_get_property(GObject *object, guint id, GValue *value,
                                           GParamSpec *pspec)
{
  GstNpuAnalytics *self = GST_NPU_ANALYTICS(object);
  g_mutex_lock(&self->lock);
  if (id == PROP_LINES || id == PROP_ZONES || id == PROP_CONFIG)
    g_value_set_string(value, *string_property(self, id));
  else if (id == PROP_POST_MESSAGES)
    g_value_set_boolean(value, self->post_messages);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  g_mutex_unlock(&self->lock);
}

static void gst_npu_analytics_finalize(GObject *object)
{
  GstNpuAnalytics *self = GST_NPU_ANALYTICS(object);
  g_free(self->lines);
  g_free(self->zones);
  g_free(self->config_file);
  gst_npu_analytics_config_free(self->config);
  g_mutex_clear(&self->lock);
  G_OBJECT_CLASS(gst_npu_analytics_parent_class)->finalize(object);
}

#define ANALYTICS_PARAM_FLAGS (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)

static void gst_npu_analytics_class_init(GstNpuAnalyticsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstNpuStreamFilterClass *filter_class = GST_NPU_STREAM_FILTER_CLASS(klass);
  object_class->set_property = gst_npu_analytics_set_property;
  object_class->get_property = gst_npu_analytics_get_property;
  object_class->finalize = gst_npu_analytics_finalize;
  g_object_class_install_property(object_class, PROP_LINES,
      g_param_spec_string("lines", "Lines",
                          "Counting lines, 'name:x1,y1,x2,y2' separated by ';' (pixels); "
                          "forward is left to right for a line drawn top to bottom",
                          NULL, ANALYTICS_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_ZONES,
      g_param_spec_string("zones", "Zones",
                          "Polygon zones, 'name:x1,y1,x2,y2,x3,y3...' separated by ';' (pixels)",
                          NULL, ANALYTICS_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_CONFIG,
      g_param_spec_string("config", "Config file",
                          "JSON file of more lines and zones: {\"lines\": [{\"name\": \"door\", "
                          "\"points\": [[x, y], [x, y]]}], \"zones\": [{\"name\": ..., "
                          "\"points\": [[x, y], ...]}]}",
                          NULL, ANALYTICS_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_POST_MESSAGES,
      g_param_spec_boolean("post-messages", "Post messages",
                           "Post each frame's events as an element message \"npuanalytics\"",
                           TRUE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                               GST_PARAM_MUTABLE_PLAYING));
  gst_element_class_set_static_metadata(
      element_class, "NPU line and zone analytics", "Filter/Analyzer/Video",
      "Counts tracked objects crossing lines (per direction) and entering, leaving and staying "
      "in zones (occupancy, dwell): totals and events per frame as meta, JSON and messages",
      "gst-npu developers");
  filter_class->writes_metas = TRUE;
  filter_class->start = gst_npu_analytics_start;
  filter_class->stop = gst_npu_analytics_stop;
  filter_class->stream_new = gst_npu_analytics_stream_new;
  filter_class->stream_free = analytics_stream_free;
  filter_class->process = gst_npu_analytics_process;
  GST_DEBUG_CATEGORY_INIT(gst_npu_analytics_debug, "npuanalytics", 0,
                          "NPU line and zone analytics");
  gst_npu_frame_meta_register();
}

static void gst_npu_analytics_init(GstNpuAnalytics *self)
{
  g_mutex_init(&self->lock);
  self->post_messages = TRUE;
}
