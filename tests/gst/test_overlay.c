/* gst-check tests of npuoverlay's results beyond boxes (issue 19): trails
 * of tracked objects, npuanalytics' lines and zones, instance masks,
 * class maps and keypoints, each checked at known pixels on BGRx (drawn
 * in place) and NV12/I420 (blended), not drawn when a property turns it
 * off, and malformed params left out with a warning. Frames are black;
 * a pixel is "lit" when something was drawn on it. Colours are compared
 * with the full colour the same result draws elsewhere (a box edge, a
 * zone's outline), so the tests do not repeat the element's palette. */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#include <stdlib.h>

#define SIZE 96

typedef struct {
  GstVideoInfo info;
  gboolean bgrx;
} Format;

static Format format_of(const gchar *name)
{
  Format f;
  gst_video_info_set_format(&f.info, gst_video_format_from_string(name), SIZE, SIZE);
  f.bgrx = GST_VIDEO_INFO_FORMAT(&f.info) == GST_VIDEO_FORMAT_BGRx;
  return f;
}

/* A black frame (YUV: luma 16, neutral chroma) at frame @index. */
static GstBuffer *black_frame(const Format *f, guint index)
{
  /* the element registers the frame metas the tests add */
  gst_object_unref(gst_element_factory_make("npuoverlay", NULL));
  GstBuffer *frame = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&f->info), NULL);
  gst_buffer_memset(frame, 0, 0, GST_VIDEO_INFO_SIZE(&f->info));
  if (!f->bgrx) {
    gsize luma = GST_VIDEO_INFO_PLANE_OFFSET(&f->info, 1);
    gst_buffer_memset(frame, 0, 16, luma);
    gst_buffer_memset(frame, luma, 128, GST_VIDEO_INFO_SIZE(&f->info) - luma);
  }
  GST_BUFFER_PTS(frame) = gst_util_uint64_scale(index, GST_SECOND, 30);
  return frame;
}

/* BGRx: the pixel's B, G, R channels; YUV: its luma (in channel 0). */
typedef struct {
  gint c[3];
} Pixel;

static Pixel pixel(const Format *f, GstBuffer *buffer, gint x, gint y)
{
  Pixel p = {{0, 0, 0}};
  guint8 bytes[4] = {0};
  gsize at = f->bgrx ? (gsize)y * GST_VIDEO_INFO_PLANE_STRIDE(&f->info, 0) + (gsize)x * 4
                     : (gsize)y * GST_VIDEO_INFO_PLANE_STRIDE(&f->info, 0) + (gsize)x;
  gst_buffer_extract(buffer, at, bytes, f->bgrx ? 4 : 1);
  for (int c = 0; c < (f->bgrx ? 3 : 1); c++)
    p.c[c] = bytes[c];
  if (!f->bgrx)
    p.c[0] -= 16; /* above black */
  return p;
}

static gboolean lit(const Format *f, GstBuffer *buffer, gint x, gint y)
{
  Pixel p = pixel(f, buffer, x, y);
  return abs(p.c[0]) > 8 || p.c[1] > 8 || p.c[2] > 8;
}

/* @blend is @full at @alpha over black, within @tolerance per channel. */
static void check_blend(const Format *f, Pixel blend, Pixel full, double alpha, gint tolerance,
                        const gchar *what)
{
  for (int c = 0; c < (f->bgrx ? 3 : 1); c++)
    fail_unless(abs(blend.c[c] - (gint)(full.c[c] * alpha + 0.5)) <= tolerance,
                "%s: channel %d is %d, not %.2f x %d", what, c, blend.c[c], alpha, full.c[c]);
  fail_unless(full.c[0] + full.c[1] + full.c[2] > 40, "%s: no full colour to compare", what);
}

/* Runs @frames (taken) through npuoverlay @options; the frames out, and
 * the number of warning messages in *warnings. */
