/* gst-check tests of npuupload, npudownload and npuvpp: documentation,
 * negotiation, pixels against videoconvertscale, zero copy proven from the
 * elements' stats, the copy and staging paths, frames exported and imported
 * as dma-buf/fd memory, bad input, state changes. */
#include <fcntl.h>
#include <gst/allocators/allocators.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#include <npu/npu.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "element_stats.h"

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
  /* dma-buf frames go into npuupload and out of npudownload (gst-inspect shows it). */
  const gchar *ends[][2] = {{"npuupload", "sink"}, {"npudownload", "src"}};
  for (guint i = 0; i < G_N_ELEMENTS(ends); i++) {
    GstElementFactory *factory = gst_element_factory_find(ends[i][0]);
    GstCaps *templ = NULL;
    for (const GList *t = gst_element_factory_get_static_pad_templates(factory); t; t = t->next)
      if (g_str_equal(((GstStaticPadTemplate *)t->data)->name_template, ends[i][1]))
        templ = gst_static_pad_template_get_caps(t->data);
    GstCaps *dmabuf = gst_caps_from_string("video/x-raw(memory:DMABuf),format=NV12,width=64,height=48");
    fail_unless(templ && gst_caps_can_intersect(templ, dmabuf), "%s %s", ends[i][0], ends[i][1]);
    gst_caps_unref(dmabuf);
    gst_caps_unref(templ);
    gst_object_unref(factory);
  }
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
  /* 4:4:4 and 4:2:2 (a decoder's H.264 High 4:4:4 / 4:2:2 output) */
  check_pixels_against_videoconvertscale("Y444", 64, 48, 8, 3.0);
  check_pixels_against_videoconvertscale("Y42B", 64, 48, 8, 3.0);
  check_pixels_against_videoconvertscale("NV16", 64, 48, 8, 3.0);
  check_pixels_against_videoconvertscale("NV24", 32, 24, 12, 3.0);
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

/* The device the elements open by default (a reference: its counters last). */
static npu_device *default_device(npu_device_properties *props)
{
  npu_device *device;
  fail_unless(npu_device_open_default(&device) == NPU_OK);
  fail_unless(npu_device_properties_of(device, props) == NPU_OK);
  return device;
}

/* Frames leave npudownload as fd memories on the device memory itself. */
GST_START_TEST(test_download_as_dmabuf)
{
  npu_device_properties props;
  npu_device *device = default_device(&props);
  GstElement *pipeline = gst_parse_launch(
      "videotestsrc num-buffers=5 ! video/x-raw,format=RGB,width=64,height=48 ! "
      "npuupload name=up ! npudownload name=down ! video/x-raw(memory:DMABuf) ! "
      "appsink name=sink", NULL);
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstSample *samples[5];
  for (int i = 0; i < 5; i++) {
    samples[i] = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
    fail_unless(samples[i] != NULL, "frame %d missing", i);
  }
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS);
  gst_message_unref(msg);
  gst_object_unref(bus);
  /* Nothing was copied on the way. */
  fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-zero-copy"), 5);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "frames-zero-copy"), 5);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "frames-copied"), 0);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "device-bytes-h2d"), 0);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "device-bytes-d2h"), 0);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "device-bytes-d2d"), 0);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);

  /* The pipeline is gone; the frame's fd still holds its pixels. */
  GstSample *reference = first_sample(
      "videotestsrc num-buffers=1 ! video/x-raw,format=RGB,width=64,height=48 ! appsink name=sink");
  GstBuffer *buffer = gst_sample_get_buffer(samples[0]);
  GstCapsFeatures *features = gst_caps_get_features(gst_sample_get_caps(samples[0]), 0);
  fail_unless(gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_DMABUF));
  fail_unless_equals_int(gst_buffer_n_memory(buffer), 1);
  GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
  fail_unless(gst_is_fd_memory(mem));
  /* GstDmaBufMemory where the fd is a real dma-buf; the CPU backend's memfds are GstFdMemory. */
  fail_unless_equals_int(gst_is_dmabuf_memory(mem), props.caps.dmabuf_export);
  int fd = gst_fd_memory_get_fd(mem);
  fail_unless(fd >= 0 && fcntl(fd, F_GETFD) >= 0);
  GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
  fail_unless(meta != NULL && meta->width == 64 && meta->height == 48);
  guint8 *view = mmap(NULL, mem->offset + mem->size, PROT_READ, MAP_SHARED, fd, 0);
  fail_unless(view != MAP_FAILED);
  GstMapInfo expected;
  fail_unless(gst_buffer_map(gst_sample_get_buffer(reference), &expected, GST_MAP_READ));
  for (int y = 0; y < 48; y++)
    fail_unless(memcmp(view + mem->offset + meta->offset[0] + y * meta->stride[0],
                       expected.data + y * 64 * 3, 64 * 3) == 0, "row %d differs", y);
  gst_buffer_unmap(gst_sample_get_buffer(reference), &expected);
  munmap(view, mem->offset + mem->size);
  int worst;
  double mean;
  compare_rgb(samples[0], reference, &worst, &mean); /* the same through GStreamer's own map */
  fail_unless_equals_int(worst, 0);
  gst_sample_unref(reference);
  for (int i = 0; i < 5; i++)
    gst_sample_unref(samples[i]);
  /* Letting go of the fd memories gave every device buffer back. */
  npu_device_stats stats;
  fail_unless(npu_device_get_stats(device, &stats) == NPU_OK);
  fail_unless_equals_uint64(stats.bytes_allocated, 0);
  npu_device_release(device);
}
GST_END_TEST;

