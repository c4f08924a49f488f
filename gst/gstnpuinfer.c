/**
 * SECTION:element-npuinfer
 *
 * Runs an ONNX model on video frames from any number of streams with one
 * loaded model. Each `sink_%u` request pad comes with its own `src_%u`; the
 * frames of all pads are batched into one execution (up to `batch-size`,
 * waiting at most `batch-timeout` for a batch to fill), pre-processed in one
 * VPP pass (scale, colour, normalise, layout) straight into the model's input
 * and the outputs attached to each frame as a GstNpuTensorMeta. The frames
 * themselves pass through untouched.
 *
 * |[
 * gst-launch-1.0 videotestsrc ! npuinfer name=infer model=model.onnx batch-size=2 \
 *     batch-timeout=20000 print-results=true ! fakesink \
 *   videotestsrc pattern=ball ! infer.sink_1  infer.src_1 ! fakesink
 * ]|
 */
#include "gstnpuinfer.h"

#include <gst/video/video.h>
#include <npu/npu.h>
#include <stdio.h>
#include <string.h>

#include "gst/npu/npu-tensor-meta.h"
#include "gstnpubasetransform.h"
#include "gstnpumemory.h"
#include "gstnpuvideo.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_infer_debug);
#define GST_CAT_DEFAULT gst_npu_infer_debug

#define MAX_BATCH 64

/* A sink/src pair. */
typedef struct {
  GstPad *sink, *src;
  guint index;
  GstVideoInfo info;
  gboolean have_info;
  gboolean flushing;
  guint64 frames, inferences;
} InferPad;

/* A frame waiting in a chain call for its batch. */
typedef struct {
  InferPad *pad;
  GstBuffer *buffer;
  gint64 queued_at; /* monotonic us */
  gboolean taken, done;
  GstFlowReturn flow;
} Pending;

typedef enum { ORDER_RGB, ORDER_BGR } ChannelOrder;

struct _GstNpuInfer {
  GstElement parent;
  /* properties (under the object lock) */
  gchar *model_path;
  gint device_id;
  guint batch_size;
  guint64 batch_timeout;
  guint interval;
  gfloat mean[3], std[3];
  ChannelOrder order;
  gboolean letterbox;
  gboolean print_results;
  /* the runtime, from READY on */
  npu_device *device;
  npu_model *model;
  npu_stream *stream;
  npu_tensor_info input;        /* N x C x H x W as the model declares it */
  npu_context *contexts[MAX_BATCH + 1]; /* by frames per execution */
  npu_buffer *input_buffers[MAX_BATCH + 1];
  npu_buffer **output_buffers[MAX_BATCH + 1];
  uint32_t output_count;
  /* batching */
  GMutex lock;
  GCond changed;
  GQueue queue;      /* Pending*, oldest first */
  gboolean leading;  /* a chain call is running a batch */
  GPtrArray *pads;   /* InferPad* */
  guint next_index;
  guint64 batches, batched_frames;
};

G_DEFINE_TYPE(GstNpuInfer, gst_npu_infer, GST_TYPE_ELEMENT)
GST_ELEMENT_REGISTER_DEFINE(npuinfer, "npuinfer", GST_RANK_NONE, GST_TYPE_NPU_INFER)

enum {
  PROP_0,
  PROP_MODEL,
  PROP_DEVICE_ID,
  PROP_BATCH_SIZE,
  PROP_BATCH_TIMEOUT,
  PROP_INTERVAL,
  PROP_MEAN,
  PROP_STD,
  PROP_CHANNEL_ORDER,
  PROP_LETTERBOX,
  PROP_PRINT_RESULTS,
  PROP_STATS,
};

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

/* ---- the model ----------------------------------------------------------------------- */

static void release_runtime(GstNpuInfer *self)
{
  for (guint n = 0; n <= MAX_BATCH; n++) {
    if (self->contexts[n])
      npu_context_destroy(self->contexts[n]);
    if (self->input_buffers[n])
      npu_buffer_release(self->input_buffers[n]);
    for (uint32_t o = 0; self->output_buffers[n] && o < self->output_count; o++)
      if (self->output_buffers[n][o])
        npu_buffer_release(self->output_buffers[n][o]);
    g_free(self->output_buffers[n]);
    self->contexts[n] = NULL;
    self->input_buffers[n] = NULL;
    self->output_buffers[n] = NULL;
  }
  if (self->stream)
    npu_stream_destroy(self->stream);
  if (self->model)
    npu_model_release(self->model);
  if (self->device)
    npu_device_release(self->device);
  self->stream = NULL;
  self->model = NULL;
  self->device = NULL;
}

