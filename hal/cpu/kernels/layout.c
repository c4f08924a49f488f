/* Data-movement kernels: copies (Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity), Dropout at inference, Transpose (DepthToSpace and SpaceToDepth
 * too), Concat, Split, Slice, Gather, ConstantOfShape, Range. Element size
 * is all they need to know of the type. */
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "npu_checked.h"

static size_t element_size(const npu_hal_tensor_desc *t)
{
  return npu_dtype_size(t->dtype);
}

/* ---- copies ------------------------------------------------------------------ */

static void run_copy(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  size_t bytes = cpu_tensor_elements(&k->outputs[0]) * element_size(&k->outputs[0]);
  if (out[0] != in[0])
    memmove(out[0], in[0], bytes);
}

static npu_status create_copy(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (cpu_tensor_elements(&op->inputs[0]) != cpu_tensor_elements(&op->outputs[0]))
    return cpu_unsupported(op, "element counts differ");
  k->run = run_copy;
  return NPU_OK;
}

/* Dropout at inference: the data passes unchanged and the optional mask is
 * all true. Training mode would draw random numbers: refused, unless the
 * ratio is a constant 0, which drops nothing (ONNX: the identity then;
 * torchvision's Swin exports its attention dropout so). */
static void run_dropout(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  run_copy(k, in, out);
  if (k->output_count > 1 && out[1])
    memset(out[1], 1, cpu_tensor_elements(&k->outputs[1]));
}

/* Whether the ratio input is a constant 0 (of any of its float types; -0 too). */
static bool drops_nothing(const npu_hal_op *op)
{
  const void *ratio = op->input_values[1];
  if (op->input_count < 2 || !ratio)
    return false; /* the default ratio is 0.5 */
  switch (op->inputs[1].dtype) {
  case NPU_DTYPE_FLOAT32: return *(const float *)ratio == 0.0f;
  case NPU_DTYPE_FLOAT64: return *(const double *)ratio == 0.0;
  case NPU_DTYPE_FLOAT16: return (*(const uint16_t *)ratio & 0x7fff) == 0;
  default: return false;
  }
}

static npu_status create_dropout(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED) {
    const uint8_t *training = op->input_values[2]; /* (a constant: the schema says so) */
    if (*training && !drops_nothing(op))
      return cpu_unsupported(op, "training mode (random dropout) is not an inference operation");
  }
  k->run = run_dropout;
  return NPU_OK;
}

/* ---- strided copies: Transpose and Slice ------------------------------------------ */

/* The output is contiguous; each of its axes reads the input at a stride.
 * The trailing output axes that are contiguous in the input too are copied
 * as one run; the others are walked as an odometer. When that leaves runs
 * of one element while another axis is contiguous in the input (a
 * transpose of the innermost axis, NHWC <-> NCHW), the two axes are copied
 * in square tiles, so that both sides stay in cache lines. */
typedef struct strided_copy {
  uint32_t rank;                 /* the walked axes, outermost first */
  int64_t dims[NPU_MAX_RANK];
  int64_t strides[NPU_MAX_RANK]; /* input elements from one index to the next */
  int64_t first;                 /* the first input element read */
  size_t esize, run_bytes;
  int32_t tile_axis;             /* >= 0: tiled with the last walked axis */
} strided_copy;

enum { TILE = 16 };

/* The run: trailing axes whose input strides continue it (a Slice's partial
 * axis ends it, the axes outside no longer being contiguous); then whether
 * to tile. `whole[d]`: axis d is read entirely. */
static void plan_strided_copy(strided_copy *c, const bool *whole)
{
  size_t run = 1;
  while (c->rank > 0 && c->strides[c->rank - 1] == (int64_t)run) {
    uint32_t d = --c->rank;
    run *= (size_t)c->dims[d];
    if (!whole[d])
      break;
  }
  c->run_bytes = run * c->esize;
  c->tile_axis = -1;
  for (uint32_t d = 0; run == 1 && d + 1 < c->rank; d++)
    if (c->strides[d] == 1 && c->dims[d] > 1)
      c->tile_axis = (int32_t)d;
}

