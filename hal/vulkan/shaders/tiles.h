/* The work of one invocation and workgroup of the product and convolution
 * shaders (matmul.comp, conv2d.comp, depthwise.comp), shared by them and the
 * kernel planning that sizes their dispatches (vk_kernels*.c). */
#ifndef NPU_VK_TILES_H
#define NPU_VK_TILES_H

#define TILE_INVOCATIONS 64u /* a workgroup: 64 invocations, each one block below */
#define MATMUL_ROWS 8u       /* a matmul.comp invocation computes 8 rows x 4 columns of Y */
#define MATMUL_COLUMNS 4u
#define CONV_CHANNELS 8u     /* a conv2d.comp invocation: 8 output channels x 4 pixels */
#define CONV_PIXELS 4u
#define DEPTHWISE_OUTPUTS 8u /* pixels of a row a depthwise.comp invocation computes */

#endif
