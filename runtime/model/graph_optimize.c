/* Load-time graph rewrites (see graph.h): done once per model, shared by
 * every context planned from it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "einsum_rewrite.h"
#include "fusion.h"
#include "graph.h"
#include "matmul_rewrite.h"
#include "pad_rewrite.h"
#include "qdq_rewrite.h"

static float epsilon_of(const npu_graph_node *n)
{
  const Onnx__AttributeProto *a = npu_graph_attribute(n->proto, "epsilon");
  return a ? a->f : 1e-5f;
}

int32_t npu_graph_add_constant(npu_graph *g, const char *name, npu_dtype dtype, void *data,
                               const int64_t *dims, uint32_t rank)
{
  npu_graph_tensor *grown = realloc(g->tensors, (g->tensor_count + 2) * sizeof *grown);
  if (!grown)
    return -1;
  g->tensors = grown;
  npu_graph_tensor *t = &g->tensors[g->tensor_count];
  memset(t, 0, sizeof *t);
  size_t count = 0; /* (the dims of a weight or bias loaded already: valid) */
  npu_dims_elements(dims, rank, &count);
  *t = (npu_graph_tensor){.name = name, .dtype = dtype, .has_shape = true,
                          .rank = rank, .constant = true, .data = data,
                          .data_size = count * npu_dtype_size(dtype), .producer = -1};
  memcpy(t->dims, dims, rank * sizeof *dims);
  return (int32_t)g->tensor_count++;
}

/* Per-output-channel y = x * scale + shift that a follower of a Conv
 * applies, when it is one: BatchNormalization with constant statistics, or
 * Mul/Add/Sub/Div by a constant scalar or per-channel ([C], [C,1,1],
 * [1,C,1,1]) value. */
typedef struct channel_affine {
  float *scale, *shift; /* channels each */
} channel_affine;

/* The values of constant `tensor` when it is a float [channels] vector. */
static const float *channel_vector(const npu_graph *g, int32_t tensor, size_t channels)
{
  const npu_graph_tensor *t = tensor >= 0 ? &g->tensors[tensor] : NULL;
  return t && t->constant && t->data && t->dtype == NPU_DTYPE_FLOAT32 && t->rank == 1 &&
                 t->dims[0] == (int64_t)channels
             ? t->data
             : NULL;
}

/* The per-channel values of constant `tensor`, broadcast against an NC...
 * output of `rank` axes with `channels` channels; NULL when it is not one. */
static const float *channel_values(const npu_graph *g, int32_t tensor, size_t channels,
                                   uint32_t rank, bool *per_channel)
{
  size_t n;
  if (tensor < 0)
    return NULL;
  const npu_graph_tensor *t = &g->tensors[tensor];
  if (!t->constant || !t->data || t->dtype != NPU_DTYPE_FLOAT32 ||
      !npu_dims_elements(t->dims, t->rank, &n) || t->rank > rank)
    return NULL;
  *per_channel = n != 1;
  if (n == 1)
    return t->data;
  /* [C, 1...] aligned so that C lands on axis 1 of the output. */
  uint32_t axis = rank - t->rank;
  for (uint32_t d = 0; d < t->rank; d++) {
    int64_t want = axis + d == 1 ? (int64_t)channels : 1;
    if (t->dims[d] != want)
      return NULL;
  }
  return axis <= 1 && n == channels ? t->data : NULL;
}

static bool describe_affine(const npu_graph *g, const npu_graph_node *n, int32_t x,
                            size_t channels, uint32_t rank, channel_affine *a)
{
  const char *op = n->proto->op_type;
  if (strcmp(op, "BatchNormalization") == 0) {
    if (n->output_count != 1 || n->inputs[0] != x)
      return false;
    const float *stat[4];
    for (uint32_t k = 0; k < 4; k++)
      if (!(stat[k] = channel_vector(g, n->inputs[k + 1], channels)))
        return false;
    float epsilon = epsilon_of(n);
    for (size_t m = 0; m < channels; m++) {
      a->scale[m] = stat[0][m] / sqrtf(stat[3][m] + epsilon);
      a->shift[m] = stat[1][m] - stat[2][m] * a->scale[m];
    }
    return true;
  }
  bool mul = strcmp(op, "Mul") == 0, add = strcmp(op, "Add") == 0;
  bool sub = strcmp(op, "Sub") == 0, div = strcmp(op, "Div") == 0;
  if (!(mul || add || sub || div) || n->input_count != 2 || n->inputs[0] == n->inputs[1])
    return false;
  bool x_first = n->inputs[0] == x, per_channel;
  const float *k = channel_values(g, n->inputs[x_first ? 1 : 0], channels, rank, &per_channel);
  if (!k || (div && !x_first))
    return false; /* k / x is not affine */
  for (size_t m = 0; m < channels; m++) {
    float v = k[per_channel ? m : 0];
    if (div && v == 0)
      return false;
    a->scale[m] = mul ? v : div ? 1.0f / v : sub && !x_first ? -1.0f : 1.0f;
    a->shift[m] = add ? v : sub ? (x_first ? -v : v) : 0.0f;
  }
  return true;
}

