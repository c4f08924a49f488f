/* Deferred primitives (deferred_primitives.h). Helper threads start
 * compiling once a plan has deferred a few primitives, while the plan goes
 * on describing the next kernels; the compile step then joins them. The
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

enum { MAX_HELPERS = 63, HELPERS_FROM_JOBS = 8 };

typedef enum { QUEUED, COMPILING, DONE } job_state;

typedef struct job {
  dnnl_primitive_desc_t pd; /* a copy: the kernel's own is gone by then; NULL: a task */
  dnnl_primitive_t *slot;
  cpu_background_task task; /* where pd is NULL */
  const void *key;          /* what cpu_deferred_drop finds it by: slot, or the task's */
  atomic_bool *ready;       /* background jobs: set once *slot is (a task: once it made it) */
  int omp_threads;    /* oneDNN sizes a primitive for the creating thread's count */
  job_state state;
} job;

typedef struct deferral {
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a job queued or done, the compile step began, a plan ended */
  job *jobs;
  size_t count, capacity;
  size_t queued;                /* jobs QUEUED among jobs[0..count) */
  size_t compiling;             /* jobs being compiled now */
  bool closing;                 /* the compile step: helpers leave once none is queued */
  dnnl_status_t failed;
  pthread_t helpers[MAX_HELPERS];
  unsigned helper_count, helpers_wanted; /* (started once HELPERS_FROM_JOBS are queued) */
  uint64_t plan;                         /* cpu_deferred_plan */
} deferral;

static _Thread_local deferral *pending;
static atomic_uint_fast64_t plans_begun;

/* The background compiler; its thread starts with its first job. It waits
 * while plans compile (plans_compiling, under its lock): their primitives
 * come first. */
static deferral background = {.lock = PTHREAD_MUTEX_INITIALIZER,
                              .changed = PTHREAD_COND_INITIALIZER,
                              .failed = dnnl_success};
static unsigned plans_compiling;

static bool job_waiting(const deferral *d)
{
  return d->queued && (d != &background || plans_compiling == 0);
}

/* Marks the newest queued job compiling (under the lock); false: none is
 * queued. The newest first: the background compiler's are the kernels of
 * the shapes planned last (those of an older shape are often dropped with
 * it, uncompiled), and a plan's own are all compiled before it ends. */
static bool take_queued(deferral *d, size_t *index)
{
  if (!d->queued)
    return false;
  size_t i = d->count;
  while (d->jobs[--i].state != QUEUED)
    ;
  d->jobs[i].state = COMPILING;
  d->queued--;
  d->compiling++;
  *index = i;
  return true;
}

/* Takes a queued job (under the lock), waiting for one; false when none is
 * left and the compile step has begun (the background compiler's never
 * begins). */
