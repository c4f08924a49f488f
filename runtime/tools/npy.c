/* NumPy .npy reading and writing (see npy.h). */
#include "npy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npu_checked.h"

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

/* The header dictionary, read within [at, end): every step checks that it
 * stays inside (the header is not NUL-terminated). */
typedef struct cursor {
  const char *at, *end;
} cursor;

static void skip_spaces(cursor *c)
{
  while (c->at < c->end && (*c->at == ' ' || *c->at == '\t' || *c->at == '\n'))
    c->at++;
}

/* Consumes `ch` (after spaces) when it comes next. */
static bool take(cursor *c, char ch)
{
  skip_spaces(c);
  if (c->at == c->end || *c->at != ch)
    return false;
  c->at++;
  return true;
}

/* A quoted Python string literal without escapes: its text in [*text, +*length). */
static bool take_string(cursor *c, const char **text, size_t *length)
{
  skip_spaces(c);
  if (c->at == c->end || (*c->at != '\'' && *c->at != '"'))
    return false;
  const char *close = memchr(c->at + 1, *c->at, (size_t)(c->end - c->at - 1));
  if (!close)
    return false;
  *text = c->at + 1;
  *length = (size_t)(close - *text);
  c->at = close + 1;
  return true;
}

static bool take_word(cursor *c, const char *word)
{
  size_t length = strlen(word);
  skip_spaces(c);
  if ((size_t)(c->end - c->at) < length || memcmp(c->at, word, length) != 0)
    return false;
  c->at += length;
  return true;
}

static bool is_key(const char *text, size_t length, const char *key)
{
  return length == strlen(key) && memcmp(text, key, length) == 0;
}

/* (d0, d1, ...) with an optional trailing comma: "(4,)" and "()" too. An
 * error names what is wrong; NULL on success. */
static const char *take_shape(cursor *c, npu_tensor_info *info)
{
  if (!take(c, '('))
    return "malformed header (shape is not a tuple)";
  while (!take(c, ')')) {
    skip_spaces(c);
    int64_t dim = 0;
    const char *digits = c->at;
    for (; c->at < c->end && *c->at >= '0' && *c->at <= '9'; c->at++)
      if (!npu_mul_i64(dim, 10, &dim) || !npu_add_i64(dim, *c->at - '0', &dim))
        return "shape too large";
    if (c->at == digits)
      return "malformed header (shape holds something other than non-negative integers)";
    if (info->rank == NPU_MAX_RANK)
      return "shape beyond the runtime's rank";
    info->dims[info->rank++] = dim;
    if (!take(c, ',') && !(c->at < c->end && *c->at == ')'))
      return "malformed header (shape is not a tuple)";
  }
  return NULL;
}

/* The dictionary {'descr': ..., 'fortran_order': ..., 'shape': (...)}, keys
 * in any order, each exactly once. */
static const char *parse_header(const char *text, size_t length, npu_tensor_info *info)
{
  cursor c = {text, text + length};
  bool have_descr = false, have_order = false, have_shape = false;
  if (!take(&c, '{'))
    return "malformed header (not a dictionary)";
  while (!take(&c, '}')) {
    const char *key, *value;
    size_t key_length, value_length;
    if (!take_string(&c, &key, &key_length) || !take(&c, ':'))
      return "malformed header (expected 'key': value)";
    if (is_key(key, key_length, "descr") && !have_descr) {
      if (!take_string(&c, &value, &value_length))
        return "malformed header (descr is not a string)";
      for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (is_key(value, value_length, types[i].descr))
          info->dtype = types[i].dtype;
      if (info->dtype == NPU_DTYPE_UNDEFINED)
        return "element type not supported (float32/16, int64/32/8, uint8, bool, little-endian)";
      have_descr = true;
    } else if (is_key(key, key_length, "fortran_order") && !have_order) {
      if (take_word(&c, "True"))
        return "Fortran order is not supported";
      if (!take_word(&c, "False"))
        return "malformed header (fortran_order is not True or False)";
      have_order = true;
    } else if (is_key(key, key_length, "shape") && !have_shape) {
      const char *why = take_shape(&c, info);
      if (why)
        return why;
      have_shape = true;
    } else {
      return "malformed header (unknown or repeated key)";
    }
    if (!take(&c, ',') && !(c.at < c.end && *c.at == '}'))
      return "malformed header (expected , or } after a value)";
  }
  skip_spaces(&c);
  if (c.at != c.end)
    return "malformed header (text after the dictionary)";
  if (!have_descr || !have_order || !have_shape)
    return "malformed header (needs descr, fortran_order and shape)";
  return NULL;
}

/* The whole file in memory: the preamble, the header, then exactly the data. */
static const char *parse(const uint8_t *bytes, size_t size, npy_array *array)
{
  if (size < 10 || memcmp(bytes, "\x93NUMPY", 6) != 0)
    return "not a .npy file";
  uint8_t major = bytes[6];
  size_t header_at, length;
  if (major == 1) {
    header_at = 10;
    length = bytes[8] | (size_t)bytes[9] << 8;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return "truncated file";
    header_at = 12;
    length = bytes[8] | (size_t)bytes[9] << 8 | (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
  } else {
    return "format version not supported (1.0 to 3.0)";
  }
  if (length > size - header_at)
    return "truncated file";
  const char *why = parse_header((const char *)bytes + header_at, length, &array->info);
  if (why)
    return why;
  size_t data_at = header_at + length;
  if (!npu_dims_bytes(array->info.dims, array->info.rank, npu_dtype_size(array->info.dtype),
                      &array->size))
    return "shape too large";
  if (array->size > size - data_at)
    return "truncated file";
  if (array->size < size - data_at)
    return "data longer than its shape";
  array->data = malloc(array->size ? array->size : 1);
  if (!array->data)
    return "out of memory";
  if (array->size)
    memcpy(array->data, bytes + data_at, array->size);
  return NULL;
}

bool npy_parse(const void *bytes, size_t size, const char *name, npy_array *array, char *error,
               size_t error_size)
{
  memset(array, 0, sizeof *array);
  const char *why = parse(bytes, size, array);
  if (!why)
    return true;
  npy_clear(array);
  return fail(error, error_size, name, why);
}

bool npy_read(const char *path, npy_array *array, char *error, size_t error_size)
{
  memset(array, 0, sizeof *array);
  FILE *file = fopen(path, "rb");
  if (!file)
    return fail(error, error_size, path, strerror(errno));
  struct stat st;
  uint8_t *bytes = NULL;
  const char *why = NULL;
  if (fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode))
    why = "not a regular file";
  else if (!(bytes = malloc(st.st_size ? (size_t)st.st_size : 1)))
    why = "out of memory";
  else if (fread(bytes, 1, (size_t)st.st_size, file) != (size_t)st.st_size)
    why = "read failed";
  fclose(file);
  bool ok = why ? fail(error, error_size, path, why)
                : npy_parse(bytes, (size_t)st.st_size, path, array, error, error_size);
  free(bytes);
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
