/* VPP against the float64 reference: every input format x output kind x
 * method, crops, letterbox, batches, edge sizes, and bad arguments. */
#include <math.h>
#include <string.h>

#include "../runtime/npu_test.h"
#include "vpp_reference.h"

static const uint32_t all_formats[] = {
    NPU_FORMAT_NV12, NPU_FORMAT_NV21, NPU_FORMAT_I420, NPU_FORMAT_YV12, NPU_FORMAT_NV16,
    NPU_FORMAT_NV24, NPU_FORMAT_YUV422, NPU_FORMAT_YUV444, NPU_FORMAT_YUY2,
    NPU_FORMAT_UYVY, NPU_FORMAT_RGB,  NPU_FORMAT_BGR,  NPU_FORMAT_RGBX, NPU_FORMAT_BGRX,
    NPU_FORMAT_XRGB, NPU_FORMAT_XBGR, NPU_FORMAT_RGBA, NPU_FORMAT_BGRA, NPU_FORMAT_GRAY8,
};

static npu_device *device;
static npu_stream *stream;

/* A device frame with padded strides, filled with seeded random bytes. */
typedef struct test_frame {
  npu_image image;
  npu_buffer *buffer;
  ref_frame ref;
} test_frame;

static void frame_create(test_frame *f, uint32_t format, uint32_t w, uint32_t h, guint32 seed,
                         npu_color_matrix matrix, npu_color_range range)
{
  size_t size;
  NPU_ASSERT_OK(npu_image_init(&f->image, format, w, h, 64, NULL, 0, &size));
  NPU_ASSERT_OK(npu_buffer_alloc(device, size, &f->buffer));
  NPU_ASSERT_OK(npu_image_init(&f->image, format, w, h, 64, f->buffer, 0, &size));
  f->image.matrix = matrix;
  f->image.range = range;
  uint8_t *bytes;
  NPU_ASSERT_OK(npu_buffer_map(f->buffer, NPU_MAP_READ | NPU_MAP_WRITE, (void **)&bytes));
  GRand *rand = g_rand_new_with_seed(seed);
  for (size_t i = 0; i < size; i++)
    bytes[i] = (uint8_t)g_rand_int_range(rand, 0, 256);
  g_rand_free(rand);
  f->ref = (ref_frame){format, w, h, {NULL}, {0}, matrix, range};
  for (int p = 0; p < 3; p++) {
    f->ref.planes[p] = f->image.planes[p] ? bytes + f->image.offsets[p] : NULL;
    f->ref.strides[p] = f->image.strides[p];
  }
}

static void frame_destroy(test_frame *f)
{
  NPU_ASSERT_OK(npu_buffer_unmap(f->buffer));
  NPU_ASSERT_OK(npu_buffer_release(f->buffer));
}

/* Where a crop lands in a w x h output, from the definition of letterbox;
 * also checks the mapping the VPP reported against it. */
static ref_placement place_crop(const npu_vpp_params *params, double cx, double cy, double cw,
                                double ch, uint32_t w, uint32_t h, const npu_letterbox *mapping)
{
  ref_placement p = {cx, cy, cw, ch, 0, 0, w, h, w, h};
  if (params->letterbox) {
    double scale = MIN(w / cw, h / ch);
    if (params->max_scale > 0)
      scale = MIN(scale, params->max_scale);
    p.dst_w = MAX(1, MIN(w, round(cw * scale)));
    p.dst_h = MAX(1, MIN(h, round(ch * scale)));
    if (params->align == NPU_LETTERBOX_CENTER) {
      p.dst_x = floor((w - p.dst_w) / 2);
      p.dst_y = floor((h - p.dst_h) / 2);
    }
  }
  /* model = frame * scale + pad */
  g_assert_cmpfloat_with_epsilon(mapping->scale_x, p.dst_w / cw, 1e-5);
  g_assert_cmpfloat_with_epsilon(mapping->scale_y, p.dst_h / ch, 1e-5);
  g_assert_cmpfloat_with_epsilon(mapping->pad_x + cx * mapping->scale_x, p.dst_x, 1e-3);
  g_assert_cmpfloat_with_epsilon(mapping->pad_y + cy * mapping->scale_y, p.dst_y, 1e-3);
  return p;
}

