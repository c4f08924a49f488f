/* The test-only compiling backend (compiling_backend.h). */
#include <stdlib.h>
#include <string.h>

#include "compiling_backend.h"
#include "cpu/cpu_internal.h"
#include "npu_checked.h"
#include "npu_hal_graph.h"

#define ALIGNMENT 64
#define PACK_MIN_BYTES 256 /* smaller constants stay the runtime's: both paths are tested */

compiling_backend_stats compiling_stats;
compiling_backend_settings compiling_settings;

/* The executable's own constant copies, shared with those reshaped from it. */
typedef struct packed_constants {
  int refs;
  uint32_t count;           /* the subgraph's constants */
  void **copies;            /* per constant: NULL when left to the runtime */
  size_t *bytes;
  const void **origins;     /* the host values they were copied from */
  npu_hal_tensor_desc *descs;
} packed_constants;

typedef enum { FROM_ABSENT, FROM_INPUT, FROM_CONSTANT, FROM_PACKED, FROM_OUTPUT, FROM_INTERNAL } source_kind;

/* Where a kernel's input or output is at run time. */
typedef struct ref_source {
  source_kind kind;
  uint32_t index;  /* boundary or constant index */
  size_t offset;   /* FROM_INTERNAL: in the workspace */
} ref_source;

struct npu_hal_executable {
  npu_hal_device *device;
  uint32_t kernel_count;
  npu_hal_kernel **kernels;
  npu_hal_launch *launches;
  npu_hal_mem_ref *refs;      /* every launch's inputs and outputs */
  ref_source *sources;        /* per ref */
  size_t *kernel_workspaces;  /* per kernel */
  size_t scratch_offset;      /* kernels' workspace, after the intermediates */
  size_t workspace;
  packed_constants *packed;
  /* The boundary's sizes, to check the runtime's workspace against it. */
  uint32_t input_count, output_count;
  size_t *input_bytes, *output_bytes;
};

static size_t desc_bytes(const npu_hal_tensor_desc *d)
{
  size_t bytes = 0;
  npu_dims_bytes(d->dims, d->rank, npu_dtype_size(d->dtype), &bytes);
  return bytes;
}

static bool same_desc(const npu_hal_tensor_desc *a, const npu_hal_tensor_desc *b)
{
  return a->dtype == b->dtype && a->rank == b->rank &&
         memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}

static void packed_release(packed_constants *p)
{
  if (!p || --p->refs > 0)
    return;
  for (uint32_t c = 0; c < p->count; c++) {
    compiling_stats.packed_bytes -= p->copies[c] ? p->bytes[c] : 0;
    free(p->copies[c]);
  }
  free(p->copies);
  free(p->bytes);
  free(p->origins);
  free(p->descs);
  free(p);
}

/* Copies the subgraph's larger constants: the executable's binary format. */
static npu_status pack_constants(const npu_hal_subgraph *graph, packed_constants **out)
{
  packed_constants *p = calloc(1, sizeof *p);
  uint32_t n = graph->constant_count;
  if (p) {
    p->refs = 1;
    p->count = n;
    p->copies = calloc(n + 1, sizeof *p->copies);
    p->bytes = calloc(n + 1, sizeof *p->bytes);
    p->origins = calloc(n + 1, sizeof *p->origins);
    p->descs = calloc(n + 1, sizeof *p->descs);
  }
  if (!p || !p->copies || !p->bytes || !p->origins || !p->descs) {
    packed_release(p);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "compiler: out of memory packing");
  }
  for (uint32_t c = 0; c < n; c++) {
    uint32_t t = graph->constants[c];
    const void *value = graph->values[t];
    compiling_stats.constants_without_value += value == NULL;
    p->origins[c] = value;
    p->descs[c] = graph->tensors[t];
    p->bytes[c] = desc_bytes(&graph->tensors[t]);
    if (!value || p->bytes[c] < PACK_MIN_BYTES)
      continue;
    p->copies[c] = malloc(p->bytes[c]);
    if (!p->copies[c]) {
      packed_release(p);
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "compiler: out of memory packing");
    }
    memcpy(p->copies[c], value, p->bytes[c]);
    compiling_stats.packed_bytes += p->bytes[c];
  }
  *out = p;
  return NPU_OK;
}

