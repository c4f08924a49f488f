/* npuinfer while it runs, on GstHarness (one harness per sink/src pair):
 * the model swapped 20 times while 4 streams play (every frame out, in
 * order, each frame's tensors from exactly one model), a bad model that
 * leaves the old one running, roi-min-size/roi-max-size, the reclassify
 * interval of tracked objects, and the device shared through the
 * "gst.npu.device" context (the application's, or npuinfer's with
 * npuupload). The models output each channel's mean and max (or twice
 * that), so solid-colour frames have exactly known results. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/npu/npu-tensor-meta.h>
#include <gst/video/video.h>
#include <math.h>
#include <npu/npu.h>

#define SIZE 16
#define PADS 4
#define SWAPS 20

static gchar *model_path(const gchar *name)
{
  return g_build_filename(g_getenv("NPU_INFER_MODELS"), name, NULL);
}

static void colour_of(guint p, guint f, guint8 rgb[3])
{
  rgb[0] = (guint8)(10 + 7 * p + (3 * f) % 200);
  rgb[1] = (guint8)(50 + p);
  rgb[2] = (guint8)(200 - f % 150);
}

static GstBuffer *solid_frame(guint p, guint f, guint width, guint height)
{
  guint8 rgb[3];
  colour_of(p, f, rgb);
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, width * height * 3, NULL);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  for (gsize i = 0; i < (gsize)width * height; i++)
    memcpy(map.data + 3 * i, rgb, 3);
  gst_buffer_unmap(buffer, &map);
  GST_BUFFER_PTS(buffer) = f * GST_SECOND / 30;
  GST_BUFFER_DURATION(buffer) = GST_SECOND / 30;
  return buffer;
}

/* npuinfer with `pads` harnesses, playing, with a bus to read its messages. */
static GstElement *start_infer(GstHarness **h, guint pads, guint width, guint height,
                               const gchar *properties)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf("npuinfer model=%s %s", model, properties);
  GstElement *infer = gst_parse_launch(description, NULL);
  fail_unless(infer != NULL);
  g_free(description);
  g_free(model);
  GstBus *bus = gst_bus_new();
  gst_element_set_bus(infer, bus);
  gst_object_unref(bus);
  for (guint p = 0; p < pads; p++) {
    gchar *sink = g_strdup_printf("sink_%u", p), *src = g_strdup_printf("src_%u", p);
    h[p] = gst_harness_new_with_element(infer, sink, src);
    g_free(sink);
    g_free(src);
  }
  gst_harness_play(h[0]);
  gchar *caps = g_strdup_printf("video/x-raw,format=RGB,width=%u,height=%u,framerate=30/1",
                                width, height);
  for (guint p = 0; p < pads; p++)
    gst_harness_set_src_caps_str(h[p], caps);
  g_free(caps);
  return infer;
}

static void stop_infer(GstElement *infer, GstHarness **h, guint pads)
{
  for (guint p = 0; p < pads; p++)
    gst_harness_teardown(h[p]);
  gst_object_unref(infer);
}

/* The next element message of npuinfer named `name` (others skipped). */
static const GstStructure *wait_message(GstElement *infer, const gchar *name, GstMessage **msg)
{
  GstBus *bus = gst_element_get_bus(infer);
  const GstStructure *s = NULL;
  while (!s) {
    *msg = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_ELEMENT);
    fail_unless(*msg != NULL, "no %s message", name);
    s = gst_message_get_structure(*msg);
    if (!gst_structure_has_name(s, name)) {
      gst_message_unref(*msg);
      s = NULL;
    }
  }
  gst_object_unref(bus);
  return s;
}

/* Which model computed frame `f` of pad `p`: 1 channel_mean, 2
 * channel_double (every tensor of the frame agreeing), failing otherwise. */