/* Opens the device and loads the model; posts an element error when it cannot. */
static gboolean open_runtime(GstNpuInfer *self)
{
  GST_OBJECT_LOCK(self);
  gchar *path = g_strdup(self->model_path);
  gint device_id = self->device_id;
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
  if (status != NPU_OK) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Cannot open NPU device %d", device_id),
                      ("%s", npu_last_error_message()));
    g_free(path);
    return FALSE;
  }
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
  gboolean image = inputs == 1 && self->input.dtype == NPU_DTYPE_FLOAT32 &&
                   self->input.rank == 4 && self->input.dims[1] == 3 &&
                   self->input.dims[2] > 0 && self->input.dims[3] > 0;
  if (!image) {
    GST_ELEMENT_ERROR(self, STREAM, WRONG_TYPE, ("The model does not take images"),
                      ("'%s' must have one float32 input of N x 3 x H x W (fixed H and W); "
                       "it has %u input(s), the first of rank %u", path, inputs,
                       self->input.rank));
    g_free(path);
    return FALSE;
  }
  GST_INFO_OBJECT(self, "model %s: input %s %" G_GINT64_FORMAT "x3x%" G_GINT64_FORMAT
                  "x%" G_GINT64_FORMAT, path, self->input.name, self->input.dims[0],
                  self->input.dims[2], self->input.dims[3]);
  g_free(path);
  return TRUE;
}

/* The plan for `count` frames: one context per batch size actually used
 * when the batch axis is open, else the model's own batch. */
static guint plan_frames(GstNpuInfer *self, guint count)
{
  return self->input.dims[0] > 0 ? (guint)self->input.dims[0] : count;
}

static gboolean ensure_plan(GstNpuInfer *self, guint frames)
{
  if (self->contexts[frames])
    return TRUE;
  npu_tensor_info shape = self->input;
  shape.dims[0] = frames;
  npu_status status = npu_context_create(self->model, self->device, &shape, 1,
                                         &self->contexts[frames]);
  npu_tensor_info info;
  size_t bytes = 4;
  for (uint32_t d = 0; d < 4; d++)
    bytes *= (size_t)shape.dims[d];
  if (status == NPU_OK)
    status = npu_buffer_alloc(self->device, bytes, &self->input_buffers[frames]);
  self->output_buffers[frames] = g_new0(npu_buffer *, self->output_count + 1);
  for (uint32_t o = 0; o < self->output_count && status == NPU_OK; o++) {
    npu_context_output_info(self->contexts[frames], o, &info);
    size_t size = npu_dtype_size(info.dtype);
    for (uint32_t d = 0; d < info.rank; d++)
      size *= (size_t)info.dims[d];
    status = npu_buffer_alloc(self->device, size ? size : 1, &self->output_buffers[frames][o]);
  }
  if (status != NPU_OK) {
    GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Cannot plan the model for %u frames", frames),
                      ("%s", npu_last_error_message()));
    return FALSE;
  }
  return TRUE;
}

/* ---- one batch ----------------------------------------------------------------------- */

/* The frame as a VPP image: NPU memory of our device as it is, other memory
 * imported without copying (*imported keeps it until the batch is done). */
static gboolean frame_image(GstNpuInfer *self, InferPad *pad, GstBuffer *buffer, GstMapInfo *map,
                            gboolean *mapped, npu_buffer **imported, npu_image *image)
{
  GstMemory *mem = gst_buffer_n_memory(buffer) == 1 ? gst_buffer_peek_memory(buffer, 0) : NULL;
  const GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
  if (mem && gst_is_npu_memory(mem) && gst_npu_buffer_is_on_device(buffer, self->device)) {
    gst_npu_memory_sync_for_device(mem, self->stream);
    return gst_npu_image_describe(&pad->info, meta, gst_npu_memory_get_buffer(mem), mem->offset,
                                  image);
  }
  if (!(*mapped = gst_buffer_map(buffer, map, GST_MAP_READ)))
    return FALSE;
  if (map->size < GST_VIDEO_INFO_SIZE(&pad->info) && !meta) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Truncated frame on %s", GST_PAD_NAME(pad->sink)),
                      ("%" G_GSIZE_FORMAT " bytes, the caps need %" G_GSIZE_FORMAT, map->size,
                       GST_VIDEO_INFO_SIZE(&pad->info)));
    return FALSE;
  }
  if (npu_buffer_import_host(self->device, map->data, map->size, NULL, NULL, imported) != NPU_OK)
    return FALSE;
  return gst_npu_image_describe(&pad->info, meta, *imported, 0, image);
}

