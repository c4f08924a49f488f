/* Elementwise kernels: unary activations and trigonometry, binary
 * arithmetic, comparisons, logic and shifts with NumPy broadcasting (and
 * the variadic Sum, Mean, Max, Min as a chain of them), Clip, Mod, Not,
 * IsInf, IsNaN, Cast. The innermost dimension is a
 * plain loop (contiguous or broadcast scalar) that the compiler vectorises;
 * outer rows are spread over the worker pool. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "fast_math.h"
#include "npu_half.h"
#include "npu_checked.h"

/* ---- unary ----------------------------------------------------------------- */

typedef enum {
  U_RELU, U_SIGMOID, U_TANH, U_EXP, U_LOG, U_SQRT, U_ABS, U_NEG, U_RECIPROCAL, U_FLOOR, U_CEIL,
  U_ERF, U_HARD_SIGMOID, U_HARD_SWISH, U_LEAKY_RELU, U_CLIP, U_ELU, U_SELU, U_CELU, U_SOFTPLUS,
  U_SOFTSIGN, U_SIGN, U_THRESHOLDED_RELU, U_MISH, U_ROUND, U_GELU, U_GELU_TANH, U_SIN, U_COS,
  U_TAN, U_ASIN, U_ACOS, U_ATAN, U_SINH, U_COSH, U_ASINH, U_ACOSH, U_ATANH, U_SHRINK,
} unary_kind;

typedef struct unary_params {
  unary_kind kind;
  float alpha, beta; /* LeakyRelu, Elu, Celu, ThresholdedRelu alpha; HardSigmoid alpha,
                        beta; Selu alpha, gamma; Clip min, max; Shrink lambd, bias */
  size_t count;
} unary_params;

#define CHUNK 16384

typedef struct unary_job {
  const unary_params *p;
  const float *in;
  float *out;
} unary_job;

/* One loop per kind, so each is vectorised on its own. */
#define UNARY_LOOP(EXPR)                                                                    \
  for (size_t i = begin; i < end; i++) {                                                    \
    float x = in[i];                                                                        \
    out[i] = (EXPR);                                                                        \
  }                                                                                         \
  break

NPU_VECTOR_CLONES
static void unary_range(const unary_params *p, const float *restrict in, float *restrict out,
                        size_t begin, size_t end)
{
  const float alpha = p->alpha, beta = p->beta;
  switch (p->kind) {
  case U_RELU: UNARY_LOOP(x > 0 ? x : 0);
  case U_SIGMOID: UNARY_LOOP(1.0f / (1.0f + cpu_expf(-x)));
  case U_TANH: UNARY_LOOP(cpu_tanhf(x));
  case U_EXP: UNARY_LOOP(expf(x));
  case U_LOG: UNARY_LOOP(logf(x));
  case U_SQRT: UNARY_LOOP(sqrtf(x));
  case U_ABS: UNARY_LOOP(fabsf(x));
  case U_NEG: UNARY_LOOP(-x);
  case U_RECIPROCAL: UNARY_LOOP(1.0f / x);
  case U_FLOOR: UNARY_LOOP(floorf(x));
  case U_CEIL: UNARY_LOOP(ceilf(x));
  case U_ERF: UNARY_LOOP(cpu_erff(x));
  case U_HARD_SIGMOID: UNARY_LOOP(fmaxf(0.0f, fminf(1.0f, alpha * x + beta)));
  case U_HARD_SWISH: UNARY_LOOP(x * fmaxf(0.0f, fminf(1.0f, x * (1.0f / 6.0f) + 0.5f)));
  case U_LEAKY_RELU: UNARY_LOOP(x >= 0 ? x : alpha * x);
  case U_CLIP: UNARY_LOOP(fminf(fmaxf(x, alpha), beta));
  case U_ELU: UNARY_LOOP(x >= 0 ? x : alpha * (cpu_expf(x) - 1.0f));
  case U_SELU: UNARY_LOOP(beta * (x > 0 ? x : alpha * (cpu_expf(x) - 1.0f)));
  case U_CELU: UNARY_LOOP(fmaxf(0.0f, x) + fminf(0.0f, alpha * (cpu_expf(x / alpha) - 1.0f)));
  case U_SOFTPLUS: UNARY_LOOP(x > 20.0f ? x : log1pf(expf(x)));
  case U_SOFTSIGN: UNARY_LOOP(x / (1.0f + fabsf(x)));
  case U_SIGN: UNARY_LOOP(x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f);
  case U_THRESHOLDED_RELU: UNARY_LOOP(x > alpha ? x : 0.0f);
  case U_MISH: UNARY_LOOP(cpu_mish(x));
  case U_ROUND: UNARY_LOOP(rintf(x)); /* half to even, as ONNX rounds */
  case U_GELU: UNARY_LOOP(x * 0.5f * (1.0f + cpu_erff(x * 0.70710678f)));
  case U_GELU_TANH: UNARY_LOOP(cpu_gelu_tanh(x));
  case U_SIN: UNARY_LOOP(sinf(x));
  case U_COS: UNARY_LOOP(cosf(x));
  case U_TAN: UNARY_LOOP(tanf(x));
  case U_ASIN: UNARY_LOOP(asinf(x));
  case U_ACOS: UNARY_LOOP(acosf(x));
  case U_ATAN: UNARY_LOOP(atanf(x));
  case U_SINH: UNARY_LOOP(sinhf(x));
  case U_COSH: UNARY_LOOP(coshf(x));
  case U_ASINH: UNARY_LOOP(asinhf(x));
  case U_ACOSH: UNARY_LOOP(acoshf(x));
  case U_ATANH: UNARY_LOOP(atanhf(x));
  case U_SHRINK: UNARY_LOOP(x < -alpha ? x + beta : x > alpha ? x - beta : 0.0f);
  }
}

static void unary_chunk(void *ctx, size_t index)
{
  const unary_job *job = ctx;
  const unary_params *p = job->p;
  size_t begin = index * CHUNK, end = begin + CHUNK < p->count ? begin + CHUNK : p->count;
  unary_range(p, job->in, job->out, begin, end);
}

static void run_unary(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const unary_params *p = k->params;
  unary_job job = {p, in[0], out[0]};
  npu_cpu_parallel_for(k->device, (p->count + CHUNK - 1) / CHUNK, unary_chunk, &job);
}

