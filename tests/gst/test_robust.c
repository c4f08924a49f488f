/* Adversarial gst-check tests of npuupload, npuvpp, npuinfer and
 * npudownload, as a demanding GStreamer user would drive them: caps
 * renegotiated mid-stream (size and format, npuinfer re-planning), odd
 * sizes and padded layouts in every format, every format pair through the
 * VPP, partial batches at EOS and at serialized queries, flushing seeks in
 * the middle of a batch, segments, pause/resume cycles, bad input (caps,
 * truncated frames, lying video metas, memory of another kind or device,
 * downstream refusing), properties set while playing, and what
 * gst-inspect-1.0 shows. */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/npu/npu-tensor-meta.h>
#include <gst/video/video.h>
#include <npu/npu.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "element_stats.h"

static const gchar *formats[] = {"NV12", "NV21", "I420", "YV12", "NV16", "NV24", "Y42B",
                                 "Y444", "YUY2", "UYVY", "RGB",  "BGR",  "RGBx", "BGRx",
                                 "xRGB", "xBGR", "RGBA", "BGRA", "GRAY8"};

static gchar *model_path(const gchar *name)
{
  return g_build_filename(g_getenv("NPU_INFER_MODELS"), name, NULL);
}

static GstElement *parse(const gchar *description)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  fail_unless(pipeline != NULL && error == NULL, "%s: %s", description,
              error ? error->message : "?");
  return pipeline;
}

static GstElement *child(GstElement *pipeline, const gchar *name)
{
  GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), name);
  fail_unless(element != NULL, "no %s", name);
  return element;
}

/* The next EOS or error within `seconds`: NULL for EOS, else the error's
 * "message | debug" (fails on neither). */
static gchar *wait_end(GstElement *pipeline, guint seconds)
{
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, seconds * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gst_object_unref(bus);
  fail_unless(msg != NULL, "neither EOS nor an error within %u s", seconds);
  gchar *text = NULL;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError *err;
    gchar *debug = NULL;
    gst_message_parse_error(msg, &err, &debug);
    text = g_strdup_printf("%s | %s", err->message, debug ? debug : "");
    g_error_free(err);
    g_free(debug);
  }
  gst_message_unref(msg);
  return text;
}

/* Runs `description` to its end; returns the error or NULL (EOS). */
static gchar *run(const gchar *description)
{
  GstElement *pipeline = parse(description);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  gchar *error = wait_end(pipeline, 20);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  return error;
}

static void expect_error(const gchar *description, const gchar *expected)
{
  gchar *error = run(description);
  fail_unless(error != NULL, "no error from %s", description);
  fail_unless(strstr(error, expected) != NULL, "'%s' where '%s' was expected (%s)", error,
              expected, description);
  g_free(error);
}

/* The frames an appsink named "sink" collects from `description` (which
 * must end), in a new array of samples. */
static GPtrArray *collect(const gchar *description)
{
  GstElement *pipeline = parse(description);
  GstElement *sink = child(pipeline, "sink");
  GPtrArray *samples = g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstSample *sample;
  while ((sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND)))
    g_ptr_array_add(samples, sample);
  fail_unless(gst_app_sink_is_eos(GST_APP_SINK(sink)), "no EOS from %s", description);
  gchar *error = wait_end(pipeline, 5);
  fail_unless(error == NULL, "%s: %s", description, error);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return samples;
}

static GstSample *only_sample(const gchar *description)
{
  GPtrArray *samples = collect(description);
  fail_unless_equals_int(samples->len, 1);
  GstSample *sample = gst_sample_ref(g_ptr_array_index(samples, 0));
  g_ptr_array_unref(samples);
  return sample;
}

/* Largest byte difference of two RGB samples of the same size. */
static int rgb_difference(GstSample *a, GstSample *b)
{
  GstVideoInfo ia, ib;
  fail_unless(gst_video_info_from_caps(&ia, gst_sample_get_caps(a)));
  fail_unless(gst_video_info_from_caps(&ib, gst_sample_get_caps(b)));
  fail_unless(GST_VIDEO_INFO_WIDTH(&ia) == GST_VIDEO_INFO_WIDTH(&ib) &&
              GST_VIDEO_INFO_HEIGHT(&ia) == GST_VIDEO_INFO_HEIGHT(&ib));
  GstVideoFrame fa, fb;
  fail_unless(gst_video_frame_map(&fa, &ia, gst_sample_get_buffer(a), GST_MAP_READ));
  fail_unless(gst_video_frame_map(&fb, &ib, gst_sample_get_buffer(b), GST_MAP_READ));
  int worst = 0;
  for (int y = 0; y < GST_VIDEO_INFO_HEIGHT(&ia); y++) {
    const guint8 *ra = (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fa, 0) +
                       y * GST_VIDEO_FRAME_PLANE_STRIDE(&fa, 0);
    const guint8 *rb = (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fb, 0) +
                       y * GST_VIDEO_FRAME_PLANE_STRIDE(&fb, 0);
    for (int x = 0; x < GST_VIDEO_INFO_WIDTH(&ia) * 3; x++)
      worst = MAX(worst, abs(ra[x] - rb[x]));
  }
  gst_video_frame_unmap(&fa);
  gst_video_frame_unmap(&fb);
  return worst;
}

#define SOLID "videotestsrc num-buffers=1 pattern=solid-color foreground-color=0xff3278c8 ! "

/* ---- every format, odd sizes, every pair ------------------------------------------------ */

/* A solid frame of each format at odd sizes (a chroma row or column half
 * covered, one pixel, one long row) comes out of upload -> vpp -> RGB ->
 * download as videoconvert makes it: the last rows and columns included. */
GST_START_TEST(test_every_format_at_odd_sizes)
{
  const int sizes[][2] = {{641, 359}, {1, 1}, {4095, 1}, {1, 33}, {3, 3}};
  for (guint f = 0; f < G_N_ELEMENTS(formats); f++) {
    for (guint s = 0; s < G_N_ELEMENTS(sizes); s++) {
      /* videotestsrc leaves the last V of an odd-width packed 4:2:2 row 0 */
      gboolean packed_422 = g_str_equal(formats[f], "YUY2") || g_str_equal(formats[f], "UYVY");
      int width = packed_422 ? (sizes[s][0] + 1) / 2 * 2 : sizes[s][0];
      gchar *source = g_strdup_printf(SOLID "video/x-raw,format=%s,width=%d,height=%d ! ",
                                      formats[f], width, sizes[s][1]);
      gchar *ours = g_strdup_printf("%s npuupload ! npuvpp ! "
                                    "video/x-raw(memory:NPUMemory),format=RGB ! npudownload ! "
                                    "appsink name=sink", source);
      gchar *theirs = g_strdup_printf("%s videoconvert ! video/x-raw,format=RGB ! "
                                      "appsink name=sink", source);
      GstSample *a = only_sample(ours), *b = only_sample(theirs);
      int worst = rgb_difference(a, b);
      fail_unless(worst <= 8, "%s %dx%d: differs from videoconvert by %d", formats[f], width,
                  sizes[s][1], worst);
      gst_sample_unref(a);
      gst_sample_unref(b);
      g_free(source);
      g_free(ours);
      g_free(theirs);
    }
  }
}
GST_END_TEST;

/* Every format the VPP reads into every format it writes (scaled on the
 * way, at an odd size: the last chroma row and column cover one pixel),
 * then back to RGB by a second npuvpp: the colour survives. */
