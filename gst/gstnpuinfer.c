/**
 * SECTION:element-npuinfer
 *
 * Runs an ONNX model on video frames from any number of streams with one
 * loaded model. Each `sink_%u` request pad comes with its own `src_%u` and
 * its own runtime stream. Frames of all pads wait in one queue and are
 * batched into one execution (up to `batch-size`, waiting at most
 * `batch-timeout` for a batch to fill): the batch's frames are pre-processed
 * (scale, colour, normalise, layout) by one VPP pass straight into their
 * slots of the model input, once each pad's stream has its frames ready on
 * the device (uploads, syncs), the model runs once, and every frame
 * gets its slice of the outputs as a GstNpuTensorMeta (data left in device
 * memory). The frames themselves pass through untouched, each on its own
 * src pad in its pad's order, together with that pad's serialized events.
 *
 * Batches overlap: nothing waits for the device on the streaming threads;
 * a batch's frames are released by a host function on the model's stream
 * once its outputs are written, and up to `max-inflight` batches are on
 * the device at once (the next one pre-processed while one runs).
 *
 * In `mode=roi` (secondary inference) the model runs once per
 * GstVideoRegionOfInterestMeta of the frame instead (only those whose label
 * is in `roi-labels`, when set, and whose size is within `roi-min-size` and
 * `roi-max-size`): each ROI's rectangle is cropped out by the VPP (clamped
 * to the frame; empty ROIs are skipped) into its own slot of the batch, so
 * a batch may hold ROIs of several frames and pads. Each ROI's outputs are
 * attached as one more GstNpuTensorMeta whose `roi_id` is the ROI meta's
 * id, and as an "npu-tensors" structure param on the ROI meta. A ROI with
 * a tracked object (a param structure with an "object-id" field, as a
 * tracker writes) is inferred on every `reclassify-interval`th frame it is
 * in; on the others it gets its object's last result again ("reused" in
 * its npu-tensors param). Frames without (matching) ROIs pass on without
 * inference and without meta.
 *
 * Setting `model` (or `config`) while running loads and plans the new model
 * on a thread of its own; it replaces the old one between two batches (no
 * frame is lost, each frame's tensors come from one model) and an element
 * message "model-reloaded" says so. A model that cannot be loaded leaves
 * the old one running, with a warning and a "model-reload-failed" message.
 *
 * The device is shared with the pipeline's other NPU elements through a
 * "gst.npu.device" GstContext (or the application's).
 *
 * Chain functions return as soon as the frame is queued; they block while
 * `max-inflight` batches of frames are waiting (back-pressure), or while
 * that many are waiting to be pushed on a slow downstream. Frames that QoS
 * events from downstream say are late, and frames between `interval`s, pass
 * on without inference (never dropped).
 *
 * |[
 * gst-launch-1.0 videotestsrc ! npuinfer name=infer model=model.onnx batch-size=2 \
 *     batch-timeout=20000 print-results=true ! fakesink \
 *   videotestsrc pattern=ball ! infer.sink_1  infer.src_1 ! fakesink
 * ]|
 */
#include "gstnpuinfer.h"

#include <gst/video/video.h>
#include <math.h>
#include <npu/npu.h>
#include <stdio.h>
#include <string.h>

#include "gstnpubatcher.h"
#include "gstnpudevicecontext.h"
#include "gstnpuinferconfig.h"
#include "gstnpuinferresults.h"
#include "gstnpuinferrunner.h"
#include "gstnpumemory.h"
#include "gstnpuproperty.h"
#include "gstnpuvideo.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_infer_debug);
#define GST_CAT_DEFAULT gst_npu_infer_debug

typedef enum {
  GST_NPU_INFER_ORDER_RGB,
  GST_NPU_INFER_ORDER_BGR,
} GstNpuInferChannelOrder;

typedef enum {
  GST_NPU_INFER_MODE_FRAME,
  GST_NPU_INFER_MODE_ROI,
} GstNpuInferMode;

/* The runtime's npu_precision, value for value. */
typedef enum {
  GST_NPU_INFER_PRECISION_FP32 = NPU_PRECISION_FP32,
  GST_NPU_INFER_PRECISION_BF16 = NPU_PRECISION_BF16,
} GstNpuInferPrecision;

G_DEFINE_ENUM_TYPE(GstNpuInferChannelOrder, gst_npu_infer_channel_order,
                   G_DEFINE_ENUM_VALUE(GST_NPU_INFER_ORDER_RGB, "rgb"),
                   G_DEFINE_ENUM_VALUE(GST_NPU_INFER_ORDER_BGR, "bgr"))
G_DEFINE_ENUM_TYPE(GstNpuInferMode, gst_npu_infer_mode,
                   G_DEFINE_ENUM_VALUE(GST_NPU_INFER_MODE_FRAME, "frame"),
                   G_DEFINE_ENUM_VALUE(GST_NPU_INFER_MODE_ROI, "roi"))
G_DEFINE_ENUM_TYPE(GstNpuInferPrecision, gst_npu_infer_precision,
                   G_DEFINE_ENUM_VALUE(GST_NPU_INFER_PRECISION_FP32, "fp32"),
                   G_DEFINE_ENUM_VALUE(GST_NPU_INFER_PRECISION_BF16, "bf16"))

typedef struct _InferPad InferPad;

/* A frame or serialized event on its way through a pad (the batcher's
 * entry data). */
typedef struct {
  InferPad *pad;
  GstBuffer *buffer; /* a frame, or */
  GstEvent *event;   /* an event */
  GstVideoInfo info; /* the frame's caps */
} Item;

/* One slot of a batch: a whole frame, or one region of interest of it. */
typedef struct {
  GstNpuBatchJob base;
  GstNpuInferRoi roi; /* id -1: the whole frame */
  npu_rect crop;      /* 0x0: the whole frame */
  npu_rotation rotation; /* of the crop: a tall text region turned into a line */
  GstNpuTensorMeta *result; /* attached to the frame, readable once the batch is done */
} Job;

/* A sink/src pair. */
struct _InferPad {
  GstPad *sink, *src;
  guint index;
  GstNpuBatchLane *lane;
  GstVideoInfo info; /* streaming thread only */
  gboolean have_info;
  GstSegment segment;    /* streaming thread only */
  npu_stream *stream;    /* pre-processing of this pad's frames (batch thread) */
  GstClockTime earliest; /* QoS (object lock): frames running before this skip inference */
};

/* A batch on the device. */
typedef struct {
  GstNpuInfer *self;
  Job *jobs[GST_NPU_INFER_MAX_BATCH];
  guint count;
  gint64 started;
  gboolean print, remember;
} Flight;

struct _GstNpuInfer {
  GstElement parent;
  /* properties (under the object lock) */
  gchar *model_path;
  gchar *config_path; /* JSON: property values, applied when the element opens */
  gint device_id;
  guint batch_size;
  guint64 batch_timeout;
  guint max_inflight;
  guint interval, reclassify_interval;
  gfloat mean[3], std[3];
  gchar *refused_mean, *refused_std; /* a value set_property refused: start fails */
  gdouble scale;
  GstNpuInferChannelOrder order;
  gboolean letterbox;
  gboolean rotate_tall; /* roi mode: crops 1.5 x as tall as wide turned counter-clockwise */
  guint input_width, input_height; /* for models whose H/W are open; 0: the model's */
  guint size_multiple, max_input_size; /* open axes that follow the content */
  guint roi_min_size, roi_max_size;
  gboolean print_results;
  guint stats_interval; /* ms */
  GstNpuInferMode mode;
  GstNpuInferPrecision precision;
  gchar *roi_labels;
  GArray *roi_quarks; /* GQuark of each label of roi_labels; empty: all */
  guint model_batch;  /* the running model's fixed batch; 0: open */
  gint64 run_sum, run_max; /* submit -> done per batch, us */
  /* the runtime, from READY on */
  npu_device *device;
  GstNpuInferRunner *runner;
  GstNpuInferModel *model; /* the batch thread's while it runs */
  GstNpuBatcher *batcher;
  GThread *thread;
  gint64 last_stats; /* batch thread */
  GPtrArray *pads;   /* InferPad*, under the object lock */
  guint next_index;
  /* live reload (under the object lock) */
  gboolean running;          /* model/config changes reload */
  gboolean applying_config;  /* the config's model is no reload of its own */
  GThread *loader;
  gboolean loader_busy;
  guint reloads_asked, reloads_done;
  gboolean reload_config;    /* the next reload reads the config first */
  GstNpuInferModel *next_model; /* loaded, for the next batch boundary */
};

G_DEFINE_TYPE(GstNpuInfer, gst_npu_infer, GST_TYPE_ELEMENT)
GST_ELEMENT_REGISTER_DEFINE(npuinfer, "npuinfer", GST_RANK_NONE, GST_TYPE_NPU_INFER)

