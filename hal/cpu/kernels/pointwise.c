/* Convolutions of a single position: a 1x1 kernel over a [N, C, 1, 1]
 * input, as in squeeze-and-excitation blocks. Each is a small matrix-vector
 * product (at most a few ten thousand multiply-adds), which a oneDNN
 * primitive's dispatch costs more than; here it is one loop, with the
 * fused activations applied as each output is written. A [N, C, 1, 1]
 * tensor has the same bytes in every layout, so any layout is taken. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "fast_math.h"

typedef struct pointwise_params {
  int64_t images, in_channels, out_channels;
  uint32_t activation_count;
  npu_hal_activation activations[NPU_HAL_MAX_ACTIVATIONS];
  float *bias;       /* [out], zeros without one */
  float weights[];   /* [in, out]: transposed, so the loop over outputs vectorises */
} pointwise_params;

/* Larger products are oneDNN's: its threads pay off there. */
#define MAX_POINTWISE_WEIGHTS (1 << 18)

static inline float sigmoid(float v)
{
  return 1.0f / (1.0f + cpu_expf(-v));
}

/* v within [0, 1] (fmaxf and fminf do not vectorise). */
static inline float unit_clamp(float v)
{
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* One activation over y[0, n): the kind is chosen once, so that each loop
 * is branch-free and vectorises (a switch per element kept the gates of
 * squeeze-and-excitation, Sigmoid and HardSigmoid, scalar). */
static inline void activate(const npu_hal_activation *a, float *restrict y, int64_t n)
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
    for (int64_t i = 0; i < n; i++) y[i] = sigmoid(y[i]);
    break;
  case NPU_HAL_ACTIVATION_HARD_SIGMOID:
    for (int64_t i = 0; i < n; i++) y[i] = unit_clamp(alpha * y[i] + beta);
    break;
  case NPU_HAL_ACTIVATION_HARD_SWISH:
    for (int64_t i = 0; i < n; i++) y[i] *= unit_clamp(y[i] * (1.0f / 6) + 0.5f);
    break;
  case NPU_HAL_ACTIVATION_SWISH:
    for (int64_t i = 0; i < n; i++) y[i] *= sigmoid(y[i]);
    break;
  case NPU_HAL_ACTIVATION_GELU:
    for (int64_t i = 0; i < n; i++) y[i] *= 0.5f * (1 + cpu_erff(y[i] * 0.70710678f));
    break;
  case NPU_HAL_ACTIVATION_TANH:
    for (int64_t i = 0; i < n; i++) y[i] = tanhf(y[i]);
    break;
  case NPU_HAL_ACTIVATION_LINEAR:
    for (int64_t i = 0; i < n; i++) y[i] = alpha * y[i] + beta;
    break;
  case NPU_HAL_ACTIVATION_ADD: break; /* refused at creation */
  }
}

NPU_VECTOR_CLONES
static void pointwise_products(const pointwise_params *p, const float *restrict x,
                               float *restrict y)
{
  int64_t outs = p->out_channels;
  for (int64_t n = 0; n < p->images; n++) {
    const float *xn = x + n * p->in_channels;
    float *restrict yn = y + n * outs;
    memcpy(yn, p->bias, (size_t)outs * sizeof *yn);
    for (int64_t c = 0; c < p->in_channels; c++) {
      const float *restrict w = p->weights + c * outs;
      float v = xn[c];
      for (int64_t o = 0; o < outs; o++)
        yn[o] += w[o] * v;
    }
    for (uint32_t i = 0; i < p->activation_count; i++)
      activate(&p->activations[i], yn, outs);
  }
}

static void run_pointwise(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  pointwise_products(k->params, in[0], out[0]);
}

/* Whether every axis after the first two of `t` is 1. */
static bool single_position(const npu_hal_tensor_desc *t)
{
  for (uint32_t d = 2; d < t->rank; d++)
    if (t->dims[d] != 1)
      return false;
  return t->rank >= 3;
}

static npu_status create_pointwise(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *w = &op->inputs[1], *y = &op->outputs[0];
  const npu_hal_window *window = op->window;
  bool has_bias = op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED;
  if (!window || x->dtype != NPU_DTYPE_FLOAT32 || w->dtype != NPU_DTYPE_FLOAT32 ||
      !op->input_values[1] ||
      (has_bias && (!op->input_values[2] || op->inputs[2].dtype != NPU_DTYPE_FLOAT32)) ||
      !single_position(x) || !single_position(w) || !single_position(y) ||
      window->group != 1 || w->dims[1] != x->dims[1] || y->dims[1] != w->dims[0])
    return cpu_unsupported(op, "not a 1x1 convolution of one position");
  for (uint32_t s = 0; s < window->spatial; s++)
    if (window->pad_begin[s] || window->pad_end[s])
      return cpu_unsupported(op, "padded");
  for (uint32_t i = 0; i < op->activation_count; i++)
    if (op->activations[i].kind == NPU_HAL_ACTIVATION_ADD)
      return cpu_unsupported(op, "a fused addend");
  size_t weights = (size_t)w->dims[0] * (size_t)w->dims[1];
  if (weights > MAX_POINTWISE_WEIGHTS)
    return cpu_unsupported(op, "large enough for oneDNN");
  pointwise_params *p = calloc(1, sizeof *p + (weights + (size_t)w->dims[0]) * sizeof(float));
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->images = x->dims[0];
  p->in_channels = x->dims[1];
  p->out_channels = w->dims[0];
  p->bias = p->weights + weights;
  const float *given = op->input_values[1]; /* [out, in] */
  for (int64_t o = 0; o < p->out_channels; o++)
    for (int64_t c = 0; c < p->in_channels; c++)
      p->weights[c * p->out_channels + o] = given[o * p->in_channels + c];
  if (has_bias)
    memcpy(p->bias, op->input_values[2], (size_t)p->out_channels * sizeof(float));
  p->activation_count = op->activation_count;
  if (op->activation_count) /* (none: op->activations may be NULL) */
    memcpy(p->activations, op->activations, op->activation_count * sizeof *op->activations);
  k->packed_inputs = has_bias ? 0x6 : 0x2; /* its own copies: no device copy needed */
  k->run = run_pointwise;
  return NPU_OK;
}

const cpu_kernel_entry cpu_pointwise_kernels[] = {
    /* (Any block is the same bytes here, but it claims only those oneDNN's
     * Conv, which takes what it refuses, has formats for.) */
    {"Conv", create_pointwise, CPU_LAYOUTS_ANY, true, CPU_ONEDNN_BLOCKS},
    {NULL, NULL, CPU_LAYOUTS_PLAIN, false},
};
