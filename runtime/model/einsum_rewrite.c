/* Load-time Einsum lowering (see einsum_rewrite.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "einsum_rewrite.h"

/* Labels: 'A'..'Z' are 0..25 and 'a'..'z' 26..51 (so label order is the
 * letters' ASCII order, which an implicit output follows); the axes `...`
 * spans are 52 on, right-aligned across the inputs as they broadcast. */
enum { ELLIPSIS_LABEL = 52, ONE_LABEL = 0xff /* an axis of size 1 added to broadcast */ };

typedef struct term {
  uint8_t labels[NPU_MAX_RANK];
  uint32_t rank;
} term;

/* A tensor the lowering has made, and the label of each of its axes. */
typedef struct operand {
  int32_t tensor;
  term axes;
} operand;

typedef struct lowering {
  npu_graph *g;
  uint32_t einsum;        /* the node lowered */
  const char *equation;   /* as written, for messages */
  int64_t sizes[ELLIPSIS_LABEL]; /* a letter's size where an input's shape says it; else -1 */
} lowering;

#define OUT_OF_MEMORY() npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory lowering an Einsum")

static bool holds(const term *t, uint8_t label)
{
  for (uint32_t d = 0; d < t->rank; d++)
    if (t->labels[d] == label)
      return true;
  return false;
}

static uint32_t position_of(const term *t, uint8_t label)
{
  uint32_t d = 0;
  while (d < t->rank && t->labels[d] != label)
    d++;
  return d;
}

static npu_status push_label(lowering *l, term *t, uint8_t label)
{
  if (t->rank == NPU_MAX_RANK)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Einsum '%s': a term of more than %d axes",
                         l->equation, NPU_MAX_RANK);
  t->labels[t->rank++] = label;
  return NPU_OK;
}

/* ---- the equation ------------------------------------------------------------ */

/* One term of `text` (length `length`, spaces removed) into `t`, its `...`
 * as `ellipsis` axes ending at label ELLIPSIS_LABEL + `spanned`; *has_ellipsis
 * says whether it had one. */
static npu_status parse_term(lowering *l, const char *text, size_t length, uint32_t ellipsis,
                             uint32_t spanned, term *t, bool *has_ellipsis)
{
  *has_ellipsis = false;
  t->rank = 0;
  npu_status status = NPU_OK;
  for (size_t c = 0; c < length && status == NPU_OK; c++) {
    char ch = text[c];
    if (ch == '.') {
      if (*has_ellipsis || c + 2 >= length || text[c + 1] != '.' || text[c + 2] != '.')
        return npu_set_error(NPU_ERROR_INVALID_MODEL, "Einsum '%s': a '.' not in one '...'",
                             l->equation);
      *has_ellipsis = true;
      c += 2;
      for (uint32_t e = spanned - ellipsis; e < spanned && status == NPU_OK; e++)
        status = push_label(l, t, (uint8_t)(ELLIPSIS_LABEL + e));
    } else if (ch >= 'A' && ch <= 'Z') {
      status = push_label(l, t, (uint8_t)(ch - 'A'));
    } else if (ch >= 'a' && ch <= 'z') {
      status = push_label(l, t, (uint8_t)(26 + ch - 'a'));
    } else {
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "Einsum '%s': '%c' is not a label",
                           l->equation, ch);
    }
  }
  return status;
}

static size_t letters_of(const char *text, size_t length)
{
  size_t letters = 0;
  for (size_t c = 0; c < length; c++)
    letters += text[c] != '.';
  return letters;
}

/* The terms of the equation: its inputs' (count `inputs`, tensors
 * `tensors`) and its output's, given or implicit. */
