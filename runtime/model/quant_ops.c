/* Quantised operators for the planner (quant_ops.h). Each operator lists
 * its (tensor, scale, zero point) triples; checking them all up front
 * means a kernel can read a zero point as its tensor's type and index a
 * per-channel scale by channel without looking again. */
#include <string.h>

#include "npu_checked.h"
#include "op_params.h"
#include "op_schema.h"
#include "quant_ops.h"
#include "shape_inference.h"

#define FAIL(...) npu_set_error(NPU_ERROR_INVALID_MODEL, __VA_ARGS__)
#define OUTPUT (-1) /* the triple's tensor is the op's output */
#define NONE (-1)   /* no scale input (ConvInteger, MatMulInteger) */

/* Which parameters may be per-axis, and along which axis of the tensor. */
typedef enum quant_axis {
  PER_TENSOR,     /* one scale and zero point */
  AXIS_ATTRIBUTE, /* per tensor or along the `axis` attribute (QuantizeLinear, opset 13+) */
  AXIS_FIRST,     /* per tensor or along axis 0 (convolution weights: output channels) */
  AXIS_LAST,      /* per tensor or along the last axis (matrix columns) */
  AXIS_SECOND,    /* per tensor or along axis 1 (transposed convolution weights, [C, M, k...]) */
} quant_axis;

typedef struct quant_triple {
  int8_t tensor, scale, zero;
  quant_axis axis;
} quant_triple;

typedef struct quant_op {
  const char *op_type;
  quant_triple triples[3];
  uint8_t triple_count;
} quant_op;

static const quant_op quant_ops[] = {
    {"QuantizeLinear", {{0, 1, 2, AXIS_ATTRIBUTE}}, 1},
    {"DequantizeLinear", {{0, 1, 2, AXIS_ATTRIBUTE}}, 1},
    {"DynamicQuantizeLinear", {{0}}, 0},
    {"ConvInteger", {{0, NONE, 2, PER_TENSOR}, {1, NONE, 3, AXIS_FIRST}}, 2},
    {"MatMulInteger", {{0, NONE, 2, PER_TENSOR}, {1, NONE, 3, AXIS_LAST}}, 2},
    {"QLinearConv", {{0, 1, 2, PER_TENSOR}, {3, 4, 5, AXIS_FIRST}, {OUTPUT, 6, 7, PER_TENSOR}}, 3},
    {"QLinearMatMul", {{0, 1, 2, PER_TENSOR}, {3, 4, 5, AXIS_LAST}, {OUTPUT, 6, 7, PER_TENSOR}},
     3},
    {"QLinearMatMulBias",
     {{0, 1, 2, PER_TENSOR}, {3, 4, 5, AXIS_LAST}, {OUTPUT, 6, 7, PER_TENSOR}}, 3},
    {"QLinearConvTranspose",
     {{0, 1, 2, PER_TENSOR}, {3, 4, 5, AXIS_SECOND}, {OUTPUT, 6, 7, PER_TENSOR}}, 3},
    {"QLinearAdd", {{0, 1, 2, PER_TENSOR}, {3, 4, 5, PER_TENSOR}, {OUTPUT, 6, 7, PER_TENSOR}}, 3},
    {"QLinearMul", {{0, 1, 2, PER_TENSOR}, {3, 4, 5, PER_TENSOR}, {OUTPUT, 6, 7, PER_TENSOR}}, 3},
    {"QLinearBinaryLookup",
     {{0, 1, 2, PER_TENSOR}, {3, 4, 5, PER_TENSOR}, {OUTPUT, 6, 7, PER_TENSOR}}, 3},
    {"QLinearGlobalAveragePool", {{0, 1, 2, PER_TENSOR}, {OUTPUT, 3, 4, PER_TENSOR}}, 2},
    {"QLinearSigmoid", {{0, 1, 2, PER_TENSOR}, {OUTPUT, 3, 4, PER_TENSOR}}, 2},
    {"QLinearLookup", {{0, 1, 2, PER_TENSOR}, {OUTPUT, 3, 4, PER_TENSOR}}, 2},
    {"QLinearSoftmax", {{0, 1, 2, PER_TENSOR}, {OUTPUT, 3, 4, PER_TENSOR}}, 2},
    /* QLinearConcat: (Y scale, Y zero point), then an (X, scale, zero point) per input. */
    {"QLinearConcat", {{OUTPUT, 0, 1, PER_TENSOR}}, 1},
};

