/* The format table. Channel offsets are bytes within a pixel (or pixel
 * group, for 4:2:2 packed and semi-planar chroma). */
#include "vpp_formats.h"

#define YUV420_PLANES {{1, 1, 1}, {2, 2, 1}, {2, 2, 1}}
#define RGB24(r, g, b) {{0, r, 3, 1, 1}, {0, g, 3, 1, 1}, {0, b, 3, 1, 1}}
#define RGB32(r, g, b) {{0, r, 4, 1, 1}, {0, g, 4, 1, 1}, {0, b, 4, 1, 1}}

static const vpp_format_info formats[] = {
    {NPU_FORMAT_NV12, "NV12", VPP_FAMILY_YUV, 2, 3,
     {{0, 0, 1, 1, 1}, {1, 0, 2, 2, 2}, {1, 1, 2, 2, 2}}, -1, {{1, 1, 1}, {2, 2, 2}}},
    {NPU_FORMAT_NV21, "NV21", VPP_FAMILY_YUV, 2, 3,
     {{0, 0, 1, 1, 1}, {1, 1, 2, 2, 2}, {1, 0, 2, 2, 2}}, -1, {{1, 1, 1}, {2, 2, 2}}},
    {NPU_FORMAT_I420, "I420", VPP_FAMILY_YUV, 3, 3,
     {{0, 0, 1, 1, 1}, {1, 0, 1, 2, 2}, {2, 0, 1, 2, 2}}, -1, YUV420_PLANES},
    {NPU_FORMAT_YV12, "YV12", VPP_FAMILY_YUV, 3, 3,
     {{0, 0, 1, 1, 1}, {2, 0, 1, 2, 2}, {1, 0, 1, 2, 2}}, -1, YUV420_PLANES},
    {NPU_FORMAT_NV16, "NV16", VPP_FAMILY_YUV, 2, 3,
     {{0, 0, 1, 1, 1}, {1, 0, 2, 2, 1}, {1, 1, 2, 2, 1}}, -1, {{1, 1, 1}, {2, 1, 2}}},
    {NPU_FORMAT_NV24, "NV24", VPP_FAMILY_YUV, 2, 3,
     {{0, 0, 1, 1, 1}, {1, 0, 2, 1, 1}, {1, 1, 2, 1, 1}}, -1, {{1, 1, 1}, {1, 1, 2}}},
    {NPU_FORMAT_YUV422, "Y42B", VPP_FAMILY_YUV, 3, 3,
     {{0, 0, 1, 1, 1}, {1, 0, 1, 2, 1}, {2, 0, 1, 2, 1}}, -1, {{1, 1, 1}, {2, 1, 1}, {2, 1, 1}}},
    {NPU_FORMAT_YUV444, "Y444", VPP_FAMILY_YUV, 3, 3,
     {{0, 0, 1, 1, 1}, {1, 0, 1, 1, 1}, {2, 0, 1, 1, 1}}, -1, {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}},
    {NPU_FORMAT_YUY2, "YUY2", VPP_FAMILY_YUV, 1, 3,
     {{0, 0, 2, 1, 1}, {0, 1, 4, 2, 1}, {0, 3, 4, 2, 1}}, -1, {{2, 1, 4}}},
    {NPU_FORMAT_UYVY, "UYVY", VPP_FAMILY_YUV, 1, 3,
     {{0, 1, 2, 1, 1}, {0, 0, 4, 2, 1}, {0, 2, 4, 2, 1}}, -1, {{2, 1, 4}}},
    {NPU_FORMAT_RGB, "RGB", VPP_FAMILY_RGB, 1, 3, RGB24(0, 1, 2), -1, {{1, 1, 3}}},
    {NPU_FORMAT_BGR, "BGR", VPP_FAMILY_RGB, 1, 3, RGB24(2, 1, 0), -1, {{1, 1, 3}}},
    {NPU_FORMAT_RGBX, "RGBx", VPP_FAMILY_RGB, 1, 3, RGB32(0, 1, 2), 3, {{1, 1, 4}}},
    {NPU_FORMAT_BGRX, "BGRx", VPP_FAMILY_RGB, 1, 3, RGB32(2, 1, 0), 3, {{1, 1, 4}}},
    {NPU_FORMAT_XRGB, "xRGB", VPP_FAMILY_RGB, 1, 3, RGB32(1, 2, 3), 0, {{1, 1, 4}}},
    {NPU_FORMAT_XBGR, "xBGR", VPP_FAMILY_RGB, 1, 3, RGB32(3, 2, 1), 0, {{1, 1, 4}}},
    {NPU_FORMAT_RGBA, "RGBA", VPP_FAMILY_RGB, 1, 3, RGB32(0, 1, 2), 3, {{1, 1, 4}}},
    {NPU_FORMAT_BGRA, "BGRA", VPP_FAMILY_RGB, 1, 3, RGB32(2, 1, 0), 3, {{1, 1, 4}}},
    {NPU_FORMAT_GRAY8, "GRAY8", VPP_FAMILY_GRAY, 1, 1, {{0, 0, 1, 1, 1}}, -1, {{1, 1, 1}}},
};

const vpp_format_info *vpp_format_lookup(uint32_t fourcc)
{
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (formats[i].fourcc == fourcc)
      return &formats[i];
  return NULL;
}