enum {
  PROP_0,
  PROP_MODEL,
  PROP_DEVICE_ID,
  PROP_BATCH_SIZE,
  PROP_BATCH_TIMEOUT,
  PROP_MAX_INFLIGHT,
  PROP_INTERVAL,
  PROP_MEAN,
  PROP_STD,
  PROP_SCALE,
  PROP_CHANNEL_ORDER,
  PROP_LETTERBOX,
  PROP_INPUT_WIDTH,
  PROP_INPUT_HEIGHT,
  PROP_PRINT_RESULTS,
  PROP_STATS_INTERVAL,
  PROP_STATS,
  PROP_MODE,
  PROP_ROI_LABELS,
  PROP_CONFIG,
  PROP_SIZE_MULTIPLE,
  PROP_MAX_INPUT_SIZE,
  PROP_ROTATE_TALL,
  PROP_ROI_MIN_SIZE,
  PROP_ROI_MAX_SIZE,
  PROP_RECLASSIFY_INTERVAL,
  PROP_PRECISION,
};

static void item_free(gpointer data)
{
  Item *item = data;
  if (item->buffer)
    gst_buffer_unref(item->buffer);
  if (item->event)
    gst_event_unref(item->event);
  g_free(item);
}

static Item *item_of(const Job *job)
{
  return job->base.entry->data;
}

/* ---- the model and its settings ------------------------------------------------------ */

/* A mean or std value set_property refused: FALSE with an error. */
static gboolean check_channel_values(GstNpuInfer *self, GError **error)
{
  GST_OBJECT_LOCK(self);
  const gchar *name = self->refused_mean ? "mean" : self->refused_std ? "std" : NULL;
  gchar *text = g_strdup(self->refused_mean ? self->refused_mean : self->refused_std);
  GST_OBJECT_UNLOCK(self);
  if (name)
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
                "Invalid %s '%s'\ngive 1 or 3 comma-separated numbers (one per input channel)",
                name, text);
  g_free(text);
  return name == NULL;
}

/* Under the object lock: the pre-processing properties, for a model. */
static void settings_locked(GstNpuInfer *self, GstNpuInferSettings *settings)
{
  *settings = (GstNpuInferSettings){
      .scale = self->scale, .bgr = self->order == GST_NPU_INFER_ORDER_BGR,
      .letterbox = self->letterbox, .precision = (npu_precision)self->precision,
      .sizes = {.width = self->input_width, .height = self->input_height,
                .multiple = self->size_multiple,
                .max_size = MAX(self->max_input_size, self->size_multiple),
                .buckets = self->mode == GST_NPU_INFER_MODE_ROI}};
  for (int c = 0; c < 3; c++) {
    settings->mean[c] = self->mean[c];
    settings->std[c] = self->std[c];
  }
}

/* Applies the `config` file's members (the model's too, without a reload
 * of its own). */
static gboolean apply_config(GstNpuInfer *self, GError **error)
{
  GST_OBJECT_LOCK(self);
  gchar *path = g_strdup(self->config_path);
  GST_OBJECT_UNLOCK(self);
  GstNpuInferConfig *config = path ? gst_npu_infer_config_read(path, G_OBJECT(self), error) : NULL;
  g_free(path);
  if (!config)
    return error == NULL || *error == NULL;
  GST_OBJECT_LOCK(self);
  self->applying_config = TRUE;
  GST_OBJECT_UNLOCK(self);
  gst_npu_infer_config_apply(config, G_OBJECT(self), NULL);
  GST_OBJECT_LOCK(self);
  self->applying_config = FALSE;
  GST_OBJECT_UNLOCK(self);
  gst_npu_infer_config_free(config);
  return TRUE;
}

/* Loads the model the properties name (after the config, when asked). */
static GstNpuInferModel *load_model(GstNpuInfer *self, gboolean read_config, GError **error)
{
  if ((read_config && !apply_config(self, error)) || !check_channel_values(self, error))
    return NULL;
  GstNpuInferSettings settings;
  GST_OBJECT_LOCK(self);
  gchar *path = g_strdup(self->model_path);
  settings_locked(self, &settings);
  guint frames = self->batch_size;
  GST_OBJECT_UNLOCK(self);
  GstNpuInferModel *model = gst_npu_infer_model_load(self->device, path, &settings, frames, error);
  g_free(path);
  return model;
}

/* The batcher's policy from the properties and the running model. */
static void update_policy(GstNpuInfer *self)
{
  GST_OBJECT_LOCK(self);
  guint batch = self->batch_size;
  if (self->model_batch > 0)
    batch = MIN(batch, self->model_batch);
  GstNpuBatchPolicy policy = {
      .batch_size = MAX(batch, 1), .timeout_us = (gint64)self->batch_timeout,
      .max_inflight = self->max_inflight, .interval = self->interval,
      .reclassify_interval = self->reclassify_interval,
      .same_size = self->mode == GST_NPU_INFER_MODE_ROI};
  GST_OBJECT_UNLOCK(self);
  gst_npu_batcher_set_policy(self->batcher, &policy);
}

/* Batch thread (or before it runs): `model` runs from now on. */
static void use_model(GstNpuInfer *self, GstNpuInferModel *model)
{
  gst_npu_infer_model_free(self->model);
  self->model = model;
  GST_OBJECT_LOCK(self);
  self->model_batch = gst_npu_infer_model_batch_limit(model, GST_NPU_INFER_MAX_BATCH);
  if (self->model_batch == GST_NPU_INFER_MAX_BATCH)
    self->model_batch = 0;
  GST_OBJECT_UNLOCK(self);
  update_policy(self);
}

/* Posts a warning (the pipeline goes on), then a "model-reload-failed" message. */
static void post_reload_failure(GstNpuInfer *self, const gchar *path, const GError *error)
{
  const gchar *newline = strchr(error->message, '\n');
  gchar *text = newline ? g_strndup(error->message, (gsize)(newline - error->message))
                        : g_strdup(error->message);
  gst_element_message_full(GST_ELEMENT(self), GST_MESSAGE_WARNING, error->domain, error->code,
                           g_strdup_printf("Model not reloaded, the old one keeps running: %s",
                                           text),
                           g_strdup(newline ? newline + 1 : NULL), __FILE__, GST_FUNCTION,
                           __LINE__);
  gst_element_post_message(
      GST_ELEMENT(self),
      gst_message_new_element(GST_OBJECT(self),
                              gst_structure_new("model-reload-failed", "model", G_TYPE_STRING,
                                                path, "error", G_TYPE_STRING, error->message,
                                                NULL)));
  g_free(text);
}

/* The loader thread: loads what the properties name while reloads are
 * asked, each loaded model waiting for the next batch boundary. */
static gpointer loader_thread(gpointer data)
{
  GstNpuInfer *self = data;
  GST_OBJECT_LOCK(self);
  while (self->reloads_done != self->reloads_asked && self->running) {
    guint asked = self->reloads_asked;
    gboolean read_config = self->reload_config;
    self->reload_config = FALSE;
    GST_OBJECT_UNLOCK(self);
    GError *error = NULL;
    GstNpuInferModel *model = load_model(self, read_config, &error);
    GST_OBJECT_LOCK(self);
    gchar *path = g_strdup(self->model_path);
    if (model) {
      gst_npu_infer_model_free(self->next_model);
      self->next_model = model;
    }
    self->reloads_done = asked;
    GST_OBJECT_UNLOCK(self);
    if (!model) {
      GST_WARNING_OBJECT(self, "reload of %s failed: %s", path, error->message);
      post_reload_failure(self, path, error);
      g_error_free(error);
    }
    g_free(path);
    GST_OBJECT_LOCK(self);
  }
  self->loader_busy = FALSE;
  GST_OBJECT_UNLOCK(self);
  return NULL;
}

/* A model or config set while running: loaded on the loader thread. */
static void ask_reload(GstNpuInfer *self, gboolean read_config)
{
  GST_OBJECT_LOCK(self);
  if (!self->running || self->applying_config) {
    GST_OBJECT_UNLOCK(self);
    return;
  }
  self->reloads_asked++;
  self->reload_config |= read_config;
  gboolean start = !self->loader_busy;
  self->loader_busy = TRUE;
  GThread *finished = start ? self->loader : NULL;
  if (start)
    self->loader = NULL;
  GST_OBJECT_UNLOCK(self);
  if (!start)
    return;
  if (finished) /* a loader that ran before has left its loop */
    g_thread_join(finished);
  GThread *loader = g_thread_new("npuinfer-load", loader_thread, self);
  GST_OBJECT_LOCK(self);
  self->loader = loader;
  GST_OBJECT_UNLOCK(self);
}

static void stop_loader(GstNpuInfer *self)
{
  GST_OBJECT_LOCK(self);
  self->running = FALSE;
  GThread *loader = self->loader;
  self->loader = NULL;
  GST_OBJECT_UNLOCK(self);
  if (loader)
    g_thread_join(loader);
  GST_OBJECT_LOCK(self);
  gst_npu_infer_model_free(self->next_model);
  self->next_model = NULL;
  self->reloads_done = self->reloads_asked;
  GST_OBJECT_UNLOCK(self);
}

/* Batch thread, between two batches: a model loaded meanwhile replaces the
 * running one once the batches of the old one are done. */
