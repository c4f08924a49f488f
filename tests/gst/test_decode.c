/* gst-check tests of the elements that turn tensors into answers: npudecode
 * on tensors with known answers (each method's ROIs, labels, boxes, text and
 * confidences, through a letterbox, on ROIs after a detector; frames without
 * tensors pass; a missing tensor is an element error), npumetaconvert's JSON
 * lines and npuoverlay's drawing. */
#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/npu/npu-tensor-meta.h>
#include <gst/video/video.h>
#include <json-glib/json-glib.h>
#include <math.h>

#include "decode_harness.h"

/* The frame's tensor as a recogniser's output for a text region (npuinfer's
 * roi mode): an ROI with id 7, the tensor meta's roi_id pointing at it. */
static GstBuffer *on_text_region(GstBuffer *frame)
{
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_add_video_region_of_interest_meta(frame, "text", 8, 8, 32, 8);
  roi->id = 7;
  gst_buffer_get_npu_tensor_meta(frame)->roi_id = 7;
  return frame;
}

GST_START_TEST(test_classify)
{
  const float scores[] = {0.1f, 2.0f, 0.5f, -1.0f, 0.3f};
  const gint64 dims[] = {1, 5};
  gchar *labels = write_labels("cat\ndog\nbird\nfish\nfox\n");
  gchar *options = g_strdup_printf("method=classify labels=%s", labels);
  gchar *error = NULL;
  GstBuffer *out = decode(options, frame_with_tensor(scores, 5, 2, dims), &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 1);
  GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta(out);
  fail_unless_equals_string(g_quark_to_string(roi->roi_type), "dog");
  fail_unless(roi->w == FRAME && roi->h == FRAME);
  GstStructure *s = gst_video_region_of_interest_meta_get_param(roi, "classification");
  fail_unless(s != NULL);
  gint id;
  gdouble confidence;
  fail_unless(gst_structure_get_int(s, "class-id", &id) && id == 1);
  fail_unless_equals_string(gst_structure_get_string(s, "label"), "dog");
  double sum = 0;
  for (int i = 0; i < 5; i++)
    sum += exp(scores[i]);
  fail_unless(gst_structure_get_double(s, "confidence", &confidence));
  fail_unless(fabs(confidence - exp(2.0) / sum) < 1e-5, "confidence %f", confidence);
  gst_buffer_unref(out);
  g_unlink(labels);
  g_free(labels);
  g_free(options);
}
GST_END_TEST;

/* A 32x32 map with one confident rectangle: one text region, in frame pixels
 * (the frame is twice the map). */
GST_START_TEST(test_dbnet)
{
  float map[32 * 32] = {0};
  for (int y = 10; y < 16; y++)
    for (int x = 8; x < 24; x++)
      map[y * 32 + x] = 0.9f;
  const gint64 dims[] = {1, 1, 32, 32};
  gchar *error = NULL;
  GstBuffer *out = decode("method=dbnet threshold=0.3 line-margin=0",
                          frame_with_tensor(map, 1024, 4, dims), &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 1);
  GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta(out);
  guint tight_y = roi->y, tight_h = roi->h;
  fail_unless_equals_string(g_quark_to_string(roi->roi_type), "text");
  /* the unclipped box contains the rectangle (16..48 x 20..32 in the frame) */
  fail_unless(roi->x <= 16 && roi->y <= 20 && roi->x + roi->w >= 46 && roi->y + roi->h >= 30,
              "box %u,%u %ux%u", roi->x, roi->y, roi->w, roi->h);
  fail_unless(roi->x + roi->w <= FRAME && roi->w < 48 && roi->h < 28);
  gdouble confidence;
  GstStructure *s = gst_video_region_of_interest_meta_get_param(roi, "text-region");
  fail_unless(s && gst_structure_get_double(s, "confidence", &confidence));
  fail_unless(fabs(confidence - 0.9) < 1e-3, "confidence %f", confidence);
  guint tight_x = roi->x, tight_w = roi->w;
  gst_buffer_unref(out);
  /* the default line margin: 20% of the height above and below, not sideways */
  out = decode("method=dbnet threshold=0.3", frame_with_tensor(map, 1024, 4, dims), &error);
  fail_unless(out != NULL, "%s", error);
  roi = gst_buffer_get_video_region_of_interest_meta(out);
  fail_unless(roi->x == tight_x && roi->w == tight_w);
  fail_unless(abs((int)roi->y - (int)(tight_y - tight_h / 5)) <= 1 &&
                  abs((int)roi->h - (int)(tight_h * 7 / 5)) <= 1,
              "%u+%u from %u+%u", roi->y, roi->h, tight_y, tight_h);
  gst_buffer_unref(out);
  /* a vertical line (1.5 x as tall as wide) keeps its box */
  float tall[32 * 32] = {0};
  for (int y = 4; y < 28; y++)
    for (int x = 12; x < 18; x++)
      tall[y * 32 + x] = 0.9f;
  guint boxes[2][4];
  for (int margin = 0; margin < 2; margin++) {
    out = decode(margin ? "method=dbnet" : "method=dbnet line-margin=0",
                 frame_with_tensor(tall, 1024, 4, dims), &error);
    fail_unless(out != NULL, "%s", error);
    roi = gst_buffer_get_video_region_of_interest_meta(out);
    guint box[4] = {roi->x, roi->y, roi->w, roi->h};
    memcpy(boxes[margin], box, sizeof box);
    gst_buffer_unref(out);
  }
  fail_unless(memcmp(boxes[0], boxes[1], sizeof boxes[0]) == 0);
}
GST_END_TEST;

