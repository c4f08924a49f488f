/* Quantisation kernels: QuantizeLinear and DequantizeLinear (per tensor or
 * per axis), DynamicQuantizeLinear, and com.microsoft's elementwise
 * quantised operators (QLinearAdd, QLinearMul, QLinearSigmoid,
 * QLinearGlobalAveragePool, QLinearConcat), which compute in float between
 * dequantising their inputs and quantising their output, as ONNX Runtime
 * does (scales and zero points are read at run time), and gst-npu's table
 * lookups of one or two 8-bit inputs (QLinearLookup, QLinearBinaryLookup),
 * whose tables the QDQ rewriting computes, and its softmax of 8-bit values
 * (QLinearSoftmax). */
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "fast_math.h"
#include "quant_kernels.h"

/* ---- QuantizeLinear, DequantizeLinear ---------------------------------------------- */

#define CHUNK 16384 /* elements per parallel task */

typedef struct linear_job {
  const npu_hal_kernel *k;
  void *const *in, *const *out;
  size_t count, inner, channels; /* channels > 1: per-axis parameters, `inner` apart */
} linear_job;

/* 8-bit values are handled as uint8: int8 ones are flipped by 128 (`flip`),
 * their zero points moved by 128 (`zero` here is the moved one). */
NPU_VECTOR_CLONES
static void quantize_run(const float *x, uint8_t *y, size_t n, float scale, int32_t zero,
                         uint8_t flip)
{
  for (size_t i = 0; i < n; i++) {
    float v = x[i] / scale;
    /* beyond any 8-bit range; written so that NaN (x or scale) lands on the
     * low end: converting it to an integer is undefined */
    v = v > -512.0f ? v : -512.0f;
    v = v < 512.0f ? v : 512.0f;
    /* rounded half to even by the 1.5 * 2^23 trick (rintf stops the vectoriser) */
    int32_t q = (int32_t)((v + 12582912.0f) - 12582912.0f) + zero;
    q = q < 0 ? 0 : q > 255 ? 255 : q;
    y[i] = (uint8_t)((uint8_t)q ^ flip);
  }
}

NPU_VECTOR_CLONES
static void dequantize_run(const uint8_t *x, float *y, size_t n, float scale, int32_t zero,
                           uint8_t flip)
{
  for (size_t i = 0; i < n; i++)
    y[i] = (float)((int32_t)(x[i] ^ flip) - zero) * scale;
}

/* One chunk, in runs of elements that share a channel. */
static void linear_chunk(void *data, size_t chunk)
{
  const linear_job *job = data;
  const npu_hal_kernel *k = job->k;
  bool quantize = k->outputs[0].dtype != NPU_DTYPE_FLOAT32;
  npu_dtype qtype = quantize ? k->outputs[0].dtype : k->inputs[0].dtype;
  int32_t shift = qtype == NPU_DTYPE_INT8 ? 128 : 0;
  const float *scales = job->in[1];
  size_t end = (chunk + 1) * CHUNK < job->count ? (chunk + 1) * CHUNK : job->count;
  for (size_t i = chunk * CHUNK; i < end;) {
    size_t channel = job->channels > 1 ? i / job->inner % job->channels : 0;
    size_t run_end = job->channels > 1 ? (i / job->inner + 1) * job->inner : end;
    run_end = run_end < end ? run_end : end;
    int32_t zero = cpu_q_zero(k, job->in, 2, channel) + shift;
    float *y = job->out[0];
    if (quantize)
      quantize_run((const float *)job->in[0] + i, (uint8_t *)job->out[0] + i, run_end - i,
                   scales[channel], zero, (uint8_t)shift);
    else if (qtype != NPU_DTYPE_INT32)
      dequantize_run((const uint8_t *)job->in[0] + i, y + i, run_end - i, scales[channel],
                     zero, (uint8_t)shift);
    else
      for (; i < run_end; i++) /* (int32: a bias) */
        y[i] = (float)(cpu_q_load(job->in[0], i, qtype) - zero) * scales[channel];
    i = run_end;
  }
}

/* Elements apart, in memory, of consecutive indices of `axis` of `t`
 * (plain, or channels-last: N, spatial axes, C). */
static size_t memory_stride(const npu_hal_tensor_desc *t, uint32_t axis)
{
  size_t stride = 1;
  bool last = t->layout == NPU_HAL_LAYOUT_CHANNELS_LAST;
  for (uint32_t d = axis + 1; d < t->rank; d++)
    stride *= (size_t)t->dims[d];
  if (last && axis == 1)
    return 1;
  if (last && axis >= 2)
    stride *= (size_t)t->dims[1];
  return stride;
}

enum { TILE = 64 }; /* pixels per task of a dequantisation between layouts */

/* DequantizeLinear from channels-last 8-bit values into a plain float
 * tensor, or from plain into channels-last: per batch item, tiles of TILE
 * pixels, each channel's run of them contiguous on the plain side. */
typedef struct relayout_job {
  const npu_hal_kernel *k;
  void *const *in, *const *out;
  size_t channels, pixels, tiles;
  size_t params, axis, axis_size, axis_stride; /* axis_stride: pixels apart (axis >= 2) */
} relayout_job;

