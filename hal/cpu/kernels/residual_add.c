/* Residual Adds of convolutions that oneDNN's fast primitives take only in
 * another form than a binary post-op (see residual_form in dnnl_kernels.c):
 * the addend copied into the output before a Winograd convolution sums onto
 * it, or channel blocks moved to a channels-last or plain output with the
 * addend added on the way (one pass over the narrow output instead of a
 * reorder of the wide input). */
#include <string.h>

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

/* Whole blocks as loops of `BLOCK` lanes, which vectorise to one load and
 * store each (a loop of a run-time length per block ran 4x slower than
 * oneDNN's reorder); the last, partial block apart. */
#define BLOCK_LOOP(BLOCK)                                                                   \
  for (int64_t p = first; p < first + count; p++) {                                         \
    float *to = out + p * channels;                                                         \
    const float *plus = addend + p * channels;                                              \
    for (int64_t b = 0; b < whole; b++) {                                                   \
      const float *from = blocked + (b * positions + p) * BLOCK;                            \
      for (int64_t j = 0; j < BLOCK; j++)                                                   \
        to[b * BLOCK + j] = from[j] + plus[b * BLOCK + j];                                  \
    }                                                                                       \
    const float *from = blocked + (whole * positions + p) * BLOCK;                          \
    for (int64_t j = 0; j < tail; j++)                                                      \
      to[whole * BLOCK + j] = from[j] + plus[whole * BLOCK + j];                            \
  }

NPU_VECTOR_CLONES
static void unblock_positions(const float *restrict blocked, const float *addend, float *out,
                              int64_t channels, int64_t block, int64_t positions, int64_t first,
                              int64_t count)
{
  int64_t whole = channels / block, tail = channels % block;
  if (block == 16)
    BLOCK_LOOP(16)
  else if (block == 8)
    BLOCK_LOOP(8)
  else
    BLOCK_LOOP(block)
}

/* Into a plain output: each block's lanes become `lanes` channel rows. The
 * positions of a task (512 blocks of 16 lanes: 32 KiB) stay in L1 while
 * their lanes are read one channel after the other. */
NPU_VECTOR_CLONES
static void unblock_positions_plain(const float *restrict blocked, const float *addend,
                                    float *out, int64_t channels, int64_t block,
                                    int64_t positions, int64_t first, int64_t count)
{
  for (int64_t b = 0; b * block < channels; b++) {
    const float *from = blocked + b * positions * block;
    int64_t lanes = channels - b * block < block ? channels - b * block : block;
    for (int64_t j = 0; j < lanes; j++) {
      float *to = out + (b * block + j) * positions;
      const float *plus = addend + (b * block + j) * positions;
      for (int64_t p = first; p < first + count; p++)
        to[p] = from[p * block + j] + plus[p];
    }
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
  (s->plain ? unblock_positions_plain : unblock_positions)(
      job->blocked + image * blocked_image, job->addend + image * plain_image,
      job->out + image * plain_image, s->channels, s->block, s->positions, first, count);
}

void cpu_unblock_add(npu_hal_device *device, const cpu_unblocked_sum *shape, const float *blocked,
                     const float *addend, float *out)
{
  unblock_job job = {blocked, addend, out, shape,
                     (shape->positions + POSITIONS_PER_TASK - 1) / POSITIONS_PER_TASK};
  npu_cpu_parallel_for(device, (size_t)(shape->images * job.chunks), unblock_task, &job);
}

typedef struct copy_job {
  const char *from;
  char *to;
  size_t bytes;
} copy_job;

/* Bytes a task copies. */
#define COPY_CHUNK (256 * 1024)

static void copy_task(void *data, size_t index)
{
  const copy_job *job = data;
  size_t at = index * COPY_CHUNK;
  memcpy(job->to + at, job->from + at, job->bytes - at < COPY_CHUNK ? job->bytes - at : COPY_CHUNK);
}

void cpu_copy_addend(npu_hal_device *device, const void *addend, void *out, size_t bytes)
{
  if (addend == out)
    return;
  copy_job job = {addend, out, bytes};
  npu_cpu_parallel_for(device, (bytes + COPY_CHUNK - 1) / COPY_CHUNK, copy_task, &job);
}
