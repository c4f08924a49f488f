/* The VPP fed hostile frame and tensor descriptions: sizes, strides,
 * offsets, crops, rotations, letterbox parameters and destinations out of
 * range, odd sizes, every format, wrong enums, buffers too small, values
 * whose products overflow. Each call must either be refused with a message
 * or run within its buffers: under AddressSanitizer (tests/run.sh
 * --sanitize) an out-of-bounds read fails the test; in every build the
 * guard bytes behind every buffer catch a stray write. A description
 * left valid must be accepted, so the checks refuse no more than they must.
 *   test_vpp_hostile [-p /vpp-hostile/random]   (NPU_VPP_HOSTILE_SEED, _ROUNDS) */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../runtime/npu_test.h"

static const uint32_t formats[] = {
    NPU_FORMAT_NV12, NPU_FORMAT_NV21, NPU_FORMAT_I420, NPU_FORMAT_YV12, NPU_FORMAT_NV16,
    NPU_FORMAT_NV24, NPU_FORMAT_YUV422, NPU_FORMAT_YUV444, NPU_FORMAT_YUY2,
    NPU_FORMAT_UYVY, NPU_FORMAT_RGB,  NPU_FORMAT_BGR,  NPU_FORMAT_RGBX, NPU_FORMAT_BGRX,
    NPU_FORMAT_XRGB, NPU_FORMAT_XBGR, NPU_FORMAT_RGBA, NPU_FORMAT_BGRA, NPU_FORMAT_GRAY8,
};
#define FORMAT_COUNT (sizeof formats / sizeof formats[0])
#define GUARD 0xa5

static npu_device *device;
static npu_stream *stream;

/* A device buffer of exactly `size` bytes wrapping host memory followed by
 * `guard` guard bytes: AddressSanitizer sees any access past both, the
 * guard check any write past the buffer (rounds alternate 0 and 64 guard
 * bytes, so both are seen). A backend that cannot import host memory gets
 * a plain allocation, unguarded. */
typedef struct guarded_buffer {
  npu_buffer *buffer;
  uint8_t *host; /* NULL: a plain allocation */
  size_t size, guard;
} guarded_buffer;

static guarded_buffer guarded_alloc(size_t size, size_t guard)
{
  guarded_buffer b = {NULL, NULL, size, guard};
  b.host = g_malloc(size + guard);
  memset(b.host, 0x3c, size);
  memset(b.host + size, GUARD, guard);
  if (npu_buffer_import_host(device, b.host, size, NULL, NULL, &b.buffer) != NPU_OK) {
    g_clear_pointer(&b.host, g_free);
    NPU_ASSERT_OK(npu_buffer_alloc(device, size, &b.buffer));
  }
  return b;
}

/* Checks the guard bytes (after the stream ran) and frees the buffer. */
static void guarded_free(guarded_buffer *b, const char *what, guint round)
{
  NPU_ASSERT_OK(npu_buffer_release(b->buffer));
  for (size_t i = 0; b->host && i < b->guard; i++)
    if (b->host[b->size + i] != GUARD)
      g_error("round %u: the VPP wrote %zu bytes past the end of a %zu-byte %s", round, i + 1,
              b->size, what);
  g_free(b->host);
}

/* Values a hostile caller picks for sizes, strides and offsets. */
static size_t hostile_size(GRand *rand, size_t valid)
{
  static const size_t extremes[] = {0, 1, 2, 3, 32767, 32768, 32769, UINT32_MAX,
                                    (size_t)UINT32_MAX + 1, 0x5555555555555556u, SIZE_MAX / 2,
                                    SIZE_MAX};
  switch (g_rand_int_range(rand, 0, 4)) {
  case 0:
    return extremes[g_rand_int_range(rand, 0, G_N_ELEMENTS(extremes))];
  case 1:
    return valid + (size_t)g_rand_int_range(rand, -2, 3);
  case 2:
    return valid * (size_t)g_rand_int_range(rand, 0, 5);
  default:
    return (size_t)g_rand_int_range(rand, 0, 1 << 16);
  }
}