static void executable_destroy(npu_hal_executable *e)
{
  for (uint32_t k = 0; e->kernels && k < e->kernel_count; k++)
    if (e->kernels[k])
      npu_cpu_backend.graph->kernel_destroy(e->kernels[k]);
  packed_release(e->packed);
  free(e->kernels);
  free(e->launches);
  free(e->refs);
  free(e->sources);
  free(e->kernel_workspaces);
  free(e->input_bytes);
  free(e->output_bytes);
  free(e);
}

/* Where every tensor of the subgraph is: the boundary, a constant, or an
 * offset in the executable's private layout of its intermediates. */
static void lay_out(npu_hal_executable *e, const npu_hal_subgraph *graph, ref_source *where)
{
  for (uint32_t t = 0; t < graph->tensor_count; t++)
    where[t] = (ref_source){FROM_INTERNAL, 0, 0};
  for (uint32_t i = 0; i < graph->input_count; i++)
    where[graph->inputs[i]] = (ref_source){FROM_INPUT, i, 0};
  for (uint32_t o = 0; o < graph->output_count; o++)
    where[graph->outputs[o]] = (ref_source){FROM_OUTPUT, o, 0};
  for (uint32_t c = 0; c < graph->constant_count; c++)
    where[graph->constants[c]] =
        (ref_source){e->packed->copies[c] ? FROM_PACKED : FROM_CONSTANT, c, 0};
  size_t offset = 0;
  for (uint32_t t = 0; t < graph->tensor_count; t++)
    if (where[t].kind == FROM_INTERNAL) {
      where[t].offset = offset;
      offset += (desc_bytes(&graph->tensors[t]) + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }
  e->scratch_offset = offset;
}

/* One CPU kernel per node, reading the packed copies where there are some. */
static npu_status create_kernels(npu_hal_executable *e, const npu_hal_subgraph *graph,
                                 const ref_source *where)
{
  size_t scratch = 0;
  ref_source *next = e->sources;
  npu_hal_mem_ref *refs = e->refs;
  for (uint32_t k = 0; k < graph->node_count; k++) {
    const npu_hal_subgraph_node *node = &graph->nodes[k];
    npu_hal_op op = node->op;
    const void *values[72] = {NULL};
    for (uint32_t i = 0; i < op.input_count; i++) {
      uint32_t t = node->inputs[i];
      values[i] = t == NPU_HAL_SUBGRAPH_ABSENT ? NULL
                  : where[t].kind == FROM_PACKED ? e->packed->copies[where[t].index]
                                                 : op.input_values[i];
    }
    op.input_values = values;
    npu_status status = npu_cpu_backend.graph->kernel_create(e->device, &op, &e->kernels[k]);
    if (status != NPU_OK)
      return status;
    e->kernel_workspaces[k] = npu_cpu_backend.graph->kernel_workspace(e->kernels[k]);
    if (scratch < e->kernel_workspaces[k])
      scratch = e->kernel_workspaces[k];
    e->launches[k] = (npu_hal_launch){e->kernels[k], op.input_count, op.output_count, refs,
                                      refs + op.input_count, {NULL, NULL, 0}};
    for (uint32_t i = 0; i < op.input_count + op.output_count; i++) {
      uint32_t t = i < op.input_count ? node->inputs[i] : node->outputs[i - op.input_count];
      *next++ = t == NPU_HAL_SUBGRAPH_ABSENT ? (ref_source){FROM_ABSENT, 0, 0} : where[t];
    }
    refs += op.input_count + op.output_count;
  }
  e->workspace = e->scratch_offset + scratch;
  return NPU_OK;
}

static npu_status build(npu_hal_device *device, const npu_hal_subgraph *graph,
                        packed_constants *packed, npu_hal_executable **out)
{
  size_t refs = 0;
  for (uint32_t k = 0; k < graph->node_count; k++)
    refs += graph->nodes[k].op.input_count + graph->nodes[k].op.output_count;
  npu_hal_executable *e = calloc(1, sizeof *e);
  ref_source *where = calloc(graph->tensor_count + 1, sizeof *where);
  if (e) {
    e->device = device;
    e->packed = packed;
    e->kernel_count = graph->node_count;
    e->kernels = calloc(graph->node_count + 1, sizeof *e->kernels);
    e->launches = calloc(graph->node_count + 1, sizeof *e->launches);
    e->kernel_workspaces = calloc(graph->node_count + 1, sizeof *e->kernel_workspaces);
    e->refs = calloc(refs + 1, sizeof *e->refs);
    e->sources = calloc(refs + 1, sizeof *e->sources);
    e->input_count = graph->input_count;
    e->output_count = graph->output_count;
    e->input_bytes = calloc(graph->input_count + 1, sizeof *e->input_bytes);
    e->output_bytes = calloc(graph->output_count + 1, sizeof *e->output_bytes);
  } else {
    packed_release(packed);
  }
  npu_status status = NPU_OK;
  if (!e || !where || !e->kernels || !e->launches || !e->kernel_workspaces || !e->refs ||
      !e->sources || !e->input_bytes || !e->output_bytes)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "compiler: out of memory");
  if (status == NPU_OK) {
    for (uint32_t i = 0; i < graph->input_count; i++)
      e->input_bytes[i] = desc_bytes(&graph->tensors[graph->inputs[i]]);
    for (uint32_t o = 0; o < graph->output_count; o++)
      e->output_bytes[o] = desc_bytes(&graph->tensors[graph->outputs[o]]);
    lay_out(e, graph, where);
    status = create_kernels(e, graph, where);
  }
  free(where);
  if (status != NPU_OK) {
    if (e)
      executable_destroy(e);
    return status;
  }
  compiling_stats.nodes_compiled += graph->node_count;
  *out = e;
  return NPU_OK;
}

