/* Convolutions that compile nothing for a shape: loops of ours, built
 * ahead of time, over weights an earlier plan packed for oneDNN. A re-plan
 * for another image size or batch runs them at once, instead of waiting for
 * oneDNN to describe and JIT-compile a primitive per layer (most of what a
 * re-plan cost), while that primitive is made in the background. */
#ifndef NPU_CPU_DIRECT_CONV_H
#define NPU_CPU_DIRECT_CONV_H

#include <oneapi/dnnl/dnnl.h>

#include "cpu_kernels.h"

typedef struct cpu_direct_conv cpu_direct_conv;

/* A float32 1-D or 2-D convolution `op`, or where `transposed` its
 * transpose (ConvTranspose) (its tensors in any of their
 * layouts, fused activations and residual Adds included) on `weights` laid
 * out as `weights_md` (oneDNN's (g, o, i, k...) blocked formats with output
 * channels, or for a depthwise convolution groups, innermost in blocks of
 * 16 or more). NPU_ERROR_NOT_SUPPORTED (no message) for any other. The
 * weights stay the caller's and must outlive it. */
npu_status cpu_direct_conv_create(const npu_hal_op *op, bool transposed,
                                  const dnnl_memory_desc_t *weights_md, const float *weights,
                                  cpu_direct_conv **conv);
/* A float32 MatMul or Gemm `op` (A plain and not transposed, of rank 2 or
 * more: its rows one product) by weights laid out as `weights_md` ((K, N),
 * output columns innermost in blocks of 16 or more), Gemm's C (input `bias_input`, or -1) constant values of N.
 * NPU_ERROR_NOT_SUPPORTED (no message) for any other. */
npu_status cpu_direct_conv_create_matmul(const npu_hal_op *op, int32_t bias_input,
                                         const dnnl_memory_desc_t *weights_md,
                                         const float *weights, cpu_direct_conv **conv);
/* Runs it on the device's threads: in and out as a kernel's launch has them. */
void cpu_direct_conv_run(npu_hal_device *device, const cpu_direct_conv *conv, void *const *in,
                         void *const *out);
void cpu_direct_conv_free(cpu_direct_conv *conv);
/* How many times direct convolutions have run in this process (for tests:
 * whether a re-plan's kernels run these loops or oneDNN's primitives). */
uint64_t cpu_direct_conv_launches(void);

#endif
