/**
 * SECTION:element-npudecode
 *
 * Reads the GstNpuTensorMeta that npuinfer attaches and writes answers as
 * GstVideoRegionOfInterestMeta with a GstStructure param, so any GStreamer
 * code can read them:
 * - `classify`: the best class of a score vector (softmax optional) on a
 *   full-frame ROI, param "classification" (label, class-id, confidence);
 * - `yolo`: YOLOv5/v8 boxes over `threshold`, class-wise NMS, mapped from the
 *   model's input (`input-width` x `input-height`, stretched) to the frame,
 *   param "detection" (label, class-id, confidence);
 * - `dbnet`: PP-OCR text regions from a probability map, param "text-region"
 *   (confidence), in reading order (lines top to bottom, each left to right);
 * - `ctc`: greedy CTC text from a recogniser's scores with the dictionary in
 *   `labels`, param "text" (text, confidence) on each region npuinfer's roi
 *   mode recognised (a frame without regions gets no text). The dictionary
 *   is the model's own keys file: one character per line, class 0 the CTC
 *   blank; a model with one class more than that (PP-OCR's) has the space
 *   last;
 * - `ssd`: SSD heads' boxes ([1, boxes, 4]: x0, y0, x1, y1 normalised to the
 *   model input) and scores ([1, boxes, classes], class 0 the background
 *   unless `background` is off), two outputs of one inference told apart by
 *   shape (the first [.., 4] output is the boxes), boxes as yolo's;
 * - `segmentation`: a [1, classes, H, W] score map (argmax) or a class-id map
 *   ([1, H, W] or [1, 1, H, W], float32 or int64) into one ROI
 *   "segmentation" over the frame area the map covers, param "segmentation"
 *   (width, height, classes, data: width x height class-id bytes);
 * - `yolo-pose`: YOLOv8-pose ([1, 5 + 3 x keypoints, boxes]) people as
 *   yolo's detections with a param "keypoints" (x, y, confidence arrays);
 * - `yolo-seg`: YOLOv8-seg (detections [1, 4 + classes + 32, boxes] and
 *   prototypes [1, 32, MH, MW]) as yolo's detections with a param "mask"
 *   (width, height, data: 0 or 255 bytes over the ROI box);
 * - `custom`: a parser library (`parser`, gst/npu/npu-decoder.h) given each
 *   inference's tensors returns regions.
 *
 * |[
 * gst-launch-1.0 videotestsrc ! npuinfer model=resnet.onnx ! npudecode method=classify labels=imagenet.txt ! fakesink
 * ]|
 */
#include "gstnpudecode.h"

#include <gst/video/video.h>
#include <math.h>
#include <npu/npu.h>

#include "gst/npu/npu-tensor-meta.h"
#include "gstnpudecodedense.h"
#include "gstnpudecodeparser.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_decode_debug);
#define GST_CAT_DEFAULT gst_npu_decode_debug

typedef enum {
  METHOD_CLASSIFY,
  METHOD_YOLO,
  METHOD_DBNET,
  METHOD_CTC,
  METHOD_SSD,
  METHOD_SEGMENTATION,
  METHOD_YOLO_POSE,
  METHOD_YOLO_SEG,
  METHOD_CUSTOM,
} DecodeMethod;

struct _GstNpuDecode {
  GstBaseTransform parent;
  DecodeMethod method;
  gchar *tensor;
  gchar *labels_path;
  gchar **labels; /* loaded in start() */
  guint label_count;
  gboolean softmax;
  gdouble threshold, iou_threshold, box_threshold, unclip_ratio, line_margin;
  gint yolo_version;
  guint input_width, input_height;
  guint keypoints;     /* yolo-pose */
  gboolean background; /* ssd: class 0 is the background */
  gchar *parser_path, *parser_options;
  GstNpuDecodeParser *parser; /* custom: loaded in start() */
  GstVideoInfo info;
  gint32 *scratch; /* DBNet's labels and queue */
  gsize scratch_count;
  npu_text_region *regions; /* DBNet's regions, MAX_TEXT_REGIONS */
  npu_detection *detections; /* YOLO's and SSD's candidates */
  gsize detection_count;
  gboolean print_results;
};

#define MAX_TEXT_REGIONS 1000 /* per frame, as PP-OCR's max_candidates */

G_DEFINE_TYPE(GstNpuDecode, gst_npu_decode, GST_TYPE_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(npudecode, "npudecode", GST_RANK_NONE, GST_TYPE_NPU_DECODE)

enum {
  PROP_0,
  PROP_METHOD,
  PROP_TENSOR,
  PROP_LABELS,
  PROP_SOFTMAX,
  PROP_THRESHOLD,
  PROP_IOU_THRESHOLD,
  PROP_BOX_THRESHOLD,
  PROP_UNCLIP_RATIO,
  PROP_LINE_MARGIN,
  PROP_YOLO_VERSION,
  PROP_INPUT_WIDTH,
  PROP_INPUT_HEIGHT,
  PROP_PRINT_RESULTS,
  PROP_KEYPOINTS,
  PROP_BACKGROUND,
  PROP_PARSER,
  PROP_PARSER_OPTIONS,
};

#define GST_TYPE_NPU_DECODE_METHOD (gst_npu_decode_method_get_type())
static GType gst_npu_decode_method_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {METHOD_CLASSIFY, "Best class of a score vector", "classify"},
      {METHOD_YOLO, "YOLOv5/YOLOv8 boxes with NMS", "yolo"},
      {METHOD_DBNET, "PP-OCR (DBNet) text regions from a probability map", "dbnet"},
      {METHOD_CTC, "Greedy CTC text from recogniser scores", "ctc"},
      {METHOD_SSD,
       "SSD boxes [1, N, 4] (x0 y0 x1 y1, 0..1) and scores [1, N, classes], two outputs told "
       "apart by shape, with NMS",
       "ssd"},
      {METHOD_SEGMENTATION,
       "Semantic segmentation: scores [1, classes, H, W] or class ids [1, H, W] into one "
       "'segmentation' ROI with a class-id byte map",
       "segmentation"},
      {METHOD_YOLO_POSE,
       "YOLOv8-pose [1, 5 + 3 x keypoints, boxes]: people with a 'keypoints' param",
       "yolo-pose"},
      {METHOD_YOLO_SEG,
       "YOLOv8-seg [1, 4 + classes + 32, boxes] and prototypes [1, 32, MH, MW]: detections "
       "with a 'mask' param",
       "yolo-seg"},
      {METHOD_CUSTOM, "A parser library's regions (see 'parser' and gst/npu/npu-decoder.h)",
       "custom"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstNpuDecodeMethod", values));
  return type;
}

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));

/* "[1, 5, 400]" */
static gchar *shape_text(const GstNpuTensor *t)
{
  GString *text = g_string_new("[");
  for (guint d = 0; d < t->rank; d++)
    g_string_append_printf(text, "%s%" G_GINT64_FORMAT, d ? ", " : "", t->dims[d]);
  return g_string_free(g_string_append_c(text, ']'), FALSE);
}

static const gchar *label_of(GstNpuDecode *self, gint class_id)
{
  return class_id >= 0 && (guint)class_id < self->label_count ? self->labels[class_id] : NULL;
}

