/* Planning one input shape (shape_plan.h). Planning walks the nodes in
 * order: it infers every shape, computes nodes whose inputs are all
 * constants once (on the host, with the CPU backend's kernels), creates a
 * backend kernel for the rest (where the device's backend compiles
 * subgraphs, one executable per subgraph instead: subgraph.c), finds the model's weights in the context's
 * device copy (uploading them with the first plan), puts folded constants in
 * a device buffer of the plan's own and plans the intermediates into one
 * arena. A run binds the caller's buffers and queues the launches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attributes.h"
#include "fusion.h"
#include "layout.h"
#include "model_internal.h"
#include "npu_checked.h"
#include "npu_hal_graph.h"
#include "npu_internal.h"
#include "op_params.h"
#include "planner.h"
#include "shape_inference.h"
#include "shape_plan.h"
#include "subgraph.h"

#define ALIGNMENT 64

/* LOC_CONSTANT: a host value, on the device in the plan's own buffer;
 * LOC_WEIGHT: a graph constant in the context's shared device copy;
 * LOC_INTERNAL: inside a compiled subgraph, in the executable's own memory. */
typedef enum {
  LOC_NONE, LOC_INPUT, LOC_OUTPUT, LOC_ARENA, LOC_CONSTANT, LOC_WEIGHT, LOC_INTERNAL
} tensor_location;

typedef struct ctx_tensor {
  npu_hal_tensor_desc desc;
  bool known;
  const void *value;          /* host data of a constant */
  tensor_location location;
  uint32_t slot;              /* input/output index */
  size_t offset;              /* in the arena or the constant buffer */
  uint32_t first_step, last_step;
  bool used_on_device;
  bool on_host;               /* written by a kernel on the host (partitioned plans) */
  int32_t shadow;             /* its copy on the other device, or -1 */
} ctx_tensor;

/* A tensor's copy on the device that does not write it, for the kernels
 * there that read it: copied in before the subgraph of its first reader. */
typedef struct shadow {
  int32_t tensor;
  bool on_host;               /* where the copy is */
  size_t offset;              /* in that device's arena */
  uint32_t first_step, last_step;
} shadow;

/* Consecutive launches on one device: a subgraph. */
typedef struct segment {
  bool on_host;
  uint32_t first, count;
  npu_event *ready;           /* host subgraphs: recorded on the device's stream before it */
  npu_event *done;            /* host subgraphs: recorded on the host stream after it */
} segment;

typedef struct io_ref {
  npu_hal_mem_ref *ref;
  uint32_t slot;
  bool output;
} io_ref;

/* A graph output not written by a launch: copied in at each run. */
typedef struct output_fixup {
  uint32_t slot;
  const ctx_tensor *source; /* a constant (host value) or a graph input */
} output_fixup;

typedef struct launch_addends {
  uint32_t count;
  int32_t tensors[NPU_HAL_MAX_ACTIVATIONS];
} launch_addends;

struct shape_plan {
  npu_device *device, *host;
  const npu_graph *graph;
  npu_device_weights *weights;
  ctx_tensor *tensors;
  npu_hal_launch *launches;
  uint32_t *launch_nodes;     /* the node each launch runs */
  int32_t *launch_outputs;    /* the tensor each launch's output 0 writes (fusion) */
  launch_addends *addends;    /* per launch: tensors fused Adds read, after its inputs */
  bool *absorbed;             /* nodes an earlier launch runs (fused, or compiled with it) */
  npu_consumers consumers;
  size_t launch_count;
  output_fixup *fixups;
  size_t fixup_count;
  npu_hal_kernel **kernels;
  /* Per launch: the compiled subgraph it runs (.executable NULL: a kernel). */
  npu_compiled_subgraph *compiled;
  npu_subgraph_registry *registry;
  npu_precision precision;
  size_t *workspace_bytes;    /* per launch */
  size_t *workspace_offsets;  /* per launch, in the arena */
  npu_attribute_source *attribute_sources;
  npu_hal_mem_ref *refs;      /* the launches' input/output references */
  size_t ref_count;
  io_ref *io_refs;
  size_t io_ref_count;
  npu_buffer *arena, *constants; /* arena: held from shared_arena */
  npu_shared_arena *shared_arena;
  /* Partitioned plans: nodes the device's backend does not run go to the
   * host device (the CPU backend), which has its own arena and stream. */
  bool partitioned;
  bool *on_host;              /* per node */
  const bool *refused_by_device; /* per node: its kernel_create said NOT_SUPPORTED before */
  int64_t refused_node;       /* the node the device refused this time, or -1 */
  bool creating_on_host;      /* while a kernel is made: fused addends must be there */
  bool *launch_on_host;       /* per launch */
  uint8_t *host_arena;        /* host memory of the host device */
  npu_stream *host_stream;
  shadow *shadows;
  size_t shadow_count;
  segment *segments;
  size_t segment_count;
  int32_t *host_outputs;      /* graph outputs the host writes, copied out per run */
  size_t host_output_count;
  void **owned;               /* host values computed while planning */
  size_t owned_count;
  npu_context_stats stats;
  uint64_t memory_total;      /* the device's: no tensor may be larger */
  /* The model's large initializers: those every reader packed are dropped
   * from memory, the others pinned while the plan lives. */
  npu_weight_store *store;
  bool *launched;             /* per node: a launch of this plan runs it */
  uint32_t *packed;           /* per node: the inputs its launch packed (bit i: input i) */
  int32_t *pinned;            /* tensors whose data the plan reads while it runs */
  size_t pinned_count;
};

static bool own(shape_plan *ctx, void *data)
{
  void **grown = realloc(ctx->owned, (ctx->owned_count + 1) * sizeof *grown);
  if (!grown)
    return false;
  ctx->owned = grown;
  ctx->owned[ctx->owned_count++] = data;
  return true;
}

/* Of a planned tensor, whose size check_size() bounded. */
static size_t tensor_bytes(const npu_hal_tensor_desc *t)
{
  size_t bytes = 0;
  npu_dims_bytes(t->dims, t->rank, npu_dtype_size(t->dtype), &bytes);
  return bytes;
}

static const char *label_of(const npu_graph *g, uint32_t node, char *buffer, size_t size)
{
  const Onnx__NodeProto *p = g->nodes[node].proto;
  if (p->name && *p->name)
    snprintf(buffer, size, "node '%s' (%s)", p->name, p->op_type);
  else
    snprintf(buffer, size, "node #%u (%s)", node, p->op_type);
  return buffer;
}

/* Every tensor a plan holds fits in the device's memory, which also bounds
 * every element count, byte size and index the kernels compute from its
 * dimensions (npu_dims_elements bounds the product of the non-zero ones). */
static npu_status check_size(shape_plan *ctx, const npu_hal_tensor_desc *t, const char *what,
                             const char *name)
{
  size_t bytes;
  for (uint32_t d = 0; d < t->rank; d++)
    if (t->dims[d] < 0)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s '%s': dimension %lld on axis %u", what,
                           name, (long long)t->dims[d], d);
  if (!npu_dims_bytes(t->dims, t->rank, npu_dtype_size(t->dtype), &bytes))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s '%s': shape too large (its size overflows)",
                         what, name);
  if (bytes > ctx->memory_total)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "%s '%s': shape too large (%zu bytes, more "
                         "than the device's memory of %llu)", what, name, bytes,
                         (unsigned long long)ctx->memory_total);
  return NPU_OK;
}

/* ---- inputs of the profile ---------------------------------------------------- */

static npu_status bind_inputs(shape_plan *ctx, const npu_tensor_info *shapes, uint32_t count)
{
  const npu_graph *g = ctx->graph;
  if (shapes && count != g->input_count)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%u input shapes given, the model has %zu",
                         count, g->input_count);
  for (size_t i = 0; i < g->input_count; i++) {
    const npu_graph_tensor *gt = &g->tensors[g->inputs[i]];
    ctx_tensor *t = &ctx->tensors[g->inputs[i]];
    t->desc.dtype = gt->dtype;
    t->desc.rank = gt->rank;
    if (shapes && shapes[i].rank != gt->rank)
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "input '%s': rank %u given, the model "
                           "says %u", gt->name, shapes[i].rank, gt->rank);
    for (uint32_t d = 0; d < gt->rank; d++) {
      int64_t dim = shapes ? shapes[i].dims[d] : gt->dims[d];
      if (dim < 0 || (gt->dims[d] >= 0 && dim != gt->dims[d]))
        return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "input '%s' axis %u: %lld given, the "
                             "model needs %s%lld", gt->name, d, (long long)dim,
                             gt->dims[d] < 0 ? "a size, not " : "", (long long)gt->dims[d]);
      t->desc.dims[d] = dim;
    }
    if (check_size(ctx, &t->desc, "input", gt->name) != NPU_OK) { /* the caller's shape */
      char reason[300];
      snprintf(reason, sizeof reason, "%s", npu_last_error_message());
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s", reason);
    }
    t->known = true;
    t->location = LOC_INPUT;
    t->slot = (uint32_t)i;
  }
  return NPU_OK;
}

/* ---- planning a node ------------------------------------------------------------ */

typedef struct node_io {
  npu_hal_tensor_desc inputs[64], outputs[8];
  const void *values[64];
  const char *input_names[64];
  uint32_t input_count, output_count;
  npu_op_params params;
} node_io;

/* Computes a node whose inputs are all known now, on the host with the
 * CPU backend's kernels (which read and write host memory), whatever the
 * target device: folding never needs the target to run an operator, and
 * nothing goes to the device and back. The outputs stay as host values. */
static npu_status fold_node(shape_plan *ctx, npu_stream **host_stream, const npu_hal_op *op,
                            void **results)
{
  const npu_hal_backend *backend = npu_device_backend(ctx->host);
  npu_hal_op exact = *op; /* folded once: no reason to round */
  exact.precision = NPU_PRECISION_FP32;
  npu_hal_kernel *kernel;
  npu_status status = backend->graph->kernel_create(npu_device_hal(ctx->host), &exact, &kernel);
  if (status != NPU_OK)
    return status;
  npu_hal_mem_ref refs[72] = {{0}};
  for (uint32_t i = 0; i < op->input_count; i++)
    if (op->inputs[i].dtype != NPU_DTYPE_UNDEFINED)
      refs[i] = (npu_hal_mem_ref){NULL, (void *)op->input_values[i], 0};
  for (uint32_t o = 0; o < op->output_count && status == NPU_OK; o++) {
    size_t bytes = tensor_bytes(&op->outputs[o]);
    results[o] = malloc(bytes ? bytes : 1);
    if (!results[o] || !own(ctx, results[o])) {
      free(results[o]);
      status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory folding constants");
    }
    refs[op->input_count + o] = (npu_hal_mem_ref){NULL, results[o], 0};
  }
  size_t workspace_bytes = backend->graph->kernel_workspace
                               ? backend->graph->kernel_workspace(kernel)
                               : 0;
  void *workspace = workspace_bytes ? malloc(workspace_bytes) : NULL;
  if (status == NPU_OK && workspace_bytes && !workspace)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory folding constants");
  npu_hal_launch launch = {kernel, op->input_count, op->output_count, refs,
                           refs + op->input_count, {NULL, workspace, 0}};
  bool now = backend->graph->run_now != NULL; /* else on a stream, made with the first fold */
  if (status == NPU_OK && now)
    status = backend->graph->run_now(npu_device_hal(ctx->host), &launch, 1);
  if (status == NPU_OK && !now && !*host_stream)
    status = npu_stream_create(ctx->host, host_stream);
  if (status == NPU_OK && !now)
    status = backend->graph->run(npu_device_hal(ctx->host), npu_stream_hal(*host_stream), &launch,
                                 1, NULL, NULL);
  if (status == NPU_OK && !now)
    status = npu_stream_synchronize(*host_stream);
  free(workspace);
  backend->graph->kernel_destroy(kernel);
  return status;
}

