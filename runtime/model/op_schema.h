/* The operators the runtime accepts, each described once: what ONNX allows
 * of it (its arity, the counts of its list attributes, the element types
 * and lengths of its small (shape-like) inputs and which of them must be
 * constants, the rank it needs), where its axes and ranges come from
 * (resolved by op_params.c for shape inference and backends) and its
 * output-shape function (shape_inference.c). The loader checks the arity;
 * planning checks the rest (npu_op_validate) once the shapes and constant
 * values are known, before any shape function or kernel reads them: past
 * that point an attribute or a constant input is as long and of the type
 * its reader assumes. */
#ifndef NPU_OP_SCHEMA_H
#define NPU_OP_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "npu_checked.h"
#include "npu_hal_graph.h"

/* The count or length a rule asks for, measured on the node's tensors. */
typedef enum npu_extent {
  NPU_EXTENT_NONE = 0,        /* (ends a rule list) */
  NPU_EXTENT_ANY,             /* no length rule: the type only */
  NPU_EXTENT_AXES,            /* at most NPU_MAX_RANK: a list of axes */
  NPU_EXTENT_ONE,             /* one element: a scalar */
  NPU_EXTENT_RANK,            /* the rank of input 0 */
  NPU_EXTENT_RANK_OR_EMPTY,   /* that, or none (Resize's scales and sizes: one of them) */
  NPU_EXTENT_TWICE_RANK,      /* begins and ends of every axis of input 0 */
  NPU_EXTENT_SPATIAL,         /* the rank of input 0 less batch and channels */
  NPU_EXTENT_TWICE_SPATIAL,   /* begins and ends of every spatial axis */
  NPU_EXTENT_SPATIAL_OR_RANK, /* either (ConvTranspose's output_shape) */
  NPU_EXTENT_CHANNELS,        /* axis 1 of input 0 */
  NPU_EXTENT_OUT_CHANNELS,    /* a convolution's output channels, from its weights */
  NPU_EXTENT_OUTPUTS,         /* the node's output count */
  NPU_EXTENT_LIKE_INPUT1,     /* the length of input 1 (Slice's starts) */
} npu_extent;

typedef enum npu_values {
  NPU_VALUES_ANY = 0,
  NPU_VALUES_NON_NEGATIVE, /* pads */
  NPU_VALUES_POSITIVE,     /* strides, dilations, kernel sizes */
} npu_values;

/* An INTS attribute, when present and not empty, has this many values, of
 * this sign. */
typedef struct npu_attribute_rule {
  const char *name;
  npu_extent count;
  npu_values values;
} npu_attribute_rule;

/* Input `input`, when present (and the opset is below `before`, unless 0),
 * has one of `dtypes` (NPU_DTYPES bits) and, unless `length` is ANY, that
 * many elements; with `constant`, its values must be known when planning
 * (shapes, bounds, k...: shape inference and kernels read them), unless it
 * is empty. */
typedef struct npu_input_rule {
  uint8_t input;
  uint16_t dtypes;
  npu_extent length;
  uint8_t before;
  bool constant;
} npu_input_rule;

/* Where an operator's axes (npu_hal_axes) come from. */
typedef enum npu_axes_form {
  NPU_AXES_NONE = 0,
  NPU_AXES_ONE,      /* attribute `axis` (else the schema's), one axis of input 0 */
  NPU_AXES_FLATTEN,  /* that, in [0, rank] */
  NPU_AXES_REDUCED,  /* attribute `axes` or input 1; none: all (none with noop_with_empty_axes) */
  NPU_AXES_SQUEEZED, /* attribute `axes` or input 1; none: the axes of size 1 */
  NPU_AXES_INSERTED, /* attribute `axes` or input 1, axes of the output */
  NPU_AXES_PERMUTED, /* attribute `perm`, else the axes reversed */
  NPU_AXES_NORMALIZED, /* attribute `axes`, else 0, 2 and 3 (MeanVarianceNormalization) */
} npu_axes_form;

typedef struct npu_axes_rule {
  npu_axes_form form;
  int8_t axis;             /* ONE, FLATTEN: the axis when the attribute is absent */
  bool last_from_opset_13; /* ...but the last axis from opset 13 on (Softmax) */
} npu_axes_rule;

/* Which per-axis ranges (npu_hal_ranges) an operator has. */
typedef enum npu_ranges_form {
  NPU_RANGES_NONE = 0,
  NPU_RANGES_PAD,   /* attribute `pads` (opset < 11) or input 1 */
  NPU_RANGES_SLICE, /* attributes starts/ends/axes (opset < 10) or inputs 1 to 4 */
} npu_ranges_form;

