#include "tracker.h"

#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "growable.h"
#include "kalman.h"

typedef struct {
  uint64_t id;
  npu_box_filter motion;
  npu_track_state state;
  int class_id;
  int hits, age;
  int frames_unmatched;
  bool matched; /* on the frame being updated */
} track;

struct npu_tracker {
  npu_tracker_config config;
  uint64_t next_id;
  track *tracks;
  size_t n_tracks, tracks_capacity;
  npu_track_end *ended;
  size_t n_ended, ended_capacity;
  /* per-update scratch */
  float *costs;
  size_t costs_capacity;
  int *indices; /* track rows, detection columns, row_to_col of one pass */
  size_t indices_capacity;
  bool *detection_used;
  size_t detection_used_capacity;
  npu_assignment assignment;
};

void npu_tracker_config_default(npu_tracker_config *config)
{
  *config = (npu_tracker_config){
      .high_score = 0.5f,
      .low_score = 0.1f,
      .iou_threshold = 0.2f,
      .low_iou_threshold = 0.5f,
      .min_hits = 3,
      .max_age = 30,
      .class_aware = true,
  };
}

const char *npu_track_state_name(npu_track_state state)
{
  switch (state) {
  case NPU_TRACK_TENTATIVE:
    return "tentative";
  case NPU_TRACK_CONFIRMED:
    return "confirmed";
  case NPU_TRACK_LOST:
    return "lost";
  }
  return "unknown";
}

static bool in_unit_range(float value)
{
  return value >= 0 && value <= 1;
}

npu_tracker *npu_tracker_new(const npu_tracker_config *config)
{
  if (!in_unit_range(config->high_score) || !in_unit_range(config->low_score) ||
      config->low_score > config->high_score || !in_unit_range(config->iou_threshold) ||
      !in_unit_range(config->low_iou_threshold) || config->min_hits < 1 || config->max_age < 0)
    return NULL;
  npu_tracker *tracker = calloc(1, sizeof *tracker);
  if (!tracker)
    return NULL;
  tracker->config = *config;
  tracker->next_id = 1;
  return tracker;
}

void npu_tracker_free(npu_tracker *tracker)
{
  if (!tracker)
    return;
  free(tracker->tracks);
  free(tracker->ended);
  free(tracker->costs);
  free(tracker->indices);
  free(tracker->detection_used);
  npu_assignment_clear(&tracker->assignment);
  free(tracker);
}

typedef enum {
  CONFIRMED_TRACKS,     /* confirmed or lost */
  TRACKED_LAST_FRAME,   /* confirmed and matched on the frame before */
  TENTATIVE_TRACKS,
} track_pool;

static bool in_pool(const track *t, track_pool pool)
{
  if (t->matched)
    return false;
  switch (pool) {
  case CONFIRMED_TRACKS:
    return t->state != NPU_TRACK_TENTATIVE;
  case TRACKED_LAST_FRAME:
    /* frames_unmatched counts this frame already (see predict_all) */
    return t->state != NPU_TRACK_TENTATIVE && t->frames_unmatched == 1;
  case TENTATIVE_TRACKS:
    return t->state == NPU_TRACK_TENTATIVE;
  }
  return false;
}

static void record_match(npu_tracker *tracker, track *t, const npu_track_detection *detection,
                         npu_track_match *match)
{
  npu_box_filter_update(&t->motion, &detection->box);
  t->matched = true;
  t->hits++;
  t->frames_unmatched = 0;
  if (t->state != NPU_TRACK_TENTATIVE || t->hits >= tracker->config.min_hits)
    t->state = NPU_TRACK_CONFIRMED;
  *match = (npu_track_match){t->id, t->state, t->hits, t->age};
}

/* One association pass: the pool's unmatched tracks against the unused
 * detections whose score lies in [min_score, max_score). */
static void associate(npu_tracker *tracker, const npu_track_detection *detections, size_t count,
                      npu_track_match *matches, track_pool pool, float min_score,
                      float max_score, float min_iou)
{
  int *rows = tracker->indices, *cols = rows + tracker->n_tracks,
      *row_to_col = cols + count;
  int n_rows = 0, n_cols = 0;
  for (size_t i = 0; i < tracker->n_tracks; i++)
    if (in_pool(&tracker->tracks[i], pool))
      rows[n_rows++] = (int)i;
  for (size_t j = 0; j < count; j++)
    if (!tracker->detection_used[j] && detections[j].score >= min_score &&
        detections[j].score < max_score)
      cols[n_cols++] = (int)j;
  if (n_rows == 0 || n_cols == 0)
    return;
  for (int r = 0; r < n_rows; r++) {
    const track *t = &tracker->tracks[rows[r]];
    npu_box predicted = npu_box_filter_box(&t->motion);
    for (int c = 0; c < n_cols; c++) {
      const npu_track_detection *d = &detections[cols[c]];
      bool same_class = !tracker->config.class_aware || d->class_id == t->class_id;
      /* 2 lies beyond any threshold: never matched */
      tracker->costs[(size_t)r * n_cols + c] =
          same_class ? 1.0f - npu_box_iou(&predicted, &d->box) : 2.0f;
    }
  }
  /* the scratch was reserved for the largest problem: this cannot fail */
  npu_assignment_solve(&tracker->assignment, tracker->costs, n_rows, n_cols, 1.0f - min_iou,
                       row_to_col);
  for (int r = 0; r < n_rows; r++) {
    if (row_to_col[r] < 0)
      continue;
    int j = cols[row_to_col[r]];
    tracker->detection_used[j] = true;
    record_match(tracker, &tracker->tracks[rows[r]], &detections[j], &matches[j]);
  }
}

