/* The CPU backend's compute engine: every index runs exactly once, from
 * one caller, from several streams' threads at once, and while the engine
 * switches OpenMP between spinning and sleeping under contention; jobs of
 * several steps take turns with the others; its threads flush denormals,
 * the caller's do not. */
#include <float.h>
#include <stdatomic.h>

#include "cpu/cpu_internal.h"
#include "npu_internal.h"
#include "npu_test.h"

enum { ITEMS = 10007 };

#if defined(__SSE__)
#define SUPPORTS_FLUSHING_DENORMALS 1
#else
#define SUPPORTS_FLUSHING_DENORMALS 0
#endif

typedef struct counts {
  atomic_int hits[ITEMS];
} counts;

static void count_index(void *ctx, size_t index)
{
  counts *c = ctx;
  atomic_fetch_add(&c->hits[index], 1);
}

static npu_hal_device *cpu_device(npu_device *device)
{
  g_assert_true(npu_device_backend(device) == &npu_cpu_backend);
  return npu_device_hal(device);
}

static void test_each_index_once(void)
{
  npu_device *device = npu_test_open_device();
  counts *c = g_new0(counts, 1);
  for (size_t n = 0; n <= ITEMS; n = n * 2 + 1) {
    for (size_t i = 0; i < ITEMS; i++)
      atomic_store(&c->hits[i], 0);
    npu_cpu_parallel_for(cpu_device(device), n, count_index, c);
    for (size_t i = 0; i < ITEMS; i++)
      g_assert_cmpint(atomic_load(&c->hits[i]), ==, i < n ? 1 : 0);
  }
  g_assert_cmpuint(npu_cpu_thread_budget(cpu_device(device)), >=, 1);
  g_free(c);
  NPU_ASSERT_OK(npu_device_release(device));
}

static npu_device *shared_device;

static gpointer concurrent_caller(gpointer data)
{
  counts *c = data;
  for (int round = 0; round < 50; round++)
    npu_cpu_parallel_for(cpu_device(shared_device), ITEMS, count_index, c);
  return NULL;
}

static void test_concurrent_callers(void)
{
  shared_device = npu_test_open_device();
  enum { CALLERS = 4 };
  counts *c[CALLERS];
  GThread *threads[CALLERS];
  for (int t = 0; t < CALLERS; t++) {
    c[t] = g_new0(counts, 1);
    threads[t] = g_thread_new("caller", concurrent_caller, c[t]);
  }
  for (int t = 0; t < CALLERS; t++) {
    g_thread_join(threads[t]);
    for (size_t i = 0; i < ITEMS; i++)
      g_assert_cmpint(atomic_load(&c[t]->hits[i]), ==, 50);
    g_free(c[t]);
  }
  NPU_ASSERT_OK(npu_device_release(shared_device));
}

static atomic_bool spinning_stop;

static gpointer busy_thread(gpointer data)
{
  (void)data;
  while (!atomic_load(&spinning_stop))
    ;
  return NULL;
}

/* A model run's stand-in: a step per parallel loop (from the engine's own
 * thread), until a deadline. */
typedef struct counting_job {
  npu_hal_device *device;
  counts *c;
  int rounds;
  gint64 until;
} counting_job;

static bool count_step(void *ctx)
{
  counting_job *job = ctx;
  npu_cpu_parallel_for(job->device, ITEMS, count_index, job->c);
  job->rounds++;
  return g_get_monotonic_time() < job->until;
}

/* With more threads runnable than cores the engine makes OpenMP's idle
 * threads sleep (it parks a second team), and spin again once they are
 * gone: every index still runs exactly once through the switches. */
