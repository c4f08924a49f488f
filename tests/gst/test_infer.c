/* gst-check tests of npuinfer: every output frame carries the tensors of its
 * own input, in order, on 1, 4 and 16 pads at once; batches really mix
 * pads; interval, channel order, fixed-batch models; bad models give element
 * errors; state cycles; roi mode (a result per region of interest, cropped
 * from frames painted with regions of different colours). The test model outputs each channel's mean and max,
 * so solid-colour frames have exactly known results. */
#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/npu/npu-tensor-meta.h>
#include <gst/video/video.h>
#include <stdio.h>

#define SIZE 16

static gchar *model_path(const gchar *name)
{
  return g_build_filename(g_getenv("NPU_INFER_MODELS"), name, NULL);
}

/* The colour of frame `f` on pad `p`: distinct per pad and per frame. */
static void colour_of(guint p, guint f, guint8 rgb[3])
{
  rgb[0] = (guint8)(10 + 7 * p + 3 * f);
  rgb[1] = (guint8)(50 + p);
  rgb[2] = (guint8)(200 - f);
}

/* The pre-processing the element is set up with: (pixel / 255 - mean) / std. */
static float norm_mean[3] = {0, 0, 0}, norm_std[3] = {1, 1, 1};

static GstBuffer *solid_frame(guint p, guint f)
{
  guint8 rgb[3];
  colour_of(p, f, rgb);
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, SIZE * SIZE * 3, NULL);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  for (gsize i = 0; i < SIZE * SIZE; i++)
    memcpy(map.data + 3 * i, rgb, 3);
  gst_buffer_unmap(buffer, &map);
  GST_BUFFER_PTS(buffer) = f * GST_SECOND / 30;
  GST_BUFFER_DURATION(buffer) = GST_SECOND / 30;
  return buffer;
}

/* Checks that `buffer` is frame `f` of pad `p` with its own results (R and B
 * swapped with `order_bgr`); returns the size of the batch that computed it. */
static guint check_frame(GstBuffer *buffer, guint p, guint f, gboolean order_bgr)
{
  fail_unless_equals_uint64(GST_BUFFER_PTS(buffer), f * GST_SECOND / 30);
  GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(buffer);
  fail_unless(meta != NULL, "pad %u frame %u: no tensor meta", p, f);
  fail_unless_equals_int(meta->n_tensors, 2);
  fail_unless_equals_int(meta->pad_index, p);
  fail_unless_equals_int(meta->roi_id, -1);
  guint8 rgb[3];
  colour_of(p, f, rgb);
  const gchar *names[] = {"mean", "max"};
  for (guint t = 0; t < 2; t++) {
    const GstNpuTensor *tensor = gst_npu_tensor_meta_find(meta, names[t]);
    fail_unless(tensor != NULL);
    fail_unless_equals_int(tensor->rank, 2);
    fail_unless(tensor->dims[0] == 1 && tensor->dims[1] == 3);
    fail_unless_equals_int(tensor->size, 3 * sizeof(float));
    fail_unless(gst_buffer_peek_memory(tensor->data, 0)->allocator != NULL);
    GstMapInfo map;
    const float *v = gst_npu_tensor_map(tensor, &map);
    fail_unless(v != NULL);
    for (guint c = 0; c < 3; c++) {
      float want = (rgb[order_bgr ? 2 - c : c] / 255.0f - norm_mean[c]) / norm_std[c];
      fail_unless(fabsf(v[c] - want) < 1e-4f, "pad %u frame %u %s[%u]: %f, want %f", p, f,
                  names[t], c, v[c], want);
    }
    gst_npu_tensor_unmap(tensor, &map);
  }
  return meta->batch_size;
}

/* Pulls frame `f` of pad `p` from `sink` and checks it. */
static guint pull_and_check(GstElement *sink, guint p, guint f, gboolean order_bgr)
{
  GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
  fail_unless(sample != NULL, "pad %u: frame %u missing", p, f);
  guint batch = check_frame(gst_sample_get_buffer(sample), p, f, order_bgr);
  gst_sample_unref(sample);
  return batch;
}

/* A per-pad figure of npuinfer's stats structure. */
static guint64 pad_stat(const GstStructure *stats, guint p, const gchar *field)
{
  gchar *name = g_strdup_printf("sink_%u", p);
  const GstStructure *pad = NULL;
  fail_unless(gst_structure_get(stats, name, GST_TYPE_STRUCTURE, &pad, NULL), "no %s", name);
  guint64 value = 0;
  fail_unless(gst_structure_get_uint64(pad, field, &value), "%s: no %s", name, field);
  gst_structure_free((GstStructure *)pad);
  g_free(name);
  return value;
}

static GstElement *by_name(GstElement *pipeline, const gchar *format, guint p)
{
  gchar *name = g_strdup_printf(format, p);
  GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), name);
  fail_unless(element != NULL, "no %s", name);
  g_free(name);
  return element;
}

/* npuinfer with `pads` appsrc aN -> sink_N, src_N -> appsink sN branches. */
static GstElement *make_pipeline(guint pads, const gchar *options)
{
  gchar *model = model_path("channel_mean.onnx");
  GString *description = g_string_new(NULL);
  g_string_printf(description, "npuinfer name=infer model=%s %s ", model, options);
  for (guint p = 0; p < pads; p++)
    g_string_append_printf(description,
                           "appsrc name=a%u format=time caps=video/x-raw,format=RGB,width=%d,"
                           "height=%d,framerate=30/1 ! infer.sink_%u infer.src_%u ! "
                           "appsink name=s%u sync=false async=false wait-on-eos=false ",
                           p, SIZE, SIZE, p, p, p);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description->str, &error);
  fail_unless(pipeline != NULL, "parse failed: %s", error ? error->message : "?");
  g_string_free(description, TRUE);
  g_free(model);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  return pipeline;
}

static void push_frame(GstElement *src, guint p, guint f)
{
  fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), solid_frame(p, f)),
                         GST_FLOW_OK);
}

static void expect_no_error(GstElement *pipeline)
{
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (msg) {
    GError *err;
    gst_message_parse_error(msg, &err, NULL);
    fail("error: %s", err->message);
  }
  gst_object_unref(bus);
}

typedef struct {
  guint pads, frames;
  const gchar *options; /* npuinfer properties */
  const gchar *model;
  guint max_batch_seen;
  GstStructure *stats;
  gboolean upload; /* frames go through npuupload: NPU memory in */
} InferRun;

/* Runs `run->pads` appsrc -> npuinfer -> appsink branches of `frames` solid
 * frames each and checks every output frame's tensors; `expect_result(f)`
 * says whether frame f must carry results; `order_bgr` swaps R and B. */
static void run_and_check(InferRun *run, guint interval, gboolean order_bgr)
{
  gchar *model = model_path(run->model);
  GString *description =
      g_string_new(NULL);
  g_string_printf(description, "npuinfer name=infer model=%s %s ", model, run->options);
  for (guint p = 0; p < run->pads; p++)
    g_string_append_printf(description,
                           "appsrc name=a%u format=time caps=video/x-raw,format=RGB,width=%d,"
                           "height=%d,framerate=30/1 %s ! infer.sink_%u infer.src_%u ! "
                           "appsink name=s%u sync=false wait-on-eos=false ",
                           p, SIZE, SIZE, run->upload ? "! npuupload" : "", p, p, p);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description->str, &error);
  fail_unless(pipeline != NULL, "parse failed: %s", error ? error->message : "?");
  g_string_free(description, TRUE);
  g_free(model);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (guint p = 0; p < run->pads; p++) {
    gchar *name = g_strdup_printf("a%u", p);
    GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), name);
    for (guint f = 0; f < run->frames; f++)
      fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), solid_frame(p, f)),
                             GST_FLOW_OK);
    gst_app_src_end_of_stream(GST_APP_SRC(src));
    gst_object_unref(src);
    g_free(name);
  }
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg != NULL, "timed out");
  fail_unless(GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS, "error before EOS");
  gst_message_unref(msg);
  gst_object_unref(bus);

  for (guint p = 0; p < run->pads; p++) {
    gchar *name = g_strdup_printf("s%u", p);
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), name);
    for (guint f = 0; f < run->frames; f++) {
      GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), GST_SECOND);
      fail_unless(sample != NULL, "pad %u: frame %u missing", p, f);
      GstBuffer *buffer = gst_sample_get_buffer(sample);
      if (f % interval != 0) {
        fail_unless_equals_uint64(GST_BUFFER_PTS(buffer), f * GST_SECOND / 30);
        GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(buffer);
        fail_unless(meta == NULL, "pad %u frame %u: inferred against the interval", p, f);
        gst_sample_unref(sample);
        continue;
      }
      run->max_batch_seen = MAX(run->max_batch_seen, check_frame(buffer, p, f, order_bgr));
      gst_sample_unref(sample);
    }
    fail_unless(gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 0) == NULL,
                "pad %u: more frames than pushed", p);
    gst_object_unref(sink);
    g_free(name);
  }
  GstElement *infer = gst_bin_get_by_name(GST_BIN(pipeline), "infer");
  g_object_get(infer, "stats", &run->stats, NULL);
  gst_object_unref(infer);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

