#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// 2-D convolution (conv_params.glsl: any kernel size, strides, pads,
// dilations and groups) as an implicit matrix product blocked in registers
// (the shader for CPU drivers such as lavapipe; conv2d_tiled.comp is the
// GPUs').
//
// Each invocation computes CHANNELS output channels of one group at PIXELS
// output pixels (tiles.h) in registers, reading per tap CHANNELS weights and
// PIXELS inputs for CHANNELS * PIXELS products: lavapipe gathers every load
// whose address is not made of push constants alone lane by lane, so loads,
// not arithmetic, set its speed. A workgroup: TILE_INVOCATIONS such blocks (x) of one
// image (y).
#include "tiles.h"
#define CHANNELS CONV_CHANNELS
#define PIXELS CONV_PIXELS
layout(local_size_x = TILE_INVOCATIONS) in;

#include "conv_params.glsl"

void main()
{
  uint group_in = p.channels / p.groups;
  uint group_out = p.out_channels / p.groups;
  uint pixels = p.out_height * p.out_width;
  // Blocks numbered across workgroups, pixels fastest, then channel blocks
  // of each group, then groups (a small image wastes no lanes); those past
  // the last compute it again and store nothing.
  uint pixel_blocks = (pixels + PIXELS - 1u) / PIXELS;
  uint channel_blocks = (group_out + CHANNELS - 1u) / CHANNELS; // per group
  uint blocks = pixel_blocks * channel_blocks * p.groups;
  uint block = gl_WorkGroupID.x * TILE_INVOCATIONS + gl_LocalInvocationID.x;
  bool stored = block < blocks;
  block = min(block, blocks - 1u);
  uint first_pixel = (block % pixel_blocks) * PIXELS;
  uint group = block / pixel_blocks / channel_blocks;
  uint first = (block / pixel_blocks % channel_blocks) * CHANNELS; // within the group
  uint n = gl_WorkGroupID.y;
  // Pixels and channels past the end compute with the last one, not stored.
  int y0[PIXELS], x0[PIXELS];
  [[unroll]] for (uint j = 0u; j < PIXELS; j++) {
    uint pixel = min(first_pixel + j, pixels - 1u);
    y0[j] = int((pixel / p.out_width) * p.stride_h) - int(p.pad_top);
    x0[j] = int((pixel % p.out_width) * p.stride_w) - int(p.pad_left);
  }
  uint taps = p.kernel_h * p.kernel_w;
  uint w_at[CHANNELS];
  float sum[CHANNELS][PIXELS];
  [[unroll]] for (uint c = 0u; c < CHANNELS; c++) {
    uint oc = group * group_out + min(first + c, group_out - 1u);
    w_at[c] = p.offsets[1] + oc * group_in * taps;
    [[unroll]] for (uint j = 0u; j < PIXELS; j++)
      sum[c][j] = 0.0;
  }
  uint plane = p.offsets[0] + (n * p.channels + group * group_in) * p.height * p.width;
  for (uint ic = 0u; ic < group_in; ic++) {
    for (uint ky = 0u; ky < p.kernel_h; ky++) {
      bool row_inside[PIXELS];
      uint row[PIXELS];
      [[unroll]] for (uint j = 0u; j < PIXELS; j++) {
        int iy = y0[j] + int(ky * p.dilation_h);
        row_inside[j] = iy >= 0 && iy < int(p.height);
        row[j] = plane + uint(clamp(iy, 0, int(p.height) - 1)) * p.width;
      }
      for (uint kx = 0u; kx < p.kernel_w; kx++) {
        float v[PIXELS];
        [[unroll]] for (uint j = 0u; j < PIXELS; j++) {
          int ix = x0[j] + int(kx * p.dilation_w);
          float value = x[row[j] + uint(clamp(ix, 0, int(p.width) - 1))];
          v[j] = row_inside[j] && ix >= 0 && ix < int(p.width) ? value : 0.0;
        }
        uint tap = (ic * p.kernel_h + ky) * p.kernel_w + kx;
        [[unroll]] for (uint c = 0u; c < CHANNELS; c++) {
          float weight = w[w_at[c] + tap];
          [[unroll]] for (uint j = 0u; j < PIXELS; j++)
            sum[c][j] += weight * v[j];
        }
      }
    }
    plane += p.height * p.width;
  }
  [[unroll]] for (uint c = 0u; c < CHANNELS; c++)
    [[unroll]] for (uint j = 0u; j < PIXELS; j++)
      if (stored && first + c < group_out && first_pixel + j < pixels)
        store_conv(n, group * group_out + first + c, first_pixel + j, sum[c][j]);
}