static guint count_rois(GstBuffer *buffer)
{
  guint n = 0;
  gpointer state = NULL;
  while (gst_buffer_iterate_meta_filtered(buffer, &state,
                                          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    n++;
  return n;
}

/* A param as print-results shows it: byte fields (masks, class maps) as
 * their size in bytes, not their bytes. */
static gchar *printable(const GstStructure *param)
{
  GstStructure *shown = gst_structure_copy(param);
  for (gint i = gst_structure_n_fields(shown) - 1; i >= 0; i--) {
    const gchar *field = gst_structure_nth_field_name(shown, (guint)i);
    const GValue *value = gst_structure_get_value(shown, field);
    if (G_VALUE_HOLDS(value, G_TYPE_BYTES)) {
      GBytes *bytes = g_value_get_boxed(value);
      gst_structure_set(shown, field, G_TYPE_UINT64,
                        (guint64)(bytes ? g_bytes_get_size(bytes) : 0), NULL);
    }
  }
  gchar *text = gst_structure_to_string(shown);
  gst_structure_free(shown);
  return text;
}

/* A result: a param (and an optional second one, `extra`) on the ROI
 * npuinfer ran on (roi mode: `roi_id` >= 0), else a new ROI (with an id
 * unique in the frame) carrying it. */
static void add_result(GstNpuDecode *self, GstBuffer *buffer, gint roi_id, const gchar *roi_type,
                       gint x, gint y, gint w, gint h, GstStructure *param, GstStructure *extra)
{
  GstVideoRegionOfInterestMeta *roi =
      roi_id >= 0 ? gst_buffer_get_video_region_of_interest_meta_id(buffer, roi_id) : NULL;
  if (!roi) {
    guint id = count_rois(buffer);
    roi = gst_buffer_add_video_region_of_interest_meta(buffer, roi_type, MAX(x, 0), MAX(y, 0),
                                                       (guint)MAX(w, 0), (guint)MAX(h, 0));
    roi->id = (gint)id;
  }
  if (self->print_results) {
    gchar *fields = printable(param), *more = extra ? printable(extra) : NULL;
    g_print("%s %" GST_TIME_FORMAT " %s #%d at %u,%u %ux%u: %s%s%s\n", GST_OBJECT_NAME(self),
            GST_TIME_ARGS(GST_BUFFER_PTS(buffer)), g_quark_to_string(roi->roi_type), roi->id,
            roi->x, roi->y, roi->w, roi->h, fields, more ? " " : "", more ? more : "");
    g_free(fields);
    g_free(more);
  }
  gst_video_region_of_interest_meta_add_param(roi, param);
  if (extra)
    gst_video_region_of_interest_meta_add_param(roi, extra);
}

static gboolean decode_classify(GstNpuDecode *self, GstBuffer *buffer, gint roi_id,
                                const float *scores, gsize n)
{
  uint32_t best;
  float confidence;
  if (n == 0 || npu_topk(scores, n, self->softmax, 1, &best, &confidence) != NPU_OK)
    return FALSE;
  const gchar *label = label_of(self, (gint)best);
  gchar *fallback = label ? NULL : g_strdup_printf("class %u", best);
  add_result(self, buffer, roi_id, label ? label : fallback, 0, 0, GST_VIDEO_INFO_WIDTH(&self->info),
             GST_VIDEO_INFO_HEIGHT(&self->info),
             gst_structure_new("classification", "label", G_TYPE_STRING, label ? label : fallback,
                               "class-id", G_TYPE_INT, (gint)best, "confidence", G_TYPE_DOUBLE,
                               (gdouble)confidence, NULL),
             NULL);
  g_free(fallback);
  return TRUE;
}

/* How the model's input maps back to the frame: npuinfer's record of its
 * VPP pass when there is one, else a stretch of input-width x input-height. */
static npu_letterbox mapping_of(GstNpuDecode *self, const GstNpuTensorMeta *m, double width,
                                double height)
{
  if (m->scale_x > 0 && m->scale_y > 0)
    return (npu_letterbox){m->scale_x, m->scale_y, m->offset_x, m->offset_y};
  return (npu_letterbox){(float)(width / GST_VIDEO_INFO_WIDTH(&self->info)),
                         (float)(height / GST_VIDEO_INFO_HEIGHT(&self->info)), 0, 0};
}

/* Room for `count` candidates (grown, kept for the next frames). */
static npu_detection *detections_for(GstNpuDecode *self, gsize count)
{
  if (self->detection_count < count) {
    g_free(self->detections);
    self->detections = g_new(npu_detection, count);
    self->detection_count = count;
  }
  return self->detections;
}

/* What yolo-pose and yolo-seg read for a detection besides its box: rows
 * of the YOLOv8 output (row r of candidate b at rows[r * boxes + b]) from
 * `first_row` on, and (yolo-seg) the prototypes [n, height, width]. */
typedef struct {
  const float *rows;
  gsize boxes, first_row;
  const float *prototypes;
  guint prototype_count, prototype_width, prototype_height;
} DetectionExtras;

/* yolo-pose: the detection's keypoints (rows x, y, confidence per
 * keypoint) in frame pixels, clamped to the frame. */
static GstStructure *keypoints_of(GstNpuDecode *self, const DetectionExtras *extras,
                                  const npu_detection *d, const npu_letterbox *mapping)
{
  GValue arrays[3] = {G_VALUE_INIT, G_VALUE_INIT, G_VALUE_INIT}, number = G_VALUE_INIT;
  g_value_init(&number, G_TYPE_DOUBLE);
  for (int a = 0; a < 3; a++)
    g_value_init(&arrays[a], GST_TYPE_ARRAY);
  const float *row = extras->rows + extras->first_row * extras->boxes + d->candidate;
  for (guint k = 0; k < self->keypoints; k++) {
    const float *point = row + 3 * k * extras->boxes;
    gdouble x = (point[0] - mapping->pad_x) / mapping->scale_x;
    gdouble y = (point[extras->boxes] - mapping->pad_y) / mapping->scale_y;
    gdouble values[3] = {CLAMP(x, 0, GST_VIDEO_INFO_WIDTH(&self->info)),
                         CLAMP(y, 0, GST_VIDEO_INFO_HEIGHT(&self->info)),
                         point[2 * extras->boxes]};
    for (int a = 0; a < 3; a++) {
      g_value_set_double(&number, values[a]);
      gst_value_array_append_value(&arrays[a], &number);
    }
  }
  g_value_unset(&number);
  GstStructure *keypoints = gst_structure_new_empty("keypoints");
  gst_structure_take_value(keypoints, "x", &arrays[0]);
  gst_structure_take_value(keypoints, "y", &arrays[1]);
  gst_structure_take_value(keypoints, "confidence", &arrays[2]);
  return keypoints;
}

/* yolo-seg: the detection's mask over its ROI box (frame pixels x, y, w, h),
 * at the prototypes' resolution, or the box's where that is smaller. */
static GstStructure *mask_of(GstNpuDecode *self, const DetectionExtras *extras,
                             const npu_detection *d, const npu_letterbox *mapping, const gint box[4])
{
  /* the ROI box in prototype pixels: frame -> model input -> prototypes */
  gdouble to_x = (gdouble)extras->prototype_width / self->input_width;
  gdouble to_y = (gdouble)extras->prototype_height / self->input_height;
  gdouble in_prototypes[4] = {
      (box[0] * mapping->scale_x + mapping->pad_x) * to_x,
      (box[1] * mapping->scale_y + mapping->pad_y) * to_y,
      ((box[0] + box[2]) * mapping->scale_x + mapping->pad_x) * to_x,
      ((box[1] + box[3]) * mapping->scale_y + mapping->pad_y) * to_y};
  guint width = (guint)CLAMP(lround(in_prototypes[2] - in_prototypes[0]), 1, MAX(box[2], 1));
  guint height = (guint)CLAMP(lround(in_prototypes[3] - in_prototypes[1]), 1, MAX(box[3], 1));
  guint8 *data = g_malloc((gsize)width * height);
  gst_npu_instance_mask(extras->prototypes, extras->prototype_count, extras->prototype_width,
                        extras->prototype_height,
                        extras->rows + extras->first_row * extras->boxes + d->candidate,
                        extras->boxes, in_prototypes, width, height, data);
  GBytes *bytes = g_bytes_new_take(data, (gsize)width * height);
  GstStructure *mask = gst_structure_new("mask", "width", G_TYPE_INT, (gint)width, "height",
                                         G_TYPE_INT, (gint)height, "data", G_TYPE_BYTES, bytes,
                                         NULL);
  g_bytes_unref(bytes);
  return mask;
}

/* Candidates in model-input pixels: class-wise NMS, back to the frame, and
 * one ROI each with a "detection" param (and the method's extra one). */
static gboolean report_detections(GstNpuDecode *self, GstBuffer *buffer,
                                  const GstNpuTensorMeta *m, npu_detection *found, gsize count,
                                  const DetectionExtras *extras)
{
  gsize kept = 0;
  npu_letterbox mapping = mapping_of(self, m, self->input_width, self->input_height);
  npu_status status = npu_nms(found, count, (float)self->iou_threshold, TRUE, 0, &kept);
  if (status == NPU_OK)
    status = npu_detections_unletterbox(found, kept, &mapping, GST_VIDEO_INFO_WIDTH(&self->info),
                                        GST_VIDEO_INFO_HEIGHT(&self->info));
  for (gsize i = 0; i < kept && status == NPU_OK; i++) {
    const npu_detection *d = &found[i];
    const gchar *label = label_of(self, d->class_id);
    gchar *fallback = label ? NULL : g_strdup_printf("class %d", d->class_id);
    const gint box[4] = {(gint)d->x0, (gint)d->y0, (gint)(d->x1 - d->x0), (gint)(d->y1 - d->y0)};
    GstStructure *extra = NULL;
    if (self->method == METHOD_YOLO_POSE)
      extra = keypoints_of(self, extras, d, &mapping);
    else if (self->method == METHOD_YOLO_SEG)
      extra = mask_of(self, extras, d, &mapping, box);
    add_result(self, buffer, -1, label ? label : fallback, box[0], box[1], box[2], box[3],
               gst_structure_new("detection", "label", G_TYPE_STRING, label ? label : fallback,
                                 "class-id", G_TYPE_INT, d->class_id, "confidence",
                                 G_TYPE_DOUBLE, (gdouble)d->confidence, NULL),
               extra);
    g_free(fallback);
  }
  return status == NPU_OK;
}

/* yolo, yolo-pose and yolo-seg: YOLO rows of `classes` class scores (pose:
 * one, the person), then the method's extras. */
static gboolean decode_yolo(GstNpuDecode *self, GstBuffer *buffer, const GstNpuTensorMeta *m,
                            const GstNpuTensor *t, const float *values, gsize classes,
                            const DetectionExtras *extras)
{
  gboolean v8 = self->yolo_version == 8 || self->method != METHOD_YOLO;
  gsize boxes = (gsize)(v8 ? t->dims[2] : t->dims[1]), count = 0;
  npu_detection *found = detections_for(self, boxes);
  if (npu_yolo_decode(values, v8 ? NPU_YOLO_V8 : NPU_YOLO_V5, boxes, classes,
                      (float)self->threshold, found, boxes, &count) != NPU_OK)
    return FALSE;
  return report_detections(self, buffer, m, found, MIN(count, boxes), extras);
}

/* The number of rows of a [1, rows, n] or [rows, n] tensor, else -1. */
static gint64 rows_of(const GstNpuTensor *t)
{
  return t->rank == 2 || (t->rank == 3 && t->dims[0] == 1) ? t->dims[t->rank - 2] : -1;
}

/* ssd: the meta's boxes (its first [.., boxes, 4] output) and scores
 * (another output of as many rows); NULL with an element error if absent. */
static gboolean find_ssd_outputs(GstNpuDecode *self, const GstNpuTensorMeta *m,
                                 const GstNpuTensor **boxes, const GstNpuTensor **scores)
{
  *boxes = *scores = NULL;
  for (guint i = 0; i < m->n_tensors && !*boxes; i++)
    if (rows_of(&m->tensors[i]) > 0 && m->tensors[i].dims[m->tensors[i].rank - 1] == 4)
      *boxes = &m->tensors[i];
  for (guint i = 0; *boxes && i < m->n_tensors && !*scores; i++)
    if (&m->tensors[i] != *boxes && rows_of(&m->tensors[i]) == rows_of(*boxes))
      *scores = &m->tensors[i];
  if (*scores)
    return TRUE;
  GString *shapes = g_string_new(NULL);
  for (guint i = 0; i < m->n_tensors; i++) {
    gchar *shape = shape_text(&m->tensors[i]);
    g_string_append_printf(shapes, "%s'%s' %s", i ? ", " : "", m->tensors[i].name, shape);
    g_free(shape);
  }
  GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("ssd needs boxes [1, N, 4] and scores [1, N, classes]"),
                    ("the inference's outputs are %s", shapes->str));
  g_string_free(shapes, TRUE);
  return FALSE;
}

static gboolean decode_ssd(GstNpuDecode *self, GstBuffer *buffer, const GstNpuTensorMeta *m,
                           const GstNpuTensor *boxes, const float *box_values,
                           const GstNpuTensor *scores, const float *score_values)
{
  gsize rows = (gsize)rows_of(boxes), classes = (gsize)scores->dims[scores->rank - 1], count = 0;
  npu_status status = NPU_OK;
  /* every class over the threshold is a candidate: grow to what was found */
  for (gsize capacity = MAX(self->detection_count, rows); status == NPU_OK; capacity = count) {
    status = npu_ssd_decode(box_values, score_values, rows, classes, self->background,
                            (float)self->threshold, self->input_width, self->input_height,
                            detections_for(self, capacity), capacity, &count);
    if (count <= capacity)
      break;
  }
  return status == NPU_OK && report_detections(self, buffer, m, self->detections, count, NULL);
}

/* The columns (or rows) [*first, *end) of a map of `size` pixels spanning
 * `input` model pixels whose centres land in the frame (frame pixels
 * 0..frame map to model pixels pad..pad + frame * scale). */
static void visible_span(guint size, gdouble input, gdouble scale, gdouble pad, guint frame,
                         guint *first, guint *end)
{
  gdouble per_pixel = input / size;
  *first = (guint)CLAMP(ceil(pad / per_pixel - 0.5), 0, size);
  *end = (guint)CLAMP(ceil((pad + frame * scale) / per_pixel - 0.5), *first, size);
}

/* segmentation: the class of each map pixel the frame shows, as one
 * "segmentation" ROI over the frame area those pixels cover. */
static gboolean decode_segmentation(GstNpuDecode *self, GstBuffer *buffer,
                                    const GstNpuTensorMeta *m, const GstNpuTensor *t,
                                    gconstpointer values)
{
  gboolean scores = t->rank == 4 && t->dims[1] > 1;
  guint width = (guint)t->dims[t->rank - 1], height = (guint)t->dims[t->rank - 2];
  guint frame_width = GST_VIDEO_INFO_WIDTH(&self->info);
  guint frame_height = GST_VIDEO_INFO_HEIGHT(&self->info);
  npu_letterbox mapping = mapping_of(self, m, self->input_width, self->input_height);
  GstNpuMapCrop crop;
  guint x_end, y_end;
  visible_span(width, self->input_width, mapping.scale_x, mapping.pad_x, frame_width, &crop.x,
               &x_end);
  visible_span(height, self->input_height, mapping.scale_y, mapping.pad_y, frame_height, &crop.y,
               &y_end);
  crop.w = x_end - crop.x;
  crop.h = y_end - crop.y;
  if (crop.w == 0 || crop.h == 0)
    return TRUE; /* the map shows none of the frame */
  guint8 *data = g_malloc((gsize)crop.w * crop.h);
  guint classes = 0;
  if (scores) {
    classes = (guint)t->dims[1];
    gst_npu_class_map_from_scores(values, classes, width, height, &crop, data);
  } else {
    guint largest =
        gst_npu_class_map_from_ids(values, t->dtype == NPU_DTYPE_INT64, width, &crop, data);
    classes = MAX(self->label_count, largest + 1);
  }
  /* the map pixels' extent, back in frame pixels */
  gdouble per_x = (gdouble)self->input_width / width, per_y = (gdouble)self->input_height / height;
  gdouble x0 = CLAMP((crop.x * per_x - mapping.pad_x) / mapping.scale_x, 0, frame_width);
  gdouble x1 = CLAMP((x_end * per_x - mapping.pad_x) / mapping.scale_x, 0, frame_width);
  gdouble y0 = CLAMP((crop.y * per_y - mapping.pad_y) / mapping.scale_y, 0, frame_height);
  gdouble y1 = CLAMP((y_end * per_y - mapping.pad_y) / mapping.scale_y, 0, frame_height);
  GBytes *bytes = g_bytes_new_take(data, (gsize)crop.w * crop.h);
  add_result(self, buffer, -1, "segmentation", (gint)lround(x0), (gint)lround(y0),
             (gint)(lround(x1) - lround(x0)), (gint)(lround(y1) - lround(y0)),
             gst_structure_new("segmentation", "width", G_TYPE_INT, (gint)crop.w, "height",
                               G_TYPE_INT, (gint)crop.h, "classes", G_TYPE_INT, (gint)classes,
                               "data", G_TYPE_BYTES, bytes, NULL),
             NULL);
  g_bytes_unref(bytes);
  return TRUE;
}

static int by_top_then_left(const void *a, const void *b)
{
  const npu_text_region *r = a, *q = b;
  if (r->y0 != q->y0)
    return (r->y0 > q->y0) - (r->y0 < q->y0);
  return (r->x0 > q->x0) - (r->x0 < q->x0);
}

/* Reading order: top to bottom, and left to right within a line (regions
 * whose tops are within half a region's height of each other). */
static void sort_reading_order(npu_text_region *regions, size_t count)
{
  qsort(regions, count, sizeof *regions, by_top_then_left);
  for (size_t i = 1; i < count; i++)
    for (size_t j = i; j > 0; j--) {
      npu_text_region *left = &regions[j - 1], *right = &regions[j];
      float line = MIN(left->y1 - left->y0, right->y1 - right->y0) / 2;
      if (!(fabsf(right->y0 - left->y0) < line && right->x0 < left->x0))
        break;
      npu_text_region swap = *left;
      *left = *right;
      *right = swap;
    }
}

/* Whether two regions are on one line: they overlap vertically by at least
 * half the smaller one's height. */
static gboolean same_line(const npu_text_region *a, const npu_text_region *b)
{
  float overlap = MIN(a->y1, b->y1) - MAX(a->y0, b->y0);
  return overlap >= MIN(a->y1 - a->y0, b->y1 - b->y0) / 2;
}

/* Neighbours on one line whose expanded boxes overlap become one region:
 * DBNet often splits a line at a wide space, and the unclip then reaches
 * into the next word, whose recognition reads the overlap as a stray
 * character (", 42" for "42"). Regions stay in reading order; returns how
 * many are left. */
static size_t merge_touching_words(npu_text_region *regions, size_t count)
{
  size_t kept = 0;
  for (size_t i = 0; i < count; i++) {
    npu_text_region *last = kept ? &regions[kept - 1] : NULL;
    const npu_text_region *r = &regions[i];
    if (last && same_line(last, r) && r->x0 <= last->x1 && r->x1 > last->x1) {
      float width = last->x1 - last->x0, added = r->x1 - last->x1;
      last->score = (last->score * width + r->score * added) / (width + added);
      last->x1 = r->x1;
      last->y0 = MIN(last->y0, r->y0);
      last->y1 = MAX(last->y1, r->y1);
      float corners[4][2] = {{last->x0, last->y0}, {last->x1, last->y0}, {last->x1, last->y1},
                             {last->x0, last->y1}};
      memcpy(last->corners, corners, sizeof corners);
      continue;
    }
    regions[kept++] = *r;
  }
  return kept;
}

static gboolean decode_dbnet(GstNpuDecode *self, GstBuffer *buffer, const GstNpuTensorMeta *m,
                             const GstNpuTensor *t, const float *map)
{
  uint32_t height = (uint32_t)t->dims[t->rank - 2], width = (uint32_t)t->dims[t->rank - 1];
  gsize need = 2 * (gsize)width * height;
  if (self->scratch_count < need) {
    g_free(self->scratch);
    self->scratch = g_new(gint32, need);
    self->scratch_count = need;
  }
  npu_dbnet_params params = {(float)self->threshold, (float)self->box_threshold,
                             (float)self->unclip_ratio, 3};
  if (!self->regions)
    self->regions = g_new(npu_text_region, MAX_TEXT_REGIONS);
  size_t count = 0;
  if (npu_dbnet_regions(map, width, height, &params, self->scratch, self->regions,
                        MAX_TEXT_REGIONS, &count) != NPU_OK)
    return FALSE;
  count = MIN(count, MAX_TEXT_REGIONS);
  sort_reading_order(self->regions, count);
  count = merge_touching_words(self->regions, count);
  /* the map covers the model input: back to frame pixels */
  npu_letterbox to_map = mapping_of(self, m, width, height);
  for (size_t i = 0; i < count; i++) {
    const npu_text_region *r = &self->regions[i];
    double x0 = (r->x0 - to_map.pad_x) / to_map.scale_x, y0 = (r->y0 - to_map.pad_y) / to_map.scale_y;
    double x1 = (r->x1 - to_map.pad_x) / to_map.scale_x, y1 = (r->y1 - to_map.pad_y) / to_map.scale_y;
    if (y1 - y0 < 1.5 * (x1 - x0)) { /* a vertical line keeps PP-OCR's box (see line-margin) */
      double margin = self->line_margin * (y1 - y0);
      y0 -= margin;
      y1 += margin;
    }
    x0 = CLAMP(x0, 0, GST_VIDEO_INFO_WIDTH(&self->info));
    x1 = CLAMP(x1, 0, GST_VIDEO_INFO_WIDTH(&self->info));
    y0 = CLAMP(y0, 0, GST_VIDEO_INFO_HEIGHT(&self->info));
    y1 = CLAMP(y1, 0, GST_VIDEO_INFO_HEIGHT(&self->info));
    add_result(self, buffer, -1, "text", (gint)x0, (gint)y0, (gint)(x1 - x0 + 0.5),
               (gint)(y1 - y0 + 0.5),
               gst_structure_new("text-region", "confidence", G_TYPE_DOUBLE, (gdouble)r->score,
                                 NULL),
               NULL);
  }
  return TRUE;
}

/* The dictionary fits the model: its classes are the blank and one per
 * entry, or (PP-OCR) one more, the space, which is then appended. */
static gboolean fit_dictionary(GstNpuDecode *self, size_t classes)
{
  if (classes == (gsize)self->label_count + 2) {
    self->labels = g_renew(gchar *, self->labels, self->label_count + 2);
    self->labels[self->label_count++] = g_strdup(" ");
    self->labels[self->label_count] = NULL;
    GST_INFO_OBJECT(self, "%zu classes: blank, %u dictionary entries and the space", classes,
                    self->label_count - 1);
  }
  if (classes == (gsize)self->label_count + 1)
    return TRUE;
  GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                    ("The dictionary '%s' does not fit the recogniser", self->labels_path),
                    ("it has %u entries; the model scores %zu classes, which needs %zu entries "
                     "(class 0 is the CTC blank; a model with one class more has the space "
                     "last)", self->label_count, classes, classes - 1));
  return FALSE;
}

