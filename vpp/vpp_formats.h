/* Pixel-format descriptions: where each colour channel of each supported
 * format lives, and how big each plane is. */
#ifndef NPU_VPP_FORMATS_H
#define NPU_VPP_FORMATS_H

#include <npu/vpp.h>

#include "npu_hal_vpp.h"

typedef enum vpp_color_family { VPP_FAMILY_YUV, VPP_FAMILY_RGB, VPP_FAMILY_GRAY } vpp_color_family;

typedef struct vpp_channel_info {
  uint8_t plane, byte_offset, pixel_stride, sub_x, sub_y;
} vpp_channel_info;

typedef struct vpp_plane_info {
  uint8_t sub_x, sub_y; /* plane grid = image size / sub, rounded up */
  uint8_t group_bytes;  /* bytes per grid pixel */
} vpp_plane_info;

typedef struct vpp_format_info {
  uint32_t fourcc;
  const char *name;
  vpp_color_family family;
  uint8_t plane_count;
  uint8_t channel_count;
  vpp_channel_info channels[3]; /* Y,U,V / R,G,B / gray */
  int8_t filler_offset;         /* byte of x/A in a pixel, -1: none */
  vpp_plane_info planes[3];
} vpp_format_info;

/* NULL for a format the VPP does not know. */
const vpp_format_info *vpp_format_lookup(uint32_t fourcc);

#endif
