/* gst-check tests of npuupload, npudownload and npuvpp: documentation,
 * negotiation, pixels against videoconvertscale, zero copy proven from the
 * elements' stats, the copy and staging paths, bad input, state changes. */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#include <npu/npu.h>
#include <stdlib.h>

/* Runs a pipeline to EOS or error; returns "message | debug" (or NULL) and
 * leaves the pipeline in *out (NULL state) when asked. */
static gchar *run_pipeline(const gchar *description, GstElement **out)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  fail_unless(pipeline != NULL, "parse failed: %s", error ? error->message : "?");
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 20 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg != NULL, "pipeline timed out: %s", description);
  gchar *message = NULL;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError *err;
    gchar *debug = NULL;
    gst_message_parse_error(msg, &err, &debug);
    message = g_strdup_printf("%s | %s", err->message, debug ? debug : "");
    g_error_free(err);
    g_free(debug);
  }
  gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  if (out)
    *out = pipeline;
  else
    gst_object_unref(pipeline);
  return message;
}

static guint64 stat_of(GstElement *pipeline, const gchar *element, const gchar *field)
{
  GstElement *e = gst_bin_get_by_name(GST_BIN(pipeline), element);
  fail_unless(e != NULL);
  GstStructure *stats = NULL;
  g_object_get(e, "stats", &stats, NULL);
  guint64 value = G_MAXUINT64;
  fail_unless(gst_structure_get_uint64(stats, field, &value), "no %s in %" GST_PTR_FORMAT,
              field, stats);
  gst_structure_free(stats);
  gst_object_unref(e);
  return value;
}

GST_START_TEST(test_elements_documented)
{
  const gchar *names[] = {"npuupload", "npudownload", "npuvpp"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    GstElementFactory *factory = gst_element_factory_find(names[i]);
    fail_unless(factory != NULL, "%s not registered", names[i]);
    fail_unless(strlen(gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_DESCRIPTION)) > 40);
    fail_unless(gst_element_factory_get_num_pad_templates(factory) == 2);
    GstElement *e = gst_element_factory_create(factory, NULL);
    GParamSpec *device_id = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "device-id");
    GParamSpec *stats = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "stats");
    fail_unless(device_id && stats);
    fail_unless(strlen(g_param_spec_get_blurb(device_id)) > 20);
    fail_unless(G_PARAM_SPEC_INT(device_id)->minimum == -1);
    gst_object_unref(e);
    gst_object_unref(factory);
  }
}
GST_END_TEST;

/* Every element of the plugin: a description, two pad templates, and a
 * blurb on each property of its own (what gst-inspect-1.0 shows). */
GST_START_TEST(test_every_property_documented)
{
  const gchar *names[] = {"npuupload", "npudownload", "npuvpp", "npuinfer",
                          "npudecode", "npuoverlay", "npumetaconvert"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    GstElementFactory *factory = gst_element_factory_find(names[i]);
    fail_unless(factory != NULL, "%s not registered", names[i]);
    fail_unless(strlen(gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_DESCRIPTION)) > 40);
    fail_unless(strlen(gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS)) > 5);
    fail_unless_equals_int(gst_element_factory_get_num_pad_templates(factory), 2);
    GstElement *e = gst_element_factory_create(factory, NULL);
    guint count;
    GParamSpec **specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(e), &count);
    for (guint k = 0; k < count; k++) {
      if (specs[k]->owner_type == GST_TYPE_ELEMENT || specs[k]->owner_type == GST_TYPE_OBJECT ||
          g_type_is_a(GST_TYPE_BASE_TRANSFORM, specs[k]->owner_type))
        continue; /* GStreamer's own */
      const gchar *blurb = g_param_spec_get_blurb(specs[k]);
      fail_unless(blurb && strlen(blurb) > 15, "%s.%s: blurb '%s'", names[i],
                  g_param_spec_get_name(specs[k]), blurb ? blurb : "");
    }
    g_free(specs);
    gst_object_unref(e);
    gst_object_unref(factory);
  }
}
GST_END_TEST;

