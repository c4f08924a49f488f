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

static float sigmoid(float v)
{
  return 1.0f / (1.0f + cpu_expf(-v));
}

static float activate(const npu_hal_activation *a, float v)
{
  switch (a->kind) {
  case NPU_HAL_ACTIVATION_RELU: return v > 0 ? v : 0;
  case NPU_HAL_ACTIVATION_LEAKY_RELU: return v > 0 ? v : a->alpha * v;
  case NPU_HAL_ACTIVATION_CLIP: return v < a->alpha ? a->alpha : v > a->beta ? a->beta : v;
  case NPU_HAL_ACTIVATION_SIGMOID: return sigmoid(v);
  case NPU_HAL_ACTIVATION_HARD_SIGMOID: return fmaxf(0, fminf(1, a->alpha * v + a->beta));
  case NPU_HAL_ACTIVATION_HARD_SWISH: return v * fmaxf(0, fminf(1, v / 6 + 0.5f));
  case NPU_HAL_ACTIVATION_SWISH: return v * sigmoid(v);
  case NPU_HAL_ACTIVATION_GELU: return v * 0.5f * (1 + cpu_erff(v * 0.70710678f));
  case NPU_HAL_ACTIVATION_TANH: return tanhf(v);
  case NPU_HAL_ACTIVATION_LINEAR: return a->alpha * v + a->beta;
  case NPU_HAL_ACTIVATION_ADD: break; /* refused at creation */
  }
  return v;
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
      for (int64_t o = 0; o < outs; o++)
        yn[o] = activate(&p->activations[i], yn[o]);
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
