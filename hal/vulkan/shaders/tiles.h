/* The work of one invocation and workgroup of the product and convolution
 * shaders (matmul.comp, conv2d.comp, depthwise.comp, their tiled forms), shared by them and the
 * kernel planning that sizes their dispatches (vk_kernels*.c). */
#ifndef NPU_VK_TILES_H
#define NPU_VK_TILES_H

#define TILE_INVOCATIONS 64u /* a workgroup: 64 invocations, each one block below */
#define MATMUL_ROWS 8u       /* a matmul.comp invocation computes 8 rows x 4 columns of Y */
#define MATMUL_COLUMNS 4u
#define CONV_CHANNELS 8u     /* a conv2d.comp invocation: 8 output channels x 4 pixels */
#define CONV_PIXELS 4u
#define DEPTHWISE_OUTPUTS 8u /* pixels of a row a depthwise.comp invocation computes */
/* The shared-memory tiled shaders (tiled_product.glsl, for GPUs): a
 * workgroup of 16 x 16 invocations computes a 64 x 64 tile of the product,
 * each invocation 4 x 4 results (TILED_BLOCK must stay 4: a vec4 of rows and
 * one of columns), staging 16-deep slices of the operands. */
#define TILED_SIDE 16u
#define TILED_BLOCK 4u
#define TILED_DEPTH 16u
/* their shared memory: both operands' slices, A's rows padded by a vec4 */
#define TILED_SHARED_BYTES (TILED_DEPTH * (2u * TILED_SIDE * TILED_BLOCK + 4u) * 4u)

#endif
