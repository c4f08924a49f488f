/* Pure colour conversion at the same size: the VPP against GStreamer's own
 * videoconvert (appsrc ! videoconvert ! appsink) on a smooth test image.
 * Prints the largest difference per pair and asserts it stays small. */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/npu_test.h"

enum { W = 64, H = 48 };

typedef struct pair {
  uint32_t npu_in, npu_out;
  const char *gst_in, *gst_out;
} pair;

static const pair pairs[] = {
    {NPU_FORMAT_NV12, NPU_FORMAT_RGB, "NV12", "RGB"},
    {NPU_FORMAT_I420, NPU_FORMAT_BGRX, "I420", "BGRx"},
    {NPU_FORMAT_YUY2, NPU_FORMAT_RGBA, "YUY2", "RGBA"},
    {NPU_FORMAT_UYVY, NPU_FORMAT_BGR, "UYVY", "BGR"},
    {NPU_FORMAT_RGB, NPU_FORMAT_NV12, "RGB", "NV12"},
    {NPU_FORMAT_BGRX, NPU_FORMAT_I420, "BGRx", "I420"},
    {NPU_FORMAT_YUV444, NPU_FORMAT_RGB, "Y444", "RGB"},
    {NPU_FORMAT_YUV422, NPU_FORMAT_BGRX, "Y42B", "BGRx"},
    {NPU_FORMAT_NV16, NPU_FORMAT_RGB, "NV16", "RGB"},
    {NPU_FORMAT_NV24, NPU_FORMAT_RGB, "NV24", "RGB"},
    {NPU_FORMAT_RGB, NPU_FORMAT_YUV444, "RGB", "Y444"},
    {NPU_FORMAT_RGB, NPU_FORMAT_YUV422, "RGB", "Y42B"},
};

static npu_device *device;
static npu_stream *stream;

/* Smooth colours: slow ramps, so chroma siting barely matters. */
static void fill_smooth(const GstVideoInfo *info, guint8 *data)
{
  GstVideoFrame frame;
  GstBuffer *buffer = gst_buffer_new_wrapped_full(0, data, GST_VIDEO_INFO_SIZE(info), 0,
                                                  GST_VIDEO_INFO_SIZE(info), NULL, NULL);
  gst_video_frame_map(&frame, info, buffer, GST_MAP_WRITE);
  /* Ramps in RGB, converted to the format by GStreamer itself. */
  GstVideoInfo argb;
  gst_video_info_set_format(&argb, GST_VIDEO_FORMAT_RGB, W, H);
  guint8 *rgb = g_malloc(GST_VIDEO_INFO_SIZE(&argb));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      guint8 *p = rgb + y * GST_VIDEO_INFO_PLANE_STRIDE(&argb, 0) + 3 * x;
      p[0] = (guint8)(40 + 2 * x);
      p[1] = (guint8)(60 + 3 * y);
      p[2] = (guint8)(200 - x - y);
    }
  GstBuffer *rgb_buffer = gst_buffer_new_wrapped(rgb, GST_VIDEO_INFO_SIZE(&argb));
  GstVideoFrame rgb_frame;
  gst_video_frame_map(&rgb_frame, &argb, rgb_buffer, GST_MAP_READ);
  GstVideoConverter *conv = gst_video_converter_new(&argb, (GstVideoInfo *)info, NULL);
  gst_video_converter_frame(conv, &rgb_frame, &frame);
  gst_video_converter_free(conv);
  gst_video_frame_unmap(&rgb_frame);
  gst_buffer_unref(rgb_buffer);
  gst_video_frame_unmap(&frame);
  gst_buffer_unref(buffer);
}

/* Runs appsrc ! videoconvert ! appsink on one frame; returns the output. */
static GstSample *gstreamer_convert(const GstVideoInfo *in, const guint8 *data, const char *out)
{
  char *desc = g_strdup_printf(
      "appsrc name=src format=time ! videoconvert ! "
      "video/x-raw,format=%s,colorimetry=%s ! appsink name=sink sync=false",
      out, GST_VIDEO_INFO_IS_YUV(in) ? "sRGB" : "bt709");
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(desc, &error);
  g_assert_no_error(error);
  g_free(desc);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstCaps *caps = gst_video_info_to_caps(in);
  gst_app_src_set_caps(GST_APP_SRC(src), caps);
  gst_caps_unref(caps);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBuffer *buffer = gst_buffer_new_memdup(data, GST_VIDEO_INFO_SIZE(in));
  GST_BUFFER_PTS(buffer) = 0;
  gst_app_src_push_buffer(GST_APP_SRC(src), buffer);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstSample *sample = gst_app_sink_pull_sample(GST_APP_SINK(sink));
  g_assert_nonnull(sample);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return sample;
}

