/* QLinearMatMul and the QDQ rewriting's QLinearMatMulBias (QLinearMatMul's
 * inputs and an int32 bias per column) on oneDNN's int8 matmul (u8 or s8
 * activations, s8 weights; VNNI where the CPU has it). A [.., M, K] times
 * constant B [K, N] is one GEMM of all A's rows (transformers' Linear
 * layers on [batch, tokens, K]; a classifier's [batch, K]). oneDNN 2.6
 * computes
 *   y = saturate(round((sum (a - a_zero) b + bias) * scale[n] + y_zero))
 * which is ONNX's QLinearMatMul (and the bias the rewriting's) when
 *   - scale[n] = a_scale * b_scale[n] / y_scale (per tensor or per column,
 *     computed as the reference loops do),
 *   - a_zero and y_zero are oneDNN's source and destination zero points,
 *   - B's zero points are taken out of B once, when it is packed: b -
 *     b_zero[n] must fit int8 (symmetric int8 weights always do).
 * As with the int8 convolutions (qlinear_dnnl.c), oneDNN adds y_zero before
 * rounding: an exact tie with an odd y_zero rounds the other way (1 LSB).
 * B computed at run time (attention's Q K^T and softmax(..) V, which the
 * QDQ rewriting makes QLinearMatMuls) runs on the same matmul with B bound
 * at each run (build_runtime_b). A's parameters per row, B's per column
 * where B is not a constant matrix, weights that do not fit int8: refused,
 * the reference loops (integer_ops.c) run them. */
#include <stdlib.h>

#include "dnnl_kernels.h"
#include "quant_kernels.h"

enum { A, A_SCALE, A_ZERO, B, B_SCALE, B_ZERO, Y_SCALE, Y_ZERO, BIAS };

static size_t count_of(const npu_hal_op *op, uint32_t input)
{
  return cpu_tensor_elements(&op->inputs[input]);
}

/* Whether the kernel takes `op`: 8-bit plain tensors, B a constant matrix,
 * every parameter constant and per tensor but B's (per column allowed). */
static bool takes(const npu_hal_op *op)
{
  static const uint32_t constants[] = {A_SCALE, A_ZERO, B, B_SCALE, B_ZERO, Y_SCALE, Y_ZERO};
  const npu_hal_tensor_desc *a = &op->inputs[A], *b = &op->inputs[B], *y = &op->outputs[0];
  if (op->input_count < BIAS || !cpu_q_is_8bit(a->dtype) || !cpu_q_is_8bit(b->dtype) ||
      !cpu_q_is_8bit(y->dtype) || a->rank < 2 || b->rank != 2 || a->layout || y->layout)
    return false;
  for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
    if (!op->input_values[constants[i]] || op->inputs[constants[i]].dtype == NPU_DTYPE_UNDEFINED)
      return false;
  size_t columns = (size_t)b->dims[1], b_scales = count_of(op, B_SCALE);
  size_t b_zeros = count_of(op, B_ZERO);
  return count_of(op, A_SCALE) == 1 && count_of(op, A_ZERO) == 1 && count_of(op, Y_SCALE) == 1 &&
         count_of(op, Y_ZERO) == 1 && (b_scales == 1 || b_scales == columns) &&
         (b_zeros == 1 || b_zeros == columns);
}

/* ---- B computed at run time ------------------------------------------------------ */

/* A [.., M, K] times B [.., K, N] of any ranks from 2 (batch axes brought to
 * Y's rank with leading 1s and broadcast as NumPy does: oneDNN's matmul
 * broadcasts axes of 1), every parameter one constant. oneDNN takes only
 * int8 weights: a uint8 B is moved into int8 in the workspace at each run
 * (b - 128, the top bit flipped) and its zero point with it, since
 * b - b_zero = (b - 128) - (b_zero - 128); B's zero point is then oneDNN's
 * (common) weights zero point. */
typedef struct runtime_b {
  cpu_dnnl_params dnnl; /* first: cpu_dnnl_free_params frees the whole */
  bool shifted;         /* B is uint8, moved into int8 at b_offset in the workspace */
  size_t b_offset, b_bytes;
} runtime_b;

