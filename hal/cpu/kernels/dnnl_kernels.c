/* oneDNN kernels: Conv and ConvTranspose (1-D to 3-D, groups, dilations,
 * bias), MatMul (batched, broadcast) and Gemm, with the fused activations as
 * post-ops; on bfloat16 inputs and weights where the op asks for
 * NPU_PRECISION_BF16 and the CPU has it (float32 sums and outputs). Constant weights are reordered once, at kernel creation, into
 * the layout oneDNN picks for this shape; activations come in the layout
 * the runtime planned (see npu_hal_layout). oneDNN's scratchpad is the
 * launch's planned workspace, so a run allocates nothing.
 *
 * Debian's oneDNN uses OpenMP: primitives are created for a team of the
 * device's thread budget and run, like every kernel, on the device's
 * compute engine (cpu_engine.c), whose thread owns that one team. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "compile_profile.h"
#include "deferred_primitives.h"
#include "direct_conv.h"
#include "dnnl_kernels.h"

static dnnl_engine_t engine;
static dnnl_stream_t stream;
static dnnl_status_t engine_status = dnnl_runtime_error;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;

static void create_engine(void)
{
  engine_status = dnnl_engine_create(&engine, dnnl_cpu, 0);
  if (engine_status == dnnl_success)
    engine_status = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
}

dnnl_engine_t cpu_dnnl_engine(void)
{
  pthread_once(&engine_once, create_engine);
  return engine_status == dnnl_success ? engine : NULL;
}


/* oneDNN's name for the layout of a 1-D to 3-D activation (rank 3 to 5);
 * dnnl_format_tag_undef for channel blocks it has no format for (the
 * entries' CPU_ONEDNN_BLOCKS keep those away). */
static dnnl_format_tag_t layout_tag(const npu_hal_tensor_desc *t)
{
  static const dnnl_format_tag_t plain[] = {dnnl_abc, dnnl_abcd, dnnl_abcde};
  static const dnnl_format_tag_t channels_last[] = {dnnl_acb, dnnl_acdb, dnnl_acdeb};
  static const dnnl_format_tag_t blocks[][3] = {
      {dnnl_aBc4b, dnnl_aBcd4b, dnnl_aBcde4b},
      {dnnl_aBc8b, dnnl_aBcd8b, dnnl_aBcde8b},
      {dnnl_aBc16b, dnnl_aBcd16b, dnnl_aBcde16b},
      {dnnl_aBc32b, dnnl_aBcd32b, dnnl_aBcde32b},
  };
  int r = (int)t->rank - 3;
  if (r < 0 || r > 2)
    return dnnl_format_tag_undef;
  if (t->layout == NPU_HAL_LAYOUT_PLAIN)
    return plain[r];
  if (t->layout == NPU_HAL_LAYOUT_CHANNELS_LAST)
    return channels_last[r];
  for (int i = 0; i < 4; i++)
    if (t->block == 4u << i)
      return blocks[i][r];
  return dnnl_format_tag_undef;
}

void cpu_dnnl_free_params(void *data)
{
  cpu_dnnl_params *p = data;
  if (!p)
    return;
  cpu_deferred_drop(p); /* a whole being made in the background (see build_direct) */
  cpu_dnnl_free_params(p->whole);
  cpu_direct_conv_free(p->direct);
  free(p->own_workspace);
  cpu_dnnl_free_params(p->next_channel);
  cpu_deferred_drop(&p->primitive);
  dnnl_memory_t memories[] = {p->src,       p->weights,   p->bias,     p->dst,
                              p->scratchpad, p->plain_src, p->plain_dst};
  for (size_t i = 0; i < sizeof memories / sizeof memories[0]; i++)
    if (memories[i])
      dnnl_memory_destroy(memories[i]);
  for (uint32_t i = 0; i < p->addend_count; i++)
    if (p->addends[i])
      dnnl_memory_destroy(p->addends[i]);
  dnnl_primitive_t primitives[] = {p->primitive, p->src_reorder, p->dst_reorder};
  for (size_t i = 0; i < sizeof primitives / sizeof primitives[0]; i++)
    if (primitives[i])
      dnnl_primitive_destroy(primitives[i]);
  cpu_packed_weights_release(p->packed_weights, p->packed_from);
  free(p);
}

/* p's primitive over the batch, on the input at `src_base` (in[0] but for
 * a channel part). */
static void run_primitive(const npu_hal_kernel *k, cpu_dnnl_params *p, char *src_base,
                          void *const *in, void *const *out)
{
  char *workspace = p->own_workspace ? p->own_workspace : out[k->output_count];
  dnnl_memory_set_data_handle(p->scratchpad, workspace);
  if (p->src_reorder)
    dnnl_memory_set_data_handle(p->src, workspace + p->src_offset);
  if (p->dst_reorder)
    dnnl_memory_set_data_handle(p->dst, workspace + p->dst_offset);
  dnnl_exec_arg_t args[5 + NPU_HAL_MAX_ACTIVATIONS] = {
      {DNNL_ARG_SRC, p->src}, {DNNL_ARG_DST, p->dst}, {DNNL_ARG_SCRATCHPAD, p->scratchpad}};
  int arg_count = 3;
  for (uint32_t i = 0; i < p->addend_count; i++)
    args[arg_count++] = (dnnl_exec_arg_t){p->addend_args[i], p->addends[i]};
  if (p->weights) {
    if (!p->packed_weights)
      dnnl_memory_set_data_handle(p->weights, in[1]);
    args[arg_count++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, p->weights};
  }
  if (p->bias) {
    dnnl_memory_set_data_handle(p->bias, in[p->bias_input]);
    args[arg_count++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, p->bias};
  }
  dnnl_exec_arg_t to_blocked[] = {{DNNL_ARG_FROM, p->plain_src}, {DNNL_ARG_TO, p->src}};
  dnnl_exec_arg_t to_plain[] = {{DNNL_ARG_FROM, p->dst}, {DNNL_ARG_TO, p->plain_dst}};
  uint32_t slices = p->slices > 1 ? p->slices : 1;
  bool unblocked = p->unblocked.addend_input != 0;
  if (p->summed_input) /* every slice's at once */
    cpu_copy_addend(k->device, in[p->summed_input], out[0], slices * p->summed_bytes);
  if (unblocked)
    dnnl_memory_set_data_handle(p->dst, workspace + p->dst_offset);
  for (uint32_t slice = 0; slice < slices; slice++) {
    char *src = src_base + slice * p->src_slice_bytes;
    char *dst = (char *)out[0] + slice * p->dst_slice_bytes;
    dnnl_memory_set_data_handle(p->src_reorder ? p->plain_src : p->src, src);
    if (!unblocked)
      dnnl_memory_set_data_handle(p->dst_reorder ? p->plain_dst : p->dst, dst);
    for (uint32_t i = 0; i < p->addend_count; i++)
      dnnl_memory_set_data_handle(p->addends[i], (char *)in[p->addend_inputs[i]] +
                                                     slice * p->addend_slice_bytes[i]);
    if (p->src_reorder)
      dnnl_primitive_execute(p->src_reorder, stream, 2, to_blocked);
    dnnl_primitive_execute(p->primitive, stream, arg_count, args);
    if (p->dst_reorder)
      dnnl_primitive_execute(p->dst_reorder, stream, 2, to_plain);
    if (unblocked) { /* (the addend has the output's shape) */
      dnnl_stream_wait(stream);
      cpu_unblock_add(k->device, &p->unblocked, (const float *)(workspace + p->dst_offset),
                      (const float *)((char *)in[p->unblocked.addend_input] +
                                      slice * p->dst_slice_bytes),
                      (float *)dst);
    }
  }
  dnnl_stream_wait(stream);
}

void cpu_dnnl_run(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  cpu_dnnl_params *p = k->params;
  if (atomic_load_explicit(&p->whole_ready, memory_order_acquire) && p->whole)
    p = p->whole;
  else if (p->direct) {
    cpu_direct_conv_run(k->device, p->direct, in, out);
    return;
  }
  for (; p; p = p->next_channel)
    run_primitive(k, p, (char *)in[0] + p->channel_offset, in, out);
}

/* Eltwise post-ops being appended. oneDNN 2.6's JIT gives every eltwise
 * post-op of one algorithm the alpha and beta of the first (linear(a, b)
 * then linear(c, d) computes linear(a, b) twice), so a chain that needs one
 * algorithm with two different parameter sets is refused. */
typedef struct eltwise_chain {
  dnnl_post_ops_t post_ops;
  uint32_t count;
  struct { dnnl_alg_kind_t alg; float alpha, beta; } used[2 * NPU_HAL_MAX_ACTIVATIONS];
} eltwise_chain;

static bool append_eltwise(eltwise_chain *c, dnnl_alg_kind_t alg, float alpha, float beta)
{
  for (uint32_t i = 0; i < c->count; i++)
    if (c->used[i].alg == alg && (c->used[i].alpha != alpha || c->used[i].beta != beta))
      return false;
  c->used[c->count].alg = alg;
  c->used[c->count].alpha = alpha;
  c->used[c->count++].beta = beta;
  return dnnl_post_ops_append_eltwise(c->post_ops, 1.0f, alg, alpha, beta) == dnnl_success;
}

/* An activation as post-ops; false when oneDNN has no exact equivalent. */
static bool append_activation(eltwise_chain *c, const npu_hal_activation *a)
{
  switch (a->kind) {
  case NPU_HAL_ACTIVATION_RELU:
    return append_eltwise(c, dnnl_eltwise_relu, 0, 0);
  case NPU_HAL_ACTIVATION_LEAKY_RELU:
    return append_eltwise(c, dnnl_eltwise_relu, a->alpha, 0);
  case NPU_HAL_ACTIVATION_CLIP:
    return append_eltwise(c, dnnl_eltwise_clip_v2, a->alpha, a->beta);
  case NPU_HAL_ACTIVATION_SIGMOID:
    return append_eltwise(c, dnnl_eltwise_logistic, 0, 0);
  case NPU_HAL_ACTIVATION_TANH:
    return append_eltwise(c, dnnl_eltwise_tanh, 0, 0);
  case NPU_HAL_ACTIVATION_HARD_SWISH:
    return append_eltwise(c, dnnl_eltwise_hardswish, 0, 0);
  case NPU_HAL_ACTIVATION_SWISH:
    return append_eltwise(c, dnnl_eltwise_swish, 1.0f, 0);
  case NPU_HAL_ACTIVATION_GELU:
    return append_eltwise(c, dnnl_eltwise_gelu_erf, 0, 0);
  case NPU_HAL_ACTIVATION_GELU_TANH:
    return append_eltwise(c, dnnl_eltwise_gelu_tanh, 0, 0);
  case NPU_HAL_ACTIVATION_LINEAR:
    return append_eltwise(c, dnnl_eltwise_linear, a->alpha, a->beta);
  case NPU_HAL_ACTIVATION_MISH:
    return append_eltwise(c, dnnl_eltwise_mish, 0, 0);
  case NPU_HAL_ACTIVATION_HARD_SIGMOID:
    return append_eltwise(c, dnnl_eltwise_linear, a->alpha, a->beta) &&
           append_eltwise(c, dnnl_eltwise_clip_v2, 0, 1);
  case NPU_HAL_ACTIVATION_ADD:
    return false; /* a binary post-op: append_addend */
  case NPU_HAL_ACTIVATION_DEQUANTIZED_ADD:
  case NPU_HAL_ACTIVATION_QUANTIZE:
    return false; /* int8 kernels only (qlinear_dnnl.c) */
  }
  return false;
}

/* A binary post-op adding fused input `a->input`, a residual connection or a
 * bias (see NPU_HAL_ACTIVATION_ADD): its memory is bound to that launch
 * input at each run. `view` (or NULL) is the destination's shape as the
 * primitive sees it, when it regroups the output's axes. */
