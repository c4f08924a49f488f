/* ConvTranspose whose kernel equals its stride (no overlap, no padding, no
 * dilation, one group) with few output channels, as segmentation heads end
 * (PP-OCR's DBNet: 24 channels to 1, 2x2, stride 2). Each input pixel paints
 * its own patch of every output channel: a dot product over the input
 * channels per patch position, vectorised along the input row. oneDNN would
 * run it on output channels padded to a block of 16 (sixteen times the
 * bytes written) and reorder them back. Activations in any layout. */
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"

enum { MAX_OUT_CHANNELS = 8, MAX_PATCH = 4, COLUMNS = 64 };

typedef struct patch_params {
  size_t in_channels, out_channels, height, width, patch_h, patch_w;
  cpu_channel_walk in, out;
  float *weights; /* [in][out][patch_h][patch_w] */
  float bias[MAX_OUT_CHANNELS];
  const float *x; /* bound per run */
  float *y;
} patch_params;

static void free_patch_params(void *data)
{
  patch_params *p = data;
  if (p)
    free(p->weights);
  free(p);
}

/* One input row of one output channel: patch_h output rows. */
static void paint_row(void *ctx, size_t item)
{
  const patch_params *p = ctx;
  size_t i = item % p->height, oc = item / p->height % p->out_channels;
  size_t n = item / p->height / p->out_channels;
  size_t out_width = p->width * p->patch_w;
  const float *x = p->x + n * p->in.batch;
  float *y = p->y + n * p->out.batch + cpu_channel_offset(&p->out, oc);
  float acc[MAX_PATCH][COLUMNS];
  for (size_t a = 0; a < p->patch_h; a++) {
    size_t out_row = i * p->patch_h + a;
    for (size_t j0 = 0; j0 < p->width; j0 += COLUMNS) {
      size_t count = p->width - j0 < COLUMNS ? p->width - j0 : COLUMNS;
      for (size_t b = 0; b < p->patch_w; b++)
        for (size_t j = 0; j < count; j++)
          acc[b][j] = p->bias[oc];
      for (size_t ic = 0; ic < p->in_channels; ic++) {
        const float *row =
            x + cpu_channel_offset(&p->in, ic) + (i * p->width + j0) * p->in.pixel;
        const float *w = p->weights + ((ic * p->out_channels + oc) * p->patch_h + a) * p->patch_w;
        for (size_t b = 0; b < p->patch_w; b++)
          for (size_t j = 0; j < count; j++)
            acc[b][j] += row[j * p->in.pixel] * w[b];
      }
      for (size_t j = 0; j < count; j++)
        for (size_t b = 0; b < p->patch_w; b++)
          y[(out_row * out_width + (j0 + j) * p->patch_w + b) * p->out.pixel] = acc[b][j];
    }
  }
}

static void run_patch(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  patch_params job = *(const patch_params *)k->params;
  job.x = in[0];
  job.y = out[0];
  size_t batch = (size_t)k->inputs[0].dims[0];
  npu_cpu_parallel_for(k->device, batch * job.out_channels * job.height, paint_row, &job);
}

static npu_status create_patch(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *w = &op->inputs[1], *y = &op->outputs[0];
  bool has_bias = op->input_count > 2 && op->inputs[2].dtype != NPU_DTYPE_UNDEFINED;
  if (x->dtype != NPU_DTYPE_FLOAT32 || x->rank != 4 || !op->input_values[1] ||
      (has_bias && !op->input_values[2]))
    return cpu_unsupported(op, "2-D float32 with constant weights only");
  size_t in_channels = (size_t)x->dims[1], out_channels = (size_t)w->dims[1];
  size_t patch_h = (size_t)w->dims[2], patch_w = (size_t)w->dims[3];
  const npu_hal_window *window = op->window;
  bool patches = window && window->strides[0] == (int64_t)patch_h &&
                 window->strides[1] == (int64_t)patch_w && window->group == 1;
  for (uint32_t s = 0; patches && s < window->spatial; s++)
    patches = window->pad_begin[s] == 0 && window->pad_end[s] == 0 &&
              window->dilations[s] == 1 && window->output_padding[s] == 0;
  patches &= out_channels <= MAX_OUT_CHANNELS && patch_h <= MAX_PATCH && patch_w <= MAX_PATCH &&
             (size_t)y->dims[1] == out_channels && (size_t)y->dims[2] == x->dims[2] * patch_h &&
             (size_t)y->dims[3] == x->dims[3] * patch_w;
  if (!patches)
    return cpu_unsupported(op, "only non-overlapping patches into few channels");
  patch_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  k->free_params = free_patch_params;
  *p = (patch_params){in_channels, out_channels, (size_t)x->dims[2], (size_t)x->dims[3],
                      patch_h, patch_w, cpu_channel_walk_of(x), cpu_channel_walk_of(y), NULL, {0},
                      NULL, NULL};
  size_t weight_count = in_channels * out_channels * patch_h * patch_w;
  p->weights = malloc(weight_count * sizeof *p->weights);
  if (!p->weights)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory packing weights");
  memcpy(p->weights, op->input_values[1], weight_count * sizeof *p->weights);
  if (has_bias)
    memcpy(p->bias, op->input_values[2], out_channels * sizeof *p->bias);
  k->packed_inputs |= 1u << 1 | (has_bias ? 1u << 2 : 0);
  k->run = run_patch;
  return NPU_OK;
}

const cpu_kernel_entry cpu_deconv_patch_kernels[] = {
    /* (It walks any block, but claims only those oneDNN's ConvTranspose,
     * which takes what it refuses, has formats for.) */
    {"ConvTranspose", create_patch, CPU_LAYOUTS_ANY, false, CPU_ONEDNN_BLOCKS},
    {NULL, NULL},
};
