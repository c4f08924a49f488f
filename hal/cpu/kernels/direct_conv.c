/* Convolutions that compile nothing for a shape (direct_conv.h). Output
 * channels (groups, for a depthwise convolution) run 16 to a vector; a
 * tile of output positions of one row keeps its sums in registers while
 * the taps and input channels stream past. Every address comes from a
 * table per axis, so one loop serves every layout. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "activations.h"
#include "direct_conv.h"
#include "fast_math.h"

enum {
  LANES = 16,
  TILE = 12,      /* output positions summed at once (2 x 12 vectors of sums) */
  MAX_CHUNKS = 2, /* vectors of output channels a tile sums */
  SEGMENT = 4 * TILE, /* positions of a row per task (a MatMul's rows are one long row) */
};

typedef struct addend {
  uint32_t input; /* launch input */
  cpu_channel_walk walk;
  int64_t *channel; /* offset of each channel */
} addend;

struct cpu_direct_conv {
  int64_t batch, group, in_per_group, out_per_group, out_channels;
  int64_t in_h, in_w, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
  int64_t interior_begin, interior_end; /* output columns whose taps all lie in the row */
  bool depthwise, transposed;
  cpu_channel_walk in_walk, out_walk;
  int64_t *in_channel, *out_channel; /* offsets of each channel */
  bool out_vectors;                  /* 16 channels from a multiple of 16 are contiguous */
  /* The weights' offsets along each of their axes (g, o, i, rows, columns). */
  const float *weights;
  int64_t *w_group, *w_out, *w_in, *w_row, *w_col;
  float *bias; /* padded to whole vectors per group, or NULL */
  npu_hal_activation activations[NPU_HAL_MAX_ACTIVATIONS];
  uint32_t activation_count;
  addend addends[NPU_HAL_MAX_ACTIVATIONS]; /* the ADD activations', in their order */
};

/* Offset of index i along `axis` of a blocked memory descriptor, for every
 * i < count (the offset of a multi-index is the sum of its axes'). */
static int64_t *axis_offsets(const dnnl_memory_desc_t *md, int axis, int64_t count)
{
  int64_t *offsets = malloc((size_t)(count > 0 ? count : 1) * sizeof *offsets);
  if (!offsets)
    return NULL;
  const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
  for (int64_t i = 0; i < count; i++) {
    int64_t position = i, offset = 0, inner_stride = 1;
    for (int blk = b->inner_nblks - 1; blk >= 0; blk--) {
      if (b->inner_idxs[blk] == axis) {
        offset += position % b->inner_blks[blk] * inner_stride;
        position /= b->inner_blks[blk];
      }
      inner_stride *= b->inner_blks[blk];
    }
    offsets[i] = offset + position * b->strides[axis];
  }
  return offsets;
}

/* Whether each run of 16 from a multiple of 16 below `count` is contiguous. */
static bool vector_runs(const int64_t *offsets, int64_t count)
{
  for (int64_t i = 0; i < count; i++)
    if (i % LANES && offsets[i] != offsets[i - 1] + 1)
      return false;
  return true;
}

static int64_t *channel_offsets(const npu_hal_tensor_desc *t, int64_t count)
{
  int64_t *offsets = malloc((size_t)count * sizeof *offsets);
  cpu_channel_walk walk = cpu_channel_walk_of(t);
  for (int64_t c = 0; offsets && c < count; c++)
    offsets[c] = (int64_t)cpu_channel_offset(&walk, (size_t)c);
  return offsets;
}

static int64_t *identity_offsets(int64_t count)
{
  int64_t *offsets = malloc((size_t)(count > 0 ? count : 1) * sizeof *offsets);
  for (int64_t i = 0; offsets && i < count; i++)
    offsets[i] = i;
  return offsets;
}

void cpu_direct_conv_free(cpu_direct_conv *c)
{
  if (!c)
    return;
  int64_t *tables[] = {c->in_channel, c->out_channel, c->w_group, c->w_out,
                       c->w_in,       c->w_row,       c->w_col};
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
    free(tables[i]);
  for (uint32_t i = 0; i < c->activation_count; i++)
    free(c->addends[i].channel);
  free(c->bias);
  free(c);
}

