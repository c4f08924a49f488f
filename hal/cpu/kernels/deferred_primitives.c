/* Deferred primitives (deferred_primitives.h). Helper threads start
 * compiling as soon as a primitive is deferred, while the plan goes on
 * describing the next kernels; the compile step then joins them. The
 * state is the planning thread's own, so that contexts planned at once on
 * different threads do not wait for each other's primitives. The
 * background compiler is one queue for the process, served by one thread
 * at the lowest priority, and by whoever waits for it. */
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <oneapi/dnnl/dnnl_debug.h>

#include "compile_profile.h"
#include "deferred_primitives.h"

enum { MAX_HELPERS = 63 };

typedef enum { QUEUED, COMPILING, DONE } job_state;

typedef struct job {
  dnnl_primitive_desc_t pd; /* a copy: the kernel's own is gone by then */
  dnnl_primitive_t *slot;
  atomic_bool *ready; /* background jobs: set once *slot is */
  int omp_threads;    /* oneDNN sizes a primitive for the creating thread's count */
  job_state state;
} job;

typedef struct deferral {
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a job queued or done, the compile step began, a plan ended */
  job *jobs;
  size_t count, capacity, next; /* jobs[next..count) are queued (or dropped) */
  size_t compiling;             /* jobs being compiled now */
  bool closing;                 /* the compile step: helpers leave once none is queued */
  dnnl_status_t failed;
  pthread_t helpers[MAX_HELPERS];
  unsigned helper_count;
} deferral;

static _Thread_local deferral *pending;

/* The background compiler; its thread starts with its first job. It waits
 * while plans compile (plans_compiling, under its lock): their primitives
 * come first. */
static deferral background = {.lock = PTHREAD_MUTEX_INITIALIZER,
                              .changed = PTHREAD_COND_INITIALIZER,
                              .failed = dnnl_success};
static unsigned plans_compiling;

static bool job_waiting(const deferral *d)
{
  return d->next < d->count && (d != &background || plans_compiling == 0);
}

/* Takes the next queued job (under the lock); false when none is left and
 * the compile step has begun (the background compiler's never begins). */
static bool take_job(deferral *d, size_t *index)
{
  for (;;) {
    while (!job_waiting(d) && !d->closing)
      pthread_cond_wait(&d->changed, &d->lock);
    while (d->next < d->count && d->jobs[d->next].state != QUEUED)
      d->next++; /* dropped */
    if (d->next < d->count) {
      *index = d->next++;
      d->jobs[*index].state = COMPILING;
      d->compiling++;
      return true;
    }
    if (d->closing)
      return false;
    if (d == &background && !d->compiling) {
      d->count = d->next = 0; /* every job done: the queue starts again */
      pthread_cond_broadcast(&d->changed);
    }
  }
}

/* Compiles job `index` (taken, under the lock; unlocked meanwhile). */
static void compile_job(deferral *d, size_t index)
{
  job j = d->jobs[index]; /* jobs may move while unlocked (the array grows) */
  pthread_mutex_unlock(&d->lock);
  omp_set_num_threads(j.omp_threads);
  dnnl_primitive_t primitive = NULL;
  dnnl_status_t s = cpu_primitive_create(&primitive, j.pd);
  dnnl_primitive_desc_destroy(j.pd);
  pthread_mutex_lock(&d->lock);
  *j.slot = s == dnnl_success ? primitive : NULL;
  if (s == dnnl_success && j.ready)
    atomic_store_explicit(j.ready, true, memory_order_release);
  if (s != dnnl_success && d->failed == dnnl_success)
    d->failed = s;
  d->jobs[index].state = DONE;
  d->compiling--;
  pthread_cond_broadcast(&d->changed);
}

static void *compile_jobs(void *data)
{
  deferral *d = data;
  pthread_mutex_lock(&d->lock);
  size_t i;
  while (take_job(d, &i))
    compile_job(d, i);
  pthread_mutex_unlock(&d->lock);
  return NULL;
}

static void *compile_in_background(void *unused)
{
  (void)unused;
  /* The lowest priority: a re-plan's kernels run another way meanwhile. */
  setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
  return compile_jobs(&background);
}

