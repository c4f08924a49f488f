/* Compute pipelines: the GLSL shaders in shaders/, compiled to SPIR-V by
 * glslc when the library is built and embedded here; one pipeline per shader
 * per device, made when the first kernel that runs the shader is created
 * (a process compiles only the shaders it uses: on lavapipe each costs an
 * LLVM compile) through the device's pipeline cache, saved to disk after (the
 * driver's compile is the only one at run time, and a second process finds
 * it cached). Every shader uses one
 * layout: storage buffers 0-5 in a descriptor set per dispatch (updatable
 * after the dispatch is recorded where the device allows: vk_replay.c) and
 * 128 bytes of push constants. */
#include <stdio.h>
#include <stdlib.h>

#include "vk_internal.h"

static const uint32_t unary_spirv[] =
#include "vulkan/unary.spv.h"
    ;
static const uint32_t binary_spirv[] =
#include "vulkan/binary.spv.h"
    ;
static const uint32_t conv2d_spirv[] =
#include "vulkan/conv2d.spv.h"
    ;
static const uint32_t pool2d_spirv[] =
#include "vulkan/pool2d.spv.h"
    ;
static const uint32_t copy_spirv[] =
#include "vulkan/copy.spv.h"
    ;
static const uint32_t resize_spirv[] =
#include "vulkan/resize.spv.h"
    ;
static const uint32_t reduce_spirv[] =
#include "vulkan/reduce.spv.h"
    ;
static const uint32_t matmul_spirv[] =
#include "vulkan/matmul.spv.h"
    ;
static const uint32_t conv_transpose2d_spirv[] =
#include "vulkan/conv_transpose2d.spv.h"
    ;
static const uint32_t batch_norm_spirv[] =
#include "vulkan/batch_norm.spv.h"
    ;
static const uint32_t layer_norm_spirv[] =
#include "vulkan/layer_norm.spv.h"
    ;
static const uint32_t depthwise_k3_s1_spirv[] =
#include "vulkan/depthwise_k3_s1.spv.h"
    ;
static const uint32_t depthwise_k3_s2_spirv[] =
#include "vulkan/depthwise_k3_s2.spv.h"
    ;
static const uint32_t depthwise_k5_s1_spirv[] =
#include "vulkan/depthwise_k5_s1.spv.h"
    ;
static const uint32_t depthwise_k5_s2_spirv[] =
#include "vulkan/depthwise_k5_s2.spv.h"
    ;
static const uint32_t depthwise_k7_s1_spirv[] =
#include "vulkan/depthwise_k7_s1.spv.h"
    ;
static const uint32_t depthwise_k7_s2_spirv[] =
#include "vulkan/depthwise_k7_s2.spv.h"
    ;
static const uint32_t matmul_tiled_spirv[] =
#include "vulkan/matmul_tiled.spv.h"
    ;
static const uint32_t conv2d_tiled_spirv[] =
#include "vulkan/conv2d_tiled.spv.h"
    ;

static const struct {
  const char *name;
  const uint32_t *code;
  size_t bytes;
} shaders[VK_SHADER_COUNT] = {
    [VK_SHADER_UNARY] = {"unary", unary_spirv, sizeof unary_spirv},
    [VK_SHADER_BINARY] = {"binary", binary_spirv, sizeof binary_spirv},
    [VK_SHADER_CONV2D] = {"conv2d", conv2d_spirv, sizeof conv2d_spirv},
    [VK_SHADER_POOL2D] = {"pool2d", pool2d_spirv, sizeof pool2d_spirv},
    [VK_SHADER_COPY] = {"copy", copy_spirv, sizeof copy_spirv},
    [VK_SHADER_RESIZE] = {"resize", resize_spirv, sizeof resize_spirv},
    [VK_SHADER_REDUCE] = {"reduce", reduce_spirv, sizeof reduce_spirv},
    [VK_SHADER_MATMUL] = {"matmul", matmul_spirv, sizeof matmul_spirv},
    [VK_SHADER_CONV_TRANSPOSE2D] = {"conv_transpose2d", conv_transpose2d_spirv,
                                    sizeof conv_transpose2d_spirv},
    [VK_SHADER_BATCH_NORM] = {"batch_norm", batch_norm_spirv, sizeof batch_norm_spirv},
    [VK_SHADER_LAYER_NORM] = {"layer_norm", layer_norm_spirv, sizeof layer_norm_spirv},
    [VK_SHADER_DEPTHWISE_K3_S1] = {"depthwise_k3_s1", depthwise_k3_s1_spirv,
                                   sizeof depthwise_k3_s1_spirv},
    [VK_SHADER_DEPTHWISE_K3_S2] = {"depthwise_k3_s2", depthwise_k3_s2_spirv,
                                   sizeof depthwise_k3_s2_spirv},
    [VK_SHADER_DEPTHWISE_K5_S1] = {"depthwise_k5_s1", depthwise_k5_s1_spirv,
                                   sizeof depthwise_k5_s1_spirv},
    [VK_SHADER_DEPTHWISE_K5_S2] = {"depthwise_k5_s2", depthwise_k5_s2_spirv,
                                   sizeof depthwise_k5_s2_spirv},
    [VK_SHADER_DEPTHWISE_K7_S1] = {"depthwise_k7_s1", depthwise_k7_s1_spirv,
                                   sizeof depthwise_k7_s1_spirv},
    [VK_SHADER_DEPTHWISE_K7_S2] = {"depthwise_k7_s2", depthwise_k7_s2_spirv,
                                   sizeof depthwise_k7_s2_spirv},
    [VK_SHADER_MATMUL_TILED] = {"matmul_tiled", matmul_tiled_spirv, sizeof matmul_tiled_spirv},
    [VK_SHADER_CONV2D_TILED] = {"conv2d_tiled", conv2d_tiled_spirv, sizeof conv2d_tiled_spirv},
};

