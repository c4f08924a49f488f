/* Branch-free float math that GCC vectorises (libm's calls stop the
 * vectoriser): for the kernels' inner loops. */
#ifndef NPU_CPU_FAST_MATH_H
#define NPU_CPU_FAST_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Hot loops get AVX-512 and AVX2 builds next to the baseline one, picked at
 * load time (not under AddressSanitizer, whose runtime cannot resolve the
 * clones). */
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define NPU_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NPU_VECTOR_CLONES
#endif

/* 16 floats side by side, one channel block's lanes at a position, as one
 * value: GCC's and clang's vector extension, which each build of
 * NPU_VECTOR_CLONES compiles to its own registers (one AVX-512 register,
 * two AVX2 ones...). Loops over a block's 16 lanes written as scalar loops
 * came out slower than this in GCC's code. Loaded and stored by memcpy: any
 * alignment, and the value may be written back where it was read. */
typedef float cpu_lanes16 __attribute__((vector_size(16 * sizeof(float))));

/* (Through pointers: a 64-byte vector passed or returned by value changes
 * the ABI between the clones.) */
static inline void cpu_lanes16_load(cpu_lanes16 *v, const float *from)
{
  memcpy(v, from, sizeof *v);
}

static inline void cpu_lanes16_store(float *to, const cpu_lanes16 *v)
{
  memcpy(to, v, sizeof *v);
}

/* e^x, within 2 ulp of exp over [-87.3, 88.7]: Cody-Waite reduction
 * x = n ln2 + r, |r| <= ln2/2, then a degree-6 polynomial. Above, e^88.7;
 * below, 0, as under flush-to-zero: e^x is then under FLT_MIN, and a
 * denormal result slows every later multiply by it a hundredfold (a causal
 * attention mask's -inf scores, softmaxed to 1e-38 and scaled into
 * denormals, once made the next MatMul 70 times slower). */
static inline float cpu_expf(float x)
{
  /* Clamped by comparisons GCC turns into min and max (a NaN x becomes
   * -87.3 here, so that no NaN is converted to an integer below, and is
   * given back at the end). */
  float c = x > -87.3f ? x : -87.3f;
  c = c < 88.7f ? c : 88.7f;
  /* n = round(c / ln2), by the 1.5 * 2^23 trick (no rounding instruction). */
  float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = c - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  /* 2^n, n in [-126, 128]: 2^128 is not a float, so from x = 88.38 on
   * (n = 128) p is doubled and 2^127 taken. */
  p = n > 127.0f ? p * 2.0f : p;
  n = n < 127.0f ? n : 127.0f;
  uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  float y = x < -87.3f ? 0.0f : p * scale;
  return x == x ? y : x;
}

/* tanh(x) within 3e-7 relative (2.5e-7 seen over a sweep of [-20, 20] and
 * of tiny values), branch-free so that loops of it vectorise (libm's tanhf
 * does not): (1 - e^-2|x|) / (1 + e^-2|x|) with x's sign, and below |x| =
 * 0.125, where 1 - e^-2|x| would cancel, the odd series to x^7. */
static inline float cpu_tanhf(float x)
{
  float a = fabsf(x);
  float t = cpu_expf(-2.0f * a);
  float x2 = x * x;
  float series = a * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));
  return copysignf(a < 0.125f ? series : (1.0f - t) / (1.0f + t), x);
}

/* Mish, x tanh(ln(1 + e^x)), without a logarithm or tanh: with e = e^x,
 * tanh(ln(1 + e)) = n / (n + 2) where n = e (e + 2); from x = 20 on it is
 * x to float precision (and e^2x would overflow). */
static inline float cpu_mish(float x)
{
  float e = cpu_expf(x < 20.0f ? x : 20.0f);
  float n = e * (e + 2.0f);
  return x < 20.0f ? x * n / (n + 2.0f) : x;
}

/* erf(x) within 3.2e-7 absolute (and 1e-6 relative near 0): below |x| = 0.5
 * its odd Taylor series, above it Abramowitz and Stegun 7.1.26, both
 * computed and one selected so that the loop stays branch-free. */
