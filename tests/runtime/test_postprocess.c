/* Post-processing on synthetic tensors with known answers. */
#include <math.h>
#include <string.h>

#include "npu_test.h"

static void test_topk(void)
{
  const float scores[] = {0.1f, 2.0f, -1.0f, 3.0f, 2.5f, 0.0f};
  uint32_t idx[3];
  float val[3];
  NPU_ASSERT_OK(npu_topk(scores, 6, false, 3, idx, val));
  g_assert_cmpuint(idx[0], ==, 3);
  g_assert_cmpuint(idx[1], ==, 4);
  g_assert_cmpuint(idx[2], ==, 1);
  g_assert_cmpfloat(val[1], ==, 2.5f);
  NPU_ASSERT_OK(npu_topk(scores, 6, true, 3, idx, val));
  double sum = 0;
  for (int i = 0; i < 6; i++)
    sum += exp(scores[i]);
  g_assert_cmpfloat_with_epsilon(val[0], exp(3.0) / sum, 1e-6);
  g_assert_cmpfloat_with_epsilon(val[2], exp(2.0) / sum, 1e-6);
  NPU_ASSERT_STATUS(npu_topk(scores, 6, false, 7, idx, val), NPU_ERROR_INVALID_ARGUMENT);
}

/* Three candidates, two classes, as YOLOv5 rows. */
static const float yolo_v5[3][7] = {
    {100, 100, 40, 20, 0.9f, 0.2f, 0.8f},  /* class 1, 0.72 */
    {102, 101, 40, 20, 0.8f, 0.1f, 0.9f},  /* class 1, 0.72 too, overlaps the first */
    {300, 200, 10, 10, 0.5f, 0.9f, 0.1f},  /* class 0, 0.45 */
};

static void test_yolo_decode_both_layouts(void)
{
  npu_detection dets[3];
  size_t count;
  NPU_ASSERT_OK(npu_yolo_decode(&yolo_v5[0][0], NPU_YOLO_V5, 3, 2, 0.5f, dets, 3, &count));
  g_assert_cmpuint(count, ==, 2);
  g_assert_cmpfloat_with_epsilon(dets[0].x0, 80, 1e-4);
  g_assert_cmpfloat_with_epsilon(dets[0].y1, 110, 1e-4);
  g_assert_cmpfloat_with_epsilon(dets[0].confidence, 0.72, 1e-6);
  g_assert_cmpint(dets[0].class_id, ==, 1);
  g_assert_cmpuint(dets[1].candidate, ==, 1);

  /* YOLOv8: transposed, no objectness. */
  float v8[6][3];
  for (int b = 0; b < 3; b++) {
    for (int f = 0; f < 4; f++)
      v8[f][b] = yolo_v5[b][f];
    v8[4][b] = yolo_v5[b][5];
    v8[5][b] = yolo_v5[b][6];
  }
  NPU_ASSERT_OK(npu_yolo_decode(&v8[0][0], NPU_YOLO_V8, 3, 2, 0.5f, dets, 3, &count));
  g_assert_cmpuint(count, ==, 3);
  g_assert_cmpint(dets[2].class_id, ==, 0);
  g_assert_cmpuint(dets[2].candidate, ==, 2);
  g_assert_cmpfloat_with_epsilon(dets[2].confidence, 0.9, 1e-6);
  g_assert_cmpfloat_with_epsilon(dets[2].x0, 295, 1e-4);
  /* Capacity smaller than the result: count tells the truth. */
  NPU_ASSERT_OK(npu_yolo_decode(&v8[0][0], NPU_YOLO_V8, 3, 2, 0.5f, dets, 1, &count));
  g_assert_cmpuint(count, ==, 3);
}

static void test_nms(void)
{
  npu_detection dets[] = {
      {0, 0, 10, 10, 0.6f, 0},
      {1, 1, 11, 11, 0.9f, 0},   /* IoU with the first: 81/119 = 0.68 */
      {1, 1, 11, 11, 0.7f, 1},   /* same place, other class */
      {50, 50, 60, 60, 0.3f, 0}, /* far away */
  };
  npu_detection copy[4];
  size_t kept;
  memcpy(copy, dets, sizeof dets);
  NPU_ASSERT_OK(npu_nms(copy, 4, 0.5f, true, 0, &kept));
  g_assert_cmpuint(kept, ==, 3);
  g_assert_cmpfloat(copy[0].confidence, ==, 0.9f);
  g_assert_cmpint(copy[1].class_id, ==, 1);
  g_assert_cmpfloat(copy[2].confidence, ==, 0.3f);

  memcpy(copy, dets, sizeof dets);
  NPU_ASSERT_OK(npu_nms(copy, 4, 0.5f, false, 0, &kept));
  g_assert_cmpuint(kept, ==, 2); /* class-agnostic: the other class is suppressed too */

  memcpy(copy, dets, sizeof dets);
  NPU_ASSERT_OK(npu_nms(copy, 4, 0.7f, true, 0, &kept));
  g_assert_cmpuint(kept, ==, 4); /* 0.68 is below 0.7 */

  memcpy(copy, dets, sizeof dets);
  NPU_ASSERT_OK(npu_nms(copy, 4, 0.5f, true, 1, &kept));
  g_assert_cmpuint(kept, ==, 1);
}

