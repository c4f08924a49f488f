/* npuinfer's runner: a loaded model planned on the device (one context,
 * reshaped per batch shape), and the device work of a batch: every frame or
 * crop pre-processed into the model input by one VPP call on the runner's
 * pre-processing stream (after what their lanes' streams still do on the
 * frames), the model run on the runner's stream once that is done, and completion
 * reported from a host function on that stream (no host synchronisation):
 * by then the outputs are written and the frames' imports released.
 *
 * Errors are GErrors in GStreamer's domains whose message is the text for
 * users, then a newline and the details (see gst_npu_infer_post_error). */
#ifndef GST_NPU_INFER_RUNNER_H
#define GST_NPU_INFER_RUNNER_H

#include <gst/gst.h>
#include <gst/video/video.h>
#include <npu/npu.h>

#include "gstnpuinputsize.h"

G_BEGIN_DECLS

#define GST_NPU_INFER_MAX_BATCH 64
#define GST_NPU_INFER_MAX_OUTPUTS 16

/* The pre-processing a model runs with (taken from the element's
 * properties when the model is loaded, so that it switches with it). */
typedef struct {
  gfloat mean[3], std[3];
  gdouble scale;          /* input = (pixel * scale - mean) / std */
  gboolean bgr;           /* channel order */
  gboolean letterbox;
  npu_precision precision; /* the model's context's (npu_context_options) */
  GstNpuInputPolicy sizes; /* the model's own axes are filled in at load */
} GstNpuInferSettings;

typedef struct _GstNpuInferModel GstNpuInferModel;

/* Loads `path`, checks that it takes images, and plans it for `frames`
 * frames where its sizes are known (NULL with an error otherwise). */
GstNpuInferModel *gst_npu_infer_model_load(npu_device *device, const gchar *path,
                                           const GstNpuInferSettings *settings, guint frames,
                                           GError **error);
/* With none of its runs pending. */
void gst_npu_infer_model_free(GstNpuInferModel *model);
const gchar *gst_npu_infer_model_path(const GstNpuInferModel *model);
/* Most frames one execution takes: batch_size, or the model's fixed batch. */
guint gst_npu_infer_model_batch_limit(const GstNpuInferModel *model, guint batch_size);
/* The input size for content of width x height pixels. */
void gst_npu_infer_model_input_size(const GstNpuInferModel *model, guint width, guint height,
                                    guint *input_width, guint *input_height);
/* Whether crops of different sizes make different input sizes. */
gboolean gst_npu_infer_model_sizes_follow_crops(const GstNpuInferModel *model);

/* One slot of a batch: a frame, or a crop of it. The frame must stay alive
 * (this very buffer: it is read and mapped, not referenced, so that the
 * caller may add metas) until the batch is done. */
typedef struct {
  GstBuffer *frame;
  const GstVideoInfo *info;
  npu_stream **stream;  /* its lane's stream, made on first use, the lane's to destroy */
  const gchar *lane;    /* for messages */
  npu_rect crop;        /* 0 x 0: the whole frame */
  npu_rotation rotation;
  guint width, height;  /* the input size it wants; 0: asked of the model */
  npu_letterbox mapping; /* out: frame -> model input */
} GstNpuInferSlot;

/* The content size of a slot (the crop clamped to the frame, turned). */
void gst_npu_infer_slot_content(const GstNpuInferSlot *slot, guint *width, guint *height);

typedef struct _GstNpuInferRunner GstNpuInferRunner;
typedef struct _GstNpuInferBatch GstNpuInferBatch;

/* Called once a batch's outputs are written and its inputs released (on a
 * stream's thread: keep it short, never wait for device work). */
typedef void (*GstNpuInferDone)(gpointer user_data);

GstNpuInferRunner *gst_npu_infer_runner_new(npu_device *device, GError **error);
/* Waits for the batches queued (their done functions run first). */
void gst_npu_infer_runner_free(GstNpuInferRunner *runner);
GstAllocator *gst_npu_infer_runner_allocator(GstNpuInferRunner *runner);

/* Queues the pre-processing and the run of `count` slots (frames listed
 * more than once are read once). NULL with an error when it cannot (what
 * was queued is waited for). */
GstNpuInferBatch *gst_npu_infer_runner_run(GstNpuInferRunner *runner, GstNpuInferModel *model,
                                           GstNpuInferSlot *slots, guint count,
                                           GError **error);
/* The batch's outputs (not written before it is done), their shapes and
 * the frames the model ran on (the batch axis). */
GstBuffer *const *gst_npu_infer_batch_outputs(GstNpuInferBatch *batch,
                                              const npu_tensor_info **infos, guint *n_outputs,
                                              guint *frames);
/* Calls `done` when the batch is over and frees the batch. */
void gst_npu_infer_runner_finish(GstNpuInferRunner *runner, GstNpuInferBatch *batch,
                                 GstNpuInferDone done, gpointer user_data);

/* Posts `error` (from this file) as an element error message. */
void gst_npu_infer_post_error(GstElement *element, const GError *error);

G_END_DECLS

#endif
