/* The loader's wire-format pre-pass (runtime/model/onnx_wire.c): the bytes it
 * leaves and the blobs it lifts from hand-encoded ModelProtos, the messages it
 * leaves to protobuf-c, and a model with lifted data loading and computing as
 * it should from a file and from memory. */
#include <math.h>
#include <string.h>

#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "../runtime/npu_test.h"
#include "model_internal.h"
#include "onnx_wire.h"

/* Protobuf field keys: field number << 3 | wire type (0 varint, 2 bytes). */
#define KEY(number, wire) (uint8_t)((number) << 3 | (wire))

/* ModelProto { ir_version: 8; graph { name: "g"; initializer { dims: 2;
 * data_type: FLOAT; raw_data: 8 bytes; name: "w" } initializer { raw_data: 2
 * bytes } } }, with `extra` appended inside the first initializer. */
static GByteArray *crafted_model(const uint8_t *extra, size_t extra_size)
{
  static const uint8_t weights[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  GByteArray *tensor = g_byte_array_new();
  const uint8_t head[] = {KEY(1, 0), 2, KEY(2, 0), 1, KEY(9, 2), 8};
  g_byte_array_append(tensor, head, sizeof head);
  g_byte_array_append(tensor, weights, sizeof weights);
  const uint8_t name[] = {KEY(8, 2), 1, 'w'};
  g_byte_array_append(tensor, name, sizeof name);
  g_byte_array_append(tensor, extra, (guint)extra_size);

  GByteArray *graph = g_byte_array_new();
  const uint8_t graph_name[] = {KEY(2, 2), 1, 'g', KEY(5, 2), (uint8_t)tensor->len};
  g_byte_array_append(graph, graph_name, sizeof graph_name);
  g_byte_array_append(graph, tensor->data, tensor->len);
  const uint8_t small[] = {KEY(5, 2), 4, KEY(9, 2), 2, 9, 9};
  g_byte_array_append(graph, small, sizeof small);

  GByteArray *model = g_byte_array_new();
  const uint8_t model_head[] = {KEY(1, 0), 8, KEY(7, 2), (uint8_t)graph->len};
  g_byte_array_append(model, model_head, sizeof model_head);
  g_byte_array_append(model, graph->data, graph->len);
  g_byte_array_unref(tensor);
  g_byte_array_unref(graph);
  return model;
}

static void test_large_raw_data_is_lifted(void)
{
  GByteArray *model = crafted_model(NULL, 0);
  uint8_t *stripped;
  size_t stripped_size, count;
  npu_onnx_blob *blobs;
  g_assert_true(npu_onnx_lift_initializer_data(model->data, model->len, 8, &stripped,
                                               &stripped_size, &blobs, &count));
  /* the first tensor's 10 bytes of raw_data field gone, both lengths shrunk */
  const uint8_t expected[] = {KEY(1, 0), 8, KEY(7, 2), 18,
                              KEY(2, 2), 1, 'g', KEY(5, 2), 7,
                              KEY(1, 0), 2, KEY(2, 0), 1, KEY(8, 2), 1, 'w',
                              KEY(5, 2), 4, KEY(9, 2), 2, 9, 9};
  g_assert_cmpmem(stripped, stripped_size, expected, sizeof expected);
  g_assert_cmpuint(count, ==, 1);
  g_assert_cmpuint(blobs[0].initializer, ==, 0);
  g_assert_cmpuint(blobs[0].size, ==, 8);
  g_assert_cmpuint(model->data[blobs[0].offset], ==, 1);
  g_assert_cmpuint(model->data[blobs[0].offset + 7], ==, 8);
  free(stripped);
  free(blobs);

  /* a lower threshold lifts the second initializer's two bytes too */
  g_assert_true(npu_onnx_lift_initializer_data(model->data, model->len, 2, &stripped,
                                               &stripped_size, &blobs, &count));
  g_assert_cmpuint(count, ==, 2);
  g_assert_cmpuint(blobs[1].initializer, ==, 1);
  g_assert_cmpuint(blobs[1].size, ==, 2);
  free(stripped);
  free(blobs);
  g_byte_array_unref(model);
}

/* Nothing lifted: the caller unpacks the bytes as they are. */
static void assert_left_alone(const uint8_t *bytes, size_t size)
{
  uint8_t *stripped = NULL;
  size_t stripped_size = 0, count = 0;
  npu_onnx_blob *blobs = NULL;
  g_assert_false(npu_onnx_lift_initializer_data(bytes, size, 8, &stripped, &stripped_size, &blobs,
                                                &count));
  g_assert_null(stripped);
  g_assert_null(blobs);
}

static void test_other_messages_are_left_to_protobuf(void)
{
  /* nothing large enough */
  GByteArray *model = crafted_model(NULL, 0);
  uint8_t *stripped;
  size_t stripped_size, count;
  npu_onnx_blob *blobs;
  g_assert_false(npu_onnx_lift_initializer_data(model->data, model->len, 9, &stripped,
                                                &stripped_size, &blobs, &count));
  /* every truncation of it */
  for (guint size = 1; size < model->len; size++)
    assert_left_alone(model->data, size);
  g_byte_array_unref(model);

  /* a second raw_data in the tensor (protobuf keeps the last one) */
  const uint8_t second_raw[] = {KEY(9, 2), 1, 0};
  model = crafted_model(second_raw, sizeof second_raw);
  assert_left_alone(model->data, model->len);
  g_byte_array_unref(model);

  /* a group (wire type 3) */
  const uint8_t group[] = {KEY(20, 3)};
  model = crafted_model(group, sizeof group);
  assert_left_alone(model->data, model->len);
  g_byte_array_unref(model);

  /* the graph given twice (protobuf would merge them) */
  model = crafted_model(NULL, 0);
  GByteArray *twice = g_byte_array_new();
  g_byte_array_append(twice, model->data, model->len);
  g_byte_array_append(twice, model->data + 2, model->len - 2); /* the graph field */
  assert_left_alone(twice->data, twice->len);
  g_byte_array_unref(twice);
  g_byte_array_unref(model);

  /* a length running past the end */
  const uint8_t overlong[] = {KEY(7, 2), 0xff, 0xff, 0xff, 0xff, 0x0f, 0};
  assert_left_alone(overlong, sizeof overlong);
}

/* y = (x + w) * 2 with w[i] = i / 8, w lifted: the right values from a file
 * and from bytes freed right after loading. */
static void check_lifted_model(npu_model *model)
{
  enum { N = 4096 };
  npu_device *device = npu_test_open_device();
  npu_context *context;
  NPU_ASSERT_OK(npu_context_create(model, device, NULL, 0, &context));
  npu_buffer *x, *y;
  NPU_ASSERT_OK(npu_buffer_alloc(device, N * sizeof(float), &x));
  NPU_ASSERT_OK(npu_buffer_alloc(device, N * sizeof(float), &y));
  NPU_ASSERT_OK(npu_memset(x, 0, 0, N * sizeof(float)));
  NPU_ASSERT_OK(npu_context_run_sync(context, &x, &y));
  float *values = g_new(float, N);
  NPU_ASSERT_OK(npu_memcpy_d2h(values, y, 0, N * sizeof(float)));
  for (int i = 0; i < N; i++)
    g_assert_cmpfloat(values[i], ==, i / 4.0f);
  g_free(values);
  NPU_ASSERT_OK(npu_buffer_release(x));
  NPU_ASSERT_OK(npu_buffer_release(y));
  NPU_ASSERT_OK(npu_context_destroy(context));
  NPU_ASSERT_OK(npu_device_release(device));
}

/* The path of one of the generated test models, or NULL with the test
 * skipped where they are not built. */
static char *test_model_path(const char *file)
{
  const char *dir = g_getenv("NPU_TEST_MODELS");
  if (!dir) {
    g_test_skip("NPU_TEST_MODELS is not set");
    return NULL;
  }
  return g_build_filename(dir, file, NULL);
}

static void test_lifted_model_computes(void)
{
  char *path = test_model_path("lifted.onnx");
  if (!path)
    return;
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(path, &model));
  check_lifted_model(model);
  NPU_ASSERT_OK(npu_model_release(model));
  gchar *bytes;
  gsize size;
  g_assert_true(g_file_get_contents(path, &bytes, &size, NULL));
  NPU_ASSERT_OK(npu_model_load_memory(bytes, size, NULL, &model));
  g_free(bytes);
  check_lifted_model(model);
  NPU_ASSERT_OK(npu_model_release(model));
  g_free(path);
}