static uint32_t small_side(GRand *rand)
{
  return g_rand_boolean(rand) ? (uint32_t)g_rand_int_range(rand, 1, 8)
                              : (uint32_t)g_rand_int_range(rand, 1, 70);
}

/* A frame of a random format and size in a buffer of its own; with
 * probability ~1/2 one field of its description is then made hostile
 * (*hostile says so). The buffer is always as npu_image_init sized it. */
static void random_frame(GRand *rand, size_t guard, npu_image *image, guarded_buffer *storage,
                         int *hostile)
{
  uint32_t format = formats[g_rand_int_range(rand, 0, FORMAT_COUNT)];
  uint32_t width = small_side(rand), height = small_side(rand);
  if (g_rand_int_range(rand, 0, 16) == 0) /* one very long side */
    *(g_rand_boolean(rand) ? &width : &height) = 32768;
  uint32_t align = 1u << g_rand_int_range(rand, 0, 7);
  size_t offset = (size_t)g_rand_int_range(rand, 0, 3) * 16, size;
  NPU_ASSERT_OK(npu_image_init(image, format, width, height, align, NULL, offset, &size));
  *storage = guarded_alloc(offset + size, guard);
  NPU_ASSERT_OK(npu_image_init(image, format, width, height, align, storage->buffer, offset,
                               &size));
  image->matrix = (npu_color_matrix)g_rand_int_range(rand, 0, 3);
  image->range = (npu_color_range)g_rand_int_range(rand, 0, 2);
  *hostile = g_rand_boolean(rand);
  if (!*hostile)
    return;
  int plane = g_rand_int_range(rand, 0, 3);
  switch (g_rand_int_range(rand, 0, 9)) {
  case 0:
    image->format = g_rand_boolean(rand) ? g_rand_int(rand) : NPU_FOURCC('P', '0', '1', '0');
    break;
  case 1:
    image->width = (uint32_t)hostile_size(rand, image->width);
    break;
  case 2:
    image->height = (uint32_t)hostile_size(rand, image->height);
    break;
  case 3:
  case 4:
    image->strides[plane] = hostile_size(rand, image->strides[plane]);
    break;
  case 5:
  case 6:
    image->offsets[plane] = hostile_size(rand, image->offsets[plane]);
    break;
  case 7:
    image->planes[plane] = NULL;
    break;
  default:
    image->matrix = (npu_color_matrix)g_rand_int_range(rand, -1, 5);
    image->range = (npu_color_range)g_rand_int_range(rand, -1, 4);
    break;
  }
}

static npu_rect random_crop(GRand *rand, const npu_image *image)
{
  static const int32_t corners[] = {INT32_MIN, -70000, -3, -1, 0, 1, 5, 32767, INT32_MAX};
  static const uint32_t sides[] = {0, 1, 2, 3, 7, 32768, UINT32_MAX - 1, UINT32_MAX};
  switch (g_rand_int_range(rand, 0, 3)) {
  case 0:
    return (npu_rect){0};
  case 1: /* inside the frame */
    if (image->width <= 32768 && image->height <= 32768 && image->width && image->height) {
      int32_t x = g_rand_int_range(rand, 0, (int32_t)image->width);
      int32_t y = g_rand_int_range(rand, 0, (int32_t)image->height);
      return (npu_rect){x, y, (uint32_t)g_rand_int_range(rand, 1, (int32_t)image->width - x + 1),
                        (uint32_t)g_rand_int_range(rand, 1, (int32_t)image->height - y + 1)};
    }
    return (npu_rect){0};
  default:
    return (npu_rect){corners[g_rand_int_range(rand, 0, G_N_ELEMENTS(corners))],
                      corners[g_rand_int_range(rand, 0, G_N_ELEMENTS(corners))],
                      sides[g_rand_int_range(rand, 0, G_N_ELEMENTS(sides))],
                      sides[g_rand_int_range(rand, 0, G_N_ELEMENTS(sides))]};
  }
}

