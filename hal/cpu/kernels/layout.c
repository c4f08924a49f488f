/* Data-movement kernels: copies (Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity), Dropout at inference, Transpose, Concat, Split, Slice, Gather,
 * ConstantOfShape, Range. Element size is all they need to know of the type. */
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "npu_checked.h"

static size_t element_size(const npu_hal_tensor_desc *t)
{
  return npu_dtype_size(t->dtype);
}

/* ---- copies ------------------------------------------------------------------ */

static void run_copy(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  size_t bytes = cpu_tensor_elements(&k->outputs[0]) * element_size(&k->outputs[0]);
  if (out[0] != in[0])
    memmove(out[0], in[0], bytes);
}

static npu_status create_copy(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (cpu_tensor_elements(&op->inputs[0]) != cpu_tensor_elements(&op->outputs[0]))
    return cpu_unsupported(op, "element counts differ");
  k->run = run_copy;
  return NPU_OK;
}

/* Dropout at inference: the data passes unchanged and the optional mask is
 * all true. Training mode would draw random numbers: refused. */
static void run_dropout(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  run_copy(k, in, out);
  if (k->output_count > 1 && out[1])
    memset(out[1], 1, cpu_tensor_elements(&k->outputs[1]));
}

static npu_status create_dropout(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED) {
    const uint8_t *training = op->input_values[2];
    if (!training)
      return cpu_unsupported(op, "training_mode given at run time");
    if (*training)
      return cpu_unsupported(op, "training mode (random dropout) is not an inference operation");
  }
  k->run = run_dropout;
  return NPU_OK;
}

/* ---- Transpose ------------------------------------------------------------------ */

/* The trailing output axes that are also contiguous, in the same order, in
 * the input are copied as one run (a whole row when the last axis stays
 * last); the other axes are walked as an odometer. */
typedef struct transpose_params {
  uint32_t rank;                           /* the odometer's axes */
  int64_t out_dims[NPU_MAX_RANK];
  int64_t in_strides_by_out[NPU_MAX_RANK]; /* input stride of each output axis */
  size_t run_bytes;                        /* copied at each step */
} transpose_params;

static void run_transpose(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const transpose_params *p = k->params;
  size_t element = element_size(&k->outputs[0]);
  size_t bytes = cpu_tensor_elements(&k->outputs[0]) * element;
  if (bytes == 0)
    return; /* (an empty axis: no run to copy) */
  size_t steps = bytes / p->run_bytes;
  int64_t idx[NPU_MAX_RANK] = {0};
  int64_t src = 0;
  const uint8_t *from = in[0];
  uint8_t *to = out[0];
  for (size_t i = 0; i < steps; i++) {
    memcpy(to + i * p->run_bytes, from + (size_t)src * element, p->run_bytes);
    for (int d = (int)p->rank - 1; d >= 0; d--) { /* odometer increment */
      src += p->in_strides_by_out[d];
      if (++idx[d] < p->out_dims[d])
        break;
      src -= p->in_strides_by_out[d] * p->out_dims[d];
      idx[d] = 0;
    }
  }
}

static npu_status create_transpose(const npu_hal_op *op, npu_hal_kernel *k)
{
  transpose_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  const npu_hal_tensor_desc *in = &op->inputs[0];
  p->rank = in->rank;
  int64_t strides[NPU_MAX_RANK];
  cpu_strides(in, strides);
  const int64_t *perm;
  size_t n = op->attributes.get_ints(op->attributes.node, "perm", &perm);
  for (uint32_t d = 0; d < p->rank; d++) {
    int64_t axis = n == p->rank ? perm[d] : (int64_t)(p->rank - 1 - d);
    if (axis < 0 || axis >= (int64_t)p->rank)
      return cpu_unsupported(op, "perm out of range");
    p->out_dims[d] = in->dims[axis];
    p->in_strides_by_out[d] = strides[axis];
  }
  size_t run = 1;
  while (p->rank > 0 && p->in_strides_by_out[p->rank - 1] == (int64_t)run)
    run *= (size_t)p->out_dims[--p->rank];
  p->run_bytes = run * element_size(in);
  k->run = run_transpose;
  return NPU_OK;
}

/* ---- Concat and Split: blocks along one axis ---------------------------------------- */

typedef struct axis_params {
  size_t outer;     /* product of dims before the axis */
  size_t inner;     /* product of dims after it, times the element size */
  int64_t axis;
} axis_params;

