/* Kernels that write a fixed pattern over the output: Trilu (the input's
 * upper or lower triangle, zeros elsewhere), EyeLike (ones on a diagonal)
 * and OneHot (`on` where an index says, `off` elsewhere). Any element type:
 * they move bytes, spread over the engine's threads by rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"

/* ---- Trilu, EyeLike: per row of each matrix, a band of columns ---------------------- */

typedef enum { BAND_UPPER, BAND_LOWER, BAND_DIAGONAL } band_kind;

typedef struct band_params {
  band_kind kind;
  int64_t k;                /* the diagonal: column - row */
  int64_t rows, cols;       /* of each matrix (the last two axes) */
  size_t matrix_rows;       /* rows of all the matrices */
  size_t esize;
  uint8_t one[8];           /* EyeLike: 1 in the output's type */
  size_t rows_per_task;
} band_params;

typedef struct band_job {
  const band_params *p;
  const uint8_t *x; /* Trilu */
  uint8_t *y;
} band_job;

/* Columns [*lo, *hi) of row `row` that keep the input (Trilu) or hold 1
 * (EyeLike), clamped to the row. */
static void band_of(const band_params *p, int64_t row, int64_t *lo, int64_t *hi)
{
  int64_t diagonal = row + p->k; /* (|k| is below 2^62: op_schema.c's int64 scalar, clamped) */
  *lo = p->kind == BAND_LOWER ? 0 : diagonal;
  *hi = p->kind == BAND_UPPER ? p->cols : diagonal + 1;
  *lo = *lo < 0 ? 0 : *lo > p->cols ? p->cols : *lo;
  *hi = *hi < *lo ? *lo : *hi > p->cols ? p->cols : *hi;
}

static void band_task(void *ctx, size_t task)
{
  const band_job *job = ctx;
  const band_params *p = job->p;
  size_t first = task * p->rows_per_task;
  size_t last = first + p->rows_per_task < p->matrix_rows ? first + p->rows_per_task
                                                          : p->matrix_rows;
  size_t row_bytes = (size_t)p->cols * p->esize;
  for (size_t r = first; r < last; r++) {
    int64_t lo, hi;
    band_of(p, (int64_t)(r % (size_t)p->rows), &lo, &hi);
    uint8_t *to = job->y + r * row_bytes;
    memset(to, 0, (size_t)lo * p->esize);
    if (p->kind == BAND_DIAGONAL)
      for (int64_t c = lo; c < hi; c++)
        memcpy(to + (size_t)c * p->esize, p->one, p->esize);
    else
      memcpy(to + (size_t)lo * p->esize, job->x + r * row_bytes + (size_t)lo * p->esize,
             (size_t)(hi - lo) * p->esize);
    memset(to + (size_t)hi * p->esize, 0, (size_t)(p->cols - hi) * p->esize);
  }
}

static void run_band(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const band_params *p = k->params;
  band_job job = {p, in[0], out[0]};
  npu_cpu_parallel_for(k->device, (p->matrix_rows + p->rows_per_task - 1) / p->rows_per_task,
                       band_task, &job);
}

/* 1 in `dtype`'s bytes; false for a type without one here. */
static bool one_in(npu_dtype dtype, uint8_t *bytes)
{
  float f32 = 1.0f;
  double f64 = 1.0;
  uint64_t integer = 1; /* (little-endian: its first bytes are 1 in every integer width) */
  switch (dtype) {
  case NPU_DTYPE_FLOAT32: memcpy(bytes, &f32, sizeof f32); return true;
  case NPU_DTYPE_FLOAT64: memcpy(bytes, &f64, sizeof f64); return true;
  case NPU_DTYPE_FLOAT16: bytes[0] = 0x00, bytes[1] = 0x3c; return true;
  case NPU_DTYPE_UINT8:
  case NPU_DTYPE_INT8:
  case NPU_DTYPE_UINT16:
  case NPU_DTYPE_INT16:
  case NPU_DTYPE_UINT32:
  case NPU_DTYPE_UINT64:
  case NPU_DTYPE_INT32:
  case NPU_DTYPE_INT64:
  case NPU_DTYPE_BOOL: memcpy(bytes, &integer, sizeof integer); return true;
  case NPU_DTYPE_UNDEFINED: break;
  }
  return false;
}