static npu_status subgraph_compile(npu_hal_device *device, const npu_hal_subgraph *graph,
                                   npu_hal_executable **out)
{
  if (compiling_settings.refuse) {
    compiling_stats.refusals++;
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "compiler: told to refuse");
  }
  packed_constants *packed = NULL;
  npu_status status = pack_constants(graph, &packed);
  if (status == NPU_OK)
    status = build(device, graph, packed, out);
  compiling_stats.compiles += status == NPU_OK;
  return status;
}

/* New kernels for the new shapes over the same packed copies, where every
 * copied constant is the same (weights are; a folded shape may not be). */
static npu_status executable_reshape(npu_hal_device *device, const npu_hal_executable *compiled,
                                     const npu_hal_subgraph *graph, npu_hal_executable **out)
{
  packed_constants *p = compiled->packed;
  bool same = !compiling_settings.no_reshape && p->count == graph->constant_count;
  for (uint32_t c = 0; same && c < p->count; c++) {
    uint32_t t = graph->constants[c];
    same = !p->copies[c] ||
           (p->origins[c] == graph->values[t] && same_desc(&p->descs[c], &graph->tensors[t]));
  }
  if (!same)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "compiler: the constants changed");
  for (uint32_t c = 0; c < graph->constant_count; c++)
    compiling_stats.constants_without_value += graph->values[graph->constants[c]] == NULL;
  p->refs++;
  npu_status status = build(device, graph, p, out);
  compiling_stats.reshapes += status == NPU_OK;
  return status;
}

static size_t executable_workspace(const npu_hal_executable *e)
{
  return e->workspace;
}

static bool executable_packed_constant(const npu_hal_executable *e, uint32_t constant)
{
  return e->packed->copies[constant] != NULL;
}

/* NULL for a reference to nothing (an absent or empty tensor). */
static void *ref_ptr(npu_hal_mem_ref ref)
{
  return ref.buffer || ref.host ? npu_cpu_mem_ref_ptr(ref) : NULL;
}

static npu_hal_mem_ref advanced(npu_hal_mem_ref ref, size_t offset)
{
  if (!ref.buffer && !ref.host)
    return ref;
  if (ref.buffer)
    ref.offset += offset;
  else
    ref.host = (uint8_t *)ref.host + offset;
  return ref;
}