static bool append_addend(dnnl_post_ops_t post_ops, const npu_hal_op *op,
                          const npu_hal_activation *a, const dnnl_memory_desc_t *view,
                          cpu_dnnl_params *p)
{
  static const dnnl_format_tag_t plain[] = {dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde};
  if (a->input >= op->fused_input_count || p->addend_count >= NPU_HAL_MAX_ACTIVATIONS)
    return false;
  const npu_hal_tensor_desc *t = &op->fused_inputs[a->input], *y = &op->outputs[0];
  bool bias = cpu_tensor_elements(t) != cpu_tensor_elements(y);
  int rank = view ? view->ndims : (int)y->rank;
  if (t->dtype != NPU_DTYPE_FLOAT32 || t->rank < 1 || rank > 5 ||
      (t->layout != NPU_HAL_LAYOUT_PLAIN && (t->rank < 3 || bias || view)) ||
      (bias && (y->layout != NPU_HAL_LAYOUT_PLAIN ||
                (int64_t)cpu_tensor_elements(t) != y->dims[y->rank - 1])))
    return false;
  dnnl_dims_t dims; /* a bias: 1 on every axis but the last */
  for (int d = 0; d < rank; d++)
    dims[d] = bias ? (d == rank - 1 ? y->dims[y->rank - 1] : 1)
                   : view ? view->dims[d] : t->dims[d];
  dnnl_memory_desc_t md;
  dnnl_format_tag_t tag = t->layout == NPU_HAL_LAYOUT_PLAIN ? plain[rank - 1] : layout_tag(t);
  int index = dnnl_post_ops_len(post_ops);
  uint32_t n = p->addend_count;
  if (dnnl_memory_desc_init_by_tag(&md, rank, dims, dnnl_f32, tag) != dnnl_success ||
      dnnl_post_ops_append_binary(post_ops, dnnl_binary_add, &md) != dnnl_success ||
      dnnl_memory_create(&p->addends[n], &md, engine, DNNL_MEMORY_NONE) != dnnl_success)
    return false;
  p->addend_args[n] = DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1;
  p->addend_inputs[n] = op->input_count + a->input;
  p->addend_count++;
  return true;
}

/* cpu_dnnl_make_attributes, with the Add `summed` (or NULL) a sum post-op
 * onto what the output holds before the primitive runs; `onto_output`: one
 * such sum before the op's post-ops. */
static npu_status make_attributes(const npu_hal_op *op, const dnnl_memory_desc_t *view,
                                  const npu_hal_activation *summed, bool onto_output,
                                  cpu_dnnl_params *p, dnnl_primitive_attr_t *attr)
{
  dnnl_post_ops_t post_ops = NULL;
  dnnl_status_t s = dnnl_primitive_attr_create(attr);
  if (s == dnnl_success)
    s = dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
  if (s == dnnl_success)
    s = dnnl_post_ops_create(&post_ops);
  if (s != dnnl_success) {
    if (*attr)
      dnnl_primitive_attr_destroy(*attr);
    *attr = NULL;
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: out of memory");
  }
  bool appended = !onto_output || dnnl_post_ops_append_sum(post_ops, 1.0f) == dnnl_success;
  eltwise_chain chain = {.post_ops = post_ops};
  for (uint32_t i = 0; i < op->activation_count && appended; i++)
    appended = &op->activations[i] == summed
                   ? dnnl_post_ops_append_sum(post_ops, 1.0f) == dnnl_success
               : op->activations[i].kind == NPU_HAL_ACTIVATION_ADD
                   ? append_addend(post_ops, op, &op->activations[i], view, p)
                   : append_activation(&chain, &op->activations[i]);
  appended = appended && dnnl_primitive_attr_set_post_ops(*attr, post_ops) == dnnl_success;
  dnnl_post_ops_destroy(post_ops);
  if (!appended) {
    dnnl_primitive_attr_destroy(*attr);
    *attr = NULL;
    return cpu_unsupported(op, "oneDNN has no post-op for this activation");
  }
  return NPU_OK;
}

/* Primitive attributes: the scratchpad comes from the launch's workspace,
 * and the op's fused activations run as post-ops. */
npu_status cpu_dnnl_make_attributes(const npu_hal_op *op, const dnnl_memory_desc_t *view,
                                    cpu_dnnl_params *p, dnnl_primitive_attr_t *attr)
{
  return make_attributes(op, view, NULL, false, p, attr);
}


npu_status cpu_dnnl_read_window(const npu_hal_op *op, const npu_hal_tensor_desc *w,
                                bool transposed, cpu_dnnl_window *g)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const npu_hal_window *window = op->window;
  if (x->rank < 3 || x->rank > 5 || w->rank != x->rank || !window)
    return cpu_unsupported(op, "oneDNN takes 1-D to 3-D windows");
  g->spatial = (int)x->rank - 2;
  g->group = window->group;
  int64_t in_channels = x->dims[1], out_channels = y->dims[1];
  if (g->group <= 0 || in_channels % g->group || out_channels % g->group)
    return cpu_unsupported(op, "channels do not divide into the groups");
  for (int d = 0; d < (int)x->rank; d++) {
    g->src[d] = x->dims[d];
    g->dst[d] = y->dims[d];
  }
  /* oneDNN's weights are (g, oc/g, ic/g, k...) for both; ONNX stores
   * ConvTranspose's as (ic, oc/g, k...), which is the same with i and o
   * swapped in memory. */
  bool fits = transposed ? w->dims[0] == in_channels && w->dims[1] * g->group == out_channels
                         : w->dims[0] == out_channels && w->dims[1] * g->group == in_channels;
  if (!fits)
    return cpu_unsupported(op, "the weights do not match the channels and groups");
  g->weights[0] = g->group;
  g->weights[1] = out_channels / g->group;
  g->weights[2] = in_channels / g->group;
  g->bias[0] = out_channels;
  for (int d = 0; d < g->spatial; d++) {
    int64_t kernel = w->dims[2 + d], in = x->dims[2 + d], outd = y->dims[2 + d];
    int64_t stride = window->strides[d], dilation = window->dilations[d];
    g->weights[3 + d] = kernel;
    g->strides[d] = stride;
    g->dilates[d] = dilation - 1;
    int64_t extent = (kernel - 1) * dilation + 1, begin = window->pad_begin[d];
    g->pad_begin[d] = begin;
    /* The end padding that makes oneDNN produce the inferred size (it
     * absorbs ConvTranspose's output_padding and Conv's floor). */
    g->pad_end[d] = transposed ? (in - 1) * stride + extent - begin - outd
                               : (outd - 1) * stride + extent - in - begin;
    if (g->pad_end[d] < 0 && transposed)
      return cpu_unsupported(op, "output_padding beyond the end padding");
  }
  return NPU_OK;
}

/* Whether oneDNN runs 16-float (AVX-512) vectors here. */
static bool wide_vectors(void)
{
  dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return isa == dnnl_cpu_isa_avx512_core || isa == dnnl_cpu_isa_avx512_core_vnni ||
         isa == dnnl_cpu_isa_avx512_core_bf16 || isa == dnnl_cpu_isa_avx512_core_amx;
}

npu_hal_layout cpu_dnnl_preferred_layout(const npu_hal_tensor_desc *t, uint32_t *block)
{
  pthread_once(&engine_once, create_engine);
  if (engine_status != dnnl_success || t->rank < 3 || t->rank > 5)
    return NPU_HAL_LAYOUT_CHANNELS_LAST;
  /* The JIT kernels' own blocking: 16 floats on AVX-512, 8 below. On
   * AVX-512, channels that fill no block of 16 (24, 40, 72, 120: MobileNetV3's
   * and EfficientNet's narrow stages) go channels-last, not into blocks of 8:
   * oneDNN runs AVX-512 convolutions there, AVX2 ones on blocks of 8 (with
   * reorders between 8- and 16-blocks around them). */
  *block = wide_vectors() ? 16 : 8;
  return t->dims[1] % *block == 0 ? NPU_HAL_LAYOUT_CHANNEL_BLOCKS : NPU_HAL_LAYOUT_CHANNELS_LAST;
}

dnnl_format_tag_t cpu_dnnl_layout_tag(const npu_hal_tensor_desc *tensor)
{
  return layout_tag(tensor);
}

bool cpu_dnnl_bf16_products(void)
{
  pthread_once(&engine_once, create_engine);
  if (engine_status != dnnl_success)
    return false;
  dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return isa == dnnl_cpu_isa_avx512_core_bf16 || isa == dnnl_cpu_isa_avx512_core_amx;
}

/* Whether oneDNN picked a JIT kernel (not its slow reference loops). */
bool cpu_dnnl_fast_implementation(const_dnnl_primitive_desc_t pd)
{
  const char *name = NULL;
  return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success &&
         name && strncmp(name, "ref", 3) != 0;
}

/* 0: oneDNN's reference loops; 1: a JIT kernel; 2 (where `widest` asks
 * for it): a JIT kernel on the machine's widest vectors. On AVX-512, tensors
 * in blocks of 8 channels get AVX2 kernels, which run half the lanes. */
static int implementation_rank(const_dnnl_primitive_desc_t pd, bool widest)
{
  const char *name = NULL;
  if (!cpu_dnnl_fast_implementation(pd) ||
      dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success)
    return 0;
  return widest && wide_vectors() && !strstr(name, "avx512") && !strstr(name, "amx") ? 1 : 2;
}

typedef struct reorder_job {
  dnnl_primitive_t reorder;
  dnnl_memory_t from, to;
  dnnl_status_t status;
} reorder_job;

static void run_reorder(void *data)
{
  reorder_job *job = data;
  dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, job->from}, {DNNL_ARG_TO, job->to}};
  job->status = dnnl_primitive_execute(job->reorder, stream, 2, args);
  if (job->status == dnnl_success)
    job->status = dnnl_stream_wait(stream);
}

/* Reorders the weights from their ONNX layout into the one the primitive chose. */
typedef struct weights_packing {
  npu_hal_device *device;
  const dnnl_memory_desc_t *user_md, *chosen_md;
  const void *values;
} weights_packing;

static bool pack_with_reorder(void *ctx, void *packed)
{
  const weights_packing *w = ctx;
  dnnl_memory_t user = NULL, chosen = NULL;
  dnnl_primitive_desc_t reorder_pd = NULL;
  reorder_job job = {NULL, NULL, NULL, dnnl_success};
  dnnl_status_t s = dnnl_memory_create(&user, w->user_md, engine, (void *)w->values);
  if (s == dnnl_success)
    s = dnnl_memory_create(&chosen, w->chosen_md, engine, packed);
  if (s == dnnl_success)
    s = dnnl_reorder_primitive_desc_create(&reorder_pd, w->user_md, engine, w->chosen_md, engine,
                                           NULL);
  if (s == dnnl_success)
    s = cpu_primitive_create(&job.reorder, reorder_pd);
  if (s == dnnl_success) {
    job.from = user;
    job.to = chosen;
    npu_cpu_run_on_engine(w->device, run_reorder, &job);
    s = job.status;
  }
  if (job.reorder)
    dnnl_primitive_destroy(job.reorder);
  if (reorder_pd)
    dnnl_primitive_desc_destroy(reorder_pd);
  if (chosen)
    dnnl_memory_destroy(chosen);
  if (user)
    dnnl_memory_destroy(user);
  return s == dnnl_success;
}

/* A packing is the same when the values are read in the same layout (a
 * transposed and a plain use of one matrix differ) and packed into the same. */
typedef struct packing_layouts {
  dnnl_memory_desc_t from, to;
  /* Input 0's dims in the kernel that packed them (not compared): its batch,
   * and the rest (an image size), padded with zeros; and the plan that made
   * it (cpu_deferred_plan). */
  int64_t batch, image[NPU_MAX_RANK - 1];
  uint64_t plan;
} packing_layouts;

static bool packing_layouts_equal(const void *a, const void *b)
{
  const packing_layouts *x = a, *y = b;
  return dnnl_memory_desc_equal(&x->from, &y->from) && dnnl_memory_desc_equal(&x->to, &y->to);
}

/* cpu_dnnl_pack_weights into `chosen`. */
static npu_status pack_weights_as(const npu_hal_op *op, uint32_t input, const void *values,
                                  const cpu_weights_id *id, bool lasting,
                                  const dnnl_memory_desc_t *chosen,
                                  const dnnl_memory_desc_t *user_md, npu_hal_kernel *k,
                                  cpu_dnnl_params *p)
{
  weights_packing packing = {k->device, user_md, chosen, values};
  packing_layouts layouts = {*user_md, *chosen, op->inputs[0].dims[0], {0},
                             cpu_deferred_plan()};
  for (uint32_t d = 1; d < op->inputs[0].rank; d++)
    layouts.image[d - 1] = op->inputs[0].dims[d];
  npu_status status = cpu_packed_weights_acquire(
      id, lasting ? values : NULL, &layouts, sizeof layouts, packing_layouts_equal,
      dnnl_memory_desc_get_size(chosen), pack_with_reorder, &packing, &p->packed_weights);
  if (status == NPU_OK && lasting)
    p->packed_from = values;
  if (status == NPU_ERROR_NOT_SUPPORTED)
    return cpu_unsupported(op, "oneDNN cannot reorder the weights");
  if (status != NPU_OK)
    return status;
  if (dnnl_memory_create(&p->weights, chosen, engine,
                         cpu_packed_weights_data(p->packed_weights)) != dnnl_success)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: cannot describe the packed weights");
  k->packed_inputs |= 1u << input;
  return NPU_OK;
}

npu_status cpu_dnnl_pack_weights(const npu_hal_op *op, uint32_t input, const void *values,
                                 const cpu_weights_id *id, bool lasting,
                                 dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *user_md,
                                 npu_hal_kernel *k, cpu_dnnl_params *p)
{
  return pack_weights_as(op, input, values, id, lasting,
                         dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), user_md, k,
                         p);
}

