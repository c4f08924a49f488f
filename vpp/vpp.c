/* VPP front end: validates a batch, resolves formats into channel layouts
 * and colour matrices, computes crop and letterbox geometry, keeps the
 * buffers alive, and hands the plan to the device's VPP kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_checked.h"
#include "npu_hal_vpp.h"
#include "npu_internal.h"
#include "vpp_formats.h"

/* Buffers a queued batch keeps referenced until the device is done. */
typedef struct batch_references {
  size_t count;
  npu_buffer *buffers[];
} batch_references;

static void release_batch_references(void *data)
{
  batch_references *refs = data;
  for (size_t i = 0; i < refs->count; i++)
    npu_buffer_release(refs->buffers[i]);
  free(refs);
}

static void keep_buffer(batch_references *refs, npu_buffer *buffer)
{
  npu_buffer_retain(buffer);
  refs->buffers[refs->count++] = buffer;
}

/* Frames and tensors are at most this wide and high: with the largest pixel
 * (4 bytes) and alignment, no plane size computed from them overflows. */
#define VPP_MAX_SIDE 32768u
#define VPP_MAX_STRIDE_ALIGN 4096u

static size_t plane_row_bytes(const vpp_format_info *f, uint32_t plane, uint32_t width)
{
  return (size_t)vpp_div_up(width, f->planes[plane].sub_x) * f->planes[plane].group_bytes;
}

static uint32_t plane_rows(const vpp_format_info *f, uint32_t plane, uint32_t height)
{
  return vpp_div_up(height, f->planes[plane].sub_y);
}

NPU_API npu_status npu_image_init(npu_image *image, uint32_t format, uint32_t width,
                                  uint32_t height, uint32_t stride_align, npu_buffer *buffer,
                                  size_t offset, size_t *size)
{
  const vpp_format_info *f = vpp_format_lookup(format);
  if (!image || !size || !f || width == 0 || height == 0 || width > VPP_MAX_SIDE ||
      height > VPP_MAX_SIDE || stride_align == 0 || stride_align > VPP_MAX_STRIDE_ALIGN ||
      (stride_align & (stride_align - 1)))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_image_init: NULL argument, unknown format 0x%08x, size %ux%u not "
                         "in 1..%u or stride alignment %u not a power of two up to %u", format,
                         width, height, VPP_MAX_SIDE, stride_align, VPP_MAX_STRIDE_ALIGN);
  if (offset > SIZE_MAX / 2)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_image_init: offset %zu is beyond any "
                         "buffer", offset);
  memset(image, 0, sizeof *image);
  image->format = format;
  image->width = width;
  image->height = height;
  size_t at = offset;
  for (uint32_t p = 0; p < f->plane_count; p++) {
    size_t stride = (plane_row_bytes(f, p, width) + stride_align - 1) & ~(size_t)(stride_align - 1);
    image->planes[p] = buffer;
    image->offsets[p] = at;
    image->strides[p] = stride;
    at += stride * plane_rows(f, p, height);
  }
  *size = at - offset;
  return NPU_OK;
}

static npu_status check_image(const npu_image *image, npu_device *device, const char *what,
                              const vpp_format_info **info)
{
  if (!image)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
  const vpp_format_info *f = vpp_format_lookup(image->format);
  if (!f)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "%s: pixel format 0x%08x (%.4s) is not "
                         "supported by the VPP", what, image->format, (const char *)&image->format);
  if (image->width == 0 || image->height == 0 || image->width > VPP_MAX_SIDE ||
      image->height > VPP_MAX_SIDE)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s: size %ux%u is not in 1..%u", what,
                         image->width, image->height, VPP_MAX_SIDE);
  if (f->family == VPP_FAMILY_YUV &&
      ((unsigned)image->matrix > NPU_COLOR_BT2020 || (unsigned)image->range > NPU_RANGE_FULL))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s: unknown colour matrix or range", what);
  for (uint32_t p = 0; p < f->plane_count; p++) {
    npu_status status = npu_handle_check(image->planes[p], NPU_HANDLE_BUFFER, what);
    if (status != NPU_OK)
      return status;
    npu_device *owner;
    npu_buffer_device(image->planes[p], &owner);
    if (owner != device)
      return npu_set_error(NPU_ERROR_DEVICE_MISMATCH,
                           "%s: plane %u is on another device than the stream", what, p);
    size_t row = plane_row_bytes(f, p, image->width);
    size_t rows = plane_rows(f, p, image->height);
    /* (the backends address a plane, rotated views too, with 32-bit signed offsets) */
    if (image->strides[p] < row || image->strides[p] > INT32_MAX)
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                           "%s: %s plane %u stride %zu is below its %zu-byte rows or 2 GiB and "
                           "beyond", what, f->name, p, image->strides[p], row);
    size_t size, needed;
    npu_buffer_size(image->planes[p], &size);
    if (!npu_mul_size(image->strides[p], rows - 1, &needed) ||
        !npu_add_size(needed, row, &needed) || needed > INT32_MAX)
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                           "%s: %ux%u %s plane %u of stride %zu spans 2 GiB or more", what,
                           image->width, image->height, f->name, p, image->strides[p]);
    if (image->offsets[p] > size || needed > size - image->offsets[p])
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                           "%s: %ux%u %s plane %u needs %zu bytes at offset %zu; the buffer "
                           "has %zu", what, image->width, image->height, f->name, p, needed,
                           image->offsets[p], size);
  }
  *info = f;
  return NPU_OK;
}

