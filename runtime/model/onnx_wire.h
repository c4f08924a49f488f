/* ONNX wire-format pre-pass (onnx_wire.c): lifts the large raw_data of a
 * model's graph initializers out of the protobuf bytes before protobuf-c
 * unpacks them, so that a model's weights are copied once, each to its own
 * aligned buffer, instead of being held twice (file bytes and protobuf-c's
 * copy) while the model loads. */
#ifndef NPU_ONNX_WIRE_H
#define NPU_ONNX_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Initializer data lifted out of the bytes: graph.initializer[initializer]'s
 * raw_data is bytes[offset, offset + size). */
typedef struct npu_onnx_blob {
  size_t initializer;
  size_t offset, size;
} npu_onnx_blob;

/* The model bytes without the raw_data fields of at least `min_bytes` of the
 * top-level graph's initializers (a new malloc'd buffer), and where each
 * lifted field's bytes are (a malloc'd array; NULL when none). Returns false,
 * with nothing allocated, when the bytes are not a ModelProto this pass
 * understands (malformed, groups, a graph given twice...) or memory runs
 * out: the caller then unpacks the bytes as they are, and protobuf-c says
 * what is wrong with them. */
bool npu_onnx_lift_initializer_data(const uint8_t *bytes, size_t size, size_t min_bytes,
                                    uint8_t **stripped, size_t *stripped_size,
                                    npu_onnx_blob **blobs, size_t *blob_count);

#endif