static size_t align64(size_t bytes)
{
  return (bytes + 63) / 64 * 64;
}

dnnl_status_t cpu_dnnl_describe_window(const cpu_dnnl_window *g, bool transposed,
                                       dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                                       const dnnl_memory_desc_t *weights,
                                       const dnnl_memory_desc_t *bias,
                                       const dnnl_memory_desc_t *dst, dnnl_primitive_attr_t attr,
                                       dnnl_primitive_desc_t *pd)
{
  dnnl_status_t s;
  if (transposed) {
    dnnl_deconvolution_desc_t desc;
    s = dnnl_dilated_deconvolution_forward_desc_init(
        &desc, dnnl_forward_inference, dnnl_deconvolution_direct, src, weights, bias, dst,
        g->strides, g->dilates, g->pad_begin, g->pad_end);
    return s == dnnl_success ? cpu_primitive_desc_create(pd, &desc, attr) : s;
  }
  dnnl_convolution_desc_t desc;
  s = dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, alg, src, weights,
                                                 bias, dst, g->strides, g->dilates, g->pad_begin,
                                                 g->pad_end);
  return s == dnnl_success ? cpu_primitive_desc_create(pd, &desc, attr) : s;
}

/* Winograd computes a 3x3 stride-1 convolution with about half the
 * multiplications (measured 1.5 to 2x faster than direct at 64 to 512
 * channels, batch 1, 2 threads). With fewer channels it still pays from 16
 * on each side (SqueezeNet's 16 -> 64 at 55x55: 0.18 against 0.26 ms, 32 ->
 * 128 at 27x27: 0.15 against 0.25, 1 thread; 1.05 to 2.5x faster over 16 to 64
 * in, 16 to 192 out at 14x14 to 112x112, batch 1; 1.1 to 1.3x at batch 8),
 * except at 16 -> 16, where the transforms cost about what they save. Channels
 * not in blocks of 16 (AVX2 machines, channels-last tensors) have no Winograd
 * kernel in oneDNN and stay direct. From 512 channels on it pays only at batch 1: in
 * ResNet-50 at batch 8 direct convolution is about as fast (2 loaded
 * threads; one thread: 9.6 ms direct, 6.8 F(4x4,3x3)), and Winograd's
 * larger weights and its workspace would cost 54 MiB. This is the first
 * plan's choice only: a model planned at batch 1 and re-planned at 8 runs
 * on its batch-1 Winograd weights (build_window). Its rounding error stays
 * near 1e-6 relative. */
static bool wants_winograd(const cpu_dnnl_window *g)
{
  return g->spatial == 2 && g->group == 1 && g->weights[3] == 3 && g->weights[4] == 3 &&
         g->strides[0] == 1 && g->strides[1] == 1 && g->dilates[0] == 0 && g->dilates[1] == 0 &&
         g->weights[1] >= 16 && g->weights[2] >= 16 && g->weights[1] + g->weights[2] > 32 &&
         (g->weights[1] < 512 || g->src[0] == 1);
}

/* A reorder between layouts and a memory object for the plain side. */
static dnnl_status_t make_reorder(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                                  dnnl_primitive_t *reorder, dnnl_memory_t *plain,
                                  const dnnl_memory_desc_t *plain_md)
{
  dnnl_primitive_desc_t pd;
  dnnl_status_t s = dnnl_reorder_primitive_desc_create(&pd, from, engine, to, engine, NULL);
  if (s != dnnl_success)
    return s;
  s = cpu_primitive_create(reorder, pd);
  dnnl_primitive_desc_destroy(pd);
  return s == dnnl_success ? dnnl_memory_create(plain, plain_md, engine, DNNL_MEMORY_NONE) : s;
}

/* Set while a sliced kernel's `whole` is built: its primitive is left to
 * the background compiler, which sets this once it is compiled. */
static _Thread_local atomic_bool *compiled_whole;

/* The primitive of `pd` (compiled now, or with the plan's others where the
 * plan defers them: cpu_deferred_add) and the memories bound to its src, dst and
 * scratchpad when it runs: the tensors themselves, or where the primitive
 * runs another layout (`run_src`, `run_dst`) than theirs (`src`, `dst`), a
 * copy in the workspace reordered on the way in or out. Sets the kernel's
 * workspace size (scratchpad first, then those copies). */
dnnl_status_t cpu_dnnl_make_primitive(dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *run_src,
                                      const dnnl_memory_desc_t *src,
                                      const dnnl_memory_desc_t *run_dst,
                                      const dnnl_memory_desc_t *dst, cpu_dnnl_params *p,
                                      npu_hal_kernel *k)
{
  const dnnl_memory_desc_t *scratch_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  size_t workspace = align64(dnnl_memory_desc_get_size(scratch_md));
  bool queued = compiled_whole ? cpu_deferred_add_background(pd, &p->primitive, compiled_whole)
                               : cpu_deferred_add(pd, &p->primitive);
  dnnl_status_t s = queued ? dnnl_success : cpu_primitive_create(&p->primitive, pd);
  if (!queued && s == dnnl_success && compiled_whole)
    atomic_store(compiled_whole, true);
  if (s == dnnl_success)
    s = dnnl_memory_create(&p->src, run_src, engine, DNNL_MEMORY_NONE);
  if (s == dnnl_success)
    s = dnnl_memory_create(&p->dst, run_dst, engine, DNNL_MEMORY_NONE);
  if (s == dnnl_success)
    s = dnnl_memory_create(&p->scratchpad, scratch_md, engine, DNNL_MEMORY_NONE);
  if (s == dnnl_success && !dnnl_memory_desc_equal(run_src, src)) {
    p->src_offset = workspace;
    workspace += align64(dnnl_memory_desc_get_size(run_src));
    s = make_reorder(src, run_src, &p->src_reorder, &p->plain_src, src);
  }
  if (s == dnnl_success && !dnnl_memory_desc_equal(run_dst, dst)) {
    p->dst_offset = workspace;
    workspace += align64(dnnl_memory_desc_get_size(run_dst));
    s = make_reorder(run_dst, dst, &p->dst_reorder, &p->plain_dst, dst);
  }
  k->workspace_bytes = workspace;
  return s;
}

/* The memory descriptors a window's primitive is chosen among. */
typedef struct window_mds {
  dnnl_memory_desc_t src, dst;         /* the tensors, in the layouts the runtime planned */
  dnnl_memory_desc_t run_src, run_dst; /* those, or format_any where they are plain */
  dnnl_memory_desc_t src_as_dst;       /* the input in the output's layout */
  dnnl_memory_desc_t any_src, any_dst, user_weights, bias;
} window_mds;

/* `products`: the element type the primitive multiplies, that of its
 * weights and of the input it runs on (bfloat16: the float32 input is
 * converted in the workspace on the way in). */
static void describe_tensors(const npu_hal_op *op, const cpu_dnnl_window *g, bool transposed,
                             dnnl_data_type_t products, window_mds *m)
{
  static const dnnl_format_tag_t grouped_weight_tags[] = {dnnl_abcd, dnnl_abcde, dnnl_abcdef};
  static const dnnl_format_tag_t grouped_transposed_tags[] = {dnnl_acbd, dnnl_acbde, dnnl_acbdef};
  int rank = g->spatial + 2, tag = g->spatial - 1;
  dnnl_memory_desc_init_by_tag(&m->src, rank, g->src, dnnl_f32, layout_tag(&op->inputs[0]));
  dnnl_memory_desc_init_by_tag(&m->dst, rank, g->dst, dnnl_f32, layout_tag(&op->outputs[0]));
  /* Relaid tensors are run as they are (the runtime chose their layout for
   * this primitive); for plain ones oneDNN picks, reordered in the workspace. */
  dnnl_memory_desc_init_by_tag(&m->any_src, rank, g->src, products, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&m->any_dst, rank, g->dst, dnnl_f32, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&m->run_src, rank, g->src, products, layout_tag(&op->inputs[0]));
  if (op->inputs[0].layout == NPU_HAL_LAYOUT_PLAIN)
    m->run_src = m->any_src;
  m->run_dst = op->outputs[0].layout == NPU_HAL_LAYOUT_PLAIN ? m->any_dst : m->dst;
  dnnl_memory_desc_init_by_tag(&m->src_as_dst, rank, g->src, products,
                               layout_tag(&op->outputs[0]));
  dnnl_memory_desc_init_by_tag(&m->user_weights, rank + 1, g->weights, dnnl_f32,
                               transposed ? grouped_transposed_tags[tag]
                                          : grouped_weight_tags[tag]);
  dnnl_memory_desc_init_by_tag(&m->bias, 1, g->bias, dnnl_f32, dnnl_a);
}

static bool winograd_weights(const dnnl_memory_desc_t *weights)
{
  return weights->format_kind == dnnl_format_kind_wino;
}

/* Whether the window multiplies at least 64 values per element it reads
 * or writes: then a kernel on twice the lanes pays for reordering a tensor
 * in the workspace (SqueezeNet's 512 -> 1000 1x1 convolution on 8-channel
 * blocks: 1.8 ms on AVX2 kernels against 1.0 on AVX-512's, 1 thread). Not
 * for the first convolution on 3 channels nor depthwise ones: they read
 * and write more than they compute, and ran 1.4 to 1.5x as long so. */
static bool dense_window(const cpu_dnnl_window *g)
{
  int64_t src = 1, dst = 1, products = g->weights[2];
  for (int d = 0; d < g->spatial + 2; d++) {
    src *= g->src[d];
    dst *= g->dst[d];
  }
  for (int d = 0; d < g->spatial; d++)
    products *= g->weights[3 + d];
  return products * dst >= 64 * (src + dst);
}

/* Whether oneDNN 2.6 is known to have only its reference loops for a
 * window between these layouts: channel blocks on one side, channels-last
 * on the other (a projection to a width that fills no block, or back), past
 * the first layers' few input channels. Every such layer of MobileNetV2 (3)
 * and PP-OCRv4 det (12) came out so, each description some 0.1 to 0.3 ms
 * of a plan's CPU, at every batch and image size. */
static bool mixed_channel_layouts(const cpu_dnnl_window *g, const window_mds *m)
{
  const dnnl_memory_desc_t *src = &m->run_src, *dst = &m->run_dst;
  return g->weights[2] > 4 && src->format_kind == dnnl_blocked &&
         dst->format_kind == dnnl_blocked &&
         (src->format_desc.blocking.inner_nblks == 0) !=
             (dst->format_desc.blocking.inner_nblks == 0);
}

/* The fastest primitive for the window with `weights` (format_any: packed
 * as oneDNN picks; else already packed in that layout): Winograd first if
 * `winograd`, else the algorithm those weights are packed for, in the
 * tensors' layouts. Unless that leaves oneDNN only its reference loops for
 * this shape (say, channels-last in and channel blocks out), or a dense
 * window narrower vectors than the machine has (dense_window): then
 * oneDNN's own choice for one tensor, the smaller, reordered in the
 * workspace (it may pad it to a whole block), else the input in the
 * output's layout (the layout of a fused residual addend), else oneDNN's
 * choice for both. Where the tensors' layouts are known to get only the
 * reference loops (mixed_channel_layouts), they are described after the
 * others, and only if none of those is fast: the choice is the same. */
static dnnl_status_t describe_fastest(const cpu_dnnl_window *g, bool transposed, bool winograd,
                                      const window_mds *m, const dnnl_memory_desc_t *weights,
                                      const dnnl_memory_desc_t *bias, dnnl_primitive_attr_t attr,
                                      dnnl_primitive_desc_t *pd)
{
  dnnl_alg_kind_t alg =
      winograd_weights(weights) ? dnnl_convolution_winograd : dnnl_convolution_direct;
  dnnl_status_t s = !transposed && winograd && alg == dnnl_convolution_direct
                        ? cpu_dnnl_describe_window(g, false, dnnl_convolution_winograd,
                                                   &m->run_src, weights, bias, &m->run_dst,
                                                   attr, pd)
                        : dnnl_unimplemented;
  bool own_layouts_last = mixed_channel_layouts(g, m);
  if (s != dnnl_success && !own_layouts_last)
    s = cpu_dnnl_describe_window(g, transposed, alg, &m->run_src, weights, bias, &m->run_dst,
                                 attr, pd);
  bool own_layouts_pending = s != dnnl_success && own_layouts_last;
  bool src_larger = dnnl_memory_desc_get_size(&m->src) >= dnnl_memory_desc_get_size(&m->dst);
  const dnnl_memory_desc_t *fallbacks[][2] = {
      {src_larger ? &m->run_src : &m->any_src, src_larger ? &m->any_dst : &m->run_dst},
      {&m->src_as_dst, &m->run_dst}, /* before oneDNN's choice, which may be plain */
      {src_larger ? &m->any_src : &m->run_src, src_larger ? &m->run_dst : &m->any_dst},
      {&m->any_src, &m->any_dst},
  };
  bool widest = dense_window(g);
  for (size_t f = 0; f < 4 && (s != dnnl_success || implementation_rank(*pd, widest) < 2); f++) {
    dnnl_primitive_desc_t chosen = NULL;
    if (cpu_dnnl_describe_window(g, transposed, alg, fallbacks[f][0], weights, bias,
                                 fallbacks[f][1], attr, &chosen) == dnnl_success &&
        (s != dnnl_success ||
         implementation_rank(chosen, widest) > implementation_rank(*pd, widest))) {
      if (*pd)
        dnnl_primitive_desc_destroy(*pd);
      *pd = chosen;
      s = dnnl_success;
    } else if (chosen) {
      dnnl_primitive_desc_destroy(chosen);
    }
  }
  /* The tensors' own layouts win a tie, as when they are described first. */
  if (own_layouts_pending && (s != dnnl_success || implementation_rank(*pd, widest) < 2)) {
    dnnl_primitive_desc_t own = NULL;
    if (cpu_dnnl_describe_window(g, transposed, alg, &m->run_src, weights, bias, &m->run_dst,
                                 attr, &own) == dnnl_success &&
        (s != dnnl_success ||
         implementation_rank(own, widest) >= implementation_rank(*pd, widest))) {
      if (s == dnnl_success)
        dnnl_primitive_desc_destroy(*pd);
      *pd = own;
      s = dnnl_success;
    } else if (own) {
      dnnl_primitive_desc_destroy(own);
    }
  }
  return s;
}

