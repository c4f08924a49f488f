/* CPU backend VPP kernels (cpu_vpp.c). */
#ifndef NPU_CPU_VPP_H
#define NPU_CPU_VPP_H

#include "npu_hal_vpp.h"

extern const npu_hal_vpp_ops npu_cpu_vpp_ops;

#endif
