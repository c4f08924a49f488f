#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Depthwise 2-D convolution (one input and one output channel a group) on
// plain NCHW float32 (conv_params.glsl), a square KERNEL x KERNEL window at stride STRIDE and
// dilation 1 (both given when compiling: a pipeline each), any pads; bias
// and up to three fused activations.
//
// Each invocation computes OUTPUTS neighbouring pixels of an output row,
// reading each input row's span under them once for all of their taps (a
// 3x3 window at stride 1: 6 loads for 12 products instead of 12 loads);
// lavapipe gathers every load whose address is not made of push constants
// alone lane by lane, so loads set its speed. A workgroup: TILE_INVOCATIONS
// such runs.
#include "tiles.h"
#define OUTPUTS DEPTHWISE_OUTPUTS
layout(local_size_x = TILE_INVOCATIONS) in;
const uint SPAN = (OUTPUTS - 1u) * STRIDE + KERNEL;

#include "conv_params.glsl"

void main()
{
  // Runs of OUTPUTS pixels numbered across workgroups, along the rows of
  // each plane (n * channels + c) in turn; those past the last compute it
  // again and store nothing.
  uint row_runs = (p.out_width + OUTPUTS - 1u) / OUTPUTS;
  uint plane_runs = p.out_height * row_runs;
  uint last = plane_runs * p.batch * p.channels - 1u;
  uint run = gl_WorkGroupID.x * TILE_INVOCATIONS + gl_LocalInvocationID.x;
  bool stored = run <= last;
  run = min(run, last);
  uint plane = run / plane_runs;
  uint channel = plane % p.channels;
  uint oy = run % plane_runs / row_runs;
  uint ox = run % row_runs * OUTPUTS;
  int y0 = int(oy * STRIDE) - int(p.pad_top);
  int x0 = int(ox * STRIDE) - int(p.pad_left);
  uint input_plane = p.offsets[0] + plane * p.height * p.width;
  uint taps = p.offsets[1] + channel * KERNEL * KERNEL;
  float sum[OUTPUTS];
  [[unroll]] for (uint o = 0u; o < OUTPUTS; o++)
    sum[o] = 0.0;
  [[unroll]] for (uint ky = 0u; ky < KERNEL; ky++) {
    int iy = y0 + int(ky);
    bool row_inside = iy >= 0 && iy < int(p.height);
    uint row = input_plane + uint(clamp(iy, 0, int(p.height) - 1)) * p.width;
    float span[SPAN];
    [[unroll]] for (uint s = 0u; s < SPAN; s++) {
      int ix = x0 + int(s);
      float v = x[row + uint(clamp(ix, 0, int(p.width) - 1))];
      span[s] = row_inside && ix >= 0 && ix < int(p.width) ? v : 0.0;
    }
    [[unroll]] for (uint kx = 0u; kx < KERNEL; kx++) {
      float weight = w[taps + ky * KERNEL + kx];
      [[unroll]] for (uint o = 0u; o < OUTPUTS; o++)
        sum[o] += span[o * STRIDE + kx] * weight;
    }
  }
  if (!stored)
    return;
  [[unroll]] for (uint o = 0u; o < OUTPUTS; o++)
    if (ox + o < p.out_width)
      store_conv(plane / p.channels, channel, oy * p.out_width + ox + o, sum[o]);
}
