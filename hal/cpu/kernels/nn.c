/* Neural-network kernels: Conv (im2col + GEMM, groups, 1-D and 2-D),
 * ConvTranspose (direct, 1-D and 2-D), Gemm,
 * MatMul (batched, broadcast; float64 too), Max/Average pooling, global pooling,
 * Softmax/LogSoftmax, LRN.
 * The GEMM is a plain row-parallel i-k-j loop the compiler vectorises; a
 * oneDNN path replaces it for speed (see the issue tracker). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "fast_math.h"
#include "npu_checked.h"

/* ---- GEMM: C[M,N] (+)= A[M,K] B[K,N], row-major with leading dimensions ---- */

typedef struct gemm_job {
  size_t m, n, k;
  const float *a, *b;
  float *c;
  size_t lda, ldb, ldc;
  size_t a_row_stride_is_col; /* A transposed: element (i, p) at a[p * lda + i] */
  size_t b_transposed;        /* element (p, j) at b[j * ldb + p] */
} gemm_job;

static void gemm_row(void *ctx, size_t i)
{
  const gemm_job *g = ctx;
  float *restrict c = g->c + i * g->ldc;
  for (size_t p = 0; p < g->k; p++) {
    float a = g->a_row_stride_is_col ? g->a[p * g->lda + i] : g->a[i * g->lda + p];
    if (a == 0)
      continue;
    if (g->b_transposed) {
      for (size_t j = 0; j < g->n; j++)
        c[j] += a * g->b[j * g->ldb + p];
    } else {
      const float *restrict b = g->b + p * g->ldb;
      for (size_t j = 0; j < g->n; j++)
        c[j] += a * b[j];
    }
  }
}

static void gemm(npu_hal_device *device, gemm_job *g)
{
  npu_cpu_parallel_for(device, g->m, gemm_row, g);
}

/* ---- Conv ---------------------------------------------------------------------- */

typedef struct conv_params {
  int64_t n, c, h, w, m, oh, ow, kh, kw;
  int64_t group, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  bool has_bias;
  float *columns; /* im2col workspace: (c/group*kh*kw) x (oh*ow) */
} conv_params;

static void im2col(const conv_params *p, const float *image, float *columns)
{
  int64_t cg = p->c / p->group;
  for (int64_t ci = 0; ci < cg; ci++)
    for (int64_t ky = 0; ky < p->kh; ky++)
      for (int64_t kx = 0; kx < p->kw; kx++) {
        float *row = columns + ((ci * p->kh + ky) * p->kw + kx) * p->oh * p->ow;
        const float *plane = image + ci * p->h * p->w;
        for (int64_t oy = 0; oy < p->oh; oy++) {
          int64_t y = oy * p->stride_h - p->pad_top + ky * p->dil_h;
          for (int64_t ox = 0; ox < p->ow; ox++) {
            int64_t x = ox * p->stride_w - p->pad_left + kx * p->dil_w;
            row[oy * p->ow + ox] =
                y >= 0 && y < p->h && x >= 0 && x < p->w ? plane[y * p->w + x] : 0.0f;
          }
        }
      }
}

static void run_conv(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const conv_params *p = k->params;
  const float *x = in[0], *w = in[1], *bias = p->has_bias ? in[2] : NULL;
  float *y = out[0];
  int64_t cg = p->c / p->group, mg = p->m / p->group, spatial = p->oh * p->ow;
  int64_t kdim = cg * p->kh * p->kw;
  for (int64_t b = 0; b < p->n; b++)
    for (int64_t g = 0; g < p->group; g++) {
      im2col(p, x + (b * p->c + g * cg) * p->h * p->w, p->columns);
      float *out_g = y + (b * p->m + g * mg) * spatial;
      for (int64_t o = 0; o < mg; o++) {
        float init = bias ? bias[g * mg + o] : 0.0f;
        for (int64_t s = 0; s < spatial; s++)
          out_g[o * spatial + s] = init;
      }
      gemm_job job = {(size_t)mg, (size_t)spatial, (size_t)kdim, w + g * mg * kdim, p->columns,
                      out_g, (size_t)kdim, (size_t)spatial, (size_t)spatial, 0, 0};
      gemm(k->device, &job);
    }
}

static void free_conv_params(void *params)
{
  conv_params *p = params;
  if (p)
    free(p->columns);
  free(p);
}

/* The window of a 1-D or 2-D Conv or ConvTranspose of float32 (1-D: a
 * height of 1), into new params of `size` bytes that begin with it. */
