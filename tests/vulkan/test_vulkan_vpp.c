/* The Vulkan VPP against the CPU backend's: the same random batches (every
 * source format, sizes from 1 pixel, crops reaching out of the frame,
 * rotations, letterbox, every method, tensor dtype/layout/order, destination
 * formats) run on both devices from the same bytes, at odd offsets and
 * strides; then every byte of every output buffer is compared, the bytes
 * around the outputs included (both start as the same random bytes, so
 * anything written out of place shows). Tolerances: float32 tensors within
 * 1e-3 of a pixel level (the value divided by its scale: bilinear blends in
 * another order than the CPU's vertical-first rows); uint8 outputs within 1,
 * at most 0.1% of them off (a blend landing on .5 rounds either way). */
#include <math.h>
#include <string.h>

#include "npu_internal.h"
#include "vk_test.h"
#include "vulkan/vk_internal.h"

static const uint32_t all_formats[] = {
    NPU_FORMAT_NV12, NPU_FORMAT_NV21, NPU_FORMAT_I420, NPU_FORMAT_YV12, NPU_FORMAT_NV16,
    NPU_FORMAT_NV24, NPU_FORMAT_YUV422, NPU_FORMAT_YUV444, NPU_FORMAT_YUY2,
    NPU_FORMAT_UYVY, NPU_FORMAT_RGB,  NPU_FORMAT_BGR,  NPU_FORMAT_RGBX, NPU_FORMAT_BGRX,
    NPU_FORMAT_XRGB, NPU_FORMAT_XBGR, NPU_FORMAT_RGBA, NPU_FORMAT_BGRA, NPU_FORMAT_GRAY8,
};

/* The two devices, each with a stream; index 0 the CPU, 1 Vulkan. */
static npu_device *devices[2];
static npu_stream *streams[2];

static bool open_devices(void)
{
  devices[1] = vk_test_open_device();
  if (!devices[1])
    return false;
  NPU_ASSERT_OK(npu_device_open_by_backend("cpu", 0, &devices[0]));
  for (int d = 0; d < 2; d++)
    NPU_ASSERT_OK(npu_stream_create(devices[d], &streams[d]));
  return true;
}

static void close_devices(void)
{
  for (int d = 0; d < 2; d++) {
    NPU_ASSERT_OK(npu_stream_destroy(streams[d]));
    NPU_ASSERT_OK(npu_device_release(devices[d]));
  }
}

/* A buffer on each device holding the same random bytes. */
typedef struct twin {
  npu_buffer *buffers[2];
  size_t size;
} twin;

static void twin_create(twin *t, size_t size, GRand *rand)
{
  uint8_t *bytes = g_malloc(size);
  for (size_t i = 0; i < size; i++)
    bytes[i] = (uint8_t)g_rand_int_range(rand, 0, 256);
  t->size = size;
  for (int d = 0; d < 2; d++) {
    NPU_ASSERT_OK(npu_buffer_alloc(devices[d], size, &t->buffers[d]));
    NPU_ASSERT_OK(npu_memcpy_h2d(t->buffers[d], 0, bytes, size));
  }
  g_free(bytes);
}

static void twin_destroy(twin *t)
{
  for (int d = 0; d < 2; d++)
    NPU_ASSERT_OK(npu_buffer_release(t->buffers[d]));
}

/* A frame of `format` at `offset` of a twin (strides rounded to `align`),
 * as an image on each device. */
typedef struct twin_image {
  npu_image images[2];
} twin_image;

static size_t image_size(uint32_t format, uint32_t w, uint32_t h, uint32_t align)
{
  npu_image image;
  size_t size;
  NPU_ASSERT_OK(npu_image_init(&image, format, w, h, align, NULL, 0, &size));
  return size;
}

static void twin_image_init(twin_image *image, uint32_t format, uint32_t w, uint32_t h,
                            uint32_t align, const twin *t, size_t offset, GRand *rand)
{
  npu_color_matrix matrix = (npu_color_matrix)g_rand_int_range(rand, 0, 3);
  npu_color_range range = (npu_color_range)g_rand_int_range(rand, 0, 2);
  for (int d = 0; d < 2; d++) {
    size_t size;
    NPU_ASSERT_OK(npu_image_init(&image->images[d], format, w, h, align, t->buffers[d], offset,
                                 &size));
    g_assert_cmpuint(offset + size, <=, t->size);
    image->images[d].matrix = matrix;
    image->images[d].range = range;
  }
}

