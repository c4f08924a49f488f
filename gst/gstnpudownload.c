/**
 * SECTION:element-npudownload
 *
 * Moves video frames from NPU memory to system memory. Where the device's
 * memory is host-visible the buffer goes downstream as it is (its memory
 * maps directly, with a GstVideoMeta for the strides): no copy. Otherwise
 * one device-to-host copy into a system-memory buffer.
 *
 * |[
 * gst-launch-1.0 videotestsrc ! npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),format=RGB,width=320,height=240 ! npudownload ! videoconvert ! autovideosink
 * ]|
 */
#include "gstnpudownload.h"

#include "gstnpumemory.h"
#include "gstnpumemorytransfer.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_download_debug);
#define GST_CAT_DEFAULT gst_npu_download_debug

struct _GstNpuDownload {
  GstNpuBaseTransform parent;
  GstVideoInfo info;
  gboolean host_visible;
};

G_DEFINE_TYPE(GstNpuDownload, gst_npu_download, GST_TYPE_NPU_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(npudownload, "npudownload", GST_RANK_NONE, GST_TYPE_NPU_DOWNLOAD)

static GstCaps *gst_npu_download_transform_caps(GstBaseTransform *trans,
                                                GstPadDirection direction, GstCaps *caps,
                                                GstCaps *filter)
{
  (void)trans;
  return direction == GST_PAD_SINK ? gst_npu_caps_with_memory(caps, FALSE, FALSE, filter)
                                   : gst_npu_caps_with_memory(caps, TRUE, TRUE, filter);
}

static gboolean gst_npu_download_set_caps(GstBaseTransform *trans, GstCaps *incaps,
                                          GstCaps *outcaps)
{
  GstNpuDownload *self = GST_NPU_DOWNLOAD(trans);
  (void)outcaps;
  npu_device_properties props;
  npu_device_properties_of(gst_npu_base_transform_get_device(GST_NPU_BASE_TRANSFORM(trans)),
                           &props);
  self->host_visible = props.caps.host_visible_memory;
  return gst_video_info_from_caps(&self->info, incaps);
}

static gboolean gst_npu_download_propose_allocation(GstBaseTransform *trans, GstQuery *decide,
                                                    GstQuery *query)
{
  (void)decide;
  GstCaps *caps;
  gst_query_parse_allocation(query, &caps, NULL);
  GstCapsFeatures *features = caps ? gst_caps_get_features(caps, 0) : NULL;
  if (!features || !gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_NPU))
    return TRUE; /* system memory in: passthrough, nothing to offer */
  return gst_npu_base_transform_offer_pool(GST_NPU_BASE_TRANSFORM(trans), query, caps, TRUE);
}

static GstFlowReturn gst_npu_download_prepare_output_buffer(GstBaseTransform *trans,
                                                            GstBuffer *inbuf, GstBuffer **outbuf)
{
  GstNpuDownload *self = GST_NPU_DOWNLOAD(trans);
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(trans);
  gboolean on_device = gst_npu_buffer_is_on_device(inbuf, gst_npu_base_transform_get_device(base));
  if (!on_device || self->host_visible) {
    /* Host-visible NPU memory maps in place (after waiting for device
     * writes); system memory needs nothing. The buffer itself goes on, so
     * its pool gets it back; basetransform owns inbuf. */
    *outbuf = inbuf;
    if (on_device && !gst_buffer_get_video_meta(inbuf)) {
      *outbuf = gst_buffer_make_writable(gst_buffer_ref(inbuf));
      gst_buffer_add_video_meta_full(*outbuf, GST_VIDEO_FRAME_FLAG_NONE,
                                     GST_VIDEO_INFO_FORMAT(&self->info),
                                     GST_VIDEO_INFO_WIDTH(&self->info),
                                     GST_VIDEO_INFO_HEIGHT(&self->info),
                                     GST_VIDEO_INFO_N_PLANES(&self->info), self->info.offset,
                                     self->info.stride);
    }
    gst_npu_base_transform_count_frame(base, GST_NPU_FRAME_ZERO_COPY);
    return GST_FLOW_OK;
  }
  return GST_BASE_TRANSFORM_CLASS(gst_npu_download_parent_class)
      ->prepare_output_buffer(trans, inbuf, outbuf);
}

static GstFlowReturn gst_npu_download_transform(GstBaseTransform *trans, GstBuffer *inbuf,
                                                GstBuffer *outbuf)
{
  GstNpuDownload *self = GST_NPU_DOWNLOAD(trans);
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(trans);
  if (gst_buffer_peek_memory(outbuf, 0) == gst_buffer_peek_memory(inbuf, 0))
    return GST_FLOW_OK; /* passed on without copy */
  GstMemory *in_mem = gst_buffer_peek_memory(inbuf, 0);
  GstMapInfo map;
  if (gst_buffer_n_memory(inbuf) != 1 || !gst_buffer_map(outbuf, &map, GST_MAP_WRITE)) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot download a multi-memory NPU buffer"), (NULL));
    return GST_FLOW_ERROR;
  }
  gsize size = MIN(map.size, in_mem->size);
  npu_status status = NPU_ERROR_INTERNAL;
  if (gst_npu_memory_sync_for_device(in_mem, NULL))
    status = npu_memcpy_d2h(map.data, gst_npu_memory_get_buffer(in_mem), in_mem->offset, size);
  gst_buffer_unmap(outbuf, &map);
  if (status != NPU_OK) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Download from the NPU failed"),
                      ("%s", npu_last_error_message()));
    return GST_FLOW_ERROR;
  }
  gst_npu_base_transform_count_frame(base, GST_NPU_FRAME_COPIED);
  return GST_FLOW_OK;
}

static void gst_npu_download_class_init(GstNpuDownloadClass *klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  gst_npu_element_class_add_pad_templates(element_class, GST_NPU_PAD_BOTH, GST_NPU_PAD_SYSTEM);
  gst_element_class_set_static_metadata(
      element_class, "NPU download", "Filter/Video/Hardware",
      "Moves video frames from NPU device memory to system memory: zero-copy where the device "
      "memory is host-visible, else one device-to-host copy",
      "gst-npu developers");
  trans_class->transform_caps = gst_npu_download_transform_caps;
  trans_class->set_caps = gst_npu_download_set_caps;
  trans_class->propose_allocation = gst_npu_download_propose_allocation;
  trans_class->prepare_output_buffer = gst_npu_download_prepare_output_buffer;
  trans_class->transform = gst_npu_download_transform;
  trans_class->passthrough_on_same_caps = TRUE;
  GST_DEBUG_CATEGORY_INIT(gst_npu_download_debug, "npudownload", 0, "NPU download");
}

static void gst_npu_download_init(GstNpuDownload *self)
{
  (void)self;
}
