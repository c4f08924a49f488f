/* Operator descriptors: the axes and ranges npu_op_params_attach resolves
 * from each schema entry (as backends read them), the output-shape function
 * the entry names, and the inputs it needs constant, against values worked
 * out by hand from the ONNX operator definitions. */
#include <glib.h>
#include <string.h>

#include "../runtime/npu_test.h"
#include "op_params.h"
#include "shape_inference.h"

/* A node's attributes: up to 4 named ints and one named list. */
typedef struct attributes {
  struct {
    const char *name;
    int64_t value;
  } ints[4];
  const char *list_name;
  int64_t list[8];
  size_t list_count;
} attributes;

static int64_t get_int(const void *node, const char *name, int64_t fallback)
{
  const attributes *a = node;
  for (int i = 0; i < 4 && a->ints[i].name; i++)
    if (strcmp(a->ints[i].name, name) == 0)
      return a->ints[i].value;
  return fallback;
}

static float get_float(const void *node, const char *name, float fallback)
{
  (void)node, (void)name;
  return fallback;
}

static size_t get_ints(const void *node, const char *name, const int64_t **values)
{
  const attributes *a = node;
  bool found = a->list_name && strcmp(a->list_name, name) == 0;
  *values = found ? a->list : NULL;
  return found ? a->list_count : 0;
}

static const char *get_string(const void *node, const char *name, const char *fallback)
{
  (void)node, (void)name;
  return fallback;
}

/* An operator over `inputs` (values: constant inputs' data, NULL elsewhere). */
typedef struct node {
  npu_hal_op op;
  const npu_op_schema *schema;
  npu_op_params params;
  npu_hal_tensor_desc outputs[4];
  const char *names[8];
} node;

static void node_init(node *n, const char *op_type, int64_t opset, const attributes *a,
                      uint32_t input_count, const npu_hal_tensor_desc *inputs,
                      const void *const *values, uint32_t output_count)
{
  memset(n, 0, sizeof *n);
  n->schema = npu_op_schema_find(NULL, op_type);
  g_assert_nonnull(n->schema);
  for (uint32_t i = 0; i < input_count; i++)
    n->names[i] = "in";
  n->op = (npu_hal_op){op_type, opset, {a, get_int, get_float, get_ints, get_string},
                       input_count, output_count, inputs, n->outputs, values};
}

/* Validates, resolves and infers the outputs, as planning does. */
static npu_status plan(node *n)
{
  npu_status status = npu_op_validate(n->schema, &n->op, n->names, n->op.op_type);
  if (status == NPU_OK)
    status = npu_op_params_attach(n->schema, &n->op, &n->params, n->op.op_type);
  if (status == NPU_OK)
    status = npu_infer_shapes(n->schema, &n->op, n->outputs, n->op.op_type);
  return status;
}

static const npu_hal_tensor_desc x2345 = {NPU_DTYPE_FLOAT32, 4, {2, 3, 4, 5}};
static const void *const no_values[4] = {NULL};

static void assert_axes(const node *n, uint32_t count, const uint32_t *expected)
{
  g_assert_nonnull(n->op.axes);
  g_assert_cmpuint(n->op.axes->count, ==, count);
  for (uint32_t i = 0; i < count; i++)
    g_assert_cmpuint(n->op.axes->axes[i], ==, expected[i]);
}

static void assert_dims(const npu_hal_tensor_desc *t, uint32_t rank, const int64_t *dims)
{
  g_assert_cmpuint(t->rank, ==, rank);
  for (uint32_t d = 0; d < rank; d++)
    g_assert_cmpint(t->dims[d], ==, dims[d]);
}

/* One axis: the attribute counted from the end, or the operator's default
 * (Softmax's changed in opset 13 from 1 to the last). */
static void test_one_axis(void)
{
  node n;
  attributes a = {.ints = {{"axis", -3}}}, none = {0};
  node_init(&n, "Concat", 13, &a, 1, &x2345, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 1, (uint32_t[]){1});
  node_init(&n, "Softmax", 11, &none, 1, &x2345, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 1, (uint32_t[]){1});
  node_init(&n, "Softmax", 13, &none, 1, &x2345, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 1, (uint32_t[]){3});
  npu_hal_tensor_desc topk_inputs[2] = {x2345, {NPU_DTYPE_INT64, 1, {1}}};
  int64_t k = 2;
  const void *topk_values[2] = {NULL, &k};
  node_init(&n, "TopK", 13, &none, 2, topk_inputs, topk_values, 2);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 1, (uint32_t[]){3});
  assert_dims(&n.outputs[1], 4, (int64_t[]){2, 3, 4, 2});
  g_assert_cmpint(n.outputs[1].dtype, ==, NPU_DTYPE_INT64);
  a.ints[0].value = 4; /* out of range */
  node_init(&n, "Gather", 13, &a, 2, (npu_hal_tensor_desc[]){x2345, {NPU_DTYPE_INT64, 0}},
            no_values, 1);
  NPU_ASSERT_STATUS(plan(&n), NPU_ERROR_INVALID_MODEL);
  g_assert_nonnull(strstr(npu_last_error_message(), "axis 4 out of range for rank 4"));
  a.ints[0].value = 4; /* Flatten's axis may be the rank */
  node_init(&n, "Flatten", 13, &a, 1, &x2345, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_dims(&n.outputs[0], 2, (int64_t[]){120, 1});
}

