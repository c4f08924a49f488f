#include "gstnpuinputsize.h"

gboolean gst_npu_input_policy_is_dynamic(const GstNpuInputPolicy *policy)
{
  return (policy->model_width <= 0 && policy->width == 0) ||
         (policy->model_height <= 0 && policy->height == 0);
}

gboolean gst_npu_input_policy_keeps_scale(const GstNpuInputPolicy *policy)
{
  return policy->model_width <= 0 && policy->width == 0 && policy->model_height <= 0 &&
         policy->height == 0;
}

guint gst_npu_input_round(const GstNpuInputPolicy *policy, guint64 value)
{
  guint64 step = MAX(policy->multiple, 1);
  if (policy->buckets)
    while (value > 8 * step) /* 4 x multiple .. 8 x multiple in steps of `multiple`, ... */
      step *= 2;
  guint64 rounded = (MAX(value, 1) + step - 1) / step * step;
  /* the largest multiple within max_size: the cap keeps the model's strides */
  guint64 cap = MAX(policy->max_size / MAX(policy->multiple, 1), 1) * MAX(policy->multiple, 1);
  return (guint)MIN(rounded, cap);
}

/* An axis fixed by the model or by a size given for it (rounded up to the
 * multiple: a detector whose strides do not divide its input cannot run). */
static guint fixed_axis(const GstNpuInputPolicy *policy, gint64 model, guint given)
{
  if (model > 0)
    return (guint)MIN(model, G_MAXUINT);
  if (given == 0)
    return 0;
  guint64 step = MAX(policy->multiple, 1);
  return (guint)MIN((given + step - 1) / step * step, G_MAXUINT);
}

void gst_npu_input_size_for(const GstNpuInputPolicy *policy, guint content_width,
                            guint content_height, guint *width, guint *height)
{
  guint w = fixed_axis(policy, policy->model_width, policy->width);
  guint h = fixed_axis(policy, policy->model_height, policy->height);
  double cw = MAX(content_width, 1), ch = MAX(content_height, 1);
  if (gst_npu_input_policy_keeps_scale(policy)) { /* its own size, shrunk to fit max_size */
    double scale = MIN(1.0, policy->max_size / MAX(cw, ch));
    w = gst_npu_input_round(policy, (guint64)(cw * scale + 0.999));
    h = gst_npu_input_round(policy, (guint64)(ch * scale + 0.999));
  } else if (w == 0) { /* the aspect ratio at the fixed height */
    w = gst_npu_input_round(policy, (guint64)MIN(h * cw / ch + 0.999, (double)G_MAXUINT));
  } else if (h == 0) {
    h = gst_npu_input_round(policy, (guint64)MIN(w * ch / cw + 0.999, (double)G_MAXUINT));
  }
  *width = w;
  *height = h;
}
