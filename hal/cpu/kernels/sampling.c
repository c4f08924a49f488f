/* Kernels that sample a 4-D float32 image at computed points: RoiAlign
 * (averages or maxima of bilinear samples over each region's bins) and
 * GridSample (nearest, bilinear or bicubic at a grid of normalised points,
 * with zeros, border or reflection padding), as ONNX Runtime and ONNX's
 * reference compute them. Plain layout; a task is one output plane. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"

/* ---- RoiAlign ------------------------------------------------------------------------ */

typedef struct roi_align_params {
  int64_t channels, height, width, pooled_h, pooled_w, sampling_ratio, rois;
  float spatial_scale;
  bool max, half_pixel; /* half_pixel: coordinates shifted by half a pixel (opset 16's default) */
} roi_align_params;

typedef struct roi_align_job {
  const roi_align_params *p;
  const float *x, *rois;
  const int64_t *batch;
  float *y;
} roi_align_job;

/* Samples a side of a bin: the model's sampling_ratio, else as many as the
 * bin is pixels long (ceil), none for an empty or NaN bin; at most twice
 * the image's side and two more either way, so that a huge region, scale or
 * ratio costs time bounded by the image (only samples past the image's
 * edge, which read nothing, are given up). */
static int64_t bin_samples(int64_t ratio, double bin, int64_t side)
{
  double n = ratio > 0 ? (double)ratio : ceil(bin), most = 2.0 * (double)side + 2.0;
  return n > 0 ? (int64_t)(n < most ? n : most) : 0;
}

/* The four neighbours of (y, x) and their bilinear weights; none (weights
 * 0) past a pixel beyond the image's edge. */
static void roi_neighbours(int64_t height, int64_t width, double y, double x, int64_t *offsets,
                           double *weights)
{
  memset(offsets, 0, 4 * sizeof *offsets);
  memset(weights, 0, 4 * sizeof *weights);
  if (y < -1.0 || y > (double)height || x < -1.0 || x > (double)width)
    return;
  y = y > 0 ? y : 0;
  x = x > 0 ? x : 0;
  int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= height - 1) { /* the last row: read alone */
    y0 = y1 = height - 1;
    y = (double)y0;
  }
  if (x0 >= width - 1) {
    x0 = x1 = width - 1;
    x = (double)x0;
  }
  double ly = y - (double)y0, lx = x - (double)x0;
  int64_t at[4] = {y0 * width + x0, y0 * width + x1, y1 * width + x0, y1 * width + x1};
  double w[4] = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
  memcpy(offsets, at, sizeof at);
  memcpy(weights, w, sizeof w);
}

/* A sample: the weighted sum of the neighbours, or for the maximum mode
 * the largest weighted neighbour (ONNX Runtime's definition, which ONNX's
 * reference follows). */
static double roi_sample(const roi_align_params *p, const float *image, double y, double x)
{
  int64_t offsets[4];
  double weights[4], sum = 0, best = 0;
  roi_neighbours(p->height, p->width, y, x, offsets, weights);
  for (int i = 0; i < 4; i++) {
    double v = weights[i] * image[offsets[i]];
    sum += v;
    best = i == 0 || v > best ? v : best;
  }
  return p->max ? best : sum;
}

static void roi_align_plane(void *ctx, size_t task)
{
  const roi_align_job *job = ctx;
  const roi_align_params *p = job->p;
  int64_t r = (int64_t)task / p->channels, c = (int64_t)task % p->channels;
  const float *box = job->rois + r * 4;
  const float *image = job->x + (job->batch[r] * p->channels + c) * p->height * p->width;
  float *y = job->y + (size_t)task * p->pooled_h * p->pooled_w;
  double offset = p->half_pixel ? 0.5 : 0.0;
  double start_w = box[0] * p->spatial_scale - offset, start_h = box[1] * p->spatial_scale - offset;
  double roi_w = box[2] * p->spatial_scale - offset - start_w;
  double roi_h = box[3] * p->spatial_scale - offset - start_h;
  if (!p->half_pixel) { /* opset 10's regions are at least a pixel */
    roi_w = roi_w > 1 ? roi_w : 1;
    roi_h = roi_h > 1 ? roi_h : 1;
  }
  double bin_h = roi_h / (double)p->pooled_h, bin_w = roi_w / (double)p->pooled_w;
  int64_t grid_h = bin_samples(p->sampling_ratio, bin_h, p->height);
  int64_t grid_w = bin_samples(p->sampling_ratio, bin_w, p->width);
  double count = grid_h * grid_w > 1 ? (double)(grid_h * grid_w) : 1;
  for (int64_t ph = 0; ph < p->pooled_h; ph++)
    for (int64_t pw = 0; pw < p->pooled_w; pw++) {
      double sum = 0, best = 0;
      for (int64_t iy = 0; iy < grid_h; iy++) {
        double sy = start_h + (double)ph * bin_h + ((double)iy + 0.5) * bin_h / (double)grid_h;
        for (int64_t ix = 0; ix < grid_w; ix++) {
          double sx = start_w + (double)pw * bin_w + ((double)ix + 0.5) * bin_w / (double)grid_w;
          double v = roi_sample(p, image, sy, sx);
          sum += v;
          best = iy + ix == 0 || v > best ? v : best;
        }
      }
      y[ph * p->pooled_w + pw] = (float)(p->max ? best : sum / count);
    }
}

