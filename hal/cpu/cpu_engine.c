/* The CPU device's compute engine: one thread runs every compute job of the
 * device (model runs from all streams, VPP work, weight packing) and its
 * OpenMP team, sized by the thread budget, runs their parallel parts,
 * oneDNN's included. One team in the process is what keeps OpenMP's
 * workers spinning, hot, between two kernels: as soon as there are more
 * OpenMP threads than cores (a team per stream thread, or a second pool of
 * our own beside oneDNN's), libgomp stops spinning and every kernel pays
 * for futex sleeps and wake-ups. Jobs queue first in, first out; a caller
 * sleeps until its own job is done. A job may call the engine again: from
 * the engine's thread a call runs at once. */
#include <omp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cpu_engine.h"

typedef struct engine_job {
  struct engine_job *next;
  npu_cpu_job_fn fn;
  void *ctx;
  bool done; /* under the engine's lock */
} engine_job;

struct cpu_engine {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t queued;
  pthread_cond_t finished;
  engine_job *head, *tail;
  uint32_t threads;
  bool stopping;
};

/* The engine whose thread this is, if any. */
static _Thread_local cpu_engine *current_engine;

static void *engine_main(void *arg)
{
  cpu_engine *engine = arg;
  current_engine = engine;
  /* oneDNN's primitives and our kernels size their teams from this. */
  omp_set_num_threads((int)engine->threads);
  pthread_mutex_lock(&engine->lock);
  for (;;) {
    while (!engine->stopping && !engine->head)
      pthread_cond_wait(&engine->queued, &engine->lock);
    engine_job *job = engine->head;
    if (!job)
      break;
    engine->head = job->next;
    if (!engine->head)
      engine->tail = NULL;
    pthread_mutex_unlock(&engine->lock);
    job->fn(job->ctx);
    pthread_mutex_lock(&engine->lock);
    job->done = true;
    pthread_cond_broadcast(&engine->finished);
  }
  pthread_mutex_unlock(&engine->lock);
  return NULL;
}

cpu_engine *cpu_engine_create(uint32_t threads)
{
  cpu_engine *engine = calloc(1, sizeof *engine);
  if (!engine)
    return NULL;
  engine->threads = threads ? threads : 1;
  pthread_mutex_init(&engine->lock, NULL);
  pthread_cond_init(&engine->queued, NULL);
  pthread_cond_init(&engine->finished, NULL);
  if (pthread_create(&engine->thread, NULL, engine_main, engine) != 0) {
    pthread_cond_destroy(&engine->finished);
    pthread_cond_destroy(&engine->queued);
    pthread_mutex_destroy(&engine->lock);
    free(engine);
    return NULL;
  }
  return engine;
}

void cpu_engine_destroy(cpu_engine *engine)
{
  if (!engine)
    return;
  pthread_mutex_lock(&engine->lock);
  engine->stopping = true;
  pthread_cond_signal(&engine->queued);
  pthread_mutex_unlock(&engine->lock);
  pthread_join(engine->thread, NULL);
  pthread_cond_destroy(&engine->finished);
  pthread_cond_destroy(&engine->queued);
  pthread_mutex_destroy(&engine->lock);
  free(engine);
}

void cpu_engine_call(cpu_engine *engine, npu_cpu_job_fn fn, void *ctx)
{
  if (current_engine == engine) {
    fn(ctx);
    return;
  }
  engine_job job = {.fn = fn, .ctx = ctx};
  pthread_mutex_lock(&engine->lock);
  if (engine->tail)
    engine->tail->next = &job;
  else
    engine->head = &job;
  engine->tail = &job;
  pthread_cond_signal(&engine->queued);
  while (!job.done)
    pthread_cond_wait(&engine->finished, &engine->lock);
  pthread_mutex_unlock(&engine->lock);
}

typedef struct parallel_job {
  size_t n;
  npu_cpu_parallel_fn fn;
  void *ctx;
  int threads;
} parallel_job;

static void run_parallel(void *data)
{
  const parallel_job *job = data;
  if (job->n == 1 || job->threads == 1) {
    for (size_t i = 0; i < job->n; i++)
      job->fn(job->ctx, i);
    return;
  }
  /* Work items differ in cost (image rows, output channel blocks): dealt
   * one at a time. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(job->threads)
  for (size_t i = 0; i < job->n; i++)
    job->fn(job->ctx, i);
}

void cpu_engine_parallel_for(cpu_engine *engine, size_t n, npu_cpu_parallel_fn fn, void *ctx)
{
  if (n == 0)
    return;
  parallel_job job = {n, fn, ctx, (int)(n < engine->threads ? n : engine->threads)};
  cpu_engine_call(engine, run_parallel, &job);
}