static npu_status axis_of(const npu_hal_op *op, const npu_hal_tensor_desc *t, axis_params **out)
{
  axis_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  int64_t axis = op->attributes.get_int(op->attributes.node, "axis", 0);
  if (axis < 0)
    axis += t->rank;
  if (axis < 0 || axis >= (int64_t)t->rank) {
    free(p);
    return cpu_unsupported(op, "axis out of range");
  }
  p->axis = axis;
  p->outer = 1;
  p->inner = element_size(t);
  /* Channels-last along the channels: the channels are the innermost axis,
   * every other axis outer to them. (Channel blocks take the plain loops.) */
  bool innermost = t->layout == NPU_HAL_LAYOUT_CHANNELS_LAST && axis == 1;
  for (int64_t d = 0; d < (int64_t)t->rank; d++) {
    if (d < axis || (innermost && d > axis))
      p->outer *= (size_t)t->dims[d];
    else if (d > axis)
      p->inner *= (size_t)t->dims[d];
  }
  *out = p;
  return NPU_OK;
}

/* Concat needs more than 8 input descriptors: keep each input's axis length. */
typedef struct concat_params {
  axis_params axis;
  uint32_t count;
  int64_t lengths[];
} concat_params;

static void run_concat(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const concat_params *p = k->params;
  size_t out_row = (size_t)k->outputs[0].dims[p->axis.axis] * p->axis.inner;
  uint8_t *to = out[0];
  size_t at = 0;
  for (uint32_t i = 0; i < p->count; i++) {
    size_t block = (size_t)p->lengths[i] * p->axis.inner;
    for (size_t o = 0; o < p->axis.outer; o++)
      memcpy(to + o * out_row + at, (const uint8_t *)in[i] + o * block, block);
    at += block;
  }
}

static npu_status create_concat(const npu_hal_op *op, npu_hal_kernel *k)
{
  axis_params *axis;
  npu_status status = axis_of(op, &op->outputs[0], &axis);
  if (status != NPU_OK)
    return status;
  concat_params *p = calloc(1, sizeof *p + op->input_count * sizeof(int64_t));
  if (!p) {
    free(axis);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  p->axis = *axis;
  free(axis);
  p->count = op->input_count;
  for (uint32_t i = 0; i < op->input_count; i++)
    p->lengths[i] = op->inputs[i].dims[p->axis.axis];
  k->params = p;
  k->run = run_concat;
  return NPU_OK;
}

static void run_split(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const axis_params *p = k->params;
  size_t in_row = (size_t)k->inputs[0].dims[p->axis] * p->inner;
  size_t at = 0;
  for (uint32_t i = 0; i < k->output_count; i++) {
    size_t block = (size_t)k->outputs[i].dims[p->axis] * p->inner;
    if (block == 0)
      continue; /* an empty output has no buffer to offset */
    for (size_t o = 0; o < p->outer; o++)
      memcpy((uint8_t *)out[i] + o * block, (const uint8_t *)in[0] + o * in_row + at, block);
    at += block;
  }
}

static npu_status create_split(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->output_count > 8)
    return cpu_unsupported(op, "more than 8 outputs");
  axis_params *p;
  npu_status status = axis_of(op, &op->inputs[0], &p);
  if (status != NPU_OK)
    return status;
  k->params = p;
  k->run = run_split;
  return NPU_OK;
}

/* ---- Slice (steps of any sign) ------------------------------------------------------ */

/* Like Transpose: the trailing axes that stay contiguous (step 1, and whole
 * axes inside the first partial one) are copied as one run; the other axes
 * are walked as an odometer of input strides. */
typedef struct slice_params {
  uint32_t rank;
  int64_t out_dims[NPU_MAX_RANK];
  int64_t start[NPU_MAX_RANK], step[NPU_MAX_RANK];
  int64_t in_strides[NPU_MAX_RANK];
  size_t esize;
  uint32_t walk_rank;        /* the odometer's axes, outermost first */
  int64_t first;             /* the first element read */
  size_t run_bytes;          /* copied at each step */
} slice_params;

static void run_slice(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const slice_params *p = k->params;
  size_t bytes = cpu_tensor_elements(&k->outputs[0]) * p->esize;
  if (bytes == 0)
    return;
  size_t steps = bytes / p->run_bytes;
  int64_t idx[NPU_MAX_RANK] = {0};
  int64_t src = p->first;
  const uint8_t *from = in[0];
  uint8_t *to = out[0];
  for (size_t i = 0; i < steps; i++) {
    memcpy(to + i * p->run_bytes, from + (size_t)src * p->esize, p->run_bytes);
    for (int d = (int)p->walk_rank - 1; d >= 0; d--) { /* odometer increment */
      int64_t stride = p->step[d] * p->in_strides[d];
      src += stride;
      if (++idx[d] < p->out_dims[d])
        break;
      src -= stride * p->out_dims[d];
      idx[d] = 0;
    }
  }
}

