/* Vulkan kernels that combine many elements into each result: reductions
 * over any axes and (Log)Softmax along one (reduce.comp, a workgroup per row),
 * LayerNormalization (layer_norm.comp, likewise),
 * MatMul/Gemm (matmul.comp, a block of results an invocation, or
 * matmul_tiled.comp, a tile a workgroup, by the device), and the transposed
 * 2-D convolution (conv_transpose2d.comp, a block of channels by pixels an
 * invocation, from the runtime's resolved window). */
#include "vk_kernels.h"
#include "vulkan/shaders/tiles.h"

/* Axes a reduce.comp row walks, kept or reduced, after merging. */
#define REDUCE_AXES 4

/* Merges one group of `x`'s axes (those with reduced[d] == which) into
 * *rank dims and strides; false where more than REDUCE_AXES are left. */
static bool reduce_group(const npu_hal_tensor_desc *x, const bool *reduced, bool which,
                         uint32_t *rank, uint32_t *dims, uint32_t *strides)
{
  int64_t all[NPU_MAX_RANK], box[NPU_MAX_RANK], steps[1][NPU_MAX_RANK];
  vk_strides(x, all);
  uint32_t count = 0;
  for (uint32_t d = 0; d < x->rank; d++)
    if (reduced[d] == which) {
      box[count] = x->dims[d];
      steps[0][count++] = all[d];
    }
  *rank = vk_merge_axes(count, box, steps, 1);
  if (*rank > REDUCE_AXES)
    return false;
  for (uint32_t d = 0; d < *rank; d++) {
    dims[d] = (uint32_t)box[d];
    strides[d] = (uint32_t)steps[0][d];
  }
  return true;
}

/* A reduce.comp dispatch: a workgroup per index of x's kept axes, over
 * the reduced ones (reduced[d]). */
static const char *put_reduction(npu_hal_kernel *k, const npu_hal_tensor_desc *x,
                                 const bool *reduced, uint32_t mode)
{
  uint64_t rows = 1, extent = 1;
  for (uint32_t d = 0; d < x->rank; d++)
    *(reduced[d] ? &extent : &rows) *= (uint64_t)x->dims[d];
  if (!extent)
    return "an empty reduction";
  uint32_t words[5 + 4 * REDUCE_AXES] = {(uint32_t)rows, (uint32_t)extent, mode};
  if (!reduce_group(x, reduced, false, &words[3], &words[5], &words[5 + REDUCE_AXES]) ||
      !reduce_group(x, reduced, true, &words[4], &words[5 + 2 * REDUCE_AXES],
                    &words[5 + 3 * REDUCE_AXES]))
    return "kept or reduced axes apart in more runs than the shader walks";
  vk_dispatch *d = vk_kernel_add(k);
  d->shader = VK_SHADER_REDUCE;
  d->local_size = 64;
  d->invocations = rows * 64; /* a workgroup per row */
  bind(d, false, 0, true);
  bind(d, true, 0, true);
  memcpy(&d->push[OFFSET_WORDS], words, sizeof words);
  return NULL;
}

static uint64_t product(const int64_t *dims, uint32_t from, uint32_t to)
{
  uint64_t count = 1;
  for (uint32_t d = from; d < to; d++)
    count *= (uint64_t)dims[d];
  return count;
}

static const char *plan_softmax(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  (void)device;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  /* Before opset 13 the input is a matrix: the axes from `axis` on are one. */
  bool coerced = op->opset < 13;
  int64_t axis = op->attributes.get_int(op->attributes.node, "axis", coerced ? 1 : -1);
  axis = axis < 0 ? axis + (int64_t)x->rank : axis;
  if (axis < 0 || axis >= (int64_t)x->rank)
    return "an axis out of range";
  bool reduced[NPU_MAX_RANK] = {false};
  for (uint32_t d = (uint32_t)axis; d < (coerced ? x->rank : (uint32_t)axis + 1); d++)
    reduced[d] = true;
  return put_reduction(k, x, reduced, strcmp(op->op_type, "Softmax") == 0 ? 4 : 5);
}

/* LayerNormalization over the axes from `axis` on, its scale and bias one
 * value per element of those axes (layer_norm.comp, a workgroup per row). */
