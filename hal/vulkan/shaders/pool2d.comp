#version 450
// 2-D max and average pooling on plain NCHW float32 (global pooling is a
// window of the whole plane); positions outside the input are skipped.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint planes, height, width, out_height, out_width;
  uint kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w;
  uint mode; // 0 max, 1 average of the positions inside, 2 average over the whole window
} p;

void main()
{
  uint total = p.planes * p.out_height * p.out_width;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    uint ox = i % p.out_width;
    uint rest = i / p.out_width;
    uint oy = rest % p.out_height;
    uint plane = p.offsets[0] + (rest / p.out_height) * p.height * p.width;
    int y0 = int(oy * p.stride_h) - int(p.pad_top);
    int x0 = int(ox * p.stride_w) - int(p.pad_left);
    float best = uintBitsToFloat(0xff800000u); // -inf
    float sum = 0.0;
    uint inside = 0u;
    for (uint ky = 0u; ky < p.kernel_h; ky++) {
      int iy = y0 + int(ky * p.dilation_h);
      if (iy < 0 || iy >= int(p.height))
        continue;
      for (uint kx = 0u; kx < p.kernel_w; kx++) {
        int ix = x0 + int(kx * p.dilation_w);
        if (ix < 0 || ix >= int(p.width))
          continue;
        float v = x[plane + uint(iy) * p.width + uint(ix)];
        best = max(best, v);
        sum += v;
        inside++;
      }
    }
    float result = p.mode == 0u ? best
                 : sum / float(p.mode == 1u ? inside : p.kernel_h * p.kernel_w);
    y[p.offsets[1] + i] = result;
  }
}