/* Shape: the input's dims as an int64 constant (opset 15 adds start/end);
 * Size: their product, a scalar. Both are known once shapes are. */
static npu_status plan_shape(shape_plan *ctx, const npu_graph_node *n, const npu_hal_op *op)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (strcmp(op->op_type, "Size") == 0) {
    int64_t *count = malloc(sizeof *count);
    if (!count || !own(ctx, count)) {
      free(count);
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    *count = 1;
    for (uint32_t d = 0; d < x->rank; d++)
      *count *= x->dims[d];
    ctx_tensor *t = &ctx->tensors[n->outputs[0]];
    t->desc = (npu_hal_tensor_desc){NPU_DTYPE_INT64, 0, {0}};
    t->known = true;
    t->value = count;
    t->location = LOC_CONSTANT;
    return NPU_OK;
  }
  int64_t start = op->attributes.get_int(op->attributes.node, "start", 0);
  int64_t end = op->attributes.get_int(op->attributes.node, "end", x->rank);
  if (start < 0)
    start += x->rank;
  if (end < 0)
    end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < start ? start : end > x->rank ? x->rank : end;
  int64_t *dims = malloc(((size_t)(end - start) + 1) * sizeof *dims);
  if (!dims || !own(ctx, dims)) {
    free(dims);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  for (int64_t d = start; d < end; d++)
    dims[d - start] = x->dims[d];
  ctx_tensor *t = &ctx->tensors[n->outputs[0]];
  t->desc = (npu_hal_tensor_desc){NPU_DTYPE_INT64, 1, {end - start}};
  t->known = true;
  t->value = dims;
  t->location = LOC_CONSTANT;
  return NPU_OK;
}

static const void *constant_value(void *data, int32_t tensor)
{
  return ((shape_plan *)data)->tensors[tensor].value;
}

/* A constant of more than one value along `like`'s last axis, 1 on the others. */
static bool is_bias(const npu_hal_tensor_desc *a, const npu_hal_tensor_desc *like)
{
  size_t count;
  if (a->dtype != like->dtype || like->layout != NPU_HAL_LAYOUT_PLAIN || a->rank == 0 ||
      like->rank == 0 || a->rank > like->rank || !npu_dims_elements(a->dims, a->rank, &count))
    return false;
  return count > 1 && (int64_t)count == a->dims[a->rank - 1] &&
         a->dims[a->rank - 1] == like->dims[like->rank - 1];
}

/* Planning creates kernels in order: a tensor an earlier launch writes, or a
 * graph input, is there when this one runs; constants always are. */
static bool addend_ready(void *data, int32_t tensor, int32_t like)
{
  const shape_plan *ctx = data;
  const npu_hal_tensor_desc *a = &ctx->tensors[tensor].desc, *b = &ctx->tensors[like].desc;
  tensor_location where = ctx->tensors[tensor].location;
  if (where == LOC_CONSTANT)
    return is_bias(a, b);
  return (where == LOC_ARENA || where == LOC_INPUT) &&
         ctx->tensors[tensor].on_host == ctx->creating_on_host && a->dtype == b->dtype &&
         a->rank == b->rank && npu_hal_same_layout(a, b) &&
         memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}

/* Creates the node's kernel with the longest chain of following
 * elementwise nodes fused in that the backend accepts (the chain is
 * shortened until it does); *fusion says what it took (count 0: nothing). */
/* Where a node's kernel runs. */
static npu_device *node_device(const shape_plan *ctx, uint32_t node)
{
  return ctx->on_host[node] ? ctx->host : ctx->device;
}

static npu_status create_fused(shape_plan *ctx, uint32_t index, npu_hal_op *op,
                               npu_hal_kernel **kernel, npu_fusion *fusion)
{
  npu_device *device = node_device(ctx, index);
  const npu_hal_backend *backend = npu_device_backend(device);
  memset(fusion, 0, sizeof *fusion);
  npu_fusion_env env = {constant_value, addend_ready, ctx};
  npu_dtype type = op->output_count >= 1 ? op->outputs[0].dtype : NPU_DTYPE_UNDEFINED;
  if (type == NPU_DTYPE_FLOAT32 && ctx->graph->nodes[index].outputs[0] >= 0)
    npu_fusion_find(ctx->graph, &ctx->consumers, index, &env, fusion);
  else if ((type == NPU_DTYPE_UINT8 || type == NPU_DTYPE_INT8) &&
           ctx->graph->nodes[index].outputs[0] >= 0)
    npu_fusion_find_quantized(ctx->graph, &ctx->consumers, index, &env, fusion);
  for (; fusion->count; npu_fusion_truncate(fusion, fusion->count - 1)) {
    npu_hal_tensor_desc addends[NPU_HAL_MAX_ACTIVATIONS];
    for (uint32_t i = 0; i < fusion->fused_input_count; i++)
      addends[i] = ctx->tensors[fusion->fused_inputs[i]].desc;
    op->activations = fusion->activations;
    op->activation_count = fusion->count;
    op->fused_inputs = addends;
    op->fused_input_count = fusion->fused_input_count;
    npu_status status = backend->graph->kernel_create(npu_device_hal(device), op, kernel);
    op->activations = NULL;
    op->activation_count = 0;
    op->fused_inputs = NULL;
    op->fused_input_count = 0;
    if (status != NPU_ERROR_NOT_SUPPORTED)
      return status;
  }
  memset(fusion, 0, sizeof *fusion);
  return backend->graph->kernel_create(npu_device_hal(device), op, kernel);
}

/* The operator of node `index` over io (filled from the planned tensors). */
static npu_hal_op node_op(shape_plan *ctx, uint32_t index, node_io *io)
{
  const npu_graph *g = ctx->graph;
  const npu_graph_node *n = &g->nodes[index];
  io->input_count = n->input_count;
  io->output_count = n->output_count;
  for (uint32_t i = 0; i < n->input_count; i++) {
    const ctx_tensor *t = n->inputs[i] >= 0 ? &ctx->tensors[n->inputs[i]] : NULL;
    memset(&io->inputs[i], 0, sizeof io->inputs[i]);
    if (t && t->known)
      io->inputs[i] = t->desc;
    io->values[i] = t ? t->value : NULL;
    io->input_names[i] = t ? g->tensors[n->inputs[i]].name : "";
  }
  for (uint32_t o = 0; o < n->output_count; o++) {
    const ctx_tensor *t = n->outputs[o] >= 0 ? &ctx->tensors[n->outputs[o]] : NULL;
    memset(&io->outputs[o], 0, sizeof io->outputs[o]);
    if (t && t->known)
      io->outputs[o] = t->desc;
  }
  npu_attribute_source *source = &ctx->attribute_sources[index];
  source->node = n->proto;
  return (npu_hal_op){n->proto->op_type, g->opset, npu_attributes_of(source), n->input_count,
                      n->output_count, io->inputs, io->outputs, io->values,
                      .name = n->proto->name, .precision = ctx->precision};
}

/* The operator of a node whose shapes are planned, with its resolved
 * parameters (they resolved when its shapes were inferred). */
static npu_hal_op planned_op(shape_plan *ctx, uint32_t index, node_io *io)
{
  npu_hal_op op = node_op(ctx, index, io);
  npu_op_params_attach(ctx->graph->nodes[index].schema, &op, &io->params, "");
  return op;
}

static bool outputs_empty(const shape_plan *ctx, const npu_graph_node *n)
{
  for (uint32_t o = 0; o < n->output_count; o++)
    if (n->outputs[o] >= 0 && tensor_bytes(&ctx->tensors[n->outputs[o]].desc) != 0)
      return false;
  return n->output_count > 0;
}

/* The node's constant inputs in memory again where an earlier plan
 * dropped them (every reader had packed them). */
static npu_status read_back_inputs(shape_plan *ctx, uint32_t index)
{
  const npu_graph_node *n = &ctx->graph->nodes[index];
  npu_status status = NPU_OK;
  for (uint32_t i = 0; i < n->input_count && status == NPU_OK; i++)
    status = npu_weight_store_read_back(ctx->store, n->inputs[i]);
  return status;
}

/* First planning pass over a node: infers its output shapes, and computes
 * it right away when all its inputs are known (constant folding). *runs:
 * whether a kernel must run it at inference time. */
static npu_status infer_node(shape_plan *ctx, npu_stream **fold_stream, uint32_t index,
                             node_io *io, bool *runs)
{
  const npu_graph *g = ctx->graph;
  const npu_graph_node *n = &g->nodes[index];
  char label[200];
  label_of(g, index, label, sizeof label);
  *runs = false;
  if (n->input_count > 64 || n->output_count > 8)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: too many inputs or outputs", label);
  bool all_constant = true;
  for (uint32_t i = 0; i < n->input_count; i++) {
    if (n->inputs[i] < 0)
      continue;
    const ctx_tensor *t = &ctx->tensors[n->inputs[i]];
    if (!t->known)
      return npu_set_error(NPU_ERROR_INTERNAL, "%s: input %u has no shape", label, i);
    all_constant &= t->value != NULL;
  }
  npu_hal_op op = node_op(ctx, index, io);
  npu_status status = npu_op_validate(n->schema, &op, io->input_names, label);
  if (status == NPU_OK)
    status = npu_op_params_attach(n->schema, &op, &io->params, label);
  if (status != NPU_OK)
    return status;
  if (strcmp(op.op_type, "Shape") == 0 || strcmp(op.op_type, "Size") == 0)
    return plan_shape(ctx, n, &op);
  status = npu_infer_shapes(n->schema, &op, io->outputs, label);
  for (uint32_t o = 0; o < n->output_count && status == NPU_OK; o++) {
    if (n->outputs[o] < 0)
      continue;
    char what[240];
    snprintf(what, sizeof what, "%s: output", label);
    status = check_size(ctx, &io->outputs[o], what, ctx->graph->tensors[n->outputs[o]].name);
    ctx_tensor *t = &ctx->tensors[n->outputs[o]];
    t->desc = io->outputs[o];
    t->known = true;
  }
  if (status != NPU_OK)
    return status;
  if (outputs_empty(ctx, n)) { /* nothing to compute: no kernel sees an empty tensor out */
    for (uint32_t o = 0; o < n->output_count; o++)
      if (n->outputs[o] >= 0) {
        ctx->tensors[n->outputs[o]].value = "";
        ctx->tensors[n->outputs[o]].location = LOC_CONSTANT;
      }
    return NPU_OK;
  }
  if (!all_constant || n->input_count == 0) {
    *runs = true;
    return NPU_OK;
  }
  void *results[8] = {NULL};
  status = read_back_inputs(ctx, index);
  if (status == NPU_OK)
    status = fold_node(ctx, fold_stream, &op, results);
  if (status != NPU_OK) {
    char reason[400];
    snprintf(reason, sizeof reason, "%s", npu_last_error_message());
    /* (a kernel that failed as it ran named its node already) */
    bool named = strncmp(reason, label, strlen(label)) == 0;
    return npu_set_error(status, "%s%s%s", named ? "" : label, named ? "" : ": ", reason);
  }
  for (uint32_t o = 0; o < n->output_count; o++) {
    if (n->outputs[o] < 0)
      continue;
    ctx->tensors[n->outputs[o]].value = results[o];
    ctx->tensors[n->outputs[o]].location = LOC_CONSTANT;
  }
  ctx->stats.folded_nodes++;
  return NPU_OK;
}

/* Last planning pass over a node that runs: its kernel, with the
 * elementwise nodes after it fused in where the backend takes them. */
static npu_status create_kernel(shape_plan *ctx, uint32_t index, node_io *io,
                                npu_hal_kernel **kernel, npu_fusion *fusion)
{
  npu_hal_op op = planned_op(ctx, index, io);
  ctx->creating_on_host = ctx->on_host[index];
  npu_status status = create_fused(ctx, index, &op, kernel, fusion);
  if (status == NPU_ERROR_NOT_SUPPORTED && !ctx->on_host[index] && ctx->host != ctx->device)
    ctx->refused_node = index;
  if (status != NPU_OK) {
    char label[200], reason[400];
    label_of(ctx->graph, index, label, sizeof label);
    snprintf(reason, sizeof reason, "%s", npu_last_error_message());
    return npu_set_error(status, "%s: %s", label, reason);
  }
  for (uint32_t i = 0; i < fusion->absorbed_count; i++)
    ctx->absorbed[fusion->absorbed[i]] = true;
  ctx->stats.fused_nodes += fusion->absorbed_count;
  return NPU_OK;
}

/* ---- choosing layouts ---------------------------------------------------------- */

typedef struct layout_scope {
  shape_plan *ctx;
  const bool *runs;
  node_io *io;
} layout_scope;

static const npu_hal_tensor_desc *planned_activation(void *data, int32_t tensor)
{
  const shape_plan *ctx = ((layout_scope *)data)->ctx;
  const ctx_tensor *t = &ctx->tensors[tensor];
  for (size_t i = 0; i < ctx->graph->output_count; i++)
    if (ctx->graph->outputs[i] == tensor)
      return NULL; /* users read outputs plain */
  return t->known && !t->value && t->location == LOC_NONE ? &t->desc : NULL;
}

static bool node_runs(void *data, uint32_t node)
{
  return ((layout_scope *)data)->runs[node];
}

static void set_layout(npu_hal_tensor_desc *t, npu_layout layout)
{
  t->layout = layout.kind;
  t->block = layout.kind == NPU_HAL_LAYOUT_CHANNEL_BLOCKS ? layout.block : 0;
}

static bool backend_accepts(void *data, uint32_t node, const npu_layout *layouts)
{
  layout_scope *scope = data;
  shape_plan *ctx = scope->ctx;
  npu_device *device = node_device(ctx, node);
  const npu_hal_backend *backend = npu_device_backend(device);
  if (!backend->graph->layout_supported)
    return false;
  const npu_graph_node *n = &ctx->graph->nodes[node];
  npu_hal_op op = planned_op(ctx, node, scope->io);
  for (uint32_t i = 0; i < n->input_count; i++)
    if (n->inputs[i] >= 0)
      set_layout(&scope->io->inputs[i], layouts[n->inputs[i]]);
  for (uint32_t o = 0; o < n->output_count; o++)
    if (n->outputs[o] >= 0)
      set_layout(&scope->io->outputs[o], layouts[n->outputs[o]]);
  return backend->graph->layout_supported(npu_device_hal(device), &op);
}

static npu_layout backend_prefers(void *data, const npu_hal_tensor_desc *tensor)
{
  const shape_plan *ctx = ((layout_scope *)data)->ctx;
  const npu_hal_backend *backend = npu_device_backend(ctx->device);
  npu_layout layout = {NPU_HAL_LAYOUT_CHANNELS_LAST, 0};
  if (backend->graph->preferred_layout)
    layout.kind = backend->graph->preferred_layout(npu_device_hal(ctx->device), tensor,
                                                   &layout.block);
  return layout;
}

static npu_status choose_layouts(shape_plan *ctx, const bool *runs, node_io *io)
{
  const npu_graph *g = ctx->graph;
  npu_layout *layouts = malloc((g->tensor_count + 1) * sizeof *layouts);
  if (!layouts)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning layouts");
  layout_scope scope = {ctx, runs, io};
  npu_layout_query query = {g,         &ctx->consumers, planned_activation, node_runs,
                            backend_accepts, backend_prefers, &scope};
  npu_status status = npu_layout_plan(&query, layouts, &ctx->stats.relaid_tensors);
  for (size_t t = 0; t < g->tensor_count && status == NPU_OK; t++)
    set_layout(&ctx->tensors[t].desc, layouts[t]);
  free(layouts);
  return status;
}

/* ---- placing tensors --------------------------------------------------------------- */

static bool is_weight_candidate(const shape_plan *ctx, size_t i)
{
  const ctx_tensor *t = &ctx->tensors[i];
  return ctx->graph->tensors[i].constant && t->location == LOC_CONSTANT && t->used_on_device &&
         tensor_bytes(&t->desc) != 0;
}

/* The graph's constants that kernels read from the device live in the
 * context's shared copy: the first plan uploads those it reads, later plans
 * find them there (and keep any other in their own buffer). */
static npu_status place_weights(shape_plan *ctx)
{
  const npu_graph *g = ctx->graph;
  npu_device_weights *w = ctx->weights;
  if (!w->offsets) {
    size_t total = 0;
    w->offsets = malloc((g->tensor_count + 1) * sizeof *w->offsets);
    if (!w->offsets)
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory placing the weights");
    for (size_t i = 0; i < g->tensor_count; i++) {
      w->offsets[i] = NPU_WEIGHT_ABSENT;
      if (!is_weight_candidate(ctx, i))
        continue;
      w->offsets[i] = total;
      if (!npu_add_size(total, tensor_bytes(&ctx->tensors[i].desc), &total) ||
          !npu_add_size(total, ALIGNMENT - 1, &total))
        return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "the weights' sizes pass SIZE_MAX");
      total = total / ALIGNMENT * ALIGNMENT;
    }
    npu_status status = total ? npu_buffer_alloc(ctx->device, total, &w->buffer) : NPU_OK;
    for (size_t i = 0; i < g->tensor_count && status == NPU_OK; i++)
      if (w->offsets[i] != NPU_WEIGHT_ABSENT)
        status = npu_memcpy_h2d(w->buffer, w->offsets[i], ctx->tensors[i].value,
                                tensor_bytes(&ctx->tensors[i].desc));
    if (status != NPU_OK) {
      if (w->buffer)
        npu_buffer_release(w->buffer);
      free(w->offsets);
      *w = (npu_device_weights){0};
      return status;
    }
    w->bytes = total;
  }
  for (size_t i = 0; i < g->tensor_count; i++)
    if (is_weight_candidate(ctx, i) && w->offsets[i] != NPU_WEIGHT_ABSENT) {
      ctx->tensors[i].location = LOC_WEIGHT;
      ctx->tensors[i].offset = w->offsets[i];
    }
  return NPU_OK;
}

