/* Boxes and points in pixels, shared by the tracker and the line/zone
 * analytics. Plain C11, no GStreamer. */
#ifndef NPU_ANALYTICS_GEOMETRY_H
#define NPU_ANALYTICS_GEOMETRY_H

typedef struct {
  float x, y, w, h; /* top-left corner and size */
} npu_box;

typedef struct {
  float x, y;
} npu_point;

/* Intersection over union; 0 for boxes without area. */
float npu_box_iou(const npu_box *a, const npu_box *b);

#endif
