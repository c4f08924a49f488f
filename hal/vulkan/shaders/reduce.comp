#version 450
// Reductions over any axes, and (Log)Softmax along one, a workgroup per
// row: a row is one index of the kept axes, its `extent` elements are the
// reduced axes' (both walked at their own strides, up to 4 axes each after
// vk_kernels_math.c merged what it could). ReduceX writes one value per
// row (rows in order: the output's elements), Softmax and LogSoftmax the
// whole row where it was read.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint rows, extent;
  uint mode; // 0 sum, 1 mean, 2 max, 3 min, 4 softmax, 5 log-softmax, 6 prod, 7 L1, 8 L2,
             // 9 sum of squares, 10 log of the sum, 11 log-sum-exp
  uint kept_rank, reduced_rank;
  uint kept_dims[4], kept_strides[4];
  uint reduced_dims[4], reduced_strides[4];
} p;

const uint SUM = 0u, MAX = 2u, MIN = 3u, PRODUCT = 6u; // how values combine

shared float partial[64];

// (GLSL's max and min may drop a NaN; ONNX's extremes keep it, as the sum does.)
float combine_two(float a, float b, uint how)
{
  if ((how == MAX || how == MIN) && (isnan(a) || isnan(b)))
    return a + b;
  return how == SUM ? a + b : how == MAX ? max(a, b) : how == MIN ? min(a, b) : a * b;
}

// Combines the workgroup's values.
float combine(float v, uint how)
{
  uint t = gl_LocalInvocationID.x;
  partial[t] = v;
  barrier();
  for (uint half_size = 32u; half_size > 0u; half_size >>= 1) {
    if (t < half_size)
      partial[t] = combine_two(partial[t], partial[t + half_size], how);
    barrier();
  }
  float result = partial[0];
  barrier();
  return result;
}

// Where the row's first element is, from the input's start.
uint row_start(uint row)
{
  uint at = 0u;
  for (int d = int(p.kept_rank) - 1; d >= 0; d--) {
    at += (row % p.kept_dims[d]) * p.kept_strides[d];
    row /= p.kept_dims[d];
  }
  return at;
}

// Where the row's j-th element is, from its first.
uint step_to(uint j)
{
  uint at = 0u;
  for (int d = int(p.reduced_rank) - 1; d >= 0; d--) {
    at += (j % p.reduced_dims[d]) * p.reduced_strides[d];
    j /= p.reduced_dims[d];
  }
  return at;
}

// The row's elements combined (`how`) after `term` of each: 0 the value,
// 1 its magnitude, 2 its square, 3 exp(value - shift).
float fold(uint first, uint how, uint term, float shift)
{
  float acc = how == SUM ? 0.0 : how == PRODUCT ? 1.0 : x[first];
  for (uint j = gl_LocalInvocationID.x; j < p.extent; j += 64u) {
    float v = x[first + step_to(j)];
    v = term == 1u ? abs(v) : term == 2u ? v * v : term == 3u ? exp(v - shift) : v;
    acc = combine_two(acc, v, how);
  }
  return combine(acc, how);
}

void main()
{
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    uint first = p.offsets[0] + row_start(row);
    if (p.mode == 4u || p.mode == 5u) { // (Log)Softmax: the row shifted by its largest
      float top = fold(first, MAX, 0u, 0.0);
      float sum = fold(first, SUM, 3u, top);
      uint out_first = first - p.offsets[0] + p.offsets[1];
      for (uint j = gl_LocalInvocationID.x; j < p.extent; j += 64u) {
        uint at = step_to(j);
        float shifted = x[first + at] - top;
        y[out_first + at] = p.mode == 4u ? exp(shifted) / sum : shifted - log(sum);
      }
      continue;
    }
    float result;
    switch (p.mode) {
    case 1u: result = fold(first, SUM, 0u, 0.0) / float(p.extent); break;
    case 2u: result = fold(first, MAX, 0u, 0.0); break;
    case 3u: result = fold(first, MIN, 0u, 0.0); break;
    case 6u: result = fold(first, PRODUCT, 0u, 0.0); break;
    case 7u: result = fold(first, SUM, 1u, 0.0); break;
    case 8u: result = sqrt(fold(first, SUM, 2u, 0.0)); break;
    case 9u: result = fold(first, SUM, 2u, 0.0); break;
    case 10u: result = log(fold(first, SUM, 0u, 0.0)); break;
    case 11u: {
      float top = fold(first, MAX, 0u, 0.0);
      result = top + log(fold(first, SUM, 3u, top));
      break;
    }
    default: result = fold(first, SUM, 0u, 0.0); break;
    }
    if (gl_LocalInvocationID.x == 0u)
      y[p.offsets[1] + row] = result;
  }
}
