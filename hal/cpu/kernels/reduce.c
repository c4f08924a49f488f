/* Reductions: ReduceX over any axes, ArgMax/ArgMin, Hardmax and TopK along
 * one axis, LayerNormalization over the trailing axes, Instance- and
 * GroupNormalization, MeanVarianceNormalization and LpNormalization.
 * Float32 data (ReduceX, MeanVariance- and LpNormalization: float64 too).
 * And CumSum, the running sum along one axis. */
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
  /* Float32 reductions of one run of adjacent axes (reduced_run): the
   * input as outer x group x inner, inner 1 where the run is the last. */
  size_t outer, inner;
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

/* ---- float32 reductions of one run of axes ----
 * Sums and extremes in float32 as they stream by (the generic path above
 * accumulates in float64, one element at a time): over a trailing run each
 * output's elements are contiguous and reduced in vectors; over a run with
 * axes after it, rows of `inner` outputs are accumulated row by row
 * (ConvNeXt V2's GRN: the L2 norm over H and W of [N, H, W, C], 0.91 ->
 * 0.06 ms at 56x56x160). */

static bool float_run_kind(reduce_kind kind)
{
  return kind == R_SUM || kind == R_MEAN || kind == R_MAX || kind == R_MIN || kind == R_L1 ||
         kind == R_L2 || kind == R_SUM_SQUARE;
}

/* acc after x (NaN propagates through the extremes, as the generic path's do). */
static inline float float_step(reduce_kind kind, float acc, float x)
{
  switch (kind) {
  case R_MAX: return x > acc || x != x ? x : acc;
  case R_MIN: return x < acc || x != x ? x : acc;
  case R_L1: return acc + fabsf(x);
  case R_L2:
  case R_SUM_SQUARE: return acc + x * x;
  default: return acc + x;
  }
}

static inline float float_finish(reduce_kind kind, float acc, size_t group)
{
  return kind == R_MEAN ? acc / (float)group : kind == R_L2 ? sqrtf(acc) : acc;
}

typedef struct run_job {
  const reduce_params *p;
  const float *x;
  float *y;
  size_t chunks; /* of inner outputs, per outer index */
} run_job;

/* Outputs a task reduces when rows are accumulated: 256 floats of a row. */
enum { RUN_CHUNK = 256 };

NPU_VECTOR_CLONES
static void reduce_contiguous(const reduce_params *p, const float *x, float *y, size_t first,
                              size_t count)
{
  for (size_t o = first; o < first + count; o++) {
    const float *from = x + o * p->group;
    float acc;
    if (p->kind == R_SUM || p->kind == R_MEAN)
      acc = cpu_sum(from, p->group);
    else if (p->kind == R_L2 || p->kind == R_SUM_SQUARE)
      acc = cpu_sum_squares_about(from, p->group, 0.0f);
    else {
      acc = (float)reduce_init(p->kind);
      for (size_t i = 0; i < p->group; i++)
        acc = float_step(p->kind, acc, from[i]);
    }
    y[o] = float_finish(p->kind, acc, p->group);
  }
}

NPU_VECTOR_CLONES
static void reduce_rows(const reduce_params *p, const float *x, float *restrict y, size_t count)
{
  float init = (float)reduce_init(p->kind);
  for (size_t i = 0; i < count; i++)
    y[i] = init;
  for (size_t r = 0; r < p->group; r++) {
    const float *row = x + r * p->inner;
    switch (p->kind) { /* (a loop per kind: each vectorises) */
    case R_MAX:
      for (size_t i = 0; i < count; i++)
        y[i] = float_step(R_MAX, y[i], row[i]);
      break;
    case R_MIN:
      for (size_t i = 0; i < count; i++)
        y[i] = float_step(R_MIN, y[i], row[i]);
      break;
    case R_L1:
      for (size_t i = 0; i < count; i++)
        y[i] += fabsf(row[i]);
      break;
    case R_L2:
    case R_SUM_SQUARE:
      for (size_t i = 0; i < count; i++)
        y[i] += row[i] * row[i];
      break;
    default:
      for (size_t i = 0; i < count; i++)
        y[i] += row[i];
    }
  }
  for (size_t i = 0; i < count; i++)
    y[i] = float_finish(p->kind, y[i], p->group);
}

