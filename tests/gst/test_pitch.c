/* Row pitch: NPU pools lay frames out with strides and plane offsets rounded
 * up to the device's row alignment (NPU_CPU_ROW_ALIGNMENT, set by meson: 256
 * for 100-pixel-wide frames, whose natural strides are not multiples of it;
 * unset, the CPU's default of 4 leaves GStreamer's layouts as they are).
 * Frames go through npuupload ! npudownload, and npuvpp, and must arrive
 * with their visible pixels byte for byte, with a GstVideoMeta giving the
 * aligned strides, and (NPU_CPU_DEVICE_MEMORY=opaque: no import, no mapping
 * in place) copied with one pitched copy per plane. */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "element_stats.h"

#define WIDTH 100
#define HEIGHT 31 /* odd: chroma planes round their rows up */
#define FRAMES 3

static guint row_alignment(void)
{
  const gchar *text = g_getenv("NPU_CPU_ROW_ALIGNMENT");
  return text ? (guint)g_ascii_strtoull(text, NULL, 10) : 4;
}

static gboolean opaque_memory(void)
{
  return g_strcmp0(g_getenv("NPU_CPU_DEVICE_MEMORY"), "opaque") == 0;
}

static gsize round_up(gsize value, gsize alignment)
{
  return (value + alignment - 1) / alignment * alignment;
}

/* The visible bytes of plane `p`'s rows. Plane p holds component p first
 * in the formats tested here (RGB, BGR, NV12, I420). */
static void plane_size(const GstVideoInfo *info, guint p, gsize *row_bytes, guint *rows)
{
  *row_bytes = (gsize)GST_VIDEO_INFO_COMP_PSTRIDE(info, p) * GST_VIDEO_INFO_COMP_WIDTH(info, p);
  *rows = GST_VIDEO_INFO_COMP_HEIGHT(info, p);
}

static guint8 pattern_byte(guint frame, guint plane, gsize row, gsize column)
{
  return (guint8)((frame * 31 + plane * 67 + row * 13 + column * 7) % 251);
}

/* A frame in the caps' default layout, no video meta, every byte of the
 * visible rows from pattern_byte(). */
static GstBuffer *make_frame(const GstVideoInfo *info, guint frame)
{
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(info), NULL);
  GstMapInfo map;
  fail_unless(gst_buffer_map(buffer, &map, GST_MAP_WRITE));
  memset(map.data, 0xEE, map.size);
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(info); p++) {
    gsize row_bytes;
    guint rows;
    plane_size(info, p, &row_bytes, &rows);
    for (guint y = 0; y < rows; y++)
      for (gsize x = 0; x < row_bytes; x++)
        map.data[info->offset[p] + y * (gsize)info->stride[p] + x] = pattern_byte(frame, p, y, x);
  }
  gst_buffer_unmap(buffer, &map);
  GST_BUFFER_PTS(buffer) = frame * GST_SECOND / 30;
  return buffer;
}

/* The visible bytes of `buffer` (mapped by its video meta, or by `info`)
 * equal make_frame()'s; `swap_rb`: packed RGB that went out as BGR. */
static void check_frame(const GstVideoInfo *info, GstBuffer *buffer, guint frame,
                        gboolean swap_rb)
{
  GstVideoFrame out;
  fail_unless(gst_video_frame_map(&out, info, buffer, GST_MAP_READ));
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(info); p++) {
    gsize row_bytes;
    guint rows;
    plane_size(info, p, &row_bytes, &rows);
    const guint8 *data = GST_VIDEO_FRAME_PLANE_DATA(&out, p);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(&out, p);
    for (guint y = 0; y < rows; y++)
      for (gsize x = 0; x < row_bytes; x++) {
        gsize source_x = swap_rb ? x - x % 3 + (2 - x % 3) : x;
        guint8 expected = pattern_byte(frame, p, y, source_x);
        guint8 got = data[y * (gsize)stride + x];
        if (got != expected)
          fail("frame %u plane %u row %u byte %" G_GSIZE_FORMAT ": %u, expected %u", frame, p, y,
               x, got, expected);
      }
  }
  gst_video_frame_unmap(&out);
}

/* The video meta of an NPU pool frame: every stride the natural one rounded
 * up to the alignment, every plane starting at a multiple of it. */
static void check_aligned_meta(const GstVideoInfo *natural, const GstVideoMeta *meta)
{
  guint alignment = row_alignment();
  fail_unless(meta != NULL, "no video meta on the pool's frame");
  fail_unless_equals_int(meta->n_planes, GST_VIDEO_INFO_N_PLANES(natural));
  for (guint p = 0; p < meta->n_planes; p++) {
    fail_unless_equals_int(meta->stride[p], round_up((gsize)natural->stride[p], alignment));
    fail_unless_equals_uint64(meta->offset[p] % alignment, 0);
    fail_unless_equals_int(meta->alignment.stride_align[p] + 1, MAX(alignment, 1));
  }
  if (alignment == 4)
    for (guint p = 0; p < meta->n_planes; p++) { /* the default changes nothing */
      fail_unless_equals_int(meta->stride[p], natural->stride[p]);
      fail_unless_equals_uint64(meta->offset[p], natural->offset[p]);
    }
}

static GstPadProbeReturn keep_meta(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  GstVideoMeta *kept = data;
  GstVideoMeta *meta = gst_buffer_get_video_meta(GST_PAD_PROBE_INFO_BUFFER(info));
  if (meta && kept->n_planes == 0)
    *kept = *meta;
  return GST_PAD_PROBE_OK;
}