static bool takes_runtime_b(const npu_hal_op *op)
{
  static const uint32_t constants[] = {A_SCALE, A_ZERO, B_SCALE, B_ZERO, Y_SCALE, Y_ZERO};
  const npu_hal_tensor_desc *a = &op->inputs[A], *b = &op->inputs[B], *y = &op->outputs[0];
  if (op->input_count != BIAS || !cpu_q_is_8bit(a->dtype) || !cpu_q_is_8bit(b->dtype) ||
      !cpu_q_is_8bit(y->dtype) || a->rank < 2 || b->rank < 2 || y->rank > DNNL_MAX_NDIMS ||
      a->layout || b->layout || y->layout)
    return false;
  for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
    if (!op->input_values[constants[i]] || op->inputs[constants[i]].dtype == NPU_DTYPE_UNDEFINED ||
        count_of(op, constants[i]) != 1)
      return false;
  return true;
}

static void run_runtime_b(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const runtime_b *r = k->params;
  void *b = in[B];
  if (r->shifted) {
    const uint8_t *from = in[B];
    int8_t *to = (int8_t *)((char *)out[k->output_count] + r->b_offset);
    for (size_t i = 0; i < r->b_bytes; i++)
      to[i] = (int8_t)(from[i] ^ 0x80);
    b = to;
  }
  void *const operands[2] = {in[A], b}; /* (cpu_dnnl_run's src and weights) */
  cpu_dnnl_run(k, operands, out);
}

static npu_status build_runtime_b(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *a = &op->inputs[A], *b = &op->inputs[B], *y = &op->outputs[0];
  int rank = (int)y->rank;
  dnnl_dims_t a_dims, b_dims, y_dims;
  for (int d = 0; d < rank; d++) {
    int da = d - (rank - (int)a->rank), db = d - (rank - (int)b->rank);
    y_dims[d] = y->dims[d];
    a_dims[d] = da >= 0 ? a->dims[da] : 1;
    b_dims[d] = db >= 0 ? b->dims[db] : 1;
  }
  dnnl_memory_desc_t a_md, b_md, y_md;
  cpu_dnnl_matrix_md(&a_md, rank, a_dims, false, cpu_dnnl_8bit(a->dtype));
  cpu_dnnl_matrix_md(&b_md, rank, b_dims, false, dnnl_s8);
  cpu_dnnl_matrix_md(&y_md, rank, y_dims, false, cpu_dnnl_8bit(y->dtype));

  runtime_b *r = calloc(1, sizeof *r);
  if (!r)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a kernel");
  k->params = r;
  k->free_params = cpu_dnnl_free_params;
  cpu_dnnl_params *p = &r->dnnl;
  r->shifted = b->dtype == NPU_DTYPE_UINT8;
  r->b_bytes = cpu_tensor_elements(b);
  int32_t b_zero = cpu_q_load(op->input_values[B_ZERO], 0, op->inputs[B_ZERO].dtype) -
                   (r->shifted ? 128 : 0);
  int32_t y_zero = cpu_q_load(op->input_values[Y_ZERO], 0, op->inputs[Y_ZERO].dtype);
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  npu_status status = cpu_dnnl_make_attributes(op, NULL, p, &attr);
  if (status != NPU_OK)
    goto done;
  if (!cpu_qdnnl_set_quantisation(op, 1, y_zero, attr) ||
      (b_zero != 0 && dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_WEIGHTS, 1, 0,
                                                          &b_zero) != dnnl_success)) {
    status = cpu_unsupported(op, "oneDNN takes no such scales or zero points");
    goto done;
  }
  dnnl_matmul_desc_t desc;
  dnnl_status_t s = dnnl_matmul_desc_init(&desc, &a_md, &b_md, NULL, &y_md);
  if (s == dnnl_success)
    s = dnnl_primitive_desc_create(&pd, &desc, attr, cpu_dnnl_engine(), NULL);
  if (s != dnnl_success || !cpu_dnnl_fast_implementation(pd)) {
    status = cpu_unsupported(op, "oneDNN has no fast int8 matmul for these shapes");
    goto done;
  }
  s = cpu_dnnl_make_primitive(pd, &a_md, &a_md, &y_md, &y_md, p, k);
  if (s == dnnl_success)
    s = dnnl_memory_create(&p->weights, &b_md, cpu_dnnl_engine(), DNNL_MEMORY_NONE);
  if (s != dnnl_success) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: cannot create the %s primitive",
                           op->op_type);
    goto done;
  }
  if (r->shifted) { /* (after the scratchpad, 64-byte aligned) */
    r->b_offset = (k->workspace_bytes + 63) & ~(size_t)63;
    k->workspace_bytes = r->b_offset + r->b_bytes;
  }
  k->run = run_runtime_b;
