/* NumPy .npy files (format 1.0 to 3.0, C order, little-endian) for the
 * tools: read into a host tensor, write one out. */
#ifndef NPU_TOOLS_NPY_H
#define NPU_TOOLS_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include <npu/npu.h>

typedef struct npy_array {
  npu_tensor_info info; /* dtype, rank, dims (no name) */
  void *data;           /* malloc'd, info's element count */
  size_t size;          /* bytes */
} npy_array;

/* False with a message in `error` (of `error_size` bytes) when the file is
 * missing, not a regular file, malformed, truncated, longer than its shape,
 * Fortran-ordered, big-endian or of an unknown type. */
bool npy_read(const char *path, npy_array *array, char *error, size_t error_size);
/* The same from a whole file's `size` bytes in memory; `name` starts the
 * message. A shape whose byte size overflows is "shape too large". */
bool npy_parse(const void *bytes, size_t size, const char *name, npy_array *array, char *error,
               size_t error_size);
bool npy_write(const char *path, const npu_tensor_info *info, const void *data, char *error,
               size_t error_size);
void npy_clear(npy_array *array);

#endif