static npu_vpp_params random_params(GRand *rand, int *hostile)
{
  static const float max_scales[] = {0, 1, 0.5f, 1e-30f, 1e30f};
  npu_vpp_params params = {(npu_scale_method)g_rand_int_range(rand, 0, 3), g_rand_boolean(rand),
                           (npu_letterbox_align)g_rand_int_range(rand, 0, 2),
                           {1, 2, 3}, max_scales[g_rand_int_range(rand, 0, 5)]};
  *hostile = g_rand_int_range(rand, 0, 8) == 0;
  if (*hostile) {
    static const float bad_scales[] = {-1, NAN, INFINITY};
    switch (g_rand_int_range(rand, 0, 3)) {
    case 0:
      params.method = (npu_scale_method)g_rand_int_range(rand, 3, 100);
      break;
    case 1:
      params.align = (npu_letterbox_align)g_rand_int_range(rand, 2, 100);
      break;
    default:
      params.max_scale = bad_scales[g_rand_int_range(rand, 0, 3)];
      break;
    }
  }
  return params;
}

/* A tensor target in a guarded buffer of its exact size; maybe one field
 * made hostile. */
static npu_tensor_target random_tensor(GRand *rand, size_t guard, guarded_buffer *storage,
                                       int *hostile)
{
  npu_tensor_target t = {NULL, (size_t)g_rand_int_range(rand, 0, 3) * 4, small_side(rand),
                         small_side(rand), (uint32_t)g_rand_int_range(rand, 1, 4),
                         (npu_tensor_dtype)g_rand_int_range(rand, 0, 2),
                         (npu_tensor_layout)g_rand_int_range(rand, 0, 2),
                         (npu_channel_order)g_rand_int_range(rand, 0, 2), {1, 2, 3}, {1, 1, 1}};
  size_t bytes = (size_t)t.width * t.height * 3 * (t.dtype == NPU_TENSOR_FLOAT32 ? 4 : 1);
  *storage = guarded_alloc(t.offset + bytes * t.batch, guard);
  t.buffer = storage->buffer;
  *hostile = g_rand_boolean(rand);
  if (!*hostile)
    return t;
  switch (g_rand_int_range(rand, 0, 7)) {
  case 0:
    t.width = (uint32_t)hostile_size(rand, t.width);
    break;
  case 1:
    t.height = (uint32_t)hostile_size(rand, t.height);
    break;
  case 2:
    t.batch = (uint32_t)hostile_size(rand, t.batch);
    break;
  case 3:
    t.offset = hostile_size(rand, t.offset);
    break;
  case 4:
    t.dtype = (npu_tensor_dtype)g_rand_int_range(rand, 2, 50);
    break;
  case 5:
    t.layout = (npu_tensor_layout)g_rand_int_range(rand, 2, 50);
    break;
  default:
    t.mean[g_rand_int_range(rand, 0, 3)] = g_rand_boolean(rand) ? NAN : INFINITY;
    break;
  }
  return t;
}

/* Whether a hostile field left the description valid anyway (a stride
 * grown within the buffer, an offset of 0 ...) is not for this test to
 * decide: a hostile case only has to fail cleanly or run within bounds. */
static void expect(npu_status status, int hostile, const char *what, guint round)
{
  if (status != NPU_OK) {
    const char *message = npu_last_error_message();
    if (!message || !*message)
      g_error("round %u (%s): refused with %s but no message", round, what,
              npu_status_name(status));
    if (!hostile)
      g_error("round %u (%s): a valid description was refused: %s", round, what, message);
  }
}

static guint env_or(const char *name, guint fallback)
{
  const char *value = g_getenv(name);
  return value ? (guint)g_ascii_strtoull(value, NULL, 10) : fallback;
}

