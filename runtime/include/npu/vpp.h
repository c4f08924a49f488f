/* gst-npu runtime: VPP, the video pre-processing unit.
 *
 * Turns decoded frames into model inputs (or other frames) in one pass on a
 * device stream: crop, scale (nearest, bilinear, area), letterbox, colour
 * conversion (BT.601/709/2020, full or limited range), normalisation and
 * tensor layout, batched over many (frame, region) jobs. Inputs and outputs
 * are device buffers, so nothing is copied around it.
 *
 * Pixel formats are DRM fourcc codes (drm_fourcc.h): the constants below
 * have the same values, so DRM_FORMAT_NV12 == NPU_FORMAT_NV12. Note that DRM
 * names packed RGB by its little-endian word: GStreamer's "RGB" (bytes R, G,
 * B) is DRM_FORMAT_BGR888. */
#ifndef NPU_VPP_H
#define NPU_VPP_H

#include <npu/memory.h>
#include <npu/postprocess.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPU_FOURCC(a, b, c, d)                                                             \
  ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))

/* Constant               DRM code      GStreamer name  bytes in memory */
#define NPU_FORMAT_NV12 NPU_FOURCC('N', 'V', '1', '2')  /* NV12   Y plane, UV plane */
#define NPU_FORMAT_NV21 NPU_FOURCC('N', 'V', '2', '1')  /* NV21   Y plane, VU plane */
#define NPU_FORMAT_I420 NPU_FOURCC('Y', 'U', '1', '2')  /* I420   Y, U, V planes */
#define NPU_FORMAT_YV12 NPU_FOURCC('Y', 'V', '1', '2')  /* YV12   Y, V, U planes */
#define NPU_FORMAT_NV16 NPU_FOURCC('N', 'V', '1', '6')  /* NV16   Y plane, UV plane (4:2:2) */
#define NPU_FORMAT_NV24 NPU_FOURCC('N', 'V', '2', '4')  /* NV24   Y plane, UV plane (4:4:4) */
#define NPU_FORMAT_YUV422 NPU_FOURCC('Y', 'U', '1', '6') /* Y42B  Y, U, V planes (4:2:2) */
#define NPU_FORMAT_YUV444 NPU_FOURCC('Y', 'U', '2', '4') /* Y444  Y, U, V planes (4:4:4) */
#define NPU_FORMAT_YUY2 NPU_FOURCC('Y', 'U', 'Y', 'V')  /* YUY2   Y0 U Y1 V */
#define NPU_FORMAT_UYVY NPU_FOURCC('U', 'Y', 'V', 'Y')  /* UYVY   U Y0 V Y1 */
#define NPU_FORMAT_RGB  NPU_FOURCC('B', 'G', '2', '4')  /* RGB    R G B */
#define NPU_FORMAT_BGR  NPU_FOURCC('R', 'G', '2', '4')  /* BGR    B G R */
#define NPU_FORMAT_RGBX NPU_FOURCC('X', 'B', '2', '4')  /* RGBx   R G B x */
#define NPU_FORMAT_BGRX NPU_FOURCC('X', 'R', '2', '4')  /* BGRx   B G R x */
#define NPU_FORMAT_XRGB NPU_FOURCC('B', 'X', '2', '4')  /* xRGB   x R G B */
#define NPU_FORMAT_XBGR NPU_FOURCC('R', 'X', '2', '4')  /* xBGR   x B G R */
#define NPU_FORMAT_RGBA NPU_FOURCC('A', 'B', '2', '4')  /* RGBA   R G B A */
#define NPU_FORMAT_BGRA NPU_FOURCC('A', 'R', '2', '4')  /* BGRA   B G R A */
#define NPU_FORMAT_GRAY8 NPU_FOURCC('R', '8', ' ', ' ') /* GRAY8  Y */

typedef enum npu_color_matrix {
  NPU_COLOR_BT601 = 0,
  NPU_COLOR_BT709,
  NPU_COLOR_BT2020,
} npu_color_matrix;

typedef enum npu_color_range {
  NPU_RANGE_LIMITED = 0, /* Y 16..235, chroma 16..240 */
  NPU_RANGE_FULL,
} npu_color_range;

/* A frame in device memory. Planes may live in one buffer (same buffer,
 * different offsets) or several. Strides and offsets are in bytes. */