/* Runs one job into a tensor and checks every value against the reference. */
static void check_tensor(const test_frame *src, npu_rect crop, const npu_vpp_params *params,
                         npu_tensor_dtype dtype, npu_tensor_layout layout,
                         npu_channel_order order, uint32_t w, uint32_t h)
{
  size_t elem = dtype == NPU_TENSOR_FLOAT32 ? 4 : 1;
  size_t size = (size_t)w * h * 3 * elem;
  npu_buffer *out;
  NPU_ASSERT_OK(npu_buffer_alloc(device, size + 8, &out));
  npu_tensor_target t = {out, 8, w, h, 1, dtype, layout, order, {0}, {1, 1, 1}};
  if (dtype == NPU_TENSOR_FLOAT32)
    for (int c = 0; c < 3; c++) {
      t.mean[c] = 100.0f + 10 * c;
      t.scale[c] = 1.0f / (50 + c);
    }
  npu_letterbox mapping;
  npu_vpp_job job = {&src->image, crop, 0, &mapping};
  NPU_ASSERT_OK(npu_vpp_to_tensor(stream, &job, 1, params, &t));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));

  double cx = crop.width ? MAX(crop.x, 0) : 0, cy = crop.height ? MAX(crop.y, 0) : 0;
  double cw = crop.width ? MIN((double)crop.x + crop.width, src->ref.width) - cx : src->ref.width;
  double ch = crop.height ? MIN((double)crop.y + crop.height, src->ref.height) - cy
                          : src->ref.height;
  ref_placement place = place_crop(params, cx, cy, cw, ch, w, h, &mapping);
  uint8_t *bytes;
  NPU_ASSERT_OK(npu_buffer_map(out, NPU_MAP_READ, (void **)&bytes));
  bytes += 8;
  double worst = 0;
  uint32_t worst_x = 0, worst_y = 0;
  for (uint32_t y = 0; y < h; y++) {
    for (uint32_t x = 0; x < w; x++) {
      double rgb[3];
      ref_output_rgb(&src->ref, &place, params->method, x, y, 1, 1, params->pad_rgb, rgb);
      for (int c = 0; c < 3; c++) {
        double expected = (rgb[order == NPU_ORDER_RGB ? c : 2 - c] - t.mean[c]) * t.scale[c];
        size_t index = layout == NPU_LAYOUT_NCHW ? ((size_t)c * h + y) * w + x
                                                 : ((size_t)y * w + x) * 3 + c;
        double got = dtype == NPU_TENSOR_FLOAT32 ? ((float *)bytes)[index] : bytes[index];
        if (dtype == NPU_TENSOR_UINT8)
          expected = floor(CLAMP(expected, 0, 255) + 0.5);
        if (fabs(got - expected) > worst) {
          worst = fabs(got - expected);
          worst_x = x;
          worst_y = y;
        }
      }
    }
  }
  if (worst > (dtype == NPU_TENSOR_FLOAT32 ? 1e-5 : 1.0))
    g_error("%.4s -> tensor (%s, %s, method %d, crop %ux%u, letterbox %d): max error %g at (%u, %u)",
            (const char *)&src->ref.format, dtype == NPU_TENSOR_FLOAT32 ? "f32" : "u8",
            layout == NPU_LAYOUT_NCHW ? "NCHW" : "NHWC", params->method, crop.width,
            crop.height, params->letterbox, worst, worst_x, worst_y);
  NPU_ASSERT_OK(npu_buffer_unmap(out));
  NPU_ASSERT_OK(npu_buffer_release(out));
}

/* Runs one job into an image of `format` and checks every channel value. */
static void check_image(const test_frame *src, uint32_t format, const npu_vpp_params *params,
                        uint32_t w, uint32_t h)
{
  test_frame dst;
  frame_create(&dst, format, w, h, 99, NPU_COLOR_BT709, NPU_RANGE_FULL);
  npu_letterbox mapping;
  npu_vpp_job job = {&src->image, {0}, 0, &mapping};
  NPU_ASSERT_OK(npu_vpp_to_images(stream, &job, 1, params, &dst.image, 1));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  ref_placement place = place_crop(params, 0, 0, src->ref.width, src->ref.height, w, h, &mapping);
  double worst = 0;
  for (int c = 0; c < ref_channel_count(format); c++) {
    uint32_t sx, sy;
    ref_channel_subsampling(format, c, &sx, &sy);
    for (uint32_t y = 0; y < (h + sy - 1) / sy; y++) {
      for (uint32_t x = 0; x < (w + sx - 1) / sx; x++) {
        double rgb[3];
        ref_output_rgb(&src->ref, &place, params->method, x, y, sx, sy, params->pad_rgb, rgb);
        double v = ref_channel_from_rgb(format, dst.ref.matrix, dst.ref.range, c, rgb);
        double expected = floor(CLAMP(v, 0, 255) + 0.5);
        worst = MAX(worst, fabs(ref_read_channel(&dst.ref, c, x, y) - expected));
      }
    }
  }
  if (worst > 1.0)
    g_error("%.4s -> %.4s (method %d): max error %g LSB", (const char *)&src->ref.format,
            (const char *)&format, params->method, worst);
  /* x/A bytes are opaque. */
  if (format == NPU_FORMAT_RGBA || format == NPU_FORMAT_BGRA || format == NPU_FORMAT_RGBX)
    g_assert_cmpuint(dst.ref.planes[0][(h - 1) * dst.ref.strides[0] + 4 * (w - 1) + 3], ==, 255);
  if (format == NPU_FORMAT_XRGB)
    g_assert_cmpuint(dst.ref.planes[0][4 * (w - 1)], ==, 255);
  frame_destroy(&dst);
}

