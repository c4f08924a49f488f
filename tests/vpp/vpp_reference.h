/* A float64 reference VPP written from the definitions, independent of the
 * library's kernels: what every output value should be. */
#ifndef VPP_REFERENCE_H
#define VPP_REFERENCE_H

#include <npu/npu.h>

/* A frame in host memory: one buffer per plane as the test laid it out. */
typedef struct ref_frame {
  uint32_t format, width, height;
  const uint8_t *planes[3];
  size_t strides[3];
  npu_color_matrix matrix;
  npu_color_range range;
} ref_frame;

/* Where a job lands in the output (what the letterbox geometry says). */
typedef struct ref_placement {
  double crop_x, crop_y, crop_w, crop_h;
  double dst_x, dst_y, dst_w, dst_h;
  uint32_t frame_w, frame_h; /* the output frame's pixels */
} ref_placement;

/* RGB (0..255, clamped) of output grid position (gx, gy) of a grid whose
 * cells are sub_x x sub_y output pixels. Pixels outside the placement get
 * pad_rgb. */
void ref_output_rgb(const ref_frame *src, const ref_placement *place, npu_scale_method method,
                    uint32_t gx, uint32_t gy, uint32_t sub_x, uint32_t sub_y,
                    const uint8_t pad_rgb[3], double rgb[3]);

/* Destination channel `c` (Y,U,V / R,G,B / gray) of a frame format from RGB. */
double ref_channel_from_rgb(uint32_t format, npu_color_matrix matrix, npu_color_range range,
                            int c, const double rgb[3]);

/* Reads channel c at (x, y) of its own grid; sub_x/sub_y receive the grid's
 * subsampling. Also used to read outputs back. */
uint8_t ref_read_channel(const ref_frame *frame, int c, uint32_t x, uint32_t y);
void ref_channel_subsampling(uint32_t format, int c, uint32_t *sub_x, uint32_t *sub_y);
int ref_channel_count(uint32_t format);

#endif
