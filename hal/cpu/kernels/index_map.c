/* Kernels whose every output element reads input elements found through
 * per-axis index tables, built once per plan: Pad (constant, edge,
 * reflect), Tile, Expand and Where (broadcasting). A table entry is the
 * input offset of that output index on that axis, or OUTSIDE for Pad's
 * constant border. */
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"

#define OUTSIDE INT64_MIN

typedef struct index_tables {
  uint32_t rank;
  int64_t out_dims[NPU_MAX_RANK];
  int64_t *offsets[NPU_MAX_RANK]; /* per axis, out_dims[d] entries, in elements */
} index_tables;

static void free_tables(index_tables *t)
{
  for (uint32_t d = 0; d < t->rank; d++)
    free(t->offsets[d]);
}

/* Tables reading `in` broadcast to `out` (NumPy rules, ranks aligned right). */
static npu_status broadcast_tables(const npu_hal_tensor_desc *in, const npu_hal_tensor_desc *out,
                                   index_tables *t)
{
  int64_t strides[NPU_MAX_RANK];
  cpu_strides(in, strides);
  t->rank = out->rank;
  uint32_t shift = out->rank - in->rank;
  for (uint32_t d = 0; d < out->rank; d++) {
    t->out_dims[d] = out->dims[d];
    t->offsets[d] = malloc(((size_t)out->dims[d] + 1) * sizeof(int64_t));
    if (!t->offsets[d])
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
    int64_t in_dim = d < shift ? 1 : in->dims[d - shift];
    int64_t stride = d < shift ? 0 : strides[d - shift];
    for (int64_t o = 0; o < out->dims[d]; o++)
      t->offsets[d][o] = in_dim == 1 ? 0 : o * stride;
  }
  return NPU_OK;
}

/* Calls visit(ctx, i, offset) for each output element i in order; offset is
 * OUTSIDE when any axis falls outside the input. */
typedef void (*visit_fn)(void *ctx, size_t i, int64_t offset);

static void walk(const index_tables *t, visit_fn visit, void *ctx)
{
  size_t count = 1;
  for (uint32_t d = 0; d < t->rank; d++)
    count *= (size_t)t->out_dims[d];
  int64_t idx[NPU_MAX_RANK] = {0};
  for (size_t i = 0; i < count; i++) {
    int64_t offset = 0;
    for (uint32_t d = 0; d < t->rank && offset != OUTSIDE; d++) {
      int64_t v = t->offsets[d][idx[d]];
      offset = v == OUTSIDE ? OUTSIDE : offset + v;
    }
    visit(ctx, i, offset);
    for (int d = (int)t->rank - 1; d >= 0; d--) {
      if (++idx[d] < t->out_dims[d])
        break;
      idx[d] = 0;
    }
  }
}

/* ---- Pad, Tile, Expand: one input ------------------------------------------------ */

/* Output elements of one row (the last axis) that read consecutive input
 * elements, or the fill value (offset OUTSIDE): copied as one block, so a
 * Pad moves whole rows instead of single elements. */
typedef struct row_run {
  int64_t start, length, offset;
} row_run;

typedef struct gather_params {
  index_tables tables;
  size_t esize;
  uint8_t fill[8]; /* Pad's constant, in the element type */
  bool identity;   /* the output is the input (no pad, no repeat, same shape) */
  row_run *runs;   /* the last axis, in order */
  size_t run_count;
} gather_params;

static void free_gather_params(void *data)
{
  gather_params *p = data;
  if (p) {
    free_tables(&p->tables);
    free(p->runs);
  }
  free(p);
}

static void fill_elements(uint8_t *to, const uint8_t *value, size_t esize, int64_t count)
{
  static const uint8_t zero[8];
  if (memcmp(value, zero, esize) == 0) {
    memset(to, 0, (size_t)count * esize);
    return;
  }
  for (int64_t i = 0; i < count; i++)
    memcpy(to + (size_t)i * esize, value, esize);
}

