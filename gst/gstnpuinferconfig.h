/* npuinfer's `config`: a JSON object whose members are property values
 * ({"model": "det.onnx", "mean": [0.485, 0.456, 0.406], "mode": "roi"}),
 * read and checked as a whole before any is applied. */
#ifndef GST_NPU_INFER_CONFIG_H
#define GST_NPU_INFER_CONFIG_H

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _GstNpuInferConfig GstNpuInferConfig;

/* Reads `path` and checks each member names a writable property of
 * `object` (other than "config") with a plain value; NULL with an error
 * (GST_RESOURCE_ERROR; message: text, newline, details) otherwise. */
GstNpuInferConfig *gst_npu_infer_config_read(const gchar *path, GObject *object, GError **error);
void gst_npu_infer_config_free(GstNpuInferConfig *config);
/* The value the config gives `property`, or NULL. */
const gchar *gst_npu_infer_config_get(const GstNpuInferConfig *config, const gchar *property);
/* Sets the properties, `skip` (may be NULL) excepted. */
void gst_npu_infer_config_apply(const GstNpuInferConfig *config, GObject *object,
                                const gchar *skip);

G_END_DECLS

#endif