static npu_status parse_equation(lowering *l, const char *spaced, const int32_t *tensors,
                                 uint32_t inputs, term *in, term *out)
{
  size_t length = 0;
  char *text = npu_graph_calloc(l->g, strlen(spaced) + 1, 1);
  if (!text)
    return OUT_OF_MEMORY();
  for (const char *c = spaced; *c; c++)
    if (*c != ' ')
      text[length++] = *c;
  const char *arrow = strstr(text, "->");
  size_t inputs_end = arrow ? (size_t)(arrow - text) : length;
  uint32_t spans[2] = {0, 0}, spanned = 0;
  const char *starts[2];
  size_t lengths[2];
  size_t at = 0;
  for (uint32_t i = 0; i < inputs; i++) {
    const char *comma = memchr(text + at, ',', inputs_end - at);
    size_t end = comma ? (size_t)(comma - text) : inputs_end;
    if ((comma != NULL) != (i + 1 < inputs))
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "Einsum '%s': its terms are not one per "
                           "input (%u inputs)", l->equation, inputs);
    starts[i] = text + at;
    lengths[i] = end - at;
    size_t letters = letters_of(starts[i], lengths[i]);
    const npu_graph_tensor *t = &l->g->tensors[tensors[i]];
    bool ellipsis = memchr(starts[i], '.', lengths[i]) != NULL;
    if (t->has_shape && (ellipsis ? t->rank < letters : t->rank != letters))
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "Einsum '%s': input %u has %u axes, its "
                           "term %zu labels", l->equation, i, t->rank, letters);
    if (ellipsis && !t->has_shape)
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Einsum '%s': the axes '...' spans in "
                           "input %u are not known at load (its rank is not declared)",
                           l->equation, i);
    spans[i] = ellipsis ? t->rank - (uint32_t)letters : 0;
    spanned = spans[i] > spanned ? spans[i] : spanned;
    at = end + 1;
  }
  npu_status status = NPU_OK;
  bool ellipsis;
  for (uint32_t i = 0; i < inputs && status == NPU_OK; i++)
    status = parse_term(l, starts[i], lengths[i], spans[i], spanned, &in[i], &ellipsis);
  if (status != NPU_OK || arrow)
    return status != NPU_OK ? status
                            : parse_term(l, arrow + 2, length - inputs_end - 2, spanned, spanned,
                                         out, &ellipsis);
  /* Implicit: the axes of `...`, then the letters used once, in order. */
  out->rank = 0;
  for (uint32_t e = 0; e < spanned && status == NPU_OK; e++)
    status = push_label(l, out, (uint8_t)(ELLIPSIS_LABEL + e));
  for (uint8_t label = 0; label < ELLIPSIS_LABEL && status == NPU_OK; label++) {
    uint32_t uses = 0;
    for (uint32_t i = 0; i < inputs; i++)
      for (uint32_t d = 0; d < in[i].rank; d++)
        uses += in[i].labels[d] == label;
    if (uses == 1)
      status = push_label(l, out, label);
  }
  return status;
}

/* ---- emitting nodes ----------------------------------------------------------- */

static int32_t add_tensor(lowering *l, const char *name)
{
  npu_graph *g = l->g;
  npu_graph_tensor *grown = realloc(g->tensors, (g->tensor_count + 1) * sizeof *grown);
  if (!grown)
    return -1;
  g->tensors = grown;
  g->tensors[g->tensor_count] = (npu_graph_tensor){.name = name, .producer = -1};
  return (int32_t)g->tensor_count++;
}

/* A name for something the lowering of the Einsum adds: "<its output>/einsum/<what>". */
static const char *added_name(lowering *l, const char *what)
{
  const char *base = l->g->tensors[l->g->nodes[l->einsum].outputs[0]].name;
  size_t size = strlen(base) + strlen(what) + 32;
  char *name = npu_graph_calloc(l->g, size, 1);
  if (name)
    snprintf(name, size, "%s/einsum/%s%zu", base, what, l->g->tensor_count);
  return name;
}

static int32_t int64_constant(lowering *l, const int64_t *values, size_t count)
{
  int64_t *data = npu_graph_calloc(l->g, count, sizeof *data);
  const char *name = added_name(l, "constant");
  if (!data || !name)
    return -1;
  memcpy(data, values, count * sizeof *data);
  int64_t dims[1] = {(int64_t)count};
  return npu_graph_add_constant(l->g, name, NPU_DTYPE_INT64, data, dims, 1);
}

static Onnx__AttributeProto *attribute(lowering *l, const char *name, const int64_t *ints,
                                       size_t count, int64_t value)
{
  Onnx__AttributeProto *a = npu_graph_calloc(l->g, 1, sizeof *a);
  int64_t *values = ints ? npu_graph_calloc(l->g, count, sizeof *values) : NULL;
  if (!a || (ints && !values))
    return NULL;
  onnx__attribute_proto__init(a);
  a->name = (char *)name;
  a->has_type = true;
  if (ints) {
    memcpy(values, ints, count * sizeof *values);
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = count;
    a->ints = values;
  } else {
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = true;
    a->i = value;
  }
  return a;
}

/* Node `op` reading `inputs` into a new tensor: *v becomes that tensor
 * with labels `axes`. */
