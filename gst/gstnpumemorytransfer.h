/* Caps transforms shared by npuupload and npudownload: the same video caps
 * with the memory feature swapped. */
#ifndef GST_NPU_MEMORY_TRANSFER_H
#define GST_NPU_MEMORY_TRANSFER_H

#include <gst/gst.h>

/* `caps` with every structure given NPU memory (to_npu) or system memory;
 * with keep_original the input structures are kept too, first. */
GstCaps *gst_npu_caps_with_memory(GstCaps *caps, gboolean to_npu, gboolean keep_original,
                                  GstCaps *filter);

#endif