/* A random frame in a twin of its own: odd sizes, an odd offset, strides
 * from tight to 64-byte aligned. */
static void random_frame(twin *t, twin_image *image, uint32_t max_side, GRand *rand)
{
  uint32_t format = all_formats[g_rand_int_range(rand, 0, G_N_ELEMENTS(all_formats))];
  uint32_t w = (uint32_t)g_rand_int_range(rand, 1, (gint32)max_side + 1);
  uint32_t h = (uint32_t)g_rand_int_range(rand, 1, (gint32)max_side + 1);
  uint32_t align = 1u << g_rand_int_range(rand, 0, 7);
  size_t offset = (size_t)g_rand_int_range(rand, 0, 40);
  twin_create(t, offset + image_size(format, w, h, align) + (size_t)g_rand_int_range(rand, 0, 9),
              rand);
  twin_image_init(image, format, w, h, align, t, offset, rand);
}

static npu_vpp_params random_params(GRand *rand)
{
  npu_vpp_params params = {(npu_scale_method)g_rand_int_range(rand, 0, 3)};
  params.letterbox = g_rand_boolean(rand);
  params.align = (npu_letterbox_align)g_rand_int_range(rand, 0, 2);
  params.max_scale = g_rand_boolean(rand) ? 0 : (float)g_rand_double_range(rand, 0.5, 2);
  for (int c = 0; c < 3; c++)
    params.pad_rgb[c] = (uint8_t)g_rand_int_range(rand, 0, 256);
  return params;
}

/* A crop of the frame: the whole frame, inside it, or reaching out of it. */
static npu_rect random_crop(const npu_image *src, GRand *rand)
{
  if (g_rand_int_range(rand, 0, 4) == 0)
    return (npu_rect){0};
  int32_t x = g_rand_int_range(rand, -3, (gint32)src->width);
  int32_t y = g_rand_int_range(rand, -3, (gint32)src->height);
  npu_rect crop = {x, y, (uint32_t)g_rand_int_range(rand, 1, (gint32)src->width + 5),
                   (uint32_t)g_rand_int_range(rand, 1, (gint32)src->height + 5)};
  /* (at least one pixel of the frame: an empty crop is an error on both) */
  if (crop.x + (int32_t)crop.width <= 0)
    crop.width = (uint32_t)(1 - crop.x);
  if (crop.y + (int32_t)crop.height <= 0)
    crop.height = (uint32_t)(1 - crop.y);
  return crop;
}

/* Compares a twin's bytes on both devices, [float_begin, float_end) as
 * float32 values (their scale: `scale`), the rest as bytes; returns the
 * worst float error in pixel levels and counts bytes off by one. */
typedef struct difference {
  double worst_levels;
  size_t bytes_off, bytes_compared;
} difference;

static void compare_twin(const twin *t, size_t float_begin, size_t float_end, float scale,
                         difference *diff, const char *what)
{
  uint8_t *bytes[2];
  for (int d = 0; d < 2; d++) {
    bytes[d] = g_malloc(t->size);
    NPU_ASSERT_OK(npu_memcpy_d2h(bytes[d], t->buffers[d], 0, t->size));
  }
  for (size_t i = 0; i < t->size; i++) {
    if (i >= float_begin && i + 4 <= float_end && (i - float_begin) % 4 == 0) {
      float value[2];
      for (int d = 0; d < 2; d++)
        memcpy(&value[d], bytes[d] + i, sizeof(float));
      /* (bytes no job writes may be NaNs: equal bits are equal) */
      double levels = memcmp(bytes[0] + i, bytes[1] + i, sizeof(float)) == 0
                          ? 0
                          : fabs((double)value[1] - value[0]) / scale;
      if (!(levels <= 1e-3))
        g_error("%s: float at byte %zu: Vulkan %.9g, CPU %.9g (%g levels)", what, i, value[1],
                value[0], levels);
      diff->worst_levels = MAX(diff->worst_levels, levels);
      i += 3;
      continue;
    }
    int off = abs((int)bytes[1][i] - (int)bytes[0][i]);
    if (off > 1)
      g_error("%s: byte %zu of %zu: Vulkan %u, CPU %u", what, i, t->size, bytes[1][i],
              bytes[0][i]);
    diff->bytes_off += (size_t)off;
    diff->bytes_compared++;
  }
  for (int d = 0; d < 2; d++)
    g_free(bytes[d]);
}

