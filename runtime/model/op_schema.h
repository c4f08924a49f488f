/* The operators the runtime accepts, with the arity ONNX allows them. */
#ifndef NPU_OP_SCHEMA_H
#define NPU_OP_SCHEMA_H

#include <stdint.h>

typedef struct npu_op_schema {
  const char *op_type;
  uint8_t min_inputs, max_inputs;   /* max 255 = variadic */
  uint8_t min_outputs, max_outputs;
  uint8_t since;                    /* the first opset whose form of the op is handled */
} npu_op_schema;

#define NPU_OP_VARIADIC 255

/* NULL when the op is not supported. */
const npu_op_schema *npu_op_schema_find(const char *op_type);

#endif
