/* MaxUnpool (below), and ScatterND: the output is a copy of `data` with the slices that the index
 * tuples of `indices` address replaced by (or, with a reduction, combined
 * with) the slices of `updates`. Indices are only known when the kernel
 * runs unless they are constants (then the runtime checked them when
 * planning): every tuple is checked before anything is written, and an
 * out-of-range one fails the launch (cpu_kernel_fail) with the output left
 * unwritten. Tuples are applied one after another in their order, so that
 * repeated indices give what ONNX's reference loop gives: the last update
 * with no reduction, all of them combined with one. */
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "npu_checked.h"

typedef enum {
  SCATTER_NONE, SCATTER_ADD, SCATTER_MUL, SCATTER_MAX, SCATTER_MIN,
} scatter_reduction;

typedef struct scatter_params {
  scatter_reduction reduction;
  npu_dtype dtype;
  size_t esize;
  uint32_t tuple_length;        /* k: indices' last dimension, the axes a tuple fixes */
  int64_t dims[NPU_MAX_RANK];   /* of data */
  size_t tuples;                /* index tuples: the product of indices' other dimensions */
  size_t slice;                 /* elements per update: data's dimensions past k */
  size_t total;                 /* data's elements */
} scatter_params;

/* Combines `count` updates into `out` with the reduction, in type T
 * computed in U (integers wrap, computed unsigned as Add and Mul do). */
#define COMBINE(T, U)                                                                       \
  do {                                                                                      \
    T *restrict o = out;                                                                    \
    const T *restrict u = updates;                                                          \
    switch (reduction) {                                                                    \
    case SCATTER_ADD:                                                                       \
      for (size_t i = 0; i < count; i++)                                                    \
        o[i] = (T)((U)o[i] + (U)u[i]);                                                      \
      break;                                                                                \
    case SCATTER_MUL:                                                                       \
      for (size_t i = 0; i < count; i++)                                                    \
        o[i] = (T)((U)o[i] * (U)u[i]);                                                      \
      break;                                                                                \
    case SCATTER_MAX:                                                                       \
      for (size_t i = 0; i < count; i++)                                                    \
        o[i] = u[i] > o[i] ? u[i] : o[i];                                                   \
      break;                                                                                \
    case SCATTER_MIN:                                                                       \
      for (size_t i = 0; i < count; i++)                                                    \
        o[i] = u[i] < o[i] ? u[i] : o[i];                                                   \
      break;                                                                                \
    case SCATTER_NONE: break;                                                               \
    }                                                                                       \
  } while (0)

static void combine(scatter_reduction reduction, npu_dtype dtype, void *out, const void *updates,
                    size_t count)
{
  switch (dtype) {
  case NPU_DTYPE_FLOAT32: COMBINE(float, float); break;
  case NPU_DTYPE_FLOAT64: COMBINE(double, double); break;
  case NPU_DTYPE_INT32: COMBINE(int32_t, uint32_t); break;
  case NPU_DTYPE_INT64: COMBINE(int64_t, uint64_t); break;
  default: break; /* (refused when the kernel was made) */
  }
}

static void run_scatter_nd(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const scatter_params *p = k->params;
  const int64_t *indices = in[1];
  int64_t *positions = out[k->output_count]; /* the workspace: one slice position per tuple */
  for (size_t t = 0; t < p->tuples; t++) {
    uint32_t axis;
    const int64_t *tuple = indices + t * p->tuple_length;
    if (!npu_index_tuple_position(tuple, p->tuple_length, p->dims, &positions[t], &axis)) {
      cpu_kernel_fail(k, NPU_ERROR_INVALID_ARGUMENT, "index %lld (tuple %zu of the indices) is "
                      "out of range for axis %u of the data, of size %lld",
                      (long long)tuple[axis], t, axis, (long long)p->dims[axis]);
      return;
    }
  }
  uint8_t *y = out[0];
  const uint8_t *updates = in[2];
  size_t slice_bytes = p->slice * p->esize;
  if (y != (const uint8_t *)in[0] && p->total)
    memcpy(y, in[0], p->total * p->esize);
  for (size_t t = 0; t < p->tuples; t++) {
    uint8_t *to = y + (size_t)positions[t] * slice_bytes;
    const uint8_t *from = updates + t * slice_bytes;
    if (p->reduction == SCATTER_NONE)
      memcpy(to, from, slice_bytes);
    else
      combine(p->reduction, p->dtype, to, from, p->slice);
  }
}

static const struct {
  const char *name;
  scatter_reduction reduction;
  int64_t since; /* the opset that added it */
} reductions[] = {
    {"none", SCATTER_NONE, 11}, {"add", SCATTER_ADD, 16}, {"mul", SCATTER_MUL, 16},
    {"max", SCATTER_MAX, 18},   {"min", SCATTER_MIN, 18},
};