static bool take_job(deferral *d, size_t *index)
{
  for (;;) {
    while (!job_waiting(d) && !d->closing)
      pthread_cond_wait(&d->changed, &d->lock);
    if (take_queued(d, index))
      return true;
    if (d->closing)
      return false;
    if (d == &background && !d->compiling) {
      d->count = 0; /* every job done: the queue starts again */
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
  dnnl_status_t s = dnnl_success;
  if (j.pd) {
    s = cpu_primitive_create(&primitive, j.pd);
    dnnl_primitive_desc_destroy(j.pd);
  } else {
    bool made = j.task.make(j.task.context); /* (its failure is only a slower kernel) */
    j.task.discard(j.task.context);
    if (!made)
      j.ready = NULL;
  }
  pthread_mutex_lock(&d->lock);
  if (j.pd)
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

/* The background compiler's thread, started (under its lock) once it has
 * a job to take: not while a plan queues them, where the new thread, at the
 * lowest priority, taking the lock as it starts could hold up the plan's
 * next job (3 to 4 ms of a 2 ms re-plan while the engine's threads spun). */
static void start_background_thread(void)
{
  if (background.helper_count || !job_waiting(&background))
    return;
  pthread_attr_t detached;
  pthread_attr_init(&detached);
  pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&background.helpers[0], &detached, compile_in_background, NULL) == 0)
    background.helper_count = 1;
  pthread_attr_destroy(&detached);
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
  d->helpers_wanted = threads > MAX_HELPERS ? MAX_HELPERS : threads ? threads - 1 : 0;
  d->plan = atomic_fetch_add(&plans_begun, 1) + 1;
  pthread_mutex_lock(&background.lock);
  plans_compiling++;
  pthread_mutex_unlock(&background.lock);
  pending = d;
}

/* Queues `j` (its pd a copy, freed here where it cannot be queued). */
static bool queue_job(deferral *d, job j)
{
  pthread_mutex_lock(&d->lock);
  /* A plan's helpers start once it has deferred a few jobs: a re-plan that
   * defers none or a handful (its other kernels compile nothing) compiles
   * them itself at its end instead of waiting for threads to start and
   * leave, which took milliseconds while the engine's threads spun after a
   * run. */
  while (d != &background && d->queued + 1 >= HELPERS_FROM_JOBS &&
         d->helper_count < d->helpers_wanted &&
         pthread_create(&d->helpers[d->helper_count], NULL, compile_jobs, d) == 0)
    d->helper_count++;
  if (d->count == d->capacity) {
    size_t capacity = d->capacity ? 2 * d->capacity : 64;
    job *grown = realloc(d->jobs, capacity * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&d->lock);
      if (j.pd)
        dnnl_primitive_desc_destroy(j.pd);
      return false;
    }
    d->jobs = grown;
    d->capacity = capacity;
  }
  j.omp_threads = omp_get_max_threads();
  j.state = QUEUED;
  d->jobs[d->count++] = j;
  d->queued++;
  /* The background compiler is woken only when it may take the job: woken
   * while a plan queues its jobs, at the lowest priority it could be
   * preempted holding this lock, which the plan's next job then waited for
   * (milliseconds while the engine's threads spun after a run). A plan's
   * end wakes it. */
  if (job_waiting(d))
    pthread_cond_broadcast(&d->changed);
  if (d == &background)
    start_background_thread();
  pthread_mutex_unlock(&d->lock);
  return true;
}

/* A job compiling a copy of `pd` into `slot`; false where it cannot. */
static bool queue_primitive(deferral *d, const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot,
                            atomic_bool *ready)
{
  dnnl_primitive_desc_t copy;
  if (dnnl_primitive_desc_clone(&copy, pd) != dnnl_success)
    return false;
  return queue_job(d, (job){.pd = copy, .slot = slot, .key = slot, .ready = ready});
}

uint64_t cpu_deferred_plan(void)
{
  return pending ? pending->plan : 0;
}

bool cpu_deferred_add(const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot)
{
  return pending && queue_primitive(pending, pd, slot, NULL);
}

bool cpu_deferred_add_background(const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot,
                                 atomic_bool *ready)
{
  return queue_primitive(&background, pd, slot, ready);
}

bool cpu_deferred_add_background_task(const cpu_background_task *task, const void *key,
                                      atomic_bool *ready)
{
  return queue_job(&background, (job){.task = *task, .key = key, .ready = ready});
}

static void drop_from(deferral *d, const void *key)
{
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < d->count; i++) {
    if (d->jobs[i].key != key)
      continue;
    /* One being compiled is waited for: its primitive then goes with the kernel. */
    while (d->jobs[i].state == COMPILING)
      pthread_cond_wait(&d->changed, &d->lock);
    if (d->jobs[i].state == QUEUED) {
      if (d->jobs[i].pd)
        dnnl_primitive_desc_destroy(d->jobs[i].pd);
      else
        d->jobs[i].task.discard(d->jobs[i].task.context);
      d->jobs[i].state = DONE;
      d->queued--;
    }
    d->jobs[i].key = NULL;
  }
  pthread_mutex_unlock(&d->lock);
}

void cpu_deferred_drop(const void *key)
{
  if (pending)
    drop_from(pending, key);
  drop_from(&background, key);
}

void cpu_deferred_wait_background(void)
{
  int saved = omp_get_max_threads();
  pthread_mutex_lock(&background.lock);
  /* This thread helps, at its own priority, with what is queued. */
  size_t i;
  while (plans_compiling == 0 && take_queued(&background, &i))
    compile_job(&background, i);
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
  start_background_thread();
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
