/* The Vulkan backend's VPP: a batch becomes the job table of vpp.comp
 * (layout: shaders/vpp_table.h) in a host-visible buffer, the jobs' planes
 * and tensor slots are bound as byte buffers, and one dispatch runs every
 * job (more only where a batch touches more distinct buffers than the
 * shader binds at once). The sampling taps are worked out here with the CPU
 * backend's own code (vpp_sampling.c), so both read the same pixels. */
#include <stdlib.h>
#include <string.h>

#include "npu_hal_vpp.h"
#include "vk_internal.h"
#include "vpp_sampling.h"
#include "vulkan/shaders/vpp_table.h"

static const uint32_t vpp_spirv[] =
#include "vulkan/vpp.spv.h"
    ;

/* Bindings: the table, then the array of plane buffers. */
#define VPP_BINDINGS (1 + VPP_PLANE_BUFFERS)

/* What a queued batch holds until it has run: its job table and a
 * descriptor pool with a set per dispatch. Plain sets rather than push
 * descriptors: the array binding then needs no VK_KHR_push_descriptor (and
 * lavapipe 22.3 read wrong buffers from arrays pushed element by element).
 * When the batch has run both go back to the pipeline's spares, and the
 * next batch takes them (the pool reset, the table rewritten) instead of
 * asking the driver for new ones. */
typedef struct batch_resources {
  npu_hal_device *device;
  npu_hal_buffer *table;
  VkDescriptorPool pool;
  uint32_t set_capacity;
  npu_hal_task_fn done;
  void *done_data;
  struct batch_resources *next; /* among the spares */
} batch_resources;

/* Spares kept at most (batches in flight at once beyond this make their own). */
#define MAX_SPARE_BATCHES 8

struct vk_vpp_pipeline {
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  pthread_mutex_t spares_lock;
  batch_resources *spares;
  uint32_t spare_count;
  vk_vpp_counts counts;
};

/* One output grid of a job: the full-resolution pixels, or a destination's
 * subsampled chroma. */
typedef struct grid {
  uint32_t width, height;
  uint8_t sub_x, sub_y;
  bool chroma;
  uint32_t frame_width, frame_height; /* the frame's pixels */
} grid;

/* A buffer of a dispatch: bound from `start`, its planes reaching to `end`
 * (offsets in its VkBuffer). */
typedef struct plane_binding {
  npu_hal_buffer *buffer;
  VkDeviceSize start, end;
} plane_binding;

/* The jobs one dispatch runs and the buffers they touch. */
typedef struct dispatch_group {
  size_t first_job, job_count;
  uint32_t first_item, item_count;
  uint32_t max_width, max_height; /* of the items' grids */
  uint32_t binding_count;
  plane_binding bindings[VPP_PLANE_BUFFERS];
} dispatch_group;

/* The most planes one job touches: 3 source channels, 3 destination
 * channels and a filler byte. */
#define JOB_PLANES 7

/* ---- the pipeline ------------------------------------------------------------ */

static void release_resources(batch_resources *r)
{
  if (r->table)
    vk_buffer_destroy(r->device, r->table);
  if (r->pool)
    vkDestroyDescriptorPool(r->device->device, r->pool, NULL);
  free(r);
}

static void destroy_pipeline(VkDevice device, vk_vpp_pipeline *vpp)
{
  while (vpp->spares) {
    batch_resources *r = vpp->spares;
    vpp->spares = r->next;
    release_resources(r);
  }
  pthread_mutex_destroy(&vpp->spares_lock);
  if (vpp->pipeline)
    vkDestroyPipeline(device, vpp->pipeline, NULL);
  if (vpp->layout)
    vkDestroyPipelineLayout(device, vpp->layout, NULL);
  if (vpp->set_layout)
    vkDestroyDescriptorSetLayout(device, vpp->set_layout, NULL);
  free(vpp);
}

/* Why the device cannot run vpp.comp, or NULL. */
static const char *missing_feature(npu_hal_device *device)
{
  if (!device->buffer_array_indexing)
    return "shaderStorageBufferArrayDynamicIndexing";
  const VkPhysicalDeviceLimits *limits = &device->properties.limits;
  if (limits->maxPerStageDescriptorStorageBuffers < VPP_BINDINGS ||
      limits->maxDescriptorSetStorageBuffers < VPP_BINDINGS)
    return "17 storage buffers per shader";
  return NULL;
}

