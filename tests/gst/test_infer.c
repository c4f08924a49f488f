/* gst-check tests of npuinfer: every output frame carries the tensors of its
 * own input, in order, on 1, 4 and 16 pads at once; batches really mix
 * pads; interval, channel order, fixed-batch models; bad models give element
 * errors; state cycles. The test model outputs each channel's mean and max,
 * so solid-colour frames have exactly known results. */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/npu/npu-tensor-meta.h>

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

typedef struct {
  guint pads, frames;
  const gchar *options; /* npuinfer properties */
  const gchar *model;
  guint max_batch_seen;
  GstStructure *stats;
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
                           "height=%d,framerate=30/1 ! infer.sink_%u infer.src_%u ! "
                           "appsink name=s%u sync=false wait-on-eos=false ",
                           p, SIZE, SIZE, p, p, p);
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
      fail_unless_equals_uint64(GST_BUFFER_PTS(buffer), f * GST_SECOND / 30);
      GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(buffer);
      if (f % interval != 0) {
        fail_unless(meta == NULL, "pad %u frame %u: inferred against the interval", p, f);
        gst_sample_unref(sample);
        continue;
      }
      fail_unless(meta != NULL, "pad %u frame %u: no tensor meta", p, f);
      fail_unless_equals_int(meta->n_tensors, 2);
      fail_unless_equals_int(meta->pad_index, p);
      run->max_batch_seen = MAX(run->max_batch_seen, meta->batch_size);
      guint8 rgb[3];
      colour_of(p, f, rgb);
      const gchar *names[] = {"mean", "max"};
      for (guint t = 0; t < 2; t++) {
        const GstNpuTensor *tensor = gst_npu_tensor_meta_find(meta, names[t]);
        fail_unless(tensor != NULL);
        fail_unless_equals_int(tensor->rank, 2);
        fail_unless(tensor->dims[0] == 1 && tensor->dims[1] == 3);
        gsize size;
        const float *v = g_bytes_get_data(tensor->data, &size);
        fail_unless_equals_int(size, 3 * sizeof(float));
        for (guint c = 0; c < 3; c++) {
          float want = rgb[order_bgr ? 2 - c : c] / 255.0f;
          fail_unless(fabsf(v[c] - want) < 1e-4f, "pad %u frame %u %s[%u]: %f, want %f", p, f,
                      names[t], c, v[c], want);
        }
      }
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
  InferRun run = {1, 5, "", "channel_mean.onnx", 0, NULL};
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
  guint64 inferences;
  fail_unless(gst_structure_get_uint64(run.stats, "sink-0-inferences", &inferences));
  fail_unless_equals_uint64(inferences, 3);
  gst_structure_free(run.stats);
}
GST_END_TEST;

/* Each bad model is an element error naming the problem; nothing crashes. */
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
    gchar *description = g_strdup_printf(
        "videotestsrc num-buffers=2 ! video/x-raw,width=32,height=32 ! npuinfer model=%s ! "
        "fakesink", path);
    GstElement *pipeline = gst_parse_launch(description, NULL);
    fail_unless(pipeline != NULL);
    fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_PLAYING),
                           GST_STATE_CHANGE_FAILURE);
    GstBus *bus = gst_element_get_bus(pipeline);
    GstMessage *msg = gst_bus_timed_pop_filtered(bus, 5 * GST_SECOND, GST_MESSAGE_ERROR);
    fail_unless(msg != NULL, "%s: no error message", cases[i].file);
    GError *err;
    gst_message_parse_error(msg, &err, NULL);
    fail_unless(strstr(err->message, cases[i].message) != NULL, "%s: '%s'", cases[i].file,
                err->message);
    g_error_free(err);
    gst_message_unref(msg);
    gst_object_unref(bus);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
    g_free(description);
    g_free(path);
  }
}
GST_END_TEST;

/* Two live streams through one npuinfer, NULL -> PLAYING -> NULL 20 times. */
GST_START_TEST(test_state_cycles)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      "npuinfer name=infer model=%s batch-size=2 batch-timeout=10000 "
      "videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48 ! infer.sink_0 "
      "infer.src_0 ! fakesink sync=false "
      "videotestsrc is-live=true ! video/x-raw,format=I420,width=32,height=32 ! infer.sink_1 "
      "infer.src_1 ! fakesink sync=false", model);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  for (int i = 0; i < 20; i++) {
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    fail_unless_equals_int(gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND),
                           GST_STATE_CHANGE_SUCCESS);
    g_usleep(10000);
    fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_NULL),
                           GST_STATE_CHANGE_SUCCESS);
  }
  gst_object_unref(pipeline);
  g_free(description);
  g_free(model);
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
  tcase_add_test(tc, test_bad_models);
  tcase_add_test(tc, test_state_cycles);
  return s;
}

GST_CHECK_MAIN(infer)
