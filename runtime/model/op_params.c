/* Resolving an operator's axes and ranges (see op_params.h); windows are
 * window.c's. */
#include <string.h>

#include "npu_checked.h"
#include "op_params.h"
#include "window.h"

#define FAIL(...) npu_set_error(NPU_ERROR_INVALID_MODEL, __VA_ARGS__)

static int64_t attr_int(const npu_hal_op *op, const char *name, int64_t fallback)
{
  return op->attributes.get_int(op->attributes.node, name, fallback);
}

static size_t attr_ints(const npu_hal_op *op, const char *name, const int64_t **values)
{
  return op->attributes.get_ints(op->attributes.node, name, values);
}

/* `axis` counted from the end when negative; false when outside [0, limit). */
static bool normalise(int64_t *axis, int64_t rank, int64_t limit)
{
  if (*axis < 0)
    *axis += rank;
  return *axis >= 0 && *axis < limit;
}

/* The model's list of axes: attribute `axes` (older opsets) or input 1 (a
 * constant: the schema says so). */
static size_t listed_axes(const npu_hal_op *op, int64_t *axes)
{
  const int64_t *attr;
  size_t n = attr_ints(op, "axes", &attr); /* (at most NPU_MAX_RANK: checked) */
  if (n) {
    memcpy(axes, attr, n * sizeof *axes);
    return n;
  }
  if (!npu_op_has_input(op, 1))
    return 0;
  n = npu_op_elements(&op->inputs[1]);
  for (size_t i = 0; i < n; i++)
    axes[i] = npu_op_index_value(op, 1, i);
  return n;
}

/* A set of axes of a tensor of `rank`, in increasing order; repeated ones
 * and those out of range are errors (`use`: what is done to them). */
static npu_status axis_set(const int64_t *given, size_t count, uint32_t rank, const char *use,
                           npu_hal_axes *axes, const char *label)
{
  bool marked[NPU_MAX_RANK] = {false};
  for (size_t i = 0; i < count; i++) {
    int64_t a = given[i];
    if (!normalise(&a, rank, rank) || marked[a])
      return FAIL("%s: axis %lld cannot be %s (out of range for rank %u, or repeated)", label,
                  (long long)given[i], use, rank);
    marked[a] = true;
  }
  axes->count = 0;
  for (uint32_t d = 0; d < rank; d++)
    if (marked[d])
      axes->axes[axes->count++] = d;
  return NPU_OK;
}

static npu_status resolve_axes(const npu_axes_rule *rule, const npu_hal_op *op,
                               npu_hal_axes *axes, const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  int64_t listed[NPU_MAX_RANK];
  size_t count;
  memset(axes, 0, sizeof *axes);
  switch (rule->form) {
  case NPU_AXES_ONE:
  case NPU_AXES_FLATTEN: {
    int64_t fallback = rule->last_from_opset_13 && op->opset >= 13 ? -1 : rule->axis;
    int64_t axis = attr_int(op, "axis", fallback);
    int64_t limit = rule->form == NPU_AXES_FLATTEN ? (int64_t)x->rank + 1 : x->rank;
    if (!normalise(&axis, x->rank, limit))
      return FAIL("%s: axis %lld out of range for rank %u", label,
                  (long long)attr_int(op, "axis", fallback), x->rank);
    axes->count = 1;
    axes->axes[0] = (uint32_t)axis;
    return NPU_OK;
  }
  case NPU_AXES_REDUCED:
    count = listed_axes(op, listed);
    if (count)
      return axis_set(listed, count, x->rank, "reduced", axes, label);
    if (!attr_int(op, "noop_with_empty_axes", 0))
      for (uint32_t d = 0; d < x->rank; d++)
        axes->axes[axes->count++] = d;
    return NPU_OK;
  case NPU_AXES_NORMALIZED: {
    static const int64_t across_channels[] = {0, 2, 3}; /* ONNX's default */
    count = listed_axes(op, listed);
    return axis_set(count ? listed : across_channels, count ? count : 3, x->rank, "normalised",
                    axes, label);
  }
  case NPU_AXES_SQUEEZED: {
    count = listed_axes(op, listed);
    if (!count) {
      for (uint32_t d = 0; d < x->rank; d++)
        if (x->dims[d] == 1)
          axes->axes[axes->count++] = d;
      return NPU_OK;
    }
    npu_status status = axis_set(listed, count, x->rank, "squeezed", axes, label);
    for (uint32_t i = 0; i < axes->count && status == NPU_OK; i++)
      if (x->dims[axes->axes[i]] != 1)
        status = FAIL("%s: axis %u of size %lld cannot be squeezed", label, axes->axes[i],
                      (long long)x->dims[axes->axes[i]]);
    return status;
  }
  case NPU_AXES_INSERTED:
    count = listed_axes(op, listed);
    if (x->rank + count > NPU_MAX_RANK)
      return FAIL("%s: rank beyond %d", label, NPU_MAX_RANK);
    return axis_set(listed, count, x->rank + (uint32_t)count, "inserted", axes, label);
  case NPU_AXES_PERMUTED: {
    const int64_t *perm;
    size_t n = attr_ints(op, "perm", &perm); /* (none or the rank: checked) */
    bool taken[NPU_MAX_RANK] = {false};
    for (uint32_t d = 0; d < x->rank; d++) {
      int64_t a = n ? perm[d] : (int64_t)(x->rank - 1 - d);
      if (a < 0 || a >= (int64_t)x->rank || taken[a])
        return FAIL("%s: perm is not a permutation of the axes", label);
      taken[a] = true;
      axes->axes[axes->count++] = (uint32_t)a;
    }
    return NPU_OK;
  }
  case NPU_AXES_NONE: break;
  }
  return NPU_OK;
}

