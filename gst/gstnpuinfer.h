/* npuinfer: one loaded model serving many video streams, batched. */
#ifndef GST_NPU_INFER_H
#define GST_NPU_INFER_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_NPU_INFER (gst_npu_infer_get_type())
G_DECLARE_FINAL_TYPE(GstNpuInfer, gst_npu_infer, GST, NPU_INFER, GstElement)

GST_ELEMENT_REGISTER_DECLARE(npuinfer);

G_END_DECLS

#endif
