/**
 * SECTION:element-npuinfer
 *
 * Runs an ONNX model on video frames from any number of streams with one
 * loaded model. Each `sink_%u` request pad comes with its own `src_%u` and
 * its own runtime stream. Frames of all pads wait in one queue and are
 * batched into one execution (up to `batch-size`, waiting at most
 * `batch-timeout` for a batch to fill): each pad's frames are pre-processed
 * (scale, colour, normalise, layout) by the VPP on that pad's stream straight
 * into their slots of the model input, the model runs once, and every frame
 * gets its slice of the outputs as a GstNpuTensorMeta (data left in device
 * memory). The frames themselves pass through untouched, each on its own
 * src pad in its pad's order, together with that pad's serialized events.
 *
 * In `mode=roi` (secondary inference) the model runs once per
 * GstVideoRegionOfInterestMeta of the frame instead (only those whose label
 * is in `roi-labels`, when set): each ROI's rectangle is cropped out by the
 * VPP (clamped to the frame; empty ROIs are skipped) into its own slot of the
 * batch, so a batch may hold ROIs of several frames and pads. Each ROI's
 * outputs are attached as one more GstNpuTensorMeta whose `roi_id` is the
 * ROI meta's id, and as an "npu-tensors" structure param on the ROI meta.
 * Frames without (matching) ROIs pass on without inference and without meta.
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
#include <json-glib/json-glib.h>
#include <npu/npu.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gst/npu/npu-tensor-meta.h"
#include "gstnpuinputsize.h"
#include "gstnpumemory.h"
#include "gstnpuvideo.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_infer_debug);
#define GST_CAT_DEFAULT gst_npu_infer_debug

#define MAX_BATCH 64
#define MAX_OUTPUTS 16

typedef struct _InferPad InferPad;

/* A frame or serialized event on its way through a pad, in arrival order. */
typedef struct {
  InferPad *pad;
  GstBuffer *buffer; /* a frame, or */
  GstEvent *event;   /* an event */
  GstVideoInfo info; /* the frame's caps */
  gint64 queued_at;  /* monotonic us */
  guint pending;     /* its jobs not run yet */
  gboolean done;     /* may be pushed */
} Item;

/* One slot of a batch: a whole frame, or one region of interest of it. */
typedef struct {
  Item *item;
  gint roi_id;   /* the ROI meta's id; -1: the whole frame */
  GQuark roi_type;
  guint x, y, w, h; /* the ROI meta's rectangle (to find it again) */
  npu_rect crop; /* 0x0: the whole frame */
  npu_letterbox mapping; /* frame -> model input, from the VPP */
  guint input_width, input_height; /* the input size it wants; 0: not known yet */
  npu_rotation rotation; /* of the crop: a tall text region turned into a line */
} Job;

/* A sink/src pair. Fields below `info` are under the element's lock. */
struct _InferPad {
  GstPad *sink, *src;
  guint index;
  GstVideoInfo info; /* streaming thread only */
  gboolean have_info;
  GstSegment segment; /* streaming thread only */
  gboolean flushing;     /* sink side: refuse frames */
  gboolean src_flushing; /* src side: the task stops */
  GstFlowReturn last_flow;
  GQueue out;    /* Item*, oldest first: what the src task pushes */
  guint queued;  /* frames in `out` */
  guint running; /* jobs in the batch executing now */
  npu_stream *stream; /* pre-processing of this pad's frames */
  npu_event *ready;   /* recorded on `stream` after this pad's part of a batch */
  GstClockTime earliest; /* QoS: frames running before this skip inference */
  guint64 frames, inferences, qos_skipped;
  gint64 latency_sum, latency_max; /* queued -> results, us */
};

typedef enum { ORDER_RGB, ORDER_BGR } ChannelOrder;
typedef enum { MODE_FRAME, MODE_ROI } InferMode;

struct _GstNpuInfer {
  GstElement parent;
  /* properties (under the object lock) */
  gchar *model_path;
  gchar *config_path; /* JSON: property values, applied when the element opens */
  gint device_id;
  guint batch_size;
  guint64 batch_timeout;
  guint max_inflight;
  guint interval;
  gfloat mean[3], std[3];
  gchar *refused_mean, *refused_std; /* a value set_property refused: start fails */
  gdouble scale;
  ChannelOrder order;
  gboolean letterbox;
  gboolean rotate_tall; /* roi mode: crops 1.5 x as tall as wide turned counter-clockwise */
  guint input_width, input_height; /* for models whose H/W are open; 0: the model's */
  guint size_multiple, max_input_size; /* open axes that follow the content */
  gboolean print_results;
  guint stats_interval; /* ms */
  InferMode mode;
  gchar *roi_labels;
  GArray *roi_quarks; /* GQuark of each label of roi_labels; empty: all */
  /* the runtime, from READY on */
  npu_device *device;
  npu_model *model;
  npu_stream *stream; /* the model's executions */
  npu_mem_pool *pool; /* output tensors */
  GstAllocator *allocator;
  npu_tensor_info input; /* N x 3 x H x W as the model declares it */
  GstNpuInputPolicy sizes; /* how a batch's H and W are chosen */
  uint32_t output_count;
  /* Batching thread only: the model on the device, reshaped to each
   * batch's shape (it keeps recent shapes planned and the weights put),
   * and its input, as large as the largest shape met. */
  npu_context *context;
  npu_buffer *input_buffer;
  size_t input_bytes;
  /* batching (under `lock`) */
  GMutex lock;
  GCond changed;
  GQueue waiting; /* Job* waiting for a batch, oldest first */
  GThread *thread;
  gboolean stopping;
  gboolean failed; /* a batch failed (error posted): chain functions return ERROR */
  GPtrArray *pads; /* InferPad* */
  guint next_index;
  guint64 batches, batched_frames;
  gint64 run_sum, run_max; /* pre-processing + execution per batch, us */
  gint64 last_stats;
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
};

#define GST_TYPE_NPU_INFER_MODE (gst_npu_infer_mode_get_type())
static GType gst_npu_infer_mode_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {MODE_FRAME, "Infer on whole frames", "frame"},
      {MODE_ROI, "Infer on each region of interest (GstVideoRegionOfInterestMeta)", "roi"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstNpuInferMode", values));
  return type;
}

#define GST_TYPE_NPU_INFER_CHANNEL_ORDER (gst_npu_infer_channel_order_get_type())
static GType gst_npu_infer_channel_order_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {ORDER_RGB, "Red, green, blue", "rgb"},
      {ORDER_BGR, "Blue, green, red", "bgr"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstNpuInferChannelOrder", values));
  return type;
}

static void item_free(Item *item)
{
  if (item->buffer)
    gst_buffer_unref(item->buffer);
  if (item->event)
    gst_event_unref(item->event);
  g_free(item);
}

/* ---- the model ----------------------------------------------------------------------- */

static void release_pad_runtime(InferPad *pad)
{
  if (pad->stream) {
    npu_stream_synchronize(pad->stream);
    npu_stream_destroy(pad->stream);
  }
  if (pad->ready)
    npu_event_destroy(pad->ready);
  pad->stream = NULL;
  pad->ready = NULL;
}

