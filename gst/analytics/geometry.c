#include "geometry.h"

#include <math.h>

float npu_box_iou(const npu_box *a, const npu_box *b)
{
  float w = fminf(a->x + a->w, b->x + b->w) - fmaxf(a->x, b->x);
  float h = fminf(a->y + a->h, b->y + b->h) - fmaxf(a->y, b->y);
  if (w <= 0 || h <= 0)
    return 0;
  float inter = w * h;
  float uni = a->w * a->h + b->w * b->h - inter;
  return uni > 0 ? inter / uni : 0;
}