/* replan_convs.onnx's output at `batch` on a fixed input, from `context`
 * re-planned for it. */
static float *run_at_batch(npu_context *context, npu_model *model, int64_t batch, size_t *count)
{
  npu_tensor_info shape;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &shape));
  shape.dims[0] = batch;
  NPU_ASSERT_OK(npu_context_reshape(context, &shape, 1));
  *count = (size_t)batch * 16 * 28 * 28;
  float *input = g_new(float, *count), *output = g_new(float, *count);
  for (size_t i = 0; i < *count; i++)
    input[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
  npu_device *device = npu_test_open_device();
  npu_buffer *x, *y;
  NPU_ASSERT_OK(npu_buffer_alloc(device, *count * sizeof(float), &x));
  NPU_ASSERT_OK(npu_buffer_alloc(device, *count * sizeof(float), &y));
  NPU_ASSERT_OK(npu_memcpy_h2d(x, 0, input, *count * sizeof(float)));
  NPU_ASSERT_OK(npu_context_run_sync(context, &x, &y));
  NPU_ASSERT_OK(npu_memcpy_d2h(output, y, 0, *count * sizeof(float)));
  NPU_ASSERT_OK(npu_buffer_release(x));
  NPU_ASSERT_OK(npu_buffer_release(y));
  NPU_ASSERT_OK(npu_device_release(device));
  g_free(input);
  return output;
}

