/* Output-shape functions, one per kind of operator (see shape_inference.h):
 * each schema entry names its own (op_schema.c). */
#include <math.h>
#include <string.h>

#include "npu_checked.h"
#include "npu_hal.h"
#include "shape_inference.h"

#define FAIL(...) npu_set_error(NPU_ERROR_INVALID_MODEL, __VA_ARGS__)
/* Output dimensions are computed with checked arithmetic (attribute and
 * constant values are the model's choice); an overflow is this error. */
#define TOO_LARGE(label) FAIL("%s: shape too large (its arithmetic overflows)", label)
/* Positions a pooling window may have (a 4096 x 4096 window), and a
 * pooling may visit in all (2^40: minutes on a CPU). */
#define MAX_POOLING_WINDOW (INT64_C(1) << 24)
#define MAX_POOLING_WORK (INT64_C(1) << 40)

static int64_t attr_int(const npu_hal_op *op, const char *name, int64_t fallback)
{
  return op->attributes.get_int(op->attributes.node, name, fallback);
}

static size_t attr_ints(const npu_hal_op *op, const char *name, const int64_t **values)
{
  return op->attributes.get_ints(op->attributes.node, name, values);
}

static double scalar_of(const npu_hal_op *op, uint32_t input)
{
  const void *v = op->input_values[input];
  switch (op->inputs[input].dtype) {
  case NPU_DTYPE_FLOAT32: return *(const float *)v;
  case NPU_DTYPE_FLOAT64: return *(const double *)v;
  case NPU_DTYPE_INT32: return *(const int32_t *)v;
  default: return (double)*(const int64_t *)v;
  }
}

/* The broadcast shape of `count` tensors (numpy rules) into *out's rank and dims. */
static npu_status broadcast_shapes(const npu_hal_tensor_desc *tensors, uint32_t count,
                                   npu_hal_tensor_desc *out, const char *label)
{
  out->rank = 0;
  for (uint32_t i = 0; i < count; i++)
    if (tensors[i].rank > out->rank)
      out->rank = tensors[i].rank;
  for (uint32_t d = 0; d < out->rank; d++) {
    int64_t dim = 1;
    for (uint32_t i = 0; i < count; i++) {
      const npu_hal_tensor_desc *t = &tensors[i];
      int64_t shift = (int64_t)out->rank - t->rank;
      int64_t v = (int64_t)d < shift ? 1 : t->dims[d - shift];
      if (v != 1 && dim != 1 && v != dim)
        return FAIL("%s: shapes cannot be broadcast (%lld vs %lld on axis %u)", label,
                    (long long)dim, (long long)v, d);
      if (v != 1)
        dim = v;
    }
    out->dims[d] = dim;
  }
  return NPU_OK;
}

npu_status npu_infer_same(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  (void)op, (void)outputs, (void)label;
  return NPU_OK;
}

npu_status npu_infer_broadcast(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                               const char *label)
{
  return broadcast_shapes(op->inputs, op->input_count, &outputs[0], label);
}

npu_status npu_infer_compare(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                             const char *label)
{
  outputs[0].dtype = NPU_DTYPE_BOOL;
  return npu_infer_broadcast(op, outputs, label);
}

npu_status npu_infer_where(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  outputs[0].dtype = op->inputs[1].dtype;
  return broadcast_shapes(op->inputs, 3, &outputs[0], label);
}

/* The spatial output of a window (resolved with its output dims), and the
 * limit on pooling work. */
static npu_status window_output(const npu_hal_op *op, bool pooling, npu_hal_tensor_desc *out,
                                const char *label)
{
  const npu_hal_window *window = op->window;
  for (uint32_t s = 0; s < window->spatial; s++)
    out->dims[2 + s] = window->output[s];
  /* A pooling window visits every position of its kernel, padding included:
   * a kernel of 2^31 on a 5-pixel input (SAME padding) ran for minutes.
   * (A convolution's kernel is its weights: as large as the model file.) */
  int64_t positions = 1, work = 1; /* positions per window, and in all */
  for (uint32_t d = 0; pooling && d < out->rank; d++) {
    int64_t k = d >= 2 ? window->kernel[d - 2] : 1;
    if (!npu_mul_i64(positions, k, &positions) || !npu_mul_i64(work, out->dims[d], &work) ||
        !npu_mul_i64(work, k, &work) || positions > MAX_POOLING_WINDOW ||
        work > MAX_POOLING_WORK)
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: pooling windows larger than %lld "
                           "positions, or more than %lld in all", label,
                           (long long)MAX_POOLING_WINDOW, (long long)MAX_POOLING_WORK);
  }
  return NPU_OK;
}

