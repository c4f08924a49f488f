/* A fixed set of workers shared by every stream of a CPU device. Jobs from
 * several streams queue in one list and the workers spread over them, so
 * the device never runs more than its thread budget of workers; each caller
 * works on its own job too instead of sleeping. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cpu_threadpool.h"

typedef struct parallel_job {
  npu_cpu_parallel_fn fn;
  void *ctx;
  size_t n;
  atomic_size_t next_index;
  size_t finished;   /* under pool lock */
  uint32_t helpers;  /* workers inside the job, under pool lock */
  struct parallel_job *next;
} parallel_job;

struct cpu_threadpool {
  pthread_mutex_t lock;
  pthread_cond_t work_available;
  pthread_cond_t job_finished;
  parallel_job *jobs;
  bool stopping;
  uint32_t worker_count;
  pthread_t *workers;
};

/* Claims and runs indices until none are left; returns how many it ran. */
static size_t work_on(parallel_job *job)
{
  size_t ran = 0;
  for (;;) {
    size_t i = atomic_fetch_add_explicit(&job->next_index, 1, memory_order_relaxed);
    if (i >= job->n)
      return ran;
    job->fn(job->ctx, i);
    ran++;
  }
}

static parallel_job *first_open_job(cpu_threadpool *pool)
{
  for (parallel_job *job = pool->jobs; job; job = job->next)
    if (atomic_load_explicit(&job->next_index, memory_order_relaxed) < job->n)
      return job;
  return NULL;
}

static void *worker_main(void *arg)
{
  cpu_threadpool *pool = arg;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    parallel_job *job = NULL;
    while (!pool->stopping && !(job = first_open_job(pool)))
      pthread_cond_wait(&pool->work_available, &pool->lock);
    if (pool->stopping)
      break;
    job->helpers++;
    pthread_mutex_unlock(&pool->lock);
    size_t ran = work_on(job);
    pthread_mutex_lock(&pool->lock);
    job->finished += ran;
    job->helpers--;
    if (job->finished == job->n && job->helpers == 0)
      pthread_cond_broadcast(&pool->job_finished);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

cpu_threadpool *cpu_threadpool_create(uint32_t threads)
{
  cpu_threadpool *pool = calloc(1, sizeof *pool);
  if (!pool)
    return NULL;
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->work_available, NULL);
  pthread_cond_init(&pool->job_finished, NULL);
  uint32_t wanted = threads > 1 ? threads - 1 : 0;
  pool->workers = calloc(wanted ? wanted : 1, sizeof *pool->workers);
  if (!pool->workers) {
    cpu_threadpool_destroy(pool);
    return NULL;
  }
  /* Fewer workers than asked (thread limits) still gives a working pool. */
  while (pool->worker_count < wanted &&
         pthread_create(&pool->workers[pool->worker_count], NULL, worker_main, pool) == 0)
    pool->worker_count++;
  return pool;
}

void cpu_threadpool_destroy(cpu_threadpool *pool)
{
  if (!pool)
    return;
  pthread_mutex_lock(&pool->lock);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->work_available);
  pthread_mutex_unlock(&pool->lock);
  for (uint32_t i = 0; i < pool->worker_count; i++)
    pthread_join(pool->workers[i], NULL);
  free(pool->workers);
  pthread_cond_destroy(&pool->job_finished);
  pthread_cond_destroy(&pool->work_available);
  pthread_mutex_destroy(&pool->lock);
  free(pool);
}

void cpu_threadpool_run(cpu_threadpool *pool, size_t n, npu_cpu_parallel_fn fn, void *ctx)
{
  if (n == 0)
    return;
  if (n == 1 || pool->worker_count == 0) {
    for (size_t i = 0; i < n; i++)
      fn(ctx, i);
    return;
  }
  parallel_job job = {.fn = fn, .ctx = ctx, .n = n};
  atomic_init(&job.next_index, 0);

  pthread_mutex_lock(&pool->lock);
  job.next = pool->jobs;
  pool->jobs = &job;
  pthread_cond_broadcast(&pool->work_available);
  pthread_mutex_unlock(&pool->lock);

  size_t ran = work_on(&job);

  pthread_mutex_lock(&pool->lock);
  job.finished += ran;
  while (job.finished < n || job.helpers > 0)
    pthread_cond_wait(&pool->job_finished, &pool->lock);
  for (parallel_job **link = &pool->jobs; *link; link = &(*link)->next) {
    if (*link == &job) {
      *link = job.next;
      break;
    }
  }
  pthread_mutex_unlock(&pool->lock);
}
