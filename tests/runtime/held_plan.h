/* A CPU plan being made on another thread until released: the CPU
 * backend's background compiler waits meanwhile (deferred_primitives.h),
 * so that a test sees a re-plan's kernels before their background
 * primitives are swapped in. */
#ifndef NPU_TEST_HELD_PLAN_H
#define NPU_TEST_HELD_PLAN_H

#include <stdbool.h>

#include <glib.h>

typedef struct held_plan {
  GMutex lock;
  GCond changed;
  bool begun, release;
  GThread *thread;
} held_plan;

/* Returns once the plan has begun. */
void hold_background(held_plan *plan);
/* Ends the plan (the background compiler may go on) and joins its thread. */
void release_background(held_plan *plan);

#endif
