/* QDQ rewriting (see qdq_rewrite.h). For a Conv, the fp32 graph computes
 *   y = Q(act(conv(DQ(x_q), DQ(w_q)) + b))
 * and QLinearConv computes
 *   y = saturate(round((sum (x_q - x_zero)(w_q - w_zero) + b_q) * s) + y_zero),
 *   s = x_scale * w_scale[m] / y_scale, b_q = round(b / (x_scale * w_scale[m])):
 * the same real number up to float rounding and the bias's rounding (half
 * a step of x_scale * w_scale, a small fraction of y's step), so the two
 * agree within one quantisation step. An activation folds only where it is
 * exactly the saturation QLinearConv does anyway: Relu when y's zero point
 * is the type's lowest value, Clip when its bounds quantise at or beyond
 * the type's range. MatMul and Gemm are the same sum with the weights'
 * columns as output channels (QLinearMatMul, QLinearMatMulBias). The other
 * int8 operators compute the reference's float
 * arithmetic between the same roundings (QLinearAdd, QLinearConcat, the
 * table of QLinearLookup), or move 8-bit values whose parameters do not
 * change (MaxPool, Split, Concat), which quantising what was dequantised
 * with the same parameters gives back exactly. A chain of elementwise float
 * nodes between one DequantizeLinear and a QuantizeLinear is a function of
 * 256 input values: its table (QLinearLookup) is that arithmetic, done once. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fusion.h"
#include "qdq_rewrite.h"

static bool op_is(const npu_graph *g, int32_t node, const char *type)
{
  return node >= 0 && !g->nodes[node].folded &&
         strcmp(g->nodes[node].proto->op_type, type) == 0;
}

static bool is_output(const npu_graph *g, int32_t tensor)
{
  for (size_t i = 0; i < g->output_count; i++)
    if (g->outputs[i] == tensor)
      return true;
  return false;
}

/* The one node reading `tensor`, not a graph output; -1 otherwise. */
static int32_t only_reader(const npu_graph *g, const npu_consumers *c, int32_t tensor)
{
  if (tensor < 0 || is_output(g, tensor) || c->offsets[tensor + 1] - c->offsets[tensor] != 1)
    return -1;
  return (int32_t)c->nodes[c->offsets[tensor]];
}

/* The one node reading `tensor` besides Shape nodes (which read only its
 * shape, the same in 8 bits), not a graph output; -1 otherwise. */
static int32_t only_value_reader(const npu_graph *g, const npu_consumers *c, int32_t tensor)
{
  int32_t reader = -1;
  if (tensor < 0 || is_output(g, tensor))
    return -1;
  for (uint32_t k = c->offsets[tensor]; k < c->offsets[tensor + 1]; k++) {
    int32_t node = (int32_t)c->nodes[k];
    if (op_is(g, node, "Shape"))
      continue;
    if (reader >= 0)
      return -1;
    reader = node;
  }
  return reader;
}

static bool is_8bit(npu_dtype dtype)
{
  return dtype == NPU_DTYPE_INT8 || dtype == NPU_DTYPE_UINT8;
}

/* The elements of constant `tensor` when it has element type `dtype`
 * (NPU_DTYPE_UNDEFINED: either 8-bit type) and `count` elements (0: any). */
static const void *constant(const npu_graph *g, int32_t tensor, npu_dtype dtype, size_t count,
                            size_t *elements)
{
  if (tensor < 0)
    return NULL;
  const npu_graph_tensor *t = &g->tensors[tensor];
  size_t n = 0;
  bool typed = dtype == NPU_DTYPE_UNDEFINED ? is_8bit(t->dtype) : t->dtype == dtype;
  if (!t->constant || !t->data || !typed || !npu_dims_elements(t->dims, t->rank, &n) ||
      n * npu_dtype_size(t->dtype) != t->data_size || (count && n != count))
    return NULL;
  if (elements)
    *elements = n;
  return t->data;
}

static int32_t load_8bit(const void *data, size_t i, npu_dtype dtype)
{
  return dtype == NPU_DTYPE_INT8 ? ((const int8_t *)data)[i] : ((const uint8_t *)data)[i];
}

static int64_t int_attribute(const npu_graph_node *n, const char *name, int64_t fallback)
{
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (n->proto->attribute[i]->name && strcmp(n->proto->attribute[i]->name, name) == 0)
      return n->proto->attribute[i]->i;
  return fallback;
}

static float float_attribute(const npu_graph_node *n, const char *name, float fallback)
{
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (n->proto->attribute[i]->name && strcmp(n->proto->attribute[i]->name, name) == 0)
      return n->proto->attribute[i]->f;
  return fallback;
}

/* The parameters of a DequantizeLinear or QuantizeLinear node: constant
 * float scales and 8-bit zero points, one or one per index of `axis`. */
typedef struct quant_params {
  const float *scales;
  const void *zeros;
  npu_dtype zero_type;
  size_t count;
} quant_params;

/* `node`'s scale and zero point: `count` of them (0: 1 or dims[axis] of
 * input 0, where axis must be `along`). */
static bool read_params_along(const npu_graph *g, int32_t node, size_t count, int64_t along,
                              quant_params *p)
{
  const npu_graph_node *n = &g->nodes[node];
  if (n->input_count < 3 || n->inputs[2] < 0 || n->output_count != 1 || n->outputs[0] < 0)
    return false; /* (the zero point gives the 8-bit type) */
  p->scales = constant(g, n->inputs[1], NPU_DTYPE_FLOAT32, count, &p->count);
  p->zeros = constant(g, n->inputs[2], NPU_DTYPE_UNDEFINED, p->count, NULL);
  p->zero_type = g->tensors[n->inputs[2]].dtype;
  if (!p->scales || !p->zeros)
    return false;
  const npu_graph_tensor *x = &g->tensors[n->inputs[0]];
  int64_t axis = int_attribute(n, "axis", 1);
  axis = axis < 0 && x->has_shape ? axis + (int64_t)x->rank : axis;
  for (size_t i = 0; i < p->count; i++)
    if (!(p->scales[i] > 0) || !isfinite(p->scales[i]))
      return false;
  return p->count == 1 || (axis == along && x->has_shape && x->rank > (uint32_t)along &&
                           x->dims[along] == (int64_t)p->count);
}

/* read_params_along for parameters per tensor or along axis 0. */
static bool read_params(const npu_graph *g, int32_t node, size_t count, quant_params *p)
{
  return read_params_along(g, node, count, 0, p);
}

static bool same_params(const quant_params *a, const quant_params *b)
{
  return a->count == 1 && b->count == 1 && a->zero_type == b->zero_type &&
         a->scales[0] == b->scales[0] &&
         load_8bit(a->zeros, 0, a->zero_type) == load_8bit(b->zeros, 0, b->zero_type);
}

/* Whether `tensor` holds int32 zeros (a bias's zero points). */
static bool all_zero(const npu_graph *g, int32_t tensor)
{
  size_t n = 0;
  const int32_t *zeros = constant(g, tensor, NPU_DTYPE_INT32, 0, &n);
  for (size_t i = 0; zeros && i < n; i++)
    if (zeros[i])
      return false;
  return zeros != NULL;
}

/* The QuantizeLinear (per tensor) taking a node's output, through at most
 * one activation that its quantisation makes a saturation. */
typedef struct qdq_output {
  int32_t activation, quantize;
  quant_params y;
} qdq_output;

/* A Conv or ConvTranspose in the pattern, and the nodes around it;
 * `transposed`: a ConvTranspose, its weights [C, M/group, k...] with their
 * parameters along axis 1 (the same ones for each group's channels). */
typedef struct qdq_conv {
  int32_t conv, x_dequantize, w_dequantize, bias_dequantize;
  qdq_output out;
  quant_params x, w;
  int64_t out_channels;
  bool transposed;
} qdq_conv;

/* Whether quantising with `y` saturates whatever the activation does
 * (every int8 kernel saturates to the 8-bit range anyway). */
