/* npuinfer's runner (see gstnpuinferrunner.h). */
#include "gstnpuinferrunner.h"

#include <math.h>
#include <string.h>

#include "gstnpumemory.h"
#include "gstnpuvideo.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_infer_runner_debug);
#define GST_CAT_DEFAULT gst_npu_infer_runner_debug

struct _GstNpuInferModel {
  gchar *path;
  npu_device *device;
  npu_model *model;
  npu_tensor_info input; /* N x 3 x H x W as the model declares it */
  uint32_t output_count;
  GstNpuInferSettings settings;
  /* Made for the first batch (or at load), reshaped for others (it keeps
   * recent shapes planned); `shape` is the current one. */
  npu_context *context;
  npu_tensor_info shape;
};

/* A model input buffer; several, so that the next batch's pre-processing
 * writes one while the model reads another. */
typedef struct {
  npu_buffer *buffer;
  size_t bytes;
} InputBuffer;

struct _GstNpuInferRunner {
  npu_device *device;
  npu_stream *preprocessing; /* the VPP of every batch */
  npu_stream *stream; /* the model's runs and the completions */
  npu_mem_pool *pool; /* outputs */
  GstAllocator *allocator;
  GMutex lock; /* the free lists: batches finish on the stream's thread */
  GPtrArray *free_inputs; /* InputBuffer* */
  GPtrArray *free_events; /* npu_event* */
};

/* A frame read by a batch: its device image, and what keeps it readable. */
typedef struct {
  GstBuffer *buffer; /* the slot's (not referenced) */
  GstMapInfo map;
  gboolean mapped;
  npu_buffer *imported;
  npu_image image;
} BatchFrame;

struct _GstNpuInferBatch {
  GstNpuInferRunner *runner;
  BatchFrame frames[GST_NPU_INFER_MAX_BATCH];
  guint n_frames;
  InputBuffer *input;
  /* one per lane stream with work left on the frames, and one for the input */
  npu_event *events[GST_NPU_INFER_MAX_BATCH + 1];
  guint n_events;
  npu_tensor_info infos[GST_NPU_INFER_MAX_OUTPUTS];
  GstBuffer *outputs[GST_NPU_INFER_MAX_OUTPUTS];
  guint n_outputs;
  guint batch_frames;
  GstNpuInferDone done;
  gpointer done_data;
};

static void init_debug(void)
{
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    GST_DEBUG_CATEGORY_INIT(gst_npu_infer_runner_debug, "npuinferrunner", 0,
                            "npuinfer's models and device work");
    g_once_init_leave(&done, 1);
  }
}

/* Sets a runtime failure as *error: out of memory gets its own code. */
static void runtime_error(GError **error, npu_status status, const gchar *what)
{
  if (status == NPU_ERROR_OUT_OF_MEMORY)
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT,
                "Out of device memory: %s\n%s", what, npu_last_error_message());
  else
    g_set_error(error, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED, "%s\n%s: %s", what,
                npu_status_name(status), npu_last_error_message());
}

void gst_npu_infer_post_error(GstElement *element, const GError *error)
{
  const gchar *newline = strchr(error->message, '\n');
  gchar *text = newline ? g_strndup(error->message, (gsize)(newline - error->message))
                        : g_strdup(error->message);
  gchar *debug = newline ? g_strdup(newline + 1) : NULL;
  gst_element_message_full(element, GST_MESSAGE_ERROR, error->domain, error->code, text, debug,
                           __FILE__, GST_FUNCTION, __LINE__);
}

/* ---- the model ----------------------------------------------------------------------- */

/* The model ready for `frames` frames of width x height: the context made
 * for the first shape, reshaped for others. Reshaping waits for the pending
 * run: it is only asked when the shape changes. */
