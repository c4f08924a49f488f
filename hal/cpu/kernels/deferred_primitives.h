/* oneDNN primitives compiled together at the end of a plan, on several
 * threads: compiling (JIT code generation) is most of what a re-plan for a
 * new shape costs, and oneDNN compiles primitives on any thread. */
#ifndef NPU_CPU_DEFERRED_PRIMITIVES_H
#define NPU_CPU_DEFERRED_PRIMITIVES_H

#include <stdbool.h>

#include <oneapi/dnnl/dnnl.h>

#include "npu_hal.h"

/* From now on, primitives asked for on this thread wait for
 * cpu_deferred_compile. */
void cpu_deferred_begin(void);
/* Whether this thread defers: then `*slot` (NULL until then) is filled by
 * cpu_deferred_compile from a copy of `pd`, with the OpenMP thread count
 * this thread has now, and true is returned; false: the caller creates the
 * primitive itself. */
bool cpu_deferred_add(const_dnnl_primitive_desc_t pd, dnnl_primitive_t *slot);
/* A kernel freed (on the thread that made it) before its primitive was
 * compiled: its slot is forgotten. */
void cpu_deferred_drop(dnnl_primitive_t *slot);
/* Compiles the primitives this thread deferred, on up to `threads` threads
 * (this one among them), and stops deferring. The first failure is
 * reported; every slot is then filled or left NULL. */
npu_status cpu_deferred_compile(unsigned threads);

#endif