static bool activation_is_saturation(const npu_graph *g, const npu_graph_node *n,
                                     const quant_params *y)
{
  int32_t zero = load_8bit(y->zeros, 0, y->zero_type);
  int32_t lo = y->zero_type == NPU_DTYPE_INT8 ? -128 : 0;
  int32_t hi = y->zero_type == NPU_DTYPE_INT8 ? 127 : 255;
  float low = -INFINITY, high = INFINITY;
  if (strcmp(n->proto->op_type, "Relu") == 0) {
    low = 0;
  } else if (g->opset < 11) {
    low = float_attribute(n, "min", -INFINITY);
    high = float_attribute(n, "max", INFINITY);
  } else {
    for (uint32_t i = 1; i < 3 && i < n->input_count; i++) {
      if (n->inputs[i] < 0)
        continue;
      const float *bound = constant(g, n->inputs[i], NPU_DTYPE_FLOAT32, 1, NULL);
      if (!bound)
        return false;
      *(i == 1 ? &low : &high) = *bound;
    }
  }
  /* Quantised as QuantizeLinear does (rounded half to even), unsaturated. */
  return rintf(low / y->scales[0]) + (float)zero <= (float)lo &&
         rintf(high / y->scales[0]) + (float)zero >= (float)hi;
}

/* The QuantizeLinear after `node`, through at most one saturating activation. */
static bool match_output(const npu_graph *g, const npu_consumers *c, int32_t node,
                         qdq_output *m)
{
  if (g->nodes[node].output_count != 1)
    return false;
  int32_t next = only_reader(g, c, g->nodes[node].outputs[0]);
  m->activation = -1;
  if (op_is(g, next, "Relu") || op_is(g, next, "Clip")) {
    m->activation = next;
    next = g->nodes[next].output_count == 1 ? only_reader(g, c, g->nodes[next].outputs[0]) : -1;
  }
  if (!op_is(g, next, "QuantizeLinear") || !read_params(g, next, 1, &m->y))
    return false;
  m->quantize = next;
  return m->activation < 0 ||
         activation_is_saturation(g, &g->nodes[m->activation], &m->y);
}

/* The per-tensor DequantizeLinear producing input `input` of `node`, or -1. */
static int32_t dequantized_input(const npu_graph *g, int32_t node, uint32_t input,
                                 quant_params *p)
{
  const npu_graph_node *n = &g->nodes[node];
  int32_t tensor = input < n->input_count ? n->inputs[input] : -1;
  int32_t producer = tensor >= 0 ? g->tensors[tensor].producer : -1;
  return op_is(g, producer, "DequantizeLinear") && read_params(g, producer, 1, p) ? producer
                                                                                 : -1;
}

/* Whether `bias` is `channels` float constants or int32 ones dequantised
 * (per tensor or per channel, zero points 0); `dequantize`: the latter's
 * DequantizeLinear, else -1. */
static bool bias_matches(const npu_graph *g, int32_t bias, size_t channels, int32_t *dequantize)
{
  *dequantize = g->tensors[bias].producer;
  if (constant(g, bias, NPU_DTYPE_FLOAT32, channels, NULL)) {
    *dequantize = -1;
    return true;
  }
  if (!op_is(g, *dequantize, "DequantizeLinear"))
    return false;
  const npu_graph_node *d = &g->nodes[*dequantize];
  return d->input_count >= 2 && constant(g, d->inputs[0], NPU_DTYPE_INT32, channels, NULL) &&
         (constant(g, d->inputs[1], NPU_DTYPE_FLOAT32, 1, NULL) ||
          constant(g, d->inputs[1], NPU_DTYPE_FLOAT32, channels, NULL)) &&
         (d->input_count < 3 || d->inputs[2] < 0 || all_zero(g, d->inputs[2]));
}

static bool match(const npu_graph *g, const npu_consumers *c, int32_t conv, qdq_conv *m)
{
  const npu_graph_node *n = &g->nodes[conv];
  m->transposed = op_is(g, conv, "ConvTranspose");
  if ((!op_is(g, conv, "Conv") && !m->transposed) || n->input_count < 2 ||
      n->output_count != 1 || n->inputs[0] < 0 || n->inputs[1] < 0 || n->outputs[0] < 0)
    return false;
  int64_t axis = m->transposed ? 1 : 0;
  m->conv = conv;
  m->x_dequantize = g->tensors[n->inputs[0]].producer;
  m->w_dequantize = g->tensors[n->inputs[1]].producer;
  if (!op_is(g, m->x_dequantize, "DequantizeLinear") ||
      !op_is(g, m->w_dequantize, "DequantizeLinear") ||
      !read_params(g, m->x_dequantize, 1, &m->x) ||
      !read_params_along(g, m->w_dequantize, 0, axis, &m->w))
    return false;
  const npu_graph_tensor *w = &g->tensors[g->nodes[m->w_dequantize].inputs[0]];
  if (!constant(g, g->nodes[m->w_dequantize].inputs[0], m->w.zero_type, 0, NULL) ||
      w->rank < 3 || w->dims[axis] <= 0)
    return false;
  int64_t group = m->transposed ? int_attribute(n, "group", 1) : 1;
  if (group < 1)
    return false;
  m->out_channels = w->dims[axis] * group;
  /* The bias: none, float constants, or dequantised int32 constants. */
  int32_t bias = n->input_count > 2 ? n->inputs[2] : -1;
  m->bias_dequantize = -1;
  return (bias < 0 || bias_matches(g, bias, (size_t)m->out_channels, &m->bias_dequantize)) &&
         match_output(g, c, conv, &m->out);
}

/* Bias value `channel` as a float: a constant, or an int32 one dequantised
 * (by `dequantize`). */
static float bias_value(const npu_graph *g, int32_t bias, int32_t dequantize, size_t channel)
{
  if (dequantize < 0 || g->tensors[bias].constant)
    return ((const float *)g->tensors[bias].data)[channel];
  const npu_graph_node *d = &g->nodes[dequantize];
  int32_t q = ((const int32_t *)g->tensors[d->inputs[0]].data)[channel];
  const npu_graph_tensor *scales = &g->tensors[d->inputs[1]];
  bool per_channel = scales->data_size > sizeof(float);
  return (float)q * ((const float *)scales->data)[per_channel ? channel : 0];
}

/* The int32 bias (of `channels` values) at scale x_scale * w_scale[m] (as
 * ONNX Runtime's quantiser makes it; a grouped ConvTranspose's weight scales
 * repeat per group); -1 where a value does not fit, -2 out of memory. */
static int32_t quantised_bias(npu_graph *g, int32_t bias, int32_t dequantize,
                              const quant_params *x, const quant_params *w, size_t channels)
{
  int32_t *values = malloc(channels * sizeof *values);
  if (!values || !npu_graph_own(g, values)) {
    free(values);
    return -2;
  }
  for (size_t i = 0; i < channels; i++) {
    double scale = (double)x->scales[0] * w->scales[w->count > 1 ? i % w->count : 0];
    double q = nearbyint((double)bias_value(g, bias, dequantize, i) / scale);
    if (!(q >= INT32_MIN && q <= INT32_MAX))
      return -1;
    values[i] = (int32_t)q;
  }
  int64_t dims[1] = {(int64_t)channels};
  int32_t tensor = npu_graph_add_constant(g, "qdq_bias", NPU_DTYPE_INT32, values, dims, 1);
  return tensor < 0 ? -2 : tensor;
}

/* `node` becomes `op_type` (of `domain`, NULL: ONNX's) on `inputs`, keeping
 * its attributes, and writes the output of `out`'s QuantizeLinear, which is
 * folded with the activation (unless it is `node`). */
static npu_status become(npu_graph *g, int32_t node, const char *domain, const char *op_type,
                         const int32_t *inputs, uint32_t input_count, const qdq_output *out)
{
  Onnx__NodeProto *proto = malloc(sizeof *proto);
  int32_t *copy = malloc(input_count * sizeof *copy);
  if (!proto || !copy || !npu_graph_own(g, proto)) {
    free(proto);
    free(copy);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory rewriting a QDQ %s",
                         g->nodes[node].proto->op_type);
  }
  npu_graph_node *n = &g->nodes[node];
  *proto = *n->proto;
  proto->op_type = (char *)op_type;
  proto->domain = (char *)(domain ? domain : "");
  memcpy(copy, inputs, input_count * sizeof *copy);
  free(n->inputs);
  n->inputs = copy;
  n->input_count = input_count;
  n->proto = proto;
  n->schema = npu_op_schema_find(domain, op_type);
  if (out->quantize == node)
    return NPU_OK;
  int32_t y = g->nodes[out->quantize].outputs[0];
  g->tensors[n->outputs[0]].producer = -1;
  n->outputs[0] = y;
  g->tensors[y].producer = node;
  g->nodes[out->quantize].folded = true;
  if (out->activation >= 0)
    g->nodes[out->activation].folded = true;
  return NPU_OK;
}

/* The Conv becomes a QLinearConv writing the QuantizeLinear's output, a
 * ConvTranspose our QLinearConvTranspose (the same inputs). */
