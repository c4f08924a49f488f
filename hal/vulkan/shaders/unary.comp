#version 450
// Elementwise functions of one tensor: Relu, Sigmoid, Clip.
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[5]; // elements from each binding's start
  uint count;
  uint op;         // 0 Relu, 1 Sigmoid, 2 Clip
  float low, high;
} p;

void main()
{
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) {
    float v = x[p.offsets[0] + i];
    if (p.op == 0u)
      v = max(v, 0.0);
    else if (p.op == 1u)
      v = 1.0 / (1.0 + exp(-v));
    else
      v = min(max(v, p.low), p.high);
    y[p.offsets[1] + i] = v;
  }
}