static void run_roi_align(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const roi_align_params *p = k->params;
  const int64_t *batch = in[2];
  int64_t images = k->inputs[0].dims[0];
  for (int64_t r = 0; r < p->rois; r++)
    if (batch[r] < 0 || batch[r] >= images) {
      cpu_kernel_fail(k, NPU_ERROR_INVALID_ARGUMENT, "batch index %lld of region %lld is not "
                      "one of the %lld images", (long long)batch[r], (long long)r,
                      (long long)images);
      return;
    }
  roi_align_job job = {p, in[0], in[1], batch, out[0]};
  npu_cpu_parallel_for(k->device, (size_t)(p->rois * p->channels), roi_align_plane, &job);
}

static npu_status create_roi_align(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32 || op->inputs[2].dtype != NPU_DTYPE_INT64)
    return cpu_unsupported(op, "float32 images and regions, int64 batch indices");
  roi_align_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  const npu_hal_attributes *a = &op->attributes;
  p->channels = x->dims[1];
  p->height = x->dims[2];
  p->width = x->dims[3];
  p->rois = y->dims[0];
  p->pooled_h = y->dims[2];
  p->pooled_w = y->dims[3];
  p->sampling_ratio = a->get_int(a->node, "sampling_ratio", 0);
  p->spatial_scale = a->get_float(a->node, "spatial_scale", 1.0f);
  p->max = strcmp(a->get_string(a->node, "mode", "avg"), "max") == 0;
  p->half_pixel = strcmp(a->get_string(a->node, "coordinate_transformation_mode",
                                        op->opset >= 16 ? "half_pixel" : "output_half_pixel"),
                         "half_pixel") == 0;
  k->run = run_roi_align;
  return NPU_OK;
}

/* ---- GridSample ---------------------------------------------------------------------- */

typedef enum { GRID_BILINEAR, GRID_NEAREST, GRID_BICUBIC } grid_mode;
typedef enum { GRID_ZEROS, GRID_BORDER, GRID_REFLECTION } grid_padding;

typedef struct grid_sample_params {
  int64_t channels, height, width, out_h, out_w;
  grid_mode mode;
  grid_padding padding;
  bool align_corners;
} grid_sample_params;

typedef struct grid_sample_job {
  const grid_sample_params *p;
  const float *x, *grid;
  float *y;
} grid_sample_job;

/* `v` folded back into [low, high] as often as it passes either end. */
static double reflect(double v, double low, double high)
{
  double range = high - low;
  if (range <= 0 || !isfinite(v))
    return low; /* (a NaN or infinite grid point: any pixel will do) */
  if (v < low || v > high) {
    /* in doubles: a point far outside folds more times than an integer holds */
    double past = v < low ? low - v : v - high;
    double folds = floor(past / range);
    double rest = past - folds * range;
    bool from_low = (v < low) == (fmod(folds, 2.0) == 0.0);
    v = from_low ? low + rest : high - rest;
  }
  return v;
}

/* The pixel at integer (row, column), padded as the mode says; `low` and
 * `high` bound the coordinates reflection folds into. */
static float grid_pixel(const grid_sample_params *p, const float *image, int64_t row,
                        int64_t column, const double *low, const double *high)
{
  if (p->padding == GRID_ZEROS)
    return row >= 0 && row < p->height && column >= 0 && column < p->width
               ? image[row * p->width + column]
               : 0.0f;
  if (p->padding == GRID_REFLECTION) {
    column = (int64_t)reflect((double)column, low[0], high[0]);
    row = (int64_t)reflect((double)row, low[1], high[1]);
  }
  /* border; reflection too, which rounding may leave a pixel out */
  column = column < 0 ? 0 : column >= p->width ? p->width - 1 : column;
  row = row < 0 ? 0 : row >= p->height ? p->height - 1 : row;
  return image[row * p->width + column];
}