/* Folded constants (and weights the shared copy lacks): the plan's own. */
static npu_status place_constants(shape_plan *ctx)
{
  const npu_graph *g = ctx->graph;
  size_t total = 0;
  for (size_t i = 0; i < g->tensor_count; i++) {
    ctx_tensor *t = &ctx->tensors[i];
    if (t->location != LOC_CONSTANT || !t->used_on_device)
      continue;
    t->offset = total;
    if (!npu_add_size(total, tensor_bytes(&t->desc), &total) ||
        !npu_add_size(total, ALIGNMENT - 1, &total))
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "the constants' sizes pass SIZE_MAX");
    total = total / ALIGNMENT * ALIGNMENT;
  }
  ctx->stats.constant_bytes = ctx->weights->bytes + total;
  if (total == 0)
    return NPU_OK;
  npu_status status = npu_buffer_alloc(ctx->device, total, &ctx->constants);
  for (size_t i = 0; i < g->tensor_count && status == NPU_OK; i++) {
    ctx_tensor *t = &ctx->tensors[i];
    size_t bytes = tensor_bytes(&t->desc);
    if (t->location == LOC_CONSTANT && t->used_on_device && bytes)
      status = npu_memcpy_h2d(ctx->constants, t->offset, t->value, bytes);
  }
  return status;
}

/* Whether launch `l` writes its input unchanged: a reshaping operator, a
 * Pad of nothing, a Slice of all of every axis (Swin's window padding and
 * shifts are so at most sizes), Dropout at inference (output 0). */
static bool passes_input_through(shape_plan *ctx, size_t l, node_io *io)
{
  static const char *const reshaping[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                          "Identity"};
  uint32_t node = ctx->launch_nodes[l];
  const npu_graph_node *n = &ctx->graph->nodes[node];
  for (size_t i = 0; i < sizeof reshaping / sizeof reshaping[0]; i++)
    if (strcmp(n->proto->op_type, reshaping[i]) == 0)
      return n->output_count == 1;
  if (strcmp(n->proto->op_type, "Dropout") == 0)
    return true; /* (its kernel refuses training mode) */
  bool pad = strcmp(n->proto->op_type, "Pad") == 0;
  if (!pad && strcmp(n->proto->op_type, "Slice") != 0)
    return false;
  npu_hal_op op = planned_op(ctx, node, io);
  const npu_hal_tensor_desc *x = &op.inputs[0];
  const npu_hal_ranges *r = op.ranges;
  for (uint32_t d = 0; r && d < x->rank; d++) {
    bool whole = pad ? r->begin[d] == 0 && r->end[d] == 0
                     : (r->begin[d] == 0 && r->end[d] == x->dims[d] && r->step[d] == 1) ||
                           x->dims[d] == 1;
    if (!whole)
      return false;
  }
  return r != NULL;
}