/* Whether the Conv is the only reader of constant `tensor` (tensors made by
 * an earlier merge are past the consumer table and read by their Conv only). */
static bool only_this_conv_reads(const npu_graph *g, const npu_consumers *consumers,
                                 size_t known_tensors, int32_t tensor)
{
  return (size_t)tensor >= known_tensors ||
         (consumers->offsets[tensor + 1] - consumers->offsets[tensor] == 1 &&
          !npu_graph_is_output(g, tensor));
}

/* A float constant the Conv may rewrite: `tensor` itself when nothing else
 * reads it (its bytes belong to the loaded model: written in place, which
 * keeps one copy of the weights), else a fresh copy; -1 when out of memory. */
static int32_t writable_constant(npu_graph *g, const npu_consumers *consumers,
                                 size_t known_tensors, int32_t tensor, const char *name,
                                 const int64_t *dims, uint32_t rank)
{
  if (tensor >= 0 && only_this_conv_reads(g, consumers, known_tensors, tensor)) {
    g->tensors[tensor].rewritten = true;
    return tensor;
  }
  size_t count = 0; /* (a weight's or bias's dims: valid) */
  npu_dims_elements(dims, rank, &count);
  float *data = malloc(count * sizeof(float));
  if (!data || !npu_graph_own(g, data)) {
    free(data);
    return -1;
  }
  if (tensor >= 0)
    memcpy(data, g->tensors[tensor].data, count * sizeof(float));
  else
    memset(data, 0, count * sizeof(float));
  /* npu_graph_add_constant grows the tensor array: `dims` must not point into it. */
  return npu_graph_add_constant(g, name, NPU_DTYPE_FLOAT32, data, dims, rank);
}

/* The output channels of a Conv's or (one-group) ConvTranspose's weights:
 * W is [outer][channels][inner] (Conv: [M][C/g * k], ConvTranspose: [C][M * k]). */
typedef struct weight_channels {
  size_t outer, channels, inner;
} weight_channels;

static bool weight_channels_of(const npu_graph *g, const npu_graph_node *c, weight_channels *wc)
{
  const npu_graph_tensor *w = &g->tensors[c->inputs[1]];
  size_t count = w->data_size / sizeof(float);
  if (w->rank < 2 || w->dims[0] <= 0 || w->dims[1] <= 0)
    return false; /* (empty weights: nothing to fold into) */
  if (strcmp(c->proto->op_type, "Conv") == 0) {
    *wc = (weight_channels){1, (size_t)w->dims[0], count / (size_t)w->dims[0]};
    return true;
  }
  const Onnx__AttributeProto *group = npu_graph_attribute(c->proto, "group");
  if (strcmp(c->proto->op_type, "ConvTranspose") != 0 || (group && group->i != 1))
    return false;
  *wc = (weight_channels){(size_t)w->dims[0], (size_t)w->dims[1],
                          count / (size_t)w->dims[0] / (size_t)w->dims[1]};
  return true;
}

/* Conv or ConvTranspose (constant weights and bias) -> affine follower, the
 * Conv's output read by nothing else: W' = W * scale, b' = b * scale + shift
 * per output channel; the Conv then writes the follower's output. */
static npu_status merge_affine(npu_graph *g, const npu_consumers *consumers,
                               size_t known_tensors, uint32_t conv, uint32_t follower,
                               const channel_affine *a)
{
  int32_t *inputs = realloc(g->nodes[conv].inputs, 3 * sizeof *inputs);
  if (!inputs)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory merging into a Conv");
  g->nodes[conv].inputs = inputs;
  if (g->nodes[conv].input_count < 3)
    inputs[2] = -1;
  const npu_graph_tensor *w = &g->tensors[inputs[1]];
  weight_channels wc;
  weight_channels_of(g, &g->nodes[conv], &wc);
  int64_t weight_dims[NPU_MAX_RANK], bias_dims[1] = {(int64_t)wc.channels};
  uint32_t weight_rank = w->rank;
  const char *weight_name = w->name;
  memcpy(weight_dims, w->dims, weight_rank * sizeof *weight_dims);
  int32_t weights = writable_constant(g, consumers, known_tensors, inputs[1], weight_name,
                                      weight_dims, weight_rank);
  int32_t bias = weights < 0 ? -1
                             : writable_constant(g, consumers, known_tensors, inputs[2],
                                                 "merged_bias", bias_dims, 1);
  if (bias < 0)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory merging into a Conv");
  float *w_data = (float *)g->tensors[weights].data, *b_data = (float *)g->tensors[bias].data;
  for (size_t o = 0; o < wc.outer; o++)
    for (size_t m = 0; m < wc.channels; m++)
      for (size_t k = 0; k < wc.inner; k++)
        w_data[(o * wc.channels + m) * wc.inner + k] *= a->scale[m];
  for (size_t m = 0; m < wc.channels; m++)
    b_data[m] = b_data[m] * a->scale[m] + a->shift[m];
  npu_graph_node *c = &g->nodes[conv], *n = &g->nodes[follower];
  c->inputs[1] = weights;
  c->inputs[2] = bias;
  c->input_count = 3;
  c->outputs[0] = n->outputs[0];
  g->tensors[n->outputs[0]].producer = (int32_t)conv;
  n->folded = true;
  return NPU_OK;
}

