/* Vulkan graph kernels: which operators the backend runs (the elementwise,
 * convolution and pooling ones planned here, the others in
 * vk_kernels_data.c and vk_kernels_math.c); vk_replay.c records and
 * replays a plan's launches.
 * Everything takes plain float32 tensors; what it refuses runs on the CPU
 * backend through the runtime's partitioning. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "vk_kernels.h"
#include "vulkan/shaders/tiles.h"

vk_dispatch *vk_kernel_add(npu_hal_kernel *k)
{
  if (k->dispatch_count == VK_MAX_DISPATCHES)
    return NULL;
  vk_dispatch *d = &k->dispatches[k->dispatch_count++];
  memset(d, 0, sizeof *d);
  return d;
}

void vk_strides(const npu_hal_tensor_desc *t, int64_t *strides)
{
  int64_t step = 1;
  for (uint32_t d = t->rank; d-- > 0;) {
    strides[d] = step;
    step *= t->dims[d];
  }
}

uint32_t vk_merge_axes(uint32_t rank, int64_t *dims, int64_t (*strides)[NPU_MAX_RANK],
                       uint32_t count)
{
  uint32_t kept = 0;
  for (uint32_t d = 0; d < rank; d++) {
    if (dims[d] == 1)
      continue;
    bool runs_on = kept > 0;
    for (uint32_t o = 0; o < count && runs_on; o++)
      runs_on = strides[o][kept - 1] == strides[o][d] * dims[d];
    if (runs_on) {
      dims[kept - 1] *= dims[d];
      for (uint32_t o = 0; o < count; o++)
        strides[o][kept - 1] = strides[o][d];
      continue;
    }
    dims[kept] = dims[d];
    for (uint32_t o = 0; o < count; o++)
      strides[o][kept] = strides[o][d];
    kept++;
  }
  return kept;
}

const char *vk_plan_copy(npu_hal_kernel *k, uint32_t input, uint32_t output, uint32_t rank,
                         const int64_t *dims, const int64_t *src_strides, int64_t src_base,
                         const int64_t *dst_strides, int64_t dst_base)
{
  int64_t box[NPU_MAX_RANK], strides[2][NPU_MAX_RANK];
  memcpy(box, dims, rank * sizeof *dims);
  memcpy(strides[0], src_strides, rank * sizeof *src_strides);
  memcpy(strides[1], dst_strides, rank * sizeof *dst_strides);
  rank = vk_merge_axes(rank, box, strides, 2);
  if (rank > VK_MAX_WALKED_AXES)
    return "a copy over more axes than the shader walks";
  vk_dispatch *d = vk_kernel_add(k);
  if (!d)
    return "more pieces than a kernel dispatches";
  d->shader = VK_SHADER_COPY;
  d->local_size = 256;
  bind(d, false, input, true);
  bind(d, true, output, true);
  uint64_t count = 1;
  for (uint32_t a = 0; a < rank; a++)
    count *= (uint64_t)box[a];
  d->invocations = count;
  /* Element indices fit int32: check_bound_tensors refuses larger tensors. */
  int32_t words[4 + 3 * VK_MAX_WALKED_AXES] = {(int32_t)count, (int32_t)rank, (int32_t)src_base,
                                               (int32_t)dst_base};
  for (uint32_t a = 0; a < rank; a++) {
    words[4 + a] = (int32_t)box[a];
    words[4 + VK_MAX_WALKED_AXES + a] = (int32_t)strides[0][a];
    words[4 + 2 * VK_MAX_WALKED_AXES + a] = (int32_t)strides[1][a];
  }
  memcpy(&d->push[OFFSET_WORDS], words, sizeof words);
  return NULL;
}

/* Why the device cannot hold the tensors the kernel reads and writes as it
 * runs them, or NULL. Inputs it does not bind (Reshape's shape, Slice's
 * starts: read when planning) may be of any type. */
