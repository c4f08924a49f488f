/* VPP benchmark against GStreamer's own converter (GstVideoConverter, the
 * engine of videoconvertscale) doing the same work with the same number of
 * threads, plus the float normalisation GStreamer cannot do, as a plain C
 * loop. Prints a table; asserts nothing about time. */
#include <gst/video/video.h>
#include <math.h>
#include <stdio.h>

#include "../runtime/npu_test.h"

#define BENCH_SECONDS 1.0

typedef struct bench_case {
  const char *name;
  uint32_t format;         /* NPU_FORMAT_* */
  GstVideoFormat gst_format;
  uint32_t out_w, out_h;
  bool letterbox;
  uint32_t crops;          /* 0: whole frame, one job */
} bench_case;

static const bench_case cases[] = {
    {"NV12 1080p -> 640x640 RGB f32 planar", NPU_FORMAT_NV12, GST_VIDEO_FORMAT_NV12, 640, 640,
     false, 0},
    {"NV12 1080p -> 640x640 letterboxed", NPU_FORMAT_NV12, GST_VIDEO_FORMAT_NV12, 640, 640,
     true, 0},
    {"I420 1080p -> 224x224 RGB f32 planar", NPU_FORMAT_I420, GST_VIDEO_FORMAT_I420, 224, 224,
     false, 0},
    {"NV12 1080p -> 224x224 RGB f32 planar", NPU_FORMAT_NV12, GST_VIDEO_FORMAT_NV12, 224, 224,
     false, 0},
    {"NV12 1080p -> 32 crops -> 32x3x48x320", NPU_FORMAT_NV12, GST_VIDEO_FORMAT_NV12, 320, 48,
     false, 32},
};

static npu_rect crop_of(uint32_t i)
{
  /* Text-line-like boxes spread over the frame. */
  return (npu_rect){(int32_t)(40 + (i % 4) * 450), (int32_t)(30 + (i / 4) * 130), 400, 60};
}

static double now_s(void)
{
  return g_get_monotonic_time() / 1e6;
}

/* Our VPP: frames/s. */
static double bench_npu(const bench_case *bc, npu_device *device)
{
  npu_stream *stream;
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  npu_image frame;
  size_t size;
  npu_buffer *in, *out;
  NPU_ASSERT_OK(npu_image_init(&frame, bc->format, 1920, 1080, 64, NULL, 0, &size));
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &in));
  NPU_ASSERT_OK(npu_image_init(&frame, bc->format, 1920, 1080, 64, in, 0, &size));
  NPU_ASSERT_OK(npu_memset(in, 0, 128, size));
  uint32_t batch = bc->crops ? bc->crops : 1;
  NPU_ASSERT_OK(npu_buffer_alloc(device, (size_t)batch * 3 * bc->out_w * bc->out_h * 4, &out));
  npu_tensor_target t = {out, 0, bc->out_w, bc->out_h, batch, NPU_TENSOR_FLOAT32,
                         NPU_LAYOUT_NCHW, NPU_ORDER_RGB, {123.7f, 116.3f, 103.5f},
                         {1 / 58.4f, 1 / 57.1f, 1 / 57.4f}};
  npu_vpp_params params = {NPU_SCALE_BILINEAR, bc->letterbox, NPU_LETTERBOX_CENTER,
                           {114, 114, 114}};
  npu_vpp_job jobs[32];
  for (uint32_t i = 0; i < batch; i++)
    jobs[i] = (npu_vpp_job){&frame, bc->crops ? crop_of(i) : (npu_rect){0}, i, NULL};
  int frames = 0;
  double start = now_s();
  while (now_s() - start < BENCH_SECONDS) {
    NPU_ASSERT_OK(npu_vpp_to_tensor(stream, jobs, batch, &params, &t));
    NPU_ASSERT_OK(npu_stream_synchronize(stream));
    frames++;
  }
  double fps = frames / (now_s() - start);
  NPU_ASSERT_OK(npu_buffer_release(in));
  NPU_ASSERT_OK(npu_buffer_release(out));
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  return fps;
}

/* RGB bytes -> planar normalised floats, as a user of GStreamer must add. */
static void normalise(const guint8 *rgb, gsize stride, guint w, guint h, float *out)
{
  static const float mean[3] = {123.7f, 116.3f, 103.5f};
  static const float scale[3] = {1 / 58.4f, 1 / 57.1f, 1 / 57.4f};
  for (guint y = 0; y < h; y++)
    for (guint x = 0; x < w; x++)
      for (int c = 0; c < 3; c++)
        out[((gsize)c * h + y) * w + x] = (rgb[y * stride + x * 3 + c] - mean[c]) * scale[c];
}

/* GStreamer: GstVideoConverter per job, then the normalisation loop.
 * Returns frames/s; *convert_share receives the converter's part of the time. */
