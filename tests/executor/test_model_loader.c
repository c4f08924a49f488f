/* Model loading: description of a good model (raw, typed and external
 * constants, dynamic batch), contexts of one model at several batch sizes
 * (they share packed weights) giving the same answers, a clear refusal of
 * every kind of broken model, and every ONNX test model in ../shared either
 * loading or being refused only for an unsupported operator or opset. */
#include <stdio.h>
#include <string.h>

#include "../runtime/npu_test.h"

static const char *models_dir;

static char *model_path(const char *name)
{
  return g_build_filename(models_dir, name, NULL);
}

static void check_good_model(npu_model *model)
{
  uint32_t count;
  NPU_ASSERT_OK(npu_model_input_count(model, &count));
  g_assert_cmpuint(count, ==, 1);
  NPU_ASSERT_OK(npu_model_output_count(model, &count));
  g_assert_cmpuint(count, ==, 1);
  NPU_ASSERT_OK(npu_model_node_count(model, &count));
  g_assert_cmpuint(count, ==, 5);
  int64_t opset;
  NPU_ASSERT_OK(npu_model_opset(model, &opset));
  g_assert_cmpint(opset, ==, 13);
  npu_tensor_info info;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &info));
  g_assert_cmpstr(info.name, ==, "image");
  g_assert_cmpint(info.dtype, ==, NPU_DTYPE_FLOAT32);
  g_assert_cmpuint(info.rank, ==, 4);
  g_assert_cmpint(info.dims[0], ==, NPU_DIM_DYNAMIC);
  g_assert_cmpstr(info.dim_names[0], ==, "batch");
  g_assert_cmpint(info.dims[1], ==, 3);
  g_assert_cmpint(info.dims[3], ==, 8);
  g_assert_null(info.dim_names[3]);
  NPU_ASSERT_OK(npu_model_output_info(model, 0, &info));
  g_assert_cmpstr(info.name, ==, "scores");
  g_assert_cmpint(info.dims[1], ==, 5);
  NPU_ASSERT_STATUS(npu_model_output_info(model, 1, &info), NPU_ERROR_INVALID_ARGUMENT);
}

static void test_good_model(void)
{
  char *path = model_path("good.onnx");
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  check_good_model(model);
  NPU_ASSERT_OK(npu_model_retain(model));
  NPU_ASSERT_OK(npu_model_release(model));
  NPU_ASSERT_OK(npu_model_release(model));
  NPU_ASSERT_STATUS(npu_model_release(model), NPU_ERROR_INVALID_HANDLE);

  /* From memory too; the caller's bytes may go right after. */
  gchar *bytes;
  gsize size;
  g_assert_true(g_file_get_contents(path, &bytes, &size, NULL));
  NPU_ASSERT_OK(npu_model_load_memory(bytes, size, NULL, &model));
  g_free(bytes);
  check_good_model(model);
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(path);
}

enum { IMAGE_FLOATS = 3 * 8 * 8, SCORES = 5 };

/* Runs the good model's context on `batch` images of `pixels`; returns the scores. */
static void run_good_model(npu_device *device, npu_context *context, int batch,
                           const float *pixels, float *scores)
{
  npu_buffer *input, *output;
  NPU_ASSERT_OK(npu_buffer_alloc(device, sizeof(float) * IMAGE_FLOATS * batch, &input));
  NPU_ASSERT_OK(npu_buffer_alloc(device, sizeof(float) * SCORES * batch, &output));
  NPU_ASSERT_OK(npu_memcpy_h2d(input, 0, pixels, sizeof(float) * IMAGE_FLOATS * batch));
  NPU_ASSERT_OK(npu_context_run_sync(context, &input, &output));
  NPU_ASSERT_OK(npu_memcpy_d2h(scores, output, 0, sizeof(float) * SCORES * batch));
  NPU_ASSERT_OK(npu_buffer_release(input));
  NPU_ASSERT_OK(npu_buffer_release(output));
}

static npu_context *good_model_context(npu_model *model, npu_device *device, int batch)
{
  npu_tensor_info shape;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &shape));
  shape.dims[0] = batch;
  npu_context *context;
  NPU_ASSERT_OK(npu_context_create(model, device, &shape, 1, &context));
  return context;
}

