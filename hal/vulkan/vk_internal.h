/* gst-npu Vulkan backend: what its files share (devices, buffers, streams,
 * kernels). One VkDevice and one compute queue per npu device; every stream
 * submits to that queue and orders its own work with a timeline semaphore. */
#ifndef NPU_VK_INTERNAL_H
#define NPU_VK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <vulkan/vulkan.h>

#include "fd_map.h"
#include "npu_hal.h"
#include "npu_hal_graph.h"

extern const npu_hal_backend npu_vulkan_backend;
extern const npu_hal_graph_ops npu_vulkan_graph_ops;
extern const npu_hal_vpp_ops npu_vulkan_vpp_ops;

typedef struct vk_pipelines vk_pipelines;
typedef struct vk_vpp_pipeline vk_vpp_pipeline;
typedef struct vk_block vk_block;

/* Kernel runs and how their commands came about (vk_replay.c), for tests. */
typedef struct vk_replay_counts {
  atomic_uint_fast64_t runs;               /* vk_replay_run calls that queued commands */
  atomic_uint_fast64_t recorded;           /* command buffers recorded */
  atomic_uint_fast64_t descriptor_updates; /* descriptor sets rewritten */
} vk_replay_counts;

/* Sub-allocated device memory of one memory type (vk_suballoc.c): blocks
 * from the driver, carved into ranges; thread-safe. */
typedef struct vk_heap {
  pthread_mutex_t lock;
  uint32_t memory_type;
  bool mappable;                 /* blocks are mapped once, whole */
  VkExternalMemoryHandleTypeFlags export_types; /* blocks are allocated exportable as these
                                                   (buffers bound in them must say so) */
  VkDeviceSize block_size;
  VkDeviceSize budget;           /* most bytes taken from the driver (0: no limit) */
  VkDeviceSize reserved;         /* bytes taken now */
  uint64_t driver_allocations;   /* vkAllocateMemory calls so far */
  vk_block *blocks;
} vk_heap;

/* A range of a block: where a buffer is bound. */
typedef struct vk_allocation {
  vk_block *block;
  VkDeviceMemory memory;
  VkDeviceSize offset, size;
  void *mapped;                  /* its host address in a mappable heap, else NULL */
} vk_allocation;

typedef struct vk_heap_counts {
  uint64_t driver_allocations;
  VkDeviceSize reserved;
  uint32_t blocks;
} vk_heap_counts;

/* Blocks of VK_HEAP_BLOCK_BYTES unless the driver allocates less at once. */
#define VK_HEAP_BLOCK_BYTES ((VkDeviceSize)64 << 20)

/* `block_size` is cut to `budget` where larger. */
void vk_heap_init(vk_heap *heap, uint32_t memory_type, bool mappable, VkDeviceSize block_size,
                  VkDeviceSize budget);
void vk_heap_destroy(VkDevice device, vk_heap *heap);
/* NPU_ERROR_OUT_OF_MEMORY (with a message) past the budget or when the driver refuses. */
npu_status vk_heap_alloc(VkDevice device, vk_heap *heap, VkDeviceSize size,
                         VkDeviceSize alignment, vk_allocation *allocation);
void vk_heap_free(VkDevice device, vk_heap *heap, const vk_allocation *allocation);
void vk_heap_stats(vk_heap *heap, vk_heap_counts *counts);

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
  bool update_after_bind;           /* storage buffer descriptors updatable once bound */
  VkDeviceSize host_import_alignment; /* 0: no VK_EXT_external_memory_host */
  PFN_vkGetMemoryHostPointerPropertiesEXT get_host_pointer_properties;
  bool dma_buf;                     /* VK_KHR_external_memory_fd and _dma_buf enabled */
  bool dma_buf_export;              /* device buffers' blocks are exportable dma-bufs */
  bool dma_buf_import;              /* dma-bufs are imported as device memory */
  PFN_vkGetMemoryFdKHR get_memory_fd;
  PFN_vkGetMemoryFdPropertiesKHR get_memory_fd_properties;
  bool buffer_array_indexing;       /* shaderStorageBufferArrayDynamicIndexing: the VPP needs it */
  bool tiled_shaders;               /* products and convolutions in the shared-memory tiled
                                       shaders (GPUs), else the register-blocked ones (CPUs) */
  bool timestamps;                  /* the queue family writes timestamps */
  uint64_t timestamp_mask;          /* its timestampValidBits */
  atomic_uint_fast64_t bytes_in_use;
  npu_hal_buffer *byte_patterns;    /* 4 copies of each byte value: unaligned fill edges */
  npu_hal_stream *sync_stream;      /* synchronous copies and fills that need the queue */
  vk_heap heaps[VK_MAX_MEMORY_TYPES]; /* sub-allocated memory, one per memory type */
  VkPipelineCache pipeline_cache;   /* loaded from disk, saved after compiles (vk_pipeline_cache.c) */
  char pipeline_cache_path[512];    /* "": no cache directory */
  size_t pipeline_cache_loaded;     /* bytes of driver data taken from the file */
  vk_pipelines *pipelines;          /* made on the first kernel */
  vk_vpp_pipeline *vpp;             /* made on the first VPP batch (vk_vpp.c) */
  pthread_mutex_t pipelines_lock;   /* guards both */
  pthread_mutex_t recordings_lock;  /* guards kernels' recordings (vk_replay.c) */
  vk_replay_counts replay_counts;
};