GST_START_TEST(test_every_format_pair)
{
  for (guint g = 0; g < G_N_ELEMENTS(formats); g++) {
    for (gboolean grey = FALSE; grey <= TRUE; grey++) {
      /* what videoconvert makes of the colour through format g */
      gchar *theirs = g_strdup_printf(
          SOLID "video/x-raw,format=%s,width=21,height=11 ! videoconvert ! "
          "video/x-raw,format=%s ! videoconvert ! video/x-raw,format=RGB ! appsink name=sink",
          grey ? "GRAY8" : "RGB", formats[g]);
      GstSample *reference = only_sample(theirs);
      for (guint f = 0; f < G_N_ELEMENTS(formats); f++) {
        if (grey != g_str_equal(formats[f], "GRAY8"))
          continue;
        gchar *ours = g_strdup_printf(
            SOLID "video/x-raw,format=%s,width=34,height=17 ! npuupload ! npuvpp ! "
            "video/x-raw(memory:NPUMemory),format=%s,width=21,height=11 ! npuvpp ! "
            "video/x-raw(memory:NPUMemory),format=RGB ! npudownload ! appsink name=sink",
            formats[f], formats[g]);
        GstSample *sample = only_sample(ours);
        int worst = rgb_difference(sample, reference);
        fail_unless(worst <= 6, "%s -> %s -> RGB differs from videoconvert by %d", formats[f],
                    formats[g], worst);
        gst_sample_unref(sample);
        g_free(ours);
      }
      gst_sample_unref(reference);
      g_free(theirs);
    }
  }
}
GST_END_TEST;

/* A copy of `frame` (default layout of `info`) with each plane's rows
 * `extra` bytes longer, the planes in reverse order with `gap` bytes
 * before each, described by a GstVideoMeta. */
static GstBuffer *padded_copy(GstBuffer *frame, const GstVideoInfo *info, guint extra, guint gap)
{
  GstVideoFrame in;
  fail_unless(gst_video_frame_map(&in, info, frame, GST_MAP_READ));
  guint n = GST_VIDEO_INFO_N_PLANES(info);
  gsize offsets[GST_VIDEO_MAX_PLANES] = {0}, rows[GST_VIDEO_MAX_PLANES];
  gint strides[GST_VIDEO_MAX_PLANES] = {0};
  gsize size = 0;
  for (gint p = (gint)n - 1; p >= 0; p--) {
    gint comps[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component(info->finfo, (guint)p, comps);
    rows[p] = GST_VIDEO_FRAME_COMP_HEIGHT(&in, comps[0]);
    strides[p] = GST_VIDEO_FRAME_PLANE_STRIDE(&in, p) + (gint)extra;
    offsets[p] = size + gap;
    size = offsets[p] + rows[p] * (gsize)strides[p];
  }
  GstBuffer *out = gst_buffer_new_allocate(NULL, size, NULL);
  gst_buffer_memset(out, 0, 0xa5, size);
  GstMapInfo map;
  fail_unless(gst_buffer_map(out, &map, GST_MAP_WRITE));
  for (guint p = 0; p < n; p++)
    for (gsize y = 0; y < rows[p]; y++)
      memcpy(map.data + offsets[p] + y * (gsize)strides[p],
             (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&in, p) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&in, p),
             (gsize)GST_VIDEO_FRAME_PLANE_STRIDE(&in, p));
  gst_buffer_unmap(out, &map);
  gst_video_frame_unmap(&in);
  gst_buffer_add_video_meta_full(out, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(info),
                                 GST_VIDEO_INFO_WIDTH(info), GST_VIDEO_INFO_HEIGHT(info), n,
                                 offsets, strides);
  return out;
}

/* Pushes `frames` (taken) with `caps` through appsrc ! `chain` ! appsink;
 * returns the samples, or NULL with *error. */
static GPtrArray *push_through(const gchar *caps, const gchar *chain, GstBuffer **frames,
                               guint count, gchar **error)
{
  gchar *description = g_strdup_printf("appsrc name=src format=time ! %s ! "
                                       "appsink name=sink sync=false wait-on-eos=false", chain);
  GstElement *pipeline = parse(description);
  GstElement *src = child(pipeline, "src"), *sink = child(pipeline, "sink");
  GstCaps *src_caps = gst_caps_from_string(caps);
  fail_unless(src_caps != NULL, "%s", caps);
  g_object_set(src, "caps", src_caps, NULL);
  gst_caps_unref(src_caps);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  for (guint i = 0; i < count; i++) {
    GST_BUFFER_PTS(frames[i]) = i * GST_SECOND / 30;
    gst_app_src_push_buffer(GST_APP_SRC(src), frames[i]);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  *error = wait_end(pipeline, 20);
  GPtrArray *samples = g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref);
  GstSample *sample;
  while (!*error && (sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 0)))
    g_ptr_array_add(samples, sample);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  g_free(description);
  if (*error) {
    g_ptr_array_unref(samples);
    return NULL;
  }
  return samples;
}

static GstSample *push_one(const gchar *caps, const gchar *chain, GstBuffer *frame)
{
  gchar *error = NULL;
  GPtrArray *samples = push_through(caps, chain, &frame, 1, &error);
  fail_unless(samples != NULL, "%s: %s", chain, error);
  fail_unless_equals_int(samples->len, 1);
  GstSample *sample = gst_sample_ref(g_ptr_array_index(samples, 0));
  g_ptr_array_unref(samples);
  return sample;
}

/* The "mean" tensor of a sample npuinfer (channel_mean.onnx) computed. */
static void tensor_means(GstSample *sample, float means[3])
{
  GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(sample));
  fail_unless(meta != NULL, "no tensor meta");
  const GstNpuTensor *mean = gst_npu_tensor_meta_find(meta, "mean");
  fail_unless(mean != NULL);
  GstMapInfo map;
  const float *v = gst_npu_tensor_map(mean, &map);
  fail_unless(v != NULL);
  memcpy(means, v, 3 * sizeof(float));
  gst_npu_tensor_unmap(mean, &map);
}

/* A frame of every format at odd sizes, laid out with long rows, gaps and
 * the planes in reverse order (GstVideoMeta): the VPP, npuinfer and the
 * download read exactly what they read from the default layout. */
GST_START_TEST(test_padded_layouts_in_every_format)
{
  const int sizes[][2] = {{641, 359}, {1, 1}, {37, 5}};
  gchar *model = model_path("channel_mean.onnx");
  gchar *infer_chain = g_strdup_printf("npuinfer model=%s", model);
  for (guint f = 0; f < G_N_ELEMENTS(formats); f++) {
    for (guint s = 0; s < G_N_ELEMENTS(sizes); s++) {
      gchar *source = g_strdup_printf("videotestsrc num-buffers=1 pattern=smpte ! "
                                      "video/x-raw,format=%s,width=%d,height=%d ! "
                                      "appsink name=sink", formats[f], sizes[s][0], sizes[s][1]);
      GstSample *original = only_sample(source);
      GstVideoInfo info;
      fail_unless(gst_video_info_from_caps(&info, gst_sample_get_caps(original)));
      gchar *caps = gst_caps_to_string(gst_sample_get_caps(original));
      GstBuffer *tight = gst_sample_get_buffer(original);
      const gchar *to_rgb = "npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),format=RGB ! "
                            "npudownload";
      GstSample *want = push_one(caps, to_rgb, gst_buffer_ref(tight));
      GstSample *got = push_one(caps, to_rgb, padded_copy(tight, &info, 13, 7));
      fail_unless_equals_int(rgb_difference(want, got), 0);
      /* npuinfer reads the padded frame from system memory as it is */
      float a[3], b[3];
      GstSample *infer_tight = push_one(caps, infer_chain, gst_buffer_ref(tight));
      GstSample *infer_padded = push_one(caps, infer_chain, padded_copy(tight, &info, 64, 5));
      tensor_means(infer_tight, a);
      tensor_means(infer_padded, b);
      for (int c = 0; c < 3; c++)
        fail_unless(a[c] == b[c], "%s %dx%d: npuinfer reads %f padded, %f tight", formats[f],
                    sizes[s][0], sizes[s][1], b[c], a[c]);
      /* up and down again: the same pixels, wherever the planes are */
      GstSample *round_trip = push_one(caps, "npuupload ! npudownload",
                                       padded_copy(tight, &info, 3, 1));
      GstVideoFrame fa, fb;
      fail_unless(gst_video_frame_map(&fa, &info, tight, GST_MAP_READ));
      fail_unless(gst_video_frame_map(&fb, &info, gst_sample_get_buffer(round_trip),
                                      GST_MAP_READ));
      for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); p++) {
        gint comps[GST_VIDEO_MAX_COMPONENTS];
        gst_video_format_info_component(info.finfo, p, comps);
        gint rows = GST_VIDEO_FRAME_COMP_HEIGHT(&fa, comps[0]);
        gint bytes = MIN(GST_VIDEO_FRAME_PLANE_STRIDE(&fa, p), GST_VIDEO_FRAME_PLANE_STRIDE(&fb, p));
        bytes = MIN(bytes, GST_VIDEO_FRAME_COMP_WIDTH(&fa, comps[0]) *
                               GST_VIDEO_FRAME_COMP_PSTRIDE(&fa, comps[0]));
        for (gint y = 0; y < rows; y++)
          fail_unless(memcmp((guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fa, p) +
                                 y * GST_VIDEO_FRAME_PLANE_STRIDE(&fa, p),
                             (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fb, p) +
                                 y * GST_VIDEO_FRAME_PLANE_STRIDE(&fb, p),
                             (gsize)bytes) == 0,
                      "%s %dx%d: plane %u row %d changed on the way", formats[f], sizes[s][0],
                      sizes[s][1], p, y);
      }
      gst_video_frame_unmap(&fa);
      gst_video_frame_unmap(&fb);
      gst_sample_unref(round_trip);
      gst_sample_unref(infer_tight);
      gst_sample_unref(infer_padded);
      gst_sample_unref(want);
      gst_sample_unref(got);
      gst_sample_unref(original);
      g_free(caps);
      g_free(source);
    }
  }
  g_free(infer_chain);
  g_free(model);
}
GST_END_TEST;