GST_START_TEST(test_one_pad)
{
  InferRun run = {1, 5, "print-results=true", "channel_mean.onnx", 0, NULL, FALSE};
  run_and_check(&run, 1, FALSE);
  guint64 batches;
  fail_unless(gst_structure_get_uint64(run.stats, "batches", &batches));
  fail_unless_equals_uint64(batches, 5);
  gst_structure_free(run.stats);
}
GST_END_TEST;

/* Four streams into one model, batches of up to four frames. */
GST_START_TEST(test_four_pads_batched)
{
  InferRun run = {4, 6, "batch-size=4 batch-timeout=2000000", "channel_mean.onnx", 0, NULL};
  run_and_check(&run, 1, FALSE);
  double mean_batch;
  fail_unless(gst_structure_get_double(run.stats, "mean-batch", &mean_batch));
  fail_unless(run.max_batch_seen > 1, "no batch held frames of several pads");
  fail_unless(mean_batch > 1.0, "mean batch %f", mean_batch);
  gst_structure_free(run.stats);
}
GST_END_TEST;

GST_START_TEST(test_sixteen_pads)
{
  InferRun run = {16, 3, "batch-size=8 batch-timeout=1000000", "channel_mean.onnx", 0, NULL};
  run_and_check(&run, 1, FALSE);
  fail_unless(run.max_batch_seen > 1);
  guint64 frames;
  fail_unless(gst_structure_get_uint64(run.stats, "frames-inferred", &frames));
  fail_unless_equals_uint64(frames, 16 * 3);
  gst_structure_free(run.stats);
}
GST_END_TEST;

/* A model planned for exactly two frames takes batches of one to three pads. */
GST_START_TEST(test_fixed_batch_model)
{
  InferRun run = {3, 4, "batch-size=2 batch-timeout=500000", "batch2_mean.onnx", 0, NULL};
  run_and_check(&run, 1, FALSE);
  gst_structure_free(run.stats);
}
GST_END_TEST;

GST_START_TEST(test_interval_and_channel_order)
{
  InferRun run = {2, 6, "interval=2 channel-order=bgr", "channel_mean.onnx", 0, NULL};
  run_and_check(&run, 2, TRUE);
  fail_unless_equals_uint64(pad_stat(run.stats, 0, "inferences"), 3);
  fail_unless_equals_uint64(pad_stat(run.stats, 1, "frames"), 6);
  gst_structure_free(run.stats);
}
GST_END_TEST;

/* Each bad model is an element error naming the problem; nothing crashes. */
/* One stream alone fills batches: chain functions do not wait for results. */
GST_START_TEST(test_one_pad_fills_batches)
{
  InferRun run = {1, 12, "batch-size=4 batch-timeout=2000000 max-inflight=3",
                  "channel_mean.onnx", 0, NULL};
  run_and_check(&run, 1, FALSE);
  fail_unless_equals_int(run.max_batch_seen, 4);
  guint64 batches;
  fail_unless(gst_structure_get_uint64(run.stats, "batches", &batches));
  fail_unless_equals_uint64(batches, 3);
  gst_structure_free(run.stats);
}
GST_END_TEST;

/* sink_0 reaches EOS while sink_1 goes on: src_0 gets EOS after its frames. */
GST_START_TEST(test_eos_one_pad)
{
  GstElement *pipeline = make_pipeline(2, "batch-size=2 batch-timeout=1000");
  GstElement *a0 = by_name(pipeline, "a%u", 0), *a1 = by_name(pipeline, "a%u", 1);
  GstElement *s0 = by_name(pipeline, "s%u", 0), *s1 = by_name(pipeline, "s%u", 1);
  for (guint f = 0; f < 3; f++)
    push_frame(a0, 0, f);
  gst_app_src_end_of_stream(GST_APP_SRC(a0));
  for (guint f = 0; f < 3; f++)
    pull_and_check(s0, 0, f, FALSE);
  fail_unless(gst_app_sink_try_pull_sample(GST_APP_SINK(s0), 5 * GST_SECOND) == NULL);
  fail_unless(gst_app_sink_is_eos(GST_APP_SINK(s0)));
  for (guint f = 0; f < 10; f++) {
    push_frame(a1, 1, f);
    pull_and_check(s1, 1, f, FALSE);
  }
  fail_if(gst_app_sink_is_eos(GST_APP_SINK(s1)));
  gst_app_src_end_of_stream(GST_APP_SRC(a1));
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 5 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg != NULL && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS);
  gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(a0);
  gst_object_unref(a1);
  gst_object_unref(s0);
  gst_object_unref(s1);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* Branches added and released while PLAYING; sink_0 keeps going throughout. */
