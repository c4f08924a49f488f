/* Memory planner (see planner.h). In-place chains are merged into groups
 * first: a group lives from its first member's first step to its last
 * member's last step and needs its largest member's size. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "npu_checked.h"
#include "npu_hal.h"
#include "planner.h"

typedef struct group {
  size_t size;
  uint32_t first_step, last_step;
  size_t offset;
  bool placed;
} group;

typedef struct interval {
  size_t begin, end;
} interval;

/* false when the rounded value passes SIZE_MAX */
static bool align_up(size_t value, size_t alignment, size_t *aligned)
{
  if (!npu_add_size(value, alignment - 1, aligned))
    return false;
  *aligned = *aligned / alignment * alignment;
  return true;
}

static npu_status too_large(void)
{
  return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "planner: the tensors' sizes pass SIZE_MAX");
}

static bool lifetimes_overlap(const group *a, const group *b)
{
  return a->first_step <= b->last_step && b->first_step <= a->last_step;
}

static int by_begin(const void *a, const void *b)
{
  const interval *x = a, *y = b;
  return (x->begin > y->begin) - (x->begin < y->begin);
}

static int by_size_descending(const void *a, const void *b, void *groups)
{
  const group *x = &((const group *)groups)[*(const uint32_t *)a];
  const group *y = &((const group *)groups)[*(const uint32_t *)b];
  if (x->size != y->size)
    return (x->size < y->size) - (x->size > y->size);
  return (x->first_step > y->first_step) - (x->first_step < y->first_step);
}

/* The smallest gap between the busy intervals that fits `size`, else the end. */
static size_t best_fit(interval *busy, size_t busy_count, size_t size)
{
  qsort(busy, busy_count, sizeof *busy, by_begin);
  size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
  for (size_t i = 0; i < busy_count; i++) {
    if (busy[i].begin > cursor) {
      size_t gap = busy[i].begin - cursor;
      if (gap >= size && gap < best_gap) {
        best_gap = gap;
        best = cursor;
      }
    }
    if (busy[i].end > cursor)
      cursor = busy[i].end;
  }
  return best != SIZE_MAX ? best : cursor;
}

/* Group of each tensor: follow in-place sources to the chain's root. */
static uint32_t root_of(const npu_plan_tensor *tensors, uint32_t i)
{
  while (tensors[i].inplace_source != NPU_PLAN_NO_SOURCE && tensors[i].size > 0 &&
         tensors[tensors[i].inplace_source].size > 0)
    i = tensors[i].inplace_source;
  return i;
}

static npu_status check_request(const npu_plan_tensor *tensors, size_t count, size_t alignment)
{
  if ((count && !tensors) || alignment == 0 || (alignment & (alignment - 1)))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "planner: no tensors, or alignment %zu is "
                         "not a power of two", alignment);
  /* Each source's first claimant that writes over it (+ 1; 0: none), and
   * its first view: a source may have any number of views, or one
   * claimant alone. */
  size_t *writer = calloc(count + 1, sizeof *writer), *viewer = calloc(count + 1, sizeof *viewer);
  npu_status status = writer && viewer ? NPU_OK
                                       : npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "planner: out of memory");
  for (size_t j = 0; j < count && status == NPU_OK; j++) {
    uint32_t source = tensors[j].inplace_source;
    if (source == NPU_PLAN_NO_SOURCE || source >= count)
      continue; /* (a source out of range is refused below) */
    size_t *mine = tensors[j].view ? &viewer[source] : &writer[source];
    size_t other = writer[source] ? writer[source] : tensors[j].view ? 0 : viewer[source];
    if (other)
      status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "planner: tensors %zu and %zu both "
                             "claim tensor %u's memory", other - 1, j, source);
    if (!*mine)
      *mine = j + 1;
  }
  free(writer);
  free(viewer);
  if (status != NPU_OK)
    return status;
  for (size_t i = 0; i < count; i++) {
    const npu_plan_tensor *t = &tensors[i];
    if (t->first_step > t->last_step)
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "planner: tensor %zu dies (step %u) "
                           "before it is written (step %u)", i, t->last_step, t->first_step);
    if (t->inplace_source != NPU_PLAN_NO_SOURCE &&
        (t->inplace_source >= count ||
         (!t->view && tensors[t->inplace_source].last_step != t->first_step)))
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "planner: tensor %zu cannot reuse tensor "
                           "%u in place: it must die where %zu is written", i, t->inplace_source,
                           i);
  }
  return NPU_OK;
}

/* A tensor written over its source's memory (`root`: each tensor's chain):
 * nothing else there (a view of the source, or the source of a view) may
 * be read after. */