static gboolean ensure_shape(GstNpuInferModel *model, guint frames, guint width, guint height,
                             GError **error)
{
  npu_tensor_info shape = model->input;
  shape.dims[0] = frames;
  shape.dims[2] = height;
  shape.dims[3] = width;
  if (model->context && memcmp(shape.dims, model->shape.dims, sizeof shape.dims) == 0)
    return TRUE;
  GST_DEBUG("%s for %ux3x%ux%u", model->path, frames, height, width);
  npu_context_options options = {.precision = model->settings.precision};
  npu_status status = model->context
                          ? npu_context_reshape(model->context, &shape, 1)
                          : npu_context_create_with_options(model->model, model->device, &shape,
                                                            1, &options, &model->context);
  if (status != NPU_OK) {
    gchar *what = g_strdup_printf("Cannot plan the model for %u x 3 x %u x %u", frames, height,
                                  width);
    runtime_error(error, status, what);
    g_free(what);
    return FALSE;
  }
  model->shape = shape;
  return TRUE;
}

GstNpuInferModel *gst_npu_infer_model_load(npu_device *device, const gchar *path,
                                           const GstNpuInferSettings *settings, guint frames,
                                           GError **error)
{
  init_debug();
  if (!path || !*path) {
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
                "No model given\nset the 'model' property to an ONNX file");
    return NULL;
  }
  GstNpuInferModel *model = g_new0(GstNpuInferModel, 1);
  model->path = g_strdup(path);
  model->device = device;
  npu_device_retain(device);
  model->settings = *settings;
  npu_status status = npu_model_load_file(path, &model->model);
  if (status != NPU_OK) {
    gboolean unreadable = status == NPU_ERROR_NOT_FOUND || status == NPU_ERROR_IO;
    g_set_error(error, unreadable ? GST_RESOURCE_ERROR : GST_STREAM_ERROR,
                unreadable ? GST_RESOURCE_ERROR_NOT_FOUND : GST_STREAM_ERROR_DECODE,
                "Cannot %s the model '%s'\n%s", unreadable ? "read" : "load", path,
                npu_last_error_message());
    gst_npu_infer_model_free(model);
    return NULL;
  }
  uint32_t inputs = 0;
  npu_model_input_count(model->model, &inputs);
  npu_model_output_count(model->model, &model->output_count);
  npu_model_input_info(model->model, 0, &model->input);
  const npu_tensor_info *in = &model->input;
  gboolean image = inputs == 1 &&
                   (in->dtype == NPU_DTYPE_FLOAT32 || in->dtype == NPU_DTYPE_UINT8) &&
                   in->rank == 4 && in->dims[1] == 3 && in->dims[0] <= GST_NPU_INFER_MAX_BATCH;
  if (!image) {
    g_set_error(error, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE,
                "The model does not take images\n'%s' must have one float32 or uint8 input of "
                "N x 3 x H x W (N dynamic or at most %d); it has %u input(s), the first of "
                "rank %u", path, GST_NPU_INFER_MAX_BATCH, inputs, in->rank);
    gst_npu_infer_model_free(model);
    return NULL;
  }
  if (model->output_count == 0 || model->output_count > GST_NPU_INFER_MAX_OUTPUTS) {
    g_set_error(error, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE,
                "The model has %u outputs\n'%s': npuinfer takes models with 1 to %d outputs",
                model->output_count, path, GST_NPU_INFER_MAX_OUTPUTS);
    gst_npu_infer_model_free(model);
    return NULL;
  }
  GstNpuInputPolicy *sizes = &model->settings.sizes;
  sizes->model_height = in->dims[2];
  sizes->model_width = in->dims[3];
  GST_INFO("model %s: input %s %" G_GINT64_FORMAT "x3x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
           "%s", path, in->name, in->dims[0], in->dims[2], in->dims[3],
           gst_npu_input_policy_is_dynamic(sizes) ? " (open axes follow the content)" : "");
  /* Planned now (off the streaming threads) where the input size does not
   * depend on the content. */
  if (!gst_npu_input_policy_is_dynamic(sizes)) {
    guint width, height;
    gst_npu_input_size_for(sizes, 1, 1, &width, &height);
    guint batch = in->dims[0] > 0 ? (guint)in->dims[0] : MAX(frames, 1);
    if (!ensure_shape(model, batch, width, height, error)) {
      gst_npu_infer_model_free(model);
      return NULL;
    }
  }
  return model;
}

