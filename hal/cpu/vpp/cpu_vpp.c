/* CPU VPP kernels. Each output row is made in three passes over arrays, so
 * the compiler can vectorise the last two: sample every source channel
 * (bilinear / nearest / area, at the channel's own subsampled grid), apply
 * the source colour matrix to get RGB, then write the destination (tensor
 * normalisation and layout, or the destination's colour matrix and format).
 * Rows are split into chunks run on the device's thread pool. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "cpu/kernels/fast_math.h"
#include "npu_hal_vpp.h"
#include "cpu/vpp/cpu_vpp.h"
#include "vpp_sampling.h"

#define ROWS_PER_ITEM 64

/* One output grid: the full-resolution pixels, or a destination's
 * subsampled chroma, over a frame of frame_width x frame_height pixels. */
typedef struct grid {
  uint32_t width, height;
  uint8_t sub_x, sub_y;
  uint32_t frame_width, frame_height;
} grid;

typedef struct work_item {
  const npu_hal_vpp_job *job;
  grid g;
  uint32_t first_row, row_count;
  bool chroma_grid; /* destination channels 1, 2 of a subsampled YUV image */
} work_item;

typedef struct batch_run {
  npu_hal_device *device;
  npu_hal_vpp_batch *batch;
  work_item *items;
  size_t item_count;
  npu_hal_task_fn done;
  void *done_data;
} batch_run;

