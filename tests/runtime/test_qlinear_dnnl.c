/* oneDNN's int8 QLinearConv (qlinear_dnnl.c) and QLinearMatMul
 * (qlinear_matmul_dnnl.c) against the exact reference
 * loops (integer_ops.c) on random convolutions: shapes, groups and
 * depthwise, strides, pads, dilations, 1-D to 3-D, per-tensor and
 * per-channel weight scales and zero points, uint8 and int8 activations
 * and outputs, with and without bias. The two agree exactly, except that
 * oneDNN adds y's zero point before rounding half to even (the reference
 * after): an exact tie then rounds one LSB the other way. Weights that do
 * not fit int8 once their zero point is taken out are refused and run by
 * the reference loops. QLinearMatMul of two activations (B at run time,
 * batched and broadcast, uint8 B moved into int8) too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels/dnnl_kernels.h"
#include "cpu/kernels/quant_kernels.h"
#include "npu_internal.h"
#include "npu_test.h"
#include "window.h"

static npu_device *shared_device;

enum { X, X_SCALE, X_ZERO, W, W_SCALE, W_ZERO, Y_SCALE, Y_ZERO, BIAS, INPUTS };

typedef struct conv_case {
  int64_t batch, channels, out_channels, group;
  int spatial;
  int64_t size[3], kernel[3], stride, pad, dilation;
  npu_dtype x_type, w_type, y_type;
  bool per_channel, bias;
  int32_t w_zero; /* per-tensor weight zero point (per-channel ones vary around it) */
} conv_case;

/* The attributes of a QLinearConv node, read through npu_hal_attributes. */
typedef struct conv_attributes {
  int64_t group, strides[3], pads[6], dilations[3];
  size_t spatial;
} conv_attributes;

static int64_t get_int(const void *node, const char *name, int64_t fallback)
{
  const conv_attributes *a = node;
  return strcmp(name, "group") == 0 ? a->group : fallback;
}

static float get_float(const void *node, const char *name, float fallback)
{
  (void)node, (void)name;
  return fallback;
}

static size_t get_ints(const void *node, const char *name, const int64_t **values)
{
  const conv_attributes *a = node;
  *values = strcmp(name, "strides") == 0     ? a->strides
            : strcmp(name, "pads") == 0      ? a->pads
            : strcmp(name, "dilations") == 0 ? a->dilations
                                             : NULL;
  return !*values ? 0 : *values == a->pads ? 2 * a->spatial : a->spatial;
}

static const char *get_string(const void *node, const char *name, const char *fallback)
{
  (void)node, (void)name;
  return fallback;
}

/* A QLinearConv or QLinearMatMul with random values, and the tensors the
 * kernels run on. */
typedef struct qlinear_model {
  conv_attributes attributes;
  npu_hal_tensor_desc inputs[INPUTS], output;
  const void *values[INPUTS];
  void *data[INPUTS];
  npu_hal_window window;
  npu_hal_op op;
} qlinear_model;

static uint32_t rng_state = 17;

