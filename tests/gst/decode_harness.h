/* What npudecode's tests share: frames carrying hand-made tensors, label
 * files, and one frame through a pipeline. */
#ifndef NPU_DECODE_HARNESS_H
#define NPU_DECODE_HARNESS_H

#include <gst/gst.h>
#include <gst/npu/npu-tensor-meta.h>

#define FRAME 64 /* frames are FRAME x FRAME RGB */

/* Fills `t` with a copy of `size` bytes of values. */
void set_tensor(GstNpuTensor *t, const gchar *name, gint dtype, gconstpointer values, gsize size,
                guint rank, const gint64 *dims);

/* A black frame carrying one float32 tensor named "out" (none: values NULL). */
GstBuffer *frame_with_tensor(const float *values, gsize count, guint rank, const gint64 *dims);

/* A temporary file holding `text` (the caller unlinks and frees the path). */
gchar *write_labels(const gchar *text);

/* Runs one frame through `npudecode <options>`; returns the output frame,
 * or NULL with *error set to the element error's message. */
GstBuffer *decode(const gchar *options, GstBuffer *frame, gchar **error);

guint count_rois(GstBuffer *buffer);

#endif