/* The input of launch `l` whose memory its output takes (*from, *to: the
 * two tensors): one the launch passes through unchanged (its kernel then
 * finds nothing to copy: ShuffleNetV2's channel shuffles copied 6% of its
 * run so, Swin-T's empty window pads 10%), as a view (*view) where the
 * input lives on (PoolFormer's GroupNorm reshapes its residual stream,
 * which the residual Add reads after: 3% of its run copied so); or, where
 * the input dies there, one its backend's kernel may write over
 * (kernel_in_place_inputs: an elementwise step such as
 * squeeze-excitation's channel scale, which then writes where it reads),
 * unless a view shares its memory (`viewed`). */
static bool takes_input_memory(shape_plan *ctx, size_t l, node_io *io, const bool *viewed,
                               int32_t *from, int32_t *to, bool *view)
{
  uint32_t node = ctx->launch_nodes[l];
  const npu_graph_node *n = &ctx->graph->nodes[node];
  if (ctx->compiled[l].executable || n->input_count < 1 || n->output_count < 1)
    return false;
  bool through = n->inputs[0] >= 0 && passes_input_through(ctx, l, io);
  int32_t output = through ? n->outputs[0] : ctx->launch_outputs[l];
  if (output < 0)
    return false;
  uint32_t candidates = through ? 1 : 0;
  const npu_hal_graph_ops *ops = npu_device_backend(node_device(ctx, node))->graph;
  if (!through && ops->kernel_in_place_inputs && ctx->kernels[l])
    candidates = ops->kernel_in_place_inputs(ctx->kernels[l]);
  const ctx_tensor *y = &ctx->tensors[output];
  for (uint32_t i = 0; i < n->input_count && i < 32; i++) {
    if (!(candidates >> i & 1) || n->inputs[i] < 0)
      continue;
    const ctx_tensor *x = &ctx->tensors[n->inputs[i]];
    *view = through && (x->last_step > l || viewed[n->inputs[i]]);
    if (x->location == LOC_ARENA && y->location == LOC_ARENA && x->on_host == y->on_host &&
        (x->last_step == l || *view) && (*view || !viewed[n->inputs[i]]) &&
        y->first_step == l && tensor_bytes(&x->desc) == tensor_bytes(&y->desc) &&
        x->desc.layout == y->desc.layout && x->desc.block == y->desc.block) {
      *from = n->inputs[i];
      *to = output;
      return true;
    }
  }
  return false;
}

/* One device's arena: the tensors its kernels write, the copies it holds
 * of the other device's tensors, and its launches' workspaces (each for
 * that launch only). */
static npu_status plan_arena(shape_plan *ctx, bool on_host, size_t *arena_bytes)
{
  const npu_graph *g = ctx->graph;
  size_t count = g->tensor_count + ctx->launch_count + ctx->shadow_count;
  npu_plan_tensor *requests = calloc(count + 1, sizeof *requests);
  if (!requests)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  for (size_t i = 0; i < g->tensor_count; i++) {
    const ctx_tensor *t = &ctx->tensors[i];
    bool here = t->location == LOC_ARENA && t->on_host == on_host;
    requests[i] = (npu_plan_tensor){here ? tensor_bytes(&t->desc) : 0, t->first_step,
                                    t->last_step, NPU_PLAN_NO_SOURCE};
  }
  node_io *io = malloc(sizeof *io);
  if (!io) {
    free(requests);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  }
  /* viewed: a tensor sharing memory with a view (its source, the view, and
   * whatever those share memory with), which no kernel may write over. */
  bool *viewed = calloc(g->tensor_count + 1, sizeof *viewed);
  if (!viewed) {
    free(requests);
    free(io);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  }
  for (size_t l = 0; l < ctx->launch_count; l++) {
    int32_t from, to;
    bool view;
    if (takes_input_memory(ctx, l, io, viewed, &from, &to, &view) && requests[from].size) {
      requests[to].inplace_source = (uint32_t)from;
      requests[to].view = view;
      viewed[to] = view || viewed[from];
      viewed[from] |= view;
    }
  }
  free(viewed);
  free(io);
  npu_plan_tensor *workspaces = requests + g->tensor_count;
  for (size_t l = 0; l < ctx->launch_count; l++)
    workspaces[l] = (npu_plan_tensor){ctx->launch_on_host[l] == on_host ? ctx->workspace_bytes[l]
                                                                       : 0,
                                      (uint32_t)l, (uint32_t)l, NPU_PLAN_NO_SOURCE};
  npu_plan_tensor *copies = workspaces + ctx->launch_count;
  for (size_t c = 0; c < ctx->shadow_count; c++) {
    const shadow *copy = &ctx->shadows[c];
    copies[c] = (npu_plan_tensor){copy->on_host == on_host
                                      ? tensor_bytes(&ctx->tensors[copy->tensor].desc)
                                      : 0,
                                  copy->first_step, copy->last_step, NPU_PLAN_NO_SOURCE};
  }
  npu_memory_plan plan;
  npu_status status = npu_plan_memory(requests, count, ALIGNMENT, &plan);
  if (status == NPU_OK) {
    for (size_t i = 0; i < g->tensor_count; i++)
      if (requests[i].size)
        ctx->tensors[i].offset = plan.offsets[i];
    for (size_t l = 0; l < ctx->launch_count; l++)
      if (workspaces[l].size)
        ctx->workspace_offsets[l] = plan.offsets[g->tensor_count + l];
    for (size_t c = 0; c < ctx->shadow_count; c++)
      if (copies[c].size)
        ctx->shadows[c].offset = plan.offsets[g->tensor_count + ctx->launch_count + c];
    *arena_bytes = plan.arena_size;
    ctx->stats.arena_bytes += plan.arena_size;
    ctx->stats.naive_bytes += plan.naive_size;
    npu_memory_plan_clear(&plan);
  }
  free(requests);
  return status;
}

/* The shared arena where `bytes` fit in it, else a new buffer of `bytes`
 * that takes its place. (Not written through here: faulting a fresh
 * buffer in costs the same wherever it happens, 10 to 20 us of CPU a page
 * in a VM, and here it would be paid even by plans that never run.) */
static npu_status take_arena(shape_plan *ctx, size_t bytes)
{
  npu_shared_arena *shared = ctx->shared_arena;
  if (!shared->buffer || shared->bytes < bytes) {
    npu_buffer *larger;
    npu_status status = npu_buffer_alloc(ctx->device, bytes, &larger);
    if (status != NPU_OK)
      return status;
    if (shared->buffer)
      npu_buffer_release(shared->buffer);
    *shared = (npu_shared_arena){larger, bytes};
  }
  npu_buffer_retain(shared->buffer);
  ctx->arena = shared->buffer;
  return NPU_OK;
}

static npu_status place_intermediates(shape_plan *ctx)
{
  size_t device_bytes = 0, host_bytes = 0;
  npu_status status = plan_arena(ctx, false, &device_bytes);
  if (status == NPU_OK && device_bytes)
    status = take_arena(ctx, device_bytes);
  if (status == NPU_OK && ctx->partitioned)
    status = plan_arena(ctx, true, &host_bytes);
  if (status == NPU_OK && host_bytes)
    status = npu_host_alloc(ctx->host, host_bytes, (void **)&ctx->host_arena);
  return status;
}

static npu_hal_mem_ref ref_of(shape_plan *ctx, const ctx_tensor *t)
{
  /* Empty tensors may have no memory at all (nor the arena or constants). */
  if (t->location == LOC_ARENA && t->on_host)
    return tensor_bytes(&t->desc) ? (npu_hal_mem_ref){NULL, ctx->host_arena + t->offset, 0}
                                  : (npu_hal_mem_ref){NULL, NULL, 0};
  npu_buffer *home = t->location == LOC_ARENA ? ctx->arena : ctx->constants;
  switch (t->location) {
  case LOC_WEIGHT: return (npu_hal_mem_ref){npu_buffer_hal(ctx->weights->buffer), NULL, t->offset};
  case LOC_ARENA:
  case LOC_CONSTANT: /* a constant only packed kernels read has no device copy */
    return home && tensor_bytes(&t->desc) && (t->location == LOC_ARENA || t->used_on_device)
               ? (npu_hal_mem_ref){npu_buffer_hal(home), NULL, t->offset}
               : (npu_hal_mem_ref){NULL, NULL, 0};
  default: return (npu_hal_mem_ref){NULL, NULL, 0}; /* bound per run, or absent */
  }
}

/* Where a launch on the host (on_host) or the device finds tensor `t`:
 * host kernels read constants as the host values they are, and either
 * side reads the other's tensors from its copy. */
static npu_hal_mem_ref ref_on(shape_plan *ctx, const ctx_tensor *t, bool on_host)
{
  bool constant = t->location == LOC_CONSTANT || t->location == LOC_WEIGHT;
  if (on_host && constant)
    return tensor_bytes(&t->desc) ? (npu_hal_mem_ref){NULL, (void *)t->value, 0}
                                  : (npu_hal_mem_ref){NULL, NULL, 0};
  if (constant || t->location == LOC_NONE || t->on_host == on_host)
    return ref_of(ctx, t);
  const shadow *copy = &ctx->shadows[t->shadow];
  if (!tensor_bytes(&t->desc))
    return (npu_hal_mem_ref){NULL, NULL, 0};
  return on_host ? (npu_hal_mem_ref){NULL, ctx->host_arena + copy->offset, 0}
                 : (npu_hal_mem_ref){npu_buffer_hal(ctx->arena), NULL, copy->offset};
}

/* A reference to `t` for a launch on the host or the device, noted for
 * patching when the caller binds it where it is the caller's own buffer. */
static void bind_ref(shape_plan *ctx, const ctx_tensor *t, bool on_host, npu_hal_mem_ref *ref)
{
  *ref = ref_on(ctx, t, on_host);
  if ((t->location == LOC_INPUT || t->location == LOC_OUTPUT) && t->on_host == on_host)
    ctx->io_refs[ctx->io_ref_count++] = (io_ref){ref, t->slot, t->location == LOC_OUTPUT};
}

/* A device reference to `tensor` (see bind_ref). */
static void bind_device_ref(shape_plan *ctx, int32_t tensor, npu_hal_mem_ref *ref)
{
  bind_ref(ctx, &ctx->tensors[tensor], false, ref);
}

