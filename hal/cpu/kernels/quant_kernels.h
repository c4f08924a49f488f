/* What the CPU's quantised kernels share: reading and writing 8-bit
 * elements of either sign, and the scale and zero point of an operator's
 * parameter inputs (read at run time: they may be computed by the graph). */
#ifndef NPU_CPU_QUANT_KERNELS_H
#define NPU_CPU_QUANT_KERNELS_H

#include <math.h>

#include "cpu_kernels.h"

extern const cpu_kernel_entry cpu_quantize_kernels[];
extern const cpu_kernel_entry cpu_integer_kernels[];
extern const cpu_kernel_entry cpu_qdnnl_kernels[];
extern const cpu_kernel_entry cpu_qmatmul_dnnl_kernels[];

static inline bool cpu_q_is_8bit(npu_dtype dtype)
{
  return dtype == NPU_DTYPE_INT8 || dtype == NPU_DTYPE_UINT8;
}

/* Element i of an int8, uint8 or int32 tensor. */
static inline int32_t cpu_q_load(const void *data, size_t i, npu_dtype dtype)
{
  switch (dtype) {
  case NPU_DTYPE_INT8: return ((const int8_t *)data)[i];
  case NPU_DTYPE_INT32: return ((const int32_t *)data)[i];
  default: return ((const uint8_t *)data)[i];
  }
}

/* v rounded half to even (ONNX's rounding; the default rounding mode),
 * plus `zero`, saturated to the 8-bit type. A NaN (an empty pooling
 * window's 0 / 0, say) has no integer: it reads as 0, the zero point. */
static inline int32_t cpu_q_round(float v, int32_t zero, int32_t lo, int32_t hi)
{
  float r = rintf(v) + (float)zero;
  r = r == r ? r : (float)zero;
  return r < (float)lo ? lo : r > (float)hi ? hi : (int32_t)r;
}

static inline void cpu_q_range(npu_dtype dtype, int32_t *lo, int32_t *hi)
{
  *lo = dtype == NPU_DTYPE_INT8 ? -128 : 0;
  *hi = dtype == NPU_DTYPE_INT8 ? 127 : 255;
}

static inline void cpu_q_store(void *data, size_t i, npu_dtype dtype, int32_t q)
{
  if (dtype == NPU_DTYPE_INT8)
    ((int8_t *)data)[i] = (int8_t)q;
  else
    ((uint8_t *)data)[i] = (uint8_t)q;
}

/* Value `index` of an optional zero-point input (0 when left out). */
static inline int32_t cpu_q_zero(const npu_hal_kernel *k, void *const *in, uint32_t input,
                                 size_t index)
{
  return input < k->input_count && in[input] && input < 8 && k->inputs[input].dtype
             ? cpu_q_load(in[input], index, k->inputs[input].dtype)
             : 0;
}

#endif