GST_START_TEST(test_pads_added_and_released_while_playing)
{
  GstElement *pipeline = make_pipeline(1, "batch-size=4 batch-timeout=2000");
  GstElement *infer = by_name(pipeline, "infer", 0);
  GstElement *a0 = by_name(pipeline, "a%u", 0), *s0 = by_name(pipeline, "s%u", 0);
  guint f0 = 0;
  for (guint round = 0; round < 4; round++) {
    push_frame(a0, 0, f0);
    pull_and_check(s0, 0, f0++, FALSE);
    GstPad *sink = gst_element_request_pad_simple(infer, "sink_%u");
    fail_unless(sink != NULL);
    guint p;
    fail_unless(sscanf(GST_PAD_NAME(sink), "sink_%u", &p) == 1);
    fail_unless_equals_int(p, round + 1);
    gchar *src_name = g_strdup_printf("src_%u", p);
    GstPad *src = gst_element_get_static_pad(infer, src_name);
    fail_unless(src != NULL, "no %s with %s", src_name, GST_PAD_NAME(sink));
    g_free(src_name);
    GstElement *a = gst_element_factory_make("appsrc", NULL);
    GstElement *s = gst_element_factory_make("appsink", NULL);
    GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGB", "width",
                                        G_TYPE_INT, SIZE, "height", G_TYPE_INT, SIZE,
                                        "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
    g_object_set(a, "format", GST_FORMAT_TIME, "caps", caps, NULL);
    g_object_set(s, "sync", FALSE, "wait-on-eos", FALSE, NULL);
    gst_caps_unref(caps);
    gst_bin_add_many(GST_BIN(pipeline), a, s, NULL);
    GstPad *a_src = gst_element_get_static_pad(a, "src");
    GstPad *s_sink = gst_element_get_static_pad(s, "sink");
    fail_unless_equals_int(gst_pad_link(a_src, sink), GST_PAD_LINK_OK);
    fail_unless_equals_int(gst_pad_link(src, s_sink), GST_PAD_LINK_OK);
    fail_unless(gst_element_sync_state_with_parent(s));
    fail_unless(gst_element_sync_state_with_parent(a));
    for (guint f = 0; f < 5; f++) {
      push_frame(a, p, f);
      push_frame(a0, 0, f0++);
    }
    for (guint f = 0; f < 5; f++) {
      pull_and_check(s, p, f, FALSE);
      pull_and_check(s0, 0, f0 - 5 + f, FALSE);
    }
    /* frames still queued in the element when the pad goes */
    push_frame(a, p, 5);
    push_frame(a, p, 6);
    /* locked: the pipeline's own (async) state changes must not revive them */
    gst_element_set_locked_state(a, TRUE);
    gst_element_set_locked_state(s, TRUE);
    gst_element_set_state(a, GST_STATE_NULL);
    gst_pad_unlink(a_src, sink);
    gst_element_release_request_pad(infer, sink);
    gst_element_set_state(s, GST_STATE_NULL);
    gst_bin_remove_many(GST_BIN(pipeline), a, s, NULL);
    gst_object_unref(a_src);
    gst_object_unref(s_sink);
    gst_object_unref(src);
    gst_object_unref(sink);
  }
  push_frame(a0, 0, f0);
  pull_and_check(s0, 0, f0++, FALSE);
  fail_unless_equals_int(GST_ELEMENT(infer)->numpads, 2);
  expect_no_error(pipeline);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(a0);
  gst_object_unref(s0);
  gst_object_unref(infer);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* interval changed while PLAYING takes effect from the next frame. */
GST_START_TEST(test_interval_change_while_playing)
{
  GstElement *pipeline = make_pipeline(1, "");
  GstElement *infer = by_name(pipeline, "infer", 0);
  GstElement *a0 = by_name(pipeline, "a%u", 0), *s0 = by_name(pipeline, "s%u", 0);
  /* frames 0-3 every frame, then every third of the pad's count: 6, 9 */
  for (guint f = 0; f < 12; f++) {
    if (f == 4)
      g_object_set(infer, "interval", 3, NULL);
    push_frame(a0, 0, f);
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(s0), 5 * GST_SECOND);
    fail_unless(sample != NULL);
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    gboolean inferred = f < 4 || f % 3 == 0;
    if (inferred)
      check_frame(buffer, 0, f, FALSE);
    else
      fail_unless(gst_buffer_get_npu_tensor_meta(buffer) == NULL, "frame %u inferred", f);
    fail_unless_equals_uint64(GST_BUFFER_PTS(buffer), f * GST_SECOND / 30);
    gst_sample_unref(sample);
  }
  GstStructure *stats;
  g_object_get(infer, "stats", &stats, NULL);
  fail_unless_equals_uint64(pad_stat(stats, 0, "inferences"), 4 + 2);
  gst_structure_free(stats);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(a0);
  gst_object_unref(s0);
  gst_object_unref(infer);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* A stalled downstream on sink_0 holds at most max-inflight batches in the
 * element (the rest stays upstream), while sink_1 keeps flowing. */
GST_START_TEST(test_back_pressure)
{
  GstElement *pipeline = make_pipeline(2, "max-inflight=2 batch-size=1");
  GstElement *a0 = by_name(pipeline, "a%u", 0), *s0 = by_name(pipeline, "s%u", 0);
  GstElement *a1 = by_name(pipeline, "a%u", 1), *s1 = by_name(pipeline, "s%u", 1);
  g_object_set(s0, "max-buffers", 1, "drop", FALSE, NULL);
  for (guint f = 0; f < 40; f++)
    push_frame(a0, 0, f);
  for (guint f = 0; f < 10; f++) {
    push_frame(a1, 1, f);
    pull_and_check(s1, 1, f, FALSE);
  }
  guint64 level;
  g_object_get(a0, "current-level-buffers", &level, NULL);
  /* in the element: 2 queued, 1 blocked in the chain, 1 in appsink's push,
   * 1 in appsink's queue; at most one more in appsrc's hands */
  fail_unless(level >= 40 - 6, "the element took %" G_GUINT64_FORMAT " frames", 40 - level);
  for (guint f = 0; f < 40; f++)
    pull_and_check(s0, 0, f, FALSE);
  expect_no_error(pipeline);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(a0);
  gst_object_unref(s0);
  gst_object_unref(a1);
  gst_object_unref(s1);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* stats-interval posts per-pad statistics as element messages. */
GST_START_TEST(test_stats_messages)
{
  GstElement *pipeline = make_pipeline(2, "stats-interval=1 batch-size=2 batch-timeout=100000");
  GstElement *a0 = by_name(pipeline, "a%u", 0), *a1 = by_name(pipeline, "a%u", 1);
  GstElement *s0 = by_name(pipeline, "s%u", 0), *s1 = by_name(pipeline, "s%u", 1);
  for (guint f = 0; f < 4; f++) {
    push_frame(a0, 0, f);
    push_frame(a1, 1, f);
    pull_and_check(s0, 0, f, FALSE);
    pull_and_check(s1, 1, f, FALSE);
    g_usleep(2000);
  }
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg, *last = NULL;
  while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT))) {
    if (gst_message_has_name(msg, "npuinfer-stats"))
      gst_message_replace(&last, msg);
    gst_message_unref(msg);
  }
  fail_unless(last != NULL, "no npuinfer-stats message");
  const GstStructure *stats = gst_message_get_structure(last);
  guint64 frames = pad_stat(stats, 1, "inferences");
  fail_unless(frames >= 1 && frames <= 4);
  const GstStructure *pad = NULL;
  fail_unless(gst_structure_get(stats, "sink_0", GST_TYPE_STRUCTURE, &pad, NULL));
  double mean;
  gint64 max;
  fail_unless(gst_structure_get_double(pad, "mean-latency-us", &mean));
  fail_unless(gst_structure_get_int64(pad, "max-latency-us", &max));
  fail_unless(mean > 0 && max >= mean);
  gst_structure_free((GstStructure *)pad);
  gst_message_unref(last);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(a0);
  gst_object_unref(a1);
  gst_object_unref(s0);
  gst_object_unref(s1);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* mean, std and scale: the model sees (pixel * scale - mean) / std. */
GST_START_TEST(test_normalisation)
{
  const float mean[3] = {0.1f, 0.2f, 0.3f}, std[3] = {0.5f, 0.25f, 2.0f};
  memcpy(norm_mean, mean, sizeof mean);
  memcpy(norm_std, std, sizeof std);
  InferRun run = {2, 3, "mean=0.1,0.2,0.3 std=0.5,0.25,2 batch-size=2 batch-timeout=100000",
                  "channel_mean.onnx", 0, NULL, FALSE};
  run_and_check(&run, 1, FALSE);
  gst_structure_free(run.stats);
  /* scale 1 with mean 0 and std 255 is the default again */
  memcpy(norm_mean, (float[3]){0, 0, 0}, sizeof mean);
  memcpy(norm_std, (float[3]){1, 1, 1}, sizeof std);
  InferRun raw = {1, 2, "scale=1 std=255", "channel_mean.onnx", 0, NULL, FALSE};
  run_and_check(&raw, 1, FALSE);
  gst_structure_free(raw.stats);
}
GST_END_TEST;

/* precision=bf16 reaches the context: a model without convolutions or
 * matrix products (nothing bfloat16 would change) reads as in fp32. */
GST_START_TEST(test_precision_property)
{
  InferRun run = {2, 3, "precision=bf16 batch-size=2 batch-timeout=100000", "channel_mean.onnx",
                  0, NULL, FALSE};
  run_and_check(&run, 1, FALSE);
  gst_structure_free(run.stats);
  GstElement *infer = gst_element_factory_make("npuinfer", NULL);
  gst_util_set_object_arg(G_OBJECT(infer), "precision", "bf16");
  gint precision = -1;
  g_object_get(infer, "precision", &precision, NULL);
  GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(infer), "precision");
  gchar *name = g_enum_to_string(spec->value_type, precision);
  fail_unless_equals_string(name, "GST_NPU_INFER_PRECISION_BF16");
  g_free(name);
  gst_object_unref(infer);
}
GST_END_TEST;

/* Frames already in NPU memory (npuupload) are read where they are. */
GST_START_TEST(test_npu_memory_input)
{
  InferRun run = {3, 4, "batch-size=3 batch-timeout=100000", "channel_mean.onnx", 0, NULL, TRUE};
  run_and_check(&run, 1, FALSE);
  fail_unless(run.max_batch_seen > 1);
  gst_structure_free(run.stats);
}
GST_END_TEST;