static const struct {
  const char *name;
  unary_kind kind;
} unary_ops[] = {
    {"Relu", U_RELU}, {"Sigmoid", U_SIGMOID}, {"Tanh", U_TANH}, {"Exp", U_EXP},
    {"Log", U_LOG}, {"Sqrt", U_SQRT}, {"Abs", U_ABS}, {"Neg", U_NEG},
    {"Reciprocal", U_RECIPROCAL}, {"Floor", U_FLOOR}, {"Ceil", U_CEIL}, {"Erf", U_ERF},
    {"HardSigmoid", U_HARD_SIGMOID}, {"HardSwish", U_HARD_SWISH},
    {"LeakyRelu", U_LEAKY_RELU}, {"Clip", U_CLIP}, {"Elu", U_ELU}, {"Selu", U_SELU},
    {"Celu", U_CELU}, {"Softplus", U_SOFTPLUS}, {"Softsign", U_SOFTSIGN}, {"Sign", U_SIGN},
    {"ThresholdedRelu", U_THRESHOLDED_RELU}, {"Mish", U_MISH}, {"Round", U_ROUND}, {"Gelu", U_GELU},
    {"Sin", U_SIN}, {"Cos", U_COS}, {"Tan", U_TAN}, {"Asin", U_ASIN}, {"Acos", U_ACOS},
    {"Atan", U_ATAN}, {"Sinh", U_SINH}, {"Cosh", U_COSH}, {"Asinh", U_ASINH},
    {"Acosh", U_ACOSH}, {"Atanh", U_ATANH}, {"Shrink", U_SHRINK},
};

static npu_status create_unary(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->inputs[0].dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "only float32 inputs");
  unary_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
    if (strcmp(unary_ops[i].name, op->op_type) == 0)
      p->kind = unary_ops[i].kind;
  const npu_hal_attributes *a = &op->attributes;
  p->count = cpu_tensor_elements(&op->outputs[0]);
  switch (p->kind) {
  case U_GELU: /* (op_schema.c checked the attribute) */
    if (strcmp(a->get_string(a->node, "approximate", "none"), "tanh") == 0)
      p->kind = U_GELU_TANH;
    break;
  case U_LEAKY_RELU:
    p->alpha = a->get_float(a->node, "alpha", 0.01f);
    break;
  case U_ELU:
  case U_CELU:
  case U_THRESHOLDED_RELU:
    p->alpha = a->get_float(a->node, "alpha", 1.0f);
    break;
  case U_SELU:
    p->alpha = a->get_float(a->node, "alpha", 1.67326319217681884765625f);
    p->beta = a->get_float(a->node, "gamma", 1.05070102214813232421875f);
    break;
  case U_HARD_SIGMOID:
    p->alpha = a->get_float(a->node, "alpha", 0.2f);
    p->beta = a->get_float(a->node, "beta", 0.5f);
    break;
  case U_SHRINK:
    p->alpha = a->get_float(a->node, "lambd", 0.5f);
    p->beta = a->get_float(a->node, "bias", 0.0f);
    break;
  case U_CLIP:
    /* Bounds are attributes before opset 11, optional constant inputs after. */
    p->alpha = op->opset < 11 ? a->get_float(a->node, "min", -INFINITY) : -INFINITY;
    p->beta = op->opset < 11 ? a->get_float(a->node, "max", INFINITY) : INFINITY;
    for (uint32_t i = 1; i < op->input_count && i < 3; i++) {
      if (op->inputs[i].dtype == NPU_DTYPE_UNDEFINED)
        continue;
      float bound = *(const float *)op->input_values[i];
      if (i == 1)
        p->alpha = bound;
      else
        p->beta = bound;
    }
    break;
  default:
    break;
  }
  k->run = run_unary;
  return NPU_OK;
}

/* ---- binary with broadcasting -------------------------------------------------- */

typedef enum {
  B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAX, B_MIN, B_EQUAL, B_LESS, B_GREATER, B_LESS_EQUAL,
  B_GREATER_EQUAL, B_PRELU,
  B_MOD,  /* Mod: the remainder takes the divisor's sign (Python's %) */
  B_FMOD, /* Mod with fmod = 1: the dividend's (C's fmod and %) */
  B_AND, B_OR, B_XOR, B_SHIFT_LEFT, B_SHIFT_RIGHT,
} binary_kind;

typedef struct binary_params {
  binary_kind kind;
  npu_dtype dtype;                 /* of the inputs */
  uint32_t rank;                   /* of the output */
  int64_t dims[NPU_MAX_RANK];
  int64_t a_strides[NPU_MAX_RANK]; /* 0 where broadcast */
  int64_t b_strides[NPU_MAX_RANK];
  int64_t rows;                    /* output elements / last dimension */
  int64_t rows_per_task;           /* > 1: short rows, grouped */
  int64_t pieces_per_row;          /* else: long rows, split in CHUNKs */
  size_t tasks;
  /* 1 or 2: Mul or Add of float32 rows of one channel block's 16 lanes
   * against input 1's or 2's 16 lanes, which stay put along the middle
   * axis (squeeze-and-excitation's channel scale, a per-channel bias):
   * see block_lane_rows */
  uint32_t lane_operand;
  int64_t lane_operand_stride;     /* of that input along the outer axis */
} binary_params;

/* Rows [first, last) from cursor c; the operation's switch stays outside.
 * z may be x or y itself (the output in an input's memory: in_place_inputs),
 * so none of them is restrict. Each element is read before the same one is
 * written and no other, so no iteration depends on another: IVDEP lets the
 * compiler vectorise without the overlap check, which fails on such aliasing
 * and runs the scalar loop. */
#if defined(__GNUC__) && !defined(__clang__)
#define IVDEP _Pragma("GCC ivdep")
#else
#define IVDEP /* (clang, the fuzzing build's compiler, has no such hint that does not warn
                 where a loop, Pow's, cannot vectorise) */