/* Two words of a line whose expanded boxes overlap are one region (the
 * second's crop would read the first's edge); words far apart stay two. */
GST_START_TEST(test_dbnet_merges_touching_words)
{
  const gint64 dims[] = {1, 1, 32, 32};
  for (int gap = 2; gap <= 12; gap += 10) {
    float map[32 * 32] = {0};
    for (int y = 10; y < 14; y++)
      for (int x = 2; x < 30; x++)
        map[y * 32 + x] = x < 10 || x >= 10 + gap ? 0.9f : 0.0f;
    gchar *error = NULL;
    GstBuffer *out = decode("method=dbnet", frame_with_tensor(map, 1024, 4, dims), &error);
    fail_unless(out != NULL, "%s", error);
    fail_unless_equals_int(count_rois(out), gap == 2 ? 1 : 2);
    GstVideoRegionOfInterestMeta *first = gst_buffer_get_video_region_of_interest_meta_id(out, 0);
    if (gap == 2)
      fail_unless(first->x <= 4 && first->x + first->w >= 56, "%u+%u", first->x, first->w);
    gst_buffer_unref(out);
  }
}
GST_END_TEST;

/* Regions come in reading order: a line's words left to right even when the
 * right one starts a little higher, then the next line. */
GST_START_TEST(test_dbnet_reading_order)
{
  static const int blobs[3][4] = {{20, 3, 30, 8}, {2, 4, 8, 9}, {2, 18, 29, 23}}; /* x0 y0 x1 y1 */
  float map[32 * 32] = {0};
  for (int b = 0; b < 3; b++)
    for (int y = blobs[b][1]; y < blobs[b][3]; y++)
      for (int x = blobs[b][0]; x < blobs[b][2]; x++)
        map[y * 32 + x] = 0.9f;
  const gint64 dims[] = {1, 1, 32, 32};
  gchar *error = NULL;
  GstBuffer *out = decode("method=dbnet", frame_with_tensor(map, 1024, 4, dims), &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 3);
  const int order[3] = {1, 0, 2}; /* blob of ROI 0, 1, 2 */
  for (int id = 0; id < 3; id++) {
    GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id(out, id);
    const int *blob = blobs[order[id]];
    fail_unless(roi && abs((int)roi->x + (int)roi->w / 2 - (blob[0] + blob[2])) <= 2 &&
                    abs((int)roi->y + (int)roi->h / 2 - (blob[1] + blob[3])) <= 2,
                "ROI %d is not blob %d", id, order[id]);
  }
  gst_buffer_unref(out);
}
GST_END_TEST;

/* The text npudecode method=ctc writes on the region of a frame whose
 * recogniser scores (steps x classes) have these best classes, with this
 * dictionary; NULL with *error set when it posts an error. */