/* ---- caps renegotiation mid-stream ---------------------------------------------------- */

/* A solid frame of `format` width x height: the colour videotestsrc gives. */
static GstSample *solid_sample(const gchar *format, int width, int height)
{
  gchar *description = g_strdup_printf(SOLID "video/x-raw,format=%s,width=%d,height=%d,"
                                       "framerate=30/1 ! appsink name=sink",
                                       format, width, height);
  GstSample *sample = only_sample(description);
  g_free(description);
  return sample;
}

/* The RGB pixel at the middle of an RGB sample. */
static void middle_pixel(GstSample *sample, guint8 rgb[3])
{
  GstVideoInfo info;
  fail_unless(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
  GstVideoFrame frame;
  fail_unless(gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ));
  const guint8 *row = (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&frame, 0) +
                      (GST_VIDEO_INFO_HEIGHT(&info) / 2) * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
  memcpy(rgb, row + (GST_VIDEO_INFO_WIDTH(&info) / 2) * 3, 3);
  gst_video_frame_unmap(&frame);
}

static const struct {
  const gchar *format;
  int width, height;
} renegotiated[] = {{"I420", 640, 480}, {"NV12", 1280, 720}, {"RGBx", 640, 480},
                    {"YUY2", 641, 359}, {"I420", 640, 480}};

/* Pushes two frames of each of `renegotiated` through `chain`, the caps
 * changing on a playing pipeline; returns the samples. */
static GPtrArray *renegotiate(const gchar *chain)
{
  gchar *description = g_strdup_printf("appsrc name=src format=time ! %s ! "
                                       "appsink name=sink sync=false", chain);
  GstElement *pipeline = parse(description);
  GstElement *src = child(pipeline, "src"), *sink = child(pipeline, "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  guint pushed = 0;
  for (guint i = 0; i < G_N_ELEMENTS(renegotiated); i++) {
    GstSample *frame = solid_sample(renegotiated[i].format, renegotiated[i].width,
                                    renegotiated[i].height);
    gst_app_src_set_caps(GST_APP_SRC(src), gst_sample_get_caps(frame));
    for (int k = 0; k < 2; k++) {
      GstBuffer *buffer = gst_buffer_copy_deep(gst_sample_get_buffer(frame));
      GST_BUFFER_PTS(buffer) = pushed++ * GST_SECOND / 30;
      fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), buffer), GST_FLOW_OK);
    }
    gst_sample_unref(frame);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GPtrArray *samples = g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref);
  for (guint i = 0; i < pushed; i++) {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
    fail_unless(sample != NULL, "%s: frame %u missing", chain, i);
    g_ptr_array_add(samples, sample);
  }
  gchar *error = wait_end(pipeline, 10);
  fail_unless(error == NULL, "%s: %s", chain, error);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  g_free(description);
  return samples;
}

/* Size and format change twice on a playing upload -> vpp -> download:
 * the output follows (vpp passing through) or stays at the size and format
 * downstream fixed; every frame has the source's colour. */
GST_START_TEST(test_renegotiation_through_the_vpp)
{
  guint8 want[3] = {0x32, 0x78, 0xc8};
  GPtrArray *fixed = renegotiate("npuupload ! npuvpp ! "
                                 "video/x-raw(memory:NPUMemory),format=RGB,width=320,height=240 ! "
                                 "npudownload");
  for (guint i = 0; i < fixed->len; i++) {
    GstSample *sample = g_ptr_array_index(fixed, i);
    GstVideoInfo info;
    fail_unless(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
    fail_unless(GST_VIDEO_INFO_WIDTH(&info) == 320 && GST_VIDEO_INFO_HEIGHT(&info) == 240);
    guint8 rgb[3];
    middle_pixel(sample, rgb);
    for (int c = 0; c < 3; c++)
      fail_unless(abs(rgb[c] - want[c]) <= 3, "frame %u channel %d: %u", i, c, rgb[c]);
  }
  g_ptr_array_unref(fixed);
  /* nothing fixed: each frame leaves at its own size and format */
  GPtrArray *following = renegotiate("npuupload ! npuvpp ! npudownload ! videoconvert ! "
                                     "video/x-raw,format=RGB");
  for (guint i = 0; i < following->len; i++) {
    GstSample *sample = g_ptr_array_index(following, i);
    GstVideoInfo info;
    fail_unless(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
    fail_unless_equals_int(GST_VIDEO_INFO_WIDTH(&info), renegotiated[i / 2].width);
    fail_unless_equals_int(GST_VIDEO_INFO_HEIGHT(&info), renegotiated[i / 2].height);
    guint8 rgb[3];
    middle_pixel(sample, rgb);
    for (int c = 0; c < 3; c++)
      fail_unless(abs(rgb[c] - want[c]) <= 3, "frame %u channel %d: %u", i, c, rgb[c]);
  }
  g_ptr_array_unref(following);
}
GST_END_TEST;

/* npuinfer re-plans on a size change: a model whose axes follow the frame
 * (grey_map) gives a map of each frame's size, rounded up to 32; a fixed
 * model (channel_mean) keeps giving the colour, batches of 4 spanning the
 * changes, from system and from NPU memory. */
GST_START_TEST(test_renegotiation_through_npuinfer)
{
  gchar *grey = model_path("grey_map.onnx");
  gchar *chain = g_strdup_printf("npuinfer model=%s", grey);
  GPtrArray *samples = renegotiate(chain);
  for (guint i = 0; i < samples->len; i++) {
    GstNpuTensorMeta *meta =
        gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(g_ptr_array_index(samples, i)));
    fail_unless(meta != NULL && meta->n_tensors == 1);
    const GstNpuTensor *map = &meta->tensors[0];
    fail_unless_equals_int(map->rank, 4);
    fail_unless_equals_int(map->dims[2], (renegotiated[i / 2].height + 31) / 32 * 32);
    fail_unless_equals_int(map->dims[3], (renegotiated[i / 2].width + 31) / 32 * 32);
  }
  g_ptr_array_unref(samples);
  g_free(chain);
  gchar *mean = model_path("channel_mean.onnx");
  const gchar *uploads[] = {"", "npuupload ! "};
  for (guint u = 0; u < G_N_ELEMENTS(uploads); u++) {
    chain = g_strdup_printf("%s npuinfer model=%s batch-size=4 batch-timeout=100000", uploads[u],
                            mean);
    samples = renegotiate(chain);
    for (guint i = 0; i < samples->len; i++) {
      float means[3];
      tensor_means(g_ptr_array_index(samples, i), means);
      const float want[3] = {0x32 / 255.0f, 0x78 / 255.0f, 0xc8 / 255.0f};
      for (int c = 0; c < 3; c++)
        fail_unless(fabsf(means[c] - want[c]) < 3.0f / 255, "%s frame %u channel %d: %f",
                    uploads[u], i, c, means[c]);
    }
    g_ptr_array_unref(samples);
    g_free(chain);
  }
  g_free(mean);
  g_free(grey);
}
GST_END_TEST;

/* ---- batches at EOS, seeks, queries ----------------------------------------------------- */

/* npuinfer with `streams` appsrc aN -> sink_N, src_N -> appsink sN. */
static GstElement *infer_pipeline(guint streams, const gchar *options)
{
  gchar *model = model_path("channel_mean.onnx");
  GString *description = g_string_new(NULL);
  g_string_printf(description, "npuinfer name=infer model=%s %s ", model, options);
  for (guint p = 0; p < streams; p++)
    g_string_append_printf(description,
                           "appsrc name=a%u format=time caps=video/x-raw,format=RGB,width=16,"
                           "height=16,framerate=30/1 ! infer.sink_%u infer.src_%u ! "
                           "appsink name=s%u sync=false async=false ", p, p, p, p);
  GstElement *pipeline = parse(description->str);
  g_string_free(description, TRUE);
  g_free(model);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  return pipeline;
}

static GstElement *nth(GstElement *pipeline, const gchar *format, guint n)
{
  gchar *name = g_strdup_printf(format, n);
  GstElement *element = child(pipeline, name);
  g_free(name);
  return element;
}

static void push_solid(GstElement *pipeline, guint stream, guint frame)
{
  GstElement *src = nth(pipeline, "a%u", stream);
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, 16 * 16 * 3, NULL);
  gst_buffer_memset(buffer, 0, (guint8)(10 * stream + frame), 16 * 16 * 3);
  GST_BUFFER_PTS(buffer) = frame * GST_SECOND / 30;
  fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), buffer), GST_FLOW_OK);
  gst_object_unref(src);
}

