/* Object detection post-processing: YOLO and SSD decoding, NMS, letterbox
 * mapping. */
#include <math.h>
#include <stdlib.h>

#include "npu_hal.h"

static void emit(npu_detection *out, size_t capacity, size_t *count, npu_detection detection)
{
  if (*count < capacity)
    out[*count] = detection;
  (*count)++;
}

NPU_API npu_status npu_yolo_decode(const float *output, npu_yolo_layout layout, size_t boxes,
                                   size_t classes, float threshold, npu_detection *out,
                                   size_t capacity, size_t *count)
{
  if (!output || !count || (capacity && !out) || classes == 0 ||
      (layout != NPU_YOLO_V5 && layout != NPU_YOLO_V8))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_yolo_decode: NULL array, no classes or unknown layout %d", layout);
  *count = 0;
  /* v5 rows are candidates; v8 stores the same fields as rows of `boxes`. */
  const size_t field_stride = layout == NPU_YOLO_V5 ? 1 : boxes;
  const size_t box_stride = layout == NPU_YOLO_V5 ? 5 + classes : 1;
  const size_t first_class = layout == NPU_YOLO_V5 ? 5 : 4;
  for (size_t b = 0; b < boxes; b++) {
    const float *box = output + b * box_stride;
    float objectness = layout == NPU_YOLO_V5 ? box[4 * field_stride] : 1.0f;
    if (objectness < threshold)
      continue;
    size_t best = 0;
    float best_score = box[first_class * field_stride];
    for (size_t c = 1; c < classes; c++) {
      float score = box[(first_class + c) * field_stride];
      if (score > best_score) {
        best_score = score;
        best = c;
      }
    }
    float confidence = objectness * best_score;
    if (confidence < threshold)
      continue;
    float cx = box[0], cy = box[field_stride], w = box[2 * field_stride],
          h = box[3 * field_stride];
    emit(out, capacity, count,
         (npu_detection){cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, confidence,
                         (int32_t)best, (uint32_t)b});
  }
  return NPU_OK;
}

NPU_API npu_status npu_ssd_decode(const float *boxes_xyxy, const float *scores, size_t boxes,
                                  size_t classes, bool background, float threshold,
                                  uint32_t width, uint32_t height, npu_detection *out,
                                  size_t capacity, size_t *count)
{
  if (!boxes_xyxy || !scores || !count || (capacity && !out) || classes <= (background ? 1 : 0))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_ssd_decode: NULL array or no foreground classes");
  *count = 0;
  for (size_t b = 0; b < boxes; b++) {
    const float *row = scores + b * classes;
    const float *box = boxes_xyxy + b * 4;
    /* Every foreground class above threshold is a candidate: NMS sorts it out. */
    for (size_t c = background ? 1 : 0; c < classes; c++) {
      if (row[c] < threshold)
        continue;
      emit(out, capacity, count,
           (npu_detection){box[0] * width, box[1] * height, box[2] * width, box[3] * height,
                           row[c], (int32_t)c, (uint32_t)b});
    }
  }
  return NPU_OK;
}

static int by_confidence_descending(const void *a, const void *b)
{
  float x = ((const npu_detection *)a)->confidence, y = ((const npu_detection *)b)->confidence;
  return (x < y) - (x > y);
}

static float iou(const npu_detection *a, const npu_detection *b)
{
  float w = fminf(a->x1, b->x1) - fmaxf(a->x0, b->x0);
  float h = fminf(a->y1, b->y1) - fmaxf(a->y0, b->y0);
  if (w <= 0 || h <= 0)
    return 0.0f;
  float overlap = w * h;
  float area_a = (a->x1 - a->x0) * (a->y1 - a->y0);
  float area_b = (b->x1 - b->x0) * (b->y1 - b->y0);
  return overlap / (area_a + area_b - overlap);
}

NPU_API npu_status npu_nms(npu_detection *detections, size_t count, float iou_threshold,
                           bool class_wise, size_t max_keep, size_t *kept)
{
  if (!kept || (count && !detections) || iou_threshold < 0.0f)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_nms: NULL array or negative IoU threshold");
  qsort(detections, count, sizeof *detections, by_confidence_descending);
  size_t n_kept = 0;
  for (size_t i = 0; i < count && (max_keep == 0 || n_kept < max_keep); i++) {
    bool suppressed = false;
    for (size_t j = 0; j < n_kept && !suppressed; j++) {
      if (class_wise && detections[j].class_id != detections[i].class_id)
        continue;
      suppressed = iou(&detections[j], &detections[i]) > iou_threshold;
    }
    if (!suppressed)
      detections[n_kept++] = detections[i]; /* n_kept <= i: safe in place */
  }
  *kept = n_kept;
  return NPU_OK;
}

static float clampf(float v, float lo, float hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

NPU_API npu_status npu_detections_unletterbox(npu_detection *detections, size_t count,
                                              const npu_letterbox *lb, uint32_t frame_width,
                                              uint32_t frame_height)
{
  if ((count && !detections) || !lb || !(lb->scale_x > 0) || !(lb->scale_y > 0))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_detections_unletterbox: NULL array or non-positive scale");
  for (size_t i = 0; i < count; i++) {
    npu_detection *d = &detections[i];
    d->x0 = clampf((d->x0 - lb->pad_x) / lb->scale_x, 0, (float)frame_width);
    d->x1 = clampf((d->x1 - lb->pad_x) / lb->scale_x, 0, (float)frame_width);
    d->y0 = clampf((d->y0 - lb->pad_y) / lb->scale_y, 0, (float)frame_height);
    d->y1 = clampf((d->y1 - lb->pad_y) / lb->scale_y, 0, (float)frame_height);
  }
  return NPU_OK;
}