npu_status npu_infer_conv(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  outputs[0].dims[1] = op->inputs[1].dims[0];
  return window_output(op, false, &outputs[0], label);
}

npu_status npu_infer_conv_transpose(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                    const char *label)
{
  if (!npu_mul_i64(op->inputs[1].dims[1], op->window->group, &outputs[0].dims[1]))
    return TOO_LARGE(label);
  return window_output(op, false, &outputs[0], label);
}

/* MaxPool's optional indices: int64, of the pooled output's shape. */
npu_status npu_infer_pool(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  npu_status status = window_output(op, true, &outputs[0], label);
  if (op->output_count > 1) {
    outputs[1] = outputs[0];
    outputs[1].dtype = NPU_DTYPE_INT64;
  }
  return status;
}

npu_status npu_infer_global_pool(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                 const char *label)
{
  (void)op, (void)label;
  for (uint32_t d = 2; d < outputs[0].rank; d++)
    outputs[0].dims[d] = 1;
  return NPU_OK;
}

npu_status npu_infer_reshape(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                             const char *label)
{
  npu_hal_tensor_desc *out = &outputs[0];
  size_t n = npu_op_elements(&op->inputs[1]), total = npu_op_elements(&op->inputs[0]), known = 1;
  if (n > NPU_MAX_RANK)
    return FAIL("%s: target rank %zu", label, n);
  int infer = -1;
  bool allow_zero = attr_int(op, "allowzero", 0) != 0;
  out->rank = (uint32_t)n;
  for (size_t i = 0; i < n; i++) {
    int64_t v = npu_op_index_value(op, 1, i);
    if (v == 0 && !allow_zero) {
      if (i >= op->inputs[0].rank)
        return FAIL("%s: 0 copies a dimension the input lacks", label);
      v = op->inputs[0].dims[i];
    }
    if (v == -1) {
      if (infer >= 0)
        return FAIL("%s: more than one -1 in the target shape", label);
      infer = (int)i;
      continue;
    }
    if (v < 0)
      return FAIL("%s: target dimension %lld", label, (long long)v);
    out->dims[i] = v;
    if (!npu_mul_size(known, (size_t)v, &known))
      return TOO_LARGE(label);
  }
  if (infer >= 0) {
    if (known == 0 || total % known)
      return FAIL("%s: cannot infer -1 for %zu elements", label, total);
    out->dims[infer] = (int64_t)(total / known);
    known = total;
  }
  if (known != total)
    return FAIL("%s: reshape of %zu elements to %zu", label, total, known);
  return NPU_OK;
}

npu_status npu_infer_slice(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  (void)label;
  const npu_hal_ranges *r = op->ranges;
  for (uint32_t d = 0; d < outputs[0].rank; d++)
    outputs[0].dims[d] = npu_strided_count(r->begin[d], r->end[d], r->step[d]);
  return NPU_OK;
}

npu_status npu_infer_pad(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  const npu_hal_ranges *r = op->ranges;
  npu_hal_tensor_desc *out = &outputs[0];
  for (uint32_t d = 0; d < out->rank; d++) {
    if (!npu_add_i64(op->inputs[0].dims[d], r->begin[d], &out->dims[d]) ||
        !npu_add_i64(out->dims[d], r->end[d], &out->dims[d]))
      return TOO_LARGE(label);
    if (out->dims[d] < 0)
      return FAIL("%s: negative size on axis %u", label, d);
  }
  return NPU_OK;
}

/* Reductions: the reduced axes kept as 1 (keepdims) or dropped. */
npu_status npu_infer_reduce(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                            const char *label)
{
  (void)label;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  npu_hal_tensor_desc *out = &outputs[0];
  bool keep = attr_int(op, "keepdims", 1) != 0;
  bool reduced[NPU_MAX_RANK] = {false};
  for (uint32_t i = 0; i < op->axes->count; i++)
    reduced[op->axes->axes[i]] = true;
  out->rank = 0;
  for (uint32_t d = 0; d < x->rank; d++) {
    if (!reduced[d])
      out->dims[out->rank++] = x->dims[d];
    else if (keep)
      out->dims[out->rank++] = 1;
  }
  return NPU_OK;
}