/* This frame's slice of each output, as a tensor meta. */
static void attach_outputs(GstNpuInfer *self, Pending *p, guint slot, guint frames,
                           guint count, void *const *host, const npu_tensor_info *infos)
{
  p->buffer = gst_buffer_make_writable(p->buffer);
  GstNpuTensorMeta *meta = gst_buffer_add_npu_tensor_meta(p->buffer, self->output_count);
  meta->batch_index = slot;
  meta->batch_size = count;
  meta->pad_index = p->pad->index;
  for (uint32_t o = 0; o < self->output_count; o++) {
    const npu_tensor_info *info = &infos[o];
    GstNpuTensor *t = &meta->tensors[o];
    size_t total = npu_dtype_size(info->dtype);
    for (uint32_t d = 0; d < info->rank; d++)
      total *= (size_t)info->dims[d];
    /* batch-major outputs split by frame; others go whole to every frame */
    gboolean batched = info->rank > 0 && info->dims[0] == (int64_t)frames;
    size_t size = batched ? total / frames : total;
    t->name = g_strdup(info->name);
    t->dtype = info->dtype;
    t->rank = info->rank;
    memcpy(t->dims, info->dims, sizeof t->dims);
    if (batched)
      t->dims[0] = 1;
    t->data = g_bytes_new((const guint8 *)host[o] + (batched ? slot * size : 0), size);
  }
  if (self->print_results) {
    const GstNpuTensor *t = &meta->tensors[0];
    gsize size;
    const float *v = g_bytes_get_data(t->data, &size);
    GString *line = g_string_new(NULL);
    for (gsize i = 0; t->dtype == NPU_DTYPE_FLOAT32 && i < size / 4 && i < 8; i++)
      g_string_append_printf(line, " %.4g", v[i]);
    g_print("npuinfer %s pts %" GST_TIME_FORMAT " batch %u/%u %s:%s\n",
            GST_PAD_NAME(p->pad->sink), GST_TIME_ARGS(GST_BUFFER_PTS(p->buffer)), slot + 1,
            count, t->name, line->str);
    g_string_free(line, TRUE);
  }
}

/* Pre-processes `count` frames into one input, runs the model, attaches the
 * results; called by one chain call at a time, without the lock. */