static void grid_sample_plane(void *ctx, size_t task)
{
  const grid_sample_job *job = ctx;
  const grid_sample_params *p = job->p;
  int64_t n = (int64_t)task / p->channels;
  const float *image = job->x + (size_t)task * p->height * p->width;
  const float *grid = job->grid + n * p->out_h * p->out_w * 2;
  float *y = job->y + (size_t)task * p->out_h * p->out_w;
  if (p->height == 0 || p->width == 0) { /* an empty image: nothing but padding */
    memset(y, 0, (size_t)(p->out_h * p->out_w) * sizeof *y);
    return;
  }
  int64_t size[2] = {p->width, p->height};
  double low[2], high[2]; /* the coordinates inside the image, x then y */
  for (int d = 0; d < 2; d++) {
    low[d] = p->align_corners ? 0 : -0.5;
    high[d] = p->align_corners ? (double)(size[d] - 1) : (double)size[d] - 0.5;
  }
  for (int64_t i = 0; i < p->out_h * p->out_w; i++) {
    double at[2]; /* x, y in pixels */
    bool outside = false;
    for (int d = 0; d < 2; d++) {
      double v = grid[i * 2 + d];
      at[d] = p->align_corners ? (v + 1) / 2 * (double)(size[d] - 1)
                               : ((v + 1) * (double)size[d] - 1) / 2;
      if (p->mode == GRID_NEAREST)
        at[d] = nearbyint(at[d]);
      outside |= !(at[d] >= low[d] && at[d] <= high[d]);
    }
    /* A point outside is brought in, both its coordinates (ONNX Runtime's way) */
    for (int d = 0; d < 2 && outside; d++) {
      double last = (double)(size[d] - 1);
      if (p->padding == GRID_BORDER)
        at[d] = at[d] < 0 ? 0 : at[d] > last ? last : at[d];
      else if (p->padding == GRID_REFLECTION)
        at[d] = reflect(at[d], low[d], high[d]);
    }
    for (int d = 0; d < 2; d++) /* (NaN and huge coordinates read the padding) */
      at[d] = at[d] > -4 ? (at[d] < 0x1p40 ? at[d] : 0x1p40) : -4;
    if (p->mode == GRID_NEAREST) {
      y[i] = grid_pixel(p, image, (int64_t)at[1], (int64_t)at[0], low, high);
      continue;
    }
    int64_t taps = p->mode == GRID_BICUBIC ? 4 : 2;
    int64_t x0 = (int64_t)floor(at[0]) - (taps == 4), y0 = (int64_t)floor(at[1]) - (taps == 4);
    double wx[4], wy[4];
    if (taps == 4) {
      cpu_cubic_weights(at[0] - floor(at[0]), -0.75, wx);
      cpu_cubic_weights(at[1] - floor(at[1]), -0.75, wy);
    } else {
      wx[1] = at[0] - (double)x0;
      wy[1] = at[1] - (double)y0;
      wx[0] = 1 - wx[1];
      wy[0] = 1 - wy[1];
    }
    double sum = 0;
    for (int64_t r = 0; r < taps; r++)
      for (int64_t c = 0; c < taps; c++)
        sum += wy[r] * wx[c] * grid_pixel(p, image, y0 + r, x0 + c, low, high);
    y[i] = (float)sum;
  }
}

static void run_grid_sample(const npu_hal_kernel *k, void *const *in, void *const *out)
{
  const grid_sample_params *p = k->params;
  grid_sample_job job = {p, in[0], in[1], out[0]};
  npu_cpu_parallel_for(k->device, (size_t)(k->inputs[0].dims[0] * p->channels), grid_sample_plane,
                       &job);
}

static npu_status create_grid_sample(const npu_hal_op *op, npu_hal_kernel *k)
{
  const npu_hal_tensor_desc *x = &op->inputs[0], *y = &op->outputs[0];
  if (x->dtype != NPU_DTYPE_FLOAT32)
    return cpu_unsupported(op, "float32 only");
  grid_sample_params *p = calloc(1, sizeof *p);
  if (!p)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->params = p;
  const npu_hal_attributes *a = &op->attributes;
  const char *mode = a->get_string(a->node, "mode", "bilinear");
  const char *padding = a->get_string(a->node, "padding_mode", "zeros");
  p->mode = strcmp(mode, "nearest") == 0 ? GRID_NEAREST
            : strcmp(mode, "bicubic") == 0 ? GRID_BICUBIC
                                           : GRID_BILINEAR; /* (the modes: checked) */
  p->padding = strcmp(padding, "border") == 0       ? GRID_BORDER
               : strcmp(padding, "reflection") == 0 ? GRID_REFLECTION
                                                    : GRID_ZEROS;
  p->align_corners = a->get_int(a->node, "align_corners", 0) != 0;
  p->channels = x->dims[1];
  p->height = x->dims[2];
  p->width = x->dims[3];
  p->out_h = y->dims[2];
  p->out_w = y->dims[3];
  k->run = run_grid_sample;
  return NPU_OK;
}

const cpu_kernel_entry cpu_sampling_kernels[] = {
    {"RoiAlign", create_roi_align},
    {"GridSample", create_grid_sample},
    {NULL, NULL},
};
