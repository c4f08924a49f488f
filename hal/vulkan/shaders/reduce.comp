#version 450
// Reductions along one run of axes of `extent` elements (elements `inner`
// apart), one workgroup per row: ReduceSum/Mean/Max/Min write one value
// per row, Softmax and LogSoftmax the whole row. Rows are numbered
// outer * inner + inner index.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint rows, extent, inner;
  uint mode; // 0 sum, 1 mean, 2 max, 3 min, 4 softmax, 5 log-softmax
} p;

shared float partial[64];

// Combines the workgroup's values: the sum, or the max or min.
float combine(float v, uint how)
{
  uint t = gl_LocalInvocationID.x;
  partial[t] = v;
  barrier();
  for (uint half_size = 32u; half_size > 0u; half_size >>= 1) {
    if (t < half_size) {
      float other = partial[t + half_size];
      partial[t] = how == 0u ? partial[t] + other
                 : how == 2u ? max(partial[t], other) : min(partial[t], other);
    }
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
    uint first = p.offsets[0] + (row / p.inner) * p.extent * p.inner + row % p.inner;
    if (p.mode < 4u) {
      uint how = p.mode == 1u ? 0u : p.mode;
      float acc = how == 0u ? 0.0 : x[first];
      for (uint j = t; j < p.extent; j += 64u) {
        float v = x[first + j * p.inner];
        acc = how == 0u ? acc + v : how == 2u ? max(acc, v) : min(acc, v);
      }
      float result = combine(acc, how);
      if (t == 0u)
        y[p.offsets[1] + row] = p.mode == 1u ? result / float(p.extent) : result;
      continue;
    }
    float top = x[first];
    for (uint j = t; j < p.extent; j += 64u)
      top = max(top, x[first + j * p.inner]);
    top = combine(top, 2u);
    float sum = 0.0;
    for (uint j = t; j < p.extent; j += 64u)
      sum += exp(x[first + j * p.inner] - top);
    sum = combine(sum, 0u);
    uint out_first = first - p.offsets[0] + p.offsets[1];
    for (uint j = t; j < p.extent; j += 64u) {
      float shifted = x[first + j * p.inner] - top;
      y[out_first + j * p.inner] = p.mode == 4u ? exp(shifted) / sum : shifted - log(sum);
    }
  }
}
