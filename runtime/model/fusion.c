/* Operator fusion (see fusion.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fusion.h"

npu_status npu_consumers_build(const npu_graph *g, npu_consumers *c)
{
  c->offsets = calloc(g->tensor_count + 2, sizeof *c->offsets);
  size_t edges = 0;
  for (size_t n = 0; n < g->node_count; n++)
    edges += g->nodes[n].input_count;
  c->nodes = calloc(edges + 1, sizeof *c->nodes);
  uint32_t *fill = calloc(g->tensor_count + 1, sizeof *fill);
  if (!c->offsets || !c->nodes || !fill) {
    free(fill);
    npu_consumers_clear(c);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory planning");
  }
  for (size_t n = 0; n < g->node_count; n++)
    for (uint32_t i = 0; i < g->nodes[n].input_count; i++)
      if (g->nodes[n].inputs[i] >= 0)
        c->offsets[g->nodes[n].inputs[i] + 1]++;
  for (size_t t = 0; t < g->tensor_count; t++)
    c->offsets[t + 1] += c->offsets[t];
  for (size_t n = 0; n < g->node_count; n++)
    for (uint32_t i = 0; i < g->nodes[n].input_count; i++) {
      int32_t t = g->nodes[n].inputs[i];
      if (t >= 0)
        c->nodes[c->offsets[t] + fill[t]++] = (uint32_t)n;
    }
  free(fill);
  return NPU_OK;
}

void npu_consumers_clear(npu_consumers *c)
{
  free(c->offsets);
  free(c->nodes);
  c->offsets = c->nodes = NULL;
}

bool npu_graph_is_output(const npu_graph *g, int32_t tensor)
{
  for (size_t i = 0; i < g->output_count; i++)
    if (g->outputs[i] == tensor)
      return true;
  return false;
}

int32_t npu_consumers_only_reader(const npu_graph *g, const npu_consumers *c, int32_t tensor)
{
  if (tensor < 0 || npu_graph_is_output(g, tensor) ||
      c->offsets[tensor + 1] - c->offsets[tensor] != 1)
    return -1;
  return (int32_t)c->nodes[c->offsets[tensor]];
}

typedef struct matcher {
  const npu_graph *g;
  const npu_consumers *c;
  const npu_fusion_env *env;
} matcher;


static uint32_t readers(const matcher *m, int32_t tensor)
{
  return m->c->offsets[tensor + 1] - m->c->offsets[tensor];
}

static uint32_t reader(const matcher *m, int32_t tensor, uint32_t k)
{
  return m->c->nodes[m->c->offsets[tensor] + k];
}

static bool op_is(const npu_graph_node *n, const char *type)
{
  return strcmp(n->proto->op_type, type) == 0;
}

static float float_attribute(const npu_graph_node *n, const char *name, float fallback)
{
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (n->proto->attribute[i]->name && strcmp(n->proto->attribute[i]->name, name) == 0)
      return n->proto->attribute[i]->f;
  return fallback;
}

/* A one-element float constant. */
static bool scalar(const matcher *m, int32_t tensor, float *value)
{
  if (tensor < 0)
    return false;
  const npu_graph_tensor *t = &m->g->tensors[tensor];
  const void *data = m->env->constant_value(m->env->data, tensor);
  size_t count;
  if (!data || t->dtype != NPU_DTYPE_FLOAT32 || !npu_dims_elements(t->dims, t->rank, &count) ||
      count != 1)
    return false;
  *value = *(const float *)data;
  return true;
}

/* A Clip's bounds: attributes before opset 11, optional scalar inputs after. */
static bool clip_bounds(const matcher *m, const npu_graph_node *n, float *low, float *high)
{
  *low = m->g->opset < 11 ? float_attribute(n, "min", -INFINITY) : -INFINITY;
  *high = m->g->opset < 11 ? float_attribute(n, "max", INFINITY) : INFINITY;
  return !(n->input_count > 1 && n->inputs[1] >= 0 && !scalar(m, n->inputs[1], low)) &&
         !(n->input_count > 2 && n->inputs[2] >= 0 && !scalar(m, n->inputs[2], high));
}