/* A downstream npuupload imports what npudownload exported: no copy either way. */
GST_START_TEST(test_dmabuf_round_trip)
{
  GstElement *pipeline;
  gchar *error = run_pipeline(
      "videotestsrc num-buffers=10 ! video/x-raw,format=NV12,width=64,height=48 ! npuupload ! "
      "npudownload name=down ! video/x-raw(memory:DMABuf) ! npuupload name=up ! npuvpp ! "
      "video/x-raw(memory:NPUMemory),format=RGB ! npudownload ! fakesink", &pipeline);
  fail_unless(error == NULL, "%s", error);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "frames-zero-copy"), 10);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-zero-copy"), 10);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-copied"), 0);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "device-imports"), 10);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "device-bytes-h2d"), 0);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* Open fds and mappings of device memory (the CPU device's memfds) now. */
static void count_fds_and_mappings(guint *fds, guint *mappings)
{
  GDir *dir = g_dir_open("/proc/self/fd", 0, NULL);
  fail_unless(dir != NULL);
  *fds = 0;
  while (g_dir_read_name(dir))
    (*fds)++;
  g_dir_close(dir);
  gchar *maps = NULL;
  fail_unless(g_file_get_contents("/proc/self/maps", &maps, NULL, NULL));
  *mappings = 0;
  for (const gchar *at = maps; (at = strstr(at, "npu-buffer")); at++)
    (*mappings)++;
  g_free(maps);
}

typedef struct {
  guint frames, first_fds, first_mappings, max_fds, max_mappings;
} ResourceWatch;

/* From the 50th frame on, the most fds and mappings open at any frame. */
static GstPadProbeReturn watch_resources(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad, (void)info;
  ResourceWatch *watch = data;
  guint fds, mappings;
  if (++watch->frames < 50)
    return GST_PAD_PROBE_OK;
  count_fds_and_mappings(&fds, &mappings);
  if (watch->frames == 50) {
    watch->first_fds = fds;
    watch->first_mappings = mappings;
  }
  watch->max_fds = MAX(watch->max_fds, fds);
  watch->max_mappings = MAX(watch->max_mappings, mappings);
  return GST_PAD_PROBE_OK;
}

/* The round trip over many frames, with a producer much faster than the
 * VPP (tiny frames in, large frames out): the open fds and device-memory
 * mappings stay where they were after 50 frames (they piled up by thousands
 * a second, frames queued on the VPP's stream without bound, until
 * memfd_create failed). */
GST_START_TEST(test_dmabuf_round_trip_holds_no_resources)
{
  GstElement *pipeline = gst_parse_launch(
      "videotestsrc num-buffers=600 ! video/x-raw,format=NV12,width=64,height=48 ! npuupload ! "
      "npudownload ! video/x-raw(memory:DMABuf) ! npuupload ! npuvpp ! "
      "video/x-raw(memory:NPUMemory),format=RGB,width=960,height=720 ! npudownload ! "
      "fakesink name=sink", NULL);
  fail_unless(pipeline != NULL);
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstPad *pad = gst_element_get_static_pad(sink, "sink");
  ResourceWatch watch = {0};
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, watch_resources, &watch, NULL);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS, "no EOS");
  gst_message_unref(msg);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  fail_unless_equals_int(watch.frames, 600);
  fail_unless(watch.max_fds <= watch.first_fds + 8, "open fds grew from %u to %u",
              watch.first_fds, watch.max_fds);
  fail_unless(watch.max_mappings <= watch.first_mappings + 8,
              "device memory mappings grew from %u to %u", watch.first_mappings,
              watch.max_mappings);
  gst_object_unref(bus);
  gst_object_unref(pad);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* Runs `description` with the CPU device capped at `limit` (read when the
 * device opens: nothing else holds it here); returns the error. */
static gchar *run_with_memory_limit(const gchar *limit, const gchar *description)
{
  g_setenv("NPU_CPU_MEMORY_LIMIT", limit, TRUE);
  gchar *error = run_pipeline(description, NULL);
  g_unsetenv("NPU_CPU_MEMORY_LIMIT");
  return error;
}

/* A pool without device memory for its frames: the error on the bus is the
 * element's "out of device memory" with the runtime's figures, not only the
 * source's not-negotiated; the pipeline shuts down. */
GST_START_TEST(test_out_of_device_memory_is_the_error)
{
  /* npuupload's pool (two 118784-byte NV12 frames) does not fit in 100k;
   * in 400k it does, and npuvpp's RGB frames do not */
  const gchar *pipeline = "videotestsrc num-buffers=3 ! video/x-raw,format=NV12,width=320,"
                          "height=240 ! npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),"
                          "format=RGB ! npudownload ! fakesink";
  gchar *error = run_with_memory_limit("100k", pipeline);
  fail_unless(error && g_str_has_prefix(error, "Out of device memory for a 320x240 NV12 frame "
                                               "(115200 bytes) | ") &&
                  strstr(error, "CPU device out of memory"),
              "%s", error);
  g_free(error);
  error = run_with_memory_limit("400k", pipeline);
  fail_unless(error && g_str_has_prefix(error, "Out of device memory for a 320x240 RGB frame"),
              "%s", error);
  g_free(error);
}
GST_END_TEST;

/* A malformed NPU_CPU_MEMORY_LIMIT is refused when the device opens (it was
 * read as 0, i.e. no limit, or as a wrapped-around number). */
