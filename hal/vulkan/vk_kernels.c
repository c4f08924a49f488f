/* Vulkan graph kernels: which operators the backend runs, their push
 * constants worked out once per plan, and a plan's launches recorded as
 * dispatches (a barrier after each) into one command buffer per run.
 * Everything here takes plain float32 tensors; what it refuses runs on the
 * CPU backend through the runtime's partitioning. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

typedef struct binding_source {
  bool present;   /* false: an optional tensor left out (bound to a harmless buffer) */
  bool output;
  uint8_t index;  /* into the launch's inputs or outputs */
} binding_source;

struct npu_hal_kernel {
  vk_shader shader;
  uint32_t binding_count;
  binding_source sources[VK_MAX_BINDINGS];
  uint32_t push[VK_PUSH_CONSTANT_BYTES / 4]; /* words 0-4: element offsets, set per launch */
  uint64_t invocations;                      /* output elements */
  uint32_t local_size;                       /* the shader's workgroup size */
};

#define OFFSET_WORDS VK_MAX_BINDINGS

static uint64_t elements_of(const npu_hal_tensor_desc *t)
{
  uint64_t count = 1;
  for (uint32_t d = 0; d < t->rank; d++)
    count *= (uint64_t)t->dims[d];
  return count;
}

static bool present(const npu_hal_tensor_desc *t)
{
  return t->dtype != NPU_DTYPE_UNDEFINED;
}

static void bind(npu_hal_kernel *k, bool output, uint32_t index, bool is_present)
{
  k->sources[k->binding_count++] = (binding_source){is_present, output, (uint8_t)index};
}

static void put_float(npu_hal_kernel *k, uint32_t word, float value)
{
  memcpy(&k->push[word], &value, sizeof value);
}

/* Why the device cannot hold the op's tensors as it runs them, or NULL. */
static const char *check_tensors(npu_hal_device *device, const npu_hal_op *op)
{
  uint64_t limit = device->properties.limits.maxStorageBufferRange;
  uint64_t slack = device->properties.limits.minStorageBufferOffsetAlignment;
  for (uint32_t i = 0; i < op->input_count + op->output_count; i++) {
    const npu_hal_tensor_desc *t =
        i < op->input_count ? &op->inputs[i] : &op->outputs[i - op->input_count];
    if (!present(t))
      continue;
    if (t->dtype != NPU_DTYPE_FLOAT32)
      return "float32 tensors only";
    if (t->layout != NPU_HAL_LAYOUT_PLAIN)
      return "plain layouts only";
    if (elements_of(t) * sizeof(float) + slack > limit || elements_of(t) > UINT32_MAX)
      return "a tensor larger than the device's storage buffer range";
  }
  return NULL;
}

static const char *plan_unary(const npu_hal_op *op, npu_hal_kernel *k)
{
  float low = -FLT_MAX, high = FLT_MAX;
  uint32_t code = 0;
  if (strcmp(op->op_type, "Sigmoid") == 0) {
    code = 1;
  } else if (strcmp(op->op_type, "Clip") == 0) {
    code = 2;
    if (op->opset < 11) {
      low = op->attributes.get_float(op->attributes.node, "min", low);
      high = op->attributes.get_float(op->attributes.node, "max", high);
    }
    for (uint32_t i = 1; i < op->input_count && op->opset >= 11; i++) {
      if (!present(&op->inputs[i]))
        continue;
      if (!op->input_values || !op->input_values[i] || elements_of(&op->inputs[i]) != 1)
        return "Clip bounds that are not constant scalars";
      *(i == 1 ? &low : &high) = *(const float *)op->input_values[i];
    }
  }
  k->shader = VK_SHADER_UNARY;
  k->local_size = 256;
  bind(k, false, 0, true);
  bind(k, true, 0, true);
  k->push[OFFSET_WORDS] = (uint32_t)elements_of(&op->outputs[0]);
  k->push[OFFSET_WORDS + 1] = code;
  put_float(k, OFFSET_WORDS + 2, low);
  put_float(k, OFFSET_WORDS + 3, high);
  return NULL;
}

