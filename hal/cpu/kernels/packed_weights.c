/* Packed weights shared between kernels, found by the values they pack (a
 * hash of the bytes and their size) and the layout they are packed into.
 * The values, not their address: a context may fold constants into buffers
 * of its own, and an address can be reused once they are freed. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packed_weights.h"

struct cpu_packed_weights {
  cpu_packed_weights *next;
  uint64_t source_hash;
  size_t source_bytes;
  void *layout;
  size_t layout_bytes;
  cpu_layout_equal_fn layout_equal;
  void *data;
  unsigned references; /* under registry_lock */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static cpu_packed_weights *registry;

/* 64-bit FNV-1a over 8-byte words (the tail byte-wise). */
static uint64_t hash_bytes(const void *data, size_t bytes)
{
  const uint64_t prime = 0x100000001b3ull;
  uint64_t hash = 0xcbf29ce484222325ull;
  const unsigned char *p = data;
  size_t words = bytes / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t word;
    memcpy(&word, p + i * 8, 8);
    hash = (hash ^ word) * prime;
  }
  for (size_t i = words * 8; i < bytes; i++)
    hash = (hash ^ p[i]) * prime;
  return hash;
}

static cpu_packed_weights *find(uint64_t hash, size_t source_bytes, const void *layout,
                                size_t layout_bytes, cpu_layout_equal_fn layout_equal)
{
  for (cpu_packed_weights *w = registry; w; w = w->next)
    if (w->source_hash == hash && w->source_bytes == source_bytes &&
        w->layout_bytes == layout_bytes && w->layout_equal == layout_equal &&
        layout_equal(w->layout, layout))
      return w;
  return NULL;
}

static void destroy(cpu_packed_weights *w)
{
  free(w->data);
  free(w->layout);
  free(w);
}

npu_status cpu_packed_weights_acquire(const void *source, size_t source_bytes, const void *layout,
                                      size_t layout_bytes, cpu_layout_equal_fn layout_equal,
                                      size_t packed_bytes, cpu_pack_fn pack, void *pack_ctx,
                                      cpu_packed_weights **out)
{
  uint64_t hash = hash_bytes(source, source_bytes);
  npu_status status = NPU_OK;
  /* Packing under the lock: two contexts planned at once pack once. */
  pthread_mutex_lock(&registry_lock);
  cpu_packed_weights *w = find(hash, source_bytes, layout, layout_bytes, layout_equal);
  if (w) {
    w->references++;
    goto done;
  }
  w = calloc(1, sizeof *w);
  if (w) {
    w->layout = malloc(layout_bytes);
    w->data = aligned_alloc(64, (packed_bytes + 63) / 64 * 64);
  }
  if (!w || !w->layout || !w->data) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory packing %zu bytes of weights",
                           packed_bytes);
    goto fail;
  }
  if (!pack(pack_ctx, w->data)) {
    status = npu_set_error(NPU_ERROR_NOT_SUPPORTED, "the weights cannot be packed");
    goto fail;
  }
  memcpy(w->layout, layout, layout_bytes);
  *w = (cpu_packed_weights){registry, hash, source_bytes, w->layout, layout_bytes, layout_equal,
                            w->data, 1};
  registry = w;
done:
  pthread_mutex_unlock(&registry_lock);
  *out = w;
  return NPU_OK;
fail:
  pthread_mutex_unlock(&registry_lock);
  if (w)
    destroy(w);
  return status;
}

void *cpu_packed_weights_data(const cpu_packed_weights *weights)
{
  return weights->data;
}

void cpu_packed_weights_release(cpu_packed_weights *weights)
{
  if (!weights)
    return;
  pthread_mutex_lock(&registry_lock);
  bool last = --weights->references == 0;
  if (last)
    for (cpu_packed_weights **link = &registry; *link; link = &(*link)->next)
      if (*link == weights) {
        *link = weights->next;
        break;
      }
  pthread_mutex_unlock(&registry_lock);
  if (last)
    destroy(weights);
}