/* Contexts at batch 1 and 2 pack the weights once between them: each
 * answers as the other does, also after the first one is gone. */
static void test_contexts_of_one_model(void)
{
  char *path = model_path("good.onnx");
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_device *device = npu_test_open_device();
  float pixels[2 * IMAGE_FLOATS], single[2 * SCORES], pair[2 * SCORES], again[SCORES];
  for (int i = 0; i < 2 * IMAGE_FLOATS; i++)
    pixels[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  npu_context *one = good_model_context(model, device, 1);
  npu_context *two = good_model_context(model, device, 2);
  run_good_model(device, one, 1, pixels, single);
  run_good_model(device, one, 1, pixels + IMAGE_FLOATS, single + SCORES);
  NPU_ASSERT_OK(npu_context_destroy(one));
  run_good_model(device, two, 2, pixels, pair);
  for (int i = 0; i < 2 * SCORES; i++)
    g_assert_cmpfloat_with_epsilon(pair[i], single[i], 1e-5);
  one = good_model_context(model, device, 1);
  NPU_ASSERT_OK(npu_context_destroy(two));
  run_good_model(device, one, 1, pixels + IMAGE_FLOATS, again);
  for (int i = 0; i < SCORES; i++)
    g_assert_cmpfloat_with_epsilon(again[i], single[SCORES + i], 1e-5);
  NPU_ASSERT_OK(npu_context_destroy(one));
  NPU_ASSERT_OK(npu_device_release(device));
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(path);
}

static void test_external_data(void)
{
  char *path = model_path("external.onnx");
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  check_good_model(model);
  NPU_ASSERT_OK(npu_model_release(model));
  /* From memory without a directory, the external file cannot be found. */
  gchar *bytes;
  gsize size;
  g_assert_true(g_file_get_contents(path, &bytes, &size, NULL));
  NPU_ASSERT_STATUS(npu_model_load_memory(bytes, size, NULL, &model), NPU_ERROR_INVALID_MODEL);
  g_assert_nonnull(strstr(npu_last_error_message(), "external data"));
  NPU_ASSERT_OK(npu_model_load_memory(bytes, size, models_dir, &model));
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(bytes);
  g_free(path);
}

static void test_broken_models_are_refused(void)
{
  static const struct {
    const char *file;
    npu_status status;
    const char *message_part;
  } cases[] = {
      {"cycle.onnx", NPU_ERROR_INVALID_MODEL, "cycle"},
      {"missing_input.onnx", NPU_ERROR_INVALID_MODEL, "input 'nope' is not produced"},
      {"unknown_op.onnx", NPU_ERROR_INVALID_MODEL, "operator 'FancyOp' is not supported"},
      {"bad_arity.onnx", NPU_ERROR_INVALID_MODEL, "node 'lonely_add'"},
      {"duplicate_output.onnx", NPU_ERROR_INVALID_MODEL, "defined more than once"},
      {"custom_domain.onnx", NPU_ERROR_INVALID_MODEL, "domain 'com.microsoft'"},
      {"old_opset.onnx", NPU_ERROR_NOT_SUPPORTED, "Reshape before opset 5"},
      {"new_opset.onnx", NPU_ERROR_INVALID_MODEL, "opset 30"},
      {"no_output_producer.onnx", NPU_ERROR_INVALID_MODEL, "graph output 'y'"},
      {"short_data.onnx", NPU_ERROR_INVALID_MODEL, "12 bytes of data for 4 elements"},
      {"negative_dims.onnx", NPU_ERROR_INVALID_MODEL, "negative"},
      {"escape_external.onnx", NPU_ERROR_INVALID_MODEL, "leaves the model's directory"},
      {"no_such_model.onnx", NPU_ERROR_NOT_FOUND, "cannot open"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *path = model_path(cases[i].file);
    npu_model *model = NULL;
    NPU_ASSERT_STATUS(npu_model_load_file(path, &model), cases[i].status);
    if (!strstr(npu_last_error_message(), cases[i].message_part))
      g_error("%s: message '%s' lacks '%s'", cases[i].file, npu_last_error_message(),
              cases[i].message_part);
    g_assert_null(model);
    g_free(path);
  }
}

static void test_garbage_bytes_are_refused(void)
{
  char *path = model_path("good.onnx");
  gchar *bytes;
  gsize size;
  g_assert_true(g_file_get_contents(path, &bytes, &size, NULL));
  npu_model *model;
  /* Every truncation of a good model, and random bytes: refused, never a crash. */
  for (gsize cut = 1; cut < size; cut += 7) {
    npu_status status = npu_model_load_memory(bytes, cut, NULL, &model);
    if (status == NPU_OK)
      NPU_ASSERT_OK(npu_model_release(model)); /* a prefix may still be a valid message */
    else
      g_assert_cmpint(status, ==, NPU_ERROR_INVALID_MODEL);
  }
  GRand *rand = g_rand_new_with_seed(3);
  for (int round = 0; round < 200; round++) {
    guint8 noise[512];
    for (size_t i = 0; i < sizeof noise; i++)
      noise[i] = (guint8)g_rand_int(rand);
    if (npu_model_load_memory(noise, sizeof noise, NULL, &model) == NPU_OK)
      NPU_ASSERT_OK(npu_model_release(model));
  }
  g_rand_free(rand);
  NPU_ASSERT_STATUS(npu_model_load_memory(NULL, 4, NULL, &model), NPU_ERROR_INVALID_ARGUMENT);
  g_free(bytes);
  g_free(path);
}

/* ../shared/onnx-backend-tests: every model loads, or is refused only for
 * what the runtime does not support. */
static void try_shared_model(const char *path, guint *loaded, guint *unsupported)
{
  npu_model *model;
  npu_status status = npu_model_load_file(path, &model);
  if (status == NPU_OK) {
    (*loaded)++;
    NPU_ASSERT_OK(npu_model_release(model));
    return;
  }
  const char *message = npu_last_error_message();
  if (!strstr(message, "is not supported") && !strstr(message, "not a tensor"))
    g_error("%s refused for another reason: %s", path, message);
  (*unsupported)++;
  if (g_test_verbose())
    g_print("# unsupported: %s\n", message);
}

static void test_shared_onnx_models(void)
{
  const char *root = g_getenv("NPU_SHARED_ONNX_TESTS");
  if (!root || !g_file_test(root, G_FILE_TEST_IS_DIR)) {
    g_test_skip("../shared/onnx-backend-tests is not here (it is not shipped to users)");
    return;
  }
  guint loaded = 0, unsupported = 0;
  const char *suites[] = {"simple", "pytorch-converted", "pytorch-operator", "light"};
  for (size_t s = 0; s < G_N_ELEMENTS(suites); s++) {
    char *dir = g_build_filename(root, suites[s], NULL);
    GDir *listing = g_dir_open(dir, 0, NULL);
    const char *entry;
    while (listing && (entry = g_dir_read_name(listing))) {
      char *path = g_str_has_suffix(entry, ".onnx")
                       ? g_build_filename(dir, entry, NULL)
                       : g_build_filename(dir, entry, "model.onnx", NULL);
      if (g_file_test(path, G_FILE_TEST_EXISTS))
        try_shared_model(path, &loaded, &unsupported);
      g_free(path);
    }
    if (listing)
      g_dir_close(listing);
    g_free(dir);
  }
  g_print("# shared ONNX test models: %u loaded, %u refused as unsupported\n", loaded,
          unsupported);
  g_assert_cmpuint(loaded, >=, 10); /* most of the rest are opset 6, below what we take */
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  models_dir = g_getenv("NPU_TEST_MODELS");
  g_assert_nonnull(models_dir);
  g_test_add_func("/model/good-model", test_good_model);
  g_test_add_func("/model/external-data", test_external_data);
  g_test_add_func("/model/contexts-of-one-model", test_contexts_of_one_model);
  g_test_add_func("/model/broken-models-are-refused", test_broken_models_are_refused);
  g_test_add_func("/model/garbage-bytes-are-refused", test_garbage_bytes_are_refused);
  g_test_add_func("/model/shared-onnx-models", test_shared_onnx_models);
  return g_test_run();
}
