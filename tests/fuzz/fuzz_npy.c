/* libFuzzer target: the .npy parser of the tools, on whole files in memory. */
#include <stdint.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  npy_array array;
  char error[256];
  if (npy_parse(data, size, "fuzz", &array, error, sizeof error))
    npy_clear(&array);
  return 0;
}