static uint32_t next_random(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

static int32_t random_between(int32_t lo, int32_t hi)
{
  return lo + (int32_t)(next_random() % (uint32_t)(hi - lo + 1));
}

static float random_scale(float base)
{
  return base * (0.5f + (float)(next_random() % 1000) / 1000.0f);
}

static void *describe(npu_hal_tensor_desc *d, npu_dtype dtype, uint32_t rank, const int64_t *dims)
{
  *d = (npu_hal_tensor_desc){.dtype = dtype, .rank = rank};
  if (rank) /* (a scalar's dims may be NULL) */
    memcpy(d->dims, dims, rank * sizeof *dims);
  return g_malloc0(cpu_tensor_elements(d) * npu_dtype_size(dtype));
}

static void fill_8bit(npu_hal_tensor_desc *d, void *data, int32_t lo, int32_t hi)
{
  for (size_t i = 0; i < cpu_tensor_elements(d); i++)
    cpu_q_store(data, i, d->dtype, random_between(lo, hi));
}

/* The values of a model whose tensors are described (zero points, bias and
 * scales shaped per channel or per tensor): x and the zero points random,
 * the weights within int8 of their zero points (so that oneDNN takes them;
 * weight i's channel: i / inner % channels), per-channel zero points
 * around `w_zero`, and the op reading them as constants but for x. */
static void fill_model(qlinear_model *m, const char *op_type, int64_t window, size_t inner,
                       int32_t w_zero, bool bias)
{
  npu_dtype x_type = m->inputs[X].dtype, w_type = m->inputs[W].dtype, y_type = m->output.dtype;
  int32_t x_lo, x_hi, w_lo, w_hi, y_lo, y_hi;
  cpu_q_range(x_type, &x_lo, &x_hi);
  cpu_q_range(w_type, &w_lo, &w_hi);
  cpu_q_range(y_type, &y_lo, &y_hi);
  fill_8bit(&m->inputs[X], m->data[X], x_lo, x_hi);
  fill_8bit(&m->inputs[X_ZERO], m->data[X_ZERO], x_lo / 2 + x_hi / 4, x_hi / 2);
  fill_8bit(&m->inputs[Y_ZERO], m->data[Y_ZERO], y_lo / 2, y_hi / 2);
  size_t zeros = cpu_tensor_elements(&m->inputs[W_ZERO]);
  for (size_t i = 0; i < zeros; i++)
    cpu_q_store(m->data[W_ZERO], i, w_type, w_zero + (zeros > 1 ? (int32_t)(i % 3) : 0));
  for (size_t i = 0; i < cpu_tensor_elements(&m->inputs[W]); i++) {
    int32_t zero = cpu_q_load(m->data[W_ZERO], zeros > 1 ? i / inner % zeros : 0, w_type);
    int32_t lo = zero - 128 > w_lo ? zero - 128 : w_lo, hi = zero + 127 < w_hi ? zero + 127 : w_hi;
    cpu_q_store(m->data[W], i, w_type, random_between(lo, hi));
  }
  float *xs = m->data[X_SCALE], *ws = m->data[W_SCALE], *ys = m->data[Y_SCALE];
  *xs = random_scale(0.02f);
  for (size_t i = 0; i < cpu_tensor_elements(&m->inputs[W_SCALE]); i++)
    ws[i] = random_scale(0.005f);
  /* Outputs spread over some 50 steps either side of y's zero point (the
   * sums of `window` products of values some 70 steps from zero), so that
   * both rounding and saturation are tested. */
  *ys = *xs * 0.005f * 70 * 70 * sqrtf((float)window) / 50;
  int32_t *biases = m->data[BIAS];
  for (size_t i = 0; bias && i < cpu_tensor_elements(&m->inputs[BIAS]); i++)
    biases[i] = random_between(-20000, 20000);

  for (int i = 0; i < INPUTS; i++)
    m->values[i] = i == X ? NULL : m->data[i]; /* constants but for x */
  m->op = (npu_hal_op){
      .op_type = op_type,
      .opset = 13,
      .attributes = {&m->attributes, get_int, get_float, get_ints, get_string},
      .input_count = bias ? INPUTS : BIAS,
      .output_count = 1,
      .inputs = m->inputs,
      .outputs = &m->output,
      .input_values = m->values,
  };
}

/* The tensors' parameters: x's and y's per tensor, the weights' and the
 * bias's `channels` of them (or one for the weights: per tensor). */
static void describe_parameters(qlinear_model *m, npu_dtype x_type, npu_dtype w_type,
                                npu_dtype y_type, int64_t channels, bool per_channel, bool bias)
{
  uint32_t params = per_channel ? 1 : 0;
  m->data[X_SCALE] = describe(&m->inputs[X_SCALE], NPU_DTYPE_FLOAT32, 0, NULL);
  m->data[Y_SCALE] = describe(&m->inputs[Y_SCALE], NPU_DTYPE_FLOAT32, 0, NULL);
  m->data[X_ZERO] = describe(&m->inputs[X_ZERO], x_type, 0, NULL);
  m->data[Y_ZERO] = describe(&m->inputs[Y_ZERO], y_type, 0, NULL);
  m->data[W_SCALE] = describe(&m->inputs[W_SCALE], NPU_DTYPE_FLOAT32, params, &channels);
  m->data[W_ZERO] = describe(&m->inputs[W_ZERO], w_type, params, &channels);
  m->data[BIAS] = describe(&m->inputs[BIAS], bias ? NPU_DTYPE_INT32 : NPU_DTYPE_UNDEFINED, 1,
                           &channels);
}

static void make_model(const conv_case *c, qlinear_model *m)
{
  memset(m, 0, sizeof *m);
  int64_t x_dims[5] = {c->batch, c->channels}, w_dims[5] = {c->out_channels,
                                                            c->channels / c->group};
  int64_t y_dims[5] = {c->batch, c->out_channels};
  int64_t window = c->channels / c->group;
  conv_attributes *a = &m->attributes;
  a->group = c->group;
  a->spatial = (size_t)c->spatial;
  for (int d = 0; d < c->spatial; d++) {
    int64_t extent = (c->kernel[d] - 1) * c->dilation + 1;
    x_dims[2 + d] = c->size[d];
    w_dims[2 + d] = c->kernel[d];
    y_dims[2 + d] = (c->size[d] + 2 * c->pad - extent) / c->stride + 1;
    a->strides[d] = c->stride;
    a->dilations[d] = c->dilation;
    a->pads[d] = a->pads[c->spatial + d] = c->pad;
    window *= c->kernel[d];
  }
  uint32_t rank = (uint32_t)c->spatial + 2;
  m->data[X] = describe(&m->inputs[X], c->x_type, rank, x_dims);
  m->data[W] = describe(&m->inputs[W], c->w_type, rank, w_dims);
  describe_parameters(m, c->x_type, c->w_type, c->y_type, c->out_channels, c->per_channel,
                      c->bias);
  g_free(describe(&m->output, c->y_type, rank, y_dims));
  fill_model(m, "QLinearConv", window,
             cpu_tensor_elements(&m->inputs[W]) / (size_t)c->out_channels, c->w_zero, c->bias);
  NPU_ASSERT_OK(npu_window_resolve(&m->op, &m->window, "QLinearConv"));
  m->op.window = &m->window;
}

/* A QLinearMatMul (QLinearMatMulBias with a bias): A [rows..., K] times
 * constant B [K, N]. */
typedef struct matmul_case {
  uint32_t a_rank;
  int64_t a_dims[3], columns;
  npu_dtype a_type, b_type, y_type;
  bool per_column, bias;
  int32_t b_zero;
} matmul_case;

static void make_matmul(const matmul_case *c, qlinear_model *m)
{
  memset(m, 0, sizeof *m);
  int64_t depth = c->a_dims[c->a_rank - 1], b_dims[2] = {depth, c->columns}, y_dims[3];
  memcpy(y_dims, c->a_dims, sizeof y_dims);
  y_dims[c->a_rank - 1] = c->columns;
  m->data[X] = describe(&m->inputs[X], c->a_type, c->a_rank, c->a_dims);
  m->data[W] = describe(&m->inputs[W], c->b_type, 2, b_dims);
  describe_parameters(m, c->a_type, c->b_type, c->y_type, c->columns, c->per_column, c->bias);
  g_free(describe(&m->output, c->y_type, c->a_rank, y_dims));
  fill_model(m, c->bias ? "QLinearMatMulBias" : "QLinearMatMul", depth, 1, c->b_zero, c->bias);
}

static void free_model(qlinear_model *m)
{
  for (int i = 0; i < INPUTS; i++)
    g_free(m->data[i]);
}

/* A kernel of `table`'s entry for the op, made as the CPU backend makes one. */
static npu_status make_kernel(const cpu_kernel_entry *table, npu_hal_device *device,
                              const npu_hal_op *op, npu_hal_kernel **out)
{
  while (strcmp(table->op_type, op->op_type) != 0)
    table++;
  npu_hal_kernel *k = g_malloc0(sizeof *k);
  k->device = device;
  k->input_count = op->input_count;
  k->output_count = 1;
  memcpy(k->inputs, op->inputs, 8 * sizeof k->inputs[0]);
  k->outputs[0] = op->outputs[0];
  npu_status status = table->create(op, k);
  if (status == NPU_OK)
    *out = k;
  else
    npu_cpu_graph_ops.kernel_destroy(k);
  return status;
}

typedef struct kernel_run {
  const npu_hal_kernel *kernel;
  void *const *inputs;
  void *outputs[2];
} kernel_run;

static void run_job(void *data)
{
  kernel_run *run = data;
  run->kernel->run(run->kernel, run->inputs, run->outputs);
}

/* Runs `k` on the model's tensors; its output (caller frees). */
static void *run_kernel(npu_hal_device *device, const npu_hal_kernel *k, qlinear_model *m)
{
  size_t bytes = cpu_tensor_elements(&m->output);
  size_t workspace = npu_cpu_graph_ops.kernel_workspace(k);
  kernel_run run = {k, m->data, {g_malloc0(bytes), aligned_alloc(64, (workspace + 63) / 64 * 64)}};
  npu_cpu_run_on_engine(device, run_job, &run);
  free(run.outputs[1]);
  return run.outputs[0];
}

/* Runs model `m` through `fast_table`'s oneDNN kernel and the reference;
 * returns how many output elements differ (by one LSB at most). `packed`:
 * the kernel packs constant weights (else it reads them at each run). */
static size_t compare_kernels(npu_hal_device *device, qlinear_model *m,
                              const cpu_kernel_entry *fast_table, bool packed)
{
  npu_hal_kernel *fast = NULL, *reference = NULL;
  npu_dtype y_type = m->output.dtype;
  NPU_ASSERT_OK(make_kernel(fast_table, device, &m->op, &fast));
  NPU_ASSERT_OK(make_kernel(cpu_integer_kernels, device, &m->op, &reference));
  g_assert_true(fast->run != reference->run);
  g_assert_true(!packed || fast->run == cpu_dnnl_run);
  g_assert_true(npu_cpu_graph_ops.kernel_packed_inputs(fast) == (packed ? 1u << W : 0));
  void *got = run_kernel(device, fast, m), *want = run_kernel(device, reference, m);
  size_t n = cpu_tensor_elements(&m->output), differ = 0, saturated = 0;
  int32_t lo, hi;
  cpu_q_range(y_type, &lo, &hi);
  for (size_t i = 0; i < n; i++) {
    int32_t a = cpu_q_load(got, i, y_type), b = cpu_q_load(want, i, y_type);
    if (a != b && abs(a - b) > 1)
      g_error("element %zu of %zu: oneDNN %d, reference %d", i, n, a, b);
    differ += a != b;
    saturated += b == lo || b == hi;
  }
  g_assert_cmpuint(saturated, <, n / 2); /* the outputs are not all saturated */
  /* Ties are rare with random scales; without a zero point for y there is
   * no addition to round differently. */
  int32_t y_zero = cpu_q_load(m->data[Y_ZERO], 0, y_type);
  if (y_zero == 0)
    g_assert_cmpuint(differ, ==, 0);
  g_assert_cmpuint(differ, <=, n / 1000 + 1);
  g_free(got);
  g_free(want);
  npu_cpu_graph_ops.kernel_destroy(fast);
  npu_cpu_graph_ops.kernel_destroy(reference);
  return differ;
}

static size_t compare_case(npu_hal_device *device, const conv_case *c)
{
  qlinear_model m;
  make_model(c, &m);
  size_t differ = compare_kernels(device, &m, cpu_qdnnl_kernels, true);
  free_model(&m);
  return differ;
}

static const npu_dtype U8 = NPU_DTYPE_UINT8, S8 = NPU_DTYPE_INT8;

static void test_against_reference(void)
{
  const conv_case cases[] = {
      /* batch, C, M, group, spatial, size, kernel, stride, pad, dilation, types, per channel,
       * bias, w_zero */
      {1, 16, 32, 1, 2, {14, 14}, {3, 3}, 1, 1, 1, U8, S8, U8, true, true, 0},
      {2, 16, 32, 1, 2, {15, 13}, {3, 3}, 2, 1, 1, U8, S8, U8, false, true, 0},
      {1, 32, 32, 32, 2, {16, 16}, {3, 3}, 1, 1, 1, U8, S8, U8, true, true, 0},  /* depthwise */
      {1, 32, 32, 32, 2, {17, 17}, {3, 3}, 2, 1, 1, S8, S8, S8, true, false, 0}, /* depthwise */
      {2, 24, 48, 4, 2, {9, 11}, {3, 3}, 1, 0, 2, U8, S8, S8, true, true, 0},   /* groups */
      {1, 64, 16, 1, 2, {7, 7}, {1, 1}, 1, 0, 1, S8, S8, U8, false, true, 0},   /* pointwise */
      {1, 3, 16, 1, 2, {32, 32}, {7, 7}, 2, 3, 1, U8, S8, U8, true, true, 0},   /* a stem */
      {1, 16, 32, 1, 2, {10, 10}, {3, 3}, 1, 1, 1, U8, U8, U8, false, true, 128}, /* u8 weights */
      {1, 16, 16, 1, 2, {10, 10}, {3, 3}, 1, 1, 1, S8, S8, S8, true, true, 3},  /* w zero points */
      {2, 8, 16, 1, 1, {40}, {5}, 1, 2, 1, U8, S8, U8, true, true, 0},          /* 1-D */
      {1, 8, 16, 1, 3, {6, 7, 8}, {3, 3, 3}, 1, 1, 1, U8, S8, U8, true, false, 0}, /* 3-D */
  };
  size_t differ = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    differ += compare_case(npu_device_hal(shared_device), &cases[i]);
  g_test_message("%zu output elements one LSB apart (ties, y's zero point)", differ);
}

/* uint8 weights that reach 255 with a zero point of 0 do not fit int8: the
 * oneDNN kernel refuses them, and the backend runs the reference loops. */
static void test_refused_weights_fall_back(void)
{
  npu_hal_device *device = npu_device_hal(shared_device);
  conv_case c = {1, 8, 8, 1, 2, {6, 6}, {3, 3}, 1, 1, 1, U8, U8, U8, false, true, 0};
  qlinear_model m;
  make_model(&c, &m);
  ((uint8_t *)m.data[W])[0] = 255;
  npu_hal_kernel *k = NULL;
  NPU_ASSERT_STATUS(make_kernel(cpu_qdnnl_kernels, device, &m.op, &k), NPU_ERROR_NOT_SUPPORTED);
  g_assert_nonnull(strstr(npu_last_error_message(), "int8"));
  NPU_ASSERT_OK(npu_cpu_graph_ops.kernel_create(device, &m.op, &k));
  g_assert_true(k->run != cpu_dnnl_run);
  npu_cpu_graph_ops.kernel_destroy(k);
  /* Weights computed at run time are the reference's too. */
  m.values[W] = NULL;
  NPU_ASSERT_STATUS(make_kernel(cpu_qdnnl_kernels, device, &m.op, &k), NPU_ERROR_NOT_SUPPORTED);
  free_model(&m);
}

/* QLinearMatMul and QLinearMatMulBias on oneDNN's int8 matmul against the
 * reference loops: 2-D and batched A, per-tensor and per-column B, B's zero
 * points, uint8 and int8 on each side. */
static void test_matmul_against_reference(void)
{
  const matmul_case cases[] = {
      /* A rank, A dims, N, types, per column, bias, B zero */
      {2, {4, 64}, 24, U8, S8, U8, true, true, 0},        /* a classifier's fc */
      {2, {2, 2048}, 1000, S8, S8, U8, true, true, 0},     /* ResNet-50's size */
      {3, {2, 7, 48}, 40, U8, S8, U8, true, true, 0},      /* [batch, tokens, K] */
      {3, {1, 5, 32}, 16, S8, S8, S8, false, false, 0},    /* per tensor, no bias */
      {2, {3, 16}, 8, S8, S8, U8, true, false, 2},         /* B's zero points */
      {2, {6, 32}, 12, U8, U8, S8, false, true, 128},      /* uint8 B around 128 */
  };
  size_t differ = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    qlinear_model m;
    make_matmul(&cases[i], &m);
    differ += compare_kernels(npu_device_hal(shared_device), &m, cpu_qmatmul_dnnl_kernels, true);
    free_model(&m);
  }
  g_test_message("%zu output elements one LSB apart (ties, y's zero point)", differ);
}

