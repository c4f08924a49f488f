/* Layout planning: which intermediate tensors live channels-last.
 *
 * Convolution engines run fastest on channels-last or channel-blocked
 * activations; converting at every kernel costs as much as the convolutions
 * on small models. So a tensor takes the backend's preferred layout when
 * every kernel that writes or reads it takes that layout (the backend says
 * so per operator), else channels-last, else plain; elementwise nodes over
 * same-shape tensors carry a layout through: their tensors decide together.
 * Graph inputs, outputs and constants stay plain. */
#ifndef NPU_LAYOUT_H
#define NPU_LAYOUT_H

#include "fusion.h"
#include "graph.h"
#include "npu_hal_graph.h"

/* A tensor's planned layout (npu_hal_tensor_desc's layout and block). */
typedef struct npu_layout {
  npu_hal_layout kind;
  uint32_t block; /* channel blocks: channels per block */
} npu_layout;

typedef struct npu_layout_query {
  const npu_graph *graph;
  const npu_consumers *consumers;
  /* The tensor's planned shape when it may change layout (an intermediate
   * tensor computed at run time), NULL otherwise. */
  const npu_hal_tensor_desc *(*activation)(void *data, int32_t tensor);
  /* Whether a kernel runs `node` (false: folded away). */
  bool (*runs)(void *data, uint32_t node);
  /* Whether the backend takes `node` with its tensors in `layouts`. */
  bool (*accepts)(void *data, uint32_t node, const npu_layout *layouts);
  /* The backend's favourite layout for an activation. */
  npu_layout (*preferred)(void *data, const npu_hal_tensor_desc *tensor);
  void *data;
} npu_layout_query;

/* Fills layouts[tensor_count]; *moved counts the tensors not plain. */
npu_status npu_layout_plan(const npu_layout_query *query, npu_layout *layouts,
                           uint32_t *moved);

#endif
