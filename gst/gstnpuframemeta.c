#include "gstnpuframemeta.h"

void gst_npu_frame_meta_register(void)
{
  static gsize registered = 0;
  if (g_once_init_enter(&registered)) {
    /* copied with the buffer (the default custom-meta transform) */
    static const gchar *tags[] = {NULL};
    gst_meta_register_custom(GST_NPU_TRACKING_META_NAME, tags, NULL, NULL, NULL);
    gst_meta_register_custom(GST_NPU_ANALYTICS_META_NAME, tags, NULL, NULL, NULL);
    g_once_init_leave(&registered, 1);
  }
}

GstStructure *gst_npu_frame_meta_get_or_add(GstBuffer *buffer, const gchar *meta_name)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta(buffer, meta_name);
  if (!meta)
    meta = gst_buffer_add_custom_meta(buffer, meta_name);
  return gst_custom_meta_get_structure(meta);
}

void gst_npu_structure_append(GstStructure *structure, const gchar *field, GstStructure *item)
{
  GValue value = G_VALUE_INIT;
  g_value_init(&value, GST_TYPE_STRUCTURE);
  g_value_take_boxed(&value, item);
  if (!gst_structure_has_field_typed(structure, field, GST_TYPE_ARRAY)) {
    GValue array = G_VALUE_INIT;
    g_value_init(&array, GST_TYPE_ARRAY);
    gst_structure_take_value(structure, field, &array);
  }
  GValue *array = (GValue *)gst_structure_get_value(structure, field);
  gst_value_array_append_and_take_value(array, &value);
}
