// erf(x) in float32 as the CPU backend computes it (hal/cpu/kernels/fast_math.h),
// so that both backends agree to rounding: its Taylor series below |x| = 0.5,
// Abramowitz and Stegun 7.1.26 above (absolute error under 1.5e-7). GLSL has
// no erf of its own.
float error_function(float x)
{
  float z = x * x;
  if (abs(x) < 0.5)
    return x * (1.1283791671 + z * (-0.3761263890 + z * (0.1128379167 +
                z * (-0.0268661706 + z * (0.0052239776 - z * 0.0008548327)))));
  float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 +
                    t * (-1.453152027 + t * 1.061405429))));
  float tail = 1.0 - poly * exp(-z);
  return x < 0.0 ? -tail : tail;
}

// GELU in its two ONNX forms, as the CPU backend computes them: the erf form,
// and the tanh form as x / (1 + exp(-2u)) (= x (1 + tanh(u)) / 2).
float gelu(float x)
{
  return x * (0.5 * (1.0 + error_function(x * 0.70710678)));
}

float gelu_tanh(float x)
{
  float u = 0.7978845608 * (x + 0.044715 * x * x * x);
  return x / (1.0 + exp(-2.0 * u));
}
