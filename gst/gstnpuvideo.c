/* GStreamer video frames as VPP images (see gstnpuvideo.h). */
#include "gstnpuvideo.h"

static const struct {
  GstVideoFormat gst;
  uint32_t npu;
} formats[] = {
    {GST_VIDEO_FORMAT_NV12, NPU_FORMAT_NV12}, {GST_VIDEO_FORMAT_NV21, NPU_FORMAT_NV21},
    {GST_VIDEO_FORMAT_I420, NPU_FORMAT_I420}, {GST_VIDEO_FORMAT_YV12, NPU_FORMAT_YV12},
    {GST_VIDEO_FORMAT_NV16, NPU_FORMAT_NV16}, {GST_VIDEO_FORMAT_NV24, NPU_FORMAT_NV24},
    {GST_VIDEO_FORMAT_Y42B, NPU_FORMAT_YUV422}, {GST_VIDEO_FORMAT_Y444, NPU_FORMAT_YUV444},
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

void gst_npu_video_plane_size(const GstVideoFormatInfo *finfo, guint plane, guint width,
                              guint height, gsize *row_bytes, guint *rows)
{
  gint comps[GST_VIDEO_MAX_COMPONENTS];
  gst_video_format_info_component(finfo, plane, comps);
  gint comp = comps[0] >= 0 ? comps[0] : 0;
  /* Packed 4:2:2 (YUY2, UYVY): a pixel stride of 2 on the unscaled width. */
  *row_bytes = (gsize)GST_VIDEO_FORMAT_INFO_PSTRIDE(finfo, comp) *
               (gsize)GST_VIDEO_FORMAT_INFO_SCALE_WIDTH(finfo, comp, width);
  *rows = (guint)GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(finfo, comp, height);
}

void gst_npu_video_plane_place(const GstVideoInfo *info, const GstVideoMeta *meta, guint plane,
                               gsize *offset, gsize *stride)
{
  *offset = meta ? meta->offset[plane] : info->offset[plane];
  *stride = (gsize)(meta ? meta->stride[plane] : info->stride[plane]);
}

gboolean gst_npu_video_layouts_equal(const GstVideoInfo *info, const GstVideoMeta *a,
                                     const GstVideoMeta *b)
{
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(info); p++) {
    gsize offset_a, offset_b, stride_a, stride_b;
    gst_npu_video_plane_place(info, a, p, &offset_a, &stride_a);
    gst_npu_video_plane_place(info, b, p, &offset_b, &stride_b);
    if (offset_a != offset_b || stride_a != stride_b)
      return FALSE;
  }
  return TRUE;
}

static gsize round_up(gsize value, gsize alignment)
{
  return (value + alignment - 1) / alignment * alignment;
}

gboolean gst_npu_video_info_align_rows(GstVideoInfo *info, guint row_alignment,
                                       GstVideoAlignment *align)
{
  guint n_planes = GST_VIDEO_INFO_N_PLANES(info);
  gboolean masks_ok = TRUE;
  for (guint p = 0; p < n_planes; p++) {
    align->stride_align[p] |= row_alignment - 1;
    masks_ok &= (align->stride_align[p] & (align->stride_align[p] + 1)) == 0;
  }
  /* Padding moves the visible pixels inside the planes: GStreamer's own
   * layout knows how (it may widen rows more than the alignment needs). */
  if (align->padding_top || align->padding_bottom || align->padding_left ||
      align->padding_right || !masks_ok)
    return gst_video_info_align(info, align);

  /* The planes in memory order (YV12 has V before U). */
  guint order[GST_VIDEO_MAX_PLANES];
  for (guint p = 0; p < n_planes; p++) {
    guint i = p;
    for (; i > 0 && info->offset[order[i - 1]] > info->offset[p]; i--)
      order[i] = order[i - 1];
    order[i] = p;
  }
  gsize new_offset[GST_VIDEO_MAX_PLANES];
  gint new_stride[GST_VIDEO_MAX_PLANES];
  gsize end = 0;
  for (guint i = 0; i < n_planes; i++) {
    guint p = order[i];
    gsize alignment = (gsize)align->stride_align[p] + 1;
    gsize extent = (i + 1 < n_planes ? info->offset[order[i + 1]] : info->size) - info->offset[p];
    gsize rows = extent / (gsize)info->stride[p];
    gsize stride = round_up((gsize)info->stride[p], alignment);
    if (stride > G_MAXINT)
      return FALSE;
    new_stride[p] = (gint)stride;
    new_offset[p] = round_up(end, alignment);
    /* Bytes past the last whole row (none in GStreamer's layouts) stay. */
    end = new_offset[p] + stride * rows + (extent - rows * (gsize)info->stride[p]);
  }
  for (guint p = 0; p < n_planes; p++) {
    info->offset[p] = new_offset[p];
    info->stride[p] = new_stride[p];
  }
  info->size = end;
  return TRUE;
}

