/* The device every gst-npu element of a pipeline shares, through a
 * "gst.npu.device" GstContext (the way gst-libs/gst/cuda shares its
 * context): an element looks for it in a set context, asks its neighbours
 * (context queries on its pads), then the application (need-context
 * message); only when nobody has one does it open the device itself and
 * announce it (have-context), so that the elements after it join it.
 *
 * An application gives its own device with
 *   GstContext *context = gst_npu_device_context_new(device);
 *   gst_element_set_context(pipeline, context);
 * or by answering the need-context message with it. */
#ifndef GST_NPU_DEVICE_CONTEXT_H
#define GST_NPU_DEVICE_CONTEXT_H

#include <gst/gst.h>
#include <npu/npu.h>

G_BEGIN_DECLS

#define GST_NPU_DEVICE_CONTEXT_TYPE "gst.npu.device"

/* A persistent context holding `device` (a reference of its own). */
GstContext *gst_npu_device_context_new(npu_device *device);

/* From an element's set_context: takes the context's device into *device
 * when *device is NULL, the context is ours and the device matches
 * `device_id` (-1: any). Returns whether *device is set. */
gboolean gst_npu_handle_set_context(GstElement *element, GstContext *context, gint device_id,
                                    npu_device **device);

/* From a pad's or element's query function: answers a context query for
 * our type with `device` (when there is one). Returns whether it answered. */
gboolean gst_npu_handle_context_query(GstElement *element, GstQuery *query, npu_device *device);

/* Makes sure *device is set: a context already set, a neighbour's, the
 * application's, else the device `device_id` opened and announced. Posts an
 * element error and returns FALSE when it cannot be opened. */
gboolean gst_npu_ensure_element_device(GstElement *element, gint device_id,
                                       npu_device **device);

G_END_DECLS

#endif
