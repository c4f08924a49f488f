#version 450
#extension GL_GOOGLE_include_directive : require
// Batched matrix product, tiled in shared memory:
// Y[b, m, n] = alpha * sum_k A[b, m, k] B[b, k, n] + beta * C[m, n], each
// matrix read at its own row and column strides (transposes, broadcast
// batches and bias shapes are strides; 0 where broadcast), then up to three
// fused activations (activation.glsl; their Add reads a tensor of the
// output's shape or a bias per column; a 1x1 convolution is W times each
// image). The batch is two axes: b = b0 * batch_inner + b1. One 16x16
// output tile per workgroup.
layout(local_size_x = 16, local_size_y = 16) in;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) readonly buffer C { float c[]; };
layout(set = 0, binding = 3) writeonly buffer Output { float y[]; };
layout(set = 0, binding = 4) readonly buffer Residual { float residual[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint m, n, k, batch_inner;
  uint a_row, a_col, a_batch0, a_batch1;
  uint b_row, b_col, b_batch0, b_batch1;
  uint c_row, c_col;
  float alpha, beta;
  uint flags;            // bit 0: C; bit 1: the Add's input per column; 8-15: activation count
  uint activation_kinds; // kind of activation a in bits 8a..8a+7
  float activation_params[6]; // alpha, beta of each
} p;

#include "activation.glsl"

shared float tile_a[16][17];
shared float tile_b[16][17];

void main()
{
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint column = gl_WorkGroupID.x * 16u + tx, row = gl_WorkGroupID.y * 16u + ty;
  uint batch = gl_WorkGroupID.z;
  uint b0 = batch / p.batch_inner, b1 = batch % p.batch_inner;
  uint a_base = p.offsets[0] + b0 * p.a_batch0 + b1 * p.a_batch1;
  uint b_base = p.offsets[1] + b0 * p.b_batch0 + b1 * p.b_batch1;
  float sum = 0.0;
  for (uint k0 = 0u; k0 < p.k; k0 += 16u) {
    // Thread (tx, ty) loads A[row, k0 + tx] and B[k0 + ty, column].
    uint ka = k0 + tx, kb = k0 + ty;
    tile_a[ty][tx] = row < p.m && ka < p.k ? a[a_base + row * p.a_row + ka * p.a_col] : 0.0;
    tile_b[ty][tx] = kb < p.k && column < p.n ? b[b_base + kb * p.b_row + column * p.b_col]
                                              : 0.0;
    barrier();
    for (uint j = 0u; j < 16u; j++)
      sum += tile_a[ty][j] * tile_b[j][tx];
    barrier();
  }
  if (row < p.m && column < p.n) {
    float result = p.alpha * sum;
    if ((p.flags & 1u) != 0u)
      result += p.beta * c[p.offsets[2] + row * p.c_row + column * p.c_col];
    uint index = (batch * p.m + row) * p.n + column;
    for (uint a = 0u; a < ((p.flags >> 8) & 0xffu); a++) {
      uint kind = (p.activation_kinds >> (8u * a)) & 0xffu;
      uint at = (p.flags & 2u) != 0u ? column : index;
      float addend = kind == 9u ? residual[p.offsets[4] + at] : 0.0;
      result = activate(result, kind, p.activation_params[2u * a],
                        p.activation_params[2u * a + 1u], addend);
    }
    y[p.offsets[3] + index] = result;
  }
}