static VkResult create_pipeline(npu_hal_device *device, vk_vpp_pipeline *vpp)
{
  VkDescriptorSetLayoutBinding bindings[2] = {
      {.binding = 0, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1,
       .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT},
      {.binding = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
       .descriptorCount = VPP_PLANE_BUFFERS, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT}};
  VkDescriptorSetLayoutCreateInfo set_info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = 2,
      .pBindings = bindings};
  VkResult result = vkCreateDescriptorSetLayout(device->device, &set_info, NULL, &vpp->set_layout);
  if (result != VK_SUCCESS)
    return result;
  VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
                               .size = sizeof(uint32_t)};
  VkPipelineLayoutCreateInfo layout_info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                            .setLayoutCount = 1, .pSetLayouts = &vpp->set_layout,
                                            .pushConstantRangeCount = 1,
                                            .pPushConstantRanges = &range};
  result = vkCreatePipelineLayout(device->device, &layout_info, NULL, &vpp->layout);
  if (result != VK_SUCCESS)
    return result;
  result = vk_compute_pipeline_create(device->device, vpp->layout, device->pipeline_cache,
                                      vpp_spirv, sizeof vpp_spirv, &vpp->pipeline);
  if (result == VK_SUCCESS)
    vk_pipeline_cache_save(device);
  return result;
}

/* The device's VPP pipeline, made on its first batch. */
static npu_status ensure_pipeline(npu_hal_device *device, vk_vpp_pipeline **out)
{
  npu_status status = NPU_OK;
  pthread_mutex_lock(&device->pipelines_lock);
  const char *missing = device->vpp ? NULL : missing_feature(device);
  if (missing) {
    status = npu_set_error(NPU_ERROR_NOT_SUPPORTED, "Vulkan device '%s' has no %s, which the "
                           "VPP shader needs", device->properties.deviceName, missing);
  } else if (!device->vpp) {
    vk_vpp_pipeline *vpp = calloc(1, sizeof *vpp);
    if (vpp)
      pthread_mutex_init(&vpp->spares_lock, NULL);
    if (!vpp) {
      status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for the VPP pipeline");
    } else {
      VkResult result = create_pipeline(device, vpp);
      if (result == VK_SUCCESS) {
        device->vpp = vpp;
      } else {
        destroy_pipeline(device->device, vpp);
        status = npu_set_error(vk_status_of(result), "Vulkan device '%s' cannot create the "
                               "VPP pipeline: %s", device->properties.deviceName,
                               vk_result_name(result));
      }
    }
  }
  *out = device->vpp;
  pthread_mutex_unlock(&device->pipelines_lock);
  return status;
}

void vk_vpp_counts_of(npu_hal_device *device, vk_vpp_counts *counts)
{
  *counts = (vk_vpp_counts){0};
  pthread_mutex_lock(&device->pipelines_lock);
  vk_vpp_pipeline *vpp = device->vpp;
  pthread_mutex_unlock(&device->pipelines_lock);
  if (!vpp)
    return;
  pthread_mutex_lock(&vpp->spares_lock);
  *counts = vpp->counts;
  pthread_mutex_unlock(&vpp->spares_lock);
}

void vk_vpp_destroy(npu_hal_device *device)
{
  if (device->vpp)
    destroy_pipeline(device->device, device->vpp);
  device->vpp = NULL;
}

/* ---- planning ---------------------------------------------------------------- */

static uint32_t job_grids(const npu_hal_vpp_batch *batch, const npu_hal_vpp_job *job,
                          grid grids[2])
{
  if (batch->kind == NPU_HAL_VPP_TENSOR) {
    grids[0] = (grid){batch->tensor.width, batch->tensor.height, 1, 1, false,
                      batch->tensor.width, batch->tensor.height};
    return 1;
  }
  const npu_hal_vpp_image *dst = &job->dst;
  grids[0] = (grid){dst->width, dst->height, 1, 1, false, dst->width, dst->height};
  const npu_hal_vpp_channel *chroma = &dst->channels[1];
  if (dst->channel_count < 3 || (chroma->sub_x == 1 && chroma->sub_y == 1))
    return 1;
  grids[1] = (grid){vpp_div_up(dst->width, chroma->sub_x), vpp_div_up(dst->height, chroma->sub_y),
                    chroma->sub_x, chroma->sub_y, true, dst->width, dst->height};
  return 2;
}