static const char *plan_layer_norm(npu_hal_device *device, const npu_hal_op *op,
                                   npu_hal_kernel *k)
{
  (void)device;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  int64_t axis = op->attributes.get_int(op->attributes.node, "axis", -1);
  axis = axis < 0 ? axis + (int64_t)x->rank : axis;
  if (axis < 0 || axis >= (int64_t)x->rank)
    return "an axis out of range";
  for (uint32_t o = 1; o < op->output_count; o++)
    if (present(&op->outputs[o]))
      return "the mean and inverse standard deviation outputs";
  uint64_t extent = product(x->dims, (uint32_t)axis, x->rank);
  bool has_bias = op->input_count > 2 && present(&op->inputs[2]);
  if (!extent || op->input_count < 2 || elements_of(&op->inputs[1]) != extent ||
      (has_bias && elements_of(&op->inputs[2]) != extent))
    return "a scale or bias other than one value per normalised element";
  uint64_t rows = product(x->dims, 0, (uint32_t)axis);
  vk_dispatch *d = vk_kernel_add(k);
  d->shader = VK_SHADER_LAYER_NORM;
  d->local_size = 64;
  d->invocations = rows * 64; /* a workgroup per row */
  bind(d, false, 0, true);
  bind(d, false, 1, true);
  bind(d, false, 2, has_bias);
  bind(d, true, 0, true);
  uint32_t words[3] = {(uint32_t)rows, (uint32_t)extent, has_bias};
  memcpy(&d->push[OFFSET_WORDS], words, sizeof words);
  put_float(d, OFFSET_WORDS + 3, op->attributes.get_float(op->attributes.node, "epsilon", 1e-5f));
  return NULL;
}

/* The ReduceX operators by reduce.comp's mode. */
static const char *const reductions[] = {
    "ReduceSum",  "ReduceMean",      "ReduceMax",    "ReduceMin", NULL,
    NULL,         "ReduceProd",      "ReduceL1",     "ReduceL2",  "ReduceSumSquare",
    "ReduceLogSum", "ReduceLogSumExp"};

static const char *plan_reduce(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  (void)device;
  uint32_t mode = 0;
  while (!reductions[mode] || strcmp(op->op_type, reductions[mode]) != 0)
    mode++;
  if (!op->axes)
    return "axes not resolved";
  if (!op->axes->count)
    return "noop_with_empty_axes";
  bool reduced[NPU_MAX_RANK] = {false};
  for (uint32_t i = 0; i < op->axes->count; i++)
    reduced[op->axes->axes[i]] = true;
  return put_reduction(k, &op->inputs[0], reduced, mode);
}

/* Where one matrix operand of matmul.comp steps per row and per column
 * (0 along an axis it is broadcast over). */
typedef struct matrix_strides {
  int64_t row, column;
} matrix_strides;

typedef struct matmul_shape {
  uint32_t m, n, k;
  matrix_strides a, b, c;
  uint32_t a_input, b_input;        /* the op's inputs A and B are; C is input 2 */
  uint32_t batch_rank;              /* after merging: 0, 1 or 2 */
  int64_t batch[NPU_MAX_RANK];
  int64_t batch_strides[3][NPU_MAX_RANK]; /* A, B, the output */
  bool bias;
  float alpha, beta;
} matmul_shape;

/* Where the matmul shaders' (matmul.comp, matmul_tiled.comp) workgroups
 * go: the blocks of rows by columns numbered along x, or a tile per
 * workgroup (x: columns, y: rows); the batch along z. */
static void size_matmul(npu_hal_device *device, const matmul_shape *s, vk_dispatch *d,
                        uint64_t *groups)
{
  if (device->tiled_shaders) {
    d->shader = VK_SHADER_MATMUL_TILED;
    groups[0] = (s->n + TILED_SIDE * TILED_BLOCK - 1) / (TILED_SIDE * TILED_BLOCK);
    groups[1] = (s->m + TILED_SIDE * TILED_BLOCK - 1) / (TILED_SIDE * TILED_BLOCK);
  } else {
    d->shader = VK_SHADER_MATMUL;
    uint64_t blocks = (uint64_t)((s->n + MATMUL_COLUMNS - 1) / MATMUL_COLUMNS) *
                      ((s->m + MATMUL_ROWS - 1) / MATMUL_ROWS);
    groups[0] = (blocks + TILE_INVOCATIONS - 1) / TILE_INVOCATIONS;
    groups[1] = 1;
  }
  groups[2] = product(s->batch, 0, s->batch_rank);
}

