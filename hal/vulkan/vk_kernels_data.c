/* Vulkan data-movement kernels, all strided copies (copy.comp) but Resize:
 * the reshaping copies (Reshape, Flatten, Squeeze, Unsqueeze, Identity),
 * Transpose, Slice, Concat (a copy per input) and Split (one per output);
 * and Resize of the last two axes, nearest or bilinear (resize.comp).
 * Shapes, starts and scales are read when planning; the output's dims are
 * the runtime's (already inferred). */
#include <stdlib.h>

#include "vk_kernels.h"

static const char *plan_reshape(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  (void)device;
  int64_t count = (int64_t)elements_of(&op->outputs[0]), step = 1;
  if ((uint64_t)count != elements_of(&op->inputs[0]))
    return "element counts differ";
  return vk_plan_copy(k, 0, 0, 1, &count, &step, 0, &step, 0);
}

/* A non-negative axis of a tensor of `rank` axes from `axis` (negative:
 * counted from the end), or -1 when out of range. */
static int64_t normalized_axis(int64_t axis, uint32_t rank)
{
  axis = axis < 0 ? axis + (int64_t)rank : axis;
  return axis >= 0 && axis < (int64_t)rank ? axis : -1;
}

static const char *plan_transpose(npu_hal_device *device, const npu_hal_op *op,
                                  npu_hal_kernel *k)
{
  (void)device;
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const int64_t *perm = NULL;
  size_t given = op->attributes.get_ints(op->attributes.node, "perm", &perm);
  if (given && given != x->rank)
    return "a perm of another rank than the input";
  int64_t in_strides[NPU_MAX_RANK], src[NPU_MAX_RANK], dst[NPU_MAX_RANK];
  vk_strides(x, in_strides);
  vk_strides(y, dst);
  for (uint32_t d = 0; d < x->rank; d++) {
    int64_t from = given ? normalized_axis(perm[d], x->rank) : (int64_t)(x->rank - 1 - d);
    if (from < 0 || x->dims[from] != y->dims[d])
      return "a perm that does not give the output's shape";
    src[d] = in_strides[from];
  }
  return vk_plan_copy(k, 0, 0, y->rank, y->dims, src, 0, dst, 0);
}

/* Value i of an integer tensor known when planning (int32 or int64). */
static bool constant_int(const npu_hal_op *op, uint32_t input, size_t i, int64_t *value)
{
  const npu_hal_tensor_desc *t = &op->inputs[input];
  const void *values = op->input_values ? op->input_values[input] : NULL;
  if (!values || i >= elements_of(t))
    return false;
  if (t->dtype == NPU_DTYPE_INT64)
    *value = ((const int64_t *)values)[i];
  else if (t->dtype == NPU_DTYPE_INT32)
    *value = ((const int32_t *)values)[i];
  else
    return false;
  return true;
}

/* Value i of Slice's starts, axes or steps (`which` 0, 1, 2): an input
 * known when planning from opset 10 (int32 or int64), an attribute before. */
static bool slice_value(const npu_hal_op *op, uint32_t which, size_t i, int64_t *value)
{
  static const uint32_t inputs[] = {1, 3, 4};
  static const char *const attributes[] = {"starts", "axes", NULL};
  if (op->opset >= 10) {
    uint32_t input = inputs[which];
    if (input >= op->input_count || !present(&op->inputs[input]))
      return which > 0; /* axes and steps are optional: keep the default */
    return constant_int(op, input, i, value);
  }
  const int64_t *values = NULL;
  size_t count = attributes[which] ? op->attributes.get_ints(op->attributes.node,
                                                             attributes[which], &values)
                                   : 0;
  if (i < count)
    *value = values[i];
  return i < count || which > 0;
}

