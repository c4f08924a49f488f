/* npudownload: NPU memory -> system memory. */
#ifndef GST_NPU_DOWNLOAD_H
#define GST_NPU_DOWNLOAD_H

#include "gstnpubasetransform.h"

G_BEGIN_DECLS
#define GST_TYPE_NPU_DOWNLOAD (gst_npu_download_get_type())
G_DECLARE_FINAL_TYPE(GstNpuDownload, gst_npu_download, GST, NPU_DOWNLOAD, GstNpuBaseTransform)
GST_ELEMENT_REGISTER_DECLARE(npudownload);
G_END_DECLS

#endif