static const char *check_bound_tensors(npu_hal_device *device, const npu_hal_op *op,
                                       const npu_hal_kernel *k)
{
  uint64_t limit = device->properties.limits.maxStorageBufferRange;
  uint64_t slack = device->properties.limits.minStorageBufferOffsetAlignment;
  for (uint32_t i = 0; i < k->dispatch_count; i++) {
    const vk_dispatch *d = &k->dispatches[i];
    for (uint32_t b = 0; b < d->binding_count; b++) {
      vk_binding source = d->sources[b];
      if (!source.present)
        continue;
      const npu_hal_tensor_desc *t =
          source.output                      ? &op->outputs[source.index]
          : source.index < op->input_count ? &op->inputs[source.index]
                                             : &op->fused_inputs[source.index - op->input_count];
      if (t->dtype != NPU_DTYPE_FLOAT32)
        return "float32 tensors only";
      if (t->layout != NPU_HAL_LAYOUT_PLAIN)
        return "plain layouts only";
      /* (element indices are int32 in the strided shaders) */
      if (elements_of(t) * sizeof(float) + slack > limit || elements_of(t) > INT32_MAX)
        return "a tensor larger than the device's storage buffer range";
    }
  }
  return NULL;
}

/* unary.comp's operations, by its numbers. */
static const char *const unary_ops[] = {
    "Relu", "Sigmoid", "Clip", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "Exp", "Sqrt",
    "Neg", "Abs", "Reciprocal", "Log", "Floor", "Ceil", "Round", "Sign", "Erf", "Elu", "Selu",
    "Celu", "Softplus", "Softsign", "ThresholdedRelu", "Mish", "Gelu"};

static int unary_code(const char *type)
{
  for (int code = 0; code < (int)(sizeof unary_ops / sizeof unary_ops[0]); code++)
    if (strcmp(type, unary_ops[code]) == 0)
      return code;
  return -1;
}

static const char *plan_unary(const npu_hal_op *op, uint32_t code, vk_dispatch *k)
{
  const npu_hal_attributes *a = &op->attributes;
  float alpha = 0, beta = 0;
  if (strcmp(op->op_type, "Clip") == 0) {
    alpha = -FLT_MAX;
    beta = FLT_MAX;
    if (op->opset < 11) {
      alpha = a->get_float(a->node, "min", alpha);
      beta = a->get_float(a->node, "max", beta);
    }
    for (uint32_t i = 1; i < op->input_count && op->opset >= 11; i++) {
      if (!present(&op->inputs[i]))
        continue;
      if (!op->input_values || !op->input_values[i] || elements_of(&op->inputs[i]) != 1 ||
          op->inputs[i].dtype != NPU_DTYPE_FLOAT32)
        return "Clip bounds that are not constant float scalars";
      *(i == 1 ? &alpha : &beta) = *(const float *)op->input_values[i];
    }
  } else if (strcmp(op->op_type, "HardSigmoid") == 0) {
    alpha = a->get_float(a->node, "alpha", 0.2f);
    beta = a->get_float(a->node, "beta", 0.5f);
  } else if (strcmp(op->op_type, "LeakyRelu") == 0) {
    alpha = a->get_float(a->node, "alpha", 0.01f);
  } else if (strcmp(op->op_type, "Elu") == 0 || strcmp(op->op_type, "Celu") == 0 ||
             strcmp(op->op_type, "ThresholdedRelu") == 0) {
    alpha = a->get_float(a->node, "alpha", 1.0f);
  } else if (strcmp(op->op_type, "Selu") == 0) {
    alpha = a->get_float(a->node, "alpha", 1.67326319217681884765625f);
    beta = a->get_float(a->node, "gamma", 1.05070102214813232421875f);
  } else if (strcmp(op->op_type, "Gelu") == 0) { /* alpha 1: the tanh form */
    alpha = strcmp(a->get_string(a->node, "approximate", "none"), "tanh") == 0;
  }
  k->shader = VK_SHADER_UNARY;
  k->local_size = 256;
  bind(k, false, 0, true);
  bind(k, true, 0, true);
  k->push[OFFSET_WORDS] = (uint32_t)elements_of(&op->outputs[0]);
  k->push[OFFSET_WORDS + 1] = code;
  put_float(k, OFFSET_WORDS + 2, alpha);
  put_float(k, OFFSET_WORDS + 3, beta);
  return NULL;
}

