/* Caps with the memory feature swapped (see gstnpumemorytransfer.h). */
#include "gstnpumemorytransfer.h"

#include <gst/allocators/allocators.h>

#include "gstnpumemory.h"

static const struct {
  GstNpuMemoryKinds kind;
  const gchar *feature; /* NULL: system memory */
} kinds[] = {
    {GST_NPU_MEMORY_NPU, GST_CAPS_FEATURE_MEMORY_NPU},
    {GST_NPU_MEMORY_SYSTEM, NULL},
    {GST_NPU_MEMORY_DMABUF, GST_CAPS_FEATURE_MEMORY_DMABUF},
};

/* ANY features stand for every kind. */
static GstNpuMemoryKinds kinds_of(const GstCapsFeatures *features)
{
  if (!features || gst_caps_features_is_any(features))
    return GST_NPU_MEMORY_NPU | GST_NPU_MEMORY_SYSTEM | GST_NPU_MEMORY_DMABUF;
  if (gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_NPU))
    return GST_NPU_MEMORY_NPU;
  if (gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_DMABUF))
    return GST_NPU_MEMORY_DMABUF;
  return GST_NPU_MEMORY_SYSTEM;
}

GstCaps *gst_npu_caps_with_memory(GstCaps *caps, GstNpuMemoryKinds from_npu,
                                  GstNpuMemoryKinds from_system, GstNpuMemoryKinds from_dmabuf,
                                  GstCaps *filter)
{
  GstCaps *result;
  if (gst_caps_is_any(caps)) {
    result = gst_caps_new_any();
  } else {
    result = gst_caps_new_empty();
    for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
      for (guint i = 0; i < gst_caps_get_size(caps); i++) {
        GstNpuMemoryKinds in = kinds_of(gst_caps_get_features(caps, i));
        GstNpuMemoryKinds out = ((in & GST_NPU_MEMORY_NPU) ? from_npu : 0) |
                                ((in & GST_NPU_MEMORY_SYSTEM) ? from_system : 0) |
                                ((in & GST_NPU_MEMORY_DMABUF) ? from_dmabuf : 0);
        if (!(out & kinds[k].kind))
          continue;
        GstCapsFeatures *features = kinds[k].feature
                                        ? gst_caps_features_new(kinds[k].feature, NULL)
                                        : gst_caps_features_new_empty();
        result = gst_caps_merge_structure_full(
            result, gst_structure_copy(gst_caps_get_structure(caps, i)), features);
      }
    }
  }
  if (filter) {
    GstCaps *filtered = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(result);
    result = filtered;
  }
  return result;
}

GstNpuMemoryKinds gst_npu_caps_memory_kind(GstCaps *caps)
{
  return kinds_of(gst_caps_get_size(caps) > 0 ? gst_caps_get_features(caps, 0) : NULL);
}
