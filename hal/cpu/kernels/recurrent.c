/* Recurrent kernels: ONNX's LSTM, GRU and RNN (float32). The input
 * projection X W^T of every time step is one oneDNN GEMM before the
 * recurrence; then each direction's batch items run their steps in blocks
 * of BLOCK_ITEMS, a parallel task each: the recurrent product h R^T against
 * the transposed weights packed at creation (an i-k-j loop the compiler
 * vectorises), the gates, and the states. Inputs: X, W, R, B,
 * sequence_lens, initial_h (LSTM: initial_c, P); outputs Y, Y_h (LSTM:
 * Y_c), each may be absent. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <oneapi/dnnl/dnnl.h>

#include "activations.h"
#include "cpu_kernels.h"
#include "npu_checked.h"

enum { INPUT_X, INPUT_W, INPUT_R, INPUT_B, INPUT_LENGTHS, INPUT_H0, INPUT_C0, INPUT_P };
enum { OUTPUT_Y, OUTPUT_H, OUTPUT_C };

static bool input_given(const npu_hal_op *op, uint32_t input)
{
  return input < op->input_count && op->inputs[input].dtype != NPU_DTYPE_UNDEFINED;
}

/* An activation of the `activations` attribute: one the fused activations
 * have (hal), or one only recurrent operators name. */
typedef enum gate_function_kind {
  GATE_HAL,
  GATE_THRESHOLDED_RELU, /* x > alpha ? x : 0 */
  GATE_SCALED_TANH,      /* alpha tanh(beta x) */
  GATE_ELU,              /* x >= 0 ? x : alpha (e^x - 1) */
  GATE_SOFTSIGN,         /* x / (1 + |x|) */
  GATE_SOFTPLUS,         /* log(1 + e^x) */
} gate_function_kind;

typedef struct gate_function {
  gate_function_kind kind;
  npu_hal_activation hal; /* kind, alpha, beta (GATE_HAL: all; else alpha and beta) */
} gate_function;

typedef struct gate_function_name {
  const char *name;
  gate_function_kind kind;
  npu_hal_activation_kind hal_kind;
  bool takes_alpha, takes_beta;
  float alpha, beta; /* ONNX's defaults (those of the operators of that name) */
} gate_function_name;

static const gate_function_name gate_function_names[] = {
    {"Sigmoid", GATE_HAL, NPU_HAL_ACTIVATION_SIGMOID, false, false, 0, 0},
    {"Tanh", GATE_HAL, NPU_HAL_ACTIVATION_TANH, false, false, 0, 0},
    {"Relu", GATE_HAL, NPU_HAL_ACTIVATION_RELU, false, false, 0, 0},
    {"LeakyRelu", GATE_HAL, NPU_HAL_ACTIVATION_LEAKY_RELU, true, false, 0.01f, 0},
    {"HardSigmoid", GATE_HAL, NPU_HAL_ACTIVATION_HARD_SIGMOID, true, true, 0.2f, 0.5f},
    {"Affine", GATE_HAL, NPU_HAL_ACTIVATION_LINEAR, true, true, 1.0f, 0.0f},
    {"ThresholdedRelu", GATE_THRESHOLDED_RELU, 0, true, false, 1.0f, 0},
    {"ScaledTanh", GATE_SCALED_TANH, 0, true, true, 1.0f, 1.0f},
    {"Elu", GATE_ELU, 0, true, false, 1.0f, 0},
    {"Softsign", GATE_SOFTSIGN, 0, false, false, 0, 0},
    {"Softplus", GATE_SOFTPLUS, 0, false, false, 0, 0},
};

#define MAX_GATE_FUNCTIONS 3 /* per direction: LSTM's f, g, h */

