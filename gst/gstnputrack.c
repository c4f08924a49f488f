/**
 * SECTION:element-nputrack
 *
 * Follows the objects of each stream over its frames (ByteTrack: a
 * constant-velocity Kalman filter per object, IoU matching by optimal
 * assignment, high-score detections matched first and low-score ones then
 * kept for the tracks still left). Reads each GstVideoRegionOfInterestMeta
 * (npudecode's "detection" confidence is its score; a region without one
 * scores 1) and adds a "tracking" param to each region that belongs to a
 * track: object-id (per stream, from 1), state ("tentative" until
 * min-hits matches, then "confirmed"), hits and age (frames). Regions left
 * out (low score, nothing to match) get no param. A confirmed track that
 * goes unmatched for more than max-age frames ends: the frame it ends on
 * carries it once in a GstNpuTrackingMeta ("ended": object-id, label, last
 * box, hits, age), which npumetaconvert writes as "tracking".
 *
 * Request pads sink_%u/src_%u in pairs: one nputrack serves every stream of
 * a pipeline, each with its own tracker (frames of several sources merged
 * on one pad are kept apart by their npuinfer pad index).
 *
 * |[
 * gst-launch-1.0 filesrc location=in.mp4 ! decodebin ! videoconvert ! \
 *   npuinfer model=yolov8n.onnx ! npudecode method=yolo labels=coco.txt ! \
 *   nputrack ! npumetaconvert ! fakesink
 * ]|
 */
#include "gstnputrack.h"

#include <gst/video/video.h>

#include "analytics/tracker.h"
#include "gstnpuframemeta.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_track_debug);
#define GST_CAT_DEFAULT gst_npu_track_debug

struct _GstNpuTrack {
  GstNpuStreamFilter parent;
  GMutex lock; /* the properties */
  npu_tracker_config config;
  gchar **roi_labels;
  npu_tracker_config active; /* the config taken at start, for every stream */
};

G_DEFINE_TYPE(GstNpuTrack, gst_npu_track, GST_TYPE_NPU_STREAM_FILTER)
GST_ELEMENT_REGISTER_DEFINE(nputrack, "nputrack", GST_RANK_NONE, GST_TYPE_NPU_TRACK)

enum {
  PROP_0,
  PROP_HIGH_SCORE,
  PROP_LOW_SCORE,
  PROP_IOU_THRESHOLD,
  PROP_LOW_IOU_THRESHOLD,
  PROP_MIN_HITS,
  PROP_MAX_AGE,
  PROP_CLASS_AWARE,
  PROP_ROI_LABELS,
};

/* One stream's tracker and its per-frame scratch. */
typedef struct {
  npu_tracker *tracker;
  GArray *detections; /* npu_track_detection */
  GArray *matches;    /* npu_track_match */
  GPtrArray *regions; /* GstVideoRegionOfInterestMeta *, as detections */
} TrackStream;

static void track_stream_free(gpointer data)
{
  TrackStream *stream = data;
  npu_tracker_free(stream->tracker);
  g_array_unref(stream->detections);
  g_array_unref(stream->matches);
  g_ptr_array_unref(stream->regions);
  g_free(stream);
}

static gpointer gst_npu_track_stream_new(GstNpuStreamFilter *filter, gint stream_index)
{
  GstNpuTrack *self = GST_NPU_TRACK(filter);
  npu_tracker *tracker = npu_tracker_new(&self->active);
  if (!tracker) {
    /* the settings were checked at start: only memory can be missing */
    GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Out of memory"),
                      ("no tracker for stream %d", stream_index));
    return NULL;
  }
  TrackStream *stream = g_new0(TrackStream, 1);
  stream->tracker = tracker;
  stream->detections = g_array_new(FALSE, FALSE, sizeof(npu_track_detection));
  stream->matches = g_array_new(FALSE, FALSE, sizeof(npu_track_match));
  stream->regions = g_ptr_array_new();
  return stream;
}

static gboolean gst_npu_track_start(GstNpuStreamFilter *filter)
{
  GstNpuTrack *self = GST_NPU_TRACK(filter);
  g_mutex_lock(&self->lock);
  self->active = self->config;
  g_mutex_unlock(&self->lock);
  npu_tracker *tracker = npu_tracker_new(&self->active);
  if (!tracker) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("Invalid tracker settings"),
                      ("low-score %.2f must not exceed high-score %.2f", self->active.low_score,
                       self->active.high_score));
    return FALSE;
  }
  npu_tracker_free(tracker);
  return TRUE;
}

static gboolean label_tracked(GstNpuTrack *self, GQuark label)
{
  if (!self->roi_labels || !self->roi_labels[0])
    return TRUE;
  return g_strv_contains((const gchar *const *)self->roi_labels, g_quark_to_string(label));
}

/* A region's score: the confidence of its first param that has one
 * (npudecode's "detection"), else 1. */
