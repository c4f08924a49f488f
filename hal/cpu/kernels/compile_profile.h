/* With NPU_CPU_PROFILE set: the CPU time each plan spends creating oneDNN
 * primitives (JIT compiling, or taking them from oneDNN's primitive cache),
 * by primitive kind and implementation, on whichever thread creates them,
 * printed to stderr when the plan's kernels are ready. */
#ifndef NPU_CPU_COMPILE_PROFILE_H
#define NPU_CPU_COMPILE_PROFILE_H

#include <oneapi/dnnl/dnnl.h>

/* dnnl_primitive_create, timed (thread CPU clock) when profiling. */
dnnl_status_t cpu_primitive_create(dnnl_primitive_t *primitive, const_dnnl_primitive_desc_t pd);
/* dnnl_primitive_desc_create (what oneDNN does to choose an
 * implementation, compiling nothing), timed as "describe KIND IMPL". */
dnnl_status_t cpu_primitive_desc_create(dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t op,
                                        const_dnnl_primitive_attr_t attr);
/* This thread's CPU clock in ms when profiling, else 0; and the time since
 * `started` recorded under WHAT NAME (a kernel's whole creation). */
double cpu_compile_profile_clock(void);
void cpu_compile_profile_add(const char *what, const char *name, double started);
/* Prints what was created (and described) since the last call, `when` ("while planning") (nothing when none or not
 * profiling) and starts again. Process-wide: contexts planned at once on
 * other threads are counted together. */
void cpu_compile_profile_print(const char *when);

#endif