static void relayout_tile(void *data, size_t task)
{
  const relayout_job *job = data;
  const npu_hal_kernel *k = job->k;
  bool from_last = k->inputs[0].layout == NPU_HAL_LAYOUT_CHANNELS_LAST;
  int32_t shift = k->inputs[0].dtype == NPU_DTYPE_INT8 ? 128 : 0;
  const float *scales = job->in[1];
  const uint8_t *x = job->in[0];
  float *y = job->out[0];
  size_t n = task / job->tiles, first = task % job->tiles * TILE;
  size_t end = first + TILE < job->pixels ? first + TILE : job->pixels;
  size_t image = n * job->channels * job->pixels;
  bool per_pixel = job->params > 1 && job->axis >= 2; /* (else one per run of pixels) */
  for (size_t c = 0; c < job->channels; c++) {
    size_t param = job->params == 1 ? 0 : job->axis == 0 ? n : c;
    float scale = scales[param];
    int32_t zero = cpu_q_zero(k, job->in, 2, param) + shift;
    for (size_t p = first; p < end; p++) {
      size_t plain = image + c * job->pixels + p, last = image + p * job->channels + c;
      if (per_pixel) {
        param = p / job->axis_stride % job->axis_size;
        scale = scales[param];
        zero = cpu_q_zero(k, job->in, 2, param) + shift;
      }
      uint8_t v = x[from_last ? last : plain] ^ (uint8_t)shift;
      y[from_last ? plain : last] = (float)((int32_t)v - zero) * scale;
    }
  }
}

static void run_linear(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const npu_hal_tensor_desc *x = &k->inputs[0], *y = &k->outputs[0];
  size_t params = cpu_tensor_elements(&k->inputs[1]);
  uint32_t axis = params > 1 ? (uint32_t)*(const int64_t *)k->params : 0;
  if (!npu_hal_same_layout(x, y)) {
    relayout_job job = {k, in, out, (size_t)x->dims[1], 1, 0, params, axis,
                        (size_t)x->dims[axis], 1};
    for (uint32_t d = 2; d < x->rank; d++)
      job.pixels *= (size_t)x->dims[d];
    for (uint32_t d = axis + 1; axis >= 2 && d < x->rank; d++)
      job.axis_stride *= (size_t)x->dims[d];
    job.tiles = (job.pixels + TILE - 1) / TILE;
    npu_cpu_parallel_for(k->device, (size_t)x->dims[0] * job.tiles, relayout_tile, &job);
    return;
  }
  linear_job job = {k, in, out, cpu_tensor_elements(x), params > 1 ? memory_stride(x, axis) : 1,
                    params};
  npu_cpu_parallel_for(k->device, (job.count + CHUNK - 1) / CHUNK, linear_chunk, &job);
}

static npu_status create_linear(const npu_hal_op *op, npu_hal_kernel *k)
{
  int64_t *axis = malloc(sizeof *axis);
  if (!axis)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  *axis = op->attributes.get_int(op->attributes.node, "axis", 1); /* (checked in range) */
  if (*axis < 0)
    *axis += op->inputs[0].rank;
  k->params = axis;
  k->run = run_linear;
  return NPU_OK;
}

/* ---- DynamicQuantizeLinear ---------------------------------------------------------- */

/* uint8 with a scale covering [min(x, 0), max(x, 0)] and a zero point that
 * stands for 0 exactly. */
static void run_dynamic(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const float *x = in[0];
  size_t n = cpu_tensor_elements(&k->inputs[0]);
  float low = 0, high = 0;
  for (size_t i = 0; i < n; i++) {
    low = x[i] < low ? x[i] : low;
    high = x[i] > high ? x[i] : high;
  }
  float scale = (high - low) / 255.0f;
  float zero = scale > 0 ? rintf(fminf(fmaxf(-low / scale, 0.0f), 255.0f)) : 0.0f;
  *(float *)out[1] = scale;
  *(uint8_t *)out[2] = (uint8_t)zero;
  uint8_t *y = out[0];
  for (size_t i = 0; i < n; i++)
    y[i] = scale > 0 ? (uint8_t)cpu_q_round(x[i] / scale, (int32_t)zero, 0, 255) : (uint8_t)zero;
}

static npu_status create_dynamic(const npu_hal_op *op, npu_hal_kernel *k)
{
  (void)op;
  k->run = run_dynamic;
  return NPU_OK;
}

/* ---- QLinearAdd, QLinearMul ----------------------------------------------------------- */

/* Element strides of two inputs A, B and the output Y along the output's
 * axes (0 along broadcast axes), and their offsets at the current index. */
typedef struct broadcast_params {
  int64_t strides[3][NPU_MAX_RANK];
} broadcast_params;

/* The next output index of `y` odometer-wise, moving the offsets of A, B
 * and Y (`at`) along. */
static void next_broadcast_index(const npu_hal_tensor_desc *y, const broadcast_params *p,
                                 int64_t *index, int64_t at[3])
{
  for (uint32_t d = y->rank; d-- > 0;) {
    for (int t = 0; t < 3; t++)
      at[t] += p->strides[t][d];
    if (++index[d] < y->dims[d])
      return;
    for (int t = 0; t < 3; t++)
      at[t] -= p->strides[t][d] * y->dims[d];
    index[d] = 0;
  }
}

/* cpu_broadcast_strides in t's layout: plain, or channels-last (of the
 * output's rank: channels innermost, then the last spatial axis...). */
static void layout_strides(const npu_hal_tensor_desc *t, uint32_t rank, int64_t *strides)
{
  cpu_broadcast_strides(t, rank, strides);
  if (t->layout != NPU_HAL_LAYOUT_CHANNELS_LAST)
    return;
  int64_t step = t->dims[1];
  for (uint32_t d = t->rank; d-- > 0;) {
    if (d == 1)
      continue;
    strides[d] = t->dims[d] == 1 ? 0 : step;
    step *= t->dims[d];
  }
  strides[1] = t->dims[1] == 1 ? 0 : 1;
}

