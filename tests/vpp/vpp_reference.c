/* The reference VPP, straight from the definitions (see vpp_reference.h). */
#include <math.h>

#include "vpp_reference.h"

static int is_yuv(uint32_t f)
{
  return f == NPU_FORMAT_NV12 || f == NPU_FORMAT_NV21 || f == NPU_FORMAT_I420 ||
         f == NPU_FORMAT_YV12 || f == NPU_FORMAT_YUY2 || f == NPU_FORMAT_UYVY ||
         f == NPU_FORMAT_NV16 || f == NPU_FORMAT_NV24 || f == NPU_FORMAT_YUV422 ||
         f == NPU_FORMAT_YUV444;
}

int ref_channel_count(uint32_t format)
{
  return format == NPU_FORMAT_GRAY8 ? 1 : 3;
}

void ref_channel_subsampling(uint32_t format, int c, uint32_t *sub_x, uint32_t *sub_y)
{
  *sub_x = *sub_y = 1;
  if (c == 0 || !is_yuv(format) || format == NPU_FORMAT_NV24 || format == NPU_FORMAT_YUV444)
    return;
  *sub_x = 2;
  *sub_y = format == NPU_FORMAT_YUY2 || format == NPU_FORMAT_UYVY || format == NPU_FORMAT_NV16 ||
                   format == NPU_FORMAT_YUV422
               ? 1
               : 2;
}

uint8_t ref_read_channel(const ref_frame *f, int c, uint32_t x, uint32_t y)
{
  const uint8_t *row0 = f->planes[0] + y * f->strides[0];
  switch (f->format) {
  case NPU_FORMAT_NV12:
  case NPU_FORMAT_NV21:
  case NPU_FORMAT_NV16: /* U V pairs, one per 2 luma columns */
  case NPU_FORMAT_NV24: /* U V pairs, one per luma pixel */ {
    if (c == 0)
      return row0[x];
    int u_first = f->format != NPU_FORMAT_NV21;
    int second = (c == 1) != u_first;
    return f->planes[1][y * f->strides[1] + 2 * x + second];
  }
  case NPU_FORMAT_I420:
  case NPU_FORMAT_YV12:
  case NPU_FORMAT_YUV422:
  case NPU_FORMAT_YUV444: {
    if (c == 0)
      return row0[x];
    int plane = (c == 1) == (f->format != NPU_FORMAT_YV12) ? 1 : 2;
    return f->planes[plane][y * f->strides[plane] + x];
  }
  case NPU_FORMAT_YUY2: /* Y0 U Y1 V */
    return c == 0 ? row0[2 * x] : row0[4 * x + (c == 1 ? 1 : 3)];
  case NPU_FORMAT_UYVY: /* U Y0 V Y1 */
    return c == 0 ? row0[2 * x + 1] : row0[4 * x + (c == 1 ? 0 : 2)];
  case NPU_FORMAT_GRAY8:
    return row0[x];
  default: {
    /* Packed RGB: byte position of R, G, B in the pixel. */
    static const struct {
      uint32_t format;
      int bytes, r, g, b;
    } packed[] = {
        {NPU_FORMAT_RGB, 3, 0, 1, 2},  {NPU_FORMAT_BGR, 3, 2, 1, 0},
        {NPU_FORMAT_RGBX, 4, 0, 1, 2}, {NPU_FORMAT_BGRX, 4, 2, 1, 0},
        {NPU_FORMAT_XRGB, 4, 1, 2, 3}, {NPU_FORMAT_XBGR, 4, 3, 2, 1},
        {NPU_FORMAT_RGBA, 4, 0, 1, 2}, {NPU_FORMAT_BGRA, 4, 2, 1, 0},
    };
    for (size_t i = 0; i < sizeof packed / sizeof packed[0]; i++) {
      if (packed[i].format == f->format) {
        int pos = c == 0 ? packed[i].r : c == 1 ? packed[i].g : packed[i].b;
        return row0[(size_t)x * packed[i].bytes + pos];
      }
    }
    return 0;
  }
  }
}

static void luma_weights(npu_color_matrix m, double *kr, double *kb)
{
  *kr = m == NPU_COLOR_BT601 ? 0.299 : m == NPU_COLOR_BT709 ? 0.2126 : 0.2627;
  *kb = m == NPU_COLOR_BT601 ? 0.114 : m == NPU_COLOR_BT709 ? 0.0722 : 0.0593;
}