static npu_status new_conv_params(const npu_hal_op *op, npu_hal_kernel *k, size_t size,
                                  conv_params **out)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32 || (x->rank != 3 && x->rank != 4))
    return cpu_unsupported(op, "only float32 1-D and 2-D convolutions");
  const npu_hal_window *window = op->window;
  if (!window)
    return cpu_unsupported(op, "no resolved window");
  conv_params *p = calloc(1, size);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = free_conv_params;
  bool two_d = x->rank == 4;
  uint32_t last = window->spatial - 1; /* the row axis */
  p->n = x->dims[0];
  p->c = x->dims[1];
  p->h = two_d ? x->dims[2] : 1;
  p->w = x->dims[x->rank - 1];
  p->m = op->outputs[0].dims[1];
  p->kh = two_d ? window->kernel[0] : 1;
  p->kw = window->kernel[last];
  p->oh = two_d ? op->outputs[0].dims[2] : 1;
  p->ow = op->outputs[0].dims[x->rank - 1];
  p->group = window->group;
  p->stride_h = two_d ? window->strides[0] : 1;
  p->stride_w = window->strides[last];
  p->dil_h = two_d ? window->dilations[0] : 1;
  p->dil_w = window->dilations[last];
  p->pad_top = two_d ? window->pad_begin[0] : 0;
  p->pad_left = window->pad_begin[last];
  p->has_bias = op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED;
  if (p->group <= 0 || p->c % p->group || p->m % p->group)
    return cpu_unsupported(op, "channels do not divide into the groups");
  *out = p;
  return NPU_OK;
}

static npu_status create_conv(const npu_hal_op *op, npu_hal_kernel *k)
{
  conv_params *p = NULL;
  npu_status status = new_conv_params(op, k, sizeof *p, &p);
  if (status != NPU_OK)
    return status;
  if (op->inputs[1].dims[1] * p->group != p->c)
    return cpu_unsupported(op, "channels do not divide into the groups");
  /* A weight row (its elements: bounded) times the output plane (bounded): checked. */
  size_t columns, bytes;
  bool fits = npu_mul_size((size_t)(p->c / p->group * p->kh * p->kw), (size_t)(p->oh * p->ow),
                           &columns) &&
              npu_mul_size(columns ? columns : 1, sizeof(float), &bytes);
  p->columns = fits ? malloc(bytes) : NULL;
  if (!p->columns)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory for the im2col workspace");
  k->run = run_conv;
  return NPU_OK;
}

/* ---- ConvTranspose: each output plane gathers its inputs' strided taps ---------------- */

typedef struct conv_transpose_params {
  conv_params window;
  cpu_channel_walk in, out; /* the tensors' layouts */
} conv_transpose_params;

typedef struct conv_transpose_job {
  const conv_transpose_params *p;
  const float *x, *w, *bias;
  float *y;
} conv_transpose_job;

/* Output plane (n, m): bias, then every input pixel of m's group painted
 * through m's kernel (weights [C, M/group, kh, kw]). Output rows and
 * columns no input reaches (output_padding) keep the bias. */
static void conv_transpose_plane(void *ctx, size_t task)
{
  const conv_transpose_job *job = ctx;
  const conv_params *p = &job->p->window;
  const cpu_channel_walk *in = &job->p->in, *out = &job->p->out;
  int64_t n = (int64_t)task / p->m, m = (int64_t)task % p->m;
  int64_t mg = p->m / p->group, cg = p->c / p->group, g = m / mg;
  size_t step = out->pixel, from = in->pixel;
  float *y = job->y + (size_t)n * out->batch + cpu_channel_offset(out, (size_t)m);
  float init = job->bias ? job->bias[m] : 0.0f;
  for (int64_t i = 0; i < p->oh * p->ow; i++)
    y[(size_t)i * step] = init;
  for (int64_t c = g * cg; c < (g + 1) * cg; c++) {
    const float *plane = job->x + (size_t)n * in->batch + cpu_channel_offset(in, (size_t)c);
    const float *kernel = job->w + (c * mg + m % mg) * p->kh * p->kw;
    for (int64_t ky = 0; ky < p->kh; ky++)
      for (int64_t kx = 0; kx < p->kw; kx++) {
        float weight = kernel[ky * p->kw + kx];
        for (int64_t iy = 0; iy < p->h; iy++) {
          int64_t oy = iy * p->stride_h - p->pad_top + ky * p->dil_h;
          if (oy < 0 || oy >= p->oh)
            continue;
          for (int64_t ix = 0; ix < p->w; ix++) {
            int64_t ox = ix * p->stride_w - p->pad_left + kx * p->dil_w;
            if (ox >= 0 && ox < p->ow)
              y[(size_t)(oy * p->ow + ox) * step] +=
                  plane[(size_t)(iy * p->w + ix) * from] * weight;
          }
        }
      }
  }
}

