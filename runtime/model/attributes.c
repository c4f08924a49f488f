/* ONNX attribute lookups for kernels (see npu_hal_graph.h for the rules). */
#include <stdlib.h>
#include <string.h>

#include "attributes.h"
#include "npu_checked.h"
#include "npu_hal.h"

static const Onnx__AttributeProto *find(const npu_attribute_source *src, const char *name,
                                        size_t name_length)
{
  for (size_t i = 0; i < src->node->n_attribute; i++) {
    const Onnx__AttributeProto *a = src->node->attribute[i];
    if (a->name && strlen(a->name) == name_length && strncmp(a->name, name, name_length) == 0)
      return a;
  }
  return NULL;
}

/* The first element of a tensor attribute: *integer exactly for integer
 * types (a double cannot hold every int64), *real for every type. */
static bool tensor_first(const Onnx__TensorProto *t, double *real, int64_t *integer)
{
  size_t raw = t->has_raw_data ? t->raw_data.len : 0; /* bytes */
  float f;
  int32_t i32;
  switch (t->data_type) {
  case NPU_DTYPE_FLOAT32:
    if (t->n_float_data)
      f = t->float_data[0];
    else if (raw >= 4)
      memcpy(&f, t->raw_data.data, 4);
    else
      return false;
    *real = f;
    *integer = npu_double_to_integer(f, INT64_MIN, INT64_MAX);
    return true;
  case NPU_DTYPE_INT64:
    if (t->n_int64_data)
      *integer = t->int64_data[0];
    else if (raw >= 8)
      memcpy(integer, t->raw_data.data, 8);
    else
      return false;
    break;
  case NPU_DTYPE_INT32:
    if (t->n_int32_data)
      i32 = t->int32_data[0];
    else if (raw >= 4)
      memcpy(&i32, t->raw_data.data, 4);
    else
      return false;
    *integer = i32;
    break;
  case NPU_DTYPE_UINT8: case NPU_DTYPE_BOOL:
    if (t->n_int32_data)
      *integer = t->int32_data[0];
    else if (raw >= 1)
      *integer = t->raw_data.data[0];
    else
      return false;
    break;
  default:
    return false;
  }
  *real = (double)*integer;
  return true;
}

static int64_t get_int(const void *node, const char *name, int64_t fallback)
{
  const npu_attribute_source *src = node;
  const char *suffix = strstr(name, ".dtype");
  const Onnx__AttributeProto *a = find(src, name, suffix ? (size_t)(suffix - name) : strlen(name));
  if (!a)
    return fallback;
  if (suffix)
    return a->t ? a->t->data_type : fallback;
  double real;
  int64_t integer;
  if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
    return a->i;
  if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS && a->n_ints)
    return a->ints[0];
  if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && a->t &&
      tensor_first(a->t, &real, &integer))
    return integer;
  return fallback;
}

static float get_float(const void *node, const char *name, float fallback)
{
  const npu_attribute_source *src = node;
  const Onnx__AttributeProto *a = find(src, name, strlen(name));
  double real;
  int64_t integer;
  if (!a)
    return fallback;
  if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
    return a->f;
  if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
    return (float)a->i;
  if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && a->t &&
      tensor_first(a->t, &real, &integer))
    return (float)real;
  return fallback;
}

/* Attribute `name` of the node when it has that type; NULL otherwise. */
static const Onnx__AttributeProto *find_typed(const void *node, const char *name,
                                              Onnx__AttributeProto__AttributeType type)
{
  const Onnx__AttributeProto *a = find(node, name, strlen(name));
  return a && a->type == type ? a : NULL;
}

static size_t get_ints(const void *node, const char *name, const int64_t **values)
{
  const Onnx__AttributeProto *a =
      find_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  *values = a ? a->ints : NULL;
  return a ? a->n_ints : 0;
}

/* A terminated copy of ONNX string `s` (bytes without a terminator), kept
 * in the source's list; NULL when out of memory. */
static const char *kept_string(npu_attribute_source *src, ProtobufCBinaryData s)
{
  char **grown = realloc(src->strings, (src->string_count + 1) * sizeof *grown);
  char *copy = malloc(s.len + 1);
  if (!grown || !copy) {
    free(copy);
    if (grown)
      src->strings = grown;
    return NULL;
  }
  src->strings = grown;
  if (s.len) /* an empty string's data may be NULL */
    memcpy(copy, s.data, s.len);
  copy[s.len] = '\0';
  src->strings[src->string_count++] = copy;
  return copy;
}

static const char *get_string(const void *node, const char *name, const char *fallback)
{
  const Onnx__AttributeProto *a =
      find_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  const char *copy = a ? kept_string((npu_attribute_source *)node, a->s) : NULL;
  return copy ? copy : fallback;
}

static size_t get_floats(const void *node, const char *name, const float **values)
{
  const Onnx__AttributeProto *a =
      find_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  *values = a ? a->floats : NULL;
  return a ? a->n_floats : 0;
}

static size_t get_string_count(const void *node, const char *name)
{
  const Onnx__AttributeProto *a =
      find_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  return a ? a->n_strings : 0;
}

static const char *get_string_at(const void *node, const char *name, size_t index,
                                 const char *fallback)
{
  const Onnx__AttributeProto *a =
      find_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  const char *copy =
      a && index < a->n_strings ? kept_string((npu_attribute_source *)node, a->strings[index])
                                : NULL;
  return copy ? copy : fallback;
}

npu_hal_attributes npu_attributes_of(npu_attribute_source *source)
{
  return (npu_hal_attributes){source,     get_int,       get_float,    get_ints,
                              get_string, get_floats, get_string_at, get_string_count};
}

void npu_attribute_source_clear(npu_attribute_source *source)
{
  for (size_t i = 0; i < source->string_count; i++)
    free(source->strings[i]);
  free(source->strings);
  source->strings = NULL;
  source->string_count = 0;
}