/* A compiled subgraph's launch: its inputs, then its constants (none for
 * those it packed), then its outputs, from `next` on; returns what follows. */
static npu_hal_mem_ref *compiled_launch_refs(shape_plan *ctx, const npu_compiled_subgraph *c,
                                             npu_hal_launch *launch, npu_hal_mem_ref *next)
{
  const npu_hal_subgraph *h = &c->graph.hal;
  const int32_t *tensors = c->graph.graph_tensors;
  launch->input_count = h->input_count + h->constant_count;
  launch->output_count = h->output_count;
  launch->inputs = next;
  launch->outputs = next + launch->input_count;
  for (uint32_t i = 0; i < h->input_count; i++)
    bind_device_ref(ctx, tensors[h->inputs[i]], &launch->inputs[i]);
  for (uint32_t i = 0; i < h->constant_count; i++)
    if (!c->packed_constants[i])
      bind_device_ref(ctx, tensors[h->constants[i]], &launch->inputs[h->input_count + i]);
  for (uint32_t o = 0; o < h->output_count; o++)
    bind_device_ref(ctx, tensors[h->outputs[o]], &launch->outputs[o]);
  return launch->outputs + launch->output_count;
}

/* Gives every launch its input/output references; caller buffers are
 * patched in at each run through io_refs. */
static npu_status build_launch_refs(shape_plan *ctx)
{
  const npu_graph *g = ctx->graph;
  size_t total = 0;
  for (size_t l = 0; l < ctx->launch_count; l++) {
    const npu_graph_node *n = &g->nodes[ctx->launch_nodes[l]];
    const npu_hal_subgraph *h = &ctx->compiled[l].graph.hal;
    total += ctx->compiled[l].executable
                 ? h->input_count + h->constant_count + h->output_count
                 : n->input_count + ctx->addends[l].count + n->output_count;
  }
  ctx->refs = calloc(total + 1, sizeof *ctx->refs);
  ctx->io_refs = calloc(total + 1, sizeof *ctx->io_refs);
  if (!ctx->refs || !ctx->io_refs)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  npu_hal_mem_ref *next = ctx->refs;
  for (size_t l = 0; l < ctx->launch_count; l++) {
    const npu_graph_node *n = &g->nodes[ctx->launch_nodes[l]];
    npu_hal_launch *launch = &ctx->launches[l];
    if (ctx->workspace_bytes[l])
      launch->workspace =
          ctx->launch_on_host[l]
              ? (npu_hal_mem_ref){NULL, ctx->host_arena + ctx->workspace_offsets[l], 0}
              : (npu_hal_mem_ref){npu_buffer_hal(ctx->arena), NULL, ctx->workspace_offsets[l]};
    if (ctx->compiled[l].executable) {
      next = compiled_launch_refs(ctx, &ctx->compiled[l], launch, next);
      continue;
    }
    const launch_addends *addends = &ctx->addends[l];
    launch->input_count = n->input_count + addends->count;
    launch->output_count = n->output_count;
    launch->inputs = next;
    next += launch->input_count;
    launch->outputs = next;
    next += n->output_count;
    bool on_host = ctx->launch_on_host[l];
    /* (an addend may be a graph output: a residual block's, say) */
    for (uint32_t i = 0; i < addends->count; i++)
      bind_ref(ctx, &ctx->tensors[addends->tensors[i]], on_host,
               &launch->inputs[n->input_count + i]);
    for (uint32_t k = 0; k < n->input_count + n->output_count; k++) {
      bool output = k >= n->input_count;
      int32_t id = !output ? n->inputs[k]
                   : k == n->input_count ? ctx->launch_outputs[l]
                                         : n->outputs[k - n->input_count];
      npu_hal_mem_ref *ref = output ? &launch->outputs[k - n->input_count] : &launch->inputs[k];
      if (id < 0)
        continue;
      bind_ref(ctx, &ctx->tensors[id], on_host, ref);
    }
  }
  return NPU_OK;
}

/* Graph outputs: where they come from. */
static npu_status bind_outputs(shape_plan *ctx)
{
  const npu_graph *g = ctx->graph;
  ctx->fixups = calloc(g->output_count + 1, sizeof *ctx->fixups);
  ctx->host_outputs = calloc(g->output_count + 1, sizeof *ctx->host_outputs);
  if (!ctx->fixups || !ctx->host_outputs)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  for (size_t i = 0; i < g->output_count; i++) {
    ctx_tensor *t = &ctx->tensors[g->outputs[i]];
    if (!t->known)
      return npu_set_error(NPU_ERROR_INTERNAL, "output '%s' was never computed",
                           g->tensors[g->outputs[i]].name);
    if (t->location == LOC_ARENA && t->on_host) { /* copied out after the last subgraph */
      t->last_step = (uint32_t)ctx->launch_count;
      ctx->host_outputs[ctx->host_output_count++] = (int32_t)i;
    } else if (t->location == LOC_ARENA) {
      t->location = LOC_OUTPUT;
      t->slot = (uint32_t)i;
    } else if (t->location == LOC_OUTPUT) {
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "the same tensor is listed as two outputs");
    } else {
      ctx->fixups[ctx->fixup_count++] = (output_fixup){(uint32_t)i, t};
    }
  }
  return NPU_OK;
}

/* `packed`: the inputs the kernel keeps its own copy of (no device copy). */
static npu_status read_across(shape_plan *ctx, int32_t tensor, uint32_t step)
{
  ctx_tensor *t = &ctx->tensors[tensor];
  if (t->shadow >= 0) {
    shadow *copy = &ctx->shadows[t->shadow];
    if (copy->last_step < step)
      copy->last_step = step;
    return NPU_OK;
  }
  shadow *grown = realloc(ctx->shadows, (ctx->shadow_count + 1) * sizeof *grown);
  if (!grown)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning transfers");
  ctx->shadows = grown;
  t->shadow = (int32_t)ctx->shadow_count;
  ctx->shadows[ctx->shadow_count++] = (shadow){tensor, !t->on_host, 0, step, step};
  return NPU_OK;
}

/* `packed`: the inputs the kernel keeps its own copy of (no device copy). */
static npu_status mark_uses(shape_plan *ctx, uint32_t node, uint32_t step, int32_t output0,
                            uint32_t packed, bool on_host)
{
  const npu_graph_node *n = &ctx->graph->nodes[node];
  npu_status status = NPU_OK;
  ctx->launched[node] = true;
  ctx->packed[node] = packed;
  for (uint32_t i = 0; i < n->input_count && status == NPU_OK; i++) {
    if (n->inputs[i] < 0)
      continue;
    ctx_tensor *t = &ctx->tensors[n->inputs[i]];
    if (t->location == LOC_CONSTANT && !on_host && !(i < 32 && (packed >> i) & 1))
      t->used_on_device = true;
    if (t->last_step < step)
      t->last_step = step;
    if ((t->location == LOC_ARENA || t->location == LOC_INPUT) && t->on_host != on_host)
      status = read_across(ctx, n->inputs[i], step);
  }
  for (uint32_t o = 0; o < n->output_count; o++) {
    int32_t id = o == 0 ? output0 : n->outputs[o];
    if (id < 0)
      continue;
    ctx_tensor *t = &ctx->tensors[id];
    t->location = LOC_ARENA;
    t->on_host = on_host;
    t->first_step = t->last_step = step;
  }
  return status;
}

/* Which running nodes the device's backend takes (it says so, and did not
 * refuse to create the kernel in an earlier try); the host runs the rest. */
static void assign_devices(shape_plan *ctx, const bool *runs, node_io *io)
{
  const npu_hal_backend *backend = npu_device_backend(ctx->device);
  if (ctx->host == ctx->device)
    return;
  const npu_graph *g = ctx->graph;
  for (size_t k = 0; k < g->node_count; k++) {
    uint32_t index = g->order[k];
    if (!runs[index])
      continue;
    npu_hal_op op = planned_op(ctx, index, io);
    ctx->on_host[index] =
        ctx->refused_by_device[index] ||
        (backend->graph->op_supported &&
         !backend->graph->op_supported(npu_device_hal(ctx->device), &op));
    ctx->partitioned |= ctx->on_host[index];
  }
}

/* Groups the launches into subgraphs (runs on one device); a copy is made
 * when the subgraph of its first reader starts, so it lives from there. */
static npu_status build_segments(shape_plan *ctx)
{
  ctx->segments = calloc(ctx->launch_count + 1, sizeof *ctx->segments);
  if (!ctx->segments)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning subgraphs");
  npu_status status = NPU_OK;
  for (uint32_t l = 0; l < ctx->launch_count; l++) {
    segment *last = ctx->segment_count ? &ctx->segments[ctx->segment_count - 1] : NULL;
    if (last && last->on_host == ctx->launch_on_host[l]) {
      last->count++;
      continue;
    }
    ctx->segments[ctx->segment_count++] = (segment){ctx->launch_on_host[l], l, 1, NULL, NULL};
    if (ctx->launch_on_host[l]) {
      segment *seg = &ctx->segments[ctx->segment_count - 1];
      if (status == NPU_OK)
        status = npu_event_create(ctx->device, NPU_EVENT_DISABLE_TIMING, &seg->ready);
      if (status == NPU_OK)
        status = npu_event_create(ctx->host, NPU_EVENT_DISABLE_TIMING, &seg->done);
    }
  }
  for (size_t c = 0; c < ctx->shadow_count; c++) {
    shadow *copy = &ctx->shadows[c];
    for (size_t k = 0; k < ctx->segment_count; k++) {
      const segment *seg = &ctx->segments[k];
      if (copy->first_step >= seg->first && copy->first_step < seg->first + seg->count)
        copy->first_step = seg->first;
    }
    ctx->stats.transfer_bytes += tensor_bytes(&ctx->tensors[copy->tensor].desc);
  }
  for (size_t i = 0; i < ctx->host_output_count; i++)
    ctx->stats.transfer_bytes +=
        tensor_bytes(&ctx->tensors[ctx->graph->outputs[ctx->host_outputs[i]]].desc);
  for (uint32_t l = 0; l < ctx->launch_count; l++)
    ctx->stats.host_kernels += ctx->launch_on_host[l];
  ctx->stats.subgraphs = (uint32_t)ctx->segment_count;
  if (status == NPU_OK && ctx->partitioned)
    status = npu_stream_create(ctx->host, &ctx->host_stream);
  return status;
}

/* Whether every node reading the graph constant `tensor` runs in a launch
 * of this plan that packed it (so far): no kernel reads its data again. */