static npu_status emit(lowering *l, const char *op, const int32_t *inputs, uint32_t input_count,
                       Onnx__AttributeProto *const *attributes, size_t attribute_count,
                       operand *v, const term *axes)
{
  npu_graph *g = l->g;
  for (uint32_t i = 0; i < input_count; i++)
    if (inputs[i] < 0)
      return OUT_OF_MEMORY();
  for (size_t a = 0; a < attribute_count; a++)
    if (!attributes[a])
      return OUT_OF_MEMORY();
  Onnx__NodeProto *proto = npu_graph_node_with(g, NULL, attributes, attribute_count);
  const char *name = added_name(l, op);
  int32_t out = name ? add_tensor(l, name) : -1;
  if (!proto || out < 0)
    return OUT_OF_MEMORY();
  proto->op_type = (char *)op;
  proto->name = (char *)name;
  if (!npu_graph_append_node(g, proto, inputs, input_count, out))
    return OUT_OF_MEMORY();
  v->tensor = out;
  v->axes = *axes;
  return NPU_OK;
}

/* ReduceSum, Unsqueeze, Squeeze of `axes` of *v: an attribute before opset
 * 13, an input from it. */
static npu_status emit_with_axes(lowering *l, const char *op, operand *v, const int64_t *axes,
                                 size_t count, const term *result)
{
  bool reduce = strcmp(op, "ReduceSum") == 0;
  Onnx__AttributeProto *attributes[2];
  size_t attribute_count = 0;
  if (reduce)
    attributes[attribute_count++] = attribute(l, "keepdims", NULL, 0, 0);
  int32_t inputs[2] = {v->tensor, -1};
  if (l->g->opset < 13)
    attributes[attribute_count++] = attribute(l, "axes", axes, count, 0);
  else
    inputs[1] = int64_constant(l, axes, count);
  return emit(l, op, inputs, 2 - (l->g->opset < 13), attributes, attribute_count, v, result);
}

/* *v transposed so that its labels are `order` (none when they are already). */
static npu_status transpose_to(lowering *l, operand *v, const term *order)
{
  int64_t perm[NPU_MAX_RANK];
  bool moves = false;
  for (uint32_t d = 0; d < order->rank; d++) {
    perm[d] = position_of(&v->axes, order->labels[d]);
    moves |= perm[d] != d;
  }
  if (!moves)
    return NPU_OK;
  Onnx__AttributeProto *a = attribute(l, "perm", perm, order->rank, 0);
  return emit(l, "Transpose", &v->tensor, 1, &a, 1, v, order);
}

/* The last `count` axes of *v merged into one (Reshape [0, ..., 0, -1]),
 * labelled as the first of them. */
static npu_status merge_last(lowering *l, operand *v, uint32_t count)
{
  if (count < 2)
    return NPU_OK;
  int64_t shape[NPU_MAX_RANK] = {0};
  uint32_t rank = v->axes.rank - count + 1;
  shape[rank - 1] = -1;
  term merged = v->axes;
  merged.rank = rank;
  int32_t inputs[2] = {v->tensor, int64_constant(l, shape, rank)};
  return emit(l, "Reshape", inputs, 2, NULL, 0, v, &merged);
}

/* Axes of size 1 inserted into *v where `to` (its labels, in order, with
 * ONE_LABEL among them) has ONE_LABEL. */
static npu_status unsqueeze_to(lowering *l, operand *v, const term *to)
{
  int64_t axes[NPU_MAX_RANK];
  size_t count = 0;
  for (uint32_t d = 0; d < to->rank; d++)
    if (to->labels[d] == ONE_LABEL)
      axes[count++] = d;
  return count ? emit_with_axes(l, "Unsqueeze", v, axes, count, to) : NPU_OK;
}

/* The labels of `all` that `keep` says to keep. */
static term filtered(const term *all, bool (*keep)(const term *, uint8_t, const void *),
                     const void *context)
{
  term t = {.rank = 0};
  for (uint32_t d = 0; d < all->rank; d++)
    if (keep(all, all->labels[d], context))
      t.labels[t.rank++] = all->labels[d];
  return t;
}

/* ---- the steps ----------------------------------------------------------------- */