/* A flush on sink_0 (flushing seek) while sink_1 streams: both go on after. */
GST_START_TEST(test_flush_one_pad)
{
  GstElement *pipeline = make_pipeline(2, "batch-size=2 batch-timeout=1000");
  GstElement *infer = by_name(pipeline, "infer", 0);
  GstElement *a0 = by_name(pipeline, "a%u", 0), *a1 = by_name(pipeline, "a%u", 1);
  GstElement *s0 = by_name(pipeline, "s%u", 0), *s1 = by_name(pipeline, "s%u", 1);
  for (guint f = 0; f < 3; f++) {
    push_frame(a0, 0, f);
    push_frame(a1, 1, f);
    pull_and_check(s0, 0, f, FALSE);
    pull_and_check(s1, 1, f, FALSE);
  }
  GstPad *sink0 = gst_element_get_static_pad(infer, "sink_0");
  fail_unless(gst_pad_send_event(sink0, gst_event_new_flush_start()));
  fail_unless(gst_pad_send_event(sink0, gst_event_new_flush_stop(TRUE)));
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  fail_unless(gst_pad_send_event(sink0, gst_event_new_segment(&segment)));
  for (guint f = 3; f < 6; f++) {
    push_frame(a0, 0, f);
    push_frame(a1, 1, f);
    pull_and_check(s0, 0, f, FALSE);
    pull_and_check(s1, 1, f, FALSE);
  }
  expect_no_error(pipeline);
  gst_object_unref(sink0);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(infer);
  gst_object_unref(a0);
  gst_object_unref(a1);
  gst_object_unref(s0);
  gst_object_unref(s1);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* Frames a QoS event says are late go on without inference. */
GST_START_TEST(test_qos_skips_inference)
{
  GstElement *pipeline = make_pipeline(1, "");
  GstElement *infer = by_name(pipeline, "infer", 0);
  GstElement *a0 = by_name(pipeline, "a%u", 0), *s0 = by_name(pipeline, "s%u", 0);
  push_frame(a0, 0, 0);
  pull_and_check(s0, 0, 0, FALSE);
  GstPad *src0 = gst_element_get_static_pad(infer, "src_0");
  /* late by 100 ms at 0: frames before 100 ms (1, 2) skip */
  gst_pad_send_event(src0, gst_event_new_qos(GST_QOS_TYPE_UNDERFLOW, 2.0, 100 * GST_MSECOND, 0));
  for (guint f = 1; f < 6; f++) {
    push_frame(a0, 0, f);
    if (f * GST_SECOND / 30 >= 100 * GST_MSECOND) {
      pull_and_check(s0, 0, f, FALSE);
      continue;
    }
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(s0), 5 * GST_SECOND);
    fail_unless(sample != NULL);
    fail_unless(gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(sample)) == NULL);
    fail_unless_equals_uint64(GST_BUFFER_PTS(gst_sample_get_buffer(sample)), f * GST_SECOND / 30);
    gst_sample_unref(sample);
  }
  GstStructure *stats;
  g_object_get(infer, "stats", &stats, NULL);
  fail_unless_equals_uint64(pad_stat(stats, 0, "qos-skipped"), 2);
  fail_unless_equals_uint64(pad_stat(stats, 0, "inferences"), 4);
  gst_structure_free(stats);
  gst_object_unref(src0);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(infer);
  gst_object_unref(a0);
  gst_object_unref(s0);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* npuinfer with `properties` cannot open: the pipeline fails to start with
 * an element error whose message holds `message`. */
static void expect_open_error(const gchar *properties, const gchar *message)
{
  gchar *description = g_strdup_printf(
      "videotestsrc num-buffers=2 ! video/x-raw,width=32,height=32 ! npuinfer %s ! fakesink",
      properties);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_PLAYING),
                         GST_STATE_CHANGE_FAILURE);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 5 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless(msg != NULL, "%s: no error message", properties);
  GError *err;
  gst_message_parse_error(msg, &err, NULL);
  fail_unless(strstr(err->message, message) != NULL, "%s: '%s'", properties, err->message);
  g_error_free(err);
  gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  g_free(description);
}

static gchar *write_file(const gchar *text)
{
  gchar *path = NULL;
  gint fd = g_file_open_tmp("npuinfer-XXXXXX.json", &path, NULL);
  fail_unless(fd >= 0);
  close(fd);
  fail_unless(g_file_set_contents(path, text, -1, NULL));
  return path;
}

/* A config file sets properties by name when the element opens. */
GST_START_TEST(test_config_file)
{
  gchar *config = write_file("{\"channel-order\": \"bgr\", \"batch-size\": 2, "
                             "\"mean\": [0, 0, 0], \"std\": [1, 1, 1], \"letterbox\": false}");
  gchar *options = g_strdup_printf("config=%s", config);
  GstElement *pipeline = make_pipeline(1, options);
  GstElement *infer = by_name(pipeline, "infer", 0);
  GstElement *a0 = by_name(pipeline, "a%u", 0), *s0 = by_name(pipeline, "s%u", 0);
  for (guint f = 0; f < 3; f++)
    push_frame(a0, 0, f);
  for (guint f = 0; f < 3; f++)
    pull_and_check(s0, 0, f, TRUE);
  guint batch_size;
  gchar *mean;
  g_object_get(infer, "batch-size", &batch_size, "mean", &mean, NULL);
  fail_unless_equals_int(batch_size, 2);
  fail_unless(mean != NULL);
  g_free(mean);
  expect_no_error(pipeline);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(a0);
  gst_object_unref(s0);
  gst_object_unref(infer);
  gst_object_unref(pipeline);
  g_unlink(config);
  g_free(config);
  g_free(options);
}
GST_END_TEST;

GST_START_TEST(test_bad_config)
{
  static const struct {
    const gchar *json, *message;
  } cases[] = {
      {"{ not json", "Cannot read the config"},
      {"{\"no-such-property\": 1}", "Bad config"},
      {"{\"batch-size\": {\"nested\": 1}}", "Bad config"},
  };
  gchar *model = model_path("channel_mean.onnx");
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    gchar *config = write_file(cases[i].json);
    gchar *properties = g_strdup_printf("model=%s config=%s", model, config);
    expect_open_error(properties, cases[i].message);
    g_unlink(config);
    g_free(config);
    g_free(properties);
  }
  g_free(model);
}
GST_END_TEST;

static gboolean count_message(const gchar *domain, GLogLevelFlags level, const gchar *message,
                              gpointer user_data)
{
  (void)domain, (void)level, (void)message;
  (*(guint *)user_data)++;
  return TRUE; /* expected: not fatal */
}

/* mean/std take exactly 1 or 3 numbers: anything else is refused with a
 * warning when set (the value stays as it was) and the element then fails
 * to start with an error naming the value; also from a config file. */
GST_START_TEST(test_bad_channel_values)
{
  static const struct {
    const gchar *name, *text;
  } cases[] = {
      {"mean", "abc,def"}, {"mean", "1,2,3,4,5,6,7,8,9,10,11,12"}, {"std", "1,2"},
      {"std", "1,,x"},     {"mean", ""},                           {"mean", "0.5x"},
      {"std", "nan"},      {"mean", "1e300"},                      {"std", "1,2,3,"},
  };
  guint warnings = 0;
  GRegex *refused = g_regex_new("refused", 0, 0, NULL);
  GstCheckLogFilter *filter =
      gst_check_add_log_filter(NULL, G_LOG_LEVEL_WARNING, refused, count_message, &warnings, NULL);
  gchar *model = model_path("channel_mean.onnx");
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GstElement *infer = gst_element_factory_make("npuinfer", NULL);
    g_object_set(infer, cases[i].name, cases[i].text, NULL);
    fail_unless_equals_int(warnings, 2 * i + 1);
    gchar *value = NULL;
    g_object_get(infer, cases[i].name, &value, NULL);
    fail_unless_equals_string(value, strcmp(cases[i].name, "mean") ? "1,1,1" : "0,0,0");
    g_free(value);
    gst_object_unref(infer);
    gchar *properties = g_strdup_printf("model=%s %s=\"%s\"", model, cases[i].name, cases[i].text);
    gchar *message = g_strdup_printf("Invalid %s '%s'", cases[i].name, cases[i].text);
    expect_open_error(properties, message);
    fail_unless_equals_int(warnings, 2 * i + 2);
    g_free(message);
    g_free(properties);
  }
  gchar *config = write_file("{\"std\": [0.5, 0.25]}");
  gchar *properties = g_strdup_printf("model=%s config=%s", model, config);
  expect_open_error(properties, "Invalid std '0.5,0.25'");
  g_unlink(config);
  g_free(config);
  g_free(properties);
  gst_check_remove_log_filter(filter);
  /* accepted: one value for all channels, three with spaces; a good value
   * after a refused one clears the refusal */
  GstElement *infer = gst_element_factory_make("npuinfer", NULL);
  g_object_set(infer, "mean", "0.5", "std", " 0.25 , 2,4 ", NULL);
  gchar *mean = NULL, *std = NULL;
  g_object_get(infer, "mean", &mean, "std", &std, NULL);
  fail_unless_equals_string(mean, "0.5,0.5,0.5");
  fail_unless_equals_string(std, "0.25,2,4");
  g_free(mean);
  g_free(std);
  gst_object_unref(infer);
  g_free(model);
}
GST_END_TEST;

/* Setting `model` after `config`, and a config file that sets `model`,
 * leave `config` intact (it was freed and left dangling). */
GST_START_TEST(test_model_after_config)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *text = g_strdup_printf("{\"model\": \"%s\", \"batch-size\": 2}", model);
  gchar *config = write_file(text);
  GstElement *infer = gst_element_factory_make("npuinfer", NULL);
  g_object_set(infer, "config", config, "model", model, NULL);
  gchar *value = NULL;
  g_object_get(infer, "config", &value, NULL);
  fail_unless_equals_string(value, config);
  g_free(value);
  gst_object_unref(infer);
  /* the config sets the model while the element opens */
  gchar *options = g_strdup_printf("config=%s", config);
  GstElement *pipeline = make_pipeline(1, options);
  GstElement *a0 = by_name(pipeline, "a%u", 0), *s0 = by_name(pipeline, "s%u", 0);
  GstElement *element = by_name(pipeline, "infer", 0);
  for (guint f = 0; f < 2; f++)
    push_frame(a0, 0, f);
  for (guint f = 0; f < 2; f++)
    pull_and_check(s0, 0, f, FALSE);
  g_object_get(element, "config", &value, NULL);
  fail_unless_equals_string(value, config);
  g_free(value);
  expect_no_error(pipeline);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(element);
  gst_object_unref(a0);
  gst_object_unref(s0);
  gst_object_unref(pipeline);
  g_unlink(config);
  g_free(config);
  g_free(text);
  g_free(options);
  g_free(model);
}
GST_END_TEST;