npu_status npu_infer_arg(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  outputs[0].dtype = NPU_DTYPE_INT64;
  return npu_infer_reduce(op, outputs, label);
}

/* Resize: from `sizes` or `scales` (opset 10 and Upsample: scales is input 1). */
npu_status npu_infer_resize(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                            const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  npu_hal_tensor_desc *out = &outputs[0];
  bool upsample = strcmp(op->op_type, "Upsample") == 0;
  uint32_t scales_input = upsample || op->opset < 11 ? 1 : 2, sizes_input = 3;
  bool has_sizes = npu_op_has_input(op, sizes_input) && npu_op_elements(&op->inputs[sizes_input]) > 0;
  uint32_t source = has_sizes ? sizes_input : scales_input;
  if (!npu_op_has_input(op, source))
    return FAIL("%s: neither scales nor sizes", label);
  if (has_sizes && op->inputs[scales_input].dtype && npu_op_elements(&op->inputs[scales_input]))
    return FAIL("%s: both scales and sizes", label); /* (kernels would take the scales) */
  /* Opset 18: the scales, sizes and roi may list some axes only (the others
   * are kept). */
  const int64_t *listed;
  int64_t axes[NPU_MAX_RANK];
  size_t count = attr_ints(op, "axes", &listed); /* (at most NPU_MAX_RANK: checked) */
  bool seen[NPU_MAX_RANK] = {false};
  for (size_t i = 0; i < count; i++) {
    axes[i] = listed[i] < 0 ? listed[i] + x->rank : listed[i];
    if (axes[i] < 0 || axes[i] >= x->rank || seen[axes[i]])
      return FAIL("%s: axis %lld out of range for rank %u, or repeated", label,
                  (long long)listed[i], x->rank);
    seen[axes[i]] = true;
  }
  for (size_t i = 0; count == 0 && i < x->rank; i++)
    axes[i] = (int64_t)i;
  count = count ? count : x->rank;
  if (npu_op_elements(&op->inputs[source]) != count)
    return FAIL("%s: %zu %s for %zu axes", label, npu_op_elements(&op->inputs[source]),
                has_sizes ? "sizes" : "scales", count);
  const char *mode = op->opset >= 11 ? op->attributes.get_string(
                                           op->attributes.node, "coordinate_transformation_mode",
                                           "half_pixel")
                                     : "";
  if (strcmp(mode, "tf_crop_and_resize") == 0 &&
      (!npu_op_has_input(op, 1) || npu_op_elements(&op->inputs[1]) != 2 * count))
    return FAIL("%s: tf_crop_and_resize without a roi of 2 x %zu values", label, count);
  const char *policy = op->attributes.get_string(op->attributes.node, "keep_aspect_ratio_policy",
                                                 "stretch");
  bool larger = strcmp(policy, "not_smaller") == 0;
  if (!larger && strcmp(policy, "not_larger") != 0 && strcmp(policy, "stretch") != 0)
    return FAIL("%s: keep_aspect_ratio_policy '%s'", label, policy);
  bool one_scale = has_sizes && strcmp(policy, "stretch") != 0;
  double shared = larger ? 0 : INFINITY; /* (one_scale: the sizes' smallest or largest ratio) */
  for (size_t i = 0; i < count && one_scale; i++) {
    double ratio = (double)npu_op_index_value(op, sizes_input, i) / (double)x->dims[axes[i]];
    shared = larger ? fmax(ratio, shared) : fmin(ratio, shared);
  }
  for (size_t i = 0; i < count; i++) {
    int64_t d = axes[i];
    if (has_sizes && !one_scale) {
      out->dims[d] = npu_op_index_value(op, sizes_input, i);
    } else { /* ONNX: floor(input * scale); one scale for the sizes: rounded half up */
      const float *scales = op->input_values[scales_input];
      double size = (double)x->dims[d] * (one_scale ? shared : (double)scales[i]);
      size = one_scale ? floor(size + 0.5) : size;
      if (!(size < 0x1p63)) /* (NaN too) */
        return TOO_LARGE(label);
      if (size < 1) /* a negative scale too: converting it would overflow */
        return FAIL("%s: empty output on axis %lld (scale %g)", label, (long long)d, size);
      out->dims[d] = (int64_t)size;
    }
    if (out->dims[d] <= 0)
      return FAIL("%s: empty output on axis %lld", label, (long long)d);
  }
  return NPU_OK;
}

