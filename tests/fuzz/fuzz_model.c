/* libFuzzer target: an ONNX model through the loader, the planner and one
 * run on tiny inputs (see model_harness.h). External data resolves in a
 * scratch folder holding data.bin, so that path is fuzzed too. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "model_harness.h"

static char base_dir[] = "/tmp/npu-fuzz-XXXXXX";
static char data_path[sizeof base_dir + 16];

static void remove_base_dir(void)
{
  unlink(data_path);
  rmdir(base_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  model_harness_init();
  if (!mkdtemp(base_dir))
    abort();
  snprintf(data_path, sizeof data_path, "%s/data.bin", base_dir);
  FILE *file = fopen(data_path, "wb");
  for (int i = 0; file && i < 4096; i++)
    fputc(i * 7 & 0xff, file);
  if (!file || fclose(file) != 0)
    abort();
  atexit(remove_base_dir);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  model_harness_run(data, size, base_dir);
  return 0;
}
