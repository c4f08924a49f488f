/* CPU backend worker pool behind npu_cpu_parallel_for. */
#ifndef NPU_CPU_THREADPOOL_H
#define NPU_CPU_THREADPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_internal.h"

typedef struct cpu_threadpool cpu_threadpool;

/* A pool with `threads - 1` workers: the calling thread is the last one. */
cpu_threadpool *cpu_threadpool_create(uint32_t threads);
void cpu_threadpool_destroy(cpu_threadpool *pool);
void cpu_threadpool_run(cpu_threadpool *pool, size_t n, npu_cpu_parallel_fn fn, void *ctx);

#endif
