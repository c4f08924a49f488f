/* GstNpuTensorMeta: the output tensors of an inference, attached by
 * npuinfer to the frame they were computed from.
 *
 *   const GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(buffer);
 *   for (guint i = 0; meta && i < meta->n_tensors; i++) {
 *     const GstNpuTensor *t = &meta->tensors[i];
 *     gsize size;
 *     const float *values = g_bytes_get_data(t->data, &size);  // dtype FLOAT32
 *   }
 *
 * Each tensor is this frame's slice of the model output: the batch axis is
 * 1. Data types are ONNX's TensorProto.DataType codes (1: float32). */
#ifndef GST_NPU_TENSOR_META_H
#define GST_NPU_TENSOR_META_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_NPU_TENSOR_MAX_RANK 8

typedef struct {
  gchar *name;                           /* the model output's name */
  gint dtype;                            /* ONNX data type code: 1 float32, 7 int64... */
  guint rank;
  gint64 dims[GST_NPU_TENSOR_MAX_RANK];
  GBytes *data;                          /* the values, row-major */
} GstNpuTensor;

typedef struct {
  GstMeta meta;
  guint n_tensors;
  GstNpuTensor *tensors;
  guint batch_index;  /* this frame's slot in the execution that computed it */
  guint batch_size;   /* frames in that execution (from any of the element's pads) */
  guint pad_index;    /* the sink pad (sink_%u) the frame came in on */
} GstNpuTensorMeta;

GType gst_npu_tensor_meta_api_get_type(void);
#define GST_NPU_TENSOR_META_API_TYPE (gst_npu_tensor_meta_api_get_type())

const GstMetaInfo *gst_npu_tensor_meta_get_info(void);
#define GST_NPU_TENSOR_META_INFO (gst_npu_tensor_meta_get_info())

#define gst_buffer_get_npu_tensor_meta(buffer)                                              \
  ((GstNpuTensorMeta *)gst_buffer_get_meta((buffer), GST_NPU_TENSOR_META_API_TYPE))

/* Adds an empty meta for `n_tensors` tensors (filled by the caller). */
GstNpuTensorMeta *gst_buffer_add_npu_tensor_meta(GstBuffer *buffer, guint n_tensors);

/* The tensor named `name`, or NULL. */
const GstNpuTensor *gst_npu_tensor_meta_find(const GstNpuTensorMeta *meta, const gchar *name);

G_END_DECLS

#endif