static GPtrArray *run_overlay(const Format *f, const gchar *options, GPtrArray *frames,
                              guint *warnings)
{
  gchar *description = g_strdup_printf(
      "appsrc name=src format=time caps=video/x-raw,format=%s,width=%d,height=%d,"
      "framerate=30/1 ! npuoverlay font-desc=\"Sans 6\" %s ! appsink name=sink sync=false",
      gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&f->info)), SIZE, SIZE, options);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  g_free(description);
  fail_unless(pipeline != NULL);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  for (guint i = 0; i < frames->len; i++)
    gst_app_src_push_buffer(GST_APP_SRC(src), gst_buffer_ref(frames->pdata[i]));
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  GstSample *sample;
  while (out->len < frames->len &&
         (sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND))) {
    g_ptr_array_add(out, gst_buffer_ref(gst_sample_get_buffer(sample)));
    gst_sample_unref(sample);
  }
  fail_unless_equals_int(out->len, frames->len);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *message;
  *warnings = 0;
  while ((message = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING | GST_MESSAGE_ERROR))) {
    fail_unless(GST_MESSAGE_TYPE(message) == GST_MESSAGE_WARNING, "error posted");
    (*warnings)++;
    gst_message_unref(message);
  }
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  g_ptr_array_unref(frames);
  return out;
}

static GPtrArray *run_one(const Format *f, const gchar *options, GstBuffer *frame,
                          guint *warnings)
{
  GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  g_ptr_array_add(frames, frame);
  return run_overlay(f, options, frames, warnings);
}

static GstVideoRegionOfInterestMeta *add_tracked(GstBuffer *frame, const gchar *label, guint x,
                                                 guint y, guint w, guint h, guint64 id)
{
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_add_video_region_of_interest_meta(frame, label, x, y, w, h);
  if (id)
    gst_video_region_of_interest_meta_add_param(
        roi, gst_structure_new("tracking", "object-id", G_TYPE_UINT64, id, "state",
                               G_TYPE_STRING, "confirmed", NULL));
  return roi;
}

static void add_ended(GstBuffer *frame, guint64 id)
{
  GstStructure *tracking = gst_custom_meta_get_structure(
      gst_buffer_add_custom_meta(frame, "GstNpuTrackingMeta"));
  GValue ended = G_VALUE_INIT, track = G_VALUE_INIT;
  g_value_init(&ended, GST_TYPE_ARRAY);
  g_value_init(&track, GST_TYPE_STRUCTURE);
  g_value_take_boxed(&track, gst_structure_new("track", "object-id", G_TYPE_UINT64, id, NULL));
  gst_value_array_append_and_take_value(&ended, &track);
  gst_structure_take_value(tracking, "ended", &ended);
}

/* Object 7 walks right, its box's bottom centre from (15, 40) to (35, 40)
 * on frames 0-2; unseen on frame 3; its track ends on frame 4. Its trail
 * runs along y = 40 behind it while it is seen and unseen, and is gone
 * once the track ended. */
static GPtrArray *walking_object(const Format *f)
{
  GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  for (guint i = 0; i < 5; i++) {
    GstBuffer *frame = black_frame(f, i);
    if (i < 3)
      add_tracked(frame, "walker", 10 + 10 * i, 20, 10, 20, 7);
    if (i == 4)
      add_ended(frame, 7);
    g_ptr_array_add(frames, frame);
  }
  return frames;
}

static void check_trails(const gchar *name)
{
  Format f = format_of(name);
  guint warnings;
  GPtrArray *out = run_overlay(&f, "", walking_object(&f), &warnings);
  /* (20, 40): between the first two points, in no box of frame 2 */
  fail_unless(!lit(&f, out->pdata[0], 20, 40), "%s: trail of one point drawn", name);
  fail_unless(lit(&f, out->pdata[2], 20, 40) && lit(&f, out->pdata[2], 27, 40),
              "%s: no trail behind the object", name);
  fail_unless(!lit(&f, out->pdata[2], 20, 45) && !lit(&f, out->pdata[2], 20, 35),
              "%s: trail too wide", name);
  fail_unless(lit(&f, out->pdata[3], 20, 40), "%s: trail lost while the object is unseen", name);
  fail_unless(!lit(&f, out->pdata[4], 20, 40), "%s: trail kept after the track ended", name);
  g_ptr_array_unref(out);
  /* trail-length 2: the oldest point (15, 40) dropped; unseen for 2 frames: forgotten */
  out = run_overlay(&f, "trail-length=2", walking_object(&f), &warnings);
  fail_unless(!lit(&f, out->pdata[2], 20, 40) && lit(&f, out->pdata[2], 28, 40),
              "%s: trail-length 2 not kept", name);
  g_ptr_array_unref(out);
  for (guint k = 0; k < 2; k++) {
    out = run_overlay(&f, k == 0 ? "trail-length=0" : "draw=boxes", walking_object(&f),
                      &warnings);
    fail_unless(!lit(&f, out->pdata[2], 20, 40), "%s: trail drawn though off", name);
    g_ptr_array_unref(out);
  }
  fail_unless_equals_int(warnings, 0);
}

