#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Batched matrix product:
// Y[b, m, n] = alpha * sum_k A[b, m, k] B[b, k, n] + beta * C[m, n], each
// matrix read at its own row and column strides (transposes, broadcast
// batches and bias shapes are strides; 0 where broadcast), then up to three
// fused activations (activation.glsl; their Add reads a tensor of the
// output's shape or a bias per column; a 1x1 convolution is W times each
// image). The batch is two axes: b = b0 * batch_inner + b1.
//
// Each invocation computes a block of ROWS x COLUMNS results in registers
// (tiles.h), reading ROWS elements of A and COLUMNS of B per step of k for
// ROWS * COLUMNS products: lavapipe gathers every load whose address is not
// made of push constants alone lane by lane, so loads, not arithmetic, set
// its speed, and on a GPU too an element read serves several results. A
// workgroup is TILE_INVOCATIONS blocks (x), a batch z.
#include "tiles.h"
#define ROWS MATMUL_ROWS
#define COLUMNS MATMUL_COLUMNS
layout(local_size_x = TILE_INVOCATIONS) in;

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

void main()
{
  // Blocks in row-major order over the product, numbered across workgroups
  // (a small product wastes no lanes); those past the last compute it again
  // and store nothing.
  uint column_blocks = (p.n + COLUMNS - 1u) / COLUMNS;
  uint blocks = column_blocks * ((p.m + ROWS - 1u) / ROWS);
  uint block = gl_WorkGroupID.x * TILE_INVOCATIONS + gl_LocalInvocationID.x;
  bool stored = block < blocks;
  block = min(block, blocks - 1u);
  uint first_column = (block % column_blocks) * COLUMNS;
  uint first_row = (block / column_blocks) * ROWS;
  uint batch = gl_WorkGroupID.z;
  uint b0 = batch / p.batch_inner, b1 = batch % p.batch_inner;
  // Columns and rows past the matrix read its last one (no divergent branch
  // around the loads) and are not stored.
  uint a_at[ROWS], b_at[COLUMNS];
  float sum[ROWS][COLUMNS];
  [[unroll]] for (uint j = 0u; j < COLUMNS; j++)
    b_at[j] = p.offsets[1] + b0 * p.b_batch0 + b1 * p.b_batch1 +
              min(first_column + j, p.n - 1u) * p.b_col;
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    a_at[r] = p.offsets[0] + b0 * p.a_batch0 + b1 * p.a_batch1 +
              min(first_row + r, p.m - 1u) * p.a_row;
    [[unroll]] for (uint j = 0u; j < COLUMNS; j++)
      sum[r][j] = 0.0;
  }
  for (uint k = 0u; k < p.k; k++) {
    float bv[COLUMNS];
    [[unroll]] for (uint j = 0u; j < COLUMNS; j++)
      bv[j] = b[b_at[j] + k * p.b_row];
    [[unroll]] for (uint r = 0u; r < ROWS; r++) {
      float av = a[a_at[r] + k * p.a_col];
      [[unroll]] for (uint j = 0u; j < COLUMNS; j++)
        sum[r][j] += av * bv[j];
    }
  }
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    [[unroll]] for (uint j = 0u; j < COLUMNS; j++) {
      uint row = first_row + r, column = first_column + j;
      if (stored && row < p.m && column < p.n) {
        float result = p.alpha * sum[r][j];
        if ((p.flags & 1u) != 0u)
          result += p.beta * c[p.offsets[2] + row * p.c_row + column * p.c_col];
        uint index = (batch * p.m + row) * p.n + column;
        y[p.offsets[3] + index] = activate_all(result, (p.flags & 2u) != 0u ? column : index);
      }
    }
  }
}