/* The one node reading the Conv's output, if it merges into the Conv. */
static bool mergeable_follower(const npu_graph *g, const npu_consumers *consumers, uint32_t conv,
                               channel_affine *a, uint32_t *follower)
{
  const npu_graph_node *c = &g->nodes[conv];
  if (c->output_count != 1 || c->outputs[0] < 0 || c->input_count < 2 || c->inputs[1] < 0)
    return false;
  int32_t out = c->outputs[0];
  const npu_graph_tensor *w = &g->tensors[c->inputs[1]];
  weight_channels wc;
  if (npu_graph_is_output(g, out) || consumers->offsets[out + 1] - consumers->offsets[out] != 1 ||
      !w->constant || !w->data || w->dtype != NPU_DTYPE_FLOAT32 || w->rank < 3 ||
      !weight_channels_of(g, c, &wc))
    return false;
  size_t channels = wc.channels;
  if (c->input_count > 2 && c->inputs[2] >= 0 && !channel_vector(g, c->inputs[2], channels))
    return false;
  *follower = consumers->nodes[consumers->offsets[out]];
  const npu_graph_node *n = &g->nodes[*follower];
  return !n->folded && n->output_count == 1 && n->outputs[0] >= 0 &&
         describe_affine(g, n, out, channels, w->rank, a);
}

/* ---- a per-column scale merged into a MatMul's weights --------------------------- */

/* The constant operand of binary node `n` beside `x` when it is a float
 * vector along the last axis of `columns` elements (1 on every other axis,
 * at most `rank` axes); NULL otherwise. */
static const float *last_axis_vector(const npu_graph *g, const npu_graph_node *n, int32_t x,
                                     int64_t columns, uint32_t rank, int32_t *tensor)
{
  if (n->folded || n->input_count != 2 || n->output_count != 1 || n->outputs[0] < 0 ||
      n->inputs[0] == n->inputs[1])
    return NULL;
  *tensor = n->inputs[n->inputs[0] == x ? 1 : 0];
  const npu_graph_tensor *t = &g->tensors[*tensor];
  if (!t->constant || !t->data || t->dtype != NPU_DTYPE_FLOAT32 || !t->has_shape ||
      t->rank < 1 || t->rank > rank || t->dims[t->rank - 1] != columns ||
      t->data_size != (size_t)columns * sizeof(float))
    return NULL;
  return t->data;
}

/* MatMul by constant weights W [K, N], an optional constant bias Add along
 * the last axis, then Mul by a constant g along the last axis (a layer
 * scale): W' = W * g per column, bias' = bias * g; the Mul goes. */
