/* Load-time graph rewrites (see graph.h): done once per model, shared by
 * every context planned from it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fusion.h"
#include "graph.h"

static bool float_constant(const npu_graph *g, int32_t tensor, size_t count)
{
  size_t n;
  if (tensor < 0)
    return false;
  const npu_graph_tensor *t = &g->tensors[tensor];
  return t->constant && t->data && t->dtype == NPU_DTYPE_FLOAT32 &&
         npu_shape_elements(t->dims, t->rank, &n) && n == count;
}

static bool is_output(const npu_graph *g, int32_t tensor)
{
  for (size_t i = 0; i < g->output_count; i++)
    if (g->outputs[i] == tensor)
      return true;
  return false;
}

static float epsilon_of(const npu_graph_node *n)
{
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (n->proto->attribute[i]->name && strcmp(n->proto->attribute[i]->name, "epsilon") == 0)
      return n->proto->attribute[i]->f;
  return 1e-5f;
}

/* A new constant tensor holding `data` (owned by the graph). */
static int32_t add_constant(npu_graph *g, const char *name, float *data, const int64_t *dims,
                            uint32_t rank)
{
  npu_graph_tensor *grown = realloc(g->tensors, (g->tensor_count + 2) * sizeof *grown);
  if (!grown)
    return -1;
  g->tensors = grown;
  npu_graph_tensor *t = &g->tensors[g->tensor_count];
  memset(t, 0, sizeof *t);
  size_t count;
  npu_shape_elements(dims, rank, &count);
  *t = (npu_graph_tensor){.name = name, .dtype = NPU_DTYPE_FLOAT32, .has_shape = true,
                          .rank = rank, .constant = true, .data = data,
                          .data_size = count * sizeof(float), .producer = -1};
  memcpy(t->dims, dims, rank * sizeof *dims);
  return (int32_t)g->tensor_count++;
}

/* Conv (constant weights, optional constant bias) -> BatchNormalization
 * (constant parameters), the Conv's output read by nothing else:
 * W' = W * s, b' = (b - mean) * s + beta with s = gamma / sqrt(var + eps). */
static npu_status merge_batch_norm(npu_graph *g, uint32_t conv, uint32_t bn)
{
  npu_graph_node *c = &g->nodes[conv], *n = &g->nodes[bn];
  const npu_graph_tensor *w = &g->tensors[c->inputs[1]];
  int64_t channels = w->dims[0];
  size_t per_channel = w->data_size / sizeof(float) / (size_t)channels;
  const float *gamma = g->tensors[n->inputs[1]].data, *beta = g->tensors[n->inputs[2]].data;
  const float *mean = g->tensors[n->inputs[3]].data, *var = g->tensors[n->inputs[4]].data;
  const float *bias = c->input_count > 2 && c->inputs[2] >= 0 ? g->tensors[c->inputs[2]].data
                                                                : NULL;
  float *weights = malloc(w->data_size), *merged_bias = malloc((size_t)channels * sizeof(float));
  int32_t *inputs = realloc(c->inputs, 3 * sizeof *inputs);
  if (inputs)
    c->inputs = inputs;
  if (!weights || !merged_bias || !inputs || !npu_graph_own(g, weights)) {
    free(weights);
    free(merged_bias);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory merging a BatchNormalization");
  }
  if (!npu_graph_own(g, merged_bias)) {
    free(merged_bias);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory merging a BatchNormalization");
  }
  float epsilon = epsilon_of(n);
  const float *source = w->data;
  for (int64_t m = 0; m < channels; m++) {
    float s = gamma[m] / sqrtf(var[m] + epsilon);
    for (size_t k = 0; k < per_channel; k++)
      weights[(size_t)m * per_channel + k] = source[(size_t)m * per_channel + k] * s;
    merged_bias[m] = ((bias ? bias[m] : 0.0f) - mean[m]) * s + beta[m];
  }
  /* add_constant grows the tensor array: copy what is read from `w` first. */
  int64_t weight_dims[NPU_MAX_RANK], bias_dims[1] = {channels};
  uint32_t weight_rank = w->rank;
  const char *weight_name = w->name;
  memcpy(weight_dims, w->dims, weight_rank * sizeof *weight_dims);
  int32_t new_weights = add_constant(g, weight_name, weights, weight_dims, weight_rank);
  int32_t new_bias = new_weights < 0 ? -1 : add_constant(g, "merged_bias", merged_bias, bias_dims, 1);
  if (new_bias < 0)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory merging a BatchNormalization");
  c->inputs[1] = new_weights;
  c->inputs[2] = new_bias;
  c->input_count = 3;
  c->outputs[0] = n->outputs[0];
  g->tensors[n->outputs[0]].producer = (int32_t)conv;
  n->folded = true;
  return NPU_OK;
}

npu_status npu_graph_optimize(npu_graph *g)
{
  npu_consumers consumers;
  npu_status status = npu_consumers_build(g, &consumers);
  for (size_t i = 0; i < g->node_count && status == NPU_OK; i++) {
    npu_graph_node *c = &g->nodes[i];
    if (strcmp(c->proto->op_type, "Conv") != 0 || c->output_count != 1 || c->outputs[0] < 0)
      continue;
    int32_t out = c->outputs[0];
    if (is_output(g, out) || consumers.offsets[out + 1] - consumers.offsets[out] != 1)
      continue;
    uint32_t bn = consumers.nodes[consumers.offsets[out]];
    npu_graph_node *n = &g->nodes[bn];
    const npu_graph_tensor *w = &g->tensors[c->inputs[1]];
    if (strcmp(n->proto->op_type, "BatchNormalization") != 0 || n->output_count != 1 ||
        n->inputs[0] != out || !w->constant || !w->data || w->dtype != NPU_DTYPE_FLOAT32 ||
        w->rank < 3)
      continue;
    size_t channels = (size_t)w->dims[0];
    bool constants = true;
    for (uint32_t k = 1; k < 5; k++)
      constants &= float_constant(g, n->inputs[k], channels);
    if (c->input_count > 2 && c->inputs[2] >= 0)
      constants &= float_constant(g, c->inputs[2], channels);
    if (constants)
      status = merge_batch_norm(g, (uint32_t)i, bn);
  }
  npu_consumers_clear(&consumers);
  return status;
}