GST_START_TEST(test_trails)
{
  check_trails("BGRx");
  check_trails("NV12");
}
GST_END_TEST;

/* The caption of a tracked region starts with its id: "#7 walker" is
 * wider than "walker". */
static gint caption_right_end(const Format *f, guint64 id)
{
  guint warnings;
  GstBuffer *frame = black_frame(f, 0);
  add_tracked(frame, "walker", 10, 40, 10, 20, id);
  GPtrArray *out = run_one(f, "", frame, &warnings);
  gint end = 0;
  for (gint x = 10; x < SIZE; x++)
    if (lit(f, out->pdata[0], x, 36))
      end = x;
  g_ptr_array_unref(out);
  return end;
}

GST_START_TEST(test_caption_track_id)
{
  Format f = format_of("BGRx");
  gint plain = caption_right_end(&f, 0), tracked = caption_right_end(&f, 7);
  fail_unless(plain > 20 && tracked > plain + 4, "caption ends at %d, tracked at %d", plain,
              tracked);
}
GST_END_TEST;

static void append_points(GstStructure *entry, const gdouble *xy, guint count)
{
  GValue list = G_VALUE_INIT;
  g_value_init(&list, GST_TYPE_ARRAY);
  for (guint i = 0; i < count; i++) {
    GValue point = G_VALUE_INIT, coordinate = G_VALUE_INIT;
    g_value_init(&point, GST_TYPE_ARRAY);
    g_value_init(&coordinate, G_TYPE_DOUBLE);
    for (guint c = 0; c < 2; c++) {
      g_value_set_double(&coordinate, xy[2 * i + c]);
      gst_value_array_append_value(&point, &coordinate);
    }
    gst_value_array_append_and_take_value(&list, &point);
  }
  gst_structure_take_value(entry, "points", &list);
}

static void append_entry(GstStructure *analytics, const gchar *field, GstStructure *entry)
{
  GValue list = G_VALUE_INIT, value = G_VALUE_INIT;
  g_value_init(&list, GST_TYPE_ARRAY);
  g_value_init(&value, GST_TYPE_STRUCTURE);
  g_value_take_boxed(&value, entry);
  gst_value_array_append_and_take_value(&list, &value);
  gst_structure_take_value(analytics, field, &list);
}

/* npuanalytics' meta as it writes it: the line "door" from (48, 0) down to
 * (48, 95) (forward: to the right) and the zone "lobby", a square from
 * (60, 60) to (90, 90). */
static GstBuffer *frame_with_analytics(const Format *f)
{
  GstBuffer *frame = black_frame(f, 0);
  GstStructure *analytics = gst_custom_meta_get_structure(
      gst_buffer_add_custom_meta(frame, "GstNpuAnalyticsMeta"));
  GstStructure *door = gst_structure_new("line", "name", G_TYPE_STRING, "door", "forward",
                                         G_TYPE_UINT64, (guint64)3, "backward", G_TYPE_UINT64,
                                         (guint64)1, NULL);
  const gdouble ends[] = {48, 0, 48, 95}, corners[] = {60, 60, 90, 60, 90, 90, 60, 90};
  append_points(door, ends, 2);
  append_entry(analytics, "lines", door);
  GstStructure *lobby = gst_structure_new("zone", "name", G_TYPE_STRING, "lobby", "occupancy",
                                          G_TYPE_UINT64, (guint64)2, NULL);
  append_points(lobby, corners, 4);
  append_entry(analytics, "zones", lobby);
  return frame;
}