static void run_conv_transpose(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const conv_transpose_params *p = k->params;
  conv_transpose_job job = {p, in[0], in[1], p->window.has_bias ? in[2] : NULL, out[0]};
  npu_cpu_parallel_for(k->device, (size_t)(p->window.n * p->window.m), conv_transpose_plane, &job);
}

/* The cases oneDNN declines (output_padding past what its end padding can
 * absorb), in any layout (the planner gives ConvTranspose oneDNN's). */
static npu_status create_conv_transpose(const npu_hal_op *op, npu_hal_kernel *k)
{
  conv_params *window = NULL;
  npu_status status = new_conv_params(op, k, sizeof(conv_transpose_params), &window);
  if (status != NPU_OK)
    return status;
  if (op->inputs[1].dims[0] != window->c || op->inputs[1].dims[1] * window->group != window->m)
    return cpu_unsupported(op, "the weights do not match the channels and groups");
  conv_transpose_params *p = (conv_transpose_params *)window; /* (its first member) */
  p->in = cpu_channel_walk_of(&op->inputs[0]);
  p->out = cpu_channel_walk_of(&op->outputs[0]);
  k->run = run_conv_transpose;
  return NPU_OK;
}

/* ---- Gemm and MatMul ---------------------------------------------------------------- */

typedef struct gemm_params {
  size_t m, n, k;
  bool trans_a, trans_b;
  float alpha, beta;
  npu_hal_tensor_desc c;   /* bias shape, rank 0 when absent */
  size_t batch;            /* MatMul: output matrices */
  int64_t a_batch_stride[NPU_MAX_RANK], b_batch_stride[NPU_MAX_RANK];
  int64_t batch_dims[NPU_MAX_RANK];
  uint32_t batch_rank;
  bool float64;            /* MatMul of float64 operands (ONNX's node tests): a plain loop */
} gemm_params;

static void run_gemm(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const gemm_params *p = k->params;
  float *y = out[0];
  const float *bias = k->input_count > 2 && in[2] ? in[2] : NULL;
  for (size_t i = 0; i < p->m; i++)
    for (size_t j = 0; j < p->n; j++) {
      float c = 0.0f;
      if (bias) { /* unidirectional broadcast of C to (M, N) */
        size_t bi = p->c.rank == 2 && p->c.dims[0] > 1 ? i : 0;
        size_t bj = p->c.rank >= 1 && p->c.dims[p->c.rank - 1] > 1 ? j : 0;
        c = bias[bi * (p->c.rank == 2 ? (size_t)p->c.dims[1] : 1) + bj] * p->beta;
      }
      y[i * p->n + j] = c;
    }
  gemm_job job = {p->m, p->n, p->k, in[0], in[1], y, p->trans_a ? p->m : p->k,
                  p->trans_b ? p->k : p->n, p->n, p->trans_a, p->trans_b};
  if (p->alpha == 1.0f) {
    gemm(k->device, &job);
    return;
  }
  float *scaled = y; /* alpha != 1: accumulate A*B separately, rare in vision models */
  for (size_t i = 0; i < p->m * p->n; i++)
    scaled[i] /= p->alpha;
  gemm(k->device, &job);
  for (size_t i = 0; i < p->m * p->n; i++)
    scaled[i] *= p->alpha;
}

static npu_status create_gemm(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->inputs[0].dtype != NPU_DTYPE_FLOAT32 || op->inputs[0].rank != 2 ||
      op->inputs[1].rank != 2)
    return cpu_unsupported(op, "float32 2-D inputs only");
  gemm_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  const npu_hal_attributes *a = &op->attributes;
  p->trans_a = a->get_int(a->node, "transA", 0) != 0;
  p->trans_b = a->get_int(a->node, "transB", 0) != 0;
  p->alpha = a->get_float(a->node, "alpha", 1.0f);
  p->beta = a->get_float(a->node, "beta", 1.0f);
  if (p->alpha == 0.0f)
    return cpu_unsupported(op, "alpha 0");
  p->m = (size_t)op->outputs[0].dims[0];
  p->n = (size_t)op->outputs[0].dims[1];
  p->k = (size_t)op->inputs[0].dims[p->trans_a ? 0 : 1];
  if (op->input_count > 2)
    p->c = op->inputs[2];
  k->run = run_gemm;
  return NPU_OK;
}