static void test_every_format_to_tensors(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(all_formats); i++) {
    test_frame src;
    frame_create(&src, all_formats[i], 37, 23, (guint32)i, (npu_color_matrix)(i % 3),
                 (npu_color_range)(i % 2));
    for (int method = NPU_SCALE_BILINEAR; method <= NPU_SCALE_AREA; method++) {
      npu_vpp_params plain = {(npu_scale_method)method};
      npu_vpp_params boxed = {(npu_scale_method)method, true, NPU_LETTERBOX_CENTER, {114, 20, 200}};
      check_tensor(&src, (npu_rect){0}, &plain, NPU_TENSOR_FLOAT32, NPU_LAYOUT_NCHW,
                   NPU_ORDER_RGB, 19, 29);
      check_tensor(&src, (npu_rect){0}, &plain, NPU_TENSOR_UINT8, NPU_LAYOUT_NHWC,
                   NPU_ORDER_BGR, 50, 31);
      check_tensor(&src, (npu_rect){3, 2, 30, 20}, &boxed, NPU_TENSOR_FLOAT32, NPU_LAYOUT_NHWC,
                   NPU_ORDER_BGR, 24, 24);
      check_tensor(&src, (npu_rect){5, 1, 9, 17}, &boxed, NPU_TENSOR_UINT8, NPU_LAYOUT_NCHW,
                   NPU_ORDER_RGB, 16, 8);
    }
    frame_destroy(&src);
  }
}

static void test_every_format_pair(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(all_formats); i++) {
    test_frame src;
    frame_create(&src, all_formats[i], 37, 23, 1000 + (guint32)i, NPU_COLOR_BT601,
                 NPU_RANGE_LIMITED);
    for (size_t j = 0; j < G_N_ELEMENTS(all_formats); j++) {
      npu_vpp_params bilinear = {NPU_SCALE_BILINEAR};
      npu_vpp_params nearest_boxed = {NPU_SCALE_NEAREST, true, NPU_LETTERBOX_TOP_LEFT, {0, 255, 0}};
      check_image(&src, all_formats[j], &bilinear, 21, 15);
      check_image(&src, all_formats[j], &nearest_boxed, 30, 30);
      check_image(&src, all_formats[j], &bilinear, 37, 23); /* pure conversion */
    }
    frame_destroy(&src);
  }
}