GST_START_TEST(test_negotiation)
{
  GstElement *pipeline;
  gchar *error = run_pipeline("videotestsrc num-buffers=3 ! video/x-raw,format=I420,width=64,height=48 ! "
                              "npuupload name=up ! npudownload name=down ! "
                              "video/x-raw,format=I420 ! fakesink", &pipeline);
  fail_unless(error == NULL, "%s", error);
  gst_object_unref(pipeline);
  /* Caps with the feature are produced by npuupload and taken by npuvpp. */
  GstElement *up = gst_element_factory_make("npuupload", NULL);
  GstPad *src = gst_element_get_static_pad(up, "src");
  GstCaps *caps = gst_pad_query_caps(src, NULL);
  fail_unless(gst_caps_features_contains(gst_caps_get_features(caps, 0), "memory:NPUMemory"));
  gst_caps_unref(caps);
  gst_object_unref(src);
  gst_object_unref(up);
}
GST_END_TEST;

/* First frame of a pipeline ending in appsink name=sink. */
static GstSample *first_sample(const gchar *description)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  fail_unless(pipeline != NULL, "%s", error ? error->message : "?");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
  fail_unless(sample != NULL, "no frame from %s", description);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return sample;
}

/* Largest and mean byte difference of two RGB frames of the same caps. */
static void compare_rgb(GstSample *a, GstSample *b, int *worst, double *mean)
{
  GstVideoInfo info;
  fail_unless(gst_video_info_from_caps(&info, gst_sample_get_caps(a)));
  GstVideoFrame fa, fb;
  fail_unless(gst_video_frame_map(&fa, &info, gst_sample_get_buffer(a), GST_MAP_READ));
  fail_unless(gst_video_frame_map(&fb, &info, gst_sample_get_buffer(b), GST_MAP_READ));
  double total = 0;
  *worst = 0;
  for (int y = 0; y < GST_VIDEO_INFO_HEIGHT(&info); y++) {
    const guint8 *ra = (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fa, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&fa, 0);
    const guint8 *rb = (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fb, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&fb, 0);
    for (int x = 0; x < GST_VIDEO_INFO_WIDTH(&info) * 3; x++) {
      int d = abs(ra[x] - rb[x]);
      *worst = MAX(*worst, d);
      total += d;
    }
  }
  *mean = total / (GST_VIDEO_INFO_WIDTH(&info) * 3.0 * GST_VIDEO_INFO_HEIGHT(&info));
  gst_video_frame_unmap(&fa);
  gst_video_frame_unmap(&fb);
}

static void check_pixels_against_videoconvertscale(const gchar *in_format, int out_w, int out_h,
                                                   int max_worst, double max_mean)
{
  gchar *source = g_strdup_printf("videotestsrc num-buffers=1 pattern=gradient ! "
                                  "video/x-raw,format=%s,width=64,height=48,colorimetry=bt709 ! ",
                                  in_format);
  gchar *ours = g_strdup_printf("%s npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),format=RGB,"
                                "width=%d,height=%d ! npudownload ! appsink name=sink",
                                source, out_w, out_h);
  gchar *theirs = g_strdup_printf("%s videoconvertscale ! video/x-raw,format=RGB,width=%d,height=%d ! "
                                  "appsink name=sink", source, out_w, out_h);
  GstSample *a = first_sample(ours), *b = first_sample(theirs);
  int worst;
  double mean;
  compare_rgb(a, b, &worst, &mean);
  GST_INFO("%s -> RGB %dx%d: max difference %d, mean %.3f", in_format, out_w, out_h, worst, mean);
  fail_unless(worst <= max_worst && mean <= max_mean,
              "%s -> RGB %dx%d differs from videoconvertscale: max %d, mean %.3f", in_format,
              out_w, out_h, worst, mean);
  gst_sample_unref(a);
  gst_sample_unref(b);
  g_free(source);
  g_free(ours);
  g_free(theirs);
}

