/**
 * SECTION:element-npumetaconvert
 *
 * Writes one JSON line per frame: its timestamp, the stream it came from
 * (npuinfer's sink pad index) and every GstVideoRegionOfInterestMeta with
 * its box and params (npudecode's "classification", "detection",
 * "text-region", "text"...). Frames pass through untouched.
 *
 *   {"pts":33333333,"stream":0,"rois":[{"id":0,"label":"text","x":78,"y":212,
 *    "w":485,"h":37,"text-region":{"confidence":0.995},"text":{"text":"HELLO",
 *    "confidence":0.99}}]}
 *
 * |[
 * gst-launch-1.0 ... ! npudecode method=ctc labels=dict.txt ! npumetaconvert location=results.jsonl ! fakesink
 * ]|
 */
#include "gstnpumetaconvert.h"

#include <gst/video/video.h>
#include <errno.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "gst/npu/npu-tensor-meta.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_meta_convert_debug);
#define GST_CAT_DEFAULT gst_npu_meta_convert_debug

struct _GstNpuMetaConvert {
  GstBaseTransform parent;
  gchar *location;
  FILE *out;
};

G_DEFINE_TYPE(GstNpuMetaConvert, gst_npu_meta_convert, GST_TYPE_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(npumetaconvert, "npumetaconvert", GST_RANK_NONE,
                            GST_TYPE_NPU_META_CONVERT)

enum { PROP_0, PROP_LOCATION };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));

/* A param's plain fields (strings, numbers, booleans) as JSON members;
 * others (such as npuinfer's tensor buffers) are left out. */
static gboolean add_field(GQuark field, const GValue *value, gpointer data)
{
  JsonBuilder *json = data;
  GType type = G_VALUE_TYPE(value);
  if (type == G_TYPE_STRING) {
    json_builder_set_member_name(json, g_quark_to_string(field));
    json_builder_add_string_value(json, g_value_get_string(value));
  } else if (type == G_TYPE_INT || type == G_TYPE_UINT || type == G_TYPE_INT64 ||
             type == G_TYPE_UINT64) {
    GValue as_int = G_VALUE_INIT;
    g_value_init(&as_int, G_TYPE_INT64);
    g_value_transform(value, &as_int);
    json_builder_set_member_name(json, g_quark_to_string(field));
    json_builder_add_int_value(json, g_value_get_int64(&as_int));
  } else if (type == G_TYPE_DOUBLE || type == G_TYPE_FLOAT) {
    json_builder_set_member_name(json, g_quark_to_string(field));
    json_builder_add_double_value(json, type == G_TYPE_DOUBLE ? g_value_get_double(value)
                                                              : g_value_get_float(value));
  } else if (type == G_TYPE_BOOLEAN) {
    json_builder_set_member_name(json, g_quark_to_string(field));
    json_builder_add_boolean_value(json, g_value_get_boolean(value));
  }
  return TRUE;
}

static gchar *frame_json(GstBuffer *buffer)
{
  JsonBuilder *json = json_builder_new();
  json_builder_begin_object(json);
  json_builder_set_member_name(json, "pts");
  if (GST_BUFFER_PTS_IS_VALID(buffer))
    json_builder_add_int_value(json, (gint64)GST_BUFFER_PTS(buffer));
  else
    json_builder_add_null_value(json);
  const GstNpuTensorMeta *tensors = gst_buffer_get_npu_tensor_meta(buffer);
  json_builder_set_member_name(json, "stream");
  json_builder_add_int_value(json, tensors ? (gint64)tensors->pad_index : -1);
  json_builder_set_member_name(json, "rois");
  json_builder_begin_array(json);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)meta;
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
      GstStructure *param = p->data;
      json_builder_set_member_name(json, gst_structure_get_name(param));
      json_builder_begin_object(json);
      gst_structure_foreach(param, add_field, json);
      json_builder_end_object(json);
    }
    json_builder_end_object(json);
  }
  json_builder_end_array(json);
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

static GstFlowReturn gst_npu_meta_convert_transform_ip(GstBaseTransform *trans,
                                                       GstBuffer *buffer)
{
  GstNpuMetaConvert *self = GST_NPU_META_CONVERT(trans);
  gchar *line = frame_json(buffer);
  gboolean written = fprintf(self->out, "%s\n", line) > 0 && fflush(self->out) == 0;
  g_free(line);
  if (!written) {
    GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Cannot write to '%s'", self->location),
                      ("%s", g_strerror(errno)));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

static gboolean gst_npu_meta_convert_start(GstBaseTransform *trans)
{
  GstNpuMetaConvert *self = GST_NPU_META_CONVERT(trans);
  if (!self->location || g_strcmp0(self->location, "-") == 0) {
    self->out = stdout;
    return TRUE;
  }
  self->out = fopen(self->location, "w");
  if (!self->out) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("Cannot open '%s'", self->location),
                      ("%s", g_strerror(errno)));
    return FALSE;
  }
  return TRUE;
}

static gboolean gst_npu_meta_convert_stop(GstBaseTransform *trans)
{
  GstNpuMetaConvert *self = GST_NPU_META_CONVERT(trans);
  if (self->out && self->out != stdout)
    fclose(self->out);
  self->out = NULL;
  return TRUE;
}

static void gst_npu_meta_convert_set_property(GObject *object, guint id, const GValue *value,
                                              GParamSpec *pspec)
{
  GstNpuMetaConvert *self = GST_NPU_META_CONVERT(object);
  if (id == PROP_LOCATION) {
    g_free(self->location);
    self->location = g_value_dup_string(value);
  } else {
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void gst_npu_meta_convert_get_property(GObject *object, guint id, GValue *value,
                                              GParamSpec *pspec)
{
  GstNpuMetaConvert *self = GST_NPU_META_CONVERT(object);
  if (id == PROP_LOCATION)
    g_value_set_string(value, self->location);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void gst_npu_meta_convert_finalize(GObject *object)
{
  g_free(GST_NPU_META_CONVERT(object)->location);
  G_OBJECT_CLASS(gst_npu_meta_convert_parent_class)->finalize(object);
}

static void gst_npu_meta_convert_class_init(GstNpuMetaConvertClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *transform_class = GST_BASE_TRANSFORM_CLASS(klass);
  object_class->set_property = gst_npu_meta_convert_set_property;
  object_class->get_property = gst_npu_meta_convert_get_property;
  object_class->finalize = gst_npu_meta_convert_finalize;
  g_object_class_install_property(object_class, PROP_LOCATION,
      g_param_spec_string("location", "Location",
                          "File the JSON lines go to (\"-\" or unset: standard output)", "-",
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "NPU results to JSON", "Filter/Analyzer/Video",
      "Writes one JSON line per frame: time, stream, and each region of interest with its box "
      "and result params; frames pass through", "gst-npu developers");
  transform_class->transform_ip = gst_npu_meta_convert_transform_ip;
  transform_class->start = gst_npu_meta_convert_start;
  transform_class->stop = gst_npu_meta_convert_stop;
  transform_class->transform_ip_on_passthrough = TRUE;
  GST_DEBUG_CATEGORY_INIT(gst_npu_meta_convert_debug, "npumetaconvert", 0,
                          "NPU results to JSON");
}

static void gst_npu_meta_convert_init(GstNpuMetaConvert *self)
{
  self->location = g_strdup("-");
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), TRUE);
}
