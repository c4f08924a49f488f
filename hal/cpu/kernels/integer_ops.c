/* Integer convolution and matrix product, exact for every variant ONNX
 * allows: ConvInteger and MatMulInteger (int32 out), QLinearConv and
 * QLinearMatMul (requantised to 8 bits), and the QDQ rewriting's
 * QLinearMatMulBias (an int32 bias per column) and QLinearConvTranspose (weights [C, M/group, k...], their parameters along
 * axis 1), int8 or uint8 operands, per-tensor
 * or per-channel weight zero points and scales, weights known or computed
 * at run time. Products accumulate in int32 as (x - x_zero)(w - w_zero);
 * the QLinear ops then scale by x_scale * w_scale / y_scale, round half to
 * even and add y's zero point. oneDNN's int8 kernels (qlinear_dnnl.c, qlinear_matmul_dnnl.c) take
 * the common fast case; these loops take the rest. */
#include <stdlib.h>
#include <string.h>

#include "quant_kernels.h"

#define SPATIAL 3 /* 1-D and 2-D windows run as 3-D ones with unit axes */

/* Which launch input holds what. */
typedef struct integer_inputs {
  uint32_t x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias;
} integer_inputs;

static const integer_inputs integer_layout = {0, 99, 2, 1, 99, 3, 99, 99, 99};
static const integer_inputs qlinear_layout = {0, 1, 2, 3, 4, 5, 6, 7, 8};

typedef struct integer_params {
  integer_inputs at;
  bool qlinear, conv, transposed;
  /* how many output channels (columns) the weights' per-channel parameters
   * cover: all but a grouped transposed convolution's, which repeat per group */
  int64_t weight_channels;
  /* convolution */
  int64_t group, channels, out_channels;
  int64_t in[SPATIAL], out[SPATIAL], kernel[SPATIAL], stride[SPATIAL], dilation[SPATIAL],
      pad[SPATIAL];
  /* matrix product: per output batch, where its A and B matrices start */
  size_t rows, depth, columns, batches;
  size_t *a_offsets, *b_offsets;
  size_t images;            /* convolution batch */
} integer_params;

static void free_integer(void *data)
{
  integer_params *p = data;
  if (p) {
    free(p->a_offsets);
    free(p->b_offsets);
  }
  free(p);
}

typedef struct integer_job {
  const npu_hal_kernel *k;
  const integer_params *p;
  void *const *in;
  int32_t *acc;
} integer_job;

/* Weight zero point of output channel (or column) `m`: one or one each. */
static int32_t weight_zero(const integer_job *job, size_t m)
{
  uint32_t at = job->p->at.w_zero;
  size_t count = at < job->k->input_count && job->k->inputs[at].dtype
                     ? cpu_tensor_elements(&job->k->inputs[at])
                     : 1;
  return cpu_q_zero(job->k, job->in, at, count > 1 ? m % job->p->weight_channels : 0);
}

/* Where output position `o` of one spatial axis takes tap `k` of the
 * window from: a convolution's input index, or for a transposed one the
 * input index that tap paints `o` from (-1: none, as padding: adds nothing). */
static int64_t tap_source(const integer_params *p, int d, int64_t o, int64_t k)
{
  if (!p->transposed)
    return o * p->stride[d] - p->pad[d] + k * p->dilation[d];
  int64_t from = o + p->pad[d] - k * p->dilation[d];
  return from >= 0 && from % p->stride[d] == 0 ? from / p->stride[d] : -1;
}

