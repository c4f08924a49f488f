/* The Vulkan VPP's job table (binding 0 of vpp.comp), shared by the shader
 * and vk_vpp.c: 32-bit words, floats as their bits. A header for the batch,
 * then one item per job and output grid (a tensor slot; a destination
 * image's full-resolution grid, and its chroma grid where subsampled), then
 * the sampling taps the items point to. Plane references are a slot in the
 * dispatch's buffer array (binding 1) and a byte offset from its start. */
#ifndef NPU_VK_VPP_TABLE_H
#define NPU_VK_VPP_TABLE_H

/* Binding 1's array: the distinct buffers one dispatch reads and writes. */
#define VPP_PLANE_BUFFERS 16u
#define VPP_LOCAL_SIZE 16u    /* workgroups of 16 x 16 output positions */

/* Header. */
#define VPP_METHOD 0u      /* npu_scale_method */
#define VPP_KIND 1u        /* npu_hal_vpp_target_kind */
#define VPP_PAD 2u         /* 3 floats: the padding's RGB */
#define VPP_TENSOR_W 5u
#define VPP_TENSOR_H 6u
#define VPP_FLOAT32 7u     /* tensor: float32, else uint8 */
#define VPP_PLANAR 8u      /* tensor: NCHW, else NHWC */
#define VPP_SOURCE_OF 9u   /* 3 words: tensor channel c takes rgb[source_of[c]] */
#define VPP_MEAN 12u       /* 3 floats */
#define VPP_SCALE 15u      /* 3 floats */
#define VPP_HEADER_WORDS 18u

/* A plane reference: 4 words. */
#define VPP_PLANE_SLOT 0u
#define VPP_PLANE_OFFSET 1u
#define VPP_PLANE_PIXEL_STRIDE 2u
#define VPP_PLANE_ROW_STRIDE 3u
#define VPP_PLANE_WORDS 4u

/* An item, from VPP_HEADER_WORDS + item * VPP_ITEM_WORDS. A tap set of n
 * positions starts at a word w of the table: first[n], second[n], weight[n]
 * (npu_vpp_taps, pixel indices). */
#define VPP_GRID_W 0u
#define VPP_GRID_H 1u
#define VPP_COL0 2u        /* content columns [col0, col1) and rows [row0, row1) */
#define VPP_COL1 3u
#define VPP_ROW0 4u
#define VPP_ROW1 5u
#define VPP_SRC_CHANNELS 6u
#define VPP_COL_TAPS 7u    /* 3 words: each source channel's column tap set */
#define VPP_ROW_TAPS 10u   /* 3 words: its row tap set */
#define VPP_SRC 13u        /* 3 planes */
#define VPP_SRC_MATRIX 25u /* 12 floats: rgb[i] = sum_j m[i][j] * channel[j] + m[i][3] */
#define VPP_DST_FIRST 37u  /* destination channels [first, last) written on this grid */
#define VPP_DST_LAST 38u
#define VPP_HAS_FILLER 39u
#define VPP_DST 40u        /* 3 planes; a tensor: its slot's buffer slot and offset */
#define VPP_FILLER 52u     /* 1 plane */
#define VPP_DST_MATRIX 56u /* 12 floats */
#define VPP_ITEM_WORDS 68u

#endif
