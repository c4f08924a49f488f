/* The CPU device's compute engine: one thread runs every compute job of the
 * device (model runs from all streams, VPP work, weight packing) and its
 * OpenMP team, sized by the thread budget, runs their parallel parts,
 * oneDNN's included. Jobs queue first in, first out, and take turns a step
 * at a time (a job of several steps goes back to the end of the queue after
 * each); a caller sleeps until its own job is done. A job may call the
 * engine again: from the engine's thread a call runs at once.
 *
 * Spinning. Between two kernels libgomp keeps its idle threads spinning, so
 * the next kernel starts without a futex wake-up: MobileNetV2 runs twice as
 * fast so on 2 cores. It spins only while it manages no more OpenMP threads
 * than there are cores, which one team per process gives (a team per
 * calling thread, or a pool of our own beside oneDNN's, would not). But
 * when other work wants the same cores, say a second pipeline, a spinning
 * thread burns the time slice its partner needs and runs get 10 to 30
 * times slower. So after each step of a model run, at most every
 * CONTENTION_WINDOW_NS, the engine reads how many threads the machine has
 * runnable; while that is more than its CPUs (CROWDED_SAMPLES times in a
 * row) it parks an idle OpenMP team of its own (the sleeper thread) as
 * large as the CPUs this process may use, which puts libgomp over its
 * limit: idle threads
 * then sleep at once, as they would with OMP_WAIT_POLICY=passive. Spinning
 * comes back when no sample has shown contention for CONTENTION_HOLD_NS.
 * (The reading is machine-wide: a process pinned to some CPUs beside other
 * work pinned to the same ones may go unnoticed.)
 *
 * Denormals. The engine's thread, and with it the OpenMP team it starts
 * (threads inherit the floating-point environment), flushes denormal
 * results to zero and reads denormal operands as zero: arithmetic on them
 * takes microcode assists a hundred times slower than on normal numbers,
 * and one tensor of them (a masked attention's probabilities) slows every
 * kernel that reads it. Values under FLT_MIN (1.2e-38) count for nothing
 * in inference; TensorFlow's CPU kernels flush them too. The caller's
 * threads keep their own settings. */
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "cpu_engine.h"

typedef struct engine_job {
  struct engine_job *next;
  npu_cpu_step_fn step;
  void *ctx;
  bool watched; /* its steps sample contention (see watch_contention) */
  bool done;    /* under the engine's lock */
} engine_job;

struct cpu_engine {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t queued;
  pthread_cond_t finished;
  engine_job *head, *tail;
  uint32_t threads;
  bool stopping;
  /* Contention, read and acted on by the engine's thread only. */
  uint32_t online_cpus;           /* of the machine: what /proc/loadavg counts against */
  uint32_t allowed_cpus;          /* of this process (affinity): libgomp's spinning limit */
  uint64_t sampled_at_ns;
  uint32_t crowded_samples;       /* in a row, with more threads runnable than cores */
  uint64_t contended_until_ns;
  pthread_t sleeper;
  bool sleeper_running;
  bool sleeper_stop;              /* under lock */
  pthread_cond_t sleeper_wake;
};

/* Queues `job` last; under the lock. */
static void append(cpu_engine *engine, engine_job *job)
{
  job->next = NULL;
  if (engine->tail)
    engine->tail->next = job;
  else
    engine->head = job;
  engine->tail = job;
}

#define CONTENTION_WINDOW_NS 50000000ull
#define CONTENTION_HOLD_NS 1000000000ull
/* Contention that lasts 150 ms or more: on a quiet 2-core VM a machine's
 * passing threads (kernel workers, a monitoring tool) showed up in two
 * samples in a row about once a second, and each time stopped the spinning
 * for a second (EfficientNet-B0 ran 10-30% slower at the median); another
 * process's spinning team is there in every sample. */
#define CROWDED_SAMPLES 4

static uint64_t monotonic_ns(void)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* Threads runnable system-wide now (the "4/180" field of /proc/loadavg);
 * 0 when unknown. */
static uint32_t runnable_threads(void)
{
  char text[128];
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0)
    return 0;
  text[length] = '\0';
  double averages[3];
  unsigned running = 0, total = 0;
  if (sscanf(text, "%lf %lf %lf %u/%u", &averages[0], &averages[1], &averages[2], &running,
             &total) != 5)
    return 0;
  return running;
}

/* Owns the idle team that keeps libgomp from spinning, until told to stop;
 * libgomp frees the team as the thread exits. */
static void *sleeper_main(void *arg)
{
  cpu_engine *engine = arg;
  volatile uint32_t members = 0; /* a region with no body may be compiled away */
#pragma omp parallel num_threads((int)engine->allowed_cpus)
  {
#pragma omp atomic
    members++;
  }
  pthread_mutex_lock(&engine->lock);
  while (!engine->sleeper_stop)
    pthread_cond_wait(&engine->sleeper_wake, &engine->lock);
  pthread_mutex_unlock(&engine->lock);
  return NULL;
}