static npu_status rewrite_conv(npu_graph *g, const qdq_conv *m)
{
  int32_t bias = -1;
  if (g->nodes[m->conv].input_count > 2 && g->nodes[m->conv].inputs[2] >= 0) {
    bias = quantised_bias(g, g->nodes[m->conv].inputs[2], m->bias_dequantize, &m->x, &m->w,
                          (size_t)m->out_channels);
    if (bias == -1)
      return NPU_OK; /* the Conv stays in float */
    if (bias == -2)
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory rewriting a QDQ Conv");
  }
  const npu_graph_node *x = &g->nodes[m->x_dequantize], *w = &g->nodes[m->w_dequantize];
  const npu_graph_node *q = &g->nodes[m->out.quantize];
  /* Conv's attributes are QLinearConv's (kernel_shape, pads, strides...),
   * ConvTranspose's QLinearConvTranspose's (and output_padding, output_shape). */
  int32_t inputs[9] = {x->inputs[0], x->inputs[1], x->inputs[2], w->inputs[0], w->inputs[1],
                       w->inputs[2], q->inputs[1], q->inputs[2], bias};
  return m->transposed ? become(g, m->conv, "ai.gst-npu", "QLinearConvTranspose", inputs,
                                bias >= 0 ? 9 : 8, &m->out)
                       : become(g, m->conv, NULL, "QLinearConv", inputs, bias >= 0 ? 9 : 8,
                                &m->out);
}

/* A MatMul or Gemm in the pattern: DQ(x) times DQ(constant 2-D weights,
 * per tensor or per output column), a bias (Gemm's C or a following Add of
 * one constant per column), then as a Conv's output. */
typedef struct qdq_matmul {
  int32_t node, x_dequantize, w_dequantize;
  int32_t bias, bias_dequantize, bias_add; /* -1: none */
  int32_t pair[2]; /* a Q/DQ pair between the product and bias_add; -1: none */
  bool requantise; /* no Q after bias_add: the product plus bias quantised anew (widen_pair) */
  float sum_scale; /* (requantise) the sum's scale and zero point */
  int32_t sum_zero;
  qdq_output out;
  quant_params x, w;
  int64_t columns;
  bool transposed; /* Gemm's transB: weights [N, K] */
} qdq_matmul;

/* Whether Add `node` adds one constant per column (shaped [N] or [1, ..,
 * N], no more axes than the product has) to `tensor`; its constant then. */
static int32_t column_addend(const npu_graph *g, int32_t node, int32_t tensor, size_t columns,
                             uint32_t min_rank)
{
  const npu_graph_node *n = &g->nodes[node];
  if (n->input_count != 2 || n->output_count != 1 || n->outputs[0] < 0)
    return -1;
  int32_t addend = n->inputs[0] == tensor ? n->inputs[1] : n->inputs[0];
  if (n->inputs[0] != tensor && n->inputs[1] != tensor)
    return -1;
  const npu_graph_tensor *t = addend >= 0 ? &g->tensors[addend] : NULL;
  if (!t || !constant(g, addend, NPU_DTYPE_FLOAT32, columns, NULL) || t->rank < 1 ||
      t->rank > min_rank || t->dims[t->rank - 1] != (int64_t)columns)
    return -1;
  return addend;
}

/* The node reading `quantize`'s output through a DequantizeLinear with the
 * same per-tensor parameters (`p`), each the other's only reader; -1: none. */
static int32_t through_pair(const npu_graph *g, const npu_consumers *c, int32_t quantize,
                            quant_params *p, int32_t *dequantize)
{
  quant_params back;
  if (!read_params(g, quantize, 1, p))
    return -1;
  *dequantize = only_reader(g, c, g->nodes[quantize].outputs[0]);
  if (!op_is(g, *dequantize, "DequantizeLinear") || !read_params(g, *dequantize, 1, &back) ||
      !same_params(p, &back) || g->nodes[*dequantize].output_count != 1)
    return -1;
  return only_reader(g, c, g->nodes[*dequantize].outputs[0]);
}

/* The parameters of the product plus its bias (of `columns` values) where
 * the pair `pair` quantised the product alone: the pair's range widened by
 * the bias's (each column's sum stays in the reference's range, so nothing
 * saturates that it keeps) on the same 256 levels; false where that is
 * over twice the pair's step. The rounding moves from the product to the
 * sum: an error of half a step either way, as the reference's. */
static bool widen_pair(const quant_params *pair, const float *bias, size_t columns,
                       float *scale, int32_t *zero)
{
  int32_t lo = pair->zero_type == NPU_DTYPE_INT8 ? -128 : 0;
  int32_t pair_zero = load_8bit(pair->zeros, 0, pair->zero_type);
  double low = (double)(lo - pair_zero) * pair->scales[0];
  double high = (double)(lo + 255 - pair_zero) * pair->scales[0];
  double least = 0, most = 0;
  for (size_t i = 0; i < columns; i++) {
    least = fmin(least, bias[i]);
    most = fmax(most, bias[i]);
  }
  low = fmin(low + least, 0);
  high = fmax(high + most, 0);
  *scale = (float)((high - low) / 255);
  if (!(*scale > 0) || !(*scale <= 2 * pair->scales[0]))
    return false;
  double z = nearbyint(lo - low / *scale);
  *zero = (int32_t)(z < lo ? lo : z > lo + 255 ? lo + 255 : z);
  return true;
}

/* The product's Q/DQ pair (`quantize` and its DequantizeLinear) then an
 * Add of one constant per column -> [Relu/Clip] -> Q, as npu-quantize and
 * ORT's quantiser leave a Linear layer's bias: it folds all the same where
 * the pair's step is at most the output's, so that leaving out its
 * rounding moves the result by at most half an output step (its
 * saturation goes too: the product must stay in the pair's range, as
 * calibrating it makes it). */
static bool match_pair_bias(const npu_graph *g, const npu_consumers *c, int32_t quantize,
                            uint32_t rank, qdq_matmul *m)
{
  quant_params pair;
  int32_t add = through_pair(g, c, quantize, &pair, &m->pair[1]);
  if (!op_is(g, add, "Add"))
    return false;
  m->bias = column_addend(g, add, g->nodes[m->pair[1]].outputs[0], (size_t)m->columns, rank);
  m->pair[0] = quantize;
  m->bias_add = add;
  if (m->bias >= 0 && match_output(g, c, add, &m->out) && pair.scales[0] <= m->out.y.scales[0])
    return true;
  /* No Q after the Add (a GELU, the QKV projection's Slices, a residual
   * Add read its float sum): the sum is quantised anew instead. */
  m->requantise = m->bias >= 0 &&
                  !op_is(g, only_reader(g, c, g->nodes[add].outputs[0]), "QuantizeLinear") &&
                  widen_pair(&pair, g->tensors[m->bias].data, (size_t)m->columns,
                             &m->sum_scale, &m->sum_zero);
  if (m->requantise) {
    m->out = (qdq_output){.activation = -1, .quantize = quantize, .y = pair};
    return true;
  }
  m->bias = m->bias_add = -1;
  return false;
}

/* The sum's scale and zero point (widen_pair's) as constants in `params`;
 * false out of memory. */
static bool sum_params(npu_graph *g, const qdq_matmul *m, int32_t params[2])
{
  npu_dtype type = m->out.y.zero_type;
  float *scale = npu_graph_calloc(g, 1, sizeof *scale);
  uint8_t *zero = npu_graph_calloc(g, 1, 1); /* (8-bit of either sign) */
  if (!scale || !zero)
    return false;
  *scale = m->sum_scale;
  *zero = (uint8_t)(type == NPU_DTYPE_INT8 ? (uint8_t)(int8_t)m->sum_zero : m->sum_zero);
  int64_t dims[1] = {1};
  params[0] = npu_graph_add_constant(g, "qdq_sum_scale", NPU_DTYPE_FLOAT32, scale, dims, 0);
  params[1] = npu_graph_add_constant(g, "qdq_sum_zero", type, zero, dims, 0);
  return params[0] >= 0 && params[1] >= 0;
}

/* The pair's DequantizeLinear reads the product plus bias (quantised with
 * `params`, in the pair's QuantizeLinear's output) and writes the bias
 * Add's output, which is folded. */
