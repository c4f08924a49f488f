/* GstNpuTensorMeta (see include/gst/npu/npu-tensor-meta.h). */
#include "gst/npu/npu-tensor-meta.h"

#include <string.h>

static void tensors_free(GstNpuTensorMeta *meta)
{
  for (guint i = 0; i < meta->n_tensors; i++) {
    g_free(meta->tensors[i].name);
    if (meta->tensors[i].data)
      gst_buffer_unref(meta->tensors[i].data);
  }
  g_free(meta->tensors);
  meta->tensors = NULL;
  meta->n_tensors = 0;
}

static gboolean tensor_meta_init(GstMeta *meta, gpointer params, GstBuffer *buffer)
{
  (void)params;
  (void)buffer;
  GstNpuTensorMeta *m = (GstNpuTensorMeta *)meta;
  m->n_tensors = 0;
  m->tensors = NULL;
  m->batch_index = m->batch_size = m->pad_index = 0;
  m->roi_id = -1;
  m->scale_x = m->scale_y = m->offset_x = m->offset_y = 0;
  return TRUE;
}

static void tensor_meta_free(GstMeta *meta, GstBuffer *buffer)
{
  (void)buffer;
  tensors_free((GstNpuTensorMeta *)meta);
}

/* Copies travel with the frame: the tensor data is shared (never written
 * once attached). */
static gboolean tensor_meta_transform(GstBuffer *dest, GstMeta *meta, GstBuffer *buffer,
                                      GQuark type, gpointer data)
{
  (void)buffer;
  (void)type;
  (void)data;
  const GstNpuTensorMeta *from = (const GstNpuTensorMeta *)meta;
  GstNpuTensorMeta *to = gst_buffer_add_npu_tensor_meta(dest, from->n_tensors);
  if (!to)
    return FALSE;
  to->batch_index = from->batch_index;
  to->batch_size = from->batch_size;
  to->pad_index = from->pad_index;
  to->roi_id = from->roi_id;
  to->scale_x = from->scale_x;
  to->scale_y = from->scale_y;
  to->offset_x = from->offset_x;
  to->offset_y = from->offset_y;
  for (guint i = 0; i < from->n_tensors; i++) {
    to->tensors[i] = from->tensors[i];
    to->tensors[i].name = g_strdup(from->tensors[i].name);
    to->tensors[i].data = from->tensors[i].data ? gst_buffer_ref(from->tensors[i].data) : NULL;
  }
  return TRUE;
}

GType gst_npu_tensor_meta_api_get_type(void)
{
  static GType type = 0;
  static const gchar *tags[] = {NULL};
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, gst_meta_api_type_register("GstNpuTensorMetaAPI", tags));
  return type;
}

const GstMetaInfo *gst_npu_tensor_meta_get_info(void)
{
  static const GstMetaInfo *info = NULL;
  if (g_once_init_enter(&info)) {
    const GstMetaInfo *registered = gst_meta_register(
        GST_NPU_TENSOR_META_API_TYPE, "GstNpuTensorMeta", sizeof(GstNpuTensorMeta),
        tensor_meta_init, tensor_meta_free, tensor_meta_transform);
    g_once_init_leave(&info, registered);
  }
  return info;
}

/**
 * gst_buffer_add_npu_tensor_meta: (skip)
 *
 * For elements, which fill the tensors in C.
 */
GstNpuTensorMeta *gst_buffer_add_npu_tensor_meta(GstBuffer *buffer, guint n_tensors)
{
  GstNpuTensorMeta *meta =
      (GstNpuTensorMeta *)gst_buffer_add_meta(buffer, GST_NPU_TENSOR_META_INFO, NULL);
  if (!meta)
    return NULL;
  meta->tensors = g_new0(GstNpuTensor, n_tensors ? n_tensors : 1);
  meta->n_tensors = n_tensors;
  return meta;
}

/**
 * gst_npu_tensor_meta_find:
 * @meta: a tensor meta
 * @name: an output name of the model
 *
 * Returns: (transfer none) (nullable): the tensor named @name, valid while the buffer lives
 */
