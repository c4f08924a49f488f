/* GStreamer video frames as VPP images (see gstnpuvideo.h). */
#include "gstnpuvideo.h"

static const struct {
  GstVideoFormat gst;
  uint32_t npu;
} formats[] = {
    {GST_VIDEO_FORMAT_NV12, NPU_FORMAT_NV12}, {GST_VIDEO_FORMAT_NV21, NPU_FORMAT_NV21},
    {GST_VIDEO_FORMAT_I420, NPU_FORMAT_I420}, {GST_VIDEO_FORMAT_YV12, NPU_FORMAT_YV12},
    {GST_VIDEO_FORMAT_YUY2, NPU_FORMAT_YUY2}, {GST_VIDEO_FORMAT_UYVY, NPU_FORMAT_UYVY},
    {GST_VIDEO_FORMAT_RGB, NPU_FORMAT_RGB},   {GST_VIDEO_FORMAT_BGR, NPU_FORMAT_BGR},
    {GST_VIDEO_FORMAT_RGBx, NPU_FORMAT_RGBX}, {GST_VIDEO_FORMAT_BGRx, NPU_FORMAT_BGRX},
    {GST_VIDEO_FORMAT_xRGB, NPU_FORMAT_XRGB}, {GST_VIDEO_FORMAT_xBGR, NPU_FORMAT_XBGR},
    {GST_VIDEO_FORMAT_RGBA, NPU_FORMAT_RGBA}, {GST_VIDEO_FORMAT_BGRA, NPU_FORMAT_BGRA},
    {GST_VIDEO_FORMAT_GRAY8, NPU_FORMAT_GRAY8},
};

uint32_t gst_npu_format_of(GstVideoFormat format)
{
  for (size_t i = 0; i < G_N_ELEMENTS(formats); i++)
    if (formats[i].gst == format)
      return formats[i].npu;
  return 0;
}

gboolean gst_npu_image_describe(const GstVideoInfo *info, const GstVideoMeta *meta,
                                npu_buffer *memory, gsize offset, npu_image *image)
{
  memset(image, 0, sizeof *image);
  image->format = gst_npu_format_of(GST_VIDEO_INFO_FORMAT(info));
  image->width = GST_VIDEO_INFO_WIDTH(info);
  image->height = GST_VIDEO_INFO_HEIGHT(info);
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(info); p++) {
    image->planes[p] = memory;
    image->offsets[p] = offset + (meta ? meta->offset[p] : info->offset[p]);
    image->strides[p] = (size_t)(meta ? meta->stride[p] : info->stride[p]);
  }
  switch (info->colorimetry.matrix) {
  case GST_VIDEO_COLOR_MATRIX_BT601:
    image->matrix = NPU_COLOR_BT601;
    break;
  case GST_VIDEO_COLOR_MATRIX_BT2020:
    image->matrix = NPU_COLOR_BT2020;
    break;
  default:
    image->matrix = NPU_COLOR_BT709;
    break;
  }
  image->range = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255 ? NPU_RANGE_FULL
                                                                         : NPU_RANGE_LIMITED;
  return image->format != 0 && memory != NULL;
}
