/* GStreamer video frames as the runtime's VPP images. */
#ifndef GST_NPU_VIDEO_H
#define GST_NPU_VIDEO_H

#include <gst/video/video.h>
#include <npu/npu.h>

G_BEGIN_DECLS

/* The VPP's format code for a GStreamer video format, 0 when it has none. */
uint32_t gst_npu_format_of(GstVideoFormat format);

/* Describes the frame of `info` (planes placed by `meta` when there is one)
 * whose bytes start `offset` bytes into the device buffer `memory`. */
gboolean gst_npu_image_describe(const GstVideoInfo *info, const GstVideoMeta *meta,
                                npu_buffer *memory, gsize offset, npu_image *image);

/* Bytes per row and rows of plane `plane` of a `width` x `height` frame of
 * `finfo`, without padding. */
void gst_npu_video_plane_size(const GstVideoFormatInfo *finfo, guint plane, guint width,
                              guint height, gsize *row_bytes, guint *rows);

/* Where plane `plane` starts and its stride: by `meta`, else (NULL) the
 * default layout of `info`. */
void gst_npu_video_plane_place(const GstVideoInfo *info, const GstVideoMeta *meta, guint plane,
                               gsize *offset, gsize *stride);

/* Whether two frames of `info` have their planes in the same places: each
 * placed by its video meta, or (meta NULL) by `info`. */
gboolean gst_npu_video_layouts_equal(const GstVideoInfo *info, const GstVideoMeta *a,
                                     const GstVideoMeta *b);

/* Lays out `info` (a default layout, from caps) for a device that wants
 * image rows at multiples of `row_alignment` bytes (a power of two), on top
 * of what `align` asks (a pool's GstVideoAlignment, updated to what the
 * layout gives): each plane's stride rounded up to its alignment and each
 * plane starting at a multiple of it, the planes in their order. Padding
 * in `align` is laid out by gst_video_info_align(). FALSE if that fails. */
gboolean gst_npu_video_info_align_rows(GstVideoInfo *info, guint row_alignment,
                                       GstVideoAlignment *align);

/* Checks a frame of `info` in a buffer of `size` bytes, its planes placed by
 * `meta` (or by `info` when NULL). NULL when it is whole; else what is
 * wrong, for an element error message, with the figures in *details (free
 * them): the buffer is smaller than the caps say (no meta), the meta
 * contradicts the caps (format, size, planes, strides), or a plane of the
 * meta runs past the end of the buffer. */
const gchar *gst_npu_video_frame_check(const GstVideoInfo *info, const GstVideoMeta *meta,
                                       gsize size, gchar **details);

/* Gives `dst`, whose memories sit where those of `src` do, the video meta of
 * `src` (gst_buffer_copy_into leaves it out: it is tagged as memory meta).
 * Returns the new meta, or NULL when `src` has none. */
GstVideoMeta *gst_npu_buffer_copy_video_meta(GstBuffer *dst, GstBuffer *src);

G_END_DECLS

#endif