static size_t tensor_slot_bytes(const npu_hal_vpp_tensor *t)
{
  return (size_t)t->width * t->height * 3 * (t->float32 ? sizeof(float) : 1);
}

/* Bytes from a channel's first byte to its last one past. */
static size_t channel_extent(const npu_hal_vpp_channel *ch, uint32_t width, uint32_t height)
{
  return (size_t)(vpp_div_up(height, ch->sub_y) - 1) * ch->row_stride +
         (size_t)(vpp_div_up(width, ch->sub_x) - 1) * ch->pixel_stride + 1;
}

/* Every plane a job reads or writes, and how far it reaches. */
static uint32_t job_planes(const npu_hal_vpp_batch *batch, const npu_hal_vpp_job *job,
                           npu_hal_mem_ref refs[JOB_PLANES], size_t extents[JOB_PLANES])
{
  uint32_t count = 0;
  const npu_hal_vpp_image *src = &job->src;
  for (uint32_t c = 0; c < src->channel_count; c++, count++) {
    refs[count] = src->channels[c].base;
    extents[count] = channel_extent(&src->channels[c], src->width, src->height);
  }
  if (batch->kind == NPU_HAL_VPP_TENSOR) {
    refs[count] = job->tensor_slot;
    extents[count++] = tensor_slot_bytes(&batch->tensor);
    return count;
  }
  const npu_hal_vpp_image *dst = &job->dst;
  for (uint32_t c = 0; c < dst->channel_count; c++, count++) {
    refs[count] = dst->channels[c].base;
    extents[count] = channel_extent(&dst->channels[c], dst->width, dst->height);
  }
  if (dst->has_filler) {
    refs[count] = dst->filler.base;
    extents[count++] = channel_extent(&dst->filler, dst->width, dst->height);
  }
  return count;
}

static int binding_of(const dispatch_group *group, const npu_hal_buffer *buffer)
{
  for (uint32_t b = 0; b < group->binding_count; b++)
    if (group->bindings[b].buffer == buffer)
      return (int)b;
  return -1;
}

/* Adds the job's planes to the group if its buffers fit; false otherwise. */
static bool group_add_job(dispatch_group *group, const npu_hal_vpp_batch *batch,
                          const npu_hal_vpp_job *job)
{
  npu_hal_mem_ref refs[JOB_PLANES];
  size_t extents[JOB_PLANES];
  uint32_t count = job_planes(batch, job, refs, extents);
  uint32_t added = 0;
  npu_hal_buffer *new_buffers[JOB_PLANES];
  for (uint32_t i = 0; i < count; i++) {
    bool known = binding_of(group, refs[i].buffer) >= 0;
    for (uint32_t j = 0; j < added && !known; j++)
      known = new_buffers[j] == refs[i].buffer;
    if (!known)
      new_buffers[added++] = refs[i].buffer;
  }
  if (group->binding_count + added > VPP_PLANE_BUFFERS)
    return false;
  for (uint32_t i = 0; i < count; i++) {
    int b = binding_of(group, refs[i].buffer);
    if (b < 0) {
      b = (int)group->binding_count++;
      group->bindings[b] = (plane_binding){refs[i].buffer, vk_offset(refs[i]), vk_offset(refs[i])};
    }
    plane_binding *binding = &group->bindings[b];
    if (vk_offset(refs[i]) < binding->start)
      binding->start = vk_offset(refs[i]);
    if (vk_offset(refs[i]) + extents[i] > binding->end)
      binding->end = vk_offset(refs[i]) + extents[i];
  }
  grid grids[2];
  uint32_t grid_count = job_grids(batch, job, grids);
  for (uint32_t g = 0; g < grid_count; g++) {
    group->max_width = grids[g].width > group->max_width ? grids[g].width : group->max_width;
    group->max_height = grids[g].height > group->max_height ? grids[g].height : group->max_height;
  }
  group->job_count++;
  group->item_count += grid_count;
  return true;
}

/* Splits the jobs into dispatch groups, each binding at most
 * VPP_PLANE_BUFFERS buffers, each binding starting at an offset the device
 * accepts and spanning whole words within its storage buffer range. */