static GstFlowReturn run_batch(GstNpuInfer *self, Pending **batch, guint count)
{
  guint frames = plan_frames(self, count);
  if (frames > MAX_BATCH || !ensure_plan(self, frames))
    return GST_FLOW_ERROR;
  GST_OBJECT_LOCK(self);
  npu_tensor_target target = {
      .buffer = self->input_buffers[frames], .width = (uint32_t)self->input.dims[3],
      .height = (uint32_t)self->input.dims[2], .batch = frames, .dtype = NPU_TENSOR_FLOAT32,
      .layout = NPU_LAYOUT_NCHW, .order = self->order == ORDER_BGR ? NPU_ORDER_BGR : NPU_ORDER_RGB};
  for (int c = 0; c < 3; c++) { /* properties are in 0..1 units, pixels in 0..255 */
    target.mean[c] = self->mean[c] * 255.0f;
    target.scale[c] = 1.0f / (self->std[c] * 255.0f);
  }
  npu_vpp_params params = {.method = NPU_SCALE_BILINEAR, .letterbox = self->letterbox,
                           .pad_rgb = {114, 114, 114}};
  GST_OBJECT_UNLOCK(self);

  npu_vpp_job jobs[MAX_BATCH];
  npu_image images[MAX_BATCH];
  npu_buffer *imported[MAX_BATCH] = {NULL};
  GstMapInfo maps[MAX_BATCH];
  gboolean mapped[MAX_BATCH] = {FALSE};
  GstFlowReturn flow = GST_FLOW_OK;
  for (guint i = 0; i < count && flow == GST_FLOW_OK; i++) {
    if (!frame_image(self, batch[i]->pad, batch[i]->buffer, &maps[i], &mapped[i], &imported[i],
                     &images[i]))
      flow = GST_FLOW_ERROR;
    jobs[i] = (npu_vpp_job){.src = &images[i], .slot = i};
  }
  npu_status status = NPU_OK;
  if (flow == GST_FLOW_OK)
    status = npu_vpp_to_tensor(self->stream, jobs, count, &params, &target);
  if (flow == GST_FLOW_OK && status == NPU_OK)
    status = npu_context_run(self->contexts[frames], self->stream, &self->input_buffers[frames],
                             self->output_buffers[frames]);
  if (flow == GST_FLOW_OK && status == NPU_OK)
    status = npu_stream_synchronize(self->stream);
  if (flow == GST_FLOW_OK && status != NPU_OK) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Inference failed"), ("%s", npu_last_error_message()));
    flow = GST_FLOW_ERROR;
  }
  for (guint i = 0; i < count; i++) {
    if (imported[i])
      npu_buffer_release(imported[i]);
    if (mapped[i])
      gst_buffer_unmap(batch[i]->buffer, &maps[i]);
  }
  if (flow != GST_FLOW_OK)
    return flow;

  void *host[16];
  npu_tensor_info infos[16];
  for (uint32_t o = 0; o < self->output_count && o < 16 && status == NPU_OK; o++) {
    npu_context_output_info(self->contexts[frames], o, &infos[o]);
    status = npu_buffer_map(self->output_buffers[frames][o], NPU_MAP_READ, &host[o]);
  }
  if (status != NPU_OK || self->output_count > 16) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Cannot read the model's outputs"),
                      ("%s", npu_last_error_message()));
    return GST_FLOW_ERROR;
  }
  for (guint i = 0; i < count; i++)
    attach_outputs(self, batch[i], i, frames, count, host, infos);
  for (uint32_t o = 0; o < self->output_count; o++)
    npu_buffer_unmap(self->output_buffers[frames][o]);
  return GST_FLOW_OK;
}

/* ---- batching across pads ------------------------------------------------------------- */

