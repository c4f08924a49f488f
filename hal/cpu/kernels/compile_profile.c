/* Primitive creation profile (compile_profile.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl_debug.h>

#include "compile_profile.h"
#include "dnnl_kernels.h"

typedef struct compile_time {
  char key[80]; /* "convolution brgconv:avx512_core", "describe ...", "kernel Conv" */
  double cpu_ms, max_ms;
  unsigned created;
} compile_time;

static compile_time times[128];
static size_t time_count;
static pthread_mutex_t times_lock = PTHREAD_MUTEX_INITIALIZER;

static double thread_cpu_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void record_key(const char *key, double cpu_ms)
{
  pthread_mutex_lock(&times_lock);
  size_t i = 0;
  while (i < time_count && strcmp(times[i].key, key) != 0)
    i++;
  if (i == time_count && time_count < sizeof times / sizeof times[0]) {
    times[time_count] = (compile_time){.cpu_ms = 0};
    snprintf(times[time_count++].key, sizeof times[0].key, "%s", key);
  }
  if (i < time_count) {
    times[i].cpu_ms += cpu_ms;
    times[i].created++;
    if (cpu_ms > times[i].max_ms)
      times[i].max_ms = cpu_ms;
  }
  pthread_mutex_unlock(&times_lock);
}

static void record(const char *what, const_dnnl_primitive_desc_t pd, double cpu_ms)
{
  dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
  dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
  const char *impl = NULL;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  char key[sizeof times[0].key];
  snprintf(key, sizeof key, "%s%s %s", what, dnnl_prim_kind2str(kind), impl ? impl : "?");
  record_key(key, cpu_ms);
}

double cpu_compile_profile_clock(void)
{
  return cpu_profiling() ? thread_cpu_ms() : 0;
}

void cpu_compile_profile_add(const char *what, const char *name, double started)
{
  if (!cpu_profiling())
    return;
  char key[sizeof times[0].key];
  snprintf(key, sizeof key, "%s%s", what, name);
  record_key(key, thread_cpu_ms() - started);
}

dnnl_status_t cpu_primitive_create(dnnl_primitive_t *primitive, const_dnnl_primitive_desc_t pd)
{
  if (!cpu_profiling())
    return dnnl_primitive_create(primitive, pd);
  double start = thread_cpu_ms();
  dnnl_status_t s = dnnl_primitive_create(primitive, pd);
  record("", pd, thread_cpu_ms() - start);
  return s;
}

dnnl_status_t cpu_primitive_desc_create(dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t op,
                                        const_dnnl_primitive_attr_t attr)
{
  if (!cpu_profiling())
    return dnnl_primitive_desc_create(pd, op, attr, cpu_dnnl_engine(), NULL);
  double start = thread_cpu_ms();
  dnnl_status_t s = dnnl_primitive_desc_create(pd, op, attr, cpu_dnnl_engine(), NULL);
  if (s == dnnl_success)
    record("describe ", *pd, thread_cpu_ms() - start);
  return s;
}

static int costlier_first(const void *a, const void *b)
{
  double ta = ((const compile_time *)a)->cpu_ms, tb = ((const compile_time *)b)->cpu_ms;
  return ta < tb ? 1 : ta > tb ? -1 : 0;
}

void cpu_compile_profile_print(const char *when)
{
  if (!cpu_profiling())
    return;
  pthread_mutex_lock(&times_lock);
  double compiling = 0;
  unsigned created = 0;
  for (size_t i = 0; i < time_count; i++)
    if (strncmp(times[i].key, "describe ", 9) != 0 && strncmp(times[i].key, "kernel ", 7) != 0) {
      compiling += times[i].cpu_ms;
      created += times[i].created;
    }
  qsort(times, time_count, sizeof times[0], costlier_first);
  if (time_count)
    fprintf(stderr, "CPU plan %s: %u oneDNN primitives created in %.1f ms of CPU (all threads); "
            "by kernel, primitive description and creation:\n", when, created, compiling);
  for (size_t i = 0; i < time_count; i++)
    fprintf(stderr, "  %-46s %8.2f ms %5u times, slowest %.2f ms\n", times[i].key,
            times[i].cpu_ms, times[i].created, times[i].max_ms);
  time_count = 0;
  pthread_mutex_unlock(&times_lock);
}