npu_status npu_infer_layer_norm(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                const char *label)
{
  (void)label;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  for (uint32_t o = 1; o < op->output_count; o++) { /* mean and inverse deviation */
    outputs[o] = *x;
    for (uint32_t d = op->axes->axes[0]; d < x->rank; d++)
      outputs[o].dims[d] = 1;
  }
  return NPU_OK;
}

npu_status npu_infer_expand(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                            const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  npu_hal_tensor_desc shapes[2] = {*x, {x->dtype, (uint32_t)npu_op_elements(&op->inputs[1]), {0}}};
  if (shapes[1].rank > NPU_MAX_RANK)
    return FAIL("%s: rank beyond %d", label, NPU_MAX_RANK);
  for (uint32_t d = 0; d < shapes[1].rank; d++)
    shapes[1].dims[d] = npu_op_index_value(op, 1, d);
  return broadcast_shapes(shapes, 2, &outputs[0], label);
}

npu_status npu_infer_tile(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (npu_op_elements(&op->inputs[1]) != x->rank)
    return FAIL("%s: %zu repeats for rank %u", label, npu_op_elements(&op->inputs[1]), x->rank);
  for (uint32_t d = 0; d < x->rank; d++) {
    int64_t repeats = npu_op_index_value(op, 1, d);
    if (repeats < 0)
      return FAIL("%s: negative repeats", label);
    if (!npu_mul_i64(x->dims[d], repeats, &outputs[0].dims[d]))
      return TOO_LARGE(label);
  }
  return NPU_OK;
}

npu_status npu_infer_range(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  double start = scalar_of(op, 0), limit = scalar_of(op, 1), delta = scalar_of(op, 2);
  if (delta == 0)
    return FAIL("%s: delta is 0", label);
  double count = ceil((limit - start) / delta);
  if (count >= 0x1p63)
    return TOO_LARGE(label);
  outputs[0].rank = 1;
  outputs[0].dims[0] = count > 0 ? (int64_t)count : 0;
  return NPU_OK;
}

npu_status npu_infer_topk(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  uint32_t axis = op->axes->axes[0];
  int64_t k = npu_op_index_value(op, 1, 0);
  if (k < 0 || k > op->inputs[0].dims[axis])
    return FAIL("%s: k = %lld beyond the axis", label, (long long)k);
  outputs[0].dims[axis] = k;
  outputs[1] = outputs[0];
  outputs[1].dtype = NPU_DTYPE_INT64;
  return NPU_OK;
}

/* Inference: the data unchanged, a mask of all true. */
npu_status npu_infer_dropout(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                             const char *label)
{
  (void)label;
  if (op->output_count > 1) {
    outputs[1] = op->inputs[0];
    outputs[1].dtype = NPU_DTYPE_BOOL;
  }
  return NPU_OK;
}

npu_status npu_infer_cast_like(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                               const char *label)
{
  (void)label;
  outputs[0].dtype = op->inputs[1].dtype;
  return NPU_OK;
}

npu_status npu_infer_cast(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  outputs[0].dtype = (npu_dtype)attr_int(op, "to", NPU_DTYPE_UNDEFINED);
  return npu_dtype_size(outputs[0].dtype) ? NPU_OK
                                          : FAIL("%s: cast to an unsupported type", label);
}

npu_status npu_infer_gemm(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  (void)label;
  bool ta = attr_int(op, "transA", 0), tb = attr_int(op, "transB", 0);
  outputs[0].rank = 2;
  outputs[0].dims[0] = op->inputs[0].dims[ta ? 1 : 0];
  outputs[0].dims[1] = op->inputs[1].dims[tb ? 0 : 1];
  return NPU_OK;
}

