/* What the Vulkan kernel files share: a kernel is a few compute dispatches
 * (a Concat one per input, most operators one), each binding some of its
 * launch's tensors and carrying its push constants, worked out once per
 * plan. vk_kernels.c plans the elementwise (BatchNormalization too),
 * convolution and pooling operators and records them; vk_kernels_data.c
 * the data movement (reshaping copies, Transpose, Slice, Concat, Split,
 * Resize); vk_kernels_math.c the reductions, Softmax, matrix products (1x1
 * convolutions among them) and ConvTranspose. A plan_*
 * function fills the kernel, or says why the backend does not run the op. */
#ifndef NPU_VK_KERNELS_H
#define NPU_VK_KERNELS_H

#include <string.h>

#include "vk_internal.h"

typedef struct vk_binding {
  bool present;   /* false: an optional tensor left out (bound to a harmless buffer) */
  bool output;
  uint8_t index;  /* into the launch's inputs or outputs */
} vk_binding;

/* Push constant words 0-4: each binding's element offset, set per launch. */
#define OFFSET_WORDS VK_MAX_BINDINGS
/* Axes a strided shader walks (binary, copy): more are merged or refused. */
#define VK_MAX_WALKED_AXES 6
#define VK_MAX_DISPATCHES 16

typedef struct vk_dispatch {
  vk_shader shader;
  uint32_t binding_count;
  vk_binding sources[VK_MAX_BINDINGS];
  uint32_t push[VK_PUSH_CONSTANT_BYTES / 4];
  uint64_t invocations;  /* 1-D shaders: one per output element (or row) */
  uint32_t local_size;   /* their workgroup size */
  uint32_t groups[3];    /* 2-D/3-D shaders: the workgroups (groups[0] 0: 1-D) */
} vk_dispatch;

typedef struct vk_recording vk_recording;

struct npu_hal_kernel {
  uint64_t serial;            /* unique in the process: which plan a recording is of */
  vk_recording *recording;    /* of the launches this kernel starts (vk_replay.c) */
  uint32_t dispatch_count;
  vk_dispatch dispatches[VK_MAX_DISPATCHES];
};

static inline uint64_t elements_of(const npu_hal_tensor_desc *t)
{
  uint64_t count = 1;
  for (uint32_t d = 0; d < t->rank; d++)
    count *= (uint64_t)t->dims[d];
  return count;
}

static inline bool present(const npu_hal_tensor_desc *t)
{
  return t->dtype != NPU_DTYPE_UNDEFINED;
}

static inline void bind(vk_dispatch *d, bool output, uint32_t index, bool is_present)
{
  d->sources[d->binding_count++] = (vk_binding){is_present, output, (uint8_t)index};
}

static inline void put_float(vk_dispatch *d, uint32_t word, float value)
{
  memcpy(&d->push[word], &value, sizeof value);
}

/* The kernel's next dispatch (zeroed), NULL when it has them all. */
vk_dispatch *vk_kernel_add(npu_hal_kernel *k);

/* Row-major strides of `t`'s elements. */
void vk_strides(const npu_hal_tensor_desc *t, int64_t *strides);

/* Merges the axes of a box walked by `count` operands at their strides
 * (strides[o][d]): axes of extent 1 go, and an axis goes into the next
 * where every operand steps over it as one run. Returns the axes left. */
uint32_t vk_merge_axes(uint32_t rank, int64_t *dims, int64_t (*strides)[NPU_MAX_RANK],
                       uint32_t count);

/* A copy.comp dispatch: the box `dims` read from input `input` at
 * src_base + c . src_strides into output `output` at dst_base + c . dst_strides. */
const char *vk_plan_copy(npu_hal_kernel *k, uint32_t input, uint32_t output, uint32_t rank,
                         const int64_t *dims, const int64_t *src_strides, int64_t src_base,
                         const int64_t *dst_strides, int64_t dst_base);

/* conv2d.comp's and matmul.comp's fused activations (activation.glsl):
 * from word ACTIVATION_WORD after the offsets, the flags (bit 0: bias or C,
 * set by the caller; bit 1: the Add's input is one value per output column;
 * bits 8-15: the activation count), the kinds (8 bits each), then alpha and
 * beta of each. */
#define ACTIVATION_WORD 16
#define VK_MAX_ACTIVATIONS 3
_Static_assert(OFFSET_WORDS + ACTIVATION_WORD + 2 + 2 * VK_MAX_ACTIVATIONS <=
                   VK_PUSH_CONSTANT_BYTES / 4,
               "the activation words fit the push constants");

/* The fused Add's input, where an activation is one. */
typedef struct vk_addend {
  bool present;
  bool per_column; /* a bias along the output's last axis, not the output's shape */
  uint32_t input;  /* among the launch's inputs: after the op's own */
} vk_addend;

/* Writes the op's fused activations into `d` (ORing the flags' word),
 * *addend the Add's input; per_column_addend: the shader reads an Add of
 * one value per column (matmul.comp). Says why not, or NULL. */
const char *vk_plan_activations(const npu_hal_op *op, vk_dispatch *d, bool per_column_addend,
                                vk_addend *addend);

/* A 1x1 convolution (stride 1, no pads, one group) as the device's matmul
 * shader's product per image, into `d` whose activation words the
 * convolution's planning wrote. */
const char *vk_plan_pointwise_conv(npu_hal_device *device, const npu_hal_op *op, vk_dispatch *d,
                                   const vk_addend *addend);

/* The operators vk_kernels_data.c and vk_kernels_math.c plan, each table
 * ending with a NULL type. */
typedef const char *(*vk_kernel_plan)(npu_hal_device *device, const npu_hal_op *op,
                                      npu_hal_kernel *k);
typedef struct vk_plan_entry {
  const char *type;
  vk_kernel_plan plan;
} vk_plan_entry;
extern const vk_plan_entry vk_data_plans[];
extern const vk_plan_entry vk_math_plans[];

/* Queues the launches' dispatches on `stream`: recorded once, replayed on
 * later runs of the same kernels (vk_replay.c); `done` runs after them. */
npu_status vk_replay_run(npu_hal_device *device, npu_hal_stream *stream,
                         const npu_hal_launch *launches, size_t count, npu_hal_task_fn done,
                         void *done_data);
/* Drops the kernel's reference to its recording. */
void vk_recording_release(vk_recording *recording);

#endif
