#version 450
// Resize of the last two axes of a stack of planes, nearest or bilinear:
// output coordinate o reads source coordinate (o + before) / scale + after
// (ONNX's coordinate modes reduce to that, vk_kernels_data.c works the
// three out; a division, as ONNX's formulas have it, so that the ties of
// nearest rounding come out as on the CPU where the division is exact).
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint planes, height, width, out_height, out_width;
  uint linear;
  uint nearest; // 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil
  float before_h, scale_h, after_h, before_w, scale_w, after_w;
} p;

int nearest_index(float source, uint size)
{
  float f = floor(source);
  float r;
  switch (p.nearest) {
  case 0u: r = source == f + 0.5 ? f : floor(source + 0.5); break;
  case 1u: r = floor(source + 0.5); break;
  case 2u: r = f; break;
  default: r = ceil(source); break;
  }
  return clamp(int(max(r, -1.0)), 0, int(size) - 1);
}

// The two taps and the second's weight along one axis.
void linear_taps(float source, uint size, out int first, out int second, out float weight)
{
  source = clamp(source, 0.0, float(size - 1u));
  first = int(floor(source));
  second = min(first + 1, int(size) - 1);
  weight = source - float(first);
}

void main()
{
  uint total = p.planes * p.out_height * p.out_width;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    uint ox = i % p.out_width;
    uint rest = i / p.out_width;
    uint oy = rest % p.out_height;
    uint plane = p.offsets[0] + (rest / p.out_height) * p.height * p.width;
    float sy = (float(oy) + p.before_h) / p.scale_h + p.after_h;
    float sx = (float(ox) + p.before_w) / p.scale_w + p.after_w;
    float result;
    if (p.linear == 0u) {
      result = x[plane + uint(nearest_index(sy, p.height)) * p.width +
                 uint(nearest_index(sx, p.width))];
    } else {
      int y0, y1, x0, x1;
      float wy, wx;
      linear_taps(sy, p.height, y0, y1, wy);
      linear_taps(sx, p.width, x0, x1, wx);
      float top = mix(x[plane + uint(y0) * p.width + uint(x0)],
                      x[plane + uint(y0) * p.width + uint(x1)], wx);
      float bottom = mix(x[plane + uint(y1) * p.width + uint(x0)],
                         x[plane + uint(y1) * p.width + uint(x1)], wx);
      result = mix(top, bottom, wy);
    }
    y[p.offsets[1] + i] = result;
  }
}
