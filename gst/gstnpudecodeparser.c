#include "gstnpudecodeparser.h"

#include <gmodule.h>

#include "gst/npu/npu-decoder.h"

struct _GstNpuDecodeParser {
  GModule *module;
  const GstNpuDecoderInfo *info;
  void *state;
};

#define PARSER_ERROR_SIZE 512

static void parsed_region_free(gpointer data)
{
  GstNpuParsedRegion *region = data;
  g_free(region->label);
  if (region->param) /* NULL once npudecode took it */
    gst_structure_free(region->param);
  g_free(region);
}

GstNpuDecodeParser *gst_npu_decode_parser_load(const gchar *path, const gchar *options,
                                               GError **error)
{
  GstNpuDecodeParser *parser = g_new0(GstNpuDecodeParser, 1);
  GstNpuDecoderGetInfo get_info = NULL;
  char message[PARSER_ERROR_SIZE] = "";
  parser->module = g_module_open(path, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (!parser->module)
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
                "Cannot load parser '%s': %s", path, g_module_error());
  else if (!g_module_symbol(parser->module, GST_NPU_DECODER_ENTRY_POINT, (gpointer *)&get_info) ||
           !get_info)
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
                "Parser '%s' exports no " GST_NPU_DECODER_ENTRY_POINT "()", path);
  else if (!(parser->info = get_info()) || !parser->info->parse)
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
                "Parser '%s' gives no parse function", path);
  else if (parser->info->abi_version != GST_NPU_DECODER_ABI_VERSION)
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
                "Parser '%s' is built for decoder ABI version %u; npudecode has version %u",
                path, parser->info->abi_version, GST_NPU_DECODER_ABI_VERSION);
  else if (parser->info->create &&
           parser->info->create(options, &parser->state, message, sizeof message) != 0)
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
                "Parser '%s' refuses options '%s': %s", path, options ? options : "",
                message[0] ? message : "no reason given");
  else
    return parser;
  parser->info = NULL; /* nothing created: nothing to destroy */
  gst_npu_decode_parser_free(parser);
  return NULL;
}

void gst_npu_decode_parser_free(GstNpuDecodeParser *parser)
{
  if (!parser)
    return;
  if (parser->info && parser->info->destroy)
    parser->info->destroy(parser->state);
  if (parser->module)
    g_module_close(parser->module);
  g_free(parser);
}

const gchar *gst_npu_decode_parser_name(const GstNpuDecodeParser *parser)
{
  return parser->info->name ? parser->info->name : "(unnamed)";
}

/* The output callbacks: `context` is the regions array. */
static GstStructure *param_of(const GstNpuDecoderOutput *out, int region, const char *field)
{
  GPtrArray *regions = out->context;
  if (!field || region < 0 || (guint)region >= regions->len)
    return NULL;
  return ((GstNpuParsedRegion *)g_ptr_array_index(regions, region))->param;
}

static int add_region(const GstNpuDecoderOutput *out, const char *param, const char *label,
                      int class_id, double confidence, double x, double y, double w, double h)
{
  GPtrArray *regions = out->context;
  if (!label || regions->len >= G_MAXINT)
    return -1;
  GstNpuParsedRegion *region = g_new(GstNpuParsedRegion, 1);
  *region = (GstNpuParsedRegion){g_strdup(label), x, y, w, h,
                                 gst_structure_new(param ? param : "detection", "label",
                                                   G_TYPE_STRING, label, "class-id", G_TYPE_INT,
                                                   class_id, "confidence", G_TYPE_DOUBLE,
                                                   confidence, NULL)};
  g_ptr_array_add(regions, region);
  return (int)regions->len - 1;
}

/* Takes `value` onto the region's param as `field`. */
static int set_field(const GstNpuDecoderOutput *out, int region, const char *field, GValue *value)
{
  GstStructure *param = param_of(out, region, field);
  if (!param) {
    g_value_unset(value);
    return -1;
  }
  gst_structure_take_value(param, field, value);
  return 0;
}

static int set_int(const GstNpuDecoderOutput *out, int region, const char *field, int value)
{
  GValue number = G_VALUE_INIT;
  g_value_set_int(g_value_init(&number, G_TYPE_INT), value);
  return set_field(out, region, field, &number);
}

static int set_double(const GstNpuDecoderOutput *out, int region, const char *field,
                      double value)
{
  GValue number = G_VALUE_INIT;
  g_value_set_double(g_value_init(&number, G_TYPE_DOUBLE), value);
  return set_field(out, region, field, &number);
}

static int set_string(const GstNpuDecoderOutput *out, int region, const char *field,
                      const char *value)
{
  if (!value)
    return -1;
  GValue text = G_VALUE_INIT;
  g_value_set_string(g_value_init(&text, G_TYPE_STRING), value);
  return set_field(out, region, field, &text);
}

static int set_doubles(const GstNpuDecoderOutput *out, int region, const char *field,
                       const double *values, size_t count)
{
  if (count && !values)
    return -1;
  GValue array = G_VALUE_INIT, number = G_VALUE_INIT;
  g_value_init(&array, GST_TYPE_ARRAY);
  g_value_init(&number, G_TYPE_DOUBLE);
  for (size_t i = 0; i < count; i++) {
    g_value_set_double(&number, values[i]);
    gst_value_array_append_value(&array, &number);
  }
  g_value_unset(&number);
  return set_field(out, region, field, &array);
}

GPtrArray *gst_npu_decode_parser_run(GstNpuDecodeParser *parser, const GstNpuTensorMeta *meta,
                                     guint width, guint height, GstClockTime pts,
                                     GError **error)
{
  GstNpuDecoderTensor *tensors = g_new0(GstNpuDecoderTensor, MAX(meta->n_tensors, 1));
  GstMapInfo *maps = g_new0(GstMapInfo, MAX(meta->n_tensors, 1));
  GPtrArray *regions = g_ptr_array_new_with_free_func(parsed_region_free);
  GError *failure = NULL;
  guint mapped = 0;
  for (; mapped < meta->n_tensors; mapped++) {
    const GstNpuTensor *t = &meta->tensors[mapped];
    const void *data = gst_npu_tensor_map(t, &maps[mapped]);
    if (!data) {
      g_set_error(&failure, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED, "Cannot read tensor '%s'",
                  t->name);
      break;
    }
    tensors[mapped] = (GstNpuDecoderTensor){t->name, t->dtype, t->rank, t->dims, data, t->size};
  }
  if (mapped == meta->n_tensors) {
    const GstNpuDecoderFrame frame = {
        tensors, meta->n_tensors, width, height, meta->scale_x, meta->scale_y, meta->offset_x,
        meta->offset_y, meta->roi_id,
        GST_CLOCK_TIME_IS_VALID(pts) ? (int64_t)pts : -1};
    const GstNpuDecoderOutput output = {regions, add_region, set_int, set_double, set_string,
                                        set_doubles};
    char message[PARSER_ERROR_SIZE] = "";
    if (parser->info->parse(parser->state, &frame, &output, message, sizeof message) != 0)
      g_set_error(&failure, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE, "Parser '%s' failed: %s",
                  gst_npu_decode_parser_name(parser), message[0] ? message : "no reason given");
  }
  while (mapped > 0) {
    mapped--;
    gst_npu_tensor_unmap(&meta->tensors[mapped], &maps[mapped]);
  }
  g_free(maps);
  g_free(tensors);
  if (failure) {
    g_propagate_error(error, failure);
    g_ptr_array_unref(regions);
    return NULL;
  }
  return regions;
}
