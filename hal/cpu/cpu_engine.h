/* The CPU device's compute engine behind npu_cpu_run_on_engine and
 * npu_cpu_parallel_for. */
#ifndef NPU_CPU_ENGINE_H
#define NPU_CPU_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_internal.h"

typedef struct cpu_engine cpu_engine;

/* An engine thread whose parallel regions use `threads` threads, itself included. */
cpu_engine *cpu_engine_create(uint32_t threads);
/* Runs what is queued, then stops the thread. */
void cpu_engine_destroy(cpu_engine *engine);
void cpu_engine_call(cpu_engine *engine, npu_cpu_job_fn fn, void *ctx);
void cpu_engine_call_steps(cpu_engine *engine, npu_cpu_step_fn step, void *ctx);
void cpu_engine_parallel_for(cpu_engine *engine, size_t n, npu_cpu_parallel_fn fn, void *ctx);

#endif