/* QLinearAdd and QLinearMul of three tensors of one 8-bit type: the
 * reference's float arithmetic, vectorised along the output's rows (its
 * last axis), which each input has whole or as one value (NumPy's
 * broadcasting of plain tensors: a bias per column, one value), any
 * broadcast of the other axes by each row's offsets; three tensors of one
 * shape are one flat run, in any one layout. int8 is read as uint8 less 128
 * (its zero points moved by 128) and written back flipped. */
typedef struct binary_consts {
  float as, bs, ys;
  int32_t az, bz, yz;
  uint8_t flip;
  bool multiply;
} binary_consts;

typedef struct binary_job {
  const uint8_t *a, *b;
  uint8_t *y;
  const npu_hal_tensor_desc *out;
  const broadcast_params *p;
  bool flat;               /* one shape: CHUNK elements a task */
  size_t count;            /* elements (flat) or rows */
  size_t length, per_task; /* a row's elements, rows a task */
  binary_consts c;
} binary_job;

static inline uint8_t combine(uint8_t a, uint8_t b, binary_consts c)
{
  float va = (float)((int32_t)(a ^ c.flip) - c.az) * c.as;
  float vb = (float)((int32_t)(b ^ c.flip) - c.bz) * c.bs;
  float v = (c.multiply ? va * vb : va + vb) / c.ys;
  /* beyond any 8-bit range; written so that NaN (x or scale) lands on the
   * low end: converting it to an integer is undefined */
  v = v > -512.0f ? v : -512.0f;
  v = v < 512.0f ? v : 512.0f;
  /* rounded half to even by the 1.5 * 2^23 trick (rintf stops the vectoriser) */
  int32_t q = (int32_t)((v + 12582912.0f) - 12582912.0f) + c.yz;
  q = q < 0 ? 0 : q > 255 ? 255 : q;
  return (uint8_t)((uint8_t)q ^ c.flip);
}

/* `n` outputs from rows of A and B, each whole or one value. */
NPU_VECTOR_CLONES
static void binary_row(const uint8_t *a, bool a_whole, const uint8_t *b, bool b_whole,
                       uint8_t *y, size_t n, binary_consts c)
{
  if (a_whole && b_whole) {
    for (size_t i = 0; i < n; i++)
      y[i] = combine(a[i], b[i], c);
  } else if (a_whole) {
    uint8_t one = b[0];
    for (size_t i = 0; i < n; i++)
      y[i] = combine(a[i], one, c);
  } else if (b_whole) {
    uint8_t one = a[0];
    for (size_t i = 0; i < n; i++)
      y[i] = combine(one, b[i], c);
  } else {
    memset(y, combine(a[0], b[0], c), n);
  }
}

static void binary_task(void *data, size_t task)
{
  const binary_job *j = data;
  if (j->flat) {
    size_t at = task * CHUNK, n = at + CHUNK < j->count ? CHUNK : j->count - at;
    binary_row(j->a + at, true, j->b + at, true, j->y + at, n, j->c);
    return;
  }
  const npu_hal_tensor_desc *y = j->out;
  uint32_t last = y->rank - 1;
  size_t end = (task + 1) * j->per_task < j->count ? (task + 1) * j->per_task : j->count;
  for (size_t row = task * j->per_task; row < end; row++) {
    size_t rest = row;
    int64_t at_a = 0, at_b = 0;
    for (uint32_t d = last; d-- > 0;) {
      int64_t index = (int64_t)(rest % (size_t)y->dims[d]);
      rest /= (size_t)y->dims[d];
      at_a += index * j->p->strides[0][d];
      at_b += index * j->p->strides[1][d];
    }
    binary_row(j->a + at_a, j->p->strides[0][last] != 0, j->b + at_b,
               j->p->strides[1][last] != 0, j->y + row * j->length, j->length, j->c);
  }
}

static bool same_shape(const npu_hal_tensor_desc *t, const npu_hal_tensor_desc *y)
{
  return t->rank == y->rank && !memcmp(t->dims, y->dims, y->rank * sizeof y->dims[0]);
}

/* Whether binary_task takes the op: one 8-bit type, and one shape or
 * plain tensors. */
static bool vectorised_binary(const npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *a = &k->inputs[0], *b = &k->inputs[3], *y = &k->outputs[0];
  return cpu_q_is_8bit(y->dtype) && a->dtype == y->dtype && b->dtype == y->dtype &&
         y->rank >= 1 && ((same_shape(a, y) && same_shape(b, y)) ||
                          (!a->layout && !b->layout && !y->layout));
}

