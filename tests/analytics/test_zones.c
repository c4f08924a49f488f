/* Line and zone analytics alone: geometry on known cases, events and
 * counts on scripted motion, and exact line counts on the generated
 * scenes, from the ground truth and through the tracker. */
#include <glib.h>
#include <math.h>

#include "mot_scene.h"
#include "zones.h"

/* A box whose anchor (bottom centre) is at x, y. */
static npu_tracked_object at(uint64_t id, float x, float y)
{
  return (npu_tracked_object){id, {x - 5, y - 20, 10, 20}};
}

static void test_point_in_polygon(void)
{
  /* a U shape: the notch (4..6, 0..6) is outside */
  const npu_point u[] = {{0, 0}, {4, 0}, {4, 6}, {6, 6}, {6, 0}, {10, 0}, {10, 10}, {0, 10}};
  g_assert_true(npu_point_in_polygon((npu_point){2, 2}, u, 8));
  g_assert_false(npu_point_in_polygon((npu_point){5, 2}, u, 8));
  g_assert_true(npu_point_in_polygon((npu_point){5, 8}, u, 8));
  g_assert_false(npu_point_in_polygon((npu_point){11, 5}, u, 8));
}

static void test_line_directions(void)
{
  /* drawn top to bottom: left to right is forward */
  const npu_line line = {{100, 0}, {100, 200}};
  npu_analytics *a = npu_analytics_new(&line, 1, NULL, 0);
  g_assert_nonnull(a);
  const float xs[] = {90, 95, 100, 96, 104, 110, 90, 80};
  /* 90 -> 95 -> 100 (onto the line: forward) -> 96 (back) -> 104 (forward) ->
   * 110 -> 90 (back) */
  const npu_event_kind expected[] = {NPU_EVENT_CROSS_FORWARD, NPU_EVENT_CROSS_BACKWARD,
                                     NPU_EVENT_CROSS_FORWARD, NPU_EVENT_CROSS_BACKWARD};
  size_t seen = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(xs); i++) {
    npu_tracked_object o = at(7, xs[i], 50);
    g_assert_true(npu_analytics_update(a, &o, 1, (int64_t)i));
    size_t count;
    const npu_event *events = npu_analytics_events(a, &count);
    for (size_t k = 0; k < count; k++) {
      g_assert_cmpuint(seen, <, G_N_ELEMENTS(expected));
      g_assert_cmpint(events[k].kind, ==, expected[seen++]);
      g_assert_cmpuint(events[k].object_id, ==, 7);
    }
  }
  g_assert_cmpuint(seen, ==, 4);
  g_assert_cmpuint(npu_analytics_line_counts(a)[0].forward, ==, 2);
  g_assert_cmpuint(npu_analytics_line_counts(a)[0].backward, ==, 2);
  /* past the line's end: no crossing */
  npu_tracked_object o = at(8, 90, 300);
  npu_analytics_update(a, &o, 1, 9);
  o = at(8, 110, 300);
  npu_analytics_update(a, &o, 1, 10);
  g_assert_cmpuint(npu_analytics_line_counts(a)[0].forward, ==, 2);
  npu_analytics_free(a);
}

static void test_zone_dwell(void)
{
  const npu_point square[] = {{0, 0}, {100, 0}, {100, 100}, {0, 100}};
  npu_zone zone = {square, 4};
  npu_analytics *a = npu_analytics_new(NULL, 0, &zone, 1);
  npu_tracked_object o[2] = {at(1, 150, 50), at(2, 50, 50)};
  g_assert_true(npu_analytics_update(a, o, 2, 1000));
  size_t count;
  const npu_event *events = npu_analytics_events(a, &count);
  g_assert_cmpuint(count, ==, 1);
  g_assert_cmpint(events[0].kind, ==, NPU_EVENT_ENTER);
  g_assert_cmpuint(events[0].object_id, ==, 2);
  o[0] = at(1, 60, 50);
  g_assert_true(npu_analytics_update(a, o, 2, 2000));
  g_assert_cmpuint(npu_analytics_zone_counts(a)[0].occupancy, ==, 2);
  o[0] = at(1, 160, 50);
  g_assert_true(npu_analytics_update(a, o, 2, 3500));
  events = npu_analytics_events(a, &count);
  g_assert_cmpuint(count, ==, 1);
  g_assert_cmpint(events[0].kind, ==, NPU_EVENT_LEAVE);
  g_assert_cmpint(events[0].dwell, ==, 1500);
  /* object 2's track ends inside: it leaves */
  const uint64_t gone = 2;
  g_assert_true(npu_analytics_forget(a, &gone, 1, 5000));
  events = npu_analytics_events(a, &count);
  g_assert_cmpuint(count, ==, 2);
  g_assert_cmpuint(events[1].object_id, ==, 2);
  g_assert_cmpint(events[1].dwell, ==, 4000);
  const npu_zone_counts *c = npu_analytics_zone_counts(a);
  g_assert_cmpuint(c->entered, ==, 2);
  g_assert_cmpuint(c->left, ==, 2);
  g_assert_cmpuint(c->occupancy, ==, 0);
  npu_analytics_free(a);
  /* a zone needs three corners */
  zone.count = 2;
  g_assert_null(npu_analytics_new(NULL, 0, &zone, 1));
}