GST_START_TEST(test_pixels_match_videoconvertscale)
{
  /* Same size: only videoconvert's coarse 8-bit matrix differs (see the VPP tests). */
  check_pixels_against_videoconvertscale("NV12", 64, 48, 8, 3.0);
  check_pixels_against_videoconvertscale("I420", 64, 48, 8, 3.0);
  check_pixels_against_videoconvertscale("BGRx", 64, 48, 1, 0.1);
  /* Scaled: the two bilinear filters place samples alike on a gradient. */
  check_pixels_against_videoconvertscale("NV12", 32, 24, 12, 3.0);
  check_pixels_against_videoconvertscale("RGB", 128, 96, 12, 2.0);
}
GST_END_TEST;

GST_START_TEST(test_pixels_on_a_device_without_host_visible_memory)
{
  g_setenv("NPU_CPU_DEVICE_MEMORY", "opaque", TRUE); /* this forked test only */
  check_pixels_against_videoconvertscale("NV12", 64, 48, 8, 3.0);
  check_pixels_against_videoconvertscale("RGB", 32, 24, 12, 3.0);
  GstElement *pipeline;
  gchar *error = run_pipeline("videotestsrc num-buffers=20 ! video/x-raw,format=NV12,width=64,height=48 ! "
                              "npuupload name=up ! npudownload name=down ! fakesink", &pipeline);
  fail_unless(error == NULL, "%s", error);
  /* Upstream wrote into the NPU pool through staging maps; download copied once per frame. */
  fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-zero-copy"), 20);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "frames-copied"), 20);
  /* One copy per frame, plus one staging fill per pool buffer at warm-up. */
  guint64 d2h = stat_of(pipeline, "down", "device-bytes-d2h"), frame = 64 * 48 * 3 / 2;
  fail_unless(d2h >= 20 * frame && d2h <= 24 * frame, "%" G_GUINT64_FORMAT " bytes", d2h);
  gst_object_unref(pipeline);
}
GST_END_TEST;

GST_START_TEST(test_zero_copy_proven_by_stats)
{
  GstElement *pipeline;
  gchar *error = run_pipeline(
      "videotestsrc num-buffers=1000 ! video/x-raw,format=NV12,width=160,height=120 ! "
      "npuupload name=up ! npuvpp name=vpp ! video/x-raw(memory:NPUMemory),format=RGB,width=80,height=60 ! "
      "npudownload name=down ! fakesink", &pipeline);
  fail_unless(error == NULL, "%s", error);
  /* videotestsrc drew into our pool: nothing was copied anywhere. */
  fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-zero-copy"), 1000);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-copied"), 0);
  fail_unless_equals_uint64(stat_of(pipeline, "vpp", "frames-processed"), 1000);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "frames-zero-copy"), 1000);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "device-bytes-h2d"), 0);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "device-bytes-d2h"), 0);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "device-bytes-d2d"), 0);
  /* The pools served 1000 frames from a handful of allocations. */
  fail_unless_equals_uint64(stat_of(pipeline, "up", "pool-requests"),
                            stat_of(pipeline, "up", "pool-allocations") +
                                stat_of(pipeline, "up", "pool-hits"));
  guint64 up_allocations = stat_of(pipeline, "up", "pool-allocations");
  guint64 vpp_allocations = stat_of(pipeline, "vpp", "pool-allocations");
  fail_unless(up_allocations <= 8 && vpp_allocations <= 8,
              "pools allocated %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT " buffers for 1000 frames",
              up_allocations, vpp_allocations);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* A producer that ignores the proposed pool: system memory is imported. */
GST_START_TEST(test_system_memory_is_imported)
{
  GstElement *pipeline;
  gchar *error = run_pipeline(
      "videotestsrc num-buffers=10 ! video/x-raw,format=RGB,width=64,height=48 ! "
      "queue ! identity drop-allocation=true ! npuupload name=up ! npudownload ! fakesink", &pipeline);
  fail_unless(error == NULL, "%s", error);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-zero-copy"), 10);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "device-imports"), 10);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "device-bytes-h2d"), 0);
  gst_object_unref(pipeline);
}
GST_END_TEST;