/* Under the lock: whether the waiting frames should run now. */
static gboolean batch_due(GstNpuInfer *self, gint64 now)
{
  if (self->leading || g_queue_is_empty(&self->queue))
    return FALSE;
  const Pending *oldest = g_queue_peek_head(&self->queue);
  return g_queue_get_length(&self->queue) >= self->batch_size || self->batch_timeout == 0 ||
         now >= oldest->queued_at + (gint64)self->batch_timeout;
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
  GST_OBJECT_UNLOCK(self);
  if (pad->frames++ % interval != 0) /* not this frame: it passes without results */
    return gst_pad_push(pad->src, buffer);

  Pending p = {pad, buffer, g_get_monotonic_time(), FALSE, FALSE, GST_FLOW_OK};
  g_mutex_lock(&self->lock);
  g_queue_push_tail(&self->queue, &p);
  g_cond_broadcast(&self->changed);
  while (!p.done) {
    if (pad->flushing && !p.taken) {
      g_queue_remove(&self->queue, &p);
      p.flow = GST_FLOW_FLUSHING;
      break;
    }
    if (batch_due(self, g_get_monotonic_time())) {
      Pending *batch[MAX_BATCH];
      guint count = 0;
      while (count < self->batch_size && !g_queue_is_empty(&self->queue)) {
        batch[count] = g_queue_pop_head(&self->queue);
        batch[count++]->taken = TRUE;
      }
      self->leading = TRUE;
      g_mutex_unlock(&self->lock);
      GstFlowReturn flow = run_batch(self, batch, count);
      g_mutex_lock(&self->lock);
      self->leading = FALSE;
      self->batches++;
      self->batched_frames += count;
      for (guint i = 0; i < count; i++) {
        batch[i]->flow = flow;
        batch[i]->done = TRUE;
        batch[i]->pad->inferences += flow == GST_FLOW_OK;
      }
      g_cond_broadcast(&self->changed);
      continue;
    }
    const Pending *oldest = g_queue_peek_head(&self->queue);
    if (!self->leading && oldest && self->batch_timeout > 0)
      g_cond_wait_until(&self->changed, &self->lock,
                        oldest->queued_at + (gint64)self->batch_timeout);
    else
      g_cond_wait(&self->changed, &self->lock);
  }
  g_mutex_unlock(&self->lock);
  if (p.flow != GST_FLOW_OK) {
    gst_buffer_unref(p.buffer);
    return p.flow;
  }
  return gst_pad_push(pad->src, p.buffer);
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
    if (!gst_video_info_from_caps(&info, caps) || !gst_npu_format_of(GST_VIDEO_INFO_FORMAT(&info))) {
      GST_WARNING_OBJECT(sinkpad, "caps the VPP cannot read: %" GST_PTR_FORMAT, caps);
      gst_event_unref(event);
      return FALSE;
    }
    pad->info = info;
    pad->have_info = TRUE;
    break;
  }
  case GST_EVENT_FLUSH_START:
    g_mutex_lock(&self->lock);
    pad->flushing = TRUE;
    g_cond_broadcast(&self->changed);
    g_mutex_unlock(&self->lock);
    break;
  case GST_EVENT_FLUSH_STOP:
    g_mutex_lock(&self->lock);
    pad->flushing = FALSE;
    g_mutex_unlock(&self->lock);
    break;
  default:
    break;
  }
  /* Serialized events follow this pad's frames: its chain call returns only
   * once its frame is pushed. */
  return gst_pad_push_event(pad->src, event);
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

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink_%u", GST_PAD_SINK, GST_PAD_REQUEST,
    GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_NPU,
                                                      "{ NV12, NV21, I420, YV12, YUY2, UYVY, RGB, "
                                                      "BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, "
                                                      "GRAY8 }") ";"
                    GST_VIDEO_CAPS_MAKE("{ NV12, NV21, I420, YV12, YUY2, UYVY, RGB, BGR, RGBx, "
                                        "BGRx, xRGB, xBGR, RGBA, BGRA, GRAY8 }")));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src_%u", GST_PAD_SRC, GST_PAD_SOMETIMES,
    GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_NPU,
                                                      "{ NV12, NV21, I420, YV12, YUY2, UYVY, RGB, "
                                                      "BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, "
                                                      "GRAY8 }") ";"
                    GST_VIDEO_CAPS_MAKE("{ NV12, NV21, I420, YV12, YUY2, UYVY, RGB, BGR, RGBx, "
                                        "BGRx, xRGB, xBGR, RGBA, BGRA, GRAY8 }")));

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
        return NULL;
      }
  }
  self->next_index = MAX(self->next_index, index + 1);
  InferPad *pad = g_new0(InferPad, 1);
  pad->index = index;
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
  gst_pad_set_iterate_internal_links_function(pad->sink, gst_npu_infer_internal_links);
  gst_pad_set_iterate_internal_links_function(pad->src, gst_npu_infer_internal_links);
  GST_PAD_SET_PROXY_CAPS(pad->sink);
  GST_PAD_SET_PROXY_ALLOCATION(pad->sink);
  GST_PAD_SET_PROXY_CAPS(pad->src);
  if (GST_STATE(element) > GST_STATE_READY || GST_STATE_TARGET(element) > GST_STATE_READY) {
    gst_pad_set_active(pad->src, TRUE);
    gst_pad_set_active(pad->sink, TRUE);
  }
  gst_element_add_pad(element, pad->src);
  gst_element_add_pad(element, pad->sink);
  return pad->sink;
}

static void gst_npu_infer_release_pad(GstElement *element, GstPad *sinkpad)
{
  GstNpuInfer *self = GST_NPU_INFER(element);
  InferPad *pad = gst_pad_get_element_private(sinkpad);
  g_mutex_lock(&self->lock);
  pad->flushing = TRUE; /* a chain call still waiting gives its frame up */
  g_cond_broadcast(&self->changed);
  g_mutex_unlock(&self->lock);
  gst_pad_set_active(pad->sink, FALSE); /* waits for the chain call to return */
  gst_pad_set_active(pad->src, FALSE);
  g_mutex_lock(&self->lock);
  g_ptr_array_remove(self->pads, pad);
  g_mutex_unlock(&self->lock);
  gst_element_remove_pad(element, pad->src);
  gst_element_remove_pad(element, pad->sink);
  g_free(pad);
}

