/**
 * SECTION:element-npudownload
 *
 * Moves video frames from NPU memory to system memory. Where the device's
 * memory is host-visible the buffer goes downstream as it is (its memory
 * maps directly, with a GstVideoMeta for the strides): no copy. Otherwise
 * one device-to-host copy into a system-memory buffer.
 *
 * Where the device exports its memory as file descriptors and downstream
 * takes `video/x-raw(memory:DMABuf)`, each frame goes out as fd memories on
 * the device memory itself, with a GstVideoMeta: no copy. They are
 * GstDmaBufMemory where the device's fds are real dma-bufs, else
 * GstFdMemory (the CPU backend's memfds: mappable by anyone, but not
 * importable by a GPU or V4L2 driver). The device memory stays with the fd
 * memory until downstream lets go of it.
 *
 * |[
 * gst-launch-1.0 videotestsrc ! npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),format=RGB,width=320,height=240 ! npudownload ! videoconvert ! autovideosink
 * gst-launch-1.0 videotestsrc ! npuupload ! npudownload ! video/x-raw(memory:DMABuf) ! fakesink
 * ]|
 */
#include "gstnpudownload.h"

#include <gst/allocators/allocators.h>

#include "gstnpumemory.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_download_debug);
#define GST_CAT_DEFAULT gst_npu_download_debug

struct _GstNpuDownload {
  GstNpuBaseTransform parent;
  GstVideoInfo info;
  gboolean host_visible;
  GstAllocator *fd_allocator; /* set when frames go out as fds (memory:DMABuf) */
};

G_DEFINE_TYPE(GstNpuDownload, gst_npu_download, GST_TYPE_NPU_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(npudownload, "npudownload", GST_RANK_NONE, GST_TYPE_NPU_DOWNLOAD)

/* Until the device is open, any device might export. */
static gboolean device_exports_fds(GstNpuDownload *self)
{
  npu_device *device = gst_npu_base_transform_get_device(GST_NPU_BASE_TRANSFORM(self));
  npu_device_properties props;
  return !device || (npu_device_properties_of(device, &props) == NPU_OK && props.caps.fd_export);
}

static GstCaps *gst_npu_download_transform_caps(GstBaseTransform *trans,
                                                GstPadDirection direction, GstCaps *caps,
                                                GstCaps *filter)
{
  GstNpuDownload *self = GST_NPU_DOWNLOAD(trans);
  if (direction == GST_PAD_SINK) /* only NPU memory goes out as fds */
    return gst_npu_caps_with_memory(
        caps, GST_NPU_MEMORY_SYSTEM | (device_exports_fds(self) ? GST_NPU_MEMORY_DMABUF : 0),
        GST_NPU_MEMORY_SYSTEM, 0, filter);
  return gst_npu_caps_with_memory(caps, 0, GST_NPU_MEMORY_NPU | GST_NPU_MEMORY_SYSTEM,
                                  GST_NPU_MEMORY_NPU, filter);
}

static gboolean gst_npu_download_set_caps(GstBaseTransform *trans, GstCaps *incaps,
                                          GstCaps *outcaps)
{
  GstNpuDownload *self = GST_NPU_DOWNLOAD(trans);
  npu_device_properties props;
  npu_device_properties_of(gst_npu_base_transform_get_device(GST_NPU_BASE_TRANSFORM(trans)),
                           &props);
  self->host_visible = props.caps.host_visible_memory;
  gst_clear_object(&self->fd_allocator);
  if (gst_npu_caps_memory_kind(outcaps) == GST_NPU_MEMORY_DMABUF)
    self->fd_allocator =
        props.caps.dmabuf_export ? gst_dmabuf_allocator_new() : gst_fd_allocator_new();
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

/* Downstream reads the planes where the device put them. */
static void add_video_meta(GstNpuDownload *self, GstBuffer *buffer)
{
  gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE,
                                 GST_VIDEO_INFO_FORMAT(&self->info),
                                 GST_VIDEO_INFO_WIDTH(&self->info),
                                 GST_VIDEO_INFO_HEIGHT(&self->info),
                                 GST_VIDEO_INFO_N_PLANES(&self->info), self->info.offset,
                                 self->info.stride);
}

/* Tags an exported fd memory with the NPU buffer it lives on. */
static GQuark source_quark;

/* Each NPU memory of `inbuf` as an fd memory on the same device memory,
 * which holds `inbuf` (so neither it nor its pool reuse the memory) for as
 * long as it lives. */
static GstFlowReturn export_buffer(GstNpuDownload *self, GstBuffer *inbuf, GstBuffer **outbuf)
{
  GstBuffer *out = gst_buffer_new();
  for (guint i = 0; i < gst_buffer_n_memory(inbuf); i++) {
    GstMemory *mem = gst_buffer_peek_memory(inbuf, i);
    int fd;
    size_t offset;
    if (!gst_npu_memory_sync_for_device(mem, NULL) ||
        npu_buffer_export_fd(gst_npu_memory_get_buffer(mem), &fd, &offset) != NPU_OK) {
      gst_buffer_unref(out);
      GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot export the frame as a file descriptor"),
                        ("%s", npu_last_error_message()));
      return GST_FLOW_ERROR;
    }
    GstMemory *fd_mem = gst_fd_allocator_alloc(self->fd_allocator, fd,
                                               offset + mem->offset + mem->size,
                                               GST_FD_MEMORY_FLAG_NONE);
    gst_memory_resize(fd_mem, (gssize)(offset + mem->offset), mem->size);
    gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(fd_mem), source_quark, gst_buffer_ref(inbuf),
                              (GDestroyNotify)gst_mini_object_unref);
    gst_buffer_append_memory(out, fd_mem);
  }
  gst_buffer_copy_into(out, inbuf, GST_BUFFER_COPY_METADATA, 0, -1);
  if (!gst_buffer_get_video_meta(out))
    add_video_meta(self, out);
  *outbuf = out;
  return GST_FLOW_OK;
}