GST_START_TEST(test_bad_memory_limit_is_refused)
{
  const gchar *values[] = {"abc", "-5M", "99999999999999999999", "17179869184G", "5MB",
                           " 5M", "1T", "M"};
  for (guint i = 0; i < G_N_ELEMENTS(values); i++) {
    gchar *error = run_with_memory_limit(
        values[i], "videotestsrc num-buffers=1 ! npuupload ! npudownload ! fakesink");
    gchar *expected = g_strdup_printf("NPU_CPU_MEMORY_LIMIT='%s' is not a byte count", values[i]);
    fail_unless(error && g_str_has_prefix(error, "Cannot open NPU device") &&
                    strstr(error, expected),
                "%s: %s", values[i], error);
    g_free(expected);
    g_free(error);
  }
  gchar *error = run_with_memory_limit(
      "512M", "videotestsrc num-buffers=1 ! npuupload ! npudownload ! fakesink");
  fail_unless(error == NULL, "%s", error);
}
GST_END_TEST;

/* `size` bytes of a frame at `offset` in a new memfd, as a one-memory buffer
 * of `allocator` (the fd opened read-only when asked). */
static GstBuffer *memfd_frame(GstAllocator *allocator, const guint8 *bytes, gsize size,
                              gsize offset, gboolean read_only)
{
  int fd = memfd_create("test-frame", MFD_CLOEXEC);
  fail_unless(fd >= 0);
  fail_unless(pwrite(fd, bytes, size, (off_t)offset) == (ssize_t)size);
  if (read_only) {
    gchar *path = g_strdup_printf("/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    fail_unless(ro >= 0);
    close(fd);
    fd = ro;
    g_free(path);
  }
  GstMemory *mem = gst_fd_allocator_alloc(allocator, fd, offset + size, GST_FD_MEMORY_FLAG_NONE);
  gst_memory_resize(mem, (gssize)offset, size);
  GstBuffer *buffer = gst_buffer_new();
  gst_buffer_append_memory(buffer, mem);
  return buffer;
}

/* Pushes `frame` through "appsrc caps=`caps` ! `chain` ! appsink": the
 * sample, or NULL with the error in *error. The stopped pipeline is left in
 * *out. */
static GstSample *push_frame_through(const gchar *caps, const gchar *chain, GstBuffer *frame,
                                     GstElement **out, gchar **error)
{
  gchar *description = g_strdup_printf("appsrc name=src format=time ! %s ! appsink name=sink",
                                       chain);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL, "%s", description);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstCaps *src_caps = gst_caps_from_string(caps);
  fail_unless(src_caps != NULL, "%s", caps);
  g_object_set(src, "caps", src_caps, NULL);
  gst_caps_unref(src_caps);
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GST_BUFFER_PTS(frame) = 0;
  gst_app_src_push_buffer(GST_APP_SRC(src), frame);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg != NULL, "neither EOS nor an error");
  *error = NULL;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError *err;
    gst_message_parse_error(msg, &err, NULL);
    *error = g_strdup(err->message);
    g_error_free(err);
  }
  gst_message_unref(msg);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(sink);
  g_free(description);
  *out = pipeline;
  return sample;
}

#define TO_RGB_CHAIN \
  "npuupload name=up ! npuvpp name=vpp ! video/x-raw(memory:NPUMemory),format=RGB ! " \
  "npudownload name=down"

/* push_frame_through "npuupload name=up ! npuvpp name=vpp ! RGB ! npudownload name=down". */
static GstSample *push_frame(const gchar *caps, GstBuffer *frame, GstElement **out, gchar **error)
{
  return push_frame_through(caps, TO_RGB_CHAIN, frame, out, error);
}

#define BGRX_CAPS "video/x-raw,format=BGRx,width=64,height=48,framerate=30/1"
#define BGRX_DMABUF_CAPS "video/x-raw(memory:DMABuf),format=BGRx,width=64,height=48,framerate=30/1"
#define BGRX_SOURCE "videotestsrc num-buffers=1 pattern=gradient ! " BGRX_CAPS

/* A BGRx test frame in a memfd (read-only when asked, at an offset that is
 * not page-aligned) goes through npuupload ! npuvpp (RGB) ! npudownload:
 * the pixels must match videoconvertscale's. Returns npuupload's `stat`. */
static guint64 check_memfd_frame(GstAllocator *allocator, const gchar *caps, gboolean read_only,
                                 const gchar *stat)
{
  GstSample *source = first_sample(BGRX_SOURCE " ! appsink name=sink");
  GstSample *theirs = first_sample(BGRX_SOURCE " ! videoconvertscale ! "
                                   "video/x-raw,format=RGB ! appsink name=sink");
  GstMapInfo map;
  fail_unless(gst_buffer_map(gst_sample_get_buffer(source), &map, GST_MAP_READ));
  GstBuffer *frame = memfd_frame(allocator, map.data, map.size, 100, read_only);
  gst_buffer_unmap(gst_sample_get_buffer(source), &map);
  GstElement *pipeline;
  gchar *error;
  GstSample *ours = push_frame(caps, frame, &pipeline, &error);
  fail_unless(ours != NULL && error == NULL, "%s", error);
  int worst;
  double mean;
  compare_rgb(ours, theirs, &worst, &mean);
  fail_unless(worst <= 1, "pixels differ by up to %d", worst);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "device-bytes-h2d"),
                            stat_of(pipeline, "up", "frames-copied") * 64 * 48 * 4);
  guint64 value = stat_of(pipeline, "up", stat);
  gst_object_unref(pipeline);
  gst_sample_unref(ours);
  gst_sample_unref(theirs);
  gst_sample_unref(source);
  return value;
}