/* Pushes FRAMES frames of `format` through `middle` (between appsrc and
 * appsink, with an element named `probe`, if any, whose sink pad sees NPU
 * pool frames) and checks every frame that comes out; returns the pipeline
 * (stopped) for its stats. */
static GstElement *run_frames(GstVideoFormat format, const gchar *middle, const gchar *probe,
                              const gchar *out_format, gboolean swap_rb)
{
  GstVideoInfo info, out_info;
  gst_video_info_set_format(&info, format, WIDTH, HEIGHT);
  gst_video_info_set_format(&out_info,
                            out_format ? gst_video_format_from_string(out_format) : format,
                            WIDTH, HEIGHT);
  GstCaps *caps = gst_video_info_to_caps(&info);
  gchar *caps_text = gst_caps_to_string(caps);
  gchar *description = g_strdup_printf("appsrc name=src format=time caps=\"%s\" ! %s ! "
                                       "appsink name=sink sync=false",
                                       caps_text, middle);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  fail_unless(pipeline != NULL, "%s: %s", description, error ? error->message : "?");
  g_free(description);
  g_free(caps_text);
  gst_caps_unref(caps);

  GstVideoMeta pool_meta = {0};
  if (probe) {
    GstElement *probed = gst_bin_get_by_name(GST_BIN(pipeline), probe);
    GstPad *pad = gst_element_get_static_pad(probed, "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, keep_meta, &pool_meta, NULL);
    gst_object_unref(pad);
    gst_object_unref(probed);
  }

  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_PLAYING),
                         GST_STATE_CHANGE_ASYNC);
  for (guint f = 0; f < FRAMES; f++)
    fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), make_frame(&info, f)),
                           GST_FLOW_OK);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  for (guint f = 0; f < FRAMES; f++) {
    GstSample *sample = gst_app_sink_pull_sample(GST_APP_SINK(sink));
    fail_unless(sample != NULL, "frame %u did not arrive", f);
    check_frame(&out_info, gst_sample_get_buffer(sample), f, swap_rb);
    gst_sample_unref(sample);
  }
  fail_unless(gst_app_sink_is_eos(GST_APP_SINK(sink)) ||
              gst_app_sink_pull_sample(GST_APP_SINK(sink)) == NULL);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  fail_unless(message == NULL, "pipeline error");
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);

  if (probe) {
    if (pool_meta.n_planes == 0)
      fail("%s saw no video meta", probe);
    check_aligned_meta(&out_info, &pool_meta);
  }
  return pipeline;
}

/* The planes a copy between the default and the aligned layout moves with
 * one 2D copy each: none where the layouts are the same. */
static guint64 planes_copied(GstVideoFormat format)
{
  GstVideoInfo info;
  gst_video_info_set_format(&info, format, WIDTH, HEIGHT);
  gboolean aligned_already = TRUE;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); p++)
    aligned_already &= info.stride[p] % row_alignment() == 0 &&
                       info.offset[p] % row_alignment() == 0;
  return aligned_already ? 0 : (guint64)FRAMES * GST_VIDEO_INFO_N_PLANES(&info);
}

static const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_NV12,
                                         GST_VIDEO_FORMAT_I420};

GST_START_TEST(test_upload_download_keeps_pixels)
{
  GstVideoFormat format = formats[__i__];
  /* Host memory is imported, keeping its own layout: only copies (opaque
   * device memory) land in the pool's. */
  GstElement *pipeline = run_frames(format, "npuupload name=up ! npudownload name=down",
                                    opaque_memory() ? "down" : NULL, NULL, FALSE);
  if (opaque_memory()) {
    /* Upload copies into the aligned pool and download copies back out. */
    fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-copied"), FRAMES);
    fail_unless_equals_uint64(stat_of(pipeline, "up", "planes-copied-2d"), planes_copied(format));
    fail_unless_equals_uint64(stat_of(pipeline, "down", "frames-copied"), FRAMES);
    fail_unless_equals_uint64(stat_of(pipeline, "down", "planes-copied-2d"),
                              planes_copied(format));
  } else {
    fail_unless_equals_uint64(stat_of(pipeline, "up", "frames-zero-copy"), FRAMES);
    fail_unless_equals_uint64(stat_of(pipeline, "up", "planes-copied-2d"), 0);
  }
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* npuvpp writes into its own pool's aligned frames (RGB to BGR: an exact
 * conversion); npudownload passes them on host-visible memory, or copies. */
GST_START_TEST(test_vpp_output_is_aligned)
{
  GstElement *pipeline = run_frames(
      GST_VIDEO_FORMAT_RGB,
      "npuupload name=up ! npuvpp name=vpp ! video/x-raw(memory:NPUMemory),format=BGR ! "
      "npudownload name=down",
      "down", "BGR", TRUE);
  fail_unless_equals_uint64(stat_of(pipeline, "vpp", "frames-processed"), FRAMES);
  if (opaque_memory()) {
    fail_unless_equals_uint64(stat_of(pipeline, "down", "planes-copied-2d"),
                              planes_copied(GST_VIDEO_FORMAT_BGR));
  } else {
    fail_unless_equals_uint64(stat_of(pipeline, "down", "frames-zero-copy"), FRAMES);
  }
  gst_object_unref(pipeline);
}
GST_END_TEST;

static Suite *pitch_suite(void)
{
  Suite *s = suite_create("npu-pitch");
  TCase *tc = tcase_create("pitch");
  tcase_add_loop_test(tc, test_upload_download_keeps_pixels, 0, G_N_ELEMENTS(formats));
  tcase_add_test(tc, test_vpp_output_is_aligned);
  suite_add_tcase(s, tc);
  return s;
}

GST_CHECK_MAIN(pitch);
