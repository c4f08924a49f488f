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
 *   last.
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

GST_DEBUG_CATEGORY_STATIC(gst_npu_decode_debug);
#define GST_CAT_DEFAULT gst_npu_decode_debug

typedef enum { METHOD_CLASSIFY, METHOD_YOLO, METHOD_DBNET, METHOD_CTC } DecodeMethod;

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
  GstVideoInfo info;
  gint32 *scratch; /* DBNet's labels and queue */
  gsize scratch_count;
  npu_text_region *regions; /* DBNet's regions, MAX_TEXT_REGIONS */
  npu_detection *detections; /* YOLO's candidates */
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

/* A result: a param on the ROI npuinfer ran on (roi mode: `roi_id` >= 0),
 * else a new ROI (with an id unique in the frame) carrying it. */
static void add_result(GstNpuDecode *self, GstBuffer *buffer, gint roi_id, const gchar *roi_type,
                       gint x, gint y, gint w, gint h, GstStructure *param)
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
    gchar *fields = gst_structure_to_string(param);
    g_print("%s %" GST_TIME_FORMAT " %s #%d at %u,%u %ux%u: %s\n", GST_OBJECT_NAME(self),
            GST_TIME_ARGS(GST_BUFFER_PTS(buffer)), g_quark_to_string(roi->roi_type), roi->id,
            roi->x, roi->y, roi->w, roi->h, fields);
    g_free(fields);
  }
  gst_video_region_of_interest_meta_add_param(roi, param);
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
                               (gdouble)confidence, NULL));
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

static gboolean decode_yolo(GstNpuDecode *self, GstBuffer *buffer, const GstNpuTensorMeta *m,
                            const GstNpuTensor *t, const float *values)
{
  gboolean v8 = self->yolo_version == 8;
  size_t boxes = (size_t)(v8 ? t->dims[2] : t->dims[1]);
  size_t row = (size_t)(v8 ? t->dims[1] : t->dims[2]);
  size_t classes = row - (v8 ? 4 : 5), count = 0, kept = 0;
  if (boxes == 0)
    return TRUE;
  if (self->detection_count < boxes) { /* grown once, kept for the next frames */
    g_free(self->detections);
    self->detections = g_new(npu_detection, boxes);
    self->detection_count = boxes;
  }
  npu_detection *found = self->detections;
  npu_status status = npu_yolo_decode(values, v8 ? NPU_YOLO_V8 : NPU_YOLO_V5, boxes, classes,
                                      (float)self->threshold, found, boxes, &count);
  if (status == NPU_OK)
    status = npu_nms(found, MIN(count, boxes), (float)self->iou_threshold, TRUE, 0, &kept);
  npu_letterbox mapping = mapping_of(self, m, self->input_width, self->input_height);
  if (status == NPU_OK)
    status = npu_detections_unletterbox(found, kept, &mapping, GST_VIDEO_INFO_WIDTH(&self->info),
                                        GST_VIDEO_INFO_HEIGHT(&self->info));
  for (size_t i = 0; i < kept && status == NPU_OK; i++) {
    const npu_detection *d = &found[i];
    const gchar *label = label_of(self, d->class_id);
    gchar *fallback = label ? NULL : g_strdup_printf("class %d", d->class_id);
    add_result(self, buffer, -1, label ? label : fallback, (gint)d->x0, (gint)d->y0,
               (gint)(d->x1 - d->x0), (gint)(d->y1 - d->y0),
               gst_structure_new("detection", "label", G_TYPE_STRING, label ? label : fallback,
                                 "class-id", G_TYPE_INT, d->class_id, "confidence",
                                 G_TYPE_DOUBLE, (gdouble)d->confidence, NULL));
    g_free(fallback);
  }
  return status == NPU_OK;
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
                                 NULL));
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
                               (gdouble)confidence, NULL));
  return TRUE;
}

/* "[1, 5, 400]" */
static gchar *shape_text(const GstNpuTensor *t)
{
  GString *text = g_string_new("[");
  for (guint d = 0; d < t->rank; d++)
    g_string_append_printf(text, "%s%" G_GINT64_FORMAT, d ? ", " : "", t->dims[d]);
  return g_string_free(g_string_append_c(text, ']'), FALSE);
}

/* Whether `t` has a shape `self->method` decodes (dims of one frame: npuinfer
 * splits batched outputs); else what the method needs. */
static const gchar *shape_problem(GstNpuDecode *self, const GstNpuTensor *t)
{
  const gint64 *d = t->dims;
  switch (self->method) {
  case METHOD_CLASSIFY: {
    guint wide = 0;
    for (guint i = 0; i < t->rank; i++)
      wide += d[i] > 1;
    return wide <= 1 ? NULL : "classify needs a score vector ([C], [1, C] or [1, C, 1, 1])";
  }
  case METHOD_YOLO:
    if (self->yolo_version == 8)
      return t->rank == 3 && d[0] == 1 && d[1] > 4 && d[2] > 0
                 ? NULL
                 : "yolo (version 8) needs [1, 4 + classes, boxes]";
    return t->rank == 3 && d[0] == 1 && d[1] > 0 && d[2] > 5
               ? NULL
               : "yolo (version 5) needs [1, boxes, 5 + classes]";
  case METHOD_DBNET:
    return t->rank == 4 && d[0] == 1 && d[1] == 1 && d[2] > 0 && d[3] > 0 && d[2] <= G_MAXINT32 &&
                   d[3] <= G_MAXINT32
               ? NULL
               : "dbnet needs a probability map [1, 1, H, W]";
  case METHOD_CTC:
    return (t->rank == 2 || (t->rank == 3 && d[0] == 1)) && d[t->rank - 2] > 0 &&
                   d[t->rank - 1] > 1
               ? NULL
               : "ctc needs scores [1, steps, classes] or [steps, classes]";
  }
  return "unknown method";
}

