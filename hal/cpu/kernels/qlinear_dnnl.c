/* QLinearConv on oneDNN's int8 convolutions, and QLinearConvTranspose (the
 * QDQ rewriting's, weights [C, M/group, k...] with their parameters along
 * axis 1) on its int8 deconvolutions (u8 or s8 activations, s8 weights;
 * VNNI where the CPU has it). oneDNN 2.6 computes
 *   y = saturate(round((sum (x - x_zero) w + bias) * scale[m] + y_zero))
 * in int32 up to the float scaling, which is ONNX's QLinearConv when
 *   - scale[m] = x_scale * w_scale[m] / y_scale (one per tensor or per
 *     output channel: oneDNN's output scales, computed as the reference does),
 *   - x_zero and y_zero are oneDNN's source and destination zero points
 *     (padding then stands for x_zero, as in ONNX),
 *   - the weights' zero points are taken out of the weights once, when they
 *     are packed: w - w_zero[m] must fit int8 (it does for symmetric int8
 *     weights, ORT's quantiser's default, and for uint8 ones around 128).
 * The one difference to the reference loops (integer_ops.c), which round
 * and then add y_zero: oneDNN adds y_zero in float before rounding half to
 * even, so an exact tie with an odd y_zero rounds the other way: 1 LSB.
 * Everything else (weights computed at run time, parameters that are not
 * constants, weights that do not fit int8) is refused, and the reference
 * loops run it. */
#include <stdlib.h>
#include <string.h>

#include "dnnl_kernels.h"
#include "quant_kernels.h"

/* QLinearConv's inputs. */
enum { X, X_SCALE, X_ZERO, W, W_SCALE, W_ZERO, Y_SCALE, Y_ZERO, BIAS };

static bool is_8bit(npu_dtype dtype)
{
  return dtype == NPU_DTYPE_INT8 || dtype == NPU_DTYPE_UINT8;
}

static dnnl_data_type_t dnnl_8bit(npu_dtype dtype)
{
  return dtype == NPU_DTYPE_INT8 ? dnnl_s8 : dnnl_u8;
}

/* Number of elements of a parameter input. */
static size_t count_of(const npu_hal_op *op, uint32_t input)
{
  return cpu_tensor_elements(&op->inputs[input]);
}

static bool is_transposed(const npu_hal_op *op)
{
  return strcmp(op->op_type, "QLinearConvTranspose") == 0;
}

/* The weights' axis that their per-channel parameters run along: output
 * channels, [M, C/group, k...] (0) or transposed [C, M/group, k...] (1). */
static uint32_t weight_axis(const npu_hal_op *op)
{
  return is_transposed(op) ? 1 : 0;
}

/* The weights less their zero points, as int8 (`out`, one per weight);
 * false when one does not fit. */
static bool weights_without_zero(const npu_hal_op *op, int8_t *out)
{
  const npu_hal_tensor_desc *w = &op->inputs[W];
  uint32_t axis = weight_axis(op);
  size_t n = cpu_tensor_elements(w), channels = (size_t)w->dims[axis];
  size_t inner = n / (size_t)w->dims[0] / (axis ? channels : 1), zeros = count_of(op, W_ZERO);
  for (size_t i = 0; i < n; i++) {
    size_t m = i / inner % channels;
    int32_t v = cpu_q_load(op->input_values[W], i, w->dtype) -
                cpu_q_load(op->input_values[W_ZERO], zeros > 1 ? m : 0, w->dtype);
    if (v < INT8_MIN || v > INT8_MAX)
      return false;
    out[i] = (int8_t)v;
  }
  return true;
}

/* oneDNN's output scales (x_scale * w_scale[m] / y_scale, per tensor or
 * per output channel: a transposed convolution's weight scales repeat for
 * each group) and zero points on top of `attr`. */
static bool set_quantisation(const npu_hal_op *op, dnnl_primitive_attr_t attr)
{
  size_t weight_scales = count_of(op, W_SCALE);
  size_t count = weight_scales > 1 ? (size_t)op->outputs[0].dims[1] : 1;
  float *scales = malloc(count * sizeof *scales);
  if (!scales)
    return false;
  float xs = *(const float *)op->input_values[X_SCALE];
  float ys = *(const float *)op->input_values[Y_SCALE];
  const float *ws = op->input_values[W_SCALE];
  for (size_t m = 0; m < count; m++)
    scales[m] = xs * ws[m % weight_scales] / ys;
  int32_t x_zero = cpu_q_load(op->input_values[X_ZERO], 0, op->inputs[X_ZERO].dtype);
  int32_t y_zero = cpu_q_load(op->input_values[Y_ZERO], 0, op->inputs[Y_ZERO].dtype);
  bool set = dnnl_primitive_attr_set_output_scales(attr, (dnnl_dim_t)count,
                                                   count > 1 ? 1 << 1 : 0, scales) == dnnl_success &&
             (x_zero == 0 || dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0,
                                                                 &x_zero) == dnnl_success) &&
             (y_zero == 0 || dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0,
                                                                 &y_zero) == dnnl_success);
  free(scales);
  return set;
}

/* What the kernel needs known when planning: every parameter, per tensor
 * but the weights', and the weights. */