/* QLinearMatMul of two activations (attention's Q K^T, softmax(..) V): A
 * [.., M, K] times B [.., K, N] computed at run time, batch axes broadcast,
 * every parameter per tensor. */
typedef struct runtime_case {
  uint32_t rank;
  int64_t a_dims[4], b_dims[4];
  npu_dtype a_type, b_type, y_type;
  int32_t b_zero;
} runtime_case;

static void make_runtime_matmul(const runtime_case *c, qlinear_model *m)
{
  memset(m, 0, sizeof *m);
  int64_t y_dims[4];
  for (uint32_t d = 0; d + 2 < c->rank; d++)
    y_dims[d] = c->a_dims[d] > c->b_dims[d] ? c->a_dims[d] : c->b_dims[d];
  y_dims[c->rank - 2] = c->a_dims[c->rank - 2];
  y_dims[c->rank - 1] = c->b_dims[c->rank - 1];
  m->data[X] = describe(&m->inputs[X], c->a_type, c->rank, c->a_dims);
  m->data[W] = describe(&m->inputs[W], c->b_type, c->rank, c->b_dims);
  describe_parameters(m, c->a_type, c->b_type, c->y_type, 1, false, false);
  g_free(describe(&m->output, c->y_type, c->rank, y_dims));
  fill_model(m, "QLinearMatMul", c->a_dims[c->rank - 1], 1, c->b_zero, false);
  m->values[W] = NULL;
}