static void switch_model(GstNpuInfer *self, Job **jobs, guint count)
{
  GST_OBJECT_LOCK(self);
  GstNpuInferModel *next = self->next_model;
  self->next_model = NULL;
  GST_OBJECT_UNLOCK(self);
  if (!next)
    return;
  gst_npu_batcher_wait_inflight(self->batcher, 1); /* all but the batch just taken */
  use_model(self, next);
  gst_npu_batcher_forget_sizes(self->batcher);
  for (guint i = 0; i < count; i++)
    jobs[i]->base.width = jobs[i]->base.height = 0;
  GST_INFO_OBJECT(self, "now running %s", gst_npu_infer_model_path(next));
  gst_element_post_message(
      GST_ELEMENT(self),
      gst_message_new_element(GST_OBJECT(self),
                              gst_structure_new("model-reloaded", "model", G_TYPE_STRING,
                                                gst_npu_infer_model_path(next), NULL)));
}

/* ---- batches -------------------------------------------------------------------------- */

/* The batcher's size function (batch thread). */
static void job_input_size(GstNpuBatchJob *base, gpointer data)
{
  GstNpuInfer *self = data;
  Job *job = (Job *)base;
  Item *item = item_of(job);
  GstNpuInferSlot slot = {.info = &item->info, .crop = job->crop, .rotation = job->rotation};
  guint width, height;
  gst_npu_infer_slot_content(&slot, &width, &height);
  gst_npu_infer_model_input_size(self->model, width, height, &base->width, &base->height);
}

/* The batcher's hand-on of a tracked object's last result (under its lock,
 * before the frame is queued). */
static void reuse_result(gpointer frame, GstNpuBatchJob *base, gconstpointer result,
                         gpointer data)
{
  (void)data;
  Item *item = frame;
  gst_npu_infer_result_attach(result, &item->buffer, &((Job *)base)->roi, item->pad->index);
}

/* Under the batcher's statistics: the structure of the `stats` property
 * and the element messages. */
static GstStructure *build_stats(GstNpuInfer *self)
{
  guint64 batches, jobs;
  gst_npu_batcher_totals(self->batcher, &batches, &jobs);
  GST_OBJECT_LOCK(self);
  GstStructure *s = gst_structure_new(
      "npuinfer-stats", "batches", G_TYPE_UINT64, batches, "frames-inferred", G_TYPE_UINT64,
      jobs, "mean-batch", G_TYPE_DOUBLE, batches ? (double)jobs / (double)batches : 0.0,
      "mean-run-us", G_TYPE_DOUBLE, batches ? (double)self->run_sum / (double)batches : 0.0,
      "max-run-us", G_TYPE_INT64, self->run_max, NULL);
  for (guint i = 0; i < self->pads->len; i++) {
    InferPad *pad = g_ptr_array_index(self->pads, i);
    GstNpuBatchLaneStats lane;
    gst_npu_batcher_lane_stats(self->batcher, pad->lane, &lane);
    gchar *name = g_strdup_printf("sink_%u", pad->index);
    GstStructure *p = gst_structure_new(
        name, "frames", G_TYPE_UINT64, lane.frames, "inferences", G_TYPE_UINT64,
        lane.inferences, "mean-latency-us", G_TYPE_DOUBLE,
        lane.inferences ? (double)lane.latency_sum / (double)lane.inferences : 0.0,
        "max-latency-us", G_TYPE_INT64, lane.latency_max, "qos-skipped", G_TYPE_UINT64,
        lane.skipped_late, "tracked-reused", G_TYPE_UINT64, lane.skipped_tracked, NULL);
    gst_structure_set(s, name, GST_TYPE_STRUCTURE, p, NULL);
    gst_structure_free(p);
    g_free(name);
  }
  GST_OBJECT_UNLOCK(self);
  return s;
}

/* On the model's stream: the batch's outputs are written. */
static void batch_done(gpointer data)
{
  Flight *flight = data;
  GstNpuInfer *self = flight->self;
  for (guint i = 0; i < flight->count; i++) {
    Job *job = flight->jobs[i];
    Item *item = item_of(job);
    if (flight->print)
      gst_npu_infer_print_result(GST_PAD_NAME(item->pad->sink), GST_BUFFER_PTS(item->buffer),
                                 job->result);
    if (flight->remember && job->base.object_id >= 0)
      gst_npu_batcher_remember(self->batcher, item->pad->lane, job->base.object_id,
                               gst_npu_infer_result_new(job->result));
  }
  gint64 took = g_get_monotonic_time() - flight->started;
  GST_OBJECT_LOCK(self);
  self->run_sum += took;
  self->run_max = MAX(self->run_max, took);
  GST_OBJECT_UNLOCK(self);
  gst_npu_batcher_complete(self->batcher, (GstNpuBatchJob **)flight->jobs, flight->count, TRUE);
  g_free(flight);
}

/* Queues one batch on the device; FALSE after an error (posted). */
static gboolean run_batch(GstNpuInfer *self, Flight *flight)
{
  GstNpuInferSlot slots[GST_NPU_INFER_MAX_BATCH];
  for (guint i = 0; i < flight->count; i++) {
    Job *job = flight->jobs[i];
    Item *item = item_of(job);
    /* metas are added while the runner reads the frame: no copy then */
    item->buffer = gst_buffer_make_writable(item->buffer);
    slots[i] = (GstNpuInferSlot){.frame = item->buffer, .info = &item->info,
                                 .stream = &item->pad->stream,
                                 .lane = GST_PAD_NAME(item->pad->sink), .crop = job->crop,
                                 .rotation = job->rotation, .width = job->base.width,
                                 .height = job->base.height};
  }
  GError *error = NULL;
  GstNpuInferBatch *batch =
      gst_npu_infer_runner_run(self->runner, self->model, slots, flight->count, &error);
  if (!batch) {
    gst_npu_infer_post_error(GST_ELEMENT(self), error);
    g_error_free(error);
    return FALSE;
  }
  const npu_tensor_info *infos;
  guint n_outputs, frames;
  GstBuffer *const *outputs = gst_npu_infer_batch_outputs(batch, &infos, &n_outputs, &frames);
  for (guint i = 0; i < flight->count; i++) {
    Job *job = flight->jobs[i];
    Item *item = item_of(job);
    GstNpuInferPlace place = {.pad_index = item->pad->index, .slot = i, .count = flight->count,
                              .frames = frames, .mapping = slots[i].mapping};
    job->result = gst_npu_infer_attach_outputs(&item->buffer, &job->roi, &place, outputs, infos,
                                               n_outputs);
  }
  gst_npu_infer_runner_finish(self->runner, batch, batch_done, flight);
  return TRUE;
}

static void post_stats_when_due(GstNpuInfer *self)
{
  GST_OBJECT_LOCK(self);
  gint64 every = (gint64)self->stats_interval * 1000;
  GST_OBJECT_UNLOCK(self);
  gint64 now = g_get_monotonic_time();
  if (every <= 0 || now - self->last_stats < every)
    return;
  self->last_stats = now;
  gst_element_post_message(GST_ELEMENT(self),
                           gst_message_new_element(GST_OBJECT(self), build_stats(self)));
}

/* Takes batches, switches models between them, queues them on the device. */
static gpointer batch_thread(gpointer data)
{
  GstNpuInfer *self = data;
  Flight *flight = g_new0(Flight, 1);
  while ((flight->count = gst_npu_batcher_take(self->batcher, (GstNpuBatchJob **)flight->jobs))) {
    switch_model(self, flight->jobs, flight->count);
    flight->self = self;
    flight->started = g_get_monotonic_time();
    GST_OBJECT_LOCK(self);
    flight->print = self->print_results;
    flight->remember = self->reclassify_interval > 1;
    GST_OBJECT_UNLOCK(self);
    if (run_batch(self, flight)) {
      flight = g_new0(Flight, 1);
    } else { /* its frames pass without results; the chain functions return errors */
      gst_npu_batcher_set_failed(self->batcher, TRUE);
      gst_npu_batcher_complete(self->batcher, (GstNpuBatchJob **)flight->jobs, flight->count,
                               FALSE);
    }
    post_stats_when_due(self);
  }
  g_free(flight);
  return NULL;
}

static void start_thread(GstNpuInfer *self)
{
  gst_npu_batcher_set_failed(self->batcher, FALSE);
  gst_npu_batcher_set_stopping(self->batcher, FALSE);
  self->last_stats = g_get_monotonic_time();
  self->thread = g_thread_new("npuinfer-batch", batch_thread, self);
}

/* Stops the batch thread and waits for the batches on the device. */
static void stop_thread(GstNpuInfer *self)
{
  gst_npu_batcher_set_stopping(self->batcher, TRUE);
  if (self->thread)
    g_thread_join(self->thread);
  self->thread = NULL;
  gst_npu_batcher_wait_inflight(self->batcher, 0);
}

/* ---- the runtime --------------------------------------------------------------------- */