/* The other input of a binary node that reads `tensor`, if a scalar. */
static bool scalar_operand(const matcher *m, const npu_graph_node *n, int32_t tensor,
                           float *value, bool *tensor_first)
{
  if (n->input_count != 2)
    return false;
  *tensor_first = n->inputs[0] == tensor;
  return n->inputs[*tensor_first ? 1 : 0] != tensor &&
         scalar(m, n->inputs[*tensor_first ? 1 : 0], value);
}

/* One node reading `tensor` (and constants, or for Add a tensor computed
 * earlier: *addend) that becomes one activation. */
static bool single_step(const matcher *m, const npu_graph_node *n, int32_t tensor,
                        npu_hal_activation *a, int32_t *addend)
{
  float k;
  bool first;
  *addend = -1;
  if (op_is(n, "Add") && n->input_count == 2 && n->inputs[0] != n->inputs[1]) {
    int32_t other = n->inputs[n->inputs[0] == tensor ? 1 : 0];
    if (other >= 0 && m->env->addend_ready(m->env->data, other, tensor)) {
      *a = (npu_hal_activation){NPU_HAL_ACTIVATION_ADD, 0, 0, 0};
      *addend = other;
      return n->output_count >= 1 && n->outputs[0] >= 0;
    }
  }
  if (op_is(n, "Relu")) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_RELU, 0, 0};
  } else if (op_is(n, "LeakyRelu")) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_LEAKY_RELU, float_attribute(n, "alpha", 0.01f), 0};
  } else if (op_is(n, "Sigmoid")) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_SIGMOID, 0, 0};
  } else if (op_is(n, "Tanh")) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_TANH, 0, 0};
  } else if (op_is(n, "Mish")) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_MISH, 0, 0};
  } else if (op_is(n, "HardSwish")) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_HARD_SWISH, 0, 0};
  } else if (op_is(n, "Gelu")) {
    const Onnx__AttributeProto *approximate = npu_graph_attribute(n->proto, "approximate");
    bool tanh_form = approximate && approximate->s.len == 4 &&
                     memcmp(approximate->s.data, "tanh", 4) == 0;
    *a = (npu_hal_activation){tanh_form ? NPU_HAL_ACTIVATION_GELU_TANH : NPU_HAL_ACTIVATION_GELU,
                              0, 0};
  } else if (op_is(n, "HardSigmoid")) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_HARD_SIGMOID, float_attribute(n, "alpha", 0.2f),
                              float_attribute(n, "beta", 0.5f)};
  } else if (op_is(n, "Clip")) {
    float low, high;
    if (n->inputs[0] != tensor || !clip_bounds(m, n, &low, &high))
      return false;
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_CLIP, low, high};
  } else if (op_is(n, "Mul") && scalar_operand(m, n, tensor, &k, &first)) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_LINEAR, k, 0};
  } else if (op_is(n, "Add") && scalar_operand(m, n, tensor, &k, &first)) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_LINEAR, 1, k};
  } else if (op_is(n, "Sub") && scalar_operand(m, n, tensor, &k, &first)) {
    *a = first ? (npu_hal_activation){NPU_HAL_ACTIVATION_LINEAR, 1, -k}
               : (npu_hal_activation){NPU_HAL_ACTIVATION_LINEAR, -1, k};
  } else if (op_is(n, "Div") && scalar_operand(m, n, tensor, &k, &first) && first && k != 0) {
    *a = (npu_hal_activation){NPU_HAL_ACTIVATION_LINEAR, 1 / k, 0};
  } else {
    return false;
  }
  return n->output_count >= 1 && n->outputs[0] >= 0;
}

/* The only reader of `tensor`, if it has exactly one and is not an output. */
static bool only_reader(const matcher *m, int32_t tensor, uint32_t *node)
{
  int32_t r = npu_consumers_only_reader(m->g, m->c, tensor);
  *node = r >= 0 ? (uint32_t)r : 0;
  return r >= 0;
}

