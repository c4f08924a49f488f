/* npupublish: each frame's results as a JSON message to an MQTT broker or a file. */
#ifndef GST_NPU_PUBLISH_H
#define GST_NPU_PUBLISH_H

#include "gstnpustreamfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_NPU_PUBLISH (gst_npu_publish_get_type())
G_DECLARE_FINAL_TYPE(GstNpuPublish, gst_npu_publish, GST, NPU_PUBLISH, GstNpuStreamFilter)

GST_ELEMENT_REGISTER_DECLARE(npupublish);

G_END_DECLS

#endif