static void release_pad_stream(InferPad *pad)
{
  if (pad->stream)
    npu_stream_destroy(pad->stream); /* its work finishes first */
  pad->stream = NULL;
}

/* With no batch running. */
static void release_runtime(GstNpuInfer *self)
{
  stop_loader(self);
  GST_OBJECT_LOCK(self);
  for (guint i = 0; i < self->pads->len; i++)
    release_pad_stream(g_ptr_array_index(self->pads, i));
  self->model_batch = 0;
  self->run_sum = self->run_max = 0;
  GST_OBJECT_UNLOCK(self);
  gst_npu_infer_runner_free(self->runner);
  self->runner = NULL;
  gst_npu_infer_model_free(self->model);
  self->model = NULL;
  if (self->device)
    npu_device_release(self->device);
  self->device = NULL;
  gst_npu_batcher_reset_stats(self->batcher);
}

/* Joins the device context, loads the model; posts an error when it cannot. */
static gboolean open_runtime(GstNpuInfer *self)
{
  GError *error = NULL;
  if (!apply_config(self, &error) || !check_channel_values(self, &error)) {
    gst_npu_infer_post_error(GST_ELEMENT(self), error);
    g_error_free(error);
    return FALSE;
  }
  GST_OBJECT_LOCK(self);
  gint device_id = self->device_id;
  gboolean have_model = self->model_path && *self->model_path;
  GST_OBJECT_UNLOCK(self);
  if (!have_model) { /* before the device: nothing to share without a model */
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No model given"),
                      ("set the 'model' property to an ONNX file"));
    return FALSE;
  }
  if (!gst_npu_ensure_element_device(GST_ELEMENT(self), device_id, &self->device))
    return FALSE;
  GstNpuInferModel *model = NULL;
  self->runner = gst_npu_infer_runner_new(self->device, &error);
  if (self->runner)
    model = load_model(self, FALSE, &error);
  if (!model) {
    gst_npu_infer_post_error(GST_ELEMENT(self), error);
    g_error_free(error);
    return FALSE;
  }
  use_model(self, model);
  GST_OBJECT_LOCK(self);
  self->running = TRUE;
  GST_OBJECT_UNLOCK(self);
  return TRUE;
}

/* ---- pads ---------------------------------------------------------------------------- */

/* The tracked object a ROI is: an "object-id" field in one of its params
 * (as a tracker writes it); -1: none. */
static gint64 roi_object_id(const GstVideoRegionOfInterestMeta *roi)
{
  for (GList *l = roi->params; l; l = l->next) {
    const GstStructure *param = l->data;
    const GValue *value = gst_structure_get_value(param, "object-id");
    if (!value)
      continue;
    GValue id = G_VALUE_INIT;
    g_value_init(&id, G_TYPE_INT64);
    gboolean ok = g_value_type_transformable(G_VALUE_TYPE(value), G_TYPE_INT64) &&
                  g_value_transform(value, &id);
    gint64 object = ok ? g_value_get_int64(&id) : -1;
    g_value_unset(&id);
    if (object >= 0)
      return object;
  }
  return -1;
}

/* What roi mode infers on. */
typedef struct {
  GArray *labels; /* GQuark; empty: all */
  gboolean rotate_tall;
  guint min_size, max_size; /* of a ROI's sides (clamped to the frame); 0: no bound */
} RoiFilter;

/* Roi mode: a job per ROI meta of the frame that the filter keeps, but not
 * those that are empty or lie outside the frame; with `rotate_tall`, a crop
 * at least 1.5 times as tall as wide is turned 90 degrees
 * counter-clockwise, as PP-OCR turns vertical text lines. */