/* Frames in a segment of bytes (an appsrc's default format): inferred, no
 * GStreamer-CRITICAL from running-time arithmetic on it (fatal here). */
GST_START_TEST(test_bytes_segment)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      "appsrc name=a0 caps=video/x-raw,format=RGB,width=%d,height=%d,framerate=30/1 ! "
      "npuinfer model=%s ! appsink name=s0 sync=false async=false", SIZE, SIZE, model);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstElement *a0 = by_name(pipeline, "a%u", 0), *s0 = by_name(pipeline, "s%u", 0);
  for (guint f = 0; f < 3; f++)
    push_frame(a0, 0, f);
  for (guint f = 0; f < 3; f++)
    pull_and_check(s0, 0, f, FALSE);
  expect_no_error(pipeline);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(a0);
  gst_object_unref(s0);
  gst_object_unref(pipeline);
  g_free(description);
  g_free(model);
}
GST_END_TEST;

/* The model's "mean" output for one solid-colour frame in `format`. */
static void channel_means(const gchar *format, float means[3])
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      "videotestsrc num-buffers=1 pattern=solid-color foreground-color=0xff3278c8 ! "
      "video/x-raw,format=%s,width=32,height=16,colorimetry=bt709 ! npuinfer model=%s ! "
      "appsink name=s0 sync=false", format, model);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  GstElement *s0 = by_name(pipeline, "s%u", 0);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(s0), 5 * GST_SECOND);
  fail_unless(sample != NULL, "%s: no frame", format);
  GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(sample));
  fail_unless(meta != NULL, "%s: no results", format);
  const GstNpuTensor *mean = gst_npu_tensor_meta_find(meta, "mean");
  GstMapInfo map;
  const float *v = gst_npu_tensor_map(mean, &map);
  fail_unless(v != NULL);
  memcpy(means, v, 3 * sizeof(float));
  gst_npu_tensor_unmap(mean, &map);
  gst_sample_unref(sample);
  expect_no_error(pipeline);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(s0);
  gst_object_unref(pipeline);
  g_free(description);
  g_free(model);
}

/* 4:4:4 and 4:2:2 frames (Y444, Y42B, NV16, NV24) go straight into npuinfer
 * (they were not negotiated) and give the colour the RGB frame gives. */
GST_START_TEST(test_planar_444_and_422_input)
{
  float rgb[3];
  channel_means("RGB", rgb);
  fail_unless(fabsf(rgb[0] - 0x32 / 255.0f) < 1e-4f && fabsf(rgb[2] - 0xc8 / 255.0f) < 1e-4f);
  const gchar *formats[] = {"Y444", "Y42B", "NV16", "NV24", "I420"};
  for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
    float yuv[3];
    channel_means(formats[i], yuv);
    for (guint c = 0; c < 3; c++)
      fail_unless(fabsf(yuv[c] - rgb[c]) < 3.0f / 255, "%s channel %u: %f, RGB gives %f",
                  formats[i], c, yuv[c], rgb[c]);
  }
}
GST_END_TEST;

/* A device without memory for the plan: a clear element error, no crash
 * (in a gst-launch-1.0 of its own: the memory limit is read when the
 * process first opens the device). */
GST_START_TEST(test_device_out_of_memory)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *model_arg = g_strdup_printf("model=%s", model);
  const gchar *argv[] = {"gst-launch-1.0", "videotestsrc", "num-buffers=3", "!",
                         "video/x-raw,width=64,height=64", "!", "npuinfer", model_arg, "!",
                         "fakesink", NULL};
  gchar **env = g_environ_setenv(g_get_environ(), "NPU_CPU_MEMORY_LIMIT", "1", TRUE);
  gchar *out = NULL, *err = NULL;
  gint status = 0;
  GError *error = NULL;
  fail_unless(g_spawn_sync(NULL, (gchar **)argv, env, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                           &err, &status, &error), "%s", error ? error->message : "");
  fail_unless(WIFEXITED(status) && WEXITSTATUS(status) != 0, "gst-launch succeeded");
  gchar *all = g_strconcat(out, err, NULL);
  fail_unless(strstr(all, "npuinfer") && g_strrstr(all, "memory"), "%s", all);
  g_free(all);
  g_free(out);
  g_free(err);
  g_strfreev(env);
  g_free(model_arg);
  g_free(model);
}
GST_END_TEST;

GST_START_TEST(test_bad_models)
{
  static const struct {
    const gchar *file, *message;
  } cases[] = {
      {"no_such_model.onnx", "Cannot read the model"},
      {"corrupt.onnx", "Cannot load the model"},
      {"not_image.onnx", "does not take images"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    gchar *path = model_path(cases[i].file);
    gchar *properties = g_strdup_printf("model=%s", path);
    expect_open_error(properties, cases[i].message);
    g_free(properties);
    g_free(path);
  }
}
GST_END_TEST;

/* Three streams at full speed through one npuinfer, PLAYING -> NULL or
 * READY 100 times (frames in flight every time); leaks show under valgrind
 * or ASan, hangs as timeouts. */
GST_START_TEST(test_state_cycles_under_load)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      "npuinfer name=infer model=%s batch-size=2 batch-timeout=1000 max-inflight=1 "
      "videotestsrc ! video/x-raw,format=NV12,width=64,height=48 ! infer.sink_0 "
      "infer.src_0 ! fakesink sync=false "
      "videotestsrc ! video/x-raw,format=I420,width=32,height=32 ! infer.sink_1 "
      "infer.src_1 ! fakesink sync=false "
      "videotestsrc ! video/x-raw,format=RGBx,width=16,height=16 ! infer.sink_2 "
      "infer.src_2 ! queue max-size-buffers=2 ! fakesink sync=true", model);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  GstElement *infer = by_name(pipeline, "infer", 0);
  guint64 total = 0;
  for (int i = 0; i < 100; i++) {
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    fail_unless_equals_int(gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND),
                           GST_STATE_CHANGE_SUCCESS);
    g_usleep(5000);
    GstStructure *stats;
    g_object_get(infer, "stats", &stats, NULL);
    guint64 frames;
    fail_unless(gst_structure_get_uint64(stats, "frames-inferred", &frames));
    total += frames;
    gst_structure_free(stats);
    fail_unless_equals_int(gst_element_set_state(pipeline, i % 2 ? GST_STATE_NULL
                                                                 : GST_STATE_READY),
                           GST_STATE_CHANGE_SUCCESS);
  }
  fail_unless(total > 100, "only %" G_GUINT64_FORMAT " frames inferred", total);
  expect_no_error(pipeline);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(infer);
  gst_object_unref(pipeline);
  g_free(description);
  g_free(model);
}
GST_END_TEST;

/* The LATENCY query adds batch-timeout and the measured run time. */
GST_START_TEST(test_latency_query)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      "videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48,framerate=100/1 "
      "! identity name=up ! infer.sink_0 npuinfer name=infer model=%s batch-timeout=20000 "
      "infer.src_0 ! fakesink sync=false", model);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  fail_unless_equals_int(gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND),
                         GST_STATE_CHANGE_SUCCESS);
  g_usleep(100000);
  GstElement *up = by_name(pipeline, "up", 0), *infer = by_name(pipeline, "infer", 0);
  GstPad *up_src = gst_element_get_static_pad(up, "src");
  GstPad *src0 = gst_element_get_static_pad(infer, "src_0");
  GstQuery *query = gst_query_new_latency();
  fail_unless(gst_pad_query(up_src, query));
  gboolean live;
  GstClockTime up_min, min, max;
  gst_query_parse_latency(query, &live, &up_min, &max);
  gst_query_unref(query);
  query = gst_query_new_latency();
  fail_unless(gst_pad_query(src0, query));
  gst_query_parse_latency(query, &live, &min, &max);
  gst_query_unref(query);
  fail_unless(live);
  GstStructure *stats;
  g_object_get(infer, "stats", &stats, NULL);
  double run_us;
  fail_unless(gst_structure_get_double(stats, "mean-run-us", &run_us));
  gst_structure_free(stats);
  fail_unless(run_us > 0);
  /* run time measured again between the two reads: allow it to move */
  fail_unless(min >= up_min + 20 * GST_MSECOND, "min %" GST_TIME_FORMAT, GST_TIME_ARGS(min));
  fail_unless(min <= up_min + 20 * GST_MSECOND + (GstClockTime)(2 * run_us + 1000) * GST_USECOND,
              "min %" GST_TIME_FORMAT " up %" GST_TIME_FORMAT " run %f us",
              GST_TIME_ARGS(min), GST_TIME_ARGS(up_min), run_us);
  gst_object_unref(up_src);
  gst_object_unref(src0);
  gst_object_unref(up);
  gst_object_unref(infer);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  g_free(description);
  g_free(model);
}
GST_END_TEST;