void cpu_deferred_begin(unsigned threads)
{
  if (pending)
    return;
  deferral *d = calloc(1, sizeof *d);
  if (!d)
    return; /* primitives are then made at once */
  pthread_mutex_init(&d->lock, NULL);
  pthread_cond_init(&d->changed, NULL);
  d->failed = dnnl_success;
  while (d->helper_count + 1 < threads && d->helper_count < MAX_HELPERS &&
         pthread_create(&d->helpers[d->helper_count], NULL, compile_jobs, d) == 0)
    d->helper_count++;
  pthread_mutex_lock(&background.lock);
  plans_compiling++;
  pthread_mutex_unlock(&background.lock);
  pending = d;
}

/* Queues a copy of `pd` for `slot`; false where it cannot. */
static bool queue_job(deferral *d, const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot,
                      atomic_bool *ready)
{
  dnnl_primitive_desc_t copy;
  if (dnnl_primitive_desc_clone(&copy, pd) != dnnl_success)
    return false;
  pthread_mutex_lock(&d->lock);
  if (d == &background && !d->helper_count) {
    pthread_attr_t detached;
    pthread_attr_init(&detached);
    pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&d->helpers[0], &detached, compile_in_background, NULL) == 0)
      d->helper_count = 1;
    pthread_attr_destroy(&detached);
  }
  if (d->count == d->capacity) {
    size_t capacity = d->capacity ? 2 * d->capacity : 64;
    job *grown = realloc(d->jobs, capacity * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&d->lock);
      dnnl_primitive_desc_destroy(copy);
      return false;
    }
    d->jobs = grown;
    d->capacity = capacity;
  }
  d->jobs[d->count++] = (job){copy, slot, ready, omp_get_max_threads(), QUEUED};
  pthread_cond_broadcast(&d->changed);
  pthread_mutex_unlock(&d->lock);
  return true;
}

bool cpu_deferred_add(const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot)
{
  return pending && queue_job(pending, pd, slot, NULL);
}

bool cpu_deferred_add_background(const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot,
                                 atomic_bool *ready)
{
  return queue_job(&background, pd, slot, ready);
}

static void drop_from(deferral *d, dnnl_primitive_t *slot)
{
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < d->count; i++) {
    if (d->jobs[i].slot != slot)
      continue;
    /* One being compiled is waited for: its primitive then goes with the kernel. */
    while (d->jobs[i].state == COMPILING)
      pthread_cond_wait(&d->changed, &d->lock);
    if (d->jobs[i].state == QUEUED) {
      dnnl_primitive_desc_destroy(d->jobs[i].pd);
      d->jobs[i].state = DONE;
    }
    d->jobs[i].slot = NULL;
  }
  pthread_mutex_unlock(&d->lock);
}

void cpu_deferred_drop(dnnl_primitive_t *slot)
{
  if (pending)
    drop_from(pending, slot);
  drop_from(&background, slot);
}

void cpu_deferred_wait_background(void)
{
  int saved = omp_get_max_threads();
  pthread_mutex_lock(&background.lock);
  /* This thread helps, at its own priority, with what is queued. */
  while (plans_compiling == 0 && background.next < background.count) {
    size_t i = background.next++;
    if (background.jobs[i].state != QUEUED)
      continue;
    background.jobs[i].state = COMPILING;
    background.compiling++;
    compile_job(&background, i);
  }
  while (background.compiling || job_waiting(&background))
    pthread_cond_wait(&background.changed, &background.lock);
  pthread_mutex_unlock(&background.lock);
  omp_set_num_threads(saved);
}

npu_status cpu_deferred_compile(void)
{
  deferral *d = pending;
  if (!d)
    return NPU_OK;
  int saved = omp_get_max_threads();
  pthread_mutex_lock(&d->lock);
  d->closing = true;
  pthread_cond_broadcast(&d->changed);
  pthread_mutex_unlock(&d->lock);
  compile_jobs(d); /* this thread helps with what is still queued */
  for (unsigned h = 0; h < d->helper_count; h++)
    pthread_join(d->helpers[h], NULL);
  omp_set_num_threads(saved);
  pending = NULL;
  pthread_mutex_lock(&background.lock);
  plans_compiling--;
  pthread_cond_broadcast(&background.changed);
  pthread_mutex_unlock(&background.lock);
  dnnl_status_t failed = d->failed;
  pthread_cond_destroy(&d->changed);
  pthread_mutex_destroy(&d->lock);
  free(d->jobs);
  free(d);
  if (failed != dnnl_success)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: cannot create a primitive (%s)",
                         dnnl_status2str(failed));
  return NPU_OK;
}
