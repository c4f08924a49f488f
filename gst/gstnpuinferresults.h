/* npuinfer's results on the frames: each inference's slice of the outputs as
 * a GstNpuTensorMeta (and, for a region of interest, an "npu-tensors" param
 * of its GstVideoRegionOfInterestMeta), a tracked object's last result
 * handed on to the frames it is not inferred on, and the printed lines. */
#ifndef GST_NPU_INFER_RESULTS_H
#define GST_NPU_INFER_RESULTS_H

#include <gst/gst.h>
#include <gst/npu/npu-tensor-meta.h>
#include <gst/video/video.h>
#include <npu/npu.h>

G_BEGIN_DECLS

/* The region a result is for, as its ROI meta says (id -1: the frame). */
typedef struct {
  gint id;
  GQuark type;
  guint x, y, w, h;
} GstNpuInferRoi;

/* Where a result sits in the execution that computed it. */
typedef struct {
  guint pad_index;
  guint slot, count;  /* slot in the batch, jobs in it */
  guint frames;       /* the batch axis of the outputs */
  npu_letterbox mapping;
} GstNpuInferPlace;

/* Adds the slot's slice of each output to the frame (made writable: its
 * memory is shared, not copied). The values are readable once the batch is
 * done. */
GstNpuTensorMeta *gst_npu_infer_attach_outputs(GstBuffer **frame, const GstNpuInferRoi *roi,
                                               const GstNpuInferPlace *place,
                                               GstBuffer *const *outputs,
                                               const npu_tensor_info *infos, guint n_outputs);

/* A result kept (reference counted: copying takes a reference). */
typedef struct _GstNpuInferResult GstNpuInferResult;
GstNpuInferResult *gst_npu_infer_result_new(const GstNpuTensorMeta *meta);
gpointer gst_npu_infer_result_ref(gconstpointer result);
void gst_npu_infer_result_unref(gpointer result);
/* Adds a kept result to another frame's region (its ROI param says
 * "reused"). */
void gst_npu_infer_result_attach(const GstNpuInferResult *result, GstBuffer **frame,
                                 const GstNpuInferRoi *roi, guint pad_index);

/* One line on stdout: pad, timestamp, ROI, batch slot, each output's name,
 * dims and first values (the batch must be done). */
void gst_npu_infer_print_result(const gchar *pad, GstClockTime pts,
                                const GstNpuTensorMeta *meta);

G_END_DECLS

#endif
