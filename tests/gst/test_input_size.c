/* npuinfer's input-size policy (gst/gstnpuinputsize.c) alone: fixed axes,
 * given sizes rounded to the multiple, frames at their own size, crops at
 * their aspect ratio, width buckets and the size cap. */
#include <glib.h>

#include "gstnpuinputsize.h"

static void expect_size(const GstNpuInputPolicy *policy, guint content_width,
                        guint content_height, guint want_width, guint want_height)
{
  guint width = 0, height = 0;
  gst_npu_input_size_for(policy, content_width, content_height, &width, &height);
  g_assert_cmpuint(width, ==, want_width);
  g_assert_cmpuint(height, ==, want_height);
}

static void test_fixed_axes(void)
{
  GstNpuInputPolicy model = {.model_width = 224, .model_height = 224, .multiple = 32,
                             .max_size = 2048};
  g_assert_false(gst_npu_input_policy_is_dynamic(&model));
  expect_size(&model, 1920, 1080, 224, 224); /* the model's own, whatever the frame */
  /* sizes given for open axes are rounded up: 720 is no multiple of 32 */
  GstNpuInputPolicy given = {.width = 1280, .height = 720, .multiple = 32, .max_size = 2048};
  g_assert_false(gst_npu_input_policy_is_dynamic(&given));
  expect_size(&given, 640, 480, 1280, 736);
}

static void test_frames_at_their_size(void)
{
  GstNpuInputPolicy open = {.multiple = 32, .max_size = 2048};
  g_assert_true(gst_npu_input_policy_is_dynamic(&open));
  expect_size(&open, 1920, 1080, 1920, 1088);
  expect_size(&open, 640, 480, 640, 480);
  expect_size(&open, 1, 1, 32, 32);
  /* 4K is scaled to 2048 on its long side, the aspect ratio kept */
  expect_size(&open, 3840, 2160, 2048, 1152);
  GstNpuInputPolicy odd = {.multiple = 1, .max_size = 100};
  expect_size(&odd, 1000, 10, 100, 1);
}

static void test_crops_at_their_aspect(void)
{
  GstNpuInputPolicy rows = {.model_height = 48, .multiple = 32, .max_size = 4096,
                            .buckets = TRUE};
  expect_size(&rows, 435, 34, 640, 48); /* 614 -> the 512..1024 octave's step, 128 */
  expect_size(&rows, 100, 48, 128, 48); /* below 8 x 32: multiples of 32 */
  expect_size(&rows, 48, 48, 64, 48);
  expect_size(&rows, 5000, 10, 4096, 48); /* at most max_size */
  /* the width fixed, the height follows */
  GstNpuInputPolicy columns = {.model_width = 32, .multiple = 8, .max_size = 512};
  expect_size(&columns, 10, 100, 32, 320);
}

static void test_buckets(void)
{
  GstNpuInputPolicy plain = {.multiple = 32, .max_size = 8192};
  GstNpuInputPolicy buckets = plain;
  buckets.buckets = TRUE;
  g_assert_cmpuint(gst_npu_input_round(&plain, 614), ==, 640);
  g_assert_cmpuint(gst_npu_input_round(&plain, 1100), ==, 1120);
  g_assert_cmpuint(gst_npu_input_round(&buckets, 1100), ==, 1280);
  /* at most 25% padding, and few distinct widths: 4 per octave above 256 */
  GHashTable *widths = g_hash_table_new(NULL, NULL);
  for (guint w = 257; w <= 2048; w++) {
    guint rounded = gst_npu_input_round(&buckets, w);
    g_assert_cmpuint(rounded, >=, w);
    g_assert_cmpfloat((double)rounded / w, <=, 1.25);
    g_hash_table_add(widths, GUINT_TO_POINTER(rounded));
  }
  g_assert_cmpuint(g_hash_table_size(widths), ==, 12);
  g_hash_table_destroy(widths);
  /* the cap is itself a multiple */
  GstNpuInputPolicy capped = {.multiple = 32, .max_size = 1000};
  g_assert_cmpuint(gst_npu_input_round(&capped, 5000), ==, 992);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/input-size/fixed-axes", test_fixed_axes);
  g_test_add_func("/input-size/frames-at-their-size", test_frames_at_their_size);
  g_test_add_func("/input-size/crops-at-their-aspect", test_crops_at_their_aspect);
  g_test_add_func("/input-size/buckets", test_buckets);
  return g_test_run();
}
