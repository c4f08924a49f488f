/* Properties set in a state that their flags do not allow. */
#ifndef GST_NPU_PROPERTY_H
#define GST_NPU_PROPERTY_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* Whether setting `pspec` on `element` now is refused: a property marked
 * GST_PARAM_MUTABLE_READY (read when the element starts) set while the
 * element is PAUSED or PLAYING. A refusal posts a warning message naming
 * the property; the value stays as it was. */
gboolean gst_npu_property_refused(GstElement *element, const GParamSpec *pspec);

G_END_DECLS

#endif
