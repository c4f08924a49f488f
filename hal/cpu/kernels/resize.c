/* Resize (and opset 9's Upsample): nearest and n-linear interpolation with
 * ONNX's coordinate modes. Where each output coordinate reads from is
 * computed once per plan as per-axis tap tables; a run only gathers.
 * Channels-last and channel-block tensors (batch and channels kept) are
 * resized as plain tensors of "pixels": all C channels, or one block of C0,
 * move together. 8-bit tensors (int8 feature maps, see qdq_rewrite.c) are
 * resized nearest only: their values are copied. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"

typedef enum {
  COORD_HALF_PIXEL, COORD_PYTORCH_HALF_PIXEL, COORD_ALIGN_CORNERS, COORD_ASYMMETRIC,
  COORD_TF_HALF_PIXEL_FOR_NN, COORD_HALF_PIXEL_SYMMETRIC,
} coordinate_mode;

typedef enum { ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL, ROUND_FLOOR, ROUND_CEIL } nearest_mode;

/* Output index o of an axis reads in[first[o]] * (1 - weight[o]) +
 * in[second[o]] * weight[o]; offsets are already multiplied by the stride. */
typedef struct axis_taps {
  int64_t *first, *second;
  float *weight;
  bool interpolated; /* some weight is not 0 */
} axis_taps;

typedef struct resize_params {
  uint32_t rank;                  /* of the pixel grid resized */
  size_t pixel;                   /* elements per pixel: 1 for plain tensors */
  size_t bytes;                   /* per element: 4 (float32) or 1 (nearest only) */
  int64_t out_dims[NPU_MAX_RANK];
  axis_taps taps[NPU_MAX_RANK];
  size_t rows; /* output rows along the last axis */
  const void *x; /* bound per run */
  void *y;
} resize_params;

static void free_resize_params(void *data)
{
  resize_params *p = data;
  for (uint32_t d = 0; p && d < p->rank; d++) {
    free(p->taps[d].first);
    free(p->taps[d].second);
    free(p->taps[d].weight);
  }
  free(p);
}

static double source_coordinate(coordinate_mode mode, int64_t o, int64_t in, int64_t out,
                                double scale)
{
  switch (mode) {
  case COORD_HALF_PIXEL: return (o + 0.5) / scale - 0.5;
  case COORD_PYTORCH_HALF_PIXEL: return out > 1 ? (o + 0.5) / scale - 0.5 : 0;
  case COORD_ALIGN_CORNERS: /* over the unrounded resized length, as ONNX's reference */
    return out > 1 ? (double)o * (double)(in - 1) / ((double)in * scale - 1) : 0;
  case COORD_ASYMMETRIC: return o / scale;
  case COORD_TF_HALF_PIXEL_FOR_NN: return (o + 0.5) / scale;
  case COORD_HALF_PIXEL_SYMMETRIC: { /* opset 19: half_pixel, centred on the input when the
                                        output's length was rounded */
    double adjustment = (double)out / ((double)in * scale);
    return (double)in / 2 * (1 - adjustment) + (o + 0.5) / scale - 0.5;
  }
  }
  return 0;
}

static int64_t round_nearest(nearest_mode mode, double x)
{
  /* clamp_index() takes it into the axis: converting a value outside the
   * type (a coordinate of 1e30, or NaN) to an integer is undefined */
  x = x > -1.0 ? (x < 0x1p53 ? x : 0x1p53) : -1.0;
  switch (mode) {
  case ROUND_PREFER_FLOOR: return x == floor(x) + 0.5 ? (int64_t)floor(x) : (int64_t)llround(x);
  case ROUND_PREFER_CEIL: return (int64_t)llround(x);
  case ROUND_FLOOR: return (int64_t)floor(x);
  case ROUND_CEIL: return (int64_t)ceil(x);
  }
  return 0;
}

static int64_t clamp_index(int64_t i, int64_t in)
{
  return i < 0 ? 0 : i >= in ? in - 1 : i;
}

/* The (up to 2^k) taps of one output row over all axes but the last. */
typedef struct row_tap {
  int64_t offset;
  float weight;
} row_tap;