#endif
#define BINARY_LOOP(T, OUT_T, EXPR)                                                         \
  for (int64_t row = first; row < last; row++, cursor_next(p, &c)) {                        \
    const T *x = (const T *)a + c.a_off;                                                    \
    const T *y = (const T *)b + c.b_off;                                                    \
    OUT_T *z = (OUT_T *)out + row * inner;                                                  \
    if (sa == 1 && sb == 1)                                                                 \
      IVDEP for (int64_t i = lo; i < hi; i++) { T u = x[i], v = y[i]; z[i] = (OUT_T)(EXPR); } \
    else if (sa == 1)                                                                       \
      IVDEP for (int64_t i = lo; i < hi; i++) { T u = x[i], v = y[0]; z[i] = (OUT_T)(EXPR); } \
    else if (sb == 1)                                                                       \
      IVDEP for (int64_t i = lo; i < hi; i++) { T u = x[0], v = y[i]; z[i] = (OUT_T)(EXPR); } \
    else                                                                                    \
      IVDEP for (int64_t i = lo; i < hi; i++) { T u = x[0], v = y[0]; z[i] = (OUT_T)(EXPR); } \
  }

/* The operations every element type with an order has (bools: Equal). */
#define ORDERED_CASES(T, MAX, MIN, MOD, FMOD)                                               \
  case B_MAX: BINARY_LOOP(T, T, MAX(u, v)); break;                                          \
  case B_MIN: BINARY_LOOP(T, T, MIN(u, v)); break;                                          \
  case B_EQUAL: BINARY_LOOP(T, uint8_t, u == v); break;                                     \
  case B_LESS: BINARY_LOOP(T, uint8_t, u < v); break;                                       \
  case B_GREATER: BINARY_LOOP(T, uint8_t, u > v); break;                                    \
  case B_LESS_EQUAL: BINARY_LOOP(T, uint8_t, u <= v); break;                                \
  case B_GREATER_EQUAL: BINARY_LOOP(T, uint8_t, u >= v); break;                             \
  case B_MOD: BINARY_LOOP(T, T, MOD(u, v)); break;                                          \
  case B_FMOD: BINARY_LOOP(T, T, FMOD(u, v)); break;

/* T the element type, U the type its +, -, * are computed in: floats
 * themselves, integers their unsigned twin (wrapping, as two's complement
 * hardware and NumPy do: a signed overflow is undefined behaviour). The
 * kinds left out are other types' (binary_dtype_supported). */
#define BINARY_KINDS(T, U, DIV, POW, MAX, MIN, MOD, FMOD)                                   \
  switch (p->kind) {                                                                        \
  case B_ADD: BINARY_LOOP(T, T, (T)((U)u + (U)v)); break;                                   \
  case B_SUB: BINARY_LOOP(T, T, (T)((U)u - (U)v)); break;                                   \
  case B_MUL: BINARY_LOOP(T, T, (T)((U)u * (U)v)); break;                                   \
  case B_DIV: BINARY_LOOP(T, T, DIV(T, U, u, v)); break;                                    \
  case B_POW: BINARY_LOOP(T, T, POW(u, v)); break;                                          \
  case B_PRELU: BINARY_LOOP(T, T, u < 0 ? (T)((U)u * (U)v) : u); break;                     \
  ORDERED_CASES(T, MAX, MIN, MOD, FMOD)                                                     \
  default: break;                                                                           \
  }

/* The narrower integers: ordered only, and shifts for the unsigned ones
 * (by the type's width or more: 0, where C leaves it undefined). */
#define INTEGER_KINDS(T, MOD, FMOD)                                                         \
  switch (p->kind) {                                                                        \
  ORDERED_CASES(T, MAX_OF, MIN_OF, MOD, FMOD)                                               \
  case B_SHIFT_LEFT:                                                                        \
    BINARY_LOOP(T, T, (uint64_t)v >= 8 * sizeof(T) ? 0 : (T)((uint64_t)u << v));            \
    break;                                                                                  \
  case B_SHIFT_RIGHT:                                                                       \
    BINARY_LOOP(T, T, (uint64_t)v >= 8 * sizeof(T) ? 0 : (T)((uint64_t)u >> v));            \
    break;                                                                                  \
  default: break;                                                                           \
  }

/* Bools: one byte, 0 or 1. */
#define BOOL_KINDS                                                                          \
  switch (p->kind) {                                                                        \
  case B_AND: BINARY_LOOP(uint8_t, uint8_t, u & v); break;                                  \
  case B_OR: BINARY_LOOP(uint8_t, uint8_t, u | v); break;                                   \
  case B_XOR: BINARY_LOOP(uint8_t, uint8_t, u ^ v); break;                                  \
  case B_EQUAL: BINARY_LOOP(uint8_t, uint8_t, u == v); break;                               \
  default: break;                                                                           \
  }

/* Integer u^v by squaring, wrapping; a negative exponent gives the integer
 * part of 1 / u^|v| (0 unless u is 1 or -1). */
static int64_t pow_i64(int64_t u, int64_t v)
{
  if (v < 0)
    return u == 1 ? 1 : u == -1 ? (v % 2 ? -1 : 1) : 0;
  uint64_t r = 1, base = (uint64_t)u;
  for (; v; v >>= 1, base *= base)
    if (v & 1)
      r *= base;
  return (int64_t)r;
}
#define MAX_OF(u, v) ((u) > (v) ? (u) : (v))
#define MIN_OF(u, v) ((u) < (v) ? (u) : (v))
#define FLOAT_DIV(T, U, u, v) ((u) / (v))
/* Integer division by 0 is undefined (0 here), and MIN / -1 overflows (it wraps here). */
#define INT_DIV(T, U, u, v) ((v) == 0 ? 0 : (v) == -1 ? (T)((U)0 - (U)(u)) : (u) / (v))

/* Remainders. C's (fmod = 1) takes the dividend's sign; ONNX's default Mod
 * the divisor's, as Python's % does: a non-zero remainder of the other sign
 * moves by one divisor. A remainder by 0 is undefined (0 here, as Div
 * gives), and MIN % -1 overflows in C (0 here, its value). */
static inline int64_t truncated_mod_i64(int64_t u, int64_t v)
{
  return v == 0 || v == -1 ? 0 : u % v;
}

static inline int64_t floored_mod_i64(int64_t u, int64_t v)
{
  int64_t r = truncated_mod_i64(u, v);
  return r != 0 && (r < 0) != (v < 0) ? r + v : r; /* |r| < |v|: no overflow */
}

static inline uint64_t mod_unsigned(uint64_t u, uint64_t v)
{
  return v == 0 ? 0 : u % v; /* (no sign: both remainders agree) */
}