static void copy_element(uint8_t *to, const uint8_t *from, size_t esize)
{
  switch (esize) {
  case 4: memcpy(to, from, 4); break; /* (fixed sizes: single moves) */
  case 8: memcpy(to, from, 8); break;
  case 2: memcpy(to, from, 2); break;
  case 1: *to = *from; break;
  default: memcpy(to, from, esize); break;
  }
}

/* Axes `a` (input stride 1) and the last, at input offset src and output
 * offset dst, in TILE x TILE blocks: rows [first_row, end_row) of axis a. */
static void copy_tiles(const strided_copy *c, const uint8_t *from, uint8_t *to, int64_t src,
                       int64_t dst, int64_t out_stride_a, int64_t first_row, int64_t end_row)
{
  uint32_t last = c->rank - 1;
  int64_t cols = c->dims[last], col_stride = c->strides[last];
  size_t e = c->esize;
  if (e == 4) { /* 32-bit: each tile read and written a whole line at a time, through L1 */
    const uint32_t *f = (const uint32_t *)from + src;
    uint32_t *t = (uint32_t *)to + dst;
    uint32_t tile[TILE][TILE];
    for (int64_t r0 = first_row; r0 < end_row; r0 += TILE)
      for (int64_t c0 = 0; c0 < cols; c0 += TILE) {
        int64_t nr = r0 + TILE < end_row ? TILE : end_row - r0, nc = c0 + TILE < cols ? TILE : cols - c0;
        for (int64_t q = 0; q < nc; q++)
          memcpy(tile[q], f + r0 + (c0 + q) * col_stride, (size_t)nr * 4);
        for (int64_t r = 0; r < nr; r++)
          for (int64_t q = 0; q < nc; q++)
            t[(r0 + r) * out_stride_a + c0 + q] = tile[q][r];
      }
    return;
  }
  for (int64_t r0 = first_row; r0 < end_row; r0 += TILE)
    for (int64_t c0 = 0; c0 < cols; c0 += TILE) {
      int64_t r1 = r0 + TILE < end_row ? r0 + TILE : end_row, c1 = c0 + TILE < cols ? c0 + TILE : cols;
      for (int64_t r = r0; r < r1; r++)
        for (int64_t q = c0; q < c1; q++)
          copy_element(to + (size_t)(dst + r * out_stride_a + q) * e,
                       from + (size_t)(src + r + q * col_stride) * e, e);
    }
}

/* The odometer's digits of `position` (the tile axis skipped), and the
 * input and output offsets there. */
static void odometer_at(const strided_copy *c, const int64_t *out_strides, uint32_t walked,
                        int64_t position, int64_t *idx, int64_t *src, int64_t *dst)
{
  *src = c->first;
  *dst = 0;
  for (int d = (int)walked - 1; d >= 0; d--) {
    if (d == c->tile_axis)
      continue;
    idx[d] = position % c->dims[d];
    position /= c->dims[d];
    *src += idx[d] * c->strides[d];
    *dst += idx[d] * out_strides[d];
  }
}

/* Tiled copies dealt in bands of `band_rows` rows of the tile axis, so
 * that one pair of tiled axes (a whole 2-D transpose) has work for every
 * thread: items [begin, end) of positions x bands. */
static void copy_tile_bands(const strided_copy *c, const uint8_t *from, uint8_t *to,
                            const int64_t *out_strides, int64_t band_rows, int64_t begin,
                            int64_t end)
{
  int64_t rows = c->dims[c->tile_axis], bands = (rows + band_rows - 1) / band_rows;
  int64_t idx[NPU_MAX_RANK] = {0};
  for (int64_t i = begin; i < end; i++) {
    int64_t src, dst, first_row = i % bands * band_rows;
    odometer_at(c, out_strides, c->rank - 1, i / bands, idx, &src, &dst);
    copy_tiles(c, from, to, src, dst, out_strides[c->tile_axis], first_row,
               first_row + band_rows < rows ? first_row + band_rows : rows);
  }
}

/* Positions [begin, end) of the odometer (each one run), from the input
 * offset and output offset of `begin`. */
