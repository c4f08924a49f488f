/* gst-npu CPU backend: what its kernel files (VPP, graph kernels) share. */
#ifndef NPU_CPU_INTERNAL_H
#define NPU_CPU_INTERNAL_H

#include "npu_hal.h"

extern const npu_hal_backend npu_cpu_backend;

/* The CPU address of a device buffer (all CPU-backend memory is host memory). */
void *npu_cpu_buffer_ptr(npu_hal_buffer *buffer);

/* Resolves a copy/kernel endpoint to a CPU address. */
void *npu_cpu_mem_ref_ptr(npu_hal_mem_ref ref);

/* The device's thread budget: how many threads its kernels may use in all,
 * shared by every stream (NPU_NUM_THREADS, default: online cores). */
uint32_t npu_cpu_thread_budget(npu_hal_device *device);

/* Runs fn(ctx, i) for i in [0, n) on the device's worker pool, the calling
 * thread included; returns when all are done. Safe to call from several
 * streams at once: together they never use more than the thread budget. */
typedef void (*npu_cpu_parallel_fn)(void *ctx, size_t index);
void npu_cpu_parallel_for(npu_hal_device *device, size_t n, npu_cpu_parallel_fn fn, void *ctx);

#endif
