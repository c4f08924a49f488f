#version 450
#extension GL_GOOGLE_include_directive : require
// Direct 2-D convolution on plain NCHW float32: one output element per
// invocation, any kernel size, strides, pads, dilations and groups; bias and
// up to three fused activations (activation.glsl).
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) readonly buffer Weights { float w[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Output { float y[]; };
layout(set = 0, binding = 4) readonly buffer Residual { float residual[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint batch, channels, height, width;
  uint out_channels, out_height, out_width;
  uint kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w;
  uint groups;
  uint flags;           // bit 0: bias; bits 8-15: activation count
  uint activation_kinds; // kind of activation a in bits 8a..8a+7
  float activation_params[6]; // alpha, beta of each
} p;

#include "activation.glsl"

void main()
{
  uint total = p.batch * p.out_channels * p.out_height * p.out_width;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint group_in = p.channels / p.groups;
  uint group_out = p.out_channels / p.groups;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    uint ox = i % p.out_width;
    uint rest = i / p.out_width;
    uint oy = rest % p.out_height;
    rest /= p.out_height;
    uint oc = rest % p.out_channels;
    uint n = rest / p.out_channels;
    uint first_in = (oc / group_out) * group_in;
    float sum = (p.flags & 1u) != 0u ? bias[p.offsets[2] + oc] : 0.0;
    int y0 = int(oy * p.stride_h) - int(p.pad_top);
    int x0 = int(ox * p.stride_w) - int(p.pad_left);
    for (uint ic = 0u; ic < group_in; ic++) {
      uint plane = p.offsets[0] + ((n * p.channels + first_in + ic) * p.height) * p.width;
      uint taps = p.offsets[1] + ((oc * group_in + ic) * p.kernel_h) * p.kernel_w;
      for (uint ky = 0u; ky < p.kernel_h; ky++) {
        int iy = y0 + int(ky * p.dilation_h);
        if (iy < 0 || iy >= int(p.height))
          continue;
        for (uint kx = 0u; kx < p.kernel_w; kx++) {
          int ix = x0 + int(kx * p.dilation_w);
          if (ix < 0 || ix >= int(p.width))
            continue;
          sum += x[plane + uint(iy) * p.width + uint(ix)] * w[taps + ky * p.kernel_w + kx];
        }
      }
    }
    uint activations = (p.flags >> 8) & 0xffu;
    for (uint a = 0u; a < activations; a++) {
      uint kind = (p.activation_kinds >> (8u * a)) & 0xffu;
      float addend = kind == 9u ? residual[p.offsets[4] + i] : 0.0;
      sum = activate(sum, kind, p.activation_params[2u * a], p.activation_params[2u * a + 1u],
                     addend);
    }
    y[p.offsets[3] + i] = sum;
  }
}