static void copy_positions(const strided_copy *c, const uint8_t *from, uint8_t *to,
                           const int64_t *out_strides, int64_t begin, int64_t end)
{
  uint32_t walked = c->rank;
  int64_t idx[NPU_MAX_RANK] = {0}, src, dst;
  odometer_at(c, out_strides, walked, begin, idx, &src, &dst);
  for (int64_t i = begin; i < end; i++) {
    if (to + (size_t)dst * c->esize != from + (size_t)src * c->esize) /* (in place: a whole Slice) */
      memcpy(to + (size_t)dst * c->esize, from + (size_t)src * c->esize, c->run_bytes);
    for (int d = (int)walked - 1; d >= 0; d--) { /* odometer increment */
      src += c->strides[d];
      dst += out_strides[d];
      if (++idx[d] < c->dims[d])
        break;
      src -= c->strides[d] * c->dims[d];
      dst -= out_strides[d] * c->dims[d];
      idx[d] = 0;
    }
  }
}

/* A large copy is dealt to the engine's team in ranges of positions of
 * about STRIDED_COPY_PIECE bytes (one thread moves less than the cores
 * together); a small one stays on the calling thread. */
enum { STRIDED_COPY_PIECE = 32 * 1024, STRIDED_COPY_ALONE_BYTES = 256 * 1024 };

typedef struct strided_copy_job {
  const strided_copy *c;
  const uint8_t *from;
  uint8_t *to;
  const int64_t *out_strides;
  int64_t positions, per_task; /* tiled: positions x bands */
  int64_t band_rows;
} strided_copy_job;

static void strided_copy_task(void *ctx, size_t task)
{
  const strided_copy_job *job = ctx;
  int64_t begin = (int64_t)task * job->per_task;
  int64_t end = begin + job->per_task < job->positions ? begin + job->per_task : job->positions;
  if (job->c->tile_axis >= 0)
    copy_tile_bands(job->c, job->from, job->to, job->out_strides, job->band_rows, begin, end);
  else
    copy_positions(job->c, job->from, job->to, job->out_strides, begin, end);
}

static void run_strided_copy(const npu_hal_kernel *k, const strided_copy *c, const void *in,
                             void *out, size_t bytes)
{
  if (bytes == 0)
    return; /* (an empty axis: nothing to copy) */
  int64_t out_strides[NPU_MAX_RANK], step = (int64_t)(c->run_bytes / c->esize);
  for (uint32_t d = c->rank; d-- > 0;) {
    out_strides[d] = step;
    step *= c->dims[d];
  }
  /* The odometer skips the tiled axes; each of its positions is one run, or
   * one band of rows of a pair of tiled axes (a piece's bytes, in whole
   * tiles). */
  int64_t positions = (int64_t)(bytes / c->run_bytes), band_rows = 0;
  if (c->tile_axis >= 0) {
    int64_t rows = c->dims[c->tile_axis], row_bytes = c->dims[c->rank - 1] * (int64_t)c->esize;
    positions /= rows * c->dims[c->rank - 1];
    band_rows = STRIDED_COPY_PIECE / row_bytes / TILE * TILE;
    band_rows = band_rows > TILE ? band_rows : TILE;
    positions *= (rows + band_rows - 1) / band_rows;
  }
  strided_copy_job job = {c, in, out, out_strides, positions, positions, band_rows};
  if (bytes < STRIDED_COPY_ALONE_BYTES || positions < 2) {
    strided_copy_task(&job, 0);
    return;
  }
  size_t position_bytes = bytes / (size_t)positions;
  job.per_task = (int64_t)(STRIDED_COPY_PIECE / position_bytes) + 1;
  npu_cpu_parallel_for(k->device, (size_t)((positions + job.per_task - 1) / job.per_task),
                       strided_copy_task, &job);
}

static void run_transpose(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const strided_copy *c = k->params;
  run_strided_copy(k, c, in[0], out[0], cpu_tensor_elements(&k->outputs[0]) * c->esize);
}

/* The strides of `t` in its layout (plain or channels-last), and the order
 * of its axes in memory, outermost first. */
