/* One model planned for one set of input shapes on one device: shapes
 * inferred, shape-dependent constants folded on the host, kernels created,
 * intermediates planned into one arena, launches ready to queue. A context
 * (context.c) keeps several plans of one model and shares the model's
 * weights between them: a new shape costs kernels and an arena, never a
 * second copy of the weights. */
#ifndef NPU_SHAPE_PLAN_H
#define NPU_SHAPE_PLAN_H

#include <stdbool.h>

#include <npu/model.h>
#include <npu/stream.h>

#include "graph.h"
#include "subgraph.h"
#include "weight_store.h"

/* Device copies of the graph's constants (initializers, Constant nodes),
 * shared by every plan of a context: the first plan uploads those its
 * kernels read from the device, later plans find them here. */
typedef struct npu_device_weights {
  npu_buffer *buffer;   /* NULL until the first plan, or when no kernel reads a constant */
  size_t *offsets;      /* per graph tensor; NPU_WEIGHT_ABSENT where not uploaded */
  uint64_t bytes;
} npu_device_weights;

#define NPU_WEIGHT_ABSENT SIZE_MAX

/* The device arena the plans of a context share: they run one at a time,
 * so a new plan whose arena fits takes this buffer, already faulted in,
 * instead of fresh memory to fault in again. A plan that needs more makes
 * a larger buffer, which becomes the shared one; plans made before keep
 * the one they hold. */
typedef struct npu_shared_arena {
  npu_buffer *buffer;   /* NULL until a plan needs an arena */
  size_t bytes;
} npu_shared_arena;

typedef struct npu_plan_env {
  const npu_graph *graph;
  npu_device *device;       /* where the model runs */
  npu_device *host;         /* a CPU-backend device: constant folding (may be `device`) */
  npu_device_weights *weights;
  npu_shared_arena *arena;  /* the context's; see above */
  npu_subgraph_registry *registry; /* the context's compiled subgraphs */
  npu_precision precision;  /* the hint every kernel gets (npu_hal_op.precision) */
  npu_weight_store *store;  /* the model's large initializers (NULL: none) */
} npu_plan_env;

typedef struct shape_plan shape_plan;

/* `shapes` as for npu_context_create. The message names the node on failure. */
npu_status npu_shape_plan_create(const npu_plan_env *env, const npu_tensor_info *shapes,
                                 uint32_t shape_count, shape_plan **plan);
void npu_shape_plan_destroy(shape_plan *plan);

/* Whether the plan was made for these input shapes (NULL: the model's own). */
bool npu_shape_plan_matches(const shape_plan *plan, const npu_tensor_info *shapes,
                            uint32_t shape_count);

/* The tensor's concrete dims; input or output `index` in model order. */
npu_status npu_shape_plan_describe(const shape_plan *plan, bool input, uint32_t index,
                                   npu_tensor_info *info);

/* Checks the caller's buffers, binds them and queues the launches on
 * `stream`. The caller makes sure the plan's previous run is done. */
npu_status npu_shape_plan_check(const shape_plan *plan, npu_buffer *const *inputs,
                                npu_buffer *const *outputs);
npu_status npu_shape_plan_queue(shape_plan *plan, npu_stream *stream, npu_buffer *const *inputs,
                                npu_buffer *const *outputs);

const npu_context_stats *npu_shape_plan_stats(const shape_plan *plan);
/* Waits until the plan's kernels that finish in the background run their
 * own code (npu_hal_graph_ops.kernels_settle). */
void npu_shape_plan_settle(shape_plan *plan);

#endif
