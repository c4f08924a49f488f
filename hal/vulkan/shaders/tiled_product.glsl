// The shared-memory tiled product of matmul_tiled.comp and
// conv2d_tiled.comp (GPUs): a workgroup of TILED_SIDE x TILED_SIDE
// invocations computes a TILED_ROWS x TILED_COLUMNS tile of a product of
// `depth` terms, staging TILED_DEPTH-deep slices of both operands in shared
// memory (each element read from memory once per workgroup instead of once
// per invocation); each invocation keeps TILED_BLOCK x TILED_BLOCK sums in
// registers, rows TILED_BLOCK * ly on and columns TILED_BLOCK * lx on, and
// reads each step's operands from shared memory as one vec4 of each (2
// shared loads for 16 products).
//
// Included after the shader defines how an operand element is read:
//   float load_a(uint row, uint k);     A[row][k] of the tile's product
//   float load_b(uint k, uint column);  B[k][column]
// both called with indices inside the product only; an invocation always
// stages B's column first_column + gl_LocalInvocationIndex % TILED_COLUMNS
// (so load_b may work out per invocation what depends on the column). A
// shader defining TILED_PREPARES_SLICES also has
//   void prepare_slice(uint k0);        before each slice's staging
// (a barrier between them), e.g. to tabulate what depends on k.
#include "tiles.h"
#define TILED_ROWS (TILED_SIDE * TILED_BLOCK)
#define TILED_COLUMNS (TILED_SIDE * TILED_BLOCK)
#define TILED_THREADS (TILED_SIDE * TILED_SIDE)
layout(local_size_x = TILED_SIDE, local_size_y = TILED_SIDE) in;

// Slices stored k-major as vec4s of 4 rows or columns. A's rows of a slice
// are padded by a vec4 (TILED_PAD): it is staged along k (contiguous in a
// row-major A), so the invocations writing 16 k of one row hit 8 banks
// twice rather than one bank 16 times.
#define TILED_PAD 1u
shared vec4 tile_a[TILED_DEPTH][TILED_ROWS / 4u + TILED_PAD];
shared vec4 tile_b[TILED_DEPTH][TILED_COLUMNS / 4u];

// sum[i][j] = the product at (first_row + TILED_BLOCK ly + i,
// first_column + TILED_BLOCK lx + j) of rows x columns, zero past them.
void tiled_product(uint rows, uint columns, uint depth, uint first_row, uint first_column,
                   out vec4 sum[TILED_BLOCK])
{
  uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
  uint thread = ly * TILED_SIDE + lx;
  [[unroll]] for (uint i = 0u; i < TILED_BLOCK; i++)
    sum[i] = vec4(0.0);
  for (uint k0 = 0u; k0 < depth; k0 += TILED_DEPTH) {
#ifdef TILED_PREPARES_SLICES
    prepare_slice(k0);
    barrier();
#endif
    // Each invocation stages TILED_ROWS * TILED_DEPTH / TILED_THREADS
    // elements of each operand: A along k (rows are contiguous in k where
    // A is row-major: weights, MatMul's A), B along its columns.
    [[unroll]] for (uint i = 0u; i < TILED_ROWS * TILED_DEPTH / TILED_THREADS; i++) {
      uint e = thread + TILED_THREADS * i;
      uint kk = e % TILED_DEPTH, r = e / TILED_DEPTH;
      uint row = first_row + r, k = k0 + kk;
      tile_a[kk][r / 4u][r % 4u] = row < rows && k < depth ? load_a(row, k) : 0.0;
    }
    [[unroll]] for (uint i = 0u; i < TILED_COLUMNS * TILED_DEPTH / TILED_THREADS; i++) {
      uint e = thread + TILED_THREADS * i;
      uint cc = e % TILED_COLUMNS, kk = e / TILED_COLUMNS;
      uint column = first_column + cc, k = k0 + kk;
      tile_b[kk][cc / 4u][cc % 4u] = column < columns && k < depth ? load_b(k, column) : 0.0;
    }
    barrier();
    [[unroll]] for (uint kk = 0u; kk < TILED_DEPTH; kk++) {
      vec4 av = tile_a[kk][ly], bv = tile_b[kk][lx];
      [[unroll]] for (uint i = 0u; i < TILED_BLOCK; i++)
        sum[i] += av[i] * bv;
    }
    barrier();
  }
}
