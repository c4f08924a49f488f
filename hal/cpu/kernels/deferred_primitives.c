/* Deferred primitives (deferred_primitives.h). The list is the planning
 * thread's own, so that contexts planned at once on different threads do
 * not wait for each other's primitives. */
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <oneapi/dnnl/dnnl_debug.h>

#include "deferred_primitives.h"

typedef struct deferred {
  dnnl_primitive_desc_t pd; /* a copy: the kernel's own is gone by then */
  dnnl_primitive_t *slot;
  int omp_threads; /* oneDNN sizes a primitive for the creating thread's count */
} deferred;

typedef struct deferred_list {
  bool deferring;
  deferred *items;
  size_t count, capacity;
} deferred_list;

static _Thread_local deferred_list pending;

void cpu_deferred_begin(void)
{
  pending.deferring = true;
}

bool cpu_deferred_add(const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot)
{
  if (!pending.deferring)
    return false;
  if (pending.count == pending.capacity) {
    size_t capacity = pending.capacity ? 2 * pending.capacity : 64;
    deferred *grown = realloc(pending.items, capacity * sizeof *grown);
    if (!grown)
      return false;
    pending.items = grown;
    pending.capacity = capacity;
  }
  deferred *d = &pending.items[pending.count];
  if (dnnl_primitive_desc_clone(&d->pd, pd) != dnnl_success)
    return false;
  d->slot = slot;
  d->omp_threads = omp_get_max_threads();
  pending.count++;
  return true;
}

void cpu_deferred_drop(dnnl_primitive_t *slot)
{
  for (size_t i = 0; i < pending.count; i++)
    if (pending.items[i].slot == slot) {
      dnnl_primitive_desc_destroy(pending.items[i].pd);
      pending.items[i] = pending.items[--pending.count];
      return;
    }
}

typedef struct compile_run {
  deferred *items;
  size_t count;
  atomic_size_t next;
  atomic_int failed; /* a dnnl_status_t */
} compile_run;

static void *compile_items(void *data)
{
  compile_run *run = data;
  for (size_t i; (i = atomic_fetch_add(&run->next, 1)) < run->count;) {
    deferred *d = &run->items[i];
    omp_set_num_threads(d->omp_threads);
    dnnl_status_t s = dnnl_primitive_create(d->slot, d->pd);
    if (s != dnnl_success) {
      *d->slot = NULL;
      int none = dnnl_success;
      atomic_compare_exchange_strong(&run->failed, &none, (int)s);
    }
  }
  return NULL;
}

npu_status cpu_deferred_compile(unsigned threads)
{
  compile_run run = {pending.items, pending.count, 0, dnnl_success};
  enum { MAX_HELPERS = 63 };
  pthread_t helpers[MAX_HELPERS];
  unsigned started = 0;
  int saved = omp_get_max_threads();
  for (; started + 1 < threads && started < MAX_HELPERS && started + 1 < run.count; started++)
    if (pthread_create(&helpers[started], NULL, compile_items, &run) != 0)
      break; /* fewer helpers: this thread compiles the rest */
  compile_items(&run);
  for (unsigned h = 0; h < started; h++)
    pthread_join(helpers[h], NULL);
  omp_set_num_threads(saved);
  for (size_t i = 0; i < run.count; i++)
    dnnl_primitive_desc_destroy(run.items[i].pd);
  free(pending.items);
  pending = (deferred_list){0};
  if (run.failed != dnnl_success)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: cannot create a primitive (%s)",
                         dnnl_status2str((dnnl_status_t)run.failed));
  return NPU_OK;
}