/* One (image, output channel) plane of a convolution. */
static void conv_plane(void *data, size_t task)
{
  const integer_job *job = data;
  const integer_params *p = job->p;
  const npu_hal_kernel *k = job->k;
  size_t image = task / (size_t)p->out_channels, m = task % (size_t)p->out_channels;
  int64_t per_group = p->channels / p->group, group = (int64_t)m / (p->out_channels / p->group);
  int32_t xz = cpu_q_zero(k, job->in, p->at.x_zero, 0), wz = weight_zero(job, m);
  npu_dtype xt = k->inputs[p->at.x].dtype, wt = k->inputs[p->at.w].dtype;
  size_t in_plane = (size_t)(p->in[0] * p->in[1] * p->in[2]);
  size_t window = (size_t)(p->kernel[0] * p->kernel[1] * p->kernel[2]);
  size_t out_plane = (size_t)(p->out[0] * p->out[1] * p->out[2]);
  int32_t *acc = job->acc + task * out_plane;
  for (int64_t o0 = 0; o0 < p->out[0]; o0++)
    for (int64_t o1 = 0; o1 < p->out[1]; o1++)
      for (int64_t o2 = 0; o2 < p->out[2]; o2++) {
        int32_t sum = 0;
        for (int64_t c = 0; c < per_group; c++) {
          size_t channel = (size_t)(group * per_group + c);
          size_t x_base = (image * (size_t)p->channels + channel) * in_plane;
          /* Conv's weights [M][C/group][k...], a transposed one's [C][M/group][k...] */
          size_t w_channels = (size_t)p->weight_channels;
          size_t w_base = (p->transposed ? channel * w_channels + m % w_channels
                                         : m * (size_t)per_group + (size_t)c) * window;
          for (int64_t k0 = 0; k0 < p->kernel[0]; k0++) {
            int64_t i0 = tap_source(p, 0, o0, k0);
            for (int64_t k1 = 0; k1 < p->kernel[1] && i0 >= 0 && i0 < p->in[0]; k1++) {
              int64_t i1 = tap_source(p, 1, o1, k1);
              for (int64_t k2 = 0; k2 < p->kernel[2] && i1 >= 0 && i1 < p->in[1]; k2++) {
                int64_t i2 = tap_source(p, 2, o2, k2);
                if (i2 < 0 || i2 >= p->in[2])
                  continue; /* padding: x's zero point, which adds nothing */
                size_t xi = x_base + (size_t)((i0 * p->in[1] + i1) * p->in[2] + i2);
                size_t wi = w_base + (size_t)((k0 * p->kernel[1] + k1) * p->kernel[2] + k2);
                sum += (cpu_q_load(job->in[p->at.x], xi, xt) - xz) *
                       (cpu_q_load(job->in[p->at.w], wi, wt) - wz);
              }
            }
          }
        }
        acc[(o0 * p->out[1] + o1) * p->out[2] + o2] = sum;
      }
}

/* One row of one batch of a matrix product. */
static void matmul_row(void *data, size_t task)
{
  const integer_job *job = data;
  const integer_params *p = job->p;
  const npu_hal_kernel *k = job->k;
  size_t batch = task / p->rows, row = task % p->rows;
  int32_t az = cpu_q_zero(k, job->in, p->at.x_zero, 0);
  npu_dtype at = k->inputs[p->at.x].dtype, bt = k->inputs[p->at.w].dtype;
  const void *a = job->in[p->at.x], *b = job->in[p->at.w];
  int32_t *acc = job->acc + task * p->columns;
  for (size_t j = 0; j < p->columns; j++) {
    int32_t bz = weight_zero(job, j), sum = 0;
    for (size_t d = 0; d < p->depth; d++)
      sum += (cpu_q_load(a, p->a_offsets[batch] + row * p->depth + d, at) - az) *
             (cpu_q_load(b, p->b_offsets[batch] + d * p->columns + j, bt) - bz);
    acc[j] = sum;
  }
}

/* QLinear outputs: (acc + bias) * x_scale * w_scale[m] / y_scale, rounded. */
static void requantise(const npu_hal_kernel *k, const integer_params *p, void *const *in,
                       const int32_t *acc, void *y)
{
  const npu_hal_tensor_desc *out = &k->outputs[0];
  size_t n = cpu_tensor_elements(out);
  size_t channels = p->conv ? (size_t)p->out_channels : p->columns;
  size_t inner = p->conv ? (size_t)(p->out[0] * p->out[1] * p->out[2]) : 1;
  size_t scales = cpu_tensor_elements(&k->inputs[p->at.w_scale]);
  size_t weight_channels = (size_t)p->weight_channels;
  float xs = *(const float *)in[p->at.x_scale], ys = *(const float *)in[p->at.y_scale];
  const float *ws = in[p->at.w_scale];
  const int32_t *bias = p->at.bias < k->input_count && in[p->at.bias] ? in[p->at.bias] : NULL;
  int32_t yz = cpu_q_zero(k, in, p->at.y_zero, 0), lo, hi;
  cpu_q_range(out->dtype, &lo, &hi);
  for (size_t i = 0; i < n; i++) {
    size_t m = i / inner % channels;
    float scale = xs * ws[scales > 1 ? m % weight_channels : 0] / ys;
    int32_t sum = acc[i] + (bias ? bias[m] : 0);
    cpu_q_store(y, i, out->dtype, cpu_q_round((float)sum * scale, yz, lo, hi));
  }
}

static void run_integer(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const integer_params *p = k->params;
  integer_job job = {k, p, in, p->qlinear ? (int32_t *)out[k->output_count] : out[0]};
  if (p->conv)
    npu_cpu_parallel_for(k->device, p->images * (size_t)p->out_channels, conv_plane, &job);
  else
    npu_cpu_parallel_for(k->device, p->batches * p->rows, matmul_row, &job);
  if (p->qlinear)
    requantise(k, p, in, job.acc, out[0]);
}