static void test_unletterbox_and_ssd(void)
{
  /* 1920x1080 fitted into 640x640: scale 1/3, 140 rows of padding on top. */
  npu_letterbox lb = {1.0f / 3, 1.0f / 3, 0, 140};
  npu_detection d = {100, 150, 200, 190, 0.5f, 0};
  NPU_ASSERT_OK(npu_detections_unletterbox(&d, 1, &lb, 1920, 1080));
  g_assert_cmpfloat_with_epsilon(d.x0, 300, 1e-3);
  g_assert_cmpfloat_with_epsilon(d.y0, 30, 1e-3);
  g_assert_cmpfloat_with_epsilon(d.x1, 600, 1e-3);
  g_assert_cmpfloat_with_epsilon(d.y1, 150, 1e-3);
  npu_detection in_padding = {0, 0, 640, 100, 0.5f, 0}; /* clamped to the frame */
  NPU_ASSERT_OK(npu_detections_unletterbox(&in_padding, 1, &lb, 1920, 1080));
  g_assert_cmpfloat(in_padding.y0, ==, 0);
  g_assert_cmpfloat(in_padding.y1, ==, 0);
  g_assert_cmpfloat(in_padding.x1, ==, 1920);

  const float boxes[2][4] = {{0.1f, 0.2f, 0.3f, 0.4f}, {0.5f, 0.5f, 0.9f, 0.9f}};
  const float scores[2][3] = {{0.9f, 0.05f, 0.05f}, {0.1f, 0.7f, 0.6f}};
  npu_detection out[4];
  size_t count;
  NPU_ASSERT_OK(npu_ssd_decode(&boxes[0][0], &scores[0][0], 2, 3, true, 0.5f, 100, 200, out, 4,
                               &count));
  g_assert_cmpuint(count, ==, 2); /* background ignored; both classes of box 2 */
  g_assert_cmpfloat_with_epsilon(out[0].x0, 50, 1e-4);
  g_assert_cmpfloat_with_epsilon(out[0].y1, 180, 1e-4);
  g_assert_cmpint(out[0].class_id, ==, 1);
  g_assert_cmpint(out[1].class_id, ==, 2);
  g_assert_cmpuint(out[0].candidate, ==, 1); /* both from box 2 */
  g_assert_cmpuint(out[1].candidate, ==, 1);
}

static void test_ctc(void)
{
  const char *dict[] = {"h", "e", "l", "o", " "};
  /* classes: 0 blank, 1 h, 2 e, 3 l, 4 o, 5 space */
  const int path[] = {1, 1, 0, 2, 3, 3, 0, 3, 4, 0, 5, 1};
  float scores[12][6];
  for (int t = 0; t < 12; t++)
    for (int c = 0; c < 6; c++)
      scores[t][c] = c == path[t] ? 0.8f : 0.04f;
  char text[32];
  float confidence;
  NPU_ASSERT_OK(npu_ctc_greedy_decode(&scores[0][0], 12, 6, 0, dict, 5, text, sizeof text,
                                      &confidence));
  g_assert_cmpstr(text, ==, "hello h");
  g_assert_cmpfloat_with_epsilon(confidence, 0.8, 1e-6);
  /* Truncation keeps whole entries and a terminator. */
  NPU_ASSERT_OK(npu_ctc_greedy_decode(&scores[0][0], 12, 6, 0, dict, 5, text, 4, &confidence));
  g_assert_cmpstr(text, ==, "hel");
  /* A class beyond the dictionary is an error. */
  NPU_ASSERT_STATUS(npu_ctc_greedy_decode(&scores[0][0], 12, 6, 0, dict, 3, text, sizeof text,
                                          &confidence),
                    NPU_ERROR_INVALID_ARGUMENT);
}

enum { MAP_W = 120, MAP_H = 80 };

static void fill_rect(float *map, int x0, int y0, int x1, int y1, float value)
{
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      map[y * MAP_W + x] = value;
}