static void add_roi_jobs(GstBuffer *buffer, const GstVideoInfo *info, const RoiFilter *filter,
                         GPtrArray *jobs)
{
  gpointer state = NULL;
  GstMeta *m;
  guint width = GST_VIDEO_INFO_WIDTH(info), height = GST_VIDEO_INFO_HEIGHT(info);
  while ((m = gst_buffer_iterate_meta_filtered(buffer, &state,
                                               GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    const GstVideoRegionOfInterestMeta *roi = (const GstVideoRegionOfInterestMeta *)m;
    gboolean wanted = filter->labels->len == 0;
    for (guint i = 0; i < filter->labels->len && !wanted; i++)
      wanted = g_array_index(filter->labels, GQuark, i) == roi->roi_type;
    gboolean inside = roi->w > 0 && roi->h > 0 && roi->x < width && roi->y < height;
    guint crop_width = inside ? MIN(roi->w, width - roi->x) : 0;
    guint crop_height = inside ? MIN(roi->h, height - roi->y) : 0;
    gboolean sized = (filter->min_size == 0 || MIN(crop_width, crop_height) >= filter->min_size) &&
                     (filter->max_size == 0 || MAX(crop_width, crop_height) <= filter->max_size);
    if (!wanted || !inside || !sized) {
      GST_LOG("ROI %d (%s, %ux%u) skipped", roi->id, g_quark_to_string(roi->roi_type),
              crop_width, crop_height);
      continue;
    }
    Job *job = g_new0(Job, 1);
    job->base.object_id = roi_object_id(roi);
    job->roi = (GstNpuInferRoi){.id = roi->id, .type = roi->roi_type, .x = roi->x, .y = roi->y,
                                .w = roi->w, .h = roi->h};
    /* the VPP clamps what lies past the right and bottom edges */
    job->crop = (npu_rect){.x = (int32_t)roi->x, .y = (int32_t)roi->y,
                           .width = MIN(roi->w, (guint)G_MAXINT32),
                           .height = MIN(roi->h, (guint)G_MAXINT32)};
    if (filter->rotate_tall && 2 * (guint64)crop_height >= 3 * (guint64)crop_width)
      job->rotation = NPU_ROTATE_90_CCW;
    g_ptr_array_add(jobs, job);
  }
}

static GstFlowReturn gst_npu_infer_chain(GstPad *sinkpad, GstObject *parent, GstBuffer *buffer)
{
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(sinkpad);
  if (!pad->have_info) {
    gst_buffer_unref(buffer);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  /* QoS needs running times: a segment of bytes (an appsrc's default) has none */
  GstClockTime running = pad->segment.format == GST_FORMAT_TIME
                             ? gst_segment_to_running_time(&pad->segment, GST_FORMAT_TIME,
                                                           GST_BUFFER_PTS(buffer))
                             : GST_CLOCK_TIME_NONE;
  GST_OBJECT_LOCK(self);
  GstNpuInferMode mode = self->mode;
  RoiFilter filter = {.labels = g_array_ref(self->roi_quarks), .rotate_tall = self->rotate_tall,
                      .min_size = self->roi_min_size, .max_size = self->roi_max_size};
  gboolean late = GST_CLOCK_TIME_IS_VALID(running) && GST_CLOCK_TIME_IS_VALID(pad->earliest) &&
                  running < pad->earliest;
  GST_OBJECT_UNLOCK(self);

  Item *item = g_new0(Item, 1);
  item->pad = pad;
  item->buffer = buffer;
  item->info = pad->info;
  GPtrArray *jobs = g_ptr_array_new_with_free_func(g_free);
  if (mode == GST_NPU_INFER_MODE_FRAME) {
    Job *job = g_new0(Job, 1);
    job->base.object_id = -1;
    job->roi.id = -1;
    g_ptr_array_add(jobs, job);
  } else {
    add_roi_jobs(buffer, &pad->info, &filter, jobs);
  }
  g_array_unref(filter.labels);
  gint code = GST_FLOW_OK;
  GstNpuBatchPush pushed =
      gst_npu_batcher_push_frame(self->batcher, pad->lane, item, jobs, late, NULL, &code);
  g_ptr_array_unref(jobs); /* the jobs not queued */
  switch (pushed) {
  case GST_NPU_BATCH_QUEUED:
    return GST_FLOW_OK;
  case GST_NPU_BATCH_FLUSHING:
    item_free(item);
    return GST_FLOW_FLUSHING;
  case GST_NPU_BATCH_STOPPED:
    item_free(item);
    return (GstFlowReturn)code;
  case GST_NPU_BATCH_FAILED:
  default:
    item_free(item);
    return GST_FLOW_ERROR;
  }
}

/* The src pad's task: pushes the pad's frames and events in order, each
 * frame once its batch is done. */
static void src_loop(gpointer data)
{
  InferPad *pad = data;
  GstNpuInfer *self = GST_NPU_INFER(gst_pad_get_parent_element(pad->src));
  if (!self) {
    gst_pad_pause_task(pad->src);
    return;
  }
  gboolean is_frame;
  Item *item = gst_npu_batcher_pop(self->batcher, pad->lane, &is_frame);
  if (!item) { /* flushing */
    gst_pad_pause_task(pad->src);
    gst_object_unref(self);
    return;
  }
  if (is_frame) {
    GstFlowReturn flow = gst_pad_push(pad->src, item->buffer);
    item->buffer = NULL;
    if (flow != GST_FLOW_OK) {
      /* the chain function returns it; fatal ones stop this pad */
      gboolean fatal = flow < GST_FLOW_EOS || flow == GST_FLOW_NOT_LINKED;
      gst_npu_batcher_set_lane_error(self->batcher, pad->lane, flow,
                                     fatal || flow == GST_FLOW_FLUSHING);
      if (fatal) {
        GST_ELEMENT_FLOW_ERROR(self, flow);
        gst_pad_push_event(pad->src, gst_event_new_eos());
      }
    }
  } else {
    gst_pad_push_event(pad->src, item->event);
    item->event = NULL;
  }
  item_free(item);
  gst_object_unref(self);
}

static gboolean gst_npu_infer_sink_event(GstPad *sinkpad, GstObject *parent, GstEvent *event)
{
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(sinkpad);
  switch (GST_EVENT_TYPE(event)) {
  case GST_EVENT_CAPS: {
    GstCaps *caps;
    gst_event_parse_caps(event, &caps);
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, caps) ||
        !gst_npu_format_of(GST_VIDEO_INFO_FORMAT(&info))) {
      GST_WARNING_OBJECT(sinkpad, "caps the VPP cannot read: %" GST_PTR_FORMAT, caps);
      gst_event_unref(event);
      return FALSE;
    }
    pad->info = info;
    pad->have_info = TRUE;
    break;
  }
  case GST_EVENT_SEGMENT:
    gst_event_copy_segment(event, &pad->segment);
    break;
  case GST_EVENT_FLUSH_START:
    gst_npu_batcher_set_input_flushing(self->batcher, pad->lane, TRUE);
    gst_npu_batcher_set_output_flushing(self->batcher, pad->lane, TRUE);
    gst_pad_push_event(pad->src, event);
    gst_pad_pause_task(pad->src);
    return TRUE;
  case GST_EVENT_FLUSH_STOP:
    gst_npu_batcher_flush_lane(self->batcher, pad->lane);
    GST_OBJECT_LOCK(self);
    pad->earliest = GST_CLOCK_TIME_NONE;
    GST_OBJECT_UNLOCK(self);
    gst_npu_batcher_set_input_flushing(self->batcher, pad->lane, FALSE);
    gst_npu_batcher_set_output_flushing(self->batcher, pad->lane, FALSE);
    gst_pad_push_event(pad->src, event);
    return gst_pad_start_task(pad->src, src_loop, pad, NULL);
  default:
    break;
  }
  if (!GST_EVENT_IS_SERIALIZED(event))
    return gst_pad_push_event(pad->src, event);
  /* Serialized events go out after this pad's frames received before them. */
  gboolean ends = GST_EVENT_TYPE(event) == GST_EVENT_EOS;
  Item *item = g_new0(Item, 1);
  item->pad = pad;
  item->event = event;
  if (gst_npu_batcher_push_event(self->batcher, pad->lane, item)) {
    if (ends) /* its last frames run now, not after batch-timeout */
      gst_npu_batcher_drain_lane(self->batcher, pad->lane);
    return TRUE;
  }
  item_free(item);
  return FALSE;
}

static gboolean gst_npu_infer_sink_query(GstPad *sinkpad, GstObject *parent, GstQuery *query)
{
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(sinkpad);
  if (gst_npu_handle_context_query(GST_ELEMENT(self), query, self->device))
    return TRUE;
  if (GST_QUERY_IS_SERIALIZED(query)) /* answered after this pad's queued frames */
    gst_npu_batcher_wait_lane_drained(self->batcher, pad->lane);
  if (GST_QUERY_TYPE(query) != GST_QUERY_ALLOCATION)
    return gst_pad_query_default(sinkpad, parent, query);
  if (!gst_pad_query_default(sinkpad, parent, query))
    return FALSE;
  /* Frames stay with us while they wait: upstream pools need that many more. */
  GstNpuBatchPolicy policy;
  gst_npu_batcher_get_policy(self->batcher, &policy);
  guint held = policy.max_inflight * policy.batch_size + 1;
  for (guint i = 0; i < gst_query_get_n_allocation_pools(query); i++) {
    GstBufferPool *pool;
    guint size, min, max;
    gst_query_parse_nth_allocation_pool(query, i, &pool, &size, &min, &max);
    min += held;
    if (max != 0 && max < min)
      max = min;
    gst_query_set_nth_allocation_pool(query, i, pool, size, min, max);
    if (pool)
      gst_object_unref(pool);
  }
  return TRUE;
}

/* QoS from downstream: frames that would arrive late skip inference. */
static gboolean gst_npu_infer_src_event(GstPad *srcpad, GstObject *parent, GstEvent *event)
{
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(srcpad);
  if (GST_EVENT_TYPE(event) == GST_EVENT_QOS) {
    GstQOSType type;
    gdouble proportion;
    GstClockTimeDiff diff;
    GstClockTime timestamp;
    gst_event_parse_qos(event, &type, &proportion, &diff, &timestamp);
    GST_OBJECT_LOCK(self);
    if (!GST_CLOCK_TIME_IS_VALID(timestamp))
      pad->earliest = GST_CLOCK_TIME_NONE;
    else if (diff >= 0 || timestamp >= (GstClockTime)-diff)
      pad->earliest = (GstClockTime)((GstClockTimeDiff)timestamp + diff);
    else
      pad->earliest = 0;
    GST_OBJECT_UNLOCK(self);
  }
  return gst_pad_event_default(srcpad, parent, event);
}

static gboolean gst_npu_infer_src_query(GstPad *srcpad, GstObject *parent, GstQuery *query)
{
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(srcpad);
  if (gst_npu_handle_context_query(GST_ELEMENT(self), query, self->device))
    return TRUE;
  if (GST_QUERY_TYPE(query) != GST_QUERY_LATENCY)
    return gst_pad_query_default(srcpad, parent, query);
  if (!gst_pad_peer_query(pad->sink, query))
    return FALSE;
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency(query, &live, &min, &max);
  /* a frame waits up to batch-timeout, then a batch runs for its measured time */
  guint64 batches, jobs;
  gst_npu_batcher_totals(self->batcher, &batches, &jobs);
  GST_OBJECT_LOCK(self);
  gint64 run = batches ? self->run_sum / (gint64)batches : 0;
  GstClockTime ours = ((GstClockTime)run + self->batch_timeout) * GST_USECOND;
  GST_OBJECT_UNLOCK(self);
  GST_DEBUG_OBJECT(srcpad, "our latency %" GST_TIME_FORMAT, GST_TIME_ARGS(ours));
  gst_query_set_latency(query, live, min + ours,
                        GST_CLOCK_TIME_IS_VALID(max) ? max + ours : GST_CLOCK_TIME_NONE);
  return TRUE;
}

static gboolean gst_npu_infer_sink_activate_mode(GstPad *sinkpad, GstObject *parent,
                                                 GstPadMode mode, gboolean active)
{
  (void)mode;
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(sinkpad);
  if (active)
    gst_npu_batcher_set_lane_error(self->batcher, pad->lane, 0, FALSE);
  /* a blocked chain call returns */
  gst_npu_batcher_set_input_flushing(self->batcher, pad->lane, !active);
  return TRUE;
}

static gboolean gst_npu_infer_src_activate_mode(GstPad *srcpad, GstObject *parent,
                                                GstPadMode mode, gboolean active)
{
  (void)mode;
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(srcpad);
  if (active) {
    gst_npu_batcher_set_lane_error(self->batcher, pad->lane, 0, FALSE);
    gst_npu_batcher_set_output_flushing(self->batcher, pad->lane, FALSE);
    return gst_pad_start_task(srcpad, src_loop, pad, NULL);
  }
  /* until the sink pad is activated again */
  gst_npu_batcher_set_input_flushing(self->batcher, pad->lane, TRUE);
  gst_npu_batcher_set_output_flushing(self->batcher, pad->lane, TRUE);
  gboolean ok = gst_pad_stop_task(srcpad);
  gst_npu_batcher_flush_lane(self->batcher, pad->lane);
  return ok;
}

static GstIterator *gst_npu_infer_internal_links(GstPad *gpad, GstObject *parent)
{
  (void)parent;
  InferPad *pad = gst_pad_get_element_private(gpad);
  GValue value = G_VALUE_INIT;
  g_value_init(&value, GST_TYPE_PAD);
  g_value_set_object(&value, gpad == pad->sink ? pad->src : pad->sink);
  GstIterator *it = gst_iterator_new_single(GST_TYPE_PAD, &value);
  g_value_unset(&value);
  return it;
}

#define INFER_FORMATS                                                                          \
  "{ NV12, NV21, I420, YV12, NV16, NV24, Y42B, Y444, YUY2, UYVY, RGB, BGR, RGBx, BGRx, xRGB, "  \
  "xBGR, RGBA, BGRA, GRAY8 }"
#define INFER_CAPS                                                                             \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_NPU, INFER_FORMATS)                \
  ";" GST_VIDEO_CAPS_MAKE(INFER_FORMATS)

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink_%u", GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS(INFER_CAPS));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src_%u", GST_PAD_SRC, GST_PAD_SOMETIMES, GST_STATIC_CAPS(INFER_CAPS));

