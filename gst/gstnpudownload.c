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
 * memory until downstream lets go of it. Memory the device cannot export
 * (host memory npuupload imported) is first copied once on the device.
 *
 * Frames whose video meta places the planes elsewhere than the caps'
 * default layout (NPU pool frames with strides rounded up to the device's
 * row alignment, frames npuupload imported with their own strides and
 * offsets) keep that meta when passed on or exported, and are copied with
 * one pitched (2D) copy per plane into the output's layout when downloaded
 * (counted in `stats` as planes-copied-2d).
 *
 * |[
 * gst-launch-1.0 videotestsrc ! npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),format=RGB,width=320,height=240 ! npudownload ! videoconvert ! autovideosink
 * gst-launch-1.0 videotestsrc ! npuupload ! npudownload ! video/x-raw(memory:DMABuf) ! fakesink
 * ]|
 */
#include "gstnpudownload.h"

#include <gst/allocators/allocators.h>

#include "gstnpumemory.h"
#include "gstnpuvideo.h"

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
 * long as it lives. Memory the device cannot export (host memory it
 * imported) is first copied on the device into memory it can; *copied
 * says so. */
static GstFlowReturn export_buffer(GstNpuDownload *self, GstBuffer *inbuf, GstBuffer **outbuf,
                                   gboolean *copied)
{
  GstBuffer *out = gst_buffer_new();
  *copied = FALSE;
  for (guint i = 0; i < gst_buffer_n_memory(inbuf); i++) {
    GstMemory *mem = gst_buffer_peek_memory(inbuf, i);
    GstBuffer *holder = gst_buffer_ref(inbuf);
    int fd = -1;
    size_t offset;
    if (!gst_npu_memory_sync_for_device(mem, NULL)) {
      mem = NULL;
    } else if (npu_buffer_export_fd(gst_npu_memory_get_buffer(mem), &fd, &offset) != NPU_OK) {
      GST_DEBUG_OBJECT(self, "memory %u not exportable (%s): copied on the device", i,
                       npu_last_error_message());
      gst_buffer_unref(holder);
      holder = NULL;
      if ((mem = gst_memory_copy(mem, 0, -1))) { /* same bytes, at offset 0 of its own buffer */
        holder = gst_buffer_new();
        gst_buffer_append_memory(holder, mem);
        *copied = TRUE;
        if (npu_buffer_export_fd(gst_npu_memory_get_buffer(mem), &fd, &offset) != NPU_OK)
          mem = NULL;
      }
    }
    if (!mem) {
      if (holder)
        gst_buffer_unref(holder);
      gst_buffer_unref(out);
      GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot export the frame as a file descriptor"),
                        ("%s", npu_last_error_message()));
      return GST_FLOW_ERROR;
    }
    GstMemory *fd_mem = gst_fd_allocator_alloc(self->fd_allocator, fd,
                                               offset + mem->offset + mem->size,
                                               GST_FD_MEMORY_FLAG_NONE);
    gst_memory_resize(fd_mem, (gssize)(offset + mem->offset), mem->size);
    gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(fd_mem), source_quark, holder,
                              (GDestroyNotify)gst_mini_object_unref);
    gst_buffer_append_memory(out, fd_mem);
  }
  gst_buffer_copy_into(out, inbuf, GST_BUFFER_COPY_METADATA, 0, -1);
  /* The fd memories hold the bytes of the NPU memories in the same places:
   * same planes, same meta. */
  if (!gst_npu_buffer_copy_video_meta(out, inbuf))
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
  /* whatever happens next reads the planes where the meta puts them, or
   * hands them on for downstream to read there */
  if (!gst_npu_base_transform_check_frame(base, &self->info, inbuf))
    return GST_FLOW_ERROR;
  if (self->fd_allocator) {
    GstFlowReturn ret = GST_FLOW_ERROR;
    gboolean copied = FALSE;
    if (!on_device)
      GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Only NPU memory can go out as fd memory"),
                        ("the input buffer is not NPU memory of this element's device"));
    else
      ret = export_buffer(self, inbuf, outbuf, &copied);
    if (ret == GST_FLOW_OK)
      gst_npu_base_transform_count_frame(base, copied ? GST_NPU_FRAME_COPIED
                                                      : GST_NPU_FRAME_ZERO_COPY);
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

/* Copies each plane, placed in `in_mem` by `in_meta`, to where the output
 * frame has it: one pitched copy a plane. */
static npu_status download_planes(GstNpuDownload *self, GstMemory *in_mem,
                                  const GstVideoMeta *in_meta, GstVideoFrame *out)
{
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(self);
  npu_status status = NPU_OK;
  npu_buffer *buffer = gst_npu_memory_get_buffer(in_mem);
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(out) && status == NPU_OK; p++) {
    gsize row_bytes;
    guint rows;
    gst_npu_video_plane_size(self->info.finfo, p, GST_VIDEO_INFO_WIDTH(&self->info),
                             GST_VIDEO_INFO_HEIGHT(&self->info), &row_bytes, &rows);
    gsize offset, stride;
    gst_npu_video_plane_place(&self->info, in_meta, p, &offset, &stride);
    status = npu_memcpy_2d_d2h(GST_VIDEO_FRAME_PLANE_DATA(out, p),
                               (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(out, p), buffer,
                               in_mem->offset + offset, stride, row_bytes, rows, NULL);
    if (status == NPU_OK)
      gst_npu_base_transform_count_frame(base, GST_NPU_PLANE_COPIED_2D);
  }
  return status;
}

static GstFlowReturn gst_npu_download_transform(GstBaseTransform *trans, GstBuffer *inbuf,
                                                GstBuffer *outbuf)
{
  GstNpuDownload *self = GST_NPU_DOWNLOAD(trans);
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(trans);
  if (self->fd_allocator || gst_buffer_peek_memory(outbuf, 0) == gst_buffer_peek_memory(inbuf, 0))
    return GST_FLOW_OK; /* passed on or exported without copy */
  GstMemory *in_mem = gst_buffer_peek_memory(inbuf, 0);
  if (gst_buffer_n_memory(inbuf) != 1) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot download a multi-memory NPU buffer"), (NULL));
    return GST_FLOW_ERROR;
  }
  npu_status status = NPU_ERROR_INTERNAL;
  gboolean mapped = FALSE;
  const GstVideoMeta *in_meta = gst_buffer_get_video_meta(inbuf);
  if (gst_npu_video_layouts_equal(&self->info, in_meta, gst_buffer_get_video_meta(outbuf))) {
    /* The same layout on both sides: one copy of the whole frame. */
    GstMapInfo map;
    if ((mapped = gst_buffer_map(outbuf, &map, GST_MAP_WRITE))) {
      if (gst_npu_memory_sync_for_device(in_mem, NULL))
        status = npu_memcpy_d2h(map.data, gst_npu_memory_get_buffer(in_mem), in_mem->offset,
                                MIN(map.size, in_mem->size));
      gst_buffer_unmap(outbuf, &map);
    }
  } else {
    /* Planes where the input's meta puts them (the device's row alignment,
     * or an imported frame's own strides and offsets): each copied with
     * one pitched copy into the output's layout. */
    GstVideoFrame out;
    if ((mapped = gst_video_frame_map(&out, &self->info, outbuf, GST_MAP_WRITE))) {
      if (gst_npu_memory_sync_for_device(in_mem, NULL))
        status = download_planes(self, in_mem, in_meta, &out);
      gst_video_frame_unmap(&out);
    }
  }
  if (!mapped) {
    GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Cannot map the output buffer"), (NULL));
    return GST_FLOW_ERROR;
  }
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
