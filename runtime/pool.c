/* Caching device-memory pool. Requests round up to size classes (four per
 * power of two, so at most 25% slack) and idle buffers wait in a free list
 * per class; a steady workload is served from the lists after warm-up. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "npu_internal.h"

#define MIN_CLASS_SHIFT 12 /* 4 KiB: the backend's page granularity */
#define CLASSES_PER_DOUBLING 4
#define CLASS_COUNT ((64 - MIN_CLASS_SHIFT) * CLASSES_PER_DOUBLING + 1)
#define DEFAULT_MAX_CACHED_BYTES ((size_t)256 << 20)

typedef struct cached_buffer {
  npu_buffer *buffer;
  struct cached_buffer *next;
} cached_buffer;

struct npu_mem_pool {
  atomic_uint refcount; /* the owner + every buffer handed out */
  npu_device *device;
  size_t max_cached_bytes;
  pthread_mutex_t lock;
  bool destroyed;
  cached_buffer *free_lists[CLASS_COUNT];
  cached_buffer *spare_nodes;
  npu_mem_pool_stats stats;
};

/* Class index and capacity for a request of `size` bytes. */
static size_t size_class(size_t size, size_t *capacity)
{
  size_t min = (size_t)1 << MIN_CLASS_SHIFT;
  if (size <= min) {
    *capacity = min;
    return 0;
  }
  unsigned shift = 63 - (unsigned)__builtin_clzll((unsigned long long)(size - 1));
  /* size-1 has its top bit at `shift`; split [2^shift, 2^(shift+1)) into quarters. */
  size_t quarter = (size_t)1 << (shift - 2);
  size_t step = ((size - 1) >> (shift - 2)) & 3; /* 0..3 within the doubling */
  *capacity = ((size_t)1 << shift) + (step + 1) * quarter;
  return (shift - MIN_CLASS_SHIFT) * CLASSES_PER_DOUBLING + step + 1;
}

static void pool_unref(npu_mem_pool *pool)
{
  if (atomic_fetch_sub(&pool->refcount, 1) != 1)
    return;
  while (pool->spare_nodes) {
    cached_buffer *node = pool->spare_nodes;
    pool->spare_nodes = node->next;
    free(node);
  }
  pthread_mutex_destroy(&pool->lock);
  npu_device_release(pool->device);
  free(pool);
}

NPU_API npu_status npu_mem_pool_create(npu_device *device, const npu_mem_pool_config *config,
                                       npu_mem_pool **out)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (!out)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_mem_pool_create: pool is NULL");
  npu_mem_pool *pool = calloc(1, sizeof *pool);
  if (!pool)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory creating a pool");
  atomic_init(&pool->refcount, 1);
  npu_device_retain(device);
  pool->device = device;
  pool->max_cached_bytes = config && config->max_cached_bytes ? config->max_cached_bytes
                                                              : DEFAULT_MAX_CACHED_BYTES;
  pthread_mutex_init(&pool->lock, NULL);
  npu_handle_register(pool, NPU_HANDLE_POOL);
  *out = pool;
  return NPU_OK;
}

/* Takes every cached buffer out of the lists (under the lock); the caller
 * frees them outside it. */
static cached_buffer *take_cache(npu_mem_pool *pool)
{
  cached_buffer *all = NULL;
  for (size_t c = 0; c < CLASS_COUNT; c++) {
    while (pool->free_lists[c]) {
      cached_buffer *node = pool->free_lists[c];
      pool->free_lists[c] = node->next;
      node->next = all;
      all = node;
      pool->stats.bytes_cached -= npu_buffer_capacity(node->buffer);
      pool->stats.frees++;
    }
  }
  return all;
}

static void free_cache(npu_mem_pool *pool, cached_buffer *nodes)
{
  while (nodes) {
    cached_buffer *node = nodes;
    nodes = node->next;
    npu_buffer_destroy_pooled(node->buffer);
    pthread_mutex_lock(&pool->lock);
    node->next = pool->spare_nodes;
    pool->spare_nodes = node;
    pthread_mutex_unlock(&pool->lock);
  }
}

