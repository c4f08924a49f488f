/**
 * SECTION:element-npuvpp
 *
 * Colour conversion, scaling, cropping (GstVideoCropMeta) and letterboxing
 * of frames in NPU memory, in one pass of the runtime's VPP on the
 * element's own stream, like cudaconvertscale for CUDA memory. Regions of
 * interest (GstVideoRegionOfInterestMeta) follow the frame: mapped through
 * the scale, crop and letterbox, clipped, their params kept; so do the
 * frame -> model-input mappings of tensor metas (GstNpuTensorMeta).
 *
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12,width=1920,height=1080 ! npuupload ! npuvpp add-borders=true ! video/x-raw(memory:NPUMemory),format=RGB,width=640,height=640 ! npudownload ! fakesink
 * ]|
 */
#include "gstnpuvpp.h"

#include "gst/npu/npu-tensor-meta.h"
#include "gstnpumemory.h"
#include "gstnpuvideo.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_vpp_debug);
#define GST_CAT_DEFAULT gst_npu_vpp_debug

struct _GstNpuVpp {
  GstNpuBaseTransform parent;
  npu_scale_method method;
  gboolean add_borders;
  guint32 border_color;
  GstVideoInfo in_info, out_info;
};

G_DEFINE_TYPE(GstNpuVpp, gst_npu_vpp, GST_TYPE_NPU_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(npuvpp, "npuvpp", GST_RANK_NONE, GST_TYPE_NPU_VPP)

enum { PROP_0, PROP_METHOD, PROP_ADD_BORDERS, PROP_BORDER_COLOR };

#define GST_TYPE_NPU_VPP_METHOD (gst_npu_vpp_method_get_type())
static GType gst_npu_vpp_method_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {NPU_SCALE_BILINEAR, "Bilinear interpolation", "bilinear"},
      {NPU_SCALE_NEAREST, "Nearest neighbour", "nearest"},
      {NPU_SCALE_AREA, "Area average (strong downscaling)", "area"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstNpuVppMethod", values));
  return type;
}

/* Describes an NPU-memory buffer as a VPP image. */
static gboolean image_of(const GstVideoInfo *info, GstBuffer *buffer, npu_image *image)
{
  if (gst_buffer_n_memory(buffer) != 1)
    return FALSE;
  GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
  return gst_npu_image_describe(info, gst_buffer_get_video_meta(buffer),
                                gst_npu_memory_get_buffer(mem), mem->offset, image);
}

/* Any size and format out, like videoconvertscale. */
static GstCaps *gst_npu_vpp_transform_caps(GstBaseTransform *trans, GstPadDirection direction,
                                           GstCaps *caps, GstCaps *filter)
{
  (void)trans;
  (void)direction;
  GstCaps *result = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(caps); i++) {
    GstStructure *s = gst_structure_copy(gst_caps_get_structure(caps, i));
    gst_structure_set(s, "width", GST_TYPE_INT_RANGE, 1, 32768, "height", GST_TYPE_INT_RANGE, 1,
                      32768, NULL);
    gst_structure_remove_fields(s, "format", "colorimetry", "chroma-site", "pixel-aspect-ratio",
                                NULL);
    result = gst_caps_merge_structure_full(
        result, s, gst_caps_features_copy(gst_caps_get_features(caps, i)));
  }
  if (filter) {
    GstCaps *filtered = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(result);
    result = filtered;
  }
  return result;
}

/* Unfixed fields take the input's values: same size and format unless asked. */
static GstCaps *gst_npu_vpp_fixate_caps(GstBaseTransform *trans, GstPadDirection direction,
                                        GstCaps *caps, GstCaps *othercaps)
{
  (void)trans;
  (void)direction;
  othercaps = gst_caps_truncate(gst_caps_make_writable(othercaps));
  GstStructure *in = gst_caps_get_structure(caps, 0);
  GstStructure *out = gst_caps_get_structure(othercaps, 0);
  gint width = 0, height = 0;
  gst_structure_get_int(in, "width", &width);
  gst_structure_get_int(in, "height", &height);
  const gchar *format = gst_structure_get_string(in, "format");
  gst_structure_fixate_field_nearest_int(out, "width", width);
  gst_structure_fixate_field_nearest_int(out, "height", height);
  if (format)
    gst_structure_fixate_field_string(out, "format", format);
  if (gst_structure_has_field(out, "pixel-aspect-ratio"))
    gst_structure_fixate_field_nearest_fraction(out, "pixel-aspect-ratio", 1, 1);
  return gst_caps_fixate(othercaps);
}

