#include "gstnpudecodedense.h"

#include <math.h>

void gst_npu_class_map_from_scores(const float *scores, guint classes, guint width, guint height,
                                   const GstNpuMapCrop *crop, guint8 *out)
{
  gsize plane = (gsize)width * height;
  for (guint j = 0; j < crop->h; j++)
    for (guint i = 0; i < crop->w; i++) {
      const float *pixel = scores + (gsize)(crop->y + j) * width + crop->x + i;
      guint best = 0;
      for (guint c = 1; c < classes; c++)
        if (pixel[c * plane] > pixel[best * plane])
          best = c;
      out[(gsize)j * crop->w + i] = (guint8)best;
    }
}

/* Id `at` of a float32 or int64 id map. */
static gdouble id_at(gconstpointer ids, gboolean int64_ids, gsize at)
{
  return int64_ids ? (gdouble)((const gint64 *)ids)[at] : ((const float *)ids)[at];
}

gboolean gst_npu_class_ids_valid(gconstpointer ids, gboolean int64_ids, gsize count, gsize *bad)
{
  for (gsize i = 0; i < count; i++) {
    gdouble id = id_at(ids, int64_ids, i);
    if (!(id >= 0 && id <= 255)) {
      *bad = i;
      return FALSE;
    }
  }
  return TRUE;
}

guint gst_npu_class_map_from_ids(gconstpointer ids, gboolean int64_ids, guint width,
                                 const GstNpuMapCrop *crop, guint8 *out)
{
  guint largest = 0;
  for (guint j = 0; j < crop->h; j++)
    for (guint i = 0; i < crop->w; i++) {
      guint8 id = (guint8)lround(id_at(ids, int64_ids, (gsize)(crop->y + j) * width + crop->x + i));
      out[(gsize)j * crop->w + i] = id;
      largest = MAX(largest, id);
    }
  return largest;
}

/* The prototype pixel (row or column) nearest to a point, on the map. */
static gsize nearest(gdouble at, guint size)
{
  gdouble index = floor(at);
  return index < 0 ? 0 : index >= size ? size - 1 : (gsize)index;
}

void gst_npu_instance_mask(const float *prototypes, guint n, guint proto_width,
                           guint proto_height, const float *coefficients,
                           gsize coefficient_stride, const gdouble box[4], guint mask_width,
                           guint mask_height, guint8 *out)
{
  gsize plane = (gsize)proto_width * proto_height;
  for (guint j = 0; j < mask_height; j++) {
    gsize row = nearest(box[1] + (j + 0.5) * (box[3] - box[1]) / mask_height, proto_height);
    for (guint i = 0; i < mask_width; i++) {
      gsize column = nearest(box[0] + (i + 0.5) * (box[2] - box[0]) / mask_width, proto_width);
      const float *pixel = prototypes + row * proto_width + column;
      double logit = 0;
      for (guint k = 0; k < n; k++)
        logit += (double)coefficients[k * coefficient_stride] * pixel[k * plane];
      out[(gsize)j * mask_width + i] = logit > 0 ? 255 : 0;
    }
  }
}