void gst_npu_infer_model_free(GstNpuInferModel *model)
{
  if (!model)
    return;
  if (model->context)
    npu_context_destroy(model->context);
  if (model->model)
    npu_model_release(model->model);
  npu_device_release(model->device);
  g_free(model->path);
  g_free(model);
}

const gchar *gst_npu_infer_model_path(const GstNpuInferModel *model)
{
  return model->path;
}

guint gst_npu_infer_model_batch_limit(const GstNpuInferModel *model, guint batch_size)
{
  guint limit = batch_size;
  if (model->input.dims[0] > 0)
    limit = MIN(limit, (guint)model->input.dims[0]);
  return MAX(limit, 1);
}

void gst_npu_infer_model_input_size(const GstNpuInferModel *model, guint width, guint height,
                                    guint *input_width, guint *input_height)
{
  gst_npu_input_size_for(&model->settings.sizes, MAX(width, 1), MAX(height, 1), input_width,
                         input_height);
}

gboolean gst_npu_infer_model_sizes_follow_crops(const GstNpuInferModel *model)
{
  return gst_npu_input_policy_is_dynamic(&model->settings.sizes) && model->settings.sizes.buckets;
}

void gst_npu_infer_slot_content(const GstNpuInferSlot *slot, guint *width, guint *height)
{
  guint frame_width = GST_VIDEO_INFO_WIDTH(slot->info);
  guint frame_height = GST_VIDEO_INFO_HEIGHT(slot->info);
  *width = frame_width;
  *height = frame_height;
  if (slot->crop.width > 0 && slot->crop.height > 0) {
    guint x = (guint)MAX(slot->crop.x, 0), y = (guint)MAX(slot->crop.y, 0);
    *width = MIN((guint64)slot->crop.width, (guint64)frame_width - MIN(x, frame_width));
    *height = MIN((guint64)slot->crop.height, (guint64)frame_height - MIN(y, frame_height));
  }
  if (slot->rotation == NPU_ROTATE_90_CCW || slot->rotation == NPU_ROTATE_90_CW) {
    guint turned = *width;
    *width = *height;
    *height = turned;
  }
}

/* ---- the runner ---------------------------------------------------------------------- */

GstNpuInferRunner *gst_npu_infer_runner_new(npu_device *device, GError **error)
{
  init_debug();
  GstNpuInferRunner *runner = g_new0(GstNpuInferRunner, 1);
  runner->device = device;
  npu_device_retain(device);
  g_mutex_init(&runner->lock);
  runner->free_inputs = g_ptr_array_new();
  runner->free_events = g_ptr_array_new();
  npu_status status = npu_stream_create(device, &runner->stream);
  if (status == NPU_OK)
    status = npu_stream_create(device, &runner->preprocessing);
  if (status == NPU_OK)
    status = npu_mem_pool_create(device, NULL, &runner->pool);
  if (status != NPU_OK) {
    runtime_error(error, status, "Cannot set up the NPU device");
    gst_npu_infer_runner_free(runner);
    return NULL;
  }
  runner->allocator = gst_npu_allocator_new(device);
  return runner;
}

