/* Caps with the memory feature swapped (see gstnpumemorytransfer.h). */
#include "gstnpumemorytransfer.h"

#include "gstnpumemory.h"

GstCaps *gst_npu_caps_with_memory(GstCaps *caps, gboolean to_npu, gboolean keep_original,
                                  GstCaps *filter)
{
  GstCaps *swapped = gst_caps_copy(caps);
  for (guint i = 0; i < gst_caps_get_size(swapped); i++)
    gst_caps_set_features(swapped, i,
                          to_npu ? gst_caps_features_new(GST_CAPS_FEATURE_MEMORY_NPU, NULL)
                                 : gst_caps_features_new_empty());
  GstCaps *result = keep_original ? gst_caps_merge(gst_caps_ref(caps), swapped) : swapped;
  if (filter) {
    GstCaps *filtered = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(result);
    result = filtered;
  }
  return result;
}
