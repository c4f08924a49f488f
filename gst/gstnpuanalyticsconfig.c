#include "gstnpuanalyticsconfig.h"

#include <json-glib/json-glib.h>
#include <math.h>

#define CONFIG_ERROR g_quark_from_static_string("npu-analytics-config")

GstNpuAnalyticsConfig *gst_npu_analytics_config_new(void)
{
  GstNpuAnalyticsConfig *config = g_new0(GstNpuAnalyticsConfig, 1);
  config->line_names = g_ptr_array_new_with_free_func(g_free);
  config->lines = g_array_new(FALSE, FALSE, sizeof(npu_line));
  config->zone_names = g_ptr_array_new_with_free_func(g_free);
  config->zone_corners = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  return config;
}

void gst_npu_analytics_config_free(GstNpuAnalyticsConfig *config)
{
  if (!config)
    return;
  g_ptr_array_unref(config->line_names);
  g_array_unref(config->lines);
  g_ptr_array_unref(config->zone_names);
  g_ptr_array_unref(config->zone_corners);
  g_free(config);
}

/* A shape's corners checked and added: a line has 2, a zone 3 or more. */
static gboolean add_shape(GstNpuAnalyticsConfig *config, gboolean is_line, const gchar *name,
                          GArray *corners, GError **error)
{
  const gchar *kind = is_line ? "line" : "zone";
  if (!name || !*name) {
    g_set_error(error, CONFIG_ERROR, 0, "a %s without a name", kind);
    g_array_unref(corners);
    return FALSE;
  }
  if (is_line ? corners->len != 2 : corners->len < 3) {
    g_set_error(error, CONFIG_ERROR, 0, "%s '%s' has %u points (%s)", kind, name, corners->len,
                is_line ? "a line needs 2" : "a zone needs 3 or more");
    g_array_unref(corners);
    return FALSE;
  }
  if (is_line) {
    npu_line line = {g_array_index(corners, npu_point, 0), g_array_index(corners, npu_point, 1)};
    g_array_append_val(config->lines, line);
    g_ptr_array_add(config->line_names, g_strdup(name));
    g_array_unref(corners);
  } else {
    g_ptr_array_add(config->zone_names, g_strdup(name));
    g_ptr_array_add(config->zone_corners, corners);
  }
  return TRUE;
}

/* "name:x,y,x,y...;name:..." */
static gboolean add_string(GstNpuAnalyticsConfig *config, gboolean is_line, const gchar *text,
                           GError **error)
{
  gchar **shapes = g_strsplit(text, ";", -1);
  gboolean ok = TRUE;
  for (gchar **shape = shapes; ok && *shape; shape++) {
    if (!*g_strstrip(*shape))
      continue;
    gchar **parts = g_strsplit(*shape, ":", 2);
    if (!parts[1]) {
      g_set_error(error, CONFIG_ERROR, 0, "'%s' is not name:x,y,x,y...", *shape);
      g_strfreev(parts);
      ok = FALSE;
      break;
    }
    gchar **numbers = g_strsplit(parts[1], ",", -1);
    guint n = g_strv_length(numbers);
    GArray *corners = g_array_new(FALSE, FALSE, sizeof(npu_point));
    for (guint i = 0; ok && i < n; i++) {
      gchar *end;
      double value = g_ascii_strtod(g_strstrip(numbers[i]), &end);
      if (end == numbers[i] || *end || !isfinite(value) || n % 2) {
        g_set_error(error, CONFIG_ERROR, 0, "'%s': coordinates must be pairs of numbers",
                    *shape);
        ok = FALSE;
      } else if (i % 2) {
        npu_point p = {(float)g_ascii_strtod(numbers[i - 1], NULL), (float)value};
        g_array_append_val(corners, p);
      }
    }
    if (ok)
      ok = add_shape(config, is_line, g_strstrip(parts[0]), corners, error);
    else
      g_array_unref(corners);
    g_strfreev(numbers);
    g_strfreev(parts);
  }
  g_strfreev(shapes);
  return ok;
}

