/* Resolving a convolution's or pooling's window once (see window.h). */
#include <string.h>

#include "npu_checked.h"
#include "window.h"

#define FAIL(...) npu_set_error(NPU_ERROR_INVALID_MODEL, __VA_ARGS__)
#define TOO_LARGE(label) FAIL("%s: shape too large (its arithmetic overflows)", label)

typedef enum padding { PAD_EXPLICIT, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } padding;

bool npu_window_op(const char *op_type)
{
  static const char *const types[] = {"Conv",        "ConvTranspose", "MaxPool",
                                      "AveragePool", "QLinearConv",   "ConvInteger",
                                      "QLinearConvTranspose"};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(op_type, types[i]) == 0)
      return true;
  return false;
}

static int64_t value_or(const int64_t *values, size_t count, size_t i, int64_t fallback)
{
  return i < count ? values[i] : fallback;
}

static npu_status read_padding(const npu_hal_op *op, padding *mode, const char *label)
{
  const char *auto_pad = op->attributes.get_string(op->attributes.node, "auto_pad", "NOTSET");
  static const char *const names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  for (int i = 0; i < 4; i++)
    if (strcmp(auto_pad, names[i]) == 0) {
      *mode = (padding)i;
      return NPU_OK;
    }
  return FAIL("%s: auto_pad '%s' is none of NOTSET, SAME_UPPER, SAME_LOWER, VALID", label,
              auto_pad);
}

/* Splits the padding a SAME window needs: the odd one at the end (UPPER)
 * or at the beginning (LOWER). */
static void split_same(int64_t total, padding mode, int64_t *begin, int64_t *end)
{
  total = total > 0 ? total : 0;
  *begin = mode == PAD_SAME_LOWER ? (total + 1) / 2 : total / 2;
  *end = total - *begin;
}

/* Conv and pooling: out = floor or ceil((padded - span) / stride) + 1. */
static npu_status resolve_forward(const npu_hal_op *op, padding mode, uint32_t s,
                                  npu_hal_window *w, const char *label)
{
  int64_t in = op->inputs[0].dims[2 + s], stride = w->strides[s];
  int64_t span, padded, dim, last, total;
  if (!npu_mul_i64(w->dilations[s], w->kernel[s] - 1, &span) || !npu_add_i64(span, 1, &span))
    return TOO_LARGE(label);
  if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
    dim = in / stride + (in % stride != 0);
    if (!npu_mul_i64(dim - 1, stride, &total) || !npu_add_i64(total, span - in, &total))
      return TOO_LARGE(label);
    split_same(total, mode, &w->pad_begin[s], &w->pad_end[s]);
  } else if (!npu_add_i64(in, w->pad_begin[s], &padded) ||
             !npu_add_i64(padded, w->pad_end[s], &padded))
    return TOO_LARGE(label);
  else if (padded < span)
    dim = 0;
  else if (w->ceil_mode && mode == PAD_EXPLICIT) {
    dim = (padded - span) / stride + 1 + ((padded - span) % stride != 0);
    /* the last window may not start in the end padding */
    if (!npu_mul_i64(dim - 1, stride, &last) || last >= in + w->pad_begin[s])
      dim--;
  } else
    dim = (padded - span) / stride + 1;
  if (dim <= 0)
    return FAIL("%s: window larger than its padded input", label);
  w->output[s] = dim;
  return NPU_OK;
}

/* ConvTranspose: output_shape when given, else
 * stride * (in - 1) + output_padding + span - pads (SAME: in * stride). */
