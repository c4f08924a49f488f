/* npuinfer's config file (see gstnpuinferconfig.h). */
#include "gstnpuinferconfig.h"

#include <json-glib/json-glib.h>

struct _GstNpuInferConfig {
  GPtrArray *names, *values; /* gchar*, in the file's order */
};

/* A JSON scalar, or an array of them, as the text gst_util_set_object_arg
 * takes ("0.5", "rgb", "0.485,0.456,0.406"); NULL for anything else. */
static gchar *config_text(JsonNode *node)
{
  if (JSON_NODE_HOLDS_VALUE(node)) {
    GType type = json_node_get_value_type(node);
    if (type == G_TYPE_STRING)
      return g_strdup(json_node_get_string(node));
    if (type == G_TYPE_BOOLEAN)
      return g_strdup(json_node_get_boolean(node) ? "true" : "false");
    if (type == G_TYPE_INT64)
      return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
    gchar number[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup(g_ascii_dtostr(number, sizeof number, json_node_get_double(node)));
  }
  if (!JSON_NODE_HOLDS_ARRAY(node))
    return NULL;
  JsonArray *array = json_node_get_array(node);
  GString *joined = g_string_new(NULL);
  for (guint i = 0; i < json_array_get_length(array); i++) {
    gchar *item = config_text(json_array_get_element(array, i));
    if (!item) {
      g_string_free(joined, TRUE);
      return NULL;
    }
    g_string_append_printf(joined, "%s%s", i ? "," : "", item);
    g_free(item);
  }
  return g_string_free(joined, FALSE);
}

GstNpuInferConfig *gst_npu_infer_config_read(const gchar *path, GObject *object, GError **error)
{
  JsonParser *parser = json_parser_new();
  GError *parse_error = NULL;
  gboolean ok = json_parser_load_from_file(parser, path, &parse_error);
  JsonNode *root = ok ? json_parser_get_root(parser) : NULL;
  if (!ok || !root || !JSON_NODE_HOLDS_OBJECT(root)) {
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
                "Cannot read the config '%s'\n%s", path,
                parse_error ? parse_error->message : "not a JSON object");
    g_clear_error(&parse_error);
    g_object_unref(parser);
    return NULL;
  }
  GstNpuInferConfig *config = g_new0(GstNpuInferConfig, 1);
  config->names = g_ptr_array_new_with_free_func(g_free);
  config->values = g_ptr_array_new_with_free_func(g_free);
  JsonObject *members = json_node_get_object(root);
  GList *names = json_object_get_members(members);
  for (GList *m = names; m && config; m = m->next) {
    const gchar *name = m->data;
    GParamSpec *pspec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    gchar *text = config_text(json_object_get_member(members, name));
    if (pspec && (pspec->flags & G_PARAM_WRITABLE) && g_strcmp0(name, "config") != 0 && text) {
      g_ptr_array_add(config->names, g_strdup(name));
      g_ptr_array_add(config->values, text);
      continue;
    }
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
                "Bad config '%s'\n'%s' is not an npuinfer property with a plain value", path,
                name);
    g_free(text);
    gst_npu_infer_config_free(config);
    config = NULL;
  }
  g_list_free(names);
  g_object_unref(parser);
  return config;
}

void gst_npu_infer_config_free(GstNpuInferConfig *config)
{
  if (!config)
    return;
  g_ptr_array_unref(config->names);
  g_ptr_array_unref(config->values);
  g_free(config);
}

const gchar *gst_npu_infer_config_get(const GstNpuInferConfig *config, const gchar *property)
{
  for (guint i = 0; i < config->names->len; i++)
    if (g_strcmp0(g_ptr_array_index(config->names, i), property) == 0)
      return g_ptr_array_index(config->values, i);
  return NULL;
}

void gst_npu_infer_config_apply(const GstNpuInferConfig *config, GObject *object,
                                const gchar *skip)
{
  for (guint i = 0; i < config->names->len; i++) {
    const gchar *name = g_ptr_array_index(config->names, i);
    if (g_strcmp0(name, skip) != 0)
      gst_util_set_object_arg(object, name, g_ptr_array_index(config->values, i));
  }
}
