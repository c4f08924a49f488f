/* gst-npu runtime: models.
 *
 * A model is loaded once from an ONNX file or memory, validated completely
 * (a bad model is refused with a message naming the node and the problem),
 * and described: inputs and outputs with names, element types and
 * dimensions, dynamic axes marked. One loaded model is shared by reference
 * between users (npu_model_retain/release, thread-safe). */
#ifndef NPU_MODEL_H
#define NPU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <npu/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types; the values are ONNX's TensorProto.DataType. */
typedef enum npu_dtype {
  NPU_DTYPE_UNDEFINED = 0,
  NPU_DTYPE_FLOAT32 = 1,
  NPU_DTYPE_UINT8 = 2,
  NPU_DTYPE_INT8 = 3,
  NPU_DTYPE_UINT16 = 4,
  NPU_DTYPE_INT16 = 5,
  NPU_DTYPE_INT32 = 6,
  NPU_DTYPE_INT64 = 7,
  NPU_DTYPE_BOOL = 9,
  NPU_DTYPE_FLOAT16 = 10,
  NPU_DTYPE_FLOAT64 = 11,
} npu_dtype;

/* Bytes per element, 0 for types the runtime does not handle. */
NPU_API size_t npu_dtype_size(npu_dtype dtype);
NPU_API const char *npu_dtype_name(npu_dtype dtype);

#define NPU_MAX_RANK 8
#define NPU_DIM_DYNAMIC (-1)

typedef struct npu_tensor_info {
  const char *name;           /* valid while the model lives */
  npu_dtype dtype;
  uint32_t rank;
  int64_t dims[NPU_MAX_RANK]; /* NPU_DIM_DYNAMIC where the model leaves it open */
  const char *dim_names[NPU_MAX_RANK]; /* the symbolic name of a dynamic axis, or NULL */
} npu_tensor_info;

typedef struct npu_model npu_model;

/* Loads and validates an ONNX model (opsets 9 to 18 of the default domain).
 * External data files are read from the model file's directory. */
NPU_API npu_status npu_model_load_file(const char *path, npu_model **model);

/* The same from bytes in memory; external data is looked up in `base_dir`
 * (NULL: a model with external data is refused). The bytes are copied. */
NPU_API npu_status npu_model_load_memory(const void *data, size_t size, const char *base_dir,
                                         npu_model **model);

NPU_API npu_status npu_model_retain(npu_model *model);
NPU_API npu_status npu_model_release(npu_model *model);

NPU_API npu_status npu_model_input_count(npu_model *model, uint32_t *count);
NPU_API npu_status npu_model_output_count(npu_model *model, uint32_t *count);
NPU_API npu_status npu_model_input_info(npu_model *model, uint32_t index, npu_tensor_info *info);
NPU_API npu_status npu_model_output_info(npu_model *model, uint32_t index,
                                         npu_tensor_info *info);

/* The default-domain opset the model was exported with, and its node count. */
NPU_API npu_status npu_model_opset(npu_model *model, int64_t *opset);
NPU_API npu_status npu_model_node_count(npu_model *model, uint32_t *count);

#ifdef __cplusplus
}
#endif
#endif
