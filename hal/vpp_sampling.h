/* Where each output pixel of a VPP job reads its source, as every backend
 * samples it (vpp_sampling.c): per output row or column, the source pixels
 * and weight (bilinear, nearest) or the box (area), and which positions fall
 * inside the job's destination rectangle. One definition, so that backends
 * agree to the pixel. */
#ifndef NPU_VPP_SAMPLING_H
#define NPU_VPP_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

/* Per-axis sampling of one source channel, one entry per output position. */
typedef struct npu_vpp_taps {
  int32_t *first, *second; /* bilinear/nearest: the two pixels (times `unit`); area: start, count */
  float *weight;           /* bilinear: weight of `second`; nearest: 0; area: unused */
} npu_vpp_taps;

/* The centre, in output pixels, of position i of a grid with subsampling
 * `sub` over a frame `frame_len` pixels long: the middle of the pixels it
 * covers (the last position of an odd-sized frame covers one pixel, not
 * two, so its centre stays inside the frame). */
static inline double npu_vpp_sample_centre(uint32_t i, uint8_t sub, uint32_t frame_len)
{
  double low = (double)i * sub, high = (double)(i + 1) * sub;
  return (low + (high < frame_len ? high : frame_len)) / 2;
}

/* Source-channel taps along one axis for output positions [begin, end) of a
 * grid with subsampling `out_sub` over a frame `out_len` pixels long, content
 * [content0, content0 + content_len) mapping to source [crop0, crop0 + crop_len) of a channel with `sub` and
 * `channel_len` pixels, read mirrored when `flip`. Bilinear/nearest pixel
 * indices are multiplied by `unit` (a pixel stride: byte offsets; 1: pixels).
 * `method` is an npu_scale_method. */
void npu_vpp_make_taps(int method, uint32_t begin, uint32_t end, uint8_t out_sub,
                       uint32_t out_len, double content0, double content_len, double crop0,
                       double crop_len, bool flip, uint8_t sub, uint32_t channel_len,
                       int32_t unit, npu_vpp_taps *taps);

/* [begin, end) of the positions of a `len`-long grid with subsampling `sub`
 * over a frame `frame_len` pixels long whose centres (npu_vpp_sample_centre)
 * fall in the content span [content0, content0 + content_len). */
void npu_vpp_content_span(uint32_t len, uint8_t sub, uint32_t frame_len, uint32_t content0,
                          uint32_t content_len, uint32_t *begin, uint32_t *end);

#endif