static void run_vectorised_binary(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const npu_hal_tensor_desc *y = &k->outputs[0];
  int32_t shift = y->dtype == NPU_DTYPE_INT8 ? 128 : 0;
  binary_job job = {.a = in[0], .b = in[3], .y = out[0], .out = y, .p = k->params,
                    .c = {*(const float *)in[1], *(const float *)in[4], *(const float *)in[6],
                          cpu_q_zero(k, in, 2, 0) + shift, cpu_q_zero(k, in, 5, 0) + shift,
                          cpu_q_zero(k, in, 7, 0) + shift, (uint8_t)shift,
                          strcmp(k->op_type, "QLinearMul") == 0}};
  size_t n = cpu_tensor_elements(y), tasks;
  job.flat = same_shape(&k->inputs[0], y) && same_shape(&k->inputs[3], y);
  if (job.flat) {
    job.count = n;
    tasks = (n + CHUNK - 1) / CHUNK;
  } else {
    job.length = (size_t)y->dims[y->rank - 1];
    job.count = job.length ? n / job.length : 0;
    job.per_task = job.length && job.length < CHUNK ? CHUNK / job.length : 1; /* (0: no rows) */
    tasks = (job.count + job.per_task - 1) / job.per_task;
  }
  npu_cpu_parallel_for(k->device, tasks, binary_task, &job);
}

static void run_qlinear_binary(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const broadcast_params *p = k->params;
  const npu_hal_tensor_desc *y = &k->outputs[0];
  bool multiply = strcmp(k->op_type, "QLinearMul") == 0;
  float as = *(const float *)in[1], bs = *(const float *)in[4], ys = *(const float *)in[6];
  int32_t az = cpu_q_zero(k, in, 2, 0), bz = cpu_q_zero(k, in, 5, 0), yz = cpu_q_zero(k, in, 7, 0);
  int32_t lo, hi;
  cpu_q_range(y->dtype, &lo, &hi);
  size_t n = cpu_tensor_elements(y);
  int64_t index[NPU_MAX_RANK] = {0}, at[3] = {0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    float va = (float)(cpu_q_load(in[0], (size_t)at[0], k->inputs[0].dtype) - az) * as;
    float vb = (float)(cpu_q_load(in[3], (size_t)at[1], k->inputs[3].dtype) - bz) * bs;
    cpu_q_store(out[0], i, y->dtype, cpu_q_round((multiply ? va * vb : va + vb) / ys, yz, lo, hi));
    next_broadcast_index(y, p, index, at);
  }
}

static npu_status create_qlinear_binary(const npu_hal_op *op, npu_hal_kernel *k)
{
  broadcast_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  cpu_broadcast_strides(&op->inputs[0], op->outputs[0].rank, p->strides[0]);
  cpu_broadcast_strides(&op->inputs[3], op->outputs[0].rank, p->strides[1]);
  k->params = p;
  k->run = vectorised_binary(k) ? run_vectorised_binary : run_qlinear_binary;
  return NPU_OK;
}

/* ---- QLinearSigmoid, QLinearGlobalAveragePool ------------------------------------------ */

/* A 256-entry table: the sigmoid of every input value, quantised. */
static void run_qlinear_sigmoid(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  npu_dtype xt = k->inputs[0].dtype, yt = k->outputs[0].dtype;
  float xs = *(const float *)in[1], ys = *(const float *)in[3];
  int32_t xz = cpu_q_zero(k, in, 2, 0), yz = cpu_q_zero(k, in, 4, 0), lo, hi;
  cpu_q_range(yt, &lo, &hi);
  uint8_t table[256];
  for (int v = 0; v < 256; v++) {
    int32_t q = xt == NPU_DTYPE_INT8 ? (int8_t)v : v;
    float x = (float)(q - xz) * xs;
    cpu_q_store(table, (size_t)v, yt, cpu_q_round(1.0f / (1.0f + expf(-x)) / ys, yz, lo, hi));
  }
  const uint8_t *x = in[0];
  uint8_t *y = out[0];
  size_t n = cpu_tensor_elements(&k->inputs[0]);
  for (size_t i = 0; i < n; i++)
    y[i] = table[x[i]];
}

enum { SUMMED_CHANNELS = 256 }; /* channels summed at a time */

/* Sums of the 8-bit values of `channels` (at most SUMMED_CHANNELS) channels
 * over `area` pixels a row of `stride` apart (channels innermost). int32:
 * exact below 2^23 pixels. */
NPU_VECTOR_CLONES
static void sum_channels_last(const uint8_t *x, bool is_signed, size_t area, size_t stride,
                              size_t channels, int32_t *sums)
{
  for (size_t c = 0; c < channels; c++)
    sums[c] = 0;
  for (size_t s = 0; s < area; s++) {
    const uint8_t *row = x + s * stride;
    if (is_signed)
      for (size_t c = 0; c < channels; c++)
        sums[c] += (int8_t)row[c];
    else
      for (size_t c = 0; c < channels; c++)
        sums[c] += row[c];
  }
}

static void run_qlinear_average(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const npu_hal_tensor_desc *x = &k->inputs[0];
  bool channels_last = *(const bool *)k->params;
  size_t images = (size_t)x->dims[0];
  size_t channels = (size_t)(x->layout == NPU_HAL_LAYOUT_CHANNELS_LAST || !channels_last
                                 ? x->dims[1]
                                 : x->dims[x->rank - 1]);
  size_t planes = images * channels;
  size_t area = planes ? cpu_tensor_elements(x) / planes : 0;
  bool summed = channels_last && area < (1u << 23);
  float scale = *(const float *)in[1] / *(const float *)in[3];
  int32_t xz = cpu_q_zero(k, in, 2, 0), yz = cpu_q_zero(k, in, 4, 0), lo, hi;
  cpu_q_range(k->outputs[0].dtype, &lo, &hi);
  int32_t sums[SUMMED_CHANNELS];
  for (size_t image = 0; image < images; image++)
    for (size_t c = 0; c < channels; c++) {
      int64_t sum = 0;
      if (summed && c % SUMMED_CHANNELS == 0)
        sum_channels_last((const uint8_t *)in[0] + image * area * channels + c,
                          x->dtype == NPU_DTYPE_INT8, area, channels,
                          channels - c < SUMMED_CHANNELS ? channels - c : SUMMED_CHANNELS, sums);
      if (summed)
        sum = sums[c % SUMMED_CHANNELS] - (int64_t)xz * (int64_t)area;
      for (size_t s = 0; !summed && s < area; s++) {
        size_t i = channels_last ? (image * area + s) * channels + c
                                 : (image * channels + c) * area + s;
        sum += cpu_q_load(in[0], i, x->dtype) - xz;
      }
      cpu_q_store(out[0], image * channels + c, k->outputs[0].dtype,
                  cpu_q_round((float)sum / (float)area * scale, yz, lo, hi));
    }
}