static const quant_op *find_quant_op(const char *op_type)
{
  for (size_t i = 0; i < sizeof quant_ops / sizeof quant_ops[0]; i++)
    if (strcmp(op_type, quant_ops[i].op_type) == 0)
      return &quant_ops[i];
  return NULL;
}

bool npu_quant_is_quantised_op(const char *op_type)
{
  return find_quant_op(op_type) != NULL;
}

static bool present(const npu_hal_op *op, int input)
{
  return input >= 0 && (uint32_t)input < op->input_count &&
         op->inputs[input].dtype != NPU_DTYPE_UNDEFINED;
}

static size_t elements(const npu_hal_tensor_desc *t)
{
  size_t n;
  return npu_dims_elements(t->dims, t->rank, &n) ? n : SIZE_MAX;
}

static bool is_8bit(npu_dtype dtype)
{
  return dtype == NPU_DTYPE_UINT8 || dtype == NPU_DTYPE_INT8;
}

/* The axis a triple's parameters may run along on `t` (its rank known),
 * or -1 when they must be per tensor; false with the error set when the
 * `axis` attribute is out of range. */
static bool parameter_axis(const npu_hal_op *op, const quant_triple *q,
                           const npu_hal_tensor_desc *t, const char *label, int64_t *axis)
{
  *axis = -1;
  switch (q->axis) {
  case PER_TENSOR: return true;
  case AXIS_FIRST: *axis = 0; return t->rank > 0;
  case AXIS_LAST: *axis = (int64_t)t->rank - 1; return true;
  case AXIS_SECOND: *axis = 1; return t->rank > 1;
  case AXIS_ATTRIBUTE:
    if (op->opset < 13)
      return true; /* per tensor only before opset 13 */
    *axis = op->attributes.get_int(op->attributes.node, "axis", 1);
    if (*axis < -(int64_t)t->rank || *axis >= (int64_t)t->rank) {
      FAIL("%s: axis %lld is out of range for rank %u", label, (long long)*axis, t->rank);
      return false;
    }
    if (*axis < 0)
      *axis += t->rank;
    return true;
  }
  return true;
}

/* One triple's checks; `t` is the quantised tensor's desc (NULL for an
 * output, whose shape is not known yet: per tensor only then). */