typedef struct npu_image {
  uint32_t format; /* NPU_FORMAT_* */
  uint32_t width, height;
  npu_buffer *planes[3];
  size_t offsets[3];
  size_t strides[3];
  npu_color_matrix matrix; /* YUV formats only */
  npu_color_range range;
} npu_image;

/* Fills `image` for a tightly packed frame of `format` in `buffer` from
 * `offset` (strides rounded up to `stride_align` bytes, a power of two).
 * *size receives the bytes the frame needs. `buffer` may be NULL to compute
 * the layout and size only. */
NPU_API npu_status npu_image_init(npu_image *image, uint32_t format, uint32_t width,
                                  uint32_t height, uint32_t stride_align, npu_buffer *buffer,
                                  size_t offset, size_t *size);

typedef struct npu_rect {
  int32_t x, y;
  uint32_t width, height; /* 0 x 0: the whole frame */
} npu_rect;

typedef enum npu_scale_method {
  NPU_SCALE_BILINEAR = 0,
  NPU_SCALE_NEAREST,
  NPU_SCALE_AREA, /* box average over each output pixel's footprint: strong downscaling */
} npu_scale_method;

typedef enum npu_tensor_dtype {
  NPU_TENSOR_UINT8 = 0,
  NPU_TENSOR_FLOAT32,
} npu_tensor_dtype;

typedef enum npu_tensor_layout {
  NPU_LAYOUT_NCHW = 0, /* planar */
  NPU_LAYOUT_NHWC,     /* interleaved */
} npu_tensor_layout;

typedef enum npu_channel_order {
  NPU_ORDER_RGB = 0,
  NPU_ORDER_BGR,
} npu_channel_order;

/* A batch of images as a tensor: N x 3 x H x W (NCHW) or N x H x W x 3. Each
 * value is (pixel - mean[c]) * scale[c], pixel in 0..255, c in the tensor's
 * channel order; uint8 tensors round and clamp. */
typedef struct npu_tensor_target {
  npu_buffer *buffer;
  size_t offset;          /* of slot 0 */
  uint32_t width, height;
  uint32_t batch;         /* slots available */
  npu_tensor_dtype dtype;
  npu_tensor_layout layout;
  npu_channel_order order;
  float mean[3];
  float scale[3];         /* 1/std; {1,1,1} with mean 0 keeps 0..255 */
} npu_tensor_target;

typedef enum npu_letterbox_align {
  NPU_LETTERBOX_CENTER = 0,
  NPU_LETTERBOX_TOP_LEFT,
} npu_letterbox_align;

typedef struct npu_vpp_params {
  npu_scale_method method;
  bool letterbox;                 /* keep the aspect ratio, pad the rest */
  npu_letterbox_align align;
  uint8_t pad_rgb[3];             /* padding colour */
  float max_scale;                /* letterbox: largest scale factor (1: never enlarge);
                                   * 0: no limit */
} npu_vpp_params;

/* How a job's crop is turned before it is scaled into its slot. */
typedef enum npu_rotation {
  NPU_ROTATE_NONE = 0,
  NPU_ROTATE_90_CCW, /* counter-clockwise: a column of text read top down becomes a row */
  NPU_ROTATE_180,
  NPU_ROTATE_90_CW,
} npu_rotation;

/* One unit of work: a region of a frame into a slot of the output. */
typedef struct npu_vpp_job {
  const npu_image *src;
  npu_rect crop;               /* region of src; clamped to the frame; 0x0 = all */
  uint32_t slot;               /* tensor: batch index; images: index into the dst array */
  npu_letterbox *mapping;      /* optional: receives frame -> output coordinates (a rotated
                                * job: its scale and padding, the crop's corner at 0, 0) */
  npu_rotation rotation;       /* of the crop, before scaling and letterbox */
} npu_vpp_job;

/* Queues `count` jobs writing slots of a tensor. Validation and the
 * mappings happen before the call returns; the pixels move on `stream`. */
NPU_API npu_status npu_vpp_to_tensor(npu_stream *stream, const npu_vpp_job *jobs, size_t count,
                                     const npu_vpp_params *params, const npu_tensor_target *dst);

/* Queues `count` jobs writing whole images (dst[job.slot], `dst_count` of
 * them), converting format and size. */
NPU_API npu_status npu_vpp_to_images(npu_stream *stream, const npu_vpp_job *jobs, size_t count,
                                     const npu_vpp_params *params, const npu_image *dst,
                                     size_t dst_count);

#ifdef __cplusplus
}
#endif
#endif
