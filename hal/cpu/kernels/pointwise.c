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
#include "activations.h"
#include "packed_weights.h"

typedef struct pointwise_params {
  int64_t images, in_channels, out_channels;
  bool has_bias; /* input 2 */
  uint32_t activation_count;
  npu_hal_activation activations[NPU_HAL_MAX_ACTIVATIONS];
  /* [in, out]: transposed, so the loop over outputs vectorises; shared by
   * every plan of the model (a re-plan transposes nothing) */
  cpu_packed_weights *transposed;
  const void *transposed_from;
} pointwise_params;

/* Larger products are oneDNN's: its threads pay off there. */
#define MAX_POINTWISE_WEIGHTS (1 << 18)

NPU_VECTOR_CLONES
static void pointwise_products(const pointwise_params *p, const float *restrict x,
                               const float *restrict bias, float *restrict y)
{
  int64_t outs = p->out_channels;
  const float *weights = cpu_packed_weights_data(p->transposed);
  for (int64_t n = 0; n < p->images; n++) {
    const float *xn = x + n * p->in_channels;
    float *restrict yn = y + n * outs;
    if (bias)
      memcpy(yn, bias, (size_t)outs * sizeof *yn);
    else
      memset(yn, 0, (size_t)outs * sizeof *yn);
    for (int64_t c = 0; c < p->in_channels; c++) {
      const float *restrict w = weights + c * outs;
      float v = xn[c];
      for (int64_t o = 0; o < outs; o++)
        yn[o] += w[o] * v;
    }
    for (uint32_t i = 0; i < p->activation_count; i++)
      cpu_activate(&p->activations[i], yn, outs);
  }
}

static void run_pointwise(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const pointwise_params *p = k->params;
  pointwise_products(p, in[0], p->has_bias ? in[2] : NULL, out[0]);
}

static void free_pointwise(void *data)
{
  pointwise_params *p = data;
  if (p)
    cpu_packed_weights_release(p->transposed, p->transposed_from);
  free(p);
}

/* The layout of the weights' packing: [out, in] read, [in, out] packed. */
typedef struct transposed_shape {
  int64_t in_channels, out_channels;
} transposed_shape;

static bool transposed_shapes_equal(const void *a, const void *b)
{
  const transposed_shape *x = a, *y = b;
  return x->in_channels == y->in_channels && x->out_channels == y->out_channels;
}

typedef struct transposing {
  const float *given;
  transposed_shape shape;
} transposing;

static bool transpose_weights(void *ctx, void *packed)
{
  const transposing *t = ctx;
  float *weights = packed;
  int64_t ins = t->shape.in_channels, outs = t->shape.out_channels;
  for (int64_t o = 0; o < outs; o++)
    for (int64_t c = 0; c < ins; c++)
      weights[c * outs + o] = t->given[o * ins + c];
  return true;
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
  if (!cpu_activations_apply(op))
    return cpu_unsupported(op, "a fused addend or requantisation");
  size_t weights = (size_t)w->dims[0] * (size_t)w->dims[1];
  if (weights > MAX_POINTWISE_WEIGHTS)
    return cpu_unsupported(op, "large enough for oneDNN");
  pointwise_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = free_pointwise;
  p->images = x->dims[0];
  p->in_channels = x->dims[1];
  p->out_channels = w->dims[0];
  p->has_bias = has_bias;
  p->activation_count = op->activation_count;
  if (op->activation_count) /* (none: op->activations may be NULL) */
    memcpy(p->activations, op->activations, op->activation_count * sizeof *op->activations);
  /* (input_values stay put while the kernel lives: see npu_hal_op) */
  transposing t = {op->input_values[1], {p->in_channels, p->out_channels}};
  cpu_weights_id id = cpu_packed_weights_identify(t.given, weights * sizeof(float));
  npu_status status = cpu_packed_weights_acquire(
      &id, t.given, &t.shape, sizeof t.shape, transposed_shapes_equal, weights * sizeof(float),
      transpose_weights, &t, &p->transposed);
  if (status != NPU_OK)
    return status;
  p->transposed_from = t.given;
  k->packed_inputs = 0x2; /* its own copy: no device copy of the weights needed */
  k->run = run_pointwise;
  return NPU_OK;
}

const cpu_kernel_entry cpu_pointwise_kernels[] = {
    /* (Any block is the same bytes here, but it claims only those oneDNN's
     * Conv, which takes what it refuses, has formats for.) */
    {"Conv", create_pointwise, CPU_LAYOUTS_ANY, true, CPU_ONEDNN_BLOCKS},
    {NULL, NULL, CPU_LAYOUTS_PLAIN, false},
};