static npu_status create_scatter_nd(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *data = &op->inputs[0], *indices = &op->inputs[1];
  const char *name = op->attributes.get_string(op->attributes.node, "reduction", "none");
  size_t r = 0;
  while (r < sizeof reductions / sizeof reductions[0] &&
         (strcmp(name, reductions[r].name) != 0 || op->opset < reductions[r].since))
    r++;
  if (r == sizeof reductions / sizeof reductions[0])
    return cpu_unsupported(op, "reduction");
  npu_dtype dtype = data->dtype;
  bool reducible = dtype == NPU_DTYPE_FLOAT32 || dtype == NPU_DTYPE_FLOAT64 ||
                   dtype == NPU_DTYPE_INT32 || dtype == NPU_DTYPE_INT64;
  if (reductions[r].reduction != SCATTER_NONE && !reducible)
    return cpu_unsupported(op, "reductions of float32, float64, int32 and int64 only");
  if (indices->dtype != NPU_DTYPE_INT64 || indices->rank < 1 || op->inputs[2].dtype != dtype ||
      npu_dtype_size(dtype) == 0)
    return cpu_unsupported(op, "int64 indices and updates of the data's type");
  scatter_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->reduction = reductions[r].reduction;
  p->dtype = dtype;
  p->esize = npu_dtype_size(dtype);
  /* (The runtime checked the shapes: k <= rank, updates = indices[:-1] ++ data[k:].) */
  p->tuple_length = (uint32_t)indices->dims[indices->rank - 1];
  memcpy(p->dims, data->dims, sizeof p->dims);
  p->total = cpu_tensor_elements(data);
  p->tuples = p->tuple_length ? cpu_tensor_elements(indices) / p->tuple_length : 0;
  p->slice = 1;
  for (uint32_t d = p->tuple_length; d < data->rank; d++)
    p->slice *= (size_t)data->dims[d];
  k->workspace_bytes = p->tuples * sizeof(int64_t);
  k->run = run_scatter_nd;
  return NPU_OK;
}

/* ---- MaxUnpool: values put back where MaxPool found them ----------------------------- */

/* An index is a position in the flattened tensor MaxPool read, of the
 * shape MaxUnpool's attributes give back (`pooled_from`); a larger
 * output_shape keeps each position's coordinates, its new elements zero
 * (as ONNX's node tests expect). */
typedef struct unpool_params {
  uint32_t rank;
  int64_t pooled_from[NPU_MAX_RANK], out_strides[NPU_MAX_RANK];
  size_t values, out_count;
} unpool_params;

static void run_max_unpool(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const unpool_params *p = k->params;
  const float *x = in[0];
  const int64_t *indices = in[1];
  float *y = out[0];
  size_t limit = 1;
  for (uint32_t d = 0; d < p->rank; d++)
    limit *= (size_t)p->pooled_from[d];
  for (size_t i = 0; i < p->values; i++)
    if (indices[i] < 0 || (size_t)indices[i] >= limit) {
      cpu_kernel_fail(k, NPU_ERROR_INVALID_ARGUMENT, "index %lld (element %zu of the indices) "
                      "is outside the %zu elements unpooled", (long long)indices[i], i, limit);
      return;
    }
  memset(y, 0, p->out_count * sizeof *y);
  for (size_t i = 0; i < p->values; i++) {
    int64_t rest = indices[i], position = 0;
    for (uint32_t d = p->rank; d-- > 0;) {
      position += rest % p->pooled_from[d] * p->out_strides[d];
      rest /= p->pooled_from[d];
    }
    y[position] = x[i];
  }
}

static npu_status create_max_unpool(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32 || op->inputs[1].dtype != NPU_DTYPE_INT64)
    return cpu_unsupported(op, "float32 values and int64 indices");
  unpool_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->rank = y->rank;
  p->values = cpu_tensor_elements(x);
  p->out_count = cpu_tensor_elements(y);
  cpu_strides(y, p->out_strides);
  const npu_hal_attributes *a = &op->attributes;
  const int64_t *kernel, *strides, *pads;
  size_t spatial = y->rank - 2, stride_count = a->get_ints(a->node, "strides", &strides);
  size_t pad_count = a->get_ints(a->node, "pads", &pads);
  a->get_ints(a->node, "kernel_shape", &kernel); /* (all three checked by shape inference) */
  p->pooled_from[0] = x->dims[0];
  p->pooled_from[1] = x->dims[1];
  for (size_t s = 0; s < spatial; s++)
    p->pooled_from[2 + s] = (x->dims[2 + s] - 1) * (stride_count ? strides[s] : 1) + kernel[s] -
                            (pad_count ? pads[s] + pads[spatial + s] : 0);
  k->run = run_max_unpool;
  return NPU_OK;
}

const cpu_kernel_entry cpu_scatter_kernels[] = {
    {"ScatterND", create_scatter_nd},
    {"MaxUnpool", create_max_unpool},
    {NULL, NULL},
};
