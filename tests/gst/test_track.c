/* gst-check tests of nputrack: ids and states on moving regions, a track's
 * end reported once, streams (pads) tracked apart, the JSON npumetaconvert
 * writes of it, and settings that cannot work refused with a message. */
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#include <json-glib/json-glib.h>

#include "stream_harness.h"

#define TRACK_PIPELINE(options)                                                                \
  "nputrack name=t " options " appsrc name=src0 ! t.sink_0  t.src_0 ! appsink name=out0"

static GstVideoRegionOfInterestMeta *region_labelled(GstBuffer *frame, const gchar *label)
{
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(frame, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    if (g_strcmp0(g_quark_to_string(((GstVideoRegionOfInterestMeta *)meta)->roi_type), label) == 0)
      return (GstVideoRegionOfInterestMeta *)meta;
  return NULL;
}

/* A car moving right and a person moving down for `moving` frames, then
 * `empty` frames without regions. */
static GPtrArray *two_objects(guint moving, guint empty)
{
  GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  for (guint i = 0; i < moving + empty; i++) {
    GstBuffer *frame = harness_frame(i);
    if (i < moving) {
      harness_add_region(frame, "car", 20 + 6 * i, 100, 80, 40, 0.9);
      harness_add_region(frame, "person", 400, 20 + 4 * i, 30, 70, 0.8);
    }
    g_ptr_array_add(frames, frame);
  }
  return frames;
}

static const gchar *state_of(GstVideoRegionOfInterestMeta *roi)
{
  GstStructure *tracking = gst_video_region_of_interest_meta_get_param(roi, "tracking");
  return tracking ? gst_structure_get_string(tracking, "state") : NULL;
}

GST_START_TEST(test_ids_states_and_end)
{
  GPtrArray *frames[] = {two_objects(20, 8)};
  gchar *error = NULL;
  GPtrArray **out = harness_run(TRACK_PIPELINE("max-age=5 min-hits=3"), 1, frames, &error, NULL);
  fail_unless(out != NULL, "%s", error);
  fail_unless_equals_int(out[0]->len, 28);
  guint64 car = 0, person = 0;
  for (guint i = 0; i < 20; i++) {
    GstBuffer *frame = out[0]->pdata[i];
    GstVideoRegionOfInterestMeta *c = region_labelled(frame, "car"),
                                 *p = region_labelled(frame, "person");
    if (i == 0) {
      car = harness_object_id(c);
      person = harness_object_id(p);
      fail_unless(car != 0 && person != 0 && car != person);
    }
    fail_unless_equals_uint64(harness_object_id(c), car);
    fail_unless_equals_uint64(harness_object_id(p), person);
    fail_unless_equals_string(state_of(c), i < 2 ? "tentative" : "confirmed");
    gint hits;
    fail_unless(gst_structure_get_int(
        gst_video_region_of_interest_meta_get_param(c, "tracking"), "hits", &hits));
    fail_unless_equals_int(hits, i + 1);
  }
  /* both vanish after frame 19: kept 5 frames, ended on the 6th, reported once */
  guint reports = 0;
  for (guint i = 20; i < 28; i++) {
    GstCustomMeta *meta = gst_buffer_get_custom_meta(out[0]->pdata[i], "GstNpuTrackingMeta");
    if (!meta)
      continue;
    fail_unless_equals_int(i, 25);
    const GValue *ended = gst_structure_get_value(gst_custom_meta_get_structure(meta), "ended");
    fail_unless(ended && gst_value_array_get_size(ended) == 2);
    for (guint k = 0; k < 2; k++) {
      const GstStructure *track = gst_value_get_structure(gst_value_array_get_value(ended, k));
      guint64 id;
      gint hits, x;
      fail_unless(gst_structure_get_uint64(track, "object-id", &id));
      fail_unless(id == car || id == person);
      fail_unless(gst_structure_get_int(track, "hits", &hits) && hits == 20);
      /* the car's last estimate went on moving: about 20 + 6 * 25 */
      if (id == car)
        fail_unless(gst_structure_get_int(track, "x", &x) && ABS(x - 170) <= 6, "x %d", x);
    }
    reports++;
  }
  fail_unless_equals_int(reports, 1);
  harness_free_outputs(out, 1);
}
GST_END_TEST;

/* Two pads, the same scene on each: each stream has its own tracker (ids
 * from 1), and a low-score region only continues a track. */
GST_START_TEST(test_streams_apart)
{
  GPtrArray *frames[] = {two_objects(6, 0), two_objects(6, 0)};
  GstBuffer *clutter = harness_frame(6);
  harness_add_region(clutter, "car", 300, 300, 40, 40, 0.3);
  harness_add_region(clutter, "car", 20 + 6 * 6, 100, 80, 40, 0.3);
  g_ptr_array_add(frames[1], clutter);
  gchar *error = NULL;
  GPtrArray **out = harness_run(
      "nputrack name=t appsrc name=src0 ! t.sink_0 t.src_0 ! appsink name=out0 "
      "appsrc name=src1 ! t.sink_1 t.src_1 ! appsink name=out1",
      2, frames, &error, NULL);
  fail_unless(out != NULL, "%s", error);
  for (guint s = 0; s < 2; s++) {
    /* (the check macros name their own locals "first") */
    GstBuffer *opening = out[s]->pdata[0];
    fail_unless_equals_uint64(harness_object_id(region_labelled(opening, "car")), 1);
    fail_unless_equals_uint64(harness_object_id(region_labelled(opening, "person")), 2);
  }
  GstBuffer *last = out[1]->pdata[6];
  gpointer state = NULL;
  GstVideoRegionOfInterestMeta *far = (GstVideoRegionOfInterestMeta *)gst_buffer_iterate_meta_filtered(
                                   last, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE),
                               *near = (GstVideoRegionOfInterestMeta *)gst_buffer_iterate_meta_filtered(
                                   last, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
  fail_unless_equals_uint64(harness_object_id(far), 0);
  fail_unless_equals_uint64(harness_object_id(near), 1);
  harness_free_outputs(out, 2);
}
GST_END_TEST;

GST_START_TEST(test_json)
{
  gchar *path = NULL;
  gint fd = g_file_open_tmp("nputrack-XXXXXX.jsonl", &path, NULL);
  fail_unless(fd >= 0);
  close(fd);
  gchar *description = g_strdup_printf(
      "nputrack name=t max-age=1 appsrc name=src0 ! t.sink_0 t.src_0 ! "
      "npumetaconvert location=%s ! appsink name=out0", path);
  GPtrArray *frames[] = {two_objects(4, 2)};
  gchar *error = NULL;
  GPtrArray **out = harness_run(description, 1, frames, &error, NULL);
  fail_unless(out != NULL, "%s", error);
  gchar *text;
  fail_unless(g_file_get_contents(path, &text, NULL, NULL));
  gchar **lines = g_strsplit(text, "\n", -1);
  fail_unless_equals_int(g_strv_length(lines), 7);
  JsonParser *parser = json_parser_new();
  /* frame 3: the car confirmed with its id */
  fail_unless(json_parser_load_from_data(parser, lines[3], -1, NULL));
  JsonObject *frame = json_node_get_object(json_parser_get_root(parser));
  JsonObject *car = json_array_get_object_element(json_object_get_array_member(frame, "rois"), 0);
  JsonObject *tracking = json_object_get_object_member(car, "tracking");
  fail_unless_equals_int(json_object_get_int_member(tracking, "object-id"), 1);
  fail_unless_equals_string(json_object_get_string_member(tracking, "state"), "confirmed");
  fail_unless(!json_object_has_member(frame, "tracking"));
  /* frame 5: both ended (one frame kept, max-age 1) */
  fail_unless(json_parser_load_from_data(parser, lines[5], -1, NULL));
  frame = json_node_get_object(json_parser_get_root(parser));
  JsonArray *ended =
      json_object_get_array_member(json_object_get_object_member(frame, "tracking"), "ended");
  fail_unless_equals_int(json_array_get_length(ended), 2);
  JsonObject *one = json_array_get_object_element(ended, 0);
  fail_unless(json_object_get_int_member(one, "object-id") >= 1);
  fail_unless(json_object_has_member(one, "label"));
  g_object_unref(parser);
  g_strfreev(lines);
  g_free(text);
  g_unlink(path);
  g_free(path);
  g_free(description);
  harness_free_outputs(out, 1);
}
GST_END_TEST;

GST_START_TEST(test_bad_settings)
{
  GPtrArray *frames[] = {two_objects(2, 0)};
  gchar *error = NULL;
  GPtrArray **out =
      harness_run(TRACK_PIPELINE("low-score=0.8 high-score=0.5"), 1, frames, &error, NULL);
  fail_unless(out == NULL);
  fail_unless(error && strstr(error, "tracker settings"), "%s", error);
  g_free(error);
}
GST_END_TEST;

static Suite *track_suite(void)
{
  Suite *s = suite_create("nputrack");
  TCase *tc = tcase_create("track");
  tcase_add_test(tc, test_ids_states_and_end);
  tcase_add_test(tc, test_streams_apart);
  tcase_add_test(tc, test_json);
  tcase_add_test(tc, test_bad_settings);
  suite_add_tcase(s, tc);
  return s;
}

GST_CHECK_MAIN(track);