static gboolean gst_npu_vpp_set_caps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstNpuVpp *self = GST_NPU_VPP(trans);
  if (!gst_video_info_from_caps(&self->in_info, incaps) ||
      !gst_video_info_from_caps(&self->out_info, outcaps))
    return FALSE;
  gboolean same = gst_video_info_is_equal(&self->in_info, &self->out_info);
  gst_base_transform_set_passthrough(trans, same);
  return TRUE;
}

static gboolean gst_npu_vpp_propose_allocation(GstBaseTransform *trans, GstQuery *decide,
                                               GstQuery *query)
{
  if (gst_base_transform_is_passthrough(trans))
    return GST_BASE_TRANSFORM_CLASS(gst_npu_vpp_parent_class)
        ->propose_allocation(trans, decide, query);
  GstCaps *caps;
  gst_query_parse_allocation(query, &caps, NULL);
  /* Upstream may hand us crop metadata instead of cropping itself. */
  gst_query_add_allocation_meta(query, GST_VIDEO_CROP_META_API_TYPE, NULL);
  return gst_npu_base_transform_offer_pool(GST_NPU_BASE_TRANSFORM(trans), query, caps, FALSE);
}

static gboolean gst_npu_vpp_decide_allocation(GstBaseTransform *trans, GstQuery *query)
{
  GstCaps *caps;
  gst_query_parse_allocation(query, &caps, NULL);
  return gst_npu_base_transform_offer_pool(GST_NPU_BASE_TRANSFORM(trans), query, caps, TRUE) &&
         GST_BASE_TRANSFORM_CLASS(gst_npu_vpp_parent_class)->decide_allocation(trans, query);
}

/* Our output pool adds its own video meta, and the crop is applied.
 * Regions of interest are mapped by transform(), once the VPP has said
 * where the frame landed. */
static gboolean gst_npu_vpp_transform_meta(GstBaseTransform *trans, GstBuffer *outbuf,
                                           GstMeta *meta, GstBuffer *inbuf)
{
  GType api = meta->info->api;
  if (api == GST_VIDEO_META_API_TYPE || api == GST_VIDEO_CROP_META_API_TYPE ||
      api == GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)
    return FALSE;
  return GST_BASE_TRANSFORM_CLASS(gst_npu_vpp_parent_class)
      ->transform_meta(trans, outbuf, meta, inbuf);
}

/* Each region of interest of `inbuf` onto `outbuf` through the VPP's
 * frame -> output mapping (scale, crop, letterbox), clipped to the output;
 * a region left empty (outside the crop) is dropped. Params are copied. */