static bool packed_by_every_reader(const shape_plan *ctx, int32_t tensor)
{
  const npu_graph *g = ctx->graph;
  if (npu_graph_is_output(g, tensor))
    return false; /* copied out at each run */
  for (uint32_t c = ctx->consumers.offsets[tensor]; c < ctx->consumers.offsets[tensor + 1]; c++) {
    uint32_t node = ctx->consumers.nodes[c];
    const npu_graph_node *n = &g->nodes[node];
    if (!ctx->launched[node])
      return false;
    for (uint32_t i = 0; i < n->input_count; i++)
      if (n->inputs[i] == tensor && (i >= 32 || !((ctx->packed[node] >> i) & 1)))
        return false;
  }
  return true;
}

/* The node's constant inputs that every reader has packed now leave memory
 * (the model's weights are then never held twice while planning). */
static void drop_packed_inputs(shape_plan *ctx, uint32_t index)
{
  const npu_graph_node *n = &ctx->graph->nodes[index];
  for (uint32_t i = 0; i < n->input_count; i++)
    if (npu_weight_store_droppable(ctx->store, n->inputs[i]) &&
        packed_by_every_reader(ctx, n->inputs[i]))
      npu_weight_store_drop(ctx->store, n->inputs[i]);
}

/* The droppable constants this plan reads while it runs: pinned in memory
 * (the others, packed by every reader, may go). */
static npu_status pin_unpacked_weights(shape_plan *ctx)
{
  const npu_graph *g = ctx->graph;
  ctx->pinned = malloc((g->tensor_count + 1) * sizeof *ctx->pinned);
  if (!ctx->pinned)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  for (size_t t = 0; t < g->tensor_count; t++) {
    if (!npu_weight_store_droppable(ctx->store, (int32_t)t))
      continue;
    if (packed_by_every_reader(ctx, (int32_t)t))
      npu_weight_store_drop(ctx->store, (int32_t)t);
    else
      ctx->pinned[ctx->pinned_count++] = (int32_t)t;
  }
  npu_weight_store_pin(ctx->store, ctx->pinned, ctx->pinned_count, true);
  return NPU_OK;
}

/* The node's kernel, made without reading back the inputs an earlier plan
 * dropped: a backend that finds its packing of them by their address (a
 * re-plan for another batch, mostly) reads none of them. Where it did read
 * one (it saw zeros), or failed, the kernel is made again on the values read
 * back; inputs it did not pack are read back for it to read while it runs. */
static npu_status create_kernel_on_dropped(shape_plan *ctx, uint32_t index, node_io *io,
                                           npu_hal_kernel **kernel, npu_fusion *fusion)
{
  const npu_graph_node *n = &ctx->graph->nodes[index];
  uint32_t dropped = 0;
  for (uint32_t i = 0; i < n->input_count && i < 32; i++)
    if (npu_weight_store_dropped(ctx->store, n->inputs[i]))
      dropped |= 1u << i;
  npu_status status = create_kernel(ctx, index, io, kernel, fusion);
  if (!dropped)
    return status;
  const npu_hal_graph_ops *graph = npu_device_backend(node_device(ctx, index))->graph;
  bool again = status != NPU_OK;
  for (uint32_t i = 0; i < n->input_count && i < 32 && !again; i++)
    again = (dropped >> i & 1) && npu_weight_store_read_while_dropped(ctx->store, n->inputs[i]);
  if (again && status == NPU_OK) {
    graph->kernel_destroy(*kernel);
    ctx->stats.fused_nodes -= fusion->absorbed_count;
  }
  uint32_t packed = !again && graph->kernel_packed_inputs ? graph->kernel_packed_inputs(*kernel)
                                                          : 0;
  npu_status read = NPU_OK;
  for (uint32_t i = 0; i < n->input_count && i < 32 && read == NPU_OK; i++)
    if ((dropped & ~packed) >> i & 1)
      read = npu_weight_store_read_back(ctx->store, n->inputs[i]);
  if (read != NPU_OK) {
    if (!again)
      graph->kernel_destroy(*kernel);
    return read;
  }
  return again ? create_kernel(ctx, index, io, kernel, fusion) : NPU_OK;
}

/* One kernel for node `index`, with what it fuses: the next launch. */
static npu_status add_kernel_launch(shape_plan *ctx, uint32_t index, node_io *io)
{
  npu_hal_kernel *kernel;
  npu_fusion fusion;
  npu_status status = create_kernel_on_dropped(ctx, index, io, &kernel, &fusion);
  if (status != NPU_OK)
    return status;
  uint32_t step = (uint32_t)ctx->launch_count++;
  bool on_host = ctx->on_host[index];
  const npu_hal_backend *backend = npu_device_backend(node_device(ctx, index));
  ctx->launch_on_host[step] = on_host;
  ctx->workspace_bytes[step] =
      backend->graph->kernel_workspace ? backend->graph->kernel_workspace(kernel) : 0;
  ctx->kernels[step] = kernel;
  ctx->launches[step].kernel = kernel;
  ctx->launch_nodes[step] = index;
  ctx->launch_outputs[step] = fusion.count ? fusion.output : ctx->graph->nodes[index].outputs[0];
  ctx->addends[step].count = fusion.fused_input_count;
  memcpy(ctx->addends[step].tensors, fusion.fused_inputs,
         fusion.fused_input_count * sizeof fusion.fused_inputs[0]);
  for (uint32_t i = 0; i < fusion.fused_input_count; i++) {
    ctx_tensor *addend = &ctx->tensors[fusion.fused_inputs[i]];
    if (addend->last_step < step)
      addend->last_step = step;
    addend->used_on_device |= addend->location == LOC_CONSTANT && !on_host;
  }
  uint32_t packed = backend->graph->kernel_packed_inputs
                        ? backend->graph->kernel_packed_inputs(kernel)
                        : 0;
  status = mark_uses(ctx, index, step, ctx->launch_outputs[step], packed, on_host);
  if (status == NPU_OK)
    drop_packed_inputs(ctx, index);
  return status;
}

static const npu_hal_tensor_desc *planned_tensor(void *data, int32_t tensor, const void **value)
{
  const ctx_tensor *t = &((shape_plan *)data)->tensors[tensor];
  *value = t->value;
  return &t->desc;
}

static npu_hal_attributes node_attributes(void *data, uint32_t node)
{
  shape_plan *ctx = data;
  npu_attribute_source *source = &ctx->attribute_sources[node];
  source->node = ctx->graph->nodes[node].proto;
  return npu_attributes_of(source);
}

/* The node's inputs (bit i: input i) that a compiled subgraph keeps its own copy of. */
static uint32_t packed_inputs(const npu_compiled_subgraph *compiled, uint32_t k)
{
  const npu_hal_subgraph *h = &compiled->graph.hal;
  const npu_hal_subgraph_node *n = &h->nodes[k];
  uint32_t packed = 0;
  for (uint32_t i = 0; i < n->op.input_count && i < 32; i++)
    for (uint32_t c = 0; c < h->constant_count; c++)
      if (compiled->packed_constants[c] && h->constants[c] == n->inputs[i])
        packed |= 1u << i;
  return packed;
}

/* The device's subgraph from order position `first` on (its consecutive
 * running nodes), compiled by the backend into one launch. Where the
 * backend refuses, its nodes are marked in `per_op` and get kernels. */
static npu_status add_compiled_launch(shape_plan *ctx, const bool *runs, size_t first,
                                      bool *per_op)
{
  const npu_graph *g = ctx->graph;
  uint32_t *nodes = malloc((g->node_count + 1) * sizeof *nodes);
  if (!nodes)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning a subgraph");
  uint32_t count = 0;
  for (size_t k = first; k < g->node_count; k++) {
    uint32_t index = g->order[k];
    if (!runs[index] || ctx->absorbed[index])
      continue;
    if (ctx->on_host[index])
      break;
    nodes[count++] = index;
  }
  npu_subgraph_source source = {g, &ctx->consumers, runs, planned_tensor, node_attributes,
                                ctx, ctx->precision};
  npu_subgraph subgraph;
  uint32_t step = (uint32_t)ctx->launch_count;
  npu_compiled_subgraph *compiled = &ctx->compiled[step];
  npu_status status = NPU_OK;
  for (uint32_t k = 0; k < count && status == NPU_OK; k++)
    status = read_back_inputs(ctx, nodes[k]);
  if (status == NPU_OK)
    status = npu_subgraph_describe(&source, nodes, count, &subgraph);
  if (status == NPU_OK)
    status = npu_subgraph_compile(ctx->registry, ctx->device, &subgraph, compiled);
  if (status == NPU_ERROR_NOT_SUPPORTED) {
    for (uint32_t k = 0; k < count; k++)
      per_op[nodes[k]] = true;
    free(nodes);
    return NPU_OK;
  }
  if (status != NPU_OK) {
    char reason[400];
    snprintf(reason, sizeof reason, "%s", npu_last_error_message());
    free(nodes);
    return npu_set_error(status, "compiling a subgraph of %u nodes: %s", count, reason);
  }
  ctx->launch_count++;
  ctx->launch_nodes[step] = nodes[0];
  ctx->workspace_bytes[step] = compiled->workspace;
  ctx->stats.compiled_subgraphs++;
  ctx->stats.compiled_nodes += count;
  for (uint32_t k = 0; k < count && status == NPU_OK; k++) {
    ctx->absorbed[nodes[k]] = true;
    status = mark_uses(ctx, nodes[k], step, g->nodes[nodes[k]].outputs[0],
                       packed_inputs(compiled, k), false);
  }
  for (uint32_t k = 0; k < count && status == NPU_OK; k++)
    drop_packed_inputs(ctx, nodes[k]);
  /* What only the subgraph reads is the executable's own. */
  const npu_hal_subgraph *h = &compiled->graph.hal;
  bool *boundary = calloc(h->tensor_count + 1, sizeof *boundary);
  if (!boundary && status == NPU_OK)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning a subgraph");
  for (uint32_t o = 0; o < h->output_count && status == NPU_OK; o++)
    boundary[h->outputs[o]] = true;
  for (uint32_t t = 0; t < h->tensor_count && status == NPU_OK; t++) {
    ctx_tensor *tensor = &ctx->tensors[compiled->graph.graph_tensors[t]];
    if (tensor->location == LOC_ARENA && tensor->first_step == step && !boundary[t])
      tensor->location = LOC_INTERNAL;
  }
  free(boundary);
  free(nodes);
  return status;
}

/* The plan's devices, each once (the target may be the host). */
static size_t plan_devices(const shape_plan *ctx, npu_device *devices[2])
{
  devices[0] = ctx->device;
  devices[1] = ctx->host;
  return ctx->host == ctx->device ? 1 : 2;
}

/* Backends that finish kernels in the background (npu_hal_graph_ops.
 * kernels_begin) do so while the plan creates the next ones; the plan waits
 * for them all once it has created them. */