static double bench_gstreamer(const bench_case *bc, guint threads, double *convert_share)
{
  GstVideoInfo in_info, out_info;
  gst_video_info_set_format(&in_info, bc->gst_format, 1920, 1080);
  gst_video_info_set_format(&out_info, GST_VIDEO_FORMAT_RGB, bc->out_w, bc->out_h);
  uint32_t batch = bc->crops ? bc->crops : 1;
  GstVideoConverter *converters[32];
  for (uint32_t i = 0; i < batch; i++) {
    GstStructure *config = gst_structure_new(
        "config", GST_VIDEO_CONVERTER_OPT_THREADS, G_TYPE_UINT, threads,
        GST_VIDEO_CONVERTER_OPT_RESAMPLER_METHOD, GST_TYPE_VIDEO_RESAMPLER_METHOD,
        GST_VIDEO_RESAMPLER_METHOD_LINEAR, NULL);
    if (bc->crops) {
      npu_rect r = crop_of(i);
      gst_structure_set(config, GST_VIDEO_CONVERTER_OPT_SRC_X, G_TYPE_INT, r.x,
                        GST_VIDEO_CONVERTER_OPT_SRC_Y, G_TYPE_INT, r.y,
                        GST_VIDEO_CONVERTER_OPT_SRC_WIDTH, G_TYPE_INT, (int)r.width,
                        GST_VIDEO_CONVERTER_OPT_SRC_HEIGHT, G_TYPE_INT, (int)r.height, NULL);
    }
    if (bc->letterbox) {
      int h = (int)lround(1080.0 * bc->out_w / 1920);
      gst_structure_set(config, GST_VIDEO_CONVERTER_OPT_DEST_Y, G_TYPE_INT,
                        ((int)bc->out_h - h) / 2, GST_VIDEO_CONVERTER_OPT_DEST_HEIGHT, G_TYPE_INT,
                        h, GST_VIDEO_CONVERTER_OPT_FILL_BORDER, G_TYPE_BOOLEAN, TRUE,
                        GST_VIDEO_CONVERTER_OPT_BORDER_ARGB, G_TYPE_UINT, 0xff727272, NULL);
    }
    converters[i] = gst_video_converter_new(&in_info, &out_info, config);
    g_assert_nonnull(converters[i]);
  }
  GstBuffer *in = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&in_info), NULL);
  gst_buffer_memset(in, 0, 128, GST_VIDEO_INFO_SIZE(&in_info));
  GstBuffer *out = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&out_info), NULL);
  float *tensor = g_new(float, (gsize)3 * bc->out_w * bc->out_h);
  GstVideoFrame in_frame, out_frame;
  gst_video_frame_map(&in_frame, &in_info, in, GST_MAP_READ);
  gst_video_frame_map(&out_frame, &out_info, out, GST_MAP_WRITE);
  int frames = 0;
  double converting = 0, start = now_s();
  while (now_s() - start < BENCH_SECONDS) {
    for (uint32_t i = 0; i < batch; i++) {
      double t0 = now_s();
      gst_video_converter_frame(converters[i], &in_frame, &out_frame);
      converting += now_s() - t0;
      normalise(GST_VIDEO_FRAME_PLANE_DATA(&out_frame, 0), GST_VIDEO_FRAME_PLANE_STRIDE(&out_frame, 0),
                bc->out_w, bc->out_h, tensor);
    }
    frames++;
  }
  double elapsed = now_s() - start;
  *convert_share = converting / elapsed;
  gst_video_frame_unmap(&in_frame);
  gst_video_frame_unmap(&out_frame);
  gst_buffer_unref(in);
  gst_buffer_unref(out);
  g_free(tensor);
  for (uint32_t i = 0; i < batch; i++)
    gst_video_converter_free(converters[i]);
  return frames / elapsed;
}

int main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  printf("VPP benchmark: frames/s (higher is better), %.0f s per cell\n\n", BENCH_SECONDS);
  printf("%-40s %7s %10s %14s %8s %10s %10s\n", "case", "threads", "gst-npu", "GStreamer+norm",
         "speedup", "in MB/fr", "out MB/fr");
  guint max_threads = g_get_num_processors() > 1 ? 2 : 1;
  for (guint threads = 1; threads <= max_threads; threads++) {
    char budget[8];
    g_snprintf(budget, sizeof budget, "%u", threads);
    g_setenv("NPU_NUM_THREADS", budget, TRUE);
    npu_device *device = npu_test_open_device();
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
      const bench_case *bc = &cases[i];
      double ours = bench_npu(bc, device);
      double convert_share;
      double theirs = bench_gstreamer(bc, threads, &convert_share);
      double in_mb = 1920 * 1080 * 1.5 / 1e6;
      uint32_t batch = bc->crops ? bc->crops : 1;
      double out_mb = batch * 3.0 * bc->out_w * bc->out_h * 4 / 1e6;
      printf("%-40s %7u %10.1f %14.1f %7.2fx %10.2f %10.2f\n", bc->name, threads, ours, theirs,
             ours / theirs, in_mb, out_mb);
      (void)convert_share;
    }
    NPU_ASSERT_OK(npu_device_release(device));
  }
  printf("\nGStreamer+norm = GstVideoConverter (videoconvertscale's engine, linear resampler, "
         "same thread count) to RGB, then a C loop to planar normalised float32.\n"
         "in/out MB per frame: the bytes the VPP must read (NV12/I420 frame) and write "
         "(float32 tensor); gst-npu moves each once.\n");
  return 0;
}
