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
 * when other work wants the same cores, say a second pipeline or a
 * software decoder, a spinning thread burns the time slice its partner
 * needs and runs get 10 to 30 times slower. So after each step of a model
 * run, at most every CONTENTION_WINDOW_NS, the engine measures the CPU time
 * the machine spent on anything but its own team over that window (the
 * machine's busy time from /proc/stat less the team threads' CPU clocks);
 * while that leaves the team fewer cores than it has threads (twice in a
 * row) it parks an idle OpenMP team of its own (the sleeper thread) as
 * large as the CPUs this process may use, which puts libgomp over its
 * limit: idle threads then sleep at once, as they would with
 * OMP_WAIT_POLICY=passive. Spinning comes back when no sample has shown
 * contention for CONTENTION_HOLD_NS. Time, not a count of runnable threads,
 * tells a busy neighbour from the short wake-ups of the pipeline's own
 * threads (a frame pushed, a batch completed), which would otherwise stop
 * the spinning several times a second for nothing. (The reading is
 * machine-wide: a process pinned to some CPUs beside other work pinned to
 * the same ones may go unnoticed.) */
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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
  uint32_t online_cpus;           /* of the machine: what /proc/stat counts */
  uint32_t allowed_cpus;          /* of this process (affinity): libgomp's spinning limit */
  clockid_t *team_clocks;         /* CPU clocks of the OpenMP team's threads, `threads` long */
  bool team_known;
  uint64_t sampled_at_ns;
  uint64_t machine_busy_ns;       /* at the last sample */
  uint64_t team_busy_ns;          /* at the last sample */
  uint32_t crowded_samples;       /* in a row, with other work taking the team's cores */
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

#define CONTENTION_WINDOW_NS 100000000ull /* long enough for /proc/stat's 10 ms ticks */
#define CONTENTION_HOLD_NS 1000000000ull

static uint64_t monotonic_ns(void)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* CPU time the whole machine has spent busy since boot (the first line of
 * /proc/stat less idle, I/O wait and time stolen by a hypervisor), ns;
 * 0 when unknown. */
static uint64_t machine_busy_ns(void)
{
  char text[256];
  int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0)
    return 0;
  text[length] = '\0';
  unsigned long long user, nice, system, idle, iowait, irq, softirq;
  if (sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle,
             &iowait, &irq, &softirq) != 7)
    return 0;
  long ticks_per_s = sysconf(_SC_CLK_TCK);
  if (ticks_per_s <= 0)
    return 0;
  return (user + nice + system + irq + softirq) * (1000000000ull / (uint64_t)ticks_per_s);
}

/* On the engine's thread: records the CPU clock of every thread of its
 * OpenMP team (libgomp keeps the same threads for a team of that size). */
static void learn_team(cpu_engine *engine)
{
  volatile bool known = true; /* written by the team: no optimisation of the region */
#pragma omp parallel num_threads((int)engine->threads)
  {
    int member = omp_get_thread_num();
    if (member < (int)engine->threads &&
        pthread_getcpuclockid(pthread_self(), &engine->team_clocks[member]) != 0)
      known = false;
  }
  engine->team_known = known && omp_get_max_threads() == (int)engine->threads;
}

/* CPU time the engine's team has used, ns; 0 when unknown, and once after
 * the team is learnt again (a team thread gone: its successor's clock
 * starts afresh). */
static uint64_t team_busy_ns(cpu_engine *engine)
{
  if (!engine->team_known) {
    learn_team(engine);
    return 0;
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < engine->threads; i++) {
    struct timespec used;
    if (clock_gettime(engine->team_clocks[i], &used) != 0) {
      engine->team_known = false;
      return 0;
    }
    total += (uint64_t)used.tv_sec * 1000000000ull + (uint64_t)used.tv_nsec;
  }
  return total;
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
  uint64_t machine = machine_busy_ns(), team = team_busy_ns(engine);
  bool measured = machine && team && engine->machine_busy_ns && engine->team_busy_ns;
  /* Other work over the window, in CPUs: what it leaves the team must
   * still hold all the team's threads (half a core of slack, as the
   * machine's clock counts in ticks). */
  double others = measured ? ((double)machine - (double)engine->machine_busy_ns -
                              ((double)team - (double)engine->team_busy_ns)) /
                                 (double)(now - engine->sampled_at_ns)
                           : 0;
  engine->sampled_at_ns = now;
  engine->machine_busy_ns = machine;
  engine->team_busy_ns = team;
  /* One window over is often a passing burst: two in a row. */
  bool crowded = others > (double)engine->online_cpus - (double)engine->threads + 0.5;
  engine->crowded_samples = crowded ? engine->crowded_samples + 1 : 0;
  if (engine->crowded_samples >= 2)
    engine->contended_until_ns = now + CONTENTION_HOLD_NS;
  set_spinning(engine, now >= engine->contended_until_ns);
}

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
  engine->team_clocks = calloc(engine->threads, sizeof *engine->team_clocks);
  if (!engine->team_clocks) {
    free(engine);
    return NULL;
  }
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
    free(engine->team_clocks);
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
  free(engine->team_clocks);
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
  /* The whole team even for fewer items than threads: a smaller team makes
   * libgomp end the threads it no longer needs, and the next kernel would
   * start them again. */
  parallel_job job = {n, fn, ctx, (int)engine->threads};
  cpu_engine_call(engine, run_parallel, &job);
}