/* The window on slices of `slice` images with `weights` and `alg`, where
 * oneDNN has a fast primitive for that: sets `sliced` to the slice's tensors
 * and p's slices. */
static dnnl_status_t describe_slice(const npu_hal_op *op, const cpu_dnnl_window *g, int64_t slice,
                                    dnnl_alg_kind_t alg, const dnnl_memory_desc_t *weights,
                                    const dnnl_memory_desc_t *bias, dnnl_primitive_attr_t attr,
                                    cpu_dnnl_params *p, window_mds *sliced,
                                    dnnl_primitive_desc_t *pd)
{
  cpu_dnnl_window part = *g;
  part.src[0] = part.dst[0] = slice;
  describe_tensors(op, &part, false, dnnl_f32, sliced);
  dnnl_primitive_desc_t chosen = NULL;
  if (cpu_dnnl_describe_window(&part, false, alg, &sliced->src, weights, bias, &sliced->dst, attr,
                               &chosen) == dnnl_success &&
      cpu_dnnl_fast_implementation(chosen)) {
    *pd = chosen;
    p->slices = (uint32_t)(g->src[0] / slice);
    p->src_slice_bytes = dnnl_memory_desc_get_size(&sliced->src);
    p->dst_slice_bytes = dnnl_memory_desc_get_size(&sliced->dst);
    return dnnl_success;
  }
  if (chosen)
    dnnl_primitive_desc_destroy(chosen);
  return dnnl_unimplemented;
}

/* A fast primitive on `weights` as packed for a smaller batch, run on the
 * batch a slice of images at a time: the largest slice that divides the
 * batch and that oneDNN takes those weights for (oneDNN's Winograd weight
 * formats depend on the batch: those packed for batch 1 are refused at 2).
 * Only for tensors run in their own layouts (their images contiguous) and
 * no fused inputs (those would be sliced too). Sets `sliced` to the
 * slice's tensors. */
static dnnl_status_t describe_sliced(const npu_hal_op *op, const cpu_dnnl_window *g,
                                     const dnnl_memory_desc_t *weights,
                                     const dnnl_memory_desc_t *bias, dnnl_primitive_attr_t attr,
                                     cpu_dnnl_params *p, window_mds *sliced,
                                     dnnl_primitive_desc_t *pd)
{
  dnnl_alg_kind_t alg =
      winograd_weights(weights) ? dnnl_convolution_winograd : dnnl_convolution_direct;
  if (p->addend_count || op->fused_input_count)
    return dnnl_unimplemented;
  int64_t batch = g->src[0];
  for (int64_t slice = batch / 2; slice >= 1; slice--)
    if (batch % slice == 0 &&
        describe_slice(op, g, slice, alg, weights, bias, attr, p, sliced, pd) == dnnl_success)
      return dnnl_success;
  return dnnl_unimplemented;
}

/* Whether oneDNN runs `pd` as F(2x2,3x3) Winograd (jit_fp32_wino_2x3). */
static bool winograd_2x2(const_dnnl_primitive_desc_t pd)
{
  const char *name = NULL;
  return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success &&
         name && strstr(name, "wino_2x3");
}

/* oneDNN takes its F(2x2,3x3) Winograd only for a small problem (its own
 * heuristic: the input and weights within the caches, a batch of at most the
 * thread count), else F(4x4,3x3), which rounds more (fcn_resnet50's
 * 64-channel 80x80 layers: F(2x2) for one image, F(4x4) for two, 8.0e-5
 * against 1.05e-4 relative L2 from ORT at its outputs). Where one image gets
 * F(2x2) and the batch `pd` (Winograd) does not, the batch runs an image at
 * a time on F(2x2), as a model planned at batch 1 and re-planned for the
 * batch already does (describe_sliced): each image's result is then the
 * same at every batch. */
static void prefer_image_winograd_2x2(const npu_hal_op *op, const cpu_dnnl_window *g,
                                      const dnnl_memory_desc_t *any_weights,
                                      const dnnl_memory_desc_t *bias, dnnl_primitive_attr_t attr,
                                      cpu_dnnl_params *p, window_mds *sliced,
                                      dnnl_primitive_desc_t *pd)
{
  if (g->src[0] < 2 || p->addend_count || op->fused_input_count ||
      !winograd_weights(dnnl_primitive_desc_query_md(*pd, dnnl_query_weights_md, 0)) ||
      winograd_2x2(*pd))
    return;
  dnnl_primitive_desc_t image = NULL;
  if (describe_slice(op, g, 1, dnnl_convolution_winograd, any_weights, bias, attr, p, sliced,
                     &image) != dnnl_success)
    return;
  if (winograd_2x2(image)) {
    dnnl_primitive_desc_destroy(*pd);
    *pd = image;
  } else {
    dnnl_primitive_desc_destroy(image);
    p->slices = 0;
  }
}

/* Weights already packed for another shape of the model (kernels of other
 * batch sizes share them): their layouts, when read from the same. */
enum { MAX_EARLIER_PACKINGS = 4 };

static size_t earlier_packings(const cpu_weights_id *id, const dnnl_memory_desc_t *user_weights,
                               dnnl_data_type_t products,
                               packing_layouts earlier[MAX_EARLIER_PACKINGS])
{
  packing_layouts found[MAX_EARLIER_PACKINGS];
  size_t count = cpu_packed_weights_layouts(id, sizeof *found, found, MAX_EARLIER_PACKINGS);
  size_t kept = 0;
  for (size_t i = 0; i < count && i < MAX_EARLIER_PACKINGS; i++)
    if (dnnl_memory_desc_equal(&found[i].from, user_weights) &&
        found[i].to.data_type == products)
      earlier[kept++] = found[i];
  return kept;
}

/* Whether the kernel that made a packing had input 0's image size (all
 * dims but the batch). */
static bool same_image(const packing_layouts *packing, const npu_hal_tensor_desc *x)
{
  for (uint32_t d = 1; d < x->rank; d++)
    if (packing->image[d - 1] != x->dims[d])
      return false;
  return true;
}

/* Of the earlier packings made at x's image size, the one made for the
 * largest batch below x's that divides it (its kernel can run the batch
 * in slices); NULL: none. */
static const packing_layouts *packing_to_slice(const packing_layouts *earlier, size_t count,
                                               const npu_hal_tensor_desc *x)
{
  const packing_layouts *planned = NULL;
  int64_t batch = x->dims[0];
  for (size_t i = 0; i < count; i++)
    if (same_image(&earlier[i], x) && earlier[i].batch < batch && batch % earlier[i].batch == 0 &&
        (!planned || earlier[i].batch > planned->batch))
      planned = &earlier[i];
  return planned;
}

/* The op's only fused Add, where it adds a float32 tensor of the output's
 * shape (a residual connection); else NULL. */
static const npu_hal_activation *only_residual(const npu_hal_op *op)
{
  const npu_hal_activation *found = NULL;
  for (uint32_t i = 0; i < op->activation_count; i++)
    if (op->activations[i].kind == NPU_HAL_ACTIVATION_ADD) {
      if (found)
        return NULL;
      found = &op->activations[i];
    }
  const npu_hal_tensor_desc *y = &op->outputs[0];
  if (!found || found->input >= op->fused_input_count || y->dtype != NPU_DTYPE_FLOAT32)
    return NULL;
  const npu_hal_tensor_desc *t = &op->fused_inputs[found->input];
  if (t->dtype != NPU_DTYPE_FLOAT32 || t->rank != y->rank)
    return NULL;
  for (uint32_t d = 0; d < t->rank; d++)
    if (t->dims[d] != y->dims[d])
      return NULL;
  return found;
}

/* How a residual Add runs where a binary post-op keeps oneDNN from its
 * fastest primitive:
 * - RESIDUAL_UNBLOCKED: into a channels-last or plain output from an input
 *   in channel blocks (or a plain one, reordered into blocks), the Add last.
 *   oneDNN fuses an Add only into an output in the addend's layout, which its
 *   fast kernels reach from blocks only by reordering the input, the wider
 *   tensor in a projection, to channels-last first (and a plain output only
 *   by its GEMM convolution). Instead the
 *   convolution writes channel blocks into the workspace (the last block
 *   padded) and cpu_unblock_add moves them to the output adding the addend:
 *   EfficientNet-B0's 144 -> 24 projection at batch 8 took 3.7 ms so against
 *   1.9 ms on one thread (oneDNN alone, 56x56); PoolFormer's 1280 -> 320 at
 *   14x14 into its plain residual stream (kept plain by GroupNorm's
 *   Reshape) 2.0 ms on the GEMM convolution, 2 threads; a diffusion UNet's
 *   3x3 128 -> 128 at 16x16 from and into plain tensors 1.0 ms so.
 * - RESIDUAL_SUMMED: a Winograd convolution (wants_winograd) with the Add in
 *   the output's layout. oneDNN's Winograd kernels take a sum post-op but no
 *   binary one, so such a convolution ran direct: the addend is copied into
 *   the output and summed onto (ResNet-18's 64 -> 64 at 56x56 with its Relu:
 *   0.56 ms against 1.19 direct, one thread, batch 1). */
typedef enum residual_form {
  RESIDUAL_BINARY, /* as a binary post-op, or no residual */
  RESIDUAL_UNBLOCKED,
  RESIDUAL_SUMMED,
} residual_form;

static residual_form residual_form_of(const npu_hal_op *op, bool transposed,
                                      dnnl_data_type_t products)
{
  const npu_hal_activation *residual = only_residual(op);
  if (transposed || products != dnnl_f32 || !residual)
    return RESIDUAL_BINARY;
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0],
                            *t = &op->fused_inputs[residual->input];
  bool unblocked_output = (y->layout == NPU_HAL_LAYOUT_CHANNELS_LAST ||
                           y->layout == NPU_HAL_LAYOUT_PLAIN) && t->layout == y->layout;
  bool blocks_in = x->layout == NPU_HAL_LAYOUT_CHANNEL_BLOCKS ||
                   (x->layout == NPU_HAL_LAYOUT_PLAIN && y->layout == NPU_HAL_LAYOUT_PLAIN);
  if (residual == &op->activations[op->activation_count - 1] && blocks_in && unblocked_output)
    return RESIDUAL_UNBLOCKED;
  if (t->layout == y->layout && t->block == y->block)
    return RESIDUAL_SUMMED;
  return RESIDUAL_BINARY;
}

/* A convolution over few input channels with a large window (a network's
 * first: 3 channels, 7x7) is summed per input channel: one primitive per
 * channel, each on that channel's plane of the (plain) input, the later ones
 * summing onto the output (a sum post-op; the bias with the first, the op's
 * activations with the last). One primitive sums all channels' products in
 * one float32 chain (oneDNN: 147 of them in ResNet's stem, in (kh, kw,
 * channel) order), whose rounding grows with its partial sums; per channel
 * it is ORT's order, and ResNet-101 amplifies its stem's rounding some 200x
 * (README, "Accuracy of resnet101 and fcn_resnet50"). The parts cost about
 * what the whole does (each part reads and writes the whole output: SqueezeNet
 * 1.0's 3 -> 96, 7x7 stride 2 took some 5% more, 0.1 ms, one thread). Up
 * to 4 channels: beyond, the parts would each have too little to compute. */
static int64_t window_taps(const cpu_dnnl_window *g)
{
  int64_t taps = 1;
  for (int d = 0; d < g->spatial; d++)
    taps *= g->weights[3 + d];
  return taps;
}

