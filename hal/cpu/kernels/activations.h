/* The fused activations of a kernel of ours (oneDNN's kernels take them as
 * post-ops), applied to a span of its float output after it is written. */
#ifndef NPU_CPU_ACTIVATIONS_H
#define NPU_CPU_ACTIVATIONS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "fast_math.h"
#include "npu_hal_graph.h"

static inline float cpu_sigmoid(float v)
{
  return 1.0f / (1.0f + cpu_expf(-v));
}

/* v within [0, 1] (fmaxf and fminf do not vectorise). */
static inline float cpu_unit_clamp(float v)
{
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* One activation over y[0, n): the kind is chosen once, so that each loop
 * is branch-free and vectorises (a switch per element kept the gates of
 * squeeze-and-excitation, Sigmoid and HardSigmoid, scalar). */
static inline __attribute__((always_inline)) void cpu_activate(const npu_hal_activation *a,
                                                              float *restrict y, int64_t n)
{
  float alpha = a->alpha, beta = a->beta;
  switch (a->kind) {
  case NPU_HAL_ACTIVATION_RELU:
    for (int64_t i = 0; i < n; i++) y[i] = y[i] > 0 ? y[i] : 0;
    break;
  case NPU_HAL_ACTIVATION_LEAKY_RELU:
    for (int64_t i = 0; i < n; i++) y[i] = y[i] > 0 ? y[i] : alpha * y[i];
    break;
  case NPU_HAL_ACTIVATION_CLIP:
    for (int64_t i = 0; i < n; i++) y[i] = y[i] < alpha ? alpha : y[i] > beta ? beta : y[i];
    break;
  case NPU_HAL_ACTIVATION_SIGMOID:
    for (int64_t i = 0; i < n; i++) y[i] = cpu_sigmoid(y[i]);
    break;
  case NPU_HAL_ACTIVATION_HARD_SIGMOID:
    for (int64_t i = 0; i < n; i++) y[i] = cpu_unit_clamp(alpha * y[i] + beta);
    break;
  case NPU_HAL_ACTIVATION_HARD_SWISH:
    for (int64_t i = 0; i < n; i++) y[i] *= cpu_unit_clamp(y[i] * (1.0f / 6) + 0.5f);
    break;
  case NPU_HAL_ACTIVATION_SWISH:
    for (int64_t i = 0; i < n; i++) y[i] *= cpu_sigmoid(y[i]);
    break;
  case NPU_HAL_ACTIVATION_GELU:
    for (int64_t i = 0; i < n; i++) y[i] *= 0.5f * (1 + cpu_erff(y[i] * 0.70710678f));
    break;
  case NPU_HAL_ACTIVATION_GELU_TANH:
    for (int64_t i = 0; i < n; i++) y[i] = cpu_gelu_tanh(y[i]);
    break;
  case NPU_HAL_ACTIVATION_TANH:
    for (int64_t i = 0; i < n; i++) y[i] = cpu_tanhf(y[i]);
    break;
  case NPU_HAL_ACTIVATION_LINEAR:
    for (int64_t i = 0; i < n; i++) y[i] = alpha * y[i] + beta;
    break;
  case NPU_HAL_ACTIVATION_MISH:
    for (int64_t i = 0; i < n; i++) y[i] = cpu_mish(y[i]);
    break;
  case NPU_HAL_ACTIVATION_ADD:
  case NPU_HAL_ACTIVATION_DEQUANTIZED_ADD:
  case NPU_HAL_ACTIVATION_QUANTIZE: break; /* refused at creation */
  }
}


/* Whether cpu_activate applies every fused activation of `op`: none adds
 * another tensor or requantises. */
static inline bool cpu_activations_apply(const npu_hal_op *op)
{
  for (uint32_t i = 0; i < op->activation_count; i++) {
    npu_hal_activation_kind kind = op->activations[i].kind;
    if (kind == NPU_HAL_ACTIVATION_ADD || kind == NPU_HAL_ACTIVATION_DEQUANTIZED_ADD ||
        kind == NPU_HAL_ACTIVATION_QUANTIZE)
      return false;
  }
  return true;
}

#endif