/* Pulls `count` frames of stream `stream` within `seconds`, each with its
 * results (the colour it was pushed with). */
static void pull_inferred(GstElement *pipeline, guint stream, guint first, guint count,
                          guint seconds)
{
  GstElement *sink = nth(pipeline, "s%u", stream);
  for (guint f = first; f < first + count; f++) {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), seconds * GST_SECOND);
    fail_unless(sample != NULL, "stream %u: frame %u not out within %u s", stream, f, seconds);
    fail_unless_equals_uint64(GST_BUFFER_PTS(gst_sample_get_buffer(sample)),
                              f * GST_SECOND / 30);
    float means[3];
    tensor_means(sample, means);
    fail_unless(fabsf(means[0] - (10 * stream + f) / 255.0f) < 1e-4f, "stream %u frame %u: %f",
                stream, f, means[0]);
    gst_sample_unref(sample);
  }
  gst_object_unref(sink);
}

static void end_stream(GstElement *pipeline, guint stream)
{
  GstElement *src = nth(pipeline, "a%u", stream);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  gst_object_unref(src);
}

static void stop(GstElement *pipeline)
{
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

/* Waits until npuinfer's pad sink_<pad> has taken `frames` frames. */
static void wait_frames_queued(GstElement *infer, guint pad, guint64 frames)
{
  gchar *name = g_strdup_printf("sink_%u", pad);
  guint64 taken = 0;
  for (int i = 0; i < 500 && taken < frames; i++) {
    GstStructure *stats = NULL;
    const GstStructure *lane = NULL;
    g_object_get(infer, "stats", &stats, NULL);
    if (gst_structure_get(stats, name, GST_TYPE_STRUCTURE, &lane, NULL)) {
      gst_structure_get_uint64(lane, "frames", &taken);
      gst_structure_free((GstStructure *)lane);
    }
    gst_structure_free(stats);
    if (taken < frames)
      g_usleep(10000);
  }
  fail_unless(taken >= frames, "%s took %" G_GUINT64_FORMAT " frames", name, taken);
  g_free(name);
}

/* batch-size 4 and a batch-timeout of a minute: three streams that end (and
 * a fourth that ends early) leave a partial batch that runs at once, not
 * after the timeout; every frame has its results and EOS follows. */
GST_START_TEST(test_eos_runs_the_partial_batch)
{
  GstElement *pipeline = infer_pipeline(4, "batch-size=4 batch-timeout=60000000");
  push_solid(pipeline, 3, 0);
  end_stream(pipeline, 3); /* ends early: one frame, alone in the batch */
  pull_inferred(pipeline, 3, 0, 1, 5);
  for (guint f = 0; f < 5; f++)
    for (guint s = 0; s < 3; s++)
      push_solid(pipeline, s, f);
  for (guint s = 0; s < 3; s++)
    end_stream(pipeline, s);
  for (guint s = 0; s < 3; s++)
    pull_inferred(pipeline, s, 0, 5, 5);
  gchar *error = wait_end(pipeline, 5);
  fail_unless(error == NULL, "%s", error);
  stop(pipeline);
}
GST_END_TEST;

static gpointer send_drain_query(gpointer pad)
{
  GstQuery *drain = gst_query_new_drain();
  gboolean answered = gst_pad_query(pad, drain);
  gst_query_unref(drain);
  return GINT_TO_POINTER(answered);
}

/* A serialized query (a drain, as a decoder or a caps change sends) on a
 * pad whose frames wait for a batch to fill is answered once they have
 * run, without waiting for the batch-timeout. */
GST_START_TEST(test_drain_query_runs_the_partial_batch)
{
  GstElement *pipeline = infer_pipeline(2, "batch-size=4 batch-timeout=60000000");
  push_solid(pipeline, 0, 0);
  push_solid(pipeline, 0, 1);
  GstElement *infer = child(pipeline, "infer");
  wait_frames_queued(infer, 0, 2);
  GstPad *sink0 = gst_element_get_static_pad(infer, "sink_0");
  /* answered once appsink is drained too: the frames are pulled meanwhile */
  gint64 started = g_get_monotonic_time();
  GThread *query = g_thread_new("drain", send_drain_query, sink0);
  pull_inferred(pipeline, 0, 0, 2, 5);
  fail_unless(g_thread_join(query) != NULL);
  fail_unless(g_get_monotonic_time() - started < 5 * G_USEC_PER_SEC,
              "the drain query waited for the batch timeout");
  /* the pad batches again afterwards */
  for (guint f = 2; f < 6; f++)
    push_solid(pipeline, 0, f);
  pull_inferred(pipeline, 0, 2, 4, 5);
  gst_object_unref(sink0);
  gst_object_unref(infer);
  stop(pipeline);
}
GST_END_TEST;

/* Flushing seeks while three streams' frames wait in a half-full batch
 * (batch-size 4, batch-timeout a minute): frames flow from the new position
 * at once, and the stream still ends. */
GST_START_TEST(test_flushing_seek_mid_batch)
{
  gchar *model = model_path("channel_mean.onnx");
  GString *description = g_string_new(NULL);
  g_string_printf(description, "npuinfer name=infer model=%s batch-size=4 "
                  "batch-timeout=60000000 ", model);
  for (guint p = 0; p < 3; p++)
    g_string_append_printf(description,
                           "videotestsrc num-buffers=90 ! video/x-raw,format=%s,width=32,"
                           "height=24,framerate=30/1 ! infer.sink_%u infer.src_%u ! "
                           "appsink name=s%u sync=false max-buffers=2 ",
                           formats[p * 5], p, p, p);
  GstElement *pipeline = parse(description->str);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstElement *s0 = nth(pipeline, "s%u", 0);
  GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(s0), 10 * GST_SECOND);
  fail_unless(sample != NULL);
  gst_sample_unref(sample);
  const GstClockTime targets[] = {GST_SECOND, 0, GST_SECOND / 3};
  for (guint i = 0; i < G_N_ELEMENTS(targets); i++) {
    fail_unless(gst_element_seek_simple(pipeline, GST_FORMAT_TIME,
                                        GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE, targets[i]));
    for (guint p = 0; p < 3; p++) {
      GstElement *sink = nth(pipeline, "s%u", p);
      sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
      fail_unless(sample != NULL, "seek %u: nothing on stream %u", i, p);
      fail_unless_equals_uint64(GST_BUFFER_PTS(gst_sample_get_buffer(sample)), targets[i]);
      fail_unless(gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(sample)) != NULL);
      gst_sample_unref(sample);
      gst_object_unref(sink);
    }
  }
  /* drain the rest: EOS within a few seconds (the partial batch at the end) */
  for (guint p = 0; p < 3; p++) {
    GstElement *sink = nth(pipeline, "s%u", p);
    while ((sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND)))
      gst_sample_unref(sample);
    fail_unless(gst_app_sink_is_eos(GST_APP_SINK(sink)), "stream %u did not end", p);
    gst_object_unref(sink);
  }
  gchar *error = wait_end(pipeline, 5);
  fail_unless(error == NULL, "%s", error);
  gst_object_unref(s0);
  stop(pipeline);
  g_string_free(description, TRUE);
  g_free(model);
}
GST_END_TEST;

