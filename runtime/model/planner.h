/* Memory planner: where each intermediate tensor of a plan lives in one
 * arena, so that an inference allocates nothing. */
#ifndef NPU_PLANNER_H
#define NPU_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <npu/status.h>

#define NPU_PLAN_NO_SOURCE UINT32_MAX

typedef struct npu_plan_tensor {
  size_t size;           /* bytes; 0: not in the arena */
  uint32_t first_step;   /* the step that writes it (position in the node order) */
  uint32_t last_step;    /* the last step that reads it */
  /* In-place: the tensor may take the memory of this one, which must die at
   * first_step (an elementwise op overwriting its input). */
  uint32_t inplace_source;
  /* With inplace_source: the tensor is a view of it (a Reshape's output, the
   * same bytes), which may live on; several views may share a source, and
   * nothing else may claim it. */
  bool view;
} npu_plan_tensor;

typedef struct npu_memory_plan {
  size_t *offsets;       /* per tensor, into the arena */
  size_t arena_size;
  size_t naive_size;     /* the sum of all sizes: what one buffer each would take */
} npu_memory_plan;

/* Greedy by size with best fit: the largest tensors are placed first, each
 * into the smallest gap left by the tensors alive at the same time. */
npu_status npu_plan_memory(const npu_plan_tensor *tensors, size_t count, size_t alignment,
                           npu_memory_plan *plan);
void npu_memory_plan_clear(npu_memory_plan *plan);

/* NPU_OK when no two tensors alive at the same step overlap (in-place pairs
 * excepted) and every offset is aligned; else a message naming the pair. */
npu_status npu_plan_validate(const npu_plan_tensor *tensors, size_t count, size_t alignment,
                             const npu_memory_plan *plan);

#endif
