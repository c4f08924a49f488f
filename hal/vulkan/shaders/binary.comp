#version 450
// Elementwise functions of two tensors of one shape, or of a tensor and a
// scalar (an input whose step is 0).
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[5];
  uint count;
  uint op;         // 0 Add, 1 Sub, 2 Mul, 3 Div
  uint a_step, b_step;
} p;

void main()
{
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) {
    float u = a[p.offsets[0] + i * p.a_step];
    float v = b[p.offsets[1] + i * p.b_step];
    float r;
    if (p.op == 0u)
      r = u + v;
    else if (p.op == 1u)
      r = u - v;
    else if (p.op == 2u)
      r = u * v;
    else
      r = u / v;
    y[p.offsets[2] + i] = r;
  }
}