/* A dma-buf (memory:DMABuf caps) or plain fd memory is imported by its fd:
 * zero copy even where host memory cannot be imported. */
static void check_fd_memory_imported(void)
{
  GstAllocator *dmabuf = gst_dmabuf_allocator_new(), *fd = gst_fd_allocator_new();
  fail_unless_equals_uint64(check_memfd_frame(dmabuf, BGRX_DMABUF_CAPS, FALSE, "frames-zero-copy"), 1);
  fail_unless_equals_uint64(check_memfd_frame(fd, BGRX_CAPS, FALSE, "frames-zero-copy"), 1);
  fail_unless_equals_uint64(check_memfd_frame(fd, BGRX_CAPS, FALSE, "device-imports"), 1);
  gst_object_unref(dmabuf);
  gst_object_unref(fd);
}

GST_START_TEST(test_fd_memory_is_imported)
{
  check_fd_memory_imported();
}
GST_END_TEST;

GST_START_TEST(test_fd_memory_is_imported_on_an_opaque_device)
{
  g_setenv("NPU_CPU_DEVICE_MEMORY", "opaque", TRUE); /* no host import: only the fd path is left */
  check_fd_memory_imported();
}
GST_END_TEST;

/* Fds the device cannot take fall back to the mapping, then to a copy;
 * an fd that is not memory at all is a clean element error. */
GST_START_TEST(test_bad_fd_memory)
{
  GstAllocator *fd = gst_fd_allocator_new();
  /* Read-only: the device cannot take it as its memory; it is mapped and
   * imported as host memory instead. */
  fail_unless_equals_uint64(check_memfd_frame(fd, BGRX_CAPS, TRUE, "frames-zero-copy"), 1);

  int pipe_fds[2];
  fail_unless(pipe(pipe_fds) == 0);
  close(pipe_fds[1]);
  GstBuffer *frame = gst_buffer_new();
  gst_buffer_append_memory(frame, gst_fd_allocator_alloc(fd, pipe_fds[0], 64 * 48 * 4,
                                                         GST_FD_MEMORY_FLAG_NONE));
  GstElement *pipeline;
  gchar *error;
  GstSample *sample = push_frame(BGRX_DMABUF_CAPS, frame, &pipeline, &error);
  fail_unless(sample == NULL && error != NULL);
  fail_unless(strstr(error, "Cannot read the input frame") != NULL, "%s", error);
  g_free(error);
  gst_object_unref(pipeline);
  gst_object_unref(fd);
}
GST_END_TEST;

GST_START_TEST(test_read_only_fd_copied_on_an_opaque_device)
{
  g_setenv("NPU_CPU_DEVICE_MEMORY", "opaque", TRUE); /* neither fd nor host import is left */
  GstAllocator *fd = gst_fd_allocator_new();
  fail_unless_equals_uint64(check_memfd_frame(fd, BGRX_CAPS, TRUE, "frames-copied"), 1);
  gst_object_unref(fd);
}
GST_END_TEST;

/* The pixels of `source` in a new buffer laid out as asked: plane p with
 * stride strides[p] (0: the caps' default) after gaps[p] bytes of padding
 * (NULL strides and gaps: the caps' default layout, byte for byte), the
 * padding filled with 0xAB; `extra` more bytes at the end. With `meta`, a
 * GstVideoMeta describes the layout; with `split`, each plane (with the gap
 * after it) is a memory of its own. */
static GstBuffer *relayout(GstSample *source, const gint *strides, const gsize *gaps,
                           gsize extra, gboolean meta, gboolean split)
{
  GstVideoInfo info, layout;
  fail_unless(gst_video_info_from_caps(&info, gst_sample_get_caps(source)));
  layout = info;
  guint planes = GST_VIDEO_INFO_N_PLANES(&info);
  gsize at = 0, starts[GST_VIDEO_MAX_PLANES + 1];
  for (guint p = 0; p < planes; p++) {
    /* The caps' default layout has no gaps: its planes are this many rows. */
    gsize end = p + 1 < planes ? info.offset[p + 1] : info.size;
    gsize rows = (end - info.offset[p]) / (gsize)info.stride[p];
    if (strides && strides[p])
      layout.stride[p] = strides[p];
    starts[p] = at;
    at += gaps ? gaps[p] : 0;
    layout.offset[p] = at;
    at += rows * (gsize)layout.stride[p];
  }
  if (!strides && !gaps)
    fail_unless(at == info.size && memcmp(layout.offset, info.offset, sizeof info.offset) == 0);
  layout.size = at;
  starts[planes] = at + extra;
  GstBuffer *buffer = gst_buffer_new();
  if (split) {
    for (guint p = 0; p < planes; p++)
      gst_buffer_append_memory(buffer, gst_allocator_alloc(NULL, starts[p + 1] - starts[p], NULL));
  } else {
    gst_buffer_append_memory(buffer, gst_allocator_alloc(NULL, at + extra, NULL));
  }
  gst_buffer_memset(buffer, 0, 0xAB, at + extra);
  if (meta)
    gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(&info),
                                   GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info),
                                   planes, layout.offset, layout.stride);
  GstVideoFrame from, to;
  fail_unless(gst_video_frame_map(&from, &info, gst_sample_get_buffer(source), GST_MAP_READ));
  fail_unless(gst_video_frame_map(&to, meta ? &info : &layout, buffer, GST_MAP_WRITE));
  fail_unless(gst_video_frame_copy(&to, &from));
  gst_video_frame_unmap(&to);
  gst_video_frame_unmap(&from);
  return buffer;
}

