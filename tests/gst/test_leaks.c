/* No GStreamer object or buffer outlives a pipeline of our elements: 100
 * NULL -> PLAYING -> NULL cycles under GStreamer's own leaks tracer, which
 * is then asked for the objects still alive. */
#include <gst/gst.h>
#include <stdio.h>

static GstTracer *find_leaks_tracer(void)
{
  GList *tracers = gst_tracing_get_active_tracers();
  GstTracer *found = NULL;
  for (GList *l = tracers; l; l = l->next)
    if (!found && g_strcmp0(G_OBJECT_TYPE_NAME(l->data), "GstLeaksTracer") == 0)
      found = gst_object_ref(l->data);
  g_list_free_full(tracers, gst_object_unref);
  return found;
}

static guint live_objects(GstTracer *tracer, gboolean print)
{
  GstStructure *info = NULL;
  g_signal_emit_by_name(tracer, "get-live-objects", &info);
  const GValue *list = gst_structure_get_value(info, "live-objects-list");
  guint count = gst_value_list_get_size(list);
  for (guint i = 0; print && i < count; i++) {
    const GstStructure *s = gst_value_get_structure(gst_value_list_get_value(list, i));
    printf("# still alive: %s\n", gst_structure_get_string(s, "type-name"));
  }
  gst_structure_free(info);
  return count;
}

int main(int argc, char **argv)
{
  g_setenv("GST_TRACERS", "leaks", TRUE);
  gst_init(&argc, &argv);
  GstTracer *tracer = find_leaks_tracer();
  if (!tracer) {
    printf("1..0 # SKIP the leaks tracer is not available\n");
    return 0;
  }
  const char *description =
      "videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48 ! npuupload ! "
      "npuvpp add-borders=true ! video/x-raw(memory:NPUMemory),format=RGB,width=32,height=32 ! "
      "npudownload ! fakesink sync=false";
  /* A first pipeline, run once and dropped, loads the plugin and its
   * features: objects that live as long as the registry, not leaks. (The
   * tracer is only asked while no pipeline exists: asking it about live
   * objects disturbs their references.) */
  GstElement *pipeline = gst_parse_launch(description, NULL);
  if (!pipeline) {
    printf("Bail out! cannot build the pipeline\n");
    return 1;
  }
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  guint before = live_objects(tracer, FALSE);
  pipeline = gst_parse_launch(description, NULL);
  for (int i = 0; i < 100; i++) {
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    if (gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND) != GST_STATE_CHANGE_SUCCESS) {
      printf("Bail out! cycle %d did not reach PLAYING\n", i);
      return 1;
    }
    gst_element_set_state(pipeline, GST_STATE_NULL);
  }
  gst_object_unref(pipeline);
  /* A thread that is still winding down (a task, a stream's last callback)
   * may hold an object for a moment: a leak is what is still alive after
   * two seconds. */
  guint after = live_objects(tracer, FALSE);
  for (int wait = 0; wait < 40 && after > before; wait++) {
    g_usleep(50 * 1000);
    after = live_objects(tracer, FALSE);
  }
  if (after > before)
    live_objects(tracer, TRUE);
  printf("1..1\n%s 1 - %u objects alive before, %u after 100 state cycles\n",
         after <= before ? "ok" : "not ok", before, after);
  gst_object_unref(tracer);
  return after <= before ? 0 : 1;
}
