/* Reductions: ReduceX over any axes, ArgMax/ArgMin, Hardmax and TopK along
 * one axis, LayerNormalization over the trailing axes. Float32 data
 * (ReduceX: float64 too). And CumSum, the running sum along one axis. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "fast_math.h"

/* A tensor seen as outer x axis x inner around one axis. */
typedef struct axis_split {
  size_t outer, axis, inner;
} axis_split;

static axis_split split_at(const npu_hal_tensor_desc *t, int64_t axis)
{
  axis_split s = {1, (size_t)t->dims[axis], 1};
  for (int64_t d = 0; d < axis; d++)
    s.outer *= (size_t)t->dims[d];
  for (uint32_t d = (uint32_t)axis + 1; d < t->rank; d++)
    s.inner *= (size_t)t->dims[d];
  return s;
}

/* ---- ReduceX ------------------------------------------------------------------ */

typedef enum {
  R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUM_SQUARE, R_LOG_SUM, R_LOG_SUM_EXP,
} reduce_kind;

typedef struct reduce_params {
  reduce_kind kind;
  uint32_t rank;
  int64_t dims[NPU_MAX_RANK];
  int64_t out_strides[NPU_MAX_RANK]; /* 0 on reduced axes */
  size_t in_count, out_count, group; /* group: input elements per output */
  bool float64;                       /* float64 data (else float32) */
  double *accumulators;
} reduce_params;

static void free_reduce_params(void *data)
{
  reduce_params *p = data;
  if (p)
    free(p->accumulators);
  free(p);
}

static double reduce_init(reduce_kind kind)
{
  switch (kind) {
  case R_MAX: return -INFINITY;
  case R_MIN: return INFINITY;
  case R_PROD: return 1;
  default: return 0;
  }
}

static double reduce_step(reduce_kind kind, double acc, double x)
{
  switch (kind) {
  case R_MAX: return x > acc || isnan(x) ? x : acc;
  case R_MIN: return x < acc || isnan(x) ? x : acc;
  case R_PROD: return acc * x;
  case R_L1: return acc + fabs(x);
  case R_L2:
  case R_SUM_SQUARE: return acc + x * x;
  case R_LOG_SUM_EXP: return acc + exp(x);
  default: return acc + x;
  }
}

static double reduce_finish(reduce_kind kind, double acc, size_t group)
{
  switch (kind) {
  case R_MEAN: return group ? acc / (double)group : NAN;
  case R_L2: return sqrt(acc);
  case R_LOG_SUM:
  case R_LOG_SUM_EXP: return log(acc);
  default: return acc;
  }
}

static void run_reduce(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const reduce_params *p = k->params;
  double init = reduce_init(p->kind);
  for (size_t o = 0; o < p->out_count; o++)
    p->accumulators[o] = init;
  int64_t idx[NPU_MAX_RANK] = {0};
  size_t target = 0;
  for (size_t i = 0; i < p->in_count; i++) {
    double x = p->float64 ? ((const double *)in[0])[i] : ((const float *)in[0])[i];
    p->accumulators[target] = reduce_step(p->kind, p->accumulators[target], x);
    for (int d = (int)p->rank - 1; d >= 0; d--) { /* odometer over the input */
      target += (size_t)p->out_strides[d];
      if (++idx[d] < p->dims[d])
        break;
      target -= (size_t)(p->out_strides[d] * p->dims[d]);
      idx[d] = 0;
    }
  }
  for (size_t o = 0; o < p->out_count; o++) {
    double y = reduce_finish(p->kind, p->accumulators[o], p->group);
    if (p->float64)
      ((double *)out[0])[o] = y;
    else
      ((float *)out[0])[o] = (float)y;
  }
}

static const struct {
  const char *name;
  reduce_kind kind;
} reduce_ops[] = {
    {"ReduceSum", R_SUM},         {"ReduceMean", R_MEAN},
    {"ReduceMax", R_MAX},         {"ReduceMin", R_MIN},
    {"ReduceProd", R_PROD},       {"ReduceL1", R_L1},
    {"ReduceL2", R_L2},           {"ReduceSumSquare", R_SUM_SQUARE},
    {"ReduceLogSum", R_LOG_SUM},  {"ReduceLogSumExp", R_LOG_SUM_EXP},
};