static void layout_strides(const npu_hal_tensor_desc *t, int64_t *strides, uint32_t *memory_order)
{
  uint32_t rank = t->rank;
  bool channels_last = t->layout == NPU_HAL_LAYOUT_CHANNELS_LAST;
  for (uint32_t d = 0; d < rank; d++) /* channels-last: N, spatial..., C */
    memory_order[d] = !channels_last || d == 0 ? d : d + 1 < rank ? d + 1 : 1;
  int64_t step = 1;
  for (uint32_t d = rank; d-- > 0;) {
    strides[memory_order[d]] = step;
    step *= t->dims[memory_order[d]];
  }
}

/* Input and output each plain or channels-last (NHWC <-> NCHW next to a
 * convolution in channels-last is then one contiguous copy): the output is
 * walked in its memory order. */
static npu_status create_transpose(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *in = &op->inputs[0], *y = &op->outputs[0];
  if (npu_hal_channel_block(in) > 1 || npu_hal_channel_block(y) > 1)
    return cpu_unsupported(op, "channel blocks");
  strided_copy *c = calloc(1, sizeof *c);
  if (!c)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = c;
  c->rank = in->rank;
  c->esize = element_size(in);
  int64_t strides[NPU_MAX_RANK], unused[NPU_MAX_RANK];
  uint32_t in_order[NPU_MAX_RANK], out_order[NPU_MAX_RANK];
  layout_strides(in, strides, in_order);
  layout_strides(y, unused, out_order);
  bool whole[NPU_MAX_RANK];
  for (uint32_t d = 0; d < c->rank; d++) {
    uint32_t axis = op->axes->axes[out_order[d]];
    c->dims[d] = in->dims[axis];
    c->strides[d] = strides[axis];
    whole[d] = true;
  }
  plan_strided_copy(c, whole);
  k->run = run_transpose;
  return NPU_OK;
}

/* DepthToSpace and SpaceToDepth: a transpose of the input seen as 6-D. The
 * output [N, C', H', W'] is walked as six axes whose input strides place
 * each block's pixels: DepthToSpace's output (n, c, h, i, w, j) reads
 * channel (i * b + j) * C' + c (DCR) or (c * b + i) * b + j (CRD) at (h, w);
 * SpaceToDepth's output (n, i, j, c, h, w) reads channel c at
 * (h * b + i, w * b + j). */
static npu_status create_rearrange_blocks(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *in = &op->inputs[0], *y = &op->outputs[0];
  const npu_hal_attributes *a = &op->attributes;
  int64_t b = a->get_int(a->node, "blocksize", 1); /* (checked: divides the axes) */
  int64_t c = in->dims[1], h = in->dims[2], w = in->dims[3], plane = h * w;
  strided_copy *copy = calloc(1, sizeof *copy);
  if (!copy)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = copy;
  copy->rank = 6;
  copy->esize = element_size(in);
  if (strcmp(op->op_type, "SpaceToDepth") == 0) {
    int64_t dims[6] = {in->dims[0], b, b, c, y->dims[2], y->dims[3]};
    int64_t strides[6] = {c * plane, w, 1, plane, b * w, b};
    memcpy(copy->dims, dims, sizeof dims);
    memcpy(copy->strides, strides, sizeof strides);
  } else {
    bool crd = strcmp(a->get_string(a->node, "mode", "DCR"), "CRD") == 0;
    int64_t out_c = y->dims[1];
    int64_t dims[6] = {in->dims[0], out_c, h, b, w, b};
    int64_t strides[6] = {c * plane, crd ? b * b * plane : plane, w,
                          crd ? b * plane : b * out_c * plane, 1, crd ? plane : out_c * plane};
    memcpy(copy->dims, dims, sizeof dims);
    memcpy(copy->strides, strides, sizeof strides);
  }
  bool whole[6] = {true, true, true, true, true, true};
  plan_strided_copy(copy, whole);
  k->run = run_transpose;
  return NPU_OK;
}

/* ---- Concat and Split: blocks along one axis ---------------------------------------- */

typedef struct axis_params {
  size_t outer;     /* product of dims before the axis */
  size_t inner;     /* product of dims after it, times the element size */
  int64_t axis;
} axis_params;