static bool same_shape(const npu_hal_tensor_desc *a, const npu_hal_tensor_desc *b)
{
  if (a->rank != b->rank)
    return false;
  for (uint32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d])
      return false;
  return true;
}

/* The activations and addends; false for an activation it cannot apply.
 * `rows`: the output is a matrix of c->out_channels columns (MatMul), and
 * an addend one of its shape, plain. */
static bool take_activations(const npu_hal_op *op, cpu_direct_conv *c, bool rows)
{
  const npu_hal_tensor_desc *y = &op->outputs[0];
  if (op->activation_count > NPU_HAL_MAX_ACTIVATIONS)
    return false;
  for (uint32_t i = 0; i < op->activation_count; i++) {
    const npu_hal_activation *a = &op->activations[i];
    c->activations[c->activation_count++] = *a;
    if (a->kind == NPU_HAL_ACTIVATION_DEQUANTIZED_ADD || a->kind == NPU_HAL_ACTIVATION_QUANTIZE)
      return false;
    if (a->kind != NPU_HAL_ACTIVATION_ADD)
      continue;
    if (a->input >= op->fused_input_count)
      return false;
    const npu_hal_tensor_desc *t = &op->fused_inputs[a->input];
    /* (a matrix's: one of its shape, or a row added to every row, a bias) */
    bool row = rows && (int64_t)cpu_tensor_elements(t) == c->out_channels;
    if (t->dtype != NPU_DTYPE_FLOAT32 || (!same_shape(t, y) && !row) ||
        (rows && t->layout != NPU_HAL_LAYOUT_PLAIN))
      return false;
    c->addends[i].input = op->input_count + a->input;
    c->addends[i].walk = row ? (cpu_channel_walk){0} : rows ? c->out_walk : cpu_channel_walk_of(t);
    c->addends[i].channel = rows ? identity_offsets(c->out_channels)
                                 : channel_offsets(t, y->dims[1]);
    if (!c->addends[i].channel)
      return false;
  }
  return true;
}

/* The weights' axis tables; false where the vectors would not be contiguous. */
static bool take_weights(const dnnl_memory_desc_t *md, const float *weights, cpu_direct_conv *c,
                         int spatial)
{
  if (md->format_kind != dnnl_blocked || md->data_type != dnnl_f32 || md->ndims != spatial + 3)
    return false;
  const dnnl_dims_t *padded = &md->padded_dims;
  c->weights = weights + md->offset0;
  c->w_group = axis_offsets(md, 0, (*padded)[0]);
  c->w_out = axis_offsets(md, 1, (*padded)[1]);
  c->w_in = axis_offsets(md, 2, (*padded)[2]);
  c->w_row = spatial == 2 ? axis_offsets(md, 3, c->kernel_h) : calloc(1, sizeof *c->w_row);
  c->w_col = axis_offsets(md, spatial + 2, c->kernel_w);
  if (!c->w_group || !c->w_out || !c->w_in || !c->w_row || !c->w_col)
    return false;
  return c->depthwise ? (*padded)[0] % LANES == 0 && vector_runs(c->w_group, (*padded)[0])
                      : (*padded)[1] % LANES == 0 && vector_runs(c->w_out, (*padded)[1]);
}