/* The diagonal of the first label repeated in *v, until none is. */
static npu_status take_diagonals(lowering *l, operand *v)
{
  for (uint32_t p = 0; p < v->axes.rank; p++)
    for (uint32_t q = p + 1; q < v->axes.rank; q++) {
      uint8_t label = v->axes.labels[p];
      if (v->axes.labels[q] != label)
        continue;
      int64_t n = label < ELLIPSIS_LABEL ? l->sizes[label] : -1;
      if (n < 0 || n >= INT32_MAX)
        return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Einsum '%s': the diagonal of a "
                             "repeated label needs its size known at load (below 2^31)",
                             l->equation);
      term order = {.rank = 0};
      for (uint32_t d = 0; d < v->axes.rank; d++)
        if (d != p && d != q)
          order.labels[order.rank++] = v->axes.labels[d];
      order.labels[order.rank++] = label;
      order.labels[order.rank++] = label;
      /* (a repeated label: transpose_to finds its first axis twice, so move explicitly) */
      int64_t perm[NPU_MAX_RANK];
      uint32_t r = 0;
      for (uint32_t d = 0; d < v->axes.rank; d++)
        if (d != p && d != q)
          perm[r++] = d;
      perm[r++] = p;
      perm[r++] = q;
      Onnx__AttributeProto *a = attribute(l, "perm", perm, r, 0);
      npu_status status = emit(l, "Transpose", &v->tensor, 1, &a, 1, v, &order);
      if (status == NPU_OK)
        status = merge_last(l, v, 2);
      int64_t start = 0, end = INT64_MAX, axis = -1, step = n + 1;
      int32_t inputs[5] = {v->tensor, int64_constant(l, &start, 1), int64_constant(l, &end, 1),
                           int64_constant(l, &axis, 1), int64_constant(l, &step, 1)};
      term diagonal = v->axes;
      if (status == NPU_OK)
        status = emit(l, "Slice", inputs, 5, NULL, 0, v, &diagonal);
      if (status != NPU_OK)
        return status;
      p = 0;
      q = 0;
    }
  return NPU_OK;
}

static bool kept_by_output_or_other(const term *all, uint8_t label, const void *context)
{
  (void)all;
  const term *const *others = context;
  return holds(others[0], label) || (others[1] && holds(others[1], label));
}

/* The labels of *v that neither the output nor `other` (NULL: none) has, summed. */
static npu_status sum_own_labels(lowering *l, operand *v, const term *output, const term *other)
{
  const term *others[2] = {output, other};
  int64_t axes[NPU_MAX_RANK];
  size_t count = 0;
  for (uint32_t d = 0; d < v->axes.rank; d++)
    if (!kept_by_output_or_other(&v->axes, v->axes.labels[d], others))
      axes[count++] = d;
  term kept = filtered(&v->axes, kept_by_output_or_other, others);
  return count ? emit_with_axes(l, "ReduceSum", v, axes, count, &kept) : NPU_OK;
}

static bool held_by(const term *all, uint8_t label, const void *context)
{
  (void)all;
  return holds(context, label);
}

/* `labels` followed by `more`. */
static term joined(term labels, const term *more)
{
  for (uint32_t d = 0; d < more->rank; d++)
    labels.labels[labels.rank++] = more->labels[d];
  return labels;
}

static const term none = {.rank = 0};

static term single(uint8_t label)
{
  return (term){.labels = {label}, .rank = 1};
}

static term ones(uint32_t count)
{
  term t = {.rank = count};
  memset(t.labels, ONE_LABEL, count);
  return t;
}

/* No label contracted: each input in the output's order (its own labels,
 * size-1 axes for the other's), multiplied. */
static npu_status multiply(lowering *l, operand *a, operand *b, const term *output)
{
  operand *both[2] = {a, b};
  for (uint32_t i = 0; i < 2; i++) {
    term own = filtered(output, held_by, &both[i]->axes);
    term padded = *output;
    for (uint32_t d = 0; d < padded.rank; d++)
      if (!holds(&own, padded.labels[d]))
        padded.labels[d] = ONE_LABEL;
    npu_status status = transpose_to(l, both[i], &own);
    if (status == NPU_OK)
      status = unsqueeze_to(l, both[i], &padded);
    if (status != NPU_OK)
      return status;
  }
  int32_t inputs[2] = {a->tensor, b->tensor};
  return emit(l, "Mul", inputs, 2, NULL, 0, a, output);
}

/* Labels of `all` the context term lacks. */
static bool missing_from(const term *all, uint8_t label, const void *context)
{
  (void)all;
  return !holds(context, label);
}

/* The contracted labels `contracted` (those of both inputs the output
 * lacks) summed by a MatMul: a as [batch, a's own, 1s, M, K], b as [batch,
 * 1s, b's own, K, N], M and N the last of each one's own labels (a size-1
 * axis when it has none), K the contracted ones merged; the product's
 * size-1 M or N squeezed away. */