static inline float floored_mod_f32(float u, float v)
{
  float r = fmodf(u, v);
  return r != 0 && (r < 0) != (v < 0) ? r + v : r;
}

static inline double floored_mod_f64(double u, double v)
{
  double r = fmod(u, v);
  return r != 0 && (r < 0) != (v < 0) ? r + v : r;
}

typedef struct binary_job {
  const binary_params *p;
  const void *a, *b;
  void *out;
} binary_job;

/* Where row `row` of each input starts. */
typedef struct row_cursor {
  int64_t idx[NPU_MAX_RANK]; /* of the row's outer axes */
  int64_t a_off, b_off;
} row_cursor;

static void cursor_at(const binary_params *p, int64_t row, row_cursor *c)
{
  c->a_off = c->b_off = 0;
  for (int d = (int)p->rank - 2; d >= 0; d--) {
    c->idx[d] = row % p->dims[d];
    row /= p->dims[d];
    c->a_off += c->idx[d] * p->a_strides[d];
    c->b_off += c->idx[d] * p->b_strides[d];
  }
}

/* To the next row: an odometer over the outer axes, no division. */
static void cursor_next(const binary_params *p, row_cursor *c)
{
  for (int d = (int)p->rank - 2; d >= 0; d--) {
    c->a_off += p->a_strides[d];
    c->b_off += p->b_strides[d];
    if (++c->idx[d] < p->dims[d])
      return;
    c->a_off -= p->a_strides[d] * p->dims[d];
    c->b_off -= p->b_strides[d] * p->dims[d];
    c->idx[d] = 0;
  }
}

/* A function of output rows [first, last), columns [lo, hi), for the
 * element types of its TYPE_CASES. */
#define ROWS_FUNCTION(NAME, TYPE_CASES)                                                     \
  static void NAME(const binary_job *job, int64_t first, int64_t last, int64_t lo,          \
                   int64_t hi)                                                              \
  {                                                                                         \
    const binary_params *p = job->p;                                                        \
    const void *a = job->a, *b = job->b;                                                    \
    void *out = job->out;                                                                   \
    int64_t inner = p->dims[p->rank - 1];                                                   \
    int64_t sa = p->a_strides[p->rank - 1], sb = p->b_strides[p->rank - 1];                 \
    row_cursor c;                                                                           \
    cursor_at(p, first, &c);                                                                \
    switch (p->dtype) {                                                                     \
      TYPE_CASES                                                                            \
    default: break; /* (another function's, or refused when the kernel was made) */         \
    }                                                                                       \
  }

/* The types models compute in, vectorised for each instruction set. */
#define WIDE_TYPE_CASES                                                                     \
  case NPU_DTYPE_FLOAT32:                                                                   \
    BINARY_KINDS(float, float, FLOAT_DIV, powf, fmaxf, fminf, floored_mod_f32, fmodf)       \
    break;                                                                                  \
  case NPU_DTYPE_INT64:                                                                     \
    BINARY_KINDS(int64_t, uint64_t, INT_DIV, pow_i64, MAX_OF, MIN_OF, floored_mod_i64,      \
                 truncated_mod_i64)                                                         \
    break;                                                                                  \
  case NPU_DTYPE_INT32:                                                                     \
    BINARY_KINDS(int32_t, uint32_t, INT_DIV, (int32_t)pow_i64, MAX_OF, MIN_OF,              \
                 (int32_t)floored_mod_i64, (int32_t)truncated_mod_i64)                      \
    break;
NPU_VECTOR_CLONES
ROWS_FUNCTION(wide_rows, WIDE_TYPE_CASES)

/* The others (order, Mod, shifts, logic: masks and indices more than
 * activations), compiled once: cloning them too made this file's build
 * minutes longer. */
#define OTHER_TYPE_CASES                                                                    \
  case NPU_DTYPE_FLOAT64:                                                                   \
    BINARY_KINDS(double, double, FLOAT_DIV, pow, fmax, fmin, floored_mod_f64, fmod)         \
    break;                                                                                  \
  case NPU_DTYPE_INT16:                                                                     \
    INTEGER_KINDS(int16_t, (int16_t)floored_mod_i64, (int16_t)truncated_mod_i64)            \
    break;                                                                                  \
  case NPU_DTYPE_INT8:                                                                      \
    INTEGER_KINDS(int8_t, (int8_t)floored_mod_i64, (int8_t)truncated_mod_i64)               \
    break;                                                                                  \
  case NPU_DTYPE_UINT64: INTEGER_KINDS(uint64_t, mod_unsigned, mod_unsigned) break;         \
  case NPU_DTYPE_UINT32:                                                                    \
    INTEGER_KINDS(uint32_t, (uint32_t)mod_unsigned, (uint32_t)mod_unsigned)                 \
    break;                                                                                  \
  case NPU_DTYPE_UINT16:                                                                    \
    INTEGER_KINDS(uint16_t, (uint16_t)mod_unsigned, (uint16_t)mod_unsigned)                 \
    break;                                                                                  \
  case NPU_DTYPE_UINT8:                                                                     \
    INTEGER_KINDS(uint8_t, (uint8_t)mod_unsigned, (uint8_t)mod_unsigned)                    \
    break;                                                                                  \
  case NPU_DTYPE_BOOL: BOOL_KINDS break;
ROWS_FUNCTION(other_rows, OTHER_TYPE_CASES)

static void binary_rows(const binary_job *job, int64_t first, int64_t last, int64_t lo,
                        int64_t hi)
{
  npu_dtype dtype = job->p->dtype;
  if (dtype == NPU_DTYPE_FLOAT32 || dtype == NPU_DTYPE_INT64 || dtype == NPU_DTYPE_INT32)
    wide_rows(job, first, last, lo, hi);
  else
    other_rows(job, first, last, lo, hi);
}

/* Rows [first, last) of a kernel with a lane operand (binary_params): the
 * generic loop's odometer and run-time row length cost five times the pass
 * over memory on rows of 16 lanes. The other input and the output are
 * contiguous; they may be one buffer. */