static void test_runs_through_contention(void)
{
  npu_device *device = npu_test_open_device();
  counts *c = g_new0(counts, 1);
  guint busy_count = g_get_num_processors() + 1;
  GThread **busy = g_new0(GThread *, busy_count);
  int rounds = 0;
  for (int phase = 0; phase < 2; phase++) {
    atomic_store(&spinning_stop, phase == 1);
    for (guint t = 0; phase == 0 && t < busy_count; t++)
      busy[t] = g_thread_new("busy", busy_thread, NULL);
    for (guint t = 0; phase == 1 && t < busy_count; t++)
      g_thread_join(busy[t]);
    /* Phase 1 outlasts the engine's one-second hold of the sleeping mode. */
    gint64 until = g_get_monotonic_time() + (phase == 0 ? 300 : 1300) * 1000;
    counting_job job = {cpu_device(device), c, 0, until};
    npu_cpu_run_steps_on_engine(job.device, count_step, &job);
    rounds += job.rounds;
  }
  for (size_t i = 0; i < ITEMS; i++)
    g_assert_cmpint(atomic_load(&c->hits[i]), ==, rounds);
  g_free(busy);
  g_free(c);
  NPU_ASSERT_OK(npu_device_release(device));
}

typedef struct long_job {
  atomic_int steps_done;
  int steps;
} long_job;

/* 1 ms per step. */
static bool slow_step(void *ctx)
{
  long_job *job = ctx;
  g_usleep(1000);
  return atomic_fetch_add(&job->steps_done, 1) + 1 < job->steps;
}

static gpointer run_long_job(gpointer data)
{
  npu_cpu_run_steps_on_engine(cpu_device(shared_device), slow_step, data);
  return NULL;
}

static void note_index(void *ctx, size_t index)
{
  (void)ctx;
  (void)index;
}

/* A short job queued while a long one runs is done long before it. */
typedef struct products {
  float factors[ITEMS], values[ITEMS], results[ITEMS];
} products;

static void multiply_index(void *ctx, size_t index)
{
  products *p = ctx;
  p->results[index] = p->values[index] * p->factors[index];
}

/* A denormal times one is zero on every thread of the engine (the calling
 * thread of the job and its OpenMP team alike), a normal number is itself,
 * and the caller's own arithmetic keeps denormals. */
static void test_denormals_flushed(void)
{
  if (!SUPPORTS_FLUSHING_DENORMALS) {
    g_test_skip("flushing denormals is set on x86 only");
    return;
  }
  npu_device *device = npu_test_open_device();
  products *p = g_new0(products, 1);
  for (size_t i = 0; i < ITEMS; i++) {
    p->factors[i] = 1.0f;
    p->values[i] = i % 2 ? FLT_MIN / 8 : 1.5f;
  }
  npu_cpu_parallel_for(cpu_device(device), ITEMS, multiply_index, p);
  for (size_t i = 0; i < ITEMS; i++)
    g_assert_cmpfloat(p->results[i], ==, i % 2 ? 0.0f : 1.5f);
  multiply_index(p, 1);
  g_assert_cmpfloat(p->results[1], ==, FLT_MIN / 8);
  g_free(p);
  NPU_ASSERT_OK(npu_device_release(device));
}

static void test_jobs_take_turns(void)
{
  shared_device = npu_test_open_device();
  long_job job = {.steps = 400};
  atomic_init(&job.steps_done, 0);
  GThread *thread = g_thread_new("long job", run_long_job, &job);
  while (atomic_load(&job.steps_done) < 2)
    g_usleep(100);
  npu_cpu_parallel_for(cpu_device(shared_device), 4, note_index, NULL);
  int done_then = atomic_load(&job.steps_done);
  g_thread_join(thread);
  g_assert_cmpint(done_then, <, 200); /* a few, with room for a loaded machine */
  g_assert_cmpint(atomic_load(&job.steps_done), ==, 400);
  NPU_ASSERT_OK(npu_device_release(shared_device));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cpu/engine/each-index-once", test_each_index_once);
  g_test_add_func("/cpu/engine/concurrent-callers", test_concurrent_callers);
  g_test_add_func("/cpu/engine/runs-through-contention", test_runs_through_contention);
  g_test_add_func("/cpu/engine/jobs-take-turns", test_jobs_take_turns);
  g_test_add_func("/cpu/engine/denormals-flushed", test_denormals_flushed);
  return g_test_run();
}
