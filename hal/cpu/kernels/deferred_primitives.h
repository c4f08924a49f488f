/* oneDNN primitives compiled on helper threads while a plan goes on, and
 * waited for at its end: compiling (JIT code generation) is most of what a
 * re-plan for a new shape costs, and oneDNN compiles primitives on any
 * thread. */
#ifndef NPU_CPU_DEFERRED_PRIMITIVES_H
#define NPU_CPU_DEFERRED_PRIMITIVES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include "npu_hal.h"

/* From now on, primitives asked for on this thread are compiled by
 * `threads` - 1 helper threads, and by this one in cpu_deferred_compile. */
void cpu_deferred_begin(unsigned threads);
/* The plan being made on this thread (between cpu_deferred_begin and
 * cpu_deferred_compile), a number no other plan of the process has; 0:
 * none. */
uint64_t cpu_deferred_plan(void);
/* Whether this thread defers: then `*slot` (NULL until then) is filled,
 * by the time cpu_deferred_compile returns, from a copy of `pd`, with the
 * OpenMP thread count this thread has now, and true is returned; false:
 * the caller creates the primitive itself. */
bool cpu_deferred_add(const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot);
/* A kernel freed before its primitive is compiled (for the plan: on the
 * thread that made it, before cpu_deferred_compile; in the background: on
 * any thread): its job (found by its slot, or a task's key) is forgotten,
 * or if it is being compiled, waited for (the slot then holds the
 * primitive, or NULL). */
void cpu_deferred_drop(const void *key);
/* Whether `pd`'s primitive is left to the background compiler: one thread
 * at the lowest priority that compiles while no plan is being made, its
 * primitives not waited for by any plan. `*slot` (NULL until then) is
 * filled, then `*ready` set (release order), once compiled; false: it was
 * not queued (out of memory). For a kernel that runs another way meanwhile
 * and takes the primitive when ready. */
bool cpu_deferred_add_background(const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot,
                                 atomic_bool *ready);
/* Other work for the background compiler: make(context) runs there (or on
 * a thread waiting for it) and delivers what it made itself; discard(context)
 * follows it, or replaces it where the job is dropped. */
typedef struct cpu_background_task {
  bool (*make)(void *context); /* false: nothing made */
  void (*discard)(void *context);
  void *context;
} cpu_background_task;

/* Whether the task is queued (false: out of memory; the caller discards
 * its context). Found by `key` (cpu_deferred_drop); `*ready` is set
 * (release order) once make returned true. */
bool cpu_deferred_add_background_task(const cpu_background_task *task, const void *key,
                                      atomic_bool *ready);
/* Waits until the background compiler has nothing queued or compiling,
 * helping with the queue; while a plan is being made on another thread,
 * only for what is compiling (the queue waits for that plan). */
void cpu_deferred_wait_background(void);
/* Compiles what this thread deferred that is still waiting, with the
 * helpers, waits for them, and stops deferring. The first failure is
 * reported; every slot is then filled or left NULL. */
npu_status cpu_deferred_compile(void);

#endif