/* ---- roi mode ------------------------------------------------------------------------- */

#define ROI_W 64
#define ROI_H 48

/* Frames of the roi tests: a background with two rectangles (regions 1 and
 * 2) of other colours, distinct per pad and frame. */
static void region_colour(guint p, guint f, guint region, guint8 rgb[3])
{
  static const guint8 base[3][3] = {{20, 30, 40}, {200, 10, 90}, {60, 220, 15}};
  for (guint c = 0; c < 3; c++)
    rgb[c] = (guint8)(base[region][c] + (c == region ? 0 : 1) * (5 * p + 3 * f));
}

static const struct {
  guint x0, y0, x1, y1; /* region 1, region 2 */
} painted[2] = {{4, 4, 28, 24}, {32, 20, 60, 44}};

typedef struct {
  const gchar *label;
  gint id;
  guint x, y, w, h;
  gint region; /* the colour it holds; -1: skipped by the element */
} TestRoi;

/* Inside the regions with a margin of 2 (bilinear samples at a crop's edge
 * may read the pixel next to it), one past the frame's right edge (clamped
 * by the VPP to 8 x 12 of background), one empty
 * and one wholly outside the frame (both skipped). */
static const TestRoi test_rois[] = {
    {"face", 11, 6, 6, 20, 16, 1},      {"car", 12, 34, 22, 24, 20, 2},
    {"car", 13, 56, 2, 100, 12, 0},     {"face", 14, 10, 10, 0, 8, -1},
    {"person", 15, 70, 10, 5, 5, -1},
};
#define N_TEST_ROIS G_N_ELEMENTS(test_rois)

/* Frames f % 3 == 2 have no ROIs. */
static gboolean frame_has_rois(guint f)
{
  return f % 3 != 2;
}

static GstBuffer *roi_frame(guint p, guint f)
{
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, ROI_W * ROI_H * 3, NULL);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  for (guint y = 0; y < ROI_H; y++)
    for (guint x = 0; x < ROI_W; x++) {
      guint region = 0;
      for (guint r = 0; r < 2; r++)
        if (x >= painted[r].x0 && x < painted[r].x1 && y >= painted[r].y0 && y < painted[r].y1)
          region = r + 1;
      region_colour(p, f, region, map.data + 3 * (y * ROI_W + x));
    }
  gst_buffer_unmap(buffer, &map);
  GST_BUFFER_PTS(buffer) = f * GST_SECOND / 30;
  GST_BUFFER_DURATION(buffer) = GST_SECOND / 30;
  for (guint r = 0; r < N_TEST_ROIS && frame_has_rois(f); r++) {
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta(
        buffer, test_rois[r].label, test_rois[r].x, test_rois[r].y, test_rois[r].w,
        test_rois[r].h);
    roi->id = test_rois[r].id;
  }
  return buffer;
}

typedef struct {
  guint pads, frames;
  const gchar *options;
  const gchar *labels; /* the ROIs of test_rois that must get results: "face,car" */
  guint results;       /* tensor metas seen */
  guint max_batch;
  gboolean mixed_frames, mixed_pads; /* an execution held ROIs of several frames / pads */
  GstStructure *stats;
  gboolean upload; /* frames go through npuupload: NPU memory in */
} RoiRun;

static gboolean roi_wanted(const RoiRun *run, guint r)
{
  if (test_rois[r].region < 0)
    return FALSE;
  if (!run->labels || !*run->labels)
    return TRUE;
  gchar **labels = g_strsplit(run->labels, ",", -1);
  gboolean wanted = g_strv_contains((const gchar *const *)labels, test_rois[r].label);
  g_strfreev(labels);
  return wanted;
}

/* Checks frame f of pad p: a tensor meta per wanted ROI, each with its ROI's
 * id and the mean and max of the ROI's colour, and the ROI meta's param.
 * `executions` maps each output buffer (one per execution) to the first
 * frame seen in it (p << 16 | f). */
static void check_roi_frame(RoiRun *run, GstBuffer *buffer, guint p, guint f,
                            GHashTable *executions)
{
  fail_unless_equals_uint64(GST_BUFFER_PTS(buffer), f * GST_SECOND / 30);
  guint want = 0;
  for (guint r = 0; r < N_TEST_ROIS; r++)
    want += frame_has_rois(f) && roi_wanted(run, r);
  gboolean seen[N_TEST_ROIS] = {FALSE};
  guint found = 0;
  gpointer state = NULL;
  GstMeta *m;
  while ((m = gst_buffer_iterate_meta_filtered(buffer, &state, GST_NPU_TENSOR_META_API_TYPE))) {
    const GstNpuTensorMeta *meta = (const GstNpuTensorMeta *)m;
    found++;
    fail_unless_equals_int(meta->pad_index, p);
    fail_unless_equals_int(meta->n_tensors, 2);
    guint r = 0;
    while (r < N_TEST_ROIS && test_rois[r].id != meta->roi_id)
      r++;
    fail_unless(r < N_TEST_ROIS, "pad %u frame %u: roi_id %d is no ROI", p, f, meta->roi_id);
    fail_unless(roi_wanted(run, r), "pad %u frame %u: ROI %d inferred against roi-labels", p,
                f, meta->roi_id);
    fail_unless(!seen[r], "pad %u frame %u: two results for ROI %d", p, f, meta->roi_id);
    seen[r] = TRUE;
    run->max_batch = MAX(run->max_batch, meta->batch_size);
    fail_unless(meta->batch_index < meta->batch_size);
    guint8 rgb[3];
    region_colour(p, f, (guint)test_rois[r].region, rgb);
    const gchar *names[] = {"mean", "max"};
    for (guint t = 0; t < 2; t++) {
      const GstNpuTensor *tensor = gst_npu_tensor_meta_find(meta, names[t]);
      fail_unless(tensor != NULL);
      fail_unless(tensor->rank == 2 && tensor->dims[0] == 1 && tensor->dims[1] == 3);
      GstMapInfo map;
      const float *v = gst_npu_tensor_map(tensor, &map);
      fail_unless(v != NULL);
      for (guint c = 0; c < 3; c++)
        fail_unless(fabsf(v[c] - rgb[c] / 255.0f) < 1e-3f, "pad %u frame %u ROI %d %s[%u]: %f, "
                    "want %f", p, f, meta->roi_id, names[t], c, v[c], rgb[c] / 255.0f);
      gst_npu_tensor_unmap(tensor, &map);
    }
    /* executions: the output buffer is shared by all slots of one run */
    const GstNpuTensor *mean = gst_npu_tensor_meta_find(meta, "mean");
    guint key = p << 16 | f;
    gpointer first = g_hash_table_lookup(executions, mean->data);
    if (!first)
      g_hash_table_insert(executions, mean->data, GUINT_TO_POINTER(key + 1));
    else if (GPOINTER_TO_UINT(first) - 1 != key) {
      run->mixed_frames = TRUE;
      run->mixed_pads |= (GPOINTER_TO_UINT(first) - 1) >> 16 != p;
    }
    /* the ROI meta carries the same tensors as a param */
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_get_video_region_of_interest_meta_id(buffer, meta->roi_id);
    fail_unless(roi != NULL);
    fail_unless_equals_string(g_quark_to_string(roi->roi_type), test_rois[r].label);
    GstStructure *param = gst_video_region_of_interest_meta_get_param(roi, "npu-tensors");
    fail_unless(param != NULL, "ROI %d: no npu-tensors param", meta->roi_id);
    gint id = -2;
    fail_unless(gst_structure_get_int(param, "roi-id", &id));
    fail_unless_equals_int(id, meta->roi_id);
    GstStructure *tensor = NULL;
    fail_unless(gst_structure_get(param, "mean", GST_TYPE_STRUCTURE, &tensor, NULL));
    const GValue *data = gst_structure_get_value(tensor, "data");
    fail_unless(data != NULL && gst_value_get_buffer(data) == mean->data);
    guint64 offset = 0, size = 0;
    fail_unless(gst_structure_get_uint64(tensor, "offset", &offset));
    fail_unless(gst_structure_get_uint64(tensor, "size", &size));
    fail_unless_equals_uint64(offset, mean->offset);
    fail_unless_equals_uint64(size, 3 * sizeof(float));
    fail_unless_equals_int(gst_value_array_get_size(gst_structure_get_value(tensor, "dims")), 2);
    gst_structure_free(tensor);
  }
  fail_unless_equals_int(found, want);
  if (want == 0)
    fail_unless(gst_buffer_get_npu_tensor_meta(buffer) == NULL);
  run->results += found;
}

