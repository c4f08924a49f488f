/**
 * SECTION:element-npuupload
 *
 * Moves video frames from system memory into NPU memory, copying only when
 * nothing else works:
 *
 * - input already in NPU memory of the same device: passed on as is;
 * - upstream writes into buffers of the NPU pool this element proposes in
 *   the allocation query: nothing to move;
 * - the frame is a dma-buf or other fd memory (`memory:DMABuf` caps, or
 *   GstFdMemory in system memory) and the device imports fds: the fd is
 *   imported, not copied;
 * - the device can import host memory: the frame is wrapped, not copied;
 * - otherwise one host-to-device copy.
 *
 * `stats` tells which of these happened.
 *
 * A frame's planes may sit wherever its GstVideoMeta says (strides and
 * offsets of its own, planes in several memories): imported frames keep the
 * meta; copies land in the layout of this element's NPU pool, whose strides
 * and plane offsets are rounded up to the device's row alignment (see
 * npu-info), and carry its GstVideoMeta. Where the layouts are the same the
 * frame is one copy; where they differ each plane is one pitched (2D) copy,
 * counted in `stats` as planes-copied-2d. A frame smaller than its
 * caps (no meta) or its meta say, or a meta that contradicts the caps, is an
 * element error.
 *
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! npuupload ! npudownload ! fakesink
 * ]|
 */
#include "gstnpuupload.h"

#include <gst/allocators/allocators.h>

#include "gstnpumemory.h"
#include "gstnpuvideo.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_upload_debug);
#define GST_CAT_DEFAULT gst_npu_upload_debug

struct _GstNpuUpload {
  GstNpuBaseTransform parent;
  GstVideoInfo info;
  npu_device_caps device_caps;
  gboolean output_ready; /* prepare_output_buffer passed or imported the frame */
};

