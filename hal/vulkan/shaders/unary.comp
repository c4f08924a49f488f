#version 450
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
    default: v = 1.0 / v; break;                                      // Reciprocal
    }
    y[p.offsets[1] + i] = v;
  }
}