GST_START_TEST(test_copy_when_nothing_else_works)
{
  g_setenv("NPU_CPU_DEVICE_MEMORY", "opaque", TRUE); /* no import on this device */
  GstElement *pipeline;
  gchar *error = run_pipeline(
      "videotestsrc num-buffers=10 ! video/x-raw,format=RGB,width=64,height=48 ! "
      "identity drop-allocation=true ! npuupload name=up ! npudownload ! fakesink", &pipeline);
  fail_unless(error == NULL, "%s", error);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-copied"), 10);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "device-bytes-h2d"), 10 * 64 * 48 * 3);
  gst_object_unref(pipeline);
}
GST_END_TEST;

GST_START_TEST(test_unsupported_caps_are_not_negotiated)
{
  /* A format the VPP cannot write: refused when linking. */
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(
      "videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=64,height=48 ! npuupload ! "
      "npuvpp ! video/x-raw(memory:NPUMemory),format=P010_10LE ! fakesink", &error);
  fail_unless(error != NULL && strstr(error->message, "can't handle caps") != NULL);
  g_clear_error(&error);
  gst_clear_object(&pipeline);
  /* npuvpp takes only NPU memory. */
  pipeline = gst_parse_launch("videotestsrc ! video/x-raw,format=NV12 ! npuvpp ! fakesink", &error);
  fail_unless(error != NULL, "npuvpp linked to system memory");
  g_clear_error(&error);
  gst_clear_object(&pipeline);
}
GST_END_TEST;

GST_START_TEST(test_truncated_buffer_is_an_error)
{
  GstElement *pipeline = gst_parse_launch(
      "appsrc name=src caps=video/x-raw,format=NV12,width=64,height=48,framerate=30/1 ! "
      "npuupload ! npudownload ! fakesink", NULL);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  gst_app_src_push_buffer(GST_APP_SRC(src), gst_buffer_new_allocate(NULL, 100, NULL));
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR);
  GError *err;
  gst_message_parse_error(msg, &err, NULL);
  fail_unless(strstr(err->message, "smaller than its caps") != NULL, "%s", err->message);
  g_error_free(err);
  gst_message_unref(msg);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(pipeline);
}
GST_END_TEST;

GST_START_TEST(test_repeated_state_changes)
{
  /* Holding the device keeps its counters across the pipeline's life. */
  npu_device *device;
  fail_unless(npu_device_open_default(&device) == NPU_OK);
  GstElement *pipeline = gst_parse_launch(
      "videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48 ! npuupload ! "
      "npuvpp ! video/x-raw(memory:NPUMemory),format=RGB,width=32,height=32 ! npudownload ! "
      "fakesink sync=false", NULL);
  for (int i = 0; i < 30; i++) {
    fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    fail_unless(gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND) == GST_STATE_CHANGE_SUCCESS);
    fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  }
  gst_object_unref(pipeline);
  /* Every device buffer made for the 30 runs was given back. */
  npu_device_stats stats;
  fail_unless(npu_device_get_stats(device, &stats) == NPU_OK);
  fail_unless(stats.allocations > 0);
  fail_unless_equals_uint64(stats.allocations, stats.frees);
  fail_unless_equals_uint64(stats.bytes_allocated, 0);
  npu_device_release(device);
}
GST_END_TEST;

static GstPadProbeReturn add_crop_meta(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)data;
  GstBuffer *buffer = gst_buffer_make_writable(GST_PAD_PROBE_INFO_BUFFER(info));
  GstVideoCropMeta *crop = gst_buffer_add_video_crop_meta(buffer);
  crop->x = 16;
  crop->y = 8;
  crop->width = 32;
  crop->height = 24;
  GST_PAD_PROBE_INFO_DATA(info) = buffer;
  return GST_PAD_PROBE_OK;
}