/* Luma weights of each matrix. */
static void luma_weights(npu_color_matrix matrix, double *kr, double *kb)
{
  static const double weights[3][2] = {{0.299, 0.114}, {0.2126, 0.0722}, {0.2627, 0.0593}};
  *kr = weights[matrix][0];
  *kb = weights[matrix][1];
}

static void yuv_to_rgb_matrix(const npu_image *image, float m[3][4])
{
  double kr, kb;
  luma_weights(image->matrix, &kr, &kb);
  double kg = 1 - kr - kb;
  bool limited = image->range == NPU_RANGE_LIMITED;
  double ys = limited ? 255.0 / 219 : 1, yo = limited ? 16 : 0, cs = limited ? 255.0 / 224 : 1;
  double rv = 2 * (1 - kr) * cs, bu = 2 * (1 - kb) * cs;
  double gu = -2 * kb * (1 - kb) / kg * cs, gv = -2 * kr * (1 - kr) / kg * cs;
  double rows[3][3] = {{ys, 0, rv}, {ys, gu, gv}, {ys, bu, 0}};
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++)
      m[i][j] = (float)rows[i][j];
    m[i][3] = (float)(-yo * rows[i][0] - 128 * (rows[i][1] + rows[i][2]));
  }
}

static void rgb_to_yuv_matrix(const npu_image *image, float m[3][4])
{
  double kr, kb;
  luma_weights(image->matrix, &kr, &kb);
  double kg = 1 - kr - kb;
  bool limited = image->range == NPU_RANGE_LIMITED;
  double ys = limited ? 219.0 / 255 : 1, yo = limited ? 16 : 0, cs = limited ? 224.0 / 255 : 1;
  double y[3] = {kr, kg, kb};
  double u[3] = {-kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5};
  double v[3] = {0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr))};
  for (int j = 0; j < 3; j++) {
    m[0][j] = (float)(y[j] * ys);
    m[1][j] = (float)(u[j] * cs);
    m[2][j] = (float)(v[j] * cs);
  }
  m[0][3] = (float)yo;
  m[1][3] = m[2][3] = 128;
}

static void resolve_image(const npu_image *image, const vpp_format_info *f, bool destination,
                          npu_hal_vpp_image *out)
{
  memset(out, 0, sizeof *out);
  bool yuv = f->family == VPP_FAMILY_YUV;
  out->format = (npu_hal_vpp_format){f->fourcc, image->width, image->height, f->plane_count,
                                     .matrix = yuv ? image->matrix : NPU_COLOR_BT601,
                                     .range = yuv ? image->range : NPU_RANGE_FULL,
                                     .rotation = NPU_ROTATE_NONE};
  for (uint32_t p = 0; p < f->plane_count; p++) {
    out->format.planes[p] = (npu_hal_mem_ref){npu_buffer_hal(image->planes[p]), NULL,
                                              image->offsets[p]};
    out->format.pitches[p] = (uint32_t)image->strides[p];
  }
  out->width = image->width;
  out->height = image->height;
  out->channel_count = f->channel_count;
  for (uint32_t c = 0; c < f->channel_count; c++) {
    const vpp_channel_info *ch = &f->channels[c];
    out->channels[c] = (npu_hal_vpp_channel){
        {npu_buffer_hal(image->planes[ch->plane]), NULL, image->offsets[ch->plane] + ch->byte_offset},
        ch->pixel_stride, (uint32_t)image->strides[ch->plane], ch->sub_x, ch->sub_y};
  }
  if (f->filler_offset >= 0) {
    out->has_filler = destination;
    out->filler = out->channels[0];
    out->filler.base.offset = image->offsets[0] + (size_t)f->filler_offset;
  }
  switch (f->family) {
  case VPP_FAMILY_YUV:
    (destination ? rgb_to_yuv_matrix : yuv_to_rgb_matrix)(image, out->matrix);
    break;
  case VPP_FAMILY_RGB:
    for (int i = 0; i < 3; i++)
      out->matrix[i][i] = 1;
    break;
  case VPP_FAMILY_GRAY:
    if (destination) { /* BT.601 luma, full range */
      out->matrix[0][0] = 0.299f;
      out->matrix[0][1] = 0.587f;
      out->matrix[0][2] = 0.114f;
    } else {
      out->matrix[0][0] = out->matrix[1][0] = out->matrix[2][0] = 1;
    }
    break;
  }
}