/* One float64 product y = a b, a m x k, b k x n, row-major. */
static void matmul_float64(const gemm_params *p, const double *a, const double *b, double *y)
{
  for (size_t i = 0; i < p->m; i++)
    for (size_t j = 0; j < p->n; j++) {
      double sum = 0.0;
      for (size_t e = 0; e < p->k; e++)
        sum += a[i * p->k + e] * b[e * p->n + j];
      y[i * p->n + j] = sum;
    }
}

static void run_matmul(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const gemm_params *p = k->params;
  int64_t idx[NPU_MAX_RANK] = {0};
  for (size_t b = 0; b < p->batch; b++) {
    int64_t a_off = 0, b_off = 0;
    for (uint32_t d = 0; d < p->batch_rank; d++) {
      a_off += idx[d] * p->a_batch_stride[d];
      b_off += idx[d] * p->b_batch_stride[d];
    }
    if (p->float64) {
      matmul_float64(p, (const double *)in[0] + a_off, (const double *)in[1] + b_off,
                     (double *)out[0] + b * p->m * p->n);
    } else {
      float *y = (float *)out[0] + b * p->m * p->n;
      memset(y, 0, p->m * p->n * sizeof(float));
      gemm_job job = {p->m, p->n, p->k, (const float *)in[0] + a_off,
                      (const float *)in[1] + b_off, y, p->k, p->n, p->n, 0, 0};
      gemm(k->device, &job);
    }
    for (int d = (int)p->batch_rank - 1; d >= 0 && ++idx[d] >= p->batch_dims[d]; d--)
      idx[d] = 0;
  }
}

static npu_status create_matmul(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *a = &op->inputs[0], *b = &op->inputs[1], *y = &op->outputs[0];
  if ((a->dtype != NPU_DTYPE_FLOAT32 && a->dtype != NPU_DTYPE_FLOAT64) || a->rank < 2 ||
      b->rank < 2)
    return cpu_unsupported(op, "float32 or float64 inputs of rank 2 or more (1-D operands not "
                               "yet)");
  gemm_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->float64 = a->dtype == NPU_DTYPE_FLOAT64;
  p->m = (size_t)a->dims[a->rank - 2];
  p->k = (size_t)a->dims[a->rank - 1];
  p->n = (size_t)b->dims[b->rank - 1];
  p->batch_rank = y->rank - 2;
  p->batch = 1;
  for (uint32_t d = 0; d < p->batch_rank; d++) {
    p->batch_dims[d] = y->dims[d];
    p->batch *= (size_t)y->dims[d];
    /* Each operand's batch stride, 0 where it broadcasts. */
    int64_t ad = (int64_t)d - (int64_t)(y->rank - a->rank);
    int64_t bd = (int64_t)d - (int64_t)(y->rank - b->rank);
    int64_t a_size = (int64_t)(p->m * p->k), b_size = (int64_t)(p->k * p->n);
    for (int64_t e = ad + 1; ad >= 0 && e < (int64_t)a->rank - 2; e++)
      a_size *= a->dims[e];
    for (int64_t e = bd + 1; bd >= 0 && e < (int64_t)b->rank - 2; e++)
      b_size *= b->dims[e];
    p->a_batch_stride[d] = ad >= 0 && a->dims[ad] > 1 ? a_size : 0;
    p->b_batch_stride[d] = bd >= 0 && b->dims[bd] > 1 ? b_size : 0;
  }
  k->run = run_matmul;
  return NPU_OK;
}

/* ---- pooling ---------------------------------------------------------------------- */

typedef struct pool_params {
  bool max, count_include_pad;
  bool column_major; /* MaxPool's indices: storage_order 1 */
  int64_t planes, h, w, oh, ow, kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
} pool_params;

static void pool_plane(void *ctx, size_t plane)
{
  const void *const *job = ctx;
  const pool_params *p = job[0];
  const float *x = (const float *)job[1] + plane * p->h * p->w;
  float *y = (float *)job[2] + plane * p->oh * p->ow;
  int64_t *indices = job[3] ? (int64_t *)job[3] + plane * p->oh * p->ow : NULL;
  for (int64_t oy = 0; oy < p->oh; oy++)
    for (int64_t ox = 0; ox < p->ow; ox++) {
      float acc = p->max ? -FLT_MAX : 0.0f;
      int64_t count = 0, best = -1; /* best: the maximum's position in the plane */
      for (int64_t ky = 0; ky < p->kh; ky++)
        for (int64_t kx = 0; kx < p->kw; kx++) {
          int64_t yy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
          int64_t xx = ox * p->stride_w - p->pad_left + kx * p->dil_w;
          bool inside = yy >= 0 && yy < p->h && xx >= 0 && xx < p->w;
          if (!inside) {
            /* padding counts for the average only up to the padded border */
            if (p->count_include_pad && yy < p->h + p->pad_top && xx < p->w + p->pad_left)
              count++;
            continue;
          }
          float v = x[yy * p->w + xx];
          if (p->max && (v > acc || best < 0)) {
            acc = v;
            best = p->column_major ? xx * p->h + yy : yy * p->w + xx;
          } else if (!p->max) {
            acc += v;
          }
          count++;
        }
      y[oy * p->ow + ox] = p->max ? acc : (count ? acc / (float)count : 0.0f);
      if (indices) /* ONNX's: positions in the whole (flattened) input */
        indices[oy * p->ow + ox] = (int64_t)plane * p->h * p->w + (best >= 0 ? best : 0);
    }
}

