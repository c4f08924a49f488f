/* Compiled subgraphs (npu_hal_graph.h) on the runtime's side: describing a
 * run of a plan's nodes to the device's backend whole, compiling it, and
 * the context's record of what it compiled, so that a plan for new shapes
 * has the backend reshape an executable instead of compiling it again. */
#ifndef NPU_SUBGRAPH_H
#define NPU_SUBGRAPH_H

#include <npu/device.h>

#include "fusion.h"
#include "graph.h"
#include "npu_hal_graph.h"
#include "op_params.h"

/* What describing a subgraph asks of the plan. */
typedef struct npu_subgraph_source {
  const npu_graph *graph;
  const npu_consumers *consumers;
  const bool *runs; /* per node: a launch of this plan runs it */
  /* The tensor's planned desc; *value: its host value when a constant, else NULL. */
  const npu_hal_tensor_desc *(*tensor)(void *data, int32_t tensor, const void **value);
  npu_hal_attributes (*attributes)(void *data, uint32_t node);
  void *data;
  npu_precision precision; /* every node's npu_hal_op.precision */
} npu_subgraph_source;

/* A subgraph as the backend sees it (hal), with where its parts come from. */
typedef struct npu_subgraph {
  npu_hal_subgraph hal;
  uint32_t *nodes;         /* hal.node_count graph nodes, in order */
  int32_t *graph_tensors;  /* per subgraph tensor: the graph's */
  /* Behind hal's arrays: */
  npu_hal_subgraph_node *hal_nodes;
  npu_hal_tensor_desc *descs;          /* the tensors, then each node's inputs and outputs */
  const void **values;                 /* the tensors', then each node's inputs' */
  uint32_t *indices;                   /* each node's inputs and outputs, then the boundary */
  npu_op_params *params;               /* per node: its resolved window, axes and ranges */
} npu_subgraph;

/* Describes `count` nodes (in the plan's order) as one subgraph: its inputs
 * are what it reads and does not write, its outputs what it writes and a
 * node outside it (running in this plan) or the model's outputs read. */
npu_status npu_subgraph_describe(const npu_subgraph_source *source, const uint32_t *nodes,
                                 uint32_t count, npu_subgraph *subgraph);

/* The executables a context's plans hold, by node set (the latest made for
 * each): what a plan for new shapes reshapes. */
typedef struct npu_subgraph_registry {
  struct registered_executable *entries;
  size_t count;
} npu_subgraph_registry;

void npu_subgraph_registry_clear(npu_subgraph_registry *registry);

/* A subgraph compiled for one plan. */
typedef struct npu_compiled_subgraph {
  npu_hal_executable *executable;
  const npu_hal_graph_ops *ops;
  npu_subgraph graph;        /* what it was compiled from: kept while it lives */
  uint32_t packed;           /* how many of its constants it keeps its own copy of */
  bool *packed_constants;    /* per constant */
  size_t workspace;
} npu_compiled_subgraph;

/* Compiles `subgraph` (taken over, cleared on failure too) on `device`:
 * reshapes the executable the registry holds for the same nodes where the
 * backend can, compiles it otherwise. NPU_ERROR_NOT_SUPPORTED: the backend
 * refused it (the caller runs its nodes with per-op kernels). */
npu_status npu_subgraph_compile(npu_subgraph_registry *registry, npu_device *device,
                                npu_subgraph *subgraph, npu_compiled_subgraph *compiled);

/* Destroys the executable and forgets it in the registry. */
void npu_compiled_subgraph_clear(npu_subgraph_registry *registry,
                                 npu_compiled_subgraph *compiled);

void npu_subgraph_clear(npu_subgraph *subgraph);

#endif