/* Spaces read at a region's edges (ASCII or the ideographic one, both in
 * PP-OCR's dictionary) are no part of its text. */
static void strip_spaces(gchar *text)
{
  gchar *start = text;
  while (*start && g_unichar_isspace(g_utf8_get_char(start)))
    start = g_utf8_next_char(start);
  gchar *end = start + strlen(start);
  while (end > start) {
    gchar *last = g_utf8_find_prev_char(start, end);
    if (!last || !g_unichar_isspace(g_utf8_get_char(last)))
      break;
    end = last;
  }
  memmove(text, start, (gsize)(end - start));
  text[end - start] = '\0';
}

static gboolean decode_ctc(GstNpuDecode *self, GstBuffer *buffer, gint roi_id,
                           const GstNpuTensor *t, const float *scores)
{
  size_t classes = (size_t)t->dims[t->rank - 1], steps = (size_t)t->dims[t->rank - 2];
  gchar text[2048];
  float confidence = 0;
  if (npu_ctc_greedy_decode(scores, steps, classes, 0, (const char *const *)self->labels,
                            self->label_count, text, sizeof text, &confidence) != NPU_OK)
    return FALSE;
  strip_spaces(text);
  add_result(self, buffer, roi_id, "text", 0, 0, GST_VIDEO_INFO_WIDTH(&self->info),
             GST_VIDEO_INFO_HEIGHT(&self->info),
             gst_structure_new("text", "text", G_TYPE_STRING, text, "confidence", G_TYPE_DOUBLE,
                               (gdouble)confidence, NULL),
             NULL);
  return TRUE;
}