static bool wants_channel_parts(const npu_hal_op *op, const cpu_dnnl_window *g)
{
  return g->group == 1 && g->weights[2] >= 2 && g->weights[2] <= 4 && window_taps(g) >= 25 &&
         op->inputs[0].layout == NPU_HAL_LAYOUT_PLAIN && op->fused_input_count == 0;
}

/* Input channel `channel` of `channels`'s part (see wants_channel_parts). */
typedef struct channel_part {
  int64_t channel, channels;
} channel_part;

/* The part's window: one image of one input channel (the parts run a slice
 * per image, on the input's planes where they are); weights: that channel's,
 * read in place from the op's (O, C, k...) values. */
static void describe_part(const npu_hal_op *op, const channel_part *part, cpu_dnnl_window *g,
                          window_mds *m)
{
  int64_t taps = window_taps(g);
  g->src[0] = g->dst[0] = 1;
  g->src[1] = g->weights[2] = 1;
  describe_tensors(op, g, false, dnnl_f32, m);
  m->run_dst = m->dst; /* the parts sum onto the output itself */
  dnnl_dims_t strides = {part->channels * taps * g->weights[1], part->channels * taps, taps};
  int64_t step = 1;
  for (int d = g->spatial - 1; d >= 0; d--) {
    strides[3 + d] = step;
    step *= g->weights[3 + d];
  }
  dnnl_memory_desc_init_by_strides(&m->user_weights, g->spatial + 3, g->weights, dnnl_f32,
                                   strides);
  m->user_weights.offset0 = part->channel * taps;
}

/* `weights_id`: the op's weights' (cpu_packed_weights_identify). `replica`:
 * NULL, or the packing that an earlier plan of this model made for this op
 * at its batch: oneDNN's choice is then made again exactly as that first
 * plan made it, so that oneDNN finds that plan's primitive in its cache
 * instead of compiling one, and refused unless it comes out on those very
 * weights. `products`: see describe_tensors. `form`: that of the residual
 * Add (refused unless it gets the fast primitive it is for). `part`: NULL,
 * or the input channel whose share this kernel computes (float32, no
 * residual, refused unless it runs on the tensors as they are). */
static npu_status build_window_kernel(const npu_hal_op *op, npu_hal_kernel *k, bool transposed,
                                      dnnl_data_type_t products,
                                      const cpu_weights_id *weights_id,
                                      const dnnl_memory_desc_t *replica, residual_form form,
                                      const channel_part *part)
{
  const npu_hal_activation *residual = form != RESIDUAL_BINARY ? only_residual(op) : NULL;
  bool unblocked = form == RESIDUAL_UNBLOCKED, summed = form == RESIDUAL_SUMMED;
  pthread_once(&engine_once, create_engine);
  if (engine_status != dnnl_success)
    return cpu_unsupported(op, "no oneDNN CPU engine");
  if (!op->input_values[1])
    return cpu_unsupported(op, "weights computed at run time");
  /* oneDNN 2.6 applies deconvolution post-ops outside its JIT code, some
   * fifty times slower than running them apart. */
  if (transposed && op->activation_count)
    return cpu_unsupported(op, "no fused activations on deconvolution");
  bool has_bias = op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED;
  cpu_dnnl_window g;
  if (op->inputs[0].dtype != NPU_DTYPE_FLOAT32 || op->inputs[1].dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "oneDNN's float32 windows take float32 tensors");
  npu_status status = cpu_dnnl_read_window(op, &op->inputs[1], transposed, &g);
  if (status != NPU_OK)
    return status;
  if (summed && !wants_winograd(&g))
    return cpu_unsupported(op, "a summed residual is for Winograd convolutions");
  window_mds m, sliced;
  int64_t batch = g.src[0];
  if (part)
    describe_part(op, part, &g, &m);
  else
    describe_tensors(op, &g, transposed, products, &m);
  has_bias = has_bias && (!part || part->channel == 0);
  npu_hal_tensor_desc blocked_out = op->outputs[0]; /* the output as the primitive writes it */
  if (unblocked) { /* in the input's blocks, or (a plain input) the backend's */
    blocked_out.layout = NPU_HAL_LAYOUT_CHANNEL_BLOCKS;
    blocked_out.block = op->inputs[0].block;
    if (op->inputs[0].layout == NPU_HAL_LAYOUT_PLAIN)
      cpu_dnnl_preferred_layout(&op->inputs[0], &blocked_out.block);
    dnnl_memory_desc_init_by_tag(&m.dst, g.spatial + 2, g.dst, dnnl_f32,
                                 layout_tag(&blocked_out));
    m.run_dst = m.src_as_dst = m.dst;
  }
  dnnl_memory_desc_t any_weights_md;
  dnnl_memory_desc_init_by_tag(&any_weights_md, g.spatial + 3, g.weights, products,
                               dnnl_format_tag_any);

  cpu_dnnl_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = cpu_dnnl_free_params;
  p->bias_input = 2;

  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t s = dnnl_unimplemented;
  npu_hal_op without_residual = *op;
  if (unblocked)
    without_residual.activation_count--;
  if (part && part->channel < part->channels - 1) /* they follow the last channel's */
    without_residual.activation_count = 0;
  status = make_attributes(&without_residual, NULL, summed ? residual : NULL,
                           part && part->channel > 0, p, &attr);
  if (status != NPU_OK)
    goto done;
  const dnnl_memory_desc_t *bias = has_bias ? &m.bias : NULL;
  /* Another shape of this model packed these weights already: run on that
   * packing if oneDNN has a fast primitive for it, on the whole batch, else
   * a slice at a time; else pack them again as oneDNN picks for this shape
   * (the first shape's choice is never changed by later ones). */
  packing_layouts earlier[MAX_EARLIER_PACKINGS];
  size_t earlier_count =
      replica || part ? 0 : earlier_packings(weights_id, &m.user_weights, products, earlier);
  for (size_t i = 0; i < earlier_count && s != dnnl_success; i++) {
    s = describe_fastest(&g, transposed, false, &m, &earlier[i].to, bias, attr, &pd);
    if (s == dnnl_success && !cpu_dnnl_fast_implementation(pd)) {
      dnnl_primitive_desc_destroy(pd);
      pd = NULL;
      s = dnnl_unimplemented;
    }
  }
  for (size_t i = 0; i < earlier_count && s != dnnl_success && !transposed &&
                     products == dnnl_f32; i++) /* slices skip the input's conversion */
    s = describe_sliced(op, &g, &earlier[i].to, bias, attr, p, &sliced, &pd);
  if (s != dnnl_success) {
    bool winograd = !transposed && products == dnnl_f32 && wants_winograd(&g);
    s = describe_fastest(&g, transposed, winograd, &m, &any_weights_md, bias, attr, &pd);
    if (s == dnnl_success && winograd && !replica && !part && !summed && !unblocked)
      prefer_image_winograd_2x2(op, &g, &any_weights_md, bias, attr, p, &sliced, &pd);
  }
  if (s != dnnl_success) {
    status = cpu_unsupported(op, "oneDNN has no implementation for this shape");
    goto done;
  }
  if (replica &&
      !dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                              replica)) {
    /* oneDNN picks another packing for this shape: a fast primitive on the
     * replica's, if it has one (described as picked, above, a first plan's
     * primitive comes from oneDNN's cache; described on the packing, it is
     * compiled). */
    dnnl_primitive_desc_destroy(pd);
    pd = NULL;
    s = describe_fastest(&g, transposed, false, &m, replica, bias, attr, &pd);
    if (s != dnnl_success || !cpu_dnnl_fast_implementation(pd)) {
      status = cpu_unsupported(op, "the first plan's choice is not on the packed weights");
      goto done;
    }
  }
  if (unblocked && (implementation_rank(pd, true) < 2 ||
                    !dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                                            &m.dst))) {
    status = cpu_unsupported(op, "no fast primitive writes the input's channel blocks");
    goto done;
  }
  if (part && (!cpu_dnnl_fast_implementation(pd) ||
               !dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                                       &m.src) ||
               !dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                                       &m.dst))) {
    status = cpu_unsupported(op, "no fast primitive on one input channel in place");
    goto done;
  }
  if (summed && (!winograd_weights(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0)) ||
                 !dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                                         &m.dst))) {
    status = cpu_unsupported(op, "no Winograd primitive sums onto the output");
    goto done;
  }
  status = cpu_dnnl_pack_weights(op, 1, op->input_values[1], weights_id, true, pd,
                                 &m.user_weights, k, p);
  if (status != NPU_OK)
    goto done;
  const window_mds *tensors = p->slices > 1 ? &sliced : &m;
  s = cpu_dnnl_make_primitive(pd, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                              &tensors->src, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                              &tensors->dst, p, k);
  if (s == dnnl_success && has_bias)
    s = dnnl_memory_create(&p->bias, &m.bias, engine, DNNL_MEMORY_NONE);
  if (s != dnnl_success)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: cannot create the %s primitive",
                           op->op_type);
  if (part) { /* an image a slice; the output's images whole */
    p->slices = (uint32_t)batch;
    p->src_slice_bytes = dnnl_memory_desc_get_size(&m.src) * (size_t)part->channels;
    p->dst_slice_bytes = dnnl_memory_desc_get_size(&m.dst);
    p->channel_offset = dnnl_memory_desc_get_size(&m.src) * (size_t)part->channel;
  }
  if (summed) {
    p->summed_input = op->input_count + residual->input;
    p->summed_bytes = cpu_tensor_elements(&op->outputs[0]) * sizeof(float);
  }
  if (unblocked) { /* the blocks in the workspace, after the scratchpad */
    const npu_hal_tensor_desc *y = &op->outputs[0];
    p->dst_offset = k->workspace_bytes;
    k->workspace_bytes += align64(dnnl_memory_desc_get_size(&m.dst));
    p->unblocked = (cpu_unblocked_sum){.addend_input = op->input_count + residual->input,
                                       .images = y->dims[0], .channels = y->dims[1],
                                       .positions = 1, .block = blocked_out.block,
                                       .plain = y->layout == NPU_HAL_LAYOUT_PLAIN};
    for (uint32_t d = 2; d < y->rank; d++)
      p->unblocked.positions *= y->dims[d];
  }
  k->run = cpu_dnnl_run;
done:
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  return status;
}

/* `k` as it came before a kernel was built on it. */
static void forget_kernel(npu_hal_kernel *k)
{
  if (k->free_params)
    k->free_params(k->params);
  k->params = NULL;
  k->free_params = NULL;
  k->packed_inputs = 0;
  k->workspace_bytes = 0;
}

/* The op as one kernel of its input channels' parts (wants_channel_parts),
 * run one after another; NPU_ERROR_NOT_SUPPORTED where one has no fast
 * primitive (k is then as it came). */
static npu_status build_channel_parts(const npu_hal_op *op, npu_hal_kernel *k,
                                      const cpu_weights_id *weights_id)
{
  channel_part part = {0, op->inputs[0].dims[1]};
  cpu_dnnl_params *first = NULL, **last = &first;
  npu_status status = NPU_OK;
  size_t workspace = 0;
  for (; part.channel < part.channels && status == NPU_OK; part.channel++) {
    npu_hal_kernel one = *k;
    one.params = NULL;
    one.free_params = NULL;
    status = build_window_kernel(op, &one, false, dnnl_f32, weights_id, NULL, RESIDUAL_BINARY,
                                 &part);
    *last = one.params; /* freed with the first */
    if (*last)
      last = &(*last)->next_channel;
    k->packed_inputs |= one.packed_inputs;
    if (one.workspace_bytes > workspace)
      workspace = one.workspace_bytes;
  }
  k->params = first;
  k->free_params = cpu_dnnl_free_params;
  k->workspace_bytes = workspace;
  k->run = cpu_dnnl_run;
  if (status != NPU_OK)
    forget_kernel(k);
  return status;
}

/* build_window_kernel with the op's input channels summed apart where
 * wants_channel_parts, and its residual Add in the form that gets a faster
 * primitive where one does, else as a binary post-op. */
static npu_status build_window_choosing(const npu_hal_op *op, npu_hal_kernel *k, bool transposed,
                                        dnnl_data_type_t products,
                                        const cpu_weights_id *weights_id,
                                        const dnnl_memory_desc_t *replica)
{
  cpu_dnnl_window g;
  if (!transposed && products == dnnl_f32 && !replica &&
      cpu_dnnl_read_window(op, &op->inputs[1], false, &g) == NPU_OK &&
      wants_channel_parts(op, &g)) {
    npu_status status = build_channel_parts(op, k, weights_id);
    if (status != NPU_ERROR_NOT_SUPPORTED)
      return status;
  }
  residual_form form = residual_form_of(op, transposed, products);
  if (form != RESIDUAL_BINARY) {
    npu_status status =
        build_window_kernel(op, k, transposed, products, weights_id, replica, form, NULL);
    if (status != NPU_ERROR_NOT_SUPPORTED)
      return status;
    forget_kernel(k);
  }
  return build_window_kernel(op, k, transposed, products, weights_id, replica, RESIDUAL_BINARY,
                             NULL);
}

