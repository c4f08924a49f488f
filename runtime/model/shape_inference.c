/* Shape inference, operator by operator (see shape_inference.h). */
#include <math.h>
#include <string.h>

#include "npu_checked.h"
#include "npu_hal.h"
#include "quant_ops.h"
#include "shape_inference.h"
#include "window.h"

#define FAIL(...) npu_set_error(NPU_ERROR_INVALID_MODEL, __VA_ARGS__)
/* Output dimensions are computed with checked arithmetic (attribute and
 * constant values are the model's choice); an overflow is this error. */
/* Positions a pooling window may have (a 4096 x 4096 window), and a
 * pooling may visit in all (2^40: minutes on a CPU). */
#define MAX_POOLING_WINDOW (INT64_C(1) << 24)
#define MAX_POOLING_WORK (INT64_C(1) << 40)
#define TOO_LARGE(label) FAIL("%s: shape too large (its arithmetic overflows)", label)

static int64_t attr_int(const npu_hal_op *op, const char *name, int64_t fallback)
{
  return op->attributes.get_int(op->attributes.node, name, fallback);
}

static size_t attr_ints(const npu_hal_op *op, const char *name, const int64_t **values)
{
  return op->attributes.get_ints(op->attributes.node, name, values);
}

/* Of a planned tensor: its size was checked when it was planned. */
static size_t elements(const npu_hal_tensor_desc *t)
{
  size_t n = 0;
  npu_dims_elements(t->dims, t->rank, &n);
  return n;
}

static int64_t value_at(const npu_hal_op *op, uint32_t input, size_t i)
{
  const void *v = op->input_values[input];
  return op->inputs[input].dtype == NPU_DTYPE_INT32 ? ((const int32_t *)v)[i]
                                                    : ((const int64_t *)v)[i];
}

/* Axes from the attribute (old opsets) or a constant input (new ones). */
static npu_status read_axes(const npu_hal_op *op, uint32_t input, int64_t *axes, size_t *count,
                            const char *label)
{
  const int64_t *attr;
  size_t n = attr_ints(op, "axes", &attr);
  if (n) {
    memcpy(axes, attr, n * sizeof *axes);
    *count = n;
    return NPU_OK;
  }
  *count = 0;
  if (op->input_count <= input || op->inputs[input].dtype == NPU_DTYPE_UNDEFINED)
    return NPU_OK;
  if (!op->input_values[input])
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: axes computed at run time", label);
  *count = elements(&op->inputs[input]);
  if (*count > NPU_MAX_RANK)
    return FAIL("%s: too many axes", label);
  for (size_t i = 0; i < *count; i++)
    axes[i] = value_at(op, input, i);
  return NPU_OK;
}