static gchar *ctc_text(const int *best, guint steps, guint classes, const gchar *entries,
                       gchar **error)
{
  float *scores = g_new(float, steps * classes);
  for (guint s = 0; s < steps; s++)
    for (guint c = 0; c < classes; c++)
      scores[s * classes + c] = (int)c == best[s] ? 0.8f : 0.05f;
  const gint64 dims[] = {1, steps, classes};
  gchar *dictionary = write_labels(entries);
  gchar *options = g_strdup_printf("method=ctc labels=%s", dictionary);
  GstBuffer *out =
      decode(options, on_text_region(frame_with_tensor(scores, steps * classes, 3, dims)), error);
  gchar *text = NULL;
  if (out) {
    fail_unless_equals_int(count_rois(out), 1);
    GstStructure *s = gst_video_region_of_interest_meta_get_param(
        gst_buffer_get_video_region_of_interest_meta_id(out, 7), "text");
    fail_unless(s != NULL, "the region has no text");
    text = g_strdup(gst_structure_get_string(s, "text"));
    gst_buffer_unref(out);
  }
  g_unlink(dictionary);
  g_free(dictionary);
  g_free(options);
  g_free(scores);
  return text;
}

/* Steps whose best classes are 1 1 0 2 3 3: "x", "y", "z" after merging
 * repeats and dropping blanks (class 0). */
GST_START_TEST(test_ctc)
{
  const int best[] = {1, 1, 0, 2, 3, 3};
  gchar *error = NULL;
  gchar *text = ctc_text(best, 6, 4, "x\ny\nz\n", &error);
  fail_unless_equals_string(text, "xyz");
  g_free(text);
}
GST_END_TEST;

/* PP-OCR's recognisers score one class more than their keys file has: the
 * space, last. A dictionary that fits neither way is an error naming both
 * counts, before anything is decoded. */
GST_START_TEST(test_ctc_dictionary_fit)
{
  const int best[] = {1, 4, 4, 0, 2, 3};
  gchar *error = NULL;
  gchar *text = ctc_text(best, 6, 5, "x\ny\nz", &error);
  fail_unless_equals_string(text, "x yz");
  g_free(text);
  /* spaces at the edges, ASCII or ideographic (U+3000), are no part of the text */
  const int edges[] = {4, 0, 1, 0, 2, 2, 0, 1};
  text = ctc_text(edges, 8, 5, "\xe3\x80\x80\nx\ny", &error);
  fail_unless_equals_string(text, "x");
  g_free(text);
  fail_unless(ctc_text(best, 6, 5, "x\n", &error) == NULL);
  fail_unless(error && strstr(error, "does not fit") != NULL, "%s", error);
  g_free(error);
  error = NULL;
  fail_unless(ctc_text(best, 6, 5, "a\nb\nc\nd\ne\n", &error) == NULL);
  fail_unless(error && strstr(error, "does not fit") != NULL, "%s", error);
  g_free(error);
}
GST_END_TEST;

/* A frame whose only tensors are a whole frame's (a detector's map when it
 * found no text, or a recogniser run on the frame) gets no text from ctc:
 * no region, no garbage. */
GST_START_TEST(test_ctc_without_regions)
{
  const float scores[2 * 3] = {0.1f, 0.9f, 0.0f, 0.1f, 0.0f, 0.9f};
  const gint64 dims[] = {1, 2, 3};
  gchar *dictionary = write_labels("a\nb\n");
  gchar *options = g_strdup_printf("method=ctc labels=%s", dictionary);
  gchar *error = NULL;
  GstBuffer *out = decode(options, frame_with_tensor(scores, 6, 3, dims), &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 0);
  gst_buffer_unref(out);
  g_unlink(dictionary);
  g_free(dictionary);
  g_free(options);
}
GST_END_TEST;

/* YOLOv5 rows (cx, cy, w, h, objectness, 2 class scores) in a 640x640 input:
 * one confident box, one below threshold; the frame is 64x64 (x 0.1). */