static void check_lines_and_zones(const gchar *name)
{
  Format f = format_of(name);
  guint warnings;
  GPtrArray *out = run_one(&f, "", frame_with_analytics(&f), &warnings);
  GstBuffer *drawn = out->pdata[0];
  fail_unless(lit(&f, drawn, 48, 10) && lit(&f, drawn, 48, 90), "%s: line not drawn", name);
  fail_unless(!lit(&f, drawn, 44, 10) && !lit(&f, drawn, 30, 47), "%s: line too wide", name);
  /* the arrow: from the middle (48, 47) to the right, forward */
  fail_unless(lit(&f, drawn, 58, 47), "%s: no forward arrow", name);
  fail_unless(!lit(&f, drawn, 38, 47), "%s: arrow backwards", name);
  /* the zone: outline at its full colour, inside a quarter of it */
  Pixel outline = pixel(&f, drawn, 89, 80), inside = pixel(&f, drawn, 84, 84);
  check_blend(&f, inside, outline, 0.25, 3, "zone fill");
  fail_unless(!lit(&f, drawn, 93, 84) && !lit(&f, drawn, 56, 84), "%s: zone spills", name);
  g_ptr_array_unref(out);
  out = run_one(&f, "draw=boxes+trails", frame_with_analytics(&f), &warnings);
  fail_unless(!lit(&f, out->pdata[0], 48, 10) && !lit(&f, out->pdata[0], 84, 84),
              "%s: lines or zones drawn though off", name);
  g_ptr_array_unref(out);
  out = run_one(&f, "draw=zones", frame_with_analytics(&f), &warnings);
  fail_unless(!lit(&f, out->pdata[0], 48, 10) && lit(&f, out->pdata[0], 84, 84),
              "%s: draw=zones", name);
  g_ptr_array_unref(out);
  fail_unless_equals_int(warnings, 0);
}

GST_START_TEST(test_lines_and_zones)
{
  check_lines_and_zones("BGRx");
  check_lines_and_zones("I420");
}
GST_END_TEST;

static GValue bytes_value(const guint8 *data, gsize size)
{
  GValue value = G_VALUE_INIT;
  g_value_init(&value, G_TYPE_BYTES);
  g_value_take_boxed(&value, g_bytes_new(data, size));
  return value;
}

static void add_raster_param(GstVideoRegionOfInterestMeta *roi, const gchar *name, gint width,
                             gint height, const guint8 *data, gsize size)
{
  GstStructure *param = gst_structure_new(name, "width", G_TYPE_INT, width, "height", G_TYPE_INT,
                                          height, NULL);
  if (g_str_equal(name, "segmentation"))
    gst_structure_set(param, "classes", G_TYPE_INT, 3, NULL);
  GValue bytes = bytes_value(data, size);
  gst_structure_take_value(param, "data", &bytes);
  gst_video_region_of_interest_meta_add_param(roi, param);
}

/* An instance mask 2 x 2 over the "cat" box (10, 50) 20 x 20: its top-left
 * and bottom-right quarters; a class map 4 x 1 over the "segmentation"
 * region (50, 10) 40 x 20: background, class 1, class 2, background. */
static GstBuffer *frame_with_masks(const Format *f, gsize mask_size)
{
  GstBuffer *frame = black_frame(f, 0);
  static const guint8 mask[] = {255, 0, 0, 255}, classes[] = {0, 1, 2, 0};
  add_raster_param(gst_buffer_add_video_region_of_interest_meta(frame, "cat", 10, 50, 20, 20),
                   "mask", 2, 2, mask, mask_size);
  add_raster_param(
      gst_buffer_add_video_region_of_interest_meta(frame, "segmentation", 50, 10, 40, 20),
      "segmentation", 4, 1, classes, 4);
  return frame;
}