/* (PP-OCRv4 det's 20x20 layers on 384 channels ran as fast in slices of 1
 * as whole at batch 8: 1x1 0.88 to 0.93x, depthwise 5x5 1.09x of 0.5 ms) */
enum { MIN_SLICE_POSITIONS = 20 * 20 };

/* `whole`, built while compiled_whole pointed at k's whole_ready, becomes
 * what k runs once its primitive is compiled (the workspace fits both). */
static void run_when_compiled(npu_hal_kernel *k, const npu_hal_kernel *whole)
{
  cpu_dnnl_params *p = k->params;
  p->whole = whole->params;
  if (whole->workspace_bytes > k->workspace_bytes)
    k->workspace_bytes = whole->workspace_bytes;
}

/* The kernel described exactly as an earlier plan described it at this
 * batch, on that plan's packing (oneDNN's cache then hands over that plan's
 * primitive: nothing is compiled or packed); `k` is left as it came where
 * it fails. */
static npu_status build_as_planned(const npu_hal_op *op, npu_hal_kernel *k, bool transposed,
                                   const cpu_weights_id *weights_id,
                                   const dnnl_memory_desc_t *planned_weights)
{
  npu_status status = build_window_choosing(op, k, transposed, dnnl_f32, weights_id,
                                            planned_weights);
  if (status != NPU_OK)
    forget_kernel(k);
  return status;
}

/* An op and what a kernel build reads through it, owned: to build a
 * kernel on another thread after the plan's op is gone. */
typedef struct owned_op {
  npu_hal_op op;
  npu_hal_tensor_desc inputs[3], output, fused_inputs[NPU_HAL_MAX_ACTIVATIONS];
  npu_hal_activation activations[NPU_HAL_MAX_ACTIVATIONS];
  npu_hal_window window;
  const void *input_values[3];
} owned_op;

/* false where the op has more than fits. */
static bool own_op(const npu_hal_op *op, owned_op *o)
{
  if (op->input_count > 3 || op->output_count != 1 ||
      op->activation_count > NPU_HAL_MAX_ACTIVATIONS ||
      op->fused_input_count > NPU_HAL_MAX_ACTIVATIONS)
    return false;
  o->op = *op;
  memcpy(o->inputs, op->inputs, op->input_count * sizeof *op->inputs);
  memcpy(o->input_values, op->input_values, op->input_count * sizeof *op->input_values);
  o->output = op->outputs[0];
  if (op->fused_input_count) /* (NULL where there are none) */
    memcpy(o->fused_inputs, op->fused_inputs, op->fused_input_count * sizeof *op->fused_inputs);
  if (op->activation_count)
    memcpy(o->activations, op->activations, op->activation_count * sizeof *op->activations);
  if (op->window)
    o->window = *op->window;
  o->op.inputs = o->inputs;
  o->op.outputs = &o->output;
  o->op.input_values = o->input_values;
  o->op.fused_inputs = o->fused_inputs;
  o->op.activations = o->activations;
  o->op.window = op->window ? &o->window : NULL;
  /* (the node itself may be gone: its attributes and name are not read) */
  o->op.attributes = (npu_hal_attributes){0};
  o->op.name = NULL;
  o->op.axes = NULL;
  o->op.ranges = NULL;
  for (uint32_t i = 0; i < op->input_count; i++)
    o->inputs[i].quant = (npu_hal_quant){0};
  o->output.quant = (npu_hal_quant){0};
  return true;
}

/* What a direct kernel runs: a window (Conv, ConvTranspose where
 * `transposed`) or a product (MatMul, Gemm: B transposed where `trans_b`,
 * C input `bias_input` or -1). */
typedef struct direct_kind {
  bool product, transposed, trans_b;
  int32_t bias_input;
} direct_kind;

/* A direct kernel's oneDNN primitive for its own shape, made in the background. */
typedef struct whole_job {
  owned_op op;
  direct_kind kind;
  npu_hal_device *device;
  cpu_weights_id weights_id;
  dnnl_memory_desc_t packed; /* the direct kernel's packing, which it must run on */
  cpu_dnnl_params *owner;
} whole_job;

static npu_status build_product(const npu_hal_op *op, npu_hal_kernel *k, bool trans_a,
                                bool trans_b, int32_t bias_input, dnnl_data_type_t products,
                                const cpu_weights_id *weights_id,
                                const dnnl_memory_desc_t *replica);

static bool make_whole(void *context)
{
  whole_job *job = context;
  const direct_kind *kind = &job->kind;
  npu_hal_kernel whole = {.device = job->device};
  npu_status status =
      kind->product ? build_product(&job->op.op, &whole, false, kind->trans_b, kind->bias_input,
                                    dnnl_f32, &job->weights_id, &job->packed)
                    : build_as_planned(&job->op.op, &whole, kind->transposed, &job->weights_id,
                                       &job->packed);
  if (status != NPU_OK) {
    forget_kernel(&whole);
    return false; /* the direct kernel stays */
  }
  cpu_dnnl_params *p = whole.params;
  if (whole.workspace_bytes &&
      !(p->own_workspace = aligned_alloc(64, align64(whole.workspace_bytes)))) {
    cpu_dnnl_free_params(p);
    return false;
  }
  job->owner->whole = p;
  return true;
}

/* A convolution or product on an earlier plan's packing `planned` run by
 * loops of ours (direct_conv.h), which compile nothing, and swapped for
 * oneDNN's primitive for this shape on the same packing once the background
 * compiler has made it (without packing the weights again: where oneDNN's
 * choice for this shape is another packing, the loops stay).
 * NPU_ERROR_NOT_SUPPORTED where the loops do not take the op (k is then as
 * it came). */
static npu_status build_direct(const npu_hal_op *op, npu_hal_kernel *k, const direct_kind *kind,
                               const cpu_weights_id *weights_id, const packing_layouts *planned)
{
  /* Only in a re-plan: a first plan (weights shared by layers of other
   * shapes in one model, FPN heads say) makes its primitives as before. */
  uint64_t plan = cpu_deferred_plan();
  if (!plan || planned->plan == plan)
    return NPU_ERROR_NOT_SUPPORTED;
  /* (oneDNN's deconvolution would refuse them: see build_window_kernel) */
  if (kind->transposed && op->activation_count)
    return NPU_ERROR_NOT_SUPPORTED;
  whole_job *job = malloc(sizeof *job);
  cpu_dnnl_params *p = calloc(1, sizeof *p);
  npu_status status = job && p ? NPU_OK : npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  if (status == NPU_OK && !own_op(op, &job->op))
    status = NPU_ERROR_NOT_SUPPORTED;
  if (status == NPU_OK) {
    k->params = p;
    k->free_params = cpu_dnnl_free_params;
    status = pack_weights_as(op, 1, op->input_values[1], weights_id, true, &planned->to,
                             &planned->from, k, p);
  }
  const float *packed = status == NPU_OK ? cpu_packed_weights_data(p->packed_weights) : NULL;
  if (status == NPU_OK)
    status = kind->product ? cpu_direct_conv_create_matmul(op, kind->bias_input, &planned->to,
                                                           packed, &p->direct)
                           : cpu_direct_conv_create(op, kind->transposed, &planned->to, packed,
                                                    &p->direct);
  if (status != NPU_OK) {
    if (k->params)
      forget_kernel(k);
    else
      free(p);
    free(job);
    return status;
  }
  k->run = cpu_dnnl_run;
  k->workspace_bytes = 0;
  job->device = k->device;
  job->weights_id = *weights_id;
  job->packed = planned->to;
  job->kind = *kind;
  job->owner = p;
  cpu_background_task task = {make_whole, free, job};
  if (!cpu_deferred_add_background_task(&task, p, &p->whole_ready))
    free(job); /* the loops run on */
  return NPU_OK;
}

/* NPU_CPU_DIRECT_CONV=always (for tests): every convolution the direct
 * loops take runs them, on the weights its primitive was given, and never
 * its primitive (compiled all the same). */
static bool direct_always(void)
{
  const char *value = getenv("NPU_CPU_DIRECT_CONV");
  return value && strcmp(value, "always") == 0;
}

static void run_direct_always(const npu_hal_op *op, npu_hal_kernel *k, bool transposed)
{
  cpu_dnnl_params *p = k->params;
  if (k->run != cpu_dnnl_run || p->direct || p->whole || p->next_channel || p->slices > 1 ||
      !p->packed_weights || !p->weights || (transposed && op->activation_count))
    return;
  const dnnl_memory_desc_t *md;
  if (dnnl_memory_get_memory_desc(p->weights, &md) == dnnl_success)
    cpu_direct_conv_create(op, transposed, md, cpu_packed_weights_data(p->packed_weights),
                           &p->direct);
}

/* A convolution or deconvolution at a batch an earlier plan of the model
 * packed its weights for is described as that plan did (see
 * build_as_planned); at a multiple of such a batch it runs that plan's
 * kernel once per slice of that batch, its inputs, output and fused addends
 * moved on by a slice's bytes each time. NPU_ERROR_NOT_SUPPORTED where
 * neither applies (k is then as it came). */
static npu_status build_planned_slices(const npu_hal_op *op, npu_hal_kernel *k, bool transposed,
                                       const cpu_weights_id *weights_id)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  int64_t batch = x->dims[0];
  cpu_dnnl_window g;
  if (op->input_count > 3 || x->rank < 3 ||
      cpu_dnnl_read_window(op, &op->inputs[1], transposed, &g) != NPU_OK)
    return NPU_ERROR_NOT_SUPPORTED;
  window_mds m;
  describe_tensors(op, &g, transposed, dnnl_f32, &m);
  packing_layouts earlier[MAX_EARLIER_PACKINGS];
  size_t earlier_count = earlier_packings(weights_id, &m.user_weights, dnnl_f32, earlier);
  for (size_t i = 0; i < earlier_count; i++)
    if (earlier[i].batch == batch && same_image(&earlier[i], x))
      return build_as_planned(op, k, transposed, weights_id, &earlier[i].to);
  const packing_layouts *planned = packing_to_slice(earlier, earlier_count, x);
  /* A first plan runs the whole batch: slices of batch 1 there would spare
   * a later plan for batch 1 its compiles, but cost steady runs 5-10% at
   * batch 8 (MobileNetV2, YOLOv8n, quiet A/B). Another image size, or a
   * batch no earlier one divides, runs loops of ours on the newest packing
   * while oneDNN describes and compiles its primitive in the background. */
  if (!planned && earlier_count > 0) {
    direct_kind kind = {.transposed = transposed, .bias_input = -1};
    npu_status status = build_direct(op, k, &kind, weights_id, &earlier[0]);
    if (status != NPU_ERROR_NOT_SUPPORTED)
      return status;
  }
  for (size_t i = 0; i < earlier_count && !planned; i++)
    if (earlier[i].batch == batch)
      return build_as_planned(op, k, transposed, weights_id, &earlier[i].to);
  if (!planned)
    return NPU_ERROR_NOT_SUPPORTED;
  int64_t slice = planned->batch;
  int64_t positions = slice;
  for (uint32_t d = 2; d < y->rank; d++)
    positions *= y->dims[d];
  npu_hal_kernel whole = *k; /* as it came */

  /* The op at that batch: its activations, and its addends of the
   * output's shape, a slice of the batch; biases as they are. */
  npu_hal_tensor_desc inputs[3], output = *y, addends[NPU_HAL_MAX_ACTIVATIONS];
  memcpy(inputs, op->inputs, op->input_count * sizeof inputs[0]);
  inputs[0].dims[0] = output.dims[0] = slice;
  bool sliced_addend[NPU_HAL_MAX_ACTIVATIONS] = {false};
  for (uint32_t i = 0; i < op->fused_input_count && i < NPU_HAL_MAX_ACTIVATIONS; i++) {
    addends[i] = op->fused_inputs[i];
    sliced_addend[i] = cpu_tensor_elements(&addends[i]) == cpu_tensor_elements(y);
    if (sliced_addend[i] && addends[i].dims[0] != batch)
      return NPU_ERROR_NOT_SUPPORTED;
    if (sliced_addend[i])
      addends[i].dims[0] = slice;
    else if (addends[i].rank > 0 && addends[i].dims[0] == batch)
      return NPU_ERROR_NOT_SUPPORTED; /* neither the output's shape nor a bias */
  }
  npu_hal_op part = *op;
  part.inputs = inputs;
  part.outputs = &output;
  part.fused_inputs = addends;
  npu_status status =
      build_as_planned(&part, k, transposed, weights_id, &planned->to);
  if (status != NPU_OK)
    return status;
  cpu_dnnl_params *p = k->params;
  p->slices = (uint32_t)(batch / slice);
  p->src_slice_bytes = cpu_tensor_elements(&inputs[0]) * sizeof(float);
  p->dst_slice_bytes = cpu_tensor_elements(&output) * sizeof(float);
  for (uint32_t i = 0; i < p->addend_count; i++) {
    uint32_t fused = p->addend_inputs[i] - op->input_count;
    p->addend_slice_bytes[i] =
        sliced_addend[fused] ? cpu_tensor_elements(&addends[fused]) * sizeof(float) : 0;
  }
  /* Large slices run about as fast as the whole batch, and stay. A slice
   * with few output positions leaves the threads too little work each time
   * (MobileNetV2 at batch 8 ran its 14x14 and 7x7 layers slower in slices of
   * 1): those run in slices only until the whole batch on the same packed
   * weights, described as a first plan at this batch would, is compiled in
   * the background, and where that plan would pack them otherwise (say
   * Winograd weights for another batch), get a primitive of their own for
   * the whole batch now. (Every layer swapped in this way made a re-plan's
   * steady runs exactly a first plan's, but describing the whole batches
   * cost PP-OCRv4 det's re-plan from 1 to 8 twice its CPU time.) */
  if (positions >= MIN_SLICE_POSITIONS)
    return NPU_OK;
  compiled_whole = &p->whole_ready;
  npu_status whole_status = build_as_planned(op, &whole, transposed, weights_id, &planned->to);
  compiled_whole = NULL;
  if (whole_status != NPU_OK) {
    forget_kernel(k);
    return NPU_ERROR_NOT_SUPPORTED;
  }
  run_when_compiled(k, &whole);
  return NPU_OK;
}