/* The trailing contiguous run and the first element, once the slice is known. */
static void plan_slice_walk(slice_params *p, const npu_hal_tensor_desc *in)
{
  p->first = 0;
  for (uint32_t d = 0; d < p->rank; d++)
    p->first += p->start[d] * p->in_strides[d];
  size_t run = 1;
  p->walk_rank = p->rank;
  while (p->walk_rank > 0 && p->step[p->walk_rank - 1] == 1) {
    uint32_t d = --p->walk_rank;
    run *= (size_t)p->out_dims[d];
    if (p->out_dims[d] != in->dims[d])
      break; /* a part of this axis: the axes outside it are no longer contiguous */
  }
  p->run_bytes = run * p->esize;
}

/* Reads int64 or int32 index values. */
static int64_t index_value(const npu_hal_tensor_desc *t, const void *data, size_t i)
{
  return t->dtype == NPU_DTYPE_INT32 ? ((const int32_t *)data)[i] : ((const int64_t *)data)[i];
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

static npu_status create_slice(const npu_hal_op *op, npu_hal_kernel *k)
{
  slice_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  const npu_hal_tensor_desc *in = &op->inputs[0];
  p->rank = in->rank;
  p->esize = element_size(in);
  cpu_strides(in, p->in_strides);
  for (uint32_t d = 0; d < p->rank; d++) {
    p->start[d] = 0;
    p->step[d] = 1;
    p->out_dims[d] = in->dims[d];
  }
  /* starts, ends, axes, steps: attributes before opset 10, constant inputs after. */
  const int64_t *attr_starts = NULL, *attr_ends = NULL, *attr_axes = NULL;
  size_t count;
  const void *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL;
  if (op->opset < 10) {
    count = op->attributes.get_ints(op->attributes.node, "starts", &attr_starts);
    op->attributes.get_ints(op->attributes.node, "ends", &attr_ends);
    if (op->attributes.get_ints(op->attributes.node, "axes", &attr_axes) != count)
      attr_axes = NULL;
  } else {
    for (uint32_t i = 1; i < op->input_count; i++)
      if (op->inputs[i].dtype != NPU_DTYPE_UNDEFINED && !op->input_values[i])
        return cpu_unsupported(op, "starts/ends/axes/steps must be constants");
    count = cpu_tensor_elements(&op->inputs[1]);
    starts = op->input_values[1];
    ends = op->input_values[2];
    axes = op->input_count > 3 && op->inputs[3].dtype ? op->input_values[3] : NULL;
    steps = op->input_count > 4 && op->inputs[4].dtype ? op->input_values[4] : NULL;
  }
  for (size_t i = 0; i < count; i++) {
    int64_t axis = attr_axes ? attr_axes[i] : axes ? index_value(&op->inputs[3], axes, i) : (int64_t)i;
    if (axis < 0)
      axis += p->rank;
    if (axis < 0 || axis >= (int64_t)p->rank)
      return cpu_unsupported(op, "axis out of range");
    int64_t dim = in->dims[axis];
    int64_t start = attr_starts ? attr_starts[i] : index_value(&op->inputs[1], starts, i);
    int64_t end = attr_ends ? attr_ends[i] : index_value(&op->inputs[2], ends, i);
    int64_t step = steps ? index_value(&op->inputs[4], steps, i) : 1;
    if (step == 0)
      return cpu_unsupported(op, "step 0");
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (step > 0) {
      start = clamp64(start, 0, dim);
      end = clamp64(end, 0, dim);
    } else {
      start = clamp64(start, 0, dim - 1);
      end = clamp64(end, -1, dim - 1);
    }
    p->start[axis] = start;
    p->step[axis] = step;
    p->out_dims[axis] = npu_strided_count(start, end, step);
  }
  for (uint32_t d = 0; d < p->rank; d++)
    if (p->out_dims[d] != op->outputs[0].dims[d])
      return cpu_unsupported(op, "output shape does not match the slice");
  plan_slice_walk(p, in);
  k->run = run_slice;
  return NPU_OK;
}

/* ---- Gather ----------------------------------------------------------------------- */

typedef struct gather_params {
  axis_params axis;
  int64_t axis_length;
  size_t index_count;
} gather_params;

static void run_gather(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const gather_params *p = k->params;
  const uint8_t *data = in[0];
  uint8_t *to = out[0];
  size_t in_row = (size_t)p->axis_length * p->axis.inner;
  for (size_t o = 0; o < p->axis.outer; o++)
    for (size_t j = 0; j < p->index_count; j++) {
      int64_t index = index_value(&k->inputs[1], in[1], j);
      if (index < 0)
        index += p->axis_length;
      index = clamp64(index, 0, p->axis_length - 1); /* out of range: clamped, never read past */
      memcpy(to + (o * p->index_count + j) * p->axis.inner,
             data + o * in_row + (size_t)index * p->axis.inner, p->axis.inner);
    }
}

static npu_status create_gather(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->inputs[1].dtype != NPU_DTYPE_INT64 && op->inputs[1].dtype != NPU_DTYPE_INT32)
    return cpu_unsupported(op, "indices must be int32 or int64");
  axis_params *axis;
  npu_status status = axis_of(op, &op->inputs[0], &axis);
  if (status != NPU_OK)
    return status;
  gather_params *p = calloc(1, sizeof *p);
  if (!p) {
    free(axis);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  p->axis = *axis;
  free(axis);
  p->axis_length = op->inputs[0].dims[p->axis.axis];
  p->index_count = cpu_tensor_elements(&op->inputs[1]);
  k->params = p;
  k->run = run_gather;
  return NPU_OK;
}

/* ---- ConstantOfShape ----------------------------------------------------------------- */

static void run_constant_of_shape(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  (void)in;
  size_t esize = element_size(&k->outputs[0]), n = cpu_tensor_elements(&k->outputs[0]);
  for (size_t i = 0; i < n; i++)
    memcpy((uint8_t *)out[0] + i * esize, k->params, esize);
}

static npu_status create_constant_of_shape(const npu_hal_op *op, npu_hal_kernel *k)
{
  /* `value` is a one-element tensor attribute (default float 0). */
  const npu_hal_attributes *a = &op->attributes;
  uint8_t *fill = calloc(1, 8);
  if (!fill)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = fill;
  switch (op->outputs[0].dtype) {
  case NPU_DTYPE_FLOAT32: *(float *)fill = a->get_float(a->node, "value", 0.0f); break;
  case NPU_DTYPE_INT64: *(int64_t *)fill = a->get_int(a->node, "value", 0); break;
  case NPU_DTYPE_INT32: *(int32_t *)fill = (int32_t)a->get_int(a->node, "value", 0); break;
  case NPU_DTYPE_UINT8: case NPU_DTYPE_BOOL: *fill = (uint8_t)a->get_int(a->node, "value", 0); break;
  default: return cpu_unsupported(op, "unsupported element type");
  }
  k->run = run_constant_of_shape;
  return NPU_OK;
}

/* ---- Range ------------------------------------------------------------------------ */

static void run_range(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  size_t n = cpu_tensor_elements(&k->outputs[0]);
  switch (k->outputs[0].dtype) {
  case NPU_DTYPE_FLOAT32: {
    float start = *(const float *)in[0], delta = *(const float *)in[2];
    for (size_t i = 0; i < n; i++)
      ((float *)out[0])[i] = start + (float)i * delta;
    break;
  }
  case NPU_DTYPE_INT32: { /* unsigned steps: i * delta may pass the type's range, the sum not */
    int32_t start = *(const int32_t *)in[0], delta = *(const int32_t *)in[2];
    for (size_t i = 0; i < n; i++)
      ((int32_t *)out[0])[i] = (int32_t)((uint32_t)start + (uint32_t)i * (uint32_t)delta);
    break;
  }
  default: {
    int64_t start = *(const int64_t *)in[0], delta = *(const int64_t *)in[2];
    for (size_t i = 0; i < n; i++)
      ((int64_t *)out[0])[i] = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta);
  }
  }
}

static npu_status create_range(const npu_hal_op *op, npu_hal_kernel *k)
{
  npu_dtype t = op->inputs[0].dtype;
  if (t != NPU_DTYPE_FLOAT32 && t != NPU_DTYPE_INT32 && t != NPU_DTYPE_INT64)
    return cpu_unsupported(op, "float32, int32 or int64 bounds");
  k->run = run_range;
  return NPU_OK;
}

const cpu_kernel_entry cpu_layout_kernels[] = {
    {"Identity", create_copy}, {"Reshape", create_copy}, {"Flatten", create_copy},
    {"Squeeze", create_copy}, {"Unsqueeze", create_copy}, {"Dropout", create_dropout},
    {"Transpose", create_transpose}, {"Concat", create_concat, CPU_LAYOUTS_CHANNEL_AXIS},
    {"Split", create_split, CPU_LAYOUTS_CHANNEL_AXIS},
    {"Slice", create_slice}, {"Gather", create_gather},
    {"ConstantOfShape", create_constant_of_shape}, {"Range", create_range},
    {NULL, NULL},
};
