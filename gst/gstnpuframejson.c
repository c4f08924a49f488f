#include "gstnpuframejson.h"

#include <gst/video/video.h>
#include <json-glib/json-glib.h>

#include "gst/npu/npu-tensor-meta.h"
#include "gstnpuframemeta.h"

gint gst_npu_frame_stream(GstBuffer *buffer)
{
  const GstNpuTensorMeta *tensors = gst_buffer_get_npu_tensor_meta(buffer);
  return tensors ? (gint)tensors->pad_index : -1;
}

static void add_structure(JsonBuilder *json, const GstStructure *structure);

/* Plain values (strings, numbers, booleans), structures and arrays of
 * them; false for anything else (such as npuinfer's tensor buffers), which
 * is left out. */
static gboolean add_value(JsonBuilder *json, const GValue *value)
{
  GType type = G_VALUE_TYPE(value);
  if (type == G_TYPE_STRING) {
    json_builder_add_string_value(json, g_value_get_string(value));
  } else if (type == G_TYPE_INT || type == G_TYPE_UINT || type == G_TYPE_INT64 ||
             type == G_TYPE_UINT64) {
    GValue as_int = G_VALUE_INIT;
    g_value_init(&as_int, G_TYPE_INT64);
    g_value_transform(value, &as_int);
    json_builder_add_int_value(json, g_value_get_int64(&as_int));
  } else if (type == G_TYPE_DOUBLE || type == G_TYPE_FLOAT) {
    json_builder_add_double_value(json, type == G_TYPE_DOUBLE ? g_value_get_double(value)
                                                              : g_value_get_float(value));
  } else if (type == G_TYPE_BOOLEAN) {
    json_builder_add_boolean_value(json, g_value_get_boolean(value));
  } else if (type == GST_TYPE_STRUCTURE) {
    add_structure(json, gst_value_get_structure(value));
  } else if (type == GST_TYPE_ARRAY) {
    json_builder_begin_array(json);
    for (guint i = 0; i < gst_value_array_get_size(value); i++)
      add_value(json, gst_value_array_get_value(value, i));
    json_builder_end_array(json);
  } else {
    return FALSE;
  }
  return TRUE;
}

static gboolean is_json_value(const GValue *value)
{
  GType type = G_VALUE_TYPE(value);
  return type == G_TYPE_STRING || type == G_TYPE_INT || type == G_TYPE_UINT ||
         type == G_TYPE_INT64 || type == G_TYPE_UINT64 || type == G_TYPE_DOUBLE ||
         type == G_TYPE_FLOAT || type == G_TYPE_BOOLEAN || type == GST_TYPE_STRUCTURE ||
         type == GST_TYPE_ARRAY;
}

static gboolean add_field(GQuark field, const GValue *value, gpointer data)
{
  JsonBuilder *json = data;
  if (is_json_value(value)) {
    json_builder_set_member_name(json, g_quark_to_string(field));
    add_value(json, value);
  }
  return TRUE;
}

static void add_structure(JsonBuilder *json, const GstStructure *structure)
{
  json_builder_begin_object(json);
  gst_structure_foreach(structure, add_field, json);
  json_builder_end_object(json);
}

static void add_region(JsonBuilder *json, const GstVideoRegionOfInterestMeta *roi)
{
  json_builder_begin_object(json);
  json_builder_set_member_name(json, "id");
  json_builder_add_int_value(json, roi->id);
  json_builder_set_member_name(json, "label");
  json_builder_add_string_value(json, g_quark_to_string(roi->roi_type));
  const gchar *box[] = {"x", "y", "w", "h"};
  const guint values[] = {roi->x, roi->y, roi->w, roi->h};
  for (int i = 0; i < 4; i++) {
    json_builder_set_member_name(json, box[i]);
    json_builder_add_int_value(json, values[i]);
  }
  for (GList *p = roi->params; p; p = p->next) {
    json_builder_set_member_name(json, gst_structure_get_name(p->data));
    add_structure(json, p->data);
  }
  json_builder_end_object(json);
}

static void add_frame_meta(JsonBuilder *json, GstBuffer *buffer, const gchar *meta_name,
                           const gchar *member)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta(buffer, meta_name);
  if (!meta)
    return;
  json_builder_set_member_name(json, member);
  add_structure(json, gst_custom_meta_get_structure(meta));
}

gchar *gst_npu_frame_to_json(GstBuffer *buffer)
{
  gst_npu_frame_meta_register();
  JsonBuilder *json = json_builder_new();
  json_builder_begin_object(json);
  json_builder_set_member_name(json, "pts");
  if (GST_BUFFER_PTS_IS_VALID(buffer))
    json_builder_add_int_value(json, (gint64)GST_BUFFER_PTS(buffer));
  else
    json_builder_add_null_value(json);
  json_builder_set_member_name(json, "stream");
  json_builder_add_int_value(json, gst_npu_frame_stream(buffer));
  json_builder_set_member_name(json, "rois");
  json_builder_begin_array(json);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    add_region(json, (GstVideoRegionOfInterestMeta *)meta);
  json_builder_end_array(json);
  add_frame_meta(json, buffer, GST_NPU_TRACKING_META_NAME, "tracking");
  add_frame_meta(json, buffer, GST_NPU_ANALYTICS_META_NAME, "analytics");
  json_builder_end_object(json);
  JsonGenerator *generator = json_generator_new();
  JsonNode *root = json_builder_get_root(json);
  json_generator_set_root(generator, root);
  gchar *text = json_generator_to_data(generator, NULL);
  json_node_unref(root);
  g_object_unref(generator);
  g_object_unref(json);
  return text;
}
