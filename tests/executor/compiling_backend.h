/* A test-only backend that compiles subgraphs (npu_hal_graph.h): the CPU
 * backend's devices and memory, with subgraph_compile making each subgraph
 * one executable of its own: a list of CPU kernels over a private layout of
 * its intermediates in one workspace, its own copies of the larger
 * constants (shared by the executables reshaped from it), run as one unit
 * in one call. It counts what the runtime asks of it. */
#ifndef NPU_TEST_COMPILING_BACKEND_H
#define NPU_TEST_COMPILING_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <npu/status.h>

typedef struct compiling_backend_stats {
  uint32_t compiles;        /* subgraph_compile calls that made an executable */
  uint32_t refusals;        /* subgraph_compile calls answered NOT_SUPPORTED */
  uint32_t reshapes;        /* executable_reshape calls that made an executable */
  uint32_t runs;            /* executable_run calls */
  uint32_t nodes_compiled;  /* nodes in the executables made */
  uint32_t constants_without_value; /* constants the description gave no host value */
  uint32_t bad_workspaces;  /* runs whose workspace was missing or overlapped a boundary tensor */
  uint32_t bad_constants;   /* runs with a packed constant's reference set, or another's not */
  uint64_t packed_bytes;    /* the executables' own constant copies alive now */
} compiling_backend_stats;

typedef struct compiling_backend_settings {
  bool refuse;               /* subgraph_compile answers NOT_SUPPORTED */
  bool no_reshape;           /* executable_reshape answers NOT_SUPPORTED */
  const char *const *unsupported; /* op types op_supported declines (NULL-terminated; NULL: none) */
} compiling_backend_settings;

extern compiling_backend_stats compiling_stats;
extern compiling_backend_settings compiling_settings;

/* Registers the backend under `name` (once per process). */
npu_status compiling_backend_add(const char *name);

#endif