static void resize_row(void *ctx, size_t row)
{
  const resize_params *p = ctx;
  uint32_t last = p->rank - 1;
  row_tap taps[1 << 7];
  size_t count = 1;
  taps[0] = (row_tap){0, 1.0f};
  size_t rest = row;
  for (int d = (int)last - 1; d >= 0; d--) {
    int64_t o = (int64_t)(rest % (size_t)p->out_dims[d]);
    rest /= (size_t)p->out_dims[d];
    const axis_taps *a = &p->taps[d];
    if (!a->interpolated) {
      for (size_t t = 0; t < count; t++)
        taps[t].offset += a->first[o];
      continue;
    }
    for (size_t t = 0; t < count; t++) { /* each tap splits in two */
      taps[count + t] = (row_tap){taps[t].offset + a->second[o], taps[t].weight * a->weight[o]};
      taps[t].offset += a->first[o];
      taps[t].weight *= 1.0f - a->weight[o];
    }
    count *= 2;
  }
  const axis_taps *w = &p->taps[last];
  size_t pixel = p->pixel, bytes = p->bytes;
  size_t first = row * (size_t)p->out_dims[last] * pixel;
  if (count == 1 && !w->interpolated) { /* nearest: whole pixels copied */
    const char *x = (const char *)p->x + (size_t)taps[0].offset * bytes;
    char *to = (char *)p->y + first * bytes;
    if (pixel == 1 && bytes == sizeof(float))
      for (int64_t j = 0; j < p->out_dims[last]; j++)
        ((float *)to)[j] = ((const float *)x)[w->first[j]];
    else if (pixel == 1)
      for (int64_t j = 0; j < p->out_dims[last]; j++)
        to[j] = x[w->first[j]];
    else
      for (int64_t j = 0; j < p->out_dims[last]; j++)
        memcpy(to + (size_t)j * pixel * bytes, x + (size_t)w->first[j] * bytes, pixel * bytes);
    return;
  }
  float *y = (float *)p->y + first;
  for (int64_t j = 0; j < p->out_dims[last]; j++) {
    for (size_t c = 0; c < pixel; c++) {
      float sum = 0;
      for (size_t t = 0; t < count; t++) {
        const float *x = (const float *)p->x + taps[t].offset + c;
        float v = w->interpolated
                      ? x[w->first[j]] * (1.0f - w->weight[j]) + x[w->second[j]] * w->weight[j]
                      : x[w->first[j]];
        sum += taps[t].weight * v;
      }
      y[(size_t)j * pixel + c] = sum;
    }
  }
}

static void run_resize(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  resize_params job = *(const resize_params *)k->params;
  job.x = in[0];
  job.y = out[0];
  npu_cpu_parallel_for(k->device, job.rows, resize_row, &job);
}

/* The grid of pixels a tensor is resized as: its axes (the tensor axis
 * each follows, -1 for a block of channels, which keeps its size), their
 * sizes in and out, and strides in elements. */
typedef struct pixel_grid {
  uint32_t rank;
  size_t pixel;
  int axis[NPU_MAX_RANK + 1];
  int64_t in[NPU_MAX_RANK + 1], out[NPU_MAX_RANK + 1], strides[NPU_MAX_RANK + 1];
} pixel_grid;

static pixel_grid grid_of(const npu_hal_tensor_desc *x, const npu_hal_tensor_desc *y)
{
  pixel_grid g = {.pixel = 1};
  size_t block = npu_hal_channel_block(x) > 1 ? npu_hal_channel_block(x) : 0;
  for (uint32_t d = 0; d < x->rank; d++) {
    bool channels = d == 1 && x->layout != NPU_HAL_LAYOUT_PLAIN;
    if (channels && block) { /* the blocks of channels stay, each a run of pixels */
      g.axis[g.rank] = -1;
      g.in[g.rank] = g.out[g.rank] = x->dims[1] / (int64_t)block;
      g.rank++;
      g.pixel = block;
    } else if (channels) { /* channels-last: all channels are one pixel */
      g.pixel = (size_t)x->dims[1];
    } else {
      g.axis[g.rank] = (int)d;
      g.in[g.rank] = x->dims[d];
      g.out[g.rank] = y->dims[d];
      g.rank++;
    }
  }
  int64_t stride = (int64_t)g.pixel;
  for (int d = (int)g.rank - 1; d >= 0; d--) {
    g.strides[d] = stride;
    stride *= g.in[d];
  }
  return g;
}

static bool parse_mode(const char *value, const char *const *names, size_t count, int *mode)
{
  for (size_t i = 0; i < count; i++)
    if (strcmp(value, names[i]) == 0) {
      *mode = (int)i;
      return true;
    }
  return false;
}