/* The bytes of a one-memory `buffer` moved into a memfd (GstFdMemory of
 * `allocator`), its video meta kept. */
static GstBuffer *in_memfd(GstAllocator *allocator, GstBuffer *buffer)
{
  GstMapInfo map;
  fail_unless(gst_buffer_n_memory(buffer) == 1 && gst_buffer_map(buffer, &map, GST_MAP_READ));
  GstBuffer *fd_buffer = memfd_frame(allocator, map.data, map.size, 0, FALSE);
  gst_buffer_unmap(buffer, &map);
  GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
  if (meta)
    gst_buffer_add_video_meta_full(fd_buffer, meta->flags, meta->format, meta->width,
                                   meta->height, meta->n_planes, meta->offset, meta->stride);
  gst_buffer_unref(buffer);
  return fd_buffer;
}

#define GRADIENT_SOURCE \
  "videotestsrc num-buffers=1 pattern=gradient ! " \
  "video/x-raw,format=%s,width=%d,height=%d,colorimetry=bt709 ! "

/* A test frame of `format` laid out by `strides` and `gaps` (see relayout),
 * with a GstVideoMeta saying so, goes from appsrc through `chain` (one that
 * ends in RGB, and names npuupload "up"): the pixels must be exactly those
 * of the same frame in the caps' default layout without meta, and near
 * videoconvertscale's. In a memfd when `fd` is given. Returns npuupload's
 * `stat` for the padded frame. */
static guint64 check_layout(const gchar *format, const gint *strides, const gsize *gaps,
                            gboolean split, GstAllocator *fd, const gchar *chain, int max_worst,
                            double max_mean, const gchar *stat)
{
  gchar *source_desc = g_strdup_printf(GRADIENT_SOURCE, format, 64, 48);
  gchar *plain_desc = g_strdup_printf("%s appsink name=sink", source_desc);
  gchar *theirs_desc = g_strdup_printf("%s videoconvertscale ! video/x-raw,format=RGB ! "
                                       "appsink name=sink", source_desc);
  GstSample *source = first_sample(plain_desc), *theirs = first_sample(theirs_desc);
  gchar *caps = gst_caps_to_string(gst_sample_get_caps(source));
  GstElement *pipeline;
  gchar *error;
  GstSample *plain = push_frame_through(caps, chain, relayout(source, NULL, NULL, 0, FALSE, FALSE),
                                        &pipeline, &error);
  fail_unless(plain != NULL && error == NULL, "%s: %s", format, error);
  gst_object_unref(pipeline);
  GstBuffer *padded = relayout(source, strides, gaps, 0, TRUE, split);
  if (fd)
    padded = in_memfd(fd, padded);
  GstSample *ours = push_frame_through(caps, chain, padded, &pipeline, &error);
  fail_unless(ours != NULL && error == NULL, "%s: %s", format, error);
  int worst;
  double mean;
  compare_rgb(ours, plain, &worst, &mean);
  fail_unless(worst == 0, "%s with strides and offsets of its own differs from the same frame "
              "without padding through %s: max %d, mean %.3f", format, chain, worst, mean);
  compare_rgb(ours, theirs, &worst, &mean);
  fail_unless(worst <= max_worst && mean <= max_mean, "%s through %s differs from "
              "videoconvertscale: max %d, mean %.3f", format, chain, worst, mean);
  guint64 value = stat_of(pipeline, "up", stat);
  gst_object_unref(pipeline);
  gst_sample_unref(ours);
  gst_sample_unref(plain);
  gst_sample_unref(theirs);
  gst_sample_unref(source);
  g_free(caps);
  g_free(source_desc);
  g_free(plain_desc);
  g_free(theirs_desc);
  return value;
}

#define UP_DOWN_CHAIN "npuupload name=up ! npudownload name=down"
#define UP_DOWN_DMABUF_CHAIN UP_DOWN_CHAIN " ! video/x-raw(memory:DMABuf)"

/* Odd strides, a first plane not at the start, gaps between planes,
 * planes in memories of their own: the GstVideoMeta says where they are.
 * `stat` is the npuupload counter that a frame in one memory of host memory
 * must step (imported or copied), `split_stat` that of a frame in several. */
