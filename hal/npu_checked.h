/* Overflow-checked arithmetic for element counts, byte sizes and index
 * computations: each returns false (and leaves *out unspecified) when the
 * exact result does not fit. Shape inference, the planner and the kernels'
 * table setup compute sizes from values a model file chooses, so none of
 * them may multiply or add those values unchecked. */
#ifndef NPU_CHECKED_H
#define NPU_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool npu_add_i64(int64_t a, int64_t b, int64_t *out)
{
  return !__builtin_add_overflow(a, b, out);
}

static inline bool npu_sub_i64(int64_t a, int64_t b, int64_t *out)
{
  return !__builtin_sub_overflow(a, b, out);
}

static inline bool npu_mul_i64(int64_t a, int64_t b, int64_t *out)
{
  return !__builtin_mul_overflow(a, b, out);
}

static inline bool npu_mul_size(size_t a, size_t b, size_t *out)
{
  return !__builtin_mul_overflow(a, b, out);
}

static inline bool npu_add_size(size_t a, size_t b, size_t *out)
{
  return !__builtin_add_overflow(a, b, out);
}

/* The element count of a shape: false for a negative (dynamic) dimension,
 * or when the product of its non-zero dimensions passes INT64_MAX (so that
 * every stride and signed index computed from them fits, in an empty
 * tensor too). */
static inline bool npu_dims_elements(const int64_t *dims, uint32_t rank, size_t *count)
{
  int64_t extent = 1;
  bool empty = false;
  for (uint32_t i = 0; i < rank; i++) {
    if (dims[i] < 0 || (dims[i] > 0 && !npu_mul_i64(extent, dims[i], &extent)))
      return false;
    empty |= dims[i] == 0;
  }
  *count = empty ? 0 : (size_t)extent;
  return true;
}

/* The byte size of a shape of `element_size`-byte elements, at most INT64_MAX. */
static inline bool npu_dims_bytes(const int64_t *dims, uint32_t rank, size_t element_size,
                                  size_t *bytes)
{
  size_t count;
  return npu_dims_elements(dims, rank, &count) && npu_mul_size(count, element_size, bytes) &&
         *bytes <= (size_t)INT64_MAX;
}

/* v truncated toward zero into [min, max]: saturated outside it and 0 for
 * NaN (converting those is undefined behaviour). min is -2^31 or -2^63. */
static inline int64_t npu_double_to_integer(double v, int64_t min, int64_t max)
{
  if (v != v)
    return 0;
  if (v <= (double)min)
    return min;
  return v >= -(double)min ? max : (int64_t)v;
}

/* The row-major position, among the slices of a tensor of `dims` that fix
 * its first k axes, of the one index tuple `tuple` (k values, each counting
 * from the end of its axis when negative) addresses; false, with *axis the
 * first axis it leaves, when it is out of range. (ScatterND: the runtime
 * checks constant indices when planning, the CPU kernel the others.) */
static inline bool npu_index_tuple_position(const int64_t *tuple, uint32_t k,
                                            const int64_t *dims, int64_t *position,
                                            uint32_t *axis)
{
  int64_t at = 0;
  for (uint32_t d = 0; d < k; d++) {
    int64_t i = tuple[d] < 0 ? tuple[d] + dims[d] : tuple[d];
    if (i < 0 || i >= dims[d]) {
      *axis = d;
      return false;
    }
    at = at * dims[d] + i; /* (below the tensor's element count) */
  }
  *position = at;
  return true;
}

/* How many of start, start + step, ... lie before `end` (after it for a
 * negative step): a slice's length. start and end are clamped to [-1, dim]
 * already; the step may be anything but 0, +-2^63 included. */
static inline int64_t npu_strided_count(int64_t start, int64_t end, int64_t step)
{
  bool empty = step > 0 ? end <= start : start <= end;
  uint64_t span = step > 0 ? (uint64_t)(end - start) : (uint64_t)(start - end);
  uint64_t stride = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
  return empty ? 0 : (int64_t)((span - 1) / stride + 1);
}

#endif
