/* Output element types and shapes of an operator from its inputs' (and,
 * where the shape depends on them, the values of constant inputs): one
 * function per kind of operator, each named by its schema entry
 * (npu_op_infer in op_schema.h). */
#ifndef NPU_SHAPE_INFERENCE_H
#define NPU_SHAPE_INFERENCE_H

#include "npu_hal_graph.h"
#include "op_schema.h"

/* The op's outputs by its schema's function; `op` is validated and carries
 * its resolved parameters (npu_op_params_attach). On failure the message
 * starts with `label` (the node). */
npu_status npu_infer_shapes(const npu_op_schema *schema, const npu_hal_op *op,
                            npu_hal_tensor_desc *outputs, const char *label);

/* The shape functions (npu_op_infer), one per kind of operator. */
#define NPU_SHAPE_FUNCTION(kind)                                                          \
  npu_status npu_infer_##kind(const npu_hal_op *op, npu_hal_tensor_desc *outputs,        \
                              const char *label)
NPU_SHAPE_FUNCTION(same);
NPU_SHAPE_FUNCTION(broadcast);
NPU_SHAPE_FUNCTION(compare);
NPU_SHAPE_FUNCTION(where);
NPU_SHAPE_FUNCTION(conv);
NPU_SHAPE_FUNCTION(conv_transpose);
NPU_SHAPE_FUNCTION(pool);
NPU_SHAPE_FUNCTION(global_pool);
NPU_SHAPE_FUNCTION(reshape);
NPU_SHAPE_FUNCTION(slice);
NPU_SHAPE_FUNCTION(pad);
NPU_SHAPE_FUNCTION(reduce);
NPU_SHAPE_FUNCTION(arg);
NPU_SHAPE_FUNCTION(resize);
NPU_SHAPE_FUNCTION(layer_norm);
NPU_SHAPE_FUNCTION(expand);
NPU_SHAPE_FUNCTION(tile);
NPU_SHAPE_FUNCTION(range);
NPU_SHAPE_FUNCTION(topk);
NPU_SHAPE_FUNCTION(dropout);
NPU_SHAPE_FUNCTION(cast_like);
NPU_SHAPE_FUNCTION(cast);
NPU_SHAPE_FUNCTION(gemm);
NPU_SHAPE_FUNCTION(matmul);
NPU_SHAPE_FUNCTION(flatten);
NPU_SHAPE_FUNCTION(squeeze);
NPU_SHAPE_FUNCTION(unsqueeze);
NPU_SHAPE_FUNCTION(transpose);
NPU_SHAPE_FUNCTION(concat);
NPU_SHAPE_FUNCTION(split);
NPU_SHAPE_FUNCTION(gather);
NPU_SHAPE_FUNCTION(gather_elements);
NPU_SHAPE_FUNCTION(scatter_elements);
NPU_SHAPE_FUNCTION(gather_nd);
NPU_SHAPE_FUNCTION(one_hot);
NPU_SHAPE_FUNCTION(eye_like);
NPU_SHAPE_FUNCTION(constant_of_shape);
NPU_SHAPE_FUNCTION(rearrange_blocks);
NPU_SHAPE_FUNCTION(max_unpool);
NPU_SHAPE_FUNCTION(sample);
NPU_SHAPE_FUNCTION(recurrent);

#endif