/* ---- element ------------------------------------------------------------------------- */

static void set_flushing(GstNpuInfer *self, gboolean flushing)
{
  g_mutex_lock(&self->lock);
  for (guint i = 0; i < self->pads->len; i++)
    ((InferPad *)g_ptr_array_index(self->pads, i))->flushing = flushing;
  g_cond_broadcast(&self->changed);
  g_mutex_unlock(&self->lock);
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
    set_flushing(self, FALSE);
    break;
  case GST_STATE_CHANGE_PAUSED_TO_READY:
    set_flushing(self, TRUE); /* waiting chain calls return before the pads deactivate */
    break;
  default:
    break;
  }
  GstStateChangeReturn result =
      GST_ELEMENT_CLASS(gst_npu_infer_parent_class)->change_state(element, transition);
  if (transition == GST_STATE_CHANGE_READY_TO_NULL)
    release_runtime(self);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    g_mutex_lock(&self->lock);
    for (guint i = 0; i < self->pads->len; i++) {
      InferPad *pad = g_ptr_array_index(self->pads, i);
      pad->frames = 0;
    }
    g_mutex_unlock(&self->lock);
  }
  return result;
}

static GstStructure *stats_of(GstNpuInfer *self)
{
  g_mutex_lock(&self->lock);
  GstStructure *s = gst_structure_new("npuinfer-stats", "batches", G_TYPE_UINT64, self->batches,
                                      "frames-inferred", G_TYPE_UINT64, self->batched_frames,
                                      "mean-batch", G_TYPE_DOUBLE,
                                      self->batches ? (double)self->batched_frames /
                                                          (double)self->batches
                                                    : 0.0,
                                      NULL);
  for (guint i = 0; i < self->pads->len; i++) {
    InferPad *pad = g_ptr_array_index(self->pads, i);
    gchar *frames = g_strdup_printf("sink-%u-frames", pad->index);
    gchar *inferred = g_strdup_printf("sink-%u-inferences", pad->index);
    gst_structure_set(s, frames, G_TYPE_UINT64, pad->frames, inferred, G_TYPE_UINT64,
                      pad->inferences, NULL);
    g_free(frames);
    g_free(inferred);
  }
  g_mutex_unlock(&self->lock);
  return s;
}

