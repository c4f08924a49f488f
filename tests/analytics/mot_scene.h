/* Generated multi-object scenes with ground truth for tracking tests:
 * objects that move in straight lines, cross, stop, and hide for a few
 * frames (behind each other or behind scenery), and the detections a real
 * detector would give of them: jittered boxes, low scores on partly hidden
 * objects, misses and false positives. Deterministic for a seed. */
#ifndef MOT_SCENE_H
#define MOT_SCENE_H

#include <stdint.h>

#include "tracker.h"

typedef enum {
  MOT_SCENE_CROSSING, /* head-on and right-angle crossings, objects hiding each other */
  MOT_SCENE_LANES,    /* one-way lanes far enough apart that no two objects ever meet */
} mot_scene_kind;

typedef struct {
  int id;
  npu_box box;
} mot_truth;

typedef struct {
  int frames, width, height;
  /* frame f: truth[truth_start[f] .. truth_start[f + 1]), the objects a
   * detector could see (on screen, hidden less than 60%), and likewise the
   * detections */
  mot_truth *truth;
  int *truth_start;
  npu_track_detection *detections;
  int *detection_start;
  /* every object's centre on every frame, visible or not (NAN off screen):
   * centres[(f * objects + id)]; for counting line crossings exactly */
  int objects;
  npu_point *centres;
} mot_scene;

mot_scene *mot_scene_generate(mot_scene_kind kind, int objects, int frames, uint32_t seed);
void mot_scene_free(mot_scene *scene);

#endif