static void dequantize_sum(npu_graph *g, const qdq_matmul *m, const int32_t params[2])
{
  npu_graph_node *d = &g->nodes[m->pair[1]];
  int32_t sum = g->nodes[m->bias_add].outputs[0];
  d->inputs[1] = params[0];
  d->inputs[2] = params[1];
  g->tensors[d->outputs[0]].producer = -1;
  d->outputs[0] = sum;
  g->tensors[sum].producer = m->pair[1];
  g->nodes[m->bias_add].folded = true;
}

static bool match_matmul(const npu_graph *g, const npu_consumers *c, int32_t node,
                         qdq_matmul *m)
{
  const npu_graph_node *n = &g->nodes[node];
  bool gemm = op_is(g, node, "Gemm");
  if ((!gemm && !op_is(g, node, "MatMul")) || n->input_count < 2 || n->output_count != 1 ||
      n->inputs[0] < 0 || n->inputs[1] < 0 || n->outputs[0] < 0 ||
      (gemm && (int_attribute(n, "transA", 0) != 0 || float_attribute(n, "alpha", 1) != 1)))
    return false;
  m->node = node;
  m->transposed = gemm && int_attribute(n, "transB", 0) != 0;
  m->x_dequantize = dequantized_input(g, node, 0, &m->x);
  m->w_dequantize = g->tensors[n->inputs[1]].producer;
  if (m->x_dequantize < 0 || !op_is(g, m->w_dequantize, "DequantizeLinear") ||
      !read_params_along(g, m->w_dequantize, 0, m->transposed ? 0 : 1, &m->w))
    return false;
  int32_t weights = g->nodes[m->w_dequantize].inputs[0];
  const npu_graph_tensor *w = &g->tensors[weights];
  if (!constant(g, weights, m->w.zero_type, 0, NULL) || w->rank != 2 || w->dims[0] <= 0 ||
      w->dims[1] <= 0)
    return false;
  m->columns = w->dims[m->transposed ? 0 : 1];
  /* The bias: Gemm's C (beta 1), or an Add after the product. */
  m->bias = gemm && n->input_count > 2 ? n->inputs[2] : -1;
  m->bias_dequantize = m->bias_add = -1;
  if (m->bias >= 0 && (float_attribute(n, "beta", 1) != 1 ||
                       !bias_matches(g, m->bias, (size_t)m->columns, &m->bias_dequantize)))
    return false;
  int32_t product = n->outputs[0], next = only_reader(g, c, product);
  const npu_graph_tensor *x = &g->tensors[g->nodes[m->x_dequantize].inputs[0]];
  uint32_t rank = gemm ? 2 : x->has_shape ? x->rank : 2; /* (the product's rank at least) */
  m->pair[0] = m->pair[1] = -1;
  m->requantise = false;
  if (m->bias < 0 && op_is(g, next, "QuantizeLinear") && match_pair_bias(g, c, next, rank, m))
    return true;
  m->pair[0] = m->pair[1] = -1;
  if (m->bias < 0 && op_is(g, next, "Add")) {
    m->bias = column_addend(g, next, product, (size_t)m->columns, rank);
    if (m->bias >= 0)
      m->bias_add = next;
  }
  return match_output(g, c, m->bias_add >= 0 ? m->bias_add : node, &m->out);
}

/* Gemm's transposed weights [N, K] as a new constant [K, N]; -1 out of memory. */
static int32_t transposed_weights(npu_graph *g, const qdq_matmul *m)
{
  const npu_graph_tensor *w = &g->tensors[g->nodes[m->w_dequantize].inputs[0]];
  int64_t rows = w->dims[0], depth = w->dims[1];
  const uint8_t *from = w->data; /* (8-bit of either sign: moved as bytes) */
  npu_dtype dtype = w->dtype;
  uint8_t *to = npu_graph_calloc(g, (size_t)(rows * depth), 1);
  if (!to)
    return -1;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t k = 0; k < depth; k++)
      to[k * rows + r] = from[r * depth + k];
  int64_t dims[2] = {depth, rows};
  return npu_graph_add_constant(g, "qdq_weights_t", dtype, to, dims, 2);
}

/* The product becomes QLinearMatMul, or with a bias gst-npu's
 * QLinearMatMulBias, writing the QuantizeLinear's output; its weights
 * [K, N] with their parameters along the columns. */
static npu_status rewrite_matmul(npu_graph *g, const qdq_matmul *m)
{
  int32_t bias = -1;
  if (m->bias >= 0) {
    bias = quantised_bias(g, m->bias, m->bias_dequantize, &m->x, &m->w, (size_t)m->columns);
    if (bias == -1)
      return NPU_OK; /* it stays in float */
    if (bias == -2)
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory rewriting a QDQ %s",
                           g->nodes[m->node].proto->op_type);
  }
  int32_t weights = m->transposed ? transposed_weights(g, m)
                                  : g->nodes[m->w_dequantize].inputs[0];
  if (weights < 0)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory rewriting a QDQ Gemm");
  const npu_graph_node *x = &g->nodes[m->x_dequantize], *w = &g->nodes[m->w_dequantize];
  const npu_graph_node *q = &g->nodes[m->out.quantize];
  int32_t sum[2] = {q->inputs[1], q->inputs[2]};
  if (m->requantise && !sum_params(g, m, sum))
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory rewriting a QDQ MatMul");
  int32_t inputs[9] = {x->inputs[0], x->inputs[1], x->inputs[2], weights, w->inputs[1],
                       w->inputs[2], sum[0], sum[1], bias};
  if (m->requantise)
    dequantize_sum(g, m, sum);
  else if (m->bias_add >= 0)
    g->nodes[m->bias_add].folded = true;
  for (int i = 0; i < 2 && m->pair[0] >= 0 && !m->requantise; i++)
    g->nodes[m->pair[i]].folded = true;
  npu_status status = bias >= 0 ? become(g, m->node, "ai.gst-npu", "QLinearMatMulBias", inputs,
                                         9, &m->out)
                                : become(g, m->node, NULL, "QLinearMatMul", inputs, 8, &m->out);
  if (status == NPU_OK) /* (Gemm's attributes are no QLinearMatMul's; the proto is a copy) */
    ((Onnx__NodeProto *)g->nodes[m->node].proto)->n_attribute = 0;
  return status;
}

/* DQ(a), DQ(b) -> `node` -> [Relu/Clip] -> Q becomes `op_type` (of
 * `domain`) on the 8-bit values, their parameters and the output's (the
 * inputs of QLinearMatMul and of QLinearAdd); `one_type`: only where a, b
 * and y have one 8-bit type. Add -> com.microsoft's QLinearAdd: the same
 * float arithmetic between the same roundings, in one pass over int8.
 * MatMul (B not a constant the match above takes: attention's Q K^T and
 * softmax(..) V, both computed at run time) -> QLinearMatMul: a batched
 * product with B read as it comes. */
static npu_status rewrite_two_dequantized(npu_graph *g, const npu_consumers *c, int32_t node,
                                          const char *domain, const char *op_type,
                                          bool one_type)
{
  const npu_graph_node *n = &g->nodes[node];
  quant_params a, b;
  qdq_output out;
  if (n->input_count != 2 || n->output_count != 1 || n->outputs[0] < 0 ||
      dequantized_input(g, node, 0, &a) < 0 || dequantized_input(g, node, 1, &b) < 0 ||
      !match_output(g, c, node, &out) ||
      (one_type && (a.zero_type != out.y.zero_type || b.zero_type != out.y.zero_type)))
    return NPU_OK;
  const npu_graph_node *da = &g->nodes[g->tensors[n->inputs[0]].producer];
  const npu_graph_node *db = &g->nodes[g->tensors[n->inputs[1]].producer];
  const npu_graph_node *q = &g->nodes[out.quantize];
  int32_t inputs[8] = {da->inputs[0], da->inputs[1], da->inputs[2], db->inputs[0],
                       db->inputs[1], db->inputs[2], q->inputs[1], q->inputs[2]};
  return become(g, node, domain, op_type, inputs, 8, &out);
}

enum { MAX_MOVER_INPUTS = 5, MAX_MOVERS = 8 };

static bool is_mover(const npu_graph *g, int32_t node)
{
  static const char *const movers[] = {"MaxPool", "Transpose", "Reshape", "Flatten", "Squeeze",
                                       "Unsqueeze", "Slice"};
  for (size_t i = 0; i < sizeof movers / sizeof movers[0]; i++)
    if (op_is(g, node, movers[i]))
      return true;
  return false;
}