static npu_status check_triple(const npu_hal_op *op, const quant_triple *q,
                               const char *const *names, const char *label)
{
  bool quantize = strcmp(op->op_type, "QuantizeLinear") == 0;
  const npu_hal_tensor_desc *t = q->tensor == OUTPUT ? NULL : &op->inputs[q->tensor];
  if (q->tensor != OUTPUT && !present(op, q->tensor))
    return FAIL("%s: input %d is missing", label, q->tensor);
  if (t && quantize && t->dtype != NPU_DTYPE_FLOAT32)
    return FAIL("%s: input '%s' is %s, QuantizeLinear takes float32", label, names[q->tensor],
                npu_dtype_name(t->dtype));
  bool int32_allowed = strcmp(op->op_type, "DequantizeLinear") == 0;
  if (t && !quantize && !is_8bit(t->dtype) &&
      !(int32_allowed && t->dtype == NPU_DTYPE_INT32))
    return FAIL("%s: input '%s' is %s, %s takes int8 or uint8 there", label, names[q->tensor],
                npu_dtype_name(t->dtype), op->op_type);
  if (q->scale != NONE && !present(op, q->scale))
    return FAIL("%s: the scale (input %d) is missing", label, q->scale);
  const npu_hal_tensor_desc *scale = q->scale != NONE ? &op->inputs[q->scale] : NULL;
  const npu_hal_tensor_desc *zero = present(op, q->zero) ? &op->inputs[q->zero] : NULL;
  if (scale && scale->dtype != NPU_DTYPE_FLOAT32)
    return FAIL("%s: scale '%s' is %s, not float32", label, names[q->scale],
                npu_dtype_name(scale->dtype));
  if (zero && !(t && !quantize ? zero->dtype == t->dtype : is_8bit(zero->dtype)))
    return FAIL("%s: zero point '%s' is %s, expected %s", label, names[q->zero],
                npu_dtype_name(zero->dtype),
                t && !quantize ? npu_dtype_name(t->dtype) : "int8 or uint8");
  if (zero && zero->dtype == NPU_DTYPE_INT32 && !t)
    return FAIL("%s: zero point '%s' is int32", label, names[q->zero]);
  const npu_hal_tensor_desc *params = scale ? scale : zero; /* they must agree */
  if (!params)
    return NPU_OK;
  if (scale && zero && (scale->rank != zero->rank || elements(scale) != elements(zero)))
    return FAIL("%s: scale '%s' and zero point '%s' differ in shape", label, names[q->scale],
                names[q->zero]);
  size_t count = elements(params);
  int64_t axis = -1; /* (one value: per tensor, whatever the axis says) */
  if (t && count != 1 && !parameter_axis(op, q, t, label, &axis))
    return NPU_ERROR_INVALID_MODEL;
  const char *name = names[scale ? q->scale : q->zero];
  if (params->rank > 1 || (count != 1 && axis < 0))
    return FAIL("%s: '%s' has %zu values in %u axes; %s wants one value here", label, name,
                count, params->rank, op->op_type);
  if (count != 1 && (int64_t)count != t->dims[axis])
    return FAIL("%s: '%s' has %zu values for %lld indices of axis %lld of '%s'", label, name,
                count, (long long)t->dims[axis], (long long)axis, names[q->tensor]);
  return NPU_OK;
}

/* The view of a QLinearConv/ConvInteger as the Conv it computes (input,
 * weights), of a QLinearConvTranspose as the ConvTranspose, or of the matrix
 * ops as MatMul, for the checks and shapes those have. */
static npu_hal_op float_view(const npu_hal_op *op, npu_hal_tensor_desc *inputs,
                             const void **values, const char **names,
                             const char *const *input_names)
{
  bool qlinear = op->op_type[0] == 'Q';
  uint32_t w = qlinear ? 3 : 1;
  npu_hal_op view = *op;
  view.op_type = strstr(op->op_type, "ConvTranspose") ? "ConvTranspose"
                 : strstr(op->op_type, "Conv")        ? "Conv"
                                                      : "MatMul";
  inputs[0] = op->inputs[0];
  inputs[1] = op->inputs[w];
  /* (8-bit of either sign on each side, which MatMul's checks would refuse) */
  inputs[1].dtype = inputs[0].dtype;
  values[0] = op->input_values[0];
  values[1] = op->input_values[w];
  if (names) {
    names[0] = input_names[0];
    names[1] = input_names[w];
  }
  view.input_count = 2;
  view.inputs = inputs;
  view.input_values = values;
  return view;
}

static npu_status check_concat(const npu_hal_op *op, const char *const *names,
                               const char *label)
{
  if ((op->input_count - 2) % 3 != 0)
    return FAIL("%s: %u inputs; QLinearConcat takes Y's scale and zero point, then triples of "
                "(X, scale, zero point)", label, op->input_count);
  npu_dtype first = op->inputs[2].dtype;
  if (op->input_count > 127)
    return FAIL("%s: %u inputs; QLinearConcat takes at most 41 tensors here", label,
                op->input_count);
  for (uint32_t i = 2; i < op->input_count; i += 3) {
    quant_triple q = {(int8_t)i, (int8_t)(i + 1), (int8_t)(i + 2), PER_TENSOR};
    npu_status status = check_triple(op, &q, names, label);
    if (status != NPU_OK)
      return status;
    if (op->inputs[i].dtype != first)
      return FAIL("%s: input '%s' is %s, '%s' %s", label, names[i],
                  npu_dtype_name(op->inputs[i].dtype), names[2], npu_dtype_name(first));
  }
  return NPU_OK;
}