static npu_status contract(lowering *l, operand *a, operand *b, const term *output,
                           const term *contracted)
{
  term batch = filtered(output, held_by, &b->axes);
  batch = filtered(&batch, held_by, &a->axes);
  term a_own = filtered(output, missing_from, &b->axes);
  a_own = filtered(&a_own, held_by, &a->axes);
  term b_own = filtered(output, missing_from, &a->axes);
  b_own = filtered(&b_own, held_by, &b->axes);
  bool has_m = a_own.rank > 0, has_n = b_own.rank > 0;
  if (output->rank + !has_m + !has_n > NPU_MAX_RANK) /* the product's size-1 M or N */
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Einsum '%s': its product would have more "
                         "than %d axes", l->equation, NPU_MAX_RANK);
  term m = has_m ? single(a_own.labels[--a_own.rank]) : ones(1);
  term n = has_n ? single(b_own.labels[--b_own.rank]) : ones(1);
  uint32_t k = contracted->rank;
  term k0 = single(contracted->labels[0]);

  /* a: [batch, a_own, M?, K...] -> merged K -> [batch, a_own, 1s, M|1, K] */
  term a_order = joined(joined(joined(batch, &a_own), has_m ? &m : &none),
                        contracted);
  npu_status status = transpose_to(l, a, &a_order);
  if (status == NPU_OK)
    status = merge_last(l, a, k);
  term b_ones = ones(b_own.rank);
  term a_full = joined(joined(joined(joined(batch, &a_own), &b_ones), &m), &k0);
  if (status == NPU_OK)
    status = unsqueeze_to(l, a, &a_full);

  /* b: [batch, b_own, K, N?] (K merged through [.., N, K...] -> [.., N, K] -> swap) */
  term b_own_n = joined(b_own, has_n ? &n : &none);
  if (status == NPU_OK && k > 1) {
    term order = joined(joined(batch, &b_own_n), contracted);
    status = transpose_to(l, b, &order);
    if (status == NPU_OK)
      status = merge_last(l, b, k);
  }
  term b_order = joined(joined(joined(batch, &b_own), k > 1 ? &k0 : contracted),
                        has_n ? &n : &none);
  if (status == NPU_OK)
    status = transpose_to(l, b, &b_order);
  term a_ones = ones(a_own.rank);
  term b_full = joined(joined(joined(joined(batch, &a_ones), &b_own), &k0), &n);
  if (status == NPU_OK)
    status = unsqueeze_to(l, b, &b_full);

  term product = joined(joined(joined(joined(batch, &a_own), &b_own), &m), &n);
  int32_t inputs[2] = {a->tensor, b->tensor};
  if (status == NPU_OK)
    status = emit(l, "MatMul", inputs, 2, NULL, 0, a, &product);
  int64_t squeezed[2];
  size_t count = 0;
  term kept = {.rank = 0};
  for (uint32_t d = 0; d < product.rank; d++)
    if (product.labels[d] == ONE_LABEL)
      squeezed[count++] = d;
    else
      kept.labels[kept.rank++] = product.labels[d];
  if (status == NPU_OK && count)
    status = emit_with_axes(l, "Squeeze", a, squeezed, count, &kept);
  return status;
}

/* The letters' sizes where the inputs' shapes say them. */
static void read_sizes(lowering *l, const term *in, uint32_t inputs)
{
  for (uint32_t label = 0; label < ELLIPSIS_LABEL; label++)
    l->sizes[label] = -1;
  for (uint32_t i = 0; i < inputs; i++) {
    const npu_graph_tensor *t = &l->g->tensors[l->g->nodes[l->einsum].inputs[i]];
    for (uint32_t d = 0; t->has_shape && t->rank == in[i].rank && d < t->rank; d++)
      if (in[i].labels[d] < ELLIPSIS_LABEL && t->dims[d] >= 0)
        l->sizes[in[i].labels[d]] = t->dims[d];
  }
}