/* A model loaded from its file keeps in memory none of the weights its
 * kernels packed (replan_convs.onnx: five convolutions), and re-planned for
 * other batches, or planned again by a new context (packing them again from
 * the file), computes what the same model loaded from memory (which drops
 * nothing) does. */
static void test_packed_weights_leave_memory(void)
{
  char *path = test_model_path("replan_convs.onnx");
  if (!path)
    return;
  gchar *bytes;
  gsize size;
  g_assert_true(g_file_get_contents(path, &bytes, &size, NULL));
  npu_model *from_file, *from_memory;
  NPU_ASSERT_OK(npu_model_load_file(path, &from_file));
  NPU_ASSERT_OK(npu_model_load_memory(bytes, size, NULL, &from_memory));
  g_free(bytes);
  npu_device *device = npu_test_open_device();
  npu_context *dropping, *keeping;
  npu_tensor_info shape;
  NPU_ASSERT_OK(npu_model_input_info(from_file, 0, &shape));
  shape.dims[0] = 1;
  NPU_ASSERT_OK(npu_context_create(from_file, device, &shape, 1, &dropping));
  NPU_ASSERT_OK(npu_context_create(from_memory, device, &shape, 1, &keeping));
  size_t resident, droppable, kept, none;
  npu_weight_store_totals(npu_model_weight_store(from_file), &resident, &droppable);
  npu_weight_store_totals(npu_model_weight_store(from_memory), &kept, &none);
  g_assert_cmpuint(droppable, >=, 256 * 256 * 9 * sizeof(float));
  g_assert_cmpuint(resident, ==, 0);
  g_assert_cmpuint(none, ==, 0);
  g_assert_cmpuint(kept, >=, droppable);
  static const int64_t batches[] = {1, 8, 3, 1};
  for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
    size_t count;
    float *ours = run_at_batch(dropping, from_file, batches[b], &count);
    float *reference = run_at_batch(keeping, from_memory, batches[b], &count);
    for (size_t i = 0; i < count; i++)
      g_assert_cmpfloat_with_epsilon(ours[i], reference[i], 1e-4f * (1.0f + fabsf(reference[i])));
    g_free(ours);
    g_free(reference);
    npu_weight_store_totals(npu_model_weight_store(from_file), &resident, &droppable);
    g_assert_cmpuint(resident, ==, 0);
    if (b == 1) { /* a new context: no packing left, every weight read from the file again */
      NPU_ASSERT_OK(npu_context_destroy(dropping));
      NPU_ASSERT_OK(npu_context_create(from_file, device, &shape, 1, &dropping));
    }
  }
  NPU_ASSERT_OK(npu_context_destroy(dropping));
  NPU_ASSERT_OK(npu_context_destroy(keeping));
  NPU_ASSERT_OK(npu_model_release(from_file));
  NPU_ASSERT_OK(npu_model_release(from_memory));
  NPU_ASSERT_OK(npu_device_release(device));
  g_free(path);
}