/* Clamps the crop to the frame; an empty result is an error. */
static npu_status resolve_crop(const npu_vpp_job *job, size_t index, npu_hal_vpp_job *out)
{
  const npu_image *src = job->src;
  int64_t x0 = 0, y0 = 0, x1 = src->width, y1 = src->height;
  if (job->crop.width || job->crop.height) {
    x0 = job->crop.x > 0 ? job->crop.x : 0;
    y0 = job->crop.y > 0 ? job->crop.y : 0;
    x1 = (int64_t)job->crop.x + job->crop.width;
    y1 = (int64_t)job->crop.y + job->crop.height;
    if (x1 > src->width)
      x1 = src->width;
    if (y1 > src->height)
      y1 = src->height;
  }
  if (x1 <= x0 || y1 <= y0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "job %zu: crop %ux%u at (%d,%d) lies outside the %ux%u frame", index,
                         job->crop.width, job->crop.height, job->crop.x, job->crop.y,
                         src->width, src->height);
  out->crop_x = (double)x0;
  out->crop_y = (double)y0;
  out->crop_w = (double)(x1 - x0);
  out->crop_h = (double)(y1 - y0);
  return NPU_OK;
}

/* A rotation as the backend samples it: by 90 degrees the source is read
 * through a transposed view (strides, sizes, subsampling and crop swapped:
 * view (x, y) is source (y, x)), then mirrored. numpy's rot90: counter-
 * clockwise is the view with its rows reversed, clockwise with its columns
 * reversed; 180 degrees reverses both. */
static void rotate_view(npu_rotation rotation, npu_hal_vpp_job *job)
{
  job->src.format.rotation = rotation;
  if (rotation == NPU_ROTATE_90_CCW || rotation == NPU_ROTATE_90_CW) {
    npu_hal_vpp_image *src = &job->src;
    uint32_t width = src->width;
    src->width = src->height;
    src->height = width;
    for (uint32_t c = 0; c < src->channel_count; c++) {
      npu_hal_vpp_channel *ch = &src->channels[c];
      uint32_t stride = ch->pixel_stride;
      uint8_t sub = ch->sub_x;
      ch->pixel_stride = ch->row_stride;
      ch->row_stride = stride;
      ch->sub_x = ch->sub_y;
      ch->sub_y = sub;
    }
    double x = job->crop_x, w = job->crop_w;
    job->crop_x = job->crop_y;
    job->crop_w = job->crop_h;
    job->crop_y = x;
    job->crop_h = w;
  }
  job->flip_x = rotation == NPU_ROTATE_90_CW || rotation == NPU_ROTATE_180;
  job->flip_y = rotation == NPU_ROTATE_90_CCW || rotation == NPU_ROTATE_180;
}