static npu_status plan_groups(npu_hal_device *device, const npu_hal_vpp_batch *batch,
                              dispatch_group *groups, size_t *group_count)
{
  for (size_t j = 0; j < batch->job_count; j++) {
    npu_hal_mem_ref refs[JOB_PLANES];
    size_t extents[JOB_PLANES];
    uint32_t count = job_planes(batch, &batch->jobs[j], refs, extents);
    for (uint32_t i = 0; i < count; i++)
      if (!refs[i].buffer)
        return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                             "the Vulkan VPP takes device buffers, not host memory (job %zu)", j);
  }
  size_t count = 0;
  for (size_t j = 0; j < batch->job_count; j++) {
    if (count == 0 || !group_add_job(&groups[count - 1], batch, &batch->jobs[j])) {
      dispatch_group *group = &groups[count++];
      memset(group, 0, sizeof *group);
      group->first_job = j;
      if (count > 1)
        group->first_item = groups[count - 2].first_item + groups[count - 2].item_count;
      group_add_job(group, batch, &batch->jobs[j]); /* a job alone always fits */
    }
  }
  const VkPhysicalDeviceLimits *limits = &device->properties.limits;
  VkDeviceSize align = limits->minStorageBufferOffsetAlignment > 4
                           ? limits->minStorageBufferOffsetAlignment
                           : 4;
  for (size_t g = 0; g < count; g++)
    for (uint32_t b = 0; b < groups[g].binding_count; b++) {
      plane_binding *binding = &groups[g].bindings[b];
      binding->start = binding->start / align * align;
      binding->end = (binding->end + 3) / 4 * 4; /* buffers are whole words (vk_memory.c) */
      if (binding->end - binding->start > limits->maxStorageBufferRange)
        return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                             "VPP: planes spanning %llu bytes of one buffer exceed Vulkan device "
                             "'%s''s storage buffer range of %u bytes",
                             (unsigned long long)(binding->end - binding->start),
                             device->properties.deviceName, limits->maxStorageBufferRange);
    }
  *group_count = count;
  return NPU_OK;
}

/* ---- the table ----------------------------------------------------------------- */

/* Writes into table (NULL: only counts) from word `next` on. */
typedef struct table_writer {
  uint32_t *words;
  size_t next;
} table_writer;

static void put_word(table_writer *w, size_t at, uint32_t value)
{
  if (w->words)
    w->words[at] = value;
}

static void put_float(table_writer *w, size_t at, float value)
{
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  put_word(w, at, bits);
}

static void put_plane(table_writer *w, size_t at, const dispatch_group *group,
                      const npu_hal_vpp_channel *ch)
{
  const plane_binding *binding = &group->bindings[binding_of(group, ch->base.buffer)];
  put_word(w, at + VPP_PLANE_SLOT, (uint32_t)(binding - group->bindings));
  put_word(w, at + VPP_PLANE_OFFSET, (uint32_t)(vk_offset(ch->base) - binding->start));
  put_word(w, at + VPP_PLANE_PIXEL_STRIDE, ch->pixel_stride);
  put_word(w, at + VPP_PLANE_ROW_STRIDE, ch->row_stride);
}

static void put_matrix(table_writer *w, size_t at, const float m[3][4])
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      put_float(w, at + 4 * i + j, m[i][j]);
}

/* One axis's taps of each source channel: channels with the same
 * subsampling share a set. */
static void put_axis_taps(table_writer *w, size_t at, int method, const npu_hal_vpp_job *job,
                          bool rows, uint8_t out_sub, uint32_t out_len, uint32_t begin,
                          uint32_t end)
{
  const npu_hal_vpp_image *src = &job->src;
  uint32_t set_of[3];
  uint8_t subs[3];
  size_t n = end - begin;
  for (uint32_t c = 0; c < src->channel_count; c++) {
    const npu_hal_vpp_channel *ch = &src->channels[c];
    subs[c] = rows ? ch->sub_y : ch->sub_x;
    uint32_t shared = c;
    for (uint32_t k = 0; k < c && shared == c; k++)
      shared = subs[k] == subs[c] ? k : c;
    if (shared < c) {
      set_of[c] = set_of[shared];
    } else {
      set_of[c] = (uint32_t)w->next;
      w->next += 3 * n;
      if (w->words) {
        uint32_t *set = w->words + set_of[c];
        npu_vpp_taps taps = {(int32_t *)set, (int32_t *)set + n, (float *)(set + 2 * n)};
        if (rows)
          npu_vpp_make_taps(method, begin, end, out_sub, out_len, job->dst_y, job->dst_h, job->crop_y,
                            job->crop_h, job->flip_y, subs[c], vpp_div_up(src->height, subs[c]),
                            1, &taps);
        else
          npu_vpp_make_taps(method, begin, end, out_sub, out_len, job->dst_x, job->dst_w, job->crop_x,
                            job->crop_w, job->flip_x, subs[c], vpp_div_up(src->width, subs[c]),
                            1, &taps);
      }
    }
    put_word(w, at + c, set_of[c]);
  }
}

