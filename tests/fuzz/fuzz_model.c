/* libFuzzer target: an ONNX model through the loader, the planner and one
 * run on tiny inputs (see model_harness.h). External data resolves in a
 * scratch folder laid out as mutate_models.py lays out its output, so that
 * path is fuzzed too: model/external.bin, and model/escape.bin, a symlink
 * to outside.bin beside the folder (which must be refused). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model_harness.h"

static char scratch[] = "/tmp/npu-fuzz-XXXXXX";
static char model_dir[sizeof scratch + 8], external[sizeof scratch + 32],
    escape[sizeof scratch + 32], outside[sizeof scratch + 32];

static void write_file(const char *path, int bytes)
{
  FILE *file = fopen(path, "wb");
  for (int i = 0; file && i < bytes; i++)
    fputc(i * 7 & 0xff, file);
  if (!file || fclose(file) != 0)
    abort();
}

static void remove_scratch(void)
{
  unlink(escape);
  unlink(external);
  unlink(outside);
  rmdir(model_dir);
  rmdir(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  model_harness_init();
  if (!mkdtemp(scratch))
    abort();
  snprintf(model_dir, sizeof model_dir, "%s/model", scratch);
  snprintf(external, sizeof external, "%s/external.bin", model_dir);
  snprintf(escape, sizeof escape, "%s/escape.bin", model_dir);
  snprintf(outside, sizeof outside, "%s/outside.bin", scratch);
  if (mkdir(model_dir, 0700) != 0)
    abort();
  atexit(remove_scratch);
  write_file(external, 16384);
  write_file(outside, 256);
  if (symlink("../outside.bin", escape) != 0)
    abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  model_harness_run(data, size, model_dir);
  return 0;
}
