/* The tracker's cost per frame on 100 objects (the lanes scene: 100
 * objects in view, detections with jitter, misses and false positives),
 * then tracker + analytics (4 lines, 4 zones), printed; with the tracker's
 * accuracy on those scenes. */
#include <glib.h>
#include <string.h>

#include "mot_metrics.h"
#include "zones.h"

static double tracker_and_analytics(const mot_scene *scene)
{
  npu_tracker_config config;
  npu_tracker_config_default(&config);
  npu_tracker *tracker = npu_tracker_new(&config);
  npu_line lines[4];
  npu_zone zones[4];
  npu_point corners[4][4];
  for (int i = 0; i < 4; i++) {
    float x = 300 + 400 * i;
    lines[i] = (npu_line){{x, 0}, {x, 1080}};
    const npu_point square[] = {{x, 200}, {x + 200, 200}, {x + 200, 800}, {x, 800}};
    memcpy(corners[i], square, sizeof square);
    zones[i] = (npu_zone){corners[i], 4};
  }
  npu_analytics *analytics = npu_analytics_new(lines, 4, zones, 4);
  npu_track_match *matches = g_new(npu_track_match, 1024);
  npu_tracked_object *objects = g_new(npu_tracked_object, 1024);
  gint64 start = g_get_monotonic_time();
  for (int f = 0; f < scene->frames; f++) {
    const npu_track_detection *d = &scene->detections[scene->detection_start[f]];
    size_t n = (size_t)(scene->detection_start[f + 1] - scene->detection_start[f]), tracked = 0;
    g_assert(n <= 1024 && npu_tracker_update(tracker, d, n, matches));
    for (size_t i = 0; i < n; i++)
      if (matches[i].id)
        objects[tracked++] = (npu_tracked_object){matches[i].id, d[i].box};
    g_assert(npu_analytics_update(analytics, objects, tracked, f));
  }
  double seconds = (g_get_monotonic_time() - start) / 1e6 / scene->frames;
  g_free(matches);
  g_free(objects);
  npu_analytics_free(analytics);
  npu_tracker_free(tracker);
  return seconds;
}

int main(void)
{
  npu_tracker_config config;
  npu_tracker_config_default(&config);
  mot_scene *scene = mot_scene_generate(MOT_SCENE_LANES, 100, 600, 7);
  double seconds;
  mot_summary s = mot_evaluate_tracker(scene, &config, &seconds);
  g_print("tracker, 100 objects: %.1f us per frame (MOTA %.3f, IDF1 %.3f, %ld ID switches, "
          "%d frames)\n",
          seconds * 1e6, s.mota, s.idf1, s.id_switches, scene->frames);
  g_print("tracker + analytics (4 lines, 4 zones), 100 objects: %.1f us per frame\n",
          tracker_and_analytics(scene) * 1e6);
  mot_scene *crossing = mot_scene_generate(MOT_SCENE_CROSSING, 100, 600, 7);
  s = mot_evaluate_tracker(crossing, &config, &seconds);
  g_print("tracker, 100 objects crossing: %.1f us per frame (MOTA %.3f, IDF1 %.3f, "
          "%ld ID switches)\n",
          seconds * 1e6, s.mota, s.idf1, s.id_switches);
  mot_scene_free(crossing);
  mot_scene_free(scene);
  return 0;
}