static npu_status resolve_transposed(const npu_hal_op *op, padding mode, uint32_t s,
                                     npu_hal_window *w, const char *label)
{
  const int64_t *output_shape;
  size_t nos = op->attributes.get_ints(op->attributes.node, "output_shape", &output_shape);
  int64_t in = op->inputs[0].dims[2 + s], stride = w->strides[s];
  bool same = mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER;
  int64_t dim, span, pad, total;
  if (!npu_mul_i64(w->dilations[s], w->kernel[s] - 1, &span) || !npu_add_i64(span, 1, &span))
    return TOO_LARGE(label);
  if (nos >= w->spatial)
    dim = output_shape[nos - w->spatial + s];
  else if (same) {
    if (!npu_mul_i64(in, stride, &dim))
      return TOO_LARGE(label);
  } else if (!npu_mul_i64(stride, in - 1, &dim) || !npu_add_i64(dim, w->output_padding[s], &dim) ||
             !npu_add_i64(dim, span, &dim) ||
             !npu_add_i64(w->pad_begin[s], w->pad_end[s], &pad) || !npu_sub_i64(dim, pad, &dim))
    return TOO_LARGE(label);
  if (dim <= 0)
    return FAIL("%s: empty output", label);
  if (same) {
    if (!npu_mul_i64(stride, in - 1, &total) || !npu_add_i64(total, span, &total) ||
        !npu_sub_i64(total, dim, &total))
      return TOO_LARGE(label);
    split_same(total, mode, &w->pad_begin[s], &w->pad_end[s]);
  }
  w->output[s] = dim;
  return NPU_OK;
}

npu_status npu_window_resolve(const npu_hal_op *op, npu_hal_window *w, const char *label)
{
  const npu_hal_attributes *a = &op->attributes;
  const char *type = op->op_type;
  bool pooling = strstr(type, "Pool") != NULL, transposed = strstr(type, "ConvTranspose") != NULL;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  /* (QLinearConv's and QLinearConvTranspose's weights are input 3) */
  const npu_hal_tensor_desc *weights = pooling ? NULL
                                       : &op->inputs[strncmp(type, "QLinear", 7) == 0 ? 3 : 1];
  memset(w, 0, sizeof *w);
  if (x->rank < 3 || x->rank > NPU_MAX_RANK)
    return FAIL("%s: %s takes (N, C, spatial...) inputs, not rank %u", label, type, x->rank);
  w->spatial = x->rank - 2;
  padding mode = PAD_EXPLICIT;
  npu_status status = read_padding(op, &mode, label);
  if (status != NPU_OK)
    return status;
  const int64_t *kernel, *strides, *dilations, *pads, *output_padding;
  size_t nk = a->get_ints(a->node, "kernel_shape", &kernel);
  size_t ns = a->get_ints(a->node, "strides", &strides);
  size_t nd = a->get_ints(a->node, "dilations", &dilations);
  size_t np = a->get_ints(a->node, "pads", &pads);
  size_t nop = a->get_ints(a->node, "output_padding", &output_padding);
  if (nk == 0 && weights && weights->rank == x->rank) { /* from the weights */
    kernel = weights->dims + 2;
    nk = w->spatial;
  }
  if (nk != w->spatial)
    return FAIL("%s: kernel has %zu dimensions for %u spatial axes", label, nk, w->spatial);
  if (np != 0 && np != 2 * w->spatial) /* (the schema checks it; read no further) */
    return FAIL("%s: %zu pads for %u spatial axes", label, np, w->spatial);
  w->group = pooling ? 1 : a->get_int(a->node, "group", 1);
  w->ceil_mode = pooling && a->get_int(a->node, "ceil_mode", 0) != 0;
  w->count_include_pad = pooling && a->get_int(a->node, "count_include_pad", 0) != 0;
  for (uint32_t s = 0; s < w->spatial; s++) {
    w->kernel[s] = kernel[s];
    w->strides[s] = value_or(strides, ns, s, 1);
    w->dilations[s] = value_or(dilations, nd, s, 1);
    w->output_padding[s] = transposed ? value_or(output_padding, nop, s, 0) : 0;
    if (mode == PAD_EXPLICIT) {
      w->pad_begin[s] = value_or(pads, np, s, 0);
      w->pad_end[s] = value_or(pads, np, s + w->spatial, 0);
    }
    if (w->strides[s] <= 0 || w->dilations[s] <= 0 || w->kernel[s] <= 0)
      return FAIL("%s: kernel, stride and dilation must be positive", label);
    status = transposed ? resolve_transposed(op, mode, s, w, label)
                        : resolve_forward(op, mode, s, w, label);
    if (status != NPU_OK)
      return status;
  }
  return NPU_OK;
}
