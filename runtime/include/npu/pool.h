/* gst-npu runtime: caching device-memory pools.
 *
 * A pool keeps released buffers in size classes and hands them out again, so
 * a steady workload stops allocating after warm-up. Buffers from a pool are
 * ordinary npu_buffer handles: releasing the last reference returns the
 * memory to the pool (or frees it once the pool is destroyed or full).
 * All pool calls are thread-safe. */
#ifndef NPU_POOL_H
#define NPU_POOL_H

#include <npu/memory.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npu_mem_pool npu_mem_pool;

typedef struct npu_mem_pool_config {
  size_t max_cached_bytes; /* idle bytes kept for reuse; 0 = 256 MiB default */
} npu_mem_pool_config;

typedef struct npu_mem_pool_stats {
  uint64_t requests;       /* npu_mem_pool_alloc calls that succeeded */
  uint64_t hits;           /* ... served from cached memory */
  uint64_t allocations;    /* new device allocations made by the pool */
  uint64_t frees;          /* device allocations given back by the pool */
  uint64_t bytes_live;     /* capacity of buffers handed out and not yet returned */
  uint64_t bytes_live_peak;
  uint64_t bytes_cached;   /* capacity of idle buffers kept for reuse */
} npu_mem_pool_stats;

/* `config` may be NULL for defaults. */
NPU_API npu_status npu_mem_pool_create(npu_device *device, const npu_mem_pool_config *config,
                                       npu_mem_pool **pool);

/* Frees the cached memory; buffers still out stay valid and are freed when
 * released. */
NPU_API npu_status npu_mem_pool_destroy(npu_mem_pool *pool);

NPU_API npu_status npu_mem_pool_alloc(npu_mem_pool *pool, size_t size, npu_buffer **buffer);

/* Frees all cached (idle) memory now. */
NPU_API npu_status npu_mem_pool_trim(npu_mem_pool *pool);

NPU_API npu_status npu_mem_pool_get_stats(npu_mem_pool *pool, npu_mem_pool_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