npu_status npu_infer_matmul(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                            const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *b = &op->inputs[1];
  npu_hal_tensor_desc *y = &outputs[0];
  if (x->rank < 2 || b->rank < 2)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: 1-D MatMul operands", label);
  if (x->dims[x->rank - 1] != b->dims[b->rank - 2])
    return FAIL("%s: MatMul inner dimensions %lld and %lld differ", label,
                (long long)x->dims[x->rank - 1], (long long)b->dims[b->rank - 2]);
  npu_hal_tensor_desc batches[2] = {*x, *b}; /* broadcast the batch dimensions only */
  batches[0].rank -= 2;
  batches[1].rank -= 2;
  npu_status status = broadcast_shapes(batches, 2, y, label);
  if (status != NPU_OK)
    return status;
  y->dims[y->rank] = x->dims[x->rank - 2];
  y->dims[y->rank + 1] = b->dims[b->rank - 1];
  y->rank += 2;
  return NPU_OK;
}

npu_status npu_infer_flatten(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                             const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  int64_t outer = 1, inner = 1;
  for (uint32_t d = 0; d < x->rank; d++) {
    int64_t *part = d < op->axes->axes[0] ? &outer : &inner;
    if (!npu_mul_i64(*part, x->dims[d], part))
      return TOO_LARGE(label);
  }
  outputs[0].rank = 2;
  outputs[0].dims[0] = outer;
  outputs[0].dims[1] = inner;
  return NPU_OK;
}

npu_status npu_infer_squeeze(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                             const char *label)
{
  (void)label;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  npu_hal_tensor_desc *y = &outputs[0];
  y->rank = 0;
  for (uint32_t d = 0, i = 0; d < x->rank; d++) {
    if (i < op->axes->count && op->axes->axes[i] == d)
      i++;
    else
      y->dims[y->rank++] = x->dims[d];
  }
  return NPU_OK;
}

npu_status npu_infer_unsqueeze(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                               const char *label)
{
  (void)label;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  npu_hal_tensor_desc *y = &outputs[0];
  y->rank = x->rank + op->axes->count;
  for (uint32_t d = 0, i = 0, from = 0; d < y->rank; d++) {
    bool inserted = i < op->axes->count && op->axes->axes[i] == d;
    i += inserted;
    y->dims[d] = inserted ? 1 : x->dims[from++];
  }
  return NPU_OK;
}

npu_status npu_infer_transpose(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                               const char *label)
{
  (void)label;
  for (uint32_t d = 0; d < op->axes->count; d++)
    outputs[0].dims[d] = op->inputs[0].dims[op->axes->axes[d]];
  return NPU_OK;
}

npu_status npu_infer_concat(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                            const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  uint32_t axis = op->axes->axes[0];
  for (uint32_t i = 1; i < op->input_count; i++) {
    const npu_hal_tensor_desc *t = &op->inputs[i];
    if (t->rank != x->rank || t->dtype != x->dtype)
      return FAIL("%s: input %u differs in rank or type", label, i);
    for (uint32_t d = 0; d < x->rank; d++)
      if (d != axis && t->dims[d] != x->dims[d])
        return FAIL("%s: input %u differs on axis %u", label, i, d);
    if (!npu_add_i64(outputs[0].dims[axis], t->dims[axis], &outputs[0].dims[axis]))
      return TOO_LARGE(label);
  }
  return NPU_OK;
}

/* Split: sizes from the attribute (older opsets) or input 1, else equal
 * parts (the last one smaller). */
npu_status npu_infer_split(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                           const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  uint32_t axis = op->axes->axes[0];
  const int64_t *split;
  size_t n = attr_ints(op, "split", &split);
  bool given = npu_op_has_input(op, 1);
  int64_t sum = 0;
  for (uint32_t o = 0; o < op->output_count; o++) {
    outputs[o] = *x;
    int64_t part;
    if (n)
      part = o < n ? split[o] : 0;
    else if (given)
      part = npu_op_index_value(op, 1, o);
    else if (o == op->output_count - 1)
      part = x->dims[axis] - sum;
    else
      part = (x->dims[axis] + op->output_count - 1) / op->output_count;
    outputs[o].dims[axis] = part;
    if (part < 0 || !npu_add_i64(sum, part, &sum))
      return FAIL("%s: split size %lld", label, (long long)part);
  }
  return sum == x->dims[axis] ? NPU_OK : FAIL("%s: split sizes do not add up", label);
}