/* `pads` appsrc -> npuinfer mode=roi -> appsink branches of `frames` frames
 * each, pushed one frame per pad in turn; checks every output frame. */
static void run_roi(RoiRun *run)
{
  gchar *model = model_path("channel_mean.onnx");
  GString *description = g_string_new(NULL);
  g_string_printf(description, "npuinfer name=infer model=%s mode=roi %s ", model,
                  run->options);
  for (guint p = 0; p < run->pads; p++)
    g_string_append_printf(description,
                           "appsrc name=a%u format=time caps=video/x-raw,format=RGB,width=%d,"
                           "height=%d,framerate=30/1 %s ! infer.sink_%u infer.src_%u ! "
                           "appsink name=s%u sync=false wait-on-eos=false ",
                           p, ROI_W, ROI_H, run->upload ? "! npuupload" : "", p, p, p);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description->str, &error);
  fail_unless(pipeline != NULL, "parse failed: %s", error ? error->message : "?");
  g_string_free(description, TRUE);
  g_free(model);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (guint f = 0; f < run->frames; f++)
    for (guint p = 0; p < run->pads; p++) {
      GstElement *src = by_name(pipeline, "a%u", p);
      fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), roi_frame(p, f)),
                             GST_FLOW_OK);
      if (f + 1 == run->frames)
        gst_app_src_end_of_stream(GST_APP_SRC(src));
      gst_object_unref(src);
    }
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg != NULL, "timed out");
  fail_unless(GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS, "error before EOS");
  gst_message_unref(msg);
  gst_object_unref(bus);

  /* samples stay alive to the end: their output buffers identify executions */
  GPtrArray *samples = g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref);
  GHashTable *executions = g_hash_table_new(NULL, NULL);
  for (guint p = 0; p < run->pads; p++) {
    GstElement *sink = by_name(pipeline, "s%u", p);
    for (guint f = 0; f < run->frames; f++) {
      GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), GST_SECOND);
      fail_unless(sample != NULL, "pad %u: frame %u missing", p, f);
      check_roi_frame(run, gst_sample_get_buffer(sample), p, f, executions);
      g_ptr_array_add(samples, sample);
    }
    fail_unless(gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 0) == NULL,
                "pad %u: more frames than pushed", p);
    gst_object_unref(sink);
  }
  g_hash_table_destroy(executions);
  g_ptr_array_unref(samples);
  GstElement *infer = gst_bin_get_by_name(GST_BIN(pipeline), "infer");
  g_object_get(infer, "stats", &run->stats, NULL);
  gst_object_unref(infer);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

/* Three ROIs per frame (two more skipped), every third frame none; batches
 * of four hold ROIs of several frames. */
GST_START_TEST(test_roi_mode)
{
  RoiRun run = {.pads = 2, .frames = 6, .options = "batch-size=4 batch-timeout=200000"};
  run_roi(&run);
  fail_unless_equals_int(run.results, 2 * 4 * 3);
  fail_unless_equals_int(run.max_batch, 4);
  fail_unless(run.mixed_frames, "no execution held ROIs of several frames");
  guint64 inferred = 0, batches = 0;
  fail_unless(gst_structure_get_uint64(run.stats, "frames-inferred", &inferred));
  fail_unless(gst_structure_get_uint64(run.stats, "batches", &batches));
  fail_unless_equals_uint64(inferred, 2 * 4 * 3);
  fail_unless(batches < inferred / 2, "%" G_GUINT64_FORMAT " batches", batches);
  fail_unless_equals_uint64(pad_stat(run.stats, 1, "frames"), 6);
  gst_structure_free(run.stats);
}
GST_END_TEST;

/* Batches of one, ROIs of many pads in one batch, frames in NPU memory. */
GST_START_TEST(test_roi_mode_batches)
{
  RoiRun one = {.pads = 1, .frames = 3, .options = "print-results=true"};
  run_roi(&one);
  fail_unless_equals_int(one.results, 2 * 3);
  fail_unless_equals_int(one.max_batch, 1);
  gst_structure_free(one.stats);
  RoiRun many = {.pads = 4, .frames = 3, .options = "batch-size=16 batch-timeout=500000"};
  run_roi(&many);
  fail_unless_equals_int(many.results, 4 * 2 * 3);
  fail_unless(many.max_batch > 3);
  fail_unless(many.mixed_frames);
  gst_structure_free(many.stats);
  /* frames in NPU memory: the crops read device memory as it is */
  RoiRun npu = {.pads = 2, .frames = 3, .options = "batch-size=4 batch-timeout=100000",
                .upload = TRUE};
  run_roi(&npu);
  fail_unless_equals_int(npu.results, 2 * 2 * 3);
  gst_structure_free(npu.stats);
}
GST_END_TEST;

/* roi-labels keeps only those ROIs; frames whose ROIs all miss get no meta. */
GST_START_TEST(test_roi_labels)
{
  RoiRun cars = {.pads = 1, .frames = 3, .options = "roi-labels=car batch-size=2",
                 .labels = "car"};
  run_roi(&cars);
  fail_unless_equals_int(cars.results, 2 * 2);
  gst_structure_free(cars.stats);
  RoiRun faces = {.pads = 2, .frames = 3,
                  .options = "roi-labels=\"dog, face\" batch-size=2 batch-timeout=100000",
                  .labels = "face"};
  run_roi(&faces);
  fail_unless_equals_int(faces.results, 2 * 2 * 1);
  gst_structure_free(faces.stats);
  RoiRun none = {.pads = 1, .frames = 3, .options = "roi-labels=dog", .labels = "dog"};
  run_roi(&none);
  fail_unless_equals_int(none.results, 0);
  guint64 batches = 1;
  fail_unless(gst_structure_get_uint64(none.stats, "batches", &batches));
  fail_unless_equals_uint64(batches, 0);
  gst_structure_free(none.stats);

  GstElement *infer = gst_element_factory_make("npuinfer", NULL);
  gint mode = -1;
  gchar *labels = NULL;
  g_object_get(infer, "mode", &mode, "roi-labels", &labels, NULL);
  fail_unless_equals_int(mode, 0);
  fail_unless_equals_string(labels, "");
  g_free(labels);
  gst_util_set_object_arg(G_OBJECT(infer), "mode", "roi");
  g_object_get(infer, "mode", &mode, NULL);
  fail_unless_equals_int(mode, 1);
  gst_object_unref(infer);
}
GST_END_TEST;

/* Frame mode ignores ROI metas: whole-frame results, roi_id -1. */
GST_START_TEST(test_frame_mode_ignores_rois)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      "appsrc name=a0 format=time caps=video/x-raw,format=RGB,width=%d,height=%d,"
      "framerate=30/1 ! npuinfer model=%s roi-labels=car ! appsink name=s0 sync=false",
      ROI_W, ROI_H, model);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstElement *src = by_name(pipeline, "a%u", 0), *sink = by_name(pipeline, "s%u", 0);
  for (guint f = 0; f < 3; f++)
    fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), roi_frame(0, f)),
                           GST_FLOW_OK);
  for (guint f = 0; f < 3; f++) {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
    fail_unless(sample != NULL, "frame %u missing", f);
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    guint n = 0, rois = 0;
    gpointer state = NULL;
    GstMeta *m;
    while ((m = gst_buffer_iterate_meta(buffer, &state))) {
      if (m->info->api == GST_NPU_TENSOR_META_API_TYPE) {
        n++;
        fail_unless_equals_int(((GstNpuTensorMeta *)m)->roi_id, -1);
        fail_unless_equals_int(((GstNpuTensorMeta *)m)->n_tensors, 2);
      } else if (m->info->api == GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE) {
        rois++;
        fail_unless(gst_video_region_of_interest_meta_get_param(
                        (GstVideoRegionOfInterestMeta *)m, "npu-tensors") == NULL);
      }
    }
    fail_unless_equals_int(n, 1);
    fail_unless_equals_int(rois, frame_has_rois(f) ? N_TEST_ROIS : 0);
    gst_sample_unref(sample);
  }
  expect_no_error(pipeline);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  g_free(description);
  g_free(model);
}
GST_END_TEST;

/* ---- open input axes ------------------------------------------------------------------ */

#define GREY 200 /* the grey test frames' pixels: GREY / 255 once normalised */