/* Pad: pads from the attribute (opset < 11) or input 1. */
static npu_status resolve_pad(const npu_hal_op *op, npu_hal_ranges *r, const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  const int64_t *attr;
  size_t n = op->opset < 11 ? attr_ints(op, "pads", &attr) : npu_op_elements(&op->inputs[1]);
  if (op->opset >= 11 && npu_op_has_input(op, 3))
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: the axes input", label);
  if (n != 2 * x->rank)
    return FAIL("%s: %zu pads for rank %u", label, n, x->rank);
  for (uint32_t d = 0; d < x->rank; d++) {
    r->begin[d] = op->opset < 11 ? attr[d] : npu_op_index_value(op, 1, d);
    r->end[d] = op->opset < 11 ? attr[d + x->rank] : npu_op_index_value(op, 1, d + x->rank);
    if (r->begin[d] < -x->dims[d] || r->end[d] < -x->dims[d])
      return FAIL("%s: a pad on axis %u removes more than the axis", label, d);
  }
  return NPU_OK;
}

/* Slice: starts, ends and axes from attributes (opset < 10), or starts,
 * ends, axes and steps from inputs 1 to 4; bounds clamped as ONNX does. */
static npu_status resolve_slice(const npu_hal_op *op, npu_hal_ranges *r, const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  for (uint32_t d = 0; d < x->rank; d++) {
    r->end[d] = x->dims[d];
    r->step[d] = 1;
  }
  const int64_t *attr_starts = NULL, *attr_ends = NULL, *attr_axes = NULL;
  size_t count;
  if (op->opset < 10) {
    count = attr_ints(op, "starts", &attr_starts);
    if (attr_ints(op, "ends", &attr_ends) != count)
      return FAIL("%s: starts and ends differ in length", label);
    if (attr_ints(op, "axes", &attr_axes) != count)
      attr_axes = NULL;
  } else {
    count = npu_op_elements(&op->inputs[1]);
    if (npu_op_elements(&op->inputs[2]) != count)
      return FAIL("%s: starts and ends differ in length", label);
  }
  bool has_axes = op->opset >= 10 && npu_op_has_input(op, 3), has_steps = op->opset >= 10 && npu_op_has_input(op, 4);
  for (size_t i = 0; i < count; i++) {
    int64_t axis = attr_axes ? attr_axes[i] : has_axes ? npu_op_index_value(op, 3, i) : (int64_t)i;
    if (!normalise(&axis, x->rank, x->rank))
      return FAIL("%s: slice axis out of range", label);
    int64_t dim = x->dims[axis];
    int64_t start = attr_starts ? attr_starts[i] : npu_op_index_value(op, 1, i);
    int64_t end = attr_ends ? attr_ends[i] : npu_op_index_value(op, 2, i);
    int64_t step = has_steps ? npu_op_index_value(op, 4, i) : 1;
    if (step == 0)
      return FAIL("%s: slice step 0", label);
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? dim : dim - 1;
    r->begin[axis] = start < 0 ? 0 : start > hi ? hi : start;
    r->end[axis] = end < lo ? lo : end > hi ? hi : end;
    r->step[axis] = step;
  }
  return NPU_OK;
}

npu_status npu_op_params_attach(const npu_op_schema *schema, npu_hal_op *op,
                                npu_op_params *params, const char *label)
{
  npu_status status = NPU_OK;
  if (npu_window_op(op->op_type)) {
    status = npu_window_resolve(op, &params->window, label);
    op->window = &params->window;
  }
  if (status == NPU_OK && schema->axes.form != NPU_AXES_NONE) {
    status = resolve_axes(&schema->axes, op, &params->axes, label);
    op->axes = &params->axes;
  }
  if (status == NPU_OK && schema->ranges != NPU_RANGES_NONE) {
    memset(&params->ranges, 0, sizeof params->ranges);
    status = schema->ranges == NPU_RANGES_PAD ? resolve_pad(op, &params->ranges, label)
                                              : resolve_slice(op, &params->ranges, label);
    op->ranges = &params->ranges;
  }
  return status;
}