struct npu_hal_buffer {
  npu_hal_device *device;
  VkBuffer buffer;
  uint64_t serial;      /* unique in the process (a handle may be reused) */
  vk_heap *heap;
  vk_allocation memory; /* the range it is bound to (heap NULL: imported memory) */
  VkDeviceMemory imported; /* memory of its own, imported (host pointer, fd) */
  VkDeviceSize base;    /* where byte 0 is in `buffer` (imports start at aligned pages) */
  npu_fd_map fd_map;    /* imported from an fd: its mapping (mapping NULL: not) */
  int dma_buf_fd;       /* imported as a dma-buf: a duplicate of its fd (-1: not) */
  size_t fd_offset;     /* either import's offset in its fd */
  VkDeviceSize size;
  void *mapped;        /* host address when the memory is host-visible, else NULL */
  bool counted;        /* in the device's bytes_in_use */
};

/* Where a reference's byte is in its VkBuffer. */
static inline VkDeviceSize vk_offset(npu_hal_mem_ref ref)
{
  return ref.buffer->base + ref.offset;
}

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
/* A buffer with a VkBuffer of `bytes` (whole words) and no memory yet, for
 * memory of `handle_types` (0: the device's own). */
npu_status vk_buffer_shell(npu_hal_device *device, VkDeviceSize bytes,
                           VkExternalMemoryHandleTypeFlags handle_types, npu_hal_buffer **buffer);

/* Host pointers and fds imported, fds exported again (vk_import.c). */
npu_status vk_buffer_import_host(npu_hal_device *device, void *host_ptr, size_t size,
                                 npu_hal_buffer **buffer);
npu_status vk_buffer_import_fd(npu_hal_device *device, int fd, size_t offset, size_t size,
                               npu_hal_buffer **buffer);
npu_status vk_buffer_export_fd(npu_hal_buffer *buffer, int *fd, size_t *offset);
/* Where the device has dma-bufs: their entries, whether buffers export and
 * import them, the device buffers' heap made exportable. */
void vk_dma_buf_init(npu_hal_device *device);

/* Streams (vk_stream.c). Work is recorded into a command buffer of the
 * stream's between vk_stream_begin and vk_stream_queue (or vk_stream_abandon
 * when recording fails), and queued in order after everything before it. */
npu_status vk_stream_begin(npu_hal_stream *stream, VkCommandBuffer *commands);
void vk_stream_abandon(npu_hal_stream *stream, VkCommandBuffer commands);

/* One piece of stream work: an optional host copy (into or out of mapped
 * memory, run by the stream's worker in order), before or after optional
 * commands; then `temporary` (a staging buffer) is destroyed and `done` runs.
 * Commands are the stream's (from vk_stream_begin) unless `finished` is
 * set: then they were recorded elsewhere and ended, and `finished` is
 * called (from whichever thread sees them done, holding a stream lock: it
 * must not take locks) once they have run. */
typedef struct vk_work {
  VkCommandBuffer commands;
  npu_hal_task_fn finished;
  void *finished_data;
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
/* Takes back the work of the stream that has run (calls its `finished`). */
void vk_stream_reclaim(npu_hal_stream *stream);
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

/* The pipeline cache on disk (vk_pipeline_cache.c): a bad or foreign file
 * is ignored with a warning; only vkCreatePipelineCache failing fails. */
npu_status vk_pipeline_cache_open(npu_hal_device *device);
void vk_pipeline_cache_save(npu_hal_device *device);
void vk_pipeline_cache_close(npu_hal_device *device);

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
  VK_SHADER_DEPTHWISE_K3_S1, /* depthwise.comp by window: 3x3, 5x5 or 7x7, stride 1 or 2 */
  VK_SHADER_DEPTHWISE_K3_S2,
  VK_SHADER_DEPTHWISE_K5_S1,
  VK_SHADER_DEPTHWISE_K5_S2,
  VK_SHADER_DEPTHWISE_K7_S1,
  VK_SHADER_DEPTHWISE_K7_S2,
  VK_SHADER_MATMUL_TILED,    /* the products and convolutions tiled in shared memory (GPUs) */
  VK_SHADER_CONV2D_TILED,
  VK_SHADER_COUNT
} vk_shader;

#define VK_MAX_BINDINGS 6
#define VK_PUSH_CONSTANT_BYTES 128

/* Makes the pipelines of the `count` shaders `wanted` that are not made yet
 * (the first call: the layout too); the pipeline cache is saved after. */
npu_status vk_pipelines_ensure(npu_hal_device *device, const vk_shader *wanted, uint32_t count);
void vk_pipelines_destroy(npu_hal_device *device);
VkPipeline vk_pipeline(npu_hal_device *device, vk_shader shader);
VkPipelineLayout vk_pipeline_layout(npu_hal_device *device);
/* A compute pipeline of SPIR-V `code` (`bytes` long) with `layout`. */
VkResult vk_compute_pipeline_create(VkDevice device, VkPipelineLayout layout,
                                    VkPipelineCache cache, const uint32_t *code, size_t bytes,
                                    VkPipeline *pipeline);
/* The layout of a dispatch's descriptor set: storage buffers 0..VK_MAX_BINDINGS-1. */
VkDescriptorSetLayout vk_descriptor_set_layout(npu_hal_device *device);

/* The VPP's pipeline (vk_vpp.c), destroyed with the device. */
void vk_vpp_destroy(npu_hal_device *device);
/* How often batches needed a new job table or descriptor pool (tests). */
typedef struct vk_vpp_counts {
  uint64_t batches, tables_made, pools_made;
} vk_vpp_counts;
void vk_vpp_counts_of(npu_hal_device *device, vk_vpp_counts *counts);

#endif