NPU_VECTOR_CLONES
static void block_lane_rows(const binary_job *job, int64_t first, int64_t last)
{
  const binary_params *p = job->p;
  const float *lanes = p->lane_operand == 1 ? job->a : job->b;
  const float *x = p->lane_operand == 1 ? job->b : job->a;
  float *z = job->out;
  int64_t middle = p->dims[1];
  for (int64_t row = first; row < last;) {
    int64_t outer = row / middle, end = (outer + 1) * middle < last ? (outer + 1) * middle : last;
    cpu_lanes16 operand, v;
    cpu_lanes16_load(&operand, lanes + outer * p->lane_operand_stride);
    if (p->kind == B_MUL)
      for (int64_t r = row; r < end; r++) {
        cpu_lanes16_load(&v, x + r * 16);
        v *= operand;
        cpu_lanes16_store(z + r * 16, &v);
      }
    else
      for (int64_t r = row; r < end; r++) {
        cpu_lanes16_load(&v, x + r * 16);
        v += operand;
        cpu_lanes16_store(z + r * 16, &v);
      }
    row = end;
  }
}

/* A task: several short rows, or a CHUNK-long piece of one long row. */
static void binary_task(void *ctx, size_t task)
{
  const binary_job *job = ctx;
  const binary_params *p = job->p;
  int64_t inner = p->dims[p->rank - 1];
  if (p->rows_per_task > 1) {
    int64_t first = (int64_t)task * p->rows_per_task;
    if (p->lane_operand) {
      int64_t last = first + p->rows_per_task < p->rows ? first + p->rows_per_task : p->rows;
      block_lane_rows(job, first, last);
      return;
    }
    int64_t last = first + p->rows_per_task < p->rows ? first + p->rows_per_task : p->rows;
    binary_rows(job, first, last, 0, inner);
    return;
  }
  int64_t row = (int64_t)task / p->pieces_per_row, piece = (int64_t)task % p->pieces_per_row;
  int64_t lo = piece * CHUNK, hi = lo + CHUNK < inner ? lo + CHUNK : inner;
  binary_rows(job, row, row + 1, lo, hi);
}

/* A binary operator is one step; Sum, Mean, Max and Min of n inputs are
 * n - 1 steps into the output (the first combines inputs 0 and 1, each
 * next one the output and the next input), then Mean's division by n. */
typedef struct binary_chain {
  uint32_t steps;
  bool divides;              /* Mean: a last step divides by the input count */
  union {
    float f32;
    double f64;
  } count;                   /* ...that count, in the element type */
  binary_params step[];      /* steps + divides */
} binary_chain;

static void run_binary(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const binary_chain *chain = k->params;
  uint32_t operations = chain->steps + chain->divides;
  if (operations == 0 && out[0] != in[0]) /* one input: itself */
    memcpy(out[0], in[0], cpu_tensor_elements(&k->outputs[0]) * npu_dtype_size(k->inputs[0].dtype));
  for (uint32_t s = 0; s < operations; s++) {
    binary_job job = {&chain->step[s], s ? out[0] : in[0],
                      s < chain->steps ? in[s + 1] : (const void *)&chain->count, out[0]};
    npu_cpu_parallel_for(k->device, chain->step[s].tasks, binary_task, &job);
  }
}

/* Binary kernels walk the output in its memory order: its physical axes,
 * outermost first, each a logical axis or, for channel blocks, the block
 * index or the lane within a block of the channel axis. */
typedef enum { AXIS_WHOLE, AXIS_BLOCKS, AXIS_LANES } axis_part;

typedef struct physical_axis {
  uint32_t axis;
  axis_part part;
} physical_axis;

static bool relaid(const npu_hal_tensor_desc *t)
{
  return t->layout != NPU_HAL_LAYOUT_PLAIN && t->rank >= 3;
}

static uint32_t physical_axes(const npu_hal_tensor_desc *t, physical_axis *axes)
{
  uint32_t n = 0;
  if (!relaid(t)) {
    for (uint32_t d = 0; d < t->rank; d++)
      axes[n++] = (physical_axis){d, AXIS_WHOLE};
    return n;
  }
  bool blocked = npu_hal_channel_block(t) > 1;
  axes[n++] = (physical_axis){0, AXIS_WHOLE};
  if (blocked)
    axes[n++] = (physical_axis){1, AXIS_BLOCKS};
  for (uint32_t d = 2; d < t->rank; d++)
    axes[n++] = (physical_axis){d, AXIS_WHOLE};
  axes[n++] = (physical_axis){1, blocked ? AXIS_LANES : AXIS_WHOLE};
  return n;
}

/* The element stride of each logical axis of `t` in its own layout; in
 * channel blocks, the channel axis's is that of a whole block (a lane's is 1). */
static void layout_strides(const npu_hal_tensor_desc *t, int64_t *strides)
{
  if (!relaid(t)) {
    cpu_strides(t, strides);
    return;
  }
  int64_t block = (int64_t)npu_hal_channel_block(t);
  int64_t s = block > 1 ? block : t->dims[1];
  for (uint32_t d = t->rank; d-- > 2;) {
    strides[d] = s;
    s *= t->dims[d];
  }
  strides[1] = block > 1 ? s : 1;
  strides[0] = block > 1 ? s * (t->dims[1] / block) : s;
}

/* Strides of `in` along the output's physical axes, read through a
 * broadcast. Any layout's offset is linear in the logical indices except
 * channel blocks', which only the output's own block axes walk. */
static bool operand_strides(const npu_hal_tensor_desc *in, const npu_hal_tensor_desc *out,
                            const physical_axis *axes, uint32_t count, int64_t *strides)
{
  int64_t in_block = relaid(in) ? (int64_t)npu_hal_channel_block(in) : 1;
  int64_t out_block = relaid(out) ? (int64_t)npu_hal_channel_block(out) : 1;
  if (in_block > 1 && (!npu_hal_same_layout(in, out) || in->rank != out->rank))
    return false;
  int64_t own[NPU_MAX_RANK];
  layout_strides(in, own);
  uint32_t shift = out->rank - in->rank;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t d = axes[i].axis;
    if (d < shift || in->dims[d - shift] == 1) {
      strides[i] = 0;
      continue;
    }
    int64_t s = own[d - shift];
    strides[i] = axes[i].part == AXIS_WHOLE    ? s
                 : axes[i].part == AXIS_BLOCKS ? (in_block > 1 ? s : s * out_block)
                                               : (in_block > 1 ? 1 : s);
  }
  return true;
}

