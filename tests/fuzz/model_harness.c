/* The model fuzz target's work (see model_harness.h). */
#include "model_harness.h"

#include <stdlib.h>
#include <string.h>

#include <npu/npu.h>

/* Inputs and outputs of a fuzzed run stay tiny; planning is bounded by the
 * device's memory limit, so a model that asks for more is refused there
 * instead of making the fuzzer run out of memory. */
#define MAX_IO_BYTES (64u << 10)
#define MAX_IO_TENSORS 16

void model_harness_init(void)
{
  setenv("NPU_CPU_MEMORY_LIMIT", "64M", 1);
  setenv("NPU_NUM_THREADS", "1", 1);
  setenv("NPU_BACKEND", "cpu", 1);
}

static size_t tensor_bytes(const npu_tensor_info *info)
{
  size_t bytes = npu_dtype_size(info->dtype);
  for (uint32_t d = 0; d < info->rank; d++)
    if (info->dims[d] < 0 || __builtin_mul_overflow(bytes, (size_t)info->dims[d], &bytes))
      return SIZE_MAX;
  return bytes;
}

/* A refusal must say why: an empty message is a bug of its own. */
static int accepted(npu_status status)
{
  const char *message = npu_last_error_message();
  if (status != NPU_OK && (!message || !*message))
    abort();
  return status == NPU_OK;
}

/* One buffer per tensor of the context (inputs filled with a pattern);
 * false when a tensor is larger than a fuzzed run allows. */
static int alloc_buffers(npu_device *device, npu_context *context, uint32_t count, int inputs,
                         npu_buffer **buffers)
{
  for (uint32_t i = 0; i < count; i++) {
    npu_tensor_info info;
    npu_status status = inputs ? npu_context_input_info(context, i, &info)
                               : npu_context_output_info(context, i, &info);
    size_t bytes = tensor_bytes(&info);
    if (status != NPU_OK || bytes > MAX_IO_BYTES ||
        npu_buffer_alloc(device, bytes ? bytes : 1, &buffers[i]) != NPU_OK)
      return 0;
    if (inputs && npu_memset(buffers[i], 0, 0x3c, bytes ? bytes : 1) != NPU_OK)
      return 0;
  }
  return 1;
}

static int run_context(npu_device *device, npu_context *context, uint32_t inputs,
                       uint32_t outputs)
{
  npu_buffer *buffers[2 * MAX_IO_TENSORS] = {0};
  int ran = alloc_buffers(device, context, inputs, 1, buffers) &&
            alloc_buffers(device, context, outputs, 0, buffers + inputs) &&
            accepted(npu_context_run_sync(context, buffers, buffers + inputs));
  for (uint32_t i = 0; i < inputs + outputs; i++)
    if (buffers[i])
      npu_buffer_release(buffers[i]);
  return ran;
}

static unsigned replans_ran;

unsigned model_harness_replans_ran(void)
{
  return replans_ran;
}

/* The model's input shapes with every dynamic axis at `batch`; false when
 * an input would be larger than a fuzzed run allows. *dynamic tells
 * whether any axis was dynamic (whether another batch means another plan). */
static int input_shapes(npu_model *model, uint32_t inputs, int64_t batch,
                        npu_tensor_info *shapes, int *dynamic)
{
  *dynamic = 0;
  for (uint32_t i = 0; i < inputs; i++) {
    npu_model_input_info(model, i, &shapes[i]);
    for (uint32_t d = 0; d < shapes[i].rank; d++)
      if (shapes[i].dims[d] < 0) {
        shapes[i].dims[d] = batch;
        *dynamic = 1;
      }
    if (tensor_bytes(&shapes[i]) > MAX_IO_BYTES)
      return 0;
  }
  return 1;
}

/* Plans the loaded model with every dynamic axis at 1 and runs it once;
 * a model with dynamic axes is then re-planned at 2 and back at 1 (the
 * plan cache's path), running each. Releases the model. */
static int plan_and_run(npu_model *model)
{
  static npu_device *device;
  if (!device && npu_device_open_default(&device) != NPU_OK)
    abort(); /* the CPU device is always there */
  uint32_t inputs = 0, outputs = 0;
  npu_tensor_info shapes[MAX_IO_TENSORS];
  npu_context *context = NULL;
  int ran = 0, dynamic;
  npu_model_input_count(model, &inputs);
  npu_model_output_count(model, &outputs);
  if (inputs > MAX_IO_TENSORS || outputs > MAX_IO_TENSORS ||
      !input_shapes(model, inputs, 1, shapes, &dynamic))
    goto done;
  if (!accepted(npu_context_create(model, device, shapes, inputs, &context)))
    goto done;
  ran = run_context(device, context, inputs, outputs);
  for (int64_t batch = 2; ran && dynamic && batch >= 1; batch--)
    if (input_shapes(model, inputs, batch, shapes, &dynamic) &&
        accepted(npu_context_reshape(context, shapes, inputs)))
      replans_ran += run_context(device, context, inputs, outputs);
done:
  if (context)
    npu_context_destroy(context);
  npu_model_release(model);
  return ran;
}

int model_harness_run(const uint8_t *data, size_t size, const char *base_dir)
{
  npu_model *model;
  return accepted(npu_model_load_memory(data, size, base_dir, &model)) ? plan_and_run(model) : 0;
}

int model_harness_run_file(const char *path)
{
  npu_model *model;
  return accepted(npu_model_load_file(path, &model)) ? plan_and_run(model) : 0;
}