G_DEFINE_TYPE(GstNpuUpload, gst_npu_upload, GST_TYPE_NPU_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(npuupload, "npuupload", GST_RANK_NONE, GST_TYPE_NPU_UPLOAD)

static GstCaps *gst_npu_upload_transform_caps(GstBaseTransform *trans, GstPadDirection direction,
                                              GstCaps *caps, GstCaps *filter)
{
  (void)trans;
  const GstNpuMemoryKinds any = GST_NPU_MEMORY_NPU | GST_NPU_MEMORY_SYSTEM | GST_NPU_MEMORY_DMABUF;
  if (direction == GST_PAD_SINK)
    return gst_npu_caps_with_memory(caps, GST_NPU_MEMORY_NPU, GST_NPU_MEMORY_NPU,
                                    GST_NPU_MEMORY_NPU, filter);
  return gst_npu_caps_with_memory(caps, any, 0, 0, filter);
}

static gboolean gst_npu_upload_set_caps(GstBaseTransform *trans, GstCaps *incaps,
                                        GstCaps *outcaps)
{
  GstNpuUpload *self = GST_NPU_UPLOAD(trans);
  (void)outcaps;
  npu_device_properties props;
  npu_device_properties_of(gst_npu_base_transform_get_device(GST_NPU_BASE_TRANSFORM(trans)),
                           &props);
  self->device_caps = props.caps;
  return gst_video_info_from_caps(&self->info, incaps);
}

static gboolean gst_npu_upload_propose_allocation(GstBaseTransform *trans, GstQuery *decide,
                                                  GstQuery *query)
{
  (void)decide;
  GstCaps *caps;
  gst_query_parse_allocation(query, &caps, NULL);
  if (caps && gst_npu_caps_memory_kind(caps) == GST_NPU_MEMORY_DMABUF) {
    /* A dma-buf producer allocates its own; its fds are imported. */
    gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
    return TRUE;
  }
  /* Upstream that takes our pool writes straight into device memory. */
  return gst_npu_base_transform_offer_pool(GST_NPU_BASE_TRANSFORM(trans), query, caps, TRUE);
}

static gboolean gst_npu_upload_decide_allocation(GstBaseTransform *trans, GstQuery *query)
{
  GstCaps *caps;
  gst_query_parse_allocation(query, &caps, NULL);
  return gst_npu_base_transform_offer_pool(GST_NPU_BASE_TRANSFORM(trans), query, caps, FALSE) &&
         GST_BASE_TRANSFORM_CLASS(gst_npu_upload_parent_class)->decide_allocation(trans, query);
}

/* What an imported frame keeps until the device buffer goes: the input
 * buffer (so its pool cannot reuse the memory) and, for host imports, its map. */
typedef struct import_hold {
  GstBuffer *buffer;
  GstMapInfo map;
  gboolean mapped;
} import_hold;

static void release_import(void *data)
{
  import_hold *hold = data;
  if (hold->mapped)
    gst_buffer_unmap(hold->buffer, &hold->map);
  gst_buffer_unref(hold->buffer);
  g_free(hold);
}

/* Wraps a one-memory frame as device memory without copying, if the device
 * can: the memory's fd where it has one, else its host mapping. */
static GstBuffer *import_buffer(GstNpuUpload *self, GstBuffer *inbuf)
{
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(self);
  npu_device *device = gst_npu_base_transform_get_device(base);
  GstMemory *mem = gst_buffer_n_memory(inbuf) == 1 ? gst_buffer_peek_memory(inbuf, 0) : NULL;
  if (!mem || mem->size == 0)
    return NULL;
  import_hold *hold = g_new0(import_hold, 1);
  hold->buffer = gst_buffer_ref(inbuf);
  npu_buffer *imported = NULL;
  gsize size = mem->size;
  if (self->device_caps.fd_import && gst_is_fd_memory(mem) &&
      npu_buffer_import_fd(device, gst_fd_memory_get_fd(mem), mem->offset, size, release_import,
                           hold, &imported) != NPU_OK)
    GST_WARNING_OBJECT(self, "cannot import the frame's fd, trying its mapping: %s",
                       npu_last_error_message());
  if (!imported && self->device_caps.host_import &&
      (hold->mapped = gst_buffer_map(inbuf, &hold->map, GST_MAP_READ))) {
    size = hold->map.size;
    if (npu_buffer_import_host(device, hold->map.data, size, release_import, hold, &imported) !=
        NPU_OK)
      GST_DEBUG_OBJECT(self, "import refused: %s", npu_last_error_message());
  }
  if (!imported) {
    release_import(hold);
    return NULL;
  }
  GstBuffer *outbuf = gst_buffer_new();
  gst_buffer_append_memory(
      outbuf, gst_npu_memory_wrap(gst_npu_base_transform_get_allocator(base), imported, size));
  gst_buffer_copy_into(outbuf, inbuf, GST_BUFFER_COPY_METADATA, 0, -1);
  /* The device buffer starts where the frame's memory does: the planes are
   * where the input's video meta says (its strides, its offsets). */
  gst_npu_buffer_copy_video_meta(outbuf, inbuf);
  return outbuf;
}

static GstFlowReturn gst_npu_upload_prepare_output_buffer(GstBaseTransform *trans,
                                                          GstBuffer *inbuf, GstBuffer **outbuf)
{
  GstNpuUpload *self = GST_NPU_UPLOAD(trans);
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(trans);
  self->output_ready = TRUE;
  if (gst_npu_buffer_is_on_device(inbuf, gst_npu_base_transform_get_device(base))) {
    *outbuf = inbuf; /* basetransform owns inbuf; returning it passes it on */
    gst_npu_base_transform_count_frame(base, GST_NPU_FRAME_ZERO_COPY);
    return GST_FLOW_OK;
  }
  /* Everything below reads the planes where the video meta (or the caps)
   * puts them: they must lie within the buffer. */
  if (!gst_npu_base_transform_check_frame(base, &self->info, inbuf))
    return GST_FLOW_ERROR;
  if ((*outbuf = import_buffer(self, inbuf))) {
    gst_npu_base_transform_count_frame(base, GST_NPU_FRAME_ZERO_COPY);
    return GST_FLOW_OK;
  }
  self->output_ready = FALSE;
  return GST_BASE_TRANSFORM_CLASS(gst_npu_upload_parent_class)
      ->prepare_output_buffer(trans, inbuf, outbuf);
}

/* Copies each plane of `in` (mapped system memory) to where `out_meta` (or,
 * without one, the caps' layout) puts it in `out_mem`, one pitched copy a
 * plane whatever the strides on either side. */
static npu_status upload_planes(GstNpuUpload *self, GstVideoFrame *in, GstMemory *out_mem,
                                const GstVideoMeta *out_meta)
{
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(self);
  npu_buffer *buffer = gst_npu_memory_get_buffer(out_mem);
  npu_status status = NPU_OK;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(in) && status == NPU_OK; p++) {
    gsize row_bytes;
    guint rows;
    gst_npu_video_plane_size(self->info.finfo, p, GST_VIDEO_INFO_WIDTH(&self->info),
                             GST_VIDEO_INFO_HEIGHT(&self->info), &row_bytes, &rows);
    gsize offset, stride;
    gst_npu_video_plane_place(&self->info, out_meta, p, &offset, &stride);
    status = npu_memcpy_2d_h2d(buffer, out_mem->offset + offset, stride,
                               GST_VIDEO_FRAME_PLANE_DATA(in, p),
                               (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(in, p), row_bytes, rows, NULL);
    if (status == NPU_OK)
      gst_npu_base_transform_count_frame(base, GST_NPU_PLANE_COPIED_2D);
  }
  return status;
}

static GstFlowReturn gst_npu_upload_transform(GstBaseTransform *trans, GstBuffer *inbuf,
                                              GstBuffer *outbuf)
{
  GstNpuUpload *self = GST_NPU_UPLOAD(trans);
  GstNpuBaseTransform *base = GST_NPU_BASE_TRANSFORM(trans);
  if (self->output_ready)
    return GST_FLOW_OK; /* zero-copy cases were handled when preparing the output */

  GstVideoFrame in_frame;
  if (!gst_video_frame_map(&in_frame, &self->info, inbuf, GST_MAP_READ)) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Cannot read the input frame"),
                      ("%" G_GSIZE_FORMAT " bytes for %ux%u %s: not mappable, or smaller than "
                       "its caps say", gst_buffer_get_size(inbuf),
                       GST_VIDEO_INFO_WIDTH(&self->info), GST_VIDEO_INFO_HEIGHT(&self->info),
                       GST_VIDEO_INFO_NAME(&self->info)));
    return GST_FLOW_ERROR;
  }
  GstMemory *out_mem = gst_buffer_peek_memory(outbuf, 0);
  npu_status status;
  const GstVideoMeta *in_meta = gst_buffer_get_video_meta(inbuf);
  const GstVideoMeta *out_meta = gst_buffer_get_video_meta(outbuf);
  if (gst_buffer_n_memory(inbuf) == 1 &&
      gst_npu_video_layouts_equal(&self->info, in_meta, out_meta)) {
    /* Every plane where the output has it: one device copy of the frame. */
    GstMapInfo map;
    gst_buffer_map(inbuf, &map, GST_MAP_READ);
    gsize size = MIN(map.size, out_mem->size);
    status = npu_memcpy_h2d(gst_npu_memory_get_buffer(out_mem), out_mem->offset, map.data, size);
    gst_buffer_unmap(inbuf, &map);
  } else {
    /* Strides or offsets differ (the device's row alignment, or the
     * input's own layout), or the planes sit in several memories. */
    status = upload_planes(self, &in_frame, out_mem, out_meta);
  }
  gst_video_frame_unmap(&in_frame);
  if (status != NPU_OK) {
    GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Upload to the NPU failed"),
                      ("%s", npu_last_error_message()));
    return GST_FLOW_ERROR;
  }
  gst_npu_base_transform_count_frame(base, GST_NPU_FRAME_COPIED);
  return GST_FLOW_OK;
}

