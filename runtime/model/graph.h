/* The runtime's graph IR: tensors and nodes of a validated model, in a
 * topological order. Names and attributes stay in the parsed ONNX message,
 * which lives as long as the graph. */
#ifndef NPU_GRAPH_H
#define NPU_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <npu/model.h>

#include "npu_checked.h" /* npu_dims_elements() for the shapes below */
#include "onnx.pb-c.h"
#include "op_schema.h"

typedef struct npu_graph_tensor {
  const char *name;
  npu_dtype dtype;     /* UNDEFINED until shape inference for intermediates */
  bool has_shape;
  uint32_t rank;
  int64_t dims[NPU_MAX_RANK];          /* NPU_DIM_DYNAMIC where open */
  const char *dim_names[NPU_MAX_RANK];
  bool constant;       /* an initializer or a Constant node's value */
  const void *data;    /* constants: packed little-endian elements (NULL when empty), in
                          memory the graph owns (load-time rewrites may update it) */
  size_t data_size;
  bool rewritten;      /* constants: data changed by a load-time rewrite (no longer the file's) */
  int32_t producer;    /* node index; -1 for graph inputs and constants */
} npu_graph_tensor;

typedef struct npu_graph_node {
  const Onnx__NodeProto *proto; /* name, op_type, attributes */
  const npu_op_schema *schema;
  uint32_t input_count, output_count;
  int32_t *inputs;     /* tensor indices; -1: optional input left out */
  int32_t *outputs;
  bool folded;         /* not run: a Constant node (its output holds the data) or a
                          BatchNormalization merged into the Conv before it */
} npu_graph_node;

typedef struct npu_graph {
  npu_graph_tensor *tensors;
  size_t tensor_count;
  npu_graph_node *nodes;
  size_t node_count;
  uint32_t *order;     /* node indices, producers before consumers */
  int32_t *inputs;     /* tensors the caller feeds (graph inputs minus initializers) */
  size_t input_count;
  int32_t *outputs;
  size_t output_count;
  int64_t opset;
  void **owned;        /* constant data converted or read from external files */
  size_t owned_count;
} npu_graph;

/* Builds and validates the graph of a parsed model. `base_dir` resolves
 * external data (NULL: refused). On failure the message names the node or
 * tensor and the problem; *graph is left empty. */
npu_status npu_graph_from_onnx(const Onnx__ModelProto *model, const char *base_dir,
                               npu_graph *graph);
void npu_graph_clear(npu_graph *graph);

/* Keeps `data` (malloc'd) until the graph is cleared; false when out of memory. */
bool npu_graph_own(npu_graph *graph, void *data);

/* calloc (of at least one element) owned by the graph (npu_graph_own); NULL
 * when out of memory. */
void *npu_graph_calloc(npu_graph *graph, size_t count, size_t size);

/* Attribute `name` of a node; NULL when it has none. */
const Onnx__AttributeProto *npu_graph_attribute(const Onnx__NodeProto *node, const char *name);

/* A copy of node proto `like` (its name, inputs and other attributes
 * shared, or a fresh one when NULL) whose attributes named as one of
 * `replacing` (count of them) are those instead; owned by the graph
 * (npu_graph_own); NULL when out of memory. */
Onnx__NodeProto *npu_graph_node_with(npu_graph *graph, const Onnx__NodeProto *like,
                                     Onnx__AttributeProto *const *replacing, size_t count);

/* Appends node `proto` (its op_type set) reading `inputs` and writing tensor
 * `output`, after the existing nodes (the caller puts it in the order);
 * `output`'s producer becomes it. False when out of memory. */
bool npu_graph_append_node(npu_graph *graph, Onnx__NodeProto *proto, const int32_t *inputs,
                           uint32_t input_count, int32_t output);

/* A new constant tensor holding `data` (owned by the graph: see
 * npu_graph_own); its index, -1 when out of memory. Grows the tensor array. */
int32_t npu_graph_add_constant(npu_graph *graph, const char *name, npu_dtype dtype, void *data,
                               const int64_t *dims, uint32_t rank);

/* Load-time rewrites: Einsums become MatMul and data movement
 * (einsum_rewrite.h); QDQ Convs become QLinearConv (qdq_rewrite.h);
 * BatchNormalization after a Conv with constant weights is merged into the
 * weights and bias; scalar scalings of a MatMul's operands move after it,
 * constant scales across Transposes (matmul_rewrite.h), and a per-column
 * scale after a MatMul by constant weights (and its bias) is merged into
 * them. */
npu_status npu_graph_optimize(npu_graph *graph);

#endif