static npu_status create_qlinear_unary(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (strcmp(op->op_type, "QLinearSigmoid") == 0) {
    k->run = run_qlinear_sigmoid;
    return NPU_OK;
  }
  const npu_hal_tensor_desc *x = &op->inputs[0];
  bool relaid = x->layout == NPU_HAL_LAYOUT_CHANNELS_LAST;
  bool nhwc = op->attributes.get_int(op->attributes.node, "channels_last", 0) != 0;
  if (x->layout != NPU_HAL_LAYOUT_PLAIN && (!relaid || nhwc))
    return cpu_unsupported(op, "takes plain NCHW or NHWC, or channels-last NCHW tensors");
  bool *channels_last = malloc(sizeof *channels_last);
  if (!channels_last)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  /* (channels innermost: the attribute says so, or the planned layout) */
  *channels_last = relaid || nhwc;
  k->params = channels_last;
  k->run = run_qlinear_average;
  return NPU_OK;
}

/* ---- QLinearSoftmax (gst-npu's: see qdq_rewrite.c) ----------------------------------- */

/* Softmax along the last axis of 8-bit values, the reference's float
 * arithmetic between its DequantizeLinear and QuantizeLinear: e^(x - max)
 * (x_scale * (q - q_max): the zero point cancels) over the row's sum,
 * quantised. Three vectorised passes over each row (the largest value, the
 * sum, the outputs with e^ again), nothing written in float. int8 is read
 * and written as uint8 less 128 (`x_flip`, `y_flip`; y's zero point moved). */
typedef struct softmax_job {
  const uint8_t *x;
  uint8_t *y;
  size_t rows, length, per_task;
  float xs, ys;
  int32_t yz;
  uint8_t x_flip, y_flip;
} softmax_job;

/* Independent partial sums of the row's exponentials. */
enum { SUM_LANES = 16 };

NPU_VECTOR_CLONES
static void quantized_softmax_row(const uint8_t *x, uint8_t *y, size_t n, const softmax_job *j)
{
  float xs = j->xs, ys = j->ys;
  int32_t yz = j->yz;
  uint8_t x_flip = j->x_flip, y_flip = j->y_flip, top = 0;
  for (size_t i = 0; i < n; i++)
    top = (uint8_t)(x[i] ^ x_flip) > top ? (uint8_t)(x[i] ^ x_flip) : top;
  float lanes[SUM_LANES] = {0};
  size_t i = 0;
  for (; i + SUM_LANES <= n; i += SUM_LANES)
    for (size_t l = 0; l < SUM_LANES; l++)
      lanes[l] += cpu_expf((float)((int32_t)(x[i + l] ^ x_flip) - top) * xs);
  for (; i < n; i++)
    lanes[0] += cpu_expf((float)((int32_t)(x[i] ^ x_flip) - top) * xs);
  float sum = 0;
  for (size_t l = 0; l < SUM_LANES; l++)
    sum += lanes[l];
  for (i = 0; i < n; i++) {
    float v = cpu_expf((float)((int32_t)(x[i] ^ x_flip) - top) * xs) / sum / ys;
    v = v < 512.0f ? v : 512.0f; /* (in [0, 1] / ys; NaN lands low) */
    v = v > -512.0f ? v : -512.0f;
    int32_t q = (int32_t)((v + 12582912.0f) - 12582912.0f) + yz;
    q = q < 0 ? 0 : q > 255 ? 255 : q;
    y[i] = (uint8_t)((uint8_t)q ^ y_flip);
  }
}

static void softmax_task(void *data, size_t task)
{
  const softmax_job *j = data;
  size_t end = (task + 1) * j->per_task < j->rows ? (task + 1) * j->per_task : j->rows;
  for (size_t row = task * j->per_task; row < end; row++)
    quantized_softmax_row(j->x + row * j->length, j->y + row * j->length, j->length, j);
}

static void run_qlinear_softmax(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const npu_hal_tensor_desc *x = &k->inputs[0], *y = &k->outputs[0];
  uint8_t y_flip = y->dtype == NPU_DTYPE_INT8 ? 128 : 0;
  softmax_job job = {in[0], out[0], 0, (size_t)x->dims[x->rank - 1], 0,
                     *(const float *)in[1], *(const float *)in[3],
                     cpu_q_zero(k, in, 4, 0) + y_flip,
                     (uint8_t)(x->dtype == NPU_DTYPE_INT8 ? 128 : 0), y_flip};
  job.rows = job.length ? cpu_tensor_elements(x) / job.length : 0;
  job.per_task = job.length && job.length < CHUNK ? CHUNK / job.length : 1; /* (0: no rows) */
  npu_cpu_parallel_for(k->device, (job.rows + job.per_task - 1) / job.per_task, softmax_task,
                       &job);
}