static const char *plan_slice(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  (void)device;
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const int64_t *starts = NULL;
  uint64_t count = op->opset >= 10 ? (op->input_count > 1 ? elements_of(&op->inputs[1]) : 0)
                                   : op->attributes.get_ints(op->attributes.node, "starts",
                                                             &starts);
  int64_t strides[NPU_MAX_RANK], src[NPU_MAX_RANK], dst[NPU_MAX_RANK], base = 0;
  vk_strides(x, strides);
  vk_strides(y, dst);
  memcpy(src, strides, sizeof src);
  for (uint64_t i = 0; i < count; i++) {
    int64_t start = 0, axis = (int64_t)i, step = 1;
    if (!slice_value(op, 0, i, &start) || !slice_value(op, 1, i, &axis) ||
        !slice_value(op, 2, i, &step))
      return "starts, axes or steps not known when planning";
    axis = normalized_axis(axis, x->rank);
    if (axis < 0 || step == 0)
      return "an axis out of range or a step of 0";
    int64_t dim = x->dims[axis];
    start = start < 0 ? start + dim : start;
    int64_t last = step > 0 ? dim : dim - 1;
    start = start < 0 ? 0 : start > last ? last : start;
    base += start * strides[axis];
    src[axis] = strides[axis] * step;
  }
  return vk_plan_copy(k, 0, 0, y->rank, y->dims, src, base, dst, 0);
}

/* Concat: each input copied into its place along the axis of the output. */
static const char *plan_concat(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  (void)device;
  const npu_hal_tensor_desc *y = &op->outputs[0];
  int64_t axis = normalized_axis(op->attributes.get_int(op->attributes.node, "axis", 0), y->rank);
  if (axis < 0)
    return "an axis out of range";
  int64_t out_strides[NPU_MAX_RANK], in_strides[NPU_MAX_RANK], place = 0;
  vk_strides(y, out_strides);
  for (uint32_t i = 0; i < op->input_count; i++) {
    const npu_hal_tensor_desc *x = &op->inputs[i];
    if (x->rank != y->rank)
      return "inputs of another rank than the output";
    vk_strides(x, in_strides);
    const char *why = vk_plan_copy(k, i, 0, x->rank, x->dims, in_strides, 0, out_strides,
                                   place * out_strides[axis]);
    if (why)
      return why;
    place += x->dims[axis];
  }
  return place == y->dims[axis] ? NULL : "inputs that do not fill the output";
}

/* Split: each output copied from its place along the axis of the input. */
static const char *plan_split(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  (void)device;
  const npu_hal_tensor_desc *x = &op->inputs[0];
  int64_t axis = normalized_axis(op->attributes.get_int(op->attributes.node, "axis", 0), x->rank);
  if (axis < 0)
    return "an axis out of range";
  int64_t in_strides[NPU_MAX_RANK], out_strides[NPU_MAX_RANK], place = 0;
  vk_strides(x, in_strides);
  for (uint32_t o = 0; o < op->output_count; o++) {
    const npu_hal_tensor_desc *y = &op->outputs[o];
    if (!present(y) || y->rank != x->rank)
      return "outputs left out or of another rank than the input";
    vk_strides(y, out_strides);
    const char *why = vk_plan_copy(k, 0, o, y->rank, y->dims, in_strides,
                                   place * in_strides[axis], out_strides, 0);
    if (why)
      return why;
    place += y->dims[axis];
  }
  return place <= x->dims[axis] ? NULL : "outputs larger than the input";
}

/* The index of `name` in `names`, or -1. */
static int mode_index(const char *name, const char *const *names, int count)
{
  for (int i = 0; i < count; i++)
    if (strcmp(name, names[i]) == 0)
      return i;
  return -1;
}

enum { HALF_PIXEL, PYTORCH_HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC, TF_HALF_PIXEL_FOR_NN };

/* ONNX's coordinate transformation as source = (output + before) / scale
 * + after: line[0..2] = before, scale, after. */