typedef struct recurrent_params {
  uint32_t gates;            /* 4 (LSTM: i, o, f, c), 3 (GRU: z, r, h), 1 (RNN) */
  size_t seq, batch, input, hidden, directions;
  bool first_reversed;       /* direction "reverse": direction 0 runs backwards */
  bool batch_first;          /* layout 1 */
  bool linear_before_reset;  /* GRU */
  bool input_forget;         /* LSTM: f = 1 - i */
  float clip;                /* of the gates' pre-activations; INFINITY: none */
  gate_function functions[2][MAX_GATE_FUNCTIONS];
  /* Packed at creation, per direction: */
  float *weights;      /* W as given: [directions * gates * hidden, input] */
  float *recurrence;   /* R transposed: [hidden, gates * hidden] per direction */
  float *bias;         /* [gates * hidden]: Wb + Rb (GRU with linear_before_reset: Wb
                          alone on its h gate) */
  float *reset_bias;   /* GRU with linear_before_reset: Rb of the h gate [hidden]; else NULL */
  float *peepholes;    /* LSTM: P [3 * hidden] (i, o, f), or NULL */
  size_t task_floats;  /* each task's scratch in the workspace, after the projection */
} recurrent_params;

static void free_recurrent_params(void *data)
{
  recurrent_params *p = data;
  if (!p)
    return;
  free(p->weights);
  free(p->recurrence);
  free(p->bias);
  free(p->reset_bias);
  free(p->peepholes);
  free(p);
}

/* y[0, n) = f(clip(y)). */
NPU_VECTOR_CLONES
static void apply_gate_function(const gate_function *f, float clip, float *restrict y, size_t n)
{
  if (clip < INFINITY)
    for (size_t i = 0; i < n; i++)
      y[i] = y[i] < -clip ? -clip : y[i] > clip ? clip : y[i];
  float alpha = f->hal.alpha, beta = f->hal.beta;
  switch (f->kind) {
  case GATE_HAL:
    cpu_activate(&f->hal, y, (int64_t)n);
    break;
  case GATE_THRESHOLDED_RELU:
    for (size_t i = 0; i < n; i++) y[i] = y[i] > alpha ? y[i] : 0;
    break;
  case GATE_SCALED_TANH:
    for (size_t i = 0; i < n; i++) y[i] = alpha * cpu_tanhf(beta * y[i]);
    break;
  case GATE_ELU:
    for (size_t i = 0; i < n; i++) y[i] = y[i] >= 0 ? y[i] : alpha * (expf(y[i]) - 1);
    break;
  case GATE_SOFTSIGN:
    for (size_t i = 0; i < n; i++) y[i] = y[i] / (1 + fabsf(y[i]));
    break;
  case GATE_SOFTPLUS:
    for (size_t i = 0; i < n; i++) y[i] = log1pf(expf(y[i]));
    break;
  }
}

/* Batch items a task runs together: each row of R^T, read once a step,
 * serves them all (one task an item read all of R an item: 1.4 times ONNX
 * Runtime's time at batch 8). */
#define BLOCK_ITEMS 4

/* out[i][0, n) += v[i][0, k) M for each of `items` vectors, M's rows
 * `stride` apart: the recurrent product. */
NPU_VECTOR_CLONES
static void add_block_product(float *const *out, const float *const *v, size_t items,
                              const float *restrict m, size_t k, size_t stride, size_t n)
{
  for (size_t p = 0; p < k; p++) {
    const float *restrict row = m + p * stride;
    for (size_t i = 0; i < items; i++) {
      float a = v[i][p];
      float *restrict o = out[i];
      for (size_t j = 0; j < n; j++)
        o[j] += a * row[j];
    }
  }
}

/* One run: what every task reads. */
typedef struct recurrent_job {
  const recurrent_params *p;
  const float *projection; /* X W^T: [seq * batch rows in X's order, directions * G * H] */
  const int32_t *lengths;  /* NULL: every item runs all steps */
  const float *h0, *c0;    /* NULL: zeros */
  float *y, *y_h, *y_c;    /* NULL: not wanted */
  float *scratch;          /* task_floats per task */
} recurrent_job;

/* Offsets of X's row of (t, b), and of a state of (direction, b). */
static size_t x_row(const recurrent_params *p, size_t t, size_t b)
{
  return p->batch_first ? b * p->seq + t : t * p->batch + b;
}

static size_t state_offset(const recurrent_params *p, size_t d, size_t b)
{
  return (p->batch_first ? b * p->directions + d : d * p->batch + b) * p->hidden;
}

static size_t y_offset(const recurrent_params *p, size_t t, size_t d, size_t b)
{
  return (p->batch_first ? (b * p->seq + t) * p->directions + d
                         : (t * p->directions + d) * p->batch + b) * p->hidden;
}