static void set_spinning(cpu_engine *engine, bool spin)
{
  if (spin != engine->sleeper_running)
    return;
  if (!spin) {
    engine->sleeper_stop = false;
    engine->sleeper_running = pthread_create(&engine->sleeper, NULL, sleeper_main, engine) == 0;
    return;
  }
  pthread_mutex_lock(&engine->lock);
  engine->sleeper_stop = true;
  pthread_cond_signal(&engine->sleeper_wake);
  pthread_mutex_unlock(&engine->lock);
  pthread_join(engine->sleeper, NULL);
  engine->sleeper_running = false;
}

static void watch_contention(cpu_engine *engine)
{
  uint64_t now = monotonic_ns();
  if (engine->threads < 2 || now - engine->sampled_at_ns < CONTENTION_WINDOW_NS)
    return;
  engine->sampled_at_ns = now;
  engine->crowded_samples =
      runnable_threads() > engine->online_cpus ? engine->crowded_samples + 1 : 0;
  if (engine->crowded_samples >= CROWDED_SAMPLES)
    engine->contended_until_ns = now + CONTENTION_HOLD_NS;
  set_spinning(engine, now >= engine->contended_until_ns);
}

/* Flush-to-zero and denormals-are-zero on this thread (see the top). */
static void flush_denormals(void)
{
#if defined(__SSE__)
  _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ (bit 15), DAZ (bit 6) */
#endif
}

/* The engine whose thread this is, if any. */
static _Thread_local cpu_engine *current_engine;

static void *engine_main(void *arg)
{
  cpu_engine *engine = arg;
  current_engine = engine;
  flush_denormals(); /* before the first parallel region starts the team */
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
    bool more = job->step(job->ctx);
    if (job->watched)
      watch_contention(engine);
    pthread_mutex_lock(&engine->lock);
    if (more) {
      append(engine, job);
      continue;
    }
    job->done = true;
    pthread_cond_broadcast(&engine->finished);
  }
  pthread_mutex_unlock(&engine->lock);
  set_spinning(engine, true);
  return NULL;
}

cpu_engine *cpu_engine_create(uint32_t threads)
{
  cpu_engine *engine = calloc(1, sizeof *engine);
  if (!engine)
    return NULL;
  engine->threads = threads ? threads : 1;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  engine->online_cpus = online > 0 ? (uint32_t)online : 1;
  cpu_set_t allowed;
  engine->allowed_cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0
                             ? (uint32_t)CPU_COUNT(&allowed)
                             : engine->online_cpus;
  pthread_mutex_init(&engine->lock, NULL);
  pthread_cond_init(&engine->queued, NULL);
  pthread_cond_init(&engine->finished, NULL);
  pthread_cond_init(&engine->sleeper_wake, NULL);
  if (pthread_create(&engine->thread, NULL, engine_main, engine) != 0) {
    pthread_cond_destroy(&engine->sleeper_wake);
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
  pthread_cond_destroy(&engine->sleeper_wake);
  pthread_cond_destroy(&engine->finished);
  pthread_cond_destroy(&engine->queued);
  pthread_mutex_destroy(&engine->lock);
  free(engine);
}

static void queue_and_wait(cpu_engine *engine, npu_cpu_step_fn step, void *ctx, bool watched)
{
  if (current_engine == engine) {
    while (step(ctx))
      ;
    return;
  }
  engine_job job = {.step = step, .ctx = ctx, .watched = watched};
  pthread_mutex_lock(&engine->lock);
  append(engine, &job);
  pthread_cond_signal(&engine->queued);
  while (!job.done)
    pthread_cond_wait(&engine->finished, &engine->lock);
  pthread_mutex_unlock(&engine->lock);
}

/* Only jobs of several steps (model runs) sample contention. Between two
 * one-off jobs such as weight packing, their caller plans on while the
 * engine samples and its team still spins: that would count as other work. */
void cpu_engine_call_steps(cpu_engine *engine, npu_cpu_step_fn step, void *ctx)
{
  queue_and_wait(engine, step, ctx, true);
}

typedef struct single_step {
  npu_cpu_job_fn fn;
  void *ctx;
} single_step;

static bool run_single_step(void *data)
{
  const single_step *job = data;
  job->fn(job->ctx);
  return false;
}

void cpu_engine_call(cpu_engine *engine, npu_cpu_job_fn fn, void *ctx)
{
  single_step job = {fn, ctx};
  queue_and_wait(engine, run_single_step, &job, false);
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
  /* Guided: each thread first takes long runs of neighbouring items, so it
   * streams through memory in one sequence (items dealt one at a time, in
   * turn, made EfficientNet's in-place channel scale 2.6 times slower on 2
   * threads), and the shorter runs at the end even out items of different
   * cost (image rows, output channel blocks). */
#pragma omp parallel for schedule(guided) num_threads(job->threads)
  for (size_t i = 0; i < job->n; i++)
    job->fn(job->ctx, i);
}

void cpu_engine_parallel_for(cpu_engine *engine, size_t n, npu_cpu_parallel_fn fn, void *ctx)
{
  if (n == 0)
    return;
  /* The whole team even for fewer items than threads: a smaller team makes
   * libgomp end the threads it no longer needs, and the next kernel would
   * start them again. */
  parallel_job job = {n, fn, ctx, (int)engine->threads};
  cpu_engine_call(engine, run_parallel, &job);
}