static float clamp255(float v)
{
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

static uint8_t to_byte(float v)
{
  return (uint8_t)(clamp255(v) + 0.5f);
}

typedef struct row_scratch {
  float *values[3]; /* sampled source channels */
  float *rgb[3];
  npu_vpp_taps columns[3];
  size_t word_columns[3]; /* bilinear: the leading columns sampled by word reads (read_pair) */
  int32_t span[3][2]; /* bilinear: the bytes of a source row the columns read, [lo, hi] */
  float *vertical[2]; /* a source row span blended vertically, per channel of a pair;
                         NULL: sample directly */
} row_scratch;

/* Bilinear rows are blended vertically over the source span first (one
 * contiguous, vectorised pass), then horizontally with two loads per pixel
 * instead of four; not worth it when the span is much wider than the output. */
#define VERTICAL_FIRST_MAX_RATIO 6

/* vertical[x] = the row blend of byte x, for x in span (a pointer based at
 * byte 0 of the row, valid over the span only). */
NPU_VECTOR_CLONES
static void blend_rows(const uint8_t *restrict r0, const uint8_t *restrict r1, float fy,
                       const int32_t span[2], float *restrict vertical)
{
  for (int32_t x = span[0]; x <= span[1]; x++)
    vertical[x] = r0[x] + (r1[x] - r0[x]) * fy;
}

/* A pixel and its right neighbour (`shift` = 8 x the pixel stride, at most
 * 24) from one 32-bit read, blended by `fx`. Word reads vectorise (as
 * gathers) where byte loads stay scalar; they need canonical taps (the second
 * pixel always the first's neighbour) and the whole word inside the row. */
static inline float read_pair(const uint8_t *pixel, uint32_t shift, float fx)
{
  uint32_t word;
  memcpy(&word, pixel, sizeof word);
  float a = (float)(word & 0xff), b = (float)((word >> shift) & 0xff);
  return a + (b - a) * fx;
}

/* Direct bilinear sampling of columns [0, count) by word reads (their taps
 * canonical, see canonicalise_taps). `out` never aliases the source, which
 * lets the reads become gathers. */
NPU_VECTOR_CLONES
static void sample_words(const uint8_t *r0, const uint8_t *r1, float fy, const npu_vpp_taps *cols,
                         uint32_t shift, size_t count, float *restrict out)
{
  const int32_t *restrict first = cols->first;
  const float *restrict weight = cols->weight;
  for (size_t k = 0; k < count; k++) {
    float top = read_pair(r0 + first[k], shift, weight[k]);
    float bottom = read_pair(r1 + first[k], shift, weight[k]);
    out[k] = top + (bottom - top) * fy;
  }
}

/* Rewrites edge taps that read one pixel twice (first == second) as the
 * pixel and a neighbour weighted so the value is unchanged, so that every
 * tap reads a neighbouring pair. Returns how many leading columns can be
 * sampled by word reads: 0 unless the taps are bilinear pairs, the pixel
 * stride fits a word and the channel (`channel_len` pixels) is at least two
 * pixels wide. */
static size_t canonicalise_taps(npu_vpp_taps *t, size_t n, int32_t pixel_stride,
                                uint32_t channel_len)
{
  if (pixel_stride > 3 || channel_len < 2)
    return 0;
  /* the channel's bytes in a row, from its first pixel to its last */
  const int32_t row_bytes = (int32_t)(channel_len - 1) * pixel_stride + 1;
  size_t word_columns = 0;
  bool leading = true;
  for (size_t k = 0; k < n; k++) {
    if (t->second[k] == t->first[k]) {
      if (t->first[k] + pixel_stride < row_bytes) {
        t->second[k] = t->first[k] + pixel_stride;
        t->weight[k] = 0;
      } else {
        t->first[k] -= pixel_stride;
        t->weight[k] = 1;
      }
    }
    if (t->second[k] != t->first[k] + pixel_stride)
      return 0;
    leading = leading && t->first[k] + 4 <= row_bytes;
    word_columns += leading;
  }
  return word_columns;
}

/* `vertical` (NULL: sample directly): scratch for blend_rows, based so
 * that the span's bytes index it. */
NPU_VECTOR_CLONES
static void sample_row(int method, const npu_hal_vpp_channel *ch, const npu_vpp_taps *cols,
                       size_t word_columns, const npu_vpp_taps *row, size_t n, float *out,
                       const int32_t span[2], float *vertical)
{
  const uint8_t *base = npu_cpu_mem_ref_ptr(ch->base);
  const uint32_t ps = ch->pixel_stride;
  if (method == NPU_SCALE_AREA) {
    const uint8_t *first_row = base + (size_t)row->first[0] * ch->row_stride;
    int32_t rows = row->second[0];
    for (size_t k = 0; k < n; k++) {
      uint32_t sum = 0;
      for (int32_t y = 0; y < rows; y++) {
        const uint8_t *p = first_row + (size_t)y * ch->row_stride + (size_t)cols->first[k] * ps;
        for (int32_t x = 0; x < cols->second[k]; x++)
          sum += p[(size_t)x * ps];
      }
      out[k] = (float)sum / (float)(rows * cols->second[k]);
    }
    return;
  }
  const uint8_t *r0 = base + (size_t)row->first[0] * ch->row_stride;
  const uint8_t *r1 = base + (size_t)row->second[0] * ch->row_stride;
  const float fy = row->weight[0];
  const int32_t *restrict first = cols->first, *restrict second = cols->second;
  const float *restrict weight = cols->weight;
  if (vertical) {
    blend_rows(r0, r1, fy, span, vertical);
    for (size_t k = 0; k < n; k++) {
      float a = vertical[first[k]], b = vertical[second[k]];
      out[k] = a + (b - a) * weight[k];
    }
    return;
  }
  sample_words(r0, r1, fy, cols, 8 * ps, word_columns, out);
  for (size_t k = word_columns; k < n; k++) {
    int32_t a = first[k], b = second[k]; /* byte offsets */
    float fx = weight[k];
    float top = r0[a] + (r0[b] - r0[a]) * fx;
    float bottom = r1[a] + (r1[b] - r1[a]) * fx;
    out[k] = top + (bottom - top) * fy;
  }
}

/* Two channels with the same geometry (U and V, or two of R, G, B) share
 * their taps: one pass, half the index loads. */
NPU_VECTOR_CLONES
static void sample_row_pair(const npu_hal_vpp_channel *ch_a, const npu_hal_vpp_channel *ch_b,
                            const npu_vpp_taps *cols, size_t word_columns,
                            const npu_vpp_taps *row, size_t n, float *out_a, float *out_b,
                            const int32_t span[2], float *vertical_a, float *vertical_b)
{
  const uint8_t *base_a = npu_cpu_mem_ref_ptr(ch_a->base);
  const uint8_t *base_b = npu_cpu_mem_ref_ptr(ch_b->base);
  const size_t row0 = (size_t)row->first[0] * ch_a->row_stride;
  const size_t row1 = (size_t)row->second[0] * ch_a->row_stride;
  const uint8_t *a0 = base_a + row0, *a1 = base_a + row1, *b0 = base_b + row0, *b1 = base_b + row1;
  const float fy = row->weight[0];
  const int32_t *restrict first = cols->first, *restrict second = cols->second;
  const float *restrict weight = cols->weight;
  if (vertical_a) {
    blend_rows(a0, a1, fy, span, vertical_a);
    blend_rows(b0, b1, fy, span, vertical_b);
    for (size_t k = 0; k < n; k++) {
      int32_t p = first[k], q = second[k];
      float fx = weight[k];
      out_a[k] = vertical_a[p] + (vertical_a[q] - vertical_a[p]) * fx;
      out_b[k] = vertical_b[p] + (vertical_b[q] - vertical_b[p]) * fx;
    }
    return;
  }
  sample_words(a0, a1, fy, cols, 8 * ch_a->pixel_stride, word_columns, out_a);
  sample_words(b0, b1, fy, cols, 8 * ch_b->pixel_stride, word_columns, out_b);
  for (size_t k = word_columns; k < n; k++) {
    int32_t p = first[k], q = second[k];
    float fx = weight[k];
    float top_a = a0[p] + (a0[q] - a0[p]) * fx, bottom_a = a1[p] + (a1[q] - a1[p]) * fx;
    float top_b = b0[p] + (b0[q] - b0[p]) * fx, bottom_b = b1[p] + (b1[q] - b1[p]) * fx;
    out_a[k] = top_a + (bottom_a - top_a) * fy;
    out_b[k] = top_b + (bottom_b - top_b) * fy;
  }
}

/* Fetches the two source rows of `row_taps` over bytes [lo, hi] into the
 * cache ahead of their use: sampling a large downscale gathers a few bytes
 * of every cache line of a row, and would otherwise wait on each line. */
static void prefetch_rows(const npu_hal_vpp_channel *ch, const npu_vpp_taps *row_taps,
                          int32_t lo, int32_t hi)
{
  const uint8_t *base = npu_cpu_mem_ref_ptr(ch->base);
  const int32_t rows[2] = {row_taps->first[0], row_taps->second[0]};
  for (int r = 0; r < (rows[1] != rows[0] ? 2 : 1); r++) {
    const uint8_t *line = base + (size_t)rows[r] * ch->row_stride;
    for (int32_t x = lo; x <= hi; x += 64)
      __builtin_prefetch(line + x);
    __builtin_prefetch(line + hi);
  }
}

static bool same_geometry(const npu_hal_vpp_channel *a, const npu_hal_vpp_channel *b)
{
  return a->sub_x == b->sub_x && a->sub_y == b->sub_y && a->pixel_stride == b->pixel_stride &&
         a->row_stride == b->row_stride;
}

NPU_VECTOR_CLONES
static void to_rgb(const npu_hal_vpp_image *src, row_scratch *s, size_t n)
{
  const float(*m)[4] = src->matrix;
  const float *c0 = s->values[0];
  const float *c1 = src->channel_count == 3 ? s->values[1] : c0;
  const float *c2 = src->channel_count == 3 ? s->values[2] : c0;
  for (int i = 0; i < 3; i++) {
    float *out = s->rgb[i];
    const float a = m[i][0], b = src->channel_count == 3 ? m[i][1] : 0,
                c = src->channel_count == 3 ? m[i][2] : 0, d = m[i][3];
    for (size_t k = 0; k < n; k++)
      out[k] = clamp255(a * c0[k] + b * c1[k] + c * c2[k] + d);
  }
}

static void fill_rgb(row_scratch *s, size_t from, size_t to, const float pad[3])
{
  for (int i = 0; i < 3; i++)
    for (size_t k = from; k < to; k++)
      s->rgb[i][k] = pad[i];
}

NPU_VECTOR_CLONES
static void write_tensor_row(const npu_hal_vpp_batch *batch, const npu_hal_vpp_job *job,
                             uint32_t y, row_scratch *s)
{
  const npu_hal_vpp_tensor *t = &batch->tensor;
  uint8_t *slot = npu_cpu_mem_ref_ptr(job->tensor_slot);
  const size_t w = t->width, plane = (size_t)t->width * t->height;
  for (int c = 0; c < 3; c++) {
    const float *in = s->rgb[t->source_of[c]];
    const float mean = t->mean[c], scale = t->scale[c];
    size_t at = t->planar ? c * plane + y * w : y * w * 3 + c, step = t->planar ? 1 : 3;
    if (t->float32 && (uintptr_t)slot % sizeof(float) == 0) {
      float *out = (float *)slot + at;
      for (size_t k = 0; k < w; k++)
        out[k * step] = (in[k] - mean) * scale;
    } else if (t->float32) { /* a tensor at an odd byte offset: memcpy stores unaligned */
      uint8_t *out = slot + at * sizeof(float);
      for (size_t k = 0; k < w; k++) {
        float value = (in[k] - mean) * scale;
        memcpy(out + k * step * sizeof value, &value, sizeof value);
      }
    } else {
      uint8_t *out = slot + at;
      for (size_t k = 0; k < w; k++)
        out[k * step] = to_byte((in[k] - mean) * scale);
    }
  }
}

/* Packed RGB-family output: the values are already clamped RGB, so each
 * byte is a rounding of one of them, written in one interleaved pass. */
NPU_VECTOR_CLONES
static void write_packed_rgb_row(uint8_t *out, uint32_t pixel_stride, const int offsets[3],
                                 const row_scratch *s, size_t n)
{
  const float *restrict r = s->rgb[0], *restrict g = s->rgb[1], *restrict b = s->rgb[2];
  uint8_t *restrict pr = out + offsets[0], *restrict pg = out + offsets[1],
                    *restrict pb = out + offsets[2];
  for (size_t k = 0; k < n; k++) {
    pr[k * pixel_stride] = (uint8_t)(r[k] + 0.5f);
    pg[k * pixel_stride] = (uint8_t)(g[k] + 0.5f);
    pb[k * pixel_stride] = (uint8_t)(b[k] + 0.5f);
  }
}

/* True when the destination stores R, G, B unchanged in one packed plane. */
static bool is_packed_rgb(const npu_hal_vpp_image *dst, int offsets[3])
{
  if (dst->channel_count != 3)
    return false;
  for (int c = 0; c < 3; c++) {
    const npu_hal_vpp_channel *ch = &dst->channels[c];
    if (ch->base.buffer != dst->channels[0].base.buffer || ch->pixel_stride != dst->channels[0].pixel_stride ||
        ch->sub_x != 1 || ch->sub_y != 1)
      return false;
    for (int j = 0; j < 4; j++)
      if (dst->matrix[c][j] != (j == c ? 1.0f : 0.0f))
        return false;
  }
  size_t base = dst->channels[0].base.offset;
  for (int c = 0; c < 3; c++)
    offsets[c] = (int)((ptrdiff_t)dst->channels[c].base.offset - (ptrdiff_t)base);
  return true;
}

static void write_image_row(const npu_hal_vpp_image *dst, const work_item *item, uint32_t y,
                            row_scratch *s)
{
  const size_t n = item->g.width;
  int offsets[3];
  if (!item->chroma_grid && is_packed_rgb(dst, offsets)) {
    const npu_hal_vpp_channel *ch = &dst->channels[0];
    uint8_t *row = (uint8_t *)npu_cpu_mem_ref_ptr(ch->base) + (size_t)y * ch->row_stride;
    write_packed_rgb_row(row, ch->pixel_stride, offsets, s, n);
  } else {
    uint32_t first = item->chroma_grid ? 1 : 0;
    /* The full-resolution grid writes the chroma too unless it has its own grid. */
    uint32_t last = item->chroma_grid || (dst->channel_count == 3 && dst->channels[1].sub_x == 1 &&
                                          dst->channels[1].sub_y == 1)
                        ? dst->channel_count
                        : 1;
    for (uint32_t c = first; c < last; c++) {
      const npu_hal_vpp_channel *ch = &dst->channels[c];
      uint8_t *out = (uint8_t *)npu_cpu_mem_ref_ptr(ch->base) + (size_t)y * ch->row_stride;
      const float *m = dst->matrix[c];
      for (size_t k = 0; k < n; k++)
        out[k * ch->pixel_stride] =
            to_byte(m[0] * s->rgb[0][k] + m[1] * s->rgb[1][k] + m[2] * s->rgb[2][k] + m[3]);
    }
  }
  if (dst->has_filler && !item->chroma_grid) {
    uint8_t *out = (uint8_t *)npu_cpu_mem_ref_ptr(dst->filler.base) +
                   (size_t)y * dst->filler.row_stride;
    for (size_t k = 0; k < n; k++)
      out[k * dst->filler.pixel_stride] = 255;
  }
}

/* Row buffers for `n` output pixels, and two source rows of `row_bytes` for
 * vertical-first bilinear sampling, in two allocations per work item. */
static bool alloc_scratch(row_scratch *s, size_t n, size_t row_bytes)
{
  float *floats = malloc((n * 9 + 2 * row_bytes) * sizeof(float));
  int32_t *ints = malloc(n * 6 * sizeof(int32_t));
  if (!floats || !ints) {
    free(floats);
    free(ints);
    return false;
  }
  for (int i = 0; i < 3; i++) {
    s->values[i] = floats + i * n;
    s->rgb[i] = floats + (3 + i) * n;
    s->columns[i] = (npu_vpp_taps){ints + 2 * i * n, ints + (2 * i + 1) * n, floats + (6 + i) * n};
  }
  s->vertical[0] = floats + 9 * n;
  s->vertical[1] = floats + 9 * n + row_bytes;
  return true;
}

static void free_scratch(row_scratch *s)
{
  free(s->values[0]);
  free(s->columns[0].first);
}

static void run_item(void *ctx, size_t index)
{
  batch_run *run = ctx;
  const npu_hal_vpp_batch *batch = run->batch;
  const work_item *item = &run->items[index];
  const npu_hal_vpp_job *job = item->job;
  const npu_hal_vpp_image *src = &job->src;
  const size_t n = item->g.width;
  /* Every tap's byte offset falls inside its channel's row: within the row's
   * pixels, which the stride (padded to anything a caller likes) may
   * exceed many times. (A rotated view's pixels lie a stride apart, and it
   * never samples vertical first: its row stride, a pixel's size, serves.) */
  size_t row_bytes = 0;
  for (uint32_t c = 0; c < src->channel_count; c++) {
    const npu_hal_vpp_channel *ch = &src->channels[c];
    size_t pixels = (size_t)vpp_div_up(src->width, ch->sub_x) * ch->pixel_stride;
    size_t bytes = pixels < ch->row_stride ? pixels : ch->row_stride;
    row_bytes = bytes > row_bytes ? bytes : row_bytes;
  }
  row_scratch s;
  if (!alloc_scratch(&s, n, row_bytes))
    return; /* host OOM inside a kernel: the rows stay unwritten */

  uint32_t col0, col1, row0, row1;
  npu_vpp_content_span(item->g.width, item->g.sub_x, item->g.frame_width, job->dst_x, job->dst_w,
                       &col0, &col1);
  npu_vpp_content_span(item->g.height, item->g.sub_y, item->g.frame_height, job->dst_y,
                       job->dst_h, &row0, &row1);
  /* (a rotated job's taps run backwards or across rows: sampled directly) */
  bool vertical_first = batch->method == NPU_SCALE_BILINEAR && col1 > col0 && !job->flip_x &&
                        !job->flip_y;
  for (uint32_t c = 0; c < src->channel_count; c++) {
    const npu_hal_vpp_channel *ch = &src->channels[c];
    npu_vpp_make_taps(batch->method, col0, col1, item->g.sub_x, item->g.frame_width, job->dst_x,
                      job->dst_w, job->crop_x, job->crop_w, job->flip_x, ch->sub_x,
                      vpp_div_up(src->width, ch->sub_x),
                      batch->method == NPU_SCALE_AREA ? 1 : (int32_t)ch->pixel_stride,
                      &s.columns[c]);
    s.word_columns[c] =
        batch->method == NPU_SCALE_BILINEAR && col1 > col0
            ? canonicalise_taps(&s.columns[c], col1 - col0, (int32_t)ch->pixel_stride,
                                vpp_div_up(src->width, ch->sub_x))
            : 0;
    if (!vertical_first)
      continue;
    /* taps are monotonic: the ends bound the bytes a row's samples read */
    s.span[c][0] = s.columns[c].first[0];
    s.span[c][1] = s.columns[c].second[col1 - col0 - 1];
    vertical_first = (size_t)(s.span[c][1] - s.span[c][0] + 1) <=
                     VERTICAL_FIRST_MAX_RATIO * (size_t)(col1 - col0) * ch->pixel_stride;
  }
  if (!vertical_first)
    s.vertical[0] = s.vertical[1] = NULL;
  for (uint32_t y = item->first_row; y < item->first_row + item->row_count; y++) {
    bool content = y >= row0 && y < row1 && col1 > col0;
    fill_rgb(&s, 0, content ? col0 : n, batch->pad_rgb);
    if (content) {
      fill_rgb(&s, col1, n, batch->pad_rgb);
      row_scratch shifted = s;
      for (int i = 0; i < 3; i++) {
        shifted.values[i] = s.values[i] + col0;
        shifted.rgb[i] = s.rgb[i] + col0;
      }
      for (uint32_t c = 0; c < src->channel_count;) {
        const npu_hal_vpp_channel *ch = &src->channels[c];
        int32_t first, second;
        float weight;
        npu_vpp_taps row = {&first, &second, &weight};
        npu_vpp_make_taps(batch->method, y, y + 1, item->g.sub_y, item->g.frame_height,
                          job->dst_y, job->dst_h, job->crop_y, job->crop_h, job->flip_y,
                          ch->sub_y, vpp_div_up(src->height, ch->sub_y), 1, &row);
        if (batch->method != NPU_SCALE_AREA && y + 1 < row1) {
          int32_t next_first, next_second;
          float next_weight;
          npu_vpp_taps next = {&next_first, &next_second, &next_weight};
          npu_vpp_make_taps(batch->method, y + 1, y + 2, item->g.sub_y, item->g.frame_height,
                            job->dst_y, job->dst_h, job->crop_y, job->crop_h, job->flip_y,
                            ch->sub_y, vpp_div_up(src->height, ch->sub_y), 1, &next);
          const npu_vpp_taps *cols = &s.columns[c];
          int32_t a = cols->first[0], b = cols->second[col1 - col0 - 1];
          prefetch_rows(ch, &next, a < b ? a : b, a < b ? b : a);
          if (c + 1 < src->channel_count && same_geometry(ch, &src->channels[c + 1]))
            prefetch_rows(&src->channels[c + 1], &next, a < b ? a : b, a < b ? b : a);
        }
        if (batch->method != NPU_SCALE_AREA && c + 1 < src->channel_count &&
            same_geometry(ch, &src->channels[c + 1])) {
          sample_row_pair(ch, &src->channels[c + 1], &s.columns[c], s.word_columns[c], &row,
                          col1 - col0, shifted.values[c], shifted.values[c + 1], s.span[c],
                          s.vertical[0], s.vertical[1]);
          c += 2;
        } else {
          sample_row(batch->method, ch, &s.columns[c], s.word_columns[c], &row, col1 - col0,
                     shifted.values[c], s.span[c], s.vertical[0]);
          c++;
        }
      }
      to_rgb(src, &shifted, col1 - col0);
    }
    if (batch->kind == NPU_HAL_VPP_TENSOR)
      write_tensor_row(batch, job, y, &s);
    else
      write_image_row(&job->dst, item, y, &s);
  }
  free_scratch(&s);
}

static size_t plan_items(const npu_hal_vpp_batch *batch, work_item *items)
{
  size_t count = 0;
  for (size_t j = 0; j < batch->job_count; j++) {
    const npu_hal_vpp_job *job = &batch->jobs[j];
    grid grids[2];
    size_t grid_count = 1;
    if (batch->kind == NPU_HAL_VPP_TENSOR) {
      grids[0] = (grid){batch->tensor.width, batch->tensor.height, 1, 1, batch->tensor.width,
                        batch->tensor.height};
    } else {
      const npu_hal_vpp_image *dst = &job->dst;
      grids[0] = (grid){dst->width, dst->height, 1, 1, dst->width, dst->height};
      const npu_hal_vpp_channel *chroma = &dst->channels[1];
      if (dst->channel_count == 3 && (chroma->sub_x > 1 || chroma->sub_y > 1)) {
        grids[1] = (grid){vpp_div_up(dst->width, chroma->sub_x),
                          vpp_div_up(dst->height, chroma->sub_y), chroma->sub_x, chroma->sub_y,
                          dst->width, dst->height};
        grid_count = 2;
      }
    }
    for (size_t g = 0; g < grid_count; g++) {
      for (uint32_t row = 0; row < grids[g].height; row += ROWS_PER_ITEM) {
        uint32_t rows = grids[g].height - row < ROWS_PER_ITEM ? grids[g].height - row
                                                               : ROWS_PER_ITEM;
        if (items)
          items[count] = (work_item){job, grids[g], row, rows, g == 1};
        count++;
      }
    }
  }
  return count;
}

static void free_run(batch_run *run)
{
  free(run->items);
  free(run->batch->jobs);
  free(run->batch);
  free(run);
}

static void execute_batch(void *data)
{
  batch_run *run = data;
  npu_cpu_parallel_for(run->device, run->item_count, run_item, run);
  npu_hal_task_fn done = run->done;
  void *done_data = run->done_data;
  free_run(run);
  if (done)
    done(done_data);
}

static npu_status cpu_vpp_submit(npu_hal_device *device, npu_hal_stream *stream,
                                 npu_hal_vpp_batch *batch, npu_hal_task_fn done, void *done_data)
{
  batch_run *run = calloc(1, sizeof *run);
  size_t count = plan_items(batch, NULL);
  work_item *items = run ? malloc(count * sizeof *items) : NULL;
  if (!items) {
    free(run);
    free(batch->jobs);
    free(batch);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "VPP: out of host memory");
  }
  plan_items(batch, items);
  *run = (batch_run){device, batch, items, count, done, done_data};
  npu_status status = npu_cpu_backend.stream_submit(stream, execute_batch, run);
  if (status != NPU_OK) {
    run->done = NULL;
    free_run(run);
  }
  return status;
}

const npu_hal_vpp_ops npu_cpu_vpp_ops = {
    .submit = cpu_vpp_submit,
};