/* LSTM's step on gates [i, o, f, c] (pre-activations less the peepholes). */
static void lstm_step(const recurrent_params *p, const gate_function *fn, const float *peepholes,
                      float *restrict gates, float *restrict h, float *restrict c)
{
  size_t n = p->hidden;
  float *in = gates, *out = gates + n, *forget = gates + 2 * n, *cell = gates + 3 * n;
  if (peepholes)
    for (size_t j = 0; j < n; j++) {
      in[j] += peepholes[j] * c[j];
      forget[j] += peepholes[2 * n + j] * c[j];
    }
  apply_gate_function(&fn[0], p->clip, in, n);
  if (p->input_forget)
    for (size_t j = 0; j < n; j++)
      forget[j] = 1 - in[j];
  else
    apply_gate_function(&fn[0], p->clip, forget, n);
  apply_gate_function(&fn[1], p->clip, cell, n);
  for (size_t j = 0; j < n; j++)
    c[j] = forget[j] * c[j] + in[j] * cell[j];
  if (peepholes)
    for (size_t j = 0; j < n; j++)
      out[j] += peepholes[n + j] * c[j];
  apply_gate_function(&fn[0], p->clip, out, n);
  memcpy(h, c, n * sizeof *h);
  apply_gate_function(&fn[2], INFINITY, h, n); /* (the clip is of the gates) */
  for (size_t j = 0; j < n; j++)
    h[j] *= out[j];
}

/* GRU's step on gates [z, r, h] (input parts with biases; the recurrent
 * products of z and r added), before the h gate's recurrent product: z
 * and r activated, and the vector that product reads (h, or r h formed in
 * place of r, read no more) returned; `recurrent_h` zeroed for it. */
static const float *gru_reset(const recurrent_params *p, const gate_function *fn,
                              float *restrict gates, float *restrict recurrent_h,
                              const float *restrict h)
{
  size_t n = p->hidden;
  float *reset = gates + n;
  apply_gate_function(&fn[0], p->clip, gates, 2 * n); /* z and r */
  memset(recurrent_h, 0, n * sizeof *recurrent_h);
  if (p->linear_before_reset)
    return h;
  for (size_t j = 0; j < n; j++)
    reset[j] *= h[j];
  return reset;
}

/* ...and after it (`recurrent_h`: h R_h^T, or (r h) R_h^T): the new h. */
static void gru_update(const recurrent_params *p, const gate_function *fn,
                       const float *reset_bias, float *restrict gates,
                       const float *restrict recurrent_h, float *restrict h)
{
  size_t n = p->hidden;
  float *update = gates, *reset = gates + n, *candidate = gates + 2 * n;
  if (p->linear_before_reset) /* r (h R_h^T + Rb_h) */
    for (size_t j = 0; j < n; j++)
      candidate[j] += reset[j] * (recurrent_h[j] + reset_bias[j]);
  else
    for (size_t j = 0; j < n; j++)
      candidate[j] += recurrent_h[j];
  apply_gate_function(&fn[1], p->clip, candidate, n);
  for (size_t j = 0; j < n; j++)
    h[j] = (1 - update[j]) * candidate[j] + update[j] * h[j];
}

/* One batch item of a task: its scratch and where it is in its sequence. */
typedef struct item_state {
  size_t b, length;
  float *gates, *extra, *h, *c;
} item_state;

/* An item's outputs past its end (zeros) and its last states. */
static void finish_item(const recurrent_job *job, size_t d, item_state *it)
{
  const recurrent_params *p = job->p;
  size_t n = p->hidden, state = state_offset(p, d, it->b);
  for (size_t t = it->length; job->y && t < p->seq; t++)
    memset(job->y + y_offset(p, t, d, it->b), 0, n * sizeof *it->h);
  if (!it->length) { /* an empty item's last states are zeros, as ONNX Runtime gives */
    memset(it->h, 0, n * sizeof *it->h);
    memset(it->c, 0, n * sizeof *it->c);
  }
  if (job->y_h)
    memcpy(job->y_h + state, it->h, n * sizeof *it->h);
  if (job->y_c)
    memcpy(job->y_c + state, it->c, n * sizeof *it->c);
}

/* Task (direction, block of batch items): all their steps, then their last
 * states. Items of different lengths: at step s, those with s < length. */
