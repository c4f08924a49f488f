/* The CPU kernels' vectorisable math (hal/cpu/kernels/fast_math.h) against
 * libm in double precision over dense sweeps: e^x (finite up to 88.7, 0
 * below -87.3 where it would be denormal), tanh, Mish, erf and GELU's tanh
 * form within the error each function's comment promises (measured: e^x
 * 8.3e-8 relative, tanh 2.5e-7, Mish 2.7e-7, erf 3.2e-7 absolute, GELU
 * 1.1e-6); NaN in, NaN out. */
#include <float.h>
#include <math.h>

#include <glib.h>

#include "cpu/kernels/fast_math.h"

typedef float (*unary)(float);

/* The largest error of f against reference over [from, to] in `step`s:
 * relative where |reference| >= floor, absolute below it. */
static double max_error(unary f, double (*reference)(double), double from, double to,
                        double step, double floor)
{
  double worst = 0;
  for (double x = from; x <= to; x += step) {
    float xf = (float)x;
    double want = reference(xf), got = f(xf);
    double error = fabs(got - want) / (fabs(want) >= floor ? fabs(want) : 1.0);
    worst = error > worst ? error : worst;
  }
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
  g_assert_cmpfloat(max_error(cpu_expf, exp, -87.3, 88.7, 1e-4, 0), <, 1.5 * FLT_EPSILON);
  g_assert_true(isfinite(cpu_expf(88.7f))); /* n = 128 there: once 2^128, infinite */
  for (float x = -87.31f; x > -200; x -= 0.5f)
    g_assert_cmpfloat(cpu_expf(x), ==, 0.0f); /* not a denormal */
  g_assert_cmpfloat(cpu_expf(-INFINITY), ==, 0.0f);
  g_assert_true(isnan(cpu_expf(NAN)));
}

static void test_tanh(void)
{
  g_assert_cmpfloat(max_error(cpu_tanhf, tanh, -20, 20, 1e-5, 0), <, 3e-7);
  for (float x = 1e-30f; x < 1; x *= 1.01f)
    g_assert_cmpfloat(fabs(cpu_tanhf(x) - tanh(x)) / tanh(x), <, 3e-7);
  g_assert_cmpfloat(cpu_tanhf(INFINITY), ==, 1.0f);
  g_assert_cmpfloat(cpu_tanhf(-INFINITY), ==, -1.0f);
  g_assert_true(signbit(cpu_tanhf(-0.0f)));
  g_assert_true(isnan(cpu_tanhf(NAN)));
}

static void test_mish(void)
{
  /* relative where it is not tiny; near its zero at x = 0 and far left, absolute */
  g_assert_cmpfloat(max_error(cpu_mish, mish, -30, 30, 1e-4, 1e-3), <, 1e-6);
  g_assert_cmpfloat(cpu_mish(1e6f), ==, 1e6f);
  g_assert_true(isnan(cpu_mish(NAN)));
}

static void test_erf_and_gelu_tanh(void)
{
  g_assert_cmpfloat(max_error(cpu_erff, erf, -6, 6, 1e-4, INFINITY), <, 3.5e-7);
  g_assert_cmpfloat(max_error(cpu_gelu_tanh, gelu_tanh, -20, 20, 1e-4, 1e-3), <, 1.5e-6);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cpu/fast-math/exp", test_exp);
  g_test_add_func("/cpu/fast-math/tanh", test_tanh);
  g_test_add_func("/cpu/fast-math/mish", test_mish);
  g_test_add_func("/cpu/fast-math/erf-and-gelu-tanh", test_erf_and_gelu_tanh);
  return g_test_run();
}
