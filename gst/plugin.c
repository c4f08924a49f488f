/* The "npu" plugin: zero-copy video inference elements over the gst-npu runtime. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstnpuanalytics.h"
#include "gstnpudecode.h"
#include "gstnpudownload.h"
#include "gstnpuinfer.h"
#include "gstnpumetaconvert.h"
#ifdef GST_NPU_HAVE_MQTT
#include "gstnpupublish.h"
#endif
#include "gstnputrack.h"
#include "gstnpuoverlay.h"
#include "gstnpuupload.h"
#include "gstnpuvpp.h"

static gboolean plugin_init(GstPlugin *plugin)
{
  gboolean ok = GST_ELEMENT_REGISTER(npuupload, plugin);
  ok &= GST_ELEMENT_REGISTER(npudownload, plugin);
  ok &= GST_ELEMENT_REGISTER(npuvpp, plugin);
  ok &= GST_ELEMENT_REGISTER(npuinfer, plugin);
  ok &= GST_ELEMENT_REGISTER(npudecode, plugin);
  ok &= GST_ELEMENT_REGISTER(npumetaconvert, plugin);
  ok &= GST_ELEMENT_REGISTER(npuoverlay, plugin);
  ok &= GST_ELEMENT_REGISTER(nputrack, plugin);
  ok &= GST_ELEMENT_REGISTER(npuanalytics, plugin);
#ifdef GST_NPU_HAVE_MQTT
  ok &= GST_ELEMENT_REGISTER(npupublish, plugin);
#endif
  return ok;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, npu,
                  "Zero-copy multi-stream video inference on NPU devices (CPU backend included)",
                  plugin_init, "0.1.0", "LGPL", "gst-npu", "https://example.invalid/gst-npu")
