#version 450
// BatchNormalization at inference on plain N C ... float32:
// y = (x - mean[c]) * scale[c] / sqrt(var[c] + epsilon) + bias[c].
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) readonly buffer Scale { float scale[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 3) readonly buffer Mean { float mean[]; };
layout(set = 0, binding = 4) readonly buffer Variance { float variance[]; };
layout(set = 0, binding = 5) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint count, channels, inner; // inner: elements per channel of one batch item
  float epsilon;
} p;

void main()
{
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) {
    uint c = (i / p.inner) % p.channels;
    float normalized = (x[p.offsets[0] + i] - mean[p.offsets[3] + c]) /
                       sqrt(variance[p.offsets[4] + c] + p.epsilon);
    y[p.offsets[5] + i] = normalized * scale[p.offsets[1] + c] + bias[p.offsets[2] + c];
  }
}
