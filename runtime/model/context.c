/* Execution contexts: one model on one device, planned for the shapes it
 * meets. The model's weights go to the device once per context; each input
 * shape gets a shape plan (shape_plan.c: kernels, arena, launches), and the
 * most recently used plans are kept, so that alternating between batch
 * sizes or image sizes re-plans nothing. Runs are one at a time, so the
 * plans share one arena where it fits them (npu_shared_arena). A run binds
 * the caller's buffers and queues the current plan's launches on the
 * stream. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "npu_internal.h"
#include "shape_plan.h"

#define MAX_SHAPE_PLANS 12

typedef struct kept_plan {
  shape_plan *plan;
  uint64_t last_used; /* the least recently used plan is dropped first */
} kept_plan;

struct npu_context {
  npu_model *model;
  npu_plan_env env;
  npu_device_weights weights;
  npu_shared_arena arena;     /* every plan's intermediates, one plan running at a time */
  npu_subgraph_registry compiled;
  kept_plan plans[MAX_SHAPE_PLANS];
  shape_plan *current;
  uint64_t uses;
  npu_event *finished;        /* recorded after each run */
  npu_stream *sync_stream;    /* npu_context_run_sync's, made on first use */
  npu_buffer **held;          /* the last run's inputs and outputs */
  size_t held_count;
  pthread_mutex_t lock;
};

static void release_held(npu_context *ctx)
{
  for (size_t i = 0; i < ctx->held_count; i++)
    npu_buffer_release(ctx->held[i]);
  ctx->held_count = 0;
}

static void destroy_context(npu_context *ctx)
{
  if (ctx->finished)
    npu_event_synchronize(ctx->finished);
  release_held(ctx);
  for (size_t p = 0; p < MAX_SHAPE_PLANS; p++)
    npu_shape_plan_destroy(ctx->plans[p].plan);
  npu_subgraph_registry_clear(&ctx->compiled);
  if (ctx->arena.buffer)
    npu_buffer_release(ctx->arena.buffer);
  if (ctx->weights.buffer)
    npu_buffer_release(ctx->weights.buffer);
  free(ctx->weights.offsets);
  if (ctx->finished)
    npu_event_destroy(ctx->finished);
  if (ctx->sync_stream)
    npu_stream_destroy(ctx->sync_stream);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx->held);
  if (ctx->env.host)
    npu_device_release(ctx->env.host);
  npu_model_release(ctx->model);
  npu_device_release(ctx->env.device);
  free(ctx);
}

/* The device that folds constants: the CPU backend's (the target itself
 * when it is one), whose kernels read and write host memory. */
static npu_status open_host_device(npu_device *device, npu_device **host)
{
  const npu_hal_backend *cpu = npu_hal_backend_get(0);
  if (npu_device_backend(device) == cpu) {
    npu_device_retain(device);
    *host = device;
    return NPU_OK;
  }
  return npu_device_open_by_backend(cpu->name, 0, host);
}

/* Makes the plan for `shapes` current: a kept one, or a new one in the
 * place of the least recently used. Call with the lock held and no run
 * pending. */
static npu_status select_plan(npu_context *ctx, const npu_tensor_info *shapes,
                              uint32_t shape_count)
{
  kept_plan *slot = &ctx->plans[0];
  for (size_t p = 0; p < MAX_SHAPE_PLANS; p++) {
    kept_plan *k = &ctx->plans[p];
    if (k->plan && npu_shape_plan_matches(k->plan, shapes, shape_count)) {
      k->last_used = ++ctx->uses;
      ctx->current = k->plan;
      return NPU_OK;
    }
    if (!k->plan || (slot->plan && k->last_used < slot->last_used))
      slot = k;
  }
  shape_plan *plan;
  npu_status status = npu_shape_plan_create(&ctx->env, shapes, shape_count, &plan);
  if (status != NPU_OK)
    return status;
  if (slot->plan == ctx->current)
    ctx->current = NULL;
  npu_shape_plan_destroy(slot->plan);
  *slot = (kept_plan){plan, ++ctx->uses};
  ctx->current = plan;
  return NPU_OK;
}