/* One grey width x height RGB frame with the given ROIs (x, y, w, h each)
 * through `npuinfer model=MODEL OPTIONS`; returns it with its results. */
static GstBuffer *infer_grey(const gchar *model, const gchar *options, guint width, guint height,
                             const guint (*rois)[4], guint roi_count)
{
  gchar *path = model_path(model);
  gchar *description = g_strdup_printf(
      "appsrc name=src format=time caps=video/x-raw,format=RGB,width=%u,height=%u,"
      "framerate=30/1 ! npuinfer model=%s %s ! appsink name=sink sync=false wait-on-eos=false",
      width, height, path, options);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  g_free(description);
  g_free(path);
  GstBuffer *frame = gst_buffer_new_allocate(NULL, (gsize)width * height * 3, NULL);
  gst_buffer_memset(frame, 0, GREY, (gsize)width * height * 3);
  GST_BUFFER_PTS(frame) = 0;
  for (guint r = 0; r < roi_count; r++)
    gst_buffer_add_video_region_of_interest_meta(frame, "text", rois[r][0], rois[r][1],
                                                 rois[r][2], rois[r][3])->id = (gint)r;
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstElement *src = by_name(pipeline, "src", 0), *sink = by_name(pipeline, "sink", 0);
  fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), frame), GST_FLOW_OK);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
  fail_unless(sample != NULL, "no frame came out");
  expect_no_error(pipeline);
  GstBuffer *out = gst_buffer_ref(gst_sample_get_buffer(sample));
  gst_sample_unref(sample);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  return out;
}

/* The grey map (1 x 1 x H x W) of the inference on `roi_id` is want_height x
 * want_width, GREY / 255 over content_width x content_height at its top
 * left, 0 (the mean: nothing) elsewhere. */
static void check_grey_map(GstBuffer *buffer, gint roi_id, guint want_width, guint want_height,
                           guint content_width, guint content_height)
{
  const GstNpuTensorMeta *meta = NULL;
  gpointer state = NULL;
  GstMeta *m;
  while ((m = gst_buffer_iterate_meta_filtered(buffer, &state, GST_NPU_TENSOR_META_API_TYPE)))
    if (((GstNpuTensorMeta *)m)->roi_id == roi_id)
      meta = (const GstNpuTensorMeta *)m;
  fail_unless(meta != NULL, "no tensors for ROI %d", roi_id);
  const GstNpuTensor *t = &meta->tensors[0];
  fail_unless(t->rank == 4 && t->dims[2] == want_height && t->dims[3] == want_width,
              "ROI %d: %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ", want %ux%u", roi_id,
              t->dims[2], t->dims[3], want_height, want_width);
  GstMapInfo map;
  const float *v = gst_npu_tensor_map(t, &map);
  fail_unless(v != NULL);
  for (guint y = 0; y < want_height; y++)
    for (guint x = 0; x < want_width; x++) {
      float want = x < content_width && y < content_height ? GREY / 255.0f : 0.0f;
      fail_unless(fabsf(v[y * want_width + x] - want) < 1e-3f, "ROI %d (%u,%u): %f, want %f",
                  roi_id, x, y, v[y * want_width + x], want);
    }
  gst_npu_tensor_unmap(t, &map);
}

/* A model with open H and W runs at the frame's own size rounded up to
 * size-multiple, the frame in the top-left corner; input-width/height are
 * rounded up too (a detector's strides must divide its input). */
GST_START_TEST(test_open_axes_follow_the_frame)
{
  GstBuffer *out = infer_grey("grey_map.onnx", "", 100, 60, NULL, 0);
  check_grey_map(out, -1, 128, 64, 100, 60);
  gst_buffer_unref(out);
  out = infer_grey("grey_map.onnx", "size-multiple=8", 100, 60, NULL, 0);
  check_grey_map(out, -1, 104, 64, 100, 60);
  gst_buffer_unref(out);
  /* larger than max-input-size: scaled down, the aspect ratio kept */
  out = infer_grey("grey_map.onnx", "max-input-size=64 size-multiple=16", 100, 60, NULL, 0);
  check_grey_map(out, -1, 64, 48, 64, 38);
  gst_buffer_unref(out);
  /* given sizes: the frame stretched over them */
  out = infer_grey("grey_map.onnx", "input-width=100 input-height=60", 100, 60, NULL, 0);
  check_grey_map(out, -1, 128, 64, 128, 64);
  gst_buffer_unref(out);
}
GST_END_TEST;

/* Roi mode, the model's height fixed (16) and its width open: each crop at
 * height 16 with its aspect ratio kept; crops of similar widths share a
 * batch as wide as the widest, a crop three times as wide runs apart. */
GST_START_TEST(test_roi_widths_follow_the_crops)
{
  static const guint rois[3][4] = {{0, 0, 30, 10}, {10, 20, 120, 10}, {100, 5, 40, 10}};
  GstBuffer *out = infer_grey("grey_rows.onnx", "mode=roi batch-size=4 batch-timeout=500000",
                              200, 40, rois, 3);
  check_grey_map(out, 0, 64, 16, 48, 16);  /* 30 x 10 at height 16: 48 wide */
  check_grey_map(out, 2, 64, 16, 64, 16);  /* 40 x 10: 64 */
  check_grey_map(out, 1, 192, 16, 192, 16); /* 120 x 10: 192, alone */
  gpointer state = NULL;
  GstMeta *m;
  while ((m = gst_buffer_iterate_meta_filtered(out, &state, GST_NPU_TENSOR_META_API_TYPE))) {
    const GstNpuTensorMeta *meta = (const GstNpuTensorMeta *)m;
    fail_unless_equals_int(meta->batch_size, meta->roi_id == 1 ? 1 : 2);
  }
  gst_buffer_unref(out);
}
GST_END_TEST;

/* rotate-tall: a region 1.5 times as tall as wide is read turned into a
 * line (40 x 10 at height 16: 64 wide), a squarer one as it is. */
GST_START_TEST(test_roi_rotate_tall)
{
  static const guint rois[2][4] = {{0, 0, 10, 40}, {20, 0, 12, 16}};
  GstBuffer *out = infer_grey("grey_rows.onnx", "mode=roi rotate-tall=true", 60, 40, rois, 2);
  check_grey_map(out, 0, 64, 16, 64, 16);
  check_grey_map(out, 1, 32, 16, 12, 16);
  gst_buffer_unref(out);
  out = infer_grey("grey_rows.onnx", "mode=roi", 60, 40, rois, 2);
  check_grey_map(out, 0, 32, 16, 4, 16); /* not turned: 4 wide */
  gst_buffer_unref(out);
}
GST_END_TEST;

static Suite *infer_suite(void)
{
  Suite *s = suite_create("npuinfer");
  TCase *tc = tcase_create("general");
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_one_pad);
  tcase_add_test(tc, test_four_pads_batched);
  tcase_add_test(tc, test_sixteen_pads);
  tcase_add_test(tc, test_fixed_batch_model);
  tcase_add_test(tc, test_interval_and_channel_order);
  tcase_add_test(tc, test_one_pad_fills_batches);
  tcase_add_test(tc, test_eos_one_pad);
  tcase_add_test(tc, test_pads_added_and_released_while_playing);
  tcase_add_test(tc, test_interval_change_while_playing);
  tcase_add_test(tc, test_back_pressure);
  tcase_add_test(tc, test_stats_messages);
  tcase_add_test(tc, test_normalisation);
  tcase_add_test(tc, test_precision_property);
  tcase_add_test(tc, test_npu_memory_input);
  tcase_add_test(tc, test_flush_one_pad);
  tcase_add_test(tc, test_qos_skips_inference);
  tcase_add_test(tc, test_bad_models);
  tcase_add_test(tc, test_config_file);
  tcase_add_test(tc, test_bad_config);
  tcase_add_test(tc, test_bad_channel_values);
  tcase_add_test(tc, test_model_after_config);
  tcase_add_test(tc, test_bytes_segment);
  tcase_add_test(tc, test_planar_444_and_422_input);
  tcase_add_test(tc, test_device_out_of_memory);
  tcase_add_test(tc, test_state_cycles_under_load);
  tcase_add_test(tc, test_latency_query);
  tcase_add_test(tc, test_roi_mode);
  tcase_add_test(tc, test_roi_mode_batches);
  tcase_add_test(tc, test_roi_labels);
  tcase_add_test(tc, test_frame_mode_ignores_rois);
  tcase_add_test(tc, test_open_axes_follow_the_frame);
  tcase_add_test(tc, test_roi_widths_follow_the_crops);
  tcase_add_test(tc, test_roi_rotate_tall);
  return s;
}

GST_CHECK_MAIN(infer)
