/* Regions of interest for bindings (see include/gst/npu/npu-regions.h). */
#include "gst/npu/npu-regions.h"

/**
 * gst_buffer_get_npu_region_metas:
 * @buffer: a frame
 *
 * Returns: (transfer container) (element-type GstVideo.VideoRegionOfInterestMeta): every
 * region of interest of @buffer, in the order they were added, valid while the buffer lives
 */
GList *gst_buffer_get_npu_region_metas(GstBuffer *buffer)
{
  g_return_val_if_fail(GST_IS_BUFFER(buffer), NULL);
  GList *regions = NULL;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state,
                                                  GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    regions = g_list_prepend(regions, meta);
  return g_list_reverse(regions);
}

/**
 * gst_npu_region_get_params:
 * @region: a region of interest
 *
 * Returns: (transfer none) (element-type Gst.Structure): the region's params (results such
 * as npudecode's "text" with its "text" and "confidence" fields)
 */
GList *gst_npu_region_get_params(GstVideoRegionOfInterestMeta *region)
{
  g_return_val_if_fail(region != NULL, NULL);
  return region->params;
}
