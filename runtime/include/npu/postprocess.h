/* gst-npu runtime: post-processing of model outputs into answers.
 *
 * Plain host-side functions over float tensors already read back from the
 * device: classification top-k, YOLO (v5/v8) and SSD box decoding, non-
 * maximum suppression, letterbox mapping back to frame coordinates, DBNet
 * text-region extraction (PP-OCR det) and greedy CTC decoding (PP-OCR rec).
 * All are thread-safe and allocate nothing unless stated. */
#ifndef NPU_POSTPROCESS_H
#define NPU_POSTPROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <npu/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An axis-aligned detection in pixel coordinates ([x0, x1) x [y0, y1)).
 * `candidate` is the output row (box) it was decoded from, so a model's
 * per-box extras (keypoints, mask coefficients) can be read after NMS. */
typedef struct npu_detection {
  float x0, y0, x1, y1;
  float confidence;
  int32_t class_id;
  uint32_t candidate;
} npu_detection;

/* How a frame was fitted into the model input: model = frame * scale + pad. */
typedef struct npu_letterbox {
  float scale_x, scale_y;
  float pad_x, pad_y;
} npu_letterbox;

/* The `k` best of `n` scores, best first. With `softmax` the values returned
 * are softmax probabilities over all n scores. k <= n. */
NPU_API npu_status npu_topk(const float *scores, size_t n, bool softmax, uint32_t k,
                            uint32_t *indices, float *values);

typedef enum npu_yolo_layout {
  /* [boxes, 5 + classes]: cx, cy, w, h, objectness, class scores (YOLOv5) */
  NPU_YOLO_V5 = 0,
  /* [4 + classes, boxes]: cx, cy, w, h rows, then class score rows (YOLOv8) */
  NPU_YOLO_V8 = 1,
} npu_yolo_layout;

/* Decodes one image's YOLO output (`boxes` candidates, `classes` classes)
 * into detections whose confidence is >= threshold, in model-input pixels.
 * Writes at most `capacity`; *count is the number that passed (may exceed
 * capacity, in which case the best are not guaranteed to be the ones kept:
 * size capacity for the worst case, `boxes`). */
NPU_API npu_status npu_yolo_decode(const float *output, npu_yolo_layout layout, size_t boxes,
                                   size_t classes, float threshold, npu_detection *out,
                                   size_t capacity, size_t *count);

/* Decodes SSD-style outputs: `boxes` rows of [x0, y0, x1, y1] normalised to
 * 0..1 and `scores` rows of `classes` class scores (class 0 = background when
 * `background` is true); scales boxes to width x height pixels. */
NPU_API npu_status npu_ssd_decode(const float *boxes_xyxy, const float *scores, size_t boxes,
                                  size_t classes, bool background, float threshold,
                                  uint32_t width, uint32_t height, npu_detection *out,
                                  size_t capacity, size_t *count);

/* Greedy non-maximum suppression in place: sorts by confidence and keeps a
 * detection unless it overlaps a kept one (same class when class_wise) with
 * IoU > iou_threshold. *kept detections stay at the front, at most max_keep
 * (0 = no limit). */
NPU_API npu_status npu_nms(npu_detection *detections, size_t count, float iou_threshold,
                           bool class_wise, size_t max_keep, size_t *kept);

/* Maps detections from model-input pixels back to frame pixels through a
 * letterbox, clamped to the frame. */
NPU_API npu_status npu_detections_unletterbox(npu_detection *detections, size_t count,
                                              const npu_letterbox *letterbox,
                                              uint32_t frame_width, uint32_t frame_height);

/* A text region found by DBNet: a rotated rectangle (corners clockwise from
 * the top-left one) and its axis-aligned bounds, in probability-map pixels. */
typedef struct npu_text_region {
  float corners[4][2];
  float x0, y0, x1, y1;
  float score; /* mean probability inside the region */
} npu_text_region;

typedef struct npu_dbnet_params {
  float threshold;      /* binarisation of the probability map (PP-OCR: 0.3) */
  float box_threshold;  /* minimum mean probability of a region (0.6) */
  float unclip_ratio;   /* expansion: offset = area * ratio / perimeter (1.5) */
  uint32_t min_size;    /* shorter side of a region, in pixels, after unclip (3) */
} npu_dbnet_params;

/* Finds text regions in a width x height probability map (row-major).
 * `scratch` must hold 2 * width * height int32 values (labels and a work
 * queue); the function allocates only small per-region arrays. Writes at most
 * `capacity` regions; *count is the number found. */
NPU_API npu_status npu_dbnet_regions(const float *probability, uint32_t width, uint32_t height,
                                     const npu_dbnet_params *params, int32_t *scratch,
                                     npu_text_region *out, size_t capacity, size_t *count);

/* Greedy CTC decoding of `steps` x `classes` scores (row-major): the best class
 * per step, repeats merged, `blank` dropped; class c (!= blank) is
 * dictionary[c - 1] when blank == 0, else dictionary[c]. Writes the UTF-8 text
 * (NUL-terminated, truncated to text_capacity) and the mean score of the kept
 * steps. */
NPU_API npu_status npu_ctc_greedy_decode(const float *scores, size_t steps, size_t classes,
                                         uint32_t blank, const char *const *dictionary,
                                         size_t dictionary_size, char *text,
                                         size_t text_capacity, float *confidence);

#ifdef __cplusplus
}
#endif
#endif