static npu_status check_overwrites(const npu_plan_tensor *tensors, size_t count,
                                   const uint32_t *root)
{
  for (size_t i = 0; i < count; i++) {
    const npu_plan_tensor *t = &tensors[i];
    if (t->inplace_source == NPU_PLAN_NO_SOURCE || t->view || t->size == 0)
      continue;
    for (size_t j = 0; j < count; j++)
      if (j != i && tensors[j].size && tensors[j].last_step > t->first_step &&
          tensors[j].first_step <= t->first_step && root[j] == root[i])
        return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "planner: tensor %zu is written over "
                             "memory tensor %zu still reads", i, j);
  }
  return NPU_OK;
}

npu_status npu_plan_memory(const npu_plan_tensor *tensors, size_t count, size_t alignment,
                           npu_memory_plan *plan)
{
  memset(plan, 0, sizeof *plan);
  npu_status status = check_request(tensors, count, alignment);
  if (status != NPU_OK)
    return status;
  group *groups = calloc(count + 1, sizeof *groups);
  uint32_t *root = malloc((count + 1) * sizeof *root);
  uint32_t *order = malloc((count + 1) * sizeof *order);
  interval *busy = malloc((count + 1) * sizeof *busy);
  plan->offsets = calloc(count + 1, sizeof *plan->offsets);
  if (!groups || !root || !order || !busy || !plan->offsets) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "planner: out of memory");
    goto done;
  }
  for (uint32_t i = 0; i < count; i++) {
    root[i] = root_of(tensors, i);
    group *g = &groups[root[i]];
    size_t size;
    if (tensors[i].size == 0)
      continue;
    if (!align_up(tensors[i].size, alignment, &size) ||
        !npu_add_size(plan->naive_size, tensors[i].size, &plan->naive_size)) {
      status = too_large();
      goto done;
    }
    if (g->size == 0) {
      g->first_step = tensors[i].first_step;
      g->last_step = tensors[i].last_step;
    }
    g->size = size > g->size ? size : g->size;
    g->first_step = tensors[i].first_step < g->first_step ? tensors[i].first_step : g->first_step;
    g->last_step = tensors[i].last_step > g->last_step ? tensors[i].last_step : g->last_step;
  }
  status = check_overwrites(tensors, count, root);
  if (status != NPU_OK)
    goto done;
  size_t group_count = 0;
  for (uint32_t i = 0; i < count; i++)
    if (root[i] == i && groups[i].size > 0)
      order[group_count++] = i;
  qsort_r(order, group_count, sizeof *order, by_size_descending, groups);

  for (size_t k = 0; k < group_count; k++) {
    group *g = &groups[order[k]];
    size_t busy_count = 0;
    for (size_t j = 0; j < k; j++) {
      const group *other = &groups[order[j]];
      if (lifetimes_overlap(g, other))
        busy[busy_count++] = (interval){other->offset, other->offset + other->size};
    }
    g->offset = best_fit(busy, busy_count, g->size);
    g->placed = true;
    size_t end;
    if (!npu_add_size(g->offset, g->size, &end)) { /* (the busy intervals end below this) */
      status = too_large();
      goto done;
    }
    if (end > plan->arena_size)
      plan->arena_size = end;
  }
  for (uint32_t i = 0; i < count; i++)
    plan->offsets[i] = tensors[i].size ? groups[root[i]].offset : 0;
done:
  free(groups);
  free(root);
  free(order);
  free(busy);
  if (status != NPU_OK)
    npu_memory_plan_clear(plan);
  return status;
}

void npu_memory_plan_clear(npu_memory_plan *plan)
{
  free(plan->offsets);
  memset(plan, 0, sizeof *plan);
}

static bool same_chain(const npu_plan_tensor *tensors, uint32_t a, uint32_t b)
{
  return root_of(tensors, a) == root_of(tensors, b);
}

npu_status npu_plan_validate(const npu_plan_tensor *tensors, size_t count, size_t alignment,
                             const npu_memory_plan *plan)
{
  for (uint32_t i = 0; i < count; i++) {
    if (tensors[i].size == 0)
      continue;
    if (plan->offsets[i] % alignment)
      return npu_set_error(NPU_ERROR_INTERNAL, "plan: tensor %u at offset %zu is not %zu-byte "
                           "aligned", i, plan->offsets[i], alignment);
    if (plan->offsets[i] + tensors[i].size > plan->arena_size)
      return npu_set_error(NPU_ERROR_INTERNAL, "plan: tensor %u ends past the arena", i);
    for (uint32_t j = i + 1; j < count; j++) {
      if (tensors[j].size == 0 || same_chain(tensors, i, j))
        continue;
      bool live_together = tensors[i].first_step <= tensors[j].last_step &&
                           tensors[j].first_step <= tensors[i].last_step;
      bool share_bytes = plan->offsets[i] < plan->offsets[j] + tensors[j].size &&
                         plan->offsets[j] < plan->offsets[i] + tensors[i].size;
      if (live_together && share_bytes)
        return npu_set_error(NPU_ERROR_INTERNAL, "plan: tensors %u and %u are alive together "
                             "and overlap in memory", i, j);
    }
  }
  return NPU_OK;
}