static inline float cpu_erff(float x)
{
  float z = x * x;
  float series = x * (1.1283791671f +
                      z * (-0.3761263890f +
                           z * (0.1128379167f +
                                z * (-0.0268661706f + z * (0.0052239776f - z * 0.0008548327f)))));
  float ax = fabsf(x);
  float t = 1.0f / (1.0f + 0.3275911f * ax);
  float poly = t * (0.254829592f +
                    t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  float tail = 1.0f - poly * cpu_expf(-z);
  tail = x < 0 ? -tail : tail;
  return ax < 0.5f ? series : tail;
}

/* GELU's tanh form: x (1 + tanh(u)) / 2 = x / (1 + exp(-2u)), so that it
 * vectorises with cpu_expf (tanhf does not). */
static inline float cpu_gelu_tanh(float x)
{
  float u = 0.7978845608f * (x + 0.044715f * x * x * x);
  return x / (1.0f + cpu_expf(-2.0f * u));
}

/* Reductions over contiguous floats in CPU_REDUCTION_VECTORS independent
 * vectors of 16 lanes (written as vectors: GCC left the same loops over
 * arrays of lanes scalar, and one accumulator would be a chain of
 * dependent adds): 0.14 -> 0.03 ns a float summed, 0.25 -> 0.03 for the
 * largest (rows of 256, one AVX-512 thread). */
enum { CPU_REDUCTION_VECTORS = 4 };

typedef int32_t cpu_mask16 __attribute__((vector_size(16 * sizeof(int32_t))));

/* Lanes of `a` where a > b (a NaN in `a` is passed over), else of `b`. */
static inline void cpu_lanes16_max(cpu_lanes16 *into, const cpu_lanes16 *a)
{
  cpu_mask16 greater = *a > *into;
  *into = (cpu_lanes16)(((cpu_mask16)*a & greater) | ((cpu_mask16)*into & ~greater));
}

/* The largest of n contiguous floats (-inf for none; NaNs passed over). */
static inline float cpu_max(const float *x, size_t n)
{
  cpu_lanes16 acc[CPU_REDUCTION_VECTORS], v;
  for (size_t k = 0; k < CPU_REDUCTION_VECTORS; k++)
    acc[k] = (cpu_lanes16){0} - INFINITY;
  size_t i = 0;
  for (; i + 16 * CPU_REDUCTION_VECTORS <= n; i += 16 * CPU_REDUCTION_VECTORS)
    for (size_t k = 0; k < CPU_REDUCTION_VECTORS; k++) {
      cpu_lanes16_load(&v, x + i + 16 * k);
      cpu_lanes16_max(&acc[k], &v);
    }
  for (; i + 16 <= n; i += 16) {
    cpu_lanes16_load(&v, x + i);
    cpu_lanes16_max(&acc[0], &v);
  }
  for (size_t k = 1; k < CPU_REDUCTION_VECTORS; k++)
    cpu_lanes16_max(&acc[0], &acc[k]);
  float max = -INFINITY;
  for (size_t l = 0; l < 16; l++)
    max = acc[0][l] > max ? acc[0][l] : max;
  for (; i < n; i++)
    max = x[i] > max ? x[i] : max;
  return max;
}

/* The sum of n contiguous floats. */
static inline float cpu_sum(const float *x, size_t n)
{
  cpu_lanes16 acc[CPU_REDUCTION_VECTORS] = {{0}}, v;
  size_t i = 0;
  for (; i + 16 * CPU_REDUCTION_VECTORS <= n; i += 16 * CPU_REDUCTION_VECTORS)
    for (size_t k = 0; k < CPU_REDUCTION_VECTORS; k++) {
      cpu_lanes16_load(&v, x + i + 16 * k);
      acc[k] += v;
    }
  for (; i + 16 <= n; i += 16) {
    cpu_lanes16_load(&v, x + i);
    acc[0] += v;
  }
  for (size_t k = 1; k < CPU_REDUCTION_VECTORS; k++)
    acc[0] += acc[k];
  float sum = 0;
  for (size_t l = 0; l < 16; l++)
    sum += acc[0][l];
  for (; i < n; i++)
    sum += x[i];
  return sum;
}

/* The sum of (x[i] - mean)^2 over n contiguous floats. */
static inline float cpu_sum_squares_about(const float *x, size_t n, float mean)
{
  cpu_lanes16 acc[CPU_REDUCTION_VECTORS] = {{0}}, v;
  size_t i = 0;
  for (; i + 16 * CPU_REDUCTION_VECTORS <= n; i += 16 * CPU_REDUCTION_VECTORS)
    for (size_t k = 0; k < CPU_REDUCTION_VECTORS; k++) {
      cpu_lanes16_load(&v, x + i + 16 * k);
      v -= mean;
      acc[k] += v * v;
    }
  for (; i + 16 <= n; i += 16) {
    cpu_lanes16_load(&v, x + i);
    v -= mean;
    acc[0] += v * v;
  }
  for (size_t k = 1; k < CPU_REDUCTION_VECTORS; k++)
    acc[0] += acc[k];
  float sum = 0;
  for (size_t l = 0; l < 16; l++)
    sum += acc[0][l];
  for (; i < n; i++)
    sum += (x[i] - mean) * (x[i] - mean);
  return sum;
}

#endif