/* Along the last axis only (the rewriting's condition), plain tensors. */
static npu_status create_qlinear_softmax(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  int64_t axis = op->attributes.get_int(op->attributes.node, "axis", -1);
  if (x->rank < 1 || (axis != -1 && axis != (int64_t)x->rank - 1) || x->layout ||
      op->outputs[0].layout)
    return cpu_unsupported(op, "softmax of plain tensors along their last axis only");
  k->run = run_qlinear_softmax;
  return NPU_OK;
}

/* ---- QLinearLookup (gst-npu's: see qdq_rewrite.c) ------------------------------------ */

typedef struct lookup_job {
  const uint8_t *x, *table;
  uint8_t *y;
  size_t count;
} lookup_job;

#if defined(__x86_64__)
/* 64 lookups at a time where the CPU has AVX-512 VBMI: each half of the
 * table (128 bytes) is one two-register byte permutation, the index's top
 * bit picks the half. Returns how many it did. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static size_t
lookup_vbmi(const uint8_t *x, const uint8_t *table, uint8_t *y, size_t n)
{
  __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i index = _mm512_loadu_si512(x + i);
    __m512i low = _mm512_permutex2var_epi8(t0, index, t1);
    __m512i high = _mm512_permutex2var_epi8(t2, index, t3);
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high));
  }
  return i;
}

static bool has_vbmi(void)
{
  static int known = -1; /* (a benign race: every thread finds the same) */
  if (known < 0)
    known = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  return known;
}
#endif

/* y[i] = table[x[i]] for n bytes. */
static void lookup_bytes(const uint8_t *x, const uint8_t *table, uint8_t *y, size_t n)
{
  size_t start = 0;
#if defined(__x86_64__)
  if (has_vbmi())
    start = lookup_vbmi(x, table, y, n);
#endif
  for (size_t i = start; i < n; i++)
    y[i] = table[x[i]];
}

static void lookup_chunk(void *data, size_t chunk)
{
  const lookup_job *j = data;
  size_t start = chunk * CHUNK;
  size_t end = (chunk + 1) * CHUNK < j->count ? (chunk + 1) * CHUNK : j->count;
  lookup_bytes(j->x + start, j->table, j->y + start, end - start);
}

/* Every element through the table (input 5), indexed by its byte: one
 * flat pass, in any layout. */
static void run_qlinear_lookup(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  lookup_job job = {in[0], k->params, out[0], cpu_tensor_elements(&k->outputs[0])};
  npu_cpu_parallel_for(k->device, (job.count + CHUNK - 1) / CHUNK, lookup_chunk, &job);
}

static npu_status create_qlinear_lookup(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *table = &op->inputs[5];
  if (!op->input_values[5] || cpu_tensor_elements(table) != 256 ||
      table->dtype != op->outputs[0].dtype)
    return cpu_unsupported(op, "the table must be 256 constant values of the output's type");
  uint8_t *copy = malloc(256);
  if (!copy)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  memcpy(copy, op->input_values[5], 256);
  k->params = copy;
  k->run = run_qlinear_lookup;
  return NPU_OK;
}

/* ---- QLinearBinaryLookup (gst-npu's: see qdq_rewrite.c) ------------------------------ */

/* How the two inputs meet: one, the full one, has the output's shape and
 * layout, and the other is ... */
typedef enum pair_kind {
  PAIR_SAME,         /* of that shape and layout too: element i with element i */
  PAIR_ONE,          /* one value: one 256-entry row of the table */
  PAIR_CHANNEL,      /* one per channel (N or 1, C, 1...), plain: a row per plane */
  PAIR_CHANNEL_LAST, /* the same, channels-last: a row per channel of each pixel */
  PAIR_GENERAL,      /* (or neither is full) any broadcast: strides */
} pair_kind;

typedef struct pair_params {
  uint8_t *table; /* 65536: other * 256 + full (GENERAL: B * 256 + A) */
  pair_kind kind;
  uint32_t full;  /* its input: 0 (A) or 3 (B) */
  size_t images, channels, area;
  bool other_per_image; /* the other's dims[0] is the output's (else 1) */
  broadcast_params strides; /* GENERAL */
} pair_params;

typedef struct pair_job {
  const pair_params *p;
  const uint8_t *full, *other;
  uint8_t *y;
  size_t count, rows_per_task;
} pair_job;

static void free_pair(void *data)
{
  pair_params *p = data;
  if (p)
    free(p->table);
  free(p);
}

/* Task `task`: CHUNK elements (SAME, ONE), planes (CHANNEL) or pixels
 * (CHANNEL_LAST), `rows_per_task` of them. */