static void map_regions_of_interest(GstBuffer *inbuf, GstBuffer *outbuf,
                                    const npu_letterbox *mapping, const GstVideoInfo *out_info)
{
  gpointer state = NULL;
  GstMeta *meta;
  const double width = GST_VIDEO_INFO_WIDTH(out_info), height = GST_VIDEO_INFO_HEIGHT(out_info);
  while ((meta = gst_buffer_iterate_meta_filtered(inbuf, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    const GstVideoRegionOfInterestMeta *roi = (const GstVideoRegionOfInterestMeta *)meta;
    double x0 = CLAMP(roi->x * mapping->scale_x + mapping->pad_x, 0, width);
    double y0 = CLAMP(roi->y * mapping->scale_y + mapping->pad_y, 0, height);
    double x1 = CLAMP((roi->x + roi->w) * mapping->scale_x + mapping->pad_x, 0, width);
    double y1 = CLAMP((roi->y + roi->h) * mapping->scale_y + mapping->pad_y, 0, height);
    guint x = (guint)(x0 + 0.5), y = (guint)(y0 + 0.5);
    guint w = (guint)(x1 + 0.5) - x, h = (guint)(y1 + 0.5) - y;
    if (w == 0 || h == 0)
      continue;
    GstVideoRegionOfInterestMeta *to =
        gst_buffer_add_video_region_of_interest_meta_id(outbuf, roi->roi_type, x, y, w, h);
    to->id = roi->id;
    to->parent_id = roi->parent_id;
    for (GList *param = roi->params; param; param = param->next)
      gst_video_region_of_interest_meta_add_param(to, gst_structure_copy(param->data));
  }
}

/* The tensor metas copied onto `outbuf` said how the input frame maps into
 * their model's input; the frame has moved by `mapping` (output = frame *
 * scale + pad), so their mapping now starts from the output frame. */
static void remap_tensor_metas(GstBuffer *outbuf, const npu_letterbox *mapping)
{
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(outbuf, &state, GST_NPU_TENSOR_META_API_TYPE))) {
    GstNpuTensorMeta *tensors = (GstNpuTensorMeta *)meta;
    if (tensors->scale_x == 0 || mapping->scale_x == 0 || mapping->scale_y == 0)
      continue; /* not known, or nothing to map */
    tensors->scale_x /= mapping->scale_x;
    tensors->scale_y /= mapping->scale_y;
    tensors->offset_x -= mapping->pad_x * tensors->scale_x;
    tensors->offset_y -= mapping->pad_y * tensors->scale_y;
  }
}

static void release_input(void *buffer)
{
  gst_buffer_unref(buffer);
}

static GstFlowReturn gst_npu_vpp_transform(GstBaseTransform *trans, GstBuffer *inbuf,
                                           GstBuffer *outbuf)
{
  GstNpuVpp *self = GST_NPU_VPP(trans);
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(trans);
  npu_stream *stream = gst_npu_base_transform_get_stream(base);
  if (!gst_npu_buffer_is_on_device(inbuf, gst_npu_base_transform_get_device(base))) {
    GST_ELEMENT_ERROR(self, STREAM, WRONG_TYPE, ("Input is not NPU memory of this device"),
                      ("put npuupload before npuvpp"));
    return GST_FLOW_ERROR;
  }
  if (!gst_npu_base_transform_check_frame(base, &self->in_info, inbuf))
    return GST_FLOW_ERROR;
  npu_image src, dst;
  if (!image_of(&self->in_info, inbuf, &src) || !image_of(&self->out_info, outbuf, &dst)) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Unsupported buffer layout"),
                      ("one NPU memory per buffer expected"));
    return GST_FLOW_ERROR;
  }
  npu_letterbox mapping;
  npu_vpp_job job = {&src, {0}, 0, &mapping};
  GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta(inbuf);
  if (crop)
    job.crop = (npu_rect){(int32_t)crop->x, (int32_t)crop->y, crop->width, crop->height};
  GST_OBJECT_LOCK(self); /* the properties may change while playing */
  npu_vpp_params params = {self->method, self->add_borders, NPU_LETTERBOX_CENTER,
                           {(self->border_color >> 16) & 0xff, (self->border_color >> 8) & 0xff,
                            self->border_color & 0xff}};
  GST_OBJECT_UNLOCK(self);
  GstMemory *in_mem = gst_buffer_peek_memory(inbuf, 0);
  GstMemory *out_mem = gst_buffer_peek_memory(outbuf, 0);
  npu_status status = NPU_ERROR_INTERNAL;
  if (gst_npu_memory_sync_for_device(in_mem, stream))
    status = npu_vpp_to_images(stream, &job, 1, &params, &dst, 1);
  if (status != NPU_OK || !gst_npu_memory_mark_written(out_mem, stream)) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("NPU VPP failed"), ("%s: %s",
                      npu_status_name(status), npu_last_error_message()));
    return GST_FLOW_ERROR;
  }
  map_regions_of_interest(inbuf, outbuf, &mapping, &self->out_info);
  remap_tensor_metas(outbuf, &mapping);
  /* The input goes back to its pool (and to a producer writing into it)
   * only once the device has read it. */
  if (npu_stream_launch_host_func(stream, release_input, gst_buffer_ref(inbuf)) != NPU_OK) {
    npu_stream_synchronize(stream);
    gst_buffer_unref(inbuf);
  }
  if (!gst_npu_base_transform_end_frame(base))
    return GST_FLOW_ERROR;
  gst_npu_base_transform_count_frame(base, GST_NPU_FRAME_PROCESSED);
  return GST_FLOW_OK;
}