static gdouble score_of(const GstVideoRegionOfInterestMeta *roi)
{
  for (GList *p = roi->params; p; p = p->next) {
    gdouble confidence;
    if (gst_structure_get_double(p->data, "confidence", &confidence))
      return confidence;
  }
  return 1.0;
}

static void collect_detections(GstNpuTrack *self, TrackStream *stream, GstBuffer *frame)
{
  g_array_set_size(stream->detections, 0);
  g_ptr_array_set_size(stream->regions, 0);
  g_mutex_lock(&self->lock);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(frame, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)meta;
    if (!label_tracked(self, roi->roi_type) ||
        gst_video_region_of_interest_meta_get_param(roi, "tracking"))
      continue;
    /* the label is the class: a track never changes label */
    npu_track_detection d = {{(float)roi->x, (float)roi->y, (float)roi->w, (float)roi->h},
                             (float)score_of(roi), (int)roi->roi_type};
    g_array_append_val(stream->detections, d);
    g_ptr_array_add(stream->regions, roi);
  }
  g_mutex_unlock(&self->lock);
}

static void report_ended(GstNpuTrack *self, TrackStream *stream, gint stream_index,
                         GstBuffer *frame)
{
  size_t count;
  const npu_track_end *ended = npu_tracker_ended(stream->tracker, &count);
  if (count == 0)
    return;
  GstStructure *tracking = gst_npu_frame_meta_get_or_add(frame, GST_NPU_TRACKING_META_NAME);
  for (size_t i = 0; i < count; i++) {
    const npu_track_end *e = &ended[i];
    GST_DEBUG_OBJECT(self, "stream %d: track %" G_GUINT64_FORMAT " ended", stream_index, e->id);
    gst_npu_structure_append(
        tracking, "ended",
        gst_structure_new("track", "object-id", G_TYPE_UINT64, (guint64)e->id, "label",
                          G_TYPE_STRING, g_quark_to_string((GQuark)e->class_id), "x",
                          G_TYPE_INT, (gint)e->box.x, "y", G_TYPE_INT, (gint)e->box.y, "w",
                          G_TYPE_INT, (gint)e->box.w, "h", G_TYPE_INT, (gint)e->box.h, "hits",
                          G_TYPE_INT, e->hits, "age", G_TYPE_INT, e->age, NULL));
  }
}

static GstFlowReturn gst_npu_track_process(GstNpuStreamFilter *filter, gpointer state,
                                           gint stream_index, GstBuffer *frame)
{
  GstNpuTrack *self = GST_NPU_TRACK(filter);
  TrackStream *stream = state;
  collect_detections(self, stream, frame);
  guint count = stream->detections->len;
  g_array_set_size(stream->matches, count);
  npu_track_match *matches = (npu_track_match *)stream->matches->data;
  if (!npu_tracker_update(stream->tracker, (npu_track_detection *)stream->detections->data, count,
                          matches)) {
    GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Out of memory tracking %u objects", count),
                      (NULL));
    return GST_FLOW_ERROR;
  }
  for (guint i = 0; i < count; i++) {
    if (matches[i].id == 0)
      continue;
    gst_video_region_of_interest_meta_add_param(
        g_ptr_array_index(stream->regions, i),
        gst_structure_new("tracking", "object-id", G_TYPE_UINT64, (guint64)matches[i].id, "state",
                          G_TYPE_STRING, npu_track_state_name(matches[i].state), "hits",
                          G_TYPE_INT, matches[i].hits, "age", G_TYPE_INT, matches[i].age, NULL));
  }
  report_ended(self, stream, stream_index, frame);
  return GST_FLOW_OK;
}

