/* gst-npu Vulkan backend: what its files share (devices, buffers, streams,
 * kernels). One VkDevice and one compute queue per npu device; every stream
 * submits to that queue and orders its own work with a timeline semaphore. */
#ifndef NPU_VK_INTERNAL_H
#define NPU_VK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <vulkan/vulkan.h>

#include "npu_hal.h"
#include "npu_hal_graph.h"

extern const npu_hal_backend npu_vulkan_backend;
extern const npu_hal_graph_ops npu_vulkan_graph_ops;
extern const npu_hal_vpp_ops npu_vulkan_vpp_ops;

typedef struct vk_pipelines vk_pipelines;
typedef struct vk_vpp_pipeline vk_vpp_pipeline;

struct npu_hal_device {
  VkInstance instance;
  VkPhysicalDevice physical;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  pthread_mutex_t queue_lock;       /* vkQueueSubmit needs the queue to itself */
  VkPhysicalDeviceProperties properties;
  VkPhysicalDeviceMemoryProperties memory;
  VkDeviceSize max_allocation;      /* maxMemoryAllocationSize */
  uint32_t buffer_memory_type;      /* device buffers */
  uint32_t staging_memory_type;     /* host-visible and coherent */
  bool host_visible;                /* device buffers are mapped: host copies go direct */
  bool push_descriptors;            /* VK_KHR_push_descriptor: kernels need it */
  bool buffer_array_indexing;       /* shaderStorageBufferArrayDynamicIndexing: the VPP needs it */
  bool timestamps;                  /* the queue family writes timestamps */
  atomic_uint_fast64_t bytes_in_use;
  npu_hal_buffer *byte_patterns;    /* 4 copies of each byte value: unaligned fill edges */
  npu_hal_stream *sync_stream;      /* synchronous copies and fills that need the queue */
  vk_pipelines *pipelines;          /* made on the first kernel */
  vk_vpp_pipeline *vpp;             /* made on the first VPP batch (vk_vpp.c) */
  pthread_mutex_t pipelines_lock;   /* guards both */
};

struct npu_hal_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceSize size;
  void *mapped;        /* host address when the memory is host-visible, else NULL */
  bool counted;        /* in the device's bytes_in_use */
};

/* Instance and physical devices (vk_device.c). */
uint32_t vk_device_count(void);
npu_status vk_device_open(uint32_t index, npu_hal_device **device);
void vk_device_close(npu_hal_device *device);
void vk_device_properties(npu_hal_device *device, npu_device_properties *props);
/* A readable message for a Vulkan result, for npu_set_error. */
const char *vk_result_name(VkResult result);
npu_status vk_status_of(VkResult result);

/* Buffers (vk_memory.c). `staging`: in host-visible coherent memory, mapped. */
npu_status vk_buffer_create(npu_hal_device *device, VkDeviceSize size, bool staging,
                            npu_hal_buffer **buffer);
void vk_buffer_destroy(npu_hal_device *device, npu_hal_buffer *buffer);

/* Streams (vk_stream.c). Work is recorded into a command buffer of the
 * stream's between vk_stream_begin and vk_stream_queue (or vk_stream_abandon
 * when recording fails), and queued in order after everything before it. */
npu_status vk_stream_begin(npu_hal_stream *stream, VkCommandBuffer *commands);
void vk_stream_abandon(npu_hal_stream *stream, VkCommandBuffer commands);

/* One piece of stream work: an optional host copy (into or out of mapped
 * memory, run by the stream's worker in order), before or after optional
 * commands; then `temporary` (a staging buffer) is destroyed and `done` runs. */
typedef struct vk_work {
  VkCommandBuffer commands;
  void *copy_dst;
  const void *copy_src;
  size_t copy_size;      /* 0: no host copy */
  bool copy_after;       /* after the commands (a download), else before (an upload) */
  npu_hal_buffer *temporary;
  npu_hal_task_fn done;
  void *done_data;
} vk_work;
npu_status vk_stream_queue(npu_hal_stream *stream, const vk_work *work);
npu_hal_device *vk_stream_device(npu_hal_stream *stream);
/* Makes shader and transfer writes visible to the next command and to the host. */
void vk_cmd_barrier(VkCommandBuffer commands);

npu_status vk_stream_create(npu_hal_device *device, npu_hal_stream **stream);
void vk_stream_destroy(npu_hal_stream *stream);
npu_status vk_stream_host_fn(npu_hal_stream *stream, npu_hal_task_fn fn, void *user_data);
npu_status vk_stream_synchronize(npu_hal_stream *stream);
bool vk_stream_idle(npu_hal_stream *stream);
npu_status vk_stream_wait_event(npu_hal_stream *stream, npu_hal_event *event);
void vk_stream_stats(npu_hal_stream *stream, npu_stream_stats *stats);

npu_status vk_event_create(npu_hal_device *device, uint32_t flags, npu_hal_event **event);
void vk_event_destroy(npu_hal_event *event);
npu_status vk_event_record(npu_hal_event *event, npu_hal_stream *stream);
npu_status vk_event_synchronize(npu_hal_event *event);
bool vk_event_done(npu_hal_event *event);
npu_status vk_event_elapsed_ms(npu_hal_event *start, npu_hal_event *end, float *ms);

/* Copies and fills (vk_memory.c), the backend's entries. */
npu_status vk_copy(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst,
                   npu_hal_mem_ref src, size_t size, npu_hal_task_fn done, void *done_data);
npu_status vk_fill(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst, int value,
                   size_t size, npu_hal_task_fn done, void *done_data);
npu_status vk_buffer_alloc(npu_hal_device *device, size_t size, npu_hal_buffer **buffer);
void vk_buffer_free(npu_hal_device *device, npu_hal_buffer *buffer);
void *vk_buffer_host_ptr(npu_hal_buffer *buffer);
npu_status vk_host_alloc(npu_hal_device *device, size_t size, void **host_ptr);
void vk_host_free(npu_hal_device *device, void *host_ptr);

/* Compute pipelines (vk_pipelines.c), one per shader, made once per device. */
typedef enum vk_shader {
  VK_SHADER_UNARY,
  VK_SHADER_BINARY,
  VK_SHADER_CONV2D,
  VK_SHADER_POOL2D,
  VK_SHADER_COPY,
  VK_SHADER_RESIZE,
  VK_SHADER_REDUCE,
  VK_SHADER_MATMUL,
  VK_SHADER_CONV_TRANSPOSE2D,
  VK_SHADER_BATCH_NORM,
  VK_SHADER_LAYER_NORM,
  VK_SHADER_COUNT
} vk_shader;

#define VK_MAX_BINDINGS 6
#define VK_PUSH_CONSTANT_BYTES 128

npu_status vk_pipelines_ensure(npu_hal_device *device);
void vk_pipelines_destroy(npu_hal_device *device);
VkPipeline vk_pipeline(npu_hal_device *device, vk_shader shader);
VkPipelineLayout vk_pipeline_layout(npu_hal_device *device);
/* A compute pipeline of SPIR-V `code` (`bytes` long) with `layout`. */
VkResult vk_compute_pipeline_create(VkDevice device, VkPipelineLayout layout,
                                    VkPipelineCache cache, const uint32_t *code, size_t bytes,
                                    VkPipeline *pipeline);
/* Binds storage buffers 0..count-1 for the next dispatch. */
void vk_cmd_push_buffers(npu_hal_device *device, VkCommandBuffer commands,
                         const VkDescriptorBufferInfo *buffers, uint32_t count);

/* The VPP's pipeline (vk_vpp.c), destroyed with the device. */
void vk_vpp_destroy(npu_hal_device *device);

#endif