npu_status cpu_direct_conv_create(const npu_hal_op *op, bool transposed,
                                  const dnnl_memory_desc_t *weights_md, const float *weights,
                                  cpu_direct_conv **conv)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const npu_hal_window *window = op->window;
  *conv = NULL;
  bool has_bias = op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED;
  if (!window || x->rank < 3 || x->rank > 4 || y->rank != x->rank ||
      x->dtype != NPU_DTYPE_FLOAT32 || y->dtype != NPU_DTYPE_FLOAT32 || window->group <= 0 ||
      x->dims[1] % window->group || y->dims[1] % window->group ||
      (has_bias && (op->inputs[2].dtype != NPU_DTYPE_FLOAT32 || !op->input_values[2])))
    return NPU_ERROR_NOT_SUPPORTED;
  cpu_direct_conv *c = calloc(1, sizeof *c);
  if (!c)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  int spatial = (int)x->rank - 2, w_axis = spatial - 1; /* the window's column axis */
  c->batch = x->dims[0];
  c->group = window->group;
  c->in_per_group = x->dims[1] / c->group;
  c->out_per_group = y->dims[1] / c->group;
  c->out_channels = y->dims[1];
  c->transposed = transposed;
  c->depthwise = !transposed && c->in_per_group == 1 && c->out_per_group == 1;
  c->in_h = spatial == 2 ? x->dims[2] : 1;
  c->out_h = spatial == 2 ? y->dims[2] : 1;
  c->in_w = x->dims[x->rank - 1];
  c->out_w = y->dims[y->rank - 1];
  c->kernel_h = spatial == 2 ? window->kernel[0] : 1;
  c->stride_h = spatial == 2 ? window->strides[0] : 1;
  c->dilation_h = spatial == 2 ? window->dilations[0] : 1;
  c->pad_h = spatial == 2 ? window->pad_begin[0] : 0;
  c->kernel_w = window->kernel[w_axis];
  c->stride_w = window->strides[w_axis];
  c->dilation_w = window->dilations[w_axis];
  c->pad_w = window->pad_begin[w_axis];
  bool pointwise = !transposed && c->kernel_h == 1 && c->kernel_w == 1 && c->stride_h == 1 &&
                   c->stride_w == 1 && c->pad_h == 0 && c->pad_w == 0 && c->in_h == c->out_h &&
                   c->in_w == c->out_w;
  if (pointwise) { /* one row of every position: whole tiles even on a 7x7 image */
    c->in_w = c->out_w = c->in_w * c->in_h;
    c->in_h = c->out_h = 1;
  }
  int64_t last_tap = (c->kernel_w - 1) * c->dilation_w;
  c->interior_begin = (c->pad_w + c->stride_w - 1) / c->stride_w;
  c->interior_end = c->in_w - 1 - last_tap + c->pad_w < 0
                        ? 0
                        : (c->in_w - 1 - last_tap + c->pad_w) / c->stride_w + 1;
  if (c->interior_end > c->out_w)
    c->interior_end = c->out_w;
  if (c->interior_begin > c->interior_end || transposed) /* (a transpose: all checked) */
    c->interior_begin = c->interior_end = 0;
  c->in_walk = cpu_channel_walk_of(x);
  c->out_walk = cpu_channel_walk_of(y);
  c->in_channel = channel_offsets(x, x->dims[1]);
  c->out_channel = channel_offsets(y, y->dims[1]);
  bool fits = c->in_channel && c->out_channel && take_activations(op, c, false) &&
              take_weights(weights_md, weights, c, spatial);
  /* (a group's vectors start at multiples of 16 only where its channels do) */
  c->out_vectors = fits && (c->depthwise || c->out_per_group % LANES == 0) &&
                   vector_runs(c->out_channel, y->dims[1]);
  /* A depthwise convolution reads its input 16 channels at a time too. */
  fits = fits && (!c->depthwise || (c->out_vectors && vector_runs(c->in_channel, x->dims[1])));
  if (fits && has_bias) {
    int64_t padded = (c->out_per_group + LANES - 1) / LANES * LANES;
    c->bias = calloc((size_t)(c->group * padded + LANES), sizeof *c->bias);
    fits = c->bias != NULL;
    const float *values = op->input_values[2];
    for (int64_t o = 0; fits && o < c->out_channels; o++)
      c->bias[c->depthwise ? o : o / c->out_per_group * padded + o % c->out_per_group] = values[o];
  }
  if (!fits) {
    cpu_direct_conv_free(c);
    return NPU_ERROR_NOT_SUPPORTED;
  }
  *conv = c;
  return NPU_OK;
}