/* Merges neighbouring axes both inputs walk contiguously (or both
 * broadcast), down to one axis for same-shape or scalar operands, so rows
 * are long, and drops axes of 1; a rank-0 output becomes one axis of 1. */
static void coalesce(binary_params *p)
{
  uint32_t rank = 0;
  for (uint32_t d = 0; d < p->rank; d++) {
    if (p->dims[d] == 1)
      continue; /* (its strides are never used) */
    bool merges = rank > 0 && p->a_strides[rank - 1] == p->a_strides[d] * p->dims[d] &&
                  p->b_strides[rank - 1] == p->b_strides[d] * p->dims[d];
    if (merges) {
      p->dims[rank - 1] *= p->dims[d];
      p->a_strides[rank - 1] = p->a_strides[d];
      p->b_strides[rank - 1] = p->b_strides[d];
      continue;
    }
    p->dims[rank] = p->dims[d];
    p->a_strides[rank] = p->a_strides[d];
    p->b_strides[rank++] = p->b_strides[d];
  }
  if (rank == 0) {
    p->dims[0] = 1;
    p->a_strides[0] = p->b_strides[0] = 0;
    rank = 1;
  }
  p->rank = rank;
}

/* Sets p's lane operand where its coalesced axes are (outer, middle, 16
 * lanes), one input walks them contiguously and the other holds still along
 * the middle axis. */
static void find_lane_operand(binary_params *p)
{
  if (p->dtype != NPU_DTYPE_FLOAT32 || (p->kind != B_MUL && p->kind != B_ADD) || p->rank != 3 ||
      p->dims[2] != 16)
    return;
  const int64_t *strides[2] = {p->a_strides, p->b_strides};
  for (uint32_t i = 0; i < 2; i++) {
    const int64_t *whole = strides[1 - i], *lanes = strides[i];
    if (whole[2] == 1 && whole[1] == 16 && whole[0] == 16 * p->dims[1] && lanes[2] == 1 &&
        lanes[1] == 0) {
      p->lane_operand = i + 1;
      p->lane_operand_stride = lanes[0];
    }
  }
}

static const struct {
  const char *name;
  binary_kind kind;
  bool variadic; /* any number of inputs */
} binary_ops[] = {
    {"Add", B_ADD}, {"Sub", B_SUB}, {"Mul", B_MUL}, {"Div", B_DIV}, {"Pow", B_POW},
    {"Max", B_MAX, true}, {"Min", B_MIN, true}, {"Sum", B_ADD, true}, {"Mean", B_ADD, true},
    {"Equal", B_EQUAL}, {"Less", B_LESS}, {"Greater", B_GREATER}, {"LessOrEqual", B_LESS_EQUAL},
    {"GreaterOrEqual", B_GREATER_EQUAL}, {"PRelu", B_PRELU}, {"Mod", B_MOD}, {"And", B_AND},
    {"Or", B_OR}, {"Xor", B_XOR}, {"BitShift", B_SHIFT_LEFT},
};

/* Whether the binary kernel computes `kind` on `dtype`: arithmetic on
 * float32, float64, int32 and int64, order and Mod on every number type,
 * shifts on unsigned ones, logic on bools. */
static bool binary_dtype_supported(binary_kind kind, npu_dtype dtype)
{
  bool ordered = kind == B_MAX || kind == B_MIN || kind == B_EQUAL || kind == B_LESS ||
                 kind == B_GREATER || kind == B_LESS_EQUAL || kind == B_GREATER_EQUAL ||
                 kind == B_MOD || kind == B_FMOD;
  bool logic = kind == B_AND || kind == B_OR || kind == B_XOR;
  bool shift = kind == B_SHIFT_LEFT || kind == B_SHIFT_RIGHT;
  switch (dtype) {
  case NPU_DTYPE_FLOAT32:
  case NPU_DTYPE_FLOAT64:
  case NPU_DTYPE_INT64:
  case NPU_DTYPE_INT32: return !logic && !shift;
  case NPU_DTYPE_INT16:
  case NPU_DTYPE_INT8: return ordered;
  case NPU_DTYPE_UINT64:
  case NPU_DTYPE_UINT32:
  case NPU_DTYPE_UINT16:
  case NPU_DTYPE_UINT8: return ordered || shift;
  case NPU_DTYPE_BOOL: return logic || kind == B_EQUAL;
  default: return false;
  }
}

/* Whether tensor a is laid out in memory exactly as b: type, shape and layout. */
static bool same_form(const npu_hal_tensor_desc *a, const npu_hal_tensor_desc *b)
{
  return a->dtype == b->dtype && a->rank == b->rank && npu_hal_same_layout(a, b) &&
         memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}

/* Plans one step: y = a (kind) b, the operands read through broadcasts in their layouts. */
static npu_status plan_step(const npu_hal_op *op, binary_kind kind, const npu_hal_tensor_desc *a,
                            const npu_hal_tensor_desc *b, binary_params *p)
{
  const npu_hal_tensor_desc *y = &op->outputs[0];
  p->kind = kind;
  p->dtype = a->dtype;
  physical_axis axes[NPU_MAX_RANK + 1];
  p->rank = physical_axes(y, axes);
  if (p->rank > NPU_MAX_RANK)
    return cpu_unsupported(op, "too many axes");
  int64_t block = relaid(y) ? (int64_t)npu_hal_channel_block(y) : 1;
  for (uint32_t i = 0; i < p->rank; i++)
    p->dims[i] = axes[i].part == AXIS_WHOLE    ? y->dims[axes[i].axis]
                 : axes[i].part == AXIS_BLOCKS ? y->dims[1] / block
                                               : block;
  if (!operand_strides(a, y, axes, p->rank, p->a_strides) ||
      !operand_strides(b, y, axes, p->rank, p->b_strides))
    return cpu_unsupported(op, "an input in channel blocks that the output does not share");
  coalesce(p);
  find_lane_operand(p);
  int64_t inner = p->dims[p->rank - 1];
  p->rows = inner ? (int64_t)cpu_tensor_elements(y) / inner : 0;
  p->rows_per_task = inner < CHUNK ? CHUNK / (inner ? inner : 1) : 1;
  p->pieces_per_row = (inner + CHUNK - 1) / CHUNK;
  p->tasks = p->rows_per_task > 1 ? (size_t)((p->rows + p->rows_per_task - 1) / p->rows_per_task)
                                  : (size_t)(p->rows * p->pieces_per_row);
  return NPU_OK;
}