static void run_block(void *ctx, size_t task)
{
  const recurrent_job *job = ctx;
  const recurrent_params *p = job->p;
  size_t blocks = (p->batch + BLOCK_ITEMS - 1) / BLOCK_ITEMS;
  size_t d = task / blocks, first = task % blocks * BLOCK_ITEMS;
  size_t count = p->batch - first < BLOCK_ITEMS ? p->batch - first : BLOCK_ITEMS;
  size_t n = p->hidden, width = p->gates * n, longest = 0;
  bool reversed = d == 1 || p->first_reversed;
  const float *recurrence = p->recurrence + d * n * width, *bias = p->bias + d * width;
  const gate_function *fn = p->functions[d];
  item_state items[BLOCK_ITEMS];
  for (size_t i = 0; i < count; i++) {
    item_state *it = &items[i];
    it->b = first + i;
    it->length = job->lengths ? (size_t)job->lengths[it->b] : p->seq;
    it->gates = job->scratch + (d * p->batch + it->b) * p->task_floats;
    it->extra = it->gates + width;
    it->h = it->extra + n;
    it->c = it->h + n;
    size_t state = state_offset(p, d, it->b);
    if (job->h0)
      memcpy(it->h, job->h0 + state, n * sizeof *it->h);
    else
      memset(it->h, 0, n * sizeof *it->h);
    if (job->c0)
      memcpy(it->c, job->c0 + state, n * sizeof *it->c);
    else
      memset(it->c, 0, n * sizeof *it->c);
    longest = it->length > longest ? it->length : longest;
  }
  for (size_t s = 0; s < longest; s++) {
    float *out[BLOCK_ITEMS];
    const float *in[BLOCK_ITEMS];
    item_state *active[BLOCK_ITEMS];
    size_t live = 0;
    for (size_t i = 0; i < count; i++) {
      item_state *it = &items[i];
      if (s >= it->length)
        continue;
      size_t t = reversed ? it->length - 1 - s : s;
      const float *projected =
          job->projection + x_row(p, t, it->b) * p->directions * width + d * width;
      for (size_t j = 0; j < width; j++)
        it->gates[j] = projected[j] + bias[j];
      active[live] = it;
      out[live] = it->gates;
      in[live++] = it->h;
    }
    /* GRU's h gate takes its recurrent part after the reset gate. */
    add_block_product(out, in, live, recurrence, n, width, p->gates == 3 ? 2 * n : width);
    if (p->gates == 3) {
      for (size_t i = 0; i < live; i++) {
        in[i] = gru_reset(p, fn, active[i]->gates, active[i]->extra, active[i]->h);
        out[i] = active[i]->extra;
      }
      add_block_product(out, in, live, recurrence + 2 * n, n, width, n);
    }
    for (size_t i = 0; i < live; i++) {
      item_state *it = active[i];
      if (p->gates == 4)
        lstm_step(p, fn, p->peepholes ? p->peepholes + d * 3 * n : NULL, it->gates, it->h,
                  it->c);
      else if (p->gates == 3)
        gru_update(p, fn, p->reset_bias ? p->reset_bias + d * n : NULL, it->gates, it->extra,
                   it->h);
      else {
        apply_gate_function(&fn[0], p->clip, it->gates, n);
        memcpy(it->h, it->gates, n * sizeof *it->h);
      }
      if (job->y)
        memcpy(job->y + y_offset(p, reversed ? it->length - 1 - s : s, d, it->b), it->h,
               n * sizeof *it->h);
    }
  }
  for (size_t i = 0; i < count; i++)
    finish_item(job, d, &items[i]);
}

