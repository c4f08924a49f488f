/* A plan's kernels recorded once into a command buffer and replayed on
 * every run. The first run of a sequence of launches records its dispatches
 * (pipeline, descriptor set, push constants, dispatch, barrier) into a slot:
 * a command buffer with a descriptor set per dispatch. A later run takes a
 * slot that is not pending and only rewrites the descriptor sets whose
 * buffers changed (a frame's input or output), which update-after-bind
 * allows without touching the recording. A slot is recorded again only
 * where an offset inside a bound range changed (it is a push constant, so
 * in the recording) or the device cannot update after bind. Runs in flight
 * at once each take a slot of their own (MAX_SLOTS at most). A recording
 * hangs on the sequence's first kernel and is known by the serial numbers
 * of all its kernels, so a new plan never replays an old one's commands. */
#include <stdlib.h>
#include <string.h>

#include "vk_kernels.h"

#define MAX_SLOTS 8

/* What a binding of a dispatch holds. */
typedef struct bound {
  uint64_t buffer_serial;   /* 0: nothing yet */
  VkDeviceSize start, range;
  uint32_t element;         /* the tensor's element offset from `start` (a push constant) */
} bound;

typedef struct slot {
  atomic_bool busy;         /* queued and not seen finished yet */
  bool recorded;
  uint64_t last_used;       /* the recording's run count when it last ran */
  VkCommandBuffer commands;
  VkDescriptorSet *sets;    /* one per dispatch */
  bound *bindings;          /* VK_MAX_BINDINGS per dispatch */
  vk_recording *owner;
} slot;

struct vk_recording {
  atomic_uint refs;          /* the first kernel, and each queued run */
  npu_hal_device *device;
  pthread_mutex_t lock;
  size_t launch_count;
  uint64_t *kernel_serials;
  uint32_t dispatch_count;   /* over all launches */
  VkCommandPool pool;
  VkDescriptorPool descriptors;
  bound *wanted;             /* this run's bindings */
  VkDescriptorBufferInfo *infos;
  uint64_t run_count;
  uint32_t slot_count;
  slot slots[MAX_SLOTS];
};

static void recording_unref(vk_recording *r)
{
  if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
    return;
  VkDevice device = r->device->device;
  if (r->descriptors)
    vkDestroyDescriptorPool(device, r->descriptors, NULL);
  if (r->pool)
    vkDestroyCommandPool(device, r->pool, NULL); /* frees its command buffers */
  for (uint32_t s = 0; s < r->slot_count; s++) {
    free(r->slots[s].sets);
    free(r->slots[s].bindings);
  }
  free(r->kernel_serials);
  free(r->wanted);
  free(r->infos);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

void vk_recording_release(vk_recording *recording)
{
  recording_unref(recording);
}

/* The stream has run the slot's commands (called holding a stream lock). */
static void slot_finished(void *data)
{
  slot *s = data;
  vk_recording *owner = s->owner;
  atomic_store(&s->busy, false);
  recording_unref(owner);
}

static bool matches(const vk_recording *r, const npu_hal_launch *launches, size_t count)
{
  if (r->launch_count != count)
    return false;
  for (size_t l = 0; l < count; l++)
    if (r->kernel_serials[l] != launches[l].kernel->serial)
      return false;
  return true;
}

static npu_status make_recording(npu_hal_device *device, const npu_hal_launch *launches,
                                 size_t count, vk_recording **out)
{
  vk_recording *r = calloc(1, sizeof *r);
  if (!r)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for a recording");
  atomic_init(&r->refs, 1);
  r->device = device;
  pthread_mutex_init(&r->lock, NULL);
  r->launch_count = count;
  for (size_t l = 0; l < count; l++)
    r->dispatch_count += launches[l].kernel->dispatch_count;
  uint32_t bindings = (r->dispatch_count ? r->dispatch_count : 1) * VK_MAX_BINDINGS;
  r->kernel_serials = malloc(count * sizeof *r->kernel_serials);
  r->wanted = calloc(bindings, sizeof *r->wanted);
  r->infos = calloc(bindings, sizeof *r->infos);
  if (!r->kernel_serials || !r->wanted || !r->infos) {
    recording_unref(r);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for a recording");
  }
  for (size_t l = 0; l < count; l++)
    r->kernel_serials[l] = launches[l].kernel->serial;
  VkCommandPoolCreateInfo pool_info = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                       .queueFamilyIndex = device->queue_family};
  VkResult result = vkCreateCommandPool(device->device, &pool_info, NULL, &r->pool);
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               (r->dispatch_count + 1) * MAX_SLOTS * VK_MAX_BINDINGS};
  VkDescriptorPoolCreateInfo descriptor_info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
      .flags = device->update_after_bind ? VK_DESCRIPTOR_POOL_CREATE_UPDATE_AFTER_BIND_BIT : 0,
      .maxSets = (r->dispatch_count + 1) * MAX_SLOTS, .poolSizeCount = 1, .pPoolSizes = &size};
  if (result == VK_SUCCESS)
    result = vkCreateDescriptorPool(device->device, &descriptor_info, NULL, &r->descriptors);
  if (result != VK_SUCCESS) {
    recording_unref(r);
    return npu_set_error(vk_status_of(result), "cannot make a command recording: %s",
                         vk_result_name(result));
  }
  *out = r;
  return NPU_OK;
}