static void put_destination(table_writer *w, size_t item, const npu_hal_vpp_batch *batch,
                            const dispatch_group *group, const npu_hal_vpp_job *job,
                            const grid *g)
{
  if (batch->kind == NPU_HAL_VPP_TENSOR) {
    npu_hal_vpp_channel slot = {job->tensor_slot, 0, 0, 1, 1};
    put_plane(w, item + VPP_DST, group, &slot);
    return;
  }
  const npu_hal_vpp_image *dst = &job->dst;
  /* The full-resolution grid writes the chroma too unless it has its own grid. */
  bool chroma_here = dst->channel_count == 3 && dst->channels[1].sub_x == 1 &&
                     dst->channels[1].sub_y == 1;
  put_word(w, item + VPP_DST_FIRST, g->chroma ? 1 : 0);
  put_word(w, item + VPP_DST_LAST, g->chroma || chroma_here ? dst->channel_count : 1);
  put_word(w, item + VPP_HAS_FILLER, dst->has_filler && !g->chroma);
  for (uint32_t c = 0; c < dst->channel_count; c++)
    put_plane(w, item + VPP_DST + c * VPP_PLANE_WORDS, group, &dst->channels[c]);
  if (dst->has_filler)
    put_plane(w, item + VPP_FILLER, group, &dst->filler);
  put_matrix(w, item + VPP_DST_MATRIX, dst->matrix);
}

static void put_item(table_writer *w, size_t item, const npu_hal_vpp_batch *batch,
                     const dispatch_group *group, const npu_hal_vpp_job *job, const grid *g)
{
  const npu_hal_vpp_image *src = &job->src;
  uint32_t col0, col1, row0, row1;
  npu_vpp_content_span(g->width, g->sub_x, g->frame_width, job->dst_x, job->dst_w, &col0, &col1);
  npu_vpp_content_span(g->height, g->sub_y, g->frame_height, job->dst_y, job->dst_h, &row0, &row1);
  uint32_t words[] = {g->width, g->height, col0, col1, row0, row1, src->channel_count};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    put_word(w, item + VPP_GRID_W + i, words[i]);
  put_axis_taps(w, item + VPP_COL_TAPS, batch->method, job, false, g->sub_x, g->frame_width, col0,
                col1);
  put_axis_taps(w, item + VPP_ROW_TAPS, batch->method, job, true, g->sub_y, g->frame_height, row0,
                row1);
  for (uint32_t c = 0; c < src->channel_count; c++)
    put_plane(w, item + VPP_SRC + c * VPP_PLANE_WORDS, group, &src->channels[c]);
  put_matrix(w, item + VPP_SRC_MATRIX, src->matrix);
  put_destination(w, item, batch, group, job, g);
}

static void put_header(table_writer *w, const npu_hal_vpp_batch *batch)
{
  const npu_hal_vpp_tensor *t = &batch->tensor;
  put_word(w, VPP_METHOD, (uint32_t)batch->method);
  put_word(w, VPP_KIND, batch->kind);
  put_word(w, VPP_TENSOR_W, t->width);
  put_word(w, VPP_TENSOR_H, t->height);
  put_word(w, VPP_FLOAT32, t->float32);
  put_word(w, VPP_PLANAR, t->planar);
  for (uint32_t c = 0; c < 3; c++) {
    put_float(w, VPP_PAD + c, batch->pad_rgb[c]);
    put_word(w, VPP_SOURCE_OF + c, t->source_of[c]);
    put_float(w, VPP_MEAN + c, t->mean[c]);
    put_float(w, VPP_SCALE + c, t->scale[c]);
  }
}

/* Writes the whole table (w->words NULL: only sizes it, in w->next). */
static void put_table(table_writer *w, const npu_hal_vpp_batch *batch,
                      const dispatch_group *groups, size_t group_count)
{
  put_header(w, batch);
  uint32_t item_count = groups[group_count - 1].first_item + groups[group_count - 1].item_count;
  w->next = VPP_HEADER_WORDS + (size_t)item_count * VPP_ITEM_WORDS;
  size_t item = VPP_HEADER_WORDS;
  for (size_t g = 0; g < group_count; g++)
    for (size_t j = groups[g].first_job; j < groups[g].first_job + groups[g].job_count; j++) {
      grid grids[2];
      uint32_t grid_count = job_grids(batch, &batch->jobs[j], grids);
      for (uint32_t k = 0; k < grid_count; k++, item += VPP_ITEM_WORDS)
        put_item(w, item, batch, &groups[g], &batch->jobs[j], &grids[k]);
    }
}