static void test_edge_sizes(void)
{
  const npu_vpp_params methods[] = {{NPU_SCALE_BILINEAR}, {NPU_SCALE_NEAREST}, {NPU_SCALE_AREA}};
  test_frame tiny, big;
  frame_create(&tiny, NPU_FORMAT_RGB, 1, 1, 5, NPU_COLOR_BT601, NPU_RANGE_FULL);
  frame_create(&big, NPU_FORMAT_NV12, 128, 64, 6, NPU_COLOR_BT709, NPU_RANGE_LIMITED);
  for (size_t m = 0; m < G_N_ELEMENTS(methods); m++) {
    check_tensor(&tiny, (npu_rect){0}, &methods[m], NPU_TENSOR_FLOAT32, NPU_LAYOUT_NCHW,
                 NPU_ORDER_RGB, 8, 8); /* x8 upscale of 1x1 */
    check_tensor(&big, (npu_rect){0}, &methods[m], NPU_TENSOR_FLOAT32, NPU_LAYOUT_NCHW,
                 NPU_ORDER_RGB, 8, 4); /* /16 downscale */
    /* Crops touching every border, and a crop partly outside (clamped). */
    check_tensor(&big, (npu_rect){0, 0, 128, 1}, &methods[m], NPU_TENSOR_UINT8, NPU_LAYOUT_NCHW,
                 NPU_ORDER_RGB, 16, 3);
    check_tensor(&big, (npu_rect){127, 0, 1, 64}, &methods[m], NPU_TENSOR_UINT8,
                 NPU_LAYOUT_NCHW, NPU_ORDER_RGB, 3, 16);
    check_tensor(&big, (npu_rect){100, 50, 100, 100}, &methods[m], NPU_TENSOR_UINT8,
                 NPU_LAYOUT_NHWC, NPU_ORDER_RGB, 7, 5);
    check_image(&tiny, NPU_FORMAT_I420, &methods[m], 8, 8);
    /* odd sizes: the last chroma row and column cover one pixel, inside the frame */
    check_image(&big, NPU_FORMAT_I420, &methods[m], 21, 11);
    check_image(&big, NPU_FORMAT_NV12, &methods[m], 7, 3);
    check_image(&tiny, NPU_FORMAT_YUY2, &methods[m], 5, 1);
    /* letterboxed at most at its own size: the frame 1:1 in the corner, the rest padded */
    npu_vpp_params own_size = methods[m];
    own_size.letterbox = true;
    own_size.align = NPU_LETTERBOX_TOP_LEFT;
    own_size.max_scale = 1;
    own_size.pad_rgb[1] = 200;
    check_tensor(&tiny, (npu_rect){0}, &own_size, NPU_TENSOR_FLOAT32, NPU_LAYOUT_NCHW,
                 NPU_ORDER_RGB, 8, 8);
    check_tensor(&big, (npu_rect){0, 0, 100, 20}, &own_size, NPU_TENSOR_UINT8, NPU_LAYOUT_NHWC,
                 NPU_ORDER_BGR, 128, 32);
    own_size.max_scale = 0.5f; /* and smaller when it must fit */
    check_tensor(&big, (npu_rect){0}, &own_size, NPU_TENSOR_UINT8, NPU_LAYOUT_NCHW,
                 NPU_ORDER_RGB, 100, 100);
    check_image(&big, NPU_FORMAT_RGB, &methods[m], 1, 1);
  }
  frame_destroy(&tiny);
  frame_destroy(&big);
}

static void test_letterbox_mapping_and_batches(void)
{
  test_frame frame;
  frame_create(&frame, NPU_FORMAT_NV12, 192, 108, 7, NPU_COLOR_BT709, NPU_RANGE_LIMITED);
  npu_buffer *out;
  NPU_ASSERT_OK(npu_buffer_alloc(device, 5 * 3 * 64 * 64 * 4, &out));
  npu_tensor_target t = {out, 0, 64, 64, 5, NPU_TENSOR_FLOAT32, NPU_LAYOUT_NCHW, NPU_ORDER_RGB,
                         {0, 0, 0}, {1, 1, 1}};
  npu_vpp_params params = {NPU_SCALE_BILINEAR, true, NPU_LETTERBOX_CENTER, {114, 114, 114}};
  npu_letterbox maps[5];
  npu_vpp_job jobs[5];
  for (int i = 0; i < 5; i++)
    jobs[i] = (npu_vpp_job){&frame.image, {i * 10, i * 5, 60, 30}, (uint32_t)(4 - i), &maps[i]};
  jobs[0].crop = (npu_rect){0};
  NPU_ASSERT_OK(npu_vpp_to_tensor(stream, jobs, 5, &params, &t));
  /* 192x108 into 64x64: scale 1/3, 36 rows of content, 14 rows of padding on top. */
  g_assert_cmpfloat_with_epsilon(maps[0].scale_x, 1.0 / 3, 1e-6);
  g_assert_cmpfloat_with_epsilon(maps[0].pad_y, 14, 1e-6);
  g_assert_cmpfloat_with_epsilon(maps[0].pad_x, 0, 1e-6);
  /* A 60x30 crop at (10, 5): scale 64/60, content 64x32 at y = 16. */
  g_assert_cmpfloat_with_epsilon(maps[1].scale_y, 32.0 / 30, 1e-6);
  g_assert_cmpfloat_with_epsilon(maps[1].pad_x, -10 * 64.0 / 60, 1e-4);
  g_assert_cmpfloat_with_epsilon(maps[1].pad_y, 16 - 5 * 32.0 / 30, 1e-4);
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  float *values;
  NPU_ASSERT_OK(npu_buffer_map(out, NPU_MAP_READ, (void **)&values));
  for (int i = 0; i < 5; i++) {
    const float *slot = values + (size_t)(4 - i) * 3 * 64 * 64;
    double cx = i ? i * 10 : 0, cy = i ? i * 5 : 0, cw = i ? 60 : 192, ch = i ? 30 : 108;
    ref_placement place = place_crop(&params, cx, cy, cw, ch, 64, 64, &maps[i]);
    for (uint32_t y = 0; y < 64; y += 3) {
      for (uint32_t x = 0; x < 64; x += 3) {
        double rgb[3];
        ref_output_rgb(&frame.ref, &place, NPU_SCALE_BILINEAR, x, y, 1, 1, params.pad_rgb, rgb);
        for (int c = 0; c < 3; c++)
          g_assert_cmpfloat_with_epsilon(slot[(c * 64 + y) * 64 + x], rgb[c], 1e-3);
      }
    }
    g_assert_cmpfloat(slot[0], ==, 114.0f); /* padding row */
  }
  NPU_ASSERT_OK(npu_buffer_unmap(out));
  NPU_ASSERT_OK(npu_buffer_release(out));
  frame_destroy(&frame);
}