static void check_bytes_off(const difference *diff)
{
  g_test_message("worst float difference %.3g pixel levels; %zu of %zu bytes off by one",
                 diff->worst_levels, diff->bytes_off, diff->bytes_compared);
  g_assert_cmpuint(diff->bytes_off * 1000, <=, diff->bytes_compared);
}

static void synchronize(void)
{
  for (int d = 0; d < 2; d++)
    NPU_ASSERT_OK(npu_stream_synchronize(streams[d]));
}

/* `frame_count` random frames, `job_count` (at least as many) jobs over
 * them into a random tensor at an odd offset of a buffer with room around it. */
static void run_tensor_case(GRand *rand, uint32_t frame_count, uint32_t job_count,
                            uint32_t max_side, difference *diff, const char *what)
{
  twin *frames = g_new0(twin, frame_count);
  twin_image *images = g_new0(twin_image, frame_count);
  for (uint32_t f = 0; f < frame_count; f++)
    random_frame(&frames[f], &images[f], max_side, rand);
  npu_tensor_target target[2] = {{0}};
  target[0].width = (uint32_t)g_rand_int_range(rand, 1, 49);
  target[0].height = (uint32_t)g_rand_int_range(rand, 1, 49);
  target[0].batch = job_count + (uint32_t)g_rand_int_range(rand, 0, 2);
  target[0].dtype = (npu_tensor_dtype)g_rand_int_range(rand, 0, 2);
  target[0].layout = (npu_tensor_layout)g_rand_int_range(rand, 0, 2);
  target[0].order = (npu_channel_order)g_rand_int_range(rand, 0, 2);
  bool float32 = target[0].dtype == NPU_TENSOR_FLOAT32;
  /* float32 tensors mostly at whole floats, sometimes not */
  size_t unit = float32 && g_rand_boolean(rand) ? 4 : 1;
  target[0].offset = (size_t)g_rand_int_range(rand, 0, 12) * unit;
  float largest_scale = 0;
  for (int c = 0; c < 3; c++) {
    target[0].mean[c] = float32 ? (float)g_rand_double_range(rand, 0, 255) : 0;
    target[0].scale[c] = float32 ? (float)g_rand_double_range(rand, 0.002, 2)
                                 : (float)g_rand_double_range(rand, 0.5, 1.5);
    largest_scale = MAX(largest_scale, target[0].scale[c]);
  }
  size_t slot = (size_t)target[0].width * target[0].height * 3 * (float32 ? 4 : 1);
  twin out;
  twin_create(&out, target[0].offset + slot * target[0].batch + 7, rand);
  target[1] = target[0];
  npu_vpp_params params = random_params(rand);
  npu_vpp_job *jobs[2] = {g_new0(npu_vpp_job, job_count), g_new0(npu_vpp_job, job_count)};
  /* Every frame has a job; slots are distinct (of two jobs into one slot,
   * the later one wins on the CPU, not necessarily on a GPU). */
  for (uint32_t j = 0; j < job_count; j++) {
    uint32_t f = j < frame_count ? j : (uint32_t)g_rand_int_range(rand, 0, (gint32)frame_count);
    npu_rect crop = random_crop(&images[f].images[0], rand);
    npu_rotation rotation = (npu_rotation)g_rand_int_range(rand, 0, 4);
    for (int d = 0; d < 2; d++)
      jobs[d][j] = (npu_vpp_job){&images[f].images[d], crop, j, NULL, rotation};
  }
  for (int d = 0; d < 2; d++) {
    target[d].buffer = out.buffers[d];
    NPU_ASSERT_OK(npu_vpp_to_tensor(streams[d], jobs[d], job_count, &params, &target[d]));
  }
  synchronize();
  compare_twin(&out, float32 ? target[0].offset : 0,
               float32 ? target[0].offset + slot * target[0].batch : 0, largest_scale, diff,
               what);
  twin_destroy(&out);
  for (uint32_t f = 0; f < frame_count; f++)
    twin_destroy(&frames[f]);
  g_free(frames);
  g_free(images);
  g_free(jobs[0]);
  g_free(jobs[1]);
}