/* DQ -> MaxPool, Transpose or a reshaping (Reshape, Flatten, Squeeze,
 * Unsqueeze), or a chain of them each the only reader of the one before
 * (attention's Transpose -> Reshape after softmax(..) V) -> [Relu/Clip] ->
 * Q with the same scale and zero point on both sides runs on the 8-bit
 * values themselves (the nodes' other inputs, a shape or axes, kept): the
 * maximum commutes with the (monotonic) dequantisation, the others only
 * move values, and quantising a dequantised value with the same parameters
 * gives it back. */
static npu_status rewrite_mover(npu_graph *g, const npu_consumers *c, int32_t node)
{
  quant_params x;
  qdq_output out;
  int32_t dequantize = dequantized_input(g, node, 0, &x), last = node;
  if (dequantize < 0)
    return NPU_OK;
  for (int i = 0;; i++) {
    const npu_graph_node *n = &g->nodes[last];
    if (i == MAX_MOVERS || n->output_count != 1 || n->outputs[0] < 0 ||
        n->input_count > MAX_MOVER_INPUTS)
      return NPU_OK;
    if (match_output(g, c, last, &out))
      break;
    int32_t next = only_reader(g, c, n->outputs[0]);
    if (!is_mover(g, next) || g->nodes[next].inputs[0] != n->outputs[0])
      return NPU_OK;
    last = next;
  }
  if (!same_params(&x, &out.y))
    return NPU_OK;
  int32_t input = g->nodes[dequantize].inputs[0];
  if (last != node) /* (the chain's inner tensors take the 8-bit type when shapes are inferred) */
    g->nodes[node].inputs[0] = input;
  const npu_graph_node *n = &g->nodes[last];
  int32_t inputs[MAX_MOVER_INPUTS];
  memcpy(inputs, n->inputs, n->input_count * sizeof *inputs);
  if (last == node)
    inputs[0] = input;
  return become(g, last, NULL, n->proto->op_type, inputs, n->input_count, &out);
}

/* DQ -> Softmax (opset 13's, along the last axis) -> Q becomes gst-npu's
 * QLinearSoftmax: the same float arithmetic on the 8-bit values, one pass
 * with no float tensor written (attention's softmax(Q K^T)). */
static npu_status rewrite_softmax(npu_graph *g, const npu_consumers *c, int32_t node)
{
  const npu_graph_node *n = &g->nodes[node];
  quant_params x;
  qdq_output out;
  int32_t dequantize = dequantized_input(g, node, 0, &x);
  if (g->opset < 13 || int_attribute(n, "axis", -1) != -1 || n->output_count != 1 ||
      n->outputs[0] < 0 || dequantize < 0 || !match_output(g, c, node, &out))
    return NPU_OK;
  const npu_graph_node *d = &g->nodes[dequantize], *q = &g->nodes[out.quantize];
  int32_t inputs[5] = {d->inputs[0], d->inputs[1], d->inputs[2], q->inputs[1], q->inputs[2]};
  return become(g, node, "ai.gst-npu", "QLinearSoftmax", inputs, 5, &out);
}

/* DQ -> GlobalAveragePool -> [Relu/Clip] -> Q (one 8-bit type) becomes
 * com.microsoft's QLinearGlobalAveragePool: the mean of the 8-bit values
 * less the zero point, rescaled once, is the float mean up to rounding. */
static npu_status rewrite_average(npu_graph *g, const npu_consumers *c, int32_t node)
{
  const npu_graph_node *n = &g->nodes[node];
  quant_params x;
  qdq_output out;
  int32_t dequantize = dequantized_input(g, node, 0, &x);
  if (n->output_count != 1 || n->outputs[0] < 0 || dequantize < 0 ||
      !match_output(g, c, node, &out) || x.zero_type != out.y.zero_type)
    return NPU_OK;
  const npu_graph_node *d = &g->nodes[dequantize], *q = &g->nodes[out.quantize];
  int32_t inputs[5] = {d->inputs[0], d->inputs[1], d->inputs[2], q->inputs[1], q->inputs[2]};
  return become(g, node, "com.microsoft", "QLinearGlobalAveragePool", inputs, 5, &out);
}

/* DQ -> Resize (nearest) -> Q with the same parameters on both sides
 * resizes the 8-bit values: nearest only copies them. */
static npu_status rewrite_resize(npu_graph *g, const npu_consumers *c, int32_t node)
{
  npu_graph_node *n = &g->nodes[node];
  quant_params x;
  qdq_output out;
  bool nearest = true; /* (the default mode) */
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (n->proto->attribute[i]->name && strcmp(n->proto->attribute[i]->name, "mode") == 0)
      nearest = n->proto->attribute[i]->s.len == 7 &&
                memcmp(n->proto->attribute[i]->s.data, "nearest", 7) == 0;
  int32_t dequantize = dequantized_input(g, node, 0, &x);
  if (!nearest || dequantize < 0 || n->input_count > 4 || n->output_count != 1 ||
      n->outputs[0] < 0 || !match_output(g, c, node, &out) || !same_params(&x, &out.y))
    return NPU_OK;
  int32_t inputs[4];
  memcpy(inputs, n->inputs, n->input_count * sizeof *inputs);
  inputs[0] = g->nodes[dequantize].inputs[0];
  return become(g, node, NULL, n->proto->op_type, inputs, n->input_count, &out);
}

/* DQ(x1), DQ(x2)... -> Concat -> [Relu/Clip] -> Q (one 8-bit type) becomes
 * a Concat of the 8-bit inputs where every input has the output's scale and
 * zero point (a copy), else com.microsoft's QLinearConcat (requantising). */
static npu_status rewrite_concat(npu_graph *g, const npu_consumers *c, int32_t node)
{
  const npu_graph_node *n = &g->nodes[node];
  qdq_output out;
  if (n->input_count == 0 || n->output_count != 1 || n->outputs[0] < 0 ||
      !match_output(g, c, node, &out))
    return NPU_OK;
  bool copies = true;
  for (uint32_t i = 0; i < n->input_count; i++) {
    quant_params x;
    if (dequantized_input(g, node, i, &x) < 0 || x.zero_type != out.y.zero_type)
      return NPU_OK;
    copies &= same_params(&x, &out.y);
  }
  uint32_t count = copies ? n->input_count : 2 + 3 * n->input_count;
  int32_t *inputs = malloc(count * sizeof *inputs);
  if (!inputs)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory rewriting a QDQ Concat");
  const npu_graph_node *q = &g->nodes[out.quantize];
  if (!copies) {
    inputs[0] = q->inputs[1];
    inputs[1] = q->inputs[2];
  }
  for (uint32_t i = 0; i < n->input_count; i++) {
    const npu_graph_node *d = &g->nodes[g->tensors[n->inputs[i]].producer];
    for (uint32_t k = 0; k < (copies ? 1u : 3u); k++)
      inputs[copies ? i : 2 + 3 * i + k] = d->inputs[k];
  }
  npu_status status = copies ? become(g, node, NULL, "Concat", inputs, count, &out)
                             : become(g, node, "com.microsoft", "QLinearConcat", inputs, count,
                                      &out);
  free(inputs);
  return status;
}

/* DQ -> Split -> Q on every output, all with the input's scale and zero
 * point, splits the 8-bit values themselves. */
static npu_status rewrite_split(npu_graph *g, const npu_consumers *c, int32_t node)
{
  npu_graph_node *n = &g->nodes[node];
  quant_params x, y;
  int32_t dequantize = dequantized_input(g, node, 0, &x);
  if (dequantize < 0 || n->output_count == 0)
    return NPU_OK;
  for (uint32_t i = 0; i < n->output_count; i++) {
    int32_t q = n->outputs[i] >= 0 ? only_reader(g, c, n->outputs[i]) : -1;
    if (!op_is(g, q, "QuantizeLinear") || !read_params(g, q, 1, &y) || !same_params(&x, &y))
      return NPU_OK;
  }
  n->inputs[0] = g->nodes[dequantize].inputs[0];
  for (uint32_t i = 0; i < n->output_count; i++) {
    int32_t q = only_reader(g, c, n->outputs[i]);
    int32_t quantised = g->nodes[q].outputs[0];
    g->tensors[n->outputs[i]].producer = -1;
    n->outputs[i] = quantised;
    g->tensors[quantised].producer = node;
    g->nodes[q].folded = true;
  }
  return NPU_OK;
}

/* ---- BatchNormalization: a depthwise 1x1 QLinearConv --------------------------------- */

/* A BatchNormalization's constant parameters (scale, bias, mean, variance,
 * one per channel): x * factor + shift per channel (channel_factor). */
