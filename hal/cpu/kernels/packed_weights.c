/* Packed weights shared between kernels, found by the values they pack (a
 * 128-bit hash of the bytes, and their size) and the layouts they are read
 * in and packed into. The values, not their address: a context may fold
 * constants into buffers of its own, and an address can be reused once
 * they are freed. The values themselves are not kept (that would double
 * the weights in memory), so two different tensors are told apart by the
 * hash alone: a non-cryptographic one, whose every input bit reaches every
 * output bit, so that structured differences (signs, say) do not cancel.
 * Each packing also remembers the addresses it was acquired from with
 * values that stay put while it is held, so that the same weights planned
 * again are known by their address instead of hashed again. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packed_weights.h"

/* An address the values are held at, and by how many references. */
typedef struct lasting_source {
  const void *address;
  unsigned references;
} lasting_source;

struct cpu_packed_weights {
  cpu_packed_weights *next;
  cpu_weights_id id;
  lasting_source *sources;
  size_t source_count;
  void *layout;
  size_t layout_bytes;
  cpu_layout_equal_fn layout_equal;
  void *data;
  size_t packed_bytes;
  unsigned references; /* under registry_lock */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static cpu_packed_weights *registry;

/* MurmurHash3's finaliser: a bijection in which every input bit flips each
 * output bit with probability about one half. */
static uint64_t avalanche(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

static uint64_t rotate(uint64_t x, int bits)
{
  return x << bits | x >> (64 - bits);
}

/* Two 64-bit lanes over the bytes as 8-byte words (the tail zero-padded),
 * each word avalanched before it is mixed in, then the length. */
static cpu_weights_id hash_bytes(const void *data, size_t bytes)
{
  uint64_t low = 0x9e3779b97f4a7c15ull, high = 0xc2b2ae3d27d4eb4full;
  const unsigned char *p = data;
  for (size_t i = 0; i < bytes; i += 8) {
    uint64_t word = 0;
    memcpy(&word, p + i, bytes - i < 8 ? bytes - i : 8);
    low = rotate(low ^ avalanche(word), 27) * 5 + 0x52dce729;
    high = rotate(high ^ avalanche(word ^ 0x87c37b91114253d5ull), 31) * 5 + 0x38495ab5;
  }
  low = avalanche(low ^ bytes);
  high = avalanche(high + low);
  return (cpu_weights_id){low, high, bytes};
}

static bool same_values(const cpu_weights_id *a, const cpu_weights_id *b)
{
  return a->low == b->low && a->high == b->high && a->bytes == b->bytes;
}

static cpu_packed_weights *find(const cpu_weights_id *id, const void *layout,
                                size_t layout_bytes, cpu_layout_equal_fn layout_equal)
{
  for (cpu_packed_weights *w = registry; w; w = w->next)
    if (same_values(&w->id, id) && w->layout_bytes == layout_bytes &&
        w->layout_equal == layout_equal && layout_equal(w->layout, layout))
      return w;
  return NULL;
}

cpu_weights_id cpu_packed_weights_identify(const void *source, size_t source_bytes)
{
  pthread_mutex_lock(&registry_lock);
  for (const cpu_packed_weights *w = registry; w; w = w->next)
    for (size_t i = 0; i < w->source_count; i++)
      if (w->sources[i].address == source && w->id.bytes == source_bytes) {
        cpu_weights_id id = w->id;
        pthread_mutex_unlock(&registry_lock);
        return id;
      }
  pthread_mutex_unlock(&registry_lock);
  return hash_bytes(source, source_bytes);
}

/* One more reference held from `lasting` (NULL: none to remember). */
static bool hold_source(cpu_packed_weights *w, const void *lasting)
{
  if (!lasting)
    return true;
  for (size_t i = 0; i < w->source_count; i++)
    if (w->sources[i].address == lasting) {
      w->sources[i].references++;
      return true;
    }
  lasting_source *grown = realloc(w->sources, (w->source_count + 1) * sizeof *grown);
  if (!grown)
    return false;
  w->sources = grown;
  w->sources[w->source_count++] = (lasting_source){lasting, 1};
  return true;
}

static void drop_source(cpu_packed_weights *w, const void *lasting)
{
  for (size_t i = 0; lasting && i < w->source_count; i++)
    if (w->sources[i].address == lasting && --w->sources[i].references == 0) {
      w->sources[i] = w->sources[--w->source_count];
      return;
    }
}

static void destroy(cpu_packed_weights *w)
{
  free(w->data);
  free(w->layout);
  free(w->sources);
  free(w);
}

npu_status cpu_packed_weights_acquire(const cpu_weights_id *id, const void *lasting,
                                      const void *layout, size_t layout_bytes,
                                      cpu_layout_equal_fn layout_equal, size_t packed_bytes,
                                      cpu_pack_fn pack, void *pack_ctx, cpu_packed_weights **out)
{
  npu_status status = NPU_OK;
  /* Packing under the lock: two contexts planned at once pack once. */
  pthread_mutex_lock(&registry_lock);
  cpu_packed_weights *w = find(id, layout, layout_bytes, layout_equal);
  if (w) {
    if (!hold_source(w, lasting)) {
      pthread_mutex_unlock(&registry_lock);
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory sharing packed weights");
    }
    w->references++;
    goto done;
  }
  w = calloc(1, sizeof *w);
  if (w) {
    w->layout = malloc(layout_bytes);
    w->data = aligned_alloc(64, (packed_bytes + 63) / 64 * 64);
  }
  if (!w || !w->layout || !w->data || !hold_source(w, lasting)) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory packing %zu bytes of weights",
                           packed_bytes);
    goto fail;
  }
  if (!pack(pack_ctx, w->data)) {
    status = npu_set_error(NPU_ERROR_NOT_SUPPORTED, "the weights cannot be packed");
    goto fail;
  }
  memcpy(w->layout, layout, layout_bytes);
  w->next = registry;
  w->id = *id;
  w->layout_bytes = layout_bytes;
  w->layout_equal = layout_equal;
  w->packed_bytes = packed_bytes;
  w->references = 1;
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

size_t cpu_packed_weights_layouts(const cpu_weights_id *id, size_t layout_bytes, void *layouts,
                                  size_t max)
{
  size_t count = 0;
  pthread_mutex_lock(&registry_lock);
  for (const cpu_packed_weights *w = registry; w; w = w->next)
    if (same_values(&w->id, id) && w->layout_bytes == layout_bytes) {
      if (count < max)
        memcpy((char *)layouts + count * layout_bytes, w->layout, layout_bytes);
      count++;
    }
  pthread_mutex_unlock(&registry_lock);
  return count;
}

void cpu_packed_weights_totals(size_t *packings, size_t *bytes)
{
  *packings = *bytes = 0;
  pthread_mutex_lock(&registry_lock);
  for (const cpu_packed_weights *w = registry; w; w = w->next) {
    ++*packings;
    *bytes += w->packed_bytes;
  }
  pthread_mutex_unlock(&registry_lock);
}

void *cpu_packed_weights_data(const cpu_packed_weights *weights)
{
  return weights->data;
}

void cpu_packed_weights_release(cpu_packed_weights *weights, const void *lasting)
{
  if (!weights)
    return;
  pthread_mutex_lock(&registry_lock);
  drop_source(weights, lasting);
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
