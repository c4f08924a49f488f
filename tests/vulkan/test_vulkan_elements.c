/* gst-check tests of the elements on the Vulkan device: each pipeline runs
 * twice, with device-id of the CPU device and of the first Vulkan device,
 * and the outputs must agree: npuupload ! npuvpp ! npudownload frames byte
 * for byte within 1 (conversions, scaling methods, letterbox, odd sizes),
 * npuinfer's tensors within 1e-4 (a small convolutional network,
 * conv_features.onnx, fed from NPU memory and, batched over two pads, from
 * system memory). On a device with host-visible memory (lavapipe, integrated
 * GPUs) the stats prove that no frame was copied. Without a Vulkan device
 * every test passes with a message. */
#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>
#include <gst/npu/npu-tensor-meta.h>
#include <gst/video/video.h>
#include <npu/npu.h>
#include <string.h>

#include "../gst/element_stats.h"

/* The index of the first Vulkan device (its device-id), -1 where none. */
static gint vulkan_device_id(gboolean *host_visible)
{
  uint32_t count = 0;
  fail_unless(npu_device_count(&count) == NPU_OK);
  for (uint32_t i = 0; i < count; i++) {
    npu_device_properties props;
    fail_unless(npu_device_get_properties(i, &props) == NPU_OK);
    if (strcmp(props.backend, "vulkan") == 0) {
      *host_visible = props.caps.host_visible_memory;
      return (gint)i;
    }
  }
  g_print("no Vulkan device (%s): nothing to test\n", npu_last_error_message());
  return -1;
}

/* Runs a pipeline to its end and takes every sample of its appsinks
 * s0..s<sinks-1> (samples[s]); returns the stopped pipeline. */
static GstElement *run_collect(const gchar *description, guint sinks, GPtrArray **samples)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  fail_unless(pipeline != NULL, "parse failed: %s", error ? error->message : "?");
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg != NULL, "timed out: %s", description);
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError *err;
    gchar *debug = NULL;
    gst_message_parse_error(msg, &err, &debug);
    fail("%s: %s (%s)", description, err->message, debug ? debug : "");
  }
  gst_message_unref(msg);
  gst_object_unref(bus);
  for (guint s = 0; s < sinks; s++) {
    gchar *name = g_strdup_printf("s%u", s);
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), name);
    fail_unless(sink != NULL, "no %s", name);
    samples[s] = g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref);
    GstSample *sample;
    while ((sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 0)))
      g_ptr_array_add(samples[s], sample);
    gst_object_unref(sink);
    g_free(name);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  return pipeline;
}

/* Compares every visible byte of two frames of the same caps (their strides
 * may differ: each device rounds rows to its own alignment). */
static void compare_frames(GstSample *cpu, GstSample *vulkan, const gchar *what, guint *off_by_one,
                           guint *compared)
{
  GstVideoInfo info;
  fail_unless(gst_video_info_from_caps(&info, gst_sample_get_caps(cpu)));
  fail_unless(gst_caps_is_equal(gst_sample_get_caps(cpu), gst_sample_get_caps(vulkan)));
  GstVideoFrame frames[2];
  fail_unless(gst_video_frame_map(&frames[0], &info, gst_sample_get_buffer(cpu), GST_MAP_READ));
  fail_unless(gst_video_frame_map(&frames[1], &info, gst_sample_get_buffer(vulkan), GST_MAP_READ));
  const GstVideoFormatInfo *finfo = info.finfo;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); p++) {
    guint c = 0;
    while (GST_VIDEO_FORMAT_INFO_PLANE(finfo, c) != p)
      c++;
    gsize row_bytes = (gsize)GST_VIDEO_FRAME_COMP_WIDTH(&frames[0], c) *
                      GST_VIDEO_FRAME_COMP_PSTRIDE(&frames[0], c);
    for (gint y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&frames[0], c); y++) {
      const guint8 *rows[2];
      for (int d = 0; d < 2; d++)
        rows[d] = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&frames[d], p) +
                  (gsize)y * GST_VIDEO_FRAME_PLANE_STRIDE(&frames[d], p);
      for (gsize x = 0; x < row_bytes; x++) {
        int diff = abs((int)rows[0][x] - (int)rows[1][x]);
        fail_unless(diff <= 1, "%s: plane %u row %d byte %" G_GSIZE_FORMAT ": CPU %u, Vulkan %u",
                    what, p, y, x, rows[0][x], rows[1][x]);
        *off_by_one += (guint)diff;
        (*compared)++;
      }
    }
  }
  for (int d = 0; d < 2; d++)
    gst_video_frame_unmap(&frames[d]);
}

