/* GstNpuBufferPool. Each buffer holds one NPU memory laid out for the
 * device: every plane's stride rounded up to the device's row alignment and
 * every plane starting at a multiple of it (more where upstream asks, with
 * GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT), described by a GstVideoMeta. The
 * memory comes from a runtime npu_mem_pool, so buffers the GstBufferPool
 * frees on reconfiguration are reused by the device pool instead of being
 * allocated again. */
#include "gstnpubufferpool.h"

#include "gstnpumemory.h"
#include "gstnpuvideo.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_buffer_pool_debug);
#define GST_CAT_DEFAULT gst_npu_buffer_pool_debug

struct _GstNpuBufferPool {
  GstBufferPool parent;
  npu_device *device;
  npu_mem_pool *memory;
  GstAllocator *allocator;
  guint row_alignment;     /* the device's, in bytes */
  GstVideoInfo info;       /* the caps' frame in this pool's layout */
  GstVideoAlignment align; /* that layout's alignment, for the video meta */
  gboolean add_video_meta;
  GWeakRef owner; /* the element that offered the pool: posts its errors */
};

G_DEFINE_TYPE(GstNpuBufferPool, gst_npu_buffer_pool, GST_TYPE_BUFFER_POOL)

static const gchar **npu_pool_get_options(GstBufferPool *pool)
{
  (void)pool;
  static const gchar *options[] = {GST_BUFFER_POOL_OPTION_VIDEO_META,
                                   GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT, NULL};
  return options;
}