static void begin_kernels(shape_plan *ctx)
{
  npu_device *devices[2];
  for (size_t d = 0; d < plan_devices(ctx, devices); d++) {
    const npu_hal_graph_ops *graph = npu_device_backend(devices[d])->graph;
    if (graph->kernels_begin)
      graph->kernels_begin(npu_device_hal(devices[d]));
  }
}

static npu_status finish_kernels(shape_plan *ctx)
{
  npu_status status = NPU_OK;
  npu_device *devices[2];
  for (size_t d = 0; d < plan_devices(ctx, devices); d++) {
    const npu_hal_graph_ops *graph = npu_device_backend(devices[d])->graph;
    npu_status ready = graph->kernels_ready ? graph->kernels_ready(npu_device_hal(devices[d]))
                                            : NPU_OK;
    if (status == NPU_OK && ready != NPU_OK)
      status = ready;
  }
  return status;
}

/* Wall clock and this thread's CPU time, in ms. */
typedef struct plan_clock {
  double wall_ms, cpu_ms;
} plan_clock;

static double clock_ms(clockid_t clock)
{
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static plan_clock plan_clock_now(void)
{
  return (plan_clock){clock_ms(CLOCK_MONOTONIC), clock_ms(CLOCK_THREAD_CPUTIME_ID)};
}

/* Ends `phase` (begun at *since) and begins the next one. */
static void end_phase(shape_plan *ctx, npu_plan_phase phase, plan_clock *since)
{
  plan_clock now = plan_clock_now();
  ctx->stats.plan_phase_ms[phase] += now.wall_ms - since->wall_ms;
  ctx->stats.plan_phase_cpu_ms[phase] += now.cpu_ms - since->cpu_ms;
  *since = now;
}

NPU_API const char *npu_plan_phase_name(npu_plan_phase phase)
{
  static const char *const names[NPU_PLAN_PHASE_COUNT] = {
      [NPU_PLAN_PHASE_SHAPES] = "shapes",   [NPU_PLAN_PHASE_LAYOUTS] = "layouts",
      [NPU_PLAN_PHASE_KERNELS] = "kernels", [NPU_PLAN_PHASE_MEMORY] = "memory",
      [NPU_PLAN_PHASE_COMPILE] = "compile"};
  return (unsigned)phase < NPU_PLAN_PHASE_COUNT ? names[phase] : NULL;
}

void npu_shape_plan_settle(shape_plan *ctx)
{
  npu_device *devices[2];
  for (size_t d = 0; d < plan_devices(ctx, devices); d++) {
    const npu_hal_graph_ops *graph = npu_device_backend(devices[d])->graph;
    if (graph->kernels_settle)
      graph->kernels_settle(npu_device_hal(devices[d]));
  }
}

static npu_status plan(shape_plan *ctx, const npu_tensor_info *shapes, uint32_t shape_count)
{
  plan_clock phase_start = plan_clock_now();
  const npu_graph *g = ctx->graph;
  for (size_t i = 0; i < g->tensor_count; i++)
    ctx->tensors[i].shadow = -1;
  for (size_t i = 0; i < g->tensor_count; i++) { /* initializers and Constant nodes */
    const npu_graph_tensor *gt = &g->tensors[i];
    if (!gt->constant)
      continue;
    ctx_tensor *t = &ctx->tensors[i];
    t->desc.dtype = gt->dtype;
    t->desc.rank = gt->rank;
    memcpy(t->desc.dims, gt->dims, sizeof t->desc.dims);
    t->known = true;
    t->value = gt->data ? gt->data : "";
    t->location = LOC_CONSTANT;
  }
  npu_status status = bind_inputs(ctx, shapes, shape_count);
  if (status == NPU_OK)
    status = npu_consumers_build(g, &ctx->consumers);
  if (status != NPU_OK)
    return status;
  npu_stream *fold_stream = NULL;
  node_io *io = malloc(sizeof *io);
  if (!io)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  bool *runs = calloc(g->node_count + 1, sizeof *runs);
  if (!runs)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  for (size_t k = 0; k < g->node_count && status == NPU_OK; k++) {
    uint32_t index = g->order[k];
    if (!g->nodes[index].folded)
      status = infer_node(ctx, &fold_stream, index, io, &runs[index]);
  }
  end_phase(ctx, NPU_PLAN_PHASE_SHAPES, &phase_start);
  if (status == NPU_OK) {
    assign_devices(ctx, runs, io);
    status = choose_layouts(ctx, runs, io);
  }
  end_phase(ctx, NPU_PLAN_PHASE_LAYOUTS, &phase_start);
  bool *per_op = calloc(g->node_count + 1, sizeof *per_op);
  if (!per_op)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  bool compiles = npu_device_backend(ctx->device)->graph->subgraph_compile != NULL;
  begin_kernels(ctx);
  for (size_t k = 0; k < g->node_count && status == NPU_OK; k++) {
    uint32_t index = g->order[k];
    if (!runs[index] || ctx->absorbed[index])
      continue;
    if (compiles && !ctx->on_host[index] && !per_op[index]) {
      status = add_compiled_launch(ctx, runs, k, per_op);
      if (status != NPU_OK || !per_op[index])
        continue;
    }
    status = add_kernel_launch(ctx, index, io);
  }
  end_phase(ctx, NPU_PLAN_PHASE_KERNELS, &phase_start);
  free(per_op);
  free(runs);
  free(io);
  if (fold_stream)
    npu_stream_destroy(fold_stream);
  ctx->stats.kernels = (uint32_t)ctx->launch_count - ctx->stats.compiled_subgraphs;
  if (status == NPU_OK)
    status = bind_outputs(ctx);
  if (status == NPU_OK)
    status = build_segments(ctx);
  if (status == NPU_OK)
    status = place_weights(ctx);
  if (status == NPU_OK)
    status = place_constants(ctx);
  if (status == NPU_OK)
    status = place_intermediates(ctx);
  if (status == NPU_OK)
    status = build_launch_refs(ctx);
  if (status == NPU_OK)
    status = pin_unpacked_weights(ctx);
  end_phase(ctx, NPU_PLAN_PHASE_MEMORY, &phase_start);
  /* Last, so that the backend's helpers compile while memory is planned
   * (nothing above runs a kernel). */
  npu_status ready = finish_kernels(ctx);
  end_phase(ctx, NPU_PLAN_PHASE_COMPILE, &phase_start);
  return status == NPU_OK ? ready : status;
}

/* ---- the plan's interface ---------------------------------------------------------- */

void npu_shape_plan_destroy(shape_plan *ctx)
{
  if (!ctx)
    return;
  npu_weight_store_pin(ctx->store, ctx->pinned, ctx->pinned_count, false);
  free(ctx->pinned);
  free(ctx->launched);
  free(ctx->packed);
  if (ctx->host_stream)
    npu_stream_destroy(ctx->host_stream);
  for (size_t l = 0; l < ctx->launch_count; l++) {
    if (ctx->compiled[l].executable)
      npu_compiled_subgraph_clear(ctx->registry, &ctx->compiled[l]);
    else
      npu_device_backend(ctx->launch_on_host[l] ? ctx->host : ctx->device)
          ->graph->kernel_destroy(ctx->kernels[l]);
  }
  for (size_t k = 0; k < ctx->segment_count; k++) {
    if (ctx->segments[k].ready)
      npu_event_destroy(ctx->segments[k].ready);
    if (ctx->segments[k].done)
      npu_event_destroy(ctx->segments[k].done);
  }
  if (ctx->host_arena)
    npu_host_free(ctx->host, ctx->host_arena);
  free(ctx->segments);
  free(ctx->shadows);
  free(ctx->host_outputs);
  free(ctx->on_host);
  free(ctx->launch_on_host);
  for (size_t i = 0; ctx->attribute_sources && i < ctx->graph->node_count; i++)
    npu_attribute_source_clear(&ctx->attribute_sources[i]);
  for (size_t i = 0; i < ctx->owned_count; i++)
    free(ctx->owned[i]);
  if (ctx->arena)
    npu_buffer_release(ctx->arena);
  if (ctx->constants)
    npu_buffer_release(ctx->constants);
  free(ctx->owned);
  free(ctx->fixups);
  free(ctx->refs);
  free(ctx->io_refs);
  free(ctx->attribute_sources);
  free(ctx->kernels);
  free(ctx->compiled);
  free(ctx->workspace_bytes);
  free(ctx->workspace_offsets);
  free(ctx->launch_nodes);
  free(ctx->launch_outputs);
  free(ctx->addends);
  free(ctx->absorbed);
  npu_consumers_clear(&ctx->consumers);
  free(ctx->launches);
  free(ctx->tensors);
  free(ctx);
}

/* One try at planning, with the nodes in `refused` on the host. */
static npu_status plan_with_refusals(const npu_plan_env *env, const npu_tensor_info *shapes,
                                     uint32_t shape_count, const bool *refused,
                                     int64_t *refused_node, shape_plan **out)
{
  *refused_node = -1;
  shape_plan *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning the model");
  ctx->refused_by_device = refused;
  ctx->refused_node = -1;
  ctx->device = env->device;
  ctx->host = env->host;
  ctx->graph = env->graph;
  ctx->weights = env->weights;
  ctx->registry = env->registry;
  ctx->shared_arena = env->arena;
  ctx->precision = env->precision;
  npu_device_properties properties;
  npu_device_properties_of(env->device, &properties);
  ctx->memory_total = properties.memory_total;
  size_t nodes = ctx->graph->node_count + 1, tensors = ctx->graph->tensor_count + 1;
  ctx->tensors = calloc(tensors, sizeof *ctx->tensors);
  ctx->launches = calloc(nodes, sizeof *ctx->launches);
  ctx->launch_nodes = calloc(nodes, sizeof *ctx->launch_nodes);
  ctx->launch_outputs = calloc(nodes, sizeof *ctx->launch_outputs);
  ctx->addends = calloc(nodes, sizeof *ctx->addends);
  ctx->absorbed = calloc(nodes, sizeof *ctx->absorbed);
  ctx->kernels = calloc(nodes, sizeof *ctx->kernels);
  ctx->compiled = calloc(nodes, sizeof *ctx->compiled);
  ctx->workspace_bytes = calloc(nodes, sizeof *ctx->workspace_bytes);
  ctx->workspace_offsets = calloc(nodes, sizeof *ctx->workspace_offsets);
  ctx->attribute_sources = calloc(nodes, sizeof *ctx->attribute_sources);
  ctx->on_host = calloc(nodes, sizeof *ctx->on_host);
  ctx->launch_on_host = calloc(nodes, sizeof *ctx->launch_on_host);
  ctx->launched = calloc(nodes, sizeof *ctx->launched);
  ctx->packed = calloc(nodes, sizeof *ctx->packed);
  ctx->store = env->store;
  npu_status status = NPU_OK;
  if (!ctx->tensors || !ctx->launches || !ctx->launch_nodes || !ctx->kernels || !ctx->compiled ||
      !ctx->workspace_bytes || !ctx->workspace_offsets || !ctx->launch_outputs ||
      !ctx->addends || !ctx->absorbed || !ctx->attribute_sources || !ctx->on_host ||
      !ctx->launch_on_host || !ctx->launched || !ctx->packed)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning the model");
  if (status == NPU_OK) {
    npu_weight_store_begin_planning(ctx->store);
    status = plan(ctx, shapes, shape_count);
    npu_weight_store_end_planning(ctx->store);
  }
  if (status != NPU_OK) {
    char reason[512];
    snprintf(reason, sizeof reason, "%s", npu_last_error_message());
    *refused_node = ctx->refused_node;
    npu_shape_plan_destroy(ctx);
    return npu_set_error(status, "%s", reason);
  }
  *out = ctx;
  return NPU_OK;
}

/* A backend may claim an operator and still refuse the kernel for its
 * shapes or attributes: that node then runs on the host, and the plan is
 * made again (once per refused node at most). */
npu_status npu_shape_plan_create(const npu_plan_env *env, const npu_tensor_info *shapes,
                                 uint32_t shape_count, shape_plan **out)
{
  bool *refused = calloc(env->graph->node_count + 1, sizeof *refused);
  if (!refused)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning the model");
  npu_status status;
  int64_t refused_node;
  while ((status = plan_with_refusals(env, shapes, shape_count, refused, &refused_node, out)) ==
             NPU_ERROR_NOT_SUPPORTED &&
         refused_node >= 0 && !refused[refused_node])
    refused[refused_node] = true;
  free(refused);
  if (status == NPU_OK)
    (*out)->refused_by_device = NULL; /* only planning reads it */
  return status;
}

bool npu_shape_plan_matches(const shape_plan *ctx, const npu_tensor_info *shapes,
                            uint32_t shape_count)
{
  const npu_graph *g = ctx->graph;
  if (shapes && shape_count != g->input_count)
    return false;
  for (size_t i = 0; i < g->input_count; i++) {
    const npu_hal_tensor_desc *d = &ctx->tensors[g->inputs[i]].desc;
    const int64_t *dims = shapes ? shapes[i].dims : g->tensors[g->inputs[i]].dims;
    if ((shapes && shapes[i].rank != d->rank) ||
        memcmp(dims, d->dims, d->rank * sizeof d->dims[0]) != 0)
      return false;
  }
  return true;
}

npu_status npu_shape_plan_describe(const shape_plan *ctx, bool input, uint32_t index,
                                   npu_tensor_info *info)
{
  size_t count = input ? ctx->graph->input_count : ctx->graph->output_count;
  if (!info || index >= count)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "context %s %u: info is NULL or there are "
                         "%zu", input ? "input" : "output", index, count);
  int32_t id = input ? ctx->graph->inputs[index] : ctx->graph->outputs[index];
  const ctx_tensor *t = &ctx->tensors[id];
  memset(info, 0, sizeof *info);
  info->name = ctx->graph->tensors[id].name;
  info->dtype = t->desc.dtype;
  info->rank = t->desc.rank;
  memcpy(info->dims, t->desc.dims, sizeof info->dims);
  return NPU_OK;
}