static void source_line(int mode, int64_t in, int64_t out, double scale, float *line)
{
  double before = 0, after = 0;
  if (in == out && scale == 1.0) {
    /* an axis kept as it is reads itself */
  } else if (mode == HALF_PIXEL || (mode == PYTORCH_HALF_PIXEL && out > 1)) {
    before = 0.5;
    after = -0.5;
  } else if (mode == PYTORCH_HALF_PIXEL) {
    scale = 1; /* one output, reading 0 */
  } else if (mode == ALIGN_CORNERS) { /* over the unrounded resized length, as ONNX's reference */
    scale = in > 1 ? ((double)in * scale - 1) / (double)(in - 1) : 1;
  } else if (mode == TF_HALF_PIXEL_FOR_NN) {
    before = 0.5;
  }
  line[0] = (float)before;
  line[1] = (float)scale;
  line[2] = (float)after;
}

static const char *plan_resize(npu_hal_device *device, const npu_hal_op *op, npu_hal_kernel *k)
{
  (void)device;
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const npu_hal_attributes *a = &op->attributes;
  if (op->opset < 11 || x->rank < 2 || y->rank != x->rank)
    return "Resize from opset 11 over two axes or more";
  for (uint32_t d = 0; d + 2 < x->rank; d++)
    if (x->dims[d] != y->dims[d])
      return "resizing other axes than the last two";
  static const char *const modes[] = {"nearest", "linear", "bilinear"};
  static const char *const coordinates[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                            "asymmetric", "tf_half_pixel_for_nn"};
  static const char *const roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"};
  int mode = mode_index(a->get_string(a->node, "mode", "nearest"), modes, 3);
  int coordinate = mode_index(a->get_string(a->node, "coordinate_transformation_mode",
                                            "half_pixel"), coordinates, 5);
  int rounding = mode_index(a->get_string(a->node, "nearest_mode", "round_prefer_floor"),
                            roundings, 4);
  if (mode < 0 || coordinate < 0 || rounding < 0 || a->get_int(a->node, "antialias", 0))
    return "cubic, antialiased or tf_crop_and_resize resizing";
  const int64_t *axes;
  if (a->get_ints(a->node, "axes", &axes) ||
      strcmp(a->get_string(a->node, "keep_aspect_ratio_policy", "stretch"), "stretch") != 0)
    return "Resize's axes or keep_aspect_ratio_policy (opset 18)";
  const float *scales = NULL;
  if (op->input_count > 2 && present(&op->inputs[2]) && elements_of(&op->inputs[2]) == x->rank) {
    scales = op->input_values ? op->input_values[2] : NULL;
    if (!scales || op->inputs[2].dtype != NPU_DTYPE_FLOAT32)
      return "scales not known when planning";
  }
  vk_dispatch *d = vk_kernel_add(k);
  d->shader = VK_SHADER_RESIZE;
  d->local_size = 64;
  d->invocations = elements_of(y);
  bind(d, false, 0, true);
  bind(d, true, 0, true);
  uint32_t h = x->rank - 2, w = x->rank - 1;
  uint32_t shape[7] = {(uint32_t)(elements_of(x) / (uint64_t)(x->dims[h] * x->dims[w])),
                       (uint32_t)x->dims[h], (uint32_t)x->dims[w], (uint32_t)y->dims[h],
                       (uint32_t)y->dims[w], mode > 0, (uint32_t)rounding};
  if (shape[0] == 0 || shape[1] == 0 || shape[2] == 0)
    return "an empty input";
  memcpy(&d->push[OFFSET_WORDS], shape, sizeof shape);
  for (uint32_t axis = h; axis <= w; axis++) {
    double scale = scales ? scales[axis] : (double)y->dims[axis] / (double)x->dims[axis];
    float line[3];
    source_line(coordinate, x->dims[axis], y->dims[axis], scale, line);
    memcpy(&d->push[OFFSET_WORDS + 7 + 3 * (axis - h)], line, sizeof line);
  }
  return NULL;
}

const vk_plan_entry vk_data_plans[] = {
    {"Reshape", plan_reshape},     {"Flatten", plan_reshape},  {"Squeeze", plan_reshape},
    {"Unsqueeze", plan_reshape},   {"Identity", plan_reshape}, {"Transpose", plan_transpose},
    {"Slice", plan_slice},         {"Concat", plan_concat},    {"Split", plan_split},
    {"Resize", plan_resize},
    {NULL, NULL},
};
