/* IEEE half precision <-> float32, exact and portable (no F16C needed):
 * float16 tensors are stored as such and computed in float32. */
#ifndef NPU_HALF_H
#define NPU_HALF_H

#include <stdint.h>
#include <string.h>

/* Rounded to nearest even; beyond the half range, infinity; NaN stays NaN. */
static inline uint16_t npu_float_to_half(float value)
{
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  uint32_t sign = bits & 0x80000000u, magnitude = bits ^ sign, half;
  if (magnitude >= (127u + 16) << 23) { /* 65536 and up, infinity, NaN */
    half = magnitude > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (magnitude < 113u << 23) { /* a subnormal half or zero: */
    /* adding 0.5 puts the 10 half mantissa bits at the bottom of the float,
     * rounded to nearest even by the addition itself */
    float aligned;
    memcpy(&aligned, &magnitude, sizeof aligned);
    aligned += 0.5f;
    memcpy(&half, &aligned, sizeof half);
    half -= 126u << 23;
  } else {
    uint32_t odd = (magnitude >> 13) & 1; /* ties go to the even mantissa */
    half = (magnitude + ((uint32_t)(15 - 127) << 23) + 0xfff + odd) >> 13;
  }
  return (uint16_t)(half | sign >> 16);
}

static inline float npu_half_to_float(uint16_t half)
{
  uint32_t sign = (uint32_t)(half & 0x8000) << 16, exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ffu, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | mantissa << 13;
  } else if (exponent == 0) { /* subnormal: mantissa x 2^-24, exact in float */
    float value = (float)mantissa * 0x1p-24f;
    memcpy(&bits, &value, sizeof bits);
    bits |= sign;
  } else {
    bits = sign | (exponent + 112) << 23 | mantissa << 13;
  }
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

#endif