npu_status npu_infer_gather(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                            const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *indices = &op->inputs[1];
  npu_hal_tensor_desc *y = &outputs[0];
  uint32_t axis = op->axes->axes[0];
  if (x->rank + indices->rank - 1 > NPU_MAX_RANK)
    return FAIL("%s: rank beyond %d", label, NPU_MAX_RANK);
  if (x->dims[axis] == 0 && npu_op_elements(indices) > 0) /* (out-of-range indices are clamped) */
    return FAIL("%s: indices into an empty axis", label);
  y->rank = 0;
  for (uint32_t d = 0; d < axis; d++)
    y->dims[y->rank++] = x->dims[d];
  for (uint32_t d = 0; d < indices->rank; d++)
    y->dims[y->rank++] = indices->dims[d];
  for (uint32_t d = axis + 1; d < x->rank; d++)
    y->dims[y->rank++] = x->dims[d];
  return NPU_OK;
}

/* GatherElements, ScatterElements: indices of the data's rank that reach
 * no further than the data on every axis but `axis` (kernels address the
 * data by the indices' coordinates there), an axis to index unless there
 * is nothing to index, and constant indices in range (the kernels check
 * computed ones). */
static npu_status indices_along_axis(const npu_hal_op *op, const char *label)
{
  const npu_hal_tensor_desc *data = &op->inputs[0], *indices = &op->inputs[1];
  uint32_t axis = op->axes->axes[0];
  if (indices->rank != data->rank)
    return FAIL("%s: indices of rank %u for data of rank %u", label, indices->rank, data->rank);
  for (uint32_t d = 0; d < data->rank; d++)
    if (d != axis && indices->dims[d] > data->dims[d])
      return FAIL("%s: indices of %lld on axis %u, beyond the data's %lld", label,
                  (long long)indices->dims[d], d, (long long)data->dims[d]);
  if (data->dims[axis] == 0 && npu_op_elements(indices) > 0)
    return FAIL("%s: indices into an empty axis", label);
  for (size_t i = 0; op->input_values[1] && i < npu_op_elements(indices); i++) {
    int64_t index = npu_op_index_value(op, 1, i);
    if (index < -data->dims[axis] || index >= data->dims[axis])
      return FAIL("%s: index %lld (element %zu of the indices) is out of range for axis %u of "
                  "the data, of size %lld", label, (long long)index, i, axis,
                  (long long)data->dims[axis]);
  }
  return NPU_OK;
}

npu_status npu_infer_gather_elements(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                     const char *label)
{
  outputs[0] = op->inputs[1];
  outputs[0].dtype = op->inputs[0].dtype;
  return indices_along_axis(op, label);
}

/* ScatterElements: the data's shape; the updates are shaped as the indices. */
npu_status npu_infer_scatter_elements(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                      const char *label)
{
  (void)outputs;
  const npu_hal_tensor_desc *indices = &op->inputs[1], *updates = &op->inputs[2];
  if (updates->rank != indices->rank ||
      memcmp(updates->dims, indices->dims, indices->rank * sizeof indices->dims[0]) != 0)
    return FAIL("%s: updates not shaped as the indices", label);
  return indices_along_axis(op, label);
}

/* GatherND: tuples of k indices (the indices' last axis) into the data's
 * axes after the batch_dims that data and indices share; the output is the
 * indices' shape less its last axis, then the data's after the k axes. */
npu_status npu_infer_gather_nd(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                               const char *label)
{
  const npu_hal_tensor_desc *data = &op->inputs[0], *indices = &op->inputs[1];
  npu_hal_tensor_desc *y = &outputs[0];
  int64_t batch = attr_int(op, "batch_dims", 0);
  if (indices->rank < 1 || batch < 0 || batch >= (int64_t)indices->rank ||
      batch >= (int64_t)data->rank)
    return FAIL("%s: batch_dims %lld for indices of rank %u and data of rank %u", label,
                (long long)batch, indices->rank, data->rank);
  int64_t k = indices->dims[indices->rank - 1];
  if (k < 1 || k > (int64_t)data->rank - batch)
    return FAIL("%s: index tuples of %lld for %lld indexable axes", label, (long long)k,
                (long long)data->rank - batch);
  for (uint32_t d = 0; d < (uint32_t)batch; d++)
    if (indices->dims[d] != data->dims[d])
      return FAIL("%s: indices and data differ on batch axis %u", label, d);
  const int64_t *values = op->input_values[1]; /* constant ones checked here, others by kernels */
  for (size_t t = 0; values && t < npu_op_elements(indices) / (size_t)k; t++) {
    int64_t position;
    uint32_t axis;
    if (!npu_index_tuple_position(values + t * (size_t)k, (uint32_t)k, data->dims + batch,
                                  &position, &axis))
      return FAIL("%s: index %lld (tuple %zu of the indices) is out of range for axis %lld of "
                  "the data, of size %lld", label, (long long)values[t * (size_t)k + axis], t,
                  (long long)(batch + axis), (long long)data->dims[batch + axis]);
  }
  y->rank = 0;
  for (uint32_t d = 0; d + 1 < indices->rank; d++)
    y->dims[y->rank++] = indices->dims[d];
  for (uint32_t d = (uint32_t)(batch + k); d < data->rank; d++) {
    if (y->rank == NPU_MAX_RANK)
      return FAIL("%s: rank beyond %d", label, NPU_MAX_RANK);
    y->dims[y->rank++] = data->dims[d];
  }
  return NPU_OK;
}

