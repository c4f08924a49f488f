/* ONNX wire-format pre-pass (onnx_wire.h). It reads only field keys and
 * lengths: ModelProto.graph (7) -> GraphProto.initializer (5) ->
 * TensorProto.raw_data (9); every other field is copied as it is. Sub-message
 * lengths shrink when a field is lifted, so each rewritten message is measured
 * first (a writer without a buffer), then written. */
#include <stdlib.h>
#include <string.h>

#include "onnx_wire.h"

enum {
  MODEL_GRAPH = 7,
  GRAPH_INITIALIZER = 5,
  TENSOR_RAW_DATA = 9,
  WIRE_VARINT = 0,
  WIRE_FIXED64 = 1,
  WIRE_BYTES = 2,
  WIRE_FIXED32 = 5,
};

typedef struct cursor {
  const uint8_t *p, *end;
} cursor;

/* One field: [start, end) is all of it, [value, end) a length-delimited value. */
typedef struct field {
  uint64_t number;
  unsigned wire;
  const uint8_t *start, *value, *end;
} field;

typedef struct writer {
  uint8_t *out; /* NULL: only count */
  size_t length;
} writer;

typedef struct lifting {
  const uint8_t *base; /* the model's first byte: blob offsets count from it */
  size_t min_bytes;
  npu_onnx_blob *blobs; /* NULL while measuring */
  size_t blob_count;
} lifting;

static bool read_varint(cursor *c, uint64_t *value)
{
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (c->p == c->end)
      return false;
    uint8_t byte = *c->p++;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *value = v;
      return true;
    }
  }
  return false;
}

static bool next_field(cursor *c, field *f)
{
  uint64_t key, length;
  f->start = c->p;
  if (!read_varint(c, &key))
    return false;
  f->number = key >> 3;
  f->wire = (unsigned)(key & 7);
  f->value = c->p;
  switch (f->wire) {
  case WIRE_VARINT:
    if (!read_varint(c, &length))
      return false;
    break;
  case WIRE_FIXED64:
  case WIRE_FIXED32: {
    size_t width = f->wire == WIRE_FIXED64 ? 8 : 4;
    if ((size_t)(c->end - c->p) < width)
      return false;
    c->p += width;
    break;
  }
  case WIRE_BYTES:
    if (!read_varint(c, &length) || length > (uint64_t)(c->end - c->p))
      return false;
    f->value = c->p;
    c->p += length;
    break;
  default: /* groups and undefined wire types */
    return false;
  }
  f->end = c->p;
  return true;
}

static void put(writer *w, const void *bytes, size_t length)
{
  if (w->out)
    memcpy(w->out + w->length, bytes, length);
  w->length += length;
}

static void put_varint(writer *w, uint64_t value)
{
  uint8_t bytes[10];
  size_t n = 0;
  do {
    bytes[n++] = (uint8_t)(value & 0x7f) | (value > 0x7f ? 0x80 : 0);
    value >>= 7;
  } while (value);
  put(w, bytes, n);
}

/* A TensorProto without its raw_data when that is one field of at least
 * min_bytes (a second raw_data would have to be merged: kept as it is). */
static bool rewrite_tensor(const uint8_t *p, size_t length, size_t initializer, lifting *l,
                           writer *w)
{
  cursor c = {p, p + length};
  field f, raw = {0};
  size_t raw_fields = 0;
  while (c.p < c.end) {
    if (!next_field(&c, &f))
      return false;
    if (f.number == TENSOR_RAW_DATA && f.wire == WIRE_BYTES) {
      raw = f;
      raw_fields++;
    }
  }
  bool lift = raw_fields == 1 && (size_t)(raw.end - raw.value) >= l->min_bytes;
  if (!lift) {
    put(w, p, length);
    return true;
  }
  if (l->blobs)
    l->blobs[l->blob_count] = (npu_onnx_blob){initializer, (size_t)(raw.value - l->base),
                                               (size_t)(raw.end - raw.value)};
  l->blob_count++;
  put(w, p, (size_t)(raw.start - p));
  put(w, raw.end, (size_t)(p + length - raw.end));
  return true;
}

/* Rewrites the message in [p, p + length), the `index`th of its field. */
typedef bool (*rewrite_fn)(const uint8_t *p, size_t length, size_t index, lifting *l, writer *w);

/* Writes field `number`'s key and length, then the message rewrite() makes
 * of [p, p + length), measured first. */
static bool put_message(uint64_t number, const uint8_t *p, size_t length, size_t index,
                        rewrite_fn rewrite, lifting *l, writer *w)
{
  writer measure = {NULL, 0};
  lifting counting = *l;
  counting.blobs = NULL;
  if (!rewrite(p, length, index, &counting, &measure))
    return false;
  put_varint(w, number << 3 | WIRE_BYTES);
  put_varint(w, measure.length);
  return rewrite(p, length, index, l, w);
}

static bool rewrite_graph(const uint8_t *p, size_t length, size_t index, lifting *l, writer *w)
{
  (void)index; /* one graph */
  cursor c = {p, p + length};
  size_t initializer = 0;
  field f;
  while (c.p < c.end) {
    if (!next_field(&c, &f))
      return false;
    if (f.number != GRAPH_INITIALIZER || f.wire != WIRE_BYTES) {
      put(w, f.start, (size_t)(f.end - f.start));
      continue;
    }
    if (!put_message(GRAPH_INITIALIZER, f.value, (size_t)(f.end - f.value), initializer++,
                     rewrite_tensor, l, w))
      return false;
  }
  return true;
}

static bool rewrite_model(const uint8_t *p, size_t length, lifting *l, writer *w)
{
  cursor c = {p, p + length};
  bool graph_seen = false;
  field f;
  while (c.p < c.end) {
    if (!next_field(&c, &f))
      return false;
    if (f.number != MODEL_GRAPH || f.wire != WIRE_BYTES) {
      put(w, f.start, (size_t)(f.end - f.start));
      continue;
    }
    if (graph_seen) /* protobuf would merge the two graphs: left to protobuf-c */
      return false;
    graph_seen = true;
    if (!put_message(MODEL_GRAPH, f.value, (size_t)(f.end - f.value), 0, rewrite_graph, l, w))
      return false;
  }
  return true;
}

bool npu_onnx_lift_initializer_data(const uint8_t *bytes, size_t size, size_t min_bytes,
                                    uint8_t **stripped, size_t *stripped_size,
                                    npu_onnx_blob **blobs, size_t *blob_count)
{
  lifting counting = {bytes, min_bytes, NULL, 0};
  writer measure = {NULL, 0};
  if (!rewrite_model(bytes, size, &counting, &measure) || counting.blob_count == 0)
    return false;
  lifting l = {bytes, min_bytes, malloc(counting.blob_count * sizeof *l.blobs), 0};
  writer w = {malloc(measure.length ? measure.length : 1), 0};
  if (!l.blobs || !w.out || !rewrite_model(bytes, size, &l, &w)) {
    free(l.blobs);
    free(w.out);
    return false;
  }
  *stripped = w.out;
  *stripped_size = w.length;
  *blobs = l.blobs;
  *blob_count = l.blob_count;
  return true;
}