static npu_status create_binary(const npu_hal_op *op, npu_hal_kernel *k)
{
  npu_dtype dtype = op->inputs[0].dtype;
  binary_kind kind = B_ADD;
  bool variadic = false;
  for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
    if (strcmp(binary_ops[i].name, op->op_type) == 0) {
      kind = binary_ops[i].kind;
      variadic = binary_ops[i].variadic;
    }
  const npu_hal_attributes *attributes = &op->attributes;
  if (kind == B_MOD && attributes->get_int(attributes->node, "fmod", 0))
    kind = B_FMOD;
  if (kind == B_SHIFT_LEFT &&
      strcmp(attributes->get_string(attributes->node, "direction", ""), "RIGHT") == 0)
    kind = B_SHIFT_RIGHT;
  bool divides = strcmp(op->op_type, "Mean") == 0;
  if ((!variadic && op->input_count != 2) || op->input_count < 1)
    return cpu_unsupported(op, "exactly two inputs are supported");
  for (uint32_t i = 0; i < op->input_count; i++)
    if (!binary_dtype_supported(kind, dtype) || op->inputs[i].dtype != dtype ||
        (divides && dtype != NPU_DTYPE_FLOAT32 && dtype != NPU_DTYPE_FLOAT64))
      return cpu_unsupported(op, "an element type it does not compute (see "
                                 "binary_dtype_supported), or inputs of several");
  if (op->opset < 7 && attributes->get_int(attributes->node, "broadcast", 0))
    return cpu_unsupported(op, "legacy (opset < 7) broadcasting");
  uint32_t steps = op->input_count - 1;
  binary_chain *chain = calloc(1, sizeof *chain + (steps + divides) * sizeof chain->step[0]);
  if (!chain)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = chain;
  chain->steps = steps;
  chain->divides = divides && steps > 0;
  if (dtype == NPU_DTYPE_FLOAT64)
    chain->count.f64 = op->input_count;
  else
    chain->count.f32 = (float)op->input_count;
  const npu_hal_tensor_desc *y = &op->outputs[0];
  npu_hal_tensor_desc count = {.dtype = dtype}; /* (a scalar) */
  npu_status status = NPU_OK;
  for (uint32_t s = 0; s < steps + chain->divides && status == NPU_OK; s++)
    status = plan_step(op, s < steps ? kind : B_DIV, s ? y : &op->inputs[0],
                       s < steps ? &op->inputs[s + 1] : &count, &chain->step[s]);
  /* One step reads each element of its inputs before writing it: either
   * may be the output's memory. (Over more steps, a later input could be
   * the first one again: Sum(x, y, x).) */
  for (uint32_t i = 0; i < op->input_count && op->input_count <= 2; i++)
    if (same_form(&op->inputs[i], y))
      k->in_place_inputs |= 1u << i;
  k->run = run_binary;
  return status;
}

/* ---- Not, Cast -------------------------------------------------------------------- */

static void run_not(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  size_t n = cpu_tensor_elements(&k->outputs[0]);
  const uint8_t *x = in[0];
  uint8_t *y = out[0];
  for (size_t i = 0; i < n; i++)
    y[i] = !x[i]; /* (a bool is one byte, 0 or 1) */
}

static npu_status create_not(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (op->inputs[0].dtype != NPU_DTYPE_BOOL)
    return cpu_unsupported(op, "only bool inputs");
  k->run = run_not;
  return NPU_OK;
}

static void run_cast(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  size_t n = cpu_tensor_elements(&k->outputs[0]);
  npu_dtype from = k->inputs[0].dtype, to = k->outputs[0].dtype;
  for (size_t i = 0; i < n; i++) {
    double v;
    switch (from) {
    case NPU_DTYPE_FLOAT32: v = ((const float *)in[0])[i]; break;
    case NPU_DTYPE_INT64: v = (double)((const int64_t *)in[0])[i]; break;
    case NPU_DTYPE_INT32: v = ((const int32_t *)in[0])[i]; break;
    case NPU_DTYPE_FLOAT64: v = ((const double *)in[0])[i]; break;
    case NPU_DTYPE_FLOAT16: v = npu_half_to_float(((const uint16_t *)in[0])[i]); break;
    case NPU_DTYPE_INT8: v = ((const int8_t *)in[0])[i]; break;
    default: v = ((const uint8_t *)in[0])[i]; break; /* uint8, bool */
    }
    switch (to) {
    case NPU_DTYPE_FLOAT32: ((float *)out[0])[i] = (float)v; break;
    case NPU_DTYPE_INT64:
      ((int64_t *)out[0])[i] = npu_double_to_integer(v, INT64_MIN, INT64_MAX);
      break;
    case NPU_DTYPE_INT32:
      ((int32_t *)out[0])[i] = (int32_t)npu_double_to_integer(v, INT32_MIN, INT32_MAX);
      break;
    case NPU_DTYPE_FLOAT64: ((double *)out[0])[i] = v; break;
    case NPU_DTYPE_FLOAT16: ((uint16_t *)out[0])[i] = npu_float_to_half((float)v); break;
    case NPU_DTYPE_BOOL: ((uint8_t *)out[0])[i] = v != 0; break;
    default: /* uint8: the low byte, as NumPy gives (300 -> 44, -1 -> 255) */
      ((uint8_t *)out[0])[i] = (uint8_t)npu_double_to_integer(v, INT64_MIN, INT64_MAX);
      break;
    }
  }
}

static bool castable(npu_dtype t)
{
  return t == NPU_DTYPE_FLOAT32 || t == NPU_DTYPE_INT64 || t == NPU_DTYPE_INT32 ||
         t == NPU_DTYPE_FLOAT64 || t == NPU_DTYPE_UINT8 || t == NPU_DTYPE_BOOL ||
         t == NPU_DTYPE_FLOAT16 || t == NPU_DTYPE_INT8;
}

static npu_status create_cast(const npu_hal_op *op, npu_hal_kernel *k)
{
  if (!castable(op->inputs[0].dtype) || !castable(op->outputs[0].dtype))
    return cpu_unsupported(op, "unsupported element types");
  k->run = run_cast;
  return NPU_OK;
}