/* With the batching thread stopped. */
static void release_runtime(GstNpuInfer *self)
{
  for (guint i = 0; i < self->pads->len; i++)
    release_pad_runtime(g_ptr_array_index(self->pads, i));
  if (self->stream)
    npu_stream_synchronize(self->stream);
  if (self->context)
    npu_context_destroy(self->context);
  self->context = NULL;
  if (self->input_buffer)
    npu_buffer_release(self->input_buffer);
  self->input_buffer = NULL;
  self->input_bytes = 0;
  if (self->stream)
    npu_stream_destroy(self->stream);
  if (self->pool)
    npu_mem_pool_destroy(self->pool);
  g_clear_object(&self->allocator);
  if (self->model)
    npu_model_release(self->model);
  if (self->device)
    npu_device_release(self->device);
  self->stream = NULL;
  self->pool = NULL;
  self->model = NULL;
  self->device = NULL;
  self->run_sum = self->run_max = 0;
  self->batches = self->batched_frames = 0;
}

/* Opens the device and loads the model; posts an element error when it cannot. */
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

/* A mean or std value set_property refused: an element error at start. */
static gboolean check_channel_values(GstNpuInfer *self)
{
  GST_OBJECT_LOCK(self);
  const gchar *name = self->refused_mean ? "mean" : self->refused_std ? "std" : NULL;
  gchar *text = g_strdup(self->refused_mean ? self->refused_mean : self->refused_std);
  GST_OBJECT_UNLOCK(self);
  if (name)
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Invalid %s '%s'", name, text),
                      ("give 1 or 3 comma-separated numbers (one per input channel)"));
  g_free(text);
  return name == NULL;
}

/* Applies the `config` file's members as properties of the same names. */
static gboolean apply_config(GstNpuInfer *self)
{
  GST_OBJECT_LOCK(self);
  gchar *path = g_strdup(self->config_path);
  GST_OBJECT_UNLOCK(self);
  if (!path)
    return TRUE;
  JsonParser *parser = json_parser_new();
  GError *error = NULL;
  gboolean ok = json_parser_load_from_file(parser, path, &error);
  JsonNode *root = ok ? json_parser_get_root(parser) : NULL;
  if (!ok || !root || !JSON_NODE_HOLDS_OBJECT(root)) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot read the config '%s'", path),
                      ("%s", error ? error->message : "not a JSON object"));
    ok = FALSE;
  }
  GList *members = ok ? json_object_get_members(json_node_get_object(root)) : NULL;
  for (GList *m = members; m && ok; m = m->next) {
    const gchar *name = m->data;
    GParamSpec *pspec = g_object_class_find_property(G_OBJECT_GET_CLASS(self), name);
    gchar *text = config_text(json_object_get_member(json_node_get_object(root), name));
    ok = pspec && (pspec->flags & G_PARAM_WRITABLE) && g_strcmp0(name, "config") != 0 && text;
    if (ok)
      gst_util_set_object_arg(G_OBJECT(self), name, text);
    else
      GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Bad config '%s'", path),
                        ("'%s' is not an npuinfer property with a plain value", name));
    g_free(text);
  }
  g_list_free(members);
  if (error)
    g_error_free(error);
  g_object_unref(parser);
  g_free(path);
  return ok;
}

static gboolean open_runtime(GstNpuInfer *self)
{
  if (!apply_config(self) || !check_channel_values(self))
    return FALSE;
  GST_OBJECT_LOCK(self);
  gchar *path = g_strdup(self->model_path);
  gint device_id = self->device_id;
  GstNpuInputPolicy sizes = {.width = self->input_width, .height = self->input_height,
                             .multiple = self->size_multiple,
                             .max_size = MAX(self->max_input_size, self->size_multiple),
                             .buckets = self->mode == MODE_ROI};
  GST_OBJECT_UNLOCK(self);
  if (!path || !*path) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No model given"),
                      ("set the 'model' property to an ONNX file"));
    g_free(path);
    return FALSE;
  }
  npu_status status = device_id < 0 ? npu_device_open_default(&self->device)
                                    : npu_device_open((uint32_t)device_id, &self->device);
  if (status == NPU_OK)
    status = npu_stream_create(self->device, &self->stream);
  if (status == NPU_OK)
    status = npu_mem_pool_create(self->device, NULL, &self->pool);
  if (status != NPU_OK) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Cannot open NPU device %d", device_id),
                      ("%s", npu_last_error_message()));
    g_free(path);
    return FALSE;
  }
  self->allocator = gst_npu_allocator_new(self->device);
  status = npu_model_load_file(path, &self->model);
  if (status == NPU_ERROR_NOT_FOUND || status == NPU_ERROR_IO) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("Cannot read the model '%s'", path),
                      ("%s", npu_last_error_message()));
  } else if (status != NPU_OK) {
    GST_ELEMENT_ERROR(self, STREAM, DECODE, ("Cannot load the model '%s'", path),
                      ("%s", npu_last_error_message()));
  }
  if (status != NPU_OK) {
    g_free(path);
    return FALSE;
  }
  uint32_t inputs = 0;
  npu_model_input_count(self->model, &inputs);
  npu_model_output_count(self->model, &self->output_count);
  npu_model_input_info(self->model, 0, &self->input);
  gboolean image = inputs == 1 &&
                   (self->input.dtype == NPU_DTYPE_FLOAT32 ||
                    self->input.dtype == NPU_DTYPE_UINT8) &&
                   self->input.rank == 4 && self->input.dims[1] == 3 &&
                   self->input.dims[0] <= MAX_BATCH;
  if (!image) {
    GST_ELEMENT_ERROR(self, STREAM, WRONG_TYPE, ("The model does not take images"),
                      ("'%s' must have one float32 or uint8 input of N x 3 x H x W (N "
                       "dynamic or at most %d); it has %u input(s), the first of rank %u",
                       path, MAX_BATCH, inputs, self->input.rank));
    g_free(path);
    return FALSE;
  }
  if (self->output_count == 0 || self->output_count > MAX_OUTPUTS) {
    GST_ELEMENT_ERROR(self, STREAM, WRONG_TYPE, ("The model has %u outputs", self->output_count),
                      ("'%s': npuinfer takes models with 1 to %d outputs", path, MAX_OUTPUTS));
    g_free(path);
    return FALSE;
  }
  sizes.model_height = self->input.dims[2];
  sizes.model_width = self->input.dims[3];
  self->sizes = sizes;
  GST_INFO_OBJECT(self, "model %s: input %s %" G_GINT64_FORMAT "x3x%" G_GINT64_FORMAT
                  "x%" G_GINT64_FORMAT "%s", path, self->input.name, self->input.dims[0],
                  self->input.dims[2], self->input.dims[3],
                  gst_npu_input_policy_is_dynamic(&sizes) ? " (open axes follow the content)"
                                                          : "");
  g_free(path);
  return TRUE;
}

/* Most frames one execution takes: batch-size, or the model's fixed batch. */
static guint batch_limit(GstNpuInfer *self)
{
  guint limit = self->batch_size;
  if (self->input.dims[0] > 0)
    limit = MIN(limit, (guint)self->input.dims[0]);
  return MAX(limit, 1);
}