/* BatchNormalization at inference (its running statistics left out). */
static const char *plan_batch_norm(const npu_hal_op *op, vk_dispatch *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (op->input_count != 5 || x->rank < 2)
    return "five inputs and a channel axis expected";
  if (op->output_count > 1)
    return "training mode's running statistics";
  for (uint32_t i = 1; i < 5; i++)
    if (elements_of(&op->inputs[i]) != (uint64_t)x->dims[1])
      return "statistics that are not one value per channel";
  k->shader = VK_SHADER_BATCH_NORM;
  k->local_size = 256;
  for (uint32_t i = 0; i < 5; i++)
    bind(k, false, i, true);
  bind(k, true, 0, true);
  uint64_t inner = 1;
  for (uint32_t d = 2; d < x->rank; d++)
    inner *= (uint64_t)x->dims[d];
  uint32_t words[3] = {(uint32_t)elements_of(x), (uint32_t)x->dims[1], (uint32_t)inner};
  memcpy(&k->push[OFFSET_WORDS], words, sizeof words);
  put_float(k, OFFSET_WORDS + 3,
            op->attributes.get_float(op->attributes.node, "epsilon", 1e-5f));
  return NULL;
}

/* Strides of input `t` over the output's axes under numpy broadcasting:
 * aligned at the last axis, 0 along the axes it has not or has as 1. */
static void broadcast_strides(const npu_hal_tensor_desc *t, uint32_t rank, int64_t *strides)
{
  int64_t own[NPU_MAX_RANK];
  vk_strides(t, own);
  uint32_t shift = rank - t->rank;
  for (uint32_t d = 0; d < rank; d++)
    strides[d] = d < shift || t->dims[d - shift] == 1 ? 0 : own[d - shift];
}

static const char *plan_binary(const npu_hal_op *op, uint32_t code, vk_dispatch *k)
{
  if (op->input_count != 2 || !present(&op->inputs[1]))
    return "two inputs expected";
  const npu_hal_tensor_desc *out = &op->outputs[0];
  int64_t dims[NPU_MAX_RANK], strides[2][NPU_MAX_RANK];
  memcpy(dims, out->dims, sizeof dims);
  for (uint32_t i = 0; i < 2; i++) {
    const npu_hal_tensor_desc *t = &op->inputs[i];
    if (t->rank > out->rank)
      return "an input of higher rank than the output";
    for (uint32_t d = 0; d < t->rank; d++)
      if (t->dims[d] != 1 && t->dims[d] != out->dims[out->rank - t->rank + d])
        return "inputs that do not broadcast to the output";
    broadcast_strides(t, out->rank, strides[i]);
  }
  uint32_t rank = vk_merge_axes(out->rank, dims, strides, 2);
  if (rank > VK_MAX_WALKED_AXES)
    return "a broadcast over more axes than the shader walks";
  k->shader = VK_SHADER_BINARY;
  k->local_size = 256;
  bind(k, false, 0, true);
  bind(k, false, 1, true);
  bind(k, true, 0, true);
  uint32_t words[3 + 3 * VK_MAX_WALKED_AXES] = {(uint32_t)elements_of(out), code, rank};
  for (uint32_t d = 0; d < rank; d++) {
    words[3 + d] = (uint32_t)dims[d];
    words[3 + VK_MAX_WALKED_AXES + d] = (uint32_t)strides[0][d];
    words[3 + 2 * VK_MAX_WALKED_AXES + d] = (uint32_t)strides[1][d];
  }
  memcpy(&k->push[OFFSET_WORDS], words, sizeof words);
  return NULL;
}

/* A sliding window over the input's last two axes (convolution, pooling). */
typedef struct window {
  uint32_t kernel[2], stride[2], pad[2], dilation[2];
} window;

/* The shader's window from the runtime's resolved one: 2-D, with the
 * beginning pads (the end ones follow from the output's size). */
static const char *plan_window(const npu_hal_window *resolved, window *win)
{
  if (resolved->spatial != 2)
    return "a 2-D window";
  for (int d = 0; d < 2; d++) {
    int64_t kernel = resolved->kernel[d], stride = resolved->strides[d];
    int64_t dilation = resolved->dilations[d], pad = resolved->pad_begin[d];
    if (stride > UINT16_MAX || dilation > UINT16_MAX || pad > UINT16_MAX || kernel > UINT16_MAX)
      return "window attributes out of range";
    win->kernel[d] = (uint32_t)kernel;
    win->stride[d] = (uint32_t)stride;
    win->pad[d] = (uint32_t)pad;
    win->dilation[d] = (uint32_t)dilation;
  }
  return NULL;
}

