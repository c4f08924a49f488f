/* GstNpuStreamFilter: the base of the elements that follow objects over
 * the frames of each stream (nputrack, npuanalytics, npupublish). Request
 * pads come in pairs (sink_%u, src_%u) as npuinfer's do, frames pass
 * through each pair untouched but for their metas, and a subclass keeps a
 * state per stream: per pad and, within a pad, per source (npuinfer's pad
 * index in the frame's tensor meta), so streams merged on one pad stay
 * apart. A stream's state is created on its first frame and dropped when
 * its pad flushes, starts a new stream or is released. */
#ifndef GST_NPU_STREAM_FILTER_H
#define GST_NPU_STREAM_FILTER_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_NPU_STREAM_FILTER (gst_npu_stream_filter_get_type())
G_DECLARE_DERIVABLE_TYPE(GstNpuStreamFilter, gst_npu_stream_filter, GST, NPU_STREAM_FILTER,
                         GstElement)

struct _GstNpuStreamFilterClass {
  GstElementClass parent_class;
  /* TRUE: frames are made writable (metas added) before process */
  gboolean writes_metas;
  /* a new stream's state; NULL (with an element error posted) fails the frame */
  gpointer (*stream_new)(GstNpuStreamFilter *self, gint stream);
  void (*stream_free)(gpointer state);
  /* one frame of a stream; @stream: the frame's source (tensor meta) when
   * it has one, else its sink pad's index */
  GstFlowReturn (*process)(GstNpuStreamFilter *self, gpointer state, gint stream,
                           GstBuffer *frame);
  /* READY -> PAUSED and back (optional) */
  gboolean (*start)(GstNpuStreamFilter *self);
  void (*stop)(GstNpuStreamFilter *self);
};

G_END_DECLS

#endif