static void test_dbnet_axis_aligned(void)
{
  float *map = g_new0(float, MAP_W * MAP_H);
  int32_t *scratch = g_new(int32_t, 2 * MAP_W * MAP_H);
  fill_rect(map, 10, 10, 40, 20, 0.9f);  /* 30x10 text line */
  fill_rect(map, 0, 50, 20, 60, 0.8f);   /* touches the left border */
  fill_rect(map, 60, 30, 90, 40, 0.5f);  /* above threshold, below box threshold */
  fill_rect(map, 100, 5, 101, 6, 0.95f); /* a speck: too small */
  npu_dbnet_params params = {0.3f, 0.6f, 1.5f, 3};
  npu_text_region regions[8];
  size_t count;
  NPU_ASSERT_OK(npu_dbnet_regions(map, MAP_W, MAP_H, &params, scratch, regions, 8, &count));
  g_assert_cmpuint(count, ==, 2);
  /* 30x10: offset = 300 * 1.5 / 80 = 5.625 on every side. */
  g_assert_cmpfloat_with_epsilon(regions[0].x0, 10 - 5.625, 1e-3);
  g_assert_cmpfloat_with_epsilon(regions[0].y0, 10 - 5.625, 1e-3);
  g_assert_cmpfloat_with_epsilon(regions[0].x1, 40 + 5.625, 1e-3);
  g_assert_cmpfloat_with_epsilon(regions[0].y1, 20 + 5.625, 1e-3);
  g_assert_cmpfloat_with_epsilon(regions[0].score, 0.9, 1e-5);
  g_assert_cmpfloat_with_epsilon(regions[0].corners[0][0], 10 - 5.625, 1e-3); /* top-left */
  g_assert_cmpfloat_with_epsilon(regions[0].corners[0][1], 10 - 5.625, 1e-3);
  g_assert_cmpfloat_with_epsilon(regions[0].corners[1][0], 40 + 5.625, 1e-3); /* top-right */
  g_assert_cmpfloat_with_epsilon(regions[0].corners[2][1], 20 + 5.625, 1e-3); /* bottom */
  /* Clamped at the frame border. */
  g_assert_cmpfloat(regions[1].x0, ==, 0);
  g_assert_cmpfloat_with_epsilon(regions[1].x1, 20 + 5, 1e-3); /* 200 * 1.5 / 60 = 5 */
  g_assert_cmpfloat_with_epsilon(regions[1].y0, 50 - 5, 1e-3);
  g_free(map);
  g_free(scratch);
}

static void test_dbnet_rotated(void)
{
  float *map = g_new0(float, MAP_W * MAP_H);
  int32_t *scratch = g_new(int32_t, 2 * MAP_W * MAP_H);
  /* A band 60 long, 8 wide, at 30 degrees around (60, 40). */
  const double angle = G_PI / 6, c = cos(angle), s = sin(angle);
  for (int y = 0; y < MAP_H; y++) {
    for (int x = 0; x < MAP_W; x++) {
      double dx = x + 0.5 - 60, dy = y + 0.5 - 40;
      double u = dx * c + dy * s, v = -dx * s + dy * c;
      if (fabs(u) < 30 && fabs(v) < 4)
        map[y * MAP_W + x] = 0.9f;
    }
  }
  npu_dbnet_params params = {0.3f, 0.6f, 0.0f, 3};
  npu_text_region region;
  size_t count;
  NPU_ASSERT_OK(npu_dbnet_regions(map, MAP_W, MAP_H, &params, scratch, &region, 1, &count));
  g_assert_cmpuint(count, ==, 1);
  double side_x = region.corners[1][0] - region.corners[0][0];
  double side_y = region.corners[1][1] - region.corners[0][1];
  double long_side = hypot(side_x, side_y);
  double short_side = hypot(region.corners[2][0] - region.corners[1][0],
                            region.corners[2][1] - region.corners[1][1]);
  g_assert_cmpfloat_with_epsilon(atan2(side_y, side_x), angle, 0.05);
  g_assert_cmpfloat_with_epsilon(long_side, 60, 2.0);
  g_assert_cmpfloat_with_epsilon(short_side, 8, 2.0);
  g_assert_cmpfloat(region.corners[0][0] + region.corners[0][1], <,
                    region.corners[2][0] + region.corners[2][1]);
  NPU_ASSERT_STATUS(npu_dbnet_regions(map, 0, MAP_H, &params, scratch, &region, 1, &count),
                    NPU_ERROR_INVALID_ARGUMENT);
  g_free(map);
  g_free(scratch);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/postprocess/topk", test_topk);
  g_test_add_func("/postprocess/yolo-decode-both-layouts", test_yolo_decode_both_layouts);
  g_test_add_func("/postprocess/nms", test_nms);
  g_test_add_func("/postprocess/unletterbox-and-ssd", test_unletterbox_and_ssd);
  g_test_add_func("/postprocess/ctc", test_ctc);
  g_test_add_func("/postprocess/dbnet-axis-aligned", test_dbnet_axis_aligned);
  g_test_add_func("/postprocess/dbnet-rotated", test_dbnet_rotated);
  return g_test_run();
}
