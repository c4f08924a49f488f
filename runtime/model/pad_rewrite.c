/* Load-time Pad merging (see pad_rewrite.h). */
#include <stdlib.h>
#include <string.h>

#include "pad_rewrite.h"

static int64_t int_attribute(const Onnx__NodeProto *p, const char *name, int64_t fallback)
{
  const Onnx__AttributeProto *a = npu_graph_attribute(p, name);
  return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? a->i : fallback;
}

/* Whether string attribute `name` is absent (`fallback` then) or `value`. */
static bool string_attribute_is(const Onnx__NodeProto *p, const char *name, const char *value,
                                bool fallback)
{
  const Onnx__AttributeProto *a = npu_graph_attribute(p, name);
  if (!a)
    return fallback;
  return a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING &&
         a->s.len == strlen(value) && memcmp(a->s.data, value, a->s.len) == 0;
}

/* The Pad's pads (2 x rank: begins then ends) when it pads with zeros and
 * only axes 2 and on, by non-negative amounts; NULL otherwise. */
static const int64_t *zero_spatial_pads(const npu_graph *g, const npu_graph_node *pad,
                                        size_t *count)
{
  const int64_t *pads = NULL;
  if (!string_attribute_is(pad->proto, "mode", "constant", true))
    return NULL;
  if (g->opset < 11) {
    const Onnx__AttributeProto *a = npu_graph_attribute(pad->proto, "pads");
    const Onnx__AttributeProto *v = npu_graph_attribute(pad->proto, "value");
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || (v && v->f != 0.0f))
      return NULL;
    pads = a->ints;
    *count = a->n_ints;
  } else {
    if (pad->input_count > 3 && pad->inputs[3] >= 0) /* axes (opset 18) */
      return NULL;
    const npu_graph_tensor *p = pad->input_count > 1 && pad->inputs[1] >= 0
                                    ? &g->tensors[pad->inputs[1]]
                                    : NULL;
    if (!p || !p->constant || !p->data || p->dtype != NPU_DTYPE_INT64)
      return NULL;
    pads = p->data;
    *count = p->data_size / sizeof(int64_t);
    if (pad->input_count > 2 && pad->inputs[2] >= 0) {
      const npu_graph_tensor *v = &g->tensors[pad->inputs[2]];
      if (!v->constant || !v->data || v->dtype != NPU_DTYPE_FLOAT32 ||
          v->data_size != sizeof(float) || *(const float *)v->data != 0.0f)
        return NULL;
    }
  }
  size_t rank = *count / 2;
  if (*count % 2 || rank < 3 || rank > NPU_MAX_RANK)
    return NULL;
  for (size_t d = 0; d < rank; d++)
    if ((d < 2 && (pads[d] || pads[rank + d])) || pads[d] < 0 || pads[rank + d] < 0)
      return NULL;
  return pads;
}

/* Whether `reader` takes the Pad's output as its data input and can take
 * the pads as its own. */
static bool takes_pads(const npu_graph_node *reader, int32_t padded)
{
  const Onnx__NodeProto *p = reader->proto;
  if (reader->folded || reader->input_count < 1 || reader->inputs[0] != padded ||
      !string_attribute_is(p, "auto_pad", "NOTSET", true))
    return false;
  if (strcmp(p->op_type, "Conv") == 0)
    return true;
  if (strcmp(p->op_type, "AveragePool") != 0 || int_attribute(p, "ceil_mode", 0) != 0)
    return false;
  /* its own pads must then count too: none, or counted already */
  const Onnx__AttributeProto *own = npu_graph_attribute(p, "pads");
  bool own_pads = false;
  for (size_t i = 0; own && i < own->n_ints; i++)
    own_pads |= own->ints[i] != 0;
  return !own_pads || int_attribute(p, "count_include_pad", 0) != 0;
}

/* The reader with `pads` its own plus the Pad's spatial ones and, for
 * AveragePool, count_include_pad 1 (see npu_graph_node_with). */
static npu_status repad(npu_graph *g, npu_graph_node *reader, const int64_t *pad_pads,
                        size_t rank)
{
  const Onnx__NodeProto *old = reader->proto;
  size_t spatial = rank - 2;
  Onnx__AttributeProto *attributes = npu_graph_calloc(g, 2, sizeof *attributes);
  int64_t *values = npu_graph_calloc(g, 2 * spatial, sizeof *values);
  if (!attributes || !values)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory merging a Pad");
  const Onnx__AttributeProto *own = npu_graph_attribute(old, "pads");
  for (size_t s = 0; s < 2 * spatial; s++) {
    int64_t own_value = own && own->n_ints == 2 * spatial ? own->ints[s] : 0;
    size_t axis = s < spatial ? 2 + s : rank + 2 + (s - spatial);
    values[s] = own_value + pad_pads[axis];
  }
  Onnx__AttributeProto *pads = &attributes[0], *include = &attributes[1];
  onnx__attribute_proto__init(pads);
  pads->name = "pads";
  pads->has_type = true;
  pads->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  pads->n_ints = 2 * spatial;
  pads->ints = values;
  onnx__attribute_proto__init(include);
  include->name = "count_include_pad";
  include->has_type = true;
  include->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  include->has_i = true;
  include->i = 1;
  Onnx__AttributeProto *replacing[] = {pads, include};
  bool pooling = strcmp(old->op_type, "AveragePool") == 0;
  Onnx__NodeProto *copy = npu_graph_node_with(g, old, replacing, pooling ? 2 : 1);
  if (!copy)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory merging a Pad");
  reader->proto = copy;
  return NPU_OK;
}

npu_status npu_graph_merge_pads(npu_graph *g, const npu_consumers *consumers)
{
  for (size_t i = 0; i < g->node_count; i++) {
    npu_graph_node *pad = &g->nodes[i];
    size_t count = 0;
    if (pad->folded || strcmp(pad->proto->op_type, "Pad") != 0 || pad->output_count != 1 ||
        pad->input_count < 1 || pad->inputs[0] < 0 || pad->outputs[0] < 0)
      continue;
    const int64_t *pads = zero_spatial_pads(g, pad, &count);
    int32_t r = pads ? npu_consumers_only_reader(g, consumers, pad->outputs[0]) : -1;
    if (r < 0 || !takes_pads(&g->nodes[r], pad->outputs[0]))
      continue;
    npu_status status = repad(g, &g->nodes[r], pads, count / 2);
    if (status != NPU_OK)
      return status;
    g->nodes[r].inputs[0] = pad->inputs[0];
    pad->folded = true;
  }
  return NPU_OK;
}