/* The scene's true crossings of the vertical line x = 960, from its
 * centres: frame to frame, left (x < 960) to right is forward. */
static void true_crossings(const mot_scene *scene, uint64_t *forward, uint64_t *backward)
{
  *forward = *backward = 0;
  for (int id = 0; id < scene->objects; id++) {
    npu_point last = {NAN, NAN};
    for (int f = 0; f < scene->frames; f++) {
      npu_point c = scene->centres[(gsize)f * scene->objects + id];
      if (isnan(c.x))
        continue;
      if (!isnan(last.x) && (last.x < 960) != (c.x < 960))
        (*(last.x < 960 ? forward : backward))++;
      last = c;
    }
  }
}

static void test_counts_from_truth(void)
{
  mot_scene *scene = mot_scene_generate(MOT_SCENE_CROSSING, 16, 300, 3);
  const npu_line line = {{960, -1000}, {960, 3000}};
  npu_analytics *a = npu_analytics_new(&line, 1, NULL, 0);
  npu_tracked_object *objects = g_new(npu_tracked_object, scene->objects);
  for (int f = 0; f < scene->frames; f++) {
    size_t n = 0;
    for (int id = 0; id < scene->objects; id++) {
      npu_point c = scene->centres[(gsize)f * scene->objects + id];
      if (!isnan(c.x))
        objects[n++] = (npu_tracked_object){(uint64_t)id + 1, {c.x, c.y, 0, 0}};
    }
    g_assert_true(npu_analytics_update(a, objects, n, f));
  }
  uint64_t forward, backward;
  true_crossings(scene, &forward, &backward);
  g_print("crossing scene, line x = 960: %" G_GUINT64_FORMAT " forward, %" G_GUINT64_FORMAT
          " backward\n", forward, backward);
  g_assert_cmpuint(forward, >, 0);
  g_assert_cmpuint(backward, >, 0);
  g_assert_cmpuint(npu_analytics_line_counts(a)[0].forward, ==, forward);
  g_assert_cmpuint(npu_analytics_line_counts(a)[0].backward, ==, backward);
  g_free(objects);
  npu_analytics_free(a);
  mot_scene_free(scene);
}

/* Through the tracker, as nputrack ! npuanalytics run it: the lanes
 * scene's objects counted exactly, from noisy detections with misses. */
static void test_counts_through_tracker(void)
{
  mot_scene *scene = mot_scene_generate(MOT_SCENE_LANES, 40, 600, 5);
  npu_tracker_config config;
  npu_tracker_config_default(&config);
  npu_tracker *tracker = npu_tracker_new(&config);
  const npu_line line = {{960, -1000}, {960, 3000}};
  npu_analytics *a = npu_analytics_new(&line, 1, NULL, 0);
  GArray *matches = g_array_new(FALSE, FALSE, sizeof(npu_track_match));
  GArray *objects = g_array_new(FALSE, FALSE, sizeof(npu_tracked_object));
  for (int f = 0; f < scene->frames; f++) {
    const npu_track_detection *d = &scene->detections[scene->detection_start[f]];
    size_t n = (size_t)(scene->detection_start[f + 1] - scene->detection_start[f]);
    g_array_set_size(matches, n);
    g_assert_true(npu_tracker_update(tracker, d, n, (npu_track_match *)matches->data));
    g_array_set_size(objects, 0);
    for (size_t i = 0; i < n; i++) {
      uint64_t id = g_array_index(matches, npu_track_match, i).id;
      if (id) {
        /* the anchor at the box's centre, as the truth's */
        npu_tracked_object o = {id, {d[i].box.x + d[i].box.w / 2, d[i].box.y + d[i].box.h / 2,
                                     0, 0}};
        g_array_append_val(objects, o);
      }
    }
    g_assert_true(npu_analytics_update(a, (npu_tracked_object *)objects->data, objects->len, f));
  }
  uint64_t forward, backward;
  true_crossings(scene, &forward, &backward);
  g_print("lanes scene through the tracker: %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
          " forward, %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " backward (counted/true)\n",
          npu_analytics_line_counts(a)[0].forward, forward,
          npu_analytics_line_counts(a)[0].backward, backward);
  g_assert_cmpuint(forward, >, 0);
  g_assert_cmpuint(npu_analytics_line_counts(a)[0].forward, ==, forward);
  g_assert_cmpuint(npu_analytics_line_counts(a)[0].backward, ==, backward);
  g_array_unref(matches);
  g_array_unref(objects);
  npu_analytics_free(a);
  npu_tracker_free(tracker);
  mot_scene_free(scene);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/zones/polygon", test_point_in_polygon);
  g_test_add_func("/zones/line-directions", test_line_directions);
  g_test_add_func("/zones/dwell", test_zone_dwell);
  g_test_add_func("/zones/counts-truth", test_counts_from_truth);
  g_test_add_func("/zones/counts-tracker", test_counts_through_tracker);
  return g_test_run();
}