static npu_status merge_column_scale(npu_graph *g, const npu_consumers *consumers,
                                     size_t known_tensors, uint32_t product, bool *merged)
{
  *merged = false;
  const npu_graph_node *p = &g->nodes[product];
  if (p->folded || strcmp(p->proto->op_type, "MatMul") != 0 || p->input_count != 2 ||
      p->output_count != 1 || p->inputs[1] < 0)
    return NPU_OK;
  const npu_graph_tensor *w = &g->tensors[p->inputs[1]];
  if (!w->constant || !w->data || w->dtype != NPU_DTYPE_FLOAT32 || w->rank != 2 ||
      w->data_size != (size_t)(w->dims[0] * w->dims[1]) * sizeof(float))
    return NPU_OK;
  int64_t rows = w->dims[0], columns = w->dims[1];
  int32_t last = (int32_t)product, bias = -1, scale_tensor;
  int32_t next = npu_consumers_only_reader(g, consumers, p->outputs[0]);
  if (next >= 0 && strcmp(g->nodes[next].proto->op_type, "Add") == 0 &&
      last_axis_vector(g, &g->nodes[next], p->outputs[0], columns, NPU_MAX_RANK, &bias)) {
    last = next;
    next = npu_consumers_only_reader(g, consumers, g->nodes[next].outputs[0]);
  }
  /* (the scale's rank at most the product's, 2 or more: the shape stays) */
  const float *scale = next >= 0 && strcmp(g->nodes[next].proto->op_type, "Mul") == 0
                           ? last_axis_vector(g, &g->nodes[next], g->nodes[last].outputs[0],
                                              columns, 2, &scale_tensor)
                           : NULL;
  if (!scale)
    return NPU_OK;
  int64_t weight_dims[2] = {rows, columns}, bias_dims[NPU_MAX_RANK];
  uint32_t bias_rank = bias >= 0 ? g->tensors[bias].rank : 0;
  if (bias >= 0)
    memcpy(bias_dims, g->tensors[bias].dims, bias_rank * sizeof *bias_dims);
  int32_t weights = writable_constant(g, consumers, known_tensors, p->inputs[1],
                                      g->tensors[p->inputs[1]].name, weight_dims, 2);
  int32_t scaled_bias = bias < 0 || weights < 0
                            ? bias
                            : writable_constant(g, consumers, known_tensors, bias,
                                                g->tensors[bias].name, bias_dims, bias_rank);
  if (weights < 0 || (bias >= 0 && scaled_bias < 0))
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory merging into a MatMul");
  float *w_data = (float *)g->tensors[weights].data;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t col = 0; col < columns; col++)
      w_data[r * columns + col] *= scale[col];
  g->nodes[product].inputs[1] = weights;
  if (bias >= 0) {
    float *b_data = (float *)g->tensors[scaled_bias].data;
    for (int64_t col = 0; col < columns; col++)
      b_data[col] *= scale[col];
    npu_graph_node *add = &g->nodes[last];
    add->inputs[add->inputs[0] == bias ? 0 : 1] = scaled_bias;
  }
  npu_graph_node *mul = &g->nodes[next];
  g->nodes[last].outputs[0] = mul->outputs[0];
  g->tensors[mul->outputs[0]].producer = last;
  mul->folded = true;
  *merged = true;
  return NPU_OK;
}

npu_status npu_graph_optimize(npu_graph *g)
{
  npu_status status = npu_graph_lower_einsums(g);
  if (status == NPU_OK)
    status = npu_graph_rewrite_qdq(g);
  if (status != NPU_OK)
    return status;
  npu_consumers consumers;
  status = npu_consumers_build(g, &consumers);
  size_t known_tensors = g->tensor_count;
  channel_affine a = {NULL, NULL};
  size_t most = 1;
  for (size_t t = 0; t < g->tensor_count; t++) { /* channels: a weight's dims[0] or dims[1] */
    const npu_graph_tensor *tensor = &g->tensors[t];
    /* at most its elements: the dims may be a graph output's declared shape, not the data's
     * (a 5 x 5 Constant declared 4294967297 x 5 asked for 16 GiB here) */
    size_t elements = npu_dtype_size(tensor->dtype) ? tensor->data_size / npu_dtype_size(tensor->dtype)
                                                    : 0;
    for (uint32_t d = 0; d < 2 && d < tensor->rank && tensor->data_size; d++) {
      size_t channels = tensor->dims[d] < (int64_t)elements ? (size_t)tensor->dims[d] : elements;
      most = channels > most ? channels : most;
    }
  }
  a.scale = malloc(most * sizeof(float)); /* (no more than the weight has elements) */
  a.shift = malloc(most * sizeof(float));
  if (status == NPU_OK && (!a.scale || !a.shift))
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory optimising the graph");
  for (size_t i = 0; i < g->node_count && status == NPU_OK; i++) {
    uint32_t follower;
    /* A chain (Conv, BN, Mul, Add...) merges one follower at a time; the
     * consumers of the Conv's new output are those of the follower's. */
    while (status == NPU_OK && mergeable_follower(g, &consumers, (uint32_t)i, &a, &follower))
      status = merge_affine(g, &consumers, known_tensors, (uint32_t)i, follower, &a);
  }
  if (status == NPU_OK)
    npu_graph_move_scales_past_matmuls(g, &consumers);
  if (status == NPU_OK)
    status = npu_graph_move_scales_before_transposes(g, &consumers);
  for (size_t i = 0; i < g->node_count && status == NPU_OK; i++) {
    bool merged = true;
    while (status == NPU_OK && merged)
      status = merge_column_scale(g, &consumers, known_tensors, (uint32_t)i, &merged);
  }
  if (status == NPU_OK) /* last: it leaves `consumers` behind */
    status = npu_graph_merge_pads(g, &consumers);
  free(a.scale);
  free(a.shift);
  npu_consumers_clear(&consumers);
  return status;
}
