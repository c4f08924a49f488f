/* gst-check tests of npuanalytics after nputrack: line crossings per
 * direction, zone entries, exits and dwell on scripted motion, as frame
 * meta, element messages and JSON; lines and zones from a JSON file; bad
 * settings refused with a message. */
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#include <math.h>
#include <unistd.h>

#include "stream_harness.h"

#define FRAMES 44
#define MOVING 40

/* A walks right across the door (x = 320) out of the lobby (x < 200), B
 * walks left across the door into the lobby; both vanish after frame 39
 * and their tracks end on frame 42 (max-age 2). */
static GPtrArray *walkers(void)
{
  GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  for (guint i = 0; i < FRAMES; i++) {
    GstBuffer *frame = harness_frame(i);
    if (i < MOVING) {
      harness_add_region(frame, "person", 100 + 10 * i, 100, 40, 80, 0.9);
      harness_add_region(frame, "person", 500 - 10 * i, 300, 40, 80, 0.9);
    }
    g_ptr_array_add(frames, frame);
  }
  return frames;
}

static const GstStructure *analytics_of(GstBuffer *frame)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta(frame, "GstNpuAnalyticsMeta");
  fail_unless(meta != NULL);
  return gst_custom_meta_get_structure(meta);
}

static const GstStructure *item(const GstStructure *s, const gchar *field, guint index)
{
  const GValue *array = gst_structure_get_value(s, field);
  fail_unless(array && index < gst_value_array_get_size(array));
  return gst_value_get_structure(gst_value_array_get_value(array, index));
}

static guint64 count_of(const GstStructure *s, const gchar *field)
{
  guint64 value;
  fail_unless(gst_structure_get_uint64(s, field, &value), "%s", field);
  return value;
}

/* The entry's "points" are @expected (x, y pairs). */
static void check_points(const GstStructure *entry, const gdouble *expected, guint count)
{
  const GValue *points = gst_structure_get_value(entry, "points");
  fail_unless(points && GST_VALUE_HOLDS_ARRAY(points));
  fail_unless_equals_int(gst_value_array_get_size(points), count);
  for (guint i = 0; i < count; i++) {
    const GValue *point = gst_value_array_get_value(points, i);
    fail_unless_equals_int(gst_value_array_get_size(point), 2);
    for (guint c = 0; c < 2; c++)
      fail_unless_equals_float(g_value_get_double(gst_value_array_get_value(point, c)),
                               expected[2 * i + c]);
  }
}

static guint n_events(GstBuffer *frame)
{
  return gst_value_array_get_size(gst_structure_get_value(analytics_of(frame), "events"));
}

static void check_walkers(GPtrArray *out, GPtrArray *messages)
{
  fail_unless_equals_int(out->len, FRAMES);
  /* frame: the event expected there */
  const struct {
    guint frame;
    const gchar *type, *name, *direction;
    gdouble dwell;
  } expected[] = {
      {0, "enter", "lobby", NULL, -1},   {8, "leave", "lobby", NULL, 8 / 30.0},
      {20, "cross", "door", "forward", -1}, {21, "cross", "door", "backward", -1},
      {33, "enter", "lobby", NULL, -1},  {42, "leave", "lobby", NULL, 9 / 30.0},
  };
  guint next = 0;
  for (guint f = 0; f < FRAMES; f++) {
    guint n = n_events(out->pdata[f]);
    if (next < G_N_ELEMENTS(expected) && expected[next].frame == f) {
      fail_unless_equals_int(n, 1);
      const GstStructure *e = item(analytics_of(out->pdata[f]), "events", 0);
      fail_unless_equals_string(gst_structure_get_string(e, "type"), expected[next].type);
      fail_unless_equals_string(gst_structure_get_string(e, "name"), expected[next].name);
      if (expected[next].direction)
        fail_unless_equals_string(gst_structure_get_string(e, "direction"),
                                  expected[next].direction);
      gdouble dwell;
      if (expected[next].dwell >= 0)
        fail_unless(gst_structure_get_double(e, "dwell", &dwell) &&
                        fabs(dwell - expected[next].dwell) < 1e-6,
                    "frame %u dwell", f);
      next++;
    } else {
      fail_unless(n == 0, "frame %u: %u events", f, n);
    }
  }
  fail_unless_equals_int(next, G_N_ELEMENTS(expected));
  const GstStructure *last = analytics_of(out->pdata[FRAMES - 1]);
  fail_unless_equals_uint64(count_of(item(last, "lines", 0), "forward"), 1);
  fail_unless_equals_uint64(count_of(item(last, "lines", 0), "backward"), 1);
  const GstStructure *lobby = item(last, "zones", 0);
  fail_unless_equals_uint64(count_of(lobby, "entered"), 2);
  fail_unless_equals_uint64(count_of(lobby, "left"), 2);
  fail_unless_equals_uint64(count_of(lobby, "occupancy"), 0);
  /* the geometry, for npuoverlay */
  const gdouble door[] = {320, 0, 320, 480}, corners[] = {0, 0, 200, 0, 200, 480, 0, 480};
  check_points(item(last, "lines", 0), door, 2);
  check_points(lobby, corners, 4);
  /* mid-way: A left, B not in yet */
  fail_unless_equals_uint64(count_of(item(analytics_of(out->pdata[10]), "zones", 0),
                                     "occupancy"), 0);
  fail_unless_equals_uint64(count_of(item(analytics_of(out->pdata[5]), "zones", 0),
                                     "occupancy"), 1);
  if (messages) {
    fail_unless_equals_int(messages->len, G_N_ELEMENTS(expected));
    for (guint i = 0; i < messages->len; i++) {
      const GstStructure *m = messages->pdata[i];
      fail_unless(gst_structure_has_name(m, "npuanalytics"));
      guint64 pts;
      fail_unless(gst_structure_get_uint64(m, "pts", &pts));
      fail_unless_equals_uint64(pts, gst_util_uint64_scale(expected[i].frame, GST_SECOND, 30));
    }
  }
}

