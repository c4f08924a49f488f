/* The Vulkan pipeline cache on disk (hal/vulkan/vk_pipeline_cache.c), in
 * a temporary XDG_CACHE_HOME: a first process makes the pipelines and
 * writes the file, a second process loads the driver's data from it; a
 * file with a flipped byte or a foreign header is ignored with a warning
 * (the pipelines are still made) and rewritten whole. Each process is this
 * program again (g_test_trap_subprocess), which prints what it loaded. */
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "npu_internal.h"
#include "vk_test.h"
#include "vulkan/vk_internal.h"

/* What each process does: open the device, say how many bytes of driver
 * data it took from the file, make two shaders' pipelines (which saves the
 * cache). */
static void child(void)
{
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  npu_hal_device *hal = npu_device_hal(device);
  printf("loaded %zu\n", hal->pipeline_cache_loaded);
  fflush(stdout);
  const vk_shader shaders[] = {VK_SHADER_UNARY, VK_SHADER_CONV2D};
  NPU_ASSERT_OK(vk_pipelines_ensure(hal, shaders, G_N_ELEMENTS(shaders)));
  NPU_ASSERT_OK(npu_device_release(device));
}

static gchar *cache_file(const char *dir)
{
  gchar *sub = g_build_filename(dir, "gst-npu", NULL);
  GDir *listing = g_dir_open(sub, 0, NULL);
  g_assert_nonnull(listing);
  const char *name = g_dir_read_name(listing);
  g_assert_nonnull(name);
  g_assert_true(g_str_has_prefix(name, "vulkan-pipelines-") && g_str_has_suffix(name, ".bin"));
  gchar *path = g_build_filename(sub, name, NULL);
  g_assert_null(g_dir_read_name(listing)); /* no temporary left behind */
  g_dir_close(listing);
  g_free(sub);
  return path;
}

static void test_second_process_loads(void)
{
  if (g_test_subprocess()) {
    child();
    return;
  }
  npu_device *device = vk_test_open_device();
  if (!device)
    return;
  NPU_ASSERT_OK(npu_device_release(device));
  gchar *dir = g_dir_make_tmp("npu-pipeline-cache-XXXXXX", NULL);
  g_assert_nonnull(dir);
  g_setenv("XDG_CACHE_HOME", dir, TRUE);

  /* First process: nothing to load; the file is written. */
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
  g_test_trap_assert_stdout("loaded 0\n");
  gchar *path = cache_file(dir);
  gchar *contents;
  gsize size;
  g_assert_true(g_file_get_contents(path, &contents, &size, NULL));
  g_assert_cmpuint(size, >, 48);

  /* Second process: loads the driver's data (everything after our header). */
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
  g_test_trap_assert_stdout_unmatched("loaded 0\n");
  g_test_trap_assert_stdout("loaded *\n");
  g_test_trap_assert_stderr_unmatched("*warning*");

  /* A flipped byte in the data: ignored with a warning, then rewritten. */
  contents[size - 1] ^= 0x5a;
  g_assert_true(g_file_set_contents(path, contents, (gssize)size, NULL));
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
  g_test_trap_assert_stdout("loaded 0\n");
  g_test_trap_assert_stderr("*ignoring the Vulkan pipeline cache*checksum*");
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
  g_test_trap_assert_stdout_unmatched("loaded 0\n");

  /* Not a cache at all, and a truncated one. */
  g_assert_true(g_file_set_contents(path, "not a pipeline cache", -1, NULL));
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
  g_test_trap_assert_stdout("loaded 0\n");
  g_test_trap_assert_stderr("*ignoring*bad header*");
  g_assert_true(g_file_set_contents(path, contents, (gssize)size - 3, NULL));
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
  g_test_trap_assert_stdout("loaded 0\n");
  g_test_trap_assert_stderr("*ignoring*truncated*");

  g_unlink(path);
  gchar *sub = g_build_filename(dir, "gst-npu", NULL);
  g_rmdir(sub);
  g_rmdir(dir);
  g_free(sub);
  g_free(contents);
  g_free(path);
  g_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vulkan/pipeline-cache/second-process-loads", test_second_process_loads);
  return g_test_run();
}