/* Whether `t` has a shape `self->method` decodes (dims of one frame: npuinfer
 * splits batched outputs); else what the method needs (to be freed). */
static gchar *shape_problem(GstNpuDecode *self, const GstNpuTensor *t)
{
  const gint64 *d = t->dims;
  switch (self->method) {
  case METHOD_CLASSIFY: {
    guint wide = 0;
    for (guint i = 0; i < t->rank; i++)
      wide += d[i] > 1;
    return wide <= 1 ? NULL : g_strdup("classify needs a score vector ([C], [1, C] or [1, C, 1, 1])");
  }
  case METHOD_YOLO:
    if (self->yolo_version == 8)
      return t->rank == 3 && d[0] == 1 && d[1] > 4 && d[2] > 0
                 ? NULL
                 : g_strdup("yolo (version 8) needs [1, 4 + classes, boxes]");
    return t->rank == 3 && d[0] == 1 && d[1] > 0 && d[2] > 5
               ? NULL
               : g_strdup("yolo (version 5) needs [1, boxes, 5 + classes]");
  case METHOD_YOLO_POSE:
    return t->rank == 3 && d[0] == 1 && d[1] == 5 + 3 * (gint64)self->keypoints && d[2] > 0
               ? NULL
               : g_strdup_printf("yolo-pose needs [1, 5 + 3 x keypoints, boxes]: "
                                 "[1, %u, boxes] for keypoints=%u",
                                 5 + 3 * self->keypoints, self->keypoints);
  case METHOD_YOLO_SEG:
    return t->rank == 3 && d[0] == 1 && d[1] > 4 && d[2] > 0
               ? NULL
               : g_strdup("yolo-seg needs [1, 4 + classes + masks, boxes]");
  case METHOD_SSD:
    return rows_of(t) > 0 && d[t->rank - 1] > 0
               ? NULL
               : g_strdup("ssd needs boxes [1, N, 4] and scores [1, N, classes]");
  case METHOD_SEGMENTATION: {
    gboolean map = (t->rank == 3 || (t->rank == 4 && d[1] > 0)) && d[0] == 1 &&
                   d[t->rank - 2] > 0 && d[t->rank - 1] > 0 && d[t->rank - 2] <= G_MAXINT32 &&
                   d[t->rank - 1] <= G_MAXINT32;
    if (!map)
      return g_strdup("segmentation needs class scores [1, classes, H, W] or class ids "
                      "[1, H, W]");
    return t->rank == 4 && d[1] > 255
               ? g_strdup("segmentation handles at most 255 classes (class ids are bytes)")
               : NULL;
  }
  case METHOD_DBNET:
    return t->rank == 4 && d[0] == 1 && d[1] == 1 && d[2] > 0 && d[3] > 0 && d[2] <= G_MAXINT32 &&
                   d[3] <= G_MAXINT32
               ? NULL
               : g_strdup("dbnet needs a probability map [1, 1, H, W]");
  case METHOD_CTC:
    return (t->rank == 2 || (t->rank == 3 && d[0] == 1)) && d[t->rank - 2] > 0 &&
                   d[t->rank - 1] > 1
               ? NULL
               : g_strdup("ctc needs scores [1, steps, classes] or [steps, classes]");
  case METHOD_CUSTOM:
    return NULL; /* the parser's business */
  }
  return g_strdup("unknown method");
}