static void test_tensor_batches(void)
{
  if (!open_devices())
    return;
  GRand *rand = g_rand_new_with_seed(16);
  difference diff = {0};
  vk_vpp_counts before;
  vk_vpp_counts_of(npu_device_hal(devices[1]), &before);
  for (int i = 0; i < 150; i++) {
    gchar *what = g_strdup_printf("tensor case %d", i);
    uint32_t jobs = (uint32_t)g_rand_int_range(rand, 1, 5);
    run_tensor_case(rand, (uint32_t)g_rand_int_range(rand, 1, (gint32)jobs + 1), jobs, 70, &diff,
                    what);
    g_free(what);
  }
  /* Each batch has run before the next is made: job tables and descriptor
   * pools are reused, made again only when a batch needs a larger one. */
  vk_vpp_counts after;
  vk_vpp_counts_of(npu_device_hal(devices[1]), &after);
  guint64 batches = after.batches - before.batches;
  g_test_message("%llu batches: %llu job tables and %llu descriptor pools made",
                 (unsigned long long)batches,
                 (unsigned long long)(after.tables_made - before.tables_made),
                 (unsigned long long)(after.pools_made - before.pools_made));
  g_assert_cmpuint(batches, >=, 150);
  g_assert_cmpuint(after.tables_made - before.tables_made, <, batches / 5);
  g_assert_cmpuint(after.pools_made - before.pools_made, <, batches / 5);
  check_bytes_off(&diff);
  g_rand_free(rand);
  close_devices();
}

/* More distinct buffers than one dispatch binds: the batch is split. */
static void test_batch_of_many_buffers(void)
{
  if (!open_devices())
    return;
  GRand *rand = g_rand_new_with_seed(17);
  difference diff = {0};
  run_tensor_case(rand, 40, 40, 40, &diff, "40 frames");
  check_bytes_off(&diff);
  g_rand_free(rand);
  close_devices();
}

/* Jobs into destination images of random formats, sizes and layouts. */
static void test_image_batches(void)
{
  if (!open_devices())
    return;
  GRand *rand = g_rand_new_with_seed(18);
  difference diff = {0};
  for (int i = 0; i < 150; i++) {
    gchar *what = g_strdup_printf("image case %d", i);
    twin frame;
    twin_image source;
    random_frame(&frame, &source, 70, rand);
    /* the destinations share one buffer, one after the other at odd offsets */
    uint32_t count = (uint32_t)g_rand_int_range(rand, 1, 4);
    uint32_t formats[3], widths[3], heights[3], aligns[3];
    size_t offsets[3], at = 0;
    for (uint32_t k = 0; k < count; k++) {
      formats[k] = all_formats[g_rand_int_range(rand, 0, G_N_ELEMENTS(all_formats))];
      widths[k] = (uint32_t)g_rand_int_range(rand, 1, 60);
      heights[k] = (uint32_t)g_rand_int_range(rand, 1, 60);
      aligns[k] = 1u << g_rand_int_range(rand, 0, 7);
      offsets[k] = at + (size_t)g_rand_int_range(rand, 0, 7);
      at = offsets[k] + image_size(formats[k], widths[k], heights[k], aligns[k]);
    }
    twin out;
    twin_create(&out, at + 5, rand);
    twin_image destinations[3];
    npu_image dst[2][3];
    for (uint32_t k = 0; k < count; k++) {
      twin_image_init(&destinations[k], formats[k], widths[k], heights[k], aligns[k], &out,
                      offsets[k], rand);
      for (int d = 0; d < 2; d++)
        dst[d][k] = destinations[k].images[d];
    }
    npu_vpp_params params = random_params(rand);
    npu_vpp_job jobs[2][3];
    for (uint32_t k = 0; k < count; k++) {
      npu_rect crop = random_crop(&source.images[0], rand);
      npu_rotation rotation = (npu_rotation)g_rand_int_range(rand, 0, 4);
      for (int d = 0; d < 2; d++)
        jobs[d][k] = (npu_vpp_job){&source.images[d], crop, k, NULL, rotation};
    }
    for (int d = 0; d < 2; d++)
      NPU_ASSERT_OK(npu_vpp_to_images(streams[d], jobs[d], count, &params, dst[d], count));
    synchronize();
    compare_twin(&out, 0, 0, 1, &diff, what);
    twin_destroy(&out);
    twin_destroy(&frame);
    g_free(what);
  }
  check_bytes_off(&diff);
  g_rand_free(rand);
  close_devices();
}