/* Posts the error for a failed runtime call: out of memory gets its own. */
static void runtime_error(GstNpuInfer *self, npu_status status, const gchar *what)
{
  if (status == NPU_ERROR_OUT_OF_MEMORY)
    GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Out of device memory: %s", what),
                      ("%s", npu_last_error_message()));
  else
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("%s", what), ("%s: %s", npu_status_name(status),
                                                           npu_last_error_message()));
}

/* The model ready for `frames` frames of width x height: the context is
 * made for the first batch and reshaped for the next ones (a stream of
 * frames keeps one shape; crops of many widths alternate between a few,
 * which the context keeps planned). FALSE after an error. */
static gboolean ensure_shape(GstNpuInfer *self, guint frames, guint width, guint height)
{
  npu_tensor_info shape = self->input;
  shape.dims[0] = frames;
  shape.dims[2] = height;
  shape.dims[3] = width;
  GST_DEBUG_OBJECT(self, "the model for %ux3x%ux%u", frames, height, width);
  npu_status status = self->context
                          ? npu_context_reshape(self->context, &shape, 1)
                          : npu_context_create(self->model, self->device, &shape, 1,
                                               &self->context);
  size_t bytes = npu_dtype_size(self->input.dtype) * frames * 3 * (size_t)height * width;
  if (status == NPU_OK && bytes > self->input_bytes) {
    if (self->input_buffer)
      npu_buffer_release(self->input_buffer);
    self->input_buffer = NULL;
    self->input_bytes = 0;
    status = npu_buffer_alloc(self->device, bytes, &self->input_buffer);
    if (status == NPU_OK)
      self->input_bytes = bytes;
  }
  if (status != NPU_OK) {
    gchar *what = g_strdup_printf("Cannot plan the model for %u x 3 x %u x %u", frames, height,
                                  width);
    runtime_error(self, status, what);
    g_free(what);
    return FALSE;
  }
  return TRUE;
}

/* The part of its frame a job reads, clamped to the frame. */
static void job_content(const Job *job, guint *width, guint *height)
{
  guint frame_width = GST_VIDEO_INFO_WIDTH(&job->item->info);
  guint frame_height = GST_VIDEO_INFO_HEIGHT(&job->item->info);
  *width = frame_width;
  *height = frame_height;
  if (job->crop.width > 0 && job->crop.height > 0) {
    *width = MIN((guint64)job->crop.width, (guint64)frame_width - MIN(job->x, frame_width));
    *height = MIN((guint64)job->crop.height, (guint64)frame_height - MIN(job->y, frame_height));
  }
  if (job->rotation == NPU_ROTATE_90_CCW || job->rotation == NPU_ROTATE_90_CW) {
    guint turned = *width;
    *width = *height;
    *height = turned;
  }
}

/* The input size a job wants (computed once). */
static void job_input_size(GstNpuInfer *self, Job *job)
{
  if (job->input_width > 0)
    return;
  guint width, height;
  job_content(job, &width, &height);
  gst_npu_input_size_for(&self->sizes, width, height, &job->input_width, &job->input_height);
}

/* ---- one batch ----------------------------------------------------------------------- */

/* Creates the pad's stream and event the first time a batch uses it. */
static npu_status ensure_pad_runtime(GstNpuInfer *self, InferPad *pad)
{
  npu_status status = NPU_OK;
  if (!pad->stream)
    status = npu_stream_create(self->device, &pad->stream);
  if (status == NPU_OK && !pad->ready)
    status = npu_event_create(self->device, NPU_EVENT_DISABLE_TIMING, &pad->ready);
  return status;
}

/* The frame as a VPP image: NPU memory of our device as it is, other memory
 * imported without copying (*imported keeps it until the batch is done). */
static gboolean frame_image(GstNpuInfer *self, Item *item, GstMapInfo *map, gboolean *mapped,
                            npu_buffer **imported, npu_image *image)
{
  GstBuffer *buffer = item->buffer;
  GstMemory *mem = gst_buffer_n_memory(buffer) == 1 ? gst_buffer_peek_memory(buffer, 0) : NULL;
  const GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
  if (mem && gst_is_npu_memory(mem) && gst_npu_buffer_is_on_device(buffer, self->device)) {
    if (gst_npu_memory_sync_for_device(mem, item->pad->stream) &&
        gst_npu_image_describe(&item->info, meta, gst_npu_memory_get_buffer(mem), mem->offset,
                               image))
      return TRUE;
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Cannot read a frame of %s",
                      GST_PAD_NAME(item->pad->sink)), ("%s", npu_last_error_message()));
    return FALSE;
  }
  if (!(*mapped = gst_buffer_map(buffer, map, GST_MAP_READ))) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Cannot map a frame of %s",
                      GST_PAD_NAME(item->pad->sink)), (NULL));
    return FALSE;
  }
  if (map->size < GST_VIDEO_INFO_SIZE(&item->info) && !meta) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("Truncated frame on %s", GST_PAD_NAME(item->pad->sink)),
                      ("%" G_GSIZE_FORMAT " bytes, the caps need %" G_GSIZE_FORMAT, map->size,
                       GST_VIDEO_INFO_SIZE(&item->info)));
    return FALSE;
  }
  if (npu_buffer_import_host(self->device, map->data, map->size, NULL, NULL, imported) ==
          NPU_OK &&
      gst_npu_image_describe(&item->info, meta, *imported, 0, image))
    return TRUE;
  GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Cannot read a frame of %s",
                    GST_PAD_NAME(item->pad->sink)), ("%s", npu_last_error_message()));
  return FALSE;
}

static void print_result(Item *item, const GstNpuTensorMeta *meta)
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
  g_print("npuinfer %s pts %" GST_TIME_FORMAT "%s batch %u/%u:%s\n",
          GST_PAD_NAME(item->pad->sink), GST_TIME_ARGS(GST_BUFFER_PTS(item->buffer)), roi,
          meta->batch_index + 1, meta->batch_size, line->str);
  g_free(roi);
  g_string_free(line, TRUE);
}