static void pair_chunk(void *data, size_t task)
{
  const pair_job *j = data;
  const pair_params *p = j->p;
  const uint8_t *table = p->table, *a = j->full, *b = j->other;
  uint8_t *y = j->y;
  size_t start = task * j->rows_per_task;
  size_t end = start + j->rows_per_task < j->count ? start + j->rows_per_task : j->count;
  switch (p->kind) {
  case PAIR_SAME:
    for (size_t i = start; i < end; i++)
      y[i] = table[(size_t)b[i] << 8 | a[i]];
    break;
  case PAIR_ONE:
    lookup_bytes(a + start, table + ((size_t)b[0] << 8), y + start, end - start);
    break;
  case PAIR_CHANNEL: /* plane = image * channels + channel */
    for (size_t plane = start; plane < end; plane++) {
      size_t channel = plane % p->channels, image = plane / p->channels;
      size_t value = b[(p->other_per_image ? image : 0) * p->channels + channel];
      lookup_bytes(a + plane * p->area, table + (value << 8), y + plane * p->area, p->area);
    }
    break;
  case PAIR_CHANNEL_LAST: /* pixel = image * area + position */
    for (size_t pixel = start; pixel < end; pixel++) {
      const uint8_t *values = b + (p->other_per_image ? pixel / p->area : 0) * p->channels;
      const uint8_t *in = a + pixel * p->channels;
      uint8_t *o = y + pixel * p->channels;
      for (size_t c = 0; c < p->channels; c++)
        o[c] = table[(size_t)values[c] << 8 | in[c]];
    }
    break;
  case PAIR_GENERAL:
    break; /* (run_pair_general) */
  }
}

/* Any broadcast, plain or channels-last tensors: the output's index
 * odometer-wise. */
static void run_pair_general(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const pair_params *p = k->params;
  const npu_hal_tensor_desc *y = &k->outputs[0];
  const uint8_t *a = in[0], *b = in[3];
  uint8_t *o = out[0];
  size_t n = cpu_tensor_elements(y);
  int64_t index[NPU_MAX_RANK] = {0}, at[3] = {0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    o[at[2]] = p->table[(size_t)b[at[1]] << 8 | a[at[0]]];
    next_broadcast_index(y, &p->strides, index, at);
  }
}

static void run_qlinear_binary_lookup(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const pair_params *p = k->params;
  pair_job job = {p, in[p->full], in[3 - p->full], out[0], cpu_tensor_elements(&k->outputs[0]),
                  CHUNK};
  if (p->kind == PAIR_CHANNEL) {
    job.count = p->images * p->channels;
    job.rows_per_task = p->area >= CHUNK ? 1 : CHUNK / p->area;
  } else if (p->kind == PAIR_CHANNEL_LAST) {
    job.count = p->images * p->area;
    job.rows_per_task = p->channels >= CHUNK ? 1 : CHUNK / p->channels;
  }
  npu_cpu_parallel_for(k->device, (job.count + job.rows_per_task - 1) / job.rows_per_task,
                       pair_chunk, &job);
}

static bool has_dims(const npu_hal_tensor_desc *t, const npu_hal_tensor_desc *y)
{
  return t->rank == y->rank && !memcmp(t->dims, y->dims, y->rank * sizeof y->dims[0]) &&
         npu_hal_same_layout(t, y);
}

/* How the other input meets the full one (of the output's shape). */
static pair_kind pair_kind_of(const npu_hal_tensor_desc *other, const npu_hal_tensor_desc *y,
                              pair_params *p)
{
  size_t count = cpu_tensor_elements(y), other_count = cpu_tensor_elements(other);
  if (other_count == 1)
    return PAIR_ONE;
  if (has_dims(other, y))
    return PAIR_SAME;
  bool channels_last = y->layout == NPU_HAL_LAYOUT_CHANNELS_LAST;
  if (y->rank < 3 || other->rank != y->rank || other->dims[1] != y->dims[1] ||
      (y->layout != NPU_HAL_LAYOUT_PLAIN && !channels_last) ||
      other_count != (size_t)other->dims[0] * (size_t)other->dims[1] ||
      (other->dims[0] != 1 && other->dims[0] != y->dims[0]))
    return PAIR_GENERAL;
  p->images = (size_t)y->dims[0];
  p->channels = (size_t)y->dims[1];
  p->area = p->images && p->channels ? count / (p->images * p->channels) : 0;
  p->other_per_image = other->dims[0] > 1;
  return channels_last ? PAIR_CHANNEL_LAST : PAIR_CHANNEL;
}

static npu_status create_qlinear_binary_lookup(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *y = &op->outputs[0], *table = &op->inputs[8];
  if (!op->input_values[8] || cpu_tensor_elements(table) != 65536 || table->dtype != y->dtype)
    return cpu_unsupported(op, "the table must be 65536 constant values of the output's type");
  pair_params *p = calloc(1, sizeof *p);
  if (p)
    p->table = malloc(65536);
  if (!p || !p->table) {
    free_pair(p);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  }
  k->params = p;
  k->free_params = free_pair;
  k->run = run_qlinear_binary_lookup;
  p->full = has_dims(&op->inputs[0], y) ? 0 : has_dims(&op->inputs[3], y) ? 3 : NPU_MAX_RANK;
  p->kind = p->full == NPU_MAX_RANK ? PAIR_GENERAL
                                    : pair_kind_of(&op->inputs[3 - p->full], y, p);
  const uint8_t *values = op->input_values[8];
  for (size_t i = 0; i < 65536; i++) /* (B full: the other is A, the table transposed) */
    p->table[i] = p->full == 3 && p->kind != PAIR_GENERAL ? values[(i & 255) << 8 | i >> 8]
                                                          : values[i];
  if (p->kind != PAIR_GENERAL)
    return NPU_OK;
  const npu_hal_tensor_desc *tensors[3] = {&op->inputs[0], &op->inputs[3], y};
  for (int t = 0; t < 3; t++) {
    if (tensors[t]->layout != NPU_HAL_LAYOUT_PLAIN &&
        (tensors[t]->layout != NPU_HAL_LAYOUT_CHANNELS_LAST || tensors[t]->rank != y->rank))
      return cpu_unsupported(op, "takes plain or channels-last tensors");
    layout_strides(tensors[t], y->rank, p->strides.strides[t]);
  }
  k->run = run_pair_general;
  return NPU_OK;
}

