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
 * loops run it. A residual QLinearAdd after the convolution (fused by the
 * planner: DEQUANTIZED_ADD then QUANTIZE) runs as post-ops, see
 * append_residual. */
#include <stdlib.h>
#include <string.h>

#include "dnnl_kernels.h"
#include "quant_kernels.h"

/* QLinearConv's inputs. */
enum { X, X_SCALE, X_ZERO, W, W_SCALE, W_ZERO, Y_SCALE, Y_ZERO, BIAS };

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

/* The weights less their zero points, as int8 (`out`, one per weight;
 * weight i's channel: i / inner % channels); false when one does not fit. */
static bool weights_without_zero(const npu_hal_op *op, size_t inner, size_t channels, int8_t *out)
{
  const npu_hal_tensor_desc *w = &op->inputs[W];
  size_t n = cpu_tensor_elements(w), zeros = count_of(op, W_ZERO);
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

npu_status cpu_qdnnl_start(const npu_hal_op *op, size_t inner, size_t channels, npu_hal_kernel *k,
                           cpu_dnnl_params **params, int8_t **weights)
{
  cpu_dnnl_params *p = calloc(1, sizeof *p);
  *weights = malloc(cpu_tensor_elements(&op->inputs[W]));
  if (!p || !*weights) {
    free(p);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  }
  k->params = *params = p;
  k->free_params = cpu_dnnl_free_params;
  p->bias_input = BIAS;
  return weights_without_zero(op, inner, channels, *weights)
             ? NPU_OK
             : cpu_unsupported(op, "weights less their zero point do not fit int8");
}

bool cpu_qdnnl_set_quantisation(const npu_hal_op *op, size_t count, int32_t y_zero,
                                dnnl_primitive_attr_t attr)
{
  size_t weight_scales = count_of(op, W_SCALE);
  float *scales = malloc(count * sizeof *scales);
  if (!scales)
    return false;
  float xs = *(const float *)op->input_values[X_SCALE];
  float ys = *(const float *)op->input_values[Y_SCALE];
  const float *ws = op->input_values[W_SCALE];
  for (size_t m = 0; m < count; m++)
    scales[m] = xs * ws[m % weight_scales] / ys;
  int32_t x_zero = cpu_q_load(op->input_values[X_ZERO], 0, op->inputs[X_ZERO].dtype);
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
  if (op->input_count < BIAS || !cpu_q_is_8bit(op->inputs[X].dtype) ||
      !cpu_q_is_8bit(op->inputs[W].dtype) || !cpu_q_is_8bit(op->outputs[0].dtype))
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

/* A residual Add fused after the convolution: the addend (an 8-bit tensor
 * of the output's shape, type and layout) and its and the sum's parameters. */
typedef struct residual_add {
  uint32_t input; /* of the op's fused inputs */
  float addend_scale, y_scale;
  int32_t addend_zero, y_zero;
} residual_add;

/* The op's activations as a residual Add; false for any other chain. */
static bool read_residual(const npu_hal_op *op, residual_add *r)
{
  if (op->activation_count != 2)
    return false;
  const npu_hal_activation *add = &op->activations[0], *q = &op->activations[1];
  if (add->kind != NPU_HAL_ACTIVATION_DEQUANTIZED_ADD || q->kind != NPU_HAL_ACTIVATION_QUANTIZE ||
      add->input >= op->fused_input_count)
    return false;
  const npu_hal_tensor_desc *t = &op->fused_inputs[add->input], *y = &op->outputs[0];
  *r = (residual_add){add->input, add->alpha, q->alpha, (int32_t)add->beta, (int32_t)q->beta};
  return t->dtype == y->dtype && t->rank == y->rank && npu_hal_same_layout(t, y) &&
         memcmp(t->dims, y->dims, y->rank * sizeof y->dims[0]) == 0 &&
         (float)r->addend_zero == add->beta && (float)r->y_zero == q->beta;
}

/* The residual Add as post-ops after oneDNN's output scale (which leaves
 * the convolution in steps of its own output): rounded and saturated as
 * its own quantisation does (less its zero point), then in steps of the
 * addend less the addend's zero point, plus the addend's 8-bit values
 * (a binary post-op on fused input r->input), then in steps of the sum;
 * oneDNN adds the sum's zero point (set as the destination's), rounds and
 * saturates. The reference's float arithmetic up to float rounding: within
 * one step of the sum, saturating or not. oneDNN 2.6 gives a second linear
 * post-op the first one's parameters (see dnnl_kernels.c), so the last
 * scaling is a power with exponent 1. */
static bool append_residual(const npu_hal_op *op, const residual_add *r,
                            const cpu_dnnl_window *g, dnnl_primitive_attr_t attr,
                            cpu_dnnl_params *p)
{
  const npu_hal_tensor_desc *y = &op->outputs[0];
  float own_scale = *(const float *)op->input_values[Y_SCALE];
  int32_t own_zero = cpu_q_load(op->input_values[Y_ZERO], 0, op->inputs[Y_ZERO].dtype), lo, hi;
  cpu_q_range(y->dtype, &lo, &hi);
  dnnl_post_ops_t post_ops = NULL;
  dnnl_memory_desc_t md;
  bool appended =
      dnnl_post_ops_create(&post_ops) == dnnl_success &&
      dnnl_memory_desc_init_by_tag(&md, g->spatial + 2, g->dst, cpu_dnnl_8bit(y->dtype),
                                   cpu_dnnl_layout_tag(&op->fused_inputs[r->input])) ==
          dnnl_success &&
      dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_round, 0, 0) == dnnl_success &&
      dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_clip_v2, (float)(lo - own_zero),
                                   (float)(hi - own_zero)) == dnnl_success &&
      dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_linear,
                                   own_scale / r->addend_scale,
                                   -(float)r->addend_zero) == dnnl_success &&
      dnnl_post_ops_append_binary(post_ops, dnnl_binary_add, &md) == dnnl_success &&
      dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_pow,
                                   r->addend_scale / r->y_scale, 1.0f) == dnnl_success &&
      dnnl_primitive_attr_set_post_ops(attr, post_ops) == dnnl_success &&
      dnnl_memory_create(&p->addends[0], &md, cpu_dnnl_engine(), DNNL_MEMORY_NONE) ==
          dnnl_success;
  if (post_ops)
    dnnl_post_ops_destroy(post_ops);
  if (!appended)
    return false;
  p->addend_args[0] = DNNL_ARG_ATTR_MULTIPLE_POST_OP(3) | DNNL_ARG_SRC_1;
  p->addend_inputs[0] = op->input_count + r->input;
  p->addend_count = 1;
  return true;
}