static void run_task(void *data, size_t task)
{
  const run_job *job = data;
  const reduce_params *p = job->p;
  if (p->inner == 1) {
    size_t per_task = cpu_rows_per_task(p->group), first = task * per_task;
    reduce_contiguous(p, job->x, job->y, first,
                      first + per_task < p->outer ? per_task : p->outer - first);
    return;
  }
  size_t o = task / job->chunks, first = task % job->chunks * RUN_CHUNK;
  size_t count = p->inner - first < RUN_CHUNK ? p->inner - first : RUN_CHUNK;
  reduce_rows(p, job->x + o * p->group * p->inner + first, job->y + o * p->inner + first, count);
}

static void run_reduce_run(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const reduce_params *p = k->params;
  run_job job = {p, in[0], out[0], (p->inner + RUN_CHUNK - 1) / RUN_CHUNK};
  size_t per_task = cpu_rows_per_task(p->group);
  size_t tasks = p->inner == 1 ? (p->outer + per_task - 1) / per_task : p->outer * job.chunks;
  npu_cpu_parallel_for(k->device, tasks, run_task, &job);
}

/* Whether the reduced axes (of those longer than 1) are adjacent: then the
 * input is outer x group x inner. */
static bool reduced_run(const npu_hal_tensor_desc *x, const bool *reduced, size_t *outer,
                        size_t *inner)
{
  int first = -1, last = -1;
  for (uint32_t d = 0; d < x->rank; d++)
    if (reduced[d] && x->dims[d] > 1) {
      for (int between = last + 1; last >= 0 && between < (int)d; between++)
        if (x->dims[between] > 1)
          return false; /* a kept axis between two reduced ones */
      first = first < 0 ? (int)d : first;
      last = (int)d;
    }
  *outer = *inner = 1;
  for (uint32_t d = 0; d < x->rank; d++) {
    if ((int)d < first || first < 0)
      *outer *= (size_t)x->dims[d];
    else if ((int)d > last)
      *inner *= (size_t)x->dims[d];
  }
  return true;
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
  if (!p->float64 && float_run_kind(p->kind) && p->group > 0 &&
      reduced_run(x, reduced, &p->outer, &p->inner)) {
    k->run = run_reduce_run;
    return NPU_OK;
  }
  p->accumulators = malloc((p->out_count ? p->out_count : 1) * sizeof *p->accumulators);
  if (!p->accumulators)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->run = run_reduce;
  return NPU_OK;
}

/* ---- MeanVarianceNormalization, LpNormalization: x less a centre, over a spread -------- */

/* The input falls into groups, one per index of the axes kept (the other
 * axes are normalised over): each group's elements lie at its start plus
 * the same member offsets. A task normalises whole groups. */
typedef struct spread_params {
  reduce_kind kind;        /* the spread: R_L1 or R_L2 (LpNormalization) */
  bool centred, float64;   /* centred: MeanVarianceNormalization */
  size_t groups, members;
  int64_t *starts, *offsets; /* groups, members entries */
} spread_params;

static void free_spread_params(void *data)
{
  spread_params *p = data;
  if (p) {
    free(p->starts);
    free(p->offsets);
  }
  free(p);
}

typedef struct spread_job {
  const spread_params *p;
  const void *x;
  void *y;
} spread_job;

static double element(const spread_params *p, const void *data, int64_t i)
{
  return p->float64 ? ((const double *)data)[i] : ((const float *)data)[i];
}

/* MeanVarianceNormalization: (x - mean) / (deviation + 1e-9), ONNX's
 * function (its epsilon added to the deviation); LpNormalization: x / its
 * L1 or L2 norm. */
static void spread_groups(void *ctx, size_t task)
{
  const spread_job *job = ctx;
  const spread_params *p = job->p;
  size_t per_task = cpu_rows_per_task(p->members), first = task * per_task;
  size_t last = first + per_task < p->groups ? first + per_task : p->groups;
  double count = (double)p->members;
  for (size_t g = first; g < last; g++) {
    const int64_t base = p->starts[g], *at = p->offsets;
    double centre = 0, acc = reduce_init(p->centred ? R_SUM : p->kind), spread;
    for (size_t m = 0; m < p->members; m++)
      acc = reduce_step(p->centred ? R_SUM : p->kind, acc, element(p, job->x, base + at[m]));
    if (p->centred) {
      centre = acc / count;
      acc = 0;
      for (size_t m = 0; m < p->members; m++) {
        double v = element(p, job->x, base + at[m]) - centre;
        acc += v * v;
      }
      spread = sqrt(acc / count) + 1e-9;
    } else {
      spread = reduce_finish(p->kind, acc, p->members);
    }
    for (size_t m = 0; m < p->members; m++) {
      double v = (element(p, job->x, base + at[m]) - centre) / spread;
      if (p->float64)
        ((double *)job->y)[base + at[m]] = v;
      else
        ((float *)job->y)[base + at[m]] = (float)v;
    }
  }
}