static guint model_of_frame(GstBuffer *buffer, guint p, guint f)
{
  fail_unless_equals_uint64(GST_BUFFER_PTS(buffer), f * GST_SECOND / 30);
  guint metas = 0, factor = 0;
  gpointer state = NULL;
  GstMeta *m;
  while ((m = gst_buffer_iterate_meta_filtered(buffer, &state, GST_NPU_TENSOR_META_API_TYPE))) {
    const GstNpuTensorMeta *meta = (const GstNpuTensorMeta *)m;
    metas++;
    fail_unless_equals_int(meta->n_tensors, 2);
    gboolean doubled = gst_npu_tensor_meta_find(meta, "double_mean") != NULL;
    factor = doubled ? 2 : 1;
    const gchar *names[2] = {doubled ? "double_mean" : "mean", doubled ? "double_max" : "max"};
    guint8 rgb[3];
    colour_of(p, f, rgb);
    for (guint t = 0; t < 2; t++) {
      const GstNpuTensor *tensor = gst_npu_tensor_meta_find(meta, names[t]);
      fail_unless(tensor != NULL, "pad %u frame %u: tensors of two models", p, f);
      GstMapInfo map;
      const float *v = gst_npu_tensor_map(tensor, &map);
      fail_unless(v != NULL);
      for (guint c = 0; c < 3; c++)
        fail_unless(fabsf(v[c] - factor * rgb[c] / 255.0f) < 1e-4f,
                    "pad %u frame %u %s[%u]: %f", p, f, names[t], c, v[c]);
      gst_npu_tensor_unmap(tensor, &map);
    }
  }
  fail_unless_equals_int(metas, 1);
  return factor;
}

typedef struct {
  GstHarness *h;
  guint pad, pushed;
  volatile gint *stop;
} Pusher;

static gpointer push_until_stopped(gpointer data)
{
  Pusher *pusher = data;
  while (!g_atomic_int_get(pusher->stop)) {
    GstBuffer *frame = solid_frame(pusher->pad, pusher->pushed, SIZE, SIZE);
    fail_unless_equals_int(gst_harness_push(pusher->h, frame), GST_FLOW_OK);
    pusher->pushed++;
  }
  return NULL;
}

GST_START_TEST(test_model_swapped_while_playing)
{
  GstHarness *h[PADS];
  GstElement *infer = start_infer(h, PADS, SIZE, SIZE, "batch-size=4 batch-timeout=2000");
  gchar *models[2] = {model_path("channel_mean.onnx"), model_path("channel_double.onnx")};
  volatile gint stop = 0;
  Pusher pushers[PADS];
  GThread *threads[PADS];
  for (guint p = 0; p < PADS; p++) {
    pushers[p] = (Pusher){h[p], p, 0, &stop};
    threads[p] = g_thread_new("pusher", push_until_stopped, &pushers[p]);
  }
  for (guint swap = 1; swap <= SWAPS; swap++) {
    const gchar *next = models[swap % 2];
    g_object_set(infer, "model", next, NULL);
    GstMessage *msg;
    const GstStructure *s = wait_message(infer, "model-reloaded", &msg);
    fail_unless_equals_string(gst_structure_get_string(s, "model"), next);
    gst_message_unref(msg);
  }
  g_atomic_int_set(&stop, 1);
  guint by_model[3] = {0};
  for (guint p = 0; p < PADS; p++) {
    g_thread_join(threads[p]);
    guint last = 0;
    for (guint f = 0; f < pushers[p].pushed; f++) {
      GstBuffer *buffer = gst_harness_pull(h[p]);
      fail_unless(buffer != NULL, "pad %u: frame %u missing", p, f);
      guint model = model_of_frame(buffer, p, f);
      by_model[model]++;
      last = model;
      gst_buffer_unref(buffer);
    }
    fail_unless(gst_harness_try_pull(h[p]) == NULL, "pad %u: more frames than pushed", p);
    (void)last;
  }
  /* 20 swaps end on channel_mean; both models computed frames */
  fail_unless(by_model[1] > 0 && by_model[2] > 0, "mean %u, double %u", by_model[1],
              by_model[2]);
  gchar *now = NULL;
  g_object_get(infer, "model", &now, NULL);
  fail_unless_equals_string(now, models[0]);
  g_free(now);
  g_free(models[0]);
  g_free(models[1]);
  stop_infer(infer, h, PADS);
}
GST_END_TEST;