/* Records what leaves a pad: "B" per buffer, "S<start>" per segment. */
static GstPadProbeReturn record_flow(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  GString *log = data;
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
    g_string_append(log, "B");
  } else if (GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) == GST_EVENT_SEGMENT) {
    const GstSegment *segment;
    gst_event_parse_segment(GST_PAD_PROBE_INFO_EVENT(info), &segment);
    g_string_append_printf(log, "S%" G_GUINT64_FORMAT "r%g", segment->start / GST_SECOND,
                           segment->rate);
  }
  return GST_PAD_PROBE_OK;
}

/* Segments (rate, start, base) leave npuinfer unchanged and in their place
 * between the frames, batches or not. */
GST_START_TEST(test_segments_keep_their_place)
{
  GstElement *pipeline = infer_pipeline(2, "batch-size=4 batch-timeout=60000000");
  GstElement *infer = child(pipeline, "infer");
  GstPad *src0 = gst_element_get_static_pad(infer, "src_0");
  GstPad *sink0 = gst_element_get_static_pad(infer, "sink_0");
  GString *log = g_string_new(NULL);
  gst_pad_add_probe(src0, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                    record_flow, log, NULL);
  push_solid(pipeline, 0, 0);
  push_solid(pipeline, 0, 1);
  wait_frames_queued(infer, 0, 2);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  segment.rate = 2.0;
  segment.start = 0;
  segment.base = 5 * GST_SECOND;
  /* appsrc sent its segment first: this one is the stream's second, after
   * two frames waiting for their batch */
  fail_unless(gst_pad_send_event(sink0, gst_event_new_segment(&segment)));
  push_solid(pipeline, 0, 2);
  end_stream(pipeline, 0);
  pull_inferred(pipeline, 0, 0, 3, 5);
  GstElement *s0 = nth(pipeline, "s%u", 0);
  fail_unless(gst_app_sink_try_pull_sample(GST_APP_SINK(s0), GST_SECOND) == NULL);
  fail_unless(gst_app_sink_is_eos(GST_APP_SINK(s0)));
  fail_unless_equals_string(log->str, "S0r1BBS0r2B");
  g_string_free(log, TRUE);
  gst_object_unref(s0);
  gst_object_unref(sink0);
  gst_object_unref(src0);
  gst_object_unref(infer);
  stop(pipeline);
}
GST_END_TEST;

/* Regions of interest through a scaling npuvpp: mapped onto the output
 * (scale, letterbox), params kept, one outside the crop dropped; as
 * videoconvertscale keeps them (it used to drop them). */
static GstSample *frame_with_regions_through(const gchar *chain, gboolean with_crop)
{
  GstBuffer *frame = gst_buffer_new_allocate(NULL, 640 * 480 * 3 / 2, NULL);
  gst_buffer_memset(frame, 0, 128, 640 * 480 * 3 / 2);
  gst_buffer_add_video_meta(frame, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, 640, 480);
  GstVideoRegionOfInterestMeta *car =
      gst_buffer_add_video_region_of_interest_meta(frame, "car", 100, 50, 200, 100);
  car->id = 7;
  gst_video_region_of_interest_meta_add_param(
      car, gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, 0.9, NULL));
  gst_buffer_add_video_region_of_interest_meta(frame, "sign", 600, 400, 30, 60);
  if (with_crop) {
    GstVideoCropMeta *crop = gst_buffer_add_video_crop_meta(frame);
    crop->x = 0;
    crop->y = 0;
    crop->width = 320;
    crop->height = 240;
  }
  return push_one("video/x-raw,format=NV12,width=640,height=480,framerate=30/1", chain, frame);
}

/* `regions` regions on the sample, the car (id 7) at x, y, w x h with its
 * params. */
static void expect_car(GstSample *sample, guint regions, guint x, guint y, guint w, guint h)
{
  GstBuffer *buffer = gst_sample_get_buffer(sample);
  fail_unless_equals_int(gst_buffer_get_n_meta(buffer, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE),
                         regions);
  GstVideoRegionOfInterestMeta *car = gst_buffer_get_video_region_of_interest_meta_id(buffer, 7);
  fail_unless(car != NULL && car->roi_type == g_quark_from_string("car"));
  fail_unless(car->x == x && car->y == y && car->w == w && car->h == h,
              "car at %u,%u %ux%u, expected %u,%u %ux%u", car->x, car->y, car->w, car->h, x, y,
              w, h);
  GstStructure *detection = gst_video_region_of_interest_meta_get_param(car, "detection");
  gdouble confidence = 0;
  fail_unless(detection && gst_structure_get_double(detection, "confidence", &confidence));
  fail_unless(confidence == 0.9);
}

GST_START_TEST(test_regions_of_interest_follow_the_scale)
{
  GstSample *sample = frame_with_regions_through(
      "npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),format=NV12,width=320,height=240 ! "
      "npudownload", FALSE);
  expect_car(sample, 2, 50, 25, 100, 50);
  gst_sample_unref(sample);
  /* letterboxed into 320x320: scale 1/2, 40 rows of border above */
  sample = frame_with_regions_through(
      "npuupload ! npuvpp add-borders=true ! "
      "video/x-raw(memory:NPUMemory),format=NV12,width=320,height=320 ! npudownload", FALSE);
  expect_car(sample, 2, 50, 65, 100, 50);
  gst_sample_unref(sample);
  /* the top-left quarter cropped (GstVideoCropMeta) and scaled by 1/2: the
   * sign lies outside it */
  sample = frame_with_regions_through(
      "npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),format=NV12,width=160,height=120 ! "
      "npudownload", TRUE);
  expect_car(sample, 1, 50, 25, 100, 50);
  gst_sample_unref(sample);
}
GST_END_TEST;

/* A tensor meta's frame -> model-input mapping, after npuvpp has scaled and
 * letterboxed the frame, starts from the new frame: model = new frame *
 * scale' + offset' with new frame = frame / 2 + (0, 40). */
GST_START_TEST(test_tensor_meta_mapping_follows_the_scale)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *infer = g_strdup_printf("npuinfer model=%s", model);
  gchar *infer_then_vpp = g_strdup_printf(
      "npuinfer model=%s ! npuupload ! npuvpp add-borders=true ! "
      "video/x-raw(memory:NPUMemory),format=NV12,width=320,height=320 ! npudownload", model);
  GstNpuTensorMeta *before, *after;
  GstSample *a = frame_with_regions_through(infer, FALSE);
  GstSample *b = frame_with_regions_through(infer_then_vpp, FALSE);
  before = gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(a));
  after = gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(b));
  fail_unless(before && after && before->scale_x != 0);
  fail_unless(fabsf(after->scale_x - 2 * before->scale_x) < 1e-6f &&
              fabsf(after->scale_y - 2 * before->scale_y) < 1e-6f);
  fail_unless(fabsf(after->offset_x - before->offset_x) < 1e-4f &&
              fabsf(after->offset_y - (before->offset_y - 40 * after->scale_y)) < 1e-4f,
              "offsets %f, %f from %f, %f", after->offset_x, after->offset_y, before->offset_x,
              before->offset_y);
  gst_sample_unref(a);
  gst_sample_unref(b);
  g_free(infer_then_vpp);
  g_free(infer);
  g_free(model);
}
GST_END_TEST;

/* ---- state changes ---------------------------------------------------------------------- */

/* PLAYING -> PAUSED -> PLAYING 20 times with frames in flight through every
 * element, then NULL: frames flow after each resume, no error. */