npu_status cpu_direct_conv_create_matmul(const npu_hal_op *op, int32_t bias_input,
                                         const dnnl_memory_desc_t *weights_md,
                                         const float *weights, cpu_direct_conv **conv)
{
  const npu_hal_tensor_desc *a = &op->inputs[0], *y = &op->outputs[0];
  *conv = NULL;
  if (a->dtype != NPU_DTYPE_FLOAT32 || y->dtype != NPU_DTYPE_FLOAT32 || a->rank < 2 ||
      y->rank < 2 || a->layout != NPU_HAL_LAYOUT_PLAIN || y->layout != NPU_HAL_LAYOUT_PLAIN)
    return NPU_ERROR_NOT_SUPPORTED;
  int64_t depth = a->dims[a->rank - 1], columns = y->dims[y->rank - 1];
  int64_t rows = depth > 0 ? (int64_t)cpu_tensor_elements(a) / depth : 0;
  int ndims = weights_md->ndims;
  const float *bias_values = bias_input >= 0 ? op->input_values[bias_input] : NULL;
  if (rows <= 0 || (int64_t)cpu_tensor_elements(y) != rows * columns || ndims != 2 ||
      weights_md->format_kind != dnnl_blocked || weights_md->data_type != dnnl_f32 ||
      weights_md->dims[0] != depth || weights_md->dims[1] != columns ||
      (bias_input >= 0 &&
       (!bias_values || op->inputs[bias_input].dtype != NPU_DTYPE_FLOAT32 ||
        (int64_t)cpu_tensor_elements(&op->inputs[bias_input]) != columns)))
    return NPU_ERROR_NOT_SUPPORTED;
  cpu_direct_conv *c = calloc(1, sizeof *c);
  if (!c)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  /* A 1x1 convolution over one row of `rows` positions of `depth` channels. */
  c->batch = c->group = 1;
  c->in_per_group = depth;
  c->out_per_group = c->out_channels = columns;
  c->in_h = c->out_h = c->kernel_h = c->kernel_w = 1;
  c->stride_h = c->stride_w = c->dilation_h = c->dilation_w = 1;
  c->in_w = c->out_w = c->interior_end = rows;
  c->in_walk = (cpu_channel_walk){0, (size_t)depth, 0, 0};
  c->out_walk = (cpu_channel_walk){0, (size_t)columns, 0, 0};
  c->in_channel = identity_offsets(depth);
  c->out_channel = identity_offsets(columns);
  c->out_vectors = true;
  const dnnl_dims_t *padded = &weights_md->padded_dims;
  c->weights = weights + weights_md->offset0;
  c->w_in = axis_offsets(weights_md, ndims - 2, (*padded)[ndims - 2]);
  c->w_out = axis_offsets(weights_md, ndims - 1, (*padded)[ndims - 1]);
  c->w_group = calloc(1, sizeof *c->w_group);
  c->w_row = calloc(1, sizeof *c->w_row);
  c->w_col = calloc(1, sizeof *c->w_col);
  bool fits = c->in_channel && c->out_channel && c->w_in && c->w_out && c->w_group &&
              c->w_row && c->w_col && (*padded)[ndims - 1] % LANES == 0 &&
              vector_runs(c->w_out, (*padded)[ndims - 1]) && take_activations(op, c, true);
  if (fits && bias_values) {
    c->bias = calloc((size_t)(columns + LANES), sizeof *c->bias);
    fits = c->bias != NULL;
    if (fits)
      memcpy(c->bias, bias_values, (size_t)columns * sizeof *c->bias);
  }
  if (!fits) {
    cpu_direct_conv_free(c);
    return NPU_ERROR_NOT_SUPPORTED;
  }
  *conv = c;
  return NPU_OK;
}

/* ---- Running ---------------------------------------------------------------------- */

/* A tile's sums before the activations: position p's vectors of output
 * channels from sums[p * width] (width: its vectors' lanes), so that the
 * activations run once over all of them. */