/* One crop of `src` into a w x h uint8 NHWC RGB tensor, turned by `rotation`. */
static uint8_t *crop_into_tensor(const test_frame *src, npu_rect crop, npu_scale_method method,
                                 npu_rotation rotation, uint32_t w, uint32_t h)
{
  npu_buffer *out;
  NPU_ASSERT_OK(npu_buffer_alloc(device, (size_t)w * h * 3, &out));
  npu_tensor_target t = {out, 0, w, h, 1, NPU_TENSOR_UINT8, NPU_LAYOUT_NHWC, NPU_ORDER_RGB,
                         {0, 0, 0}, {1, 1, 1}};
  npu_vpp_params params = {method};
  npu_vpp_job job = {&src->image, crop, 0, NULL, rotation};
  NPU_ASSERT_OK(npu_vpp_to_tensor(stream, &job, 1, &params, &t));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  uint8_t *values, *copy = g_malloc((size_t)w * h * 3);
  NPU_ASSERT_OK(npu_buffer_map(out, NPU_MAP_READ, (void **)&values));
  memcpy(copy, values, (size_t)w * h * 3);
  NPU_ASSERT_OK(npu_buffer_unmap(out));
  NPU_ASSERT_OK(npu_buffer_release(out));
  return copy;
}

/* A rotated crop is the unrotated one turned as numpy's rot90 turns it
 * (counter-clockwise: out[i][j] = in[j][W-1-i]), pixel for pixel at scale
 * 1, chroma subsampling included; scaled, it is the scaled crop turned
 * (bilinear and area filters are symmetric). */
static void test_rotated_crops(void)
{
  static const uint32_t formats[] = {NPU_FORMAT_RGB, NPU_FORMAT_NV12, NPU_FORMAT_I420,
                                     NPU_FORMAT_YUY2, NPU_FORMAT_BGRX, NPU_FORMAT_GRAY8};
  static const npu_scale_method methods[] = {NPU_SCALE_NEAREST, NPU_SCALE_BILINEAR,
                                             NPU_SCALE_AREA};
  const npu_rect crop = {4, 2, 10, 6};
  for (size_t f = 0; f < G_N_ELEMENTS(formats); f++) {
    test_frame frame;
    frame_create(&frame, formats[f], 18, 12, 90 + (guint32)f, NPU_COLOR_BT601,
                 NPU_RANGE_LIMITED);
    for (size_t m = 0; m < G_N_ELEMENTS(methods); m++) {
      for (uint32_t scale = 1; scale <= 2; scale++) {
        uint32_t w = crop.width * scale, h = crop.height * scale;
        uint8_t *plain = crop_into_tensor(&frame, crop, methods[m], NPU_ROTATE_NONE, w, h);
        uint8_t *ccw = crop_into_tensor(&frame, crop, methods[m], NPU_ROTATE_90_CCW, h, w);
        uint8_t *cw = crop_into_tensor(&frame, crop, methods[m], NPU_ROTATE_90_CW, h, w);
        uint8_t *half = crop_into_tensor(&frame, crop, methods[m], NPU_ROTATE_180, w, h);
        int tolerance = scale == 1 || methods[m] == NPU_SCALE_NEAREST ? 0 : 1;
        for (uint32_t y = 0; y < h; y++)
          for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
              int want = plain[(y * w + x) * 3 + c];
              /* (x, y) of the plain crop lands at these places of the turned ones */
              int got_ccw = ccw[((w - 1 - x) * h + y) * 3 + c];
              int got_cw = cw[(x * h + (h - 1 - y)) * 3 + c];
              int got_half = half[((h - 1 - y) * w + (w - 1 - x)) * 3 + c];
              if (abs(got_ccw - want) > tolerance || abs(got_cw - want) > tolerance ||
                  abs(got_half - want) > tolerance)
                g_error("%.4s method %d scale %u at (%u, %u) channel %d: %d, turned %d %d %d",
                        (const char *)&formats[f], methods[m], scale, x, y, c, want, got_ccw,
                        got_cw, got_half);
            }
        g_free(plain);
        g_free(ccw);
        g_free(cw);
        g_free(half);
      }
    }
    frame_destroy(&frame);
  }
}