GST_START_TEST(test_bad_model_keeps_the_old_one)
{
  GstHarness *h[1];
  GstElement *infer = start_infer(h, 1, SIZE, SIZE, "");
  fail_unless_equals_int(gst_harness_push(h[0], solid_frame(0, 0, SIZE, SIZE)), GST_FLOW_OK);
  gchar *bad = model_path("corrupt.onnx");
  g_object_set(infer, "model", bad, NULL);
  GstBus *bus = gst_element_get_bus(infer);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_WARNING);
  fail_unless(msg != NULL, "no warning");
  gst_message_unref(msg);
  const GstStructure *s = wait_message(infer, "model-reload-failed", &msg);
  fail_unless_equals_string(gst_structure_get_string(s, "model"), bad);
  fail_unless(strstr(gst_structure_get_string(s, "error"), "Cannot load the model") != NULL);
  gst_message_unref(msg);
  fail_unless(gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) == NULL);
  gst_object_unref(bus);
  g_free(bad);
  for (guint f = 1; f < 6; f++)
    fail_unless_equals_int(gst_harness_push(h[0], solid_frame(0, f, SIZE, SIZE)), GST_FLOW_OK);
  for (guint f = 0; f < 6; f++) {
    GstBuffer *buffer = gst_harness_pull(h[0]);
    fail_unless_equals_int(model_of_frame(buffer, 0, f), 1);
    gst_buffer_unref(buffer);
  }
  stop_infer(infer, h, 1);
}
GST_END_TEST;

/* A 64 x 48 frame with ROIs of 4 x 4 (id 1), 20 x 20 (id 2) and 60 x 40
 * (id 3), the second tracked as object 5. */
static GstBuffer *roi_frame(guint f)
{
  GstBuffer *buffer = solid_frame(0, f, 64, 48);
  const guint sides[3][2] = {{4, 4}, {20, 20}, {60, 40}};
  for (guint r = 0; r < 3; r++) {
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta(
        buffer, "thing", 0, 0, sides[r][0], sides[r][1]);
    roi->id = (gint)r + 1;
    if (r == 1)
      gst_video_region_of_interest_meta_add_param(
          roi, gst_structure_new("tracking", "object-id", G_TYPE_UINT64, (guint64)5, NULL));
  }
  return buffer;
}

/* The ids of the ROIs the frame got results for (a bit each); *reused: a
 * bit for those whose npu-tensors param says "reused". */
static guint inferred_rois(GstBuffer *buffer, guint *reused)
{
  guint ids = 0;
  *reused = 0;
  gpointer state = NULL;
  GstMeta *m;
  while ((m = gst_buffer_iterate_meta_filtered(buffer, &state, GST_NPU_TENSOR_META_API_TYPE))) {
    const GstNpuTensorMeta *meta = (const GstNpuTensorMeta *)m;
    ids |= 1u << meta->roi_id;
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_get_video_region_of_interest_meta_id(buffer, meta->roi_id);
    fail_unless(roi != NULL);
    GstStructure *param = gst_video_region_of_interest_meta_get_param(roi, "npu-tensors");
    gboolean was_reused = FALSE;
    fail_unless(param && gst_structure_get_boolean(param, "reused", &was_reused));
    *reused |= (guint)was_reused << meta->roi_id;
  }
  return ids;
}

GST_START_TEST(test_roi_sizes)
{
  GstHarness *h[1];
  GstElement *infer = start_infer(h, 1, 64, 48, "mode=roi roi-min-size=8 roi-max-size=32");
  fail_unless_equals_int(gst_harness_push(h[0], roi_frame(0)), GST_FLOW_OK);
  GstBuffer *buffer = gst_harness_pull(h[0]);
  guint reused;
  fail_unless_equals_int(inferred_rois(buffer, &reused), 1u << 2); /* 20 x 20 alone */
  gst_buffer_unref(buffer);
  g_object_set(infer, "roi-min-size", 0, "roi-max-size", 0, NULL);
  fail_unless_equals_int(gst_harness_push(h[0], roi_frame(1)), GST_FLOW_OK);
  buffer = gst_harness_pull(h[0]);
  fail_unless_equals_int(inferred_rois(buffer, &reused), (1u << 1) | (1u << 2) | (1u << 3));
  gst_buffer_unref(buffer);
  stop_infer(infer, h, 1);
}
GST_END_TEST;