/* The matmul shaders' words 0-15 and bindings for `s`; the caller writes the
 * activation words (vk_plan_activations) and says where their Add reads. */
static const char *fill_matmul(npu_hal_device *device, vk_dispatch *d, const matmul_shape *s,
                               const vk_addend *addend)
{
  if (!s->m || !s->n || !s->k)
    return "an empty matrix";
  if (s->batch_rank > 2)
    return "batch axes that do not merge into two";
  uint64_t groups[3];
  size_matmul(device, s, d, groups);
  /* Vulkan guarantees 65535 workgroups along each axis. */
  if (groups[0] > 65535 || groups[1] > 65535 || groups[2] > 65535)
    return "more batches or blocks than a dispatch takes";
  for (int g = 0; g < 3; g++)
    d->groups[g] = (uint32_t)groups[g];
  bind(d, false, s->a_input, true);
  bind(d, false, s->b_input, true);
  bind(d, false, 2, s->bias);
  bind(d, true, 0, true);
  bind(d, false, addend->input, addend->present);
  /* The batch as b0 * inner + b1: the merged axes, the outer one first. */
  uint32_t inner = s->batch_rank ? (uint32_t)s->batch[s->batch_rank - 1] : 1;
  int64_t a1 = s->batch_rank ? s->batch_strides[0][s->batch_rank - 1] : 0;
  int64_t b1 = s->batch_rank ? s->batch_strides[1][s->batch_rank - 1] : 0;
  int64_t a0 = s->batch_rank == 2 ? s->batch_strides[0][0] : 0;
  int64_t b0 = s->batch_rank == 2 ? s->batch_strides[1][0] : 0;
  uint32_t words[14] = {s->m, s->n, s->k, inner,
                        (uint32_t)s->a.row, (uint32_t)s->a.column, (uint32_t)a0, (uint32_t)a1,
                        (uint32_t)s->b.row, (uint32_t)s->b.column, (uint32_t)b0, (uint32_t)b1,
                        (uint32_t)s->c.row, (uint32_t)s->c.column};
  memcpy(&d->push[OFFSET_WORDS], words, sizeof words);
  put_float(d, OFFSET_WORDS + 14, s->alpha);
  put_float(d, OFFSET_WORDS + 15, s->beta);
  return NULL;
}

/* MatMul and Gemm: one dispatch, C and the fused activations after the product. */
static const char *put_matmul(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k,
                              const matmul_shape *s)
{
  vk_dispatch *d = vk_kernel_add(k);
  d->push[OFFSET_WORDS + ACTIVATION_WORD] = s->bias;
  vk_addend addend;
  const char *why = vk_plan_activations(op, d, true, &addend);
  return why ? why : fill_matmul(device, d, s, &addend);
}

const char *vk_plan_pointwise_conv(npu_hal_device *device, const npu_hal_op *op, vk_dispatch *d,
                                   const vk_addend *addend)
{
  const int64_t *x = op->inputs[0].dims, *y = op->outputs[0].dims;
  /* Each image: Y (out channels x pixels) = W (out x in channels) X (in channels x pixels). */
  uint32_t pixels = (uint32_t)(x[2] * x[3]);
  matmul_shape s = {.m = (uint32_t)y[1], .n = pixels, .k = (uint32_t)x[1],
                    .a = {x[1], 1}, .b = {pixels, 1}, .c = {1, 0}, .a_input = 1, .b_input = 0,
                    .batch_rank = 1, .batch = {x[0]},
                    .batch_strides = {{0}, {x[1] * (int64_t)pixels}, {y[1] * (int64_t)pixels}},
                    .bias = d->push[OFFSET_WORDS + ACTIVATION_WORD] & 1u, .alpha = 1,
                    .beta = 1};
  s.batch_rank = vk_merge_axes(1, s.batch, s.batch_strides, 3);
  return fill_matmul(device, d, &s, addend);
}

/* MatMul: numpy's matrix product of operands of rank 2 or more (as the
 * CPU backend), batch axes broadcast. */