static void run_recurrent(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const recurrent_params *p = k->params;
  size_t width = p->directions * p->gates * p->hidden, rows = p->seq * p->batch;
  float *projection = out[k->output_count];
  const int32_t *lengths = k->input_count > INPUT_LENGTHS ? in[INPUT_LENGTHS] : NULL;
  for (size_t b = 0; lengths && b < p->batch; b++)
    if (lengths[b] < 0 || (size_t)lengths[b] > p->seq) {
      cpu_kernel_fail(k, NPU_ERROR_INVALID_ARGUMENT, "sequence_lens[%zu] = %d is outside "
                      "[0, %zu]", b, lengths[b], p->seq);
      return;
    }
  if (rows && width) {
    dnnl_status_t s = p->input ? dnnl_sgemm('N', 'T', (dnnl_dim_t)rows, (dnnl_dim_t)width,
                                             (dnnl_dim_t)p->input, 1.0f, in[INPUT_X],
                                             (dnnl_dim_t)p->input, p->weights,
                                             (dnnl_dim_t)p->input, 0.0f, projection,
                                             (dnnl_dim_t)width)
                               : dnnl_success;
    if (!p->input)
      memset(projection, 0, rows * width * sizeof *projection);
    if (s != dnnl_success) {
      cpu_kernel_fail(k, NPU_ERROR_INTERNAL, "oneDNN's GEMM of the input projection failed "
                      "(status %d)", (int)s);
      return;
    }
  }
  recurrent_job job = {
      p,
      projection,
      lengths,
      k->input_count > INPUT_H0 ? in[INPUT_H0] : NULL,
      k->input_count > INPUT_C0 ? in[INPUT_C0] : NULL,
      k->output_count > OUTPUT_Y ? out[OUTPUT_Y] : NULL,
      k->output_count > OUTPUT_H ? out[OUTPUT_H] : NULL,
      k->output_count > OUTPUT_C ? out[OUTPUT_C] : NULL,
      projection + rows * width,
  };
  npu_cpu_parallel_for(k->device, p->directions * ((p->batch + BLOCK_ITEMS - 1) / BLOCK_ITEMS),
                       run_block, &job);
}

/* The `activations` attribute (else the operator's defaults), each with its
 * alpha and beta: those that take one consume activation_alpha (and _beta)
 * in order, as ONNX Runtime reads them, else have ONNX's default. */
static npu_status read_gate_functions(const npu_hal_op *op, recurrent_params *p)
{
  static const char *const defaults[][MAX_GATE_FUNCTIONS] = {
      [1] = {"Tanh"}, [3] = {"Sigmoid", "Tanh"}, [4] = {"Sigmoid", "Tanh", "Tanh"}};
  const npu_hal_attributes *a = &op->attributes;
  const float *alphas, *betas;
  size_t alpha_count = a->get_floats(a->node, "activation_alpha", &alphas), next_alpha = 0;
  size_t beta_count = a->get_floats(a->node, "activation_beta", &betas), next_beta = 0;
  size_t per_direction = p->gates == 1 ? 1 : p->gates - 1;
  bool given = a->get_string_count(a->node, "activations") > 0; /* (its count: checked) */
  for (size_t d = 0; d < p->directions; d++)
    for (size_t f = 0; f < per_direction; f++) {
      const char *fallback = defaults[p->gates][f];
      const char *name = given ? a->get_string_at(a->node, "activations",
                                                  d * per_direction + f, fallback)
                               : fallback;
      const gate_function_name *known = NULL;
      for (size_t i = 0; i < sizeof gate_function_names / sizeof gate_function_names[0]; i++)
        if (strcasecmp(name, gate_function_names[i].name) == 0)
          known = &gate_function_names[i];
      if (!known)
        return npu_set_error(NPU_ERROR_INVALID_MODEL, "CPU backend: %s: activation '%s' is "
                             "none of ONNX's recurrent activations", op->op_type, name);
      gate_function *g = &p->functions[d][f];
      g->kind = known->kind;
      g->hal = (npu_hal_activation){known->hal_kind, known->alpha, known->beta, 0};
      if (known->takes_alpha && next_alpha < alpha_count)
        g->hal.alpha = alphas[next_alpha++];
      if (known->takes_beta && next_beta < beta_count)
        g->hal.beta = betas[next_beta++];
    }
  return NPU_OK;
}