static GstPad *gst_npu_infer_request_new_pad(GstElement *element, GstPadTemplate *templ,
                                             const gchar *name, const GstCaps *caps)
{
  (void)caps;
  GstNpuInfer *self = GST_NPU_INFER(element);
  GST_OBJECT_LOCK(self);
  guint index = self->next_index;
  if (name && sscanf(name, "sink_%u", &index) == 1) {
    for (guint i = 0; i < self->pads->len; i++)
      if (((InferPad *)g_ptr_array_index(self->pads, i))->index == index) {
        GST_OBJECT_UNLOCK(self);
        GST_WARNING_OBJECT(self, "pad sink_%u exists already", index);
        return NULL;
      }
  }
  self->next_index = MAX(self->next_index, index + 1);
  InferPad *pad = g_new0(InferPad, 1);
  pad->index = index;
  pad->lane = gst_npu_batcher_add_lane(self->batcher, index);
  pad->earliest = GST_CLOCK_TIME_NONE;
  gst_segment_init(&pad->segment, GST_FORMAT_TIME);
  g_ptr_array_add(self->pads, pad);
  GST_OBJECT_UNLOCK(self);
  gchar *sink_name = g_strdup_printf("sink_%u", index), *src_name = g_strdup_printf("src_%u", index);
  pad->sink = gst_pad_new_from_template(templ, sink_name);
  pad->src = gst_pad_new_from_static_template(&src_template, src_name);
  g_free(sink_name);
  g_free(src_name);

  gst_pad_set_element_private(pad->sink, pad);
  gst_pad_set_element_private(pad->src, pad);
  gst_pad_set_chain_function(pad->sink, gst_npu_infer_chain);
  gst_pad_set_event_function(pad->sink, gst_npu_infer_sink_event);
  gst_pad_set_query_function(pad->sink, gst_npu_infer_sink_query);
  gst_pad_set_query_function(pad->src, gst_npu_infer_src_query);
  gst_pad_set_event_function(pad->src, gst_npu_infer_src_event);
  gst_pad_set_activatemode_function(pad->sink, gst_npu_infer_sink_activate_mode);
  gst_pad_set_activatemode_function(pad->src, gst_npu_infer_src_activate_mode);
  gst_pad_set_iterate_internal_links_function(pad->sink, gst_npu_infer_internal_links);
  gst_pad_set_iterate_internal_links_function(pad->src, gst_npu_infer_internal_links);
  GST_PAD_SET_PROXY_CAPS(pad->sink);
  GST_PAD_SET_PROXY_ALLOCATION(pad->sink);
  GST_PAD_SET_PROXY_CAPS(pad->src);
  /* gst_element_add_pad activates pads added to a running element */
  gst_element_add_pad(element, pad->src);
  gst_element_add_pad(element, pad->sink);
  return pad->sink;
}

static void gst_npu_infer_release_pad(GstElement *element, GstPad *sinkpad)
{
  GstNpuInfer *self = GST_NPU_INFER(element);
  InferPad *pad = gst_pad_get_element_private(sinkpad);
  gst_pad_set_active(pad->sink, FALSE); /* a waiting chain call returns first */
  gst_pad_set_active(pad->src, FALSE);  /* stops the task, drops what is queued */
  GST_OBJECT_LOCK(self);
  g_ptr_array_remove(self->pads, pad);
  GST_OBJECT_UNLOCK(self);
  gst_npu_batcher_remove_lane(self->batcher, pad->lane); /* after its batches */
  release_pad_stream(pad);
  gst_element_remove_pad(element, pad->src);
  gst_element_remove_pad(element, pad->sink);
  g_free(pad);
}

/* ---- element ------------------------------------------------------------------------- */

static void gst_npu_infer_set_context(GstElement *element, GstContext *context)
{
  GstNpuInfer *self = GST_NPU_INFER(element);
  GST_OBJECT_LOCK(self);
  gint device_id = self->device_id;
  GST_OBJECT_UNLOCK(self);
  gst_npu_handle_set_context(element, context, device_id, &self->device);
  GST_ELEMENT_CLASS(gst_npu_infer_parent_class)->set_context(element, context);
}

static GstStateChangeReturn gst_npu_infer_change_state(GstElement *element,
                                                       GstStateChange transition)
{
  GstNpuInfer *self = GST_NPU_INFER(element);
  switch (transition) {
  case GST_STATE_CHANGE_NULL_TO_READY:
    if (!open_runtime(self)) {
      release_runtime(self);
      return GST_STATE_CHANGE_FAILURE;
    }
    break;
  case GST_STATE_CHANGE_READY_TO_PAUSED:
    start_thread(self);
    break;
  default:
    break;
  }
  GstStateChangeReturn result =
      GST_ELEMENT_CLASS(gst_npu_infer_parent_class)->change_state(element, transition);
  switch (transition) {
  case GST_STATE_CHANGE_READY_TO_PAUSED:
    if (result == GST_STATE_CHANGE_FAILURE)
      stop_thread(self);
    break;
  case GST_STATE_CHANGE_PAUSED_TO_READY: /* pads are inactive: nothing is queued */
    stop_thread(self);
    gst_npu_batcher_reset_stats(self->batcher);
    GST_OBJECT_LOCK(self);
    for (guint i = 0; i < self->pads->len; i++)
      ((InferPad *)g_ptr_array_index(self->pads, i))->earliest = GST_CLOCK_TIME_NONE;
    GST_OBJECT_UNLOCK(self);
    break;
  case GST_STATE_CHANGE_READY_TO_NULL:
    release_runtime(self);
    break;
  default:
    break;
  }
  return result;
}

/* Parses "0.485,0.456,0.406" or one value for all channels into `values`
 * (NULL: `fallback` for all). Anything else (not numbers, not finite, any
 * other count) leaves `values` as they were and returns FALSE. */
static gboolean parse_channel_values(const gchar *text, gfloat *values, gfloat fallback)
{
  gfloat parsed[3] = {fallback, fallback, fallback};
  gchar **parts = g_strsplit(text ? text : "", ",", -1);
  guint n = g_strv_length(parts);
  gboolean ok = !text || n == 1 || n == 3;
  for (guint i = 0; text && ok && i < n; i++) {
    gchar *end = NULL;
    gdouble v = g_ascii_strtod(g_strstrip(parts[i]), &end);
    ok = end != parts[i] && *end == '\0' && isfinite(v) && fabs(v) <= G_MAXFLOAT;
    parsed[i] = (gfloat)v;
  }
  if (ok)
    for (guint c = 0; c < 3; c++)
      values[c] = parsed[text && n == 1 ? 0 : c];
  g_strfreev(parts);
  return ok;
}

/* Sets mean or std from `text`; a refused value is remembered (the element
 * then fails to start) and warned about now. */
static void set_channel_values(GstNpuInfer *self, const gchar *name, const gchar *text,
                               gfloat *values, gfloat fallback, gchar **refused)
{
  g_free(*refused);
  *refused = NULL;
  if (!parse_channel_values(text, values, fallback)) {
    *refused = g_strdup(text);
    g_warning("%s: %s '%s' refused: give 1 or 3 comma-separated numbers", GST_OBJECT_NAME(self),
              name, text);
  }
}

static void set_roi_labels(GstNpuInfer *self, const gchar *labels_text)
{
  g_free(self->roi_labels);
  self->roi_labels = g_strdup(labels_text);
  /* a new array: chain functions may hold the old one */
  g_array_unref(self->roi_quarks);
  self->roi_quarks = g_array_new(FALSE, FALSE, sizeof(GQuark));
  gchar **labels = g_strsplit(self->roi_labels ? self->roi_labels : "", ",", -1);
  for (gchar **l = labels; *l; l++) {
    g_strstrip(*l);
    if (**l) {
      GQuark quark = g_quark_from_string(*l);
      g_array_append_val(self->roi_quarks, quark);
    }
  }
  g_strfreev(labels);
}