void gst_npu_infer_runner_free(GstNpuInferRunner *runner)
{
  if (!runner)
    return;
  if (runner->preprocessing)
    npu_stream_destroy(runner->preprocessing);
  if (runner->stream)
    npu_stream_destroy(runner->stream); /* the batches queued finish first */
  for (guint i = 0; i < runner->free_inputs->len; i++) {
    InputBuffer *input = g_ptr_array_index(runner->free_inputs, i);
    npu_buffer_release(input->buffer);
    g_free(input);
  }
  for (guint i = 0; i < runner->free_events->len; i++)
    npu_event_destroy(g_ptr_array_index(runner->free_events, i));
  g_ptr_array_unref(runner->free_inputs);
  g_ptr_array_unref(runner->free_events);
  if (runner->pool)
    npu_mem_pool_destroy(runner->pool);
  g_clear_object(&runner->allocator);
  g_mutex_clear(&runner->lock);
  npu_device_release(runner->device);
  g_free(runner);
}

GstAllocator *gst_npu_infer_runner_allocator(GstNpuInferRunner *runner)
{
  return runner->allocator;
}

/* A free input buffer of at least `bytes` (the largest free one grown). */
static InputBuffer *take_input(GstNpuInferRunner *runner, size_t bytes, GError **error)
{
  g_mutex_lock(&runner->lock);
  InputBuffer *input = NULL;
  for (guint i = 0; i < runner->free_inputs->len && !input; i++)
    if (((InputBuffer *)g_ptr_array_index(runner->free_inputs, i))->bytes >= bytes)
      input = g_ptr_array_steal_index_fast(runner->free_inputs, i);
  if (!input && runner->free_inputs->len > 0)
    input = g_ptr_array_steal_index_fast(runner->free_inputs, 0);
  g_mutex_unlock(&runner->lock);
  if (input && input->bytes >= bytes)
    return input;
  if (!input)
    input = g_new0(InputBuffer, 1);
  if (input->buffer)
    npu_buffer_release(input->buffer);
  input->buffer = NULL;
  input->bytes = 0;
  npu_status status = npu_buffer_alloc(runner->device, bytes, &input->buffer);
  if (status != NPU_OK) {
    g_free(input);
    runtime_error(error, status, "Cannot allocate the model's input");
    return NULL;
  }
  input->bytes = bytes;
  return input;
}

static npu_event *take_event(GstNpuInferRunner *runner, npu_status *status)
{
  g_mutex_lock(&runner->lock);
  npu_event *event = runner->free_events->len > 0
                         ? g_ptr_array_steal_index_fast(runner->free_events, 0)
                         : NULL;
  g_mutex_unlock(&runner->lock);
  if (!event)
    *status = npu_event_create(runner->device, NPU_EVENT_DISABLE_TIMING, &event);
  return event;
}

/* Releases what the batch held (its work done or never queued). */
static void batch_free(GstNpuInferBatch *batch)
{
  GstNpuInferRunner *runner = batch->runner;
  for (guint k = 0; k < batch->n_frames; k++) {
    BatchFrame *frame = &batch->frames[k];
    if (frame->imported)
      npu_buffer_release(frame->imported);
    if (frame->mapped)
      gst_buffer_unmap(frame->buffer, &frame->map);
  }
  for (guint o = 0; o < batch->n_outputs; o++)
    gst_buffer_unref(batch->outputs[o]);
  g_mutex_lock(&runner->lock);
  if (batch->input)
    g_ptr_array_add(runner->free_inputs, batch->input);
  for (guint i = 0; i < batch->n_events; i++)
    g_ptr_array_add(runner->free_events, batch->events[i]);
  g_mutex_unlock(&runner->lock);
  g_free(batch);
}

/* Mapped frame memory as device memory: imported without copying where the
 * device can, else copied on the pad's stream into a buffer of its own (a
 * device that cannot wrap host pointers, e.g. a discrete GPU). */
static npu_status frame_to_device(GstNpuInferRunner *runner, const GstNpuInferSlot *slot,
                                  BatchFrame *frame)
{
  if (npu_buffer_import_host(runner->device, frame->map.data, frame->map.size, NULL, NULL,
                             &frame->imported) == NPU_OK)
    return NPU_OK;
  npu_status status = npu_buffer_alloc(runner->device, frame->map.size, &frame->imported);
  if (status == NPU_OK)
    status = npu_memcpy_h2d_async(frame->imported, 0, frame->map.data, frame->map.size,
                                  *slot->stream);
  return status;
}

