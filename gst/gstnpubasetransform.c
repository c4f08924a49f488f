/* GstNpuBaseTransform. */
#include "gstnpubasetransform.h"

#include "gstnpubufferpool.h"
#include "gstnpudevicecontext.h"
#include "gstnpumemory.h"
#include "gstnpuproperty.h"
#include "gstnpuvideo.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_base_transform_debug);
#define GST_CAT_DEFAULT gst_npu_base_transform_debug

#define NPU_VIDEO_FORMATS \
  "{ NV12, NV21, I420, YV12, NV16, NV24, Y42B, Y444, YUY2, UYVY, RGB, BGR, RGBx, BGRx, xRGB, "  \
  "xBGR, RGBA, BGRA, GRAY8 }"

/* Frames of work an element may have queued on its stream. */
#define MAX_FRAMES_IN_FLIGHT 3

typedef struct {
  gint device_id;
  npu_device *device;
  npu_stream *stream;
  npu_event *frame_done[MAX_FRAMES_IN_FLIGHT]; /* ring: the end of each queued frame's work */
  guint next_frame;
  GstAllocator *allocator;
  GstBufferPool *stats_pool; /* the pool whose device statistics `stats` shows */
  guint64 frames[GST_NPU_FRAME_COUNTER_COUNT];
  /* Last figures of the device and pool, kept after stop for `stats`. */
  gboolean have_device_stats, have_pool_stats;
  npu_device_stats device_stats;
  npu_mem_pool_stats pool_stats;
} GstNpuBaseTransformPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE(GstNpuBaseTransform, gst_npu_base_transform,
                                    GST_TYPE_BASE_TRANSFORM)

enum { PROP_0, PROP_DEVICE_ID, PROP_STATS };

#define PRIV(self) ((GstNpuBaseTransformPrivate *)gst_npu_base_transform_get_instance_private(self))

static GstCaps *gst_npu_video_caps(GstNpuMemoryKinds kinds)
{
  GstCaps *system = gst_caps_from_string("video/x-raw, format = (string) " NPU_VIDEO_FORMATS
                                         ", width = (int) [ 1, 32768 ], height = (int) [ 1, 32768 ]"
                                         ", framerate = (fraction) [ 0, max ]");
  GstCaps *caps = gst_npu_caps_with_memory(system, 0, kinds, 0, NULL);
  gst_caps_unref(system);
  return caps;
}

void gst_npu_element_class_add_pad_templates(GstElementClass *klass, GstNpuMemoryKinds sink,
                                             GstNpuMemoryKinds src)
{
  GstCaps *sink_caps = gst_npu_video_caps(sink), *src_caps = gst_npu_video_caps(src);
  gst_element_class_add_pad_template(
      klass, gst_pad_template_new("sink", GST_PAD_SINK, GST_PAD_ALWAYS, sink_caps));
  gst_element_class_add_pad_template(
      klass, gst_pad_template_new("src", GST_PAD_SRC, GST_PAD_ALWAYS, src_caps));
  gst_caps_unref(sink_caps);
  gst_caps_unref(src_caps);
}

static void gst_npu_base_transform_set_context(GstElement *element, GstContext *context)
{
  GstNpuBaseTransformPrivate *priv = PRIV(GST_NPU_BASE_TRANSFORM(element));
  gst_npu_handle_set_context(element, context, priv->device_id, &priv->device);
  GST_ELEMENT_CLASS(gst_npu_base_transform_parent_class)->set_context(element, context);
}

static gboolean gst_npu_base_transform_query(GstBaseTransform *trans, GstPadDirection direction,
                                             GstQuery *query)
{
  if (gst_npu_handle_context_query(GST_ELEMENT(trans), query,
                                   PRIV(GST_NPU_BASE_TRANSFORM(trans))->device))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS(gst_npu_base_transform_parent_class)
      ->query(trans, direction, query);
}

static gboolean gst_npu_base_transform_start(GstBaseTransform *trans)
{
  GstNpuBaseTransform *self = GST_NPU_BASE_TRANSFORM(trans);
  GstNpuBaseTransformPrivate *priv = PRIV(self);
  if (!gst_npu_ensure_element_device(GST_ELEMENT(self), priv->device_id, &priv->device))
    return FALSE;
  npu_status status = npu_stream_create(priv->device, &priv->stream);
  if (status != NPU_OK) {
    GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Cannot create an NPU stream"),
                      ("%s", npu_last_error_message()));
    return FALSE;
  }
  priv->allocator = gst_npu_allocator_new(priv->device);
  GST_OBJECT_LOCK(self);
  memset(priv->frames, 0, sizeof priv->frames);
  priv->have_device_stats = priv->have_pool_stats = FALSE;
  GST_OBJECT_UNLOCK(self);
  return TRUE;
}