NPU_API npu_status npu_mem_pool_destroy(npu_mem_pool *pool)
{
  npu_status status = npu_handle_unregister(pool, NPU_HANDLE_POOL, "pool");
  if (status != NPU_OK)
    return status;
  pthread_mutex_lock(&pool->lock);
  pool->destroyed = true;
  cached_buffer *cache = take_cache(pool);
  pthread_mutex_unlock(&pool->lock);
  free_cache(pool, cache);
  pool_unref(pool);
  return NPU_OK;
}

NPU_API npu_status npu_mem_pool_trim(npu_mem_pool *pool)
{
  npu_status status = npu_handle_check(pool, NPU_HANDLE_POOL, "pool");
  if (status != NPU_OK)
    return status;
  pthread_mutex_lock(&pool->lock);
  cached_buffer *cache = take_cache(pool);
  pthread_mutex_unlock(&pool->lock);
  free_cache(pool, cache);
  return NPU_OK;
}

NPU_API npu_status npu_mem_pool_alloc(npu_mem_pool *pool, size_t size, npu_buffer **out)
{
  npu_status status = npu_handle_check(pool, NPU_HANDLE_POOL, "pool");
  if (status != NPU_OK)
    return status;
  if (!out || size == 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_mem_pool_alloc: buffer is NULL or size is 0");
  size_t capacity;
  size_t cls = size_class(size, &capacity);
  npu_buffer *buffer = NULL;

  pthread_mutex_lock(&pool->lock);
  cached_buffer *node = pool->free_lists[cls];
  if (node) {
    pool->free_lists[cls] = node->next;
    buffer = node->buffer;
    node->next = pool->spare_nodes;
    pool->spare_nodes = node;
    pool->stats.bytes_cached -= capacity;
    pool->stats.hits++;
  }
  pthread_mutex_unlock(&pool->lock);

  if (buffer) {
    npu_buffer_revive_pooled(buffer, size);
  } else {
    status = npu_buffer_create_pooled(pool->device, pool, capacity, &buffer);
    if (status != NPU_OK && npu_mem_pool_trim(pool) == NPU_OK) /* free idle memory, retry */
      status = npu_buffer_create_pooled(pool->device, pool, capacity, &buffer);
    if (status != NPU_OK)
      return status;
    npu_buffer_revive_pooled(buffer, size);
  }

  atomic_fetch_add(&pool->refcount, 1);
  pthread_mutex_lock(&pool->lock);
  if (!node)
    pool->stats.allocations++;
  pool->stats.requests++;
  pool->stats.bytes_live += capacity;
  if (pool->stats.bytes_live > pool->stats.bytes_live_peak)
    pool->stats.bytes_live_peak = pool->stats.bytes_live;
  pthread_mutex_unlock(&pool->lock);
  *out = buffer;
  return NPU_OK;
}

void npu_mem_pool_reclaim(npu_mem_pool *pool, npu_buffer *buffer)
{
  size_t capacity = npu_buffer_capacity(buffer);
  size_t dummy;
  size_t cls = size_class(capacity, &dummy);
  bool keep = false;

  pthread_mutex_lock(&pool->lock);
  pool->stats.bytes_live -= capacity;
  if (!pool->destroyed && pool->stats.bytes_cached + capacity <= pool->max_cached_bytes) {
    cached_buffer *node = pool->spare_nodes;
    if (node)
      pool->spare_nodes = node->next;
    else
      node = malloc(sizeof *node);
    if (node) {
      node->buffer = buffer;
      node->next = pool->free_lists[cls];
      pool->free_lists[cls] = node;
      pool->stats.bytes_cached += capacity;
      keep = true;
    }
  }
  if (!keep)
    pool->stats.frees++;
  pthread_mutex_unlock(&pool->lock);

  if (!keep)
    npu_buffer_destroy_pooled(buffer);
  pool_unref(pool);
}

NPU_API npu_status npu_mem_pool_get_stats(npu_mem_pool *pool, npu_mem_pool_stats *stats)
{
  npu_status status = npu_handle_check(pool, NPU_HANDLE_POOL, "pool");
  if (status != NPU_OK)
    return status;
  if (!stats)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_mem_pool_get_stats: stats is NULL");
  pthread_mutex_lock(&pool->lock);
  *stats = pool->stats;
  pthread_mutex_unlock(&pool->lock);
  return NPU_OK;
}