const gchar *gst_npu_video_frame_check(const GstVideoInfo *info, const GstVideoMeta *meta,
                                       gsize size, gchar **details)
{
  *details = NULL;
  if (!meta) {
    if (size >= GST_VIDEO_INFO_SIZE(info))
      return NULL;
    *details = g_strdup_printf("%" G_GSIZE_FORMAT " bytes, %ux%u %s needs %" G_GSIZE_FORMAT,
                               size, GST_VIDEO_INFO_WIDTH(info), GST_VIDEO_INFO_HEIGHT(info),
                               GST_VIDEO_INFO_NAME(info), GST_VIDEO_INFO_SIZE(info));
    return "Input buffer is smaller than its caps say";
  }
  const gchar *mismatch = "Input video meta does not match the caps";
  if (meta->format != GST_VIDEO_INFO_FORMAT(info) ||
      meta->n_planes != GST_VIDEO_INFO_N_PLANES(info) ||
      meta->width < (guint)GST_VIDEO_INFO_WIDTH(info) ||
      meta->height < (guint)GST_VIDEO_INFO_HEIGHT(info)) {
    *details = g_strdup_printf("video meta: %ux%u %s in %u planes; caps: %ux%u %s in %u planes",
                               meta->width, meta->height,
                               gst_video_format_to_string(meta->format), meta->n_planes,
                               GST_VIDEO_INFO_WIDTH(info), GST_VIDEO_INFO_HEIGHT(info),
                               GST_VIDEO_INFO_NAME(info), GST_VIDEO_INFO_N_PLANES(info));
    return mismatch;
  }
  for (guint p = 0; p < meta->n_planes; p++) {
    gsize row_bytes;
    guint rows;
    gst_npu_video_plane_size(info->finfo, p, GST_VIDEO_INFO_WIDTH(info),
                             GST_VIDEO_INFO_HEIGHT(info), &row_bytes, &rows);
    if (meta->stride[p] < 0 || (gsize)meta->stride[p] < row_bytes) {
      *details = g_strdup_printf("video meta: plane %u stride %d is below its %" G_GSIZE_FORMAT
                                 "-byte rows", p, meta->stride[p], row_bytes);
      return mismatch;
    }
    gsize needed = (gsize)meta->stride[p] * (rows - 1) + row_bytes;
    if (meta->offset[p] > size || needed > size - meta->offset[p]) {
      *details = g_strdup_printf("%" G_GSIZE_FORMAT " bytes; the video meta puts plane %u (%u "
                                 "rows of stride %d) at offset %" G_GSIZE_FORMAT ", up to byte %"
                                 G_GSIZE_FORMAT, size, p, rows, meta->stride[p], meta->offset[p],
                                 meta->offset[p] + needed);
      return "Input buffer is smaller than its video meta says";
    }
  }
  return NULL;
}

GstVideoMeta *gst_npu_buffer_copy_video_meta(GstBuffer *dst, GstBuffer *src)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta(src);
  if (!meta)
    return NULL;
  GstVideoMeta *copy = gst_buffer_add_video_meta_full(dst, meta->flags, meta->format, meta->width,
                                                      meta->height, meta->n_planes, meta->offset,
                                                      meta->stride);
  copy->alignment = meta->alignment;
  return copy;
}