NPU_API const char *npu_precision_name(npu_precision precision)
{
  switch (precision) {
  case NPU_PRECISION_FP32:
    return "fp32";
  case NPU_PRECISION_BF16:
    return "bf16";
  }
  return NULL;
}

NPU_API npu_status npu_precision_from_name(const char *name, npu_precision *precision)
{
  if (!precision)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_precision_from_name: precision is NULL");
  for (npu_precision p = NPU_PRECISION_FP32; p <= NPU_PRECISION_BF16; p++)
    if (name && strcmp(name, npu_precision_name(p)) == 0) {
      *precision = p;
      return NPU_OK;
    }
  return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "unknown precision '%s' (fp32 or bf16)",
                       name ? name : "(null)");
}

NPU_API npu_status npu_context_create(npu_model *model, npu_device *device,
                                      const npu_tensor_info *shapes, uint32_t shape_count,
                                      npu_context **out)
{
  return npu_context_create_with_options(model, device, shapes, shape_count, NULL, out);
}

NPU_API npu_status npu_context_create_with_options(npu_model *model, npu_device *device,
                                                   const npu_tensor_info *shapes,
                                                   uint32_t shape_count,
                                                   const npu_context_options *options,
                                                   npu_context **out)
{
  npu_status status = npu_handle_check(model, NPU_HANDLE_MODEL, "model");
  if (status == NPU_OK)
    status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (!out)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_context_create: context is NULL");
  npu_context_options chosen = options ? *options : (npu_context_options){0};
  if (!npu_precision_name(chosen.precision))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_context_create: no precision %d",
                         (int)chosen.precision);
  const npu_hal_backend *backend = npu_device_backend(device);
  if (!backend->graph)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "the %s backend cannot run models",
                         backend->name);
  npu_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a context");
  npu_model_retain(model);
  npu_device_retain(device);
  ctx->model = model;
  ctx->env = (npu_plan_env){npu_model_graph(model), device, NULL, &ctx->weights, &ctx->arena,
                            &ctx->compiled, chosen.precision, npu_model_weight_store(model)};
  pthread_mutex_init(&ctx->lock, NULL);
  ctx->held = calloc(ctx->env.graph->input_count + ctx->env.graph->output_count + 1,
                     sizeof *ctx->held);
  if (!ctx->held)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory creating a context");
  if (status == NPU_OK)
    status = open_host_device(device, &ctx->env.host);
  if (status == NPU_OK)
    status = npu_event_create(device, NPU_EVENT_DISABLE_TIMING, &ctx->finished);
  if (status == NPU_OK)
    status = select_plan(ctx, shapes, shape_count);
  if (status != NPU_OK) {
    char reason[512];
    snprintf(reason, sizeof reason, "%s", npu_last_error_message());
    destroy_context(ctx);
    return npu_set_error(status, "%s", reason);
  }
  npu_handle_register(ctx, NPU_HANDLE_CONTEXT);
  *out = ctx;
  return NPU_OK;
}

NPU_API npu_status npu_context_destroy(npu_context *ctx)
{
  npu_status status = npu_handle_unregister(ctx, NPU_HANDLE_CONTEXT, "context");
  if (status == NPU_OK)
    destroy_context(ctx);
  return status;
}

NPU_API npu_status npu_context_reshape(npu_context *ctx, const npu_tensor_info *shapes,
                                       uint32_t shape_count)
{
  npu_status status = npu_handle_check(ctx, NPU_HANDLE_CONTEXT, "context");
  if (status != NPU_OK)
    return status;
  pthread_mutex_lock(&ctx->lock);
  /* A plan may be dropped: no run of it may be pending. */
  status = npu_event_synchronize(ctx->finished);
  if (status == NPU_OK)
    status = select_plan(ctx, shapes, shape_count);
  pthread_mutex_unlock(&ctx->lock);
  return status;
}