static void check_layouts(const gchar *stat, const gchar *split_stat)
{
  const gint rgb_stride[] = {64 * 3 + 5}; /* odd */
  const gint bgrx_stride[] = {64 * 4 + 36};
  const gsize first_gap[] = {12};         /* plane 0 at offset 12 */
  const gint nv12_strides[] = {64 + 16, 64 + 32};
  const gsize nv12_gaps[] = {0, 1001};    /* UV plane after an odd gap */
  const gsize i420_gaps[] = {0, 0, 333};  /* only V moved: Y and U as by default */
  const gint i420_strides[] = {0, 40, 48}; /* only the chroma strides differ */
  const gsize split_gaps[] = {0, 64};
  const gchar *vpp = TO_RGB_CHAIN;
  fail_unless_equals_uint64(
      check_layout("RGB", rgb_stride, NULL, FALSE, NULL, vpp, 1, 0.1, stat), 1);
  fail_unless_equals_uint64(
      check_layout("BGRx", bgrx_stride, first_gap, FALSE, NULL, vpp, 1, 0.1, stat), 1);
  fail_unless_equals_uint64(
      check_layout("NV12", nv12_strides, nv12_gaps, FALSE, NULL, vpp, 8, 3.0, stat), 1);
  fail_unless_equals_uint64(
      check_layout("I420", NULL, i420_gaps, FALSE, NULL, vpp, 8, 3.0, stat), 1);
  fail_unless_equals_uint64(
      check_layout("I420", i420_strides, NULL, FALSE, NULL, vpp, 8, 3.0, stat), 1);
  fail_unless_equals_uint64(
      check_layout("NV12", NULL, split_gaps, TRUE, NULL, vpp, 8, 3.0, split_stat), 1);
  /* No npuvpp: npudownload gets the frame as npuupload made it, and hands
   * it on as system memory or as fd memory (keeping its layout). */
  const gchar *chains[] = {UP_DOWN_CHAIN, UP_DOWN_DMABUF_CHAIN};
  for (guint i = 0; i < G_N_ELEMENTS(chains); i++)
    fail_unless_equals_uint64(
        check_layout("RGB", rgb_stride, first_gap, FALSE, NULL, chains[i], 1, 0.1, stat), 1);
  /* In fd memory: imported with its layout, on every device. */
  GstAllocator *fd = gst_fd_allocator_new();
  fail_unless_equals_uint64(check_layout("NV12", nv12_strides, nv12_gaps, FALSE, fd, vpp, 8, 3.0,
                                         "frames-zero-copy"), 1);
  for (guint i = 0; i < G_N_ELEMENTS(chains); i++)
    fail_unless_equals_uint64(check_layout("RGB", rgb_stride, first_gap, FALSE, fd, chains[i], 1,
                                           0.1, "frames-zero-copy"), 1);
  gst_object_unref(fd);
}

/* Host memory the device imported cannot be exported as an fd: npudownload
 * copies it once on the device into memory that can. */
GST_START_TEST(test_imported_host_memory_goes_out_as_fd)
{
  GstElement *pipeline;
  gchar *error = run_pipeline(
      "videotestsrc num-buffers=5 ! video/x-raw,format=RGB,width=64,height=48 ! "
      "identity drop-allocation=true ! npuupload name=up ! npudownload name=down ! "
      "video/x-raw(memory:DMABuf) ! fakesink", &pipeline);
  fail_unless(error == NULL, "%s", error);
  fail_unless_equals_uint64(stat_of(pipeline, "up", "device-imports"), 5);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "frames-copied"), 5);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "device-bytes-d2d"), 5 * 64 * 48 * 3);
  fail_unless_equals_uint64(stat_of(pipeline, "down", "device-bytes-d2h"), 0);
  gst_object_unref(pipeline);
}
GST_END_TEST;

GST_START_TEST(test_video_meta_layout_is_honoured)
{
  /* Host memory imported as it is; planes in several memories copied. */
  check_layouts("frames-zero-copy", "frames-copied");
}
GST_END_TEST;

GST_START_TEST(test_video_meta_layout_is_honoured_on_an_opaque_device)
{
  g_setenv("NPU_CPU_DEVICE_MEMORY", "opaque", TRUE); /* host memory is copied, plane by plane */
  check_layouts("frames-copied", "frames-copied");
}
GST_END_TEST;

/* Frames without meta in the caps' default layout (rows padded to 4 bytes
 * at this width), or with bytes to spare after it, are read by that layout. */
static void check_buffers_without_video_meta(void)
{
  const struct {
    const gchar *format;
    int max_worst;
    double max_mean;
  } cases[] = {{"I420", 8, 3.0}, {"NV12", 8, 3.0}, {"YUY2", 8, 3.0}, {"RGB", 1, 0.1},
               {"BGRx", 1, 0.1}};
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    for (gsize extra = 0; extra <= 100; extra += 100) {
      gchar *source_desc = g_strdup_printf(GRADIENT_SOURCE, cases[i].format, 66, 50);
      gchar *plain_desc = g_strdup_printf("%s appsink name=sink", source_desc);
      gchar *theirs_desc = g_strdup_printf("%s videoconvertscale ! video/x-raw,format=RGB ! "
                                           "appsink name=sink", source_desc);
      GstSample *source = first_sample(plain_desc), *theirs = first_sample(theirs_desc);
      gchar *caps = gst_caps_to_string(gst_sample_get_caps(source));
      GstBuffer *frame = relayout(source, NULL, NULL, extra, FALSE, FALSE);
      GstVideoInfo info;
      fail_unless(gst_video_info_from_caps(&info, gst_sample_get_caps(source)));
      fail_unless(gst_buffer_get_video_meta(frame) == NULL);
      fail_unless_equals_uint64(gst_buffer_get_size(frame), GST_VIDEO_INFO_SIZE(&info) + extra);
      GstElement *pipeline;
      gchar *error;
      GstSample *ours = push_frame(caps, frame, &pipeline, &error);
      fail_unless(ours != NULL && error == NULL, "%s: %s", cases[i].format, error);
      int worst;
      double mean;
      compare_rgb(ours, theirs, &worst, &mean);
      fail_unless(worst <= cases[i].max_worst && mean <= cases[i].max_mean,
                  "%s 66x50 without meta (%" G_GSIZE_FORMAT " bytes spare) differs from "
                  "videoconvertscale: max %d, mean %.3f", cases[i].format, extra, worst, mean);
      fail_unless_equals_uint64(stat_of(pipeline, "vpp", "frames-processed"), 1);
      gst_object_unref(pipeline);
      gst_sample_unref(ours);
      gst_sample_unref(theirs);
      gst_sample_unref(source);
      g_free(caps);
      g_free(source_desc);
      g_free(plain_desc);
      g_free(theirs_desc);
    }
  }
}