/* The recording of this sequence (a reference the caller releases): the
 * first kernel's, or a new one that replaces it. */
static npu_status find_recording(npu_hal_device *device, const npu_hal_launch *launches,
                                 size_t count, vk_recording **out)
{
  npu_hal_kernel *first = launches[0].kernel;
  pthread_mutex_lock(&device->recordings_lock);
  npu_status status = NPU_OK;
  if (!first->recording || !matches(first->recording, launches, count)) {
    vk_recording *made = NULL;
    status = make_recording(device, launches, count, &made);
    if (status == NPU_OK) {
      recording_unref(first->recording);
      first->recording = made;
    }
  }
  if (status == NPU_OK) {
    atomic_fetch_add(&first->recording->refs, 1);
    *out = first->recording;
  }
  pthread_mutex_unlock(&device->recordings_lock);
  return status;
}

/* This run's bindings of every dispatch, into r->wanted and r->infos. */
static npu_status resolve_bindings(vk_recording *r, const npu_hal_launch *launches, size_t count)
{
  const VkPhysicalDeviceLimits *limits = &r->device->properties.limits;
  VkDeviceSize align = limits->minStorageBufferOffsetAlignment;
  uint32_t at = 0;
  for (size_t l = 0; l < count; l++) {
    const npu_hal_launch *launch = &launches[l];
    for (uint32_t i = 0; i < launch->kernel->dispatch_count; i++, at += VK_MAX_BINDINGS) {
      const vk_dispatch *d = &launch->kernel->dispatches[i];
      if (!d->invocations && !d->groups[0])
        continue; /* nothing to run: recorded as nothing */
      for (uint32_t b = 0; b < d->binding_count; b++) {
        vk_binding source = d->sources[b];
        /* An absent optional tensor: the shader never reads it, any buffer will do. */
        npu_hal_mem_ref ref = !source.present ? launch->outputs[0]
                              : source.output ? launch->outputs[source.index]
                                              : launch->inputs[source.index];
        if (!ref.buffer || vk_offset(ref) % sizeof(float))
          return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                               "Vulkan kernels take float-aligned device buffers, not %s",
                               ref.buffer ? "an unaligned offset" : "host memory");
        VkDeviceSize start = vk_offset(ref) / align * align;
        VkDeviceSize range = ref.buffer->base + ref.buffer->size - start;
        if (range > limits->maxStorageBufferRange)
          range = limits->maxStorageBufferRange;
        r->wanted[at + b] = (bound){ref.buffer->serial, start, range,
                                    (uint32_t)((vk_offset(ref) - start) / sizeof(float))};
        r->infos[at + b] = (VkDescriptorBufferInfo){ref.buffer->buffer, start, range};
      }
    }
  }
  return NPU_OK;
}

static bool same_bindings(const vk_recording *r, const slot *s)
{
  for (uint32_t b = 0; b < r->dispatch_count * VK_MAX_BINDINGS; b++) {
    const bound *want = &r->wanted[b], *have = &s->bindings[b];
    if (want->buffer_serial != have->buffer_serial || want->start != have->start ||
        want->range != have->range || want->element != have->element)
      return false;
  }
  return true;
}

/* A slot not pending, in *out: one recorded with this run's bindings (a
 * replay as it is); else, where descriptor sets can be rewritten after
 * bind, the least recently used; else a new one while there is room (so
 * that the buffers a pool cycles through each keep a recording); else the
 * least recently used. NULL when all MAX_SLOTS are pending. */