static npu_status axis_of(const npu_hal_op *op, const npu_hal_tensor_desc *t, axis_params **out)
{
  axis_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  int64_t axis = op->axes->axes[0];
  p->axis = axis;
  p->outer = 1;
  p->inner = element_size(t);
  /* Channels-last along the channels: the channels are the innermost axis,
   * every other axis outer to them. (Channel blocks take the plain loops.) */
  bool innermost = t->layout == NPU_HAL_LAYOUT_CHANNELS_LAST && axis == 1;
  for (int64_t d = 0; d < (int64_t)t->rank; d++) {
    if (d < axis || (innermost && d > axis))
      p->outer *= (size_t)t->dims[d];
    else if (d > axis)
      p->inner *= (size_t)t->dims[d];
  }
  *out = p;
  return NPU_OK;
}

/* Concat and Split move each part's rows (one per index before the axis)
 * between the whole tensor and the part. A large move is dealt to the
 * engine's team in pieces: one thread's memcpy moves less than the cores
 * together can, and the producer's threads left the rows in their own
 * caches. Small ones stay on the calling thread (a team's wake-up would cost
 * more than the copy). */
enum { AXIS_COPY_PIECE = 32 * 1024, AXIS_COPY_ALONE_BYTES = 256 * 1024 };

typedef struct axis_copy {
  axis_params axis;
  size_t whole_row;        /* bytes of one row of the whole tensor */
  size_t total_bytes;
  size_t tasks;            /* pieces over all parts */
  uint32_t count;
  struct axis_part {
    size_t at;             /* where its rows start in the whole's rows */
    size_t bytes;          /* its row's bytes */
    size_t pieces_per_row;
    size_t first_task;
  } parts[];
} axis_copy;

typedef struct axis_copy_job {
  const axis_copy *c;
  uint8_t *whole;
  void *const *parts;
  bool into_whole; /* Concat: parts -> whole; Split: whole -> parts */
} axis_copy_job;

static void copy_piece(const axis_copy_job *job, const struct axis_part *part, uint8_t *part_data,
                       size_t piece_of_part)
{
  size_t row = piece_of_part / part->pieces_per_row;
  size_t offset = (piece_of_part % part->pieces_per_row) * AXIS_COPY_PIECE;
  size_t bytes = part->bytes - offset < AXIS_COPY_PIECE ? part->bytes - offset : AXIS_COPY_PIECE;
  uint8_t *whole = job->whole + row * job->c->whole_row + part->at + offset;
  uint8_t *own = part_data + row * part->bytes + offset;
  if (job->into_whole)
    memcpy(whole, own, bytes);
  else
    memcpy(own, whole, bytes);
}

static void axis_copy_task(void *ctx, size_t task)
{
  const axis_copy_job *job = ctx;
  const axis_copy *c = job->c;
  uint32_t i = 0;
  while (i + 1 < c->count && c->parts[i + 1].first_task <= task)
    i++;
  copy_piece(job, &c->parts[i], job->parts[i], task - c->parts[i].first_task);
}

static void run_axis_copy(const npu_hal_kernel *k, uint8_t *whole, void *const *parts,
                          bool into_whole)
{
  const axis_copy *c = k->params;
  axis_copy_job job = {c, whole, parts, into_whole};
  if (c->total_bytes >= AXIS_COPY_ALONE_BYTES) {
    npu_cpu_parallel_for(k->device, c->tasks, axis_copy_task, &job);
    return;
  }
  for (uint32_t i = 0; i < c->count; i++)
    for (size_t piece = 0; piece < c->parts[i].pieces_per_row * c->axis.outer; piece++)
      copy_piece(&job, &c->parts[i], parts[i], piece);
}

