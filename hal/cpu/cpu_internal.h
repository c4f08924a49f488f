/* gst-npu CPU backend: what its kernel files (VPP, graph kernels) share. */
#ifndef NPU_CPU_INTERNAL_H
#define NPU_CPU_INTERNAL_H

#include <stdbool.h>

#include "npu_hal.h"

extern const npu_hal_backend npu_cpu_backend;

/* The CPU address of a device buffer (all CPU-backend memory is host memory). */
void *npu_cpu_buffer_ptr(npu_hal_buffer *buffer);

/* Resolves a copy/kernel endpoint to a CPU address. */
void *npu_cpu_mem_ref_ptr(npu_hal_mem_ref ref);

/* The device's thread budget: how many threads its kernels may use in all,
 * shared by every stream (NPU_NUM_THREADS, default: online cores). */
uint32_t npu_cpu_thread_budget(npu_hal_device *device);

/* Runs fn(ctx) on the device's compute engine (cpu_engine.c) and returns
 * when it is done. All compute of the device goes through it, so that the
 * device uses its thread budget and no more however many streams run at
 * once. */
typedef void (*npu_cpu_job_fn)(void *ctx);
void npu_cpu_run_on_engine(npu_hal_device *device, npu_cpu_job_fn fn, void *ctx);

/* The same for a job of several steps (a model run: a step per launch):
 * step(ctx) runs one and says whether more remain. The engine takes turns
 * between the jobs queued, a step each, so a long model run does not hold
 * back a short job queued behind it. */
typedef bool (*npu_cpu_step_fn)(void *ctx);
void npu_cpu_run_steps_on_engine(npu_hal_device *device, npu_cpu_step_fn step, void *ctx);

/* Runs fn(ctx, i) for i in [0, n) on the compute engine's threads; returns
 * when all are done. Safe to call from any thread and from a job on the
 * engine, not from inside such a loop (an OpenMP worker would wait for the
 * engine, which waits for it). */
typedef void (*npu_cpu_parallel_fn)(void *ctx, size_t index);
void npu_cpu_parallel_for(npu_hal_device *device, size_t n, npu_cpu_parallel_fn fn, void *ctx);

#endif