/* The frame as a VPP image: NPU memory of our device as it is, other memory
 * imported or copied (kept until the batch is over). */
static gboolean frame_image(GstNpuInferRunner *runner, const GstNpuInferSlot *slot,
                            BatchFrame *frame, GError **error)
{
  GstBuffer *buffer = frame->buffer;
  GstMemory *mem = gst_buffer_n_memory(buffer) == 1 ? gst_buffer_peek_memory(buffer, 0) : NULL;
  const GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
  /* the VPP reads the planes where the meta (or the caps) puts them */
  gchar *details;
  const gchar *wrong =
      gst_npu_video_frame_check(slot->info, meta, gst_buffer_get_size(buffer), &details);
  if (wrong) {
    g_set_error(error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, "%s (%s)\n%s", wrong,
                slot->lane, details);
    g_free(details);
    return FALSE;
  }
  if (mem && gst_is_npu_memory(mem) && gst_npu_buffer_is_on_device(buffer, runner->device)) {
    if (gst_npu_memory_sync_for_device(mem, *slot->stream) &&
        gst_npu_image_describe(slot->info, meta, gst_npu_memory_get_buffer(mem), mem->offset,
                               &frame->image))
      return TRUE;
  } else if (!(frame->mapped = gst_buffer_map(buffer, &frame->map, GST_MAP_READ))) {
    g_set_error(error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, "Cannot map a frame of %s",
                slot->lane);
    return FALSE;
  } else if (frame_to_device(runner, slot, frame) == NPU_OK &&
             gst_npu_image_describe(slot->info, meta, frame->imported, 0, &frame->image)) {
    return TRUE;
  }
  g_set_error(error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, "Cannot read a frame of %s\n%s",
              slot->lane, npu_last_error_message());
  return FALSE;
}

/* How the model's input is written from the frames. */
static void vpp_setup(const GstNpuInferModel *model, npu_buffer *input, guint frames,
                      guint width, guint height, npu_tensor_target *target,
                      npu_vpp_params *params)
{
  const GstNpuInferSettings *s = &model->settings;
  *target = (npu_tensor_target){.buffer = input, .width = width, .height = height,
                                .batch = frames, .layout = NPU_LAYOUT_NCHW,
                                .order = s->bgr ? NPU_ORDER_BGR : NPU_ORDER_RGB};
  if (model->input.dtype == NPU_DTYPE_UINT8) { /* raw pixels */
    target->dtype = NPU_TENSOR_UINT8;
    for (int c = 0; c < 3; c++)
      target->scale[c] = 1.0f;
  } else { /* (pixel * scale - mean) / std */
    target->dtype = NPU_TENSOR_FLOAT32;
    for (int c = 0; c < 3; c++) {
      target->mean[c] = (float)(s->mean[c] / s->scale);
      target->scale[c] = (float)(s->scale / s->std[c]);
    }
  }
  *params = (npu_vpp_params){.method = NPU_SCALE_BILINEAR, .letterbox = s->letterbox,
                             .pad_rgb = {114, 114, 114}};
  if (gst_npu_input_policy_is_dynamic(&s->sizes)) {
    /* Each job at its own aspect ratio in the top-left corner of the batch's
     * size, the rest padded with the mean: zeros once normalised, what
     * PP-OCR's recogniser pads with (and a detector sees as background). */
    params->letterbox = TRUE;
    params->align = NPU_LETTERBOX_TOP_LEFT;
    /* content that sized both axes is only rounded up: kept at its own scale */
    params->max_scale = gst_npu_input_policy_keeps_scale(&s->sizes) ? 1.0f : 0.0f;
    for (int c = 0; c < 3; c++) {
      double pixel = target->dtype == NPU_TENSOR_FLOAT32 ? s->mean[c] / s->scale : 114;
      params->pad_rgb[s->bgr ? 2 - c : c] = (uint8_t)CLAMP(lround(pixel), 0, 255);
    }
  }
}