npu_status cpu_qdnnl_complete(const npu_hal_op *op, uint32_t weights_input, const int8_t *weights,
                              const dnnl_memory_desc_t *user_weights_md, dnnl_primitive_desc_t pd,
                              const dnnl_memory_desc_t *run_src, const dnnl_memory_desc_t *src,
                              const dnnl_memory_desc_t *run_dst, const dnnl_memory_desc_t *dst,
                              const dnnl_memory_desc_t *bias_md, npu_hal_kernel *k,
                              cpu_dnnl_params *p)
{
  /* (weights: the caller's copy, freed after: not lasting) */
  size_t count = cpu_tensor_elements(&op->inputs[weights_input]);
  cpu_weights_id id = cpu_packed_weights_identify(weights, count);
  npu_status status = cpu_dnnl_pack_weights(op, weights_input, weights, &id, false, pd,
                                            user_weights_md, k, p);
  if (status != NPU_OK)
    return status;
  dnnl_status_t s = cpu_dnnl_make_primitive(pd, run_src, src, run_dst, dst, p, k);
  if (s == dnnl_success && bias_md)
    s = dnnl_memory_create(&p->bias, bias_md, cpu_dnnl_engine(), DNNL_MEMORY_NONE);
  if (s != dnnl_success)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: cannot create the %s primitive",
                         op->op_type);
  k->run = cpu_dnnl_run;
  return NPU_OK;
}

static npu_status build_qlinear_conv(const npu_hal_op *op, npu_hal_kernel *k)
{
  dnnl_engine_t engine = cpu_dnnl_engine();
  if (!engine)
    return cpu_unsupported(op, "no oneDNN CPU engine");
  if (!takes(op))
    return cpu_unsupported(op, "oneDNN's int8 convolution takes constant weights and "
                               "per-tensor activation parameters");
  residual_add residual = {0};
  bool fused = op->activation_count > 0;
  if (fused && !read_residual(op, &residual))
    return cpu_unsupported(op, "oneDNN's int8 convolution fuses only a residual Add");
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
  dnnl_data_type_t src_type = cpu_dnnl_8bit(op->inputs[X].dtype);
  dnnl_data_type_t dst_type = cpu_dnnl_8bit(op->outputs[0].dtype);
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

  /* (the weights' per-channel parameters run along axis 0, or a transposed
   * one's along axis 1: the same for each group) */
  const npu_hal_tensor_desc *w = &op->inputs[W];
  size_t channels = (size_t)w->dims[weight_axis(op)];
  size_t inner = cpu_tensor_elements(w) / (size_t)w->dims[0] / (transposed ? channels : 1);
  cpu_dnnl_params *p = NULL;
  int8_t *weights = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  status = cpu_qdnnl_start(op, inner, channels, k, &p, &weights);
  if (status != NPU_OK)
    goto done;
  npu_hal_op unfused = *op; /* (the residual's post-ops are appended here) */
  unfused.activation_count = 0;
  status = cpu_dnnl_make_attributes(&unfused, NULL, p, &attr);
  if (status != NPU_OK)
    goto done;
  int32_t y_zero = fused ? residual.y_zero
                         : cpu_q_load(op->input_values[Y_ZERO], 0, op->inputs[Y_ZERO].dtype);
  size_t scales = count_of(op, W_SCALE) > 1 ? (size_t)op->outputs[0].dims[1] : 1;
  if (!cpu_qdnnl_set_quantisation(op, scales, y_zero, attr) ||
      (fused && !append_residual(op, &residual, &g, attr, p))) {
    status = cpu_unsupported(op, "oneDNN takes no such scales, zero points or post-ops");
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
  /* (the addend is read in the planned layout: the primitive must write it) */
  if (fused && !dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                                       &dst_md)) {
    status = cpu_unsupported(op, "the fused Add's tensors are not in oneDNN's layout");
    goto done;
  }
  status = cpu_qdnnl_complete(op, W, weights, &user_weights_md, pd,
                              dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), &src_md,
                              dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), &dst_md,
                              has_bias ? &bias_md : NULL, k, p);
done:
  free(weights);
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  return status;
}

const cpu_kernel_entry cpu_qdnnl_kernels[] = {
    {"QLinearConv", build_qlinear_conv, CPU_LAYOUTS_ANY, true, CPU_ONEDNN_BLOCKS},
    {"QLinearConvTranspose", build_qlinear_conv, CPU_LAYOUTS_ANY, false, CPU_ONEDNN_BLOCKS},
    {NULL, NULL, CPU_LAYOUTS_PLAIN},
};