struct vk_pipelines {
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipelines[VK_SHADER_COUNT];
};

static void destroy_pipelines(VkDevice device, vk_pipelines *p)
{
  for (int s = 0; s < VK_SHADER_COUNT; s++)
    if (p->pipelines[s])
      vkDestroyPipeline(device, p->pipelines[s], NULL);
  if (p->layout)
    vkDestroyPipelineLayout(device, p->layout, NULL);
  if (p->set_layout)
    vkDestroyDescriptorSetLayout(device, p->set_layout, NULL);
  free(p);
}

static VkResult create_layouts(npu_hal_device *device, vk_pipelines *p)
{
  VkDescriptorSetLayoutBinding bindings[VK_MAX_BINDINGS];
  VkDescriptorBindingFlags flags[VK_MAX_BINDINGS];
  for (uint32_t b = 0; b < VK_MAX_BINDINGS; b++) {
    bindings[b] = (VkDescriptorSetLayoutBinding){
        .binding = b, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    flags[b] = VK_DESCRIPTOR_BINDING_UPDATE_AFTER_BIND_BIT;
  }
  VkDescriptorSetLayoutBindingFlagsCreateInfo binding_flags = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO,
      .bindingCount = VK_MAX_BINDINGS, .pBindingFlags = flags};
  VkDescriptorSetLayoutCreateInfo set_info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .pNext = device->update_after_bind ? &binding_flags : NULL,
      .flags = device->update_after_bind
                   ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_UPDATE_AFTER_BIND_POOL_BIT
                   : 0,
      .bindingCount = VK_MAX_BINDINGS, .pBindings = bindings};
  VkResult result = vkCreateDescriptorSetLayout(device->device, &set_info, NULL, &p->set_layout);
  if (result != VK_SUCCESS)
    return result;
  VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
                               .size = VK_PUSH_CONSTANT_BYTES};
  VkPipelineLayoutCreateInfo layout_info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                            .setLayoutCount = 1, .pSetLayouts = &p->set_layout,
                                            .pushConstantRangeCount = 1,
                                            .pPushConstantRanges = &range};
  return vkCreatePipelineLayout(device->device, &layout_info, NULL, &p->layout);
}

VkResult vk_compute_pipeline_create(VkDevice device, VkPipelineLayout layout,
                                    VkPipelineCache cache, const uint32_t *code, size_t bytes,
                                    VkPipeline *pipeline)
{
  VkShaderModuleCreateInfo module_info = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                          .codeSize = bytes, .pCode = code};
  VkShaderModule module;
  VkResult result = vkCreateShaderModule(device, &module_info, NULL, &module);
  if (result != VK_SUCCESS)
    return result;
  VkComputePipelineCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = module, .pName = "main"},
      .layout = layout};
  result = vkCreateComputePipelines(device, cache, 1, &info, NULL, pipeline);
  vkDestroyShaderModule(device, module, NULL);
  return result;
}

npu_status vk_pipelines_ensure(npu_hal_device *device, const vk_shader *wanted, uint32_t count)
{
  npu_status status = NPU_OK;
  char failed[64] = "the pipeline layout";
  VkResult result = VK_SUCCESS;
  pthread_mutex_lock(&device->pipelines_lock);
  vk_pipelines *p = device->pipelines;
  if (!p) {
    p = calloc(1, sizeof *p);
    if (!p) {
      status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for Vulkan pipelines");
      goto done;
    }
    result = create_layouts(device, p);
    if (result != VK_SUCCESS) {
      destroy_pipelines(device->device, p);
      goto done;
    }
    device->pipelines = p;
  }
  bool made = false;
  for (uint32_t i = 0; i < count && result == VK_SUCCESS; i++) {
    vk_shader s = wanted[i];
    if (p->pipelines[s])
      continue;
    snprintf(failed, sizeof failed, "the pipeline of shader '%s'", shaders[s].name);
    result = vk_compute_pipeline_create(device->device, p->layout, device->pipeline_cache,
                                        shaders[s].code, shaders[s].bytes, &p->pipelines[s]);
    made = made || result == VK_SUCCESS;
  }
  if (made)
    vk_pipeline_cache_save(device);
done:
  if (result != VK_SUCCESS)
    status = npu_set_error(vk_status_of(result) == NPU_ERROR_OUT_OF_MEMORY
                               ? NPU_ERROR_OUT_OF_MEMORY
                               : NPU_ERROR_IO,
                           "Vulkan device '%s' cannot create %s: %s",
                           device->properties.deviceName, failed, vk_result_name(result));
  pthread_mutex_unlock(&device->pipelines_lock);
  return status;
}

void vk_pipelines_destroy(npu_hal_device *device)
{
  if (device->pipelines)
    destroy_pipelines(device->device, device->pipelines);
  device->pipelines = NULL;
}

VkPipeline vk_pipeline(npu_hal_device *device, vk_shader shader)
{
  return device->pipelines->pipelines[shader];
}

VkPipelineLayout vk_pipeline_layout(npu_hal_device *device)
{
  return device->pipelines->layout;
}

VkDescriptorSetLayout vk_descriptor_set_layout(npu_hal_device *device)
{
  return device->pipelines->set_layout;
}