GST_START_TEST(test_yolo)
{
  const float rows[] = {320, 320, 100, 50, 0.9f, 0.9f, 0.1f,
                        100, 100, 40, 40, 0.2f, 0.5f, 0.5f};
  const gint64 dims[] = {1, 2, 7};
  gchar *error = NULL;
  GstBuffer *out = decode("method=yolo threshold=0.5", frame_with_tensor(rows, 14, 3, dims),
                          &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 1);
  GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta(out);
  fail_unless(abs((int)roi->x - 27) <= 1 && abs((int)roi->y - 29) <= 1, "at %u,%u", roi->x,
              roi->y);
  fail_unless(abs((int)roi->w - 10) <= 1 && abs((int)roi->h - 5) <= 1, "size %ux%u", roi->w,
              roi->h);
  GstStructure *s = gst_video_region_of_interest_meta_get_param(roi, "detection");
  gint id;
  fail_unless(s && gst_structure_get_int(s, "class-id", &id) && id == 0);
  gst_buffer_unref(out);
}
GST_END_TEST;

/* npuinfer in roi mode after a detector: the frame carries the detector's
 * tensors and one recogniser meta per ROI; ctc reads only the newest model's
 * and writes each text on its own ROI. */
GST_START_TEST(test_ctc_on_rois_after_a_detector)
{
  const float detector_map[4] = {0.9f, 0.9f, 0.9f, 0.9f};
  const gint64 map_dims[] = {1, 1, 2, 2};
  GstBuffer *frame = frame_with_tensor(detector_map, 4, 4, map_dims);
  const gint64 dims[] = {1, 2, 3};
  for (gint r = 0; r < 2; r++) {
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta(frame, "text", 4 * r, 8, 4, 4);
    roi->id = 10 + r;
    /* two steps: class 1 then 2 ("ab") for ROI 10, 2 then 2 ("b") for ROI 11 */
    float scores[6] = {0, r ? 0.1f : 0.9f, r ? 0.9f : 0.1f, 0, 0.1f, 0.9f};
    GstNpuTensorMeta *meta = gst_buffer_add_npu_tensor_meta(frame, 1);
    meta->roi_id = 10 + r;
    GstNpuTensor *t = &meta->tensors[0];
    t->name = g_strdup("scores");
    t->dtype = 1;
    t->rank = 3;
    memcpy(t->dims, dims, sizeof dims);
    t->data = gst_buffer_new_memdup(scores, sizeof scores);
    t->size = sizeof scores;
  }
  gchar *dictionary = write_labels("a\nb\n");
  gchar *options = g_strdup_printf("method=ctc labels=%s", dictionary);
  gchar *error = NULL;
  GstBuffer *out = decode(options, frame, &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 2); /* no ROI added for the detector's map */
  const gchar *want[] = {"ab", "b"};
  for (gint r = 0; r < 2; r++) {
    GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id(out, 10 + r);
    fail_unless(roi != NULL);
    GstStructure *s = gst_video_region_of_interest_meta_get_param(roi, "text");
    fail_unless(s != NULL, "ROI %d has no text", 10 + r);
    fail_unless_equals_string(gst_structure_get_string(s, "text"), want[r]);
  }
  gst_buffer_unref(out);
  g_unlink(dictionary);
  g_free(dictionary);
  g_free(options);
}
GST_END_TEST;

/* npumetaconvert after npudecode: one JSON line with the frame's results. */
GST_START_TEST(test_json_lines)
{
  const float scores[] = {0.1f, 2.0f, 0.5f};
  const gint64 dims[] = {1, 3};
  gchar *labels = write_labels("cat\ndog\nbird\n");
  gchar *json_path = write_labels("");
  gchar *options = g_strdup_printf("method=classify labels=%s ! npumetaconvert location=%s",
                                   labels, json_path);
  gchar *error = NULL;
  GstBuffer *frame = frame_with_tensor(scores, 3, 2, dims);
  GST_BUFFER_PTS(frame) = 40 * GST_MSECOND;
  GstBuffer *out = decode(options, frame, &error);
  fail_unless(out != NULL, "%s", error);
  gst_buffer_unref(out);
  gchar *text = NULL;
  fail_unless(g_file_get_contents(json_path, &text, NULL, NULL));
  gchar **lines = g_strsplit(g_strstrip(text), "\n", -1);
  fail_unless_equals_int(g_strv_length(lines), 1);
  JsonParser *parser = json_parser_new();
  fail_unless(json_parser_load_from_data(parser, lines[0], -1, NULL), "not JSON: %s", lines[0]);
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  fail_unless_equals_int64(json_object_get_int_member(root, "pts"), 40 * GST_MSECOND);
  JsonArray *rois = json_object_get_array_member(root, "rois");
  fail_unless_equals_int(json_array_get_length(rois), 1);
  JsonObject *roi = json_array_get_object_element(rois, 0);
  fail_unless_equals_string(json_object_get_string_member(roi, "label"), "dog");
  fail_unless_equals_int(json_object_get_int_member(roi, "w"), FRAME);
  JsonObject *result = json_object_get_object_member(roi, "classification");
  fail_unless(result != NULL);
  fail_unless_equals_int(json_object_get_int_member(result, "class-id"), 1);
  double confidence = json_object_get_double_member(result, "confidence");
  double want = exp(2.0) / (exp(0.1) + exp(2.0) + exp(0.5));
  fail_unless(fabs(confidence - want) < 1e-5, "confidence %f", confidence);
  g_object_unref(parser);
  g_strfreev(lines);
  g_free(text);
  g_unlink(labels);
  g_unlink(json_path);
  g_free(labels);
  g_free(json_path);
  g_free(options);
}
GST_END_TEST;

