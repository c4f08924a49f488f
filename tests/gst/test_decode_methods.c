/* gst-check tests of npudecode's issue-19 methods on hand-made tensors with
 * known answers: ssd boxes (outputs told apart by shape), segmentation
 * class maps (scores and ids, through a letterbox), yolo-pose keypoints
 * (unletterboxed, in the JSON lines), yolo-seg masks (pixel by pixel, not
 * printed as bytes), the custom parser end to end, and the errors: wrong
 * shapes named, bad class ids, missing outputs, and parser libraries that
 * are missing, lack the entry point, have another ABI version or refuse. */
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#include <json-glib/json-glib.h>
#include <math.h>

#include "decode_harness.h"

static GstStructure *param_of(GstBuffer *buffer, gint id, const gchar *name)
{
  GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id(buffer, id);
  fail_unless(roi != NULL, "no ROI %d", id);
  return gst_video_region_of_interest_meta_get_param(roi, name);
}

/* The bytes of a param's "data" field, checked to be width x height. */
static const guint8 *data_of(const GstStructure *s, gint *width, gint *height)
{
  fail_unless(gst_structure_get_int(s, "width", width) && gst_structure_get_int(s, "height", height));
  const GValue *value = gst_structure_get_value(s, "data");
  fail_unless(value && G_VALUE_HOLDS(value, G_TYPE_BYTES));
  gsize size;
  const guint8 *data = g_bytes_get_data(g_value_get_boxed(value), &size);
  fail_unless_equals_int(size, *width * *height);
  return data;
}

static void expect_box(GstBuffer *buffer, gint id, guint x, guint y, guint w, guint h)
{
  GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id(buffer, id);
  fail_unless(roi != NULL, "no ROI %d", id);
  fail_unless(abs((int)roi->x - (int)x) <= 1 && abs((int)roi->y - (int)y) <= 1 &&
                  abs((int)roi->w - (int)w) <= 1 && abs((int)roi->h - (int)h) <= 1,
              "ROI %d at %u,%u %ux%u, not %u,%u %ux%u", id, roi->x, roi->y, roi->w, roi->h, x, y,
              w, h);
}

/* Runs `frame` through npudecode expecting an element error containing
 * `message`. */
static void expect_error(const gchar *options, GstBuffer *frame, const gchar *message)
{
  gchar *error = NULL;
  GstBuffer *out = decode(options, frame, &error);
  fail_unless(out == NULL, "'%s' decoded", options);
  fail_unless(error && strstr(error, message), "'%s': %s", options, error);
  g_free(error);
}

/* A frame with two float32 tensors. */
static GstBuffer *frame_with_two(const gchar *first, const float *a, gsize a_count, guint a_rank,
                                 const gint64 *a_dims, const gchar *second, const float *b,
                                 gsize b_count, guint b_rank, const gint64 *b_dims)
{
  GstBuffer *frame = frame_with_tensor(NULL, 0, 0, NULL);
  GstNpuTensorMeta *meta = gst_buffer_add_npu_tensor_meta(frame, 2);
  set_tensor(&meta->tensors[0], first, 1, a, a_count * sizeof(float), a_rank, a_dims);
  set_tensor(&meta->tensors[1], second, 1, b, b_count * sizeof(float), b_rank, b_dims);
  return frame;
}

/* SSD: scores first, boxes second (told apart by shape: [1, 3, 4] is the
 * boxes even though the scores come first), class 0 the background. Box 0
 * is a car (class 2) at 0.25..0.5 x 0.5..0.75 of the input (16..32 x
 * 32..48 of the 64x64 frame); box 1 overlaps it with a lower car score
 * (suppressed); box 2 has only background. */