/* A camera frame into a detector's input: 1080p NV12 letterboxed into a
 * 640x640 float32 NCHW tensor; both devices' times are printed. */
static void test_full_hd_frame(void)
{
  if (!open_devices())
    return;
  GRand *rand = g_rand_new_with_seed(19);
  size_t frame_size = image_size(NPU_FORMAT_NV12, 1920, 1080, 256);
  twin frame, out;
  twin_create(&frame, frame_size, rand);
  twin_image source;
  twin_image_init(&source, NPU_FORMAT_NV12, 1920, 1080, 256, &frame, 0, rand);
  twin_create(&out, 640 * 640 * 3 * sizeof(float), rand);
  npu_vpp_params params = {NPU_SCALE_BILINEAR, true, NPU_LETTERBOX_CENTER, {114, 114, 114}};
  difference diff = {0};
  for (int d = 0; d < 2; d++) {
    npu_tensor_target target = {out.buffers[d], 0, 640, 640, 1, NPU_TENSOR_FLOAT32,
                                NPU_LAYOUT_NCHW, NPU_ORDER_RGB, {0}, {1 / 255.f, 1 / 255.f,
                                                                     1 / 255.f}};
    npu_vpp_job job = {&source.images[d], {0}, 0, NULL, NPU_ROTATE_NONE};
    double best = G_MAXDOUBLE;
    for (int run = 0; run < 3; run++) {
      gint64 start = g_get_monotonic_time();
      NPU_ASSERT_OK(npu_vpp_to_tensor(streams[d], &job, 1, &params, &target));
      NPU_ASSERT_OK(npu_stream_synchronize(streams[d]));
      best = MIN(best, (g_get_monotonic_time() - start) / 1000.0);
    }
    g_test_message("1080p NV12 -> 640x640 float32 letterboxed on %s: %.1f ms",
                   d ? "Vulkan" : "the CPU", best);
  }
  compare_twin(&out, 0, out.size, 1 / 255.f, &diff, "1080p");
  check_bytes_off(&diff);
  twin_destroy(&out);
  twin_destroy(&frame);
  g_rand_free(rand);
  close_devices();
}

/* The front end's checks hold on the Vulkan device too: a plane of another
 * device is refused before anything runs. */
static void test_planes_of_another_device_are_refused(void)
{
  if (!open_devices())
    return;
  GRand *rand = g_rand_new_with_seed(20);
  twin frame, out;
  twin_create(&frame, image_size(NPU_FORMAT_NV12, 32, 16, 1), rand);
  twin_create(&out, 8 * 8 * 3, rand);
  npu_image cpu_frame;
  size_t size;
  NPU_ASSERT_OK(npu_image_init(&cpu_frame, NPU_FORMAT_NV12, 32, 16, 1, frame.buffers[0], 0,
                               &size));
  npu_tensor_target target = {out.buffers[1], 0, 8, 8, 1, NPU_TENSOR_UINT8, NPU_LAYOUT_NHWC,
                              NPU_ORDER_RGB, {0}, {1, 1, 1}};
  npu_vpp_job job = {&cpu_frame, {0}, 0, NULL, NPU_ROTATE_NONE};
  npu_vpp_params params = {NPU_SCALE_BILINEAR};
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(streams[1], &job, 1, &params, &target),
                    NPU_ERROR_DEVICE_MISMATCH);
  twin_destroy(&out);
  twin_destroy(&frame);
  g_rand_free(rand);
  close_devices();
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vulkan/vpp/tensor_batches", test_tensor_batches);
  g_test_add_func("/vulkan/vpp/batch_of_many_buffers", test_batch_of_many_buffers);
  g_test_add_func("/vulkan/vpp/image_batches", test_image_batches);
  g_test_add_func("/vulkan/vpp/full_hd_frame", test_full_hd_frame);
  g_test_add_func("/vulkan/vpp/planes_of_another_device_are_refused",
                  test_planes_of_another_device_are_refused);
  return g_test_run();
}
