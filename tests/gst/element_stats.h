/* What the gst-check tests read from an element's read-only `stats`. */
#ifndef NPU_TEST_ELEMENT_STATS_H
#define NPU_TEST_ELEMENT_STATS_H

#include <gst/check/gstcheck.h>

/* A figure of the stats of the element named `element` in `pipeline`. */
static inline guint64 stat_of(GstElement *pipeline, const gchar *element, const gchar *field)
{
  GstElement *e = gst_bin_get_by_name(GST_BIN(pipeline), element);
  fail_unless(e != NULL);
  GstStructure *stats = NULL;
  g_object_get(e, "stats", &stats, NULL);
  guint64 value = G_MAXUINT64;
  fail_unless(gst_structure_get_uint64(stats, field, &value), "no %s in %" GST_PTR_FORMAT, field,
              stats);
  gst_structure_free(stats);
  gst_object_unref(e);
  return value;
}

#endif