GST_START_TEST(test_buffers_without_video_meta)
{
  check_buffers_without_video_meta();
}
GST_END_TEST;

GST_START_TEST(test_buffers_without_video_meta_on_an_opaque_device)
{
  g_setenv("NPU_CPU_DEVICE_MEMORY", "opaque", TRUE); /* copied in one piece */
  check_buffers_without_video_meta();
}
GST_END_TEST;

/* Pushes `frame` (NV12 64x48) through `chain`: it must be refused with an
 * element error whose message contains `expected`. */
static void check_bad_frame(const gchar *chain, GstBuffer *frame, const gchar *expected)
{
  GstElement *pipeline;
  gchar *error;
  GstSample *sample = push_frame_through(
      "video/x-raw,format=NV12,width=64,height=48,framerate=30/1", chain, frame, &pipeline, &error);
  fail_unless(sample == NULL && error != NULL, "a bad frame went through %s (expected: %s)", chain,
              expected);
  fail_unless(strstr(error, expected) != NULL, "'%s' where '%s' was expected", error, expected);
  g_free(error);
  gst_object_unref(pipeline);
}

/* A frame with a video meta of `width` (caps: 64) and luma stride `stride`,
 * in a buffer of `size` bytes. */
static GstBuffer *nv12_with_meta(guint width, gint stride, gsize size)
{
  gsize offsets[GST_VIDEO_MAX_PLANES] = {0, (gsize)stride * 48};
  gint strides[GST_VIDEO_MAX_PLANES] = {stride, stride};
  GstBuffer *frame = gst_buffer_new_allocate(NULL, size, NULL);
  gst_buffer_memset(frame, 0, 128, size);
  gst_buffer_add_video_meta_full(frame, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, width,
                                 48, 2, offsets, strides);
  return frame;
}

/* Buffers smaller than their caps or their video meta say, and metas that
 * contradict the caps: a clear element error, never a crash or a read
 * past the end. */
static void check_bad_frames(void)
{
  const gchar *download = UP_DOWN_CHAIN;
  const gsize nv12 = 64 * 48 * 3 / 2;
  check_bad_frame(download, gst_buffer_new_allocate(NULL, 100, NULL), "smaller than its caps");
  check_bad_frame(TO_RGB_CHAIN, gst_buffer_new_allocate(NULL, nv12 - 1, NULL),
                  "smaller than its caps");
  /* Rows of 80 bytes: the UV plane starts at 80 * 48 and ends 80 * 23 + 64
   * bytes later, past the end of a buffer of the default size. */
  const gsize whole = 80 * 48 + 80 * 23 + 64;
  check_bad_frame(download, nv12_with_meta(64, 80, nv12), "smaller than its video meta");
  check_bad_frame(TO_RGB_CHAIN, nv12_with_meta(64, 80, nv12), "smaller than its video meta");
  check_bad_frame(TO_RGB_CHAIN, nv12_with_meta(64, 80, whole - 1), "smaller than its video meta");
  /* A meta narrower than the caps, rows shorter than the width. */
  check_bad_frame(TO_RGB_CHAIN, nv12_with_meta(32, 64, nv12), "does not match");
  check_bad_frame(TO_RGB_CHAIN, nv12_with_meta(64, 63, nv12), "does not match");
  /* Cut right after its last pixel, the frame is whole: it goes through. */
  GstElement *pipeline;
  gchar *error;
  GstSample *sample = push_frame("video/x-raw,format=NV12,width=64,height=48,framerate=30/1",
                                 nv12_with_meta(64, 80, whole), &pipeline, &error);
  fail_unless(sample != NULL && error == NULL, "%s", error);
  gst_sample_unref(sample);
  gst_object_unref(pipeline);
}

GST_START_TEST(test_truncated_buffer_is_an_error)
{
  check_bad_frames();
}
GST_END_TEST;

GST_START_TEST(test_truncated_buffer_is_an_error_on_an_opaque_device)
{
  g_setenv("NPU_CPU_DEVICE_MEMORY", "opaque", TRUE); /* the copy path reads the input frame */
  check_bad_frames();
}
GST_END_TEST;

/* Pulls frames until EOS; returns how many, the first one's PTS in *first_pts. */
static guint pull_until_eos(GstElement *sink, guint at_most, GstClockTime *first_pts)
{
  guint count = 0;
  while (count < at_most) {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
    if (!sample) {
      fail_unless(gst_app_sink_is_eos(GST_APP_SINK(sink)), "no frame and no EOS");
      break;
    }
    if (count == 0 && first_pts)
      *first_pts = GST_BUFFER_PTS(gst_sample_get_buffer(sample));
    count++;
    gst_sample_unref(sample);
  }
  return count;
}

/* Flushing seeks while frames are in flight everywhere (appsink and the
 * queues full, every element busy): frames flow again from the new position,
 * no error, the flushed buffers go back to their pools (which therefore need
 * no more buffers than the few a steady stream holds) and the stream ends. */