static bool takes(const npu_hal_op *op)
{
  static const uint32_t constants[] = {X_SCALE, X_ZERO, W, W_SCALE, W_ZERO, Y_SCALE, Y_ZERO};
  if (op->input_count < BIAS || !is_8bit(op->inputs[X].dtype) || !is_8bit(op->inputs[W].dtype) ||
      !is_8bit(op->outputs[0].dtype))
    return false;
  for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
    if (!op->input_values[constants[i]] || op->inputs[constants[i]].dtype == NPU_DTYPE_UNDEFINED)
      return false;
  size_t out_channels = (size_t)op->inputs[W].dims[weight_axis(op)];
  size_t w_scales = count_of(op, W_SCALE), w_zeros = count_of(op, W_ZERO);
  return count_of(op, X_SCALE) == 1 && count_of(op, X_ZERO) == 1 && count_of(op, Y_SCALE) == 1 &&
         count_of(op, Y_ZERO) == 1 && (w_scales == 1 || w_scales == out_channels) &&
         (w_zeros == 1 || w_zeros == out_channels);
}

static npu_status build_qlinear_conv(const npu_hal_op *op, npu_hal_kernel *k)
{
  dnnl_engine_t engine = cpu_dnnl_engine();
  if (!engine)
    return cpu_unsupported(op, "no oneDNN CPU engine");
  if (!takes(op))
    return cpu_unsupported(op, "oneDNN's int8 convolution takes constant weights and "
                               "per-tensor activation parameters");
  bool has_bias = op->input_count > BIAS && op->inputs[BIAS].dtype == NPU_DTYPE_INT32;
  bool transposed = is_transposed(op);
  cpu_dnnl_window g;
  npu_status status = cpu_dnnl_read_window(op, &op->inputs[W], transposed, &g);
  if (status != NPU_OK)
    return status;
  int rank = g.spatial + 2;
  /* oneDNN's (g, oc/g, ic/g, k...) weights: Conv's in that order, a
   * transposed one's with ic/g and oc/g swapped in memory. */
  static const dnnl_format_tag_t grouped_tags[2][3] = {{dnnl_abcd, dnnl_abcde, dnnl_abcdef},
                                                       {dnnl_acbd, dnnl_acbde, dnnl_acbdef}};
  dnnl_memory_desc_t src_md, dst_md, any_src_md, any_dst_md, user_weights_md, any_weights_md,
      bias_md;
  dnnl_data_type_t src_type = dnnl_8bit(op->inputs[X].dtype);
  dnnl_data_type_t dst_type = dnnl_8bit(op->outputs[0].dtype);
  dnnl_memory_desc_init_by_tag(&src_md, rank, g.src, src_type,
                               cpu_dnnl_layout_tag(&op->inputs[X]));
  dnnl_memory_desc_init_by_tag(&dst_md, rank, g.dst, dst_type,
                               cpu_dnnl_layout_tag(&op->outputs[0]));
  dnnl_memory_desc_init_by_tag(&any_src_md, rank, g.src, src_type, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&any_dst_md, rank, g.dst, dst_type, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&user_weights_md, rank + 1, g.weights, dnnl_s8,
                               grouped_tags[transposed][g.spatial - 1]);
  dnnl_memory_desc_init_by_tag(&any_weights_md, rank + 1, g.weights, dnnl_s8,
                               dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&bias_md, 1, g.bias, dnnl_s32, dnnl_a);

  cpu_dnnl_params *p = calloc(1, sizeof *p);
  int8_t *weights = malloc(cpu_tensor_elements(&op->inputs[W]));
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  if (!p || !weights) {
    free(p);
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
    goto done;
  }
  k->params = p;
  k->free_params = cpu_dnnl_free_params;
  p->bias_input = BIAS;
  if (!weights_without_zero(op, weights)) {
    status = cpu_unsupported(op, "weights less their zero point do not fit int8");
    goto done;
  }
  status = cpu_dnnl_make_attributes(op, NULL, p, &attr);
  if (status != NPU_OK)
    goto done;
  if (!set_quantisation(op, attr)) {
    status = cpu_unsupported(op, "oneDNN takes no such scales or zero points");
    goto done;
  }
  /* The primitive runs oneDNN's choice (channels last); tensors planned in
   * another layout are reordered in the workspace. */
  dnnl_status_t s = cpu_dnnl_describe_window(&g, transposed, dnnl_convolution_direct, &any_src_md,
                                             &any_weights_md, has_bias ? &bias_md : NULL,
                                             &any_dst_md, attr, &pd);
  if (s != dnnl_success || !cpu_dnnl_fast_implementation(pd)) {
    status = cpu_unsupported(op, transposed
                                     ? "oneDNN has no fast int8 deconvolution for this shape"
                                     : "oneDNN has no fast int8 convolution for this shape");
    goto done;
  }
  /* (weights: a copy of our own, freed below: not lasting) */
  cpu_weights_id id = cpu_packed_weights_identify(weights, cpu_tensor_elements(&op->inputs[W]));
  status = cpu_dnnl_pack_weights(op, W, weights, &id, false, pd, &user_weights_md, k, p);
  if (status != NPU_OK)
    goto done;
  s = cpu_dnnl_make_primitive(pd, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                              &src_md, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                              &dst_md, p, k);
  if (s == dnnl_success && has_bias)
    s = dnnl_memory_create(&p->bias, &bias_md, engine, DNNL_MEMORY_NONE);
  if (s != dnnl_success)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: cannot create the %s primitive",
                           op->op_type);
  k->run = cpu_dnnl_run;
done:
  free(weights);
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  return status;
}

const cpu_kernel_entry cpu_qdnnl_kernels[] = {
    {"QLinearConv", build_qlinear_conv, CPU_LAYOUTS_ANY, false, CPU_ONEDNN_BLOCKS},
    {"QLinearConvTranspose", build_qlinear_conv, CPU_LAYOUTS_ANY, false, CPU_ONEDNN_BLOCKS},
    {NULL, NULL, CPU_LAYOUTS_PLAIN},
};
