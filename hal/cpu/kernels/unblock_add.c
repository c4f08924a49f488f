/* Channel blocks to channels-last with a tensor added on the way: the last
 * step of a convolution whose residual Add oneDNN cannot fuse (see
 * build_unblocked_sum in dnnl_kernels.c). One pass over the narrow output
 * instead of a reorder of the wide input. */
#include "dnnl_kernels.h"
#include "fast_math.h"

typedef struct unblock_job {
  const float *blocked, *addend;
  float *out;
  const cpu_unblocked_sum *shape;
  int64_t chunks; /* of positions, per image */
} unblock_job;

/* Positions a task moves: a few hundred kilobytes of blocks. */
#define POSITIONS_PER_TASK 512

NPU_VECTOR_CLONES
static void unblock_positions(const float *blocked, const float *addend, float *out,
                              int64_t channels, int64_t block, int64_t positions, int64_t first,
                              int64_t count)
{
  int64_t blocks = (channels + block - 1) / block;
  for (int64_t p = first; p < first + count; p++)
    for (int64_t b = 0; b < blocks; b++) {
      const float *from = blocked + (b * positions + p) * block;
      int64_t at = p * channels + b * block;
      int64_t lanes = channels - b * block < block ? channels - b * block : block;
      for (int64_t j = 0; j < lanes; j++)
        out[at + j] = from[j] + addend[at + j];
    }
}

static void unblock_task(void *data, size_t index)
{
  const unblock_job *job = data;
  const cpu_unblocked_sum *s = job->shape;
  int64_t image = (int64_t)index / job->chunks, chunk = (int64_t)index % job->chunks;
  int64_t first = chunk * POSITIONS_PER_TASK;
  int64_t count = s->positions - first < POSITIONS_PER_TASK ? s->positions - first
                                                            : POSITIONS_PER_TASK;
  int64_t blocked_image = (s->channels + s->block - 1) / s->block * s->block * s->positions;
  int64_t plain_image = s->channels * s->positions;
  unblock_positions(job->blocked + image * blocked_image, job->addend + image * plain_image,
                    job->out + image * plain_image, s->channels, s->block, s->positions, first,
                    count);
}

void cpu_unblock_add(npu_hal_device *device, const cpu_unblocked_sum *shape, const float *blocked,
                     const float *addend, float *out)
{
  unblock_job job = {blocked, addend, out, shape,
                     (shape->positions + POSITIONS_PER_TASK - 1) / POSITIONS_PER_TASK};
  npu_cpu_parallel_for(device, (size_t)(shape->images * job.chunks), unblock_task, &job);
}
