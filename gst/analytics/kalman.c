/* Noise as ByteTrack/BoT-SORT set it: standard deviations proportional to
 * the box's size (1/20 of it for positions, 1/160 for velocities), so that
 * near and far objects are tracked alike; x and width scale with the width,
 * y and height with the height. */
#include "kalman.h"

#include <math.h>

#define POSITION_WEIGHT (1.0f / 20.0f)
#define VELOCITY_WEIGHT (1.0f / 160.0f)

/* Which size (2: width, 3: height) scales each axis's noise. */
static const int scale_axis[4] = {2, 3, 2, 3};

static float scale_of(const npu_box_filter *filter, int axis)
{
  /* a size near zero would make the filter trust everything blindly */
  return fmaxf(filter->axis[scale_axis[axis]].position, 1.0f);
}

static void measurement_of(const npu_box *box, float out[4])
{
  out[0] = box->x + box->w / 2;
  out[1] = box->y + box->h / 2;
  out[2] = box->w;
  out[3] = box->h;
}

void npu_box_filter_init(npu_box_filter *filter, const npu_box *measured)
{
  float z[4];
  measurement_of(measured, z);
  for (int i = 0; i < 4; i++) {
    npu_kalman_axis *a = &filter->axis[i];
    a->position = z[i];
    a->velocity = 0;
  }
  for (int i = 0; i < 4; i++) {
    npu_kalman_axis *a = &filter->axis[i];
    float s = scale_of(filter, i);
    /* wide at birth: the velocity is unknown */
    a->var_position = powf(2 * POSITION_WEIGHT * s, 2);
    a->covariance = 0;
    a->var_velocity = powf(10 * VELOCITY_WEIGHT * s, 2);
  }
}

void npu_box_filter_predict(npu_box_filter *filter)
{
  for (int i = 0; i < 4; i++) {
    npu_kalman_axis *a = &filter->axis[i];
    float s = scale_of(filter, i);
    a->position += a->velocity;
    if (i >= 2 && a->position <= 0) {
      a->position -= a->velocity;
      a->velocity = 0;
    }
    /* P = F P F^T + Q with F = [1 1; 0 1] */
    a->var_position += 2 * a->covariance + a->var_velocity + powf(POSITION_WEIGHT * s, 2);
    a->covariance += a->var_velocity;
    a->var_velocity += powf(VELOCITY_WEIGHT * s, 2);
  }
}

void npu_box_filter_update(npu_box_filter *filter, const npu_box *measured)
{
  float z[4];
  measurement_of(measured, z);
  for (int i = 0; i < 4; i++) {
    npu_kalman_axis *a = &filter->axis[i];
    float s = scale_of(filter, i);
    float innovation_var = a->var_position + powf(POSITION_WEIGHT * s, 2);
    float gain_position = a->var_position / innovation_var;
    float gain_velocity = a->covariance / innovation_var;
    float innovation = z[i] - a->position;
    a->position += gain_position * innovation;
    a->velocity += gain_velocity * innovation;
    /* P = (I - K H) P, H = [1 0] */
    a->var_velocity -= gain_velocity * a->covariance;
    a->var_position *= 1 - gain_position;
    a->covariance *= 1 - gain_position;
  }
}

npu_box npu_box_filter_box(const npu_box_filter *filter)
{
  float w = fmaxf(filter->axis[2].position, 0), h = fmaxf(filter->axis[3].position, 0);
  return (npu_box){filter->axis[0].position - w / 2, filter->axis[1].position - h / 2, w, h};
}