GST_START_TEST(test_lines_and_zones)
{
  GPtrArray *frames[] = {walkers()}, *messages;
  gchar *error = NULL;
  GPtrArray **out = harness_run(
      "nputrack name=t max-age=2 npuanalytics name=a lines=door:320,0,320,480 "
      "zones=lobby:0,0,200,0,200,480,0,480 "
      "appsrc name=src0 ! t.sink_0 t.src_0 ! a.sink_0 a.src_0 ! appsink name=out0",
      1, frames, &error, &messages);
  fail_unless(out != NULL, "%s", error);
  check_walkers(out[0], messages);
  g_ptr_array_unref(messages);
  harness_free_outputs(out, 1);
}
GST_END_TEST;

static gchar *write_config(const gchar *text)
{
  gchar *path = NULL;
  gint fd = g_file_open_tmp("npuanalytics-XXXXXX.json", &path, NULL);
  fail_unless(fd >= 0);
  close(fd);
  fail_unless(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static gchar *run_with_config(const gchar *json, GPtrArray ***out)
{
  gchar *path = write_config(json);
  gchar *description = g_strdup_printf(
      "nputrack name=t max-age=2 npuanalytics name=a config=%s "
      "appsrc name=src0 ! t.sink_0 t.src_0 ! a.sink_0 a.src_0 ! appsink name=out0", path);
  GPtrArray *frames[] = {walkers()};
  gchar *error = NULL;
  *out = harness_run(description, 1, frames, &error, NULL);
  g_unlink(path);
  g_free(path);
  g_free(description);
  return error;
}

GST_START_TEST(test_config_file)
{
  GPtrArray **out;
  gchar *error = run_with_config(
      "{\"lines\": [{\"name\": \"door\", \"points\": [[320, 0], [320, 480]]}],"
      " \"zones\": [{\"name\": \"lobby\", \"points\": [[0, 0], [200, 0], [200, 480], [0, 480]]}]}",
      &out);
  fail_unless(out != NULL, "%s", error);
  check_walkers(out[0], NULL);
  harness_free_outputs(out, 1);
}
GST_END_TEST;

GST_START_TEST(test_bad_settings)
{
  const struct {
    const gchar *json, *message;
  } bad[] = {
      {"{\"lines\": [{\"name\": \"door\", \"points\": [[320, 0]]}]}", "has 1 points"},
      {"{\"zones\": [{\"points\": [[0, 0], [1, 0], [1, 1]]}]}", "needs \"name\""},
      {"{\"zones\": [{\"name\": \"z\", \"points\": [[0, \"a\"], [1, 0], [1, 1]]}]}",
       "point 0 is not [x, y]"},
      {"{\"lines\": 3", "Invalid lines or zones"},
      {"[1, 2]", "not a JSON object"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    GPtrArray **out;
    gchar *error = run_with_config(bad[i].json, &out);
    fail_unless(out == NULL);
    fail_unless(error && strstr(error, bad[i].message), "%s: %s", bad[i].json, error);
    g_free(error);
  }
  GPtrArray *frames[] = {walkers()};
  gchar *error = NULL;
  GPtrArray **out = harness_run(
      "npuanalytics name=a lines=door:1,2,3 appsrc name=src0 ! a.sink_0 a.src_0 ! "
      "appsink name=out0", 1, frames, &error, NULL);
  fail_unless(out == NULL);
  fail_unless(error && strstr(error, "pairs of numbers"), "%s", error);
  g_free(error);
}
GST_END_TEST;

static Suite *analytics_suite(void)
{
  Suite *s = suite_create("npuanalytics");
  TCase *tc = tcase_create("analytics");
  tcase_add_test(tc, test_lines_and_zones);
  tcase_add_test(tc, test_config_file);
  tcase_add_test(tc, test_bad_settings);
  suite_add_tcase(s, tc);
  return s;
}

GST_CHECK_MAIN(analytics);
