/* npuvpp: colour conversion, scaling, cropping and letterboxing on the device. */
#ifndef GST_NPU_VPP_H
#define GST_NPU_VPP_H

#include "gstnpubasetransform.h"

G_BEGIN_DECLS
#define GST_TYPE_NPU_VPP (gst_npu_vpp_get_type())
G_DECLARE_FINAL_TYPE(GstNpuVpp, gst_npu_vpp, GST, NPU_VPP, GstNpuBaseTransform)
GST_ELEMENT_REGISTER_DECLARE(npuvpp);
G_END_DECLS

#endif
