/* Operator fusion: the elementwise operators after a kernel that can be
 * applied to its output as it is written (activations, scalar affine steps,
 * the expanded HardSwish and Swish subgraphs exporters emit). */
#ifndef NPU_FUSION_H
#define NPU_FUSION_H

#include "graph.h"
#include "npu_hal_graph.h"

/* Who reads each tensor. */
typedef struct npu_consumers {
  uint32_t *offsets; /* tensor_count + 1 */
  uint32_t *nodes;   /* nodes reading tensor t: nodes[offsets[t] .. offsets[t + 1]) */
} npu_consumers;

npu_status npu_consumers_build(const npu_graph *graph, npu_consumers *consumers);
void npu_consumers_clear(npu_consumers *consumers);

/* Whether `tensor` is one of the graph's outputs. */
bool npu_graph_is_output(const npu_graph *graph, int32_t tensor);

/* The one node reading `tensor`; -1 when none or several do, or it is a
 * graph output. */
int32_t npu_consumers_only_reader(const npu_graph *graph, const npu_consumers *consumers,
                                  int32_t tensor);

/* What the matcher asks of the plan. */
typedef struct npu_fusion_env {
  /* The host value of a constant tensor, NULL when not a constant. */
  const void *(*constant_value)(void *data, int32_t tensor);
  /* Whether a fused Add can read `tensor`: computed at run time before the
   * kernel being fused runs, with the shape and layout of `like`; or a
   * constant bias along `like`'s last axis. */
  bool (*addend_ready)(void *data, int32_t tensor, int32_t like);
  void *data;
} npu_fusion_env;

#define NPU_FUSION_MAX_ABSORBED (4 * NPU_HAL_MAX_ACTIVATIONS)

typedef struct npu_fusion {
  npu_hal_activation activations[NPU_HAL_MAX_ACTIVATIONS];
  uint32_t count;
  uint32_t absorbed[NPU_FUSION_MAX_ABSORBED]; /* nodes the kernel takes over */
  uint32_t absorbed_count;
  int32_t output;                             /* the tensor the fused kernel writes */
  int32_t fused_inputs[NPU_HAL_MAX_ACTIVATIONS]; /* tensors ADD activations read */
  uint32_t fused_input_count;
  struct { uint32_t absorbed_count, fused_input_count; int32_t output; }
      step_end[NPU_HAL_MAX_ACTIVATIONS];
} npu_fusion;

/* The longest chain after `node`'s first output (count 0 when none). */
void npu_fusion_find(const npu_graph *graph, const npu_consumers *consumers, uint32_t node,
                     const npu_fusion_env *env, npu_fusion *fusion);

/* After a QLinearConv: the QLinearAdd that alone reads its output, adding
 * another 8-bit tensor (see npu_fusion_env's addend_ready), as a
 * DEQUANTIZED_ADD and a QUANTIZE activation (count 0 when none). */
void npu_fusion_find_quantized(const npu_graph *graph, const npu_consumers *consumers,
                               uint32_t node, const npu_fusion_env *env, npu_fusion *fusion);

/* Keeps only the first `count` activations (and the nodes they took over). */
void npu_fusion_truncate(npu_fusion *fusion, uint32_t count);

#endif