static void run_gather_tables(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const gather_params *p = k->params;
  const index_tables *t = &p->tables;
  const uint8_t *from = in[0];
  uint8_t *to = out[0];
  size_t e = p->esize;
  if (p->identity) {
    if (to != from)
      memcpy(to, from, cpu_tensor_elements(&k->outputs[0]) * e);
    return;
  }
  uint32_t last = t->rank - 1;
  int64_t row = t->out_dims[last], rows = 1, idx[NPU_MAX_RANK] = {0};
  for (uint32_t d = 0; d < last; d++)
    rows *= t->out_dims[d];
  for (int64_t r = 0; r < rows; r++, to += (size_t)row * e) {
    int64_t base = 0;
    for (uint32_t d = 0; d < last && base != OUTSIDE; d++) {
      int64_t v = t->offsets[d][idx[d]];
      base = v == OUTSIDE ? OUTSIDE : base + v;
    }
    for (size_t i = 0; i < p->run_count; i++) {
      const row_run *run = &p->runs[i];
      if (base == OUTSIDE || run->offset == OUTSIDE)
        fill_elements(to + (size_t)run->start * e, p->fill, e, run->length);
      else
        memcpy(to + (size_t)run->start * e, from + (size_t)(base + run->offset) * e,
               (size_t)run->length * e);
    }
    for (int d = (int)last - 1; d >= 0; d--) {
      if (++idx[d] < t->out_dims[d])
        break;
      idx[d] = 0;
    }
  }
}

/* The runs of the last axis's table, and whether the tables read `in` as it
 * is (every axis whole, in order). */
static npu_status plan_rows(gather_params *p, const npu_hal_tensor_desc *in)
{
  const index_tables *t = &p->tables;
  uint32_t last = t->rank - 1;
  int64_t strides[NPU_MAX_RANK];
  cpu_strides(in, strides);
  p->identity = in->rank == t->rank;
  if (t->rank == 0)
    return NPU_OK; /* a scalar: copied */
  for (uint32_t d = 0; d < t->rank && p->identity; d++) {
    p->identity = t->out_dims[d] == in->dims[d];
    for (int64_t o = 0; o < t->out_dims[d] && p->identity; o++)
      p->identity = t->offsets[d][o] == o * strides[d];
  }
  const int64_t *offsets = t->offsets[last];
  p->runs = malloc(((size_t)t->out_dims[last] + 1) * sizeof *p->runs);
  if (!p->runs)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  for (int64_t o = 0; o < t->out_dims[last]; o++) {
    row_run *run = p->run_count ? &p->runs[p->run_count - 1] : NULL;
    bool continues = run && (run->offset == OUTSIDE
                                 ? offsets[o] == OUTSIDE
                                 : offsets[o] != OUTSIDE && offsets[o] == run->offset + run->length);
    if (continues)
      run->length++;
    else
      p->runs[p->run_count++] = (row_run){o, 1, offsets[o]};
  }
  return NPU_OK;
}

static npu_status new_gather(const npu_hal_op *op, npu_hal_kernel *k, gather_params **out)
{
  size_t esize = npu_dtype_size(op->inputs[0].dtype);
  if (esize == 0 || esize > 8)
    return cpu_unsupported(op, "element type");
  gather_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  p->esize = esize;
  k->params = p;
  k->free_params = free_gather_params;
  k->run = run_gather_tables;
  *out = p;
  return NPU_OK;
}

static npu_status create_expand(const npu_hal_op *op, npu_hal_kernel *k)
{
  gather_params *p = NULL;
  npu_status status = new_gather(op, k, &p);
  if (status == NPU_OK)
    status = broadcast_tables(&op->inputs[0], &op->outputs[0], &p->tables);
  return status == NPU_OK ? plan_rows(p, &op->inputs[0]) : status;
}

static npu_status create_tile(const npu_hal_op *op, npu_hal_kernel *k)
{
  gather_params *p = NULL;
  npu_status status = new_gather(op, k, &p);
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  if (status != NPU_OK)
    return status;
  int64_t strides[NPU_MAX_RANK];
  cpu_strides(x, strides);
  p->tables.rank = y->rank;
  for (uint32_t d = 0; d < y->rank; d++) {
    p->tables.out_dims[d] = y->dims[d];
    p->tables.offsets[d] = malloc(((size_t)y->dims[d] + 1) * sizeof(int64_t));
    if (!p->tables.offsets[d])
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
    for (int64_t o = 0; o < y->dims[d]; o++)
      p->tables.offsets[d][o] = (o % x->dims[d]) * strides[d];
  }
  return plan_rows(p, x);
}

typedef enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_WRAP } pad_mode;

static int64_t pad_source(pad_mode mode, int64_t i, int64_t in)
{
  if (i >= 0 && i < in)
    return i;
  if (mode == PAD_CONSTANT)
    return OUTSIDE;
  if (mode == PAD_WRAP) /* opset 19: the axis repeated, as if on a torus */
    return ((i % in) + in) % in;
  if (mode == PAD_EDGE || in == 1)
    return i < 0 ? 0 : in - 1;
  int64_t period = 2 * (in - 1); /* reflect without repeating the edge */
  i = ((i % period) + period) % period;
  return i < in ? i : period - i;
}

