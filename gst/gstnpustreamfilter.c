#include "gstnpustreamfilter.h"

#include <stdio.h>

#include "gstnpuframejson.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_stream_filter_debug);
#define GST_CAT_DEFAULT gst_npu_stream_filter_debug

typedef struct {
  GMutex lock; /* pads and streams (each stream's state is used by its pad's thread only) */
  GHashTable *pads;    /* sink pad -> its src pad */
  GHashTable *streams; /* stream_key -> subclass state */
  guint next_index;
} GstNpuStreamFilterPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE(GstNpuStreamFilter, gst_npu_stream_filter, GST_TYPE_ELEMENT)

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink_%u", GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src_%u", GST_PAD_SRC, GST_PAD_SOMETIMES, GST_STATIC_CAPS("video/x-raw(ANY)"));

/* pad index in the high half, source + 1 (0: none) in the low one */
static guint64 stream_key(guint pad_index, gint source)
{
  return ((guint64)pad_index << 32) | (guint32)(source + 1);
}

static guint pad_index_of(GstPad *pad)
{
  return GPOINTER_TO_UINT(gst_pad_get_element_private(pad));
}

static void free_state(GstNpuStreamFilter *self, gpointer state)
{
  GstNpuStreamFilterClass *klass = GST_NPU_STREAM_FILTER_GET_CLASS(self);
  if (state && klass->stream_free)
    klass->stream_free(state);
}

/* Drops the streams of one pad (all: pad NULL). */
static void drop_streams(GstNpuStreamFilter *self, GstPad *pad)
{
  GstNpuStreamFilterPrivate *priv = gst_npu_stream_filter_get_instance_private(self);
  GPtrArray *dropped = g_ptr_array_new();
  g_mutex_lock(&priv->lock);
  GHashTableIter iter;
  gpointer key, state;
  g_hash_table_iter_init(&iter, priv->streams);
  while (g_hash_table_iter_next(&iter, &key, &state))
    if (!pad || (*(guint64 *)key >> 32) == pad_index_of(pad)) {
      g_ptr_array_add(dropped, state);
      g_hash_table_iter_remove(&iter);
    }
  g_mutex_unlock(&priv->lock);
  for (guint i = 0; i < dropped->len; i++)
    free_state(self, g_ptr_array_index(dropped, i));
  g_ptr_array_free(dropped, TRUE);
}

static GstPad *partner_of(GstNpuStreamFilter *self, GstPad *pad)
{
  GstNpuStreamFilterPrivate *priv = gst_npu_stream_filter_get_instance_private(self);
  GstPad *partner = NULL;
  g_mutex_lock(&priv->lock);
  if (GST_PAD_IS_SINK(pad)) {
    partner = g_hash_table_lookup(priv->pads, pad);
  } else {
    GHashTableIter iter;
    gpointer sink, src;
    g_hash_table_iter_init(&iter, priv->pads);
    while (!partner && g_hash_table_iter_next(&iter, &sink, &src))
      if (src == pad)
        partner = sink;
  }
  if (partner)
    gst_object_ref(partner);
  g_mutex_unlock(&priv->lock);
  return partner;
}

static gpointer state_for(GstNpuStreamFilter *self, GstPad *pad, gint source, gint stream)
{
  GstNpuStreamFilterPrivate *priv = gst_npu_stream_filter_get_instance_private(self);
  guint64 key = stream_key(pad_index_of(pad), source);
  g_mutex_lock(&priv->lock);
  gpointer state = g_hash_table_lookup(priv->streams, &key);
  g_mutex_unlock(&priv->lock);
  if (state)
    return state;
  GstNpuStreamFilterClass *klass = GST_NPU_STREAM_FILTER_GET_CLASS(self);
  state = klass->stream_new(self, stream);
  if (!state)
    return NULL;
  GST_DEBUG_OBJECT(self, "new stream %d on %s:%s", stream, GST_DEBUG_PAD_NAME(pad));
  g_mutex_lock(&priv->lock);
  g_hash_table_insert(priv->streams, g_memdup2(&key, sizeof key), state);
  g_mutex_unlock(&priv->lock);
  return state;
}

static GstFlowReturn gst_npu_stream_filter_chain(GstPad *pad, GstObject *parent,
                                                 GstBuffer *frame)
{
  GstNpuStreamFilter *self = GST_NPU_STREAM_FILTER(parent);
  GstNpuStreamFilterClass *klass = GST_NPU_STREAM_FILTER_GET_CLASS(self);
  gint source = gst_npu_frame_stream(frame);
  gint stream = source >= 0 ? source : (gint)pad_index_of(pad);
  gpointer state = state_for(self, pad, source, stream);
  if (!state) {
    gst_buffer_unref(frame);
    return GST_FLOW_ERROR;
  }
  /* a copy of the buffer's metas only: the memory is shared, not copied */
  if (klass->writes_metas)
    frame = gst_buffer_make_writable(frame);
  GstFlowReturn ret = klass->process(self, state, stream, frame);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref(frame);
    return ret;
  }
  GstPad *src = partner_of(self, pad);
  if (!src) {
    gst_buffer_unref(frame);
    return GST_FLOW_FLUSHING;
  }
  ret = gst_pad_push(src, frame);
  gst_object_unref(src);
  return ret;
}

static gboolean gst_npu_stream_filter_sink_event(GstPad *pad, GstObject *parent, GstEvent *event)
{
  GstNpuStreamFilter *self = GST_NPU_STREAM_FILTER(parent);
  /* a flush or a new stream on the pad: what was followed is gone */
  if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP ||
      GST_EVENT_TYPE(event) == GST_EVENT_STREAM_START)
    drop_streams(self, pad);
  return gst_pad_event_default(pad, parent, event);
}

