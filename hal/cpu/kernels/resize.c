/* Resize (and opset 9's Upsample): nearest, n-linear and n-cubic
 * interpolation with ONNX's coordinate modes (tf_crop_and_resize's region
 * and extrapolation value too). Where each output coordinate reads from is
 * computed once per plan as per-axis tap tables; a run only gathers.
 * Channels-last and channel-block tensors (batch and channels kept) are
 * resized as plain tensors of "pixels": all C channels, or one block of C0,
 * move together. 8-bit tensors (int8 feature maps, see qdq_rewrite.c) are
 * resized nearest only: their values are copied. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "fast_math.h"

typedef enum {
  COORD_HALF_PIXEL, COORD_PYTORCH_HALF_PIXEL, COORD_ALIGN_CORNERS, COORD_ASYMMETRIC,
  COORD_TF_HALF_PIXEL_FOR_NN, COORD_HALF_PIXEL_SYMMETRIC, COORD_TF_CROP_AND_RESIZE,
} coordinate_mode;

typedef enum { ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL, ROUND_FLOOR, ROUND_CEIL } nearest_mode;

/* Output index o of an axis reads sum over t < count of
 * in[offsets[o * count + t]] * weights[o * count + t]: one tap (nearest, or
 * an axis read as it is), two (linear) or four (cubic); offsets are
 * already multiplied by the stride. outside[o] (tf_crop_and_resize only):
 * o lies outside the input, its value is the extrapolation value. */
typedef struct axis_taps {
  uint32_t count;
  int64_t *offsets;
  float *weights;
  bool *outside;
} axis_taps;

/* Taps of one output row over all axes but the last: their product. */
enum { MAX_ROW_TAPS = 256 };

typedef struct resize_params {
  uint32_t rank;                  /* of the pixel grid resized */
  size_t pixel;                   /* elements per pixel: 1 for plain tensors */
  size_t bytes;                   /* per element: 4 (float32) or 1 (nearest only) */
  int64_t out_dims[NPU_MAX_RANK];
  axis_taps taps[NPU_MAX_RANK];
  float extrapolation;            /* tf_crop_and_resize's value outside the input */
  size_t rows; /* output rows along the last axis */
  size_t in_row; /* elements of an input row along the last axis (its pixels) */
  const void *x; /* bound per run */
  void *y;
} resize_params;

static void free_resize_params(void *data)
{
  resize_params *p = data;
  for (uint32_t d = 0; p && d < p->rank; d++) {
    free(p->taps[d].offsets);
    free(p->taps[d].weights);
    free(p->taps[d].outside);
  }
  free(p);
}

static double source_coordinate(coordinate_mode mode, int64_t o, int64_t in, int64_t out,
                                double scale)
{
  switch (mode) {
  case COORD_HALF_PIXEL: return (o + 0.5) / scale - 0.5;
  case COORD_PYTORCH_HALF_PIXEL: return out > 1 ? (o + 0.5) / scale - 0.5 : -0.5;
  case COORD_ALIGN_CORNERS: /* over the unrounded resized length, as ONNX's reference */
    return out > 1 ? (double)o * (double)(in - 1) / ((double)in * scale - 1) : 0;
  case COORD_ASYMMETRIC: return o / scale;
  case COORD_TF_HALF_PIXEL_FOR_NN: return (o + 0.5) / scale;
  case COORD_HALF_PIXEL_SYMMETRIC: { /* opset 19: half_pixel, centred on the input when the
                                        output's length was rounded */
    double adjustment = (double)out / ((double)in * scale);
    return (double)in / 2 * (1 - adjustment) + (o + 0.5) / scale - 0.5;
  }
  case COORD_TF_CROP_AND_RESIZE: break; /* (crop_coordinate: it needs the region) */
  }
  return 0;
}

/* tf_crop_and_resize: the region [start, end] of the axis (fractions of
 * its last index) spread over the output. */
