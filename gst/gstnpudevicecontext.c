/* The shared device context (see gstnpudevicecontext.h). */
#include "gstnpudevicecontext.h"

#include "gstnpumemory.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_device_context_debug);
#define GST_CAT_DEFAULT gst_npu_device_context_debug

static void init_debug(void)
{
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    GST_DEBUG_CATEGORY_INIT(gst_npu_device_context_debug, "npudevicecontext", 0,
                            "NPU device sharing between elements");
    g_once_init_leave(&done, 1);
  }
}

GstContext *gst_npu_device_context_new(npu_device *device)
{
  GstContext *context = gst_context_new(GST_NPU_DEVICE_CONTEXT_TYPE, TRUE);
  gst_structure_set(gst_context_writable_structure(context), "device", GST_TYPE_NPU_DEVICE,
                    device, NULL);
  return context;
}

gboolean gst_npu_handle_set_context(GstElement *element, GstContext *context, gint device_id,
                                    npu_device **device)
{
  init_debug();
  if (*device || !context ||
      g_strcmp0(gst_context_get_context_type(context), GST_NPU_DEVICE_CONTEXT_TYPE) != 0)
    return *device != NULL;
  npu_device *shared = NULL;
  const GstStructure *s = gst_context_get_structure(context);
  if (!gst_structure_get(s, "device", GST_TYPE_NPU_DEVICE, &shared, NULL) || !shared)
    return FALSE;
  npu_device_properties props;
  npu_device_properties_of(shared, &props);
  if (device_id >= 0 && (guint)device_id != props.index) {
    GST_DEBUG_OBJECT(element, "not using device %u: device-id is %d", props.index, device_id);
    npu_device_release(shared);
    return FALSE;
  }
  GST_INFO_OBJECT(element, "using the shared device %u (%s)", props.index, props.name);
  *device = shared;
  return TRUE;
}

gboolean gst_npu_handle_context_query(GstElement *element, GstQuery *query, npu_device *device)
{
  const gchar *type;
  if (!device || GST_QUERY_TYPE(query) != GST_QUERY_CONTEXT)
    return FALSE;
  gst_query_parse_context_type(query, &type);
  if (g_strcmp0(type, GST_NPU_DEVICE_CONTEXT_TYPE) != 0)
    return FALSE;
  GST_LOG_OBJECT(element, "answering a device context query");
  GstContext *context = gst_npu_device_context_new(device);
  gst_query_set_context(query, context);
  gst_context_unref(context);
  return TRUE;
}

typedef struct {
  gint device_id;
  npu_device **device;
} Asking;

static gboolean ask_peer(GstElement *element, GstPad *pad, gpointer data)
{
  Asking *asking = data;
  GstQuery *query = gst_query_new_context(GST_NPU_DEVICE_CONTEXT_TYPE);
  GstContext *context = NULL;
  if (gst_pad_peer_query(pad, query)) {
    gst_query_parse_context(query, &context);
    gst_npu_handle_set_context(element, context, asking->device_id, asking->device);
  }
  gst_query_unref(query);
  return *asking->device == NULL; /* go on while nobody answered */
}

gboolean gst_npu_ensure_element_device(GstElement *element, gint device_id,
                                       npu_device **device)
{
  init_debug();
  if (*device)
    return TRUE;
  /* downstream first, then upstream, as GStreamer's own context users do */
  Asking asking = {device_id, device};
  gst_element_foreach_src_pad(element, ask_peer, &asking);
  if (!*device)
    gst_element_foreach_sink_pad(element, ask_peer, &asking);
  if (*device)
    return TRUE;
  /* the application may set one from its sync bus handler */
  gst_element_post_message(element, gst_message_new_need_context(GST_OBJECT(element),
                                                                 GST_NPU_DEVICE_CONTEXT_TYPE));
  if (*device)
    return TRUE;
  npu_status status = device_id < 0 ? npu_device_open_default(device)
                                    : npu_device_open((uint32_t)device_id, device);
  if (status != NPU_OK) {
    *device = NULL;
    GST_ELEMENT_ERROR(element, RESOURCE, NOT_FOUND, ("Cannot open NPU device %d", device_id),
                      ("%s: %s", npu_status_name(status), npu_last_error_message()));
    return FALSE;
  }
  GST_INFO_OBJECT(element, "opened device %d and shares it", device_id);
  GstContext *context = gst_npu_device_context_new(*device);
  gst_element_set_context(element, context);
  gst_element_post_message(element, gst_message_new_have_context(GST_OBJECT(element), context));
  return TRUE;
}