/* The ROI meta a job was made from (the frame may be a copy by now). */
static GstVideoRegionOfInterestMeta *job_roi(GstBuffer *buffer, const Job *job)
{
  gpointer state = NULL;
  GstMeta *m;
  while ((m = gst_buffer_iterate_meta_filtered(buffer, &state,
                                               GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)m;
    if (roi->id == job->roi_id && roi->roi_type == job->roi_type && roi->x == job->x &&
        roi->y == job->y && roi->w == job->w && roi->h == job->h)
      return roi;
  }
  return NULL;
}

/* The ROI's tensors as an "npu-tensors" param of its meta: per output a
 * structure (dtype, dims, data: the shared output buffer, offset, size). */
static void add_roi_param(GstBuffer *buffer, const Job *job, const GstNpuTensorMeta *meta)
{
  GstVideoRegionOfInterestMeta *roi = job_roi(buffer, job);
  if (!roi)
    return;
  GstStructure *param = gst_structure_new("npu-tensors", "roi-id", G_TYPE_INT, job->roi_id,
                                          "pad-index", G_TYPE_UINT, meta->pad_index,
                                          "batch-index", G_TYPE_UINT, meta->batch_index, NULL);
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

/* This job's slice of each output, as a tensor meta on its frame. The frame
 * is only made writable for the meta: its memory is shared, not copied. */
static void attach_outputs(GstNpuInfer *self, const Job *job, guint slot, guint frames,
                           guint count, GstBuffer *const *outputs, const npu_tensor_info *infos,
                           gboolean print)
{
  Item *item = job->item;
  item->buffer = gst_buffer_make_writable(item->buffer);
  GstNpuTensorMeta *meta = gst_buffer_add_npu_tensor_meta(item->buffer, self->output_count);
  meta->batch_index = slot;
  meta->batch_size = count;
  meta->pad_index = item->pad->index;
  meta->roi_id = job->roi_id;
  meta->scale_x = job->mapping.scale_x;
  meta->scale_y = job->mapping.scale_y;
  meta->offset_x = job->mapping.pad_x;
  meta->offset_y = job->mapping.pad_y;
  for (uint32_t o = 0; o < self->output_count; o++) {
    const npu_tensor_info *info = &infos[o];
    GstNpuTensor *t = &meta->tensors[o];
    size_t total = npu_dtype_size(info->dtype);
    for (uint32_t d = 0; d < info->rank; d++)
      total *= (size_t)info->dims[d];
    /* batch-major outputs split by frame; others go whole to every frame */
    gboolean batched = info->rank > 0 && info->dims[0] == (int64_t)frames;
    t->name = g_strdup(info->name);
    t->dtype = info->dtype;
    t->rank = MIN(info->rank, GST_NPU_TENSOR_MAX_RANK);
    for (guint d = 0; d < t->rank; d++)
      t->dims[d] = info->dims[d];
    if (batched)
      t->dims[0] = 1;
    t->size = batched ? total / frames : total;
    t->offset = batched ? slot * t->size : 0;
    t->data = gst_buffer_ref(outputs[o]);
  }
  if (job->roi_id >= 0)
    add_roi_param(item->buffer, job, meta);
  if (print)
    print_result(item, meta);
}

/* Pre-processes `count` jobs (frames or ROIs) into one input (each pad's
 * on its own stream), runs the model, attaches the results. Only the
 * batching thread calls it, without the lock. */
static gboolean run_batch(GstNpuInfer *self, Job **batch, guint count)
{
  guint frames = self->input.dims[0] > 0 ? (guint)self->input.dims[0] : count;
  guint width = 0, height = 0; /* the largest any job wants */
  for (guint i = 0; i < count; i++) {
    job_input_size(self, batch[i]);
    width = MAX(width, batch[i]->input_width);
    height = MAX(height, batch[i]->input_height);
  }
  if (!ensure_shape(self, frames, width, height))
    return FALSE;
  gboolean follows_content = gst_npu_input_policy_is_dynamic(&self->sizes);
  GST_OBJECT_LOCK(self);
  npu_tensor_target target = {
      .buffer = self->input_buffer, .width = width, .height = height, .batch = frames,
      .layout = NPU_LAYOUT_NCHW, .order = self->order == ORDER_BGR ? NPU_ORDER_BGR : NPU_ORDER_RGB};
  if (self->input.dtype == NPU_DTYPE_UINT8) { /* raw pixels */
    target.dtype = NPU_TENSOR_UINT8;
    for (int c = 0; c < 3; c++)
      target.scale[c] = 1.0f;
  } else { /* (pixel * scale - mean) / std */
    target.dtype = NPU_TENSOR_FLOAT32;
    for (int c = 0; c < 3; c++) {
      target.mean[c] = (float)(self->mean[c] / self->scale);
      target.scale[c] = (float)(self->scale / self->std[c]);
    }
  }
  npu_vpp_params params = {.method = NPU_SCALE_BILINEAR, .letterbox = self->letterbox,
                           .pad_rgb = {114, 114, 114}};
  if (follows_content) {
    /* Each job at its own aspect ratio in the top-left corner of the batch's
     * size, the rest padded with the mean: zeros once normalised, what
     * PP-OCR's recogniser pads with (and a detector sees as background). */
    params.letterbox = TRUE;
    params.align = NPU_LETTERBOX_TOP_LEFT;
    /* content that sized both axes is only rounded up: kept at its own scale */
    params.max_scale = gst_npu_input_policy_keeps_scale(&self->sizes) ? 1.0f : 0.0f;
    for (int c = 0; c < 3; c++) {
      double pixel = target.dtype == NPU_TENSOR_FLOAT32 ? self->mean[c] / self->scale : 114;
      params.pad_rgb[self->order == ORDER_BGR ? 2 - c : c] = (uint8_t)CLAMP(lround(pixel), 0, 255);
    }
  }
  gboolean print = self->print_results;
  GST_OBJECT_UNLOCK(self);

  npu_vpp_job jobs[MAX_BATCH];
  /* the frames of the batch, each once (a frame's ROIs share its image) */
  Item *items[MAX_BATCH];
  guint item_of[MAX_BATCH], n_items = 0;
  npu_image images[MAX_BATCH];
  npu_buffer *imported[MAX_BATCH] = {NULL};
  GstMapInfo maps[MAX_BATCH];
  gboolean mapped[MAX_BATCH] = {FALSE};
  gboolean ok = TRUE;
  npu_status status = NPU_OK;
  for (guint i = 0; i < count; i++) {
    guint k = 0;
    while (k < n_items && items[k] != batch[i]->item)
      k++;
    if (k == n_items)
      items[n_items++] = batch[i]->item;
    item_of[i] = k;
  }
  for (guint k = 0; k < n_items && ok; k++)
    ok = frame_image(self, items[k], &maps[k], &mapped[k], &imported[k], &images[k]);
  /* Each pad's jobs on its stream, which the execution stream then waits for. */
  for (guint i = 0; i < count && ok && status == NPU_OK; i++) {
    InferPad *pad = batch[i]->item->pad;
    gboolean first = TRUE;
    for (guint k = 0; k < i && first; k++)
      first = batch[k]->item->pad != pad;
    if (!first)
      continue;
    size_t n = 0;
    for (guint k = i; k < count; k++)
      if (batch[k]->item->pad == pad)
        jobs[n++] = (npu_vpp_job){.src = &images[item_of[k]], .crop = batch[k]->crop,
                                  .slot = k, .mapping = &batch[k]->mapping,
                                  .rotation = batch[k]->rotation};
    status = npu_vpp_to_tensor(pad->stream, jobs, n, &params, &target);
    if (status == NPU_OK)
      status = npu_event_record(pad->ready, pad->stream);
    if (status == NPU_OK)
      status = npu_stream_wait_event(self->stream, pad->ready);
  }
  if (ok && status != NPU_OK) {
    runtime_error(self, status, "Pre-processing failed");
    ok = FALSE;
  }

  npu_tensor_info infos[MAX_OUTPUTS];
  npu_buffer *out[MAX_OUTPUTS] = {NULL};
  GstBuffer *outputs[MAX_OUTPUTS] = {NULL};
  for (uint32_t o = 0; o < self->output_count && ok; o++) {
    npu_context_output_info(self->context, o, &infos[o]);
    size_t size = npu_dtype_size(infos[o].dtype);
    for (uint32_t d = 0; d < infos[o].rank; d++)
      size *= (size_t)infos[o].dims[d];
    status = npu_mem_pool_alloc(self->pool, size ? size : 1, &out[o]);
    if (status != NPU_OK) {
      runtime_error(self, status, "Cannot allocate the model's outputs");
      ok = FALSE;
      break;
    }
    outputs[o] = gst_buffer_new();
    gst_buffer_append_memory(outputs[o], gst_npu_memory_wrap(self->allocator, out[o], size));
  }
  if (ok) {
    status = npu_context_run(self->context, self->stream, &self->input_buffer, out);
    if (status == NPU_OK)
      status = npu_stream_synchronize(self->stream);
    if (status != NPU_OK) {
      runtime_error(self, status, "Inference failed");
      ok = FALSE;
    }
  }
  /* Pad streams may still hold the imports after a failure. */
  for (guint k = 0; k < n_items; k++) {
    if (!ok && items[k]->pad->stream)
      npu_stream_synchronize(items[k]->pad->stream);
  }
  for (guint k = 0; k < n_items; k++) {
    if (imported[k])
      npu_buffer_release(imported[k]);
    if (mapped[k])
      gst_buffer_unmap(items[k]->buffer, &maps[k]);
  }
  for (guint i = 0; i < count && ok; i++)
    attach_outputs(self, batch[i], i, frames, count, outputs, infos, print);
  for (uint32_t o = 0; o < self->output_count; o++)
    if (outputs[o])
      gst_buffer_unref(outputs[o]);
    else if (out[o])
      npu_buffer_release(out[o]);
  return ok;
}

/* ---- batching across pads ------------------------------------------------------------- */

/* Under the lock: whether the waiting frames should run now. */
static gboolean batch_due(GstNpuInfer *self, gint64 now)
{
  if (g_queue_is_empty(&self->waiting))
    return FALSE;
  const Job *oldest = g_queue_peek_head(&self->waiting);
  GST_OBJECT_LOCK(self);
  guint limit = batch_limit(self);
  gint64 timeout = (gint64)self->batch_timeout;
  GST_OBJECT_UNLOCK(self);
  return g_queue_get_length(&self->waiting) >= limit || timeout == 0 ||
         now >= oldest->item->queued_at + timeout;
}

/* Under the lock: the statistics as a structure (for the `stats` property
 * and the element messages). */
static GstStructure *stats_locked(GstNpuInfer *self)
{
  GstStructure *s = gst_structure_new(
      "npuinfer-stats", "batches", G_TYPE_UINT64, self->batches, "frames-inferred",
      G_TYPE_UINT64, self->batched_frames, "mean-batch", G_TYPE_DOUBLE,
      self->batches ? (double)self->batched_frames / (double)self->batches : 0.0,
      "mean-run-us", G_TYPE_DOUBLE,
      self->batches ? (double)self->run_sum / (double)self->batches : 0.0, "max-run-us",
      G_TYPE_INT64, self->run_max, NULL);
  for (guint i = 0; i < self->pads->len; i++) {
    InferPad *pad = g_ptr_array_index(self->pads, i);
    gchar *name = g_strdup_printf("sink_%u", pad->index);
    GstStructure *p = gst_structure_new(
        name, "frames", G_TYPE_UINT64, pad->frames, "inferences", G_TYPE_UINT64,
        pad->inferences, "mean-latency-us", G_TYPE_DOUBLE,
        pad->inferences ? (double)pad->latency_sum / (double)pad->inferences : 0.0,
        "max-latency-us", G_TYPE_INT64, pad->latency_max, "qos-skipped", G_TYPE_UINT64,
        pad->qos_skipped, NULL);
    gst_structure_set(s, name, GST_TYPE_STRUCTURE, p, NULL);
    gst_structure_free(p);
    g_free(name);
  }
  return s;
}

/* Under the lock: takes the oldest waiting job and up to limit - 1 more into
 * `batch`, in arrival order. Where the input size follows the content of
 * crops, only jobs of the oldest one's size go with it: a crop is then read
 * the same whatever else is waiting (a recogniser's reading changes with
 * the padding a wider neighbour would add), and a short one is not padded
 * to the longest. */
static guint take_batch(GstNpuInfer *self, Job **batch, guint limit)
{
  guint count = 0;
  batch[count++] = g_queue_pop_head(&self->waiting);
  gboolean same_size = gst_npu_input_policy_is_dynamic(&self->sizes) && self->sizes.buckets;
  if (same_size)
    job_input_size(self, batch[0]);
  for (GList *l = self->waiting.head; l && count < limit;) {
    GList *next = l->next;
    Job *job = l->data;
    if (same_size)
      job_input_size(self, job);
    if (!same_size || (job->input_width == batch[0]->input_width &&
                       job->input_height == batch[0]->input_height)) {
      batch[count++] = job;
      g_queue_delete_link(&self->waiting, l);
    }
    l = next;
  }
  for (guint i = 0; i < count; i++)
    batch[i]->item->pad->running++;
  return count;
}

/* Takes batches off the waiting queue, runs them, marks their frames done. */
static gpointer batch_thread(gpointer data)
{
  GstNpuInfer *self = data;
  g_mutex_lock(&self->lock);
  while (!self->stopping) {
    gint64 now = g_get_monotonic_time();
    if (!batch_due(self, now)) {
      const Job *oldest = g_queue_peek_head(&self->waiting);
      GST_OBJECT_LOCK(self);
      gint64 timeout = (gint64)self->batch_timeout;
      GST_OBJECT_UNLOCK(self);
      if (oldest)
        g_cond_wait_until(&self->changed, &self->lock, oldest->item->queued_at + timeout);
      else
        g_cond_wait(&self->changed, &self->lock);
      continue;
    }
    Job *batch[MAX_BATCH];
    GST_OBJECT_LOCK(self);
    guint limit = batch_limit(self);
    GST_OBJECT_UNLOCK(self);
    guint count = take_batch(self, batch, limit);
    /* Streams are made here, the only place that uses them while running. */
    npu_status status = NPU_OK;
    for (guint i = 0; i < count && status == NPU_OK; i++)
      status = ensure_pad_runtime(self, batch[i]->item->pad);
    g_mutex_unlock(&self->lock);

    gint64 start = g_get_monotonic_time();
    gboolean ok = status == NPU_OK;
    if (!ok)
      runtime_error(self, status, "Cannot create a pad's stream");
    else
      ok = run_batch(self, batch, count);
    gint64 end = g_get_monotonic_time();

    g_mutex_lock(&self->lock);
    self->failed |= !ok;
    if (ok) {
      self->batches++;
      self->batched_frames += count;
      self->run_sum += end - start;
      self->run_max = MAX(self->run_max, end - start);
    }
    for (guint i = 0; i < count; i++) {
      Item *item = batch[i]->item;
      InferPad *pad = item->pad;
      if (ok) {
        gint64 latency = end - item->queued_at;
        pad->inferences++;
        pad->latency_sum += latency;
        pad->latency_max = MAX(pad->latency_max, latency);
      }
      /* a failed batch's frames pass without results */
      item->done = --item->pending == 0;
      pad->running--;
      g_free(batch[i]);
    }
    g_cond_broadcast(&self->changed);
    GstStructure *stats = NULL;
    GST_OBJECT_LOCK(self);
    gint64 every = (gint64)self->stats_interval * 1000;
    GST_OBJECT_UNLOCK(self);
    if (every > 0 && end - self->last_stats >= every) {
      self->last_stats = end;
      stats = stats_locked(self);
    }
    if (stats) {
      g_mutex_unlock(&self->lock);
      gst_element_post_message(GST_ELEMENT(self),
                               gst_message_new_element(GST_OBJECT(self), stats));
      g_mutex_lock(&self->lock);
    }
  }
  g_mutex_unlock(&self->lock);
  return NULL;
}

/* Under the lock: drops the pad's frames and events once no batch uses them. */
static void drop_pad_items(GstNpuInfer *self, InferPad *pad)
{
  while (pad->running > 0)
    g_cond_wait(&self->changed, &self->lock);
  for (GList *l = self->waiting.head; l;) {
    GList *next = l->next;
    Job *job = l->data;
    if (job->item->pad == pad) {
      g_queue_delete_link(&self->waiting, l);
      g_free(job);
    }
    l = next;
  }
  Item *item;
  while ((item = g_queue_pop_head(&pad->out)))
    item_free(item);
  pad->queued = 0;
  g_cond_broadcast(&self->changed);
}

/* Roi mode: a job per ROI meta of the frame whose label is in `labels`
 * (empty: all), but not those that are empty or lie outside the frame; with
 * `rotate_tall`, a crop at least 1.5 times as tall as wide is turned 90
 * degrees counter-clockwise, as PP-OCR turns vertical text lines. */
static void add_roi_jobs(GstBuffer *buffer, const GstVideoInfo *info, const GArray *labels,
                         gboolean rotate_tall, GPtrArray *jobs)
{
  gpointer state = NULL;
  GstMeta *m;
  guint width = GST_VIDEO_INFO_WIDTH(info), height = GST_VIDEO_INFO_HEIGHT(info);
  while ((m = gst_buffer_iterate_meta_filtered(buffer, &state,
                                               GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    const GstVideoRegionOfInterestMeta *roi = (const GstVideoRegionOfInterestMeta *)m;
    gboolean wanted = labels->len == 0;
    for (guint i = 0; i < labels->len && !wanted; i++)
      wanted = g_array_index(labels, GQuark, i) == roi->roi_type;
    if (!wanted || roi->w == 0 || roi->h == 0 || roi->x >= width || roi->y >= height) {
      GST_LOG("ROI %d (%s) skipped", roi->id, g_quark_to_string(roi->roi_type));
      continue;
    }
    Job *job = g_new0(Job, 1);
    job->roi_id = roi->id;
    job->roi_type = roi->roi_type;
    job->x = roi->x;
    job->y = roi->y;
    job->w = roi->w;
    job->h = roi->h;
    /* the VPP clamps what lies past the right and bottom edges */
    job->crop = (npu_rect){.x = (int32_t)roi->x, .y = (int32_t)roi->y,
                           .width = MIN(roi->w, (guint)G_MAXINT32),
                           .height = MIN(roi->h, (guint)G_MAXINT32)};
    guint crop_width = MIN(roi->w, width - roi->x), crop_height = MIN(roi->h, height - roi->y);
    if (rotate_tall && 2 * (guint64)crop_height >= 3 * (guint64)crop_width)
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
  GST_OBJECT_LOCK(self);
  guint interval = self->interval;
  guint limit = self->max_inflight * batch_limit(self);
  InferMode mode = self->mode;
  GArray *labels = mode == MODE_ROI ? g_array_ref(self->roi_quarks) : NULL;
  gboolean rotate_tall = self->rotate_tall;
  GST_OBJECT_UNLOCK(self);

  Item *item = g_new0(Item, 1);
  item->pad = pad;
  item->buffer = buffer;
  item->info = pad->info;
  GPtrArray *jobs = g_ptr_array_new_with_free_func(g_free);
  if (mode == MODE_FRAME) {
    Job *job = g_new0(Job, 1);
    job->roi_id = -1;
    g_ptr_array_add(jobs, job);
  } else {
    add_roi_jobs(buffer, &pad->info, labels, rotate_tall, jobs);
    g_array_unref(labels);
  }
  for (guint i = 0; i < jobs->len; i++)
    ((Job *)g_ptr_array_index(jobs, i))->item = item;
  /* QoS needs running times: a segment of bytes (an appsrc's default) has none */
  GstClockTime running = pad->segment.format == GST_FORMAT_TIME
                             ? gst_segment_to_running_time(&pad->segment, GST_FORMAT_TIME,
                                                           GST_BUFFER_PTS(buffer))
                             : GST_CLOCK_TIME_NONE;
  g_mutex_lock(&self->lock);
  /* frames without (matching) ROIs pass on without inference */
  gboolean infer = pad->frames++ % interval == 0 && jobs->len > 0;
  if (infer && GST_CLOCK_TIME_IS_VALID(running) && GST_CLOCK_TIME_IS_VALID(pad->earliest) &&
      running < pad->earliest) { /* late: the frame goes on, without results */
    infer = FALSE;
    pad->qos_skipped++;
  }
  /* Back-pressure: this pad's frames not yet pushed, and all frames waiting
   * for a batch, are bounded. */
  while (!pad->flushing && pad->last_flow == GST_FLOW_OK && !self->failed &&
         (pad->queued >= limit || (infer && g_queue_get_length(&self->waiting) >= limit)))
    g_cond_wait(&self->changed, &self->lock);
  GstFlowReturn flow = pad->flushing ? GST_FLOW_FLUSHING
                       : self->failed ? GST_FLOW_ERROR
                                      : pad->last_flow;
  if (flow != GST_FLOW_OK) {
    g_mutex_unlock(&self->lock);
    item_free(item);
    g_ptr_array_unref(jobs);
    return flow;
  }
  item->queued_at = g_get_monotonic_time();
  item->done = !infer; /* frames between intervals pass without results */
  g_queue_push_tail(&pad->out, item);
  pad->queued++;
  if (infer) {
    item->pending = jobs->len;
    for (guint i = 0; i < jobs->len; i++)
      g_queue_push_tail(&self->waiting, g_ptr_array_index(jobs, i));
    g_ptr_array_set_free_func(jobs, NULL); /* the jobs are the queue's now */
  }
  g_cond_broadcast(&self->changed);
  g_mutex_unlock(&self->lock);
  g_ptr_array_unref(jobs);
  return GST_FLOW_OK;
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
  g_mutex_lock(&self->lock);
  Item *head = NULL;
  while (!pad->src_flushing && !((head = g_queue_peek_head(&pad->out)) && head->done))
    g_cond_wait(&self->changed, &self->lock);
  if (pad->src_flushing) {
    g_mutex_unlock(&self->lock);
    gst_pad_pause_task(pad->src);
    gst_object_unref(self);
    return;
  }
  g_queue_pop_head(&pad->out);
  if (head->buffer)
    pad->queued--;
  g_cond_broadcast(&self->changed);
  g_mutex_unlock(&self->lock);

  if (head->buffer) {
    GstFlowReturn flow = gst_pad_push(pad->src, head->buffer);
    head->buffer = NULL;
    if (flow != GST_FLOW_OK) {
      /* the chain function returns it; fatal ones stop this pad */
      gboolean fatal = flow < GST_FLOW_EOS || flow == GST_FLOW_NOT_LINKED;
      g_mutex_lock(&self->lock);
      pad->last_flow = flow;
      pad->src_flushing |= fatal || flow == GST_FLOW_FLUSHING;
      g_cond_broadcast(&self->changed);
      g_mutex_unlock(&self->lock);
      if (fatal) {
        GST_ELEMENT_FLOW_ERROR(self, flow);
        gst_pad_push_event(pad->src, gst_event_new_eos());
      }
    }
  } else {
    gst_pad_push_event(pad->src, head->event);
    head->event = NULL;
  }
  item_free(head);
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
    g_mutex_lock(&self->lock);
    pad->flushing = TRUE;
    pad->src_flushing = TRUE;
    g_cond_broadcast(&self->changed);
    g_mutex_unlock(&self->lock);
    gst_pad_push_event(pad->src, event);
    gst_pad_pause_task(pad->src);
    return TRUE;
  case GST_EVENT_FLUSH_STOP:
    g_mutex_lock(&self->lock);
    drop_pad_items(self, pad);
    pad->flushing = FALSE;
    pad->src_flushing = FALSE;
    pad->last_flow = GST_FLOW_OK;
    pad->earliest = GST_CLOCK_TIME_NONE;
    g_mutex_unlock(&self->lock);
    gst_pad_push_event(pad->src, event);
    return gst_pad_start_task(pad->src, src_loop, pad, NULL);
  default:
    break;
  }
  if (!GST_EVENT_IS_SERIALIZED(event))
    return gst_pad_push_event(pad->src, event);
  /* Serialized events go out after this pad's frames received before them. */
  g_mutex_lock(&self->lock);
  if (pad->flushing) {
    g_mutex_unlock(&self->lock);
    gst_event_unref(event);
    return FALSE;
  }
  Item *item = g_new0(Item, 1);
  item->pad = pad;
  item->event = event;
  item->done = TRUE;
  g_queue_push_tail(&pad->out, item);
  g_cond_broadcast(&self->changed);
  g_mutex_unlock(&self->lock);
  return TRUE;
}

static gboolean gst_npu_infer_sink_query(GstPad *sinkpad, GstObject *parent, GstQuery *query)
{
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(sinkpad);
  if (GST_QUERY_IS_SERIALIZED(query)) { /* answered after this pad's queued frames */
    g_mutex_lock(&self->lock);
    while (!pad->flushing && !pad->src_flushing && !g_queue_is_empty(&pad->out))
      g_cond_wait(&self->changed, &self->lock);
    g_mutex_unlock(&self->lock);
  }
  if (GST_QUERY_TYPE(query) != GST_QUERY_ALLOCATION)
    return gst_pad_query_default(sinkpad, parent, query);
  if (!gst_pad_query_default(sinkpad, parent, query))
    return FALSE;
  /* Frames stay with us while they wait: upstream pools need that many more. */
  GST_OBJECT_LOCK(self);
  guint held = self->max_inflight * batch_limit(self) + 1;
  GST_OBJECT_UNLOCK(self);
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
    g_mutex_lock(&self->lock);
    if (!GST_CLOCK_TIME_IS_VALID(timestamp))
      pad->earliest = GST_CLOCK_TIME_NONE;
    else if (diff >= 0 || timestamp >= (GstClockTime)-diff)
      pad->earliest = (GstClockTime)((GstClockTimeDiff)timestamp + diff);
    else
      pad->earliest = 0;
    g_mutex_unlock(&self->lock);
  }
  return gst_pad_event_default(srcpad, parent, event);
}

static gboolean gst_npu_infer_src_query(GstPad *srcpad, GstObject *parent, GstQuery *query)
{
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(srcpad);
  if (GST_QUERY_TYPE(query) != GST_QUERY_LATENCY)
    return gst_pad_query_default(srcpad, parent, query);
  if (!gst_pad_peer_query(pad->sink, query))
    return FALSE;
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency(query, &live, &min, &max);
  /* a frame waits up to batch-timeout, then a batch runs for its measured time */
  g_mutex_lock(&self->lock);
  gint64 run = self->batches ? self->run_sum / (gint64)self->batches : 0;
  g_mutex_unlock(&self->lock);
  GST_OBJECT_LOCK(self);
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
  g_mutex_lock(&self->lock);
  pad->flushing = !active; /* a blocked chain call returns */
  if (active)
    pad->last_flow = GST_FLOW_OK;
  g_cond_broadcast(&self->changed);
  g_mutex_unlock(&self->lock);
  return TRUE;
}

static gboolean gst_npu_infer_src_activate_mode(GstPad *srcpad, GstObject *parent,
                                                GstPadMode mode, gboolean active)
{
  (void)mode;
  GstNpuInfer *self = GST_NPU_INFER(parent);
  InferPad *pad = gst_pad_get_element_private(srcpad);
  g_mutex_lock(&self->lock);
  pad->src_flushing = !active;
  if (!active)
    pad->flushing = TRUE; /* until the sink pad is activated again */
  if (active)
    pad->last_flow = GST_FLOW_OK;
  g_cond_broadcast(&self->changed);
  g_mutex_unlock(&self->lock);
  if (active)
    return gst_pad_start_task(srcpad, src_loop, pad, NULL);
  gboolean ok = gst_pad_stop_task(srcpad);
  g_mutex_lock(&self->lock);
  drop_pad_items(self, pad);
  g_mutex_unlock(&self->lock);
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

/* ---- request pads ---------------------------------------------------------------------- */

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
  g_mutex_lock(&self->lock);
  guint index = self->next_index;
  if (name && sscanf(name, "sink_%u", &index) == 1) {
    for (guint i = 0; i < self->pads->len; i++)
      if (((InferPad *)g_ptr_array_index(self->pads, i))->index == index) {
        g_mutex_unlock(&self->lock);
        GST_WARNING_OBJECT(self, "pad sink_%u exists already", index);
        return NULL;
      }
  }
  self->next_index = MAX(self->next_index, index + 1);
  InferPad *pad = g_new0(InferPad, 1);
  pad->index = index;
  pad->flushing = pad->src_flushing = TRUE;
  pad->earliest = GST_CLOCK_TIME_NONE;
  gst_segment_init(&pad->segment, GST_FORMAT_TIME);
  g_queue_init(&pad->out);
  gchar *sink_name = g_strdup_printf("sink_%u", index), *src_name = g_strdup_printf("src_%u", index);
  pad->sink = gst_pad_new_from_template(templ, sink_name);
  pad->src = gst_pad_new_from_static_template(&src_template, src_name);
  g_free(sink_name);
  g_free(src_name);
  g_ptr_array_add(self->pads, pad);
  g_mutex_unlock(&self->lock);

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
  gst_pad_set_active(pad->src, FALSE); /* stops the task, drops what is queued */
  g_mutex_lock(&self->lock);
  drop_pad_items(self, pad);
  g_ptr_array_remove(self->pads, pad);
  g_mutex_unlock(&self->lock);
  release_pad_runtime(pad);
  gst_element_remove_pad(element, pad->src);
  gst_element_remove_pad(element, pad->sink);
  g_free(pad);
}

/* ---- element ------------------------------------------------------------------------- */

static void stop_thread(GstNpuInfer *self)
{
  g_mutex_lock(&self->lock);
  self->stopping = TRUE;
  g_cond_broadcast(&self->changed);
  g_mutex_unlock(&self->lock);
  if (self->thread)
    g_thread_join(self->thread);
  self->thread = NULL;
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
    self->stopping = FALSE;
    self->failed = FALSE;
    self->last_stats = g_get_monotonic_time();
    self->thread = g_thread_new("npuinfer-batch", batch_thread, self);
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
    g_mutex_lock(&self->lock);
    for (guint i = 0; i < self->pads->len; i++) {
      InferPad *pad = g_ptr_array_index(self->pads, i);
      pad->frames = pad->inferences = pad->qos_skipped = 0;
      pad->earliest = GST_CLOCK_TIME_NONE;
      pad->latency_sum = pad->latency_max = 0;
    }
    g_mutex_unlock(&self->lock);
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

static void gst_npu_infer_set_property(GObject *object, guint id, const GValue *value,
                                       GParamSpec *pspec)
{
  GstNpuInfer *self = GST_NPU_INFER(object);
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
  case PROP_PRINT_RESULTS:
    self->print_results = g_value_get_boolean(value);
    break;
  case PROP_STATS_INTERVAL:
    self->stats_interval = g_value_get_uint(value);
    break;
  case PROP_MODE:
    self->mode = g_value_get_enum(value);
    break;
  case PROP_ROI_LABELS: {
    g_free(self->roi_labels);
    self->roi_labels = g_value_dup_string(value);
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
    break;
  }
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
  /* a waiting batch may be due under the new timeout or size */
  if (id == PROP_BATCH_TIMEOUT || id == PROP_MAX_INFLIGHT) {
    g_mutex_lock(&self->lock);
    g_cond_broadcast(&self->changed);
    g_mutex_unlock(&self->lock);
  }
}

static void gst_npu_infer_get_property(GObject *object, guint id, GValue *value,
                                       GParamSpec *pspec)
{
  GstNpuInfer *self = GST_NPU_INFER(object);
  if (id == PROP_STATS) {
    g_mutex_lock(&self->lock);
    g_value_take_boxed(value, stats_locked(self));
    g_mutex_unlock(&self->lock);
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
  case PROP_PRINT_RESULTS:
    g_value_set_boolean(value, self->print_results);
    break;
  case PROP_STATS_INTERVAL:
    g_value_set_uint(value, self->stats_interval);
    break;
  case PROP_MODE:
    g_value_set_enum(value, self->mode);
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
  for (guint i = 0; i < self->pads->len; i++) {
    InferPad *pad = g_ptr_array_index(self->pads, i);
    g_queue_clear_full(&pad->out, (GDestroyNotify)item_free);
    g_free(pad);
  }
  g_ptr_array_free(self->pads, TRUE);
  g_queue_clear_full(&self->waiting, g_free);
  g_free(self->model_path);
  g_free(self->config_path);
  g_free(self->refused_mean);
  g_free(self->refused_std);
  g_free(self->roi_labels);
  g_array_unref(self->roi_quarks);
  g_mutex_clear(&self->lock);
  g_cond_clear(&self->changed);
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
                          "dynamic or fixed; H and W fixed, or open: see input-width)", NULL,
                          ready));
  g_object_class_install_property(object_class, PROP_CONFIG,
      g_param_spec_string("config", "Config",
                          "JSON file of property values applied when the element opens, e.g. "
                          "{\"model\": \"det.onnx\", \"mean\": [0.485, 0.456, 0.406], "
                          "\"batch-size\": 4, \"mode\": \"roi\"} (arrays for mean/std, enum "
                          "nicks as strings)", NULL, ready));
  g_object_class_install_property(object_class, PROP_DEVICE_ID,
      g_param_spec_int("device-id", "Device ID",
                       "Runtime device index (-1: NPU_BACKEND/NPU_DEVICE, else the default)", -1,
                       G_MAXINT, -1, ready));
  g_object_class_install_property(object_class, PROP_BATCH_SIZE,
      g_param_spec_uint("batch-size", "Batch size",
                        "Most frames (from any pads) per execution of the model (a model with "
                        "a fixed batch axis takes at most that many)", 1, MAX_BATCH, 1, ready));
  g_object_class_install_property(object_class, PROP_BATCH_TIMEOUT,
      g_param_spec_uint64("batch-timeout", "Batch timeout",
                          "Microseconds a frame may wait for its batch to fill (0: run with "
                          "whatever is waiting)", 0, G_MAXINT64 / 1000, 0, playing));
  g_object_class_install_property(object_class, PROP_MAX_INFLIGHT,
      g_param_spec_uint("max-inflight", "Max in flight",
                        "Batches of frames waiting for inference, and per pad waiting to be "
                        "pushed, before chain functions block (back-pressure)", 1, 64, 2,
                        playing));
  g_object_class_install_property(object_class, PROP_INTERVAL,
      g_param_spec_uint("interval", "Interval",
                        "Infer every Nth frame of each pad; the others pass without results", 1,
                        G_MAXUINT, 1, playing));
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
                        GST_TYPE_NPU_INFER_CHANNEL_ORDER, ORDER_RGB, ready));
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
                        GST_TYPE_NPU_INFER_MODE, MODE_FRAME, ready));
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
  g_object_class_install_property(object_class, PROP_STATS,
      g_param_spec_boxed("stats", "Statistics",
                         "Batches run, frames (roi mode: ROIs) inferred, mean batch size, "
                         "mean/max run time; per pad (a sink_N structure): frames, inferences "
                         "(roi mode: one per ROI), mean/max latency "
                         "in microseconds, frames not inferred because late (QoS)", GST_TYPE_STRUCTURE,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

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
  gst_type_mark_as_plugin_api(GST_TYPE_NPU_INFER_CHANNEL_ORDER, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_NPU_INFER_MODE, 0);
  GST_DEBUG_CATEGORY_INIT(gst_npu_infer_debug, "npuinfer", 0, "NPU inference");
}

static void gst_npu_infer_init(GstNpuInfer *self)
{
  self->device_id = -1;
  self->batch_size = 1;
  self->max_inflight = 2;
  self->interval = 1;
  self->scale = 1.0 / 255.0;
  self->size_multiple = 32;
  self->max_input_size = 2048;
  for (int c = 0; c < 3; c++)
    self->std[c] = 1.0f;
  g_mutex_init(&self->lock);
  g_cond_init(&self->changed);
  g_queue_init(&self->waiting);
  self->pads = g_ptr_array_new();
  self->roi_labels = g_strdup("");
  self->roi_quarks = g_array_new(FALSE, FALSE, sizeof(GQuark));
}