static void gst_npu_infer_set_property(GObject *object, guint id, const GValue *value,
                                       GParamSpec *pspec)
{
  GstNpuInfer *self = GST_NPU_INFER(object);
  GST_OBJECT_LOCK(self);
  gboolean from_config = self->applying_config; /* a reload's: switches with its model */
  GST_OBJECT_UNLOCK(self);
  if (!from_config && gst_npu_property_refused(GST_ELEMENT(self), pspec))
    return;
  GST_OBJECT_LOCK(self);
  switch (id) {
  case PROP_MODEL:
    g_free(self->model_path);
    self->model_path = g_value_dup_string(value);
    break;
  case PROP_CONFIG:
    g_free(self->config_path);
    self->config_path = g_value_dup_string(value);
    break;
  case PROP_DEVICE_ID:
    self->device_id = g_value_get_int(value);
    break;
  case PROP_BATCH_SIZE:
    self->batch_size = g_value_get_uint(value);
    break;
  case PROP_BATCH_TIMEOUT:
    self->batch_timeout = g_value_get_uint64(value);
    break;
  case PROP_MAX_INFLIGHT:
    self->max_inflight = g_value_get_uint(value);
    break;
  case PROP_INTERVAL:
    self->interval = g_value_get_uint(value);
    break;
  case PROP_RECLASSIFY_INTERVAL:
    self->reclassify_interval = g_value_get_uint(value);
    break;
  case PROP_MEAN:
    set_channel_values(self, "mean", g_value_get_string(value), self->mean, 0.0f,
                       &self->refused_mean);
    break;
  case PROP_STD:
    set_channel_values(self, "std", g_value_get_string(value), self->std, 1.0f,
                       &self->refused_std);
    for (int c = 0; c < 3; c++)
      self->std[c] = self->std[c] > 0 ? self->std[c] : 1.0f;
    break;
  case PROP_SCALE:
    self->scale = g_value_get_double(value);
    break;
  case PROP_CHANNEL_ORDER:
    self->order = g_value_get_enum(value);
    break;
  case PROP_LETTERBOX:
    self->letterbox = g_value_get_boolean(value);
    break;
  case PROP_INPUT_WIDTH:
    self->input_width = g_value_get_uint(value);
    break;
  case PROP_INPUT_HEIGHT:
    self->input_height = g_value_get_uint(value);
    break;
  case PROP_SIZE_MULTIPLE:
    self->size_multiple = g_value_get_uint(value);
    break;
  case PROP_MAX_INPUT_SIZE:
    self->max_input_size = g_value_get_uint(value);
    break;
  case PROP_ROTATE_TALL:
    self->rotate_tall = g_value_get_boolean(value);
    break;
  case PROP_ROI_MIN_SIZE:
    self->roi_min_size = g_value_get_uint(value);
    break;
  case PROP_ROI_MAX_SIZE:
    self->roi_max_size = g_value_get_uint(value);
    break;
  case PROP_PRINT_RESULTS:
    self->print_results = g_value_get_boolean(value);
    break;
  case PROP_STATS_INTERVAL:
    self->stats_interval = g_value_get_uint(value);
    break;
  case PROP_MODE:
    self->mode = g_value_get_enum(value);
    break;
  case PROP_PRECISION:
    self->precision = g_value_get_enum(value);
    break;
  case PROP_ROI_LABELS:
    set_roi_labels(self, g_value_get_string(value));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
  switch (id) {
  case PROP_MODEL:
  case PROP_CONFIG:
    ask_reload(self, id == PROP_CONFIG);
    break;
  case PROP_BATCH_SIZE:
  case PROP_BATCH_TIMEOUT:
  case PROP_MAX_INFLIGHT:
  case PROP_INTERVAL:
  case PROP_RECLASSIFY_INTERVAL:
  case PROP_MODE:
    update_policy(self);
    break;
  default:
    break;
  }
}

static void gst_npu_infer_get_property(GObject *object, guint id, GValue *value,
                                       GParamSpec *pspec)
{
  GstNpuInfer *self = GST_NPU_INFER(object);
  if (id == PROP_STATS) {
    g_value_take_boxed(value, build_stats(self));
    return;
  }
  GST_OBJECT_LOCK(self);
  switch (id) {
  case PROP_MODEL:
    g_value_set_string(value, self->model_path);
    break;
  case PROP_CONFIG:
    g_value_set_string(value, self->config_path);
    break;
  case PROP_DEVICE_ID:
    g_value_set_int(value, self->device_id);
    break;
  case PROP_BATCH_SIZE:
    g_value_set_uint(value, self->batch_size);
    break;
  case PROP_BATCH_TIMEOUT:
    g_value_set_uint64(value, self->batch_timeout);
    break;
  case PROP_MAX_INFLIGHT:
    g_value_set_uint(value, self->max_inflight);
    break;
  case PROP_INTERVAL:
    g_value_set_uint(value, self->interval);
    break;
  case PROP_RECLASSIFY_INTERVAL:
    g_value_set_uint(value, self->reclassify_interval);
    break;
  case PROP_MEAN:
  case PROP_STD: {
    const gfloat *v = id == PROP_MEAN ? self->mean : self->std;
    g_value_take_string(value, g_strdup_printf("%g,%g,%g", v[0], v[1], v[2]));
    break;
  }
  case PROP_SCALE:
    g_value_set_double(value, self->scale);
    break;
  case PROP_CHANNEL_ORDER:
    g_value_set_enum(value, self->order);
    break;
  case PROP_LETTERBOX:
    g_value_set_boolean(value, self->letterbox);
    break;
  case PROP_INPUT_WIDTH:
    g_value_set_uint(value, self->input_width);
    break;
  case PROP_INPUT_HEIGHT:
    g_value_set_uint(value, self->input_height);
    break;
  case PROP_SIZE_MULTIPLE:
    g_value_set_uint(value, self->size_multiple);
    break;
  case PROP_MAX_INPUT_SIZE:
    g_value_set_uint(value, self->max_input_size);
    break;
  case PROP_ROTATE_TALL:
    g_value_set_boolean(value, self->rotate_tall);
    break;
  case PROP_ROI_MIN_SIZE:
    g_value_set_uint(value, self->roi_min_size);
    break;
  case PROP_ROI_MAX_SIZE:
    g_value_set_uint(value, self->roi_max_size);
    break;
  case PROP_PRINT_RESULTS:
    g_value_set_boolean(value, self->print_results);
    break;
  case PROP_STATS_INTERVAL:
    g_value_set_uint(value, self->stats_interval);
    break;
  case PROP_MODE:
    g_value_set_enum(value, self->mode);
    break;
  case PROP_PRECISION:
    g_value_set_enum(value, self->precision);
    break;
  case PROP_ROI_LABELS:
    g_value_set_string(value, self->roi_labels);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_npu_infer_finalize(GObject *object)
{
  GstNpuInfer *self = GST_NPU_INFER(object);
  stop_thread(self);
  release_runtime(self);
  for (guint i = 0; i < self->pads->len; i++)
    g_free(g_ptr_array_index(self->pads, i));
  g_ptr_array_free(self->pads, TRUE);
  gst_npu_batcher_free(self->batcher);
  g_free(self->model_path);
  g_free(self->config_path);
  g_free(self->refused_mean);
  g_free(self->refused_std);
  g_free(self->roi_labels);
  g_array_unref(self->roi_quarks);
  G_OBJECT_CLASS(gst_npu_infer_parent_class)->finalize(object);
}

static void gst_npu_infer_class_init(GstNpuInferClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  object_class->set_property = gst_npu_infer_set_property;
  object_class->get_property = gst_npu_infer_get_property;
  object_class->finalize = gst_npu_infer_finalize;
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  GParamFlags ready = rw | GST_PARAM_MUTABLE_READY;
  GParamFlags playing = rw | GST_PARAM_MUTABLE_PLAYING;
  g_object_class_install_property(object_class, PROP_MODEL,
      g_param_spec_string("model", "Model",
                          "ONNX model file: one float32 or uint8 input of N x 3 x H x W (N "
                          "dynamic or fixed; H and W fixed, or open: see input-width). Set "
                          "while running, the new model is loaded and planned on a thread of "
                          "its own and replaces the old one between two batches (element "
                          "message \"model-reloaded\"); one that cannot be loaded leaves the "
                          "old one running (a warning and \"model-reload-failed\")", NULL,
                          playing));
  g_object_class_install_property(object_class, PROP_CONFIG,
      g_param_spec_string("config", "Config",
                          "JSON file of property values applied when the element opens, e.g. "
                          "{\"model\": \"det.onnx\", \"mean\": [0.485, 0.456, 0.406], "
                          "\"batch-size\": 4, \"mode\": \"roi\"} (arrays for mean/std, enum "
                          "nicks as strings); set while running, it is applied and its model "
                          "reloaded as the model property says", NULL, playing));
  g_object_class_install_property(object_class, PROP_DEVICE_ID,
      g_param_spec_int("device-id", "Device ID",
                       "Runtime device index (-1: the pipeline's shared device, else "
                       "NPU_BACKEND/NPU_DEVICE, else the default)", -1, G_MAXINT, -1, ready));
  g_object_class_install_property(object_class, PROP_BATCH_SIZE,
      g_param_spec_uint("batch-size", "Batch size",
                        "Most frames (from any pads) per execution of the model (a model with "
                        "a fixed batch axis takes at most that many)", 1,
                        GST_NPU_INFER_MAX_BATCH, 1, ready));
  g_object_class_install_property(object_class, PROP_BATCH_TIMEOUT,
      g_param_spec_uint64("batch-timeout", "Batch timeout",
                          "Microseconds a frame may wait for its batch to fill (0: run with "
                          "whatever is waiting)", 0, G_MAXINT64 / 1000, 0, playing));
  g_object_class_install_property(object_class, PROP_MAX_INFLIGHT,
      g_param_spec_uint("max-inflight", "Max in flight",
                        "Batches on the device at once (the next pre-processed while one "
                        "runs), and batches of frames waiting, and per pad waiting to be "
                        "pushed, before chain functions block (back-pressure)", 1, 64, 2,
                        playing));
  g_object_class_install_property(object_class, PROP_INTERVAL,
      g_param_spec_uint("interval", "Interval",
                        "Infer every Nth frame of each pad; the others pass without results", 1,
                        G_MAXUINT, 1, playing));
  g_object_class_install_property(object_class, PROP_RECLASSIFY_INTERVAL,
      g_param_spec_uint("reclassify-interval", "Reclassify interval",
                        "In roi mode: a tracked object (a ROI param with an \"object-id\" "
                        "field, as a tracker writes) is inferred on every Nth frame of its pad "
                        "it is in; on the others its ROI gets its last result again (the "
                        "npu-tensors param says \"reused\"); 1: every frame", 1, G_MAXUINT, 1,
                        playing));
  g_object_class_install_property(object_class, PROP_MEAN,
      g_param_spec_string("mean", "Mean",
                          "Per-channel mean subtracted after scaling, in the model's channel "
                          "order (\"r,g,b\", or one value); float inputs only", "0,0,0", ready));
  g_object_class_install_property(object_class, PROP_STD,
      g_param_spec_string("std", "Standard deviation",
                          "Per-channel divisor after the mean (\"r,g,b\", or one value; "
                          "values <= 0 mean 1); float inputs only", "1,1,1", ready));
  g_object_class_install_property(object_class, PROP_SCALE,
      g_param_spec_double("scale", "Scale",
                          "Factor on pixel values (0..255) before mean and std: input = "
                          "(pixel * scale - mean) / std; float inputs only (uint8 inputs get "
                          "the pixels)", 1e-9, 1e9, 1.0 / 255.0, ready));
  g_object_class_install_property(object_class, PROP_CHANNEL_ORDER,
      g_param_spec_enum("channel-order", "Channel order", "Channel order the model expects",
                        gst_npu_infer_channel_order_get_type(), GST_NPU_INFER_ORDER_RGB, ready));
  g_object_class_install_property(object_class, PROP_LETTERBOX,
      g_param_spec_boolean("letterbox", "Letterbox",
                           "Keep the frame's aspect ratio, padding with grey (114)", FALSE,
                           ready));
  g_object_class_install_property(object_class, PROP_INPUT_WIDTH,
      g_param_spec_uint("input-width", "Input width",
                        "Width to run a model whose input width is open (e.g. PP-OCR's) at, "
                        "rounded up to size-multiple; 0: an open width follows the content: "
                        "the frame's own width (frame mode), or the crop's width at the input "
                        "height with its aspect ratio kept (roi mode: widths in steps of at "
                        "most 25%, ROIs of one width batched together); content "
                        "sized this way is letterboxed into the top-left corner, padded with "
                        "the mean", 0, 16384, 0, ready));
  g_object_class_install_property(object_class, PROP_INPUT_HEIGHT,
      g_param_spec_uint("input-height", "Input height",
                        "Height to run a model whose input height is open at, rounded up to "
                        "size-multiple; 0: it follows the content (see input-width)", 0, 16384,
                        0, ready));
  g_object_class_install_property(object_class, PROP_SIZE_MULTIPLE,
      g_param_spec_uint("size-multiple", "Size multiple",
                        "Open input axes are multiples of this (a detector's total stride: 32 "
                        "for PP-OCR and YOLO)", 1, 1024, 32, ready));
  g_object_class_install_property(object_class, PROP_MAX_INPUT_SIZE,
      g_param_spec_uint("max-input-size", "Maximum input size",
                        "Most pixels an open input axis that follows the content takes: "
                        "larger frames are scaled down, keeping their aspect ratio", 1, 16384,
                        2048, ready));
  g_object_class_install_property(object_class, PROP_PRINT_RESULTS,
      g_param_spec_boolean("print-results", "Print results",
                           "Print a line per inferred frame (roi mode: per ROI, with its id) "
                           "on stdout: pad, timestamp, batch slot, each output's name, dims "
                           "and first values", FALSE, playing));
  g_object_class_install_property(object_class, PROP_STATS_INTERVAL,
      g_param_spec_uint("stats-interval", "Statistics interval",
                        "Post an element message \"npuinfer-stats\" (as the stats property) at "
                        "most every this many milliseconds (0: never)", 0, G_MAXUINT / 1000, 0,
                        playing));
  g_object_class_install_property(object_class, PROP_MODE,
      g_param_spec_enum("mode", "Mode",
                        "frame: infer on whole frames; roi: infer once per region of interest "
                        "(GstVideoRegionOfInterestMeta) of each frame, cropped by the VPP, "
                        "ROIs of several frames and pads sharing batches; each ROI's outputs "
                        "become a GstNpuTensorMeta with its roi_id and an \"npu-tensors\" "
                        "param of the ROI meta; frames without ROIs pass without inference",
                        gst_npu_infer_mode_get_type(), GST_NPU_INFER_MODE_FRAME, ready));
  g_object_class_install_property(object_class, PROP_PRECISION,
      g_param_spec_enum("precision", "Precision",
                        "Arithmetic of the model's convolutions and matrix products: fp32, or "
                        "bf16 (inputs rounded to bfloat16, float32 sums: faster, about 1e-3 "
                        "relative error per layer) where the device multiplies bfloat16 "
                        "(npu-info: \"bf16 compute\"; elsewhere it computes fp32)",
                        gst_npu_infer_precision_get_type(), GST_NPU_INFER_PRECISION_FP32, ready));
  g_object_class_install_property(object_class, PROP_ROTATE_TALL,
      g_param_spec_boolean("rotate-tall", "Rotate tall ROIs",
                           "In roi mode: a region at least 1.5 times as tall as wide is turned "
                           "90 degrees counter-clockwise before inference, as PP-OCR turns "
                           "vertical text lines for its recogniser (its tensor meta's scale "
                           "and offset are then in the turned crop's coordinates)", FALSE,
                           playing));
  g_object_class_install_property(object_class, PROP_ROI_LABELS,
      g_param_spec_string("roi-labels", "ROI labels",
                          "In roi mode: comma-separated labels (the ROI meta's roi_type) of "
                          "the ROIs to infer on; empty: all", "", playing));
  g_object_class_install_property(object_class, PROP_ROI_MIN_SIZE,
      g_param_spec_uint("roi-min-size", "ROI minimum size",
                        "In roi mode: ROIs whose shorter side (within the frame) is below "
                        "this many pixels are not inferred (0: no minimum)", 0, G_MAXUINT, 0,
                        playing));
  g_object_class_install_property(object_class, PROP_ROI_MAX_SIZE,
      g_param_spec_uint("roi-max-size", "ROI maximum size",
                        "In roi mode: ROIs whose longer side (within the frame) is above "
                        "this many pixels are not inferred (0: no maximum)", 0, G_MAXUINT, 0,
                        playing));
  g_object_class_install_property(object_class, PROP_STATS,
      g_param_spec_boxed("stats", "Statistics",
                         "Batches run, frames (roi mode: ROIs) inferred, mean batch size, "
                         "mean/max run time (queued to done); per pad (a sink_N structure): "
                         "frames, inferences (roi mode: one per ROI), mean/max latency "
                         "in microseconds, frames not inferred because late (QoS), tracked "
                         "objects given their last result (reclassify-interval)",
                         GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "NPU inference", "Filter/Analyzer/Video",
      "Runs an ONNX model on the frames of many streams in batches, attaching the outputs as "
      "GstNpuTensorMeta; frames pass through untouched",
      "gst-npu developers");
  element_class->request_new_pad = gst_npu_infer_request_new_pad;
  element_class->release_pad = gst_npu_infer_release_pad;
  element_class->change_state = gst_npu_infer_change_state;
  element_class->set_context = gst_npu_infer_set_context;
  gst_type_mark_as_plugin_api(gst_npu_infer_channel_order_get_type(), 0);
  gst_type_mark_as_plugin_api(gst_npu_infer_mode_get_type(), 0);
  gst_type_mark_as_plugin_api(gst_npu_infer_precision_get_type(), 0);
  GST_DEBUG_CATEGORY_INIT(gst_npu_infer_debug, "npuinfer", 0, "NPU inference");
}

static void gst_npu_infer_init(GstNpuInfer *self)
{
  self->device_id = -1;
  self->batch_size = 1;
  self->max_inflight = 2;
  self->interval = 1;
  self->reclassify_interval = 1;
  self->scale = 1.0 / 255.0;
  self->size_multiple = 32;
  self->max_input_size = 2048;
  for (int c = 0; c < 3; c++)
    self->std[c] = 1.0f;
  self->pads = g_ptr_array_new();
  self->roi_labels = g_strdup("");
  self->roi_quarks = g_array_new(FALSE, FALSE, sizeof(GQuark));
  GstNpuBatcherFuncs funcs = {.free_data = item_free, .free_job = g_free,
                              .size_of = job_input_size, .reuse_result = reuse_result,
                              .free_result = gst_npu_infer_result_unref, .user_data = self};
  self->batcher = gst_npu_batcher_new(&funcs);
  update_policy(self);
}
