/* Model loading: description of a good model (raw, typed and external
 * constants, dynamic batch), contexts of one model at several batch sizes
 * (they share packed weights) giving the same answers, a clear refusal of
 * every kind of broken model, and every ONNX test model in ../shared either
 * loading or being refused only for an unsupported operator or opset. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

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

/* Context options: a precision out of range is refused with its value, the
 * names map both ways, and no options are the defaults. */
static void test_context_options_are_checked(void)
{
  char *path = model_path("good.onnx");
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_device *device = npu_test_open_device();
  npu_tensor_info shape;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &shape));
  shape.dims[0] = 1;
  npu_context *context = NULL;
  npu_context_options bad = {.precision = (npu_precision)7};
  NPU_ASSERT_STATUS(npu_context_create_with_options(model, device, &shape, 1, &bad, &context),
                    NPU_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(npu_last_error_message(), "no precision 7"));
  g_assert_null(context);
  npu_precision precision;
  NPU_ASSERT_STATUS(npu_precision_from_name("fp16", &precision), NPU_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(npu_last_error_message(), "unknown precision 'fp16'"));
  NPU_ASSERT_OK(npu_precision_from_name("bf16", &precision));
  g_assert_cmpint(precision, ==, NPU_PRECISION_BF16);
  g_assert_cmpstr(npu_precision_name(NPU_PRECISION_FP32), ==, "fp32");
  g_assert_null(npu_precision_name((npu_precision)7));
  NPU_ASSERT_OK(npu_context_create_with_options(model, device, &shape, 1, NULL, &context));
  NPU_ASSERT_OK(npu_context_destroy(context));
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
      {"constant_output_resized.onnx", NPU_ERROR_INVALID_MODEL,
       "graph output 'y' is declared with another type or shape than the constant"},
      {"input_output_retyped.onnx", NPU_ERROR_INVALID_MODEL,
       "graph output 'x' is declared with another type or shape than the graph input"},
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

static void assert_message_has(const char *what, const char *part)
{
  if (part && !strstr(npu_last_error_message(), part))
    g_error("%s: message '%s' lacks '%s'", what, npu_last_error_message(), part);
}

/* Loads external.onnx's bytes with `location` (at most 16 bytes) in place
 * of its data file's name, from `dir`; returns the status. */
static npu_status load_external_as(const char *dir, const char *location)
{
  char *path = model_path("external.onnx");
  gchar *bytes;
  gsize size;
  g_assert_true(g_file_get_contents(path, &bytes, &size, NULL));
  char *name = memmem(bytes, size, "good_weights.bin", 16);
  g_assert_nonnull(name);
  g_assert_cmpuint(strlen(location), <=, 16);
  memset(name, 0, 16); /* the string's end: protobuf-c reads it up to a NUL */
  memcpy(name, location, strlen(location));
  npu_model *model = NULL;
  npu_status status = npu_model_load_memory(bytes, size, dir, &model);
  if (model)
    npu_model_release(model);
  g_free(bytes);
  g_free(path);
  return status;
}

/* Issue 12, item 6: containment of external data holds after symlinks are
 * resolved; a symlink that stays inside the model's directory is fine. */
