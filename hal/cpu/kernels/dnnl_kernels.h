/* What the oneDNN kernels share (dnnl_kernels.c for float32, qlinear_dnnl.c
 * for int8): the engine, primitive building blocks and the run function. */
#ifndef NPU_CPU_DNNL_KERNELS_H
#define NPU_CPU_DNNL_KERNELS_H

#include <stdatomic.h>

#include <oneapi/dnnl/dnnl.h>

#include "cpu_kernels.h"
#include "packed_weights.h"

/* A convolution's output computed in channel blocks of `block` (the last
 * one padded) and moved to its channels-last tensor with a fused input of
 * the same shape added (see cpu_unblock_add); in slices, one slice's. */
typedef struct cpu_unblocked_sum {
  uint32_t addend_input; /* the launch input added; 0: none (that is the data input) */
  int64_t images, channels, positions, block;
  bool plain; /* output and addend plain (NCHW...); else channels-last */
} cpu_unblocked_sum;

/* The graph's tensors are plain NCHW; where oneDNN's fast kernels want a
 * blocked layout, the input is reordered into the workspace and the output
 * reordered back from it (the post-ops still run inside the kernel). */
typedef struct cpu_dnnl_params {
  dnnl_primitive_t primitive;
  dnnl_memory_t src, weights, bias, dst, scratchpad; /* as the primitive sees them */
  dnnl_primitive_t src_reorder, dst_reorder;         /* NULL: plain layout used as is */
  dnnl_memory_t plain_src, plain_dst;
  size_t src_offset, dst_offset;                     /* of the blocked copies in the workspace */
  cpu_packed_weights *packed_weights; /* in oneDNN's layout; NULL: input 1 read at run time */
  const void *packed_from;            /* the op's values it was acquired from, or NULL */
  uint32_t bias_input;   /* the launch input holding the bias */
  /* Binary post-ops (fused residual Add): the launch input each reads. */
  dnnl_memory_t addends[NPU_HAL_MAX_ACTIVATIONS];
  int addend_args[NPU_HAL_MAX_ACTIVATIONS];      /* DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | SRC_1 */
  uint32_t addend_inputs[NPU_HAL_MAX_ACTIVATIONS];
  uint32_t addend_count;
  /* > 1: the primitive computes batch / slices images and runs once per
   * slice, the tensors' images being contiguous (it was made for that
   * smaller batch: see build_window). 0 or 1: once, whole. The bytes each
   * slice moves on in the tensors (an addend's 0: a bias, the same for all). */
  uint32_t slices;
  size_t src_slice_bytes, dst_slice_bytes;
  size_t addend_slice_bytes[NPU_HAL_MAX_ACTIVATIONS];
  /* Slices run while `whole`, the same kernel for the whole batch on the
   * same packed weights, has its primitive compiled in the background; it
   * runs instead once `whole_ready` (NULL: none). */
  struct cpu_dnnl_params *whole;
  atomic_bool whole_ready;
  cpu_unblocked_sum unblocked; /* the output's last step, where addend_input is set */
  /* A residual the primitive sums onto its output (a sum post-op): this
   * launch input is copied into the output first; 0: none. Bytes of the
   * primitive's output (one slice's where it runs in slices). */
  uint32_t summed_input;
  size_t summed_bytes;
  /* A convolution summed per input channel (see wants_channel_parts): this
   * part reads the input `channel_offset` bytes on (its channel), and
   * `next_channel` (NULL: none) sums the next channel's share onto the output. */
  size_t channel_offset;
  struct cpu_dnnl_params *next_channel;
  /* A re-plan's convolution that runs loops of ours on an earlier plan's
   * packed weights (direct_conv.h) until `whole`, made in the background,
   * is ready; NULL: none. */
  struct cpu_direct_conv *direct;
  void *own_workspace; /* a `whole` made in the background: its workspace (not the arena's) */
} cpu_dnnl_params;

/* out = blocked moved to channels-last + addend (channels-last), in parallel. */
void cpu_unblock_add(npu_hal_device *device, const cpu_unblocked_sum *shape, const float *blocked,
                     const float *addend, float *out);

/* out = addend (`bytes`), in parallel; nothing where they are one buffer. */
void cpu_copy_addend(npu_hal_device *device, const void *addend, void *out, size_t bytes);

/* Geometry of a convolution or its transpose, in oneDNN's terms. */
typedef struct cpu_dnnl_window {
  int spatial;                 /* 1 to 3 */
  int64_t group;
  dnnl_dims_t src, dst, weights, bias;
  dnnl_dims_t strides, dilates, pad_begin, pad_end;
} cpu_dnnl_window;

/* oneDNN's type for an 8-bit tensor of either sign. */
static inline dnnl_data_type_t cpu_dnnl_8bit(npu_dtype dtype)
{
  return dtype == NPU_DTYPE_INT8 ? dnnl_s8 : dnnl_u8;
}

/* The CPU engine, created once; NULL where oneDNN has none. */
dnnl_engine_t cpu_dnnl_engine(void);