static void run_pool(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const pool_params *p = k->params;
  const void *job[4] = {p, in[0], out[0], k->output_count > 1 ? out[1] : NULL};
  npu_cpu_parallel_for(k->device, (size_t)p->planes, pool_plane, (void *)job);
}

static npu_status create_pool(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32 || (x->rank != 3 && x->rank != 4))
    return cpu_unsupported(op, "float32 1-D and 2-D pooling only");
  if (!op->window)
    return cpu_unsupported(op, "no resolved window");
  pool_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  const npu_hal_window *window = op->window;
  uint32_t last = window->spatial - 1; /* the row axis */
  bool two_d = x->rank == 4;
  p->max = strstr(op->op_type, "Max") != NULL;
  p->planes = x->dims[0] * x->dims[1];
  p->h = two_d ? x->dims[2] : 1;
  p->w = x->dims[x->rank - 1];
  p->oh = two_d ? y->dims[2] : 1;
  p->ow = y->dims[y->rank - 1];
  p->kh = two_d ? window->kernel[0] : 1;
  p->kw = window->kernel[last];
  p->stride_h = two_d ? window->strides[0] : 1;
  p->stride_w = window->strides[last];
  p->pad_top = two_d ? window->pad_begin[0] : 0;
  p->pad_left = window->pad_begin[last];
  p->dil_h = two_d ? window->dilations[0] : 1;
  p->dil_w = window->dilations[last];
  p->count_include_pad = window->count_include_pad;
  p->column_major = op->attributes.get_int(op->attributes.node, "storage_order", 0) != 0;
  k->run = run_pool;
  return NPU_OK;
}

/* ---- global pooling in any layout -------------------------------------------------- */

/* Channel c of image n sits, per spatial position, at a fixed step: its
 * output is one value at n * C + c whatever the layout (an (N, C, 1, 1)
 * tensor is the same bytes in all of them). A task is one lane group:
 * `lanes` channels that lie side by side at each position. */
typedef struct global_pool_params {
  bool max;
  int64_t images, channels, positions;
  int64_t lanes;          /* channels side by side: 1 plain, C0 blocked, channels-last up
                           * to POOL_ROW_CHANNELS (the last group of an image may be narrower) */
  int64_t position_step;  /* elements from one position to the next */
  int64_t group_step;     /* elements from one lane group to the next within an image */
  int64_t groups;         /* lane groups per image */
} global_pool_params;

typedef struct global_pool_job {
  const global_pool_params *p;
  const float *x;
  float *y;
} global_pool_job;

/* Lanes pooled together: 16 side-by-side channels (a 16-channel block; two
 * AVX2 vectors), in POOL_CHAINS partial results over interleaved positions, so
 * that consecutive additions do not wait for each other. A channels-last
 * tensor's channels are pooled POOL_ROW_CHANNELS to a task. */
enum { POOL_LANES = 16, POOL_CHAINS = 4, POOL_ROW_CHANNELS = 128 };

/* The maximum or mean over `positions` of `width` (<= POOL_LANES) channels
 * that lie side by side, `step` elements from one position to the next. */
