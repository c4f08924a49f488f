/* Kernels that address their data through index tensors (negative indices
 * count from the end of their axis):
 * - ScatterND: the output is a copy of `data` with the slices that the
 *   index tuples of `indices` address replaced by (or, with a reduction,
 *   combined with) the slices of `updates`;
 * - ScatterElements (and Scatter, its first name): the same for single
 *   elements, each index naming the position along `axis` of the update
 *   at its own coordinates;
 * - GatherElements: the reverse, each output element read from the data at
 *   its coordinates with `axis`'s replaced by its index;
 * - GatherND: each index tuple's slice of the data (after batch_dims axes
 *   that indices and data share).
 * Constant indices were checked when planning; computed ones are checked
 * here, an out-of-range one failing the launch (cpu_kernel_fail). The scatters check every index before
 * writing anything (the output left unwritten) and apply the updates one
 * after another in their order, so that repeated indices give what ONNX's
 * reference loop gives: the last update with no reduction, all of them
 * combined with one. The gathers read nothing out of range (zeros in its
 * place). MaxUnpool (at the end) checks its indices the same way. */
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

/* The gathers' first out-of-range index, found by any of the engine's
 * threads and reported by the kernel's own (cpu_kernel_fail). */
typedef struct bad_index {
  int found;
  size_t element; /* of the indices */
} bad_index;

static void note_bad_index(bad_index *bad, size_t element)
{
  if (!__atomic_exchange_n(&bad->found, 1, __ATOMIC_RELAXED))
    bad->element = element; /* (read after the parallel loop has joined) */
}

static int64_t index_at(const void *indices, npu_dtype dtype, size_t i)
{
  return dtype == NPU_DTYPE_INT32 ? ((const int32_t *)indices)[i] : ((const int64_t *)indices)[i];
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
    {"none", SCATTER_NONE, 1}, {"add", SCATTER_ADD, 16}, {"mul", SCATTER_MUL, 16},
    {"max", SCATTER_MAX, 18},   {"min", SCATTER_MIN, 18},
};

/* Which reduction attribute `reduction` names in op's opset; false if none. */
static bool find_reduction(const npu_hal_op *op, scatter_reduction *reduction)
{
  const char *name = op->attributes.get_string(op->attributes.node, "reduction", "none");
  for (size_t r = 0; r < sizeof reductions / sizeof reductions[0]; r++)
    if (strcmp(name, reductions[r].name) == 0 && op->opset >= reductions[r].since) {
      *reduction = reductions[r].reduction;
      return true;
    }
  return false;
}

/* Whether combine() takes `dtype`. */
static bool reducible(npu_dtype dtype)
{
  return dtype == NPU_DTYPE_FLOAT32 || dtype == NPU_DTYPE_FLOAT64 || dtype == NPU_DTYPE_INT32 ||
         dtype == NPU_DTYPE_INT64;
}