/* The element count of `t`'s shape; FALSE for a negative dim or overflow. */
static gboolean element_count(const GstNpuTensor *t, gsize *count)
{
  gsize n = 1;
  for (guint d = 0; d < t->rank; d++)
    if (t->dims[d] < 0 || !g_size_checked_mul(&n, n, (gsize)t->dims[d]))
      return FALSE;
  *count = n;
  return n <= G_MAXSIZE / sizeof(float);
}

/* The tensor is float32, of a shape the method decodes, its size that of its
 * shape, and (dbnet) its values probabilities; else an element error. */
static gboolean check_tensor(GstNpuDecode *self, const GstNpuTensor *t, const float *values)
{
  gchar *shape = shape_text(t);
  gsize count = 0;
  gboolean ok = FALSE;
  if (t->dtype != NPU_DTYPE_FLOAT32)
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Tensor '%s' is not float32", t->name),
                      ("data type %d, shape %s", t->dtype, shape));
  else if (shape_problem(self, t))
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Tensor '%s' of shape %s cannot be decoded: %s",
                                             t->name, shape, shape_problem(self, t)),
                      (NULL));
  else if (!element_count(t, &count) || count * sizeof(float) != t->size)
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Tensor '%s' of shape %s holds %" G_GSIZE_FORMAT
                                             " bytes, not its shape's",
                                             t->name, shape, t->size),
                      (NULL));
  else
    ok = TRUE;
  for (gsize i = 0; ok && self->method == METHOD_DBNET && i < count; i++)
    if (!(values[i] >= 0.0f && values[i] <= 1.0f)) {
      GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                        ("Tensor '%s' is not a probability map: value %g at %" G_GSIZE_FORMAT,
                         t->name, values[i], i),
                        ("dbnet needs the detector's sigmoid output (values 0..1)"));
      ok = FALSE;
    }
  g_free(shape);
  return ok;
}

/* One tensor: the whole frame's results, or (npuinfer's roi mode) one
 * ROI's, which classify and ctc attach to that ROI. */
static GstFlowReturn decode_tensor(GstNpuDecode *self, GstBuffer *buffer,
                                   const GstNpuTensorMeta *m, const GstNpuTensor *t)
{
  GstMapInfo map;
  const float *values = gst_npu_tensor_map(t, &map);
  if (!values) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Cannot read tensor '%s'", t->name), (NULL));
    return GST_FLOW_ERROR;
  }
  if (!check_tensor(self, t, values) ||
      (self->method == METHOD_CTC && !fit_dictionary(self, (gsize)t->dims[t->rank - 1]))) {
    gst_npu_tensor_unmap(t, &map);
    return GST_FLOW_ERROR;
  }
  gboolean ok = FALSE;
  switch (self->method) {
  case METHOD_CLASSIFY:
    ok = decode_classify(self, buffer, m->roi_id, values, t->size / sizeof(float));
    break;
  case METHOD_YOLO:
    ok = decode_yolo(self, buffer, m, t, values);
    break;
  case METHOD_DBNET:
    ok = decode_dbnet(self, buffer, m, t, values);
    break;
  case METHOD_CTC:
    ok = decode_ctc(self, buffer, m->roi_id, t, values);
    break;
  }
  gst_npu_tensor_unmap(t, &map);
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

/* Labels (or the CTC dictionary): one per line. */
static gboolean gst_npu_decode_start(GstBaseTransform *trans)
{
  GstNpuDecode *self = GST_NPU_DECODE(trans);
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
                          "inference on the frame)", NULL, ready));
  g_object_class_install_property(object_class, PROP_LABELS,
      g_param_spec_string("labels", "Labels",
                          "File with one class label per line (ctc: the dictionary, blank "
                          "excluded)", NULL, ready));
  g_object_class_install_property(object_class, PROP_SOFTMAX,
      g_param_spec_boolean("softmax", "Softmax",
                           "classify: report softmax probabilities of raw scores", TRUE, ready));
  g_object_class_install_property(object_class, PROP_THRESHOLD,
      g_param_spec_double("threshold", "Threshold",
                          "yolo: minimum confidence; dbnet: probability binarisation", 0.0, 1.0,
                          0.5, ready));
  g_object_class_install_property(object_class, PROP_IOU_THRESHOLD,
      g_param_spec_double("iou-threshold", "IoU threshold",
                          "yolo: boxes of one class overlapping more are suppressed", 0.0, 1.0,
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
      g_param_spec_uint("input-width", "Input width", "yolo: the model's input width", 1, 16384,
                        640, ready));
  g_object_class_install_property(object_class, PROP_INPUT_HEIGHT,
      g_param_spec_uint("input-height", "Input height", "yolo: the model's input height", 1,
                        16384, 640, ready));
  g_object_class_install_property(object_class, PROP_PRINT_RESULTS,
      g_param_spec_boolean("print-results", "Print results",
                           "Print every result (element name, time, ROI, params) on stdout",
                           FALSE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                      GST_PARAM_MUTABLE_PLAYING));
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "NPU result decoder", "Filter/Analyzer/Video",
      "Reads npuinfer's tensors (classification, YOLO, DBNet text regions, CTC text) into "
      "GstVideoRegionOfInterestMeta with GstStructure params", "gst-npu developers");
  transform_class->transform_ip = gst_npu_decode_transform_ip;
  transform_class->set_caps = gst_npu_decode_set_caps;
  transform_class->start = gst_npu_decode_start;
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
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
}