NPU_VECTOR_CLONES
static void pool_lanes(const float *x, int64_t positions, int64_t step, int64_t width, bool max,
                       float *restrict y)
{
  float acc[POOL_CHAINS][POOL_LANES];
  for (int chain = 0; chain < POOL_CHAINS; chain++)
    for (int l = 0; l < POOL_LANES; l++)
      acc[chain][l] = max ? -INFINITY : 0.0f;
  int64_t s = 0;
  if (width == POOL_LANES) /* the common case, unrolled whole */
    for (; s + POOL_CHAINS <= positions; s += POOL_CHAINS)
      for (int chain = 0; chain < POOL_CHAINS; chain++) {
        const float *row = x + (s + chain) * step;
        for (int l = 0; l < POOL_LANES; l++)
          acc[chain][l] = max ? (row[l] > acc[chain][l] ? row[l] : acc[chain][l])
                              : acc[chain][l] + row[l];
      }
  for (; s < positions; s++) {
    const float *row = x + s * step;
    for (int64_t l = 0; l < width; l++)
      acc[0][l] = max ? (row[l] > acc[0][l] ? row[l] : acc[0][l]) : acc[0][l] + row[l];
  }
  for (int64_t l = 0; l < width; l++) {
    float v = acc[0][l];
    for (int chain = 1; chain < POOL_CHAINS; chain++)
      v = max ? (acc[chain][l] > v ? acc[chain][l] : v) : v + acc[chain][l];
    y[l] = max ? v : v / (float)positions;
  }
}

/* The mean over `positions` of 16 side-by-side channels (a 16-channel
 * block), `step` elements from one position to the next: pool_lanes's
 * common case, with whole-block vectors. */
NPU_VECTOR_CLONES
static void mean_block16(const float *x, int64_t positions, int64_t step, float *y)
{
  cpu_lanes16 acc[POOL_CHAINS] = {{0}}, row;
  int64_t s = 0;
  for (; s + POOL_CHAINS <= positions; s += POOL_CHAINS)
    for (int chain = 0; chain < POOL_CHAINS; chain++) {
      cpu_lanes16_load(&row, x + (s + chain) * step);
      acc[chain] += row;
    }
  for (; s < positions; s++) {
    cpu_lanes16_load(&row, x + s * step);
    acc[0] += row;
  }
  cpu_lanes16 mean = (acc[0] + acc[1] + acc[2] + acc[3]) / (float)positions; /* (pool_lanes's order) */
  cpu_lanes16_store(y, &mean);
}

/* The same over `width` (more than POOL_LANES) channels, position by
 * position: each position's channels are read as the contiguous run they
 * are, the partial results (independent lanes enough) kept in `y`. (Lane
 * group by lane group, a channels-last tensor's positions were walked once
 * per 16 channels at the stride of a whole row: SqueezeNet's 1000 classes
 * over 13x13 at batch 8 took 0.61 ms against ORT's 0.15, one thread.) */
NPU_VECTOR_CLONES
static void pool_rows(const float *x, int64_t positions, int64_t step, int64_t width, bool max,
                      float *restrict y)
{
  for (int64_t l = 0; l < width; l++)
    y[l] = max ? -INFINITY : 0.0f;
  for (int64_t s = 0; s < positions; s++) {
    const float *row = x + s * step;
    for (int64_t l = 0; l < width; l++)
      y[l] = max ? (row[l] > y[l] ? row[l] : y[l]) : y[l] + row[l];
  }
  if (!max)
    for (int64_t l = 0; l < width; l++)
      y[l] /= (float)positions;
}

static void global_pool_group(void *ctx, size_t task)
{
  const global_pool_job *job = ctx;
  const global_pool_params *p = job->p;
  int64_t n = (int64_t)task / p->groups, group = (int64_t)task % p->groups;
  const float *x = job->x + n * p->channels * p->positions + group * p->group_step;
  float *y = job->y + n * p->channels + group * p->lanes;
  if (p->lanes == 1) { /* plain: one contiguous row */
    size_t count = (size_t)p->positions;
    *y = p->max ? cpu_max(x, count) : cpu_sum(x, count) / (float)count;
    return;
  }
  int64_t width = p->channels - group * p->lanes < p->lanes ? p->channels - group * p->lanes
                                                           : p->lanes;
  if (width > POOL_LANES)
    pool_rows(x, p->positions, p->position_step, width, p->max, y);
  else if (!p->max && width == POOL_LANES)
    mean_block16(x, p->positions, p->position_step, y);
  else
    pool_lanes(x, p->positions, p->position_step, width, p->max, y);
}

static void run_global_pool(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const global_pool_params *p = k->params;
  global_pool_job job = {p, in[0], out[0]};
  npu_cpu_parallel_for(k->device, (size_t)(p->images * p->groups), global_pool_group, &job);
}

/* GlobalAveragePool and GlobalMaxPool; ReduceMean over the spatial axes
 * too (exporters write global average pooling so), with or without its kept
 * axes: the same values in the same order. */
