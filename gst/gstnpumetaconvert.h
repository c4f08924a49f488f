/* npumetaconvert: one JSON line per frame with its results. */
#ifndef GST_NPU_META_CONVERT_H
#define GST_NPU_META_CONVERT_H

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_NPU_META_CONVERT (gst_npu_meta_convert_get_type())
G_DECLARE_FINAL_TYPE(GstNpuMetaConvert, gst_npu_meta_convert, GST, NPU_META_CONVERT,
                     GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(npumetaconvert);

G_END_DECLS

#endif