/* Batch slices run float32 products only (they skip the input's conversion). */
static npu_status build_window(const npu_hal_op *op, npu_hal_kernel *k, bool transposed,
                               dnnl_data_type_t products)
{
  if (!op->input_values[1])
    return cpu_unsupported(op, "weights computed at run time");
  if (op->inputs[1].dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "oneDNN's float32 windows take float32 tensors");
  /* (plain float32 weights: as many bytes as oneDNN's user_weights describe) */
  cpu_weights_id weights_id = cpu_packed_weights_identify(
      op->input_values[1], cpu_tensor_elements(&op->inputs[1]) * sizeof(float));
  npu_status status = products != dnnl_f32 ? NPU_ERROR_NOT_SUPPORTED
                                           : build_planned_slices(op, k, transposed, &weights_id);
  if (status == NPU_ERROR_NOT_SUPPORTED)
    status = build_window_choosing(op, k, transposed, products, &weights_id, NULL);
  if (status == NPU_OK && direct_always())
    run_direct_always(op, k, transposed);
  return status;
}

/* ---- MatMul and Gemm ------------------------------------------------------------- */

void cpu_dnnl_matrix_md(dnnl_memory_desc_t *md, int rank, const dnnl_dims_t dims, bool transposed,
                      dnnl_data_type_t type)
{
  dnnl_dims_t strides;
  int64_t step = 1;
  for (int d = rank - 1; d >= 0; d--) {
    int axis = transposed && d >= rank - 2 ? (d == rank - 1 ? rank - 2 : rank - 1) : d;
    strides[axis] = step;
    step *= dims[axis];
  }
  dnnl_memory_desc_init_by_strides(md, rank, dims, type, strides);
}

/* Y = A B (+ bias) through oneDNN's matmul: A (.., M, K), B (.., K, N), both
 * brought to Y's rank with leading 1s (broadcast batches). `products`
 * bfloat16 (B constant only): A is converted in the workspace, B packed so.
 * `weights_id`: constant B's (cpu_packed_weights_identify). `replica`: NULL,
 * or the packing of B an earlier plan made: refused unless oneDNN's choice
 * comes out on it (see build_window_kernel). */
static npu_status build_product(const npu_hal_op *op, npu_hal_kernel *k, bool trans_a,
                                bool trans_b, int32_t bias_input, dnnl_data_type_t products,
                                const cpu_weights_id *weights_id,
                                const dnnl_memory_desc_t *replica)
{
  pthread_once(&engine_once, create_engine);
  if (engine_status != dnnl_success)
    return cpu_unsupported(op, "no oneDNN CPU engine");
  const npu_hal_tensor_desc *a = &op->inputs[0], *b = &op->inputs[1], *y = &op->outputs[0];
  if (a->dtype != NPU_DTYPE_FLOAT32 || b->dtype != NPU_DTYPE_FLOAT32 || a->rank < 2 ||
      b->rank < 2 || y->rank > DNNL_MAX_NDIMS || a->layout || b->layout || y->layout)
    return cpu_unsupported(op, "oneDNN takes plain float32 matrices of rank 2 or more");
  int rank = (int)y->rank;
  dnnl_dims_t a_dims, b_dims, y_dims, bias_dims;
  for (int d = 0; d < rank; d++) {
    int da = d - (rank - (int)a->rank), db = d - (rank - (int)b->rank);
    y_dims[d] = y->dims[d];
    a_dims[d] = da >= 0 ? a->dims[da] : 1;
    b_dims[d] = db >= 0 ? b->dims[db] : 1;
  }
  if (trans_a) { /* the dims as the product sees them */
    int64_t t = a_dims[rank - 1];
    a_dims[rank - 1] = a_dims[rank - 2];
    a_dims[rank - 2] = t;
  }
  if (trans_b) {
    int64_t t = b_dims[rank - 1];
    b_dims[rank - 1] = b_dims[rank - 2];
    b_dims[rank - 2] = t;
  }
  /* Weights without batch axes: A's batches are more rows of one product
   * (a [197, 1, 768] x [768, 2304] attention projection is one 197-row GEMM,
   * not 197 single-row ones that each read all the weights). */
  bool batched_b = false;
  for (int d = 0; d < rank - 2; d++)
    batched_b |= b_dims[d] != 1;
  if (!batched_b && !trans_a && rank > 2 && bias_input < 0) {
    for (int d = 0; d < rank - 2; d++) {
      a_dims[rank - 2] *= a_dims[d];
      y_dims[rank - 2] *= y_dims[d];
    }
    a_dims[0] = a_dims[rank - 2], a_dims[1] = a_dims[rank - 1];
    y_dims[0] = y_dims[rank - 2], y_dims[1] = y_dims[rank - 1];
    b_dims[0] = b_dims[rank - 2], b_dims[1] = b_dims[rank - 1];
    rank = 2;
  }
  dnnl_memory_desc_t a_md, run_a_md, b_md, user_b_md, any_b_md, y_md, bias_md;
  bool packed = op->input_values[1] != NULL;
  if (!packed && products != dnnl_f32)
    return cpu_unsupported(op, "bfloat16 products need constant weights");
  cpu_dnnl_matrix_md(&a_md, rank, a_dims, trans_a, dnnl_f32);
  cpu_dnnl_matrix_md(&run_a_md, rank, a_dims, trans_a, products);
  cpu_dnnl_matrix_md(&user_b_md, rank, b_dims, trans_b, dnnl_f32);
  cpu_dnnl_matrix_md(&y_md, rank, y_dims, false, dnnl_f32);
  dnnl_memory_desc_init_by_tag(&any_b_md, rank, b_dims, products, dnnl_format_tag_any);
  b_md = packed ? any_b_md : user_b_md;
  if (bias_input >= 0) { /* Gemm's C: broadcast to (M, N) from a shape of rank 0 to 2 */
    const npu_hal_tensor_desc *c = &op->inputs[bias_input];
    for (int d = 0; d < rank; d++) {
      int dc = d - (rank - (int)c->rank);
      bias_dims[d] = dc >= 0 ? c->dims[dc] : 1;
    }
    cpu_dnnl_matrix_md(&bias_md, rank, bias_dims, false, dnnl_f32);
  }

  cpu_dnnl_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = cpu_dnnl_free_params;
  p->bias_input = bias_input >= 0 ? (uint32_t)bias_input : 0;
  npu_status status = NPU_OK;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_matmul_desc_t desc;
  dnnl_status_t s;
  status = cpu_dnnl_make_attributes(op, rank < (int)y->rank ? &y_md : NULL, p, &attr);
  if (status != NPU_OK)
    goto done;
  s = dnnl_matmul_desc_init(&desc, &run_a_md, &b_md, bias_input >= 0 ? &bias_md : NULL, &y_md);
  if (s == dnnl_success)
    s = cpu_primitive_desc_create(&pd, &desc, attr);
  if (s != dnnl_success || !cpu_dnnl_fast_implementation(pd)) {
    status = cpu_unsupported(op, "oneDNN has no fast matmul for these shapes");
    goto done;
  }
  if (replica &&
      !dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                              replica)) {
    /* oneDNN picks another packing for these rows (say BA16a48b for
     * BA16a64b): a fast primitive on the replica's, if it has one (described
     * as picked, above, an earlier plan's primitive comes from oneDNN's
     * cache; described on the packing, it is compiled). */
    dnnl_primitive_desc_destroy(pd);
    pd = NULL;
    s = replica->ndims == rank ? dnnl_matmul_desc_init(&desc, &run_a_md, replica,
                                                       bias_input >= 0 ? &bias_md : NULL, &y_md)
                               : dnnl_invalid_arguments;
    if (s == dnnl_success)
      s = cpu_primitive_desc_create(&pd, &desc, attr);
    if (s != dnnl_success || !cpu_dnnl_fast_implementation(pd)) {
      status = cpu_unsupported(op, "the first plan's choice is not on the packed weights");
      goto done;
    }
  }
  if (packed)
    status = cpu_dnnl_pack_weights(op, 1, op->input_values[1], weights_id, true, pd, &user_b_md,
                                   k, p);
  if (status != NPU_OK)
    goto done;
  s = cpu_dnnl_make_primitive(pd, &run_a_md, &a_md, &y_md, &y_md, p, k);
  if (s == dnnl_success && !packed)
    s = dnnl_memory_create(&p->weights, &user_b_md, engine, DNNL_MEMORY_NONE);
  if (s == dnnl_success && bias_input >= 0)
    s = dnnl_memory_create(&p->bias, &bias_md, engine, DNNL_MEMORY_NONE);
  if (s != dnnl_success)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: cannot create the %s primitive",
                           op->op_type);
  k->run = cpu_dnnl_run;
done:
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  return status;
}

/* The earlier packings of a product's constant 2-D weights `b` (float32,
 * read transposed where `trans_b`). */
static size_t product_packings(const npu_hal_tensor_desc *b, bool trans_b,
                               const cpu_weights_id *weights_id,
                               packing_layouts earlier[MAX_EARLIER_PACKINGS])
{
  dnnl_dims_t b_dims = {trans_b ? b->dims[1] : b->dims[0], trans_b ? b->dims[0] : b->dims[1]};
  dnnl_memory_desc_t user_b_md;
  cpu_dnnl_matrix_md(&user_b_md, 2, b_dims, trans_b, dnnl_f32);
  return earlier_packings(weights_id, &user_b_md, dnnl_f32, earlier);
}

/* A product of rows (A and Y of rank 2) by constant weights at a multiple
 * of a batch an earlier plan packed them for: that plan's kernel, taken from
 * oneDNN's cache, runs a slice of the rows at a time until the whole
 * batch's, described as a first plan at this batch describes it, is
 * compiled in the background (each slice reads all the weights: MobileNetV2's
 * 1280 x 1000 Gemm at batch 8 would read them 8 times); only where that comes
 * out on the same packed weights. So a re-plan from 1 to 8 compiles no
 * matmul (brgemm, 0.6 to 1.5 ms of CPU). NPU_ERROR_NOT_SUPPORTED where this
 * does not apply (k is then as it came). */