/* x * g(x) where x has two readers: Swish (g = Sigmoid), HardSwish, as
 * x * Clip(x + 3, 0, 6) / 6 (or * 1/6) or x * HardSigmoid(x, 1/6, 1/2),
 * and Mish, x * Tanh(Softplus(x)) (as exported before opset 18). */
/* GELU's gate as exporters write it: Erf(x / sqrt 2) + 1 (or x * 1/sqrt 2),
 * appended to `chain` after `gate` (chain[0]); *cur becomes the sum. */
static bool erf_gate(const matcher *m, const npu_graph_node *gate, int32_t x, uint32_t *chain,
                     uint32_t *length, int32_t *cur)
{
  float value;
  bool first;
  uint32_t erf, add;
  bool scales = (op_is(gate, "Div") && scalar_operand(m, gate, x, &value, &first) && first &&
                 fabsf(value - 1.41421356f) < 1e-6f) ||
                (op_is(gate, "Mul") && scalar_operand(m, gate, x, &value, &first) &&
                 fabsf(value - 0.70710678f) < 1e-7f);
  if (!scales || !only_reader(m, gate->outputs[0], &erf) || !op_is(&m->g->nodes[erf], "Erf"))
    return false;
  int32_t erf_out = m->g->nodes[erf].outputs[0];
  if (!only_reader(m, erf_out, &add) || !op_is(&m->g->nodes[add], "Add") ||
      !scalar_operand(m, &m->g->nodes[add], erf_out, &value, &first) || value != 1)
    return false;
  chain[(*length)++] = erf;
  chain[(*length)++] = add;
  *cur = m->g->nodes[add].outputs[0];
  return true;
}

static bool gated_step(const matcher *m, int32_t x, npu_hal_activation *a, uint32_t *nodes,
                       uint32_t *node_count, int32_t *out)
{
  if (npu_graph_is_output(m->g, x) || readers(m, x) != 2)
    return false;
  for (uint32_t k = 0; k < 2; k++) {
    uint32_t gate = reader(m, x, k), product = reader(m, x, 1 - k);
    const npu_graph_node *gn = &m->g->nodes[gate], *pn = &m->g->nodes[product];
    if (!op_is(pn, "Mul") || pn->input_count != 2)
      continue;
    uint32_t chain[4], length = 0, next;
    int32_t cur = gn->outputs[0];
    float value, low, high, divisor = 0; /* the product's divisor, where the form has one */
    bool first;
    npu_hal_activation_kind kind;
    chain[length++] = gate;
    if (op_is(gn, "Sigmoid")) {
      kind = NPU_HAL_ACTIVATION_SWISH;
    } else if (op_is(gn, "HardSigmoid") &&
               fabsf(float_attribute(gn, "alpha", 0.2f) - 1.0f / 6) < 1e-6f &&
               fabsf(float_attribute(gn, "beta", 0.5f) - 0.5f) < 1e-6f) {
      kind = NPU_HAL_ACTIVATION_HARD_SWISH;
    } else if (erf_gate(m, gn, x, chain, &length, &cur)) {
      kind = NPU_HAL_ACTIVATION_GELU;
      divisor = 2;
    } else if (op_is(gn, "Add") && scalar_operand(m, gn, x, &value, &first) && value == 3 &&
               only_reader(m, cur, &next) && op_is(&m->g->nodes[next], "Clip") &&
               clip_bounds(m, &m->g->nodes[next], &low, &high) && low == 0 && high == 6) {
      chain[length++] = next;
      cur = m->g->nodes[next].outputs[0];
      kind = NPU_HAL_ACTIVATION_HARD_SWISH;
      divisor = 6;
    } else if (op_is(gn, "Softplus") && gn->inputs[0] == x && only_reader(m, cur, &next) &&
               op_is(&m->g->nodes[next], "Tanh")) {
      chain[length++] = next;
      cur = m->g->nodes[next].outputs[0];
      kind = NPU_HAL_ACTIVATION_MISH;
    } else {
      continue;
    }
    uint32_t reader_of_gate;
    if (!only_reader(m, cur, &reader_of_gate) || reader_of_gate != product ||
        !((pn->inputs[0] == x && pn->inputs[1] == cur) || (pn->inputs[1] == x && pn->inputs[0] == cur)))
      continue;
    chain[length++] = product;
    cur = pn->outputs[0];
    if (divisor) { /* the Clip form's / 6, GELU's / 2 (or * 1/6, * 1/2) */
      uint32_t scale;
      if (!only_reader(m, cur, &scale))
        continue;
      const npu_graph_node *sn = &m->g->nodes[scale];
      bool divides = op_is(sn, "Div") && scalar_operand(m, sn, cur, &value, &first) && first &&
                     value == divisor;
      bool multiplies = op_is(sn, "Mul") && scalar_operand(m, sn, cur, &value, &first) &&
                        fabsf(value - 1.0f / divisor) < 1e-7f;
      if (!divides && !multiplies)
        continue;
      nodes[length] = scale;
      cur = sn->outputs[0];
      *node_count = length + 1;
    } else {
      *node_count = length;
    }
    memcpy(nodes, chain, length * sizeof *chain);
    *a = (npu_hal_activation){kind, 0, 0};
    *out = cur;
    return true;
  }
  return false;
}

