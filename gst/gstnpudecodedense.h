/* npudecode's dense outputs as bytes: a segmentation model's class map and a
 * YOLOv8-seg instance mask, sampled over a part of the model's map. */
#ifndef GST_NPU_DECODE_DENSE_H
#define GST_NPU_DECODE_DENSE_H

#include <glib.h>

G_BEGIN_DECLS

/* Map pixels [x, x + w) x [y, y + h) of a width x height map. */
typedef struct {
  guint x, y, w, h;
} GstNpuMapCrop;

/* The class of each crop pixel, row-major into `out` (crop.w * crop.h
 * bytes): the best of `classes` score planes ([classes, height, width]
 * float32). */
void gst_npu_class_map_from_scores(const float *scores, guint classes, guint width, guint height,
                                   const GstNpuMapCrop *crop, guint8 *out);

/* The same from a map of class ids ([height, width], float32 or int64 as
 * `int64_ids` says, each 0..255: see gst_npu_class_ids_valid()); returns the
 * largest id of the crop. */
guint gst_npu_class_map_from_ids(gconstpointer ids, gboolean int64_ids, guint width,
                                 const GstNpuMapCrop *crop, guint8 *out);

/* Whether all `count` ids are class ids 0..255; else FALSE and the first
 * other one's index. */
gboolean gst_npu_class_ids_valid(gconstpointer ids, gboolean int64_ids, gsize count, gsize *bad);

/* A YOLOv8-seg instance mask, mask_width x mask_height bytes of 0 or 255:
 * pixel (i, j) is the prototype pixel nearest to the box point
 * (x0 + (i + 0.5) * (x1 - x0) / mask_width, y0 + ...) (box in prototype
 * pixels), on where coefficients . prototypes > 0 (sigmoid > 0.5).
 * `prototypes` is [n, proto_height, proto_width]; coefficient k is
 * coefficients[k * coefficient_stride]. */
void gst_npu_instance_mask(const float *prototypes, guint n, guint proto_width,
                           guint proto_height, const float *coefficients,
                           gsize coefficient_stride, const gdouble box[4], guint mask_width,
                           guint mask_height, guint8 *out);

G_END_DECLS

#endif
