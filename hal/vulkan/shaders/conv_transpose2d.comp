#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Transposed 2-D convolution on plain NCHW float32: weights are
// [in channels][out channels / groups][kh][kw]; bias optional. An output
// pixel gathers the input positions whose strided window covers it.
//
// Each invocation computes CHANNELS output channels of one group at PIXELS
// output pixels of a row stride_w apart (tiles.h): pixels of one phase
// (column modulo the stride) take the same taps from neighbouring input
// columns, so per tap it reads PIXELS inputs and CHANNELS weights for
// CHANNELS * PIXELS products, as conv2d.comp does. A workgroup:
// TILE_INVOCATIONS such blocks (x) of one image (y).
#include "tiles.h"
#define CHANNELS CONV_CHANNELS
#define PIXELS CONV_PIXELS
layout(local_size_x = TILE_INVOCATIONS) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) readonly buffer Weights { float w[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint batch, channels, height, width;
  uint out_channels, out_height, out_width;
  uint kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w;
  uint groups;
  uint has_bias;
} p;

// The input index along an axis that output position `o` takes from tap
// `t`, and whether the tap lands on an input position at all: o + pad -
// t * dilation must be a multiple of the stride (shifted by whole strides
// first, so that nothing is taken modulo a negative number).
bool tap_source(uint o, uint pad, uint t, uint dilation, uint stride, uint taps, out int source)
{
  uint lift = taps * dilation; // o + pad - t * dilation >= -lift
  uint shifted = o + pad + lift * stride - t * dilation;
  source = int(shifted / stride) - int(lift);
  return shifted % stride == 0u;
}

void main()
{
  uint group_in = p.channels / p.groups;
  uint group_out = p.out_channels / p.groups;
  // Blocks numbered across workgroups: along each output row, the phases
  // in turn, each in runs of PIXELS columns; then the rows, the channel
  // blocks of each group, the groups. Those past the last compute it again
  // and store nothing.
  uint phase_columns = (p.out_width + p.stride_w - 1u) / p.stride_w;
  uint phase_blocks = (phase_columns + PIXELS - 1u) / PIXELS;
  uint row_blocks = p.stride_w * phase_blocks;
  uint pixel_blocks = p.out_height * row_blocks;
  uint channel_blocks = (group_out + CHANNELS - 1u) / CHANNELS;
  uint blocks = pixel_blocks * channel_blocks * p.groups;
  uint block = gl_WorkGroupID.x * TILE_INVOCATIONS + gl_LocalInvocationID.x;
  bool stored = block < blocks;
  block = min(block, blocks - 1u);
  uint pixel_block = block % pixel_blocks;
  uint group = block / pixel_blocks / channel_blocks;
  uint first = block / pixel_blocks % channel_blocks * CHANNELS; // within the group
  uint oy = pixel_block / row_blocks;
  uint phase = pixel_block % row_blocks / phase_blocks;
  uint ox = phase + p.stride_w * (pixel_block % phase_blocks * PIXELS); // the first pixel's
  uint n = gl_WorkGroupID.y;
  uint taps = p.kernel_h * p.kernel_w;
  float sum[CHANNELS][PIXELS];
  [[unroll]] for (uint c = 0u; c < CHANNELS; c++)
    [[unroll]] for (uint j = 0u; j < PIXELS; j++)
      sum[c][j] = 0.0;
  for (uint icg = 0u; icg < group_in; icg++) {
    uint ic = group * group_in + icg;
    uint plane = p.offsets[0] + (n * p.channels + ic) * p.height * p.width;
    uint weights = p.offsets[1] + ic * group_out * taps;
    for (uint ky = 0u; ky < p.kernel_h; ky++) {
      int iy;
      if (!tap_source(oy, p.pad_top, ky, p.dilation_h, p.stride_h, p.kernel_h, iy) || iy < 0 ||
          iy >= int(p.height))
        continue;
      uint row = plane + uint(iy) * p.width;
      for (uint kx = 0u; kx < p.kernel_w; kx++) {
        int ix0; // the first pixel's input column; the next pixels' follow it
        if (!tap_source(ox, p.pad_left, kx, p.dilation_w, p.stride_w, p.kernel_w, ix0))
          continue;
        float v[PIXELS];
        [[unroll]] for (uint j = 0u; j < PIXELS; j++) {
          int ix = ix0 + int(j);
          float value = x[row + uint(clamp(ix, 0, int(p.width) - 1))];
          v[j] = ix >= 0 && ix < int(p.width) ? value : 0.0;
        }
        uint tap = ky * p.kernel_w + kx;
        [[unroll]] for (uint c = 0u; c < CHANNELS; c++) {
          float weight = w[weights + min(first + c, group_out - 1u) * taps + tap];
          [[unroll]] for (uint j = 0u; j < PIXELS; j++)
            sum[c][j] += weight * v[j];
        }
      }
    }
  }
  [[unroll]] for (uint c = 0u; c < CHANNELS; c++) {
    uint oc = group * group_out + first + c;
    [[unroll]] for (uint j = 0u; j < PIXELS; j++) {
      uint column = ox + p.stride_w * j;
      if (stored && first + c < group_out && column < p.out_width) {
        float result = sum[c][j] + (p.has_bias != 0u ? bias[p.offsets[2] + oc] : 0.0);
        y[p.offsets[3] + ((n * p.out_channels + oc) * p.out_height + oy) * p.out_width + column] =
            result;
      }
    }
  }
}