static const char *plan_matmul(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *a = &op->inputs[0], *b = &op->inputs[1];
  if (op->input_count != 2 || a->rank < 2 || b->rank < 2)
    return "two inputs of rank 2 or more";
  matmul_shape s = {.alpha = 1, .beta = 0, .a_input = 0, .b_input = 1};
  uint32_t a_rank = a->rank, b_rank = b->rank;
  const int64_t *a_dims = a->dims, *b_dims = b->dims;
  s.m = (uint32_t)a_dims[a_rank - 2];
  s.k = (uint32_t)a_dims[a_rank - 1];
  s.n = (uint32_t)b_dims[b_rank - 1];
  if ((int64_t)s.k != b_dims[b_rank - 2])
    return "inner dimensions that differ";
  s.a = (matrix_strides){s.k, 1};
  s.b = (matrix_strides){s.n, 1};
  uint32_t rank = (a_rank > b_rank ? a_rank : b_rank) - 2;
  int64_t a_step = (int64_t)s.m * s.k, b_step = (int64_t)s.k * s.n, out_step = (int64_t)s.m * s.n;
  for (uint32_t d = rank; d-- > 0;) { /* batch axes, the innermost first */
    uint32_t from_end = rank - 1 - d;
    int64_t ad = from_end < a_rank - 2 ? a_dims[a_rank - 3 - from_end] : 1;
    int64_t bd = from_end < b_rank - 2 ? b_dims[b_rank - 3 - from_end] : 1;
    if (ad != bd && ad != 1 && bd != 1)
      return "batch axes that do not broadcast";
    s.batch[d] = ad > bd ? ad : bd;
    s.batch_strides[0][d] = ad == 1 ? 0 : a_step;
    s.batch_strides[1][d] = bd == 1 ? 0 : b_step;
    s.batch_strides[2][d] = out_step;
    a_step *= ad;
    b_step *= bd;
    out_step *= s.batch[d];
  }
  if ((uint64_t)out_step != elements_of(&op->outputs[0]))
    return "an output of another size than the product";
  s.batch_rank = vk_merge_axes(rank, s.batch, s.batch_strides, 3);
  return put_matmul(device, op, k, &s);
}

/* Gemm: alpha * A' B' + beta * C, A' and B' optionally transposed, C
 * broadcast to the output. */
static const char *plan_gemm(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_attributes *attr = &op->attributes;
  const npu_hal_tensor_desc *a = &op->inputs[0], *b = &op->inputs[1], *y = &op->outputs[0];
  if (op->input_count < 2 || a->rank != 2 || b->rank != 2 || y->rank != 2)
    return "2-D A and B";
  bool trans_a = attr->get_int(attr->node, "transA", 0);
  bool trans_b = attr->get_int(attr->node, "transB", 0);
  matmul_shape s = {.alpha = attr->get_float(attr->node, "alpha", 1.0f),
                    .beta = attr->get_float(attr->node, "beta", 1.0f), .a_input = 0,
                    .b_input = 1};
  s.m = (uint32_t)a->dims[trans_a ? 1 : 0];
  s.k = (uint32_t)a->dims[trans_a ? 0 : 1];
  s.n = (uint32_t)b->dims[trans_b ? 0 : 1];
  if ((int64_t)s.k != b->dims[trans_b ? 1 : 0] || y->dims[0] != s.m || y->dims[1] != s.n)
    return "shapes that do not multiply";
  s.a = trans_a ? (matrix_strides){1, s.m} : (matrix_strides){s.k, 1};
  s.b = trans_b ? (matrix_strides){1, s.k} : (matrix_strides){s.n, 1};
  const npu_hal_tensor_desc *c = op->input_count > 2 ? &op->inputs[2] : NULL;
  s.bias = c && present(c);
  if (s.bias) {
    if (c->rank > 2)
      return "a C of rank above 2";
    int64_t rows = c->rank == 2 ? c->dims[0] : 1, columns = c->rank ? c->dims[c->rank - 1] : 1;
    if ((rows != 1 && rows != s.m) || (columns != 1 && columns != s.n))
      return "a C that does not broadcast to the output";
    s.c = (matrix_strides){rows == 1 ? 0 : columns, columns == 1 ? 0 : 1};
  }
  return put_matmul(device, op, k, &s);
}