/* Reductions: the axes given (attribute or input 1), sorted; none given:
 * all of them, or none with noop_with_empty_axes. */
static void test_reduced_axes(void)
{
  node n;
  attributes a = {.ints = {{"keepdims", 0}}, .list_name = "axes", .list = {-1, 1},
                  .list_count = 2};
  node_init(&n, "ReduceMean", 13, &a, 1, &x2345, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 2, (uint32_t[]){1, 3});
  assert_dims(&n.outputs[0], 2, (int64_t[]){2, 4});
  attributes none = {0};
  node_init(&n, "ReduceMax", 13, &none, 1, &x2345, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 4, (uint32_t[]){0, 1, 2, 3});
  assert_dims(&n.outputs[0], 4, (int64_t[]){1, 1, 1, 1});
  attributes noop = {.ints = {{"noop_with_empty_axes", 1}}};
  npu_hal_tensor_desc inputs[2] = {x2345, {NPU_DTYPE_INT64, 1, {0}}};
  const void *values[2] = {NULL, ""};
  node_init(&n, "ReduceSum", 13, &noop, 2, inputs, values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 0, NULL);
  assert_dims(&n.outputs[0], 4, x2345.dims);
  int64_t repeated[2] = {1, -3};
  inputs[1].dims[0] = 2;
  values[1] = repeated;
  node_init(&n, "ReduceSum", 13, &none, 2, inputs, values, 1);
  NPU_ASSERT_STATUS(plan(&n), NPU_ERROR_INVALID_MODEL);
  g_assert_nonnull(strstr(npu_last_error_message(), "axis -3 cannot be reduced"));
}

/* Squeeze without axes takes every axis of size 1; Unsqueeze's axes are
 * the output's. */
static void test_squeeze_and_unsqueeze(void)
{
  node n;
  npu_hal_tensor_desc x = {NPU_DTYPE_FLOAT32, 4, {1, 3, 1, 5}};
  attributes none = {0};
  node_init(&n, "Squeeze", 11, &none, 1, &x, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 2, (uint32_t[]){0, 2});
  assert_dims(&n.outputs[0], 2, (int64_t[]){3, 5});
  attributes a = {.list_name = "axes", .list = {1}, .list_count = 1};
  node_init(&n, "Squeeze", 11, &a, 1, &x, no_values, 1);
  NPU_ASSERT_STATUS(plan(&n), NPU_ERROR_INVALID_MODEL); /* axis 1 has 3 */
  a = (attributes){.list_name = "axes", .list = {-1, 0}, .list_count = 2};
  node_init(&n, "Unsqueeze", 11, &a, 1, &x, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 2, (uint32_t[]){0, 5});
  assert_dims(&n.outputs[0], 6, (int64_t[]){1, 1, 3, 1, 5, 1});
}