/* A crop meta on npuvpp's input crops: the same as cropping with videocrop. */
GST_START_TEST(test_crop_meta_is_honoured)
{
  const gchar *ours_desc =
      "videotestsrc num-buffers=1 pattern=gradient ! video/x-raw,format=RGB,width=64,height=48 ! "
      "npuupload ! npuvpp name=vpp ! video/x-raw(memory:NPUMemory),format=RGB,width=32,height=24 ! "
      "npudownload ! appsink name=sink";
  GstElement *pipeline = gst_parse_launch(ours_desc, NULL);
  GstElement *vpp = gst_bin_get_by_name(GST_BIN(pipeline), "vpp");
  GstPad *sink_pad = gst_element_get_static_pad(vpp, "sink");
  gst_pad_add_probe(sink_pad, GST_PAD_PROBE_TYPE_BUFFER, add_crop_meta, NULL, NULL);
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstSample *ours = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
  fail_unless(ours != NULL);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  GstSample *theirs = first_sample(
      "videotestsrc num-buffers=1 pattern=gradient ! video/x-raw,format=RGB,width=64,height=48 ! "
      "videocrop left=16 top=8 right=16 bottom=16 ! appsink name=sink");
  int worst;
  double mean;
  compare_rgb(ours, theirs, &worst, &mean);
  fail_unless(worst <= 1, "crop differs by up to %d", worst);
  gst_sample_unref(ours);
  gst_sample_unref(theirs);
  gst_object_unref(sink);
  gst_object_unref(sink_pad);
  gst_object_unref(vpp);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* The input size changes mid-stream: pools are remade, frames keep flowing. */
GST_START_TEST(test_caps_change_mid_stream)
{
  GstElement *pipeline = gst_parse_launch(
      "appsrc name=src format=time ! npuupload ! npuvpp ! "
      "video/x-raw(memory:NPUMemory),format=RGB,width=16,height=16 ! npudownload ! "
      "appsink name=sink sync=false", NULL);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  const int sizes[2][2] = {{64, 48}, {32, 24}};
  for (int round = 0; round < 2; round++) {
    GstVideoInfo info;
    gst_video_info_set_format(&info, GST_VIDEO_FORMAT_I420, sizes[round][0], sizes[round][1]);
    GstCaps *caps = gst_video_info_to_caps(&info);
    gst_app_src_set_caps(GST_APP_SRC(src), caps);
    gst_caps_unref(caps);
    for (int i = 0; i < 3; i++) {
      GstBuffer *buffer = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&info), NULL);
      gst_buffer_memset(buffer, 0, 128, GST_VIDEO_INFO_SIZE(&info));
      GST_BUFFER_PTS(buffer) = (round * 3 + i) * GST_MSECOND;
      fail_unless(gst_app_src_push_buffer(GST_APP_SRC(src), buffer) == GST_FLOW_OK);
    }
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  for (int i = 0; i < 6; i++) {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
    fail_unless(sample != NULL, "frame %d missing", i);
    GstMapInfo map;
    gst_buffer_map(gst_sample_get_buffer(sample), &map, GST_MAP_READ);
    fail_unless(map.data[0] == 130 && map.data[1] == 130 && map.data[2] == 130,
                "limited-range Y 128 is RGB 130, got %u", map.data[0]);
    gst_buffer_unmap(gst_sample_get_buffer(sample), &map);
    gst_sample_unref(sample);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
}
GST_END_TEST;

static Suite *npu_elements_suite(void)
{
  Suite *s = suite_create("npu-elements");
  TCase *tc = tcase_create("general");
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_elements_documented);
  tcase_add_test(tc, test_every_property_documented);
  tcase_add_test(tc, test_negotiation);
  tcase_add_test(tc, test_pixels_match_videoconvertscale);
  tcase_add_test(tc, test_pixels_on_a_device_without_host_visible_memory);
  tcase_add_test(tc, test_zero_copy_proven_by_stats);
  tcase_add_test(tc, test_system_memory_is_imported);
  tcase_add_test(tc, test_copy_when_nothing_else_works);
  tcase_add_test(tc, test_unsupported_caps_are_not_negotiated);
  tcase_add_test(tc, test_truncated_buffer_is_an_error);
  tcase_add_test(tc, test_repeated_state_changes);
  tcase_add_test(tc, test_crop_meta_is_honoured);
  tcase_add_test(tc, test_caps_change_mid_stream);
  return s;
}

GST_CHECK_MAIN(npu_elements);