typedef struct tile {
  float sums[TILE * MAX_CHUNKS * LANES];
  int width;
} tile;

/* The input index that tap `tap` of output index `o` reads along an axis
 * (a transpose: the input index whose tap writes o); false: none. */
static inline bool tap_source(int64_t o, int64_t tap, int64_t stride, int64_t dilation,
                              int64_t pad, int64_t in, bool transposed, int64_t *i)
{
  if (!transposed) {
    *i = o * stride - pad + tap * dilation;
    return *i >= 0 && *i < in;
  }
  int64_t scaled = o + pad - tap * dilation;
  *i = scaled / stride;
  return scaled >= 0 && scaled % stride == 0 && *i < in;
}

/* The input row that tap row r of output row oh reads, from `image`; NULL: none. */
static inline const float *tap_row(const cpu_direct_conv *c, const float *image, int64_t oh,
                                   int64_t r)
{
  int64_t ih;
  return tap_source(oh, r, c->stride_h, c->dilation_h, c->pad_h, c->in_h, c->transposed, &ih)
             ? image + ih * c->in_w * (int64_t)c->in_walk.pixel
             : NULL;
}

/* Where `positions` output positions from column ow read tap s of a row:
 * each one's offset from the row, and whether it reads one (`checked`: the
 * tile reaches past the columns whose taps all lie within the row). */
static inline __attribute__((always_inline)) void
tap_columns(const cpu_direct_conv *c, int64_t ow, int64_t s, int positions, bool checked,
            int64_t *offset, bool *reads)
{
  int64_t pixel = (int64_t)c->in_walk.pixel;
  for (int p = 0; p < positions; p++) {
    int64_t iw = (ow + p) * c->stride_w - c->pad_w + s * c->dilation_w;
    reads[p] = !checked ||
               tap_source(ow + p, s, c->stride_w, c->dilation_w, c->pad_w, c->in_w,
                          c->transposed, &iw);
    offset[p] = reads[p] ? iw * pixel : 0;
  }
}

/* `lanes` floats from `from` (16: a vector load; fewer: the rest zero,
 * nothing read past them). */
static inline void load_lanes(cpu_lanes16 *v, const float *from, int lanes)
{
  if (lanes == LANES) {
    cpu_lanes16_load(v, from);
    return;
  }
  *v = (cpu_lanes16){0};
  memcpy(v, from, (size_t)lanes * sizeof(float));
}

/* Sums of `positions` output positions (a constant where it is inlined)
 * from column ow of row oh: for `chunks` vectors of output channels from
 * o0 of group g, or `depthwise`, for the `lanes` (16, or the last few)
 * groups from g (each its own input channel: one vector of input read per
 * position and tap). */