static npu_status build_product_slices(const npu_hal_op *op, npu_hal_kernel *k, bool trans_a,
                                       bool trans_b, int32_t bias_input,
                                       const cpu_weights_id *weights_id)
{
  const npu_hal_tensor_desc *a = &op->inputs[0], *b = &op->inputs[1], *y = &op->outputs[0];
  if (!op->input_values[1] || trans_a || a->rank != 2 || b->rank != 2 || y->rank != 2 ||
      op->input_count > 3 || op->fused_input_count || a->dtype != NPU_DTYPE_FLOAT32 ||
      b->dtype != NPU_DTYPE_FLOAT32 ||
      (bias_input >= 0 &&
       cpu_tensor_elements(&op->inputs[bias_input]) != (size_t)y->dims[1]))
    return NPU_ERROR_NOT_SUPPORTED;
  packing_layouts earlier[MAX_EARLIER_PACKINGS];
  size_t earlier_count = product_packings(b, trans_b, weights_id, earlier);
  const packing_layouts *planned = packing_to_slice(earlier, earlier_count, a);
  if (!planned)
    return NPU_ERROR_NOT_SUPPORTED;
  npu_hal_tensor_desc inputs[3], output = *y;
  memcpy(inputs, op->inputs, op->input_count * sizeof inputs[0]);
  inputs[0].dims[0] = output.dims[0] = planned->batch;
  npu_hal_op part = *op;
  part.inputs = inputs;
  part.outputs = &output;
  npu_hal_kernel whole = *k; /* as it came */
  npu_status status =
      build_product(&part, k, trans_a, trans_b, bias_input, dnnl_f32, weights_id, &planned->to);
  cpu_dnnl_params *p = k->params;
  if (status == NPU_OK) {
    p->slices = (uint32_t)(a->dims[0] / planned->batch);
    p->src_slice_bytes = cpu_tensor_elements(&inputs[0]) * sizeof(float);
    p->dst_slice_bytes = cpu_tensor_elements(&output) * sizeof(float);
    compiled_whole = &p->whole_ready;
    status = build_product(op, &whole, trans_a, trans_b, bias_input, dnnl_f32, weights_id,
                           &planned->to);
    compiled_whole = NULL;
  }
  if (status != NPU_OK) {
    forget_kernel(&whole);
    forget_kernel(k);
    return NPU_ERROR_NOT_SUPPORTED;
  }
  run_when_compiled(k, &whole);
  return NPU_OK;
}

/* A product in slices of an earlier plan's where one applies (float32
 * products), else build_product. Constant float32 weights are identified
 * once (a first plan hashes them). */
/* A product whose constant weights an earlier plan packed for other rows
 * (a sequence of another length) and that no earlier kernel of these rows
 * has: it runs on the direct loops until oneDNN's primitive for these rows
 * is compiled in the background (see build_direct). NPU_ERROR_NOT_SUPPORTED
 * where this does not apply (k is then as it came). */
static npu_status build_product_direct(const npu_hal_op *op, npu_hal_kernel *k, bool trans_b,
                                       int32_t bias_input, const cpu_weights_id *weights_id)
{
  const npu_hal_tensor_desc *a = &op->inputs[0], *b = &op->inputs[1];
  if (b->rank != 2 || a->rank < 2)
    return NPU_ERROR_NOT_SUPPORTED;
  packing_layouts earlier[MAX_EARLIER_PACKINGS];
  size_t earlier_count = product_packings(b, trans_b, weights_id, earlier);
  for (size_t i = 0; i < earlier_count; i++)
    if (earlier[i].batch == a->dims[0] && same_image(&earlier[i], a))
      return NPU_ERROR_NOT_SUPPORTED; /* (its primitive is in oneDNN's cache) */
  if (earlier_count == 0 || earlier[0].to.ndims != 2)
    return NPU_ERROR_NOT_SUPPORTED;
  direct_kind kind = {.product = true, .trans_b = trans_b, .bias_input = bias_input};
  return build_direct(op, k, &kind, weights_id, &earlier[0]);
}

static npu_status build_product_planned(const npu_hal_op *op, npu_hal_kernel *k, bool trans_a,
                                        bool trans_b, int32_t bias_input,
                                        dnnl_data_type_t products)
{
  const npu_hal_tensor_desc *b = &op->inputs[1];
  cpu_weights_id weights_id = {0};
  bool constant = op->input_values[1] && b->dtype == NPU_DTYPE_FLOAT32;
  if (constant)
    weights_id = cpu_packed_weights_identify(op->input_values[1],
                                             cpu_tensor_elements(b) * sizeof(float));
  npu_status status = constant && products == dnnl_f32
                          ? build_product_slices(op, k, trans_a, trans_b, bias_input, &weights_id)
                          : NPU_ERROR_NOT_SUPPORTED;
  if (status == NPU_ERROR_NOT_SUPPORTED && constant && products == dnnl_f32 && !trans_a)
    status = build_product_direct(op, k, trans_b, bias_input, &weights_id);
  return status == NPU_ERROR_NOT_SUPPORTED
             ? build_product(op, k, trans_a, trans_b, bias_input, products, &weights_id, NULL)
             : status;
}

/* Gemm with alpha = 1 and beta = 1 (other scales stay with the plain kernel). */
static npu_status build_gemm(const npu_hal_op *op, npu_hal_kernel *k, dnnl_data_type_t products)
{
  const npu_hal_attributes *a = &op->attributes;
  bool has_c = op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED;
  if (a->get_float(a->node, "alpha", 1.0f) != 1.0f ||
      (has_c && a->get_float(a->node, "beta", 1.0f) != 1.0f) ||
      (has_c && op->inputs[2].dtype != NPU_DTYPE_FLOAT32))
    return cpu_unsupported(op, "alpha or beta other than 1");
  return build_product_planned(op, k, a->get_int(a->node, "transA", 0) != 0,
                               a->get_int(a->node, "transB", 0) != 0, has_c ? 2 : -1, products);
}

/* ---- pooling ---------------------------------------------------------------------- */

/* MaxPool and AveragePool in the tensors' layouts (the global ones have a
 * kernel of their own, see nn.c). */
static npu_status build_pool(const npu_hal_op *op, npu_hal_kernel *k)
{
  pthread_once(&engine_once, create_engine);
  if (engine_status != dnnl_success)
    return cpu_unsupported(op, "no oneDNN CPU engine");
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  const npu_hal_attributes *a = &op->attributes;
  bool global = strncmp(op->op_type, "Global", 6) == 0, max = strstr(op->op_type, "Max");
  /* (8-bit: the maximum of quantised values, see qdq_rewrite.c) */
  bool bytes = max && (x->dtype == NPU_DTYPE_UINT8 || x->dtype == NPU_DTYPE_INT8);
  dnnl_data_type_t type = !bytes ? dnnl_f32 : x->dtype == NPU_DTYPE_INT8 ? dnnl_s8 : dnnl_u8;
  if ((x->dtype != NPU_DTYPE_FLOAT32 && !bytes) || x->rank < 3 || x->rank > 5 ||
      op->output_count > 1 || a->get_int(a->node, "storage_order", 0) != 0)
    return cpu_unsupported(op, "oneDNN pools float32 (MaxPool: also 8-bit) 1-D to 3-D "
                               "windows, no indices");
  bool include_pad = op->window && op->window->count_include_pad;
  int spatial = (int)x->rank - 2;
  const npu_hal_window *window = op->window;
  if (!global && !window)
    return cpu_unsupported(op, "no resolved window");
  dnnl_dims_t src_dims, dst_dims, kernel, stride, dilate, pad_begin, pad_end;
  for (int d = 0; d < (int)x->rank; d++) {
    src_dims[d] = x->dims[d];
    dst_dims[d] = y->dims[d];
  }
  for (int d = 0; d < spatial; d++) {
    int64_t in = x->dims[2 + d], out = y->dims[2 + d];
    kernel[d] = global ? in : window->kernel[d];
    stride[d] = global ? 1 : window->strides[d];
    int64_t dilation = global ? 1 : window->dilations[d];
    dilate[d] = dilation - 1;
    int64_t extent = (kernel[d] - 1) * dilation + 1, total = (out - 1) * stride[d] + extent - in;
    pad_begin[d] = global ? 0 : window->pad_begin[d];
    /* The end padding that gives the inferred size (ceil_mode adds some). */
    pad_end[d] = total - pad_begin[d] > 0 ? total - pad_begin[d] : 0;
    int64_t given_end = global ? pad_end[d] : window->pad_end[d];
    if (!max && include_pad && pad_end[d] > given_end)
      return cpu_unsupported(op, "ceil_mode windows past the padding counted as padding");
  }
  dnnl_memory_desc_t src_md, dst_md;
  dnnl_memory_desc_init_by_tag(&src_md, (int)x->rank, src_dims, type, layout_tag(x));
  dnnl_memory_desc_init_by_tag(&dst_md, (int)y->rank, dst_dims, type, layout_tag(y));
  dnnl_alg_kind_t alg = max           ? dnnl_pooling_max
                        : include_pad ? dnnl_pooling_avg_include_padding
                                      : dnnl_pooling_avg_exclude_padding;
  cpu_dnnl_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = cpu_dnnl_free_params;
  npu_status status = NPU_OK;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_pooling_v2_desc_t desc;
  dnnl_status_t s;
  status = cpu_dnnl_make_attributes(op, NULL, p, &attr);
  if (status != NPU_OK)
    goto done;
  /* oneDNN's fast pooling writes the layout it reads: the output is pooled
   * in the input's layout, then reordered (in the workspace) if the runtime
   * planned another one for it. Any implementation will do: the runtime
   * chose these layouts for the kernels around. */
  dnnl_memory_desc_t pooled_md;
  dnnl_memory_desc_init_by_tag(&pooled_md, (int)y->rank, dst_dims, type, layout_tag(x));
  s = dnnl_pooling_v2_forward_desc_init(&desc, dnnl_forward_inference, alg, &src_md, &pooled_md,
                                        stride, kernel, dilate, pad_begin, pad_end);
  if (s == dnnl_success)
    s = cpu_primitive_desc_create(&pd, &desc, attr);
  if (s != dnnl_success) {
    status = cpu_unsupported(op, "oneDNN cannot pool this shape");
    goto done;
  }
  s = cpu_dnnl_make_primitive(pd, &src_md, &src_md, &pooled_md, &dst_md, p, k);
  if (s != dnnl_success)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "oneDNN: cannot create the %s primitive",
                           op->op_type);
  k->run = cpu_dnnl_run;
done:
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  return status;
}


/* ---- entries --------------------------------------------------------------------- */

static npu_status create_conv(const npu_hal_op *op, npu_hal_kernel *k)
{
  return build_window(op, k, false, dnnl_f32);
}

static npu_status create_conv_transpose(const npu_hal_op *op, npu_hal_kernel *k)
{
  return build_window(op, k, true, dnnl_f32);
}

static npu_status create_matmul(const npu_hal_op *op, npu_hal_kernel *k)
{
  return build_product_planned(op, k, false, false, -1, dnnl_f32);
}

static npu_status create_gemm(const npu_hal_op *op, npu_hal_kernel *k)
{
  return build_gemm(op, k, dnnl_f32);
}

/* NPU_PRECISION_BF16 on a CPU that multiplies bfloat16 natively: the same
 * primitives on bfloat16 inputs and weights (float32 sums, outputs and
 * post-ops). Their entries come first; where they are not asked for or
 * oneDNN has no fast form, the float32 ones after them are tried. */
static bool bf16_asked(const npu_hal_op *op)
{
  return op->precision == NPU_PRECISION_BF16 && cpu_dnnl_bf16_products();
}

static npu_status create_conv_bf16(const npu_hal_op *op, npu_hal_kernel *k)
{
  return bf16_asked(op) ? build_window(op, k, false, dnnl_bf16)
                        : cpu_unsupported(op, "float32 products");
}

static npu_status create_conv_transpose_bf16(const npu_hal_op *op, npu_hal_kernel *k)
{
  return bf16_asked(op) ? build_window(op, k, true, dnnl_bf16)
                        : cpu_unsupported(op, "float32 products");
}

static npu_status create_matmul_bf16(const npu_hal_op *op, npu_hal_kernel *k)
{
  return bf16_asked(op) ? build_product_planned(op, k, false, false, -1, dnnl_bf16)
                        : cpu_unsupported(op, "float32 products");
}

static npu_status create_gemm_bf16(const npu_hal_op *op, npu_hal_kernel *k)
{
  return bf16_asked(op) ? build_gemm(op, k, dnnl_bf16) : cpu_unsupported(op, "float32 products");
}

const cpu_kernel_entry cpu_dnnl_kernels[] = {
    {"Conv", create_conv_bf16, CPU_LAYOUTS_ANY, true, CPU_ONEDNN_BLOCKS},
    {"ConvTranspose", create_conv_transpose_bf16, CPU_LAYOUTS_ANY, true, CPU_ONEDNN_BLOCKS},
    {"MatMul", create_matmul_bf16, CPU_LAYOUTS_PLAIN, true},
    {"Gemm", create_gemm_bf16, CPU_LAYOUTS_PLAIN, true},
    {"Conv", create_conv, CPU_LAYOUTS_ANY, true, CPU_ONEDNN_BLOCKS},
    {"ConvTranspose", create_conv_transpose, CPU_LAYOUTS_ANY, true, CPU_ONEDNN_BLOCKS},
    {"MatMul", create_matmul, CPU_LAYOUTS_PLAIN, true},
    {"Gemm", create_gemm, CPU_LAYOUTS_PLAIN, true},
    {"MaxPool", build_pool, CPU_LAYOUTS_ANY, true, CPU_ONEDNN_BLOCKS},
    {"AveragePool", build_pool, CPU_LAYOUTS_ANY, true, CPU_ONEDNN_BLOCKS},
    {NULL, NULL, CPU_LAYOUTS_PLAIN},
};
