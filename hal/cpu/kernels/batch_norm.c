/* BatchNormalization (inference): y = x * s + o per channel, with
 * s = scale / sqrt(variance + epsilon) and o = bias - mean * s, in whatever
 * layout the planner gives x and y (plain, channels-last, channel blocks;
 * the four statistics stay [C] vectors), with the fused activations applied
 * as each piece is written, the pieces spread over the device's threads.
 * Where a normalisation follows a convolution the graph folds it into the
 * weights; this runs the ones that come first, as pre-activation networks
 * (DenseNet, ResNet v2) put them before their convolutions, with the Relu
 * between them fused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "activations.h"
#include "cpu_kernels.h"

/* Per image, a tensor is `groups` runs of `positions` x `lanes` values,
 * `lanes` channels side by side at each position: plain, one channel a
 * group; channels-last, one group of every channel; channel blocks, a block
 * a group. */
typedef struct batch_norm_params {
  float epsilon;
  int64_t images, channels, positions, lanes, groups;
  int64_t chunk_positions, chunks; /* a task: a chunk of one group's positions */
  uint32_t activation_count;
  npu_hal_activation activations[NPU_HAL_MAX_ACTIVATIONS];
} batch_norm_params;

typedef struct batch_norm_job {
  const batch_norm_params *p;
  const float *x, *scale, *bias, *mean, *variance;
  float *y;
} batch_norm_job;

/* Values a task normalises (the positions of a chunk times its lanes), and
 * the channels whose factors it computes at a time. */
enum { TASK_VALUES = 16384, LANE_CHUNK = 256 };

/* A plain tensor's run of one channel: one factor. */
NPU_VECTOR_CLONES
static void normalise_run(const float *restrict x, float *restrict y, int64_t count, float factor,
                          float shift)
{
  for (int64_t i = 0; i < count; i++)
    y[i] = x[i] * factor + shift;
}

NPU_VECTOR_CLONES
static void normalise_lanes(const float *restrict x, float *restrict y, int64_t positions,
                            int64_t step, int64_t width, const float *restrict factor,
                            const float *restrict shift)
{
  for (int64_t s = 0; s < positions; s++)
    for (int64_t l = 0; l < width; l++)
      y[s * step + l] = x[s * step + l] * factor[l] + shift[l];
}

static void normalise_task(void *ctx, size_t task)
{
  const batch_norm_job *job = ctx;
  const batch_norm_params *p = job->p;
  int64_t per_image = p->groups * p->chunks;
  int64_t image = (int64_t)task / per_image, rest = (int64_t)task % per_image;
  int64_t group = rest / p->chunks, first = rest % p->chunks * p->chunk_positions;
  int64_t count = p->positions - first < p->chunk_positions ? p->positions - first
                                                            : p->chunk_positions;
  int64_t start = ((image * p->groups + group) * p->positions + first) * p->lanes;
  for (int64_t l0 = 0; l0 < p->lanes; l0 += LANE_CHUNK) {
    int64_t width = p->lanes - l0 < LANE_CHUNK ? p->lanes - l0 : LANE_CHUNK;
    float factor[LANE_CHUNK], shift[LANE_CHUNK];
    for (int64_t l = 0; l < width; l++) {
      int64_t c = group * p->lanes + l0 + l;
      factor[l] = job->scale[c] / sqrtf(job->variance[c] + p->epsilon);
      shift[l] = job->bias[c] - job->mean[c] * factor[l];
    }
    if (width == 1)
      normalise_run(job->x + start + l0, job->y + start + l0, count, factor[0], shift[0]);
    else
      normalise_lanes(job->x + start + l0, job->y + start + l0, count, p->lanes, width, factor,
                      shift);
  }
  float *y = job->y + start;
  for (uint32_t i = 0; i < p->activation_count; i++)
    cpu_activate(&p->activations[i], y, count * p->lanes);
}

static void run_batch_norm(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const batch_norm_params *p = k->params;
  batch_norm_job job = {p, in[0], in[1], in[2], in[3], in[4], out[0]};
  npu_cpu_parallel_for(k->device, (size_t)(p->images * p->groups * p->chunks), normalise_task,
                       &job);
}

static npu_status create_batch_norm(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32 || op->output_count > 1)
    return cpu_unsupported(op, "float32 inference mode only");
  if (op->opset < 9 && op->attributes.get_int(op->attributes.node, "spatial", 1) == 0)
    return cpu_unsupported(op, "spatial=0");
  for (uint32_t i = 1; i < 5; i++)
    if (op->inputs[i].dtype != NPU_DTYPE_FLOAT32)
      return cpu_unsupported(op, "float32 statistics only");
  if (!cpu_activations_apply(op))
    return cpu_unsupported(op, "a fused addend or requantisation");
  batch_norm_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  p->epsilon = op->attributes.get_float(op->attributes.node, "epsilon", 1e-5f);
  p->images = x->rank > 0 ? x->dims[0] : 1;
  p->channels = x->rank > 1 ? x->dims[1] : 1;
  p->positions = 1;
  for (uint32_t d = 2; d < x->rank; d++)
    p->positions *= x->dims[d];
  switch (x->layout) {
  case NPU_HAL_LAYOUT_CHANNELS_LAST: p->lanes = p->channels; break;
  case NPU_HAL_LAYOUT_CHANNEL_BLOCKS: p->lanes = npu_hal_channel_block(x); break;
  default: p->lanes = 1; break;
  }
  if (p->lanes == 0 || p->channels % p->lanes)
    return cpu_unsupported(op, "a partial channel block");
  p->groups = p->channels / p->lanes;
  p->chunk_positions = p->lanes && TASK_VALUES / p->lanes > 1 ? TASK_VALUES / p->lanes : 1;
  p->chunks = (p->positions + p->chunk_positions - 1) / p->chunk_positions;
  p->activation_count = op->activation_count;
  if (op->activation_count) /* (none: op->activations may be NULL) */
    memcpy(p->activations, op->activations, op->activation_count * sizeof *op->activations);
  k->run = run_batch_norm;
  return NPU_OK;
}

const cpu_kernel_entry cpu_batch_norm_kernels[] = {
    /* (x and y in one layout; the [C] statistics plain: broadcast operands) */
    {"BatchNormalization", create_batch_norm, CPU_LAYOUTS_BROADCAST, true},
    {NULL, NULL, CPU_LAYOUTS_PLAIN, false},
};