static void test_external_data_symlinks(void)
{
  gchar *root = g_dir_make_tmp("npu-external-XXXXXX", NULL);
  gchar *dir = g_build_filename(root, "model", NULL);
  gchar *inner = g_build_filename(dir, "inner", NULL);
  g_assert_cmpint(g_mkdir_with_parents(inner, 0700), ==, 0);
  char *weights_path = model_path("good_weights.bin");
  gchar *weights;
  gsize size;
  g_assert_true(g_file_get_contents(weights_path, &weights, &size, NULL));
  /* The same bytes outside: before the fix they loaded through a symlink. */
  gchar *outside = g_build_filename(root, "secret.bin", NULL);
  gchar *kept = g_build_filename(inner, "weight.bin", NULL);
  g_assert_true(g_file_set_contents(outside, weights, (gssize)size, NULL));
  g_assert_true(g_file_set_contents(kept, weights, (gssize)size, NULL));
  gchar *file_link = g_build_filename(dir, "file_link.bin", NULL);
  gchar *dir_link = g_build_filename(dir, "dlnk", NULL);
  gchar *inside_link = g_build_filename(dir, "in_link.bin", NULL);
  gchar *model_link = g_build_filename(root, "model_link", NULL);
  g_assert_cmpint(symlink("../secret.bin", file_link), ==, 0);
  g_assert_cmpint(symlink("..", dir_link), ==, 0);
  g_assert_cmpint(symlink("inner/weight.bin", inside_link), ==, 0);
  g_assert_cmpint(symlink("model", model_link), ==, 0);

  NPU_ASSERT_STATUS(load_external_as(dir, "file_link.bin"), NPU_ERROR_INVALID_MODEL);
  assert_message_has("a file symlink", "outside the model's directory");
  assert_message_has("a file symlink", "secret.bin");
  NPU_ASSERT_STATUS(load_external_as(dir, "dlnk/secret.bin"), NPU_ERROR_INVALID_MODEL);
  assert_message_has("behind a directory symlink", "outside the model's directory");
  NPU_ASSERT_STATUS(load_external_as(dir, "inner"), NPU_ERROR_INVALID_MODEL);
  assert_message_has("a directory", "not a regular file");
  NPU_ASSERT_OK(load_external_as(dir, "in_link.bin"));
  NPU_ASSERT_OK(load_external_as(dir, "inner/weight.bin"));
  NPU_ASSERT_OK(load_external_as(model_link, "inner/weight.bin")); /* the folder a link */
  NPU_ASSERT_STATUS(load_external_as(dir, "missing.bin"), NPU_ERROR_IO);
  assert_message_has("a missing file", "cannot open external data");

  gchar *paths[] = {file_link, dir_link, inside_link, model_link, kept, outside, inner, dir, root};
  for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
    g_assert_cmpint(g_remove(paths[i]), ==, 0);
    g_free(paths[i]);
  }
  g_free(weights);
  g_free(weights_path);
}

/* Models crafted to overflow sizes or to give operators constant inputs and
 * attributes that do not fit them: loading or planning refuses each with a
 * message naming the tensor, input or attribute (issue 12). */
/* One context reshaped between batch sizes answers as contexts made for
 * each; shapes already planned are kept, a bad shape is refused and leaves
 * the current one, and the weights stay as they were. */
static void test_context_reshape(void)
{
  char *path = model_path("good.onnx");
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_device *device = npu_test_open_device();
  float pixels[3 * IMAGE_FLOATS], expected[3 * SCORES], scores[3 * SCORES];
  for (int i = 0; i < 3 * IMAGE_FLOATS; i++)
    pixels[i] = (float)((i * 29) % 97) / 40.0f - 1.2f;
  npu_context *reference = good_model_context(model, device, 3);
  run_good_model(device, reference, 3, pixels, expected);
  NPU_ASSERT_OK(npu_context_destroy(reference));

  npu_context *context = good_model_context(model, device, 1);
  npu_context_stats before, after;
  NPU_ASSERT_OK(npu_context_get_stats(context, &before));
  g_assert_cmpuint(before.shape_plans, ==, 1);
  npu_tensor_info shape;
  NPU_ASSERT_OK(npu_context_input_info(context, 0, &shape));
  for (int batch = 3; batch >= 1; batch -= 2) {
    shape.dims[0] = batch;
    NPU_ASSERT_OK(npu_context_reshape(context, &shape, 1));
    npu_tensor_info output;
    NPU_ASSERT_OK(npu_context_output_info(context, 0, &output));
    g_assert_cmpint(output.dims[0], ==, batch);
    run_good_model(device, context, batch, pixels, scores);
    for (int i = 0; i < batch * SCORES; i++)
      g_assert_cmpfloat_with_epsilon(scores[i], expected[i], 1e-5);
  }
  NPU_ASSERT_OK(npu_context_get_stats(context, &after));
  g_assert_cmpuint(after.shape_plans, ==, 2);
  g_assert_cmpuint(after.constant_bytes, ==, before.constant_bytes);

  shape.dims[2] = 9; /* the model fixes H to 8 */
  g_assert_cmpint(npu_context_reshape(context, &shape, 1), ==, NPU_ERROR_INVALID_ARGUMENT);
  assert_message_has("bad shape", "axis 2");
  run_good_model(device, context, 1, pixels, scores); /* still batch 1 */
  for (int i = 0; i < SCORES; i++)
    g_assert_cmpfloat_with_epsilon(scores[i], expected[i], 1e-5);
  NPU_ASSERT_OK(npu_context_destroy(context));
  NPU_ASSERT_OK(npu_device_release(device));
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(path);
}

