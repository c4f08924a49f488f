/* NumPy .npy reading and writing (see npy.h). */
#include "npy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *descr;
  npu_dtype dtype;
} types[] = {
    {"<f4", NPU_DTYPE_FLOAT32}, {"<f2", NPU_DTYPE_FLOAT16}, {"<i8", NPU_DTYPE_INT64},
    {"<i4", NPU_DTYPE_INT32},   {"|u1", NPU_DTYPE_UINT8},   {"|i1", NPU_DTYPE_INT8},
    {"|b1", NPU_DTYPE_BOOL},
};

static bool fail(char *error, size_t size, const char *path, const char *why)
{
  snprintf(error, size, "%s: %s", path, why);
  return false;
}

/* The value text after 'key': in the header dictionary, or NULL. */
static const char *field(const char *header, const char *key)
{
  const char *at = strstr(header, key);
  if (!at)
    return NULL;
  at = strchr(at + strlen(key), ':');
  if (!at)
    return NULL;
  at++;
  while (*at == ' ')
    at++;
  return at;
}

bool npy_read(const char *path, npy_array *array, char *error, size_t error_size)
{
  memset(array, 0, sizeof *array);
  FILE *file = fopen(path, "rb");
  if (!file)
    return fail(error, error_size, path, strerror(errno));
  unsigned char preamble[10];
  char *header = NULL;
  bool ok = false;
  if (fread(preamble, 1, 8, file) != 8 || memcmp(preamble, "\x93NUMPY", 6) != 0) {
    fail(error, error_size, path, "not a .npy file");
    goto done;
  }
  size_t length;
  if (preamble[6] == 1) {
    if (fread(preamble + 8, 1, 2, file) != 2)
      goto truncated;
    length = preamble[8] | (size_t)preamble[9] << 8;
  } else {
    unsigned char bytes[4];
    if (fread(bytes, 1, 4, file) != 4)
      goto truncated;
    length = bytes[0] | (size_t)bytes[1] << 8 | (size_t)bytes[2] << 16 | (size_t)bytes[3] << 24;
  }
  header = calloc(1, length + 1);
  if (!header || fread(header, 1, length, file) != length)
    goto truncated;
  const char *descr = field(header, "'descr'"), *order = field(header, "'fortran_order'");
  const char *shape = field(header, "'shape'");
  if (!descr || !order || !shape || *shape != '(') {
    fail(error, error_size, path, "malformed header");
    goto done;
  }
  if (strncmp(order, "False", 5) != 0) {
    fail(error, error_size, path, "Fortran order is not supported");
    goto done;
  }
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strncmp(descr + 1, types[i].descr, 3) == 0)
      array->info.dtype = types[i].dtype;
  if (array->info.dtype == NPU_DTYPE_UNDEFINED) {
    fail(error, error_size, path, "element type not supported (float32/16, int64/32/8, uint8, "
                                  "bool, little-endian)");
    goto done;
  }
  size_t count = 1;
  for (const char *c = shape + 1; *c && *c != ')';) {
    char *end;
    long long dim = strtoll(c, &end, 10);
    if (end == c) {
      c++;
      continue;
    }
    if (array->info.rank == NPU_MAX_RANK || dim < 0) {
      fail(error, error_size, path, "shape beyond the runtime's rank or negative");
      goto done;
    }
    array->info.dims[array->info.rank++] = dim;
    count *= (size_t)dim;
    c = end;
  }
  array->size = count * npu_dtype_size(array->info.dtype);
  array->data = malloc(array->size ? array->size : 1);
  if (!array->data || fread(array->data, 1, array->size, file) != array->size)
    goto truncated;
  ok = true;
  goto done;
truncated:
  fail(error, error_size, path, "truncated file");
done:
  free(header);
  fclose(file);
  if (!ok)
    npy_clear(array);
  return ok;
}

bool npy_write(const char *path, const npu_tensor_info *info, const void *data, char *error,
               size_t error_size)
{
  const char *descr = NULL;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (types[i].dtype == info->dtype)
      descr = types[i].descr;
  if (!descr)
    return fail(error, error_size, path, "element type has no .npy equivalent here");
  char shape[256] = "";
  size_t count = 1, used = 0;
  for (uint32_t d = 0; d < info->rank; d++) {
    used += (size_t)snprintf(shape + used, sizeof shape - used, "%lld,%s",
                             (long long)info->dims[d], d + 1 < info->rank ? " " : "");
    count *= (size_t)info->dims[d];
  }
  if (info->rank > 1)
    shape[used - 1] = '\0'; /* (2, 3) but (4,) */
  char header[512];
  int length = snprintf(header, sizeof header,
                        "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
  int padded = (10 + length + 1 + 63) / 64 * 64 - 10; /* data aligned to 64 */
  memset(header + length, ' ', (size_t)(padded - length - 1));
  header[padded - 1] = '\n';
  FILE *file = fopen(path, "wb");
  if (!file)
    return fail(error, error_size, path, strerror(errno));
  unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(padded & 0xff),
                                (unsigned char)(padded >> 8)};
  size_t bytes = count * npu_dtype_size(info->dtype);
  bool ok = fwrite(preamble, 1, 10, file) == 10 &&
            fwrite(header, 1, (size_t)padded, file) == (size_t)padded &&
            fwrite(data, 1, bytes, file) == bytes;
  ok &= fclose(file) == 0;
  return ok ? true : fail(error, error_size, path, "write failed");
}

void npy_clear(npy_array *array)
{
  free(array->data);
  memset(array, 0, sizeof *array);
}
