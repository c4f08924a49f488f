/* The CPU kernels' vectorisable math (hal/cpu/kernels/fast_math.h) against
 * libm in double precision over dense sweeps: e^x (finite up to 88.7, 0
 * below -87.3 where it would be denormal), tanh, Mish, erf and GELU's tanh
 * form within the error each function's comment promises (measured: e^x
 * 8.3e-8 relative, tanh 2.5e-7, Mish 2.7e-7, erf 3.2e-7 absolute, GELU
 * 1.1e-6); NaN in, NaN out. Then the reductions (largest, sum, squares
 * about a mean) against double sums over every length to 300. All run as
 * the kernels run them: in loops over arrays, built as the kernels are
 * (AVX-512 and AVX2 clones, fused multiply-adds). */
#include <float.h>
#include <math.h>

#include <glib.h>

#include "cpu/kernels/fast_math.h"

typedef void (*apply_fn)(const float *x, float *y, size_t n);

#define APPLY(name, f)                                                                    \
  NPU_VECTOR_CLONES static void name(const float *x, float *y, size_t n)                  \
  {                                                                                       \
    for (size_t i = 0; i < n; i++)                                                        \
      y[i] = f(x[i]);                                                                     \
  }
APPLY(apply_exp, cpu_expf)
APPLY(apply_tanh, cpu_tanhf)
APPLY(apply_mish, cpu_mish)
APPLY(apply_erf, cpu_erff)
APPLY(apply_gelu_tanh, cpu_gelu_tanh)

/* f at one point (through its loop). */
static float at(apply_fn f, float x)
{
  float y;
  f(&x, &y, 1);
  return y;
}

/* The largest error of f against reference over [from, to] in `step`s:
 * relative where |reference| >= floor, absolute below it. */
static double max_error(apply_fn f, double (*reference)(double), double from, double to,
                        double step, double floor)
{
  size_t n = (size_t)((to - from) / step) + 1;
  float *x = g_new(float, n), *y = g_new(float, n);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(from + (double)i * step);
  f(x, y, n);
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double want = reference(x[i]);
    double error = fabs(y[i] - want) / (fabs(want) >= floor ? fabs(want) : 1.0);
    worst = error > worst ? error : worst;
  }
  g_free(x);
  g_free(y);
  return worst;
}

static double mish(double x)
{
  return x * tanh(log1p(exp(x)));
}

static double gelu_tanh(double x)
{
  return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

static void test_exp(void)
{
  g_assert_cmpfloat(max_error(apply_exp, exp, -87.3, 88.7, 1e-4, 0), <, 1.5 * FLT_EPSILON);
  g_assert_true(isfinite(at(apply_exp, 88.7f))); /* n = 128 there: once 2^128, infinite */
  g_assert_cmpfloat(at(apply_exp, 1000.0f), ==, at(apply_exp, 88.7f));
  for (float x = -87.31f; x > -200; x -= 0.5f)
    g_assert_cmpfloat(at(apply_exp, x), ==, 0.0f); /* not a denormal */
  g_assert_cmpfloat(at(apply_exp, -INFINITY), ==, 0.0f);
  g_assert_true(isnan(at(apply_exp, NAN)));
}

static void test_tanh(void)
{
  g_assert_cmpfloat(max_error(apply_tanh, tanh, -20, 20, 1e-5, 0), <, 3e-7);
  for (float x = 1e-30f; x < 1; x *= 1.01f)
    g_assert_cmpfloat(fabs(at(apply_tanh, x) - tanh(x)) / tanh(x), <, 3e-7);
  g_assert_cmpfloat(at(apply_tanh, INFINITY), ==, 1.0f);
  g_assert_cmpfloat(at(apply_tanh, -INFINITY), ==, -1.0f);
  g_assert_true(signbit(at(apply_tanh, -0.0f)));
  g_assert_true(isnan(at(apply_tanh, NAN)));
}

static void test_mish(void)
{
  /* relative where it is not tiny; near its zero at x = 0 and far left, absolute */
  g_assert_cmpfloat(max_error(apply_mish, mish, -30, 30, 1e-4, 1e-3), <, 1e-6);
  g_assert_cmpfloat(at(apply_mish, 1e6f), ==, 1e6f);
  g_assert_true(isnan(at(apply_mish, NAN)));
}

static void test_erf_and_gelu_tanh(void)
{
  g_assert_cmpfloat(max_error(apply_erf, erf, -6, 6, 1e-4, INFINITY), <, 3.5e-7);
  g_assert_cmpfloat(max_error(apply_gelu_tanh, gelu_tanh, -20, 20, 1e-4, 1e-3), <, 1.5e-6);
}

typedef struct reductions {
  float max, sum, squares;
} reductions;

NPU_VECTOR_CLONES
static void reduce(const float *x, size_t n, float mean, reductions *out)
{
  out->max = cpu_max(x, n);
  out->sum = cpu_sum(x, n);
  out->squares = cpu_sum_squares_about(x, n, mean);
}

/* Every length from 0 to 300 (whole vectors, groups of them, tails),
 * against double sums: within float rounding of the sums' magnitudes;
 * the largest exactly, NaNs passed over, -inf for none. */
static void test_reductions(void)
{
  enum { LONGEST = 300 };
  float x[LONGEST];
  GRand *rand = g_rand_new_with_seed(7);
  for (size_t i = 0; i < LONGEST; i++)
    x[i] = (float)g_rand_double_range(rand, -4, 4);
  for (size_t n = 0; n <= LONGEST; n++) {
    double max = -INFINITY, sum = 0, magnitude = 0, squares = 0, mean = 0.5;
    for (size_t i = 0; i < n; i++) {
      max = x[i] > max ? x[i] : max;
      sum += x[i];
      magnitude += fabs(x[i]);
      squares += (x[i] - mean) * (x[i] - mean);
    }
    reductions got;
    reduce(x, n, (float)mean, &got);
    g_assert_cmpfloat(got.max, ==, max);
    g_assert_cmpfloat(fabs(got.sum - sum), <=, 8 * FLT_EPSILON * magnitude);
    g_assert_cmpfloat(fabs(got.squares - squares), <=, 8 * FLT_EPSILON * squares);
  }
  x[37] = NAN;
  x[200] = 9;
  reductions got;
  reduce(x, LONGEST, 0, &got);
  g_assert_cmpfloat(got.max, ==, 9.0f);
  g_assert_true(isnan(got.sum));
  g_rand_free(rand);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cpu/fast-math/exp", test_exp);
  g_test_add_func("/cpu/fast-math/tanh", test_tanh);
  g_test_add_func("/cpu/fast-math/mish", test_mish);
  g_test_add_func("/cpu/fast-math/erf-and-gelu-tanh", test_erf_and_gelu_tanh);
  g_test_add_func("/cpu/fast-math/reductions", test_reductions);
  return g_test_run();
}
