// matmul.comp's and matmul_tiled.comp's bindings, push constants and
// result store (the two compute the same product, blocked in registers or
// tiled in shared memory).
//
// Batched matrix product:
// Y[b, m, n] = alpha * sum_k A[b, m, k] B[b, k, n] + beta * C[m, n], each
// matrix read at its own row and column strides (transposes, broadcast
// batches and bias shapes are strides; 0 where broadcast), then up to three
// fused activations (activation.glsl; their Add reads a tensor of the
// output's shape or a bias per column; a 1x1 convolution is W times each
// image). The batch is two axes: b = b0 * batch_inner + b1.
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

// Where A's and B's matrices of batch `batch` start.
uint a_start(uint batch)
{
  return p.offsets[0] + batch / p.batch_inner * p.a_batch0 + batch % p.batch_inner * p.a_batch1;
}

uint b_start(uint batch)
{
  return p.offsets[1] + batch / p.batch_inner * p.b_batch0 + batch % p.batch_inner * p.b_batch1;
}

// Y[batch, row, column] from the product's sum: alpha, beta * C, the activations.
void store_product(uint batch, uint row, uint column, float sum)
{
  float result = p.alpha * sum;
  if ((p.flags & 1u) != 0u)
    result += p.beta * c[p.offsets[2] + row * p.c_row + column * p.c_col];
  uint index = (batch * p.m + row) * p.n + column;
  y[p.offsets[3] + index] = activate_all(result, (p.flags & 2u) != 0u ? column : index);
}