static void test_random(void)
{
  guint seed = env_or("NPU_VPP_HOSTILE_SEED", 20261126), rounds = env_or("NPU_VPP_HOSTILE_ROUNDS", 1500);
  GRand *rand = g_rand_new_with_seed(seed);
  guint accepted = 0;
  for (guint round = 0; round < rounds; round++) {
    enum { MAX_JOBS = 3 };
    npu_image sources[MAX_JOBS], images[2];
    guarded_buffer source_storage[MAX_JOBS], image_storage[2], tensor_storage = {0};
    npu_vpp_job jobs[MAX_JOBS];
    npu_letterbox mappings[MAX_JOBS];
    int hostile = 0, field_hostile;
    size_t count = (size_t)g_rand_int_range(rand, 1, MAX_JOBS + 1);
    int to_tensor = g_rand_boolean(rand);
    size_t guard = round % 2 ? 64 : 0;
    size_t slots = to_tensor ? 0 : (size_t)g_rand_int_range(rand, 1, 3);
    npu_vpp_params params = random_params(rand, &field_hostile);
    hostile |= field_hostile;
    npu_tensor_target tensor;
    if (to_tensor) {
      tensor = random_tensor(rand, guard, &tensor_storage, &field_hostile);
      hostile |= field_hostile;
      slots = tensor.batch;
    }
    for (size_t i = 0; i < (to_tensor ? 0 : slots); i++) {
      random_frame(rand, guard, &images[i], &image_storage[i], &field_hostile);
      hostile |= field_hostile;
    }
    for (size_t i = 0; i < count; i++) {
      random_frame(rand, guard, &sources[i], &source_storage[i], &field_hostile);
      hostile |= field_hostile;
      jobs[i] = (npu_vpp_job){&sources[i], random_crop(rand, &sources[i]),
                              (uint32_t)g_rand_int_range(rand, 0, (int32_t)CLAMP(slots, 1, 8)),
                              g_rand_boolean(rand) ? &mappings[i] : NULL,
                              (npu_rotation)g_rand_int_range(rand, 0, 4)};
      /* a crop outside the frame is refused; so is a rotation or slot out of range */
      npu_rect c = jobs[i].crop;
      if ((c.width || c.height) && (!c.width || !c.height || c.x >= (int64_t)sources[i].width ||
                                    c.y >= (int64_t)sources[i].height ||
                                    (int64_t)c.x + c.width <= 0 || (int64_t)c.y + c.height <= 0))
        hostile = 1;
      if (g_rand_int_range(rand, 0, 16) == 0) {
        jobs[i].rotation = (npu_rotation)g_rand_int_range(rand, 4, 9);
        hostile = 1;
      }
      if (g_rand_int_range(rand, 0, 16) == 0) {
        jobs[i].slot = (uint32_t)hostile_size(rand, slots);
        hostile = 1;
      }
    }
    npu_clear_error();
    npu_status status = to_tensor ? npu_vpp_to_tensor(stream, jobs, count, &params, &tensor)
                                  : npu_vpp_to_images(stream, jobs, count, &params, images, slots);
    expect(status, hostile, to_tensor ? "to tensor" : "to images", round);
    accepted += status == NPU_OK;
    NPU_ASSERT_OK(npu_stream_synchronize(stream));
    for (size_t i = 0; i < count; i++)
      guarded_free(&source_storage[i], "source", round);
    for (size_t i = 0; i < (to_tensor ? 0 : slots); i++)
      guarded_free(&image_storage[i], "destination image", round);
    if (to_tensor)
      guarded_free(&tensor_storage, "tensor", round);
  }
  g_rand_free(rand);
  g_test_message("%u of %u batches accepted", accepted, rounds);
  /* both sides exercised: valid descriptions ran, hostile ones were refused */
  g_assert_cmpuint(accepted, >, rounds / 8);
  g_assert_cmpuint(accepted, <, rounds - rounds / 8);
}