gboolean gst_npu_analytics_config_add_strings(GstNpuAnalyticsConfig *config, const gchar *lines,
                                              const gchar *zones, GError **error)
{
  return (!lines || add_string(config, TRUE, lines, error)) &&
         (!zones || add_string(config, FALSE, zones, error));
}

static gboolean add_json_shapes(GstNpuAnalyticsConfig *config, JsonObject *root,
                                gboolean is_line, GError **error)
{
  const gchar *member = is_line ? "lines" : "zones";
  if (!json_object_has_member(root, member))
    return TRUE;
  JsonNode *node = json_object_get_member(root, member);
  if (!JSON_NODE_HOLDS_ARRAY(node)) {
    g_set_error(error, CONFIG_ERROR, 0, "\"%s\" is not an array", member);
    return FALSE;
  }
  JsonArray *shapes = json_node_get_array(node);
  for (guint i = 0; i < json_array_get_length(shapes); i++) {
    JsonNode *shape_node = json_array_get_element(shapes, i);
    JsonObject *shape = JSON_NODE_HOLDS_OBJECT(shape_node) ? json_node_get_object(shape_node)
                                                           : NULL;
    JsonNode *name = shape ? json_object_get_member(shape, "name") : NULL;
    JsonNode *points = shape ? json_object_get_member(shape, "points") : NULL;
    if (!name || json_node_get_value_type(name) != G_TYPE_STRING || !points ||
        !JSON_NODE_HOLDS_ARRAY(points)) {
      g_set_error(error, CONFIG_ERROR, 0, "%s[%u] needs \"name\" (a string) and \"points\"",
                  member, i);
      return FALSE;
    }
    GArray *corners = g_array_new(FALSE, FALSE, sizeof(npu_point));
    JsonArray *list = json_node_get_array(points);
    for (guint k = 0; k < json_array_get_length(list); k++) {
      JsonNode *pair = json_array_get_element(list, k);
      JsonArray *xy = JSON_NODE_HOLDS_ARRAY(pair) ? json_node_get_array(pair) : NULL;
      JsonNode *x = xy && json_array_get_length(xy) == 2 ? json_array_get_element(xy, 0) : NULL;
      JsonNode *y = x ? json_array_get_element(xy, 1) : NULL;
      if (!x || !y || !JSON_NODE_HOLDS_VALUE(x) || !JSON_NODE_HOLDS_VALUE(y) ||
          (json_node_get_value_type(x) != G_TYPE_INT64 &&
           json_node_get_value_type(x) != G_TYPE_DOUBLE) ||
          (json_node_get_value_type(y) != G_TYPE_INT64 &&
           json_node_get_value_type(y) != G_TYPE_DOUBLE)) {
        g_set_error(error, CONFIG_ERROR, 0, "%s '%s': point %u is not [x, y]", member,
                    json_node_get_string(name), k);
        g_array_unref(corners);
        return FALSE;
      }
      npu_point p = {(float)json_node_get_double(x), (float)json_node_get_double(y)};
      g_array_append_val(corners, p);
    }
    if (!add_shape(config, is_line, json_node_get_string(name), corners, error))
      return FALSE;
  }
  return TRUE;
}

gboolean gst_npu_analytics_config_add_file(GstNpuAnalyticsConfig *config, const gchar *path,
                                           GError **error)
{
  JsonParser *parser = json_parser_new();
  gboolean ok = json_parser_load_from_file(parser, path, error);
  if (ok) {
    JsonNode *root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
      g_set_error(error, CONFIG_ERROR, 0, "not a JSON object");
      ok = FALSE;
    } else {
      JsonObject *object = json_node_get_object(root);
      ok = add_json_shapes(config, object, TRUE, error) &&
           add_json_shapes(config, object, FALSE, error);
    }
  }
  g_object_unref(parser);
  return ok;
}

GArray *gst_npu_analytics_config_zones(const GstNpuAnalyticsConfig *config)
{
  GArray *zones = g_array_new(FALSE, FALSE, sizeof(npu_zone));
  for (guint z = 0; z < config->zone_corners->len; z++) {
    GArray *corners = g_ptr_array_index(config->zone_corners, z);
    npu_zone zone = {(const npu_point *)corners->data, corners->len};
    g_array_append_val(zones, zone);
  }
  return zones;
}