/* OneHot: the indices' shape with an axis of `depth` inserted at `axis`
 * (counted in the output's rank), of the values' element type. */
npu_status npu_infer_one_hot(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                             const char *label)
{
  const npu_hal_tensor_desc *indices = &op->inputs[0];
  npu_hal_tensor_desc *y = &outputs[0];
  double depth = scalar_of(op, 1);
  int64_t rank = (int64_t)indices->rank + 1, axis = attr_int(op, "axis", -1);
  if (npu_op_elements(&op->inputs[2]) != 2)
    return FAIL("%s: values has %zu elements, expected 2 (off, on)", label,
                npu_op_elements(&op->inputs[2]));
  if (!(depth >= 1 && depth < 0x1p62)) /* (NaN too) */
    return FAIL("%s: depth %g", label, depth);
  if (rank > NPU_MAX_RANK || axis < -rank || axis >= rank)
    return FAIL("%s: axis %lld for an output of rank %lld", label, (long long)axis,
                (long long)rank);
  if (axis < 0)
    axis += rank;
  y->dtype = op->inputs[2].dtype;
  y->rank = (uint32_t)rank;
  for (uint32_t d = 0, from = 0; d < y->rank; d++)
    y->dims[d] = d == axis ? (int64_t)depth : indices->dims[from++];
  return NPU_OK;
}

/* EyeLike: a matrix of the input's shape, of attribute dtype's type (else the input's). */
npu_status npu_infer_eye_like(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                              const char *label)
{
  if (op->inputs[0].rank != 2)
    return FAIL("%s: input of rank %u, expected a matrix", label, op->inputs[0].rank);
  outputs[0].dtype = (npu_dtype)attr_int(op, "dtype", op->inputs[0].dtype);
  return npu_dtype_size(outputs[0].dtype) ? NPU_OK
                                          : FAIL("%s: dtype %d is not supported", label,
                                                 (int)outputs[0].dtype);
}

npu_status npu_infer_constant_of_shape(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                       const char *label)
{
  npu_hal_tensor_desc *y = &outputs[0];
  y->rank = (uint32_t)npu_op_elements(&op->inputs[0]);
  if (y->rank > NPU_MAX_RANK)
    return FAIL("%s: rank beyond %d", label, NPU_MAX_RANK);
  for (uint32_t d = 0; d < y->rank; d++)
    y->dims[d] = npu_op_index_value(op, 0, d);
  y->dtype = (npu_dtype)attr_int(op, "value.dtype", NPU_DTYPE_FLOAT32);
  return NPU_OK;
}

/* DepthToSpace: [N, C / b^2, H * b, W * b]; SpaceToDepth the reverse (the
 * divisions are exact: checked). */
npu_status npu_infer_rearrange_blocks(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                      const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  npu_hal_tensor_desc *y = &outputs[0];
  int64_t block = attr_int(op, "blocksize", 1), square = block * block; /* (checked) */
  if (strcmp(op->op_type, "SpaceToDepth") == 0) {
    y->dims[2] = x->dims[2] / block;
    y->dims[3] = x->dims[3] / block;
    return npu_mul_i64(x->dims[1], square, &y->dims[1]) ? NPU_OK : TOO_LARGE(label);
  }
  y->dims[1] = x->dims[1] / square;
  return npu_mul_i64(x->dims[2], block, &y->dims[2]) && npu_mul_i64(x->dims[3], block, &y->dims[3])
             ? NPU_OK
             : TOO_LARGE(label);
}