static const char *plan_binary(const npu_hal_op *op, uint32_t code, npu_hal_kernel *k)
{
  if (op->input_count != 2)
    return "two inputs expected";
  uint64_t count = elements_of(&op->outputs[0]);
  uint64_t a = elements_of(&op->inputs[0]), b = elements_of(&op->inputs[1]);
  if ((a != count && a != 1) || (b != count && b != 1))
    return "broadcasts other than same shape or a scalar";
  k->shader = VK_SHADER_BINARY;
  k->local_size = 256;
  bind(k, false, 0, true);
  bind(k, false, 1, true);
  bind(k, true, 0, true);
  k->push[OFFSET_WORDS] = (uint32_t)count;
  k->push[OFFSET_WORDS + 1] = code;
  k->push[OFFSET_WORDS + 2] = a == count;
  k->push[OFFSET_WORDS + 3] = b == count;
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
static void put_window(npu_hal_kernel *k, uint32_t word, const window *win)
{
  uint32_t values[8] = {win->kernel[0], win->kernel[1], win->stride[0], win->stride[1],
                        win->pad[0],    win->pad[1],    win->dilation[0], win->dilation[1]};
  memcpy(&k->push[word], values, sizeof values);
}

/* conv2d.comp's number for a fused activation; -1 where it has none. */
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
  default: return -1; /* GELU: no erf in GLSL */
  }
}

static const char *plan_conv(const npu_hal_op *op, npu_hal_kernel *k)
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
  if (op->activation_count > 2)
    return "more than two fused activations";
  uint32_t kinds = 0, residual = 0, adds = 0;
  for (uint32_t a = 0; a < op->activation_count; a++) {
    const npu_hal_activation *act = &op->activations[a];
    int code = shader_activation(act->kind);
    if (code < 0)
      return "a fused activation the shader has not";
    if (act->kind == NPU_HAL_ACTIVATION_ADD) {
      if (act->input >= op->fused_input_count ||
          elements_of(&op->fused_inputs[act->input]) != elements_of(&op->outputs[0]))
        return "a fused Add of another shape than the output (a bias)";
      adds++;
      residual = op->input_count + act->input;
    }
    kinds |= (uint32_t)code << (8 * a);
    put_float(k, OFFSET_WORDS + 18 + 2 * a, act->alpha);
    put_float(k, OFFSET_WORDS + 19 + 2 * a, act->beta);
  }
  if (adds > 1)
    return "more than one fused residual Add";
  k->shader = VK_SHADER_CONV2D;
  k->local_size = 64;
  bind(k, false, 0, true);
  bind(k, false, 1, true);
  bind(k, false, 2, bias);
  bind(k, true, 0, true);
  bind(k, false, residual, adds > 0);
  uint32_t shape[7] = {(uint32_t)x[0], (uint32_t)x[1], (uint32_t)x[2], (uint32_t)x[3],
                       (uint32_t)y[1], (uint32_t)y[2], (uint32_t)y[3]};
  memcpy(&k->push[OFFSET_WORDS], shape, sizeof shape);
  put_window(k, OFFSET_WORDS + 7, &win);
  k->push[OFFSET_WORDS + 15] = (uint32_t)groups;
  k->push[OFFSET_WORDS + 16] = (bias ? 1u : 0u) | op->activation_count << 8;
  k->push[OFFSET_WORDS + 17] = kinds;
  return NULL;
}

static const char *plan_pool(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->inputs[0].rank != 4 || op->outputs[0].rank != 4)
    return "2-D pooling only";
  if (op->output_count > 1 && present(&op->outputs[1]))
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
  static const char *const binary_ops[] = {"Add", "Sub", "Mul", "Div"};
  for (int code = 0; code < 4; code++)
    if (strcmp(type, binary_ops[code]) == 0)
      return code;
  return -1;
}