/* ---- IsInf, IsNaN ------------------------------------------------------------------ */

typedef struct classify_params {
  bool nan;                /* IsNaN; else IsInf of the signs below */
  bool negative, positive; /* IsInf's detect_negative, detect_positive */
  bool float64;
  size_t count;
} classify_params;

typedef struct classify_job {
  const classify_params *p;
  const void *in;
  uint8_t *out;
} classify_job;

#define CLASSIFY_LOOP(T)                                                                    \
  for (size_t i = begin; i < end; i++) {                                                    \
    T x = ((const T *)job->in)[i];                                                          \
    job->out[i] = p->nan ? isnan(x) : isinf(x) && (x < 0 ? p->negative : p->positive);      \
  }

static void classify_chunk(void *ctx, size_t index)
{
  const classify_job *job = ctx;
  const classify_params *p = job->p;
  size_t begin = index * CHUNK, end = begin + CHUNK < p->count ? begin + CHUNK : p->count;
  if (p->float64)
    CLASSIFY_LOOP(double)
  else
    CLASSIFY_LOOP(float)
}

static void run_classify(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const classify_params *p = k->params;
  classify_job job = {p, in[0], out[0]};
  npu_cpu_parallel_for(k->device, (p->count + CHUNK - 1) / CHUNK, classify_chunk, &job);
}

static npu_status create_classify(const npu_hal_op *op, npu_hal_kernel *k)
{
  npu_dtype dtype = op->inputs[0].dtype;
  if (dtype != NPU_DTYPE_FLOAT32 && dtype != NPU_DTYPE_FLOAT64)
    return cpu_unsupported(op, "only float32 and float64 inputs");
  classify_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  const npu_hal_attributes *a = &op->attributes;
  p->nan = strcmp(op->op_type, "IsNaN") == 0;
  p->negative = a->get_int(a->node, "detect_negative", 1) != 0;
  p->positive = a->get_int(a->node, "detect_positive", 1) != 0;
  p->float64 = dtype == NPU_DTYPE_FLOAT64;
  p->count = cpu_tensor_elements(&op->outputs[0]);
  k->params = p;
  k->run = run_classify;
  return NPU_OK;
}

/* Same-shape elementwise tensors run in whatever layout they share. */
const cpu_kernel_entry cpu_elementwise_kernels[] = {
    {"Relu", create_unary, CPU_LAYOUTS_SHARED},
    {"Sigmoid", create_unary, CPU_LAYOUTS_SHARED},
    {"Tanh", create_unary, CPU_LAYOUTS_SHARED},
    {"Exp", create_unary, CPU_LAYOUTS_SHARED},
    {"Log", create_unary, CPU_LAYOUTS_SHARED},
    {"Sqrt", create_unary, CPU_LAYOUTS_SHARED},
    {"Abs", create_unary, CPU_LAYOUTS_SHARED},
    {"Neg", create_unary, CPU_LAYOUTS_SHARED},
    {"Reciprocal", create_unary, CPU_LAYOUTS_SHARED},
    {"Floor", create_unary, CPU_LAYOUTS_SHARED},
    {"Ceil", create_unary, CPU_LAYOUTS_SHARED},
    {"Erf", create_unary, CPU_LAYOUTS_SHARED},
    {"HardSigmoid", create_unary, CPU_LAYOUTS_SHARED},
    {"HardSwish", create_unary, CPU_LAYOUTS_SHARED},
    {"LeakyRelu", create_unary, CPU_LAYOUTS_SHARED},
    {"Clip", create_unary, CPU_LAYOUTS_SHARED},
    {"Elu", create_unary, CPU_LAYOUTS_SHARED},
    {"Selu", create_unary, CPU_LAYOUTS_SHARED},
    {"Celu", create_unary, CPU_LAYOUTS_SHARED},
    {"Softplus", create_unary, CPU_LAYOUTS_SHARED},
    {"Softsign", create_unary, CPU_LAYOUTS_SHARED},
    {"Sign", create_unary, CPU_LAYOUTS_SHARED},
    {"ThresholdedRelu", create_unary, CPU_LAYOUTS_SHARED},
    {"Mish", create_unary, CPU_LAYOUTS_SHARED},
    {"Gelu", create_unary, CPU_LAYOUTS_SHARED},
    {"Round", create_unary, CPU_LAYOUTS_SHARED},
    {"Sin", create_unary, CPU_LAYOUTS_SHARED},
    {"Cos", create_unary, CPU_LAYOUTS_SHARED},
    {"Tan", create_unary, CPU_LAYOUTS_SHARED},
    {"Asin", create_unary, CPU_LAYOUTS_SHARED},
    {"Acos", create_unary, CPU_LAYOUTS_SHARED},
    {"Atan", create_unary, CPU_LAYOUTS_SHARED},
    {"Sinh", create_unary, CPU_LAYOUTS_SHARED},
    {"Cosh", create_unary, CPU_LAYOUTS_SHARED},
    {"Asinh", create_unary, CPU_LAYOUTS_SHARED},
    {"Acosh", create_unary, CPU_LAYOUTS_SHARED},
    {"Atanh", create_unary, CPU_LAYOUTS_SHARED},
    {"Shrink", create_unary, CPU_LAYOUTS_SHARED},
    {"Add", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Sub", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Mul", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Div", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Pow", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Max", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Min", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Equal", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Less", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Greater", create_binary, CPU_LAYOUTS_BROADCAST},
    {"PRelu", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Mod", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Sum", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Mean", create_binary, CPU_LAYOUTS_BROADCAST},
    {"LessOrEqual", create_binary, CPU_LAYOUTS_BROADCAST},
    {"GreaterOrEqual", create_binary, CPU_LAYOUTS_BROADCAST},
    {"And", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Or", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Xor", create_binary, CPU_LAYOUTS_BROADCAST},
    {"BitShift", create_binary, CPU_LAYOUTS_BROADCAST},
    {"Not", create_not, CPU_LAYOUTS_SHARED},
    {"IsInf", create_classify, CPU_LAYOUTS_SHARED},
    {"IsNaN", create_classify, CPU_LAYOUTS_SHARED},
    {"Cast", create_cast},
    {"CastLike", create_cast},
    {NULL, NULL},
};