#define FRAMES 3

GST_START_TEST(test_vpp_matches_the_cpu)
{
  gboolean host_visible;
  gint vulkan = vulkan_device_id(&host_visible);
  if (vulkan < 0)
    return;
  static const struct {
    const gchar *input, *output, *options;
  } cases[] = {
      {"format=NV12,width=320,height=240", "format=RGB,width=160,height=160",
       "add-borders=true border-color=0xff727272"},
      {"format=I420,width=97,height=61", "format=BGRx,width=50,height=37", "method=nearest"},
      {"format=YUY2,width=160,height=120", "format=NV12,width=64,height=48", "method=area"},
      {"format=RGBA,width=75,height=45", "format=GRAY8,width=30,height=30", "add-borders=true"},
      {"format=UYVY,width=33,height=17", "format=I420,width=41,height=23", ""},
      {"format=GRAY8,width=64,height=64", "format=BGR,width=31,height=29", "method=area"},
  };
  guint off_by_one = 0, compared = 0;
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    GPtrArray *samples[2];
    for (int d = 0; d < 2; d++) {
      gint id = d ? vulkan : 0;
      gchar *description = g_strdup_printf(
          "videotestsrc num-buffers=%d pattern=zone-plate kx2=20 ky2=20 kt=1 ! "
          "video/x-raw,%s ! npuupload name=up device-id=%d ! npuvpp name=vpp device-id=%d %s ! "
          "video/x-raw(memory:NPUMemory),%s ! npudownload name=down device-id=%d ! "
          "appsink name=s0 sync=false wait-on-eos=false",
          FRAMES, cases[i].input, id, id, cases[i].options, cases[i].output, id);
      GstElement *pipeline = run_collect(description, 1, &samples[d]);
      fail_unless_equals_int(samples[d]->len, FRAMES);
      fail_unless_equals_uint64(stat_of(pipeline, "vpp", "frames-processed"), FRAMES);
      if (d && host_visible) { /* drawn into device memory, read where it lies */
        fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-zero-copy"), FRAMES);
        fail_unless_equals_uint64(stat_of(pipeline, "down", "frames-zero-copy"), FRAMES);
        fail_unless_equals_uint64(stat_of(pipeline, "down", "device-bytes-d2h"), 0);
      }
      gst_object_unref(pipeline);
      g_free(description);
    }
    for (guint f = 0; f < FRAMES; f++) {
      gchar *what = g_strdup_printf("%s -> %s, frame %u", cases[i].input, cases[i].output, f);
      compare_frames(g_ptr_array_index(samples[0], f), g_ptr_array_index(samples[1], f), what,
                     &off_by_one, &compared);
      g_free(what);
    }
    for (int d = 0; d < 2; d++)
      g_ptr_array_unref(samples[d]);
  }
  g_print("npuvpp on Vulkan against the CPU: %u of %u bytes off by one\n", off_by_one, compared);
  fail_unless(off_by_one * 1000 <= compared);
}
GST_END_TEST;

/* Compares the tensors of two frames' metas, value by value; *worst: the
 * largest difference so far. */