GST_START_TEST(test_ssd)
{
  const float scores[3 * 3] = {0.05f, 0.05f, 0.9f, 0.1f, 0.1f, 0.8f, 0.95f, 0.05f, 0.05f};
  const float boxes[3 * 4] = {0.25f, 0.5f, 0.5f, 0.75f, 0.26f, 0.5f, 0.5f, 0.76f,
                              0.0f,  0.0f, 1.0f, 1.0f};
  const gint64 dims[] = {1, 3, 3}, box_dims[] = {1, 3, 4};
  gchar *labels = write_labels("background\nperson\ncar\n");
  gchar *options = g_strdup_printf("method=ssd labels=%s", labels);
  gchar *error = NULL;
  GstBuffer *out = decode(options, frame_with_two("scores", scores, 9, 3, dims, "boxes", boxes, 12, 3,
                                                  box_dims),
                          &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 1);
  expect_box(out, 0, 16, 32, 16, 16);
  GstStructure *s = param_of(out, 0, "detection");
  gint id;
  gdouble confidence;
  fail_unless(s && gst_structure_get_int(s, "class-id", &id) && id == 2);
  fail_unless_equals_string(gst_structure_get_string(s, "label"), "car");
  fail_unless(gst_structure_get_double(s, "confidence", &confidence) &&
              fabs(confidence - 0.9) < 1e-6);
  gst_buffer_unref(out);
  /* background=false: box 2's column 0 is a class too (the best: ROI 0) */
  out = decode("method=ssd background=false",
               frame_with_two("scores", scores, 9, 3, dims, "boxes", boxes, 12, 3, box_dims),
               &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 2);
  expect_box(out, 0, 0, 0, 64, 64);
  expect_box(out, 1, 16, 32, 16, 16);
  gst_buffer_unref(out);
  /* one output only: an error naming what the inference has */
  expect_error("method=ssd", frame_with_tensor(boxes, 12, 3, box_dims),
               "ssd needs boxes [1, N, 4] and scores [1, N, classes]");
  g_unlink(labels);
  g_free(labels);
  g_free(options);
}
GST_END_TEST;

/* Scores [1, 3, 2, 4] (3 classes on a 2x4 map) without a letterbox: one
 * "segmentation" ROI over the whole frame, each byte the best class. */
GST_START_TEST(test_segmentation_scores)
{
  const guint8 want[8] = {0, 1, 2, 2, 1, 1, 0, 2};
  float scores[3 * 8];
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < 8; i++)
      scores[c * 8 + i] = c == want[i] ? 0.7f : 0.1f * (float)c;
  const gint64 dims[] = {1, 3, 2, 4};
  gchar *error = NULL;
  GstBuffer *out = decode("method=segmentation", frame_with_tensor(scores, 24, 4, dims), &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 1);
  GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta(out);
  fail_unless_equals_string(g_quark_to_string(roi->roi_type), "segmentation");
  expect_box(out, 0, 0, 0, FRAME, FRAME);
  GstStructure *s = param_of(out, 0, "segmentation");
  gint width, height, classes;
  const guint8 *data = data_of(s, &width, &height);
  fail_unless(width == 4 && height == 2, "%dx%d", width, height);
  fail_unless(gst_structure_get_int(s, "classes", &classes) && classes == 3);
  fail_unless(memcmp(data, want, 8) == 0);
  gst_buffer_unref(out);
}
GST_END_TEST;

/* Class ids [1, 8, 8] (int64, id = 8 * row + column) of a 16x16 input the
 * 64x64 frame fills as input = frame * (0.125, 0.25) + (4, 0): columns
 * 0..1 and 6..7 are padding, cut off; the map that is left (4x8) spans
 * the whole frame. */
GST_START_TEST(test_segmentation_ids_through_the_letterbox)
{
  gint64 ids[64];
  for (int i = 0; i < 64; i++)
    ids[i] = i;
  const gint64 dims[] = {1, 8, 8};
  GstBuffer *frame = frame_with_tensor(NULL, 0, 0, NULL);
  GstNpuTensorMeta *meta = gst_buffer_add_npu_tensor_meta(frame, 1);
  set_tensor(&meta->tensors[0], "out", 7, ids, sizeof ids, 3, dims);
  meta->scale_x = 0.125f;
  meta->scale_y = 0.25f;
  meta->offset_x = 4.0f;
  gchar *error = NULL;
  GstBuffer *out = decode("method=segmentation input-width=16 input-height=16", frame, &error);
  fail_unless(out != NULL, "%s", error);
  expect_box(out, 0, 0, 0, FRAME, FRAME);
  GstStructure *s = param_of(out, 0, "segmentation");
  gint width, height, classes;
  const guint8 *data = data_of(s, &width, &height);
  fail_unless(width == 4 && height == 8, "%dx%d", width, height);
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 4; i++)
      fail_unless_equals_int(data[j * 4 + i], j * 8 + 2 + i);
  fail_unless(gst_structure_get_int(s, "classes", &classes) && classes == 62); /* ids to 61 */
  gst_buffer_unref(out);
}
GST_END_TEST;