static npu_status lower(lowering *l)
{
  npu_graph_node *node = &l->g->nodes[l->einsum];
  uint32_t inputs = node->input_count;
  if (inputs > 2)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Einsum '%s': %u inputs; only Einsums of "
                         "1 or 2 inputs are supported", l->equation, inputs);
  for (uint32_t i = 0; i < inputs; i++)
    if (node->inputs[i] < 0)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "Einsum '%s': input %u is missing",
                           l->equation, i);
  term in[2], output;
  int32_t tensors[2] = {node->inputs[0], inputs > 1 ? node->inputs[1] : -1};
  npu_status status = parse_equation(l, l->equation, tensors, inputs, in, &output);
  if (status != NPU_OK)
    return status;
  for (uint32_t d = 0; d < output.rank; d++) {
    bool used = holds(&in[0], output.labels[d]) || (inputs > 1 && holds(&in[1], output.labels[d]));
    for (uint32_t e = d + 1; e < output.rank; e++)
      used &= output.labels[e] != output.labels[d];
    if (!used)
      return npu_set_error(NPU_ERROR_INVALID_MODEL, "Einsum '%s': an output label repeated or "
                           "in no input", l->equation);
  }
  read_sizes(l, in, inputs);
  size_t first = l->g->node_count;
  operand v[2];
  for (uint32_t i = 0; i < inputs && status == NPU_OK; i++) {
    v[i] = (operand){tensors[i], in[i]};
    status = take_diagonals(l, &v[i]);
  }
  for (uint32_t i = 0; i < inputs && status == NPU_OK; i++)
    status = sum_own_labels(l, &v[i], &output, inputs > 1 ? &v[1 - i].axes : NULL);
  if (status == NPU_OK && inputs == 2) {
    term contracted = filtered(&v[0].axes, held_by, &v[1].axes);
    contracted = filtered(&contracted, missing_from, &output);
    status = contracted.rank ? contract(l, &v[0], &v[1], &output, &contracted)
                             : multiply(l, &v[0], &v[1], &output);
  }
  if (status == NPU_OK)
    status = transpose_to(l, &v[0], &output);
  if (status == NPU_OK && l->g->node_count == first) /* "ij->ij": a copy */
    status = emit(l, "Identity", &v[0].tensor, 1, NULL, 0, &v[0], &output);
  if (status != NPU_OK)
    return status;
  /* The last node writes the Einsum's output (the tensor it made is left
   * without a producer, unread). */
  node = &l->g->nodes[l->einsum];
  npu_graph_node *last = &l->g->nodes[l->g->node_count - 1];
  l->g->tensors[last->outputs[0]].producer = -1;
  last->outputs[0] = node->outputs[0];
  l->g->tensors[node->outputs[0]].producer = (int32_t)(l->g->node_count - 1);
  node->folded = true;
  return NPU_OK;
}

/* The nodes each Einsum became, [first[e], end[e]), take its place in the order. */
static npu_status reorder(npu_graph *g, size_t old_count, const size_t *first, const size_t *end)
{
  uint32_t *order = malloc(g->node_count * sizeof *order);
  if (!order)
    return OUT_OF_MEMORY();
  size_t next = 0;
  for (size_t i = 0; i < old_count; i++) {
    uint32_t n = g->order[i];
    order[next++] = n;
    for (size_t added = first[n]; added < end[n]; added++)
      order[next++] = (uint32_t)added;
  }
  free(g->order);
  g->order = order;
  return NPU_OK;
}

npu_status npu_graph_lower_einsums(npu_graph *g)
{
  size_t old_count = g->node_count;
  size_t *first = NULL, *end = NULL;
  npu_status status = NPU_OK;
  for (size_t n = 0; n < old_count && status == NPU_OK; n++) {
    if (g->nodes[n].folded || strcmp(g->nodes[n].proto->op_type, "Einsum") != 0)
      continue;
    if (!first) {
      first = calloc(old_count, sizeof *first);
      end = calloc(old_count, sizeof *end);
      if (!first || !end) {
        status = OUT_OF_MEMORY();
        break;
      }
    }
    const Onnx__AttributeProto *a = npu_graph_attribute(g->nodes[n].proto, "equation");
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) {
      status = npu_set_error(NPU_ERROR_INVALID_MODEL, "Einsum node '%s': no equation",
                             g->nodes[n].proto->name);
      break;
    }
    char *equation = npu_graph_calloc(g, a->s.len + 1, 1);
    if (!equation) {
      status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory lowering an Einsum");
      break;
    }
    if (a->s.len > 0) /* (an empty string's data may be NULL) */
      memcpy(equation, a->s.data, a->s.len);
    lowering l = {.g = g, .einsum = (uint32_t)n, .equation = equation};
    first[n] = g->node_count;
    status = lower(&l);
    end[n] = g->node_count;
  }
  if (status == NPU_OK && first)
    status = reorder(g, old_count, first, end);
  free(first);
  free(end);
  return status;
}