/* "0.485,0.456,0.406" or one value for all three channels. */
static void parse_triple(const gchar *text, gfloat *values, gfloat fallback)
{
  gchar **parts = g_strsplit(text ? text : "", ",", 3);
  guint n = g_strv_length(parts);
  for (guint c = 0; c < 3; c++)
    values[c] = n == 0 ? fallback : (gfloat)g_ascii_strtod(parts[n == 1 ? 0 : MIN(c, n - 1)], NULL);
  g_strfreev(parts);
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
  case PROP_DEVICE_ID:
    self->device_id = g_value_get_int(value);
    break;
  case PROP_BATCH_SIZE:
    self->batch_size = g_value_get_uint(value);
    break;
  case PROP_BATCH_TIMEOUT:
    self->batch_timeout = g_value_get_uint64(value);
    break;
  case PROP_INTERVAL:
    self->interval = g_value_get_uint(value);
    break;
  case PROP_MEAN:
    parse_triple(g_value_get_string(value), self->mean, 0.0f);
    break;
  case PROP_STD:
    parse_triple(g_value_get_string(value), self->std, 1.0f);
    for (int c = 0; c < 3; c++)
      self->std[c] = self->std[c] > 0 ? self->std[c] : 1.0f;
    break;
  case PROP_CHANNEL_ORDER:
    self->order = g_value_get_enum(value);
    break;
  case PROP_LETTERBOX:
    self->letterbox = g_value_get_boolean(value);
    break;
  case PROP_PRINT_RESULTS:
    self->print_results = g_value_get_boolean(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_npu_infer_get_property(GObject *object, guint id, GValue *value,
                                       GParamSpec *pspec)
{
  GstNpuInfer *self = GST_NPU_INFER(object);
  if (id == PROP_STATS) {
    g_value_take_boxed(value, stats_of(self));
    return;
  }
  GST_OBJECT_LOCK(self);
  switch (id) {
  case PROP_MODEL:
    g_value_set_string(value, self->model_path);
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
  case PROP_INTERVAL:
    g_value_set_uint(value, self->interval);
    break;
  case PROP_MEAN:
  case PROP_STD: {
    const gfloat *v = id == PROP_MEAN ? self->mean : self->std;
    g_value_take_string(value, g_strdup_printf("%g,%g,%g", v[0], v[1], v[2]));
    break;
  }
  case PROP_CHANNEL_ORDER:
    g_value_set_enum(value, self->order);
    break;
  case PROP_LETTERBOX:
    g_value_set_boolean(value, self->letterbox);
    break;
  case PROP_PRINT_RESULTS:
    g_value_set_boolean(value, self->print_results);
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
  release_runtime(self);
  for (guint i = 0; i < self->pads->len; i++)
    g_free(g_ptr_array_index(self->pads, i));
  g_ptr_array_free(self->pads, TRUE);
  g_free(self->model_path);
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
      g_param_spec_string("model", "Model", "ONNX model file (one float32 N x 3 x H x W input)",
                          NULL, ready));
  g_object_class_install_property(object_class, PROP_DEVICE_ID,
      g_param_spec_int("device-id", "Device ID",
                       "Runtime device index (-1: NPU_BACKEND/NPU_DEVICE, else the default)", -1,
                       G_MAXINT, -1, ready));
  g_object_class_install_property(object_class, PROP_BATCH_SIZE,
      g_param_spec_uint("batch-size", "Batch size",
                        "Most frames (from any pads) per execution of the model", 1, MAX_BATCH,
                        1, ready));
  g_object_class_install_property(object_class, PROP_BATCH_TIMEOUT,
      g_param_spec_uint64("batch-timeout", "Batch timeout",
                          "Microseconds a frame may wait for its batch to fill (0: run with "
                          "whatever is waiting)", 0, G_MAXUINT64, 0, playing));
  g_object_class_install_property(object_class, PROP_INTERVAL,
      g_param_spec_uint("interval", "Interval",
                        "Infer every Nth frame of each pad; the others pass without results", 1,
                        G_MAXUINT, 1, playing));
  g_object_class_install_property(object_class, PROP_MEAN,
      g_param_spec_string("mean", "Mean",
                          "Per-channel mean subtracted, in 0..1 units, in the model's channel "
                          "order (\"r,g,b\", or one value)", "0,0,0", ready));
  g_object_class_install_property(object_class, PROP_STD,
      g_param_spec_string("std", "Standard deviation",
                          "Per-channel divisor after the mean, in 0..1 units (\"r,g,b\", or one "
                          "value)", "1,1,1", ready));
  g_object_class_install_property(object_class, PROP_CHANNEL_ORDER,
      g_param_spec_enum("channel-order", "Channel order", "Channel order the model expects",
                        GST_TYPE_NPU_INFER_CHANNEL_ORDER, ORDER_RGB, ready));
  g_object_class_install_property(object_class, PROP_LETTERBOX,
      g_param_spec_boolean("letterbox", "Letterbox",
                           "Keep the frame's aspect ratio, padding with grey (114)", FALSE,
                           ready));
  g_object_class_install_property(object_class, PROP_PRINT_RESULTS,
      g_param_spec_boolean("print-results", "Print results",
                           "Print each frame's first output values on stdout", FALSE, playing));
  g_object_class_install_property(object_class, PROP_STATS,
      g_param_spec_boxed("stats", "Statistics",
                         "Batches run, frames inferred, mean batch size, per-pad frames and "
                         "inferences", GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

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
  GST_DEBUG_CATEGORY_INIT(gst_npu_infer_debug, "npuinfer", 0, "NPU inference");
}

static void gst_npu_infer_init(GstNpuInfer *self)
{
  self->device_id = -1;
  self->batch_size = 1;
  self->interval = 1;
  for (int c = 0; c < 3; c++)
    self->std[c] = 1.0f;
  g_mutex_init(&self->lock);
  g_cond_init(&self->changed);
  g_queue_init(&self->queue);
  self->pads = g_ptr_array_new();
}