/* npuoverlay on a black 64x64 frame: the ROI's outline and caption are
 * drawn, the rest of the frame is untouched; a frame without ROIs is
 * unchanged. BGRx is drawn on in place, other formats blended. */
static GstBuffer *overlay(GstBuffer *frame, const gchar *format)
{
  gchar *description = g_strdup_printf(
      "appsrc name=src format=time caps=video/x-raw,format=%s,width=64,height=64,"
      "framerate=30/1 ! npuoverlay font-desc=\"Sans 6\" ! appsink name=sink sync=false "
      "wait-on-eos=false", format);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  g_free(description);
  fail_unless(pipeline != NULL);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  gst_app_src_push_buffer(GST_APP_SRC(src), frame);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
  fail_unless(sample != NULL);
  GstBuffer *out = gst_buffer_ref(gst_sample_get_buffer(sample));
  gst_sample_unref(sample);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return out;
}

/* BGRx: the pixel's B, G, R; the YUV formats: its luma (the first plane). */
static guint32 pixel(GstBuffer *buffer, gboolean bgrx, int x, int y)
{
  guint32 value = 0;
  gst_buffer_extract(buffer, bgrx ? (y * 64 + x) * 4 : y * 64 + x, &value, bgrx ? 4 : 1);
  return bgrx ? value & 0xffffff : value;
}

/* A black frame: zero for BGRx, luma 16 and neutral chroma for YUV. */
static GstBuffer *black_frame(gboolean bgrx, guint8 luma)
{
  gsize size = bgrx ? 64 * 64 * 4 : 64 * 64 * 3 / 2;
  GstBuffer *frame = gst_buffer_new_allocate(NULL, size, NULL);
  gst_buffer_memset(frame, 0, bgrx ? 0 : luma, bgrx ? size : 64 * 64);
  if (!bgrx)
    gst_buffer_memset(frame, 64 * 64, 128, 64 * 64 / 2);
  return frame;
}

static void check_overlay(const gchar *format)
{
  gboolean bgrx = g_str_equal(format, "BGRx");
  guint32 black = bgrx ? 0 : 16;
  GstBuffer *frame = black_frame(bgrx, 16);
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_add_video_region_of_interest_meta(frame, "car", 10, 30, 30, 20);
  gst_video_region_of_interest_meta_add_param(
      roi, gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, 0.9, NULL));
  GstBuffer *out = overlay(frame, format);
  fail_unless(pixel(out, bgrx, 10, 40) != black, "%s: left edge of the box not drawn", format);
  fail_unless(pixel(out, bgrx, 25, 49) != black, "%s: bottom edge of the box not drawn", format);
  fail_unless(pixel(out, bgrx, 25, 40) == black, "%s: inside of the box drawn over", format);
  fail_unless(pixel(out, bgrx, 60, 60) == black && pixel(out, bgrx, 2, 2) == black,
              "%s: outside the box drawn over", format);
  guint caption = 0;
  for (int y = 18; y < 30; y++)
    for (int x = 10; x < 40; x++)
      caption += pixel(out, bgrx, x, y) != black;
  fail_unless(caption > 50, "%s: no caption above the box (%u pixels)", format, caption);
  gst_buffer_unref(out);

  GstBuffer *plain = black_frame(bgrx, 0x40);
  if (bgrx)
    gst_buffer_memset(plain, 0, 0x40, 64 * 64 * 4);
  out = overlay(plain, format);
  for (int i = 0; i < 64 * 64; i += 97)
    fail_unless(pixel(out, bgrx, i % 64, i / 64) == (bgrx ? 0x404040u : 0x40u));
  gst_buffer_unref(out);
}

