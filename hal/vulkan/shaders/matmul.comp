#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// The batched matrix product of matmul_params.glsl, blocked in registers
// (the shader for CPU drivers such as lavapipe; matmul_tiled.comp is the
// GPUs').
//
// Each invocation computes a block of ROWS x COLUMNS results in registers
// (tiles.h), reading ROWS elements of A and COLUMNS of B per step of k for
// ROWS * COLUMNS products: lavapipe gathers every load whose address is not
// made of push constants alone lane by lane, so loads, not arithmetic, set
// its speed. A workgroup is TILE_INVOCATIONS blocks (x), a batch z.
#include "tiles.h"
#define ROWS MATMUL_ROWS
#define COLUMNS MATMUL_COLUMNS
layout(local_size_x = TILE_INVOCATIONS) in;

#include "matmul_params.glsl"

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
  // Columns and rows past the matrix read its last one (no divergent branch
  // around the loads) and are not stored.
  uint a_at[ROWS], b_at[COLUMNS];
  float sum[ROWS][COLUMNS];
  [[unroll]] for (uint j = 0u; j < COLUMNS; j++)
    b_at[j] = b_start(batch) + min(first_column + j, p.n - 1u) * p.b_col;
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    a_at[r] = a_start(batch) + min(first_row + r, p.m - 1u) * p.a_row;
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
  [[unroll]] for (uint r = 0u; r < ROWS; r++)
    [[unroll]] for (uint j = 0u; j < COLUMNS; j++)
      if (stored && first_row + r < p.m && first_column + j < p.n)
        store_product(batch, first_row + r, first_column + j, sum[r][j]);
}