static void test_crafted_models_are_refused(void)
{
  static const struct {
    const char *name;
    const char *parts[2];
  } cases[] = {
      {"expand_huge", {"shape too large", "'y'"}},
      {"expand_count_overflow", {"shape too large", "'y'"}},
      {"constant_of_shape_huge", {"shape too large", "'y'"}},
      {"constant_of_shape_beyond_memory", {"shape too large", "'y'"}},
      {"tile_overflow", {"shape too large", "node 'n'"}},
      {"empty_huge_dims", {"shape too large", "input 'x'"}}, /* its strides overflow */
      {"pool_pads_overflow", {"shape too large", "node 'n'"}},
      {"reducemax_many_axes", {"attribute 'axes' has 12 values", "node 'n'"}},
      {"squeeze_many_axes", {"attribute 'axes' has 12 values", "node 'n'"}},
      {"bn_empty_params", {"input 'scale' has 0 values", "expected 16"}},
      {"bn_short_params", {"input 'scale' has 1 values", "expected 16"}},
      {"bn_rank0", {"input 'x' has rank 0", "at least 2"}},
      {"conv_empty_bias", {"input 'b' has 0 values", "expected 8"}},
      {"conv_short_bias", {"input 'b' has 2 values", "expected 8"}},
      {"expand_float_shape", {"input 's' is float32", "int64"}},
      {"reshape_uint8_shape", {"input 's' is uint8", "int64"}},
      {"split_few_sizes", {"input 's' has 2 values", "expected 3"}},
      {"clip_empty_min", {"input 'lo' has 0 values", "expected 1"}},
      {"conv_negative_pads", {"attribute 'pads' value -1", "none negative"}},
      {"maxpool_zero_stride", {"attribute 'strides' value 0", "a positive one"}},
      {"averagepool_bad_pads", {"attribute 'pads' has 2 values", "expected 4"}},
      {"convtranspose_bad_pads", {"attribute 'pads' has 1 values", "expected 4"}},
      {"conv_groups_mismatch", {"weights 'w' [8, 1, ...] do not fit 1 input channels", "2 groups"}},
      {"conv_kernel_shape_mismatch", {"kernel_shape differs from the weights 'w'", "node 'n'"}},
      {"gemm_short_c", {"C 'c' does not broadcast", "2 x 5"}},
      {"einsum_three_inputs", {"Einsum 'i,i,i->i': 3 inputs", "only Einsums of 1 or 2"}},
      {"einsum_diagonal_of_unknown_size", {"Einsum 'ii->i'", "needs its size known at load"}},
      {"einsum_ellipsis_of_unknown_rank", {"Einsum '...i->i'", "input 0 are not known at load"}},
      {"einsum_bad_label", {"Einsum 'i1->i'", "'1' is not a label"}},
      {"resize_int64_scales", {"input 'scales' is int64", "float32"}},
      {"transpose_repeated_perm", {"perm is not a permutation", "node 'n'"}},
      {"unsqueeze_repeated_axes", {"axis 0 cannot be inserted", "repeated"}},
      {"pad_beyond_axis", {"removes more than the axis", "node 'n'"}},
      {"slice_without_bounds", {"1 inputs, Slice (opset 12) takes 3 to 5", "node 'n'"}},
      {"topk_without_k", {"1 inputs, TopK (opset 11) takes 2 to 2", "node 'n'"}},
      {"gather_from_empty", {"indices into an empty axis", "node 'n'"}},
      {"resize_scales_and_sizes", {"both scales and sizes", "node 'n'"}},
      {"resize_negative_scale", {"empty output on axis 2", "node 'n'"}},
      {"matmul_bool_operand", {"input 'b' is bool, input 'a' float32", "one element type"}},
      {"concat_mixed_types", {"input 'b' is int64", "Concat takes one element type"}},
      {"maxpool_huge_window", {"pooling windows larger than 16777216 positions", "node 'n'"}},
      {"dequantize_float_zero", {"zero point 'z' is float32", "expected uint8"}},
      {"dequantize_zero_type_mismatch", {"zero point 'z' is int8", "expected uint8"}},
      {"dequantize_scale_count", {"'s' has 2 values for 3 indices of axis 1", "node 'n'"}},
      {"dequantize_axis_out_of_range", {"axis 4 is out of range for rank 4", "node 'n'"}},
      {"quantize_scale_zero_shapes", {"scale 's' and zero point 'z' differ in shape", "node 'n'"}},
      {"quantize_int64_input", {"input 'x' is int64", "QuantizeLinear takes float32"}},
      {"dequantize_blocked", {"blocked quantisation (block_size 2, opset 21)", "node 'n'"}},
      {"quantize_to_uint16", {"output_dtype 4", "uint8 (2) or int8 (3)"}},
      {"gelu_bad_approximation", {"approximate 'sigmoid'", "'none' or 'tanh'"}},
      {"depth_to_space_block3", {"blocksize 3 does not divide the channels", "node 'n'"}},
      {"group_norm_groups", {"num_groups 3 does not divide the 16 channels", "node 'n'"}},
      {"lrn_size_zero", {"size 0, expected a positive one", "node 'n'"}},
      {"grid_sample_grid_shape", {"grid 'g' is not [N, H, W, 2]", "node 'n'"}},
      {"roi_align_regions_shape", {"regions 'r' are not [R, 4]", "node 'n'"}},
      {"resize_axis_out_of_range", {"axis 4 out of range for rank 4", "node 'n'"}},
      {"resize_unknown_policy", {"keep_aspect_ratio_policy 'fit'", "node 'n'"}},
      {"lstm_bad_direction", {"direction 'sideways'", "forward, reverse or bidirectional"}},
      {"lstm_weights_misshaped", {"input 'w' (input 1) is not shaped [1, 16, 3]", "node 'n'"}},
      {"lstm_weights_computed", {"input 'w' is computed at run time", "LSTM needs its values"}},
      {"lstm_unknown_activation", {"activation 'Swish'", "none of ONNX's recurrent"}},
      {"lstm_hidden_size_mismatch", {"hidden_size 5", "the weights 'r' give 4"}},
      {"qlinearconv_bias_type", {"bias 'b' must be int32", "(2)"}},
      {"qlinearconv_weight_scales", {"'ws' has 3 values for 2 indices of axis 0", "node 'n'"}},
      {"qlinearmatmul_float_operand", {"input 'b' is float32", "int8 or uint8"}},
      {"qlinearconcat_loose_triple", {"QLinearConcat takes Y's scale and zero point", "6 inputs"}},
      {"mod_float_without_fmod", {"input 'x' is float32, which Mod takes only with fmod = 1",
                                  "node 'n'"}},
      {"scatternd_index_out_of_range", {"node 'n'", "index 4 (tuple 1 of indices 'i') is out of "
                                        "range for axis 0 of the data 'x', of size 4"}},
      {"scatternd_negative_index_out_of_range", {"node 'n'", "index -5 (tuple 0 of indices 'i')"}},
      {"scatternd_long_tuples", {"indices 'i' end in tuples of 3", "the data's rank 2"}},
      {"scatternd_updates_misshaped", {"updates 'u' are not shaped as the indices 'i'", "node 'n'"}},
      {"scatternd_max_before_18", {"reduction 'max' (opset 16 has none, add and mul)", "node 'n'"}},
      {"cumsum_axis_at_run_time", {"input 'k' is computed at run time", "CumSum needs its "
                                                                          "values"}},
      {"cumsum_axis_out_of_range", {"axis -2 ('a') out of range for rank 1", "node 'n'"}},
      {"one_hot_depth_at_run_time", {"input 'k' is computed at run time", "OneHot needs its "
                                                                            "values"}},
      {"one_hot_three_values", {"values has 3 elements, expected 2 (off, on)", "node 'n'"}},
      {"gather_elements_indices_wider", {"indices of 3 on axis 1, beyond the data's 2",
                                         "node 'n'"}},
      {"scatter_elements_updates_misshaped", {"updates not shaped as the indices", "node 'n'"}},
      {"gather_nd_batch_dims_mismatch", {"indices and data differ on batch axis 0", "node 'n'"}},
      {"gather_elements_constant_index_out_of_range",
       {"index -5 (element 1 of the indices) is out of range for axis 0", "of size 4"}},
      {"gather_nd_constant_index_out_of_range",
       {"index 2 (tuple 1 of the indices) is out of range for axis 1", "of size 2"}},
      {"bitshift_without_direction", {"direction '', expected 'LEFT' or 'RIGHT'", "node 'n'"}},
      {"eye_like_of_rank_3", {"input of rank 3, expected a matrix", "node 'n'"}},
      {"roi_align_folded_batch_index",
       {"node 'n' (RoiAlign): batch index 5 of region 0 is not one of the 1 images",
        "node 'n'"}},
  };
  npu_device *device = npu_test_open_device();
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *file = g_strdup_printf("crafted_%s.onnx", cases[i].name);
    char *path = model_path(file);
    npu_model *model = NULL;
    npu_context *context = NULL;
    npu_clear_error();
    npu_status status = npu_model_load_file(path, &model);
    if (status == NPU_OK) {
      status = npu_context_create(model, device, NULL, 0, &context);
      NPU_ASSERT_OK(npu_model_release(model));
    }
    if (status == NPU_OK)
      g_error("%s: planned without an error", cases[i].name);
    g_assert_null(context);
    assert_message_has(cases[i].name, cases[i].parts[0]);
    assert_message_has(cases[i].name, cases[i].parts[1]);
    g_free(path);
    g_free(file);
  }
  NPU_ASSERT_OK(npu_device_release(device));
}