static npu_status broadcast(const npu_hal_op *op, uint32_t first, uint32_t count,
                            npu_hal_tensor_desc *out, const char *label)
{
  out->rank = 0;
  for (uint32_t i = first; i < first + count; i++)
    if (op->inputs[i].rank > out->rank)
      out->rank = op->inputs[i].rank;
  for (uint32_t d = 0; d < out->rank; d++) {
    int64_t dim = 1;
    for (uint32_t i = first; i < first + count; i++) {
      const npu_hal_tensor_desc *t = &op->inputs[i];
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

/* Spatial output size of a convolution or pooling window. */
static npu_status window_output(const npu_hal_op *op, bool pooling, npu_hal_tensor_desc *out,
                                const char *label)
{
  npu_hal_window window;
  npu_status status = npu_window_resolve(op, &window, label);
  if (status != NPU_OK)
    return status;
  for (uint32_t s = 0; s < window.spatial; s++)
    out->dims[2 + s] = window.output[s];
  /* A pooling window visits every position of its kernel, padding included:
   * a kernel of 2^31 on a 5-pixel input (SAME padding) ran for minutes.
   * (A convolution's kernel is its weights: as large as the model file.) */
  int64_t positions = 1, work = 1; /* positions per window, and in all */
  for (uint32_t d = 0; pooling && d < out->rank; d++) {
    int64_t k = d >= 2 ? window.kernel[d - 2] : 1;
    if (!npu_mul_i64(positions, k, &positions) || !npu_mul_i64(work, out->dims[d], &work) ||
        !npu_mul_i64(work, k, &work) || positions > MAX_POOLING_WINDOW ||
        work > MAX_POOLING_WORK)
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: pooling windows larger than %lld "
                           "positions, or more than %lld in all", label,
                           (long long)MAX_POOLING_WINDOW, (long long)MAX_POOLING_WORK);
  }
  return NPU_OK;
}

static npu_status infer_reshape(const npu_hal_op *op, npu_hal_tensor_desc *out, const char *label)
{
  if (!op->input_values[1])
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: the target shape is computed at run time",
                         label);
  size_t n = elements(&op->inputs[1]), total = elements(&op->inputs[0]), known = 1;
  if (n > NPU_MAX_RANK)
    return FAIL("%s: target rank %zu", label, n);
  int infer = -1;
  bool allow_zero = attr_int(op, "allowzero", 0) != 0;
  out->rank = (uint32_t)n;
  for (size_t i = 0; i < n; i++) {
    int64_t v = value_at(op, 1, i);
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

static npu_status infer_slice(const npu_hal_op *op, npu_hal_tensor_desc *out, const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  *out = *x;
  const int64_t *attr_starts = NULL, *attr_ends = NULL, *attr_axes = NULL;
  size_t count;
  if (op->opset < 10) {
    count = attr_ints(op, "starts", &attr_starts);
    if (attr_ints(op, "ends", &attr_ends) != count)
      return FAIL("%s: starts and ends differ in length", label);
    if (attr_ints(op, "axes", &attr_axes) != count)
      attr_axes = NULL;
  } else {
    for (uint32_t i = 1; i < op->input_count; i++)
      if (op->inputs[i].dtype != NPU_DTYPE_UNDEFINED && !op->input_values[i])
        return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: slice bounds computed at run time",
                             label);
    count = elements(&op->inputs[1]);
    if (elements(&op->inputs[2]) != count)
      return FAIL("%s: starts and ends differ in length", label);
  }
  bool has_axes = op->opset >= 10 && op->input_count > 3 && op->inputs[3].dtype;
  bool has_steps = op->opset >= 10 && op->input_count > 4 && op->inputs[4].dtype;
  for (size_t i = 0; i < count; i++) {
    int64_t axis = attr_axes ? attr_axes[i] : has_axes ? value_at(op, 3, i) : (int64_t)i;
    if (axis < 0)
      axis += x->rank;
    if (axis < 0 || axis >= (int64_t)x->rank)
      return FAIL("%s: slice axis out of range", label);
    int64_t dim = x->dims[axis];
    int64_t start = attr_starts ? attr_starts[i] : value_at(op, 1, i);
    int64_t end = attr_ends ? attr_ends[i] : value_at(op, 2, i);
    int64_t step = has_steps ? value_at(op, 4, i) : 1;
    if (step == 0)
      return FAIL("%s: slice step 0", label);
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    int64_t lo = step > 0 ? 0 : -1, hi_start = step > 0 ? dim : dim - 1;
    start = start < 0 ? 0 : start > hi_start ? hi_start : start;
    end = end < lo ? lo : end > hi_start ? hi_start : end;
    out->dims[axis] = npu_strided_count(start, end, step);
  }
  return NPU_OK;
}

/* Reductions (ReduceX, ArgMax/ArgMin): the kept shape; *mask gets the
 * reduced axes. Axes come from the attribute or, in newer opsets, input 1. */
static npu_status infer_reduce(const npu_hal_op *op, npu_hal_tensor_desc *out, const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  bool arg = strncmp(op->op_type, "Arg", 3) == 0;
  int64_t axes[NPU_MAX_RANK];
  size_t count = 0;
  if (arg) {
    axes[0] = attr_int(op, "axis", 0);
    count = 1;
  } else {
    npu_status status = read_axes(op, 1, axes, &count, label);
    if (status != NPU_OK)
      return status;
  }
  bool keep = attr_int(op, "keepdims", 1) != 0;
  bool reduced[NPU_MAX_RANK] = {false};
  if (count == 0 && attr_int(op, "noop_with_empty_axes", 0))
    return NPU_OK;
  for (size_t i = 0; i < count; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
    if (a < 0 || a >= (int64_t)x->rank)
      return FAIL("%s: axis %lld out of range", label, (long long)axes[i]);
    reduced[a] = true;
  }
  out->rank = 0;
  for (uint32_t d = 0; d < x->rank; d++) {
    if (!reduced[d] && count)
      out->dims[out->rank++] = x->dims[d];
    else if (keep)
      out->dims[out->rank++] = 1;
  }
  if (arg)
    out->dtype = NPU_DTYPE_INT64;
  return NPU_OK;
}

/* Resize: from `sizes` or `scales` (opset 10: scales is input 1). */
static npu_status infer_resize(const npu_hal_op *op, npu_hal_tensor_desc *out, const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  bool upsample = strcmp(op->op_type, "Upsample") == 0;
  uint32_t scales_input = upsample || op->opset < 11 ? 1 : 2, sizes_input = 3;
  bool has_sizes = op->input_count > sizes_input && op->inputs[sizes_input].dtype &&
                   elements(&op->inputs[sizes_input]) > 0;
  uint32_t source = has_sizes ? sizes_input : scales_input;
  if (op->input_count <= source || !op->inputs[source].dtype)
    return FAIL("%s: neither scales nor sizes", label);
  if (has_sizes && op->inputs[scales_input].dtype && elements(&op->inputs[scales_input]))
    return FAIL("%s: both scales and sizes", label); /* (kernels would take the scales) */
  if (!op->input_values[source])
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: output size computed at run time", label);
  if (attr_ints(op, "axes", &(const int64_t *){NULL}))
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: the axes attribute", label);
  if (elements(&op->inputs[source]) != x->rank)
    return FAIL("%s: %zu %s for rank %u", label, elements(&op->inputs[source]),
                has_sizes ? "sizes" : "scales", x->rank);
  for (uint32_t d = 0; d < x->rank; d++) {
    if (has_sizes) {
      out->dims[d] = value_at(op, sizes_input, d);
    } else { /* ONNX: floor(input * scale) */
      double size = (double)x->dims[d] *
                    (double)((const float *)op->input_values[scales_input])[d];
      if (!(size < 0x1p63)) /* (NaN too) */
        return TOO_LARGE(label);
      if (size < 1) /* a negative scale too: converting it would overflow */
        return FAIL("%s: empty output on axis %u (scale %g)", label, d, size);
      out->dims[d] = (int64_t)size;
    }
    if (out->dims[d] <= 0)
      return FAIL("%s: empty output on axis %u", label, d);
  }
  return NPU_OK;
}

/* Pad: pads from the attribute (opset < 11) or input 1, optional axes. */
static npu_status infer_pad(const npu_hal_op *op, npu_hal_tensor_desc *out, const char *label)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  const int64_t *attr;
  size_t n = attr_ints(op, "pads", &attr);
  int64_t pads[2 * NPU_MAX_RANK];
  if (op->opset < 11) {
    if (n != 2 * x->rank)
      return FAIL("%s: %zu pads for rank %u", label, n, x->rank);
    for (size_t i = 0; i < n; i++) /* (a scalar has none: attr may be NULL) */
      pads[i] = attr[i];
  } else {
    if (!op->input_values[1])
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: pads computed at run time", label);
    if (op->input_count > 3 && op->inputs[3].dtype)
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: the axes input", label);
    n = elements(&op->inputs[1]);
    if (n != 2 * x->rank)
      return FAIL("%s: %zu pads for rank %u", label, n, x->rank);
    for (size_t i = 0; i < n; i++)
      pads[i] = value_at(op, 1, i);
  }
  for (uint32_t d = 0; d < x->rank; d++) {
    if (pads[d] < -x->dims[d] || pads[d + x->rank] < -x->dims[d])
      return FAIL("%s: a pad on axis %u removes more than the axis", label, d);
    if (!npu_add_i64(x->dims[d], pads[d], &out->dims[d]) ||
        !npu_add_i64(out->dims[d], pads[d + x->rank], &out->dims[d]))
      return TOO_LARGE(label);
    if (out->dims[d] < 0)
      return FAIL("%s: negative size on axis %u", label, d);
  }
  return NPU_OK;
}

static double scalar_of(const npu_hal_op *op, uint32_t input)
{
  const void *v = op->input_values[input];
  switch (op->inputs[input].dtype) {
  case NPU_DTYPE_FLOAT32: return *(const float *)v;
  case NPU_DTYPE_INT32: return *(const int32_t *)v;
  default: return (double)*(const int64_t *)v;
  }
}

/* Expand, Tile, Range, TopK, LayerNormalization, Where. */
static npu_status infer_misc(const npu_hal_op *op, npu_hal_tensor_desc *out, const char *label,
                             npu_hal_tensor_desc *outputs)
{
  const char *type = op->op_type;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (!strcmp(type, "Where")) {
    npu_status status = broadcast(op, 0, 3, out, label);
    out->dtype = op->inputs[1].dtype;
    return status;
  }
  if (!strcmp(type, "LayerNormalization")) {
    int64_t axis = attr_int(op, "axis", -1);
    if (axis < 0)
      axis += x->rank;
    if (axis < 0 || axis >= (int64_t)x->rank)
      return FAIL("%s: axis out of range", label);
    for (uint32_t o = 1; o < op->output_count; o++) {
      outputs[o] = *x;
      for (uint32_t d = (uint32_t)axis; d < x->rank; d++)
        outputs[o].dims[d] = 1;
    }
    return NPU_OK;
  }
  if (!op->input_values[1] || (!strcmp(type, "Range") && !(op->input_values[0] && op->input_values[2])))
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: %s computed at run time", label,
                         !strcmp(type, "TopK") ? "k" : "the output shape");
  if (!strcmp(type, "Expand")) {
    npu_hal_tensor_desc shape = {x->dtype, (uint32_t)elements(&op->inputs[1]), {0}};
    if (shape.rank > NPU_MAX_RANK)
      return FAIL("%s: rank beyond %d", label, NPU_MAX_RANK);
    for (uint32_t d = 0; d < shape.rank; d++)
      shape.dims[d] = value_at(op, 1, d);
    npu_hal_tensor_desc pair[2] = {*x, shape};
    npu_hal_op both = *op;
    both.inputs = pair;
    npu_status status = broadcast(&both, 0, 2, out, label);
    out->dtype = x->dtype;
    return status;
  }
  if (!strcmp(type, "Tile")) {
    if (elements(&op->inputs[1]) != x->rank)
      return FAIL("%s: %zu repeats for rank %u", label, elements(&op->inputs[1]), x->rank);
    for (uint32_t d = 0; d < x->rank; d++) {
      int64_t repeats = value_at(op, 1, d);
      if (repeats < 0)
        return FAIL("%s: negative repeats", label);
      if (!npu_mul_i64(x->dims[d], repeats, &out->dims[d]))
        return TOO_LARGE(label);
    }
    return NPU_OK;
  }
  if (!strcmp(type, "Range")) {
    double start = scalar_of(op, 0), limit = scalar_of(op, 1), delta = scalar_of(op, 2);
    if (delta == 0)
      return FAIL("%s: delta is 0", label);
    double count = ceil((limit - start) / delta);
    if (count >= 0x1p63)
      return TOO_LARGE(label);
    out->rank = 1;
    out->dims[0] = count > 0 ? (int64_t)count : 0;
    return NPU_OK;
  }
  /* TopK */
  int64_t axis = attr_int(op, "axis", -1), k = value_at(op, 1, 0);
  if (axis < 0)
    axis += x->rank;
  if (axis < 0 || axis >= (int64_t)x->rank || k < 0 || k > x->dims[axis])
    return FAIL("%s: axis out of range or k = %lld beyond the axis", label, (long long)k);
  out->dims[axis] = k;
  outputs[1] = *out;
  outputs[1].dtype = NPU_DTYPE_INT64;
  return NPU_OK;
}