static void test_bad_arguments(void)
{
  test_frame frame;
  frame_create(&frame, NPU_FORMAT_I420, 64, 48, 8, NPU_COLOR_BT601, NPU_RANGE_LIMITED);
  npu_buffer *out;
  NPU_ASSERT_OK(npu_buffer_alloc(device, 3 * 32 * 32 * 4, &out));
  npu_tensor_target t = {out, 0, 32, 32, 1, NPU_TENSOR_FLOAT32, NPU_LAYOUT_NCHW, NPU_ORDER_RGB,
                         {0}, {1, 1, 1}};
  npu_vpp_params params = {NPU_SCALE_BILINEAR};
  npu_vpp_job job = {&frame.image, {0}, 0, NULL};

  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 0, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, NULL, &t), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(NULL, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  npu_vpp_params bad_scale = {NPU_SCALE_BILINEAR, true, NPU_LETTERBOX_TOP_LEFT, {0}, -1.0f};
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &bad_scale, &t),
                    NPU_ERROR_INVALID_ARGUMENT);
  bad_scale.max_scale = NAN;
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &bad_scale, &t),
                    NPU_ERROR_INVALID_ARGUMENT);
  job.rotation = (npu_rotation)7;
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  job.rotation = NPU_ROTATE_NONE;
  job.crop = (npu_rect){100, 100, 10, 10}; /* entirely outside */
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  job.crop = (npu_rect){0};
  job.slot = 1; /* beyond the batch */
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  job.slot = 0;
  t.width = 64; /* output bigger than its buffer */
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  t.width = 0;
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  t.width = 32;
  npu_image broken = frame.image;
  broken.format = NPU_FOURCC('P', '0', '1', '0');
  job.src = &broken;
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_NOT_SUPPORTED);
  broken = frame.image;
  broken.height = 480; /* truncated buffer */
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  broken = frame.image;
  broken.strides[0] = 10; /* stride below the row */
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  broken = frame.image;
  broken.planes[2] = NULL;
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  broken = frame.image;
  broken.width = 0;
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  job.src = &frame.image;
  params.method = (npu_scale_method)7;
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &t), NPU_ERROR_INVALID_ARGUMENT);
  params.method = NPU_SCALE_BILINEAR;
  NPU_ASSERT_STATUS(npu_vpp_to_images(stream, &job, 1, &params, NULL, 0),
                    NPU_ERROR_INVALID_ARGUMENT);
  size_t size;
  NPU_ASSERT_STATUS(npu_image_init(&broken, NPU_FORMAT_NV12, 16, 16, 3, NULL, 0, &size),
                    NPU_ERROR_INVALID_ARGUMENT);
  /* Nothing was queued by the failed calls, and the buffers are intact. */
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  NPU_ASSERT_OK(npu_buffer_release(out));
  frame_destroy(&frame);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  device = npu_test_open_device();
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  g_test_add_func("/vpp/every-format-to-tensors", test_every_format_to_tensors);
  g_test_add_func("/vpp/every-format-pair", test_every_format_pair);
  g_test_add_func("/vpp/edge-sizes", test_edge_sizes);
  g_test_add_func("/vpp/letterbox-mapping-and-batches", test_letterbox_mapping_and_batches);
  g_test_add_func("/vpp/rotated-crops", test_rotated_crops);
  g_test_add_func("/vpp/bad-arguments", test_bad_arguments);
  int result = g_test_run();
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_device_release(device));
  return result;
}