/* A shape profile whose input is beyond any memory: refused when planning
 * (npu-run --shape image=4611686018427387904x3x8x8 came here), naming it. */
static void test_huge_input_shape_is_refused(void)
{
  char *path = model_path("good.onnx");
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_device *device = npu_test_open_device();
  static const int64_t batches[] = {INT64_C(1) << 62, INT64_C(1) << 40, INT64_MAX};
  for (size_t i = 0; i < G_N_ELEMENTS(batches); i++) {
    npu_tensor_info shape;
    NPU_ASSERT_OK(npu_model_input_info(model, 0, &shape));
    shape.dims[0] = batches[i];
    npu_context *context = NULL;
    NPU_ASSERT_STATUS(npu_context_create(model, device, &shape, 1, &context),
                      NPU_ERROR_INVALID_ARGUMENT);
    assert_message_has("huge batch", "shape too large");
    assert_message_has("huge batch", "input 'image'");
    g_assert_null(context);
  }
  NPU_ASSERT_OK(npu_device_release(device));
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(path);
}

/* Runs crafted model `name` on one input of `size` bytes (none when 0)
 * and returns its first output (g_free it) and that output's byte size. */
static void *run_crafted(npu_device *device, const char *name, const void *x, size_t size,
                         size_t *out_size)
{
  char *file = g_strdup_printf("crafted_%s.onnx", name);
  char *path = model_path(file);
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  npu_context *context;
  NPU_ASSERT_OK(npu_context_create(model, device, NULL, 0, &context));
  npu_tensor_info info;
  NPU_ASSERT_OK(npu_context_output_info(context, 0, &info));
  *out_size = npu_dtype_size(info.dtype);
  for (uint32_t d = 0; d < info.rank; d++)
    *out_size *= (size_t)info.dims[d];
  npu_buffer *input, *output;
  NPU_ASSERT_OK(npu_buffer_alloc(device, size + 1, &input));
  NPU_ASSERT_OK(npu_buffer_alloc(device, *out_size + 1, &output));
  if (size)
    NPU_ASSERT_OK(npu_memcpy_h2d(input, 0, x, size));
  NPU_ASSERT_OK(npu_context_run_sync(context, &input, &output));
  void *values = g_malloc0(*out_size + 1);
  if (*out_size)
    NPU_ASSERT_OK(npu_memcpy_d2h(values, output, 0, *out_size));
  NPU_ASSERT_OK(npu_buffer_release(input));
  NPU_ASSERT_OK(npu_buffer_release(output));
  NPU_ASSERT_OK(npu_context_destroy(context));
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(path);
  g_free(file);
  return values;
}

