#version 450
#extension GL_GOOGLE_include_directive : require
// Elementwise functions of one tensor (numbered as in vk_kernels.c's
// unary_ops table); alpha and beta are the operator's parameters.
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6]; // elements from each binding's start
  uint count;
  uint op;
  float alpha, beta;
} p;

#include "erf.glsl"

float softplus(float v)
{
  return v > 20.0 ? v : log(1.0 + exp(v));
}

void main()
{
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) {
    float v = x[p.offsets[0] + i];
    switch (p.op) {
    case 0u: v = max(v, 0.0); break;                                  // Relu
    case 1u: v = 1.0 / (1.0 + exp(-v)); break;                        // Sigmoid
    case 2u: v = min(max(v, p.alpha), p.beta); break;                 // Clip
    case 3u: v = tanh(v); break;                                      // Tanh
    case 4u: v = clamp(p.alpha * v + p.beta, 0.0, 1.0); break;        // HardSigmoid
    case 5u: v = v * clamp(v / 6.0 + 0.5, 0.0, 1.0); break;           // HardSwish
    case 6u: v = v < 0.0 ? p.alpha * v : v; break;                    // LeakyRelu
    case 7u: v = exp(v); break;                                       // Exp
    case 8u: v = sqrt(v); break;                                      // Sqrt
    case 9u: v = -v; break;                                           // Neg
    case 10u: v = abs(v); break;                                      // Abs
    case 11u: v = 1.0 / v; break;                                     // Reciprocal
    case 12u: v = log(v); break;                                      // Log
    case 13u: v = floor(v); break;                                    // Floor
    case 14u: v = ceil(v); break;                                     // Ceil
    case 15u: v = roundEven(v); break;                                // Round
    case 16u: v = sign(v); break;                                     // Sign
    case 17u: v = error_function(v); break;                           // Erf
    case 18u: v = v >= 0.0 ? v : p.alpha * (exp(v) - 1.0); break;     // Elu
    case 19u: v = p.beta * (v > 0.0 ? v : p.alpha * (exp(v) - 1.0)); break; // Selu
    case 20u: v = max(v, 0.0) + min(0.0, p.alpha * (exp(v / p.alpha) - 1.0)); break; // Celu
    case 21u: v = softplus(v); break;                                 // Softplus
    case 22u: v = v / (1.0 + abs(v)); break;                          // Softsign
    case 23u: v = v > p.alpha ? v : 0.0; break;                       // ThresholdedRelu
    case 24u: v = v * tanh(softplus(v)); break;                       // Mish
    default: v = p.alpha != 0.0 ? gelu_tanh(v) : gelu(v); break;       // Gelu
    }
    y[p.offsets[1] + i] = v;
  }
}