static void run_spread(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const spread_params *p = k->params;
  spread_job job = {p, in[0], out[0]};
  size_t per_task = cpu_rows_per_task(p->members);
  npu_cpu_parallel_for(k->device, (p->groups + per_task - 1) / per_task, spread_groups, &job);
}

/* The offsets of every index of the axes `take` selects, in order
 * (row-major over them), into `offsets`. */
static void axis_offsets(const npu_hal_tensor_desc *x, const int64_t *strides, const bool *take,
                         int64_t *offsets)
{
  int64_t idx[NPU_MAX_RANK] = {0}, at = 0;
  size_t count = 1;
  for (uint32_t d = 0; d < x->rank; d++)
    count *= take[d] ? (size_t)x->dims[d] : 1;
  for (size_t i = 0; i < count; i++) {
    offsets[i] = at;
    for (int d = (int)x->rank - 1; d >= 0; d--) {
      if (!take[d])
        continue;
      at += strides[d];
      if (++idx[d] < x->dims[d])
        break;
      at -= strides[d] * x->dims[d];
      idx[d] = 0;
    }
  }
}

static npu_status create_spread(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32 && x->dtype != NPU_DTYPE_FLOAT64)
    return cpu_unsupported(op, "float32 or float64 data");
  spread_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = free_spread_params;
  p->float64 = x->dtype == NPU_DTYPE_FLOAT64;
  p->centred = strcmp(op->op_type, "MeanVarianceNormalization") == 0;
  p->kind = op->attributes.get_int(op->attributes.node, "p", 2) == 1 ? R_L1 : R_L2;
  bool reduced[NPU_MAX_RANK] = {false}, kept[NPU_MAX_RANK];
  for (uint32_t i = 0; i < op->axes->count; i++)
    reduced[op->axes->axes[i]] = true;
  p->groups = p->members = 1;
  for (uint32_t d = 0; d < x->rank; d++) {
    kept[d] = !reduced[d];
    *(reduced[d] ? &p->members : &p->groups) *= (size_t)x->dims[d];
  }
  p->starts = malloc((p->groups ? p->groups : 1) * sizeof *p->starts);
  p->offsets = malloc((p->members ? p->members : 1) * sizeof *p->offsets);
  if (!p->starts || !p->offsets)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  int64_t strides[NPU_MAX_RANK];
  cpu_strides(x, strides);
  axis_offsets(x, strides, kept, p->starts);
  axis_offsets(x, strides, reduced, p->offsets);
  k->run = run_spread;
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

/* ---- normalisation of contiguous rows: LayerNormalization, InstanceNormalization,
 * GroupNormalization ---------------------------------------------------------------- */

/* Where a row's scale or bias values come from: element e of segment s of
 * row r reads value (r % period) * per_row + s * per_segment + e * per_element
 * (LayerNormalization: one per element, or one; InstanceNormalization: one
 * per channel, a row; GroupNormalization: one per group, a row (opset 18),
 * or one per channel, a segment (opset 21)). */
typedef struct norm_affine {
  size_t period, per_row, per_segment, per_element;
} norm_affine;

typedef struct row_norm_params {
  size_t rows, width, segment; /* the row's segments of `segment` elements */
  norm_affine scale, bias;
  float epsilon;
  const float *x, *scale_values, *bias_values; /* bound per run; no bias: NULL */
  float *y, *mean, *inv_std;
} row_norm_params;

static size_t affine_index(const norm_affine *a, size_t row, size_t segment)
{
  return (row % a->period) * a->per_row + segment * a->per_segment;
}

/* Mean and variance by cpu_sum's vectors, then one pass per segment that
 * vectorises: scale and bias read per element or fixed. */
