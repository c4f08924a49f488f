#version 450
// LayerNormalization, one workgroup per row of `extent` elements (the axes
// from `axis` on): y = (x - mean) / sqrt(variance + epsilon) * scale + bias,
// scale and bias one value per element of a row (bias optional). The
// variance is taken around the mean (two passes), as the CPU backend does.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) readonly buffer Scale { float scale[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint rows, extent, has_bias;
  float epsilon;
} p;

shared float partial[64];

// The workgroup's sum of v.
float sum_of(float v)
{
  uint t = gl_LocalInvocationID.x;
  partial[t] = v;
  barrier();
  for (uint half_size = 32u; half_size > 0u; half_size >>= 1) {
    if (t < half_size)
      partial[t] += partial[t + half_size];
    barrier();
  }
  float result = partial[0];
  barrier();
  return result;
}

void main()
{
  uint t = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    uint first = p.offsets[0] + row * p.extent;
    float sum = 0.0;
    for (uint j = t; j < p.extent; j += 64u)
      sum += x[first + j];
    float mean = sum_of(sum) / float(p.extent);
    float squares = 0.0;
    for (uint j = t; j < p.extent; j += 64u) {
      float d = x[first + j] - mean;
      squares += d * d;
    }
    float inverse = inversesqrt(sum_of(squares) / float(p.extent) + p.epsilon);
    uint out_first = p.offsets[3] + row * p.extent;
    for (uint j = t; j < p.extent; j += 64u) {
      float v = (x[first + j] - mean) * inverse * scale[p.offsets[1] + j];
      y[out_first + j] = p.has_bias != 0u ? v + bias[p.offsets[2] + j] : v;
    }
  }
}