GST_START_TEST(test_pause_resume_cycles)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      "npuinfer name=infer model=%s batch-size=2 batch-timeout=5000 "
      "videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48,framerate=100/1 ! "
      "npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),format=RGBx,width=32,height=24 ! "
      "infer.sink_0 infer.src_0 ! npudownload ! appsink name=s0 sync=false max-buffers=4 drop=true "
      "videotestsrc is-live=true ! video/x-raw,format=I420,width=48,height=32,framerate=100/1 ! "
      "infer.sink_1 infer.src_1 ! appsink name=s1 sync=false max-buffers=4 drop=true", model);
  GstElement *pipeline = parse(description);
  GstElement *s0 = nth(pipeline, "s%u", 0), *s1 = nth(pipeline, "s%u", 1);
  GstElement *sinks[] = {s0, s1};
  for (int i = 0; i < 20; i++) {
    fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    for (int k = 0; k < 2; k++) {
      GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sinks[k]), 5 * GST_SECOND);
      fail_unless(sample != NULL, "cycle %d: no frame on stream %d after resuming", i, k);
      fail_unless(gst_buffer_get_npu_tensor_meta(gst_sample_get_buffer(sample)) != NULL);
      gst_sample_unref(sample);
    }
    fail_unless(gst_element_set_state(pipeline, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
    fail_unless(gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND) !=
                GST_STATE_CHANGE_FAILURE);
    for (int k = 0; k < 2; k++) { /* what came before the pause */
      GstSample *old;
      while ((old = gst_app_sink_try_pull_sample(GST_APP_SINK(sinks[k]), 0)))
        gst_sample_unref(old);
    }
  }
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
  fail_unless(msg == NULL, "%" GST_PTR_FORMAT, msg);
  gst_object_unref(bus);
  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_NULL),
                         GST_STATE_CHANGE_SUCCESS);
  gst_object_unref(s0);
  gst_object_unref(s1);
  gst_object_unref(pipeline);
  g_free(description);
  g_free(model);
}
GST_END_TEST;

/* ---- bad input -------------------------------------------------------------------------- */

/* A 64x48 NV12 frame whose video meta puts the chroma at `uv_offset` with
 * rows of `stride`, in a buffer of `size` bytes. */
static GstBuffer *nv12_with_meta(GstVideoFormat format, gint stride, gsize uv_offset, gsize size)
{
  gsize offsets[GST_VIDEO_MAX_PLANES] = {0, uv_offset};
  gint strides[GST_VIDEO_MAX_PLANES] = {stride, stride};
  GstBuffer *frame = gst_buffer_new_allocate(NULL, size, NULL);
  gst_buffer_memset(frame, 0, 128, size);
  gst_buffer_add_video_meta_full(frame, GST_VIDEO_FRAME_FLAG_NONE, format, 64, 48, 2, offsets,
                                 strides);
  return frame;
}

#define NV12_CAPS "video/x-raw,format=NV12,width=64,height=48,framerate=30/1"
#define NV12_SIZE (64 * 48 * 3 / 2)

static void expect_push_error(const gchar *caps, const gchar *chain, GstBuffer *frame,
                              const gchar *expected)
{
  gchar *error = NULL;
  GPtrArray *samples = push_through(caps, chain, &frame, 1, &error);
  fail_unless(samples == NULL, "%s took a bad frame (expected: %s)", chain, expected);
  fail_unless(strstr(error, expected) != NULL, "%s: '%s' where '%s' was expected", chain, error,
              expected);
  g_free(error);
}

/* npuinfer reads frames from system memory as their video meta says: a
 * buffer smaller than the meta says, or a meta that contradicts the caps,
 * is an element error that says so (the VPP would read past the frame). */
GST_START_TEST(test_npuinfer_refuses_lying_video_metas)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *chain = g_strdup_printf("npuinfer model=%s", model);
  expect_push_error(NV12_CAPS, chain, nv12_with_meta(GST_VIDEO_FORMAT_NV12, 80, 80 * 48, NV12_SIZE),
                    "smaller than its video meta");
  expect_push_error(NV12_CAPS, chain,
                    nv12_with_meta(GST_VIDEO_FORMAT_NV12, 64, 64 * 48 + 1000, NV12_SIZE),
                    "smaller than its video meta");
  expect_push_error(NV12_CAPS, chain, nv12_with_meta(GST_VIDEO_FORMAT_NV21, 64, 64 * 48, NV12_SIZE),
                    "does not match the caps");
  expect_push_error(NV12_CAPS, chain, nv12_with_meta(GST_VIDEO_FORMAT_NV12, 32, 64 * 48, NV12_SIZE),
                    "does not match the caps");
  expect_push_error(NV12_CAPS, chain, gst_buffer_new_allocate(NULL, 100, NULL),
                    "smaller than its caps");
  /* the same frame, whole, goes through */
  GstSample *sample =
      push_one(NV12_CAPS, chain, nv12_with_meta(GST_VIDEO_FORMAT_NV12, 80, 80 * 48, 80 * 72));
  gst_sample_unref(sample);
  g_free(chain);
  g_free(model);
}
GST_END_TEST;

/* Replaces the video meta of frames in NPU memory by one whose chroma lies
 * far past the end of the memory. */
static GstPadProbeReturn lie_about_layout(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)data;
  GstBuffer *buffer = gst_buffer_make_writable(GST_PAD_PROBE_INFO_BUFFER(info));
  GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
  if (!meta) {
    gsize offsets[GST_VIDEO_MAX_PLANES] = {0, 64 * 48};
    gint strides[GST_VIDEO_MAX_PLANES] = {64, 64};
    meta = gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE,
                                          GST_VIDEO_FORMAT_NV12, 64, 48, 2, offsets, strides);
  }
  meta->offset[1] = 1 << 20;
  GST_PAD_PROBE_INFO_DATA(info) = buffer;
  return GST_PAD_PROBE_OK;
}

/* An NPU frame whose video meta puts a plane past its memory reaches npuvpp,
 * npuinfer and npudownload: each posts an element error saying so, and
 * none hands it on (downstream would read past the memory). */
GST_START_TEST(test_lying_meta_on_npu_memory)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *infer = g_strdup_printf("npuinfer model=%s", model);
  const gchar *nexts[] = {"npuvpp ! video/x-raw(memory:NPUMemory),format=RGB ! "
                          "npudownload",
                          infer, "npudownload",
                          "npudownload ! video/x-raw(memory:DMABuf)"};
  for (guint i = 0; i < G_N_ELEMENTS(nexts); i++) {
    gchar *description = g_strdup_printf(
        "videotestsrc num-buffers=2 ! " NV12_CAPS " ! npuupload name=up ! %s ! "
        "appsink name=sink sync=false", nexts[i]);
    GstElement *pipeline = parse(description);
    GstElement *up = child(pipeline, "up");
    GstPad *up_src = gst_element_get_static_pad(up, "src");
    gst_pad_add_probe(up_src, GST_PAD_PROBE_TYPE_BUFFER, lie_about_layout, NULL, NULL);
    GstElement *appsink = child(pipeline, "sink");
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    gchar *error = wait_end(pipeline, 10);
    fail_unless(error != NULL, "%s: no error", nexts[i]);
    fail_unless(strstr(error, "smaller than its video meta") != NULL, "%s: '%s'", nexts[i], error);
    fail_unless(gst_app_sink_try_pull_sample(GST_APP_SINK(appsink), 0) == NULL,
                "%s handed the frame on", nexts[i]);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    g_free(error);
    gst_object_unref(appsink);
    gst_object_unref(up_src);
    gst_object_unref(up);
    gst_object_unref(pipeline);
    g_free(description);
  }
  g_free(infer);
  g_free(model);
}
GST_END_TEST;

/* Caps no element takes: refused when linking, or an error naming the
 * negotiation; never a hang. */
GST_START_TEST(test_wrong_caps)
{
  gchar *model = model_path("channel_mean.onnx");
  const gchar *chains[] = {"npuupload", "npuupload ! npuvpp", "npuinfer model=%s",
                           "npuupload ! npudownload"};
  const gchar *bad_caps[] = {"video/x-raw,format=P010_10LE,width=64,height=48,framerate=30/1",
                             "audio/x-raw,format=S16LE,rate=8000,channels=1,layout=interleaved"};
  for (guint c = 0; c < G_N_ELEMENTS(chains); c++) {
    for (guint k = 0; k < G_N_ELEMENTS(bad_caps); k++) {
      gchar *chain = g_strdup_printf(chains[c], model);
      GstBuffer *frame = gst_buffer_new_allocate(NULL, 64 * 48 * 3, NULL);
      expect_push_error(bad_caps[k], chain, frame, "not-negotiated");
      g_free(chain);
    }
  }
  g_free(model);
}
GST_END_TEST;