static npu_status free_slot(vk_recording *r, slot **out)
{
  slot *oldest = NULL;
  for (uint32_t i = 0; i < r->slot_count; i++) {
    slot *s = &r->slots[i];
    if (atomic_load(&s->busy))
      continue;
    if (s->recorded && same_bindings(r, s)) {
      *out = s;
      return NPU_OK;
    }
    if (!oldest || s->last_used < oldest->last_used)
      oldest = s;
  }
  *out = oldest;
  if ((oldest && r->device->update_after_bind) || r->slot_count == MAX_SLOTS)
    return NPU_OK;
  slot *s = &r->slots[r->slot_count];
  uint32_t sets = r->dispatch_count ? r->dispatch_count : 1;
  s->sets = malloc(sets * sizeof *s->sets);
  s->bindings = calloc(sets * VK_MAX_BINDINGS, sizeof *s->bindings);
  VkDescriptorSetLayout *layouts = malloc(sets * sizeof *layouts);
  VkResult result = VK_ERROR_OUT_OF_HOST_MEMORY;
  if (s->sets && s->bindings && layouts) {
    for (uint32_t i = 0; i < sets; i++)
      layouts[i] = vk_descriptor_set_layout(r->device);
    VkDescriptorSetAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                        .descriptorPool = r->descriptors,
                                        .descriptorSetCount = sets, .pSetLayouts = layouts};
    result = vkAllocateDescriptorSets(r->device->device, &info, s->sets);
  }
  VkCommandBufferAllocateInfo commands = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                          .commandPool = r->pool,
                                          .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                          .commandBufferCount = 1};
  if (result == VK_SUCCESS)
    result = vkAllocateCommandBuffers(r->device->device, &commands, &s->commands);
  free(layouts);
  if (result != VK_SUCCESS) {
    free(s->sets);
    free(s->bindings);
    memset(s, 0, sizeof *s);
    return npu_set_error(vk_status_of(result), "cannot make a command buffer slot: %s",
                         vk_result_name(result));
  }
  s->owner = r;
  atomic_init(&s->busy, false);
  r->slot_count++;
  *out = s;
  return NPU_OK;
}

/* Writes the descriptor sets whose bindings changed; says whether the
 * recording must be made again (a push-constant offset changed, or sets
 * cannot be written once recorded). */
static bool update_descriptors(vk_recording *r, slot *s, const npu_hal_launch *launches,
                               size_t count)
{
  npu_hal_device *device = r->device;
  bool record = !s->recorded;
  uint32_t at = 0, set = 0;
  for (size_t l = 0; l < count; l++)
    for (uint32_t i = 0; i < launches[l].kernel->dispatch_count; i++, set++, at += VK_MAX_BINDINGS) {
      const vk_dispatch *d = &launches[l].kernel->dispatches[i];
      bool changed = false;
      for (uint32_t b = 0; b < d->binding_count; b++) {
        const bound *want = &r->wanted[at + b], *have = &s->bindings[at + b];
        changed |= want->buffer_serial != have->buffer_serial || want->start != have->start ||
                   want->range != have->range;
        record |= want->element != have->element;
      }
      if (!changed || !d->binding_count)
        continue;
      record |= !device->update_after_bind;
      VkWriteDescriptorSet writes[VK_MAX_BINDINGS];
      for (uint32_t b = 0; b < d->binding_count; b++)
        writes[b] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                           .dstSet = s->sets[set], .dstBinding = b,
                                           .descriptorCount = 1,
                                           .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                           .pBufferInfo = &r->infos[at + b]};
      vkUpdateDescriptorSets(device->device, d->binding_count, writes, 0, NULL);
      memcpy(&s->bindings[at], &r->wanted[at], d->binding_count * sizeof *s->bindings);
      atomic_fetch_add(&device->replay_counts.descriptor_updates, 1);
    }
  return record;
}