/* Edge cases that are valid ONNX and must run right, without undefined
 * behaviour (the sanitizer build halts on it): NaN through the fast
 * exponential, slice steps of +-2^63, empty tensors. */
static void test_crafted_models_run(void)
{
  npu_device *device = npu_test_open_device();
  const float x[4] = {NAN, 0.0f, -200.0f, 200.0f}, ramp[4] = {1, 2, 3, 4};
  size_t n;
  float *y = run_crafted(device, "sigmoid", x, sizeof x, &n);
  g_assert_cmpuint(n, ==, sizeof x);
  g_assert_true(isnan(y[0]));
  g_assert_cmpfloat_with_epsilon(y[1], 0.5f, 1e-6);
  g_assert_cmpfloat_with_epsilon(y[2], 0.0f, 1e-6);
  g_assert_cmpfloat_with_epsilon(y[3], 1.0f, 1e-6);
  g_free(y);
  y = run_crafted(device, "slice_huge_step", ramp, sizeof ramp, &n);
  g_assert_cmpuint(n, ==, sizeof(float));
  g_assert_cmpfloat(y[0], ==, 1.0f);
  g_free(y);
  y = run_crafted(device, "slice_negative_huge_step", ramp, sizeof ramp, &n);
  g_assert_cmpuint(n, ==, sizeof(float));
  g_assert_cmpfloat(y[0], ==, 4.0f);
  g_free(y);
  y = run_crafted(device, "concat_empty", ramp, sizeof ramp, &n);
  g_assert_cmpuint(n, ==, sizeof ramp);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat(y[i], ==, ramp[i]);
  g_free(y);
  y = run_crafted(device, "pad_scalar", ramp, sizeof(float), &n); /* no pads on no axes */
  g_assert_cmpuint(n, ==, sizeof(float));
  g_assert_cmpfloat(y[0], ==, 1.0f);
  g_free(y);
  y = run_crafted(device, "bn_zero_channels", NULL, 0, &n);
  g_assert_cmpuint(n, ==, 0);
  g_free(y);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* Integer arithmetic wraps as two's complement hardware does (a signed
 * overflow would be undefined), MIN / -1 included; an integer power takes
 * log2 of its exponent steps (2^62 + 1 multiplications hung). */