/* `whole` is the concatenated tensor; `parts` its pieces along the axis. */
static npu_status create_axis_copy(const npu_hal_op *op, const npu_hal_tensor_desc *whole,
                                   const npu_hal_tensor_desc *parts, uint32_t count,
                                   npu_hal_kernel *k)
{
  axis_params *axis;
  npu_status status = axis_of(op, whole, &axis);
  if (status != NPU_OK)
    return status;
  axis_copy *c = calloc(1, sizeof *c + count * sizeof c->parts[0]);
  if (!c) {
    free(axis);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  c->axis = *axis;
  free(axis);
  c->count = count;
  c->whole_row = (size_t)whole->dims[c->axis.axis] * c->axis.inner;
  size_t at = 0;
  for (uint32_t i = 0; i < count; i++) {
    struct axis_part *part = &c->parts[i];
    part->at = at;
    part->bytes = (size_t)parts[i].dims[c->axis.axis] * c->axis.inner;
    part->pieces_per_row = (part->bytes + AXIS_COPY_PIECE - 1) / AXIS_COPY_PIECE;
    part->first_task = c->tasks;
    c->tasks += part->pieces_per_row * c->axis.outer;
    c->total_bytes += part->bytes * c->axis.outer;
    at += part->bytes;
  }
  k->params = c;
  return NPU_OK;
}

static void run_concat(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  run_axis_copy(k, out[0], in, true);
}

static npu_status create_concat(const npu_hal_op *op, npu_hal_kernel *k)
{
  k->run = run_concat;
  return create_axis_copy(op, &op->outputs[0], op->inputs, op->input_count, k);
}

static void run_split(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  run_axis_copy(k, in[0], out, false);
}

static npu_status create_split(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->output_count > 8)
    return cpu_unsupported(op, "more than 8 outputs");
  k->run = run_split;
  return create_axis_copy(op, &op->inputs[0], op->outputs, op->output_count, k);
}

/* ---- Slice (steps of any sign) ------------------------------------------------------ */

/* A strided copy: per axis a start, a step of any sign and a count. */
typedef struct slice_params {
  strided_copy copy;
} slice_params;

static void run_slice(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const slice_params *p = k->params;
  run_strided_copy(k, &p->copy, in[0], out[0], cpu_tensor_elements(&k->outputs[0]) * p->copy.esize);
}

static npu_status create_slice(const npu_hal_op *op, npu_hal_kernel *k)
{
  slice_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  const npu_hal_tensor_desc *in = &op->inputs[0];
  const npu_hal_ranges *r = op->ranges;
  strided_copy *c = &p->copy;
  c->rank = in->rank;
  c->esize = element_size(in);
  int64_t in_strides[NPU_MAX_RANK];
  cpu_strides(in, in_strides);
  bool whole[NPU_MAX_RANK];
  for (uint32_t d = 0; d < c->rank; d++) {
    c->dims[d] = npu_strided_count(r->begin[d], r->end[d], r->step[d]);
    if (c->dims[d] != op->outputs[0].dims[d])
      return cpu_unsupported(op, "output shape does not match the slice");
    c->first += r->begin[d] * in_strides[d];
    /* One index only: the step is never taken (and may be huge). */
    c->strides[d] = c->dims[d] > 1 ? r->step[d] * in_strides[d] : in_strides[d];
    whole[d] = c->dims[d] == in->dims[d];
  }
  plan_strided_copy(c, whole);
  k->run = run_slice;
  return NPU_OK;
}

/* ---- Gather ----------------------------------------------------------------------- */