static gboolean npu_pool_set_config(GstBufferPool *pool, GstStructure *config)
{
  GstNpuBufferPool *self = GST_NPU_BUFFER_POOL(pool);
  GstCaps *caps;
  guint size, min, max;
  if (!gst_buffer_pool_config_get_params(config, &caps, &size, &min, &max) || !caps) {
    GST_WARNING_OBJECT(pool, "no caps in the pool config");
    return FALSE;
  }
  if (!gst_video_info_from_caps(&self->info, caps)) {
    GST_WARNING_OBJECT(pool, "caps are not video caps: %" GST_PTR_FORMAT, caps);
    return FALSE;
  }
  self->add_video_meta =
      gst_buffer_pool_config_has_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gboolean asks_alignment =
      gst_buffer_pool_config_has_option(config, GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
  gst_video_alignment_reset(&self->align);
  if (asks_alignment)
    gst_buffer_pool_config_get_video_alignment(config, &self->align);
  if (!gst_npu_video_info_align_rows(&self->info, self->row_alignment, &self->align)) {
    GST_WARNING_OBJECT(pool, "cannot lay out %ux%u %s with %u-byte rows",
                       GST_VIDEO_INFO_WIDTH(&self->info), GST_VIDEO_INFO_HEIGHT(&self->info),
                       GST_VIDEO_INFO_NAME(&self->info), self->row_alignment);
    return FALSE;
  }
  if (asks_alignment) /* tells upstream what it got */
    gst_buffer_pool_config_set_video_alignment(config, &self->align);
  GST_DEBUG_OBJECT(pool, "%s planes: strides %d %d %d, offsets %" G_GSIZE_FORMAT " %"
                   G_GSIZE_FORMAT " %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT " bytes",
                   GST_VIDEO_INFO_NAME(&self->info), self->info.stride[0], self->info.stride[1],
                   self->info.stride[2], self->info.offset[0], self->info.offset[1],
                   self->info.offset[2], GST_VIDEO_INFO_SIZE(&self->info));
  /* The device memory is sized by the laid-out video info, whatever was asked. */
  gst_buffer_pool_config_set_params(config, caps, (guint)GST_VIDEO_INFO_SIZE(&self->info), min,
                                    max);
  return GST_BUFFER_POOL_CLASS(gst_npu_buffer_pool_parent_class)->set_config(pool, config);
}

static GstFlowReturn npu_pool_alloc_buffer(GstBufferPool *pool, GstBuffer **out,
                                           GstBufferPoolAcquireParams *params)
{
  GstNpuBufferPool *self = GST_NPU_BUFFER_POOL(pool);
  (void)params;
  gsize size = GST_VIDEO_INFO_SIZE(&self->info);
  npu_buffer *buffer;
  npu_status status = npu_mem_pool_alloc(self->memory, size, &buffer);
  if (status != NPU_OK) {
    GST_ERROR_OBJECT(pool, "device memory allocation of %" G_GSIZE_FORMAT " bytes failed: %s",
                     size, npu_last_error_message());
    GstElement *owner = g_weak_ref_get(&self->owner);
    if (owner) {
      GST_ELEMENT_ERROR(owner, RESOURCE, NO_SPACE_LEFT,
                        ("%s for a %ux%u %s frame (%" G_GSIZE_FORMAT " bytes)",
                         status == NPU_ERROR_OUT_OF_MEMORY ? "Out of device memory"
                                                           : "Cannot allocate device memory",
                         GST_VIDEO_INFO_WIDTH(&self->info), GST_VIDEO_INFO_HEIGHT(&self->info),
                         GST_VIDEO_INFO_NAME(&self->info), size),
                        ("%s", npu_last_error_message()));
      gst_object_unref(owner);
    }
    return GST_FLOW_ERROR;
  }
  GstBuffer *gst_buffer = gst_buffer_new();
  gst_buffer_append_memory(gst_buffer, gst_npu_memory_wrap(self->allocator, buffer, size));
  if (self->add_video_meta) {
    GstVideoMeta *meta = gst_buffer_add_video_meta_full(
        gst_buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(&self->info),
        GST_VIDEO_INFO_WIDTH(&self->info), GST_VIDEO_INFO_HEIGHT(&self->info),
        GST_VIDEO_INFO_N_PLANES(&self->info), self->info.offset, self->info.stride);
    /* Set as is: gst_video_meta_set_alignment() checks strides against
     * gst_video_info_align()'s wider layout, not this tighter one. */
    meta->alignment = self->align;
  }
  *out = gst_buffer;
  return GST_FLOW_OK;
}

static void gst_npu_buffer_pool_finalize(GObject *object)
{
  GstNpuBufferPool *self = GST_NPU_BUFFER_POOL(object);
  npu_mem_pool_destroy(self->memory);
  gst_object_unref(self->allocator);
  npu_device_release(self->device);
  g_weak_ref_clear(&self->owner);
  G_OBJECT_CLASS(gst_npu_buffer_pool_parent_class)->finalize(object);
}

static void gst_npu_buffer_pool_class_init(GstNpuBufferPoolClass *klass)
{
  GstBufferPoolClass *pool_class = GST_BUFFER_POOL_CLASS(klass);
  pool_class->get_options = npu_pool_get_options;
  pool_class->set_config = npu_pool_set_config;
  pool_class->alloc_buffer = npu_pool_alloc_buffer;
  G_OBJECT_CLASS(klass)->finalize = gst_npu_buffer_pool_finalize;
  GST_DEBUG_CATEGORY_INIT(gst_npu_buffer_pool_debug, "npubufferpool", 0, "NPU buffer pool");
}

static void gst_npu_buffer_pool_init(GstNpuBufferPool *self)
{
  (void)self;
}

GstBufferPool *gst_npu_buffer_pool_new(npu_device *device, GstElement *owner)
{
  npu_mem_pool *memory;
  npu_device_properties props;
  if (npu_device_properties_of(device, &props) != NPU_OK ||
      npu_mem_pool_create(device, NULL, &memory) != NPU_OK)
    return NULL;
  GstNpuBufferPool *self = g_object_new(GST_TYPE_NPU_BUFFER_POOL, NULL);
  gst_object_ref_sink(self);
  self->row_alignment = props.row_alignment;
  npu_device_retain(device);
  self->device = device;
  self->memory = memory;
  self->allocator = gst_npu_allocator_new(device);
  g_weak_ref_init(&self->owner, owner);
  return GST_BUFFER_POOL(self);
}

gboolean gst_npu_buffer_pool_get_stats(GstBufferPool *pool, npu_mem_pool_stats *stats)
{
  return GST_IS_NPU_BUFFER_POOL(pool) &&
         npu_mem_pool_get_stats(GST_NPU_BUFFER_POOL(pool)->memory, stats) == NPU_OK;
}