static bool reserve_for(npu_tracker *tracker, size_t count)
{
  size_t tracks = tracker->n_tracks, most_tracks = tracks + count;
  npu_assignment *a = &tracker->assignment;
  /* a pass's problem is at most all tracks against all detections */
  bool ok = npu_reserve((void **)&tracker->costs, &tracker->costs_capacity,
                    tracks * count > 0 ? tracks * count : 1, sizeof(float)) &&
            npu_reserve((void **)&tracker->indices, &tracker->indices_capacity,
                    2 * tracks + count + 1, sizeof(int)) &&
            npu_reserve((void **)&tracker->detection_used, &tracker->detection_used_capacity,
                    count + 1, sizeof(bool)) &&
            npu_reserve((void **)&tracker->tracks, &tracker->tracks_capacity, most_tracks + 1,
                    sizeof(track)) &&
            npu_reserve((void **)&tracker->ended, &tracker->ended_capacity, tracks + 1,
                    sizeof(npu_track_end));
  return ok && npu_assignment_reserve(a, (int)tracks, (int)count);
}

static void predict_all(npu_tracker *tracker)
{
  for (size_t i = 0; i < tracker->n_tracks; i++) {
    track *t = &tracker->tracks[i];
    npu_box_filter_predict(&t->motion);
    t->age++;
    t->frames_unmatched++;
    t->matched = false;
  }
}

/* Drops tentative tracks that missed and confirmed ones past max_age (these
 * are reported); the rest that missed are lost. */
static void retire_unmatched(npu_tracker *tracker)
{
  tracker->n_ended = 0;
  size_t kept = 0;
  for (size_t i = 0; i < tracker->n_tracks; i++) {
    track *t = &tracker->tracks[i];
    if (!t->matched) {
      if (t->state == NPU_TRACK_TENTATIVE)
        continue;
      if (t->frames_unmatched > tracker->config.max_age) {
        tracker->ended[tracker->n_ended++] = (npu_track_end){
            t->id, npu_box_filter_box(&t->motion), t->class_id, t->hits, t->age};
        continue;
      }
      t->state = NPU_TRACK_LOST;
    }
    tracker->tracks[kept++] = *t;
  }
  tracker->n_tracks = kept;
}

static void start_tracks(npu_tracker *tracker, const npu_track_detection *detections, size_t count,
                         npu_track_match *matches)
{
  for (size_t j = 0; j < count; j++) {
    if (tracker->detection_used[j] || detections[j].score < tracker->config.high_score)
      continue;
    track *t = &tracker->tracks[tracker->n_tracks++];
    *t = (track){.id = tracker->next_id++, .class_id = detections[j].class_id,
                 .state = NPU_TRACK_TENTATIVE, .matched = true};
    npu_box_filter_init(&t->motion, &detections[j].box);
    t->hits = 1;
    if (t->hits >= tracker->config.min_hits)
      t->state = NPU_TRACK_CONFIRMED;
    matches[j] = (npu_track_match){t->id, t->state, t->hits, t->age};
  }
}

bool npu_tracker_update(npu_tracker *tracker, const npu_track_detection *detections, size_t count,
                        npu_track_match *matches)
{
  if (!reserve_for(tracker, count))
    return false;
  for (size_t j = 0; j < count; j++) {
    matches[j] = (npu_track_match){0, NPU_TRACK_TENTATIVE, 0, 0};
    tracker->detection_used[j] = false;
  }
  const npu_tracker_config *c = &tracker->config;
  predict_all(tracker);
  associate(tracker, detections, count, matches, CONFIRMED_TRACKS, c->high_score, 2.0f,
            c->iou_threshold);
  associate(tracker, detections, count, matches, TRACKED_LAST_FRAME, c->low_score, c->high_score,
            c->low_iou_threshold);
  associate(tracker, detections, count, matches, TENTATIVE_TRACKS, c->high_score, 2.0f,
            c->iou_threshold);
  retire_unmatched(tracker);
  start_tracks(tracker, detections, count, matches);
  return true;
}

const npu_track_end *npu_tracker_ended(const npu_tracker *tracker, size_t *count)
{
  *count = tracker->n_ended;
  return tracker->ended;
}

size_t npu_tracker_live_tracks(const npu_tracker *tracker)
{
  return tracker->n_tracks;
}
