#version 450
// Elementwise functions of two tensors with numpy broadcasting: each input
// is read at its own strides over the output's axes (0 along an axis it is
// broadcast over). vk_kernels.c merges axes first, so that 6 suffice.
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint count;
  uint op;         // 0 Add, 1 Sub, 2 Mul, 3 Div, 4 Pow, 5 Max, 6 Min
  uint rank;
  uint dims[6];    // the output's, outermost first
  uint a_strides[6], b_strides[6];
} p;

// ONNX's Pow of float: a negative base with an integral exponent keeps its
// sign for odd exponents (GLSL's pow() is undefined for x < 0).
float power(float base, float exponent)
{
  if (exponent == 2.0)
    return base * base;
  float magnitude = pow(abs(base), exponent);
  if (base >= 0.0)
    return magnitude;
  if (floor(exponent) != exponent)
    return uintBitsToFloat(0x7fc00000u); // NaN
  return mod(exponent, 2.0) == 1.0 ? -magnitude : magnitude;
}

void main()
{
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) {
    uint rest = i, ia = p.offsets[0], ib = p.offsets[1];
    for (int d = int(p.rank) - 1; d >= 0; d--) {
      uint coordinate = rest % p.dims[d];
      rest /= p.dims[d];
      ia += coordinate * p.a_strides[d];
      ib += coordinate * p.b_strides[d];
    }
    float u = a[ia], v = b[ib];
    float r;
    switch (p.op) {
    case 0u: r = u + v; break;
    case 1u: r = u - v; break;
    case 2u: r = u * v; break;
    case 3u: r = u / v; break;
    case 4u: r = power(u, v); break;
    case 5u: r = max(u, v); break;
    default: r = min(u, v); break;
    }
    y[p.offsets[2] + i] = r;
  }
}