static void check_flushing_seeks(void)
{
  npu_device_properties props;
  npu_device *device = default_device(&props);
  GstElement *pipeline = gst_parse_launch(
      "videotestsrc num-buffers=120 ! "
      "video/x-raw,format=NV12,width=160,height=120,framerate=30/1 ! npuupload name=up ! "
      "queue max-size-buffers=2 max-size-bytes=0 max-size-time=0 ! npuvpp name=vpp ! "
      "video/x-raw(memory:NPUMemory),format=RGB,width=80,height=60 ! "
      "queue max-size-buffers=2 max-size-bytes=0 max-size-time=0 ! npudownload name=down ! "
      "appsink name=sink sync=false max-buffers=2", NULL);
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  guint frames = pull_until_eos(sink, 10, NULL);
  fail_unless_equals_int(frames, 10);
  /* Forward, back to the start, forward again (num-buffers counts on
   * across seeks: 120 leaves plenty). */
  const GstClockTime targets[] = {GST_SECOND, 0, GST_SECOND / 2};
  for (guint i = 0; i < G_N_ELEMENTS(targets); i++) {
    fail_unless(gst_element_seek_simple(pipeline, GST_FORMAT_TIME,
                                        GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE, targets[i]),
                "seek %u refused", i);
    GstClockTime pts = GST_CLOCK_TIME_NONE;
    guint pulled = pull_until_eos(sink, 10, &pts);
    fail_unless_equals_int(pulled, 10);
    fail_unless(pts == targets[i], "first frame after seek %u at %" GST_TIME_FORMAT ", not %"
                GST_TIME_FORMAT, i, GST_TIME_ARGS(pts), GST_TIME_ARGS(targets[i]));
    frames += pulled;
  }
  /* The rest of the stream, then EOS. */
  frames += pull_until_eos(sink, 1000, NULL);
  fail_unless(gst_app_sink_is_eos(GST_APP_SINK(sink)));
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg != NULL && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS, "%" GST_PTR_FORMAT, msg);
  gst_message_unref(msg);
  msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
  fail_unless(msg == NULL, "%" GST_PTR_FORMAT, msg);
  /* Up to 120 frames went through npuupload (a flush may drop one before
   * it), at least those received through npuvpp. */
  guint64 uploaded = stat_of(pipeline, "up", "frames-zero-copy");
  guint64 processed = stat_of(pipeline, "vpp", "frames-processed");
  fail_unless(frames <= processed && processed <= uploaded && uploaded <= 120,
              "%u frames received, %" G_GUINT64_FORMAT " processed, %" G_GUINT64_FORMAT
              " uploaded", frames, processed, uploaded);
  fail_unless(uploaded >= 100, "%" G_GUINT64_FORMAT " frames uploaded", uploaded);
  /* The pools served everything from a handful of buffers: the flushed ones came back. */
  const gchar *pools[] = {"up", "vpp"};
  for (guint i = 0; i < G_N_ELEMENTS(pools); i++) {
    guint64 requests = stat_of(pipeline, pools[i], "pool-requests");
    guint64 hits = stat_of(pipeline, pools[i], "pool-hits");
    guint64 allocations = stat_of(pipeline, pools[i], "pool-allocations");
    GST_INFO("%s's pool: %" G_GUINT64_FORMAT " requests, %" G_GUINT64_FORMAT " hits, %"
             G_GUINT64_FORMAT " allocations", pools[i], requests, hits, allocations);
    fail_unless_equals_uint64(requests, hits + allocations);
    fail_unless(requests <= 8, "%s's pool made %" G_GUINT64_FORMAT " buffers for %" G_GUINT64_FORMAT
                " frames and 3 flushes", pools[i], requests, processed);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  /* No device buffer outlived the pipeline. */
  npu_device_stats stats;
  fail_unless(npu_device_get_stats(device, &stats) == NPU_OK);
  fail_unless_equals_uint64(stats.allocations, stats.frees);
  fail_unless_equals_uint64(stats.bytes_allocated, 0);
  npu_device_release(device);
}

GST_START_TEST(test_flushing_seek)
{
  check_flushing_seeks();
}
GST_END_TEST;

GST_START_TEST(test_flushing_seek_on_an_opaque_device)
{
  g_setenv("NPU_CPU_DEVICE_MEMORY", "opaque", TRUE); /* staging maps, downloads copied */
  check_flushing_seeks();
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
  tcase_add_test(tc, test_repeated_state_changes);
  tcase_add_test(tc, test_crop_meta_is_honoured);
  tcase_add_test(tc, test_caps_change_mid_stream);
  tcase_add_test(tc, test_download_as_dmabuf);
  tcase_add_test(tc, test_dmabuf_round_trip);
  tcase_add_test(tc, test_dmabuf_round_trip_holds_no_resources);
  tcase_add_test(tc, test_out_of_device_memory_is_the_error);
  tcase_add_test(tc, test_bad_memory_limit_is_refused);
  tcase_add_test(tc, test_fd_memory_is_imported);
  tcase_add_test(tc, test_fd_memory_is_imported_on_an_opaque_device);
  tcase_add_test(tc, test_bad_fd_memory);
  tcase_add_test(tc, test_read_only_fd_copied_on_an_opaque_device);
  tcase_add_test(tc, test_imported_host_memory_goes_out_as_fd);
  tcase_add_test(tc, test_video_meta_layout_is_honoured);
  tcase_add_test(tc, test_video_meta_layout_is_honoured_on_an_opaque_device);
  tcase_add_test(tc, test_buffers_without_video_meta);
  tcase_add_test(tc, test_buffers_without_video_meta_on_an_opaque_device);
  tcase_add_test(tc, test_truncated_buffer_is_an_error);
  tcase_add_test(tc, test_truncated_buffer_is_an_error_on_an_opaque_device);
  tcase_add_test(tc, test_flushing_seek);
  tcase_add_test(tc, test_flushing_seek_on_an_opaque_device);
  return s;
}

GST_CHECK_MAIN(npu_elements);
