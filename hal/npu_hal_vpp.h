/* gst-npu HAL: the VPP kernel family. vpp/ validates and resolves a batch
 * into this device-agnostic plan (channel layouts, colour matrices, source
 * and destination rectangles); a backend only samples and writes. */
#ifndef NPU_HAL_VPP_H
#define NPU_HAL_VPP_H

#include "npu_hal.h"

/* One colour channel of an image: value of pixel (x, y) of the channel's own
 * grid is the byte at base + y * row_stride + x * pixel_stride. The grid is
 * the image size divided (rounding up) by sub_x, sub_y. */
typedef struct npu_hal_vpp_channel {
  npu_hal_mem_ref base;
  uint32_t pixel_stride;
  uint32_t row_stride;
  uint8_t sub_x, sub_y;
} npu_hal_vpp_channel;

/* The image as a format and colorimetry: what a fixed-function VPP takes
 * instead of the channel views (vpp/ resolves those from it). Plane p
 * starts at planes[p], its rows pitches[p] bytes apart; width and height
 * are the frame's, before the rotation a source's view applies. */
typedef struct npu_hal_vpp_format {
  uint32_t fourcc;          /* NPU_FORMAT_*: DRM fourcc codes */
  uint32_t width, height;
  uint32_t plane_count;
  npu_hal_mem_ref planes[3];
  uint32_t pitches[3];
  npu_color_matrix matrix;  /* YUV: the frame's; RGB: BT.601; gray: BT.601 luma */
  npu_color_range range;    /* YUV: the frame's; RGB and gray: full */
  npu_rotation rotation;    /* sources: the view's rotation; destinations: none */
} npu_hal_vpp_format;

typedef struct npu_hal_vpp_image {
  npu_hal_vpp_format format;
  uint32_t width, height;
  uint32_t channel_count;          /* 1 (gray) or 3 */
  npu_hal_vpp_channel channels[3]; /* Y,U,V or R,G,B or gray */
  bool has_filler;                 /* x/A byte written as 255 (destinations) */
  npu_hal_vpp_channel filler;
  /* Source: rgb[i] = sum_j m[i][j] * channel[j] + m[i][3], with channel
   * values in 0..255 (a gray image uses channel 0 only).
   * Destination: channel[i] = sum_j m[i][j] * rgb[j] + m[i][3]. */
  float matrix[3][4];
} npu_hal_vpp_image;

typedef enum npu_hal_vpp_target_kind {
  NPU_HAL_VPP_TENSOR,
  NPU_HAL_VPP_IMAGE,
} npu_hal_vpp_target_kind;

typedef struct npu_hal_vpp_tensor {
  uint32_t width, height;
  bool float32;            /* else uint8 */
  bool planar;             /* NCHW, else NHWC */
  uint8_t source_of[3];    /* tensor channel c takes rgb[source_of[c]] */
  float mean[3], scale[3]; /* per tensor channel */
} npu_hal_vpp_tensor;

typedef struct npu_hal_vpp_job {
  npu_hal_vpp_image src;                 /* a rotation by 90 degrees: a transposed view */
  double crop_x, crop_y, crop_w, crop_h; /* source region, in source pixels */
  bool flip_x, flip_y; /* the crop read mirrored along output rows / columns (rotations) */
  uint32_t dst_x, dst_y, dst_w, dst_h;   /* where it lands in the output */
  npu_hal_mem_ref tensor_slot;           /* NPU_HAL_VPP_TENSOR: this job's slot */
  npu_hal_vpp_image dst;                 /* NPU_HAL_VPP_IMAGE: the output image */
} npu_hal_vpp_job;

typedef struct npu_hal_vpp_batch {
  npu_hal_vpp_target_kind kind;
  int method;                    /* npu_scale_method */
  float pad_rgb[3];              /* outside dst rectangles; padding is written */
  npu_hal_vpp_tensor tensor;     /* NPU_HAL_VPP_TENSOR */
  size_t job_count;
  npu_hal_vpp_job *jobs;
} npu_hal_vpp_batch;

/* Grid length of a channel subsampled by `divisor` (rounding up). */
static inline uint32_t vpp_div_up(uint32_t value, uint32_t divisor)
{
  return (value + divisor - 1) / divisor;
}

struct npu_hal_vpp_ops {
  /* Queues the batch on `stream`; takes ownership of `batch` (and its jobs
   * array) and frees both with free() when done, then calls done(done_data). */
  npu_status (*submit)(npu_hal_device *device, npu_hal_stream *stream, npu_hal_vpp_batch *batch,
                       npu_hal_task_fn done, void *done_data);
};

#endif