static bool overlaps(npu_hal_mem_ref a, size_t a_bytes, npu_hal_mem_ref b, size_t b_bytes)
{
  const uint8_t *x = ref_ptr(a), *y = ref_ptr(b);
  return a_bytes && b_bytes && x && y && x < y + b_bytes && y < x + a_bytes;
}

/* The workspace is there and apart from every boundary tensor. */
static bool workspace_fits(const npu_hal_executable *e, const npu_hal_mem_ref *inputs,
                           const npu_hal_mem_ref *outputs, npu_hal_mem_ref workspace)
{
  if (e->workspace && !ref_ptr(workspace))
    return false;
  for (uint32_t i = 0; i < e->input_count; i++)
    if (overlaps(workspace, e->workspace, inputs[i], e->input_bytes[i]))
      return false;
  for (uint32_t o = 0; o < e->output_count; o++)
    if (overlaps(workspace, e->workspace, outputs[o], e->output_bytes[o]))
      return false;
  return true;
}

static npu_status executable_run(npu_hal_device *device, npu_hal_stream *stream,
                                 npu_hal_executable *e, const npu_hal_mem_ref *inputs,
                                 const npu_hal_mem_ref *constants, const npu_hal_mem_ref *outputs,
                                 npu_hal_mem_ref workspace, npu_hal_task_fn done, void *done_data)
{
  compiling_stats.runs++;
  compiling_stats.bad_workspaces += !workspace_fits(e, inputs, outputs, workspace);
  for (uint32_t c = 0; c < e->packed->count; c++)
    compiling_stats.bad_constants += e->packed->copies[c]
                                         ? constants[c].buffer || constants[c].host
                                         : e->packed->bytes[c] && !ref_ptr(constants[c]);
  size_t count = 0;
  for (uint32_t k = 0; k < e->kernel_count; k++) {
    npu_hal_launch *launch = &e->launches[k];
    for (uint32_t i = 0; i < launch->input_count + launch->output_count; i++, count++) {
      const ref_source *s = &e->sources[count];
      npu_hal_mem_ref *ref = &e->refs[count];
      switch (s->kind) {
      case FROM_ABSENT: *ref = (npu_hal_mem_ref){NULL, NULL, 0}; break;
      case FROM_INPUT: *ref = inputs[s->index]; break;
      case FROM_OUTPUT: *ref = outputs[s->index]; break;
      case FROM_CONSTANT: *ref = constants[s->index]; break;
      case FROM_PACKED: *ref = (npu_hal_mem_ref){NULL, e->packed->copies[s->index], 0}; break;
      case FROM_INTERNAL: *ref = advanced(workspace, s->offset); break;
      }
    }
    launch->workspace = e->kernel_workspaces[k] ? advanced(workspace, e->scratch_offset)
                                                : (npu_hal_mem_ref){NULL, NULL, 0};
  }
  /* One unit: every kernel in one queued run. */
  return npu_cpu_backend.graph->run(device, stream, e->launches, e->kernel_count, done,
                                    done_data);
}

static bool supported(npu_hal_device *device, const npu_hal_op *op)
{
  (void)device;
  for (const char *const *u = compiling_settings.unsupported; u && *u; u++)
    if (strcmp(op->op_type, *u) == 0)
      return false;
  return true;
}

static npu_hal_graph_ops compiling_graph;
static npu_hal_backend compiling_backend;

npu_status compiling_backend_add(const char *name)
{
  compiling_graph = *npu_cpu_backend.graph;
  compiling_graph.op_supported = supported;
  compiling_graph.subgraph_compile = subgraph_compile;
  compiling_graph.executable_reshape = executable_reshape;
  compiling_graph.executable_destroy = executable_destroy;
  compiling_graph.executable_workspace = executable_workspace;
  compiling_graph.executable_packed_constant = executable_packed_constant;
  compiling_graph.executable_run = executable_run;
  compiling_backend = npu_cpu_backend;
  compiling_backend.name = name;
  compiling_backend.graph = &compiling_graph;
  return npu_hal_backend_add(&compiling_backend);
}