static void check_masks(const gchar *name)
{
  Format f = format_of(name);
  guint warnings;
  GPtrArray *out = run_one(&f, "", frame_with_masks(&f, 4), &warnings);
  GstBuffer *drawn = out->pdata[0];
  /* the box's left edge, beside the clear bottom-left quarter: the label's colour */
  Pixel label = pixel(&f, drawn, 10, 66);
  check_blend(&f, pixel(&f, drawn, 15, 55), label, 0.5, 3, "mask blend");
  check_blend(&f, pixel(&f, drawn, 25, 65), label, 0.5, 3, "mask blend");
  fail_unless(!lit(&f, drawn, 25, 55) && !lit(&f, drawn, 15, 65), "%s: mask's 0 drawn", name);
  /* the class map: background clear, no box; classes 1 and 2 in colours of their own */
  fail_unless(!lit(&f, drawn, 55, 20) && !lit(&f, drawn, 85, 20) && !lit(&f, drawn, 50, 10),
              "%s: background or a box drawn", name);
  fail_unless(lit(&f, drawn, 65, 20) && lit(&f, drawn, 75, 20), "%s: classes not drawn", name);
  Pixel one = pixel(&f, drawn, 65, 20), two = pixel(&f, drawn, 75, 20);
  fail_unless(memcmp(&one, &two, sizeof one) != 0, "%s: classes 1 and 2 alike", name);
  if (f.bgrx)
    for (int c = 0; c < 3; c++)
      fail_unless(one.c[c] <= 140 && two.c[c] <= 140, "class map not translucent");
  g_ptr_array_unref(out);
  fail_unless_equals_int(warnings, 0);
  out = run_one(&f, "mask-alpha=0.25", frame_with_masks(&f, 4), &warnings);
  check_blend(&f, pixel(&f, out->pdata[0], 15, 55), label, 0.25, 3, "mask-alpha 0.25");
  g_ptr_array_unref(out);
  for (guint k = 0; k < 2; k++) {
    out = run_one(&f, k == 0 ? "mask-alpha=0" : "draw=boxes", frame_with_masks(&f, 4), &warnings);
    fail_unless(!lit(&f, out->pdata[0], 15, 55) && !lit(&f, out->pdata[0], 65, 20),
                "%s: masks drawn though off", name);
    fail_unless(lit(&f, out->pdata[0], 10, 66), "%s: box not drawn", name);
    g_ptr_array_unref(out);
  }
}

GST_START_TEST(test_masks)
{
  check_masks("BGRx");
  check_masks("NV12");
}
GST_END_TEST;

static void add_numbers(GstStructure *param, const gchar *field, const gdouble *values,
                        guint count)
{
  GValue array = G_VALUE_INIT, number = G_VALUE_INIT;
  g_value_init(&array, GST_TYPE_ARRAY);
  g_value_init(&number, G_TYPE_DOUBLE);
  for (guint i = 0; i < count; i++) {
    g_value_set_double(&number, values[i]);
    gst_value_array_append_value(&array, &number);
  }
  gst_structure_take_value(param, field, &array);
}

/* A "person" (5, 5) 60 x 60 with COCO's 17 keypoints: its shoulders (5,
 * 6) at (20, 40) and (50, 40) sure (0.9), its nose (0) at (35, 25) unsure
 * (0.3), the rest at (35, 55) unseen (0); @count keypoints. */
static GstBuffer *frame_with_keypoints(const Format *f, guint count, guint confidence_count)
{
  GstBuffer *frame = black_frame(f, 0);
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_add_video_region_of_interest_meta(frame, "person", 5, 5, 60, 60);
  gdouble x[17], y[17], confidence[17];
  for (guint i = 0; i < 17; i++) {
    x[i] = 35;
    y[i] = 55;
    confidence[i] = 0;
  }
  x[5] = 20, y[5] = 40, x[6] = 50, y[6] = 40, confidence[5] = confidence[6] = 0.9;
  y[0] = 25, confidence[0] = 0.3;
  GstStructure *param = gst_structure_new_empty("keypoints");
  add_numbers(param, "x", x, count);
  add_numbers(param, "y", y, count);
  add_numbers(param, "confidence", confidence, confidence_count);
  gst_video_region_of_interest_meta_add_param(roi, param);
  return frame;
}