/* Writes the window's 8 words: kernel h/w, stride h/w, pad top/left, dilation h/w. */
static void put_window(vk_dispatch *k, uint32_t word, const window *win)
{
  uint32_t values[8] = {win->kernel[0], win->kernel[1], win->stride[0], win->stride[1],
                        win->pad[0],    win->pad[1],    win->dilation[0], win->dilation[1]};
  memcpy(&k->push[word], values, sizeof values);
}

/* activation.glsl's number for a fused activation; -1 where it has none. */
static int shader_activation(npu_hal_activation_kind kind)
{
  switch (kind) {
  case NPU_HAL_ACTIVATION_RELU: return 0;
  case NPU_HAL_ACTIVATION_LEAKY_RELU: return 1;
  case NPU_HAL_ACTIVATION_CLIP: return 2;
  case NPU_HAL_ACTIVATION_SIGMOID: return 3;
  case NPU_HAL_ACTIVATION_HARD_SIGMOID: return 4;
  case NPU_HAL_ACTIVATION_HARD_SWISH: return 5;
  case NPU_HAL_ACTIVATION_SWISH: return 6;
  case NPU_HAL_ACTIVATION_TANH: return 7;
  case NPU_HAL_ACTIVATION_LINEAR: return 8;
  case NPU_HAL_ACTIVATION_ADD: return 9;
  case NPU_HAL_ACTIVATION_GELU: return 10;
  case NPU_HAL_ACTIVATION_GELU_TANH: return 11;
  case NPU_HAL_ACTIVATION_MISH: return 12;
  default: return -1;
  }
}

const char *vk_plan_activations(const npu_hal_op *op, vk_dispatch *d, bool per_column_addend,
                                vk_addend *addend)
{
  if (op->activation_count > VK_MAX_ACTIVATIONS)
    return "more fused activations than the shaders apply";
  uint64_t outputs = elements_of(&op->outputs[0]);
  uint64_t columns = op->outputs[0].rank ? (uint64_t)op->outputs[0].dims[op->outputs[0].rank - 1]
                                         : 1;
  uint32_t kinds = 0;
  *addend = (vk_addend){0};
  for (uint32_t a = 0; a < op->activation_count; a++) {
    const npu_hal_activation *act = &op->activations[a];
    int code = shader_activation(act->kind);
    if (code < 0)
      return "a fused activation the shaders have not";
    if (act->kind == NPU_HAL_ACTIVATION_ADD) {
      if (addend->present)
        return "more than one fused Add";
      if (act->input >= op->fused_input_count)
        return "a fused Add without its input";
      uint64_t count = elements_of(&op->fused_inputs[act->input]);
      addend->per_column = count != outputs;
      if (addend->per_column && !(per_column_addend && count == columns))
        return per_column_addend ? "a fused Add of neither the output's shape nor one value per "
                                   "column"
                                 : "a fused Add of another shape than the output (a bias)";
      addend->present = true;
      addend->input = op->input_count + act->input;
    }
    kinds |= (uint32_t)code << (8 * a);
    put_float(d, OFFSET_WORDS + ACTIVATION_WORD + 2 + 2 * a, act->alpha);
    put_float(d, OFFSET_WORDS + ACTIVATION_WORD + 3 + 2 * a, act->beta);
  }
  d->push[OFFSET_WORDS + ACTIVATION_WORD] |= op->activation_count << 8 |
                                             (addend->per_column ? 2u : 0u);
  d->push[OFFSET_WORDS + ACTIVATION_WORD + 1] = kinds;
  return NULL;
}

/* depthwise.comp's pipeline for a depthwise convolution's window, or
 * VK_SHADER_COUNT where it has none (conv2d.comp runs it). */
