/* Properties set in a state that their flags do not allow (see gstnpuproperty.h). */
#include "gstnpuproperty.h"

gboolean gst_npu_property_refused(GstElement *element, const GParamSpec *pspec)
{
  if (!(pspec->flags & GST_PARAM_MUTABLE_READY))
    return FALSE;
  GST_OBJECT_LOCK(element);
  GstState state = GST_STATE(element);
  GST_OBJECT_UNLOCK(element);
  if (state <= GST_STATE_READY)
    return FALSE;
  GST_ELEMENT_WARNING(element, CORE, STATE_CHANGE,
                      ("Property '%s' cannot change while %s: the value stays as it was",
                       pspec->name, gst_element_state_get_name(state)),
                      ("%s is read when the element starts: set it in the NULL or READY state",
                       pspec->name));
  return TRUE;
}