/* W, R, B and P packed (see recurrent_params). */
static npu_status pack_weights(const npu_hal_op *op, recurrent_params *p)
{
  size_t n = p->hidden, width = p->gates * n, nd = p->directions;
  const float *w = op->input_values[INPUT_W], *r = op->input_values[INPUT_R];
  const float *b = input_given(op, INPUT_B) ? op->input_values[INPUT_B] : NULL;
  const float *peepholes = input_given(op, INPUT_P) ? op->input_values[INPUT_P] : NULL;
  bool reset_bias = p->gates == 3 && p->linear_before_reset;
  p->weights = malloc((nd * width * p->input + 1) * sizeof *p->weights);
  p->recurrence = malloc((nd * n * width + 1) * sizeof *p->recurrence);
  p->bias = calloc(nd * width, sizeof *p->bias);
  p->reset_bias = reset_bias ? calloc(nd * n, sizeof *p->reset_bias) : NULL;
  p->peepholes = peepholes ? malloc(nd * 3 * n * sizeof *p->peepholes) : NULL;
  if (!p->weights || !p->recurrence || !p->bias || (reset_bias && !p->reset_bias) ||
      (peepholes && !p->peepholes))
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory packing recurrent weights");
  memcpy(p->weights, w, nd * width * p->input * sizeof *w);
  for (size_t d = 0; d < nd; d++) {
    const float *rd = r + d * width * n;
    float *packed = p->recurrence + d * n * width;
    for (size_t j = 0; j < width; j++)
      for (size_t k = 0; k < n; k++)
        packed[k * width + j] = rd[j * n + k];
    for (size_t j = 0; b && j < width; j++) {
      float input_bias = b[d * 2 * width + j], recurrent_bias = b[d * 2 * width + width + j];
      bool apart = reset_bias && j >= 2 * n;
      p->bias[d * width + j] = input_bias + (apart ? 0 : recurrent_bias);
      if (apart)
        p->reset_bias[d * n + j - 2 * n] = recurrent_bias;
    }
  }
  if (peepholes)
    memcpy(p->peepholes, peepholes, nd * 3 * n * sizeof *peepholes);
  return NPU_OK;
}

static npu_status create_recurrent(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_attributes *a = &op->attributes;
  const npu_hal_tensor_desc *x = &op->inputs[INPUT_X];
  if (x->dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "float32 only");
  for (uint32_t i = INPUT_W; i < op->input_count; i++)
    if ((i <= INPUT_B || i == INPUT_P) && input_given(op, i) && !op->input_values[i])
      return cpu_unsupported(op, "the weights W, R, B and P must be constants (they are "
                                 "packed when the kernel is made)");
  recurrent_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = free_recurrent_params;
  const char *direction = a->get_string(a->node, "direction", "forward");
  p->gates = strcmp(op->op_type, "LSTM") == 0 ? 4 : strcmp(op->op_type, "GRU") == 0 ? 3 : 1;
  p->batch_first = a->get_int(a->node, "layout", 0) == 1;
  p->seq = (size_t)x->dims[p->batch_first ? 1 : 0];
  p->batch = (size_t)x->dims[p->batch_first ? 0 : 1];
  p->input = (size_t)x->dims[2];
  p->directions = (size_t)op->inputs[INPUT_W].dims[0];
  p->hidden = (size_t)op->inputs[INPUT_R].dims[2];
  p->first_reversed = strcmp(direction, "reverse") == 0;
  p->linear_before_reset = p->gates == 3 && a->get_int(a->node, "linear_before_reset", 0);
  p->input_forget = p->gates == 4 && a->get_int(a->node, "input_forget", 0);
  p->clip = a->get_float(a->node, "clip", INFINITY);
  npu_status status = read_gate_functions(op, p);
  if (status == NPU_OK)
    status = pack_weights(op, p);
  if (status != NPU_OK)
    return status;
  size_t width = p->directions * p->gates * p->hidden;
  p->task_floats = p->gates * p->hidden + 3 * p->hidden; /* gates, GRU's scratch, h, c */
  /* (X of no input features bounds neither seq nor batch: the sizes are checked) */
  size_t rows, projection, tasks, scratch;
  if (!npu_mul_size(p->seq, p->batch, &rows) || !npu_mul_size(rows, width, &projection) ||
      !npu_mul_size(p->directions, p->batch, &tasks) ||
      !npu_mul_size(tasks, p->task_floats, &scratch) ||
      !npu_add_size(projection, scratch, &projection) ||
      !npu_mul_size(projection, sizeof(float), &k->workspace_bytes))
    return cpu_unsupported(op, "its workspace's size overflows");
  for (uint32_t i = INPUT_W; i < op->input_count; i++)
    if (i <= INPUT_B || i == INPUT_P)
      k->packed_inputs |= 1u << i;
  k->run = run_recurrent;
  return NPU_OK;
}

const cpu_kernel_entry cpu_recurrent_kernels[] = {
    {"LSTM", create_recurrent},
    {"GRU", create_recurrent},
    {"RNN", create_recurrent},
    {NULL, NULL},
};