static void place_output(const npu_vpp_params *params, uint32_t out_w, uint32_t out_h,
                         npu_hal_vpp_job *job, npu_letterbox *mapping)
{
  job->dst_x = job->dst_y = 0;
  job->dst_w = out_w;
  job->dst_h = out_h;
  if (params->letterbox) {
    double scale = fmin(out_w / job->crop_w, out_h / job->crop_h);
    if (params->max_scale > 0)
      scale = fmin(scale, params->max_scale);
    job->dst_w = (uint32_t)fmax(1, fmin(out_w, lround(job->crop_w * scale)));
    job->dst_h = (uint32_t)fmax(1, fmin(out_h, lround(job->crop_h * scale)));
    if (params->align == NPU_LETTERBOX_CENTER) {
      job->dst_x = (out_w - job->dst_w) / 2;
      job->dst_y = (out_h - job->dst_h) / 2;
    }
  }
  if (mapping && (job->flip_x || job->flip_y)) { /* in the rotated crop's coordinates */
    *mapping = (npu_letterbox){(float)(job->dst_w / job->crop_w), (float)(job->dst_h / job->crop_h),
                               (float)job->dst_x, (float)job->dst_y};
  } else if (mapping) {
    mapping->scale_x = (float)(job->dst_w / job->crop_w);
    mapping->scale_y = (float)(job->dst_h / job->crop_h);
    mapping->pad_x = (float)(job->dst_x - job->crop_x * job->dst_w / job->crop_w);
    mapping->pad_y = (float)(job->dst_y - job->crop_y * job->dst_h / job->crop_h);
  }
}

static npu_status check_params(const npu_vpp_params *params)
{
  if (!params)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "VPP params are NULL");
  if ((unsigned)params->method > NPU_SCALE_AREA || (unsigned)params->align > NPU_LETTERBOX_TOP_LEFT)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "unknown scale method %d or alignment %d",
                         params->method, params->align);
  if (!(params->max_scale >= 0) || isinf(params->max_scale))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "VPP max_scale %g is not a finite "
                         "number >= 0", params->max_scale);
  return NPU_OK;
}

static npu_status check_tensor(const npu_tensor_target *dst, npu_device *device,
                               size_t *slot_bytes)
{
  if (!dst)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "tensor target is NULL");
  npu_status status = npu_handle_check(dst->buffer, NPU_HANDLE_BUFFER, "tensor buffer");
  if (status != NPU_OK)
    return status;
  npu_device *owner;
  npu_buffer_device(dst->buffer, &owner);
  if (owner != device)
    return npu_set_error(NPU_ERROR_DEVICE_MISMATCH, "tensor buffer is on another device");
  if (dst->width == 0 || dst->height == 0 || dst->batch == 0 || dst->width > VPP_MAX_SIDE ||
      dst->height > VPP_MAX_SIDE || (unsigned)dst->dtype > NPU_TENSOR_FLOAT32 ||
      (unsigned)dst->layout > NPU_LAYOUT_NHWC || (unsigned)dst->order > NPU_ORDER_BGR)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "tensor target: empty %ux%u x%u or unknown dtype/layout/order",
                         dst->width, dst->height, dst->batch);
  for (int c = 0; c < 3; c++)
    if (!isfinite(dst->mean[c]) || !isfinite(dst->scale[c]))
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "tensor mean/scale must be finite");
  *slot_bytes = (size_t)dst->width * dst->height * 3 * (dst->dtype == NPU_TENSOR_FLOAT32 ? 4 : 1);
  size_t size, needed;
  npu_buffer_size(dst->buffer, &size);
  if (!npu_mul_size(*slot_bytes, dst->batch, &needed) || dst->offset > size ||
      needed > size - dst->offset)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "tensor target of %u x 3 x %u x %u (%zu bytes a slot) at offset %zu "
                         "does not fit its %zu-byte buffer", dst->batch, dst->height, dst->width,
                         *slot_bytes, dst->offset, size);
  return NPU_OK;
}

typedef struct vpp_request {
  npu_stream *stream;
  const npu_vpp_job *jobs;
  size_t count;
  const npu_vpp_params *params;
  const npu_tensor_target *tensor; /* or: */
  const npu_image *images;
  size_t image_count;
} vpp_request;