/* Ids outside 0..255 and score maps of more than 255 classes are refused
 * on the first frame; so is a map of another rank. */
GST_START_TEST(test_segmentation_errors)
{
  float ids[4] = {0, 1, 300, 2};
  const gint64 dims[] = {1, 2, 2};
  expect_error("method=segmentation", frame_with_tensor(ids, 4, 3, dims),
               "holds class id 300 at 2");
  static float many[256];
  const gint64 wide[] = {1, 256, 1, 1};
  expect_error("method=segmentation", frame_with_tensor(many, 256, 4, wide),
               "of shape [1, 256, 1, 1] cannot be decoded: segmentation handles at most 255");
  const gint64 flat[] = {1, 4};
  expect_error("method=segmentation", frame_with_tensor(ids, 4, 2, flat),
               "of shape [1, 4] cannot be decoded: segmentation needs");
}
GST_END_TEST;

/* YOLOv8-pose with 2 keypoints ([1, 11, 2]) through the letterbox input =
 * frame * 5 + (160, 0): candidate 0 is below the threshold, candidate 1 a
 * person whose keypoints are at input (170, 60) and (330, 110), frame
 * (2, 12) and (34, 22); they reach the JSON lines as arrays. */
GST_START_TEST(test_yolo_pose)
{
  const float rows[11][2] = {
      {100, 320}, {100, 160}, {20, 100}, {20, 50}, {0.2f, 0.9f},
      {0, 170},   {0, 60},    {0, 0.8f}, {0, 330}, {0, 110}, {0, 0.3f}};
  const gint64 dims[] = {1, 11, 2};
  GstBuffer *frame = frame_with_tensor(&rows[0][0], 22, 3, dims);
  GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(frame);
  meta->scale_x = meta->scale_y = 5.0f;
  meta->offset_x = 160.0f;
  gchar *json_path = write_labels("");
  gchar *labels = write_labels("person\n");
  gchar *options = g_strdup_printf("method=yolo-pose keypoints=2 labels=%s ! npumetaconvert "
                            "location=%s", labels, json_path);
  gchar *error = NULL;
  GstBuffer *out = decode(options, frame, &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 1);
  expect_box(out, 0, 22, 27, 20, 10);
  fail_unless_equals_string(gst_structure_get_string(param_of(out, 0, "detection"), "label"),
                            "person");
  GstStructure *s = param_of(out, 0, "keypoints");
  fail_unless(s != NULL);
  const gchar *fields[] = {"x", "y", "confidence"};
  const double want[3][2] = {{2, 34}, {12, 22}, {0.8, 0.3}};
  for (int f = 0; f < 3; f++) {
    const GValue *array = gst_structure_get_value(s, fields[f]);
    fail_unless(array && GST_VALUE_HOLDS_ARRAY(array) && gst_value_array_get_size(array) == 2);
    for (guint k = 0; k < 2; k++) {
      const GValue *v = gst_value_array_get_value(array, k);
      fail_unless(G_VALUE_HOLDS_DOUBLE(v));
      fail_unless(fabs(g_value_get_double(v) - want[f][k]) < 1e-4, "%s[%u] = %f", fields[f], k,
                  g_value_get_double(v));
    }
  }
  gst_buffer_unref(out);
  gchar *text = NULL;
  fail_unless(g_file_get_contents(json_path, &text, NULL, NULL));
  JsonParser *parser = json_parser_new();
  fail_unless(json_parser_load_from_data(parser, g_strstrip(text), -1, NULL), "not JSON: %s", text);
  JsonObject *roi = json_array_get_object_element(
      json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "rois"), 0);
  JsonArray *xs = json_object_get_array_member(
      json_object_get_object_member(roi, "keypoints"), "x");
  fail_unless(xs && json_array_get_length(xs) == 2, "%s", text);
  fail_unless(fabs(json_array_get_double_element(xs, 1) - 34) < 1e-4, "%s", text);
  g_object_unref(parser);
  g_free(text);
  /* the default 17 keypoints need 56 rows */
  expect_error("method=yolo-pose", frame_with_tensor(&rows[0][0], 22, 3, dims),
               "of shape [1, 11, 2] cannot be decoded: yolo-pose needs [1, 5 + 3 x keypoints, "
               "boxes]: [1, 56, boxes] for keypoints=17");
  g_unlink(json_path);
  g_unlink(labels);
  g_free(json_path);
  g_free(labels);
  g_free(options);
}
GST_END_TEST;