done:
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  return status;
}

/* ---- B a constant matrix, or the kernel above ---------------------------------------- */

static npu_status build_qlinear_matmul(const npu_hal_op *op, npu_hal_kernel *k)
{
  dnnl_engine_t engine = cpu_dnnl_engine();
  if (!engine)
    return cpu_unsupported(op, "no oneDNN CPU engine");
  if (op->activation_count > 0)
    return cpu_unsupported(op, "oneDNN's int8 matmul fuses no activation here");
  if (!takes(op) && takes_runtime_b(op))
    return build_runtime_b(op, k);
  if (!takes(op))
    return cpu_unsupported(op, "oneDNN's int8 matmul takes a constant 2-D B, or B at run "
                               "time, with per-tensor parameters of A and Y");
  const npu_hal_tensor_desc *a = &op->inputs[A], *b = &op->inputs[B], *y = &op->outputs[0];
  bool has_bias = op->input_count > BIAS && op->inputs[BIAS].dtype == NPU_DTYPE_INT32;
  int64_t depth = b->dims[0], columns = b->dims[1];
  int64_t rows = (int64_t)(cpu_tensor_elements(a) / (size_t)depth);
  dnnl_dims_t a_dims = {rows, depth}, b_dims = {depth, columns}, y_dims = {rows, columns};
  dnnl_dims_t bias_dims = {1, columns};
  dnnl_memory_desc_t a_md, user_b_md, any_b_md, y_md, bias_md;
  dnnl_memory_desc_init_by_tag(&a_md, 2, a_dims, cpu_dnnl_8bit(a->dtype), dnnl_ab);
  dnnl_memory_desc_init_by_tag(&user_b_md, 2, b_dims, dnnl_s8, dnnl_ab);
  dnnl_memory_desc_init_by_tag(&any_b_md, 2, b_dims, dnnl_s8, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&y_md, 2, y_dims, cpu_dnnl_8bit(y->dtype), dnnl_ab);
  dnnl_memory_desc_init_by_tag(&bias_md, 2, bias_dims, dnnl_s32, dnnl_ab);

  cpu_dnnl_params *p = NULL;
  int8_t *weights = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  npu_status status = cpu_qdnnl_start(op, 1, (size_t)columns, k, &p, &weights);
  if (status == NPU_OK)
    status = cpu_dnnl_make_attributes(op, NULL, p, &attr);
  if (status != NPU_OK)
    goto done;
  int32_t y_zero = cpu_q_load(op->input_values[Y_ZERO], 0, op->inputs[Y_ZERO].dtype);
  if (!cpu_qdnnl_set_quantisation(op, count_of(op, B_SCALE), y_zero, attr)) {
    status = cpu_unsupported(op, "oneDNN takes no such scales or zero points");
    goto done;
  }
  dnnl_matmul_desc_t desc;
  dnnl_status_t s = dnnl_matmul_desc_init(&desc, &a_md, &any_b_md, has_bias ? &bias_md : NULL,
                                          &y_md);
  if (s == dnnl_success)
    s = dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL);
  if (s != dnnl_success || !cpu_dnnl_fast_implementation(pd)) {
    status = cpu_unsupported(op, "oneDNN has no fast int8 matmul for these shapes");
    goto done;
  }
  status = cpu_qdnnl_complete(op, B, weights, &user_b_md, pd, &a_md, &a_md, &y_md, &y_md,
                              has_bias ? &bias_md : NULL, k, p);
done:
  free(weights);
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  return status;
}

const cpu_kernel_entry cpu_qmatmul_dnnl_kernels[] = {
    {"QLinearMatMul", build_qlinear_matmul, CPU_LAYOUTS_PLAIN},
    {"QLinearMatMulBias", build_qlinear_matmul, CPU_LAYOUTS_PLAIN},
    {NULL, NULL, CPU_LAYOUTS_PLAIN},
};