static void test_integer_arithmetic_wraps(void)
{
  npu_device *device = npu_test_open_device();
  /* b = {1, -1, 0, 2^62 + 1} in each model */
  const int64_t a[4] = {INT64_MAX, INT64_MIN, 3, 2};
  static const struct {
    const char *name;
    int64_t expected[4];
  } cases[] = {
      {"int_add", {INT64_MIN, INT64_MAX, 3, (INT64_C(1) << 62) + 3}},
      {"int_div", {INT64_MAX, INT64_MIN, 0, 0}},
      {"int_pow", {INT64_MAX, 0, 1, 0}},
      /* MIN % -1 overflows in C: 0, its value; % 0 is undefined in ONNX: 0, as Div gives */
      {"int_mod", {0, 0, 0, 2}},
      {"int_fmod", {0, 0, 0, 2}},
  };
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    size_t n;
    int64_t *y = run_crafted(device, cases[c].name, a, sizeof a, &n);
    g_assert_cmpuint(n, ==, sizeof a);
    for (int i = 0; i < 4; i++)
      if (y[i] != cases[c].expected[i])
        g_error("%s: element %d is %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT,
                cases[c].name, i, y[i], cases[c].expected[i]);
    g_free(y);
  }
  /* An int64 attribute value is read exactly (it went through a double). */
  size_t n;
  int64_t *y = run_crafted(device, "constant_of_shape_int64_max", NULL, 0, &n);
  g_assert_cmpuint(n, ==, 2 * sizeof *y);
  g_assert_cmpint(y[0], ==, INT64_MAX);
  g_assert_cmpint(y[1], ==, INT64_MAX);
  g_free(y);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* Casts of floats outside the integer type (NaN, +-1e30) saturate (NaN
 * gives 0) instead of converting out of range, which is undefined; uint8
 * keeps the low byte as NumPy does. */
static void test_casts_saturate(void)
{
  npu_device *device = npu_test_open_device();
  const float x[4] = {NAN, 1e30f, -1e30f, 300.75f};
  size_t n;
  int64_t *i64 = run_crafted(device, "cast_to_int64", x, sizeof x, &n);
  g_assert_cmpuint(n, ==, 4 * sizeof *i64);
  g_assert_cmpint(i64[0], ==, 0);
  g_assert_cmpint(i64[1], ==, INT64_MAX);
  g_assert_cmpint(i64[2], ==, INT64_MIN);
  g_assert_cmpint(i64[3], ==, 300);
  g_free(i64);
  int32_t *i32 = run_crafted(device, "cast_to_int32", x, sizeof x, &n);
  g_assert_cmpint(i32[0], ==, 0);
  g_assert_cmpint(i32[1], ==, INT32_MAX);
  g_assert_cmpint(i32[2], ==, INT32_MIN);
  g_assert_cmpint(i32[3], ==, 300);
  g_free(i32);
  uint8_t *u8 = run_crafted(device, "cast_to_uint8", x, sizeof x, &n);
  g_assert_cmpuint(u8[0], ==, 0);
  g_assert_cmpuint(u8[1], ==, 255);
  g_assert_cmpuint(u8[2], ==, 0);
  g_assert_cmpuint(u8[3], ==, 44);
  g_free(u8);
  NPU_ASSERT_OK(npu_device_release(device));
}

/* A context of crafted model NAME: data 4 x 2 = 0..7 (ScatterND's
 * updates 3 x 2 = 10..60), three indices fed at run time. */
