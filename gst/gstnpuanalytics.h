/* npuanalytics: line crossings and zones over nputrack's tracks. */
#ifndef GST_NPU_ANALYTICS_H
#define GST_NPU_ANALYTICS_H

#include "gstnpustreamfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_NPU_ANALYTICS (gst_npu_analytics_get_type())
G_DECLARE_FINAL_TYPE(GstNpuAnalytics, gst_npu_analytics, GST, NPU_ANALYTICS, GstNpuStreamFilter)

GST_ELEMENT_REGISTER_DECLARE(npuanalytics);

G_END_DECLS

#endif