/* A plain memory descriptor of `rank` dims; `transposed`: the last two axes
 * are stored swapped (Gemm's transA/transB). */
void cpu_dnnl_matrix_md(dnnl_memory_desc_t *md, int rank, const dnnl_dims_t dims, bool transposed,
                        dnnl_data_type_t type);

/* Runs a kernel built on cpu_dnnl_params (src: input 0, dst: output 0,
 * packed weights, bias: input bias_input); frees its params. */
void cpu_dnnl_run(const npu_hal_kernel *k, void *const *in, void *const *out);
void cpu_dnnl_free_params(void *data);

/* Primitive attributes: the scratchpad comes from the launch's workspace,
 * and the op's fused activations run as post-ops. `view` (or NULL) is the
 * destination's shape as the primitive sees it. */
npu_status cpu_dnnl_make_attributes(const npu_hal_op *op, const dnnl_memory_desc_t *view,
                                    cpu_dnnl_params *p, dnnl_primitive_attr_t *attr);

/* Pads, strides and dilations of a window with weights `w` (of any element
 * type); the output shape comes from shape inference. */
npu_status cpu_dnnl_read_window(const npu_hal_op *op, const npu_hal_tensor_desc *w,
                                bool transposed, cpu_dnnl_window *g);

dnnl_status_t cpu_dnnl_describe_window(const cpu_dnnl_window *g, bool transposed,
                                       dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                                       const dnnl_memory_desc_t *weights,
                                       const dnnl_memory_desc_t *bias,
                                       const dnnl_memory_desc_t *dst, dnnl_primitive_attr_t attr,
                                       dnnl_primitive_desc_t *pd);

/* oneDNN's format tag for an activation's planned layout (rank 3 to 5);
 * dnnl_format_tag_undef where it has none. */
dnnl_format_tag_t cpu_dnnl_layout_tag(const npu_hal_tensor_desc *tensor);

/* Whether oneDNN picked a JIT kernel (not its slow reference loops). */
bool cpu_dnnl_fast_implementation(const_dnnl_primitive_desc_t pd);

/* The constant weights `values` (of launch input `input`, laid out as
 * `user_md`, identified by `id`) in the layout the primitive chose: packed
 * once for every kernel with the same values and layouts. `lasting`: the
 * values are the op's own input_values, unchanged while the kernel lives. */
npu_status cpu_dnnl_pack_weights(const npu_hal_op *op, uint32_t input, const void *values,
                                 const cpu_weights_id *id, bool lasting,
                                 dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *user_md,
                                 npu_hal_kernel *k, cpu_dnnl_params *p);

/* The primitive of `pd` and the memories bound to its src, dst and
 * scratchpad when it runs (see dnnl_kernels.c); sets the kernel's workspace. */
dnnl_status_t cpu_dnnl_make_primitive(dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *run_src,
                                      const dnnl_memory_desc_t *src,
                                      const dnnl_memory_desc_t *run_dst,
                                      const dnnl_memory_desc_t *dst, cpu_dnnl_params *p,
                                      npu_hal_kernel *k);

/* The int8 kernels' shared steps (qlinear_dnnl.c, for qlinear_matmul_dnnl.c
 * too; QLinearConv's and QLinearMatMul's inputs: x, its scale and zero
 * point, the weights, theirs, y's, the int32 bias). The kernel's params, and
 * the weights less their zero points as int8 (`weights`, the caller frees;
 * weight i's channel: i / inner % channels); not supported where one does
 * not fit. */
npu_status cpu_qdnnl_start(const npu_hal_op *op, size_t inner, size_t channels, npu_hal_kernel *k,
                           cpu_dnnl_params **params, int8_t **weights);

/* oneDNN's output scales on `attr`, x_scale * w_scale[m] / y_scale for
 * `count` output channels (1: per tensor; more: along the destination's
 * axis 1, the weights' scales repeating when there are fewer), and x's and
 * y's (`y_zero`) zero points; false where oneDNN refuses them. */
bool cpu_qdnnl_set_quantisation(const npu_hal_op *op, size_t count, int32_t y_zero,
                                dnnl_primitive_attr_t attr);

/* The rest of an int8 kernel once
 * oneDNN chose its primitive `pd`: the weights less their zero points
 * (`weights`, of launch input `weights_input`, laid out as
 * `user_weights_md`; the caller's copy) packed as the primitive wants them,
 * the primitive on the tensors (see cpu_dnnl_make_primitive) and the bias
 * (`bias_md`, NULL: none); sets the kernel's run. */
npu_status cpu_qdnnl_complete(const npu_hal_op *op, uint32_t weights_input, const int8_t *weights,
                              const dnnl_memory_desc_t *user_weights_md, dnnl_primitive_desc_t pd,
                              const dnnl_memory_desc_t *run_src, const dnnl_memory_desc_t *src,
                              const dnnl_memory_desc_t *run_dst, const dnnl_memory_desc_t *dst,
                              const dnnl_memory_desc_t *bias_md, npu_hal_kernel *k,
                              cpu_dnnl_params *p);

#endif
