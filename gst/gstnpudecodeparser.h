/* npudecode method=custom: a parser library (gst/npu/npu-decoder.h) loaded
 * with GModule, run on a tensor meta, its regions collected for the
 * element to attach. */
#ifndef GST_NPU_DECODE_PARSER_H
#define GST_NPU_DECODE_PARSER_H

#include <gst/gst.h>

#include "gst/npu/npu-tensor-meta.h"

G_BEGIN_DECLS

typedef struct _GstNpuDecodeParser GstNpuDecodeParser;

/* A region the parser added: its label, box in frame pixels and param. */
typedef struct {
  gchar *label;
  gdouble x, y, w, h;
  GstStructure *param;
} GstNpuParsedRegion;

/* Loads `path` and creates the parser's state from `options` (may be
 * NULL); NULL with *error set (GST_RESOURCE_ERROR) when the library, its
 * entry point, its ABI version or create() fails. */
GstNpuDecodeParser *gst_npu_decode_parser_load(const gchar *path, const gchar *options,
                                               GError **error);
void gst_npu_decode_parser_free(GstNpuDecodeParser *parser);
const gchar *gst_npu_decode_parser_name(const GstNpuDecodeParser *parser);

/* Runs the parser on one meta's tensors (mapped for the call) for a
 * width x height frame; returns the regions (a GPtrArray of
 * GstNpuParsedRegion, freed with g_ptr_array_unref), or NULL with *error
 * set (GST_STREAM_ERROR) when a tensor cannot be read or parse() fails. */
GPtrArray *gst_npu_decode_parser_run(GstNpuDecodeParser *parser, const GstNpuTensorMeta *meta,
                                     guint width, guint height, GstClockTime pts,
                                     GError **error);

G_END_DECLS

#endif
