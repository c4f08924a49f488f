/* The tracker's cost per frame on 100 objects (the lanes scene: 100
 * objects in view, detections with jitter, misses and false positives),
 * printed; with its accuracy on that scene. */
#include <glib.h>

#include "mot_metrics.h"

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
  mot_scene *crossing = mot_scene_generate(MOT_SCENE_CROSSING, 100, 600, 7);
  s = mot_evaluate_tracker(crossing, &config, &seconds);
  g_print("tracker, 100 objects crossing: %.1f us per frame (MOTA %.3f, IDF1 %.3f, "
          "%ld ID switches)\n",
          seconds * 1e6, s.mota, s.idf1, s.id_switches);
  mot_scene_free(crossing);
  mot_scene_free(scene);
  return 0;
}
