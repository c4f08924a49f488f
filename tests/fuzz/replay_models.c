/* Feeds model files to the model fuzz target's harness without libFuzzer:
 * the test suite runs it on the seed corpus, the committed regression
 * seeds and the structural mutants (any build, sanitizers or not). A
 * refusal is fine; a crash, a sanitizer report or a hang fails the test.
 * Each is loaded from memory and from its file (the loader's two paths).
 *   replay_models FILE_OR_DIR...   (directories: every file in them) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "model_harness.h"

static unsigned files, ran, ran_from_file;

static void replay_file(const char *path)
{
  gchar *bytes;
  gsize size;
  GError *error = NULL;
  if (!g_file_get_contents(path, &bytes, &size, &error)) {
    fprintf(stderr, "replay_models: %s\n", error->message);
    exit(1);
  }
  gchar *dir = g_path_get_dirname(path);
  fprintf(stderr, "%s\n", path); /* the culprit, when a sanitizer report follows */
  files++;
  ran += model_harness_run((const uint8_t *)bytes, size, dir) != 0;
  ran_from_file += model_harness_run_file(path) != 0;
  g_free(dir);
  g_free(bytes);
}

static void replay(const char *path)
{
  if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
    replay_file(path);
    return;
  }
  GDir *dir = g_dir_open(path, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name(dir))) {
    gchar *child = g_build_filename(path, name, NULL);
    if (g_str_has_suffix(name, ".onnx") || !strchr(name, '.'))
      replay(child);
    g_free(child);
  }
  if (dir)
    g_dir_close(dir);
}

int main(int argc, char **argv)
{
  model_harness_init();
  for (int i = 1; i < argc; i++)
    replay(argv[i]);
  printf("replay_models: %u models, %u planned and ran (%u loaded from their files; %u re-plans "
         "at batch 2 and back at 1 ran), the rest refused with a message\n", files, ran,
         ran_from_file, model_harness_replans_ran());
  return files ? 0 : 1;
}
