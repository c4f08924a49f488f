/**
 * SECTION:element-npumetaconvert
 *
 * Writes one JSON line per frame: its timestamp, the stream it came from
 * (npuinfer's sink pad index) and every GstVideoRegionOfInterestMeta with
 * its box and params (npudecode's "classification", "detection",
 * "text-region", "text", nputrack's "tracking"...), then the frame's
 * "tracking" (ended tracks) and "analytics" (counts, events) when nputrack
 * and npuanalytics left them. Frames pass through untouched.
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

#include <errno.h>
#include <stdio.h>

#include "gstnpuframejson.h"

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

static GstFlowReturn gst_npu_meta_convert_transform_ip(GstBaseTransform *trans,
                                                       GstBuffer *buffer)
{
  GstNpuMetaConvert *self = GST_NPU_META_CONVERT(trans);
  gchar *line = gst_npu_frame_to_json(buffer);
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