static void record_dispatch(npu_hal_device *device, VkCommandBuffer commands, VkDescriptorSet set,
                            const vk_dispatch *d, const bound *bindings)
{
  if (!d->invocations && !d->groups[0])
    return;
  uint32_t push[VK_PUSH_CONSTANT_BYTES / 4];
  memcpy(push, d->push, sizeof push);
  for (uint32_t b = 0; b < d->binding_count; b++)
    push[b] = bindings[b].element;
  VkPipelineLayout layout = vk_pipeline_layout(device);
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, vk_pipeline(device, d->shader));
  vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
  vkCmdPushConstants(commands, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
  if (d->groups[0]) {
    vkCmdDispatch(commands, d->groups[0], d->groups[1], d->groups[2]);
  } else {
    uint64_t groups = (d->invocations + d->local_size - 1) / d->local_size;
    uint64_t max_groups = device->properties.limits.maxComputeWorkGroupCount[0];
    vkCmdDispatch(commands, (uint32_t)(groups < max_groups ? groups : max_groups), 1, 1);
  }
  vk_cmd_barrier(commands); /* the next dispatch, a copy or the host reads what it wrote */
}

static npu_status record_slot(vk_recording *r, slot *s, const npu_hal_launch *launches,
                              size_t count)
{
  npu_hal_device *device = r->device;
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkResult result = vkResetCommandBuffer(s->commands, 0);
  if (result == VK_SUCCESS)
    result = vkBeginCommandBuffer(s->commands, &begin);
  if (result == VK_SUCCESS) {
    uint32_t set = 0;
    for (size_t l = 0; l < count; l++)
      for (uint32_t i = 0; i < launches[l].kernel->dispatch_count; i++, set++)
        record_dispatch(device, s->commands, s->sets[set], &launches[l].kernel->dispatches[i],
                        &r->wanted[set * VK_MAX_BINDINGS]);
    vk_cmd_barrier(s->commands);
    result = vkEndCommandBuffer(s->commands);
  }
  s->recorded = result == VK_SUCCESS;
  if (result != VK_SUCCESS)
    return npu_set_error(vk_status_of(result), "cannot record a plan's commands: %s",
                         vk_result_name(result));
  /* The recording holds every binding's offset now, even those whose sets did not change. */
  memcpy(s->bindings, r->wanted, r->dispatch_count * VK_MAX_BINDINGS * sizeof *s->bindings);
  atomic_fetch_add(&device->replay_counts.recorded, 1);
  return NPU_OK;
}

/* A slot ready to submit for this run (busy, a reference taken for it). */
static npu_status prepare_slot(vk_recording *r, npu_hal_stream *stream,
                               const npu_hal_launch *launches, size_t count, slot **out)
{
  pthread_mutex_lock(&r->lock);
  npu_status status = resolve_bindings(r, launches, count);
  slot *s = NULL;
  if (status == NPU_OK)
    status = free_slot(r, &s);
  if (status == NPU_OK && !s) {
    /* Every slot queued: the stream's own are the likeliest to finish. */
    status = vk_stream_synchronize(stream);
    vk_stream_reclaim(stream);
    if (status == NPU_OK)
      status = free_slot(r, &s);
    if (status == NPU_OK && !s)
      status = npu_set_error(NPU_ERROR_NOT_READY, "more than %d runs of one plan in flight "
                             "on other streams", MAX_SLOTS);
  }
  if (status == NPU_OK && update_descriptors(r, s, launches, count))
    status = record_slot(r, s, launches, count);
  if (status == NPU_OK) {
    s->last_used = ++r->run_count;
    atomic_store(&s->busy, true);
    atomic_fetch_add(&r->refs, 1);
    atomic_fetch_add(&r->device->replay_counts.runs, 1);
    *out = s;
  }
  pthread_mutex_unlock(&r->lock);
  return status;
}

npu_status vk_replay_run(npu_hal_device *device, npu_hal_stream *stream,
                         const npu_hal_launch *launches, size_t count, npu_hal_task_fn done,
                         void *done_data)
{
  vk_work work = {.done = done, .done_data = done_data};
  if (!count)
    return vk_stream_queue(stream, &work);
  vk_recording *r;
  npu_status status = find_recording(device, launches, count, &r);
  if (status != NPU_OK)
    return status;
  vk_stream_reclaim(stream); /* frees the slots of this stream's finished runs */
  slot *s = NULL;
  status = prepare_slot(r, stream, launches, count, &s);
  if (status == NPU_OK) {
    work.commands = s->commands;
    work.finished = slot_finished;
    work.finished_data = s;
    status = vk_stream_queue(stream, &work);
    if (status != NPU_OK)
      slot_finished(s);
  }
  recording_unref(r);
  return status;
}