static vk_shader depthwise_shader(const window *win)
{
  static const vk_shader shaders[3][2] = {
      {VK_SHADER_DEPTHWISE_K3_S1, VK_SHADER_DEPTHWISE_K3_S2},
      {VK_SHADER_DEPTHWISE_K5_S1, VK_SHADER_DEPTHWISE_K5_S2},
      {VK_SHADER_DEPTHWISE_K7_S1, VK_SHADER_DEPTHWISE_K7_S2}};
  uint32_t kernel = win->kernel[0], stride = win->stride[0];
  if (win->kernel[1] != kernel || win->stride[1] != stride || win->dilation[0] != 1 ||
      win->dilation[1] != 1 || (kernel != 3 && kernel != 5 && kernel != 7) || stride < 1 ||
      stride > 2)
    return VK_SHADER_COUNT;
  return shaders[(kernel - 3) / 2][stride - 1];
}

static uint64_t blocks_of(uint64_t count, uint64_t block)
{
  return (count + block - 1) / block;
}

/* Output channels per group from which a tiled device runs a convolution in
 * conv2d_tiled.comp (its 64-channel tiles); fewer run in conv2d.comp's
 * blocks of 8. */
#define TILED_CONV_MIN_CHANNELS 16

/* Picks the convolution's shader by its shape and the device and sizes its
 * workgroups (tiles.h): depthwise.comp for the depthwise windows it has,
 * its runs of pixels over all planes along x; conv2d_tiled.comp on a tiled
 * device, a tile per workgroup (x: pixels, y: channels, z: images and
 * groups); conv2d.comp for the rest, its blocks of channels by pixels along
 * x, the images along y. */
static const char *size_conv_dispatch(npu_hal_device *device, vk_dispatch *k, const int64_t *x,
                                      const int64_t *y, int64_t groups, const window *win)
{
  uint64_t pixels = (uint64_t)(y[2] * y[3]);
  uint64_t group_out = (uint64_t)(y[1] / groups);
  bool depthwise = groups == x[1] && groups == y[1];
  k->shader = depthwise ? depthwise_shader(win) : VK_SHADER_COUNT;
  uint64_t dims[3] = {0, 1, 1};
  if (k->shader != VK_SHADER_COUNT) {
    uint64_t runs = (uint64_t)y[2] * blocks_of((uint64_t)y[3], DEPTHWISE_OUTPUTS);
    dims[0] = blocks_of(runs * (uint64_t)(y[0] * y[1]), TILE_INVOCATIONS);
  } else if (device->tiled_shaders && group_out >= TILED_CONV_MIN_CHANNELS) {
    k->shader = VK_SHADER_CONV2D_TILED;
    dims[0] = blocks_of(pixels, TILED_SIDE * TILED_BLOCK);
    dims[1] = blocks_of(group_out, TILED_SIDE * TILED_BLOCK);
    dims[2] = (uint64_t)(x[0] * groups);
  } else {
    k->shader = VK_SHADER_CONV2D;
    uint64_t channel_blocks = blocks_of(group_out, CONV_CHANNELS);
    uint64_t blocks = blocks_of(pixels, CONV_PIXELS) * channel_blocks * (uint64_t)groups;
    dims[0] = blocks_of(blocks, TILE_INVOCATIONS);
    dims[1] = (uint64_t)x[0];
  }
  if (!dims[0] || !dims[1] || !dims[2])
    return "an empty convolution";
  /* Vulkan guarantees 65535 workgroups along each axis. */
  for (int g = 0; g < 3; g++) {
    if (dims[g] > 65535)
      return "more pixels, channels or images than a dispatch takes";
    k->groups[g] = (uint32_t)dims[g];
  }
  return NULL;
}