npu_status npu_infer_shapes(const npu_hal_op *op, npu_hal_tensor_desc *outputs, const char *label)
{
  const char *type = op->op_type;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  npu_hal_tensor_desc *y = &outputs[0];
  *y = *x; /* the common case: same type and shape */
  memset(&y->quant, 0, sizeof y->quant); /* only the operators that quantise set one */
  static const char *const same_shape[] = {
      "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg", "Reciprocal", "Floor",
      "Ceil", "Erf", "HardSigmoid", "HardSwish", "LeakyRelu", "Clip", "Identity", "Elu", "Selu",
      "Celu", "Softplus", "Softsign", "Sign", "ThresholdedRelu", "Mish", "Round",
      "BatchNormalization", "Softmax", "LogSoftmax", "Not",
      "ScatterND" /* (op_schema.c checked indices and updates against the data) */};
  for (size_t i = 0; i < sizeof same_shape / sizeof same_shape[0]; i++)
    if (strcmp(type, same_shape[i]) == 0)
      return NPU_OK;

  if (!strcmp(type, "Add") || !strcmp(type, "Sub") || !strcmp(type, "Mul") ||
      !strcmp(type, "Div") || !strcmp(type, "Pow") || !strcmp(type, "Max") ||
      !strcmp(type, "Min") || !strcmp(type, "Equal") || !strcmp(type, "Less") ||
      !strcmp(type, "Greater") || !strcmp(type, "PRelu") || !strcmp(type, "Mod")) {
    if (type[0] == 'E' || type[0] == 'L' || type[0] == 'G')
      y->dtype = NPU_DTYPE_BOOL;
    return broadcast(op, 0, op->input_count, y, label);
  }
  if (!strncmp(type, "Reduce", 6) || !strcmp(type, "ArgMax") || !strcmp(type, "ArgMin"))
    return infer_reduce(op, y, label);
  if (!strcmp(type, "Resize") || !strcmp(type, "Upsample"))
    return infer_resize(op, y, label);
  if (!strcmp(type, "Pad"))
    return infer_pad(op, y, label);
  if (!strcmp(type, "Expand") || !strcmp(type, "Tile") || !strcmp(type, "Range") ||
      !strcmp(type, "TopK") || !strcmp(type, "LayerNormalization") || !strcmp(type, "Where"))
    return infer_misc(op, y, label, outputs);
  if (!strcmp(type, "Dropout")) { /* inference: the data unchanged, a mask of all true */
    if (op->output_count > 1) {
      outputs[1] = *x;
      outputs[1].dtype = NPU_DTYPE_BOOL;
    }
    return NPU_OK;
  }
  if (!strcmp(type, "CastLike")) {
    y->dtype = op->inputs[1].dtype;
    return NPU_OK;
  }
  if (!strcmp(type, "Cast")) {
    y->dtype = (npu_dtype)attr_int(op, "to", NPU_DTYPE_UNDEFINED);
    return npu_dtype_size(y->dtype) ? NPU_OK : FAIL("%s: cast to an unsupported type", label);
  }
  if (!strcmp(type, "Conv") || !strcmp(type, "MaxPool") || !strcmp(type, "AveragePool")) {
    bool pooling = type[0] != 'C';
    if (!pooling)
      y->dims[1] = op->inputs[1].dims[0];
    return window_output(op, pooling, y, label);
  }
  if (!strcmp(type, "ConvTranspose")) {
    if (!npu_mul_i64(op->inputs[1].dims[1], attr_int(op, "group", 1), &y->dims[1]))
      return TOO_LARGE(label);
    return window_output(op, false, y, label);
  }
  if (!strcmp(type, "GlobalAveragePool") || !strcmp(type, "GlobalMaxPool")) {
    for (uint32_t d = 2; d < y->rank; d++)
      y->dims[d] = 1;
    return NPU_OK;
  }
  if (!strcmp(type, "Gemm")) {
    bool ta = attr_int(op, "transA", 0), tb = attr_int(op, "transB", 0);
    const npu_hal_tensor_desc *b = &op->inputs[1];
    y->rank = 2;
    y->dims[0] = x->dims[ta ? 1 : 0];
    y->dims[1] = b->dims[tb ? 0 : 1];
    return NPU_OK;
  }
  if (!strcmp(type, "MatMul")) {
    const npu_hal_tensor_desc *b = &op->inputs[1];
    if (x->rank < 2 || b->rank < 2)
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: 1-D MatMul operands", label);
    if (x->dims[x->rank - 1] != b->dims[b->rank - 2])
      return FAIL("%s: MatMul inner dimensions %lld and %lld differ", label,
                  (long long)x->dims[x->rank - 1], (long long)b->dims[b->rank - 2]);
    npu_hal_op batch = *op; /* broadcast the batch dimensions only */
    npu_hal_tensor_desc batch_inputs[2] = {*x, *b};
    batch_inputs[0].rank -= 2;
    batch_inputs[1].rank -= 2;
    batch.inputs = batch_inputs;
    npu_status status = broadcast(&batch, 0, 2, y, label);
    if (status != NPU_OK)
      return status;
    y->dims[y->rank] = x->dims[x->rank - 2];
    y->dims[y->rank + 1] = b->dims[b->rank - 1];
    y->rank += 2;
    y->dtype = x->dtype;
    return NPU_OK;
  }
  if (!strcmp(type, "Reshape"))
    return infer_reshape(op, y, label);
  if (!strcmp(type, "Flatten")) {
    int64_t axis = attr_int(op, "axis", 1);
    if (axis < 0)
      axis += x->rank;
    if (axis < 0 || axis > (int64_t)x->rank)
      return FAIL("%s: axis out of range", label);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < (int64_t)x->rank; d++) {
      int64_t *part = d < axis ? &outer : &inner;
      if (!npu_mul_i64(*part, x->dims[d], part))
        return TOO_LARGE(label);
    }
    y->rank = 2;
    y->dims[0] = outer;
    y->dims[1] = inner;
    return NPU_OK;
  }
  if (!strcmp(type, "Squeeze") || !strcmp(type, "Unsqueeze")) {
    int64_t axes[NPU_MAX_RANK];
    size_t count;
    npu_status status = read_axes(op, 1, axes, &count, label);
    if (status != NPU_OK)
      return status;
    bool squeeze = type[0] == 'S';
    uint32_t rank = squeeze ? x->rank : x->rank + (uint32_t)count;
    if (rank > NPU_MAX_RANK)
      return FAIL("%s: rank beyond %d", label, NPU_MAX_RANK);
    bool marked[NPU_MAX_RANK] = {false};
    for (size_t i = 0; i < count; i++) {
      int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= (int64_t)rank || marked[a] || (squeeze && x->dims[a] != 1))
        return FAIL("%s: axis %lld cannot be %s (out of range or repeated)", label,
                    (long long)axes[i], squeeze ? "squeezed" : "inserted");
      marked[a] = true;
    }
    y->rank = 0;
    for (uint32_t d = 0, from = 0; d < rank; d++) {
      if (squeeze) {
        if (!(count ? marked[d] : x->dims[d] == 1))
          y->dims[y->rank++] = x->dims[d];
      } else {
        y->dims[y->rank++] = marked[d] ? 1 : x->dims[from++];
      }
    }
    return NPU_OK;
  }
  if (!strcmp(type, "Transpose")) {
    const int64_t *perm;
    size_t n = attr_ints(op, "perm", &perm); /* (0 or the rank: checked) */
    bool taken[NPU_MAX_RANK] = {false};
    for (uint32_t d = 0; d < x->rank; d++) {
      int64_t a = n ? perm[d] : (int64_t)(x->rank - 1 - d);
      if (a < 0 || a >= (int64_t)x->rank || taken[a])
        return FAIL("%s: perm is not a permutation of the axes", label);
      taken[a] = true;
      y->dims[d] = x->dims[a];
    }
    return NPU_OK;
  }
  if (!strcmp(type, "Concat")) {
    int64_t axis = attr_int(op, "axis", 0);
    if (axis < 0)
      axis += x->rank;
    if (axis < 0 || axis >= (int64_t)x->rank)
      return FAIL("%s: axis out of range", label);
    for (uint32_t i = 1; i < op->input_count; i++) {
      const npu_hal_tensor_desc *t = &op->inputs[i];
      if (t->rank != x->rank || t->dtype != x->dtype)
        return FAIL("%s: input %u differs in rank or type", label, i);
      for (uint32_t d = 0; d < x->rank; d++)
        if ((int64_t)d != axis && t->dims[d] != x->dims[d])
          return FAIL("%s: input %u differs on axis %u", label, i, d);
      if (!npu_add_i64(y->dims[axis], t->dims[axis], &y->dims[axis]))
        return TOO_LARGE(label);
    }
    return NPU_OK;
  }
  if (!strcmp(type, "Split")) {
    int64_t axis = attr_int(op, "axis", 0);
    if (axis < 0)
      axis += x->rank;
    if (axis < 0 || axis >= (int64_t)x->rank)
      return FAIL("%s: axis out of range", label);
    const int64_t *split;
    size_t n = attr_ints(op, "split", &split);
    int64_t sum = 0;
    for (uint32_t o = 0; o < op->output_count; o++) {
      outputs[o] = *x;
      int64_t part;
      if (n)
        part = o < n ? split[o] : 0;
      else if (op->input_count > 1 && op->inputs[1].dtype && !op->input_values[1])
        return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: split sizes computed at run time",
                             label);
      else if (op->input_count > 1 && op->inputs[1].dtype)
        part = value_at(op, 1, o);
      else
        part = (x->dims[axis] + op->output_count - 1) / op->output_count;
      if (!n && !(op->input_count > 1 && op->inputs[1].dtype) && o == op->output_count - 1)
        part = x->dims[axis] - sum;
      outputs[o].dims[axis] = part;
      if (part < 0 || !npu_add_i64(sum, part, &sum))
        return FAIL("%s: split size %lld", label, (long long)part);
    }
    return sum == x->dims[axis] ? NPU_OK : FAIL("%s: split sizes do not add up", label);
  }
  if (!strcmp(type, "Slice"))
    return infer_slice(op, y, label);
  if (!strcmp(type, "Gather")) {
    const npu_hal_tensor_desc *indices = &op->inputs[1];
    int64_t axis = attr_int(op, "axis", 0);
    if (axis < 0)
      axis += x->rank;
    if (axis < 0 || axis >= (int64_t)x->rank || x->rank + indices->rank - 1 > NPU_MAX_RANK)
      return FAIL("%s: axis out of range", label);
    if (x->dims[axis] == 0 && elements(indices) > 0) /* (out-of-range indices are clamped) */
      return FAIL("%s: indices into an empty axis", label);
    y->rank = 0;
    for (int64_t d = 0; d < axis; d++)
      y->dims[y->rank++] = x->dims[d];
    for (uint32_t d = 0; d < indices->rank; d++)
      y->dims[y->rank++] = indices->dims[d];
    for (int64_t d = axis + 1; d < (int64_t)x->rank; d++)
      y->dims[y->rank++] = x->dims[d];
    return NPU_OK;
  }
  if (!strcmp(type, "ConstantOfShape")) {
    if (!op->input_values[0])
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: shape computed at run time", label);
    y->rank = (uint32_t)elements(x);
    if (y->rank > NPU_MAX_RANK)
      return FAIL("%s: rank beyond %d", label, NPU_MAX_RANK);
    for (uint32_t d = 0; d < y->rank; d++)
      y->dims[d] = value_at(op, 0, d);
    y->dtype = (npu_dtype)attr_int(op, "value.dtype", NPU_DTYPE_FLOAT32);
    return NPU_OK;
  }
  if (npu_quant_is_quantised_op(type))
    return npu_quant_infer_shapes(op, outputs, label);
  return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: operator %s is not implemented yet", label,
                       type);
}