/* Reads int64 or int32 index values. */
static int64_t index_value(const npu_hal_tensor_desc *t, const void *data, size_t i)
{
  return t->dtype == NPU_DTYPE_INT32 ? ((const int32_t *)data)[i] : ((const int64_t *)data)[i];
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

typedef struct gather_params {
  axis_params axis;
  int64_t axis_length;
  size_t index_count;
} gather_params;

static void run_gather(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const gather_params *p = k->params;
  const uint8_t *data = in[0];
  uint8_t *to = out[0];
  size_t in_row = (size_t)p->axis_length * p->axis.inner;
  for (size_t o = 0; o < p->axis.outer; o++)
    for (size_t j = 0; j < p->index_count; j++) {
      int64_t index = index_value(&k->inputs[1], in[1], j);
      if (index < 0)
        index += p->axis_length;
      index = clamp64(index, 0, p->axis_length - 1); /* out of range: clamped, never read past */
      memcpy(to + (o * p->index_count + j) * p->axis.inner,
             data + o * in_row + (size_t)index * p->axis.inner, p->axis.inner);
    }
}

static npu_status create_gather(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->inputs[1].dtype != NPU_DTYPE_INT64 && op->inputs[1].dtype != NPU_DTYPE_INT32)
    return cpu_unsupported(op, "indices must be int32 or int64");
  axis_params *axis;
  npu_status status = axis_of(op, &op->inputs[0], &axis);
  if (status != NPU_OK)
    return status;
  gather_params *p = calloc(1, sizeof *p);
  if (!p) {
    free(axis);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  p->axis = *axis;
  free(axis);
  p->axis_length = op->inputs[0].dims[p->axis.axis];
  p->index_count = cpu_tensor_elements(&op->inputs[1]);
  k->params = p;
  k->run = run_gather;
  return NPU_OK;
}

/* ---- ConstantOfShape ----------------------------------------------------------------- */

static void run_constant_of_shape(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  (void)in;
  size_t esize = element_size(&k->outputs[0]), n = cpu_tensor_elements(&k->outputs[0]);
  for (size_t i = 0; i < n; i++)
    memcpy((uint8_t *)out[0] + i * esize, k->params, esize);
}

static npu_status create_constant_of_shape(const npu_hal_op *op, npu_hal_kernel *k)
{
  /* `value` is a one-element tensor attribute (default float 0). */
  const npu_hal_attributes *a = &op->attributes;
  uint8_t *fill = calloc(1, 8);
  if (!fill)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = fill;
  switch (op->outputs[0].dtype) {
  case NPU_DTYPE_FLOAT32: *(float *)fill = a->get_float(a->node, "value", 0.0f); break;
  case NPU_DTYPE_INT64: *(int64_t *)fill = a->get_int(a->node, "value", 0); break;
  case NPU_DTYPE_INT32: *(int32_t *)fill = (int32_t)a->get_int(a->node, "value", 0); break;
  case NPU_DTYPE_UINT8: case NPU_DTYPE_BOOL: *fill = (uint8_t)a->get_int(a->node, "value", 0); break;
  default: return cpu_unsupported(op, "unsupported element type");
  }
  k->run = run_constant_of_shape;
  return NPU_OK;
}

/* ---- Range ------------------------------------------------------------------------ */

static void run_range(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  size_t n = cpu_tensor_elements(&k->outputs[0]);
  switch (k->outputs[0].dtype) {
  case NPU_DTYPE_FLOAT32: {
    float start = *(const float *)in[0], delta = *(const float *)in[2];
    for (size_t i = 0; i < n; i++)
      ((float *)out[0])[i] = start + (float)i * delta;
    break;
  }
  case NPU_DTYPE_INT32: { /* unsigned steps: i * delta may pass the type's range, the sum not */
    int32_t start = *(const int32_t *)in[0], delta = *(const int32_t *)in[2];
    for (size_t i = 0; i < n; i++)
      ((int32_t *)out[0])[i] = (int32_t)((uint32_t)start + (uint32_t)i * (uint32_t)delta);
    break;
  }
  default: {
    int64_t start = *(const int64_t *)in[0], delta = *(const int64_t *)in[2];
    for (size_t i = 0; i < n; i++)
      ((int64_t *)out[0])[i] = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta);
  }
  }
}

static npu_status create_range(const npu_hal_op *op, npu_hal_kernel *k)
{
  npu_dtype t = op->inputs[0].dtype;
  if (t != NPU_DTYPE_FLOAT32 && t != NPU_DTYPE_INT32 && t != NPU_DTYPE_INT64)
    return cpu_unsupported(op, "float32, int32 or int64 bounds");
  k->run = run_range;
  return NPU_OK;
}

const cpu_kernel_entry cpu_layout_kernels[] = {
    {"Identity", create_copy}, {"Reshape", create_copy}, {"Flatten", create_copy},
    {"Squeeze", create_copy}, {"Unsqueeze", create_copy}, {"Dropout", create_dropout},
    {"Transpose", create_transpose, CPU_LAYOUTS_UNBLOCKED}, {"Concat", create_concat, CPU_LAYOUTS_CHANNEL_AXIS},
    {"Split", create_split, CPU_LAYOUTS_CHANNEL_AXIS},
    {"Slice", create_slice}, {"Gather", create_gather},
    {"ConstantOfShape", create_constant_of_shape}, {"Range", create_range},
    {"DepthToSpace", create_rearrange_blocks}, {"SpaceToDepth", create_rearrange_blocks},
    {NULL, NULL},
};
