#version 450
// Strided copy: element (c0..c5) of a box of `dims` is read at
// src_base + sum c_d * src_strides[d] and written at dst_base + sum c_d *
// dst_strides[d]. Transpose, Slice (negative steps too), Concat (one
// dispatch per input), Split (one per output) and the reshaping copies are
// all such boxes.
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

layout(push_constant) uniform Params {
  uint offsets[6];
  uint count;
  uint rank;
  int src_base, dst_base;
  uint dims[6];
  int src_strides[6], dst_strides[6];
} p;

void main()
{
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) {
    uint rest = i;
    int src = p.src_base, dst = p.dst_base;
    for (int d = int(p.rank) - 1; d >= 0; d--) {
      int coordinate = int(rest % p.dims[d]);
      rest /= p.dims[d];
      src += coordinate * p.src_strides[d];
      dst += coordinate * p.dst_strides[d];
    }
    y[p.offsets[1] + uint(dst)] = x[p.offsets[0] + uint(src)];
  }
}