/* Downstream refuses what npuupload, npuinfer or npudownload must send (a
 * format or size they do not convert to): a not-negotiated error, the
 * pipeline stops cleanly. (npuvpp writes any size and format it links to.) */
GST_START_TEST(test_downstream_not_negotiated)
{
  gchar *model = model_path("channel_mean.onnx");
  const gchar *chains[] = {
      "npuupload ! video/x-raw(memory:NPUMemory),format=RGB",
      "npuinfer model=%s ! video/x-raw,format=RGB",
      "npuupload ! npudownload ! video/x-raw,width=10"};
  for (guint c = 0; c < G_N_ELEMENTS(chains); c++) {
    gchar *chain = g_strdup_printf(chains[c], model);
    GstBuffer *frame = gst_buffer_new_allocate(NULL, NV12_SIZE, NULL);
    expect_push_error(NV12_CAPS, chain, frame, "not-negotiated");
    g_free(chain);
  }
  g_free(model);
}
GST_END_TEST;

/* Elements between ours that decline allocation queries (no pool
 * proposed anywhere): every element allocates its own, frames are right. */
GST_START_TEST(test_allocation_declined)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      SOLID "video/x-raw,format=NV12,width=64,height=48 ! identity drop-allocation=true ! "
      "npuupload ! identity drop-allocation=true ! npuvpp ! "
      "video/x-raw(memory:NPUMemory),format=RGB,width=32,height=24 ! "
      "identity drop-allocation=true ! npuinfer model=%s ! identity drop-allocation=true ! "
      "npudownload ! identity drop-allocation=true ! appsink name=sink", model);
  GstSample *sample = only_sample(description);
  guint8 rgb[3];
  middle_pixel(sample, rgb);
  fail_unless(abs(rgb[0] - 0x32) <= 3 && abs(rgb[1] - 0x78) <= 3 && abs(rgb[2] - 0xc8) <= 3,
              "%u %u %u", rgb[0], rgb[1], rgb[2]);
  float means[3];
  tensor_means(sample, means);
  fail_unless(fabsf(means[1] - 0x78 / 255.0f) < 3.0f / 255);
  gst_sample_unref(sample);
  g_free(description);
  g_free(model);
}
GST_END_TEST;

/* Buffers of system memory under caps that say NPU memory: npuvpp refuses
 * them with an error; npudownload and npuinfer read them as they are. */
GST_START_TEST(test_system_memory_under_npu_caps)
{
  const gchar *caps = "video/x-raw(memory:NPUMemory),format=RGB,width=16,height=16,"
                      "framerate=30/1";
  GstBuffer *frame = gst_buffer_new_allocate(NULL, 16 * 16 * 3, NULL);
  gst_buffer_memset(frame, 0, 77, 16 * 16 * 3);
  expect_push_error(caps, "npuvpp ! video/x-raw(memory:NPUMemory),format=BGRx ! npudownload",
                    gst_buffer_ref(frame), "not NPU memory");
  GstSample *sample = push_one(caps, "npudownload", gst_buffer_ref(frame));
  guint8 rgb[3];
  middle_pixel(sample, rgb);
  fail_unless(rgb[0] == 77 && rgb[1] == 77 && rgb[2] == 77);
  gst_sample_unref(sample);
  gchar *model = model_path("channel_mean.onnx");
  gchar *chain = g_strdup_printf("npuinfer model=%s", model);
  sample = push_one(caps, chain, frame);
  float means[3];
  tensor_means(sample, means);
  fail_unless(fabsf(means[0] - 77 / 255.0f) < 1e-4f);
  gst_sample_unref(sample);
  g_free(chain);
  g_free(model);
}
GST_END_TEST;

/* The index of a second device (the first that is not the default one,
 * whose index goes to *first); -1 where there is none. */
static gint second_device(gint *first)
{
  npu_device *device;
  npu_device_properties props;
  fail_unless(npu_device_open_default(&device) == NPU_OK);
  fail_unless(npu_device_properties_of(device, &props) == NPU_OK);
  *first = (gint)props.index;
  npu_device_release(device);
  uint32_t count = 0;
  npu_device_count(&count);
  for (uint32_t i = 0; i < count; i++)
    if ((gint)i != *first)
      return (gint)i;
  return -1;
}

/* Frames in NPU memory of another device: npuupload and npuinfer read them
 * (a copy), npudownload hands them on readable, npuvpp refuses them with an
 * error naming the device mismatch. */
GST_START_TEST(test_npu_memory_of_another_device)
{
  gint first, other = second_device(&first);
  if (other < 0) {
    GST_INFO("one device only: nothing to mix");
    return;
  }
  gchar *model = model_path("channel_mean.onnx");
  const gchar *tails[] = {"npuupload device-id=%1$d ! npudownload device-id=%1$d",
                          "npuinfer device-id=%1$d model=%2$s ! npudownload device-id=%1$d",
                          "npudownload device-id=%1$d"};
  for (guint i = 0; i < G_N_ELEMENTS(tails); i++) {
    gchar *tail = g_strdup_printf(tails[i], first, model);
    gchar *description = g_strdup_printf(SOLID "video/x-raw,format=RGB,width=16,height=16 ! "
                                         "npuupload device-id=%d ! %s ! appsink name=sink",
                                         other, tail);
    GstSample *sample = only_sample(description);
    guint8 rgb[3];
    middle_pixel(sample, rgb);
    fail_unless(rgb[0] == 0x32 && rgb[1] == 0x78 && rgb[2] == 0xc8, "%s: %u %u %u", tail, rgb[0],
                rgb[1], rgb[2]);
    gst_sample_unref(sample);
    g_free(description);
    g_free(tail);
  }
  gchar *vpp = g_strdup_printf(SOLID "video/x-raw,format=RGB,width=16,height=16 ! "
                               "npuupload device-id=%d ! npuvpp device-id=%d ! "
                               "video/x-raw(memory:NPUMemory),format=BGRx ! npudownload "
                               "device-id=%d ! fakesink", other, first, first);
  expect_error(vpp, "not NPU memory of this device");
  g_free(vpp);
  g_free(model);
}
GST_END_TEST;

/* ---- properties ------------------------------------------------------------------------- */

static guint count_warnings(GstBus *bus, const gchar *expected)
{
  guint count = 0;
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING))) {
    GError *err;
    gst_message_parse_warning(msg, &err, NULL);
    fail_unless(strstr(err->message, expected) != NULL, "warning '%s'", err->message);
    count++;
    g_error_free(err);
    gst_message_unref(msg);
  }
  return count;
}

/* Properties only read when the element starts (GST_PARAM_MUTABLE_READY),
 * set while it plays: refused with a warning naming them, the value kept;
 * those documented as changeable while playing take effect. */