static npu_status create_band(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *y = &op->outputs[0];
  const npu_hal_attributes *a = &op->attributes;
  band_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->esize = npu_dtype_size(y->dtype);
  if (strcmp(op->op_type, "EyeLike") == 0) {
    p->kind = BAND_DIAGONAL;
    p->k = a->get_int(a->node, "k", 0);
    if (!one_in(y->dtype, p->one))
      return cpu_unsupported(op, "output element type");
  } else {
    p->kind = a->get_int(a->node, "upper", 1) ? BAND_UPPER : BAND_LOWER;
    /* (k, when given, is one constant int64: op_schema.c checked) */
    bool given = op->input_count > 1 && op->inputs[1].dtype != NPU_DTYPE_UNDEFINED;
    p->k = given ? *(const int64_t *)op->input_values[1] : 0;
  }
  /* Beyond the matrix either way, a diagonal is as good as one just past it. */
  int64_t limit = INT64_C(1) << 62;
  p->k = p->k < -limit ? -limit : p->k > limit ? limit : p->k;
  p->rows = y->dims[y->rank - 2];
  p->cols = y->dims[y->rank - 1];
  p->matrix_rows = p->cols ? cpu_tensor_elements(y) / (size_t)p->cols : 0;
  p->rows_per_task = cpu_rows_per_task((size_t)p->cols);
  k->run = run_band;
  return NPU_OK;
}

/* ---- OneHot ------------------------------------------------------------------------- */

/* The output is [outer, depth, inner] around the inserted axis; the
 * indices [outer, inner]. */
typedef struct one_hot_params {
  size_t outer, inner;
  int64_t depth;
  npu_dtype index_dtype;
  size_t esize;
  size_t outer_per_task;
} one_hot_params;

typedef struct one_hot_job {
  const one_hot_params *p;
  const void *indices;
  const uint8_t *values; /* off, on */
  uint8_t *y;
} one_hot_job;

/* The position along the depth that index i makes hot (negative: from the
 * end), or -1 for none: out of range, or a fraction. */
static int64_t hot_position(const one_hot_params *p, const void *indices, size_t i)
{
  double v;
  switch (p->index_dtype) {
  case NPU_DTYPE_INT32: v = ((const int32_t *)indices)[i]; break;
  case NPU_DTYPE_INT64: {
    int64_t index = ((const int64_t *)indices)[i];
    if (index < 0)
      index += p->depth;
    return index >= 0 && index < p->depth ? index : -1;
  }
  case NPU_DTYPE_FLOAT64: v = ((const double *)indices)[i]; break;
  default: v = ((const float *)indices)[i]; break;
  }
  if (v < 0)
    v += (double)p->depth;
  return v >= 0 && v < (double)p->depth && v == floor(v) ? (int64_t)v : -1;
}

static void one_hot_task(void *ctx, size_t task)
{
  const one_hot_job *job = ctx;
  const one_hot_params *p = job->p;
  size_t e = p->esize, first = task * p->outer_per_task;
  size_t last = first + p->outer_per_task < p->outer ? first + p->outer_per_task : p->outer;
  size_t slice = (size_t)p->depth * p->inner; /* output elements per outer index */
  static const uint8_t zero[8];
  bool off_zero = memcmp(job->values, zero, e) == 0;
  for (size_t o = first; o < last; o++) {
    uint8_t *to = job->y + o * slice * e;
    if (off_zero)
      memset(to, 0, slice * e);
    else
      for (size_t i = 0; i < slice; i++)
        memcpy(to + i * e, job->values, e);
    for (size_t i = 0; i < p->inner; i++) {
      int64_t hot = hot_position(p, job->indices, o * p->inner + i);
      if (hot >= 0)
        memcpy(to + ((size_t)hot * p->inner + i) * e, job->values + e, e);
    }
  }
}

static void run_one_hot(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const one_hot_params *p = k->params;
  one_hot_job job = {p, in[0], in[2], out[0]};
  npu_cpu_parallel_for(k->device, (p->outer + p->outer_per_task - 1) / p->outer_per_task,
                       one_hot_task, &job);
}

static npu_status create_one_hot(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *indices = &op->inputs[0], *y = &op->outputs[0];
  one_hot_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  /* (Shape inference checked the axis, in the output's rank, and put the depth there.) */
  int64_t axis = op->attributes.get_int(op->attributes.node, "axis", -1);
  if (axis < 0)
    axis += y->rank;
  int64_t depth = y->dims[axis];
  p->outer = 1;
  p->inner = 1;
  for (int64_t d = 0; d < y->rank; d++)
    if (d != axis)
      *(d < axis ? &p->outer : &p->inner) *= (size_t)y->dims[d];
  p->depth = depth;
  p->index_dtype = indices->dtype;
  p->esize = npu_dtype_size(y->dtype);
  p->outer_per_task = cpu_rows_per_task((size_t)depth * p->inner);
  k->run = run_one_hot;
  return NPU_OK;
}

const cpu_kernel_entry cpu_pattern_kernels[] = {
    {"Trilu", create_band},
    {"EyeLike", create_band},
    {"OneHot", create_one_hot},
    {NULL, NULL},
};