static void gst_npu_track_set_property(GObject *object, guint id, const GValue *value,
                                       GParamSpec *pspec)
{
  GstNpuTrack *self = GST_NPU_TRACK(object);
  npu_tracker_config *c = &self->config;
  g_mutex_lock(&self->lock);
  switch (id) {
  case PROP_HIGH_SCORE:
    c->high_score = (float)g_value_get_double(value);
    break;
  case PROP_LOW_SCORE:
    c->low_score = (float)g_value_get_double(value);
    break;
  case PROP_IOU_THRESHOLD:
    c->iou_threshold = (float)g_value_get_double(value);
    break;
  case PROP_LOW_IOU_THRESHOLD:
    c->low_iou_threshold = (float)g_value_get_double(value);
    break;
  case PROP_MIN_HITS:
    c->min_hits = g_value_get_int(value);
    break;
  case PROP_MAX_AGE:
    c->max_age = g_value_get_int(value);
    break;
  case PROP_CLASS_AWARE:
    c->class_aware = g_value_get_boolean(value);
    break;
  case PROP_ROI_LABELS:
    g_strfreev(self->roi_labels);
    self->roi_labels = g_value_get_string(value) && *g_value_get_string(value)
                           ? g_strsplit(g_value_get_string(value), ",", -1) : NULL;
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  g_mutex_unlock(&self->lock);
}

static void gst_npu_track_get_property(GObject *object, guint id, GValue *value,
                                       GParamSpec *pspec)
{
  GstNpuTrack *self = GST_NPU_TRACK(object);
  const npu_tracker_config *c = &self->config;
  g_mutex_lock(&self->lock);
  switch (id) {
  case PROP_HIGH_SCORE:
    g_value_set_double(value, c->high_score);
    break;
  case PROP_LOW_SCORE:
    g_value_set_double(value, c->low_score);
    break;
  case PROP_IOU_THRESHOLD:
    g_value_set_double(value, c->iou_threshold);
    break;
  case PROP_LOW_IOU_THRESHOLD:
    g_value_set_double(value, c->low_iou_threshold);
    break;
  case PROP_MIN_HITS:
    g_value_set_int(value, c->min_hits);
    break;
  case PROP_MAX_AGE:
    g_value_set_int(value, c->max_age);
    break;
  case PROP_CLASS_AWARE:
    g_value_set_boolean(value, c->class_aware);
    break;
  case PROP_ROI_LABELS:
    g_value_take_string(value, self->roi_labels ? g_strjoinv(",", self->roi_labels) : NULL);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  g_mutex_unlock(&self->lock);
}

static void gst_npu_track_finalize(GObject *object)
{
  GstNpuTrack *self = GST_NPU_TRACK(object);
  g_strfreev(self->roi_labels);
  g_mutex_clear(&self->lock);
  G_OBJECT_CLASS(gst_npu_track_parent_class)->finalize(object);
}

#define TRACK_PARAM_FLAGS (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)

static void gst_npu_track_class_init(GstNpuTrackClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstNpuStreamFilterClass *filter_class = GST_NPU_STREAM_FILTER_CLASS(klass);
  object_class->set_property = gst_npu_track_set_property;
  object_class->get_property = gst_npu_track_get_property;
  object_class->finalize = gst_npu_track_finalize;
  npu_tracker_config d;
  npu_tracker_config_default(&d);
  g_object_class_install_property(object_class, PROP_HIGH_SCORE,
      g_param_spec_double("high-score", "High score",
                          "Detections scoring at least this are matched first and start tracks",
                          0, 1, d.high_score, TRACK_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_LOW_SCORE,
      g_param_spec_double("low-score", "Low score",
                          "Detections scoring less are ignored; those between low-score and "
                          "high-score only continue tracks matched on the frame before "
                          "(objects partly hidden); at most high-score",
                          0, 1, d.low_score, TRACK_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_IOU_THRESHOLD,
      g_param_spec_double("iou-threshold", "IoU threshold",
                          "Least overlap (intersection over union) of a high-score detection "
                          "with a track's predicted box for a match",
                          0, 1, d.iou_threshold, TRACK_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_LOW_IOU_THRESHOLD,
      g_param_spec_double("low-iou-threshold", "Low-score IoU threshold",
                          "Least overlap of a low-score detection with a track for a match",
                          0, 1, d.low_iou_threshold, TRACK_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_MIN_HITS,
      g_param_spec_int("min-hits", "Min hits",
                       "Matches on consecutive frames (birth included) that confirm a track; "
                       "a tentative track ends silently at its first miss",
                       1, G_MAXINT, d.min_hits, TRACK_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_MAX_AGE,
      g_param_spec_int("max-age", "Max age",
                       "Frames a confirmed track is kept (on its predicted motion) without a "
                       "match before it ends",
                       0, G_MAXINT, d.max_age, TRACK_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_CLASS_AWARE,
      g_param_spec_boolean("class-aware", "Class aware",
                           "Match only regions of a track's label", d.class_aware,
                           TRACK_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_ROI_LABELS,
      g_param_spec_string("roi-labels", "Region labels",
                          "Comma-separated labels of the regions to track (empty: all)", NULL,
                          TRACK_PARAM_FLAGS));
  gst_element_class_set_static_metadata(
      element_class, "NPU object tracker", "Filter/Analyzer/Video",
      "Tracks the regions of interest of each stream (Kalman motion, optimal IoU assignment, "
      "ByteTrack's low-score pass): an object id and state per region, ended tracks per frame",
      "gst-npu developers");
  filter_class->writes_metas = TRUE;
  filter_class->start = gst_npu_track_start;
  filter_class->stream_new = gst_npu_track_stream_new;
  filter_class->stream_free = track_stream_free;
  filter_class->process = gst_npu_track_process;
  GST_DEBUG_CATEGORY_INIT(gst_npu_track_debug, "nputrack", 0, "NPU object tracker");
  gst_npu_frame_meta_register();
}

static void gst_npu_track_init(GstNpuTrack *self)
{
  g_mutex_init(&self->lock);
  npu_tracker_config_default(&self->config);
}