static npu_status create_pad(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const npu_hal_attributes *a = &op->attributes;
  const char *mode_name = a->get_string(a->node, "mode", "constant");
  pad_mode mode = strcmp(mode_name, "edge") == 0      ? PAD_EDGE
                  : strcmp(mode_name, "reflect") == 0 ? PAD_REFLECT
                  : strcmp(mode_name, "wrap") == 0    ? PAD_WRAP
                                                      : PAD_CONSTANT;
  if (mode == PAD_CONSTANT && strcmp(mode_name, "constant") != 0)
    return cpu_unsupported(op, "pad mode");
  gather_params *p = NULL;
  npu_status status = new_gather(op, k, &p);
  if (status != NPU_OK)
    return status;
  if (op->opset >= 11 && op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED) {
    memcpy(p->fill, op->input_values[2], p->esize); /* (a constant: the schema says so) */
  } else if (op->opset < 11 && x->dtype == NPU_DTYPE_FLOAT32) {
    float value = a->get_float(a->node, "value", 0.0f);
    memcpy(p->fill, &value, sizeof value);
  }
  int64_t strides[NPU_MAX_RANK];
  cpu_strides(x, strides);
  p->tables.rank = y->rank;
  for (uint32_t d = 0; d < y->rank; d++) {
    int64_t before = op->ranges->begin[d]; /* what the output adds before the input */
    if (mode != PAD_CONSTANT && x->dims[d] == 0 && y->dims[d] > 0)
      return cpu_unsupported(op, "edge, reflect or wrap padding of an empty axis");
    p->tables.out_dims[d] = y->dims[d];
    p->tables.offsets[d] = malloc(((size_t)y->dims[d] + 1) * sizeof(int64_t));
    if (!p->tables.offsets[d])
      return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
    for (int64_t o = 0; o < y->dims[d]; o++) {
      int64_t source = pad_source(mode, o - before, x->dims[d]);
      p->tables.offsets[d][o] = source == OUTSIDE ? OUTSIDE : source * strides[d];
    }
  }
  return plan_rows(p, x);
}

/* ---- Where: three broadcast inputs ---------------------------------------------------- */

typedef struct where_params {
  index_tables condition, x, y;
  size_t esize;
} where_params;

typedef struct where_job {
  const where_params *p;
  const uint8_t *condition, *x, *y;
  uint8_t *out;
  int64_t *condition_offsets, *x_offsets; /* filled by the first two walks */
} where_job;

static void free_where_params(void *data)
{
  where_params *p = data;
  if (p) {
    free_tables(&p->condition);
    free_tables(&p->x);
    free_tables(&p->y);
  }
  free(p);
}

static void record_offset(void *ctx, size_t i, int64_t offset)
{
  ((int64_t *)ctx)[i] = offset;
}

static void where_element(void *ctx, size_t i, int64_t y_offset)
{
  where_job *job = ctx;
  size_t esize = job->p->esize;
  const uint8_t *from = job->condition[job->condition_offsets[i]]
                            ? job->x + (size_t)job->x_offsets[i] * esize
                            : job->y + (size_t)y_offset * esize;
  memcpy(job->out + i * esize, from, esize);
}

static void run_where(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const where_params *p = k->params;
  size_t count = cpu_tensor_elements(&k->outputs[0]);
  int64_t *scratch = out[k->output_count]; /* the workspace: two offset lists */
  where_job job = {p, in[0], in[1], in[2], out[0], scratch, scratch + count};
  walk(&p->condition, record_offset, job.condition_offsets);
  walk(&p->x, record_offset, job.x_offsets);
  walk(&p->y, where_element, &job);
}

static npu_status create_where(const npu_hal_op *op, npu_hal_kernel *k)
{
  size_t esize = npu_dtype_size(op->inputs[1].dtype);
  if (op->inputs[0].dtype != NPU_DTYPE_BOOL || op->inputs[2].dtype != op->inputs[1].dtype ||
      esize == 0)
    return cpu_unsupported(op, "a bool condition and two inputs of one type");
  where_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = free_where_params;
  p->esize = esize;
  const npu_hal_tensor_desc *y = &op->outputs[0];
  npu_status status = broadcast_tables(&op->inputs[0], y, &p->condition);
  if (status == NPU_OK)
    status = broadcast_tables(&op->inputs[1], y, &p->x);
  if (status == NPU_OK)
    status = broadcast_tables(&op->inputs[2], y, &p->y);
  k->workspace_bytes = 2 * cpu_tensor_elements(y) * sizeof(int64_t);
  k->run = run_where;
  return status;
}

const cpu_kernel_entry cpu_index_map_kernels[] = {
    {"Pad", create_pad},       {"Tile", create_tile}, {"Expand", create_expand},
    {"Where", create_where},   {NULL, NULL},
};