static npu_status create_scatter_nd(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *data = &op->inputs[0], *indices = &op->inputs[1];
  scatter_reduction reduction = SCATTER_NONE;
  if (!find_reduction(op, &reduction))
    return cpu_unsupported(op, "reduction");
  npu_dtype dtype = data->dtype;
  if (reduction != SCATTER_NONE && !reducible(dtype))
    return cpu_unsupported(op, "reductions of float32, float64, int32 and int64 only");
  if (indices->dtype != NPU_DTYPE_INT64 || indices->rank < 1 || op->inputs[2].dtype != dtype ||
      npu_dtype_size(dtype) == 0)
    return cpu_unsupported(op, "int64 indices and updates of the data's type");
  scatter_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->reduction = reduction;
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

/* ---- GatherElements, ScatterElements ------------------------------------------------ */

/* Indices of the data's rank, no larger on any axis but `axis` (shape
 * inference checked): index element e at coordinates c addresses the data
 * at c with c[axis] replaced by the index. */
typedef struct elements_params {
  uint32_t rank, axis;
  int64_t dims[NPU_MAX_RANK];         /* of the indices */
  int64_t data_strides[NPU_MAX_RANK]; /* in elements */
  int64_t axis_size;                  /* of the data */
  npu_dtype index_dtype, dtype;
  size_t esize, count;                /* count: index elements */
  size_t total;                       /* data's elements */
  scatter_reduction reduction;        /* ScatterElements */
} elements_params;

/* The data positions of index elements [begin, end) into positions[];
 * false at the first out-of-range index, *bad its element. */
static bool element_positions(const elements_params *p, const void *indices, size_t begin,
                              size_t end, int64_t *positions, size_t *bad)
{
  int64_t coords[NPU_MAX_RANK], base = 0; /* base: the position less the axis' part */
  size_t rest = begin;
  for (uint32_t d = p->rank; d-- > 0;) {
    coords[d] = (int64_t)(rest % (size_t)p->dims[d]);
    rest /= (size_t)p->dims[d];
    if (d != p->axis)
      base += coords[d] * p->data_strides[d];
  }
  for (size_t e = begin; e < end; e++) {
    int64_t i = index_at(indices, p->index_dtype, e);
    if (i < 0)
      i += p->axis_size;
    if (i < 0 || i >= p->axis_size) {
      *bad = e;
      return false;
    }
    positions[e - begin] = base + i * p->data_strides[p->axis];
    for (uint32_t d = p->rank; d-- > 0;) { /* to the next coordinates */
      int64_t stride = d == p->axis ? 0 : p->data_strides[d];
      if (++coords[d] < p->dims[d]) {
        base += stride;
        break;
      }
      base -= (coords[d] - 1) * stride;
      coords[d] = 0;
    }
  }
  return true;
}

static void fail_index(const npu_hal_kernel *k, const void *indices, npu_dtype dtype,
                       size_t element)
{
  cpu_kernel_fail(k, NPU_ERROR_INVALID_ARGUMENT, "index %lld (element %zu of the indices) is out "
                  "of range", (long long)index_at(indices, dtype, element), element);
}

#define POSITIONS_PER_TASK 1024

/* GatherElements' and GatherND's work: params their own. */
typedef struct gather_job {
  const void *p;
  const void *indices;
  const uint8_t *data;
  uint8_t *out;
  bad_index bad;
} gather_job;

static void gather_elements_task(void *ctx, size_t task)
{
  gather_job *job = ctx;
  const elements_params *p = job->p;
  int64_t positions[POSITIONS_PER_TASK];
  size_t begin = task * POSITIONS_PER_TASK;
  size_t end = begin + POSITIONS_PER_TASK < p->count ? begin + POSITIONS_PER_TASK : p->count;
  size_t bad = end;
  if (!element_positions(p, job->indices, begin, end, positions, &bad))
    note_bad_index(&job->bad, bad);
  for (size_t e = begin; e < bad; e++)
    memcpy(job->out + e * p->esize, job->data + (size_t)positions[e - begin] * p->esize,
           p->esize);
  if (bad < end)
    memset(job->out + bad * p->esize, 0, (end - bad) * p->esize);
}

static void run_gather_elements(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const elements_params *p = k->params;
  gather_job job = {p, in[1], in[0], out[0], {0, 0}};
  npu_cpu_parallel_for(k->device, (p->count + POSITIONS_PER_TASK - 1) / POSITIONS_PER_TASK,
                       gather_elements_task, &job);
  if (job.bad.found)
    fail_index(k, in[1], p->index_dtype, job.bad.element);
}

static void run_scatter_elements(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const elements_params *p = k->params;
  int64_t *positions = out[k->output_count]; /* the workspace: one per update */
  size_t bad;
  if (!element_positions(p, in[1], 0, p->count, positions, &bad)) {
    fail_index(k, in[1], p->index_dtype, bad);
    return;
  }
  uint8_t *y = out[0];
  const uint8_t *updates = in[2];
  if (y != (const uint8_t *)in[0] && p->total)
    memcpy(y, in[0], p->total * p->esize);
  for (size_t e = 0; e < p->count; e++) {
    uint8_t *to = y + (size_t)positions[e] * p->esize;
    if (p->reduction == SCATTER_NONE)
      memcpy(to, updates + e * p->esize, p->esize);
    else
      combine(p->reduction, p->dtype, to, updates + e * p->esize, 1);
  }
}

static npu_status create_elements(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *data = &op->inputs[0], *indices = &op->inputs[1];
  bool gather = strcmp(op->op_type, "GatherElements") == 0;
  scatter_reduction reduction = SCATTER_NONE;
  if (!gather && !find_reduction(op, &reduction))
    return cpu_unsupported(op, "reduction");
  if (reduction != SCATTER_NONE && !reducible(data->dtype))
    return cpu_unsupported(op, "reductions of float32, float64, int32 and int64 only");
  size_t esize = npu_dtype_size(data->dtype);
  if (esize == 0)
    return cpu_unsupported(op, "element type");
  elements_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->rank = indices->rank;
  p->axis = op->axes->axes[0];
  memcpy(p->dims, indices->dims, sizeof p->dims);
  cpu_strides(data, p->data_strides);
  p->axis_size = data->dims[p->axis];
  p->index_dtype = indices->dtype;
  p->dtype = data->dtype;
  p->esize = esize;
  p->count = cpu_tensor_elements(indices);
  p->total = cpu_tensor_elements(data);
  p->reduction = reduction;
  if (!gather)
    k->workspace_bytes = p->count * sizeof(int64_t);
  k->run = gather ? run_gather_elements : run_scatter_elements;
  return NPU_OK;
}

/* ---- GatherND ------------------------------------------------------------------------ */

typedef struct gather_nd_params {
  uint32_t tuple_length;       /* k */
  int64_t dims[NPU_MAX_RANK];  /* of the data after the batch axes */
  size_t tuples;               /* in all */
  size_t tuples_per_batch;
  size_t batch_bytes;          /* of the data per batch item */
  size_t slice_bytes;          /* what one tuple addresses */
  size_t tuples_per_task;
} gather_nd_params;

static void gather_nd_task(void *ctx, size_t task)
{
  gather_job *job = ctx;
  const gather_nd_params *p = job->p;
  const int64_t *indices = job->indices;
  size_t first = task * p->tuples_per_task;
  size_t last = first + p->tuples_per_task < p->tuples ? first + p->tuples_per_task : p->tuples;
  for (size_t t = first; t < last; t++) {
    int64_t position;
    uint32_t axis;
    uint8_t *to = job->out + t * p->slice_bytes;
    if (!npu_index_tuple_position(indices + t * p->tuple_length, p->tuple_length, p->dims,
                                  &position, &axis)) {
      note_bad_index(&job->bad, t * p->tuple_length + axis);
      memset(to, 0, p->slice_bytes);
      continue;
    }
    memcpy(to, job->data + t / p->tuples_per_batch * p->batch_bytes +
                   (size_t)position * p->slice_bytes,
           p->slice_bytes);
  }
}

static void run_gather_nd(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const gather_nd_params *p = k->params;
  gather_job job = {p, in[1], in[0], out[0], {0, 0}};
  npu_cpu_parallel_for(k->device, (p->tuples + p->tuples_per_task - 1) / p->tuples_per_task,
                       gather_nd_task, &job);
  if (job.bad.found)
    fail_index(k, in[1], NPU_DTYPE_INT64, job.bad.element);
}

static npu_status create_gather_nd(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *data = &op->inputs[0], *indices = &op->inputs[1];
  size_t esize = npu_dtype_size(data->dtype);
  if (esize == 0 || indices->dtype != NPU_DTYPE_INT64)
    return cpu_unsupported(op, "int64 indices");
  gather_nd_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  /* (Shape inference checked: 0 <= batch < both ranks, 1 <= k <= the data's rank - batch,
   * and indices and data agree on the batch axes.) */
  uint32_t batch = (uint32_t)op->attributes.get_int(op->attributes.node, "batch_dims", 0);
  p->tuple_length = (uint32_t)indices->dims[indices->rank - 1];
  size_t batches = 1, slice = 1, batch_elements = 1;
  for (uint32_t d = 0; d < batch; d++)
    batches *= (size_t)data->dims[d];
  for (uint32_t d = batch; d < data->rank; d++) {
    batch_elements *= (size_t)data->dims[d];
    if (d >= batch + p->tuple_length)
      slice *= (size_t)data->dims[d];
  }
  memcpy(p->dims, data->dims + batch, (data->rank - batch) * sizeof p->dims[0]);
  p->tuples = cpu_tensor_elements(indices) / p->tuple_length;
  p->tuples_per_batch = batches ? p->tuples / batches : 1;
  if (p->tuples_per_batch == 0)
    p->tuples_per_batch = 1; /* (no tuples at all) */
  p->batch_bytes = batch_elements * esize;
  p->slice_bytes = slice * esize;
  p->tuples_per_task = cpu_rows_per_task(slice);
  k->run = run_gather_nd;
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
    {"ScatterElements", create_elements},
    {"Scatter", create_elements},
    {"GatherElements", create_elements},
    {"GatherND", create_gather_nd},
    {"MaxUnpool", create_max_unpool},
    {NULL, NULL},
};