static void gst_npu_upload_class_init(GstNpuUploadClass *klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  gst_npu_element_class_add_pad_templates(
      element_class, GST_NPU_MEMORY_NPU | GST_NPU_MEMORY_SYSTEM | GST_NPU_MEMORY_DMABUF,
      GST_NPU_MEMORY_NPU);
  gst_element_class_set_static_metadata(
      element_class, "NPU upload", "Filter/Video/Hardware",
      "Moves video frames into NPU device memory: passthrough for NPU memory, upstream writes "
      "into the proposed NPU pool, dma-buf/fd memory and host memory imported without copy, "
      "or one copy",
      "gst-npu developers");
  trans_class->transform_caps = gst_npu_upload_transform_caps;
  trans_class->set_caps = gst_npu_upload_set_caps;
  trans_class->propose_allocation = gst_npu_upload_propose_allocation;
  trans_class->decide_allocation = gst_npu_upload_decide_allocation;
  trans_class->prepare_output_buffer = gst_npu_upload_prepare_output_buffer;
  trans_class->transform = gst_npu_upload_transform;
  trans_class->passthrough_on_same_caps = FALSE;
  GST_DEBUG_CATEGORY_INIT(gst_npu_upload_debug, "npuupload", 0, "NPU upload");
}

static void gst_npu_upload_init(GstNpuUpload *self)
{
  (void)self;
}