/* ---- recording ------------------------------------------------------------------ */

/* Points the group's descriptor set at the table and its buffers. */
static void write_descriptors(npu_hal_device *device, VkDescriptorSet set, npu_hal_buffer *table,
                              const dispatch_group *group)
{
  VkDescriptorBufferInfo table_info = {table->buffer, 0, VK_WHOLE_SIZE};
  VkDescriptorBufferInfo planes[VPP_PLANE_BUFFERS];
  for (uint32_t b = 0; b < VPP_PLANE_BUFFERS; b++) {
    /* Slots the group leaves empty are never read: any buffer will do. */
    const plane_binding *binding = &group->bindings[b < group->binding_count ? b : 0];
    planes[b] = (VkDescriptorBufferInfo){binding->buffer->buffer, binding->start,
                                         binding->end - binding->start};
  }
  VkWriteDescriptorSet writes[2] = {
      {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = 0,
       .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
       .pBufferInfo = &table_info},
      {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = 1,
       .descriptorCount = VPP_PLANE_BUFFERS, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
       .pBufferInfo = planes}};
  vkUpdateDescriptorSets(device->device, 2, writes, 0, NULL);
}

static void record_group(npu_hal_device *device, const vk_vpp_pipeline *vpp,
                         VkCommandBuffer commands, VkDescriptorSet set,
                         const dispatch_group *group)
{
  vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, vpp->layout, 0, 1, &set, 0,
                          NULL);
  const uint32_t *max_groups = device->properties.limits.maxComputeWorkGroupCount;
  uint32_t columns = vpp_div_up(group->max_width, VPP_LOCAL_SIZE);
  uint32_t rows = vpp_div_up(group->max_height, VPP_LOCAL_SIZE);
  /* Items beyond the device's largest z count: more dispatches, each its own items. */
  for (uint32_t done = 0; done < group->item_count; done += max_groups[2]) {
    uint32_t first = group->first_item + done;
    uint32_t count = group->item_count - done < max_groups[2] ? group->item_count - done
                                                               : max_groups[2];
    vkCmdPushConstants(commands, vpp->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof first,
                       &first);
    vkCmdDispatch(commands, columns, rows, count);
  }
}

/* The batch has run: its table and pool become spares (or go, past
 * MAX_SPARE_BATCHES), then the caller hears. */
static void batch_done(void *data)
{
  batch_resources *r = data;
  npu_hal_task_fn done = r->done;
  void *done_data = r->done_data;
  vk_vpp_pipeline *vpp = r->device->vpp;
  pthread_mutex_lock(&vpp->spares_lock);
  bool kept = vpp->spare_count < MAX_SPARE_BATCHES;
  if (kept) {
    r->next = vpp->spares;
    vpp->spares = r;
    vpp->spare_count++;
  }
  pthread_mutex_unlock(&vpp->spares_lock);
  if (!kept)
    release_resources(r);
  if (done)
    done(done_data);
}

/* A spare (or new) table of at least `table_bytes` and pool of at least
 * `set_count` sets, the sets allocated in `sets`. */
