#version 450
// The VPP: every job of a batch (a crop of a source image, scaled into its
// rectangle of a tensor slot or of a destination image, the rest padded) in
// one dispatch, one invocation per output position, one workgroup layer per
// item (z). Images and tensors are byte buffers; the host works out each
// item's layout and its sampling taps (the CPU backend's, vpp_sampling.c)
// into the table, so both backends read the same pixels. Arithmetic is
// `precise` and in the CPU's order: results match it to float rounding.
#extension GL_GOOGLE_include_directive : require
#include "vpp_table.h"

layout(local_size_x = VPP_LOCAL_SIZE, local_size_y = VPP_LOCAL_SIZE) in;

layout(std430, set = 0, binding = 0) readonly buffer Table { uint table[]; };
// Indexed by values read for the workgroup's item: dynamically uniform.
layout(std430, set = 0, binding = 1) buffer Plane { uint words[]; } planes[VPP_PLANE_BUFFERS];

layout(push_constant) uniform Params {
  uint first_item; // this dispatch's items are first_item + z
} p;

const uint BILINEAR = 0u, NEAREST = 1u, AREA = 2u;
const uint TENSOR = 0u;

float table_float(uint word)
{
  return uintBitsToFloat(table[word]);
}

uint load_byte(uint slot, uint at)
{
  return (planes[slot].words[at >> 2] >> ((at & 3u) * 8u)) & 0xffu;
}

// Bytes of one word may belong to neighbouring pixels other invocations
// write: each byte is cleared and set atomically, leaving the others alone.
void store_byte(uint slot, uint at, uint value)
{
  uint shift = (at & 3u) * 8u;
  atomicAnd(planes[slot].words[at >> 2], ~(0xffu << shift));
  atomicOr(planes[slot].words[at >> 2], value << shift);
}

void store_float(uint slot, uint at, float value)
{
  uint bits = floatBitsToUint(value);
  if ((at & 3u) == 0u) {
    planes[slot].words[at >> 2] = bits;
    return;
  }
  for (uint b = 0u; b < 4u; b++)
    store_byte(slot, at + b, (bits >> (8u * b)) & 0xffu);
}

uint to_byte(float value)
{
  return uint(clamp(value, 0.0, 255.0) + 0.5);
}

// Source channel c at content position (ix, iy) of the item at word `item`.
float sample_channel(uint item, uint method, uint c, uint ix, uint iy)
{
  uint plane = item + VPP_SRC + c * VPP_PLANE_WORDS;
  uint slot = table[plane + VPP_PLANE_SLOT], base = table[plane + VPP_PLANE_OFFSET];
  uint pixel_stride = table[plane + VPP_PLANE_PIXEL_STRIDE];
  uint row_stride = table[plane + VPP_PLANE_ROW_STRIDE];
  uint columns = table[item + VPP_COL1] - table[item + VPP_COL0];
  uint rows = table[item + VPP_ROW1] - table[item + VPP_ROW0];
  uint col_taps = table[item + VPP_COL_TAPS + c] + ix;
  uint row_taps = table[item + VPP_ROW_TAPS + c] + iy;
  uint x0 = table[col_taps], x1 = table[col_taps + columns];
  uint y0 = table[row_taps], y1 = table[row_taps + rows];
  if (method == AREA) { // (start, count) per axis
    uint sum = 0u;
    for (uint y = y0; y < y0 + y1; y++)
      for (uint x = x0; x < x0 + x1; x++)
        sum += load_byte(slot, base + y * row_stride + x * pixel_stride);
    return float(sum) / float(y1 * x1);
  }
  float top_left = float(load_byte(slot, base + y0 * row_stride + x0 * pixel_stride));
  if (method == NEAREST)
    return top_left;
  float wx = table_float(col_taps + 2u * columns), wy = table_float(row_taps + 2u * rows);
  float top_right = float(load_byte(slot, base + y0 * row_stride + x1 * pixel_stride));
  float bottom_left = float(load_byte(slot, base + y1 * row_stride + x0 * pixel_stride));
  float bottom_right = float(load_byte(slot, base + y1 * row_stride + x1 * pixel_stride));
  precise float top = top_left + (top_right - top_left) * wx;
  precise float bottom = bottom_left + (bottom_right - bottom_left) * wx;
  precise float value = top + (bottom - top) * wy;
  return value;
}