static npu_status create_global_pool(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32 || x->rank < 3)
    return cpu_unsupported(op, "float32 inputs with spatial axes only");
  if (strncmp(op->op_type, "Reduce", 6) == 0 && !cpu_reduces_spatial_axes(op))
    return cpu_unsupported(op, "a reduction over other axes than the spatial ones");
  global_pool_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->max = strcmp(op->op_type, "GlobalMaxPool") == 0;
  p->images = x->dims[0];
  p->channels = x->dims[1];
  p->positions = 1;
  for (uint32_t d = 2; d < x->rank; d++)
    p->positions *= x->dims[d];
  switch (x->layout) {
  case NPU_HAL_LAYOUT_CHANNELS_LAST:
    p->position_step = p->channels;
    p->lanes = p->group_step = p->channels < POOL_ROW_CHANNELS ? p->channels : POOL_ROW_CHANNELS;
    break;
  case NPU_HAL_LAYOUT_CHANNEL_BLOCKS:
    p->lanes = p->position_step = npu_hal_channel_block(x);
    p->group_step = p->lanes * p->positions;
    break;
  default:
    p->lanes = 1;
    p->position_step = 1;
    p->group_step = p->positions;
    break;
  }
  p->groups = (p->channels + p->lanes - 1) / p->lanes;
  k->run = run_global_pool;
  return NPU_OK;
}

/* ---- Softmax, LogSoftmax ---------------------------------------------------------- */

typedef struct softmax_params {
  size_t outer, axis_length, inner;
  bool log;
} softmax_params;

typedef struct softmax_job {
  const softmax_params *p;
  const float *x;
  float *y;
  size_t column_blocks; /* per outer slice, when inner > 1 */
} softmax_job;

/* Columns normalised together when the axis is not the last: a vector of
 * neighbouring inner positions per step (4 KiB of rows stay in L1). */
enum { SOFTMAX_COLUMNS = 256 };

/* One outer slice with the axis innermost: the values are contiguous. */
NPU_VECTOR_CLONES
static void softmax_row(const softmax_params *p, const float *x, float *restrict y)
{
  size_t n = p->axis_length;
  float max = cpu_max(x, n);
  for (size_t a = 0; a < n; a++)
    y[a] = cpu_expf(x[a] - max);
  float sum = cpu_sum(y, n);
  if (p->log) {
    float shift = max + logf(sum);
    for (size_t a = 0; a < n; a++)
      y[a] = x[a] - shift;
  } else {
    float scale = 1.0f / sum;
    for (size_t a = 0; a < n; a++)
      y[a] *= scale;
  }
}

/* `count` neighbouring columns of one outer slice, each normalised along
 * the axis (stride p->inner). */
NPU_VECTOR_CLONES
static void softmax_columns(const softmax_params *p, const float *x, float *restrict y,
                           size_t count)
{
  float max[SOFTMAX_COLUMNS], sum[SOFTMAX_COLUMNS];
  size_t n = p->axis_length, stride = p->inner;
  for (size_t j = 0; j < count; j++) {
    max[j] = -INFINITY;
    sum[j] = 0.0f;
  }
  for (size_t a = 0; a < n; a++)
    for (size_t j = 0; j < count; j++)
      max[j] = x[a * stride + j] > max[j] ? x[a * stride + j] : max[j];
  for (size_t a = 0; a < n; a++)
    for (size_t j = 0; j < count; j++) {
      float e = cpu_expf(x[a * stride + j] - max[j]);
      y[a * stride + j] = e;
      sum[j] += e;
    }
  if (p->log) {
    for (size_t j = 0; j < count; j++)
      sum[j] = max[j] + logf(sum[j]);
    for (size_t a = 0; a < n; a++)
      for (size_t j = 0; j < count; j++)
        y[a * stride + j] = x[a * stride + j] - sum[j];
  } else {
    for (size_t j = 0; j < count; j++)
      sum[j] = 1.0f / sum[j];
    for (size_t a = 0; a < n; a++)
      for (size_t j = 0; j < count; j++)
        y[a * stride + j] *= sum[j];
  }
}

/* Work item w: a few outer slices (axis innermost), or a block of columns. */
static void softmax_item(void *ctx, size_t w)
{
  const softmax_job *job = ctx;
  const softmax_params *p = job->p;
  if (p->inner == 1) {
    size_t per_item = cpu_rows_per_task(p->axis_length), first = w * per_item;
    size_t last = first + per_item < p->outer ? first + per_item : p->outer;
    for (size_t slice = first; slice < last; slice++)
      softmax_row(p, job->x + slice * p->axis_length, job->y + slice * p->axis_length);
    return;
  }
  size_t slice = w / job->column_blocks;
  size_t offset = slice * p->axis_length * p->inner;
  size_t first = (w % job->column_blocks) * SOFTMAX_COLUMNS;
  size_t count = p->inner - first < SOFTMAX_COLUMNS ? p->inner - first : SOFTMAX_COLUMNS;
  softmax_columns(p, job->x + offset + first, job->y + offset + first, count);
}