/* MaxUnpool: the shape MaxPool read, (in - 1) * stride + kernel - pads per
 * spatial axis, or output_shape (input 2) when given, which may only add to
 * it; the indices have the values' shape. */
npu_status npu_infer_max_unpool(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *indices = &op->inputs[1];
  npu_hal_tensor_desc *y = &outputs[0];
  const int64_t *kernel, *strides, *pads;
  uint32_t spatial = x->rank - 2;
  if (attr_ints(op, "kernel_shape", &kernel) != spatial)
    return FAIL("%s: kernel_shape missing", label);
  bool strided = attr_ints(op, "strides", &strides) > 0, padded = attr_ints(op, "pads", &pads) > 0;
  if (indices->rank != x->rank || memcmp(indices->dims, x->dims, x->rank * sizeof x->dims[0]))
    return FAIL("%s: the indices are not shaped as the values", label);
  bool given = npu_op_has_input(op, 2);
  for (uint32_t s = 0; s < spatial; s++) {
    int64_t size, pad = padded ? pads[s] + pads[spatial + s] : 0; /* (pads: small, checked) */
    if (!npu_mul_i64(x->dims[2 + s] - 1, strided ? strides[s] : 1, &size) ||
        !npu_add_i64(size, kernel[s] - pad, &size))
      return TOO_LARGE(label);
    if (size < 1)
      return FAIL("%s: empty output on spatial axis %u", label, s);
    int64_t want = given ? npu_op_index_value(op, 2, 2 + s) : size;
    if (want < size)
      return FAIL("%s: output_shape %lld on spatial axis %u, smaller than the unpooled %lld",
                  label, (long long)want, s, (long long)size);
    y->dims[2 + s] = want;
  }
  if (given && (npu_op_index_value(op, 2, 0) != x->dims[0] ||
                npu_op_index_value(op, 2, 1) != x->dims[1]))
    return FAIL("%s: output_shape changes the batch or the channels", label);
  return NPU_OK;
}

/* RoiAlign: [regions, C, output_height, output_width]; GridSample: [N, C,
 * the grid's H and W]. */
npu_status npu_infer_sample(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  (void)label;
  npu_hal_tensor_desc *y = &outputs[0];
  const npu_hal_tensor_desc *second = &op->inputs[1];
  if (strcmp(op->op_type, "GridSample") == 0) {
    y->dims[2] = second->dims[1];
    y->dims[3] = second->dims[2];
    return NPU_OK;
  }
  y->dims[0] = second->dims[0];
  y->dims[2] = attr_int(op, "output_height", 1);
  y->dims[3] = attr_int(op, "output_width", 1);
  return NPU_OK;
}

/* LSTM, GRU, RNN (inputs checked by recurrent_relation): Y [seq, directions,
 * batch, hidden] and the last states Y_h (Y_c) [directions, batch, hidden];
 * with layout 1, batch first: [batch, seq, directions, hidden] and [batch,
 * directions, hidden]. */
npu_status npu_infer_recurrent(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                               const char *label)
{
  (void)label;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  bool batch_first = attr_int(op, "layout", 0) == 1;
  int64_t directions = op->inputs[1].dims[0], hidden = op->inputs[2].dims[2];
  int64_t seq = x->dims[batch_first ? 1 : 0], batch = x->dims[batch_first ? 0 : 1];
  npu_hal_tensor_desc y = {x->dtype, 4, {seq, directions, batch, hidden}};
  npu_hal_tensor_desc last = {x->dtype, 3, {directions, batch, hidden}};
  if (batch_first) {
    y = (npu_hal_tensor_desc){x->dtype, 4, {batch, seq, directions, hidden}};
    last = (npu_hal_tensor_desc){x->dtype, 3, {batch, directions, hidden}};
  }
  for (uint32_t o = 0; o < op->output_count; o++)
    outputs[o] = o ? last : y;
  return NPU_OK;
}

npu_status npu_infer_shapes(const npu_op_schema *schema, const npu_hal_op *op,
                            npu_hal_tensor_desc *outputs, const char *label)
{
  if (!schema->infer)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: operator %s has no shape function",
                         label, op->op_type);
  outputs[0] = op->inputs[0]; /* the common case: same type and shape */
  memset(&outputs[0].quant, 0, sizeof outputs[0].quant); /* only quantising operators set one */
  return schema->infer(op, outputs, label);
}