vec3 content_rgb(uint item, uint x, uint y)
{
  uint method = table[VPP_METHOD];
  uint channels = table[item + VPP_SRC_CHANNELS];
  uint ix = x - table[item + VPP_COL0], iy = y - table[item + VPP_ROW0];
  float v[3];
  for (uint c = 0u; c < channels; c++)
    v[c] = sample_channel(item, method, c, ix, iy);
  vec3 rgb;
  for (uint i = 0u; i < 3u; i++) {
    uint m = item + VPP_SRC_MATRIX + 4u * i;
    precise float sum = table_float(m) * v[0];
    if (channels == 3u) {
      sum = sum + table_float(m + 1u) * v[1];
      sum = sum + table_float(m + 2u) * v[2];
    }
    sum = sum + table_float(m + 3u);
    rgb[i] = clamp(sum, 0.0, 255.0);
  }
  return rgb;
}

void write_tensor(uint item, uint x, uint y, vec3 rgb)
{
  uint width = table[VPP_TENSOR_W], height = table[VPP_TENSOR_H];
  bool float32 = table[VPP_FLOAT32] != 0u, planar = table[VPP_PLANAR] != 0u;
  uint slot = table[item + VPP_DST + VPP_PLANE_SLOT];
  uint base = table[item + VPP_DST + VPP_PLANE_OFFSET];
  for (uint c = 0u; c < 3u; c++) {
    precise float value = (rgb[table[VPP_SOURCE_OF + c]] - table_float(VPP_MEAN + c)) *
                          table_float(VPP_SCALE + c);
    uint index = planar ? (c * height + y) * width + x : (y * width + x) * 3u + c;
    if (float32)
      store_float(slot, base + index * 4u, value);
    else
      store_byte(slot, base + index, to_byte(value));
  }
}

void store_pixel(uint plane, uint x, uint y, uint value)
{
  uint at = table[plane + VPP_PLANE_OFFSET] + y * table[plane + VPP_PLANE_ROW_STRIDE] +
            x * table[plane + VPP_PLANE_PIXEL_STRIDE];
  store_byte(table[plane + VPP_PLANE_SLOT], at, value);
}

void write_image(uint item, uint x, uint y, vec3 rgb)
{
  for (uint c = table[item + VPP_DST_FIRST]; c < table[item + VPP_DST_LAST]; c++) {
    uint m = item + VPP_DST_MATRIX + 4u * c;
    precise float value = table_float(m) * rgb.r + table_float(m + 1u) * rgb.g +
                          table_float(m + 2u) * rgb.b + table_float(m + 3u);
    store_pixel(item + VPP_DST + c * VPP_PLANE_WORDS, x, y, to_byte(value));
  }
  if (table[item + VPP_HAS_FILLER] != 0u)
    store_pixel(item + VPP_FILLER, x, y, 255u);
}

void main()
{
  uint item = VPP_HEADER_WORDS + (p.first_item + gl_WorkGroupID.z) * VPP_ITEM_WORDS;
  uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
  if (x >= table[item + VPP_GRID_W] || y >= table[item + VPP_GRID_H])
    return;
  bool content = x >= table[item + VPP_COL0] && x < table[item + VPP_COL1] &&
                 y >= table[item + VPP_ROW0] && y < table[item + VPP_ROW1];
  vec3 pad = vec3(table_float(VPP_PAD), table_float(VPP_PAD + 1u), table_float(VPP_PAD + 2u));
  vec3 rgb = content ? content_rgb(item, x, y) : pad;
  if (table[VPP_KIND] == TENSOR)
    write_tensor(item, x, y, rgb);
  else
    write_image(item, x, y, rgb);
}