static inline __attribute__((always_inline)) void
sum_tile(const cpu_direct_conv *c, const float *image, int64_t g, int64_t o0, int chunks,
         int64_t oh, int64_t ow, int positions, bool checked, bool depthwise, int lanes,
         tile *t)
{
  cpu_lanes16 sums[TILE][MAX_CHUNKS];
  int64_t padded = (c->out_per_group + LANES - 1) / LANES * LANES;
  int64_t bias = depthwise ? g : g * padded + o0; /* c->bias[bias]: the first vector's */
  for (int j = 0; j < chunks; j++) {
    cpu_lanes16 start = {0};
    if (c->bias)
      cpu_lanes16_load(&start, c->bias + bias + j * LANES);
    for (int p = 0; p < positions; p++)
      sums[p][j] = start;
  }
  const float *weights = c->weights + c->w_group[g] + (depthwise ? 0 : c->w_out[o0]);
  int64_t second = chunks > 1 ? c->w_out[o0 + LANES] - c->w_out[o0] : 0;
  const int64_t *in_channel = c->in_channel + g * c->in_per_group;
  const float *channels = depthwise ? image + in_channel[0] : image;
  int64_t step = c->stride_w * (int64_t)c->in_walk.pixel;
  for (int64_t r = 0; r < c->kernel_h; r++) {
    const float *row = tap_row(c, channels, oh, r);
    for (int64_t s = 0; row && s < c->kernel_w; s++) {
      int64_t offset[TILE];
      bool reads[TILE];
      tap_columns(c, ow, s, positions, checked, offset, reads);
      const float *tap = weights + c->w_row[r] + c->w_col[s];
      /* (unchecked: position p reads at offset[0] + p * step, in registers) */
      const float *first = row + offset[0];
      if (depthwise) {
        cpu_lanes16 w;
        cpu_lanes16_load(&w, tap);
#pragma GCC unroll 12
        for (int p = 0; p < positions; p++) {
          if (checked && !reads[p])
            continue;
          cpu_lanes16 v;
          load_lanes(&v, checked ? row + offset[p] : first + p * step, lanes);
          sums[p][0] += v * w;
        }
        continue;
      }
      for (int64_t i = 0; i < c->in_per_group; i++) {
        const float *wi = tap + c->w_in[i];
        cpu_lanes16 w[MAX_CHUNKS];
        for (int j = 0; j < chunks; j++)
          cpu_lanes16_load(&w[j], wi + j * second);
#pragma GCC unroll 12
        for (int p = 0; p < positions; p++) {
          if (checked && !reads[p])
            continue;
          float v = checked ? row[in_channel[i] + offset[p]] : first[in_channel[i] + p * step];
          for (int j = 0; j < chunks; j++)
            sums[p][j] += v * w[j];
        }
      }
    }
  }
  t->width = chunks * LANES;
  for (int p = 0; p < positions; p++)
    for (int j = 0; j < chunks; j++)
      cpu_lanes16_store(&t->sums[p * t->width + j * LANES], &sums[p][j]);
}

/* The tile's activations, in order, and its move to the output: `count`
 * channels from output channel `channel` at positions ow.. of row oh. */
static inline __attribute__((always_inline)) void
finish_tile(const cpu_direct_conv *c, tile *t, int positions, int64_t n, int64_t oh, int64_t ow,
            int64_t channel, int count, void *const *in, float *out)
{
  for (uint32_t a = 0; a < c->activation_count; a++) {
    const npu_hal_activation *act = &c->activations[a];
    if (act->kind != NPU_HAL_ACTIVATION_ADD) {
      cpu_activate(act, t->sums, positions * t->width);
      continue;
    }
    const addend *add = &c->addends[a];
    const float *values = (const float *)in[add->input] + n * (int64_t)add->walk.batch;
    for (int p = 0; p < positions; p++) {
      const float *at = values + (oh * c->out_w + ow + p) * (int64_t)add->walk.pixel;
      for (int j = 0; j < count; j++)
        t->sums[p * t->width + j] += at[add->channel[channel + j]];
    }
  }
  float *image = out + n * (int64_t)c->out_walk.batch;
  for (int p = 0; p < positions; p++) {
    float *at = image + (oh * c->out_w + ow + p) * (int64_t)c->out_walk.pixel;
    if (c->out_vectors) /* a vector's channels are contiguous, not two vectors' */
      for (int j = 0; j < count; j += LANES) {
        if (count - j >= LANES) /* (a constant size: one vector move) */
          memcpy(at + c->out_channel[channel + j], &t->sums[p * t->width + j],
                 LANES * sizeof(float));
        else
          memcpy(at + c->out_channel[channel + j], &t->sums[p * t->width + j],
                 (size_t)(count - j) * sizeof(float));
      }
    else
      for (int j = 0; j < count; j++)
        at[c->out_channel[channel + j]] = t->sums[p * t->width + j];
  }
}

typedef struct conv_run {
  const cpu_direct_conv *conv;
  void *const *in;
  float *out;
  int64_t vectors; /* task units per image row: groups of 16, or vector pairs of all groups */
  int64_t pairs;   /* per group (not depthwise) */
} conv_run;

/* Whether positions [ow, ow + count) reach past the columns whose taps
 * all lie within the row. */