static npu_status create_reduce(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32 && x->dtype != NPU_DTYPE_FLOAT64)
    return cpu_unsupported(op, "only float32 and float64 reductions");
  reduce_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->float64 = x->dtype == NPU_DTYPE_FLOAT64;
  k->free_params = free_reduce_params;
  for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++)
    if (strcmp(op->op_type, reduce_ops[i].name) == 0)
      p->kind = reduce_ops[i].kind;
  p->rank = x->rank;
  p->in_count = cpu_tensor_elements(x);
  p->out_count = cpu_tensor_elements(y);
  p->group = p->out_count ? p->in_count / p->out_count : 0;
  /* Kept axes are the input axes whose size survives, in order; the output
   * shape (keepdims or not) has the same elements in the same order. */
  bool reduced[NPU_MAX_RANK] = {false};
  for (uint32_t i = 0; i < op->axes->count; i++)
    reduced[op->axes->axes[i]] = true;
  int64_t stride = 1;
  for (int d = (int)x->rank - 1; d >= 0; d--) {
    p->dims[d] = x->dims[d];
    p->out_strides[d] = reduced[d] ? 0 : stride;
    if (!reduced[d])
      stride *= x->dims[d];
  }
  p->accumulators = malloc((p->out_count ? p->out_count : 1) * sizeof *p->accumulators);
  if (!p->accumulators)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->run = run_reduce;
  return NPU_OK;
}

/* ---- ArgMax, ArgMin, Hardmax ------------------------------------------------------------ */

typedef struct arg_params {
  axis_split split;
  bool max, last;
  bool hardmax; /* write 1 at the first maximum and 0 elsewhere, not its index */
  size_t lines_per_task;
} arg_params;

typedef struct arg_job {
  const arg_params *p;
  const float *x;
  void *y;
} arg_job;

/* Lines [o * inner, ...) of outer slices [first, last): each line's best
 * along the axis, written as its index or as Hardmax's one-hot line. */
static void arg_task(void *ctx, size_t task)
{
  const arg_job *job = ctx;
  const arg_params *p = job->p;
  const axis_split *split = &p->split;
  size_t first = task * p->lines_per_task;
  size_t last = first + p->lines_per_task < split->outer ? first + p->lines_per_task
                                                         : split->outer;
  for (size_t o = first; o < last; o++) {
    for (size_t i = 0; i < split->inner; i++) {
      size_t start = o * split->axis * split->inner + i;
      const float *row = job->x + start;
      size_t best = 0;
      for (size_t a = 1; a < split->axis; a++) {
        float v = row[a * split->inner], b = row[best * split->inner];
        bool better = p->max ? (v > b || (p->last && v == b)) : (v < b || (p->last && v == b));
        if (better)
          best = a;
      }
      if (!p->hardmax) {
        ((int64_t *)job->y)[o * split->inner + i] = (int64_t)best;
        continue;
      }
      float *line = (float *)job->y + start;
      for (size_t a = 0; a < split->axis; a++)
        line[a * split->inner] = a == best ? 1.0f : 0.0f;
    }
  }
}

static void run_arg(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const arg_params *p = k->params;
  arg_job job = {p, in[0], out[0]};
  npu_cpu_parallel_for(k->device, (p->split.outer + p->lines_per_task - 1) / p->lines_per_task,
                       arg_task, &job);
}

static npu_status create_arg(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "float32 data");
  arg_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  uint32_t axis = op->axes->axes[0];
  p->split = split_at(x, axis);
  p->hardmax = strcmp(op->op_type, "Hardmax") == 0;
  if (p->hardmax && op->opset < 13) /* the axes from `axis` on, flattened into one */
    p->split = (axis_split){p->split.outer, p->split.axis * p->split.inner, 1};
  p->max = p->hardmax || strcmp(op->op_type, "ArgMax") == 0;
  p->last = op->attributes.get_int(op->attributes.node, "select_last_index", 0) != 0;
  p->lines_per_task = cpu_rows_per_task(p->split.axis * p->split.inner);
  k->params = p;
  k->run = run_arg;
  return NPU_OK;
}

/* ---- CumSum ------------------------------------------------------------------------ */

typedef struct cumsum_params {
  axis_split split;
  npu_dtype dtype;
  bool exclusive, reverse;
  size_t slices_per_task; /* outer slices */
} cumsum_params;

typedef struct cumsum_job {
  const cumsum_params *p;
  const void *x;
  void *y;
} cumsum_job;

/* Each output line along the axis, in the order of the sum (reversed with
 * `reverse`): the previous output plus this input (or, exclusive, the
 * previous input), the whole inner row at a time. Integers wrap, computed
 * unsigned. */
#define CUMSUM_SLICE(T, U)                                                                  \
  do {                                                                                      \
    const T *x = (const T *)job->x + base;                                                  \
    T *y = (T *)job->y + base;                                                              \
    for (size_t s = 0; s < n; s++) {                                                        \
      size_t a = p->reverse ? n - 1 - s : s, prev = p->reverse ? a + 1 : a - 1;             \
      T *to = y + a * inner;                                                                \
      const T *add = x + (p->exclusive ? prev : a) * inner;                                 \
      if (s == 0)                                                                           \
        for (size_t i = 0; i < inner; i++)                                                  \
          to[i] = p->exclusive ? 0 : x[a * inner + i];                                      \
      else                                                                                  \
        for (size_t i = 0; i < inner; i++)                                                  \
          to[i] = (T)((U)y[prev * inner + i] + (U)add[i]);                                  \
    }                                                                                       \
  } while (0)