/* Whether `t` is a segmentation map of class ids (float32 or int64), not
 * of class scores. */
static gboolean holds_class_ids(GstNpuDecode *self, const GstNpuTensor *t)
{
  return self->method == METHOD_SEGMENTATION &&
         (t->rank == 3 || (t->rank == 4 && t->dims[1] == 1));
}

/* The element count of `t`'s shape; FALSE for a negative dim or overflow. */
static gboolean element_count(const GstNpuTensor *t, gsize value_size, gsize *count)
{
  gsize n = 1;
  for (guint d = 0; d < t->rank; d++)
    if (t->dims[d] < 0 || !g_size_checked_mul(&n, n, (gsize)t->dims[d]))
      return FALSE;
  *count = n;
  return n <= G_MAXSIZE / value_size;
}

/* The tensor has a type the method reads (float32; segmentation's class
 * ids also int64), a shape it decodes (`with_shape`: companions' shapes are
 * the method's to check), its size that of its shape, and (dbnet) its
 * values probabilities, (segmentation) its ids 0..255; else an element
 * error. */
static gboolean check_tensor(GstNpuDecode *self, const GstNpuTensor *t, gconstpointer values,
                             gboolean with_shape)
{
  gchar *shape = shape_text(t), *problem = with_shape ? shape_problem(self, t) : NULL;
  gboolean int64_ids = holds_class_ids(self, t) && t->dtype == NPU_DTYPE_INT64;
  gsize count = 0, value_size = int64_ids ? sizeof(gint64) : sizeof(float), bad = 0;
  gboolean ok = FALSE;
  if (t->dtype != NPU_DTYPE_FLOAT32 && !int64_ids)
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Tensor '%s' is not float32", t->name),
                      ("data type %d, shape %s", t->dtype, shape));
  else if (problem)
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Tensor '%s' of shape %s cannot be decoded: %s",
                                             t->name, shape, problem),
                      (NULL));
  else if (!element_count(t, value_size, &count) || count * value_size != t->size)
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Tensor '%s' of shape %s holds %" G_GSIZE_FORMAT
                                             " bytes, not its shape's",
                                             t->name, shape, t->size),
                      (NULL));
  else if (holds_class_ids(self, t) && !gst_npu_class_ids_valid(values, int64_ids, count, &bad))
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("Tensor '%s' holds class id %g at %" G_GSIZE_FORMAT
                       ": segmentation reads ids 0..255",
                       t->name, int64_ids ? (gdouble)((const gint64 *)values)[bad]
                                          : ((const float *)values)[bad],
                       bad),
                      (NULL));
  else
    ok = TRUE;
  for (gsize i = 0; ok && self->method == METHOD_DBNET && i < count; i++) {
    const float *probabilities = values;
    if (!(probabilities[i] >= 0.0f && probabilities[i] <= 1.0f)) {
      GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                        ("Tensor '%s' is not a probability map: value %g at %" G_GSIZE_FORMAT,
                         t->name, probabilities[i], i),
                        ("dbnet needs the detector's sigmoid output (values 0..1)"));
      ok = FALSE;
    }
  }
  g_free(problem);
  g_free(shape);
  return ok;
}