GST_START_TEST(test_reclassify_interval)
{
  GstHarness *h[1];
  GstElement *infer = start_infer(h, 1, 64, 48, "mode=roi reclassify-interval=3");
  /* one frame at a time: each frame's results are in before the next */
  for (guint f = 0; f < 7; f++) {
    fail_unless_equals_int(gst_harness_push(h[0], roi_frame(f)), GST_FLOW_OK);
    GstBuffer *buffer = gst_harness_pull(h[0]);
    guint reused;
    /* the untracked ROIs every frame; object 5 on frames 0, 3, 6, reused between */
    fail_unless_equals_int(inferred_rois(buffer, &reused), (1u << 1) | (1u << 2) | (1u << 3));
    fail_unless_equals_int(reused, f % 3 ? 1u << 2 : 0u);
    gst_buffer_unref(buffer);
  }
  GstStructure *stats;
  g_object_get(infer, "stats", &stats, NULL);
  const GstStructure *pad = NULL;
  fail_unless(gst_structure_get(stats, "sink_0", GST_TYPE_STRUCTURE, &pad, NULL));
  guint64 value = 0;
  fail_unless(gst_structure_get_uint64(pad, "tracked-reused", &value));
  fail_unless_equals_uint64(value, 4);
  gst_structure_free((GstStructure *)pad);
  gst_structure_free(stats);
  stop_infer(infer, h, 1);
}
GST_END_TEST;

/* The device in the context `element`'s pad answers with. */
static npu_device *device_of(GstElement *element, const gchar *pad_name)
{
  GstPad *pad = gst_element_get_static_pad(element, pad_name);
  GstQuery *query = gst_query_new_context("gst.npu.device");
  fail_unless(gst_pad_query(pad, query), "%s answers no device context", pad_name);
  GstContext *context;
  gst_query_parse_context(query, &context);
  const GValue *value = gst_structure_get_value(gst_context_get_structure(context), "device");
  npu_device *device = g_value_get_boxed(value);
  gst_query_unref(query);
  gst_object_unref(pad);
  return device;
}

GST_START_TEST(test_device_context)
{
  /* npuinfer opens the device and npuupload joins it */
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGB,width=16,height=16 ! "
      "npuupload name=up ! infer.sink_0 npuinfer name=infer model=%s infer.src_0 ! fakesink",
      model);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  g_free(description);
  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_PAUSED),
                         GST_STATE_CHANGE_ASYNC);
  gst_element_get_state(pipeline, NULL, NULL, GST_CLOCK_TIME_NONE);
  GstElement *up = gst_bin_get_by_name(GST_BIN(pipeline), "up");
  GstElement *infer = gst_bin_get_by_name(GST_BIN(pipeline), "infer");
  fail_unless(device_of(up, "src") == device_of(infer, "sink_0"));
  gst_object_unref(up);
  gst_object_unref(infer);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);

  /* the application's device */
  npu_device *device;
  fail_unless_equals_int(npu_device_open_default(&device), NPU_OK);
  GstElement *alone = gst_element_factory_make("npuinfer", NULL);
  g_object_set(alone, "model", model, NULL);
  GstContext *context = gst_context_new("gst.npu.device", TRUE);
  GValue value = G_VALUE_INIT;
  g_value_init(&value, g_type_from_name("GstNpuDevice"));
  g_value_set_boxed(&value, device);
  gst_structure_set_value(gst_context_writable_structure(context), "device", &value);
  g_value_unset(&value);
  gst_element_set_context(alone, context);
  gst_context_unref(context);
  GstPad *sink = gst_element_request_pad_simple(alone, "sink_%u");
  fail_unless_equals_int(gst_element_set_state(alone, GST_STATE_READY), GST_STATE_CHANGE_SUCCESS);
  fail_unless(device_of(alone, "src_0") == device);
  gst_element_set_state(alone, GST_STATE_NULL);
  gst_element_release_request_pad(alone, sink);
  gst_object_unref(sink);
  gst_object_unref(alone);
  npu_device_release(device);
  g_free(model);
}
GST_END_TEST;

static Suite *infer_live_suite(void)
{
  Suite *s = suite_create("npuinfer-live");
  TCase *tc = tcase_create("live");
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_model_swapped_while_playing);
  tcase_add_test(tc, test_bad_model_keeps_the_old_one);
  tcase_add_test(tc, test_roi_sizes);
  tcase_add_test(tc, test_reclassify_interval);
  tcase_add_test(tc, test_device_context);
  return s;
}

GST_CHECK_MAIN(infer_live);
