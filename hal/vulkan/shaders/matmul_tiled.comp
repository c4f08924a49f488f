#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// The batched matrix product of matmul_params.glsl, tiled in shared memory
// for GPUs (tiled_product.glsl): a workgroup per TILED_ROWS x TILED_COLUMNS
// tile of Y (x: column tiles, y: row tiles, z: the batch).
#include "matmul_params.glsl"

uint a_base, b_base; // the batch's matrices

float load_a(uint row, uint k)
{
  return a[a_base + row * p.a_row + k * p.a_col];
}

float load_b(uint k, uint column)
{
  return b[b_base + k * p.b_row + column * p.b_col];
}

#include "tiled_product.glsl"

void main()
{
  uint batch = gl_WorkGroupID.z;
  a_base = a_start(batch);
  b_base = b_start(batch);
  uint first_row = gl_WorkGroupID.y * TILED_ROWS, first_column = gl_WorkGroupID.x * TILED_COLUMNS;
  vec4 sum[TILED_BLOCK];
  tiled_product(p.m, p.n, p.k, first_row, first_column, sum);
  [[unroll]] for (uint i = 0u; i < TILED_BLOCK; i++) {
    uint row = first_row + TILED_BLOCK * gl_LocalInvocationID.y + i;
    [[unroll]] for (uint j = 0u; j < TILED_BLOCK; j++) {
      uint column = first_column + TILED_BLOCK * gl_LocalInvocationID.x + j;
      if (row < p.m && column < p.n)
        store_product(batch, row, column, sum[i][j]);
    }
  }
}