/* Every slot of the batch pre-processed by one VPP call on the runner's
 * pre-processing stream (one pass over all of them, not one per lane), which
 * first waits for the work its lanes' streams still have on the frames
 * (syncs, copies); the model's stream then waits for it through the batch's
 * event. */
static gboolean queue_preprocessing(GstNpuInferRunner *runner, GstNpuInferBatch *batch,
                                    GstNpuInferSlot *slots, guint count, const guint *frame_of,
                                    const npu_tensor_target *target,
                                    const npu_vpp_params *params, GError **error)
{
  npu_vpp_job jobs[GST_NPU_INFER_MAX_BATCH];
  npu_status status = NPU_OK;
  for (guint i = 0; i < count && status == NPU_OK; i++) {
    jobs[i] = (npu_vpp_job){.src = &batch->frames[frame_of[i]].image, .crop = slots[i].crop,
                            .slot = i, .mapping = &slots[i].mapping,
                            .rotation = slots[i].rotation};
    npu_stream *lane = *slots[i].stream;
    gboolean first = TRUE;
    for (guint k = 0; k < i && first; k++)
      first = *slots[k].stream != lane;
    if (!first || npu_stream_query(lane) == NPU_OK)
      continue; /* seen, or nothing left to wait for */
    npu_event *lane_done = take_event(runner, &status);
    if (status != NPU_OK)
      break;
    batch->events[batch->n_events++] = lane_done;
    status = npu_event_record(lane_done, lane);
    if (status == NPU_OK)
      status = npu_stream_wait_event(runner->preprocessing, lane_done);
  }
  npu_event *ready = NULL;
  if (status == NPU_OK && (ready = take_event(runner, &status)) != NULL)
    batch->events[batch->n_events++] = ready;
  if (status == NPU_OK)
    status = npu_vpp_to_tensor(runner->preprocessing, jobs, count, params, target);
  if (status == NPU_OK)
    status = npu_event_record(ready, runner->preprocessing);
  if (status == NPU_OK)
    status = npu_stream_wait_event(runner->stream, ready);
  if (status != NPU_OK)
    runtime_error(error, status, "Pre-processing failed");
  return status == NPU_OK;
}

static gboolean queue_run(GstNpuInferRunner *runner, GstNpuInferModel *model,
                          GstNpuInferBatch *batch, GError **error)
{
  npu_buffer *out[GST_NPU_INFER_MAX_OUTPUTS] = {NULL};
  for (uint32_t o = 0; o < model->output_count; o++) {
    npu_context_output_info(model->context, o, &batch->infos[o]);
    size_t size = npu_dtype_size(batch->infos[o].dtype);
    for (uint32_t d = 0; d < batch->infos[o].rank; d++)
      size *= (size_t)batch->infos[o].dims[d];
    npu_status status = npu_mem_pool_alloc(runner->pool, size ? size : 1, &out[o]);
    if (status != NPU_OK) {
      runtime_error(error, status, "Cannot allocate the model's outputs");
      return FALSE;
    }
    batch->outputs[o] = gst_buffer_new();
    gst_buffer_append_memory(batch->outputs[o],
                             gst_npu_memory_wrap(runner->allocator, out[o], size));
    batch->n_outputs++;
  }
  npu_status status = npu_context_run(model->context, runner->stream, &batch->input->buffer, out);
  if (status != NPU_OK)
    runtime_error(error, status, "Inference failed");
  return status == NPU_OK;
}