GST_START_TEST(test_overlay)
{
  check_overlay("BGRx");
  check_overlay("NV12");
  check_overlay("I420");
}
GST_END_TEST;

/* ROIs as large as a guint allows (from any upstream element): drawn where
 * they are visible, no arithmetic overflow: a box from (10, 10) to beyond
 * the frame has its top and left edges across the frame; one that starts
 * beyond the frame draws nothing. */
static void check_huge_rois(const gchar *format)
{
  gboolean bgrx = g_str_equal(format, "BGRx");
  guint32 black = bgrx ? 0 : 16;
  GstBuffer *frame = black_frame(bgrx, 16);
  gst_buffer_add_video_region_of_interest_meta(frame, "huge", 10, 10, G_MAXUINT, G_MAXUINT);
  gst_buffer_add_video_region_of_interest_meta(frame, "far", G_MAXUINT - 5, G_MAXUINT - 5,
                                               G_MAXUINT, G_MAXUINT);
  GstBuffer *out = overlay(frame, format);
  fail_unless(pixel(out, bgrx, 60, 10) != black, "%s: top edge not drawn across", format);
  fail_unless(pixel(out, bgrx, 10, 60) != black, "%s: left edge not drawn down", format);
  fail_unless(pixel(out, bgrx, 40, 40) == black && pixel(out, bgrx, 63, 63) == black,
              "%s: inside of the box drawn over", format);
  gst_buffer_unref(out);
}

GST_START_TEST(test_overlay_huge_rois)
{
  check_huge_rois("BGRx");
  check_huge_rois("NV12");
}
GST_END_TEST;

/* With npuinfer's record of its letterbox in the meta, boxes map back through
 * it (not through a stretch of input-width x input-height). */
GST_START_TEST(test_yolo_through_the_letterbox)
{
  const float rows[] = {320, 160, 100, 50, 0.9f, 0.9f, 0.1f};
  const gint64 dims[] = {1, 1, 7};
  GstBuffer *frame = frame_with_tensor(rows, 7, 3, dims);
  GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(frame);
  meta->scale_x = meta->scale_y = 5.0f; /* input = frame * 5 + (160, 0) */
  meta->offset_x = 160.0f;
  gchar *error = NULL;
  GstBuffer *out = decode("method=yolo", frame, &error);
  fail_unless(out != NULL, "%s", error);
  GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta(out);
  fail_unless(roi != NULL);
  fail_unless(abs((int)roi->x - 22) <= 1 && abs((int)roi->y - 27) <= 1, "at %u,%u", roi->x,
              roi->y);
  fail_unless(abs((int)roi->w - 20) <= 1 && abs((int)roi->h - 10) <= 1, "size %ux%u", roi->w,
              roi->h);
  gst_buffer_unref(out);
}
GST_END_TEST;

GST_START_TEST(test_frames_without_tensors_pass)
{
  gchar *error = NULL;
  GstBuffer *out = decode("method=classify", frame_with_tensor(NULL, 0, 0, NULL), &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 0);
  gst_buffer_unref(out);
}
GST_END_TEST;

GST_START_TEST(test_missing_tensor_is_an_error)
{
  const float scores[] = {1, 2};
  const gint64 dims[] = {1, 2};
  gchar *error = NULL;
  GstBuffer *out = decode("method=classify tensor=logits", frame_with_tensor(scores, 2, 2, dims),
                          &error);
  fail_unless(out == NULL);
  fail_unless(error && strstr(error, "No tensor named 'logits'"), "%s", error);
  g_free(error);
  error = NULL;
  out = decode("method=ctc", frame_with_tensor(scores, 2, 2, dims), &error);
  fail_unless(out == NULL && error && strstr(error, "dictionary"), "%s", error);
  g_free(error);
}
GST_END_TEST;