/* The shapes and element types of an operator's outputs: outputs[0] comes
 * as input 0 (with no quantisation), the common case; `op` has passed
 * npu_op_validate and carries its resolved window, axes and ranges
 * (npu_op_params_attach). Messages start with `label`. */
typedef npu_status (*npu_op_infer)(const npu_hal_op *op, npu_hal_tensor_desc *outputs,
                                   const char *label);

/* What rules cannot say: relations between several inputs and attributes. */
typedef npu_status (*npu_op_relation)(const npu_hal_op *op, const char *const *input_names,
                                      const char *label);

#define NPU_DTYPE_BIT(type) (1u << NPU_DTYPE_##type)
#define NPU_DTYPE_BIT_OF(dtype) ((dtype) < 15 ? 1u << (dtype) : 0u)
#define NPU_DTYPES_SAME_AS_INPUT0 (1u << 15) /* the element type of input 0 */
#define NPU_DTYPES_ANY 0x7fffu
#define NPU_DTYPES_INDEX (NPU_DTYPE_BIT(INT32) | NPU_DTYPE_BIT(INT64))

#define NPU_OP_VARIADIC 255
#define NPU_OP_MAX_ATTRIBUTE_RULES 6
#define NPU_OP_MAX_INPUT_RULES 4

typedef struct npu_op_schema {
  const char *op_type;
  uint8_t min_inputs, max_inputs;   /* max 255 = variadic */
  uint8_t min_outputs, max_outputs;
  uint8_t since;                    /* the first opset whose form of the op is handled */
  struct {                          /* from opset `opset` on (0: never), at least */
    uint8_t opset, min_inputs;      /* `min_inputs` (what became inputs in that opset) */
  } later;
  uint8_t min_rank;                 /* of input 0 */
  npu_attribute_rule attributes[NPU_OP_MAX_ATTRIBUTE_RULES]; /* name NULL: the end */
  npu_input_rule inputs[NPU_OP_MAX_INPUT_RULES];            /* dtypes 0: the end */
  uint8_t same_dtypes;              /* 1 + the first input of those (all present ones from
                                     * it on) that share its element type; 0: no rule */
  npu_op_relation relation;         /* checked after the rules; NULL: none */
  const char *domain;               /* NULL: ONNX's own ("" or "ai.onnx") */
  npu_op_infer infer;               /* NULL: planned apart (Shape, Size; Constant at load) */
  npu_axes_rule axes;
  npu_ranges_form ranges;
} npu_op_schema;

/* Helpers of the readers of a validated op (shape functions, op_params.c). */

/* Whether optional input `input` is given. */
static inline bool npu_op_has_input(const npu_hal_op *op, uint32_t input)
{
  return input < op->input_count && op->inputs[input].dtype != NPU_DTYPE_UNDEFINED;
}

/* Elements of a planned tensor (its size was checked when it was planned). */
static inline size_t npu_op_elements(const npu_hal_tensor_desc *t)
{
  size_t n = 0;
  npu_dims_elements(t->dims, t->rank, &n);
  return n;
}

/* Element i of constant integer input `input` (int32 or int64, as its rule allows). */
static inline int64_t npu_op_index_value(const npu_hal_op *op, uint32_t input, size_t i)
{
  const void *v = op->input_values[input];
  return op->inputs[input].dtype == NPU_DTYPE_INT32 ? ((const int32_t *)v)[i]
                                                    : ((const int64_t *)v)[i];
}

/* NULL when the op is not supported; `domain` NULL or "" is ONNX's own. */
const npu_op_schema *npu_op_schema_find(const char *domain, const char *op_type);

/* The inputs the op requires in `opset`. */
unsigned npu_op_min_inputs(const npu_op_schema *schema, int64_t opset);

/* The inputs (bit i: input i) the op needs as constants in `opset`. */
uint32_t npu_op_constant_inputs(const npu_op_schema *schema, int64_t opset);

/* Checks `op` (shapes and constant values as planned) against its schema;
 * NPU_ERROR_INVALID_MODEL with a message starting with `label` and naming
 * the attribute or input (`input_names[i]`) otherwise, and
 * NPU_ERROR_NOT_SUPPORTED for an input it needs constant that is computed
 * at run time. */
npu_status npu_op_validate(const npu_op_schema *schema, const npu_hal_op *op,
                           const char *const *input_names, const char *label);

#endif