static npu_status describe(npu_context *ctx, bool input, uint32_t index, npu_tensor_info *info)
{
  npu_status status = npu_handle_check(ctx, NPU_HANDLE_CONTEXT, "context");
  if (status != NPU_OK)
    return status;
  pthread_mutex_lock(&ctx->lock);
  status = npu_shape_plan_describe(ctx->current, input, index, info);
  pthread_mutex_unlock(&ctx->lock);
  return status;
}

NPU_API npu_status npu_context_input_info(npu_context *ctx, uint32_t index, npu_tensor_info *info)
{
  return describe(ctx, true, index, info);
}

NPU_API npu_status npu_context_output_info(npu_context *ctx, uint32_t index,
                                           npu_tensor_info *info)
{
  return describe(ctx, false, index, info);
}

NPU_API npu_status npu_context_run(npu_context *ctx, npu_stream *stream,
                                   npu_buffer *const *inputs, npu_buffer *const *outputs)
{
  npu_status status = npu_handle_check(ctx, NPU_HANDLE_CONTEXT, "context");
  if (status == NPU_OK)
    status = npu_handle_check(stream, NPU_HANDLE_STREAM, "stream");
  if (status != NPU_OK)
    return status;
  pthread_mutex_lock(&ctx->lock);
  status = npu_shape_plan_check(ctx->current, inputs, outputs);
  /* The launches are patched in place: the previous run must be done. */
  if (status == NPU_OK)
    status = npu_event_synchronize(ctx->finished);
  if (status == NPU_OK) {
    const npu_graph *g = ctx->env.graph;
    release_held(ctx);
    for (size_t i = 0; i < g->input_count; i++) {
      npu_buffer_retain(inputs[i]);
      ctx->held[ctx->held_count++] = inputs[i];
    }
    for (size_t i = 0; i < g->output_count; i++) {
      npu_buffer_retain(outputs[i]);
      ctx->held[ctx->held_count++] = outputs[i];
    }
    status = npu_shape_plan_queue(ctx->current, stream, inputs, outputs);
  }
  if (status == NPU_OK)
    status = npu_event_record(ctx->finished, stream);
  pthread_mutex_unlock(&ctx->lock);
  return status;
}

NPU_API npu_status npu_context_run_sync(npu_context *ctx, npu_buffer *const *inputs,
                                        npu_buffer *const *outputs)
{
  npu_status status = npu_handle_check(ctx, NPU_HANDLE_CONTEXT, "context");
  if (status != NPU_OK)
    return status;
  pthread_mutex_lock(&ctx->lock);
  if (!ctx->sync_stream)
    status = npu_stream_create(ctx->env.device, &ctx->sync_stream);
  npu_stream *stream = ctx->sync_stream;
  pthread_mutex_unlock(&ctx->lock);
  if (status == NPU_OK)
    status = npu_context_run(ctx, stream, inputs, outputs);
  if (status == NPU_OK)
    status = npu_stream_synchronize(stream);
  return status;
}

NPU_API npu_status npu_context_settle(npu_context *ctx)
{
  npu_status status = npu_handle_check(ctx, NPU_HANDLE_CONTEXT, "context");
  if (status != NPU_OK)
    return status;
  pthread_mutex_lock(&ctx->lock);
  npu_shape_plan_settle(ctx->current);
  pthread_mutex_unlock(&ctx->lock);
  return NPU_OK;
}

NPU_API npu_status npu_context_get_stats(npu_context *ctx, npu_context_stats *stats)
{
  npu_status status = npu_handle_check(ctx, NPU_HANDLE_CONTEXT, "context");
  if (status != NPU_OK)
    return status;
  if (!stats)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_context_get_stats: stats is NULL");
  pthread_mutex_lock(&ctx->lock);
  *stats = *npu_shape_plan_stats(ctx->current);
  stats->shape_plans = 0;
  for (size_t p = 0; p < MAX_SHAPE_PLANS; p++)
    stats->shape_plans += ctx->plans[p].plan != NULL;
  pthread_mutex_unlock(&ctx->lock);
  return NPU_OK;
}