static void test_matches_videoconvert(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++) {
    const pair *p = &pairs[i];
    GstVideoInfo in_info, out_info;
    gst_video_info_set_format(&in_info, gst_video_format_from_string(p->gst_in), W, H);
    if (GST_VIDEO_INFO_IS_YUV(&in_info))
      gst_video_colorimetry_from_string(&in_info.colorimetry, "bt709");
    else
      gst_video_colorimetry_from_string(&in_info.colorimetry, "sRGB");

    /* Our frame: GStreamer's layout, imported into device memory. */
    guint8 *data = g_malloc0(GST_VIDEO_INFO_SIZE(&in_info));
    fill_smooth(&in_info, data);
    npu_buffer *in;
    NPU_ASSERT_OK(npu_buffer_alloc(device, GST_VIDEO_INFO_SIZE(&in_info), &in));
    NPU_ASSERT_OK(npu_memcpy_h2d(in, 0, data, GST_VIDEO_INFO_SIZE(&in_info)));
    npu_image src = {p->npu_in, W, H, {NULL}, {0}, {0}, NPU_COLOR_BT709, NPU_RANGE_LIMITED};
    for (guint plane = 0; plane < GST_VIDEO_INFO_N_PLANES(&in_info); plane++) {
      src.planes[plane] = in;
      src.offsets[plane] = GST_VIDEO_INFO_PLANE_OFFSET(&in_info, plane);
      src.strides[plane] = GST_VIDEO_INFO_PLANE_STRIDE(&in_info, plane);
    }

    GstSample *sample = gstreamer_convert(&in_info, data, p->gst_out);
    gst_video_info_from_caps(&out_info, gst_sample_get_caps(sample));
    GstMapInfo map;
    gst_buffer_map(gst_sample_get_buffer(sample), &map, GST_MAP_READ);

    npu_buffer *out;
    NPU_ASSERT_OK(npu_buffer_alloc(device, GST_VIDEO_INFO_SIZE(&out_info), &out));
    npu_image dst = {p->npu_out, W, H, {NULL}, {0}, {0}, NPU_COLOR_BT709, NPU_RANGE_LIMITED};
    for (guint plane = 0; plane < GST_VIDEO_INFO_N_PLANES(&out_info); plane++) {
      dst.planes[plane] = out;
      dst.offsets[plane] = GST_VIDEO_INFO_PLANE_OFFSET(&out_info, plane);
      dst.strides[plane] = GST_VIDEO_INFO_PLANE_STRIDE(&out_info, plane);
    }
    npu_vpp_params params = {NPU_SCALE_BILINEAR};
    npu_vpp_job job = {&src, {0}, 0, NULL};
    NPU_ASSERT_OK(npu_vpp_to_images(stream, &job, 1, &params, &dst, 1));
    NPU_ASSERT_OK(npu_stream_synchronize(stream));
    guint8 *ours;
    NPU_ASSERT_OK(npu_buffer_map(out, NPU_MAP_READ, (void **)&ours));

    /* Compare the bytes of every plane row (skipping x/A padding bytes). */
    int worst = 0;
    double total = 0;
    size_t count = 0;
    gboolean has_alpha_or_pad = GST_VIDEO_INFO_N_COMPONENTS(&out_info) == 4 ||
                                GST_VIDEO_FORMAT_INFO_PSTRIDE(out_info.finfo, 0) == 4;
    for (guint plane = 0; plane < GST_VIDEO_INFO_N_PLANES(&out_info); plane++) {
      gsize offset = GST_VIDEO_INFO_PLANE_OFFSET(&out_info, plane);
      gint stride = GST_VIDEO_INFO_PLANE_STRIDE(&out_info, plane);
      guint rows = GST_VIDEO_INFO_COMP_HEIGHT(&out_info, plane);
      guint width = GST_VIDEO_INFO_COMP_WIDTH(&out_info, plane) *
                    GST_VIDEO_INFO_COMP_PSTRIDE(&out_info, plane);
      for (guint y = 0; y < rows; y++)
        for (guint x = 0; x < width; x++) {
          if (has_alpha_or_pad && x % 4 == 3)
            continue;
          int diff = abs(ours[offset + y * stride + x] - map.data[offset + y * stride + x]);
          worst = MAX(worst, diff);
          total += diff;
          count++;
        }
    }
    g_print("# %s -> %s: max difference %d, mean %.3f (vs videoconvert)\n", p->gst_in,
            p->gst_out, worst, total / count);
    /* RGB -> YUV agrees to 1 LSB, to 2 in chroma at full resolution (4:4:4
     * and 4:2:2 columns: no block average hides videoconvert's rounding;
     * test_vpp holds ours to the float reference). YUV -> RGB differs more
     * because videoconvert's 8-bit fast path rounds its matrix coarsely: on
     * this ramp it gives G = 85 where the source had 90 (we give 89). */
    gboolean full_chroma_rows = GST_VIDEO_INFO_IS_YUV(&out_info) &&
                                GST_VIDEO_FORMAT_INFO_H_SUB(out_info.finfo, 1) == 0;
    g_assert_cmpint(worst, <=, GST_VIDEO_INFO_IS_YUV(&in_info) ? 8 : full_chroma_rows ? 2 : 1);
    g_assert_cmpfloat(total / count, <,
                      GST_VIDEO_INFO_IS_YUV(&in_info) ? 3.0 : full_chroma_rows ? 0.75 : 0.5);

    NPU_ASSERT_OK(npu_buffer_unmap(out));
    gst_buffer_unmap(gst_sample_get_buffer(sample), &map);
    gst_sample_unref(sample);
    NPU_ASSERT_OK(npu_buffer_release(out));
    NPU_ASSERT_OK(npu_buffer_release(in));
    g_free(data);
  }
}

int main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  g_test_init(&argc, &argv, NULL);
  device = npu_test_open_device();
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  g_test_add_func("/vpp/matches-videoconvert", test_matches_videoconvert);
  int result = g_test_run();
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_device_release(device));
  return result;
}