static double crop_coordinate(int64_t o, int64_t in, int64_t out, double start, double end)
{
  double span = (end - start) * (double)(in - 1);
  return start * (double)(in - 1) + (out > 1 ? (double)o * span / (double)(out - 1) : span / 2);
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

/* One tap of an output row over all axes but the last. */
typedef struct row_tap {
  int64_t offset;
  float weight;
} row_tap;

static void fill_row(float *y, size_t count, float value)
{
  for (size_t i = 0; i < count; i++)
    y[i] = value;
}

/* Elements of an output row's blended input row kept on the stack (a
 * worker thread's); longer rows are summed tap row by tap row. */
enum { BLEND_ELEMENTS = 8192 };

/* to = weight * from (first), else to += weight * from. */
NPU_VECTOR_CLONES
static void add_scaled(float *restrict to, const float *restrict from, float weight, size_t n,
                       bool first)
{
  if (first)
    for (size_t i = 0; i < n; i++)
      to[i] = weight * from[i];
  else
    for (size_t i = 0; i < n; i++)
      to[i] += weight * from[i];
}

/* An interpolated output row: the input rows its taps read, blended once
 * into one (vectorised; unless a single row is read as it is, or the row is
 * longer than the stack's blend, when each output sums the rows itself),
 * then each output pixel from its taps along that row, all the pixel's
 * channels at once (a channel block's 16 lanes in one vector). */
static void interpolate_row(const resize_params *p, const row_tap *taps, size_t count,
                            float *y)
{
  const axis_taps *w = &p->taps[p->rank - 1];
  size_t pixel = p->pixel, width = (size_t)p->out_dims[p->rank - 1], rows = count;
  float blend[BLEND_ELEMENTS];
  const float *sources[MAX_ROW_TAPS];
  float row_weights[MAX_ROW_TAPS];
  for (size_t t = 0; t < count; t++) {
    sources[t] = (const float *)p->x + taps[t].offset;
    row_weights[t] = taps[t].weight;
  }
  if ((count > 1 || taps[0].weight != 1.0f) && p->in_row <= BLEND_ELEMENTS) {
    for (size_t t = 0; t < count; t++)
      add_scaled(blend, sources[t], row_weights[t], p->in_row, t == 0);
    sources[0] = blend;
    row_weights[0] = 1.0f;
    rows = 1;
  }
  for (size_t j = 0; j < width; j++) {
    if (w->outside && w->outside[j]) {
      fill_row(y + j * pixel, pixel, p->extrapolation);
      continue;
    }
    const int64_t *offsets = w->offsets + j * w->count;
    const float *weights = w->weights + j * w->count;
    if (pixel == 1) { /* (a plain tensor: one value a tap) */
      const float *source = sources[0];
      float sum = 0;
      for (uint32_t u = 0; u < w->count; u++)
        sum += source[offsets[u]] * weights[u];
      sum *= row_weights[0];
      for (size_t t = 1; t < rows; t++) {
        float along = 0;
        for (uint32_t u = 0; u < w->count; u++)
          along += sources[t][offsets[u]] * weights[u];
        sum += row_weights[t] * along;
      }
      y[j] = sum;
      continue;
    }
    for (size_t t = 0; t < rows; t++)
      for (uint32_t u = 0; u < w->count; u++)
        add_scaled(y + j * pixel, sources[t] + offsets[u], row_weights[t] * weights[u], pixel,
                   t == 0 && u == 0);
  }
}

static void resize_row(void *ctx, size_t row)
{
  const resize_params *p = ctx;
  uint32_t last = p->rank - 1;
  size_t pixel = p->pixel, bytes = p->bytes, width = (size_t)p->out_dims[last];
  size_t first = row * width * pixel;
  row_tap taps[MAX_ROW_TAPS];
  size_t count = 1;
  taps[0] = (row_tap){0, 1.0f};
  size_t rest = row;
  for (int d = (int)last - 1; d >= 0; d--) {
    int64_t o = (int64_t)(rest % (size_t)p->out_dims[d]);
    rest /= (size_t)p->out_dims[d];
    const axis_taps *a = &p->taps[d];
    if (a->outside && a->outside[o]) {
      fill_row((float *)p->y + first, width * pixel, p->extrapolation);
      return;
    }
    const int64_t *offsets = a->offsets + (size_t)o * a->count;
    const float *weights = a->weights + (size_t)o * a->count;
    for (uint32_t u = a->count; u-- > 0;) /* each tap splits in count (the first last) */
      for (size_t t = 0; t < count; t++)
        taps[u * count + t] = (row_tap){taps[t].offset + offsets[u], taps[t].weight * weights[u]};
    count *= a->count;
  }
  const axis_taps *w = &p->taps[last];
  if (count == 1 && w->count == 1 && !w->outside) { /* nearest: whole pixels copied */
    const char *x = (const char *)p->x + (size_t)taps[0].offset * bytes;
    char *to = (char *)p->y + first * bytes;
    if (pixel == 1 && bytes == sizeof(float))
      for (size_t j = 0; j < width; j++)
        ((float *)to)[j] = ((const float *)x)[w->offsets[j]];
    else if (pixel == 1)
      for (size_t j = 0; j < width; j++)
        to[j] = x[w->offsets[j]];
    else
      for (size_t j = 0; j < width; j++)
        memcpy(to + j * pixel * bytes, x + (size_t)w->offsets[j] * bytes, pixel * bytes);
    return;
  }
  interpolate_row(p, taps, count, (float *)p->y + first);
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

typedef enum { INTERPOLATE_NEAREST, INTERPOLATE_LINEAR, INTERPOLATE_CUBIC } interpolation;

/* How an axis's output index reads its inputs: the interpolation, with
 * Resize's attributes. `filter_scale` < 1 widens linear and cubic filters
 * by 1 / filter_scale (antialiased downsampling). */
typedef struct tap_rule {
  interpolation kind;
  int nearest;
  double cubic_a, filter_scale;
  bool exclude_outside;
} tap_rule;

/* Taps per output index: one nearest; linear and cubic a filter of 2 and 4
 * inputs, widened by antialiasing (ONNX's footprints). */
static uint32_t tap_count(const tap_rule *rule, int64_t *first)
{
  double reach = rule->kind == INTERPOLATE_CUBIC ? 2 : 1; /* the filter's half width */
  *first = rule->kind == INTERPOLATE_NEAREST ? 0 : (int64_t)floor(-reach / rule->filter_scale) + 1;
  return rule->kind == INTERPOLATE_NEAREST ? 1 : (uint32_t)(2 - 2 * *first);
}

/* Keys' cubic convolution kernel at distance d, with coefficient a. */
static double keys_cubic(double a, double d)
{
  d = fabs(d);
  return d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1
         : d < 2 ? ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
                 : 0;
}

void cpu_cubic_weights(double ratio, double a, double *w)
{
  for (int i = 0; i < 4; i++)
    w[i] = keys_cubic(a, (double)(i - 1) - ratio);
}

/* The filter at distance d (in inputs): the triangle, or Keys' cubic. */
static double filter_at(const tap_rule *rule, double d)
{
  if (rule->kind == INTERPOLATE_CUBIC)
    return keys_cubic(rule->cubic_a, d);
  d = fabs(d);
  return d < 1 ? 1 - d : 0;
}

/* The taps of output index o of an axis of `in` inputs read at `source`:
 * indices (not yet clamped) and weights. ONNX's reference takes the input
 * before the source (the source itself when it is whole: ratio 1) and its
 * neighbours. */
static uint32_t taps_at(const tap_rule *rule, double source, int64_t in, int64_t *index,
                        double *weight)
{
  /* (bounded: converting a value outside the type, or NaN, is undefined) */
  source = source > -0x1p40 ? (source < 0x1p40 ? source : 0x1p40) : -0x1p40;
  if (rule->kind == INTERPOLATE_NEAREST) {
    index[0] = round_nearest((nearest_mode)rule->nearest, source);
    weight[0] = 1;
    return 1;
  }
  int64_t first;
  uint32_t count = tap_count(rule, &first);
  double base = ceil(source) - 1, ratio = source - base, sum = 0;
  for (uint32_t i = 0; i < count; i++) {
    int64_t offset = first + (int64_t)i;
    index[i] = (int64_t)base + offset;
    weight[i] = filter_at(rule, ((double)offset - ratio) * rule->filter_scale);
    if (rule->exclude_outside && (index[i] < 0 || index[i] >= in))
      weight[i] = 0;
    sum += weight[i];
  }
  /* antialiased filters are normalised, as exclude_outside's are */
  for (uint32_t i = 0; i < count && (rule->filter_scale < 1 || rule->exclude_outside) && sum != 0;
       i++)
    weight[i] /= sum;
  return count;
}

/* Resize's scale of every tensor axis, and tf_crop_and_resize's region
 * (starts, then ends: 0 and 1 where none is given), from `axes` (opset 18:
 * the axes the scales, sizes and roi list; else all of them) and
 * keep_aspect_ratio_policy (opset 18: with sizes, one scale for all the
 * axes listed, their smallest or largest, as ONNX's reference resizes). */
static void resolve_scales(const npu_hal_op *op, const float *scales, const float *roi,
                           double *scale, double *region)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const npu_hal_attributes *a = &op->attributes;
  int64_t axes[NPU_MAX_RANK];
  const int64_t *listed;
  size_t count = a->get_ints(a->node, "axes", &listed); /* (checked by shape inference) */
  for (size_t i = 0; i < count; i++)
    axes[i] = listed[i] < 0 ? listed[i] + x->rank : listed[i];
  for (size_t i = 0; count == 0 && i < x->rank; i++)
    axes[i] = (int64_t)i;
  count = count ? count : x->rank;
  const char *policy = a->get_string(a->node, "keep_aspect_ratio_policy", "stretch");
  bool larger = strcmp(policy, "not_smaller") == 0;
  bool kept_aspect = larger || strcmp(policy, "not_larger") == 0;
  double shared = larger ? 0 : INFINITY;
  for (uint32_t d = 0; d < x->rank; d++) {
    scale[d] = 1;
    region[d] = 0;
    region[x->rank + d] = 1;
  }
  /* the sizes (given, when the scales are not) before the policy rounds them */
  const int64_t *sizes = scales ? NULL : op->input_values[3];
  for (size_t i = 0; i < count; i++) {
    int64_t d = axes[i];
    double ratio = (double)(kept_aspect && sizes ? sizes[i] : y->dims[d]) / (double)x->dims[d];
    scale[d] = scales ? scales[i] : ratio;
    shared = larger ? (ratio > shared ? ratio : shared) : (ratio < shared ? ratio : shared);
    if (roi) {
      region[d] = roi[i];
      region[x->rank + d] = roi[count + i];
    }
  }
  for (size_t i = 0; i < count && kept_aspect && !scales; i++)
    scale[axes[i]] = shared; /* (the output: the sizes rounded from it) */
}

static npu_status create_resize(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const npu_hal_attributes *a = &op->attributes;
  bool upsample = strcmp(op->op_type, "Upsample") == 0;
  static const char *const mode_names[] = {"nearest", "linear", "cubic", "bilinear"};
  int kind;
  if (!parse_mode(a->get_string(a->node, "mode", "nearest"), mode_names, 4, &kind))
    return cpu_unsupported(op, "only nearest, linear and cubic modes");
  kind = kind == 3 ? INTERPOLATE_LINEAR : kind; /* (Upsample's name of linear) */
  bool bytes = x->dtype == NPU_DTYPE_UINT8 || x->dtype == NPU_DTYPE_INT8;
  if ((x->dtype != NPU_DTYPE_FLOAT32 && !(bytes && kind == INTERPOLATE_NEAREST)) || x->rank == 0)
    return cpu_unsupported(op, "only float32 tensors, or 8-bit ones resized nearest");
  static const char *const coordinate_names[] = {"half_pixel", "pytorch_half_pixel",
                                                 "align_corners", "asymmetric",
                                                 "tf_half_pixel_for_nn", "half_pixel_symmetric",
                                                 "tf_crop_and_resize"};
  static const char *const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                              "ceil"};
  int coordinates = COORD_ASYMMETRIC, nearest = ROUND_FLOOR;
  if (!upsample &&
      (!parse_mode(a->get_string(a->node, "coordinate_transformation_mode", "half_pixel"),
                   coordinate_names, 7, &coordinates) ||
       !parse_mode(a->get_string(a->node, "nearest_mode", "round_prefer_floor"), nearest_names,
                   4, &nearest)))
    return cpu_unsupported(op, "this coordinate transformation or nearest mode");
  /* The scales and tf_crop_and_resize's roi (constants: the schema and
   * shape inference checked their lengths); scales as given need not equal
   * out / in. */
  bool crop = coordinates == COORD_TF_CROP_AND_RESIZE;
  uint32_t scales_input = upsample || op->opset < 11 ? 1 : 2;
  bool has_scales = op->input_count > scales_input && op->inputs[scales_input].dtype &&
                    cpu_tensor_elements(&op->inputs[scales_input]) > 0;
  const float *roi = crop && op->opset >= 11 && op->inputs[1].dtype == NPU_DTYPE_FLOAT32
                         ? op->input_values[1]
                         : NULL;
  if (crop && (!roi || bytes))
    return cpu_unsupported(op, "tf_crop_and_resize of float32 data needs a constant float32 "
                               "roi");
  double scale[NPU_MAX_RANK], region[2 * NPU_MAX_RANK];
  resolve_scales(op, has_scales ? op->input_values[scales_input] : NULL, roi, scale, region);
  tap_rule rule = {(interpolation)kind, nearest, a->get_float(a->node, "cubic_coeff_a", -0.75f),
                   1, a->get_int(a->node, "exclude_outside", 0) != 0};
  bool antialias = a->get_int(a->node, "antialias", 0) != 0 && kind != INTERPOLATE_NEAREST;
  resize_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = free_resize_params;
  p->extrapolation = a->get_float(a->node, "extrapolation_value", 0.0f);
  pixel_grid grid = grid_of(x, y);
  p->rank = grid.rank;
  p->pixel = grid.pixel;
  p->bytes = bytes ? 1 : sizeof(float);
  p->rows = cpu_tensor_elements(y) / grid.pixel /
            (size_t)(grid.out[grid.rank - 1] ? grid.out[grid.rank - 1] : 1);
  p->in_row = (size_t)grid.in[grid.rank - 1] * grid.pixel;
  size_t row_taps = 1;
  for (uint32_t d = 0; d < grid.rank; d++) {
    int64_t in = grid.in[d], out = grid.out[d];
    int axis = grid.axis[d];
    double axis_scale = axis >= 0 ? scale[axis] : 1;
    axis_taps *t = &p->taps[d];
    p->out_dims[d] = out;
    /* An axis kept as it is reads itself, whatever the coordinate mode
     * would make of it (tf_half_pixel_for_nn with ceil would shift it),
     * unless a region crops it. */
    bool kept = in == out && axis_scale == 1.0 &&
                (axis < 0 || !crop || (region[axis] == 0 && region[x->rank + axis] == 1));
    tap_rule axis_rule = rule;
    axis_rule.kind = kept ? INTERPOLATE_NEAREST : rule.kind;
    /* antialiased downsampling widens the filter by the factor */
    axis_rule.filter_scale = antialias && axis_scale < 1 ? axis_scale : 1;
    if (!(axis_rule.filter_scale >= 1.0 / 4096))
      return cpu_unsupported(op, "antialiased downsampling by more than 4096");
    int64_t first;
    uint32_t count = tap_count(&axis_rule, &first);
    size_t slots = (size_t)(out ? out : 1) * count;
    t->offsets = malloc(slots * sizeof *t->offsets);
    t->weights = malloc(slots * sizeof *t->weights);
    t->outside = crop ? calloc((size_t)(out ? out : 1), sizeof *t->outside) : NULL;
    int64_t *index = malloc(count * sizeof *index);
    double *weight = malloc(count * sizeof *weight);
    bool allocated = t->offsets && t->weights && (!crop || t->outside) && index && weight;
    bool single = true; /* every index reads one input whole */
    t->count = count;
    for (int64_t o = 0; o < out && allocated; o++) {
      double source = kept ? (double)o
                      : crop
                          ? crop_coordinate(o, in, out, region[axis], region[x->rank + axis])
                          : source_coordinate((coordinate_mode)coordinates, o, in, out, axis_scale);
      if (crop && !kept && !(source >= 0 && source <= (double)(in - 1)))
        t->outside[o] = true; /* (its taps unread) */
      taps_at(&axis_rule, source, in, index, weight);
      for (uint32_t u = 0; u < count; u++) {
        t->offsets[(size_t)o * count + u] = clamp_index(index[u], in) * grid.strides[d];
        t->weights[(size_t)o * count + u] = (float)weight[u];
        single &= weight[u] == 0 || weight[u] == 1;
      }
    }
    free(index);
    free(weight);
    if (!allocated)
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
    if (single && count > 1) /* one tap an index, as nearest reads (integer scales) */
      for (int64_t o = 0; o < out; o++)
        for (uint32_t u = 0; u < count; u++)
          if (t->weights[(size_t)o * count + u] == 1)
            t->offsets[o] = t->offsets[(size_t)o * count + u];
    if (single) {
      t->count = 1;
      for (int64_t o = 0; o < out; o++)
        t->weights[o] = 1;
    }
    if (d + 1 < grid.rank && (row_taps *= t->count) > MAX_ROW_TAPS)
      return cpu_unsupported(op, "interpolation over more than 256 taps per output row");
  }
  k->run = run_resize;
  return NPU_OK;
}

const cpu_kernel_entry cpu_resize_kernels[] = {
    {"Resize", create_resize, CPU_LAYOUTS_SHARED_SPATIAL},
    {"Upsample", create_resize, CPU_LAYOUTS_SHARED_SPATIAL},
    {NULL, NULL},
};