/* Collects g_print output (print-results). */
static GString *printed;

static void collect_print(const gchar *text)
{
  g_string_append(printed, text);
}

/* YOLOv8-seg, one class, 2 mask coefficients ([1, 7, 2]), prototypes
 * [1, 2, 4, 4] of an 8x8 input (the frame is 8 x the input): prototype 0 is
 * 1 on columns 0..1 (else -1), prototype 1 is 1 on rows 0..1 (else -1).
 * Candidate 0 covers the input, coefficients (1, -1): on where p0 - p1 > 0,
 * rows 2..3 x columns 0..1; candidate 1 covers input 4..8 x 4..8 (the frame's
 * bottom-right quarter), coefficients (-1, 0): on everywhere there. Masks
 * are at the prototypes' resolution: 4x4 and 2x2. */
GST_START_TEST(test_yolo_seg)
{
  const float rows[7][2] = {{4, 6}, {4, 6}, {8, 4}, {8, 4}, {0.9f, 0.8f}, {1, -1}, {-1, 0}};
  float prototypes[2][4][4];
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++) {
      prototypes[0][r][c] = c < 2 ? 1.0f : -1.0f;
      prototypes[1][r][c] = r < 2 ? 1.0f : -1.0f;
    }
  const gint64 dims[] = {1, 7, 2}, prototype_dims[] = {1, 2, 4, 4};
  printed = g_string_new(NULL);
  GPrintFunc previous = g_set_print_handler(collect_print);
  gchar *error = NULL;
  GstBuffer *out = decode("method=yolo-seg input-width=8 input-height=8 print-results=true",
                          frame_with_two("output0", &rows[0][0], 14, 3, dims, "output1",
                                         &prototypes[0][0][0], 32, 4, prototype_dims),
                          &error);
  g_set_print_handler(previous);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 2);
  expect_box(out, 0, 0, 0, 64, 64);
  expect_box(out, 1, 32, 32, 32, 32);
  const guint8 first[16] = {0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0};
  gint width, height;
  const guint8 *data = data_of(param_of(out, 0, "mask"), &width, &height);
  fail_unless(width == 4 && height == 4, "%dx%d", width, height);
  fail_unless(memcmp(data, first, 16) == 0);
  data = data_of(param_of(out, 1, "mask"), &width, &height);
  fail_unless(width == 2 && height == 2, "%dx%d", width, height);
  fail_unless(data[0] == 255 && data[1] == 255 && data[2] == 255 && data[3] == 255);
  /* printed: the mask's size, not its bytes */
  fail_unless(strstr(printed->str, "mask, width=(int)4, height=(int)4, data=(guint64)16;"),
              "%s", printed->str);
  g_string_free(printed, TRUE);
  gst_buffer_unref(out);
  /* without the prototypes: an error naming the detections' shape */
  expect_error("method=yolo-seg", frame_with_tensor(&rows[0][0], 14, 3, dims),
               "yolo-seg needs prototypes [1, masks, MH, MW]");
}
GST_END_TEST;

/* A frame with the example parser's "boxes" output: rows x0, y0, x1, y1,
 * score, class in input pixels, through input = frame * 2 + (0, 16). */
static GstBuffer *frame_with_boxes(void)
{
  const float boxes[2][6] = {{20, 36, 60, 56, 0.9f, 3}, {0, 16, 10, 26, 0.4f, 1}};
  const gint64 dims[] = {1, 2, 6};
  GstBuffer *frame = frame_with_tensor(NULL, 0, 0, NULL);
  GstNpuTensorMeta *meta = gst_buffer_add_npu_tensor_meta(frame, 1);
  set_tensor(&meta->tensors[0], "boxes", 1, boxes, sizeof boxes, 3, dims);
  meta->scale_x = meta->scale_y = 2.0f;
  meta->offset_y = 16.0f;
  return frame;
}

