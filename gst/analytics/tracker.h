/* Multi-object tracking of one stream's detections, ByteTrack's way: a
 * Kalman motion model per track (kalman.h), IoU association by optimal
 * assignment (assignment.h), high-score detections matched first, the
 * low-score ones then matched to the tracks still left (objects partly
 * hidden keep their track instead of being dropped with the clutter).
 * Plain C11, no GStreamer. */
#ifndef NPU_ANALYTICS_TRACKER_H
#define NPU_ANALYTICS_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geometry.h"

typedef enum {
  NPU_TRACK_TENTATIVE, /* born, not matched min_hits times yet: dropped at its first miss */
  NPU_TRACK_CONFIRMED, /* matched on this frame */
  NPU_TRACK_LOST,      /* confirmed, not matched on this frame: kept on its prediction */
} npu_track_state;

typedef struct {
  float high_score;        /* detections at or above are matched first and start tracks */
  float low_score;         /* detections below are ignored */
  float iou_threshold;     /* least IoU of a match with a high-score detection */
  float low_iou_threshold; /* least IoU of a match with a low-score detection */
  int min_hits;            /* matches (birth included) that confirm a track */
  int max_age;             /* frames a confirmed track outlives its last match */
  bool class_aware;        /* match only detections of the track's class */
} npu_tracker_config;

typedef struct {
  npu_box box;
  float score;
  int class_id;
} npu_track_detection;

/* What became of a detection. */
typedef struct {
  uint64_t id; /* its track (ids start at 1, per tracker); 0: not tracked */
  npu_track_state state;
  int hits; /* frames the track was matched on */
  int age;  /* frames since the track's birth */
} npu_track_match;

/* A track that ended: confirmed, then unmatched for more than max_age
 * frames. */
typedef struct {
  uint64_t id;
  npu_box box; /* its last estimate */
  int class_id;
  int hits, age;
} npu_track_end;

typedef struct npu_tracker npu_tracker;

/* ByteTrack's defaults: high 0.5, low 0.1, IoU 0.2 and 0.5, 3 hits, 30 frames. */
void npu_tracker_config_default(npu_tracker_config *config);

/* NULL when memory runs out or the config is out of range (scores and IoUs
 * within 0..1, low_score <= high_score, min_hits >= 1, max_age >= 0). */
npu_tracker *npu_tracker_new(const npu_tracker_config *config);
void npu_tracker_free(npu_tracker *tracker);

/* One frame's detections; matches[i] says what became of detections[i].
 * False when memory runs out (the tracker is then as before the call). */
bool npu_tracker_update(npu_tracker *tracker, const npu_track_detection *detections, size_t count,
                        npu_track_match *matches);

/* The tracks that ended on the last update, each reported on that update
 * only (tentative tracks that vanish were never objects: not reported). */
const npu_track_end *npu_tracker_ended(const npu_tracker *tracker, size_t *count);

/* Tracks alive (tentative, confirmed or lost). */
size_t npu_tracker_live_tracks(const npu_tracker *tracker);

const char *npu_track_state_name(npu_track_state state);

#endif