/* Transpose: perm, else the axes reversed; output axis i is input axis axes[i]. */
static void test_permutation(void)
{
  node n;
  attributes none = {0};
  node_init(&n, "Transpose", 13, &none, 1, &x2345, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 4, (uint32_t[]){3, 2, 1, 0});
  assert_dims(&n.outputs[0], 4, (int64_t[]){5, 4, 3, 2});
  attributes a = {.list_name = "perm", .list = {0, 2, 3, 1}, .list_count = 4};
  node_init(&n, "Transpose", 13, &a, 1, &x2345, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_axes(&n, 4, (uint32_t[]){0, 2, 3, 1});
  assert_dims(&n.outputs[0], 4, (int64_t[]){2, 4, 5, 3});
  a.list[1] = 3; /* repeated */
  node_init(&n, "Transpose", 13, &a, 1, &x2345, no_values, 1);
  NPU_ASSERT_STATUS(plan(&n), NPU_ERROR_INVALID_MODEL);
}

/* Pad: begins and ends from the attribute (opset < 11) or input 1. */
static void test_pad_ranges(void)
{
  node n;
  npu_hal_tensor_desc x = {NPU_DTYPE_FLOAT32, 2, {3, 4}};
  attributes a = {.list_name = "pads", .list = {1, 0, 2, -1}, .list_count = 4};
  node_init(&n, "Pad", 10, &a, 1, &x, no_values, 1);
  NPU_ASSERT_OK(plan(&n));
  g_assert_nonnull(n.op.ranges);
  g_assert_cmpint(n.op.ranges->begin[0], ==, 1);
  g_assert_cmpint(n.op.ranges->end[1], ==, -1);
  assert_dims(&n.outputs[0], 2, (int64_t[]){6, 3});
  int64_t pads[4] = {0, 2, 0, 3};
  npu_hal_tensor_desc inputs[2] = {x, {NPU_DTYPE_INT64, 1, {4}}};
  const void *values[2] = {NULL, pads};
  attributes none = {0};
  node_init(&n, "Pad", 13, &none, 2, inputs, values, 1);
  NPU_ASSERT_OK(plan(&n));
  g_assert_cmpint(n.op.ranges->begin[1], ==, 2);
  g_assert_cmpint(n.op.ranges->end[1], ==, 3);
  assert_dims(&n.outputs[0], 2, (int64_t[]){3, 9});
}

/* Slice: bounds clamped as ONNX does, negative steps included; the axes
 * not named keep their whole range. */
static void test_slice_ranges(void)
{
  node n;
  npu_hal_tensor_desc x = {NPU_DTYPE_FLOAT32, 3, {4, 10, 6}};
  int64_t starts[2] = {-1, 100}, ends[2] = {-100, 1}, axes[2] = {2, 1}, steps[2] = {-2, -3};
  npu_hal_tensor_desc index = {NPU_DTYPE_INT64, 1, {2}};
  npu_hal_tensor_desc inputs[5] = {x, index, index, index, index};
  const void *values[5] = {NULL, starts, ends, axes, steps};
  attributes none = {0};
  node_init(&n, "Slice", 13, &none, 5, inputs, values, 1);
  NPU_ASSERT_OK(plan(&n));
  const npu_hal_ranges *r = n.op.ranges;
  g_assert_nonnull(r);
  /* axis 0 whole; axis 1 from 9 (100 clamped) down to 1 by 3: 9, 6, 3;
   * axis 2 from 5 down past the beginning by 2: 5, 3, 1. */
  g_assert_cmpint(r->begin[0], ==, 0);
  g_assert_cmpint(r->step[0], ==, 1);
  g_assert_cmpint(r->begin[1], ==, 9);
  g_assert_cmpint(r->step[1], ==, -3);
  g_assert_cmpint(r->begin[2], ==, 5);
  g_assert_cmpint(r->end[2], ==, -1);
  assert_dims(&n.outputs[0], 3, (int64_t[]){4, 3, 3});
  attributes old = {.list_name = "starts", .list = {1}, .list_count = 1};
  node_init(&n, "Slice", 9, &old, 1, &x, no_values, 1); /* starts without ends */
  NPU_ASSERT_STATUS(plan(&n), NPU_ERROR_INVALID_MODEL);
}

/* The inputs an operator needs as constants, by opset (Resize's input 1 is
 * its scales in opset 10, its roi after), and the error when one is
 * computed at run time. */
static void test_constant_inputs(void)
{
  const npu_op_schema *resize = npu_op_schema_find(NULL, "Resize");
  g_assert_cmphex(npu_op_constant_inputs(resize, 10), ==, 0xe);
  g_assert_cmphex(npu_op_constant_inputs(resize, 13), ==, 0xc);
  g_assert_cmphex(npu_op_constant_inputs(npu_op_schema_find(NULL, "Reshape"), 13), ==, 0x2);
  g_assert_cmphex(npu_op_constant_inputs(npu_op_schema_find(NULL, "Conv"), 13), ==, 0);
  node n;
  attributes none = {0};
  npu_hal_tensor_desc inputs[2] = {x2345, {NPU_DTYPE_INT64, 1, {2}}};
  node_init(&n, "Reshape", 13, &none, 2, inputs, no_values, 1);
  NPU_ASSERT_STATUS(plan(&n), NPU_ERROR_NOT_SUPPORTED);
  g_assert_nonnull(strstr(npu_last_error_message(), "computed at run time"));
  int64_t shape[2] = {6, -1};
  const void *values[2] = {NULL, shape};
  node_init(&n, "Reshape", 13, &none, 2, inputs, values, 1);
  NPU_ASSERT_OK(plan(&n));
  assert_dims(&n.outputs[0], 2, (int64_t[]){6, 20});
}

/* Every schema entry but Constant, Shape and Size (planned apart) names a
 * shape function. */
static void test_every_operator_has_a_shape_function(void)
{
  const char *types[] = {"Abs", "Add", "Conv", "MaxPool", "Resize", "QLinearConv", "Where",
                         "Gemm", "MatMul", "ScatterND", "LayerNormalization", "Split"};
  for (size_t i = 0; i < G_N_ELEMENTS(types); i++)
    g_assert_nonnull(npu_op_schema_find(NULL, types[i])->infer);
  g_assert_null(npu_op_schema_find(NULL, "Shape")->infer);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/op-params/one-axis", test_one_axis);
  g_test_add_func("/op-params/reduced-axes", test_reduced_axes);
  g_test_add_func("/op-params/squeeze-unsqueeze", test_squeeze_and_unsqueeze);
  g_test_add_func("/op-params/permutation", test_permutation);
  g_test_add_func("/op-params/pad-ranges", test_pad_ranges);
  g_test_add_func("/op-params/slice-ranges", test_slice_ranges);
  g_test_add_func("/op-params/constant-inputs", test_constant_inputs);
  g_test_add_func("/op-params/shape-functions", test_every_operator_has_a_shape_function);
  return g_test_run();
}