/* A second output of the inference a method reads (ssd's scores or boxes,
 * yolo-seg's prototypes), mapped and checked; NULL after an element error. */
static const float *map_companion(GstNpuDecode *self, const GstNpuTensor *t, GstMapInfo *map)
{
  const float *values = gst_npu_tensor_map(t, map);
  if (!values) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Cannot read tensor '%s'", t->name), (NULL));
    return NULL;
  }
  if (!check_tensor(self, t, values, FALSE)) {
    gst_npu_tensor_unmap(t, map);
    return NULL;
  }
  return values;
}

/* ssd: both outputs mapped. FALSE after an element error. */
static gboolean decode_ssd_outputs(GstNpuDecode *self, GstBuffer *buffer,
                                   const GstNpuTensorMeta *m, gboolean *decoded)
{
  const GstNpuTensor *boxes, *scores;
  GstMapInfo box_map, score_map;
  if (!find_ssd_outputs(self, m, &boxes, &scores))
    return FALSE;
  const float *box_values = map_companion(self, boxes, &box_map);
  const float *score_values = box_values ? map_companion(self, scores, &score_map) : NULL;
  if (score_values) {
    *decoded = decode_ssd(self, buffer, m, boxes, box_values, scores, score_values);
    gst_npu_tensor_unmap(scores, &score_map);
  }
  if (box_values)
    gst_npu_tensor_unmap(boxes, &box_map);
  return score_values != NULL;
}

/* yolo-seg: the prototypes ([1, masks, MH, MW], another output of the
 * inference) mapped, and the detections decoded with them. FALSE after an
 * element error. */
static gboolean decode_yolo_seg(GstNpuDecode *self, GstBuffer *buffer, const GstNpuTensorMeta *m,
                                const GstNpuTensor *t, const float *values, gboolean *decoded)
{
  const GstNpuTensor *prototypes = NULL;
  for (guint i = 0; i < m->n_tensors && !prototypes; i++)
    if (m->tensors[i].rank == 4 && &m->tensors[i] != t)
      prototypes = &m->tensors[i];
  const gint64 *p = prototypes ? prototypes->dims : NULL;
  if (!p || p[0] != 1 || p[1] <= 0 || p[2] <= 0 || p[3] <= 0 || p[1] >= t->dims[1] - 4 ||
      p[2] > G_MAXINT32 || p[3] > G_MAXINT32) {
    gchar *shape = shape_text(t), *other = prototypes ? shape_text(prototypes) : NULL;
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("yolo-seg needs prototypes [1, masks, MH, MW] with detections "
                       "[1, 4 + classes + masks, boxes]"),
                      ("detections '%s' %s, prototypes %s", t->name, shape,
                       other ? other : "missing (no other output of rank 4)"));
    g_free(shape);
    g_free(other);
    return FALSE;
  }
  GstMapInfo map;
  const float *prototype_values = map_companion(self, prototypes, &map);
  if (!prototype_values)
    return FALSE;
  gsize masks = (gsize)p[1], classes = (gsize)t->dims[1] - 4 - masks;
  DetectionExtras extras = {values, (gsize)t->dims[2], 4 + classes, prototype_values,
                            (guint)masks, (guint)p[3], (guint)p[2]};
  *decoded = decode_yolo(self, buffer, m, t, values, classes, &extras);
  gst_npu_tensor_unmap(prototypes, &map);
  return TRUE;
}

/* custom: the parser's regions on the frame. */
static GstFlowReturn decode_custom(GstNpuDecode *self, GstBuffer *buffer,
                                   const GstNpuTensorMeta *m)
{
  GError *error = NULL;
  GPtrArray *regions =
      gst_npu_decode_parser_run(self->parser, m, GST_VIDEO_INFO_WIDTH(&self->info),
                                GST_VIDEO_INFO_HEIGHT(&self->info), GST_BUFFER_PTS(buffer), &error);
  if (!regions) {
    GST_ELEMENT_ERROR(self, STREAM, DECODE, ("%s", error->message),
                      ("parser '%s'", self->parser_path));
    g_error_free(error);
    return GST_FLOW_ERROR;
  }
  for (guint i = 0; i < regions->len; i++) {
    GstNpuParsedRegion *r = g_ptr_array_index(regions, i);
    add_result(self, buffer, -1, r->label, (gint)lround(r->x), (gint)lround(r->y),
               (gint)lround(r->w), (gint)lround(r->h), g_steal_pointer(&r->param), NULL);
  }
  g_ptr_array_unref(regions);
  return GST_FLOW_OK;
}

/* One tensor: the whole frame's results, or (npuinfer's roi mode) one
 * ROI's, which classify and ctc attach to that ROI. */
static GstFlowReturn decode_tensor(GstNpuDecode *self, GstBuffer *buffer,
                                   const GstNpuTensorMeta *m, const GstNpuTensor *t)
{
  if (self->method == METHOD_CUSTOM)
    return decode_custom(self, buffer, m);
  GstMapInfo map;
  const float *values = gst_npu_tensor_map(t, &map);
  if (!values) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Cannot read tensor '%s'", t->name), (NULL));
    return GST_FLOW_ERROR;
  }
  if (!check_tensor(self, t, values, TRUE) ||
      (self->method == METHOD_CTC && !fit_dictionary(self, (gsize)t->dims[t->rank - 1]))) {
    gst_npu_tensor_unmap(t, &map);
    return GST_FLOW_ERROR;
  }
  gboolean ok = FALSE, reported = FALSE;
  switch (self->method) {
  case METHOD_CLASSIFY:
    ok = decode_classify(self, buffer, m->roi_id, values, t->size / sizeof(float));
    break;
  case METHOD_YOLO:
    ok = decode_yolo(self, buffer, m, t, values,
                     (gsize)(self->yolo_version == 8 ? t->dims[1] - 4 : t->dims[2] - 5), NULL);
    break;
  case METHOD_YOLO_POSE: {
    DetectionExtras extras = {values, (gsize)t->dims[2], 5};
    ok = decode_yolo(self, buffer, m, t, values, 1, &extras);
    break;
  }
  case METHOD_YOLO_SEG:
    reported = !decode_yolo_seg(self, buffer, m, t, values, &ok);
    break;
  case METHOD_SSD:
    reported = !decode_ssd_outputs(self, buffer, m, &ok);
    break;
  case METHOD_SEGMENTATION:
    ok = decode_segmentation(self, buffer, m, t, values);
    break;
  case METHOD_DBNET:
    ok = decode_dbnet(self, buffer, m, t, values);
    break;
  case METHOD_CTC:
    ok = decode_ctc(self, buffer, m->roi_id, t, values);
    break;
  case METHOD_CUSTOM:
    break;
  }
  gst_npu_tensor_unmap(t, &map);
  if (reported)
    return GST_FLOW_ERROR;
  if (!ok) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Cannot decode tensor '%s' this way", t->name),
                      ("%s; rank %u", npu_last_error_message(), t->rank));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* Whether the method reads this inference's outputs: ctc only those of
 * regions (npuinfer's roi mode), never a whole frame's (on a frame where the
 * detector found no text, the newest tensors are the detector's own). */
static gboolean reads_meta(GstNpuDecode *self, const GstNpuTensorMeta *m)
{
  return self->method != METHOD_CTC || m->roi_id >= 0;
}

/* Which output to decode: `tensor`, else the first output of the newest
 * inference on the frame the method reads (the last npuinfer upstream: a
 * recogniser after a detector leaves both models' tensors on the frame). */
static const gchar *wanted_tensor(GstNpuDecode *self, GstBuffer *buffer)
{
  if (self->tensor)
    return self->tensor;
  const gchar *newest = NULL;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_NPU_TENSOR_META_API_TYPE)))
    if (((GstNpuTensorMeta *)meta)->n_tensors > 0 && reads_meta(self, (GstNpuTensorMeta *)meta))
      newest = ((GstNpuTensorMeta *)meta)->tensors[0].name;
  return newest;
}