static npu_status check_binding(const shape_plan *ctx, npu_buffer *buffer, int32_t tensor,
                                const char *what, uint32_t index)
{
  npu_status status = npu_handle_check(buffer, NPU_HANDLE_BUFFER, what);
  if (status != NPU_OK)
    return status;
  size_t size;
  npu_device *device;
  npu_buffer_size(buffer, &size);
  npu_buffer_device(buffer, &device);
  size_t needed = tensor_bytes(&ctx->tensors[tensor].desc);
  if (device != ctx->device)
    return npu_set_error(NPU_ERROR_DEVICE_MISMATCH, "%s %u is on another device", what, index);
  if (size < needed)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s %u ('%s') holds %zu bytes, the tensor "
                         "needs %zu", what, index, ctx->graph->tensors[tensor].name, size, needed);
  return NPU_OK;
}

npu_status npu_shape_plan_check(const shape_plan *ctx, npu_buffer *const *inputs,
                                npu_buffer *const *outputs)
{
  const npu_graph *g = ctx->graph;
  if ((g->input_count && !inputs) || !outputs)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_context_run: inputs or outputs is NULL");
  npu_status status = NPU_OK;
  for (size_t i = 0; i < g->input_count && status == NPU_OK; i++)
    status = check_binding(ctx, inputs[i], g->inputs[i], "input", (uint32_t)i);
  for (size_t i = 0; i < g->output_count && status == NPU_OK; i++)
    status = check_binding(ctx, outputs[i], g->outputs[i], "output", (uint32_t)i);
  return status;
}

/* Copies a tensor to the other device before the subgraph of its first
 * reader there; the device's stream does every copy, in its order. */
static npu_status copy_across(shape_plan *ctx, const shadow *copy, npu_stream *stream,
                              npu_buffer *const *inputs, npu_buffer *const *outputs)
{
  const ctx_tensor *t = &ctx->tensors[copy->tensor];
  size_t bytes = tensor_bytes(&t->desc);
  if (!bytes)
    return NPU_OK;
  if (!copy->on_host)
    return npu_memcpy_h2d_async(ctx->arena, copy->offset, ctx->host_arena + t->offset, bytes,
                                stream);
  npu_buffer *source = t->location == LOC_INPUT    ? inputs[t->slot]
                       : t->location == LOC_OUTPUT ? outputs[t->slot]
                                                   : ctx->arena;
  return npu_memcpy_d2h_async(ctx->host_arena + copy->offset, source,
                              t->location == LOC_ARENA ? t->offset : 0, bytes, stream);
}

/* Queues launches [first, first + count) of one device: runs of kernels in
 * one call each, compiled subgraphs one by one. */
static npu_status run_launches(shape_plan *ctx, bool on_host, npu_stream *stream, uint32_t first,
                               uint32_t count)
{
  npu_device *device = on_host ? ctx->host : ctx->device;
  const npu_hal_graph_ops *ops = npu_device_backend(device)->graph;
  npu_status status = NPU_OK;
  uint32_t end = first + count;
  for (uint32_t l = first; l < end && status == NPU_OK;) {
    const npu_compiled_subgraph *c = &ctx->compiled[l];
    if (c->executable) {
      const npu_hal_launch *launch = &ctx->launches[l++];
      status = ops->executable_run(npu_device_hal(device), npu_stream_hal(stream), c->executable,
                                   launch->inputs, launch->inputs + c->graph.hal.input_count,
                                   launch->outputs, launch->workspace, NULL, NULL);
      continue;
    }
    uint32_t kernels = l;
    while (kernels < end && !ctx->compiled[kernels].executable)
      kernels++;
    status = ops->run(npu_device_hal(device), npu_stream_hal(stream), ctx->launches + l,
                      kernels - l, NULL, NULL);
    l = kernels;
  }
  return status;
}

/* A partitioned run: each host subgraph waits (on the host stream) for an
 * event the device's stream records after the copies it reads; the device's
 * stream waits for the host's last subgraph before reading its results. */
static npu_status queue_subgraphs(shape_plan *ctx, npu_stream *stream, npu_buffer *const *inputs,
                                  npu_buffer *const *outputs)
{
  npu_status status = NPU_OK;
  npu_event *host_done = NULL; /* host work the device's stream has not waited for */
  for (size_t k = 0; k < ctx->segment_count && status == NPU_OK; k++) {
    const segment *seg = &ctx->segments[k];
    if (!seg->on_host && host_done) {
      status = npu_stream_wait_event(stream, host_done);
      host_done = NULL;
    }
    for (size_t c = 0; c < ctx->shadow_count && status == NPU_OK; c++)
      if (ctx->shadows[c].on_host == seg->on_host && ctx->shadows[c].first_step == seg->first)
        status = copy_across(ctx, &ctx->shadows[c], stream, inputs, outputs);
    if (status != NPU_OK)
      break;
    if (!seg->on_host) {
      status = run_launches(ctx, false, stream, seg->first, seg->count);
      continue;
    }
    status = npu_event_record(seg->ready, stream);
    if (status == NPU_OK)
      status = npu_stream_wait_event(ctx->host_stream, seg->ready);
    if (status == NPU_OK)
      status = run_launches(ctx, true, ctx->host_stream, seg->first, seg->count);
    if (status == NPU_OK)
      status = npu_event_record(seg->done, ctx->host_stream);
    host_done = seg->done;
  }
  if (status == NPU_OK && host_done)
    status = npu_stream_wait_event(stream, host_done);
  for (size_t i = 0; i < ctx->host_output_count && status == NPU_OK; i++) {
    int32_t slot = ctx->host_outputs[i];
    const ctx_tensor *t = &ctx->tensors[ctx->graph->outputs[slot]];
    size_t bytes = tensor_bytes(&t->desc);
    if (bytes)
      status = npu_memcpy_h2d_async(outputs[slot], 0, ctx->host_arena + t->offset, bytes, stream);
  }
  return status;
}

npu_status npu_shape_plan_queue(shape_plan *ctx, npu_stream *stream, npu_buffer *const *inputs,
                                npu_buffer *const *outputs)
{
  npu_status status = NPU_OK;
  for (size_t i = 0; i < ctx->io_ref_count; i++) {
    const io_ref *r = &ctx->io_refs[i];
    npu_buffer *b = r->output ? outputs[r->slot] : inputs[r->slot];
    *r->ref = (npu_hal_mem_ref){npu_buffer_hal(b), NULL, 0};
  }
  for (size_t i = 0; i < ctx->fixup_count && status == NPU_OK; i++) {
    const output_fixup *f = &ctx->fixups[i];
    size_t bytes = tensor_bytes(&f->source->desc);
    if (!bytes)
      continue;
    status = f->source->location == LOC_INPUT
                 ? npu_memcpy_d2d_async(outputs[f->slot], 0, inputs[f->source->slot], 0, bytes,
                                        stream)
                 : npu_memcpy_h2d_async(outputs[f->slot], 0, f->source->value, bytes, stream);
  }
  if (status == NPU_OK && ctx->partitioned)
    return queue_subgraphs(ctx, stream, inputs, outputs);
  if (status == NPU_OK && ctx->launch_count)
    status = run_launches(ctx, false, stream, 0, (uint32_t)ctx->launch_count);
  return status;
}

const npu_context_stats *npu_shape_plan_stats(const shape_plan *ctx)
{
  return &ctx->stats;
}