static const char *plan_conv_transpose(npu_hal_device *device, const npu_hal_op *op,
                                       npu_hal_kernel *k)
{
  (void)device;
  const npu_hal_window *win = op->window;
  if (!win || win->spatial != 2 || op->input_count < 2 || op->inputs[0].rank != 4 ||
      op->inputs[1].rank != 4 || op->outputs[0].rank != 4)
    return "2-D transposed convolutions only";
  const int64_t *x = op->inputs[0].dims, *w = op->inputs[1].dims, *y = op->outputs[0].dims;
  int64_t groups = win->group;
  if (groups < 1 || x[1] != w[0] || x[1] % groups != 0 || y[1] != w[1] * groups)
    return "weights that do not fit the input's channels and groups";
  bool bias = op->input_count > 2 && present(&op->inputs[2]);
  if (bias && elements_of(&op->inputs[2]) != (uint64_t)y[1])
    return "a bias that is not one value per output channel";
  uint32_t window_words[8];
  for (uint32_t d = 0; d < 2; d++) {
    const int64_t values[4] = {win->kernel[d], win->strides[d], win->pad_begin[d],
                               win->dilations[d]};
    for (uint32_t v = 0; v < 4; v++)
      if (values[v] < (v == 2 ? 0 : 1) || values[v] > UINT16_MAX)
        return "window attributes out of range";
    /* conv_transpose2d.comp's order: kernel, stride, pad, dilation, each h then w. */
    for (uint32_t v = 0; v < 4; v++)
      window_words[2 * v + d] = (uint32_t)values[v];
  }
  /* conv_transpose2d.comp's blocks of channels by pixels of a phase along
   * x (its numbering), the images along y; Vulkan guarantees 65535
   * workgroups along each. */
  uint64_t group_out = (uint64_t)(y[1] / groups);
  uint64_t stride_w = (uint64_t)win->strides[1];
  uint64_t phase_columns = ((uint64_t)y[3] + stride_w - 1) / stride_w;
  uint64_t phase_blocks = (phase_columns + CONV_PIXELS - 1) / CONV_PIXELS;
  uint64_t blocks = (uint64_t)y[2] * stride_w * phase_blocks *
                    ((group_out + CONV_CHANNELS - 1) / CONV_CHANNELS) * (uint64_t)groups;
  uint64_t workgroups = (blocks + TILE_INVOCATIONS - 1) / TILE_INVOCATIONS;
  if (!blocks || !x[0])
    return "an empty transposed convolution";
  if (workgroups > 65535 || x[0] > 65535)
    return "more pixels, channels or images than a dispatch takes";
  vk_dispatch *d = vk_kernel_add(k);
  d->shader = VK_SHADER_CONV_TRANSPOSE2D;
  d->groups[0] = (uint32_t)workgroups;
  d->groups[1] = (uint32_t)x[0];
  d->groups[2] = 1;
  bind(d, false, 0, true);
  bind(d, false, 1, true);
  bind(d, false, 2, bias);
  bind(d, true, 0, true);
  uint32_t shape[7] = {(uint32_t)x[0], (uint32_t)x[1], (uint32_t)x[2], (uint32_t)x[3],
                       (uint32_t)y[1], (uint32_t)y[2], (uint32_t)y[3]};
  memcpy(&d->push[OFFSET_WORDS], shape, sizeof shape);
  memcpy(&d->push[OFFSET_WORDS + 7], window_words, sizeof window_words);
  d->push[OFFSET_WORDS + 15] = (uint32_t)groups;
  d->push[OFFSET_WORDS + 16] = bias;
  return NULL;
}

const vk_plan_entry vk_math_plans[] = {
    {"Softmax", plan_softmax},   {"LogSoftmax", plan_softmax},  {"ReduceSum", plan_reduce},
    {"ReduceMean", plan_reduce}, {"ReduceMax", plan_reduce},    {"ReduceMin", plan_reduce},
    {"ReduceProd", plan_reduce}, {"ReduceL1", plan_reduce},     {"ReduceL2", plan_reduce},
    {"ReduceSumSquare", plan_reduce}, {"ReduceLogSum", plan_reduce},
    {"ReduceLogSumExp", plan_reduce}, {"MatMul", plan_matmul},  {"Gemm", plan_gemm},
    {"ConvTranspose", plan_conv_transpose}, {"LayerNormalization", plan_layer_norm},
    {NULL, NULL},
};