static GstFlowReturn gst_npu_decode_transform_ip(GstBaseTransform *trans, GstBuffer *buffer)
{
  GstNpuDecode *self = GST_NPU_DECODE(trans);
  const gchar *name = wanted_tensor(self, buffer);
  if (!name)
    return GST_FLOW_OK; /* frames npuinfer skipped (interval, QoS, no ROI) pass */
  GstFlowReturn flow = GST_FLOW_OK;
  guint decoded = 0, metas = 0;
  gpointer state = NULL;
  GstMeta *meta;
  while (flow == GST_FLOW_OK &&
         (meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_NPU_TENSOR_META_API_TYPE))) {
    const GstNpuTensorMeta *m = (const GstNpuTensorMeta *)meta;
    if (!reads_meta(self, m))
      continue;
    const GstNpuTensor *t = gst_npu_tensor_meta_find(m, name);
    metas++;
    if (t) {
      flow = decode_tensor(self, buffer, m, t);
      decoded++;
    }
  }
  if (flow == GST_FLOW_OK && metas > 0 && decoded == 0) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("No tensor named '%s'", name),
                      ("none of the frame's %u tensor metas has it", metas));
    return GST_FLOW_ERROR;
  }
  return flow;
}

static gboolean gst_npu_decode_set_caps(GstBaseTransform *trans, GstCaps *incaps,
                                        GstCaps *outcaps)
{
  (void)outcaps;
  GstNpuDecode *self = GST_NPU_DECODE(trans);
  return gst_video_info_from_caps(&self->info, incaps);
}

/* custom: the parser library, loaded before the first frame. */
static gboolean load_parser(GstNpuDecode *self)
{
  if (!self->parser_path) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("method=custom needs a parser"),
                      ("set 'parser' to the parser library (see gst/npu/npu-decoder.h)"));
    return FALSE;
  }
  GError *error = NULL;
  self->parser = gst_npu_decode_parser_load(self->parser_path, self->parser_options, &error);
  if (!self->parser) {
    GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("%s", error->message), (NULL));
    g_error_free(error);
    return FALSE;
  }
  GST_INFO_OBJECT(self, "parser '%s' from %s", gst_npu_decode_parser_name(self->parser),
                  self->parser_path);
  return TRUE;
}

/* Labels (or the CTC dictionary): one per line; custom's parser. */
static gboolean gst_npu_decode_start(GstBaseTransform *trans)
{
  GstNpuDecode *self = GST_NPU_DECODE(trans);
  if (self->method == METHOD_CUSTOM && !load_parser(self))
    return FALSE;
  g_strfreev(self->labels);
  self->labels = NULL;
  self->label_count = 0;
  if (!self->labels_path) {
    if (self->method == METHOD_CTC) {
      GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("CTC needs a dictionary"),
                        ("set 'labels' to the recogniser's dictionary file"));
      return FALSE;
    }
    return TRUE;
  }
  gchar *text = NULL;
  GError *error = NULL;
  if (!g_file_get_contents(self->labels_path, &text, NULL, &error)) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("Cannot read labels '%s'", self->labels_path),
                      ("%s", error->message));
    g_error_free(error);
    return FALSE;
  }
  gchar *end = text + strlen(text);
  while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
    *--end = '\0';
  self->labels = g_strsplit(text, "\n", -1);
  g_free(text);
  for (self->label_count = 0; self->labels[self->label_count]; self->label_count++) {
    gchar *line = self->labels[self->label_count]; /* " " is a CTC character: keep spaces */
    gsize length = strlen(line);
    if (length && line[length - 1] == '\r')
      line[length - 1] = '\0';
  }
  return TRUE;
}

static gboolean gst_npu_decode_stop(GstBaseTransform *trans)
{
  GstNpuDecode *self = GST_NPU_DECODE(trans);
  g_clear_pointer(&self->parser, gst_npu_decode_parser_free);
  return TRUE;
}

