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
#include "conv_params.glsl"

uint w_base, x_base; // the group's weights, the image's group of input planes
uint depth_taps;     // kernel_h * kernel_w
uint depth;          // an output channel's weights: its group's input channels * taps

float load_a(uint row, uint k)
{
  return w[w_base + row * depth + k];
}

float load_b(uint k, uint pixel)
{
  uint ic = k / depth_taps, tap = k % depth_taps;
  int iy = int(pixel / p.out_width * p.stride_h + tap / p.kernel_w * p.dilation_h) -
           int(p.pad_top);
  int ix = int(pixel % p.out_width * p.stride_w + tap % p.kernel_w * p.dilation_w) -
           int(p.pad_left);
  bool inside = iy >= 0 && iy < int(p.height) && ix >= 0 && ix < int(p.width);
  return inside ? x[x_base + (ic * p.height + uint(iy)) * p.width + uint(ix)] : 0.0;
}

#include "tiled_product.glsl"

void main()
{
  uint group_in = p.channels / p.groups, group_out = p.out_channels / p.groups;
  uint image = gl_WorkGroupID.z / p.groups, group = gl_WorkGroupID.z % p.groups;
  depth_taps = p.kernel_h * p.kernel_w;
  w_base = p.offsets[1] + group * group_out * group_in * depth_taps;
  depth = group_in * depth_taps;
  x_base = p.offsets[0] + (image * p.channels + group * group_in) * p.height * p.width;
  uint pixels = p.out_height * p.out_width;
  uint first_row = gl_WorkGroupID.y * TILED_ROWS, first_column = gl_WorkGroupID.x * TILED_COLUMNS;
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