/* The example parser (tests/gst/example_parser.c) end to end: its regions
 * with their extra fields; its options; its own error. */
GST_START_TEST(test_custom_parser)
{
  gchar *options = g_strdup_printf("method=custom parser=%s", g_getenv("NPU_EXAMPLE_PARSER"));
  gchar *error = NULL;
  GstBuffer *out = decode(options, frame_with_boxes(), &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 1);
  expect_box(out, 0, 10, 10, 20, 10);
  GstStructure *s = param_of(out, 0, "detection");
  gint id;
  gdouble confidence, area;
  fail_unless(s && gst_structure_get_int(s, "class-id", &id) && id == 3);
  fail_unless_equals_string(gst_structure_get_string(s, "label"), "blob");
  fail_unless(gst_structure_get_double(s, "confidence", &confidence) &&
              fabs(confidence - 0.9) < 1e-6);
  fail_unless(gst_structure_get_double(s, "area", &area) && fabs(area - 200) < 1e-6);
  const GValue *corner = gst_structure_get_value(s, "corner");
  fail_unless(corner && gst_value_array_get_size(corner) == 2 &&
              g_value_get_double(gst_value_array_get_value(corner, 1)) == 10.0);
  gst_buffer_unref(out);
  g_free(options);
  /* the options reach the parser: a lower threshold lets the second row in */
  options = g_strdup_printf("method=custom parser=%s parser-options=threshold=0.3",
                            g_getenv("NPU_EXAMPLE_PARSER"));
  out = decode(options, frame_with_boxes(), &error);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(count_rois(out), 2);
  expect_box(out, 1, 0, 0, 5, 5);
  gst_buffer_unref(out);
  g_free(options);
  /* the parser's own refusal of a frame is an element error with its message */
  const float scores[] = {1, 2};
  const gint64 dims[] = {1, 2};
  options = g_strdup_printf("method=custom parser=%s", g_getenv("NPU_EXAMPLE_PARSER"));
  expect_error(options, frame_with_tensor(scores, 2, 2, dims),
               "Parser 'example' failed: needs a float32 output 'boxes'");
  g_free(options);
}
GST_END_TEST;

/* Parser libraries npudecode refuses when it starts, each with a clear
 * error: none set, a missing file, no entry point, another ABI version,
 * options the parser refuses. */
GST_START_TEST(test_custom_parser_refusals)
{
  const struct {
    const gchar *parser, *options, *message;
  } cases[] = {
      {NULL, NULL, "method=custom needs a parser"},
      {"/nonexistent/libparser.so", NULL, "Cannot load parser '/nonexistent/libparser.so'"},
      {g_getenv("NPU_NOT_A_PARSER"), NULL, "exports no gst_npu_decoder_get_info()"},
      {g_getenv("NPU_WRONG_ABI_PARSER"), NULL,
       "is built for decoder ABI version 999; npudecode has version 1"},
      {g_getenv("NPU_EXAMPLE_PARSER"), "colour=red",
       "refuses options 'colour=red': unknown option 'colour=red'"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    gchar *options = g_strdup_printf("method=custom%s%s%s%s", cases[i].parser ? " parser=" : "",
                                     cases[i].parser ? cases[i].parser : "",
                                     cases[i].options ? " parser-options=" : "",
                                     cases[i].options ? cases[i].options : "");
    expect_error(options, frame_with_boxes(), cases[i].message);
    g_free(options);
  }
}
GST_END_TEST;

static Suite *decode_methods_suite(void)
{
  Suite *s = suite_create("npudecode-methods");
  TCase *tc = tcase_create("general");
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_ssd);
  tcase_add_test(tc, test_segmentation_scores);
  tcase_add_test(tc, test_segmentation_ids_through_the_letterbox);
  tcase_add_test(tc, test_segmentation_errors);
  tcase_add_test(tc, test_yolo_pose);
  tcase_add_test(tc, test_yolo_seg);
  tcase_add_test(tc, test_custom_parser);
  tcase_add_test(tc, test_custom_parser_refusals);
  return s;
}

GST_CHECK_MAIN(decode_methods)