void npu_fusion_find(const npu_graph *g, const npu_consumers *c, uint32_t node,
                     const npu_fusion_env *env, npu_fusion *f)
{
  matcher m = {g, c, env};
  memset(f, 0, sizeof *f);
  int32_t cur = g->nodes[node].outputs[0];
  f->output = cur;
  while (f->count < NPU_HAL_MAX_ACTIVATIONS && cur >= 0) {
    uint32_t next, nodes[5], node_count = 0;
    npu_hal_activation a;
    int32_t out, addend = -1;
    if (only_reader(&m, cur, &next) && single_step(&m, &g->nodes[next], cur, &a, &addend)) {
      nodes[node_count++] = next;
      out = g->nodes[next].outputs[0];
    } else if (!gated_step(&m, cur, &a, nodes, &node_count, &out)) {
      break;
    }
    if (addend >= 0) {
      a.input = f->fused_input_count;
      f->fused_inputs[f->fused_input_count++] = addend;
    }
    npu_hal_activation *last = f->count ? &f->activations[f->count - 1] : NULL;
    if (last && last->kind == NPU_HAL_ACTIVATION_LINEAR && a.kind == NPU_HAL_ACTIVATION_LINEAR)
      /* one step: a2 (a1 x + b1) + b2 (oneDNN 2.6 also gets two in a row wrong) */
      *last = (npu_hal_activation){NPU_HAL_ACTIVATION_LINEAR, a.alpha * last->alpha,
                                   a.alpha * last->beta + a.beta};
    else
      f->activations[f->count++] = a;
    for (uint32_t i = 0; i < node_count; i++)
      f->absorbed[f->absorbed_count++] = nodes[i];
    cur = f->output = out;
    f->step_end[f->count - 1].absorbed_count = f->absorbed_count;
    f->step_end[f->count - 1].fused_input_count = f->fused_input_count;
    f->step_end[f->count - 1].output = out;
  }
}

/* A quantisation parameter pair: constant one-value float scale and 8-bit
 * zero point (its type in *type). */
static bool quant_pair(const matcher *m, int32_t scale_tensor, int32_t zero_tensor, float *scale,
                       int32_t *zero, npu_dtype *type)
{
  const npu_graph_tensor *z = zero_tensor >= 0 ? &m->g->tensors[zero_tensor] : NULL;
  const void *value = z ? m->env->constant_value(m->env->data, zero_tensor) : NULL;
  size_t count;
  if (!scalar(m, scale_tensor, scale) || !value || !npu_dims_elements(z->dims, z->rank, &count) ||
      count != 1 || (z->dtype != NPU_DTYPE_UINT8 && z->dtype != NPU_DTYPE_INT8))
    return false;
  *type = z->dtype;
  *zero = z->dtype == NPU_DTYPE_INT8 ? *(const int8_t *)value : *(const uint8_t *)value;
  return true;
}