static npu_status plan_and_submit(const vpp_request *req)
{
  npu_status status = npu_handle_check(req->stream, NPU_HANDLE_STREAM, "stream");
  if (status != NPU_OK)
    return status;
  if (!req->jobs || req->count == 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "VPP: no jobs");
  status = check_params(req->params);
  if (status != NPU_OK)
    return status;
  npu_device *device;
  npu_stream_device(req->stream, &device);
  const npu_hal_backend *backend = npu_device_backend(device);
  if (!backend->vpp)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "the %s backend has no VPP", backend->name);

  size_t slot_bytes = 0;
  if (req->tensor)
    status = check_tensor(req->tensor, device, &slot_bytes);
  else if (!req->images || req->image_count == 0)
    status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "VPP: no destination images");
  if (status != NPU_OK)
    return status;

  npu_hal_vpp_batch *batch = calloc(1, sizeof *batch);
  npu_hal_vpp_job *jobs = calloc(req->count, sizeof *jobs);
  /* Up to 3 source planes and 3 destination planes (or the tensor) per job. */
  batch_references *refs = malloc(sizeof *refs + 6 * req->count * sizeof(npu_buffer *));
  if (!batch || !jobs || !refs) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "VPP: out of host memory planning a batch");
    goto fail;
  }
  refs->count = 0;
  for (size_t i = 0; i < req->count; i++) {
    const npu_vpp_job *job = &req->jobs[i];
    const vpp_format_info *src_format, *dst_format;
    status = check_image(job->src, device, "source image", &src_format);
    if (status != NPU_OK)
      goto fail;
    resolve_image(job->src, src_format, false, &jobs[i].src);
    status = resolve_crop(job, i, &jobs[i]);
    if (status == NPU_OK && (unsigned)job->rotation > NPU_ROTATE_90_CW)
      status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "job %zu: unknown rotation %d", i,
                             job->rotation);
    if (status != NPU_OK)
      goto fail;
    rotate_view(job->rotation, &jobs[i]);
    for (uint32_t p = 0; p < src_format->plane_count; p++)
      keep_buffer(refs, job->src->planes[p]);
    if (req->tensor) {
      if (job->slot >= req->tensor->batch) {
        status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                               "job %zu: slot %u is beyond the tensor's batch of %u", i,
                               job->slot, req->tensor->batch);
        goto fail;
      }
      place_output(req->params, req->tensor->width, req->tensor->height, &jobs[i], job->mapping);
      jobs[i].tensor_slot = (npu_hal_mem_ref){npu_buffer_hal(req->tensor->buffer), NULL,
                                              req->tensor->offset + job->slot * slot_bytes};
      keep_buffer(refs, req->tensor->buffer);
    } else {
      if (job->slot >= req->image_count) {
        status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                               "job %zu: slot %u is beyond the %zu destination images", i,
                               job->slot, req->image_count);
        goto fail;
      }
      const npu_image *dst = &req->images[job->slot];
      status = check_image(dst, device, "destination image", &dst_format);
      if (status != NPU_OK)
        goto fail;
      resolve_image(dst, dst_format, true, &jobs[i].dst);
      place_output(req->params, dst->width, dst->height, &jobs[i], job->mapping);
      for (uint32_t p = 0; p < dst_format->plane_count; p++)
        keep_buffer(refs, dst->planes[p]);
    }
  }

  batch->kind = req->tensor ? NPU_HAL_VPP_TENSOR : NPU_HAL_VPP_IMAGE;
  batch->method = req->params->method;
  for (int c = 0; c < 3; c++)
    batch->pad_rgb[c] = req->params->pad_rgb[c];
  batch->jobs = jobs;
  batch->job_count = req->count;
  if (req->tensor) {
    const npu_tensor_target *t = req->tensor;
    batch->tensor = (npu_hal_vpp_tensor){t->width, t->height, t->dtype == NPU_TENSOR_FLOAT32,
                                         t->layout == NPU_LAYOUT_NCHW};
    for (int c = 0; c < 3; c++) {
      batch->tensor.source_of[c] = (uint8_t)(t->order == NPU_ORDER_RGB ? c : 2 - c);
      batch->tensor.mean[c] = t->mean[c];
      batch->tensor.scale[c] = t->scale[c];
    }
  }
  status = backend->vpp->submit(npu_device_hal(device), npu_stream_hal(req->stream), batch,
                                release_batch_references, refs);
  if (status != NPU_OK) { /* the backend freed the batch */
    release_batch_references(refs);
    return status;
  }
  return NPU_OK;

fail:
  if (refs)
    release_batch_references(refs);
  free(jobs);
  free(batch);
  return status;
}

NPU_API npu_status npu_vpp_to_tensor(npu_stream *stream, const npu_vpp_job *jobs, size_t count,
                                     const npu_vpp_params *params, const npu_tensor_target *dst)
{
  if (!dst)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_vpp_to_tensor: dst is NULL");
  vpp_request req = {stream, jobs, count, params, dst, NULL, 0};
  return plan_and_submit(&req);
}

NPU_API npu_status npu_vpp_to_images(npu_stream *stream, const npu_vpp_job *jobs, size_t count,
                                     const npu_vpp_params *params, const npu_image *dst,
                                     size_t dst_count)
{
  vpp_request req = {stream, jobs, count, params, NULL, dst, dst_count};
  return plan_and_submit(&req);
}