static npu_context *fed_index_context(npu_device *device, const char *name, npu_model **model)
{
  char *file = g_strdup_printf("crafted_%s.onnx", name);
  char *path = model_path(file);
  NPU_ASSERT_OK(npu_model_load_file(path, model));
  npu_context *context;
  NPU_ASSERT_OK(npu_context_create(*model, device, NULL, 0, &context));
  g_free(path);
  g_free(file);
  return context;
}

/* Runs it on `indices`; returns the run's status, and the output of `count`
 * values in `y` (which starts as -1s), and the message in `message` when
 * it failed. */
static npu_status run_fed_indices(npu_device *device, npu_context *context,
                                  const int64_t indices[3], float *y, size_t count,
                                  char message[512])
{
  npu_buffer *input, *output;
  NPU_ASSERT_OK(npu_buffer_alloc(device, 3 * sizeof(int64_t), &input));
  NPU_ASSERT_OK(npu_buffer_alloc(device, count * sizeof(float), &output));
  NPU_ASSERT_OK(npu_memcpy_h2d(input, 0, indices, 3 * sizeof(int64_t)));
  for (size_t i = 0; i < count; i++)
    y[i] = -1.0f;
  NPU_ASSERT_OK(npu_memcpy_h2d(output, 0, y, count * sizeof(float)));
  npu_status status = npu_context_run_sync(context, &input, &output);
  g_strlcpy(message, status == NPU_OK ? "" : npu_last_error_message(), 512);
  NPU_ASSERT_OK(npu_memcpy_d2h(y, output, 0, count * sizeof(float)));
  NPU_ASSERT_OK(npu_buffer_release(input));
  NPU_ASSERT_OK(npu_buffer_release(output));
  return status;
}

/* ScatterND with indices known only at run time: negative ones count from
 * the end, repeated ones give the last update (none) or combine them all
 * (add, mul, max, min), and an out-of-range one fails the run with a
 * message naming the node, the output left unwritten; the context then
 * runs right again. */
static void test_scatter_nd_indices_fed_at_run_time(void)
{
  npu_device *device = npu_test_open_device();
  const int64_t repeated[3] = {-1, 0, 3}; /* rows 3, 0, 3 get updates 10 20, 30 40, 50 60 */
  static const struct {
    const char *reduction;
    float expected[8];
  } cases[] = {
      {"none", {30, 40, 2, 3, 4, 5, 50, 60}}, {"add", {30, 41, 2, 3, 4, 5, 66, 87}},
      {"mul", {0, 40, 2, 3, 4, 5, 3000, 8400}}, {"max", {30, 40, 2, 3, 4, 5, 50, 60}},
      {"min", {0, 1, 2, 3, 4, 5, 6, 7}},
  };
  float y[8];
  char message[512];
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    npu_model *model;
    char *name = g_strdup_printf("scatternd_fed_%s", cases[c].reduction);
    npu_context *context = fed_index_context(device, name, &model);
    g_free(name);
    NPU_ASSERT_OK(run_fed_indices(device, context, repeated, y, 8, message));
    for (int i = 0; i < 8; i++)
      if (y[i] != cases[c].expected[i])
        g_error("%s: element %d is %g, expected %g", cases[c].reduction, i, y[i],
                cases[c].expected[i]);
    NPU_ASSERT_OK(npu_context_destroy(context));
    NPU_ASSERT_OK(npu_model_release(model));
  }
  npu_model *model;
  npu_context *context = fed_index_context(device, "scatternd_fed_none", &model);
  static const int64_t outside[][3] = {{0, 4, 1}, {0, 1, -5}, {INT64_MIN, 0, 0}};
  for (size_t c = 0; c < G_N_ELEMENTS(outside); c++) {
    g_assert_cmpint(run_fed_indices(device, context, outside[c], y, 8, message), ==,
                    NPU_ERROR_INVALID_ARGUMENT);
    if (!strstr(message, "node 'n' (ScatterND): index ") ||
        !strstr(message, "is out of range for axis 0 of the data, of size 4"))
      g_error("indices outside: message \"%s\"", message);
    for (int i = 0; i < 8; i++)
      g_assert_cmpfloat(y[i], ==, -1.0f);
    NPU_ASSERT_OK(run_fed_indices(device, context, repeated, y, 8, message));
    for (int i = 0; i < 8; i++)
      g_assert_cmpfloat(y[i], ==, cases[0].expected[i]);
  }
  NPU_ASSERT_OK(npu_context_destroy(context));
  NPU_ASSERT_OK(npu_model_release(model));
  NPU_ASSERT_OK(npu_device_release(device));
}