/* The window on 3 spatial axes (1-D and 2-D ones lead with unit axes). */
static void read_conv(const npu_hal_op *op, integer_params *p)
{
  const npu_hal_tensor_desc *x = &op->inputs[p->at.x], *w = &op->inputs[p->at.w];
  const npu_hal_tensor_desc *y = &op->outputs[0];
  const npu_hal_window *window = op->window;
  uint32_t unit = SPATIAL - window->spatial;
  p->images = (size_t)x->dims[0];
  p->channels = x->dims[1];
  p->out_channels = y->dims[1];
  p->group = window->group;
  p->weight_channels = p->transposed ? w->dims[1] : w->dims[0];
  for (uint32_t d = 0; d < SPATIAL; d++) {
    bool real = d >= unit;
    uint32_t s = d - unit;
    p->in[d] = real ? x->dims[2 + s] : 1;
    p->out[d] = real ? y->dims[2 + s] : 1;
    p->kernel[d] = real ? window->kernel[s] : 1;
    p->stride[d] = real ? window->strides[s] : 1;
    p->dilation[d] = real ? window->dilations[s] : 1;
    p->pad[d] = real ? window->pad_begin[s] : 0;
  }
}

/* The A and B matrices of each output batch (NumPy broadcasting of the
 * batch axes). */
static bool read_matmul(const npu_hal_op *op, integer_params *p)
{
  const npu_hal_tensor_desc *a = &op->inputs[p->at.x], *b = &op->inputs[p->at.w];
  const npu_hal_tensor_desc *y = &op->outputs[0];
  p->rows = (size_t)a->dims[a->rank - 2];
  p->depth = (size_t)a->dims[a->rank - 1];
  p->columns = (size_t)b->dims[b->rank - 1];
  p->weight_channels = (int64_t)p->columns;
  p->batches = 1;
  for (uint32_t d = 0; d + 2 < y->rank; d++)
    p->batches *= (size_t)y->dims[d];
  p->a_offsets = calloc(p->batches + 1, sizeof *p->a_offsets);
  p->b_offsets = calloc(p->batches + 1, sizeof *p->b_offsets);
  if (!p->a_offsets || !p->b_offsets)
    return false;
  for (size_t batch = 0; batch < p->batches; batch++) {
    size_t rest = batch, a_index = 0, b_index = 0, a_stride = 1, b_stride = 1;
    for (uint32_t d = y->rank - 2; d-- > 0;) {
      size_t index = rest % (size_t)y->dims[d];
      rest /= (size_t)y->dims[d];
      int64_t ad = (int64_t)d - (int64_t)(y->rank - a->rank);
      int64_t bd = (int64_t)d - (int64_t)(y->rank - b->rank);
      if (ad >= 0) {
        a_index += a->dims[ad] == 1 ? 0 : index * a_stride;
        a_stride *= (size_t)a->dims[ad];
      }
      if (bd >= 0) {
        b_index += b->dims[bd] == 1 ? 0 : index * b_stride;
        b_stride *= (size_t)b->dims[bd];
      }
    }
    p->a_offsets[batch] = a_index * p->rows * p->depth;
    p->b_offsets[batch] = b_index * p->depth * p->columns;
  }
  return true;
}

static npu_status create_integer(const npu_hal_op *op, npu_hal_kernel *k)
{
  integer_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  k->params = p;
  k->free_params = free_integer;
  p->qlinear = op->op_type[0] == 'Q';
  p->conv = strstr(op->op_type, "Conv") != NULL;
  p->transposed = strstr(op->op_type, "ConvTranspose") != NULL;
  p->at = p->qlinear ? qlinear_layout : integer_layout;
  if (p->conv && !op->window)
    return cpu_unsupported(op, "no resolved window");
  if (p->conv)
    read_conv(op, p);
  else if (!read_matmul(op, p))
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  if (p->qlinear)
    k->workspace_bytes = cpu_tensor_elements(&op->outputs[0]) * sizeof(int32_t);
  k->run = run_integer;
  return NPU_OK;
}

const cpu_kernel_entry cpu_integer_kernels[] = {
    {"ConvInteger", create_integer},
    {"MatMulInteger", create_integer},
    {"QLinearConv", create_integer},
    {"QLinearConvTranspose", create_integer},
    {"QLinearMatMul", create_integer},
    {"QLinearMatMulBias", create_integer},
    {NULL, NULL},
};