/* Refreshes the saved device and pool figures (object lock held). */
static void refresh_stats(GstNpuBaseTransformPrivate *priv)
{
  if (priv->device && npu_device_get_stats(priv->device, &priv->device_stats) == NPU_OK)
    priv->have_device_stats = TRUE;
  if (priv->stats_pool && gst_npu_buffer_pool_get_stats(priv->stats_pool, &priv->pool_stats))
    priv->have_pool_stats = TRUE;
}

static gboolean gst_npu_base_transform_stop(GstBaseTransform *trans)
{
  GstNpuBaseTransformPrivate *priv = PRIV(GST_NPU_BASE_TRANSFORM(trans));
  if (priv->stream) {
    npu_stream_destroy(priv->stream); /* drains queued work first */
    priv->stream = NULL;
  }
  for (guint i = 0; i < MAX_FRAMES_IN_FLIGHT; i++)
    if (priv->frame_done[i]) {
      npu_event_destroy(priv->frame_done[i]);
      priv->frame_done[i] = NULL;
    }
  gst_clear_object(&priv->allocator);
  GST_OBJECT_LOCK(trans);
  refresh_stats(priv);
  gst_clear_object(&priv->stats_pool);
  GST_OBJECT_UNLOCK(trans);
  if (priv->device) {
    npu_device_release(priv->device);
    priv->device = NULL;
  }
  return TRUE;
}

npu_device *gst_npu_base_transform_get_device(GstNpuBaseTransform *self)
{
  return PRIV(self)->device;
}

npu_stream *gst_npu_base_transform_get_stream(GstNpuBaseTransform *self)
{
  return PRIV(self)->stream;
}

GstAllocator *gst_npu_base_transform_get_allocator(GstNpuBaseTransform *self)
{
  return PRIV(self)->allocator;
}

gboolean gst_npu_base_transform_end_frame(GstNpuBaseTransform *self)
{
  GstNpuBaseTransformPrivate *priv = PRIV(self);
  npu_event **done = &priv->frame_done[priv->next_frame];
  priv->next_frame = (priv->next_frame + 1) % MAX_FRAMES_IN_FLIGHT;
  npu_status status = *done ? npu_event_synchronize(*done) /* that frame's work is over */
                            : npu_event_create(priv->device, NPU_EVENT_DISABLE_TIMING, done);
  if (status == NPU_OK)
    status = npu_event_record(*done, priv->stream);
  if (status != NPU_OK)
    GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Cannot track the NPU stream's work"),
                      ("%s: %s", npu_status_name(status), npu_last_error_message()));
  return status == NPU_OK;
}

gboolean gst_npu_base_transform_check_frame(GstNpuBaseTransform *self, const GstVideoInfo *info,
                                            GstBuffer *buffer)
{
  gchar *details;
  const gchar *wrong = gst_npu_video_frame_check(info, gst_buffer_get_video_meta(buffer),
                                                 gst_buffer_get_size(buffer), &details);
  if (wrong)
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("%s", wrong), ("%s", details));
  g_free(details);
  return wrong == NULL;
}

void gst_npu_base_transform_count_frame(GstNpuBaseTransform *self, GstNpuFrameCounter counter)
{
  GST_OBJECT_LOCK(self);
  PRIV(self)->frames[counter]++;
  GST_OBJECT_UNLOCK(self);
}

gboolean gst_npu_base_transform_offer_pool(GstNpuBaseTransform *self, GstQuery *query,
                                           GstCaps *caps, gboolean remember_for_stats)
{
  GstNpuBaseTransformPrivate *priv = PRIV(self);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps(&info, caps))
    return FALSE;
  GstBufferPool *pool = gst_npu_buffer_pool_new(priv->device, GST_ELEMENT(self));
  if (!pool)
    return FALSE;
  GstStructure *config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, caps, (guint)GST_VIDEO_INFO_SIZE(&info), 2, 0);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  guint size = 0;
  if (gst_buffer_pool_set_config(pool, config)) {
    /* The pool's layout for the device may take more than the caps' default. */
    config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_get_params(config, NULL, &size, NULL, NULL);
    gst_structure_free(config);
  }
  if (size == 0) {
    gst_object_unref(pool);
    return FALSE;
  }
  /* Replace whatever pools were proposed: ours is the device-memory one. */
  while (gst_query_get_n_allocation_pools(query) > 0)
    gst_query_remove_nth_allocation_pool(query, 0);
  gst_query_add_allocation_pool(query, pool, size, 2, 0);
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
  if (remember_for_stats) {
    GST_OBJECT_LOCK(self);
    gst_object_replace((GstObject **)&priv->stats_pool, GST_OBJECT(pool));
    GST_OBJECT_UNLOCK(self);
  }
  gst_object_unref(pool);
  return TRUE;
}

