/* CLEAR MOT (MOTA, ID switches) and IDF1 of a tracker's output against
 * ground truth, matched at IoU >= 0.5 as the MOTChallenge does. */
#ifndef MOT_METRICS_H
#define MOT_METRICS_H

#include <stdint.h>

#include "mot_scene.h"

typedef struct {
  uint64_t id;
  npu_box box;
} mot_hypothesis;

typedef struct mot_metrics mot_metrics;

typedef struct {
  long truths, hypotheses, misses, false_positives, id_switches, id_true_positives;
  double mota, idf1;
} mot_summary;

mot_metrics *mot_metrics_new(void);
void mot_metrics_free(mot_metrics *metrics);
void mot_metrics_add_frame(mot_metrics *metrics, const mot_truth *truth, int n_truth,
                           const mot_hypothesis *hypotheses, int n_hypotheses);
mot_summary mot_metrics_summary(mot_metrics *metrics);

/* Runs a new tracker with config over the scene and scores its confirmed
 * tracks; *seconds_per_frame (when not NULL): the tracker's mean time per
 * frame. */
mot_summary mot_evaluate_tracker(const mot_scene *scene, const npu_tracker_config *config,
                                 double *seconds_per_frame);

#endif