static void compare_tensors(GstSample *cpu, GstSample *vulkan, const gchar *what, float *worst)
{
  GstNpuTensorMeta *metas[2] = {gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(cpu)),
                                gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(vulkan))};
  fail_unless(metas[0] && metas[1], "%s: a frame without tensors", what);
  static const gchar *const names[] = {"features", "pooled"};
  static const gsize sizes[] = {4 * 16 * 16, 4};
  for (gsize t = 0; t < G_N_ELEMENTS(names); t++) {
    const GstNpuTensor *tensors[2];
    GstMapInfo maps[2];
    const float *values[2];
    for (int d = 0; d < 2; d++) {
      tensors[d] = gst_npu_tensor_meta_find(metas[d], names[t]);
      fail_unless(tensors[d] != NULL, "%s: no %s", what, names[t]);
      fail_unless_equals_uint64(tensors[d]->size, sizes[t] * sizeof(float));
      values[d] = gst_npu_tensor_map(tensors[d], &maps[d]);
      fail_unless(values[d] != NULL);
    }
    for (gsize i = 0; i < sizes[t]; i++) {
      float diff = fabsf(values[0][i] - values[1][i]);
      fail_unless(diff <= 1e-4f, "%s: %s[%" G_GSIZE_FORMAT "]: CPU %g, Vulkan %g", what,
                  names[t], i, values[0][i], values[1][i]);
      *worst = MAX(*worst, diff);
    }
    for (int d = 0; d < 2; d++)
      gst_npu_tensor_unmap(tensors[d], &maps[d]);
  }
}

/* Runs an npuinfer pipeline (a format string taking the device id and the
 * model's path, `sinks` appsinks s0...) on both devices; compares frames. */
static void check_infer(const gchar *format, guint sinks, guint frames)
{
  gboolean host_visible;
  gint vulkan = vulkan_device_id(&host_visible);
  if (vulkan < 0)
    return;
  gchar *model = g_build_filename(g_getenv("NPU_VULKAN_MODELS"), "conv_features.onnx", NULL);
  GPtrArray *samples[2][2];
  for (int d = 0; d < 2; d++) {
    gchar *description = g_strdup_printf(format, d ? vulkan : 0, model);
    gst_object_unref(run_collect(description, sinks, samples[d]));
    g_free(description);
  }
  float worst = 0;
  for (guint s = 0; s < sinks; s++) {
    for (int d = 0; d < 2; d++)
      fail_unless_equals_int(samples[d][s]->len, frames);
    for (guint f = 0; f < frames; f++) {
      gchar *what = g_strdup_printf("sink %u frame %u", s, f);
      compare_tensors(g_ptr_array_index(samples[0][s], f), g_ptr_array_index(samples[1][s], f),
                      what, &worst);
      g_free(what);
    }
    for (int d = 0; d < 2; d++)
      g_ptr_array_unref(samples[d][s]);
  }
  g_print("npuinfer on Vulkan against the CPU: largest difference %g\n", worst);
  g_free(model);
}

GST_START_TEST(test_infer_from_device_memory_matches_the_cpu)
{
  check_infer("videotestsrc num-buffers=4 pattern=zone-plate kx2=20 ky2=20 kt=1 ! "
              "video/x-raw,format=NV12,width=96,height=64 ! npuupload device-id=%1$d ! "
              "npuinfer device-id=%1$d model=%2$s mean=0.485,0.456,0.406 std=0.229,0.224,0.225 ! "
              "appsink name=s0 sync=false wait-on-eos=false",
              1, 4);
}
GST_END_TEST;

GST_START_TEST(test_infer_batched_from_system_memory_matches_the_cpu)
{
  check_infer("npuinfer name=infer device-id=%1$d model=%2$s batch-size=2 batch-timeout=200000 "
              "letterbox=true "
              "videotestsrc num-buffers=4 pattern=zone-plate kx2=10 ky2=30 kt=2 ! "
              "video/x-raw,format=I420,width=80,height=48 ! infer.sink_0 "
              "infer.src_0 ! appsink name=s0 sync=false wait-on-eos=false "
              "videotestsrc num-buffers=4 pattern=ball ! "
              "video/x-raw,format=RGB,width=40,height=40 ! infer.sink_1 "
              "infer.src_1 ! appsink name=s1 sync=false wait-on-eos=false",
              2, 4);
}
GST_END_TEST;

static Suite *vulkan_elements_suite(void)
{
  Suite *s = suite_create("npu-vulkan-elements");
  TCase *tc = tcase_create("general");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_vpp_matches_the_cpu);
  tcase_add_test(tc, test_infer_from_device_memory_matches_the_cpu);
  tcase_add_test(tc, test_infer_batched_from_system_memory_matches_the_cpu);
  suite_add_tcase(s, tc);
  return s;
}

GST_CHECK_MAIN(vulkan_elements);