/* ---- QLinearConcat ------------------------------------------------------------------- */

typedef struct concat_params {
  npu_dtype dtype;        /* of every X and of Y */
  size_t outer;           /* the product of the axes before the concatenation axis */
  size_t inputs;          /* X count */
  size_t *rows;           /* per X: its extent along the axis times the axes after */
  size_t out_row;         /* the same for Y */
} concat_params;

static void free_concat(void *data)
{
  concat_params *p = data;
  if (p)
    free(p->rows);
  free(p);
}

/* Each input into its slice of every outer row: copied where it has the
 * output's scale and zero point, else through a table of the requantised
 * value of each of its 256 (computed as the reference does, per run: the
 * parameters are read at run time). */
static void run_qlinear_concat(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const concat_params *p = k->params;
  float ys = *(const float *)in[0];
  int32_t yz = cpu_q_load(in[1], 0, p->dtype), lo, hi;
  cpu_q_range(p->dtype, &lo, &hi);
  uint8_t *y = out[0];
  size_t offset = 0;
  for (size_t x = 0; x < p->inputs; x++) {
    const uint8_t *data = in[2 + 3 * x];
    float xs = *(const float *)in[3 + 3 * x];
    int32_t xz = in[4 + 3 * x] ? cpu_q_load(in[4 + 3 * x], 0, p->dtype) : 0;
    size_t row = p->rows[x];
    if (xs == ys && xz == yz) {
      for (size_t o = 0; o < p->outer; o++)
        memcpy(y + o * p->out_row + offset, data + o * row, row);
    } else {
      uint8_t table[256];
      float scale = xs / ys;
      for (int v = 0; v < 256; v++) {
        int32_t q = p->dtype == NPU_DTYPE_INT8 ? (int8_t)v : v;
        cpu_q_store(table, (size_t)v, p->dtype,
                    cpu_q_round((float)(q - xz) * scale, yz, lo, hi));
      }
      for (size_t o = 0; o < p->outer; o++)
        for (size_t i = 0; i < row; i++)
          y[o * p->out_row + offset + i] = table[data[o * row + i]];
    }
    offset += row;
  }
}

/* Rows of a concatenation along `axis` of tensor `t`: the product of the
 * axes before it (outer) and of it and those after (returned). Channels-last
 * along the channels: every pixel is an outer row of the channels. */
static size_t concat_rows(const npu_hal_tensor_desc *t, int64_t axis, size_t *outer)
{
  size_t all = cpu_tensor_elements(t);
  size_t before = 1;
  if (t->layout == NPU_HAL_LAYOUT_CHANNELS_LAST)
    before = t->dims[1] ? all / (size_t)t->dims[1] : 0;
  else
    for (int64_t d = 0; d < axis; d++)
      before *= (size_t)t->dims[d];
  *outer = before;
  return before ? all / before : 0;
}

static npu_status create_qlinear_concat(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *y = &op->outputs[0];
  int64_t axis = op->attributes.get_int(op->attributes.node, "axis", 0);
  axis += axis < 0 ? y->rank : 0; /* (in range: shape inference checked) */
  concat_params *p = calloc(1, sizeof *p);
  if (p)
    p->rows = calloc(op->input_count / 3 + 1, sizeof *p->rows);
  if (!p || !p->rows) {
    free_concat(p);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  }
  p->dtype = y->dtype;
  p->inputs = (op->input_count - 2) / 3;
  p->out_row = concat_rows(y, axis, &p->outer);
  for (size_t x = 0; x < p->inputs; x++) {
    size_t outer;
    p->rows[x] = concat_rows(&op->inputs[2 + 3 * x], axis, &outer);
  }
  k->params = p;
  k->free_params = free_concat;
  k->run = run_qlinear_concat;
  return NPU_OK;
}

const cpu_kernel_entry cpu_quantize_kernels[] = {
    {"QuantizeLinear", create_linear},
    /* (from channels-last int8 activations into a plain float tensor, as a
     * detection head's Reshape reads them: no reorder of its own) */
    {"DequantizeLinear", create_linear, CPU_LAYOUTS_UNBLOCKED},
    {"DynamicQuantizeLinear", create_dynamic},
    {"QLinearAdd", create_qlinear_binary, CPU_LAYOUTS_SHARED}, /* (relaid: one shape) */
    {"QLinearMul", create_qlinear_binary},
    {"QLinearSigmoid", create_qlinear_unary},
    {"QLinearSoftmax", create_qlinear_softmax},
    /* (ANY: its table is no activation; the layout planner gives its input
     * and output one layout, as for every elementwise operator) */
    {"QLinearLookup", create_qlinear_lookup, CPU_LAYOUTS_ANY},
    /* (B of A's shape in A's layout; one per channel in any but channel blocks) */
    {"QLinearBinaryLookup", create_qlinear_binary_lookup, CPU_LAYOUTS_BROADCAST},
    /* (plain, or channels-last as int8 activations are planned: the
     * output's channels are the same bytes in both) */
    {"QLinearGlobalAveragePool", create_qlinear_unary, CPU_LAYOUTS_ANY},
    {"QLinearConcat", create_qlinear_concat, CPU_LAYOUTS_CHANNEL_AXIS},
    {NULL, NULL},
};