static void cumsum_task(void *ctx, size_t task)
{
  const cumsum_job *job = ctx;
  const cumsum_params *p = job->p;
  size_t n = p->split.axis, inner = p->split.inner;
  size_t first = task * p->slices_per_task;
  size_t last = first + p->slices_per_task < p->split.outer ? first + p->slices_per_task
                                                            : p->split.outer;
  for (size_t o = first; o < last; o++) {
    size_t base = o * n * inner;
    switch (p->dtype) {
    case NPU_DTYPE_FLOAT64: CUMSUM_SLICE(double, double); break;
    case NPU_DTYPE_INT32: CUMSUM_SLICE(int32_t, uint32_t); break;
    case NPU_DTYPE_INT64: CUMSUM_SLICE(int64_t, uint64_t); break;
    default: CUMSUM_SLICE(float, float); break;
    }
  }
}

static void run_cumsum(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const cumsum_params *p = k->params;
  cumsum_job job = {p, in[0], out[0]};
  npu_cpu_parallel_for(k->device,
                       (p->split.outer + p->slices_per_task - 1) / p->slices_per_task,
                       cumsum_task, &job);
}

static npu_status create_cumsum(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32 && x->dtype != NPU_DTYPE_FLOAT64 &&
      x->dtype != NPU_DTYPE_INT32 && x->dtype != NPU_DTYPE_INT64)
    return cpu_unsupported(op, "float32, float64, int32 and int64 data");
  cumsum_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  /* (A constant in range: op_schema.c checked it.) */
  int64_t axis = op->inputs[1].dtype == NPU_DTYPE_INT32 ? *(const int32_t *)op->input_values[1]
                                                         : *(const int64_t *)op->input_values[1];
  p->split = split_at(x, axis < 0 ? axis + x->rank : axis);
  p->dtype = x->dtype;
  p->exclusive = op->attributes.get_int(op->attributes.node, "exclusive", 0) != 0;
  p->reverse = op->attributes.get_int(op->attributes.node, "reverse", 0) != 0;
  p->slices_per_task = cpu_rows_per_task(p->split.axis * p->split.inner);
  k->run = run_cumsum;
  return NPU_OK;
}

/* ---- TopK -------------------------------------------------------------------------- */

typedef struct ranked {
  float value;
  int64_t index;
} ranked;

typedef struct topk_params {
  axis_split split;
  size_t k;
  bool largest;
  ranked *row; /* one axis' worth */
} topk_params;

static void free_topk_params(void *data)
{
  topk_params *p = data;
  if (p)
    free(p->row);
  free(p);
}

