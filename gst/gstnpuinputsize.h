/* How npuinfer sizes the model input of one batch: the model's fixed axes,
 * the sizes the user gave for open axes, or (open axes, nothing given) the
 * content itself: the frame at its own size, or a crop at the fixed height
 * with its aspect ratio kept, rounded so that the model's strides divide it.
 * Pure arithmetic, no GStreamer: unit-tested alone. */
#ifndef GST_NPU_INPUT_SIZE_H
#define GST_NPU_INPUT_SIZE_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gint64 model_width, model_height; /* the model's W and H; <= 0: open */
  guint width, height;              /* input-width/height for open axes; 0: none */
  guint multiple;                   /* open axes are multiples of it (>= 1) */
  guint max_size;                   /* most pixels an open axis takes (>= multiple) */
  gboolean buckets;                 /* content of many sizes (crops): coarser steps */
} GstNpuInputPolicy;

/* Whether an axis follows the content (open, no size given). */
gboolean gst_npu_input_policy_is_dynamic(const GstNpuInputPolicy *policy);

/* Whether the content sizes both axes (none fixed): it is then only rounded
 * up, never enlarged (shrunk to max_size at most). */
gboolean gst_npu_input_policy_keeps_scale(const GstNpuInputPolicy *policy);

/* The input size for content of content_width x content_height pixels (a
 * frame or a crop; both > 0). A batch takes the largest of its jobs' sizes
 * and keeps each job's aspect ratio by padding (letterbox, top left). */
void gst_npu_input_size_for(const GstNpuInputPolicy *policy, guint content_width,
                            guint content_height, guint *width, guint *height);

/* `value` rounded up to the policy's step for it: a multiple of `multiple`;
 * with buckets, four steps per octave above 8 x multiple (so that crops of
 * many widths share a few execution plans, padding at most 25%); at most
 * max_size rounded down to the multiple. */
guint gst_npu_input_round(const GstNpuInputPolicy *policy, guint64 value);

G_END_DECLS

#endif
