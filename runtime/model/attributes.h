/* ONNX node attributes behind the HAL's attribute reader. */
#ifndef NPU_ATTRIBUTES_H
#define NPU_ATTRIBUTES_H

#include "npu_hal_graph.h"
#include "onnx.pb-c.h"

/* Strings handed out are copied into `strings`, a list freed by the caller. */
typedef struct npu_attribute_source {
  const Onnx__NodeProto *node;
  char **strings;
  size_t string_count;
} npu_attribute_source;

npu_hal_attributes npu_attributes_of(npu_attribute_source *source);
void npu_attribute_source_clear(npu_attribute_source *source);

#endif