static void gst_npu_decode_set_property(GObject *object, guint id, const GValue *value,
                                        GParamSpec *pspec)
{
  GstNpuDecode *self = GST_NPU_DECODE(object);
  switch (id) {
  case PROP_METHOD:
    self->method = g_value_get_enum(value);
    break;
  case PROP_TENSOR:
    g_free(self->tensor);
    self->tensor = g_value_dup_string(value);
    break;
  case PROP_LABELS:
    g_free(self->labels_path);
    self->labels_path = g_value_dup_string(value);
    break;
  case PROP_SOFTMAX:
    self->softmax = g_value_get_boolean(value);
    break;
  case PROP_THRESHOLD:
    self->threshold = g_value_get_double(value);
    break;
  case PROP_IOU_THRESHOLD:
    self->iou_threshold = g_value_get_double(value);
    break;
  case PROP_BOX_THRESHOLD:
    self->box_threshold = g_value_get_double(value);
    break;
  case PROP_UNCLIP_RATIO:
    self->unclip_ratio = g_value_get_double(value);
    break;
  case PROP_LINE_MARGIN:
    self->line_margin = g_value_get_double(value);
    break;
  case PROP_YOLO_VERSION:
    self->yolo_version = g_value_get_int(value);
    break;
  case PROP_INPUT_WIDTH:
    self->input_width = g_value_get_uint(value);
    break;
  case PROP_INPUT_HEIGHT:
    self->input_height = g_value_get_uint(value);
    break;
  case PROP_PRINT_RESULTS:
    self->print_results = g_value_get_boolean(value);
    break;
  case PROP_KEYPOINTS:
    self->keypoints = g_value_get_uint(value);
    break;
  case PROP_BACKGROUND:
    self->background = g_value_get_boolean(value);
    break;
  case PROP_PARSER:
    g_free(self->parser_path);
    self->parser_path = g_value_dup_string(value);
    break;
  case PROP_PARSER_OPTIONS:
    g_free(self->parser_options);
    self->parser_options = g_value_dup_string(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    break;
  }
}

static void gst_npu_decode_get_property(GObject *object, guint id, GValue *value,
                                        GParamSpec *pspec)
{
  GstNpuDecode *self = GST_NPU_DECODE(object);
  switch (id) {
  case PROP_METHOD:
    g_value_set_enum(value, self->method);
    break;
  case PROP_TENSOR:
    g_value_set_string(value, self->tensor);
    break;
  case PROP_LABELS:
    g_value_set_string(value, self->labels_path);
    break;
  case PROP_SOFTMAX:
    g_value_set_boolean(value, self->softmax);
    break;
  case PROP_THRESHOLD:
    g_value_set_double(value, self->threshold);
    break;
  case PROP_IOU_THRESHOLD:
    g_value_set_double(value, self->iou_threshold);
    break;
  case PROP_BOX_THRESHOLD:
    g_value_set_double(value, self->box_threshold);
    break;
  case PROP_UNCLIP_RATIO:
    g_value_set_double(value, self->unclip_ratio);
    break;
  case PROP_LINE_MARGIN:
    g_value_set_double(value, self->line_margin);
    break;
  case PROP_YOLO_VERSION:
    g_value_set_int(value, self->yolo_version);
    break;
  case PROP_INPUT_WIDTH:
    g_value_set_uint(value, self->input_width);
    break;
  case PROP_INPUT_HEIGHT:
    g_value_set_uint(value, self->input_height);
    break;
  case PROP_PRINT_RESULTS:
    g_value_set_boolean(value, self->print_results);
    break;
  case PROP_KEYPOINTS:
    g_value_set_uint(value, self->keypoints);
    break;
  case PROP_BACKGROUND:
    g_value_set_boolean(value, self->background);
    break;
  case PROP_PARSER:
    g_value_set_string(value, self->parser_path);
    break;
  case PROP_PARSER_OPTIONS:
    g_value_set_string(value, self->parser_options);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    break;
  }
}

static void gst_npu_decode_finalize(GObject *object)
{
  GstNpuDecode *self = GST_NPU_DECODE(object);
  g_free(self->tensor);
  g_free(self->labels_path);
  g_strfreev(self->labels);
  g_free(self->scratch);
  g_free(self->regions);
  g_free(self->detections);
  g_free(self->parser_path);
  g_free(self->parser_options);
  gst_npu_decode_parser_free(self->parser);
  G_OBJECT_CLASS(gst_npu_decode_parent_class)->finalize(object);
}

static void gst_npu_decode_class_init(GstNpuDecodeClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *transform_class = GST_BASE_TRANSFORM_CLASS(klass);
  object_class->set_property = gst_npu_decode_set_property;
  object_class->get_property = gst_npu_decode_get_property;
  object_class->finalize = gst_npu_decode_finalize;
  GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  g_object_class_install_property(object_class, PROP_METHOD,
      g_param_spec_enum("method", "Method", "How to read the model's output",
                        GST_TYPE_NPU_DECODE_METHOD, METHOD_CLASSIFY, ready));
  g_object_class_install_property(object_class, PROP_TENSOR,
      g_param_spec_string("tensor", "Tensor",
                          "Output tensor to decode (NULL: the first output of the newest "
                          "inference on the frame); ssd's and yolo-seg's second output is the "
                          "same inference's other one, found by shape", NULL, ready));
  g_object_class_install_property(object_class, PROP_LABELS,
      g_param_spec_string("labels", "Labels",
                          "File with one class label per line (ctc: the dictionary, blank "
                          "excluded)", NULL, ready));
  g_object_class_install_property(object_class, PROP_SOFTMAX,
      g_param_spec_boolean("softmax", "Softmax",
                           "classify: report softmax probabilities of raw scores", TRUE, ready));
  g_object_class_install_property(object_class, PROP_THRESHOLD,
      g_param_spec_double("threshold", "Threshold",
                          "yolo, yolo-pose, yolo-seg, ssd: minimum confidence; dbnet: "
                          "probability binarisation", 0.0, 1.0,
                          0.5, ready));
  g_object_class_install_property(object_class, PROP_IOU_THRESHOLD,
      g_param_spec_double("iou-threshold", "IoU threshold",
                          "yolo, yolo-pose, yolo-seg, ssd: boxes of one class overlapping more "
                          "are suppressed", 0.0, 1.0,
                          0.45, ready));
  g_object_class_install_property(object_class, PROP_BOX_THRESHOLD,
      g_param_spec_double("box-threshold", "Box threshold",
                          "dbnet: minimum mean probability of a text region", 0.0, 1.0, 0.6,
                          ready));
  g_object_class_install_property(object_class, PROP_UNCLIP_RATIO,
      g_param_spec_double("unclip-ratio", "Unclip ratio",
                          "dbnet: how far a region is expanded (area * ratio / perimeter)", 0.0,
                          10.0, 1.5, ready));
  g_object_class_install_property(object_class, PROP_LINE_MARGIN,
      g_param_spec_double("line-margin", "Line margin",
                          "dbnet: part of each region's height added above and below it after "
                          "the unclip (recognisers read a line with some margin better: PP-OCR's "
                          "drops spaces between words on tight boxes); the ends stay as the "
                          "unclip leaves them, so a neighbouring word does not creep in. A "
                          "region 1.5 x as tall as wide, a vertical line, keeps PP-OCR's box "
                          "(read turned, the recogniser keeps its spaces there)",
                          0.0, 1.0, 0.2, ready));
  g_object_class_install_property(object_class, PROP_YOLO_VERSION,
      g_param_spec_int("yolo-version", "YOLO version", "yolo: output layout, 5 or 8", 5, 8, 5,
                       ready));
  g_object_class_install_property(object_class, PROP_INPUT_WIDTH,
      g_param_spec_uint("input-width", "Input width",
                        "yolo, yolo-pose, yolo-seg, ssd, segmentation: the model's input width "
                        "(boxes, keypoints, prototypes and maps span it)", 1, 16384, 640, ready));
  g_object_class_install_property(object_class, PROP_INPUT_HEIGHT,
      g_param_spec_uint("input-height", "Input height",
                        "yolo, yolo-pose, yolo-seg, ssd, segmentation: the model's input height",
                        1, 16384, 640, ready));
  g_object_class_install_property(object_class, PROP_KEYPOINTS,
      g_param_spec_uint("keypoints", "Keypoints",
                        "yolo-pose: keypoints per person (the output has 5 + 3 x keypoints rows)",
                        1, 1000, 17, ready));
  g_object_class_install_property(object_class, PROP_BACKGROUND,
      g_param_spec_boolean("background", "Background",
                           "ssd: score column 0 is the background (never a detection); class-id "
                           "is the score column either way", TRUE, ready));
  g_object_class_install_property(object_class, PROP_PARSER,
      g_param_spec_string("parser", "Parser",
                          "custom: the parser library (exports gst_npu_decoder_get_info(), "
                          "gst/npu/npu-decoder.h), loaded when the element starts", NULL, ready));
  g_object_class_install_property(object_class, PROP_PARSER_OPTIONS,
      g_param_spec_string("parser-options", "Parser options",
                          "custom: a string handed to the parser's create()", NULL, ready));
  g_object_class_install_property(object_class, PROP_PRINT_RESULTS,
      g_param_spec_boolean("print-results", "Print results",
                           "Print every result (element name, time, ROI, params) on stdout; masks' and "
                           "class maps' bytes as their size",
                           FALSE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                      GST_PARAM_MUTABLE_PLAYING));
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "NPU result decoder", "Filter/Analyzer/Video",
      "Reads npuinfer's tensors (classification, YOLO, SSD, segmentation, YOLOv8 pose and "
      "instance masks, DBNet text regions, CTC text, a custom parser's regions) into "
      "GstVideoRegionOfInterestMeta with GstStructure params", "gst-npu developers");
  transform_class->transform_ip = gst_npu_decode_transform_ip;
  transform_class->set_caps = gst_npu_decode_set_caps;
  transform_class->start = gst_npu_decode_start;
  transform_class->stop = gst_npu_decode_stop;
  transform_class->passthrough_on_same_caps = FALSE;
  gst_type_mark_as_plugin_api(GST_TYPE_NPU_DECODE_METHOD, 0);
  GST_DEBUG_CATEGORY_INIT(gst_npu_decode_debug, "npudecode", 0, "NPU result decoder");
}

static void gst_npu_decode_init(GstNpuDecode *self)
{
  self->softmax = TRUE;
  self->threshold = 0.5;
  self->iou_threshold = 0.45;
  self->box_threshold = 0.6;
  self->unclip_ratio = 1.5;
  self->line_margin = 0.2;
  self->yolo_version = 5;
  self->input_width = self->input_height = 640;
  self->keypoints = 17;
  self->background = TRUE;
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
}