static npu_status create_resize(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const npu_hal_attributes *a = &op->attributes;
  bool upsample = strcmp(op->op_type, "Upsample") == 0;
  const char *mode = a->get_string(a->node, "mode", "nearest");
  bool linear = strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0;
  bool bytes = x->dtype == NPU_DTYPE_UINT8 || x->dtype == NPU_DTYPE_INT8;
  if ((x->dtype != NPU_DTYPE_FLOAT32 && !(bytes && !linear)) || x->rank == 0)
    return cpu_unsupported(op, "only float32 tensors, or 8-bit ones resized nearest");
  if (!linear && strcmp(mode, "nearest") != 0)
    return cpu_unsupported(op, "only nearest and linear modes");
  if (a->get_int(a->node, "antialias", 0))
    return cpu_unsupported(op, "antialiasing");
  static const char *const coordinate_names[] = {"half_pixel", "pytorch_half_pixel",
                                                 "align_corners", "asymmetric",
                                                 "tf_half_pixel_for_nn", "half_pixel_symmetric"};
  static const char *const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                              "ceil"};
  int coordinates = COORD_ASYMMETRIC, nearest = ROUND_FLOOR;
  if (!upsample &&
      (!parse_mode(a->get_string(a->node, "coordinate_transformation_mode", "half_pixel"),
                   coordinate_names, 6, &coordinates) ||
       !parse_mode(a->get_string(a->node, "nearest_mode", "round_prefer_floor"), nearest_names,
                   4, &nearest)))
    return cpu_unsupported(op, "this coordinate transformation or nearest mode");
  /* Scales as given (they need not equal out/in), else from the sizes. */
  uint32_t scales_input = upsample || op->opset < 11 ? 1 : 2;
  const float *scales = op->input_count > scales_input && op->inputs[scales_input].dtype &&
                                cpu_tensor_elements(&op->inputs[scales_input]) == x->rank
                            ? op->input_values[scales_input]
                            : NULL;
  resize_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = free_resize_params;
  pixel_grid grid = grid_of(x, y);
  p->rank = grid.rank;
  p->pixel = grid.pixel;
  p->bytes = bytes ? 1 : sizeof(float);
  p->rows = cpu_tensor_elements(y) / grid.pixel /
            (size_t)(grid.out[grid.rank - 1] ? grid.out[grid.rank - 1] : 1);
  uint32_t interpolated_axes = 0;
  for (uint32_t d = 0; d < grid.rank; d++) {
    int64_t in = grid.in[d], out = grid.out[d];
    int axis = grid.axis[d];
    double scale = scales && axis >= 0 ? scales[axis] : (double)out / (double)in;
    axis_taps *t = &p->taps[d];
    p->out_dims[d] = out;
    t->first = malloc((size_t)out * sizeof *t->first);
    t->second = malloc((size_t)out * sizeof *t->second);
    t->weight = malloc((size_t)out * sizeof *t->weight);
    if (!t->first || !t->second || !t->weight)
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
    /* An axis kept as it is reads itself, whatever the coordinate mode
     * would make of it (tf_half_pixel_for_nn with ceil would shift it). */
    bool kept = in == out && scale == 1.0;
    for (int64_t o = 0; o < out; o++) {
      double source = kept ? (double)o
                           : source_coordinate((coordinate_mode)coordinates, o, in, out, scale);
      int64_t first, second;
      float weight = 0;
      if (linear) {
        double last = (double)(in - 1);
        source = source >= 0 ? (source < last ? source : last) : 0; /* (NaN: 0) */
        first = (int64_t)floor(source);
        second = clamp_index(first + 1, in);
        weight = (float)(source - (double)first);
      } else {
        first = second = clamp_index(round_nearest((nearest_mode)nearest, source), in);
      }
      t->first[o] = first * grid.strides[d];
      t->second[o] = second * grid.strides[d];
      t->weight[o] = weight;
      t->interpolated |= weight != 0;
    }
    interpolated_axes += t->interpolated && d + 1 < grid.rank;
  }
  if (interpolated_axes > 7)
    return cpu_unsupported(op, "interpolation over more than 8 axes");
  k->run = run_resize;
  return NPU_OK;
}

const cpu_kernel_entry cpu_resize_kernels[] = {
    {"Resize", create_resize, CPU_LAYOUTS_SHARED_SPATIAL},
    {"Upsample", create_resize, CPU_LAYOUTS_SHARED_SPATIAL},
    {NULL, NULL},
};