static bool tile_checked(const cpu_direct_conv *c, int64_t ow, int64_t count)
{
  return ow < c->interior_begin || ow + count > c->interior_end;
}

/* One tile of `positions` (a constant) of the task's row, through to the output. */
#define RUN_TILE(positions)                                                                   \
  do {                                                                                        \
    bool checked = tile_checked(c, ow, positions);                                          \
    if (c->depthwise && count < LANES) /* the last groups: loads of fewer lanes */           \
      sum_tile(c, image, channel, 0, 1, oh, ow, positions, true, true, count, &t);            \
    else if (c->depthwise && checked)                                                         \
      sum_tile(c, image, channel, 0, 1, oh, ow, positions, true, true, LANES, &t);            \
    else if (c->depthwise)                                                                    \
      sum_tile(c, image, channel, 0, 1, oh, ow, positions, false, true, LANES, &t);           \
    else if (chunks == 2 && !checked)                                                         \
      sum_tile(c, image, g, o0, 2, oh, ow, positions, false, false, LANES, &t);               \
    else if (chunks == 2)                                                                     \
      sum_tile(c, image, g, o0, 2, oh, ow, positions, true, false, LANES, &t);                \
    else if (!checked)                                                                        \
      sum_tile(c, image, g, o0, 1, oh, ow, positions, false, false, LANES, &t);               \
    else                                                                                      \
      sum_tile(c, image, g, o0, 1, oh, ow, positions, true, false, LANES, &t);                \
    finish_tile(c, &t, positions, n, oh, ow, channel, count, run->in, run->out);             \
    ow += positions;                                                                          \
  } while (0)

NPU_VECTOR_CLONES
static void run_row(void *data, size_t index)
{
  const conv_run *run = data;
  const cpu_direct_conv *c = run->conv;
  /* Consecutive tasks share their weights: segments of rows vary fastest. */
  int64_t segments = (c->out_w + SEGMENT - 1) / SEGMENT;
  int64_t segment = (int64_t)index % segments, rest = (int64_t)index / segments;
  int64_t oh = rest % c->out_h;
  rest /= c->out_h;
  int64_t unit = rest % run->vectors, n = rest / run->vectors;
  const float *image = (const float *)run->in[0] + n * (int64_t)c->in_walk.batch;
  int64_t g = 0, o0 = 0, channel = unit * LANES;
  int chunks = 1, count = (int)(c->group - channel < LANES ? c->group - channel : LANES);
  if (!c->depthwise) {
    g = unit / run->pairs;
    o0 = unit % run->pairs * MAX_CHUNKS * LANES;
    int64_t left = c->out_per_group - o0;
    chunks = left > LANES ? 2 : 1;
    count = (int)(left < chunks * LANES ? left : chunks * LANES);
    channel = g * c->out_per_group + o0;
  }
  tile t;
  int64_t ow = segment * SEGMENT, end = ow + SEGMENT < c->out_w ? ow + SEGMENT : c->out_w;
  while (ow + TILE <= end)
    RUN_TILE(TILE);
  while (ow + 4 <= end)
    RUN_TILE(4);
  while (ow < end)
    RUN_TILE(1);
}

static atomic_uint_fast64_t launches;

uint64_t cpu_direct_conv_launches(void)
{
  return atomic_load(&launches);
}

void cpu_direct_conv_run(npu_hal_device *device, const cpu_direct_conv *c, void *const *in,
                         void *const *out)
{
  atomic_fetch_add(&launches, 1);
  conv_run run = {c, in, out[0], 0, 0};
  run.pairs = (c->out_per_group + MAX_CHUNKS * LANES - 1) / (MAX_CHUNKS * LANES);
  run.vectors = c->depthwise ? (c->group + LANES - 1) / LANES : c->group * run.pairs;
  int64_t segments = (c->out_w + SEGMENT - 1) / SEGMENT;
  npu_cpu_parallel_for(device, (size_t)(c->batch * run.vectors * c->out_h * segments), run_row,
                       &run);
}