const GstNpuTensor *gst_npu_tensor_meta_find(const GstNpuTensorMeta *meta, const gchar *name)
{
  for (guint i = 0; meta && i < meta->n_tensors; i++)
    if (g_strcmp0(meta->tensors[i].name, name) == 0)
      return &meta->tensors[i];
  return NULL;
}

/**
 * gst_npu_tensor_map: (skip)
 *
 * Bindings read the values with gst_npu_tensor_get_bytes().
 */
gconstpointer gst_npu_tensor_map(const GstNpuTensor *tensor, GstMapInfo *map)
{
  g_return_val_if_fail(tensor != NULL && map != NULL, NULL);
  if (!tensor->data || !gst_buffer_map(tensor->data, map, GST_MAP_READ))
    return NULL;
  if (tensor->size > map->size || tensor->offset > map->size - tensor->size) {
    gst_buffer_unmap(tensor->data, map);
    return NULL;
  }
  return map->data + tensor->offset;
}

/**
 * gst_npu_tensor_unmap: (skip)
 */
void gst_npu_tensor_unmap(const GstNpuTensor *tensor, GstMapInfo *map)
{
  g_return_if_fail(tensor != NULL && tensor->data != NULL && map != NULL);
  gst_buffer_unmap(tensor->data, map);
}

/**
 * gst_buffer_get_npu_tensor_metas:
 * @buffer: a frame
 *
 * Returns: (transfer container) (element-type GstNpuTensorMeta): every tensor meta of
 * @buffer (one per ROI in npuinfer's roi mode), valid while the buffer lives
 */
GList *gst_buffer_get_npu_tensor_metas(GstBuffer *buffer)
{
  g_return_val_if_fail(GST_IS_BUFFER(buffer), NULL);
  GList *metas = NULL;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_NPU_TENSOR_META_API_TYPE)))
    metas = g_list_prepend(metas, meta);
  return g_list_reverse(metas);
}

/**
 * gst_npu_tensor_meta_get_tensor:
 * @meta: a tensor meta
 * @index: 0 to n_tensors - 1
 *
 * Returns: (transfer none) (nullable): the @index-th tensor, valid while the buffer lives
 */
const GstNpuTensor *gst_npu_tensor_meta_get_tensor(const GstNpuTensorMeta *meta, guint index)
{
  g_return_val_if_fail(meta != NULL, NULL);
  return index < meta->n_tensors ? &meta->tensors[index] : NULL;
}

/**
 * gst_npu_tensor_get_dims:
 * @tensor: a tensor
 * @rank: (out): the number of dims
 *
 * Returns: (array length=rank) (transfer none): the dims, the batch axis 1
 */
const gint64 *gst_npu_tensor_get_dims(const GstNpuTensor *tensor, guint *rank)
{
  g_return_val_if_fail(tensor != NULL && rank != NULL, NULL);
  *rank = tensor->rank;
  return tensor->dims;
}

typedef struct {
  GstBuffer *data;
  GstMapInfo map;
} TensorMapping;

static void tensor_mapping_free(gpointer data)
{
  TensorMapping *mapping = data;
  gst_buffer_unmap(mapping->data, &mapping->map);
  gst_buffer_unref(mapping->data);
  g_free(mapping);
}

/**
 * gst_npu_tensor_get_bytes:
 * @tensor: a tensor
 *
 * The values, row-major, of the type the dtype code says. The device memory
 * stays mapped (not copied) until the GBytes is freed.
 *
 * Returns: (transfer full) (nullable): the values, or %NULL when they cannot be mapped
 */
GBytes *gst_npu_tensor_get_bytes(const GstNpuTensor *tensor)
{
  g_return_val_if_fail(tensor != NULL, NULL);
  TensorMapping *mapping = g_new0(TensorMapping, 1);
  gconstpointer values = gst_npu_tensor_map(tensor, &mapping->map);
  if (!values) {
    g_free(mapping);
    return NULL;
  }
  mapping->data = gst_buffer_ref(tensor->data);
  return g_bytes_new_with_free_func(values, tensor->size, tensor_mapping_free, mapping);
}
