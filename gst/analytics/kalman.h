/* A box's motion for the tracker: a constant-velocity Kalman filter over the
 * box's centre and size, one frame per step. Plain C11, no GStreamer. */
#ifndef NPU_ANALYTICS_KALMAN_H
#define NPU_ANALYTICS_KALMAN_H

#include "geometry.h"

/* One coordinate (position and velocity) with its 2x2 covariance. With
 * diagonal process and measurement noise, the 8-state box filter's
 * covariance never couples two coordinates, so four of these are exactly
 * that filter at a fraction of its cost. */
typedef struct {
  float position, velocity;
  float var_position, covariance, var_velocity;
} npu_kalman_axis;

typedef struct {
  npu_kalman_axis axis[4]; /* centre x, centre y, width, height */
} npu_box_filter;

void npu_box_filter_init(npu_box_filter *filter, const npu_box *measured);
/* One frame ahead; sizes never shrink below zero (their velocity stops). */
void npu_box_filter_predict(npu_box_filter *filter);
void npu_box_filter_update(npu_box_filter *filter, const npu_box *measured);
npu_box npu_box_filter_box(const npu_box_filter *filter);

#endif