static GstStructure *build_stats(GstNpuBaseTransform *self)
{
  GstNpuBaseTransformPrivate *priv = PRIV(self);
  GstStructure *s = gst_structure_new_empty("npu-stats");
  GST_OBJECT_LOCK(self);
  gst_structure_set(s, "frames-zero-copy", G_TYPE_UINT64, priv->frames[GST_NPU_FRAME_ZERO_COPY],
                    "frames-copied", G_TYPE_UINT64, priv->frames[GST_NPU_FRAME_COPIED],
                    "frames-processed", G_TYPE_UINT64, priv->frames[GST_NPU_FRAME_PROCESSED],
                    "planes-copied-2d", G_TYPE_UINT64, priv->frames[GST_NPU_PLANE_COPIED_2D],
                    NULL);
  refresh_stats(priv);
  if (priv->have_device_stats)
    gst_structure_set(s, "device-bytes-h2d", G_TYPE_UINT64, priv->device_stats.bytes_h2d,
                      "device-bytes-d2h", G_TYPE_UINT64, priv->device_stats.bytes_d2h,
                      "device-bytes-d2d", G_TYPE_UINT64, priv->device_stats.bytes_d2d,
                      "device-allocations", G_TYPE_UINT64, priv->device_stats.allocations,
                      "device-imports", G_TYPE_UINT64, priv->device_stats.imports, NULL);
  if (priv->have_pool_stats)
    gst_structure_set(s, "pool-requests", G_TYPE_UINT64, priv->pool_stats.requests,
                      "pool-hits", G_TYPE_UINT64, priv->pool_stats.hits, "pool-allocations",
                      G_TYPE_UINT64, priv->pool_stats.allocations, NULL);
  GST_OBJECT_UNLOCK(self);
  return s;
}

static void gst_npu_base_transform_set_property(GObject *object, guint id, const GValue *value,
                                                GParamSpec *pspec)
{
  GstNpuBaseTransformPrivate *priv = PRIV(GST_NPU_BASE_TRANSFORM(object));
  if (gst_npu_property_refused(GST_ELEMENT(object), pspec))
    return;
  switch (id) {
  case PROP_DEVICE_ID:
    priv->device_id = g_value_get_int(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void gst_npu_base_transform_get_property(GObject *object, guint id, GValue *value,
                                                GParamSpec *pspec)
{
  GstNpuBaseTransform *self = GST_NPU_BASE_TRANSFORM(object);
  switch (id) {
  case PROP_DEVICE_ID:
    g_value_set_int(value, PRIV(self)->device_id);
    break;
  case PROP_STATS:
    g_value_take_boxed(value, build_stats(self));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void gst_npu_base_transform_class_init(GstNpuBaseTransformClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  object_class->set_property = gst_npu_base_transform_set_property;
  object_class->get_property = gst_npu_base_transform_get_property;
  g_object_class_install_property(
      object_class, PROP_DEVICE_ID,
      g_param_spec_int("device-id", "Device ID",
                       "NPU device index (npu-info lists them); -1 = the default device "
                       "(NPU_BACKEND/NPU_DEVICE, else the CPU backend)",
                       -1, G_MAXINT16, -1,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property(
      object_class, PROP_STATS,
      g_param_spec_boxed("stats", "Statistics",
                         "Frames passed zero-copy / copied / processed by this element, planes "
                         "it copied between layouts with one pitched (2D) copy each, and the "
                         "device's bytes copied per direction, allocations and pool hits",
                         GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  GST_ELEMENT_CLASS(klass)->set_context = gst_npu_base_transform_set_context;
  trans_class->start = gst_npu_base_transform_start;
  trans_class->stop = gst_npu_base_transform_stop;
  trans_class->query = gst_npu_base_transform_query;
  GST_DEBUG_CATEGORY_INIT(gst_npu_base_transform_debug, "npubasetransform", 0,
                          "NPU element base");
  gst_type_mark_as_plugin_api(GST_TYPE_NPU_BASE_TRANSFORM, 0);
}

static void gst_npu_base_transform_init(GstNpuBaseTransform *self)
{
  PRIV(self)->device_id = -1;
}