/* The one node that runs and reads `tensor` (the QDQ rewriting leaves the
 * folded DequantizeLinear nodes of an int8 tensor among its readers). */
static bool only_running_reader(const matcher *m, int32_t tensor, uint32_t *node)
{
  uint32_t count = 0;
  for (uint32_t k = 0; k < readers(m, tensor); k++)
    if (!m->g->nodes[reader(m, tensor, k)].folded) {
      *node = reader(m, tensor, k);
      count++;
    }
  return count == 1 && !npu_graph_is_output(m->g, tensor);
}

void npu_fusion_find_quantized(const npu_graph *g, const npu_consumers *c, uint32_t node,
                               const npu_fusion_env *env, npu_fusion *f)
{
  matcher m = {g, c, env};
  const npu_graph_node *conv = &g->nodes[node];
  int32_t tensor = conv->outputs[0];
  uint32_t add = 0;
  memset(f, 0, sizeof *f);
  f->output = tensor;
  if (!op_is(conv, "QLinearConv") || conv->input_count < 8 ||
      !only_running_reader(&m, tensor, &add))
    return;
  const npu_graph_node *n = &g->nodes[add];
  if (!op_is(n, "QLinearAdd") || n->input_count != 8 || n->output_count != 1 ||
      n->outputs[0] < 0 || n->inputs[0] == n->inputs[3])
    return;
  /* Its operand from the conv (at `own`) dequantised with the conv's own
   * output parameters, all three tensors of one 8-bit type. */
  uint32_t own = n->inputs[0] == tensor ? 0 : 3, other = 3 - own;
  float conv_scale, own_scale, other_scale, y_scale;
  int32_t conv_zero, own_zero, other_zero, y_zero;
  npu_dtype types[4];
  if (!quant_pair(&m, conv->inputs[6], conv->inputs[7], &conv_scale, &conv_zero, &types[0]) ||
      !quant_pair(&m, n->inputs[own + 1], n->inputs[own + 2], &own_scale, &own_zero, &types[1]) ||
      !quant_pair(&m, n->inputs[other + 1], n->inputs[other + 2], &other_scale, &other_zero,
                  &types[2]) ||
      !quant_pair(&m, n->inputs[6], n->inputs[7], &y_scale, &y_zero, &types[3]) ||
      types[1] != types[0] || types[2] != types[0] || types[3] != types[0] ||
      own_scale != conv_scale || own_zero != conv_zero || n->inputs[other] < 0 ||
      !env->addend_ready(env->data, n->inputs[other], tensor))
    return;
  f->activations[0] = (npu_hal_activation){NPU_HAL_ACTIVATION_DEQUANTIZED_ADD, other_scale,
                                           (float)other_zero, 0};
  f->activations[1] = (npu_hal_activation){NPU_HAL_ACTIVATION_QUANTIZE, y_scale, (float)y_zero, 0};
  f->count = 2;
  f->fused_inputs[f->fused_input_count++] = n->inputs[other];
  f->absorbed[f->absorbed_count++] = add;
  f->output = n->outputs[0];
  /* (one step: the addition alone is no kernel's output) */
  f->step_end[0].output = tensor;
  f->step_end[1].absorbed_count = f->absorbed_count;
  f->step_end[1].fused_input_count = f->fused_input_count;
  f->step_end[1].output = f->output;
}

void npu_fusion_truncate(npu_fusion *f, uint32_t count)
{
  if (count >= f->count)
    return;
  f->absorbed_count = count ? f->step_end[count - 1].absorbed_count : 0;
  f->fused_input_count = count ? f->step_end[count - 1].fused_input_count : 0;
  f->output = count ? f->step_end[count - 1].output : f->output;
  f->count = count;
}
