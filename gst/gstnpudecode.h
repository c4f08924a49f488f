/* npudecode: turns npuinfer's tensors into standard GStreamer results. */
#ifndef GST_NPU_DECODE_H
#define GST_NPU_DECODE_H

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_NPU_DECODE (gst_npu_decode_get_type())
G_DECLARE_FINAL_TYPE(GstNpuDecode, gst_npu_decode, GST, NPU_DECODE, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(npudecode);

G_END_DECLS

#endif