static const char *plan_conv(npu_hal_device *device, const npu_hal_op *op, vk_dispatch *k)
{
  if (op->input_count < 2 || op->inputs[0].rank != 4 || op->inputs[1].rank != 4 ||
      op->outputs[0].rank != 4)
    return "2-D convolutions only";
  const int64_t *x = op->inputs[0].dims, *w = op->inputs[1].dims, *y = op->outputs[0].dims;
  int64_t groups = op->window->group;
  if (groups < 1 || x[1] != w[1] * groups || w[0] % groups != 0 || y[1] != w[0])
    return "weights that do not fit the input's channels and groups";
  bool bias = op->input_count > 2 && present(&op->inputs[2]);
  if (bias && elements_of(&op->inputs[2]) != (uint64_t)w[0])
    return "a bias that is not one value per output channel";
  window win;
  const char *why = plan_window(op->window, &win);
  if (why)
    return why;
  k->push[OFFSET_WORDS + ACTIVATION_WORD] = bias ? 1u : 0u;
  vk_addend addend;
  why = vk_plan_activations(op, k, false, &addend);
  if (why)
    return why;
  bool pointwise = groups == 1 && win.kernel[0] == 1 && win.kernel[1] == 1 &&
                   win.stride[0] == 1 && win.stride[1] == 1 && win.pad[0] == 0 &&
                   win.pad[1] == 0 && x[2] == y[2] && x[3] == y[3];
  if (pointwise)
    return vk_plan_pointwise_conv(device, op, k, &addend);
  bind(k, false, 0, true);
  bind(k, false, 1, true);
  bind(k, false, 2, bias);
  bind(k, true, 0, true);
  bind(k, false, addend.input, addend.present);
  uint32_t shape[7] = {(uint32_t)x[0], (uint32_t)x[1], (uint32_t)x[2], (uint32_t)x[3],
                       (uint32_t)y[1], (uint32_t)y[2], (uint32_t)y[3]};
  memcpy(&k->push[OFFSET_WORDS], shape, sizeof shape);
  put_window(k, OFFSET_WORDS + 7, &win);
  k->push[OFFSET_WORDS + 15] = (uint32_t)groups;
  return size_conv_dispatch(device, k, x, y, groups, &win);
}

static const char *plan_pool(const npu_hal_op *op, vk_dispatch *k)
{
  if (op->inputs[0].rank != 4 || op->outputs[0].rank != 4)
    return "2-D pooling only";
  if (op->output_count > 1)
    return "MaxPool's indices";
  const int64_t *x = op->inputs[0].dims, *y = op->outputs[0].dims;
  bool global = strncmp(op->op_type, "Global", 6) == 0;
  bool max = strstr(op->op_type, "Max") != NULL;
  window win = {{(uint32_t)x[2], (uint32_t)x[3]}, {1, 1}, {0, 0}, {1, 1}};
  uint32_t mode = max ? 0 : 1;
  if (!global) {
    const char *why = plan_window(op->window, &win);
    if (why)
      return why;
    bool include_pad = op->window->count_include_pad;
    if (!max && include_pad && op->window->ceil_mode)
      return "AveragePool counting pads with ceil_mode";
    if (!max && include_pad)
      mode = 2;
  } else if (y[2] != 1 || y[3] != 1) {
    return "a global pooling output that is not 1x1";
  }
  k->shader = VK_SHADER_POOL2D;
  k->local_size = 64;
  bind(k, false, 0, true);
  bind(k, true, 0, true);
  uint32_t shape[5] = {(uint32_t)(x[0] * x[1]), (uint32_t)x[2], (uint32_t)x[3], (uint32_t)y[2],
                       (uint32_t)y[3]};
  memcpy(&k->push[OFFSET_WORDS], shape, sizeof shape);
  put_window(k, OFFSET_WORDS + 5, &win);
  k->push[OFFSET_WORDS + 13] = mode;
  return NULL;
}

/* The binary shader's operation code of an operator type; -1 for others. */
static int binary_code(const char *type)
{
  static const char *const binary_ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  for (int code = 0; code < (int)(sizeof binary_ops / sizeof binary_ops[0]); code++)
    if (strcmp(type, binary_ops[code]) == 0)
      return code;
  return -1;
}

/* The operators of one dispatch planned in this file. */
static const char *plan_single(npu_hal_device *device, const npu_hal_op *op, vk_dispatch *d)
{
  const char *type = op->op_type;
  d->invocations = elements_of(&op->outputs[0]);
  if (binary_code(type) >= 0)
    return plan_binary(op, (uint32_t)binary_code(type), d);
  if (unary_code(type) >= 0)
    return plan_unary(op, (uint32_t)unary_code(type), d);
  if (strcmp(type, "BatchNormalization") == 0)
    return plan_batch_norm(op, d);
  if (strcmp(type, "Conv") == 0)
    return plan_conv(device, op, d);
  if (strcmp(type, "MaxPool") == 0 || strcmp(type, "AveragePool") == 0 ||
      strcmp(type, "GlobalAveragePool") == 0 || strcmp(type, "GlobalMaxPool") == 0)
    return plan_pool(op, d);
  return "no kernel for this operator";
}