static void test_runtime_b_against_reference(void)
{
  const runtime_case cases[] = {
      /* rank, A dims, B dims, types, B zero */
      {4, {2, 3, 9, 16}, {2, 3, 16, 9}, U8, U8, U8, 120},    /* Q K^T, uint8 */
      {4, {2, 3, 9, 16}, {1, 3, 16, 11}, U8, U8, S8, 128},   /* B's batch broadcast */
      {3, {4, 10, 24}, {4, 24, 10}, S8, S8, U8, -7},         /* int8 with zero points */
      {3, {3, 12, 12}, {1, 12, 64}, U8, S8, U8, 0},          /* softmax(..) V */
      {2, {5, 32}, {32, 8}, S8, U8, S8, 201},                /* 2-D, uint8 B's zero high */
  };
  size_t differ = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    qlinear_model m;
    make_runtime_matmul(&cases[i], &m);
    differ += compare_kernels(npu_device_hal(shared_device), &m, cpu_qmatmul_dnnl_kernels,
                              false);
    free_model(&m);
  }
  g_test_message("%zu output elements one LSB apart (ties, y's zero point)", differ);
}

/* B computed at run time with parameters per column, or A's parameters per
 * row: the reference loops. */
static void test_matmul_refusals(void)
{
  npu_hal_device *device = npu_device_hal(shared_device);
  matmul_case c = {2, {4, 16}, 8, U8, S8, U8, true, false, 0};
  qlinear_model m;
  make_matmul(&c, &m);
  npu_hal_kernel *k = NULL;
  m.values[W] = NULL;
  NPU_ASSERT_STATUS(make_kernel(cpu_qmatmul_dnnl_kernels, device, &m.op, &k),
                    NPU_ERROR_NOT_SUPPORTED);
  NPU_ASSERT_OK(npu_cpu_graph_ops.kernel_create(device, &m.op, &k));
  g_assert_true(k->run != cpu_dnnl_run);
  npu_cpu_graph_ops.kernel_destroy(k);
  m.values[W] = m.data[W];
  int64_t rows = 4;
  g_free(m.data[X_SCALE]);
  m.data[X_SCALE] = describe(&m.inputs[X_SCALE], NPU_DTYPE_FLOAT32, 1, &rows);
  m.values[X_SCALE] = m.data[X_SCALE];
  NPU_ASSERT_STATUS(make_kernel(cpu_qmatmul_dnnl_kernels, device, &m.op, &k),
                    NPU_ERROR_NOT_SUPPORTED);
  free_model(&m);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  shared_device = npu_test_open_device();
  g_test_add_func("/qlinear_dnnl/against_reference", test_against_reference);
  g_test_add_func("/qlinear_dnnl/refused_weights_fall_back", test_refused_weights_fall_back);
  g_test_add_func("/qlinear_dnnl/matmul_against_reference", test_matmul_against_reference);
  g_test_add_func("/qlinear_dnnl/runtime_b_against_reference", test_runtime_b_against_reference);
  g_test_add_func("/qlinear_dnnl/matmul_refusals", test_matmul_refusals);
  int result = g_test_run();
  NPU_ASSERT_OK(npu_device_release(shared_device));
  return result;
}