static GstIterator *gst_npu_stream_filter_internal_links(GstPad *pad, GstObject *parent)
{
  GstPad *partner = partner_of(GST_NPU_STREAM_FILTER(parent), pad);
  if (!partner)
    return gst_iterator_new_single(GST_TYPE_PAD, NULL);
  GValue value = G_VALUE_INIT;
  g_value_init(&value, GST_TYPE_PAD);
  g_value_take_object(&value, partner);
  GstIterator *it = gst_iterator_new_single(GST_TYPE_PAD, &value);
  g_value_unset(&value);
  return it;
}

static GstPad *gst_npu_stream_filter_request_new_pad(GstElement *element, GstPadTemplate *templ,
                                                     const gchar *name, const GstCaps *caps)
{
  (void)caps;
  GstNpuStreamFilter *self = GST_NPU_STREAM_FILTER(element);
  GstNpuStreamFilterPrivate *priv = gst_npu_stream_filter_get_instance_private(self);
  guint index;
  g_mutex_lock(&priv->lock);
  if (!name || sscanf(name, "sink_%u", &index) != 1)
    index = priv->next_index;
  gchar *sink_name = g_strdup_printf("sink_%u", index), *src_name = g_strdup_printf("src_%u", index);
  g_mutex_unlock(&priv->lock);
  GstPad *existing = gst_element_get_static_pad(element, sink_name);
  if (existing) {
    gst_object_unref(existing);
    GST_WARNING_OBJECT(self, "pad %s exists already", sink_name);
    g_free(sink_name);
    g_free(src_name);
    return NULL;
  }
  GstPad *sink = gst_pad_new_from_template(templ, sink_name);
  GstPad *src = gst_pad_new_from_static_template(&src_template, src_name);
  g_free(sink_name);
  g_free(src_name);
  for (GstPad **pad = (GstPad *[]){sink, src, NULL}; *pad; pad++) {
    gst_pad_set_element_private(*pad, GUINT_TO_POINTER(index));
    gst_pad_set_iterate_internal_links_function(*pad, gst_npu_stream_filter_internal_links);
    GST_PAD_SET_PROXY_CAPS(*pad);
    GST_PAD_SET_PROXY_ALLOCATION(*pad);
    GST_PAD_SET_PROXY_SCHEDULING(*pad);
  }
  gst_pad_set_chain_function(sink, gst_npu_stream_filter_chain);
  gst_pad_set_event_function(sink, gst_npu_stream_filter_sink_event);
  g_mutex_lock(&priv->lock);
  priv->next_index = MAX(priv->next_index, index + 1);
  g_hash_table_insert(priv->pads, sink, src);
  g_mutex_unlock(&priv->lock);
  /* gst_element_add_pad activates pads added to a running element */
  gst_element_add_pad(element, src);
  gst_element_add_pad(element, sink);
  return sink;
}

static void gst_npu_stream_filter_release_pad(GstElement *element, GstPad *sink)
{
  GstNpuStreamFilter *self = GST_NPU_STREAM_FILTER(element);
  GstNpuStreamFilterPrivate *priv = gst_npu_stream_filter_get_instance_private(self);
  GstPad *src = partner_of(self, sink);
  /* deactivation waits for a chain call in progress */
  gst_pad_set_active(sink, FALSE);
  g_mutex_lock(&priv->lock);
  g_hash_table_remove(priv->pads, sink);
  g_mutex_unlock(&priv->lock);
  drop_streams(self, sink);
  if (src) {
    gst_pad_set_active(src, FALSE);
    gst_element_remove_pad(element, src);
    gst_object_unref(src);
  }
  gst_element_remove_pad(element, sink);
}

static GstStateChangeReturn gst_npu_stream_filter_change_state(GstElement *element,
                                                               GstStateChange transition)
{
  GstNpuStreamFilter *self = GST_NPU_STREAM_FILTER(element);
  GstNpuStreamFilterClass *klass = GST_NPU_STREAM_FILTER_GET_CLASS(self);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && klass->start && !klass->start(self))
    return GST_STATE_CHANGE_FAILURE;
  GstStateChangeReturn ret =
      GST_ELEMENT_CLASS(gst_npu_stream_filter_parent_class)->change_state(element, transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    drop_streams(self, NULL);
    if (klass->stop)
      klass->stop(self);
  }
  return ret;
}

static void gst_npu_stream_filter_finalize(GObject *object)
{
  GstNpuStreamFilter *self = GST_NPU_STREAM_FILTER(object);
  GstNpuStreamFilterPrivate *priv = gst_npu_stream_filter_get_instance_private(self);
  drop_streams(self, NULL);
  g_hash_table_unref(priv->streams);
  g_hash_table_unref(priv->pads);
  g_mutex_clear(&priv->lock);
  G_OBJECT_CLASS(gst_npu_stream_filter_parent_class)->finalize(object);
}

static void gst_npu_stream_filter_class_init(GstNpuStreamFilterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  object_class->finalize = gst_npu_stream_filter_finalize;
  element_class->request_new_pad = gst_npu_stream_filter_request_new_pad;
  element_class->release_pad = gst_npu_stream_filter_release_pad;
  element_class->change_state = gst_npu_stream_filter_change_state;
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  GST_DEBUG_CATEGORY_INIT(gst_npu_stream_filter_debug, "npustreamfilter", 0,
                          "Per-stream state of the tracking and analytics elements");
}

static void gst_npu_stream_filter_init(GstNpuStreamFilter *self)
{
  GstNpuStreamFilterPrivate *priv = gst_npu_stream_filter_get_instance_private(self);
  g_mutex_init(&priv->lock);
  priv->pads = g_hash_table_new(g_direct_hash, g_direct_equal);
  priv->streams = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
}