GstNpuInferBatch *gst_npu_infer_runner_run(GstNpuInferRunner *runner, GstNpuInferModel *model,
                                           GstNpuInferSlot *slots, guint count, GError **error)
{
  g_return_val_if_fail(count > 0 && count <= GST_NPU_INFER_MAX_BATCH, NULL);
  guint frames = model->input.dims[0] > 0 ? (guint)model->input.dims[0] : count;
  guint width = 0, height = 0; /* the largest any slot wants */
  for (guint i = 0; i < count; i++) {
    if (slots[i].width == 0) {
      guint content_width, content_height;
      gst_npu_infer_slot_content(&slots[i], &content_width, &content_height);
      gst_npu_infer_model_input_size(model, content_width, content_height, &slots[i].width,
                                     &slots[i].height);
    }
    width = MAX(width, slots[i].width);
    height = MAX(height, slots[i].height);
  }
  if (!ensure_shape(model, frames, width, height, error))
    return NULL;
  GstNpuInferBatch *batch = g_new0(GstNpuInferBatch, 1);
  batch->runner = runner;
  batch->batch_frames = frames;
  size_t bytes = npu_dtype_size(model->input.dtype) * frames * 3 * (size_t)height * width;
  batch->input = take_input(runner, bytes, error);
  gboolean ok = batch->input != NULL;
  npu_status status = NPU_OK;
  /* the frames of the batch, each once (a frame's crops share its image) */
  guint frame_of[GST_NPU_INFER_MAX_BATCH];
  for (guint i = 0; i < count && ok; i++) {
    if (!*slots[i].stream) {
      status = npu_stream_create(runner->device, slots[i].stream);
      if (status != NPU_OK) {
        runtime_error(error, status, "Cannot create a pad's stream");
        ok = FALSE;
        break;
      }
    }
    guint k = 0;
    while (k < batch->n_frames && batch->frames[k].buffer != slots[i].frame)
      k++;
    if (k == batch->n_frames) {
      batch->frames[batch->n_frames++].buffer = slots[i].frame;
      ok = frame_image(runner, &slots[i], &batch->frames[k], error);
    }
    frame_of[i] = k;
  }
  npu_tensor_target target;
  npu_vpp_params params;
  if (ok) {
    vpp_setup(model, batch->input->buffer, frames, width, height, &target, &params);
    ok = queue_preprocessing(runner, batch, slots, count, frame_of, &target, &params, error);
  }
  if (ok)
    ok = queue_run(runner, model, batch, error);
  if (!ok) {
    /* the streams may still read the frames and write the input */
    for (guint i = 0; i < count; i++)
      if (*slots[i].stream)
        npu_stream_synchronize(*slots[i].stream);
    npu_stream_synchronize(runner->preprocessing);
    npu_stream_synchronize(runner->stream);
    batch_free(batch);
    return NULL;
  }
  return batch;
}

GstBuffer *const *gst_npu_infer_batch_outputs(GstNpuInferBatch *batch,
                                              const npu_tensor_info **infos, guint *n_outputs,
                                              guint *frames)
{
  *infos = batch->infos;
  *n_outputs = batch->n_outputs;
  *frames = batch->batch_frames;
  return batch->outputs;
}

static void batch_finished(void *data)
{
  GstNpuInferBatch *batch = data;
  GstNpuInferDone done = batch->done;
  gpointer done_data = batch->done_data;
  batch_free(batch);
  done(done_data);
}

void gst_npu_infer_runner_finish(GstNpuInferRunner *runner, GstNpuInferBatch *batch,
                                 GstNpuInferDone done, gpointer user_data)
{
  batch->done = done;
  batch->done_data = user_data;
  if (npu_stream_launch_host_func(runner->stream, batch_finished, batch) != NPU_OK) {
    GST_WARNING("cannot queue a completion (%s): waiting for the batch instead",
                npu_last_error_message());
    npu_stream_synchronize(runner->stream);
    batch_finished(batch);
  }
}
