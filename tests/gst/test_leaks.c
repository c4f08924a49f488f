/* No GStreamer object or buffer outlives a pipeline of our elements: 100
 * NULL -> PLAYING -> NULL cycles of upload -> vpp -> download and 50 of
 * npuinfer on three streams, under GStreamer's own leaks tracer, which is
 * then asked for the objects still alive. */
#include <gst/gst.h>
#include <stdio.h>

static void element_gone(gpointer alive_count, GObject *where_the_object_was)
{
  (void)where_the_object_was;
  g_atomic_int_add((gint *)alive_count, -1);
}

/* Drops the pipeline and waits (up to five seconds) until it and every
 * element in it are disposed. The last reference may be a GStreamer
 * thread's (the bin's async state-change worker, a task winding down), and
 * the tracer must not be asked while an object is being disposed in
 * another thread: it takes a reference to every live object it lists. */
static gboolean drop_pipeline(GstElement *pipeline)
{
  gint alive = 1;
  g_object_weak_ref(G_OBJECT(pipeline), element_gone, &alive);
  GstIterator *it = gst_bin_iterate_recurse(GST_BIN(pipeline));
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
    g_atomic_int_add(&alive, 1);
    g_object_weak_ref(g_value_get_object(&item), element_gone, &alive);
    g_value_reset(&item);
  }
  g_value_unset(&item);
  gst_iterator_free(it);
  gst_object_unref(pipeline);
  for (int wait = 0; wait < 100 && g_atomic_int_get(&alive) > 0; wait++)
    g_usleep(50 * 1000);
  return g_atomic_int_get(&alive) == 0;
}

static GstElement *build_pipeline(const char *description)
{
  GError *error = NULL;
  GstElement *pipeline =
      gst_parse_launch_full(description, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &error);
  if (!pipeline)
    printf("Bail out! cannot build the pipeline: %s\n", error ? error->message : "?");
  g_clear_error(&error);
  return pipeline;
}

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

/* NULL -> PLAYING -> NULL `cycles` times on a pipeline of `description`:
 * TRUE when nothing more is alive afterwards than before (a first run,
 * dropped, has loaded the plugin and its features: objects that live as
 * long as the registry, not leaks). The tracer is only asked while no
 * pipeline exists: asking it about live objects disturbs their references. */
static gboolean cycle_without_leaks(GstTracer *tracer, const char *description, int cycles,
                                    guint *before, guint *after, const char **problem)
{
  *problem = "";
  GstElement *pipeline = build_pipeline(description);
  if (!pipeline)
    return FALSE;
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  if (!drop_pipeline(pipeline)) {
    *problem = " (the first pipeline outlived its last unref by five seconds)";
    return FALSE;
  }
  *before = live_objects(tracer, FALSE);
  pipeline = build_pipeline(description);
  if (!pipeline)
    return FALSE;
  for (int i = 0; i < cycles; i++) {
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    if (gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND) != GST_STATE_CHANGE_SUCCESS) {
      *problem = " (a cycle did not reach PLAYING)";
      gst_element_set_state(pipeline, GST_STATE_NULL);
      gst_object_unref(pipeline);
      return FALSE;
    }
    gst_element_set_state(pipeline, GST_STATE_NULL);
  }
  gboolean pipeline_gone = drop_pipeline(pipeline);
  /* A thread that is still winding down (a task, a stream's last callback)
   * may hold an object for a moment: a leak is what is still alive after
   * two seconds. */
  *after = live_objects(tracer, FALSE);
  for (int wait = 0; wait < 40 && *after > *before; wait++) {
    g_usleep(50 * 1000);
    *after = live_objects(tracer, FALSE);
  }
  if (*after > *before)
    live_objects(tracer, TRUE);
  if (!pipeline_gone)
    *problem = " (the pipeline itself outlived its last unref by five seconds)";
  return pipeline_gone && *after <= *before;
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
  /* The device elements, then npuinfer on three streams (one from NPU
   * memory, batches across them) when the test models are there. */
  const char *transforms =
      "videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48 ! npuupload ! "
      "npuvpp add-borders=true ! video/x-raw(memory:NPUMemory),format=RGB,width=32,height=32 ! "
      "npudownload ! fakesink sync=false";
  const char *models = g_getenv("NPU_INFER_MODELS");
  char *infer = models ? g_strdup_printf(
      "npuinfer name=infer model=%s/channel_mean.onnx batch-size=4 batch-timeout=2000 "
      "videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48 ! npuupload ! "
      "infer.sink_0 infer.src_0 ! npudownload ! fakesink sync=false "
      "videotestsrc is-live=true ! video/x-raw,format=I420,width=32,height=24 ! infer.sink_1 "
      "infer.src_1 ! fakesink sync=false "
      "videotestsrc ! video/x-raw,format=RGBx,width=16,height=16 ! infer.sink_2 "
      "infer.src_2 ! fakesink sync=false", models) : NULL;
  const struct {
    const char *name, *description;
    int cycles;
  } runs[] = {{"upload-vpp-download", transforms, 100}, {"npuinfer", infer, 50}};
  guint n_runs = infer ? 2 : 1;
  printf("1..%u\n", n_runs);
  gboolean clean = TRUE;
  for (guint r = 0; r < n_runs; r++) {
    guint before = 0, after = 0;
    const char *problem;
    gboolean ok = cycle_without_leaks(tracer, runs[r].description, runs[r].cycles, &before,
                                      &after, &problem);
    printf("%s %u - %s: %u objects alive before, %u after %d state cycles%s\n",
           ok ? "ok" : "not ok", r + 1, runs[r].name, before, after, runs[r].cycles, problem);
    clean &= ok;
  }
  g_free(infer);
  gst_object_unref(tracer);
  return clean ? 0 : 1;
}
