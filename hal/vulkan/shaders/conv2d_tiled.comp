#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// 2-D convolution (conv_params.glsl: any kernel, strides, pads, dilations
// and groups) as an implicit matrix product tiled in shared memory for GPUs
// (tiled_product.glsl): per image and group, Y (output channels x output
// pixels) = W (output channels x input channels * taps) times the input's
// windows (input channels * taps x output pixels), read in place. A
// workgroup per tile (x: pixel tiles, y: channel tiles, z: image * groups +
// group).
#include "tiles.h"
#include "conv_params.glsl"

uint w_base, x_base; // the group's weights, the image's group of input planes
uint depth;          // an output channel's weights: its group's input channels * taps
int y0, x0;          // where the window of the invocation's staged output pixel starts

float load_a(uint row, uint k)
{
  return w[w_base + row * depth + k];
}

// Each k of a slice as an input channel and tap (made once per slice by its
// first TILED_DEPTH invocations, so that staging B divides nothing): where
// it reads relative to a window's corner, and the tap's row and column.
shared int tap_offset[TILED_DEPTH], tap_dy[TILED_DEPTH], tap_dx[TILED_DEPTH];
#define TILED_PREPARES_SLICES
void prepare_slice(uint k0)
{
  uint kk = gl_LocalInvocationIndex;
  if (kk < TILED_DEPTH) {
    uint taps = p.kernel_h * p.kernel_w;
    uint k = min(k0 + kk, depth - 1u);
    uint ic = k / taps, tap = k % taps;
    tap_dy[kk] = int(tap / p.kernel_w * p.dilation_h);
    tap_dx[kk] = int(tap % p.kernel_w * p.dilation_w);
    tap_offset[kk] = int(ic * p.height * p.width) + tap_dy[kk] * int(p.width) + tap_dx[kk];
  }
}

// (B's column is always the invocation's staged pixel, whose window starts
// at y0, x0: tiled_product.glsl stages one column per invocation)
float load_b(uint k, uint pixel)
{
  uint kk = k % TILED_DEPTH;
  int iy = y0 + tap_dy[kk], ix = x0 + tap_dx[kk];
  bool inside = iy >= 0 && iy < int(p.height) && ix >= 0 && ix < int(p.width);
  return inside ? x[uint(int(x_base) + tap_offset[kk] + y0 * int(p.width) + x0)] : 0.0;
}

#include "tiled_product.glsl"

void main()
{
  uint group_in = p.channels / p.groups, group_out = p.out_channels / p.groups;
  uint image = gl_WorkGroupID.z / p.groups, group = gl_WorkGroupID.z % p.groups;
  depth = group_in * p.kernel_h * p.kernel_w;
  w_base = p.offsets[1] + group * group_out * depth;
  x_base = p.offsets[0] + (image * p.channels + group * group_in) * p.height * p.width;
  uint pixels = p.out_height * p.out_width;
  uint first_row = gl_WorkGroupID.y * TILED_ROWS, first_column = gl_WorkGroupID.x * TILED_COLUMNS;
  uint staged = min(first_column + gl_LocalInvocationIndex % TILED_COLUMNS, pixels - 1u);
  y0 = int(staged / p.out_width * p.stride_h) - int(p.pad_top);
  x0 = int(staged % p.out_width * p.stride_w) - int(p.pad_left);
  vec4 sum[TILED_BLOCK];
  tiled_product(group_out, pixels, depth, first_row, first_column, sum);
  [[unroll]] for (uint i = 0u; i < TILED_BLOCK; i++) {
    uint row = first_row + TILED_BLOCK * gl_LocalInvocationID.y + i;
    [[unroll]] for (uint j = 0u; j < TILED_BLOCK; j++) {
      uint pixel = first_column + TILED_BLOCK * gl_LocalInvocationID.x + j;
      if (row < group_out && pixel < pixels)
        store_conv(image, group * group_out + row, pixel, sum[i][j]);
    }
  }
}