/* The plan function of `type` in `table`, or NULL. */
static vk_kernel_plan find_plan(const vk_plan_entry *table, const char *type)
{
  for (; table->type; table++)
    if (strcmp(table->type, type) == 0)
      return table->plan;
  return NULL;
}

/* Fills `k` for `op`, or says why the backend does not run it. */
static const char *plan_kernel(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  k->dispatch_count = 0;
  if (op->output_count < 1 || op->input_count < 1 || !present(&op->inputs[0]))
    return "an operator without its first input or an output";
  for (uint32_t o = 0; o < op->output_count; o++)
    if (present(&op->outputs[o]) && op->outputs[o].dtype != NPU_DTYPE_FLOAT32)
      return "float32 tensors only";
  if (op->activation_count && strcmp(op->op_type, "Conv") != 0 &&
      strcmp(op->op_type, "MatMul") != 0 && strcmp(op->op_type, "Gemm") != 0)
    return "fused activations outside convolutions and matrix products";
  vk_kernel_plan plan = find_plan(vk_data_plans, op->op_type);
  plan = plan ? plan : find_plan(vk_math_plans, op->op_type);
  const char *why = plan ? plan(device, op, k) : plan_single(device, op, vk_kernel_add(k));
  return why ? why : check_bound_tensors(device, op, k);
}

static bool vk_op_supported(npu_hal_device *device, const npu_hal_op *op)
{
  npu_hal_kernel kernel;
  return plan_kernel(device, op, &kernel) == NULL;
}

static npu_status vk_kernel_create(npu_hal_device *device, const npu_hal_op *op,
                                   npu_hal_kernel **out)
{
  npu_hal_kernel planned;
  const char *why = plan_kernel(device, op, &planned);
  if (why)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "the Vulkan backend does not run this %s: %s",
                         op->op_type, why);
  vk_shader shaders[VK_MAX_DISPATCHES];
  for (uint32_t i = 0; i < planned.dispatch_count; i++)
    shaders[i] = planned.dispatches[i].shader;
  npu_status status = vk_pipelines_ensure(device, shaders, planned.dispatch_count);
  if (status != NPU_OK)
    return status;
  npu_hal_kernel *kernel = malloc(sizeof *kernel);
  if (!kernel)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for a kernel");
  static atomic_uint_fast64_t serials = 1;
  *kernel = planned;
  kernel->serial = atomic_fetch_add(&serials, 1);
  kernel->recording = NULL;
  *out = kernel;
  return NPU_OK;
}

static void vk_kernel_destroy(npu_hal_kernel *kernel)
{
  vk_recording_release(kernel->recording);
  free(kernel);
}

static bool vk_layout_supported(npu_hal_device *device, const npu_hal_op *op)
{
  return vk_op_supported(device, op);
}

static npu_hal_layout vk_preferred_layout(npu_hal_device *device,
                                          const npu_hal_tensor_desc *tensor, uint32_t *block)
{
  (void)device;
  (void)tensor;
  (void)block;
  return NPU_HAL_LAYOUT_PLAIN;
}

/* The inputs no dispatch reads (Reshape's shape, Slice's starts, Resize's
 * scales): their values were taken when planning, no device copy is needed. */
static uint32_t vk_kernel_packed_inputs(const npu_hal_kernel *k)
{
  uint32_t read = 0;
  for (uint32_t i = 0; i < k->dispatch_count; i++)
    for (uint32_t b = 0; b < k->dispatches[i].binding_count; b++) {
      vk_binding source = k->dispatches[i].sources[b];
      if (source.present && !source.output && source.index < 32)
        read |= 1u << source.index;
    }
  return ~read;
}

const npu_hal_graph_ops npu_vulkan_graph_ops = {
    .op_supported = vk_op_supported,
    .kernel_create = vk_kernel_create,
    .kernel_destroy = vk_kernel_destroy,
    .layout_supported = vk_layout_supported,
    .preferred_layout = vk_preferred_layout,
    .kernel_packed_inputs = vk_kernel_packed_inputs,
    .run = vk_replay_run,
};