GST_START_TEST(test_properties_set_while_playing)
{
  gchar *model = model_path("channel_mean.onnx");
  gchar *description = g_strdup_printf(
      "videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48,framerate=100/1 ! "
      "npuupload name=up ! npuvpp name=vpp ! "
      "video/x-raw(memory:NPUMemory),format=RGB,width=64,height=64 ! "
      "npuinfer name=infer model=%s ! npudownload name=down ! "
      "appsink name=sink sync=false max-buffers=2 drop=true", model);
  GstElement *pipeline = parse(description);
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstElement *sink = child(pipeline, "sink");
  GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
  fail_unless(sample != NULL);
  gst_sample_unref(sample);
  const gchar *elements[] = {"up", "vpp", "infer", "down"};
  guint refused = 0;
  for (guint e = 0; e < G_N_ELEMENTS(elements); e++) {
    GstElement *element = child(pipeline, elements[e]);
    guint count;
    GParamSpec **specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(element), &count);
    for (guint k = 0; k < count; k++) {
      GParamSpec *spec = specs[k];
      if (!(spec->flags & GST_PARAM_MUTABLE_READY) || !(spec->flags & G_PARAM_WRITABLE))
        continue;
      GValue before = G_VALUE_INIT, value = G_VALUE_INIT, after = G_VALUE_INIT;
      g_value_init(&before, spec->value_type);
      g_value_init(&value, spec->value_type);
      g_value_init(&after, spec->value_type);
      g_object_get_property(G_OBJECT(element), spec->name, &before);
      /* another valid value: the maximum of numbers, the other boolean */
      g_param_value_set_default(spec, &value);
      if (G_IS_PARAM_SPEC_INT(spec))
        g_value_set_int(&value, G_PARAM_SPEC_INT(spec)->minimum + 1);
      else if (G_IS_PARAM_SPEC_UINT(spec))
        g_value_set_uint(&value, G_PARAM_SPEC_UINT(spec)->minimum + 1);
      else if (G_IS_PARAM_SPEC_DOUBLE(spec))
        g_value_set_double(&value, 0.5);
      else if (G_IS_PARAM_SPEC_BOOLEAN(spec))
        g_value_set_boolean(&value, !g_value_get_boolean(&before));
      else if (G_IS_PARAM_SPEC_STRING(spec))
        g_value_set_string(&value, "0.5");
      else if (G_IS_PARAM_SPEC_ENUM(spec))
        g_value_set_enum(&value, G_PARAM_SPEC_ENUM(spec)->enum_class->values[1].value);
      g_object_set_property(G_OBJECT(element), spec->name, &value);
      g_object_get_property(G_OBJECT(element), spec->name, &after);
      fail_unless(g_param_values_cmp(spec, &before, &after) == 0,
                  "%s.%s changed while playing", elements[e], spec->name);
      fail_unless_equals_int(count_warnings(bus, spec->name), 1);
      refused++;
      g_value_unset(&before);
      g_value_unset(&value);
      g_value_unset(&after);
    }
    g_free(specs);
    gst_object_unref(element);
  }
  fail_unless(refused >= 13, "only %u properties are start-only", refused);
  /* changeable while playing: npuvpp's borders and method, npuinfer's interval */
  GstElement *vpp = child(pipeline, "vpp");
  g_object_set(vpp, "add-borders", TRUE, "border-color", 0xff00ff00, "method", 1, NULL);
  gboolean bordered = FALSE;
  for (int i = 0; i < 20 && !bordered; i++) {
    sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
    fail_unless(sample != NULL);
    GstMapInfo map;
    gst_buffer_map(gst_sample_get_buffer(sample), &map, GST_MAP_READ);
    bordered = map.data[0] == 0 && map.data[1] == 0xff && map.data[2] == 0;
    gst_buffer_unmap(gst_sample_get_buffer(sample), &map);
    gst_sample_unref(sample);
  }
  fail_unless(bordered, "add-borders set while playing did not take effect");
  fail_unless_equals_int(count_warnings(bus, ""), 0);
  GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  fail_unless(msg == NULL, "%" GST_PTR_FORMAT, msg);
  gst_object_unref(vpp);
  gst_object_unref(sink);
  gst_object_unref(bus);
  stop(pipeline);
  g_free(description);
  g_free(model);
}
GST_END_TEST;

/* What gst-inspect-1.0 shows: for the four elements, every property of
 * their own has a nick and a blurb, and its default is what a new element
 * reports; numeric ranges hold the default. gst-inspect-1.0 itself prints
 * each without a warning. */
GST_START_TEST(test_inspect_completeness)
{
  const gchar *names[] = {"npuupload", "npuvpp", "npuinfer", "npudownload"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    GstElement *element = gst_element_factory_make(names[i], NULL);
    fail_unless(element != NULL);
    guint count;
    GParamSpec **specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(element), &count);
    for (guint k = 0; k < count; k++) {
      GParamSpec *spec = specs[k];
      if (spec->owner_type == GST_TYPE_ELEMENT || spec->owner_type == GST_TYPE_OBJECT ||
          g_type_is_a(GST_TYPE_BASE_TRANSFORM, spec->owner_type))
        continue;
      const gchar *nick = g_param_spec_get_nick(spec), *blurb = g_param_spec_get_blurb(spec);
      fail_unless(nick && *nick && g_strcmp0(nick, spec->name) != 0, "%s.%s: nick '%s'",
                  names[i], spec->name, nick);
      fail_unless(blurb && strlen(blurb) > 15, "%s.%s: blurb", names[i], spec->name);
      if (!(spec->flags & G_PARAM_READABLE) || G_IS_PARAM_SPEC_BOXED(spec))
        continue;
      GValue value = G_VALUE_INIT;
      g_value_init(&value, spec->value_type);
      g_object_get_property(G_OBJECT(element), spec->name, &value);
      const GValue *def = g_param_spec_get_default_value(spec);
      gboolean same = G_IS_PARAM_SPEC_STRING(spec)
                          ? g_strcmp0(g_value_get_string(def), g_value_get_string(&value)) == 0
                          : g_param_values_cmp(spec, def, &value) == 0;
      gchar *shown = g_strdup_value_contents(&value), *declared = g_strdup_value_contents(def);
      fail_unless(same, "%s.%s: gst-inspect says the default is %s, a new element has %s",
                  names[i], spec->name, declared, shown);
      g_free(shown);
      g_free(declared);
      g_value_unset(&value);
    }
    g_free(specs);
    gst_object_unref(element);
    const gchar *argv[] = {"gst-inspect-1.0", names[i], NULL};
    gchar *out = NULL, *err = NULL;
    gint status = 0;
    fail_unless(g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                             &err, &status, NULL));
    fail_unless(WIFEXITED(status) && WEXITSTATUS(status) == 0, "gst-inspect-1.0 %s: %s",
                names[i], err);
    fail_unless(strstr(out, "Pad Templates") && !strstr(err, "WARNING") &&
                !strstr(err, "CRITICAL"), "gst-inspect-1.0 %s: %s", names[i], err);
    g_free(out);
    g_free(err);
  }
}
GST_END_TEST;

static Suite *robust_suite(void)
{
  Suite *s = suite_create("npu-robust");
  TCase *formats_case = tcase_create("formats");
  tcase_set_timeout(formats_case, 120);
  suite_add_tcase(s, formats_case);
  tcase_add_test(formats_case, test_every_format_at_odd_sizes);
  tcase_add_test(formats_case, test_every_format_pair);
  tcase_add_test(formats_case, test_padded_layouts_in_every_format);
  TCase *streams = tcase_create("streams");
  tcase_set_timeout(streams, 60);
  suite_add_tcase(s, streams);
  tcase_add_test(streams, test_renegotiation_through_the_vpp);
  tcase_add_test(streams, test_renegotiation_through_npuinfer);
  tcase_add_test(streams, test_eos_runs_the_partial_batch);
  tcase_add_test(streams, test_drain_query_runs_the_partial_batch);
  tcase_add_test(streams, test_flushing_seek_mid_batch);
  tcase_add_test(streams, test_segments_keep_their_place);
  tcase_add_test(streams, test_pause_resume_cycles);
  tcase_add_test(streams, test_regions_of_interest_follow_the_scale);
  tcase_add_test(streams, test_tensor_meta_mapping_follows_the_scale);
  TCase *bad = tcase_create("bad-input");
  tcase_set_timeout(bad, 60);
  suite_add_tcase(s, bad);
  tcase_add_test(bad, test_npuinfer_refuses_lying_video_metas);
  tcase_add_test(bad, test_lying_meta_on_npu_memory);
  tcase_add_test(bad, test_wrong_caps);
  tcase_add_test(bad, test_downstream_not_negotiated);
  tcase_add_test(bad, test_allocation_declined);
  tcase_add_test(bad, test_system_memory_under_npu_caps);
  tcase_add_test(bad, test_npu_memory_of_another_device);
  TCase *props = tcase_create("properties");
  tcase_set_timeout(props, 60);
  suite_add_tcase(s, props);
  tcase_add_test(props, test_properties_set_while_playing);
  tcase_add_test(props, test_inspect_completeness);
  return s;
}

GST_CHECK_MAIN(robust);