static void run_softmax(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const softmax_params *p = k->params;
  softmax_job job = {p, in[0], out[0], (p->inner + SOFTMAX_COLUMNS - 1) / SOFTMAX_COLUMNS};
  size_t per_item = cpu_rows_per_task(p->axis_length);
  npu_cpu_parallel_for(k->device,
                       p->inner == 1 ? (p->outer + per_item - 1) / per_item
                                     : p->outer * job.column_blocks,
                       softmax_item, &job);
}

static npu_status create_softmax(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "float32 only");
  softmax_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->log = strcmp(op->op_type, "LogSoftmax") == 0;
  int64_t axis = op->axes->axes[0];
  p->outer = p->axis_length = p->inner = 1;
  for (int64_t d = 0; d < (int64_t)x->rank; d++) {
    size_t dim = (size_t)x->dims[d];
    if (d < axis)
      p->outer *= dim;
    else if (op->opset < 13) /* before 13: a 2-D softmax over everything from axis on */
      p->axis_length *= dim;
    else if (d == axis)
      p->axis_length = dim;
    else
      p->inner *= dim;
  }
  k->run = run_softmax;
  return NPU_OK;
}

/* ---- LRN: normalisation across neighbouring channels ------------------------------ */

typedef struct lrn_params {
  int64_t images, channels, plane; /* plane: the spatial positions */
  int64_t before, after;    /* the window: channels c - before to c + after */
  float alpha_per_size, beta, bias;
} lrn_params;

typedef struct lrn_job {
  const lrn_params *p;
  const float *x;
  float *y;
} lrn_job;

/* Output plane (n, c): the squares of the window's planes summed in place,
 * then x / (bias + alpha / size * sum) ^ beta. */
static void lrn_plane(void *ctx, size_t task)
{
  const lrn_job *job = ctx;
  const lrn_params *p = job->p;
  int64_t c = (int64_t)task % p->channels, image = (int64_t)task / p->channels;
  int64_t first = c - p->before > 0 ? c - p->before : 0;
  int64_t last = c + p->after < p->channels - 1 ? c + p->after : p->channels - 1;
  const float *x = job->x + image * p->channels * p->plane;
  float *restrict y = job->y + (size_t)task * p->plane;
  for (int64_t s = 0; s < p->plane; s++)
    y[s] = 0.0f;
  for (int64_t k = first; k <= last; k++)
    for (int64_t s = 0; s < p->plane; s++)
      y[s] += x[k * p->plane + s] * x[k * p->plane + s];
  for (int64_t s = 0; s < p->plane; s++)
    y[s] = x[c * p->plane + s] * powf(p->bias + p->alpha_per_size * y[s], -p->beta);
}

static void run_lrn(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const lrn_params *p = k->params;
  lrn_job job = {p, in[0], out[0]};
  npu_cpu_parallel_for(k->device, (size_t)(p->images * p->channels), lrn_plane, &job);
}

static npu_status create_lrn(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "float32 only");
  lrn_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  const npu_hal_attributes *a = &op->attributes;
  int64_t size = a->get_int(a->node, "size", 1); /* (checked: positive) */
  p->channels = x->dims[1];
  p->images = x->dims[0];
  p->plane = 1;
  for (uint32_t d = 2; d < x->rank; d++)
    p->plane *= x->dims[d];
  p->before = (size - 1) / 2;
  p->after = size - 1 - p->before;
  p->alpha_per_size = a->get_float(a->node, "alpha", 1e-4f) / (float)size;
  p->beta = a->get_float(a->node, "beta", 0.75f);
  p->bias = a->get_float(a->node, "bias", 1.0f);
  k->run = run_lrn;
  return NPU_OK;
}

const cpu_kernel_entry cpu_nn_kernels[] = {
    {"Conv", create_conv},
    {"ConvTranspose", create_conv_transpose, CPU_LAYOUTS_ANY},
    {"Gemm", create_gemm},
    {"MatMul", create_matmul},
    {"MaxPool", create_pool},
    {"AveragePool", create_pool},
    {"GlobalAveragePool", create_global_pool, CPU_LAYOUTS_ANY},
    {"GlobalMaxPool", create_global_pool, CPU_LAYOUTS_ANY},
    {"ReduceMean", create_global_pool, CPU_LAYOUTS_SPATIAL_REDUCTION},
    {"Softmax", create_softmax},
    {"LogSoftmax", create_softmax},
    {"LRN", create_lrn},
    {NULL, NULL},
};