/* Opset 21's attributes of QuantizeLinear and DequantizeLinear: blocked
 * scales (refused), and the type QuantizeLinear makes without a zero point. */
static npu_status check_opset21_attributes(const npu_hal_op *op, const char *label)
{
  const npu_hal_attributes *a = &op->attributes;
  bool quantize = !strcmp(op->op_type, "QuantizeLinear");
  if (!quantize && strcmp(op->op_type, "DequantizeLinear") != 0)
    return NPU_OK;
  int64_t block_size = a->get_int(a->node, "block_size", 0);
  if (block_size != 0)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: blocked quantisation (block_size %lld, "
                         "opset 21) is not supported: per tensor or per axis only", label,
                         (long long)block_size);
  int64_t named = quantize ? a->get_int(a->node, "output_dtype", 0) : 0;
  if (named != 0 && named != 2 && named != 3)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: output_dtype %lld: QuantizeLinear makes "
                         "uint8 (2) or int8 (3) tensors only", label, (long long)named);
  if (named != 0 && present(op, 2) &&
      op->inputs[2].dtype != (named == 3 ? NPU_DTYPE_INT8 : NPU_DTYPE_UINT8))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s: output_dtype %lld differs from the zero "
                         "point's type", label, (long long)named);
  return NPU_OK;
}

npu_status npu_quant_relation(const npu_hal_op *op, const char *const *input_names,
                              const char *label)
{
  const quant_op *q = find_quant_op(op->op_type);
  if (!q)
    return NPU_OK;
  npu_status status = check_opset21_attributes(op, label);
  if (status != NPU_OK)
    return status;
  for (uint8_t i = 0; i < q->triple_count; i++) {
    status = check_triple(op, &q->triples[i], input_names, label);
    if (status != NPU_OK)
      return status;
  }
  if (strcmp(op->op_type, "QLinearConcat") == 0)
    return check_concat(op, input_names, label);
  bool conv = strstr(op->op_type, "Conv") != NULL;
  if (!conv && strstr(op->op_type, "MatMul") == NULL)
    return NPU_OK;
  npu_hal_tensor_desc inputs[2];
  const void *values[2];
  const char *names[2];
  npu_hal_op view = float_view(op, inputs, values, names, input_names);
  status = npu_op_validate(npu_op_schema_find(NULL, view.op_type), &view, names, label);
  if (status != NPU_OK || !present(op, 8))
    return status;
  const npu_hal_tensor_desc *bias = &op->inputs[8];
  /* (the view's checks made the group and the weights' shape valid) */
  int64_t out_channels = !conv ? inputs[1].dims[inputs[1].rank - 1]
                         : strcmp(view.op_type, "ConvTranspose") == 0
                             ? inputs[1].dims[1] * op->attributes.get_int(op->attributes.node,
                                                                         "group", 1)
                             : inputs[1].dims[0];
  if (bias->dtype != NPU_DTYPE_INT32 || bias->rank != 1 || bias->dims[0] != out_channels)
    return FAIL("%s: bias '%s' must be int32 with one value per output channel (%lld)", label,
                input_names[8], (long long)out_channels);
  return NPU_OK;
}

/* The quantisation of output `t` from constant parameter inputs; left
 * unknown (count 0) where they are computed at run time. */
static void describe_quant(const npu_hal_op *op, int scale, int zero, int64_t axis,
                           npu_hal_tensor_desc *t)
{
  memset(&t->quant, 0, sizeof t->quant);
  if (!present(op, scale) || !op->input_values[scale] ||
      (present(op, zero) && !op->input_values[zero]))
    return;
  t->quant.count = (uint32_t)elements(&op->inputs[scale]);
  t->quant.axis = t->quant.count > 1 ? (int32_t)axis : 0;
  t->quant.scales = op->input_values[scale];
  t->quant.zero_points = present(op, zero) ? op->input_values[zero] : NULL;
}

/* The type of a triple's output: its zero point's, else uint8 (QuantizeLinear)
 * or the first input's. */
static npu_dtype output_dtype(const npu_hal_op *op, int zero, npu_dtype fallback)
{
  return present(op, zero) ? op->inputs[zero].dtype : fallback;
}