/* replan_convs.onnx's output at batch 2 from a new context of `model`
 * equals that of the same model loaded from memory (`bytes`). */
static void assert_new_context_computes(npu_model *model, npu_device *device,
                                        const npu_tensor_info *shape, const gchar *bytes,
                                        gsize size)
{
  npu_model *reference;
  NPU_ASSERT_OK(npu_model_load_memory(bytes, size, NULL, &reference));
  npu_context *context, *keeping;
  NPU_ASSERT_OK(npu_context_create(model, device, shape, 1, &context));
  NPU_ASSERT_OK(npu_context_create(reference, device, shape, 1, &keeping));
  size_t count;
  float *ours = run_at_batch(context, model, 2, &count);
  float *expected = run_at_batch(keeping, reference, 2, &count);
  for (size_t i = 0; i < count; i++)
    g_assert_cmpfloat_with_epsilon(ours[i], expected[i], 1e-4f * (1.0f + fabsf(expected[i])));
  g_free(ours);
  g_free(expected);
  NPU_ASSERT_OK(npu_context_destroy(context));
  NPU_ASSERT_OK(npu_context_destroy(keeping));
  NPU_ASSERT_OK(npu_model_release(reference));
}

/* Dropped weights are read back from the model's file as it was opened:
 * a file replaced by another (written beside and renamed over it, as editors
 * and g_file_set_contents do) leaves the loaded one readable, while the file
 * itself changed in place since loading fails the plan that needs them with
 * an I/O error, never computing on other weights. */
static void test_changed_file_fails_read_back(void)
{
  char *source = test_model_path("replan_convs.onnx");
  if (!source)
    return;
  gchar *bytes;
  gsize size;
  g_assert_true(g_file_get_contents(source, &bytes, &size, NULL));
  char *copy = g_build_filename(g_get_tmp_dir(), "npu-test-changed-XXXXXX.onnx", NULL);
  int fd = g_mkstemp_full(copy, O_RDWR, 0600);
  g_assert_cmpint(fd, >=, 0);
  g_assert_cmpint(write(fd, bytes, size), ==, (gssize)size);
  npu_model *model;
  NPU_ASSERT_OK(npu_model_load_file(copy, &model));
  npu_device *device = npu_test_open_device();
  npu_tensor_info shape;
  NPU_ASSERT_OK(npu_model_input_info(model, 0, &shape));
  shape.dims[0] = 1;
  assert_new_context_computes(model, device, &shape, bytes, size);
  /* replaced: an empty file now has its name */
  g_assert_true(g_file_set_contents(copy, "", 0, NULL));
  assert_new_context_computes(model, device, &shape, bytes, size);
  /* changed in place: one byte more */
  g_assert_cmpint(write(fd, "", 1), ==, 1);
  npu_context *context;
  g_assert_cmpint(npu_context_create(model, device, &shape, 1, &context), ==, NPU_ERROR_IO);
  g_assert_nonnull(strstr(npu_last_error_message(), "changed since it was loaded"));
  close(fd);
  NPU_ASSERT_OK(npu_model_release(model));
  NPU_ASSERT_OK(npu_device_release(device));
  g_unlink(copy);
  g_free(bytes);
  g_free(copy);
  g_free(source);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/onnx-wire/large-raw-data-is-lifted", test_large_raw_data_is_lifted);
  g_test_add_func("/onnx-wire/other-messages-are-left-to-protobuf",
                  test_other_messages_are_left_to_protobuf);
  g_test_add_func("/onnx-wire/lifted-model-computes", test_lifted_model_computes);
  g_test_add_func("/onnx-wire/packed-weights-leave-memory", test_packed_weights_leave_memory);
  g_test_add_func("/onnx-wire/changed-file-fails-read-back", test_changed_file_fails_read_back);
  return g_test_run();
}