static npu_status take_resources(npu_hal_device *device, vk_vpp_pipeline *vpp,
                                 VkDeviceSize table_bytes, uint32_t set_count,
                                 batch_resources **out, VkDescriptorSet *sets)
{
  pthread_mutex_lock(&vpp->spares_lock);
  batch_resources *r = vpp->spares;
  if (r) {
    vpp->spares = r->next;
    vpp->spare_count--;
  }
  pthread_mutex_unlock(&vpp->spares_lock);
  if (!r && !(r = calloc(1, sizeof *r)))
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "VPP: out of host memory");
  r->device = device;
  npu_status status = NPU_OK;
  bool new_table = !r->table || r->table->size < table_bytes;
  bool new_pool = !r->pool || r->set_capacity < set_count;
  if (new_table && r->table) {
    vk_buffer_destroy(device, r->table);
    r->table = NULL;
  }
  if (new_table)
    status = vk_buffer_create(device, table_bytes, true, &r->table);
  VkResult result = VK_SUCCESS;
  if (new_pool && r->pool) {
    vkDestroyDescriptorPool(device->device, r->pool, NULL);
    r->pool = VK_NULL_HANDLE;
  }
  if (status == NPU_OK && new_pool) {
    r->set_capacity = set_count;
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, set_count * VPP_BINDINGS};
    VkDescriptorPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = set_count,
        .poolSizeCount = 1, .pPoolSizes = &size};
    result = vkCreateDescriptorPool(device->device, &pool_info, NULL, &r->pool);
  } else if (status == NPU_OK) {
    result = vkResetDescriptorPool(device->device, r->pool, 0);
  }
  for (uint32_t g = 0; g < set_count && status == NPU_OK && result == VK_SUCCESS; g++) {
    VkDescriptorSetAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                        .descriptorPool = r->pool, .descriptorSetCount = 1,
                                        .pSetLayouts = &vpp->set_layout};
    result = vkAllocateDescriptorSets(device->device, &info, &sets[g]);
  }
  if (status == NPU_OK && result != VK_SUCCESS)
    status = npu_set_error(vk_status_of(result), "VPP: cannot allocate descriptor sets: %s",
                           vk_result_name(result));
  if (status != NPU_OK) {
    release_resources(r);
    return status;
  }
  pthread_mutex_lock(&vpp->spares_lock);
  vpp->counts.batches++;
  vpp->counts.tables_made += new_table;
  vpp->counts.pools_made += new_pool;
  pthread_mutex_unlock(&vpp->spares_lock);
  *out = r;
  return NPU_OK;
}

static npu_status check_grid_limits(npu_hal_device *device, const dispatch_group *groups,
                                    size_t group_count)
{
  const uint32_t *max_groups = device->properties.limits.maxComputeWorkGroupCount;
  for (size_t g = 0; g < group_count; g++)
    if (vpp_div_up(groups[g].max_width, VPP_LOCAL_SIZE) > max_groups[0] ||
        vpp_div_up(groups[g].max_height, VPP_LOCAL_SIZE) > max_groups[1])
      return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                           "VPP: a %ux%u output exceeds Vulkan device '%s''s dispatch size",
                           groups[g].max_width, groups[g].max_height,
                           device->properties.deviceName);
  return NPU_OK;
}

static npu_status vk_vpp_submit(npu_hal_device *device, npu_hal_stream *stream,
                                npu_hal_vpp_batch *batch, npu_hal_task_fn done, void *done_data)
{
  vk_vpp_pipeline *vpp = NULL;
  batch_resources *resources = NULL;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  size_t group_count = 0;
  dispatch_group *groups = malloc(batch->job_count * sizeof *groups);
  VkDescriptorSet *sets = malloc(batch->job_count * sizeof *sets);
  npu_status status = groups && sets
                          ? ensure_pipeline(device, &vpp)
                          : npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "VPP: out of host memory");
  if (status == NPU_OK)
    status = plan_groups(device, batch, groups, &group_count);
  if (status == NPU_OK)
    status = check_grid_limits(device, groups, group_count);
  table_writer writer = {NULL, 0};
  if (status == NPU_OK) {
    put_table(&writer, batch, groups, group_count);
    status = take_resources(device, vpp, writer.next * sizeof(uint32_t), (uint32_t)group_count,
                            &resources, sets);
  }
  if (status == NPU_OK) {
    writer = (table_writer){resources->table->mapped, 0};
    put_table(&writer, batch, groups, group_count);
    resources->done = done;
    resources->done_data = done_data;
    status = vk_stream_begin(stream, &commands);
  }
  if (status == NPU_OK) {
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, vpp->pipeline);
    for (size_t g = 0; g < group_count; g++) {
      write_descriptors(device, sets[g], resources->table, &groups[g]);
      record_group(device, vpp, commands, sets[g], &groups[g]);
    }
    vk_work work = {.commands = commands, .done = batch_done, .done_data = resources};
    status = vk_stream_queue(stream, &work);
    if (status == NPU_OK)
      resources = NULL; /* batch_done's */
  }
  if (resources)
    release_resources(resources);
  free(sets);
  free(groups);
  free(batch->jobs);
  free(batch);
  return status;
}

const npu_hal_vpp_ops npu_vulkan_vpp_ops = {
    .submit = vk_vpp_submit,
};