typedef struct channel_affine {
  size_t channels;
  const float *params[4];
  double epsilon;
} channel_affine;

/* Channel c's factor, and its shift in `shift`. */
static double channel_factor(const channel_affine *a, size_t c, double *shift)
{
  double factor = a->params[0][c] / sqrt((double)a->params[3][c] + a->epsilon);
  *shift = a->params[1][c] - a->params[2][c] * factor;
  return factor;
}

/* The rank of `tensor` where the graph gives it before planning: its
 * declared shape, or that of the convolution weights it comes from through
 * nodes that keep their input's rank (quantisation, Relu, Clip); 0 unknown. */
static uint32_t known_rank(const npu_graph *g, int32_t tensor, int depth)
{
  static const char *const keeping[] = {"QuantizeLinear", "DequantizeLinear", "Relu", "Clip"};
  static const char *const windows[] = {"Conv", "ConvTranspose", "QLinearConv",
                                        "QLinearConvTranspose"};
  if (tensor < 0 || depth > 8)
    return 0;
  if (g->tensors[tensor].has_shape)
    return g->tensors[tensor].rank;
  int32_t p = g->tensors[tensor].producer;
  for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++)
    if (op_is(g, p, windows[i])) {
      uint32_t w = strncmp(windows[i], "QLinear", 7) == 0 ? 3 : 1;
      int32_t weights = w < g->nodes[p].input_count ? g->nodes[p].inputs[w] : -1;
      return weights >= 0 && g->tensors[weights].has_shape ? g->tensors[weights].rank : 0;
    }
  for (size_t i = 0; i < sizeof keeping / sizeof keeping[0]; i++)
    if (op_is(g, p, keeping[i]) && g->nodes[p].input_count > 0)
      return known_rank(g, g->nodes[p].inputs[0], depth + 1);
  return 0;
}

/* The affine of BatchNormalization `n` from its constant float32
 * parameters (one per channel) on an input of rank `rank`, 3 to 5 (0:
 * unknown), whose channels, where known, are that many; false where they
 * are not that. */
static bool read_affine(const npu_graph *g, const npu_graph_node *n, const npu_graph_tensor *x,
                        uint32_t rank, channel_affine *a)
{
  size_t channels = 0;
  for (uint32_t i = 0; i < 4; i++) {
    a->params[i] = constant(g, n->inputs[1 + i], NPU_DTYPE_FLOAT32, channels, &channels);
    if (!a->params[i] || g->tensors[n->inputs[1 + i]].rank != 1)
      return false;
  }
  a->channels = channels;
  a->epsilon = float_attribute(n, "epsilon", 1e-5f);
  return rank >= 3 && rank <= 5 && (!x->has_shape || x->dims[1] == (int64_t)channels);
}

/* Constants of a QLinearConv computing `a` on input x (scale x_scale) with
 * one group per channel and 1x1 windows: weights of +-127 (0 for a zero
 * factor) at scales |factor| / 127, so (x_q - x_zero) * weight * x_scale *
 * w_scale is x's real value times factor up to float rounding, and the
 * int32 bias shift / (x_scale * w_scale), rounded (half a step of x_scale *
 * w_scale). Their indices in `inputs` (weights, scales, zero points, bias);
 * -1 where a bias does not fit int32, -2 out of memory. */
static int32_t affine_constants(npu_graph *g, const channel_affine *a, float x_scale,
                                uint32_t rank, int32_t inputs[4])
{
  size_t channels = a->channels;
  int8_t *weights = npu_graph_calloc(g, channels, sizeof *weights);
  float *scales = npu_graph_calloc(g, channels, sizeof *scales);
  int8_t *zeros = npu_graph_calloc(g, channels, sizeof *zeros);
  int32_t *bias = npu_graph_calloc(g, channels, sizeof *bias);
  if (!weights || !scales || !zeros || !bias)
    return -2;
  for (size_t c = 0; c < channels; c++) {
    double shift, factor = channel_factor(a, c, &shift);
    weights[c] = (int8_t)(factor > 0 ? 127 : factor < 0 ? -127 : 0);
    scales[c] = factor != 0 ? (float)(fabs(factor) / 127) : 1.0f;
    double q = nearbyint(shift / ((double)x_scale * scales[c]));
    if (!(q >= INT32_MIN && q <= INT32_MAX))
      return -1;
    bias[c] = (int32_t)q;
  }
  int64_t dims[5] = {(int64_t)channels, 1, 1, 1, 1};
  inputs[0] = npu_graph_add_constant(g, "qdq_affine_weights", NPU_DTYPE_INT8, weights, dims, rank);
  inputs[1] = npu_graph_add_constant(g, "qdq_affine_scales", NPU_DTYPE_FLOAT32, scales, dims, 1);
  inputs[2] = npu_graph_add_constant(g, "qdq_affine_zeros", NPU_DTYPE_INT8, zeros, dims, 1);
  inputs[3] = npu_graph_add_constant(g, "qdq_affine_bias", NPU_DTYPE_INT32, bias, dims, 1);
  return inputs[0] < 0 || inputs[1] < 0 || inputs[2] < 0 || inputs[3] < 0 ? -2 : 0;
}

/* DQ -> BatchNormalization (constant statistics) -> [Relu/Clip] -> Q
 * becomes a QLinearConv of one group per channel, 1x1 windows, computing
 * the same per-channel affine on the 8-bit values (affine_constants): the
 * float normalisation between int8 convolutions (PP-OCR det's stem and
 * head where nothing folded it) stays int8. */
static npu_status rewrite_batch_norm(npu_graph *g, const npu_consumers *c, int32_t node)
{
  const npu_graph_node *n = &g->nodes[node];
  quant_params x;
  qdq_output out;
  int32_t dequantize = n->input_count == 5 ? dequantized_input(g, node, 0, &x) : -1;
  if (dequantize < 0 || n->output_count != 1 || n->outputs[0] < 0 ||
      !match_output(g, c, node, &out))
    return NPU_OK;
  int32_t x_q = g->nodes[dequantize].inputs[0];
  uint32_t rank = known_rank(g, x_q, 0);
  channel_affine a;
  if (!read_affine(g, n, &g->tensors[x_q], rank, &a))
    return NPU_OK;
  int32_t constants[4];
  int32_t made = affine_constants(g, &a, x.scales[0], rank, constants);
  Onnx__AttributeProto *group = npu_graph_calloc(g, 1, sizeof *group);
  Onnx__AttributeProto **attributes = npu_graph_calloc(g, 1, sizeof *attributes);
  if (made == -2 || !group || !attributes)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory rewriting a QDQ "
                         "BatchNormalization");
  if (made == -1)
    return NPU_OK; /* it stays in float */
  onnx__attribute_proto__init(group);
  group->name = "group";
  group->has_type = true;
  group->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  group->has_i = true;
  group->i = (int64_t)a.channels;
  attributes[0] = group;
  const npu_graph_node *d = &g->nodes[dequantize], *q = &g->nodes[out.quantize];
  int32_t inputs[9] = {d->inputs[0], d->inputs[1], d->inputs[2], constants[0], constants[1],
                       constants[2], q->inputs[1], q->inputs[2], constants[3]};
  npu_status status = become(g, node, NULL, "QLinearConv", inputs, 9, &out);
  if (status == NPU_OK) { /* (its proto is the rewriting's own copy) */
    Onnx__NodeProto *proto = (Onnx__NodeProto *)g->nodes[node].proto;
    proto->n_attribute = 1;
    proto->attribute = attributes;
  }
  return status;
}

/* ---- Elementwise regions: tables of their values ------------------------------------ */

enum { MAX_REGION = 32 };

/* The float elementwise nodes between one or two per-tensor
 * DequantizeLinear and a QuantizeLinear, every other input a one-value
 * constant: the region is a function of the one or two 8-bit inputs (any
 * broadcast of two: the kernel is fast where one has the output's shape
 * and the other that shape, one value, or one per channel, as a
 * squeeze-excitation's scale). `nodes` in evaluation order (each after the
 * nodes it reads), the last one's output the QuantizeLinear's. */
typedef struct qdq_region {
  int32_t dequantize[2]; /* [1]: -1 with one input */
  int32_t source[2]; /* the node whose output is the input: the DequantizeLinear, or the
                        last of a chain of movers after it (is_mover) */
  int32_t first_mover[2]; /* that chain's first node, reading the DequantizeLinear; -1: none */
  quant_params x[2];
  int32_t nodes[MAX_REGION];
  size_t count;
} qdq_region;