NPU_VECTOR_CLONES
static void normalize_row(const row_norm_params *p, size_t r, float *mean_out, float *inv_std_out)
{
  size_t n = p->width;
  const float *restrict x = p->x + r * n;
  float *restrict y = p->y + r * n;
  float mean = cpu_sum(x, n) / (float)n;
  float squares = cpu_sum_squares_about(x, n, mean);
  float inv_std = 1.0f / sqrtf(squares / (float)n + p->epsilon);
  size_t scale_step = p->scale.per_element, bias_step = p->bias.per_element;
  for (size_t s = 0, start = 0; start < n; s++, start += p->segment) {
    const float *scale = p->scale_values + affine_index(&p->scale, r, s);
    const float *bias = p->bias_values ? p->bias_values + affine_index(&p->bias, r, s) : NULL;
    if (!bias)
      for (size_t i = 0; i < p->segment; i++)
        y[start + i] = (x[start + i] - mean) * inv_std * scale[i * scale_step];
    else
      for (size_t i = 0; i < p->segment; i++)
        y[start + i] =
            (x[start + i] - mean) * inv_std * scale[i * scale_step] + bias[i * bias_step];
  }
  *mean_out = mean;
  *inv_std_out = inv_std;
}

static void row_norm_task(void *ctx, size_t task)
{
  const row_norm_params *p = ctx;
  size_t per_task = cpu_rows_per_task(p->width), first = task * per_task;
  size_t last = first + per_task < p->rows ? first + per_task : p->rows;
  for (size_t r = first; r < last; r++) {
    float mean, inv_std;
    normalize_row(p, r, &mean, &inv_std);
    if (p->mean)
      p->mean[r] = mean;
    if (p->inv_std)
      p->inv_std[r] = inv_std;
  }
}

static void run_row_norm(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  row_norm_params job = *(const row_norm_params *)k->params;
  job.x = in[0];
  job.scale_values = in[1];
  job.bias_values = k->input_count > 2 ? in[2] : NULL;
  job.y = out[0];
  job.mean = k->output_count > 1 ? out[1] : NULL;
  job.inv_std = k->output_count > 2 ? out[2] : NULL;
  size_t per_task = cpu_rows_per_task(job.width);
  npu_cpu_parallel_for(k->device, (job.rows + per_task - 1) / per_task, row_norm_task, &job);
}

/* A row per index before `axis`, one segment (callers split it). */
static npu_status new_row_norm(const npu_hal_op *op, npu_hal_kernel *k, int64_t axis,
                               row_norm_params **out)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "float32 data");
  row_norm_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  axis_split s = split_at(x, axis);
  p->rows = s.outer;
  p->width = p->segment = s.axis * s.inner;
  p->epsilon = op->attributes.get_float(op->attributes.node, "epsilon", 1e-5f);
  p->scale = p->bias = (norm_affine){1, 0, 0, 0};
  k->run = run_row_norm;
  *out = p;
  return NPU_OK;
}

static npu_status create_layer_norm(const npu_hal_op *op, npu_hal_kernel *k)
{
  row_norm_params *p = NULL;
  npu_status status = new_row_norm(op, k, op->axes->axes[0], &p);
  if (status != NPU_OK)
    return status;
  size_t scale_count = cpu_tensor_elements(&op->inputs[1]);
  bool has_bias = op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED;
  size_t bias_count = has_bias ? cpu_tensor_elements(&op->inputs[2]) : 1;
  if ((scale_count != p->width && scale_count != 1) || (bias_count != p->width && bias_count != 1))
    return cpu_unsupported(op, "scale and bias must cover the normalised axes");
  p->scale.per_element = scale_count != 1;
  p->bias.per_element = bias_count != 1;
  return NPU_OK;
}

/* A row per (image, channel): the channel's scale and bias. */
static npu_status create_instance_norm(const npu_hal_op *op, npu_hal_kernel *k)
{
  row_norm_params *p = NULL;
  npu_status status = new_row_norm(op, k, 2, &p);
  if (status != NPU_OK)
    return status;
  p->scale = p->bias = (norm_affine){(size_t)op->inputs[0].dims[1], 1, 0, 0};
  return NPU_OK;
}

/* A row per (image, group), its channels the segments. */
static npu_status create_group_norm(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  size_t groups = (size_t)op->attributes.get_int(op->attributes.node, "num_groups", 1);
  size_t per_group = (size_t)x->dims[1] / groups; /* (checked: it divides) */
  row_norm_params *p = NULL;
  npu_status status = new_row_norm(op, k, 2, &p);
  if (status != NPU_OK)
    return status;
  p->rows = (size_t)x->dims[0] * groups;
  p->width *= per_group; /* (segments: the group's channels) */
  p->scale = p->bias = op->opset >= 21 ? (norm_affine){groups, per_group, 1, 0}
                                       : (norm_affine){groups, 1, 0, 0};
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
    {"InstanceNormalization", create_instance_norm},
    {"GroupNormalization", create_group_norm},
    {"MeanVarianceNormalization", create_spread},
    {"LpNormalization", create_spread},
    {NULL, NULL},
};
