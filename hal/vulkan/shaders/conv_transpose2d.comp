#version 450
// Transposed 2-D convolution on plain NCHW float32, one output element per
// invocation: it gathers the input positions whose strided window covers
// it. Weights are [in channels][out channels / groups][kh][kw]; bias optional.
layout(local_size_x = 64) in;

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
    uint group = oc / group_out, oc_in_group = oc % group_out;
    float sum = p.has_bias != 0u ? bias[p.offsets[2] + oc] : 0.0;
    for (uint icg = 0u; icg < group_in; icg++) {
      uint ic = group * group_in + icg;
      uint plane = p.offsets[0] + (n * p.channels + ic) * p.height * p.width;
      uint taps = p.offsets[1] + (ic * group_out + oc_in_group) * p.kernel_h * p.kernel_w;
      for (uint ky = 0u; ky < p.kernel_h; ky++) {
        int ty = int(oy + p.pad_top) - int(ky * p.dilation_h);
        if (ty < 0 || ty % int(p.stride_h) != 0 || ty / int(p.stride_h) >= int(p.height))
          continue;
        uint iy = uint(ty) / p.stride_h;
        for (uint kx = 0u; kx < p.kernel_w; kx++) {
          int tx = int(ox + p.pad_left) - int(kx * p.dilation_w);
          if (tx < 0 || tx % int(p.stride_w) != 0 || tx / int(p.stride_w) >= int(p.width))
            continue;
          sum += x[plane + iy * p.width + uint(tx) / p.stride_w] * w[taps + ky * p.kernel_w + kx];
        }
      }
    }
    y[p.offsets[3] + i] = sum;
  }
}