/* GatherElements, ScatterElements and GatherND with indices known only at
 * run time: negative ones count from the end, a repeated one scatters its
 * last update, and an out-of-range one fails the run with a message naming
 * the node and the index (the scatter's output left unwritten); the
 * context then runs right again. */
static void test_element_indices_fed_at_run_time(void)
{
  npu_device *device = npu_test_open_device();
  const int64_t repeated[3] = {-1, 0, 3}, outside[][3] = {{0, 4, 1}, {-5, 0, 0}};
  static const struct {
    const char *model, *op;
    size_t count;
    float expected[8]; /* on `repeated` */
  } cases[] = {
      {"gather_elements_fed", "GatherElements", 3, {6, 0, 6}},
      {"scatter_elements_fed", "ScatterElements", 8, {30, 1, 2, 3, 4, 5, 50, 7}},
      {"gather_nd_fed", "GatherND", 6, {6, 7, 0, 1, 6, 7}},
  };
  float y[8];
  char message[512], *want;
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    npu_model *model;
    npu_context *context = fed_index_context(device, cases[c].model, &model);
    for (size_t o = 0; o <= G_N_ELEMENTS(outside); o++) {
      NPU_ASSERT_OK(run_fed_indices(device, context, repeated, y, cases[c].count, message));
      for (size_t i = 0; i < cases[c].count; i++)
        if (y[i] != cases[c].expected[i])
          g_error("%s: element %zu is %g, expected %g", cases[c].op, i, y[i],
                  cases[c].expected[i]);
      if (o == G_N_ELEMENTS(outside))
        break;
      g_assert_cmpint(run_fed_indices(device, context, outside[o], y, cases[c].count, message),
                      ==, NPU_ERROR_INVALID_ARGUMENT);
      want = g_strdup_printf("node 'n' (%s): index %d ", cases[c].op, o == 0 ? 4 : -5);
      if (!strstr(message, want) || !strstr(message, "is out of range"))
        g_error("%s, indices outside: message \"%s\"", cases[c].op, message);
      g_free(want);
      for (size_t i = 0; i < cases[c].count && strstr(cases[c].op, "Scatter"); i++)
        g_assert_cmpfloat(y[i], ==, -1.0f);
    }
    NPU_ASSERT_OK(npu_context_destroy(context));
    NPU_ASSERT_OK(npu_model_release(model));
  }
  NPU_ASSERT_OK(npu_device_release(device));
}

/* A directory is not a model: said so, without reading it. */
static void test_directory_is_refused(void)
{
  npu_model *model = NULL;
  NPU_ASSERT_STATUS(npu_model_load_file(models_dir, &model), NPU_ERROR_INVALID_ARGUMENT);
  assert_message_has("directory", "not a regular file");
  g_assert_null(model);
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
  g_test_add_func("/model/context-options-are-checked", test_context_options_are_checked);
  g_test_add_func("/model/external-data", test_external_data);
  g_test_add_func("/model/external-data-symlinks", test_external_data_symlinks);
  g_test_add_func("/model/contexts-of-one-model", test_contexts_of_one_model);
  g_test_add_func("/model/context-reshape", test_context_reshape);
  g_test_add_func("/model/broken-models-are-refused", test_broken_models_are_refused);
  g_test_add_func("/model/crafted-models-are-refused", test_crafted_models_are_refused);
  g_test_add_func("/model/huge-input-shape-is-refused", test_huge_input_shape_is_refused);
  g_test_add_func("/model/crafted-models-run", test_crafted_models_run);
  g_test_add_func("/model/integer-arithmetic-wraps", test_integer_arithmetic_wraps);
  g_test_add_func("/model/casts-saturate", test_casts_saturate);
  g_test_add_func("/model/scatter-nd-indices-fed-at-run-time",
                  test_scatter_nd_indices_fed_at_run_time);
  g_test_add_func("/model_loader/element_indices_fed_at_run_time",
                  test_element_indices_fed_at_run_time);
  g_test_add_func("/model/directory-is-refused", test_directory_is_refused);
  g_test_add_func("/model/garbage-bytes-are-refused", test_garbage_bytes_are_refused);
  g_test_add_func("/model/shared-onnx-models", test_shared_onnx_models);
  return g_test_run();
}