static double clamp255(double v)
{
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* Channel c sampled at source position (sx, sy) in luma pixels, or averaged
 * over [x0, x1) x [y0, y1) for area. */
static double sample(const ref_frame *f, int c, npu_scale_method method, double sx, double sy,
                     double x0, double x1, double y0, double y1)
{
  uint32_t sub_x, sub_y;
  ref_channel_subsampling(f->format, c, &sub_x, &sub_y);
  int64_t w = (f->width + sub_x - 1) / sub_x, h = (f->height + sub_y - 1) / sub_y;
#define CLAMP(v, n) ((v) < 0 ? 0 : (v) >= (n) ? (n) - 1 : (v))
  if (method == NPU_SCALE_NEAREST)
    return ref_read_channel(f, c, (uint32_t)CLAMP((int64_t)floor(sx / sub_x), w),
                            (uint32_t)CLAMP((int64_t)floor(sy / sub_y), h));
  if (method == NPU_SCALE_AREA) {
    /* Pixels whose centres lie in the footprint; the nearest if none. */
    int64_t xa = (int64_t)ceil(x0 / sub_x - 0.5), xb = (int64_t)ceil(x1 / sub_x - 0.5);
    int64_t ya = (int64_t)ceil(y0 / sub_y - 0.5), yb = (int64_t)ceil(y1 / sub_y - 0.5);
    if (xb <= xa) {
      xa = (int64_t)floor((x0 + x1) / 2 / sub_x);
      xb = xa + 1;
    }
    if (yb <= ya) {
      ya = (int64_t)floor((y0 + y1) / 2 / sub_y);
      yb = ya + 1;
    }
    xa = xa < 0 ? 0 : xa;
    ya = ya < 0 ? 0 : ya;
    xb = xb > w ? w : xb;
    yb = yb > h ? h : yb;
    if (xb <= xa)
      xa = xb - 1;
    if (yb <= ya)
      ya = yb - 1;
    double sum = 0;
    for (int64_t y = ya; y < yb; y++)
      for (int64_t x = xa; x < xb; x++)
        sum += ref_read_channel(f, c, (uint32_t)x, (uint32_t)y);
    return sum / (double)((xb - xa) * (yb - ya));
  }
  double cx = sx / sub_x - 0.5, cy = sy / sub_y - 0.5;
  int64_t ix = (int64_t)floor(cx), iy = (int64_t)floor(cy);
  double fx = cx - ix, fy = cy - iy;
  double p00 = ref_read_channel(f, c, (uint32_t)CLAMP(ix, w), (uint32_t)CLAMP(iy, h));
  double p01 = ref_read_channel(f, c, (uint32_t)CLAMP(ix + 1, w), (uint32_t)CLAMP(iy, h));
  double p10 = ref_read_channel(f, c, (uint32_t)CLAMP(ix, w), (uint32_t)CLAMP(iy + 1, h));
  double p11 = ref_read_channel(f, c, (uint32_t)CLAMP(ix + 1, w), (uint32_t)CLAMP(iy + 1, h));
#undef CLAMP
  return (p00 * (1 - fx) + p01 * fx) * (1 - fy) + (p10 * (1 - fx) + p11 * fx) * fy;
}

static void to_rgb(const ref_frame *f, const double ch[3], double rgb[3])
{
  if (f->format == NPU_FORMAT_GRAY8) {
    rgb[0] = rgb[1] = rgb[2] = ch[0];
    return;
  }
  if (!is_yuv(f->format)) {
    for (int i = 0; i < 3; i++)
      rgb[i] = ch[i];
    return;
  }
  double kr, kb;
  luma_weights(f->matrix, &kr, &kb);
  double kg = 1 - kr - kb;
  int limited = f->range == NPU_RANGE_LIMITED;
  double y = limited ? (ch[0] - 16) * 255 / 219 : ch[0];
  double cb = (ch[1] - 128) * (limited ? 255.0 / 224 : 1);
  double cr = (ch[2] - 128) * (limited ? 255.0 / 224 : 1);
  double r = y + 2 * (1 - kr) * cr, b = y + 2 * (1 - kb) * cb;
  rgb[0] = clamp255(r);
  rgb[1] = clamp255((y - kr * r - kb * b) / kg);
  rgb[2] = clamp255(b);
}

void ref_output_rgb(const ref_frame *src, const ref_placement *p, npu_scale_method method,
                    uint32_t gx, uint32_t gy, uint32_t sub_x, uint32_t sub_y,
                    const uint8_t pad_rgb[3], double rgb[3])
{
  /* the centre of the output pixels the position covers (one, not two, at
   * the end of an odd-sized frame) */
  double ux = (gx * sub_x + fmin((gx + 1.0) * sub_x, p->frame_w)) / 2;
  double uy = (gy * sub_y + fmin((gy + 1.0) * sub_y, p->frame_h)) / 2;
  if (ux < p->dst_x || ux >= p->dst_x + p->dst_w || uy < p->dst_y || uy >= p->dst_y + p->dst_h) {
    for (int i = 0; i < 3; i++)
      rgb[i] = pad_rgb[i];
    return;
  }
  double rx = p->crop_w / p->dst_w, ry = p->crop_h / p->dst_h;
  double sx = p->crop_x + (ux - p->dst_x) * rx, sy = p->crop_y + (uy - p->dst_y) * ry;
  double x0 = p->crop_x + (fmax(gx * (double)sub_x, p->dst_x) - p->dst_x) * rx;
  double x1 = p->crop_x + (fmin((gx + 1.0) * sub_x, p->dst_x + p->dst_w) - p->dst_x) * rx;
  double y0 = p->crop_y + (fmax(gy * (double)sub_y, p->dst_y) - p->dst_y) * ry;
  double y1 = p->crop_y + (fmin((gy + 1.0) * sub_y, p->dst_y + p->dst_h) - p->dst_y) * ry;
  double ch[3] = {0, 0, 0};
  for (int c = 0; c < ref_channel_count(src->format); c++)
    ch[c] = sample(src, c, method, sx, sy, x0, x1, y0, y1);
  double unclamped[3];
  to_rgb(src, ch, unclamped);
  for (int i = 0; i < 3; i++)
    rgb[i] = clamp255(unclamped[i]);
}

double ref_channel_from_rgb(uint32_t format, npu_color_matrix matrix, npu_color_range range,
                            int c, const double rgb[3])
{
  if (format == NPU_FORMAT_GRAY8)
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2];
  if (!is_yuv(format))
    return rgb[c];
  double kr, kb;
  luma_weights(matrix, &kr, &kb);
  double y = kr * rgb[0] + (1 - kr - kb) * rgb[1] + kb * rgb[2];
  int limited = range == NPU_RANGE_LIMITED;
  if (c == 0)
    return limited ? y * 219 / 255 + 16 : y;
  double chroma = c == 1 ? (rgb[2] - y) / (2 * (1 - kb)) : (rgb[0] - y) / (2 * (1 - kr));
  return (limited ? chroma * 224 / 255 : chroma) + 128;
}
