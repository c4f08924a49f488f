/* VPP sampling geometry shared by the backends (vpp_sampling.h). Positions
 * are worked out in double precision on the host, so that a backend with
 * only float arithmetic (a GPU) reads exactly the pixels the CPU reads. */
#include <math.h>

#include <npu/npu.h>

#include "vpp_sampling.h"

void npu_vpp_make_taps(int method, uint32_t begin, uint32_t end, uint8_t out_sub,
                       uint32_t out_len, double content0, double content_len, double crop0,
                       double crop_len, bool flip, uint8_t sub, uint32_t channel_len,
                       int32_t unit, npu_vpp_taps *t)
{
  double ratio = crop_len / content_len;
  double mirror = 2 * crop0 + crop_len; /* flip: source position p is read at mirror - p */
  for (uint32_t i = begin; i < end; i++) {
    size_t k = i - begin;
    if (method == NPU_SCALE_AREA) {
      double lo = crop0 + (fmax((double)i * out_sub, content0) - content0) * ratio;
      double hi = crop0 + (fmin((double)(i + 1) * out_sub, content0 + content_len) - content0) *
                              ratio;
      if (flip) {
        double low = lo;
        lo = mirror - hi;
        hi = mirror - low;
      }
      int64_t first = (int64_t)ceil(lo / sub - 0.5), last = (int64_t)ceil(hi / sub - 0.5);
      if (last <= first) {
        first = (int64_t)floor((lo + hi) / 2 / sub);
        last = first + 1;
      }
      if (first < 0)
        first = 0;
      if (last > channel_len)
        last = channel_len;
      if (last <= first)
        first = last - 1;
      t->first[k] = (int32_t)first;
      t->second[k] = (int32_t)(last - first);
      continue;
    }
    double centre = npu_vpp_sample_centre(i, out_sub, out_len);
    double pos = crop0 + (centre - content0) * ratio; /* source pixels */
    if (flip)
      pos = mirror - pos;
    if (method == NPU_SCALE_NEAREST) {
      int64_t p = (int64_t)floor(pos / sub);
      p = p < 0 ? 0 : p >= channel_len ? channel_len - 1 : p;
      t->first[k] = t->second[k] = (int32_t)p * unit;
      t->weight[k] = 0;
      continue;
    }
    double c = pos / sub - 0.5;
    double f = floor(c);
    int64_t p0 = (int64_t)f, p1 = p0 + 1;
    float w = (float)(c - f);
    if (p0 < 0)
      p0 = 0;
    if (p1 < 0)
      p1 = 0;
    if (p0 >= channel_len)
      p0 = channel_len - 1;
    if (p1 >= channel_len)
      p1 = channel_len - 1;
    t->first[k] = (int32_t)p0 * unit;
    t->second[k] = (int32_t)p1 * unit;
    t->weight[k] = w;
  }
}

void npu_vpp_content_span(uint32_t len, uint8_t sub, uint32_t frame_len, uint32_t content0,
                          uint32_t content_len, uint32_t *begin, uint32_t *end)
{
  uint32_t b = 0, e = 0;
  for (uint32_t i = 0; i < len; i++) {
    double centre = npu_vpp_sample_centre(i, sub, frame_len);
    if (centre >= content0 && centre < (double)content0 + content_len) {
      if (e == 0)
        b = i;
      e = i + 1;
    }
  }
  *begin = b;
  *end = e;
}
