// The convolution shaders' (conv2d.comp, conv2d_tiled.comp, depthwise.comp)
// bindings, push constants and output store, on plain NCHW float32: bias
// and up to three fused activations (activation.glsl).
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

// Output channel `channel` of image `image` at output pixel `pixel` from
// its sum: the bias, then the activations.
void store_conv(uint image, uint channel, uint pixel, float sum)
{
  if ((p.flags & 1u) != 0u)
    sum += bias[p.offsets[2] + channel];
  uint index = (image * p.out_channels + channel) * p.out_height * p.out_width + pixel;
  y[p.offsets[3] + index] = activate_all(sum, index);
}
