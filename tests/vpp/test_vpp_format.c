/* The format description in each HAL VPP job (npu_hal_vpp_format): the DRM
 * fourcc, size, planes, pitches, colorimetry and rotation that a
 * fixed-function VPP would take, for sources and destinations of several
 * formats. A test backend records the jobs, then lets the CPU VPP run them. */
#include <string.h>

#include "../runtime/npu_test.h"
#include "cpu/cpu_internal.h"
#include "npu_hal_vpp.h"
#include "npu_internal.h"

static npu_hal_vpp_ops recording_vpp;
static npu_hal_backend recording_backend;
static npu_hal_vpp_job recorded[4];
static size_t recorded_count;

static npu_status record_and_submit(npu_hal_device *device, npu_hal_stream *stream,
                                    npu_hal_vpp_batch *batch, npu_hal_task_fn done,
                                    void *done_data)
{
  recorded_count = batch->job_count < 4 ? batch->job_count : 4;
  memcpy(recorded, batch->jobs, recorded_count * sizeof *recorded);
  return npu_cpu_backend.vpp->submit(device, stream, batch, done, done_data);
}

static npu_device *device;
static npu_stream *stream;

typedef struct frame {
  npu_image image;
  npu_buffer *buffer;
} frame;

static void frame_create(frame *f, uint32_t format, uint32_t w, uint32_t h,
                         npu_color_matrix matrix, npu_color_range range)
{
  size_t size;
  NPU_ASSERT_OK(npu_image_init(&f->image, format, w, h, 64, NULL, 0, &size));
  NPU_ASSERT_OK(npu_buffer_alloc(device, size + 128, &f->buffer));
  /* at an offset into the buffer, so that plane addresses are not all 0 */
  NPU_ASSERT_OK(npu_image_init(&f->image, format, w, h, 64, f->buffer, 128, &size));
  NPU_ASSERT_OK(npu_memset(f->buffer, 0, 0x80, size + 128));
  f->image.matrix = matrix;
  f->image.range = range;
}

static void frame_destroy(frame *f)
{
  NPU_ASSERT_OK(npu_buffer_release(f->buffer));
}

static void assert_format(const npu_hal_vpp_format *got, const npu_image *image,
                          uint32_t plane_count, npu_color_matrix matrix, npu_color_range range,
                          npu_rotation rotation)
{
  g_assert_cmphex(got->fourcc, ==, image->format);
  g_assert_cmpuint(got->width, ==, image->width);
  g_assert_cmpuint(got->height, ==, image->height);
  g_assert_cmpuint(got->plane_count, ==, plane_count);
  for (uint32_t p = 0; p < plane_count; p++) {
    g_assert_true(got->planes[p].buffer == npu_buffer_hal(image->planes[p]));
    g_assert_cmpuint(got->planes[p].offset, ==, image->offsets[p]);
    g_assert_cmpuint(got->pitches[p], ==, image->strides[p]);
  }
  g_assert_cmpint(got->matrix, ==, matrix);
  g_assert_cmpint(got->range, ==, range);
  g_assert_cmpint(got->rotation, ==, rotation);
}

/* Format pairs: YUV sources carry their colorimetry, RGB and gray the
 * nominal one their matrices use; a rotated source says so. */
static void test_format_descriptions(void)
{
  static const struct {
    uint32_t src, dst;
    uint32_t src_planes, dst_planes;
    npu_color_matrix src_matrix, dst_matrix;
    npu_color_range src_range, dst_range;
    npu_rotation rotation;
  } cases[] = {
      {NPU_FORMAT_NV12, NPU_FORMAT_I420, 2, 3, NPU_COLOR_BT709, NPU_COLOR_BT601,
       NPU_RANGE_LIMITED, NPU_RANGE_FULL, NPU_ROTATE_NONE},
      {NPU_FORMAT_YUY2, NPU_FORMAT_BGRX, 1, 1, NPU_COLOR_BT2020, NPU_COLOR_BT709,
       NPU_RANGE_FULL, NPU_RANGE_LIMITED, NPU_ROTATE_90_CW},
      {NPU_FORMAT_RGB, NPU_FORMAT_NV16, 1, 2, NPU_COLOR_BT709, NPU_COLOR_BT709, NPU_RANGE_LIMITED,
       NPU_RANGE_LIMITED, NPU_ROTATE_180},
      {NPU_FORMAT_YUV444, NPU_FORMAT_GRAY8, 3, 1, NPU_COLOR_BT601, NPU_COLOR_BT2020,
       NPU_RANGE_LIMITED, NPU_RANGE_LIMITED, NPU_ROTATE_90_CCW},
  };
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    frame src, dst;
    frame_create(&src, cases[c].src, 64, 48, cases[c].src_matrix, cases[c].src_range);
    frame_create(&dst, cases[c].dst, 32, 32, cases[c].dst_matrix, cases[c].dst_range);
    npu_vpp_job job = {&src.image, {8, 4, 40, 32}, 0, NULL, cases[c].rotation};
    npu_vpp_params params = {0};
    recorded_count = 0;
    NPU_ASSERT_OK(npu_vpp_to_images(stream, &job, 1, &params, &dst.image, 1));
    NPU_ASSERT_OK(npu_stream_synchronize(stream));
    g_assert_cmpuint(recorded_count, ==, 1);
    bool src_yuv = cases[c].src_planes > 1 || cases[c].src == NPU_FORMAT_YUY2;
    bool dst_yuv = cases[c].dst != NPU_FORMAT_BGRX && cases[c].dst != NPU_FORMAT_GRAY8;
    assert_format(&recorded[0].src.format, &src.image, cases[c].src_planes,
                  src_yuv ? cases[c].src_matrix : NPU_COLOR_BT601,
                  src_yuv ? cases[c].src_range : NPU_RANGE_FULL, cases[c].rotation);
    assert_format(&recorded[0].dst.format, &dst.image, cases[c].dst_planes,
                  dst_yuv ? cases[c].dst_matrix : NPU_COLOR_BT601,
                  dst_yuv ? cases[c].dst_range : NPU_RANGE_FULL, NPU_ROTATE_NONE);
    frame_destroy(&src);
    frame_destroy(&dst);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  recording_vpp = *npu_cpu_backend.vpp;
  recording_vpp.submit = record_and_submit;
  recording_backend = npu_cpu_backend;
  recording_backend.name = "vpp-recorder";
  recording_backend.vpp = &recording_vpp;
  NPU_ASSERT_OK(npu_hal_backend_add(&recording_backend));
  NPU_ASSERT_OK(npu_device_open_by_backend("vpp-recorder", 0, &device));
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  g_test_add_func("/vpp/format-descriptions", test_format_descriptions);
  int result = g_test_run();
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_device_release(device));
  return result;
}
