/* The .npy parser of the tools: every header form numpy writes, and the
 * malformed ones refused with a message instead of a read past the buffer
 * or a size that overflows. */
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "npy.h"

/* A version 1.0 file: the preamble, `header` as given, then `data_bytes` bytes. */
static GByteArray *npy_file(const char *header, size_t data_bytes)
{
  GByteArray *file = g_byte_array_new();
  size_t length = strlen(header);
  guint8 preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (guint8)(length & 0xff),
                         (guint8)(length >> 8)};
  g_byte_array_append(file, preamble, sizeof preamble);
  g_byte_array_append(file, (const guint8 *)header, (guint)length);
  for (size_t i = 0; i < data_bytes; i++)
    g_byte_array_append(file, (const guint8 *)"\x01", 1);
  return file;
}

/* The parser sees exactly the file's bytes (a copy, so that ASan catches a
 * read one past them). */
static gboolean parse(GByteArray *file, npy_array *array, char *error, size_t error_size)
{
  void *exact = g_memdup2(file->data, file->len);
  gboolean ok = npy_parse(exact, file->len, "t.npy", array, error, error_size);
  g_free(exact);
  g_byte_array_unref(file);
  return ok;
}

static void test_header_forms(void)
{
  static const struct {
    const char *header;
    size_t data;
    npu_dtype dtype;
    uint32_t rank;
    int64_t dim0;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }      \n", 24,
       NPU_DTYPE_FLOAT32, 2, 2},
      {"{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }\n", 5, NPU_DTYPE_UINT8, 1, 5},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (), }\n", 8, NPU_DTYPE_INT64, 0, 0},
      {"{'shape': (0, 4), 'fortran_order': False, 'descr': '<f2'}", 0, NPU_DTYPE_FLOAT16, 2, 0},
      {"{\"descr\":\"|b1\",\"fortran_order\":False,\"shape\":(1,1,1)}", 1, NPU_DTYPE_BOOL, 3, 1},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    npy_array array;
    char error[256] = "";
    g_assert_true(parse(npy_file(cases[i].header, cases[i].data), &array, error, sizeof error));
    g_assert_cmpint(array.info.dtype, ==, cases[i].dtype);
    g_assert_cmpuint(array.info.rank, ==, cases[i].rank);
    if (cases[i].rank)
      g_assert_cmpint(array.info.dims[0], ==, cases[i].dim0);
    g_assert_cmpuint(array.size, ==, cases[i].data);
    g_assert_true(array.size == 0 || ((guint8 *)array.data)[array.size - 1] == 1);
    npy_clear(&array);
  }
}

static void test_malformed_headers(void)
{
  static const struct {
    const char *header;
    size_t data;
    const char *message;
  } cases[] = {
      /* issue 12, item 7: the header ends right after 'descr': */
      {"{'fortran_order': False, 'shape': (1,), 'descr':", 0, "malformed header"},
      {"{'descr':", 0, "malformed header"},
      {"{'descr': ", 0, "malformed header"},
      {"{'descr': '<f4", 0, "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,", 0, "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2", 0, "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ", 0, "malformed header"},
      {"{'descr': '<f4', 'fortran_order': Fal", 0, "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4, "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False}", 0, "needs descr, fortran_order and shape"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4,
       "repeated key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 0, "non-negative integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}", 4, "non-negative integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", 8, "not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", 4, "after the dictionary"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}", 4, "not supported"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (1,)}", 4, "Fortran order"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", 4, "rank"},
      /* issue 12, item 1 through a file: the byte size overflows */
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 3, 8, 8)}", 0,
       "shape too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,)}", 0,
       "shape too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 0,
       "shape too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 8, "truncated"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 8, "longer than its shape"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    npy_array array;
    char error[256] = "";
    g_assert_false(parse(npy_file(cases[i].header, cases[i].data), &array, error, sizeof error));
    g_assert_null(array.data);
    if (!strstr(error, cases[i].message))
      g_error("header %s: '%s' lacks '%s'", cases[i].header, error, cases[i].message);
    g_assert_true(g_str_has_prefix(error, "t.npy: "));
  }
}

static void test_preamble(void)
{
  npy_array array;
  char error[256];
  GByteArray *file = npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (1,)}", 1);
  file->data[8] = 0xff; /* a header length past the end */
  g_assert_false(parse(file, &array, error, sizeof error));
  g_assert_nonnull(strstr(error, "truncated"));
  file = npy_file("", 0);
  g_byte_array_set_size(file, 7);
  g_assert_false(parse(file, &array, error, sizeof error));
  g_assert_nonnull(strstr(error, "not a .npy file"));
  file = npy_file("{}", 0);
  file->data[6] = 9;
  g_assert_false(parse(file, &array, error, sizeof error));
  g_assert_nonnull(strstr(error, "format version"));
}

/* What npy_write writes, npy_read reads back; a directory is refused. */
static void test_round_trip(void)
{
  gchar *dir = g_dir_make_tmp("npy-XXXXXX", NULL);
  gchar *path = g_build_filename(dir, "a.npy", NULL);
  npu_tensor_info info = {.dtype = NPU_DTYPE_INT32, .rank = 2, .dims = {2, 2}};
  const int32_t values[4] = {1, -2, 3, 400000};
  char error[256];
  g_assert_true(npy_write(path, &info, values, error, sizeof error));
  npy_array array;
  g_assert_true(npy_read(path, &array, error, sizeof error));
  g_assert_cmpuint(array.info.rank, ==, 2);
  g_assert_cmpint(array.info.dims[1], ==, 2);
  g_assert_cmpmem(array.data, array.size, values, sizeof values);
  npy_clear(&array);
  g_assert_false(npy_read(dir, &array, error, sizeof error));
  g_assert_nonnull(strstr(error, "not a regular file"));
  g_remove(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/npy/header-forms", test_header_forms);
  g_test_add_func("/npy/malformed-headers", test_malformed_headers);
  g_test_add_func("/npy/preamble", test_preamble);
  g_test_add_func("/npy/round-trip", test_round_trip);
  return g_test_run();
}
