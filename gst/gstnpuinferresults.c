/* npuinfer's results on the frames (see gstnpuinferresults.h). */
#include "gstnpuinferresults.h"

#include "gstnpuinferrunner.h"

struct _GstNpuInferResult {
  GstNpuTensorMeta meta; /* its tensors: names and data owned, the GstMeta header unused */
};

/* The ROI meta a result is for (the frame may be a copy by now). */
static GstVideoRegionOfInterestMeta *find_roi(GstBuffer *buffer, const GstNpuInferRoi *want)
{
  gpointer state = NULL;
  GstMeta *m;
  while ((m = gst_buffer_iterate_meta_filtered(buffer, &state,
                                               GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)m;
    if (roi->id == want->id && roi->roi_type == want->type && roi->x == want->x &&
        roi->y == want->y && roi->w == want->w && roi->h == want->h)
      return roi;
  }
  return NULL;
}

/* The ROI's tensors as an "npu-tensors" param of its meta: per output a
 * structure (dtype, dims, data: the shared output buffer, offset, size). */
static void add_roi_param(GstBuffer *buffer, const GstNpuInferRoi *want,
                          const GstNpuTensorMeta *meta, gboolean reused)
{
  GstVideoRegionOfInterestMeta *roi = find_roi(buffer, want);
  if (!roi)
    return;
  GstStructure *param = gst_structure_new(
      "npu-tensors", "roi-id", G_TYPE_INT, want->id, "pad-index", G_TYPE_UINT, meta->pad_index,
      "batch-index", G_TYPE_UINT, meta->batch_index, "reused", G_TYPE_BOOLEAN, reused, NULL);
  for (guint t = 0; t < meta->n_tensors; t++) {
    const GstNpuTensor *tensor = &meta->tensors[t];
    GValue dims = G_VALUE_INIT, dim = G_VALUE_INIT;
    gst_value_array_init(&dims, tensor->rank);
    g_value_init(&dim, G_TYPE_INT64);
    for (guint d = 0; d < tensor->rank; d++) {
      g_value_set_int64(&dim, tensor->dims[d]);
      gst_value_array_append_value(&dims, &dim);
    }
    g_value_unset(&dim);
    GstStructure *s = gst_structure_new("npu-tensor", "dtype", G_TYPE_INT, tensor->dtype,
                                        "data", GST_TYPE_BUFFER, tensor->data, "offset",
                                        G_TYPE_UINT64, (guint64)tensor->offset, "size",
                                        G_TYPE_UINT64, (guint64)tensor->size, NULL);
    gst_structure_take_value(s, "dims", &dims);
    gst_structure_set(param, tensor->name, GST_TYPE_STRUCTURE, s, NULL);
    gst_structure_free(s);
  }
  gst_video_region_of_interest_meta_add_param(roi, param);
}

/* A new meta on the frame, its fields from `from` (tensors copied,
 * their data referenced), for `roi`. */
static GstNpuTensorMeta *add_meta(GstBuffer **frame, const GstNpuTensorMeta *from,
                                  const GstNpuInferRoi *roi)
{
  *frame = gst_buffer_make_writable(*frame);
  GstNpuTensorMeta *meta = gst_buffer_add_npu_tensor_meta(*frame, from->n_tensors);
  meta->batch_index = from->batch_index;
  meta->batch_size = from->batch_size;
  meta->pad_index = from->pad_index;
  meta->roi_id = roi->id;
  meta->scale_x = from->scale_x;
  meta->scale_y = from->scale_y;
  meta->offset_x = from->offset_x;
  meta->offset_y = from->offset_y;
  for (guint t = 0; t < from->n_tensors; t++) {
    meta->tensors[t] = from->tensors[t];
    meta->tensors[t].name = g_strdup(from->tensors[t].name);
    meta->tensors[t].data = gst_buffer_ref(from->tensors[t].data);
  }
  return meta;
}

GstNpuTensorMeta *gst_npu_infer_attach_outputs(GstBuffer **frame, const GstNpuInferRoi *roi,
                                               const GstNpuInferPlace *place,
                                               GstBuffer *const *outputs,
                                               const npu_tensor_info *infos, guint n_outputs)
{
  g_return_val_if_fail(n_outputs <= GST_NPU_INFER_MAX_OUTPUTS, NULL);
  GstNpuTensor tensors[GST_NPU_INFER_MAX_OUTPUTS];
  GstNpuTensorMeta slice = {.n_tensors = n_outputs, .tensors = tensors,
                            .batch_index = place->slot, .batch_size = place->count,
                            .pad_index = place->pad_index, .roi_id = roi->id,
                            .scale_x = place->mapping.scale_x, .scale_y = place->mapping.scale_y,
                            .offset_x = place->mapping.pad_x, .offset_y = place->mapping.pad_y};
  for (guint o = 0; o < n_outputs; o++) {
    const npu_tensor_info *info = &infos[o];
    GstNpuTensor *t = &tensors[o];
    size_t total = npu_dtype_size(info->dtype);
    for (uint32_t d = 0; d < info->rank; d++)
      total *= (size_t)info->dims[d];
    /* batch-major outputs split by frame; others go whole to every frame */
    gboolean batched = info->rank > 0 && info->dims[0] == (int64_t)place->frames;
    *t = (GstNpuTensor){.name = (gchar *)info->name, .dtype = info->dtype,
                        .rank = MIN(info->rank, GST_NPU_TENSOR_MAX_RANK), .data = outputs[o]};
    for (guint d = 0; d < t->rank; d++)
      t->dims[d] = info->dims[d];
    if (batched)
      t->dims[0] = 1;
    t->size = batched ? total / place->frames : total;
    t->offset = batched ? place->slot * t->size : 0;
  }
  GstNpuTensorMeta *meta = add_meta(frame, &slice, roi);
  if (roi->id >= 0)
    add_roi_param(*frame, roi, meta, FALSE);
  return meta;
}

static void result_clear(gpointer data)
{
  GstNpuInferResult *result = data;
  for (guint t = 0; t < result->meta.n_tensors; t++) {
    g_free(result->meta.tensors[t].name);
    gst_buffer_unref(result->meta.tensors[t].data);
  }
  g_free(result->meta.tensors);
}

GstNpuInferResult *gst_npu_infer_result_new(const GstNpuTensorMeta *meta)
{
  GstNpuInferResult *result = g_atomic_rc_box_new0(GstNpuInferResult);
  result->meta = *meta;
  result->meta.tensors = g_new(GstNpuTensor, meta->n_tensors);
  for (guint t = 0; t < meta->n_tensors; t++) {
    result->meta.tensors[t] = meta->tensors[t];
    result->meta.tensors[t].name = g_strdup(meta->tensors[t].name);
    result->meta.tensors[t].data = gst_buffer_ref(meta->tensors[t].data);
  }
  return result;
}

gpointer gst_npu_infer_result_ref(gconstpointer result)
{
  return g_atomic_rc_box_acquire((gpointer)result);
}

void gst_npu_infer_result_unref(gpointer result)
{
  g_atomic_rc_box_release_full(result, result_clear);
}

void gst_npu_infer_result_attach(const GstNpuInferResult *result, GstBuffer **frame,
                                 const GstNpuInferRoi *roi, guint pad_index)
{
  GstNpuTensorMeta *meta = add_meta(frame, &result->meta, roi);
  meta->pad_index = pad_index;
  if (roi->id >= 0)
    add_roi_param(*frame, roi, meta, TRUE);
}

void gst_npu_infer_print_result(const gchar *pad, GstClockTime pts, const GstNpuTensorMeta *meta)
{
  GString *line = g_string_new(NULL);
  for (guint t = 0; t < meta->n_tensors; t++) {
    const GstNpuTensor *tensor = &meta->tensors[t];
    g_string_append_printf(line, " %s[", tensor->name);
    for (guint d = 0; d < tensor->rank; d++)
      g_string_append_printf(line, "%s%" G_GINT64_FORMAT, d ? "x" : "", tensor->dims[d]);
    g_string_append(line, "]");
    GstMapInfo map;
    const float *v = gst_npu_tensor_map(tensor, &map);
    if (v && tensor->dtype == NPU_DTYPE_FLOAT32) {
      for (gsize i = 0; i < tensor->size / 4 && i < 8; i++)
        g_string_append_printf(line, " %.4g", v[i]);
      if (tensor->size / 4 > 8)
        g_string_append(line, " ...");
    }
    if (v)
      gst_npu_tensor_unmap(tensor, &map);
  }
  gchar *roi = meta->roi_id >= 0 ? g_strdup_printf(" roi %d", meta->roi_id) : g_strdup("");
  g_print("npuinfer %s pts %" GST_TIME_FORMAT "%s batch %u/%u:%s\n", pad, GST_TIME_ARGS(pts), roi,
          meta->batch_index + 1, meta->batch_size, line->str);
  g_free(roi);
  g_string_free(line, TRUE);
}