static void check_keypoints(const gchar *name)
{
  Format f = format_of(name);
  guint warnings;
  GPtrArray *out = run_one(&f, "", frame_with_keypoints(&f, 17, 17), &warnings);
  GstBuffer *drawn = out->pdata[0];
  Pixel label = pixel(&f, drawn, 5, 40); /* the box's left edge */
  Pixel dot = pixel(&f, drawn, 20, 40);
  check_blend(&f, dot, label, 1.0, 3, "keypoint dot");
  fail_unless(lit(&f, drawn, 35, 40), "%s: the shoulders' limb not drawn", name);
  fail_unless(!lit(&f, drawn, 35, 25) && !lit(&f, drawn, 35, 55),
              "%s: keypoints under the threshold drawn", name);
  fail_unless(!lit(&f, drawn, 35, 47), "%s: limb too wide", name);
  g_ptr_array_unref(out);
  out = run_one(&f, "keypoint-threshold=0.2", frame_with_keypoints(&f, 17, 17), &warnings);
  fail_unless(lit(&f, out->pdata[0], 35, 25) && !lit(&f, out->pdata[0], 35, 55),
              "%s: keypoint-threshold 0.2", name);
  g_ptr_array_unref(out);
  /* not 17: dots, no skeleton */
  out = run_one(&f, "", frame_with_keypoints(&f, 7, 7), &warnings);
  fail_unless(lit(&f, out->pdata[0], 20, 40) && !lit(&f, out->pdata[0], 35, 40),
              "%s: 7 keypoints", name);
  g_ptr_array_unref(out);
  out = run_one(&f, "draw=boxes", frame_with_keypoints(&f, 17, 17), &warnings);
  fail_unless(!lit(&f, out->pdata[0], 20, 40), "%s: keypoints drawn though off", name);
  g_ptr_array_unref(out);
  fail_unless_equals_int(warnings, 0);
}

GST_START_TEST(test_keypoints)
{
  check_keypoints("BGRx");
  check_keypoints("NV12");
}
GST_END_TEST;

/* A mask of 3 bytes for 2 x 2, a class map of the wrong size, keypoint
 * arrays of different lengths: not drawn, one warning message, the frame
 * passes with its boxes drawn. */
static void check_bad_params(const gchar *name)
{
  Format f = format_of(name);
  GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  g_ptr_array_add(frames, frame_with_masks(&f, 3));
  g_ptr_array_add(frames, frame_with_keypoints(&f, 17, 16));
  GstBuffer *segmentation = black_frame(&f, 2);
  static const guint8 classes[] = {1, 1, 1, 1, 1, 1};
  add_raster_param(
      gst_buffer_add_video_region_of_interest_meta(segmentation, "segmentation", 50, 10, 40, 20),
      "segmentation", 4, 1, classes, 6);
  g_ptr_array_add(frames, segmentation);
  guint warnings;
  GPtrArray *out = run_overlay(&f, "", frames, &warnings);
  fail_unless_equals_int(warnings, 1);
  fail_unless(!lit(&f, out->pdata[0], 15, 55) && lit(&f, out->pdata[0], 10, 66),
              "%s: bad mask drawn or box missing", name);
  fail_unless(!lit(&f, out->pdata[1], 20, 40) && lit(&f, out->pdata[1], 5, 40),
              "%s: bad keypoints drawn or box missing", name);
  fail_unless(!lit(&f, out->pdata[2], 65, 20), "%s: bad class map drawn", name);
  g_ptr_array_unref(out);
}

GST_START_TEST(test_bad_params)
{
  check_bad_params("BGRx");
  check_bad_params("I420");
}
GST_END_TEST;

static Suite *overlay_suite(void)
{
  Suite *s = suite_create("npuoverlay");
  TCase *tc = tcase_create("results");
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_trails);
  tcase_add_test(tc, test_caption_track_id);
  tcase_add_test(tc, test_lines_and_zones);
  tcase_add_test(tc, test_masks);
  tcase_add_test(tc, test_keypoints);
  tcase_add_test(tc, test_bad_params);
  return s;
}

GST_CHECK_MAIN(overlay)