static const char *const region_ops[] = {"Add", "Sub", "Mul", "Div", "Relu", "Clip", "Sigmoid",
                                         "HardSigmoid", "HardSwish", "Tanh", "LeakyRelu", "Neg",
                                         "Abs", "Gelu", "Erf"};

static bool region_op(const npu_graph *g, int32_t node)
{
  for (size_t i = 0; i < sizeof region_ops / sizeof region_ops[0]; i++)
    if (op_is(g, node, region_ops[i]))
      return true;
  return false;
}

/* One float value that broadcasts to any tensor of rank `rank` or more
 * without changing its shape. */
static bool scalar_constant(const npu_graph *g, int32_t tensor, uint32_t rank)
{
  return constant(g, tensor, NPU_DTYPE_FLOAT32, 1, NULL) && g->tensors[tensor].rank <= rank;
}

static int32_t region_index(const qdq_region *r, int32_t node)
{
  for (size_t i = 0; i < r->count; i++)
    if (r->nodes[i] == node)
      return (int32_t)i;
  return -1;
}

/* The DequantizeLinear that `tensor` comes from through a chain of movers
 * (is_mover: they only move values, which the region's function then maps
 * alike), each the only reader of the one before, the chain's first node
 * in `first` (-1: `tensor` is the DequantizeLinear's); -1: none. */
static int32_t moved_dequantize(const npu_graph *g, const npu_consumers *c, int32_t tensor,
                                int32_t *first)
{
  *first = -1;
  for (int i = 0; i <= MAX_MOVERS && tensor >= 0; i++) {
    int32_t p = g->tensors[tensor].producer;
    if (op_is(g, p, "DequantizeLinear"))
      return p;
    if (i == MAX_MOVERS || !is_mover(g, p) || g->nodes[p].output_count != 1 ||
        g->nodes[p].input_count == 0 || g->nodes[p].input_count > MAX_MOVER_INPUTS ||
        (*first >= 0 && only_value_reader(g, c, tensor) != *first))
      return -1;
    *first = p;
    tensor = g->nodes[p].inputs[0];
  }
  return -1;
}

/* Adds the nodes computing `tensor` to `r` (depth first, producers first). */
static bool collect_region(const npu_graph *g, const npu_consumers *c, int32_t tensor,
                           qdq_region *r, int depth)
{
  if (tensor < 0 || depth > MAX_REGION)
    return false;
  int32_t producer = g->tensors[tensor].producer, first = -1;
  int32_t dequantize = region_op(g, producer) ? -1 : moved_dequantize(g, c, tensor, &first);
  if (dequantize >= 0) {
    for (int k = 0; k < 2; k++) {
      if (r->source[k] == producer)
        return true;
      if (r->source[k] < 0) {
        r->source[k] = producer;
        r->dequantize[k] = dequantize;
        r->first_mover[k] = first;
        return read_params(g, dequantize, 1, &r->x[k]);
      }
    }
    return false;
  }
  if (!region_op(g, producer) || g->nodes[producer].output_count != 1)
    return false;
  if (region_index(r, producer) >= 0)
    return true;
  const npu_graph_node *n = &g->nodes[producer];
  for (uint32_t i = 0; i < n->input_count; i++) {
    if (n->inputs[i] < 0 || g->tensors[n->inputs[i]].constant)
      continue; /* (checked below, once the input's rank is known) */
    if (!collect_region(g, c, n->inputs[i], r, depth + 1))
      return false;
  }
  if (r->count == MAX_REGION)
    return false;
  r->nodes[r->count++] = producer;
  return true;
}

/* The region ending at QuantizeLinear `quantize`: one or two
 * DequantizeLinear, scalar constants, and nodes whose outputs only region
 * nodes read. */
static bool match_region(const npu_graph *g, const npu_consumers *c, int32_t quantize,
                         qdq_region *r)
{
  r->dequantize[0] = r->dequantize[1] = r->source[0] = r->source[1] = -1;
  r->count = 0;
  int32_t y = g->nodes[quantize].inputs[0];
  if (!collect_region(g, c, y, r, 0) || r->dequantize[0] < 0 || only_reader(g, c, y) != quantize)
    return false;
  /* No node: movers, requantised (the table of QuantizeLinear alone) */
  if (r->count == 0 ? r->first_mover[0] < 0 || r->dequantize[1] >= 0
                    : g->nodes[r->nodes[r->count - 1]].outputs[0] != y)
    return false;
  for (int k = 0; k < 2; k++) { /* (moved inputs become 8-bit: only the region reads them) */
    int32_t moved = r->source[k] >= 0 && r->first_mover[k] >= 0 ? g->nodes[r->source[k]].outputs[0]
                                                                 : -1;
    if (moved >= 0 && r->count > 0 && is_output(g, moved))
      return false;
    for (uint32_t i = moved >= 0 ? c->offsets[moved] : 0; moved >= 0 && i < c->offsets[moved + 1];
         i++) {
      int32_t reader = (int32_t)c->nodes[i];
      if (region_index(r, reader) < 0 && reader != quantize && !op_is(g, reader, "Shape"))
        return false;
    }
  }
  const npu_graph_tensor *x = &g->tensors[g->nodes[r->dequantize[0]].inputs[0]];
  uint32_t rank = x->has_shape ? x->rank : 1; /* (shapes are known per plan, later) */
  for (size_t i = 0; i < r->count; i++) {
    const npu_graph_node *n = &g->nodes[r->nodes[i]];
    for (uint32_t k = 0; k < n->input_count; k++)
      if (n->inputs[k] >= 0 && g->tensors[n->inputs[k]].constant &&
          !scalar_constant(g, n->inputs[k], rank))
        return false;
    int32_t out = n->outputs[0];
    if (i + 1 == r->count)
      continue;
    if (out < 0 || is_output(g, out))
      return false;
    for (uint32_t k = c->offsets[out]; k < c->offsets[out + 1]; k++)
      if (region_index(r, (int32_t)c->nodes[k]) < 0)
        return false;
  }
  return true;
}

/* Node `n` of the region on float `in` (its inputs' values), as ONNX
 * defines it in float. */
static float region_apply(const npu_graph *g, const npu_graph_node *n, const float *in)
{
  const char *type = n->proto->op_type;
  float x = in[0];
  if (!strcmp(type, "Add"))
    return x + in[1];
  if (!strcmp(type, "Sub"))
    return x - in[1];
  if (!strcmp(type, "Mul"))
    return x * in[1];
  if (!strcmp(type, "Div"))
    return x / in[1];
  if (!strcmp(type, "Relu"))
    return x > 0 ? x : 0;
  if (!strcmp(type, "Clip")) {
    float low = g->opset < 11 ? float_attribute(n, "min", -INFINITY) : in[1];
    float high = g->opset < 11 ? float_attribute(n, "max", INFINITY) : in[2];
    return x < low ? low : x > high ? high : x;
  }
  if (!strcmp(type, "Sigmoid"))
    return 1.0f / (1.0f + expf(-x));
  if (!strcmp(type, "HardSigmoid") || !strcmp(type, "HardSwish")) {
    bool swish = !strcmp(type, "HardSwish");
    float alpha = swish ? 1.0f / 6 : float_attribute(n, "alpha", 0.2f);
    float beta = swish ? 0.5f : float_attribute(n, "beta", 0.5f);
    float h = fmaxf(0.0f, fminf(1.0f, alpha * x + beta));
    return swish ? x * h : h;
  }
  if (!strcmp(type, "Tanh"))
    return tanhf(x);
  if (!strcmp(type, "LeakyRelu"))
    return x >= 0 ? x : x * float_attribute(n, "alpha", 0.01f);
  if (!strcmp(type, "Neg"))
    return -x;
  if (!strcmp(type, "Erf")) /* (GELU written out: x * 0.5 * (1 + Erf(x / sqrt(2)))) */
    return erff(x);
  if (!strcmp(type, "Gelu")) {
    const Onnx__AttributeProto *approximate = npu_graph_attribute(n->proto, "approximate");
    if (approximate && approximate->s.len == 4 && !memcmp(approximate->s.data, "tanh", 4))
      return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
    return 0.5f * x * (1.0f + erff(x * 0.70710678f));
  }
  return fabsf(x); /* Abs */
}