static GstFlowReturn gst_npu_download_prepare_output_buffer(GstBaseTransform *trans,
                                                            GstBuffer *inbuf, GstBuffer **outbuf)
{
  GstNpuDownload *self = GST_NPU_DOWNLOAD(trans);
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(trans);
  gboolean on_device = gst_npu_buffer_is_on_device(inbuf, gst_npu_base_transform_get_device(base));
  if (self->fd_allocator) {
    GstFlowReturn ret = GST_FLOW_ERROR;
    if (!on_device)
      GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Only NPU memory can go out as fd memory"),
                        ("the input buffer is not NPU memory of this element's device"));
    else
      ret = export_buffer(self, inbuf, outbuf);
    if (ret == GST_FLOW_OK)
      gst_npu_base_transform_count_frame(base, GST_NPU_FRAME_ZERO_COPY);
    return ret;
  }
  if (!on_device || self->host_visible) {
    /* Host-visible NPU memory maps in place (after waiting for device
     * writes); system memory needs nothing. The buffer itself goes on, so
     * its pool gets it back; basetransform owns inbuf. */
    *outbuf = inbuf;
    if (on_device && !gst_buffer_get_video_meta(inbuf)) {
      *outbuf = gst_buffer_make_writable(gst_buffer_ref(inbuf));
      add_video_meta(self, *outbuf);
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
  if (self->fd_allocator || gst_buffer_peek_memory(outbuf, 0) == gst_buffer_peek_memory(inbuf, 0))
    return GST_FLOW_OK; /* passed on or exported without copy */
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

static gboolean gst_npu_download_stop(GstBaseTransform *trans)
{
  gst_clear_object(&GST_NPU_DOWNLOAD(trans)->fd_allocator);
  return GST_BASE_TRANSFORM_CLASS(gst_npu_download_parent_class)->stop(trans);
}

static void gst_npu_download_class_init(GstNpuDownloadClass *klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  gst_npu_element_class_add_pad_templates(element_class,
                                          GST_NPU_MEMORY_NPU | GST_NPU_MEMORY_SYSTEM,
                                          GST_NPU_MEMORY_SYSTEM | GST_NPU_MEMORY_DMABUF);
  gst_element_class_set_static_metadata(
      element_class, "NPU download", "Filter/Video/Hardware",
      "Moves video frames from NPU device memory to system memory: zero-copy where the device "
      "memory is host-visible, or as dma-buf/fd memory (memory:DMABuf) where the device exports "
      "fds, else one device-to-host copy",
      "gst-npu developers");
  trans_class->stop = gst_npu_download_stop;
  trans_class->transform_caps = gst_npu_download_transform_caps;
  trans_class->set_caps = gst_npu_download_set_caps;
  trans_class->propose_allocation = gst_npu_download_propose_allocation;
  trans_class->prepare_output_buffer = gst_npu_download_prepare_output_buffer;
  trans_class->transform = gst_npu_download_transform;
  trans_class->passthrough_on_same_caps = TRUE;
  GST_DEBUG_CATEGORY_INIT(gst_npu_download_debug, "npudownload", 0, "NPU download");
  source_quark = g_quark_from_static_string("GstNpuDownloadSource");
}

static void gst_npu_download_init(GstNpuDownload *self)
{
  (void)self;
}
