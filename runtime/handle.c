/* Registry of live handles, so that a destroyed, foreign or wrong-type
 * handle is reported as NPU_ERROR_INVALID_HANDLE instead of being
 * dereferenced. An open-addressing hash set keyed by address. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "npu_internal.h"

typedef struct handle_slot {
  const void *handle; /* NULL: empty; TOMBSTONE: deleted */
  npu_handle_kind kind;
} handle_slot;

static const char tombstone_marker;
#define TOMBSTONE ((const void *)&tombstone_marker)

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static handle_slot *slots;
static size_t capacity; /* power of two */
static size_t used;     /* live + tombstones */

static size_t hash_pointer(const void *p)
{
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static handle_slot *find_slot(const void *handle)
{
  if (!capacity)
    return NULL;
  for (size_t i = hash_pointer(handle) & (capacity - 1);; i = (i + 1) & (capacity - 1)) {
    if (slots[i].handle == handle)
      return &slots[i];
    if (!slots[i].handle)
      return NULL;
  }
}

static void insert_slot(handle_slot *table, size_t table_capacity, const void *handle,
                        npu_handle_kind kind)
{
  size_t i = hash_pointer(handle) & (table_capacity - 1);
  while (table[i].handle && table[i].handle != TOMBSTONE)
    i = (i + 1) & (table_capacity - 1);
  table[i].handle = handle;
  table[i].kind = kind;
}

/* Keeps the load (live + tombstones) under 1/2; rehashing drops tombstones. */
static int grow_if_needed(void)
{
  if ((used + 1) * 2 <= capacity)
    return 0;
  size_t new_capacity = capacity ? capacity * 2 : 256;
  handle_slot *table = calloc(new_capacity, sizeof *table);
  if (!table)
    return -1;
  size_t live = 0;
  for (size_t i = 0; i < capacity; i++) {
    if (slots[i].handle && slots[i].handle != TOMBSTONE) {
      insert_slot(table, new_capacity, slots[i].handle, slots[i].kind);
      live++;
    }
  }
  free(slots);
  slots = table;
  capacity = new_capacity;
  used = live;
  return 0;
}

void npu_handle_register(const void *handle, npu_handle_kind kind)
{
  pthread_mutex_lock(&registry_lock);
  /* On a failed grow the table still has room (load < 1/2 + 1): insert anyway. */
  if (grow_if_needed() == 0 || used < capacity - 1) {
    insert_slot(slots, capacity, handle, kind);
    used++;
  }
  pthread_mutex_unlock(&registry_lock);
}

static npu_status invalid_handle(const void *handle, const char *what)
{
  if (!handle)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
  return npu_set_error(NPU_ERROR_INVALID_HANDLE,
                       "%s %p is not a live handle of that type (destroyed, freed twice, "
                       "or of another type)", what, handle);
}

npu_status npu_handle_check(const void *handle, npu_handle_kind kind, const char *what)
{
  pthread_mutex_lock(&registry_lock);
  handle_slot *slot = handle ? find_slot(handle) : NULL;
  int ok = slot && slot->kind == kind;
  pthread_mutex_unlock(&registry_lock);
  return ok ? NPU_OK : invalid_handle(handle, what);
}

npu_status npu_handle_unregister(const void *handle, npu_handle_kind kind, const char *what)
{
  pthread_mutex_lock(&registry_lock);
  handle_slot *slot = handle ? find_slot(handle) : NULL;
  int ok = slot && slot->kind == kind;
  if (ok)
    slot->handle = TOMBSTONE;
  pthread_mutex_unlock(&registry_lock);
  return ok ? NPU_OK : invalid_handle(handle, what);
}