static void gst_npu_vpp_set_property(GObject *object, guint id, const GValue *value,
                                     GParamSpec *pspec)
{
  GstNpuVpp *self = GST_NPU_VPP(object);
  GST_OBJECT_LOCK(self);
  switch (id) {
  case PROP_METHOD:
    self->method = (npu_scale_method)g_value_get_enum(value);
    break;
  case PROP_ADD_BORDERS:
    self->add_borders = g_value_get_boolean(value);
    break;
  case PROP_BORDER_COLOR:
    self->border_color = g_value_get_uint(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_npu_vpp_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  GstNpuVpp *self = GST_NPU_VPP(object);
  GST_OBJECT_LOCK(self);
  switch (id) {
  case PROP_METHOD:
    g_value_set_enum(value, self->method);
    break;
  case PROP_ADD_BORDERS:
    g_value_set_boolean(value, self->add_borders);
    break;
  case PROP_BORDER_COLOR:
    g_value_set_uint(value, self->border_color);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_npu_vpp_class_init(GstNpuVppClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  object_class->set_property = gst_npu_vpp_set_property;
  object_class->get_property = gst_npu_vpp_get_property;
  g_object_class_install_property(
      object_class, PROP_METHOD,
      g_param_spec_enum("method", "Method",
                        "How pixels are resampled: bilinear, nearest, or area average for "
                        "strong downscaling",
                        GST_TYPE_NPU_VPP_METHOD, NPU_SCALE_BILINEAR,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property(
      object_class, PROP_ADD_BORDERS,
      g_param_spec_boolean("add-borders", "Add borders",
                           "Keep the aspect ratio and pad the rest (letterbox, centred)", FALSE,
                           G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                               GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property(
      object_class, PROP_BORDER_COLOR,
      g_param_spec_uint("border-color", "Border color",
                        "Padding colour as 0xAARRGGBB (alpha ignored)", 0, G_MAXUINT32,
                        0xff000000,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING));
  gst_npu_element_class_add_pad_templates(element_class, GST_NPU_MEMORY_NPU, GST_NPU_MEMORY_NPU);
  gst_element_class_set_static_metadata(
      element_class, "NPU video converter and scaler", "Filter/Converter/Video/Scaler/Hardware",
      "Converts colour format, scales, crops (GstVideoCropMeta) and letterboxes video in NPU "
      "memory in one pass of the runtime's VPP",
      "gst-npu developers");
  trans_class->transform_caps = gst_npu_vpp_transform_caps;
  trans_class->fixate_caps = gst_npu_vpp_fixate_caps;
  trans_class->set_caps = gst_npu_vpp_set_caps;
  trans_class->propose_allocation = gst_npu_vpp_propose_allocation;
  trans_class->decide_allocation = gst_npu_vpp_decide_allocation;
  trans_class->transform_meta = gst_npu_vpp_transform_meta;
  trans_class->transform = gst_npu_vpp_transform;
  trans_class->passthrough_on_same_caps = TRUE;
  gst_type_mark_as_plugin_api(GST_TYPE_NPU_VPP_METHOD, 0);
  GST_DEBUG_CATEGORY_INIT(gst_npu_vpp_debug, "npuvpp", 0, "NPU VPP");
}

static void gst_npu_vpp_init(GstNpuVpp *self)
{
  self->method = NPU_SCALE_BILINEAR;
  self->border_color = 0xff000000;
}
