/* npuupload: system memory -> NPU memory. */
#ifndef GST_NPU_UPLOAD_H
#define GST_NPU_UPLOAD_H

#include "gstnpubasetransform.h"

G_BEGIN_DECLS
#define GST_TYPE_NPU_UPLOAD (gst_npu_upload_get_type())
G_DECLARE_FINAL_TYPE(GstNpuUpload, gst_npu_upload, GST, NPU_UPLOAD, GstNpuBaseTransform)
GST_ELEMENT_REGISTER_DECLARE(npuupload);
G_END_DECLS

#endif