npu_status npu_quant_infer_shapes(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                  const char *label)
{
  const char *type = op->op_type;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  npu_hal_tensor_desc *y = &outputs[0];
  *y = *x;
  memset(&y->quant, 0, sizeof y->quant);
  if (!strcmp(type, "QuantizeLinear")) {
    int64_t axis = -1;
    if (elements(&op->inputs[1]) != 1 &&
        !parameter_axis(op, &quant_ops[0].triples[0], x, label, &axis))
      return NPU_ERROR_INVALID_MODEL;
    /* Without a zero point, opset 21's output_dtype names the type (checked in
     * npu_quant_relation; uint8 if absent). */
    int64_t named = op->attributes.get_int(op->attributes.node, "output_dtype", 0);
    y->dtype = output_dtype(op, 2, named == 3 ? NPU_DTYPE_INT8 : NPU_DTYPE_UINT8);
    describe_quant(op, 1, 2, axis, y);
    return NPU_OK;
  }
  if (!strcmp(type, "DequantizeLinear")) {
    y->dtype = NPU_DTYPE_FLOAT32;
    return NPU_OK;
  }
  if (!strcmp(type, "DynamicQuantizeLinear")) {
    y->dtype = NPU_DTYPE_UINT8;
    outputs[1] = (npu_hal_tensor_desc){.dtype = NPU_DTYPE_FLOAT32};
    outputs[2] = (npu_hal_tensor_desc){.dtype = NPU_DTYPE_UINT8};
    return NPU_OK;
  }
  if (!strcmp(type, "QLinearSigmoid") || !strcmp(type, "QLinearLookup") ||
      !strcmp(type, "QLinearSoftmax") || !strcmp(type, "QLinearGlobalAveragePool")) {
    y->dtype = output_dtype(op, 4, x->dtype);
    describe_quant(op, 3, 4, -1, y);
    if (strcmp(type, "QLinearGlobalAveragePool") != 0)
      return NPU_OK;
    bool channels_last = op->attributes.get_int(op->attributes.node, "channels_last", 0) != 0;
    for (uint32_t d = channels_last ? 1 : 2; d < y->rank - (channels_last ? 1 : 0); d++)
      y->dims[d] = 1;
    return NPU_OK;
  }
  npu_hal_op view = *op;
  npu_hal_tensor_desc inputs[NPU_OP_VARIADIC];
  const void *values[NPU_OP_VARIADIC];
  uint32_t y_scale, y_zero;
  if (!strcmp(type, "QLinearAdd") || !strcmp(type, "QLinearMul") ||
      !strcmp(type, "QLinearBinaryLookup")) {
    view.op_type = "Add";
    inputs[0] = op->inputs[0];
    inputs[1] = op->inputs[3];
    view.inputs = inputs;
    view.input_count = 2;
    y_scale = 6, y_zero = 7;
  } else if (!strcmp(type, "QLinearConcat")) {
    view.op_type = "Concat";
    view.input_count = 0;
    for (uint32_t i = 2; i < op->input_count; i += 3) {
      inputs[view.input_count] = op->inputs[i];
      values[view.input_count++] = op->input_values[i];
    }
    view.inputs = inputs;
    view.input_values = values;
    y_scale = 0, y_zero = 1;
  } else {
    view = float_view(op, inputs, values, NULL, NULL);
    y_scale = 6, y_zero = 7; /* QLinearConv, QLinearMatMul; none for the *Integer ops */
  }
  const npu_op_schema *schema = npu_op_schema_find(NULL, view.op_type);
  npu_op_params params;
  npu_status status = npu_op_params_attach(schema, &view, &params, label);
  if (status == NPU_OK)
    status = npu_infer_shapes(schema, &view, outputs, label);
  if (status != NPU_OK)
    return status;
  memset(&y->quant, 0, sizeof y->quant);
  if (strstr(type, "Integer")) {
    y->dtype = NPU_DTYPE_INT32;
    return NPU_OK;
  }
  y->dtype = output_dtype(op, (int)y_zero, x->dtype);
  describe_quant(op, (int)y_scale, (int)y_zero, -1, y);
  return NPU_OK;
}