/* Fills `k` for `op`, or says why the backend does not run it. */
static const char *plan_kernel(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  memset(k, 0, sizeof *k);
  if (!device->push_descriptors)
    return "the device has no VK_KHR_push_descriptor";
  if (op->output_count < 1 || op->input_count < 1 || !present(&op->inputs[0]))
    return "an operator without its first input or an output";
  const char *why = check_tensors(device, op);
  if (why)
    return why;
  const char *type = op->op_type;
  bool conv = strcmp(type, "Conv") == 0;
  if (op->activation_count && !conv)
    return "fused activations outside convolutions";
  if (binary_code(type) >= 0)
    why = plan_binary(op, (uint32_t)binary_code(type), k);
  else if (strcmp(type, "Relu") == 0 || strcmp(type, "Sigmoid") == 0 || strcmp(type, "Clip") == 0)
    why = plan_unary(op, k);
  else if (conv)
    why = plan_conv(op, k);
  else if (strcmp(type, "MaxPool") == 0 || strcmp(type, "AveragePool") == 0 ||
           strcmp(type, "GlobalAveragePool") == 0 || strcmp(type, "GlobalMaxPool") == 0)
    why = plan_pool(op, k);
  else
    why = "no kernel for this operator";
  k->invocations = elements_of(&op->outputs[0]);
  return why;
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
  npu_status status = vk_pipelines_ensure(device);
  if (status != NPU_OK)
    return status;
  npu_hal_kernel *kernel = malloc(sizeof *kernel);
  if (!kernel)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for a kernel");
  *kernel = planned;
  *out = kernel;
  return NPU_OK;
}

static void vk_kernel_destroy(npu_hal_kernel *kernel)
{
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

static npu_status record_launch(npu_hal_device *device, VkCommandBuffer commands,
                                const npu_hal_launch *launch)
{
  const npu_hal_kernel *k = launch->kernel;
  if (!k->invocations)
    return NPU_OK;
  uint32_t push[VK_PUSH_CONSTANT_BYTES / 4];
  memcpy(push, k->push, sizeof push);
  VkDescriptorBufferInfo buffers[VK_MAX_BINDINGS];
  VkDeviceSize align = device->properties.limits.minStorageBufferOffsetAlignment;
  VkDeviceSize max_range = device->properties.limits.maxStorageBufferRange;
  for (uint32_t b = 0; b < k->binding_count; b++) {
    binding_source source = k->sources[b];
    /* An absent optional tensor: the shader never reads it, any buffer will do. */
    npu_hal_mem_ref ref = !source.present ? launch->outputs[0]
                          : source.output ? launch->outputs[source.index]
                                          : launch->inputs[source.index];
    if (!ref.buffer || ref.offset % sizeof(float))
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                           "Vulkan kernels take float-aligned device buffers, not %s",
                           ref.buffer ? "an unaligned offset" : "host memory");
    VkDeviceSize start = ref.offset / align * align;
    VkDeviceSize range = ref.buffer->size - start;
    buffers[b] = (VkDescriptorBufferInfo){ref.buffer->buffer, start,
                                          range < max_range ? range : max_range};
    push[b] = (uint32_t)((ref.offset - start) / sizeof(float));
  }
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, vk_pipeline(device, k->shader));
  vk_cmd_push_buffers(device, commands, buffers, k->binding_count);
  vkCmdPushConstants(commands, vk_pipeline_layout(device), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                     sizeof push, push);
  uint64_t groups = (k->invocations + k->local_size - 1) / k->local_size;
  uint64_t max_groups = device->properties.limits.maxComputeWorkGroupCount[0];
  vkCmdDispatch(commands, (uint32_t)(groups < max_groups ? groups : max_groups), 1, 1);
  vk_cmd_barrier(commands);
  return NPU_OK;
}

static npu_status vk_run(npu_hal_device *device, npu_hal_stream *stream,
                         const npu_hal_launch *launches, size_t count, npu_hal_task_fn done,
                         void *done_data)
{
  vk_work work = {.done = done, .done_data = done_data};
  if (count) {
    npu_status status = vk_stream_begin(stream, &work.commands);
    for (size_t l = 0; l < count && status == NPU_OK; l++)
      status = record_launch(device, work.commands, &launches[l]);
    if (status != NPU_OK) {
      if (work.commands)
        vk_stream_abandon(stream, work.commands);
      return status;
    }
  }
  return vk_stream_queue(stream, &work);
}

const npu_hal_graph_ops npu_vulkan_graph_ops = {
    .op_supported = vk_op_supported,
    .kernel_create = vk_kernel_create,
    .kernel_destroy = vk_kernel_destroy,
    .layout_supported = vk_layout_supported,
    .preferred_layout = vk_preferred_layout,
    .run = vk_run,
};