/* A tensor the method does not decode (wrong rank, shape, size, dtype or,
 * for dbnet, values that are not probabilities) is an element error naming
 * it, never garbage results: e.g. a detector's [1, 5, 400] under dbnet or
 * classify. */
GST_START_TEST(test_tensor_not_fit_for_the_method)
{
  static float values[2000];
  for (guint i = 0; i < G_N_ELEMENTS(values); i++)
    values[i] = (float)(i % 251) * 0.5f;
  static const struct {
    const gchar *options;
    guint rank;
    gint64 dims[4];
    gsize count;
    gint dtype;
    const gchar *message;
  } cases[] = {
      {"method=dbnet", 3, {1, 5, 400}, 2000, 1, "of shape [1, 5, 400] cannot be decoded: dbnet"},
      {"method=classify", 3, {1, 5, 400}, 2000, 1, "shape [1, 5, 400] cannot be decoded: classify"},
      {"method=dbnet", 2, {1, 3}, 3, 1, "of shape [1, 3] cannot be decoded: dbnet needs"},
      {"method=dbnet", 4, {1, 1, 20, 20}, 400, 1, "not a probability map: value 1"},
      {"method=yolo yolo-version=8", 3, {1, 4, 10}, 40, 1, "yolo (version 8) needs [1, 4 + classes, boxes]"},
      {"method=yolo", 3, {1, 10, 5}, 50, 1, "yolo (version 5) needs"},
      {"method=yolo", 2, {84, 20}, 1680, 1, "shape [84, 20] cannot be decoded"},
      {"method=classify", 2, {1, 10}, 5, 1, "holds 20 bytes, not its shape's"},
      {"method=classify", 2, {1, -4}, 4, 1, "holds 16 bytes"},
      {"method=classify", 2, {1, 4}, 4, 7, "Tensor 'out' is not float32"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GstBuffer *frame = frame_with_tensor(values, cases[i].count, cases[i].rank, cases[i].dims);
    gst_buffer_get_npu_tensor_meta(frame)->tensors[0].dtype = cases[i].dtype;
    gchar *error = NULL;
    GstBuffer *out = decode(cases[i].options, frame, &error);
    fail_unless(out == NULL, "case %u decoded", i);
    fail_unless(error && strstr(error, cases[i].message), "case %u: %s", i, error);
    g_free(error);
  }
  /* a CTC recogniser's scores need [1, steps, classes] */
  gchar *dictionary = write_labels("a\nb\n");
  gchar *options = g_strdup_printf("method=ctc labels=%s", dictionary);
  const gint64 dims[] = {1, 2, 3, 4};
  gchar *error = NULL;
  fail_unless(decode(options, on_text_region(frame_with_tensor(values, 24, 4, dims)), &error) ==
              NULL);
  fail_unless(error && strstr(error, "ctc needs scores"), "%s", error);
  g_free(error);
  g_unlink(dictionary);
  g_free(dictionary);
  g_free(options);
}
GST_END_TEST;

static Suite *decode_suite(void)
{
  Suite *s = suite_create("npudecode");
  TCase *tc = tcase_create("general");
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_classify);
  tcase_add_test(tc, test_dbnet);
  tcase_add_test(tc, test_dbnet_reading_order);
  tcase_add_test(tc, test_dbnet_merges_touching_words);
  tcase_add_test(tc, test_ctc);
  tcase_add_test(tc, test_ctc_dictionary_fit);
  tcase_add_test(tc, test_ctc_without_regions);
  tcase_add_test(tc, test_yolo);
  tcase_add_test(tc, test_ctc_on_rois_after_a_detector);
  tcase_add_test(tc, test_json_lines);
  tcase_add_test(tc, test_yolo_through_the_letterbox);
  tcase_add_test(tc, test_overlay);
  tcase_add_test(tc, test_overlay_huge_rois);
  tcase_add_test(tc, test_frames_without_tensors_pass);
  tcase_add_test(tc, test_missing_tensor_is_an_error);
  tcase_add_test(tc, test_tensor_not_fit_for_the_method);
  return s;
}

GST_CHECK_MAIN(decode)