/* The region's float value on the dequantised inputs `real`. */
static float region_value(const npu_graph *g, const qdq_region *r, const float real[2])
{
  float values[MAX_REGION];
  if (r->count == 0)
    return real[0];
  for (size_t i = 0; i < r->count; i++) {
    const npu_graph_node *n = &g->nodes[r->nodes[i]];
    float in[3] = {0, -INFINITY, INFINITY}; /* (Clip's bounds left out) */
    for (uint32_t k = 0; k < n->input_count && k < 3; k++) {
      int32_t t = n->inputs[k], producer = t >= 0 ? g->tensors[t].producer : -1;
      if (t < 0)
        continue;
      if (g->tensors[t].constant)
        in[k] = *(const float *)g->tensors[t].data;
      else if (producer == r->source[0] || producer == r->source[1])
        in[k] = real[producer == r->source[0] ? 0 : 1];
      else
        in[k] = values[region_index(r, producer)];
    }
    values[i] = region_apply(g, n, in);
  }
  return values[r->count - 1];
}

/* The real value of 8-bit value `v` (a byte) under `p`. */
static float dequantised(const quant_params *p, int v)
{
  int32_t q = p->zero_type == NPU_DTYPE_INT8 ? (int8_t)v : v;
  return (float)(q - load_8bit(p->zeros, 0, p->zero_type)) * p->scales[0];
}

/* `real` quantised with `p` as QuantizeLinear does (NaN saturates low). */
static uint8_t quantised(const quant_params *p, float real)
{
  int32_t lo = p->zero_type == NPU_DTYPE_INT8 ? -128 : 0, hi = lo + 255;
  float r = rintf(real / p->scales[0]) + (float)load_8bit(p->zeros, 0, p->zero_type);
  return (uint8_t)(r >= (float)lo ? (r > (float)hi ? hi : (int32_t)r) : lo);
}

/* DQ -> elementwise region -> Q becomes, on the region's last node, a
 * QLinearLookup (one input: its 256 quantised outputs) or a
 * QLinearBinaryLookup (two: 65536, indexed second * 256 + first byte),
 * computed here once: one byte lookup per element. */
static npu_status rewrite_region(npu_graph *g, const npu_consumers *c, int32_t quantize)
{
  qdq_region r;
  quant_params y;
  if (!read_params(g, quantize, 1, &y) || !match_region(g, c, quantize, &r))
    return NPU_OK;
  int32_t last = r.count ? r.nodes[r.count - 1] : quantize;
  bool binary = r.dequantize[1] >= 0;
  size_t size = binary ? 65536 : 256;
  uint8_t *table = malloc(size);
  if (!table || !npu_graph_own(g, table)) {
    free(table);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory rewriting a QDQ %s",
                         g->nodes[last].proto->op_type);
  }
  for (size_t i = 0; i < size; i++) {
    float real[2] = {dequantised(&r.x[0], (int)(i & 255)),
                     binary ? dequantised(&r.x[1], (int)(i >> 8)) : 0};
    table[i] = quantised(&y, region_value(g, &r, real));
  }
  int64_t dims[1] = {(int64_t)size};
  int32_t values = npu_graph_add_constant(g, "qdq_lookup", y.zero_type, table, dims, 1);
  if (values < 0)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory rewriting a QDQ %s",
                         g->nodes[last].proto->op_type);
  int32_t in[2];
  for (int k = 0; k < (binary ? 2 : 1); k++) { /* (movers now move the 8-bit values) */
    int32_t quantised_input = g->nodes[r.dequantize[k]].inputs[0];
    in[k] = r.first_mover[k] < 0 ? quantised_input : g->nodes[r.source[k]].outputs[0];
    if (r.first_mover[k] >= 0)
      g->nodes[r.first_mover[k]].inputs[0] = quantised_input;
  }
  const npu_graph_node *a = &g->nodes[r.dequantize[0]], *q = &g->nodes[quantize];
  const npu_graph_node *b = binary ? &g->nodes[r.dequantize[1]] : a;
  int32_t one[6] = {in[0], a->inputs[1], a->inputs[2], q->inputs[1], q->inputs[2], values};
  int32_t two[9] = {in[0], a->inputs[1], a->inputs[2], in[1], b->inputs[1], b->inputs[2],
                    q->inputs[1], q->inputs[2], values};
  for (size_t i = 0; i + 1 < r.count; i++)
    g->nodes[r.nodes[i]].folded = true;
  qdq_output out = {.activation = -1, .quantize = quantize, .y = y};
  npu_status status = binary ? become(g, last, "ai.gst-npu", "QLinearBinaryLookup", two, 9, &out)
                             : become(g, last, "ai.gst-npu", "QLinearLookup", one, 6, &out);
  if (status == NPU_OK && last == quantize) /* (QuantizeLinear's are no table's; a copy) */
    ((Onnx__NodeProto *)g->nodes[last].proto)->n_attribute = 0;
  return status;
}

/* Whether a node that is not folded reads `tensor`. */
static bool read_by_running_node(const npu_graph *g, const npu_consumers *c, int32_t tensor)
{
  for (uint32_t k = c->offsets[tensor]; k < c->offsets[tensor + 1]; k++) {
    const npu_graph_node *n = &g->nodes[c->nodes[k]];
    for (uint32_t i = 0; i < n->input_count && !n->folded; i++)
      if (n->inputs[i] == tensor) /* (a Shape node may read another tensor now) */
        return true;
  }
  return false;
}

/* DequantizeLinear nodes whose outputs only rewritten nodes read are
 * folded; Shape nodes reading one read its 8-bit input instead. */
static npu_status fold_unread_dequantize(npu_graph *g)
{
  npu_consumers c;
  npu_status status = npu_consumers_build(g, &c);
  for (size_t i = 0; i < g->node_count && status == NPU_OK; i++) {
    const npu_graph_node *n = &g->nodes[i];
    if (!op_is(g, (int32_t)i, "DequantizeLinear") || n->output_count != 1 || n->outputs[0] < 0 ||
        is_output(g, n->outputs[0]))
      continue;
    for (uint32_t k = c.offsets[n->outputs[0]]; k < c.offsets[n->outputs[0] + 1]; k++)
      if (op_is(g, (int32_t)c.nodes[k], "Shape"))
        g->nodes[c.nodes[k]].inputs[0] = n->inputs[0];
    if (!read_by_running_node(g, &c, n->outputs[0]))
      g->nodes[i].folded = true;
  }
  npu_consumers_clear(&c);
  return status;
}

npu_status npu_graph_rewrite_qdq(npu_graph *g)
{
  if (!npu_op_schema_find(NULL, "QLinearConv"))
    return NPU_OK;
  npu_consumers c;
  npu_status status = npu_consumers_build(g, &c);
  /* (A rewrite changes only the readers of the node's own inputs and of
   * the tensors it folds away, which no other match looks at.) */
  for (size_t i = 0; i < g->node_count && status == NPU_OK; i++) {
    qdq_conv m;
    qdq_matmul mm;
    if (match(g, &c, (int32_t)i, &m))
      status = rewrite_conv(g, &m);
    else if (match_matmul(g, &c, (int32_t)i, &mm))
      status = rewrite_matmul(g, &mm);
    else if (op_is(g, (int32_t)i, "MatMul"))
      status = rewrite_two_dequantized(g, &c, (int32_t)i, NULL, "QLinearMatMul", false);
    else if (op_is(g, (int32_t)i, "Add"))
      status = rewrite_two_dequantized(g, &c, (int32_t)i, "com.microsoft", "QLinearAdd", true);
    else if (is_mover(g, (int32_t)i))
      status = rewrite_mover(g, &c, (int32_t)i);
    else if (op_is(g, (int32_t)i, "Softmax"))
      status = rewrite_softmax(g, &c, (int32_t)i);
    else if (op_is(g, (int32_t)i, "GlobalAveragePool"))
      status = rewrite_average(g, &c, (int32_t)i);
    else if (op_is(g, (int32_t)i, "Resize") || op_is(g, (int32_t)i, "Upsample"))
      status = rewrite_resize(g, &c, (int32_t)i);
    else if (op_is(g, (int32_t)i, "Concat"))
      status = rewrite_concat(g, &c, (int32_t)i);
    else if (op_is(g, (int32_t)i, "Split"))
      status = rewrite_split(g, &c, (int32_t)i);
    else if (op_is(g, (int32_t)i, "BatchNormalization"))
      status = rewrite_batch_norm(g, &c, (int32_t)i);
    else if (op_is(g, (int32_t)i, "QuantizeLinear"))
      status = rewrite_region(g, &c, (int32_t)i);
  }
  npu_consumers_clear(&c);
  if (status == NPU_OK)
    status = fold_unread_dequantize(g);
  return status;
}
