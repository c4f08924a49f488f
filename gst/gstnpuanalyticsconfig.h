/* npuanalytics' lines and zones, from its properties
 * ("door:100,0,100,480;exit:...", "lobby:0,0,320,0,320,240,0,240;...") or
 * from a JSON file:
 *   {"lines": [{"name": "door", "points": [[100, 0], [100, 480]]}],
 *    "zones": [{"name": "lobby", "points": [[0, 0], [320, 0], [320, 240]]}]}
 */
#ifndef GST_NPU_ANALYTICS_CONFIG_H
#define GST_NPU_ANALYTICS_CONFIG_H

#include <glib.h>

#include "analytics/zones.h"

G_BEGIN_DECLS

typedef struct {
  GPtrArray *line_names; /* gchar * */
  GArray *lines;         /* npu_line */
  GPtrArray *zone_names; /* gchar * */
  GPtrArray *zone_corners; /* GArray of npu_point per zone */
} GstNpuAnalyticsConfig;

GstNpuAnalyticsConfig *gst_npu_analytics_config_new(void);
void gst_npu_analytics_config_free(GstNpuAnalyticsConfig *config);

/* Adds the lines and zones of the property strings (either may be NULL). */
gboolean gst_npu_analytics_config_add_strings(GstNpuAnalyticsConfig *config, const gchar *lines,
                                              const gchar *zones, GError **error);
gboolean gst_npu_analytics_config_add_file(GstNpuAnalyticsConfig *config, const gchar *path,
                                           GError **error);

/* The zones as npu_analytics takes them (valid while config lives). */
GArray *gst_npu_analytics_config_zones(const GstNpuAnalyticsConfig *config);

G_END_DECLS

#endif
