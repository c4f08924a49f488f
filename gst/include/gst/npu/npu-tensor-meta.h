/* GstNpuTensorMeta: the output tensors of an inference, attached by
 * npuinfer to the frame they were computed from.
 *
 *   const GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(buffer);
 *   for (guint i = 0; meta && i < meta->n_tensors; i++) {
 *     const GstNpuTensor *t = &meta->tensors[i];
 *     GstMapInfo map;
 *     const float *values = gst_npu_tensor_map(t, &map);  // dtype 1: float32
 *     if (values) {
 *       ... t->size bytes from values ...
 *       gst_npu_tensor_unmap(t, &map);
 *     }
 *   }
 *
 * Each tensor is this frame's slice of the model output (the batch axis is
 * 1), kept where the model wrote it: in device memory (a GstBuffer of
 * memory:NPUMemory shared by the frames of one execution), mapped for
 * reading only when asked. Data types are ONNX's TensorProto.DataType codes
 * (1: float32, 2: uint8, 7: int64...).
 *
 * In npuinfer's roi mode (secondary inference) a frame carries one meta per
 * GstVideoRegionOfInterestMeta it was inferred on, linked by `roi_id` (the
 * ROI meta's id; -1 in frame mode, where the meta holds whole-frame
 * results); the ROI meta also gets an "npu-tensors" param with the same
 * tensors. Iterate over all of a frame's metas with
 *
 *   gpointer state = NULL;
 *   GstMeta *m;
 *   while ((m = gst_buffer_iterate_meta_filtered(buffer, &state, GST_NPU_TENSOR_META_API_TYPE))) {
 *     const GstNpuTensorMeta *meta = (const GstNpuTensorMeta *)m;
 *     GstVideoRegionOfInterestMeta *roi =
 *         gst_buffer_get_video_region_of_interest_meta_id(buffer, meta->roi_id);
 *     ...
 *   } */
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
  GstBuffer *data;   /* holds the values, row-major (device memory, shared) */
  gsize offset;      /* of this tensor's first byte in `data` */
  gsize size;        /* bytes */
} GstNpuTensor;

typedef struct {
  GstMeta meta;
  guint n_tensors;
  GstNpuTensor *tensors;
  guint batch_index;  /* this frame's slot in the execution that computed it */
  guint batch_size;   /* frames in that execution (from any of the element's pads) */
  guint pad_index;    /* the sink pad (sink_%u) the frame came in on */
  gint roi_id;        /* the GstVideoRegionOfInterestMeta's id these results are for;
                         -1: the whole frame (added last: older readers are unaffected) */
  /* How frame pixels map into the model's input (scale, then letterbox
   * padding): input = frame * scale + offset, so a box the model finds maps
   * back with frame = (input - offset) / scale. scale_x 0: not known. */
  gfloat scale_x, scale_y, offset_x, offset_y;
} GstNpuTensorMeta;

GType gst_npu_tensor_meta_api_get_type(void);
#define GST_NPU_TENSOR_META_API_TYPE (gst_npu_tensor_meta_api_get_type())

const GstMetaInfo *gst_npu_tensor_meta_get_info(void);
#define GST_NPU_TENSOR_META_INFO (gst_npu_tensor_meta_get_info())

#define gst_buffer_get_npu_tensor_meta(buffer)                                              \
  ((GstNpuTensorMeta *)gst_buffer_get_meta((buffer), GST_NPU_TENSOR_META_API_TYPE))

/* Adds an empty meta for `n_tensors` tensors (filled by the caller). */
GstNpuTensorMeta *gst_buffer_add_npu_tensor_meta(GstBuffer *buffer, guint n_tensors);

/* Maps the tensor's bytes for reading: returns its first value, or NULL
 * when it cannot be mapped. Undo with gst_npu_tensor_unmap(). */
gconstpointer gst_npu_tensor_map(const GstNpuTensor *tensor, GstMapInfo *map);
void gst_npu_tensor_unmap(const GstNpuTensor *tensor, GstMapInfo *map);

/* The tensor named `name`, or NULL. */
const GstNpuTensor *gst_npu_tensor_meta_find(const GstNpuTensorMeta *meta, const gchar *name);

/* For language bindings (the GstNpu-1.0 typelib: Python's
 * gi.repository.GstNpu), which cannot use the macro, the tensors array or
 * GstMapInfo: the frame's metas as a list, a tensor by index, its dims, and
 * its values as GBytes (mapped, not copied, while the GBytes lives). */
GList *gst_buffer_get_npu_tensor_metas(GstBuffer *buffer);
const GstNpuTensor *gst_npu_tensor_meta_get_tensor(const GstNpuTensorMeta *meta, guint index);
const gint64 *gst_npu_tensor_get_dims(const GstNpuTensor *tensor, guint *rank);
GBytes *gst_npu_tensor_get_bytes(const GstNpuTensor *tensor);

G_END_DECLS

#endif
