// The fused activations of conv2d.comp, depthwise.comp and matmul.comp,
// numbered as vk_kernels.c's shader_activation(); included after their
// push constants `p` and their Residual buffer `residual` (binding 4).
#include "erf.glsl"

float activate(float v, uint kind, float alpha, float beta, float addend)
{
  switch (kind) {
  case 0u: return max(v, 0.0);                                   // Relu
  case 1u: return v < 0.0 ? alpha * v : v;                       // LeakyRelu
  case 2u: return min(max(v, alpha), beta);                      // Clip
  case 3u: return 1.0 / (1.0 + exp(-v));                         // Sigmoid
  case 4u: return clamp(alpha * v + beta, 0.0, 1.0);             // HardSigmoid
  case 5u: return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);            // HardSwish
  case 6u: return v / (1.0 + exp(-v));                           // Swish
  case 7u: return tanh(v);                                       // Tanh
  case 8u: return alpha * v + beta;                              // Linear
  case 10u: return gelu(v);                                       // GELU
  case 11u: return gelu_tanh(v);                                  // GELU, tanh form
  case 12u: {                                                     // Mish (fast_math.h's form)
    float e = exp(min(v, 20.0));
    float n = e * (e + 2.0);
    return v < 20.0 ? v * n / (n + 2.0) : v;
  }
  default: return v + addend;                                    // Add
  }
}

// The op's fused activations (p.flags' count, p.activation_kinds) on v in
// order; a residual Add reads residual[residual_at] (after the offset).
float activate_all(float v, uint residual_at)
{
  uint activations = (p.flags >> 8) & 0xffu;
  for (uint a = 0u; a < activations; a++) {
    uint kind = (p.activation_kinds >> (8u * a)) & 0xffu;
    float addend = kind == 9u ? residual[p.offsets[4] + residual_at] : 0.0;
    v = activate(v, kind, p.activation_params[2u * a], p.activation_params[2u * a + 1u], addend);
  }
  return v;
}