/* Ties keep the lower index first, as ONNX asks. */
static int by_value_descending(const void *a, const void *b)
{
  const ranked *x = a, *y = b;
  if (x->value != y->value)
    return x->value > y->value ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int by_value_ascending(const void *a, const void *b)
{
  const ranked *x = a, *y = b;
  if (x->value != y->value)
    return x->value < y->value ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static void run_topk(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const topk_params *p = k->params;
  const float *x = in[0];
  float *values = out[0];
  int64_t *indices = out[1];
  for (size_t o = 0; o < p->split.outer; o++) {
    for (size_t i = 0; i < p->split.inner; i++) {
      const float *line = x + o * p->split.axis * p->split.inner + i;
      for (size_t a = 0; a < p->split.axis; a++)
        p->row[a] = (ranked){line[a * p->split.inner], (int64_t)a};
      qsort(p->row, p->split.axis, sizeof *p->row,
            p->largest ? by_value_descending : by_value_ascending);
      for (size_t r = 0; r < p->k; r++) {
        size_t at = (o * p->k + r) * p->split.inner + i;
        values[at] = p->row[r].value;
        if (indices)
          indices[at] = p->row[r].index;
      }
    }
  }
}

static npu_status create_topk(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  uint32_t axis = op->axes->axes[0];
  if (x->dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "float32 data");
  topk_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = free_topk_params;
  p->split = split_at(x, axis);
  p->k = (size_t)op->outputs[0].dims[axis];
  p->largest = op->attributes.get_int(op->attributes.node, "largest", 1) != 0;
  p->row = malloc((p->split.axis ? p->split.axis : 1) * sizeof *p->row);
  if (!p->row)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->run = run_topk;
  return NPU_OK;
}

/* ---- LayerNormalization ---------------------------------------------------------- */

typedef struct layer_norm_params {
  size_t rows, width;
  size_t scale_count, bias_count; /* width, or 1 for a broadcast scalar */
  float epsilon;
  const float *x, *scale, *bias;  /* bound per run */
  float *y, *mean, *inv_std;
} layer_norm_params;

/* Mean and variance in cpu_sum's lanes, then one pass that vectorises:
 * scale and bias read per element or broadcast. */
NPU_VECTOR_CLONES
static void normalize_row(const layer_norm_params *p, const float *restrict x, float *restrict y,
                          float *mean_out, float *inv_std_out)
{
  size_t n = p->width;
  float mean = cpu_sum(x, n) / (float)n;
  float lanes[CPU_REDUCTION_LANES] = {0};
  size_t i = 0;
  for (; i + CPU_REDUCTION_LANES <= n; i += CPU_REDUCTION_LANES)
    for (size_t l = 0; l < CPU_REDUCTION_LANES; l++)
      lanes[l] += (x[i + l] - mean) * (x[i + l] - mean);
  float squares = 0;
  for (; i < n; i++)
    squares += (x[i] - mean) * (x[i] - mean);
  for (size_t l = 0; l < CPU_REDUCTION_LANES; l++)
    squares += lanes[l];
  float inv_std = 1.0f / sqrtf(squares / (float)n + p->epsilon);
  const float *scale = p->scale, *bias = p->bias;
  if (p->scale_count != 1 && (!bias || p->bias_count != 1))
    for (i = 0; i < n; i++)
      y[i] = (x[i] - mean) * inv_std * scale[i] + (bias ? bias[i] : 0.0f);
  else
    for (i = 0; i < n; i++)
      y[i] = (x[i] - mean) * inv_std * scale[p->scale_count == 1 ? 0 : i] +
             (bias ? bias[p->bias_count == 1 ? 0 : i] : 0.0f);
  *mean_out = mean;
  *inv_std_out = inv_std;
}

static void layer_norm_rows(void *ctx, size_t task)
{
  const layer_norm_params *p = ctx;
  size_t per_task = cpu_rows_per_task(p->width), first = task * per_task;
  size_t last = first + per_task < p->rows ? first + per_task : p->rows;
  for (size_t r = first; r < last; r++) {
    float mean, inv_std;
    normalize_row(p, p->x + r * p->width, p->y + r * p->width, &mean, &inv_std);
    if (p->mean)
      p->mean[r] = mean;
    if (p->inv_std)
      p->inv_std[r] = inv_std;
  }
}

static void run_layer_norm(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  layer_norm_params job = *(const layer_norm_params *)k->params;
  job.x = in[0];
  job.scale = in[1];
  job.bias = k->input_count > 2 ? in[2] : NULL;
  job.y = out[0];
  job.mean = k->output_count > 1 ? out[1] : NULL;
  job.inv_std = k->output_count > 2 ? out[2] : NULL;
  size_t per_task = cpu_rows_per_task(job.width);
  npu_cpu_parallel_for(k->device, (job.rows + per_task - 1) / per_task, layer_norm_rows, &job);
}

static npu_status create_layer_norm(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "float32 data");
  layer_norm_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  axis_split s = split_at(x, op->axes->axes[0]);
  p->rows = s.outer;
  p->width = s.axis * s.inner;
  p->epsilon = op->attributes.get_float(op->attributes.node, "epsilon", 1e-5f);
  p->scale_count = cpu_tensor_elements(&op->inputs[1]);
  bool has_bias = op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED;
  p->bias_count = has_bias ? cpu_tensor_elements(&op->inputs[2]) : 1;
  if ((p->scale_count != p->width && p->scale_count != 1) ||
      (p->bias_count != p->width && p->bias_count != 1))
    return cpu_unsupported(op, "scale and bias must cover the normalised axes");
  k->run = run_layer_norm;
  return NPU_OK;
}

const cpu_kernel_entry cpu_reduce_kernels[] = {
    {"ReduceSum", create_reduce},   {"ReduceMean", create_reduce},
    {"ReduceMax", create_reduce},   {"ReduceMin", create_reduce},
    {"ReduceProd", create_reduce},  {"ReduceL1", create_reduce},
    {"ReduceL2", create_reduce},    {"ReduceSumSquare", create_reduce},
    {"ReduceLogSum", create_reduce}, {"ReduceLogSumExp", create_reduce},
    {"ArgMax", create_arg},         {"ArgMin", create_arg},
    {"Hardmax", create_arg},        {"CumSum", create_cumsum},
    {"TopK", create_topk},          {"LayerNormalization", create_layer_norm},
    {NULL, NULL},
};