/* The cases that passed the checks before they were overflow-safe. */
static void test_overflowing_descriptions(void)
{
  size_t size;
  npu_image image;
  NPU_ASSERT_STATUS(npu_image_init(&image, NPU_FORMAT_RGBA, UINT32_MAX, UINT32_MAX, 1, NULL, 0,
                                   &size), NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_image_init(&image, NPU_FORMAT_NV12, 16, 16, 1, NULL, SIZE_MAX - 8, &size),
                    NPU_ERROR_INVALID_ARGUMENT);
  NPU_ASSERT_STATUS(npu_image_init(&image, NPU_FORMAT_NV12, 16, 16, 1u << 31, NULL, 0, &size),
                    NPU_ERROR_INVALID_ARGUMENT);

  /* A stride whose product with the rows wraps to 2 bytes: the plane looked
   * like it fit a 6-byte buffer, and its 32-bit pitch read 4 GiB away. */
  guarded_buffer frame = guarded_alloc(64, 64);
  NPU_ASSERT_OK(npu_image_init(&image, NPU_FORMAT_GRAY8, 4, 4, 1, frame.buffer, 0, &size));
  image.strides[0] = 0x5555555555555556u; /* * 3 rows = 2^64 + 2 */
  guarded_buffer out = guarded_alloc(4 * 4 * 3, 64);
  npu_tensor_target tensor = {out.buffer, 0, 4, 4, 1, NPU_TENSOR_UINT8, NPU_LAYOUT_NHWC,
                              NPU_ORDER_RGB, {0}, {1, 1, 1}};
  npu_vpp_params params = {NPU_SCALE_NEAREST};
  npu_vpp_job job = {&image, {0}, 0, NULL, NPU_ROTATE_NONE};
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &tensor),
                    NPU_ERROR_INVALID_ARGUMENT);
  image.strides[0] = (size_t)UINT32_MAX + 5; /* fits a 1-row frame, but not a 32-bit pitch */
  image.height = 1;
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &tensor),
                    NPU_ERROR_INVALID_ARGUMENT);
  /* A 1-row frame padded to a 1 GiB stride: the CPU backend sized its row
   * scratch by the stride (8 GiB for two rows of floats), not the pixels. */
  image.strides[0] = (size_t)1 << 30;
  NPU_ASSERT_OK(npu_vpp_to_tensor(stream, &job, 1, &params, &tensor));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  image.strides[0] = 4;
  image.height = 4;
  NPU_ASSERT_OK(npu_vpp_to_tensor(stream, &job, 1, &params, &tensor));

  /* A batch whose bytes wrap: 32768 x 32768 float32 slots, 2^32 - 1 of them. */
  tensor = (npu_tensor_target){out.buffer, 0, 32768, 32768, UINT32_MAX, NPU_TENSOR_FLOAT32,
                               NPU_LAYOUT_NCHW, NPU_ORDER_RGB, {0}, {1, 1, 1}};
  NPU_ASSERT_STATUS(npu_vpp_to_tensor(stream, &job, 1, &params, &tensor),
                    NPU_ERROR_INVALID_ARGUMENT);
  /* float32 values at an offset that is not 4-byte aligned: stored unaligned
   * (the CPU backend stored them through a misaligned float pointer) */
  tensor = (npu_tensor_target){out.buffer, 2, 1, 1, 1, NPU_TENSOR_FLOAT32, NPU_LAYOUT_NCHW,
                               NPU_ORDER_RGB, {0}, {1, 1, 1}};
  NPU_ASSERT_OK(npu_vpp_to_tensor(stream, &job, 1, &params, &tensor));
  NPU_ASSERT_OK(npu_stream_synchronize(stream));
  float first;
  NPU_ASSERT_OK(npu_memcpy_d2h(&first, out.buffer, 2, sizeof first));
  g_assert_cmpfloat(first, ==, 0x3c); /* R of the frame's first pixel, gray 0x3c */
  guarded_free(&out, "tensor", 0);
  guarded_free(&frame, "source", 0);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  device = npu_test_open_device();
  NPU_ASSERT_OK(npu_stream_create(device, &stream));
  g_test_add_func("/vpp-hostile/overflowing-descriptions", test_overflowing_descriptions);
  g_test_add_func("/vpp-hostile/random", test_random);
  int result = g_test_run();
  NPU_ASSERT_OK(npu_stream_destroy(stream));
  NPU_ASSERT_OK(npu_device_release(device));
  return result;
}
