#!/usr/bin/env bash
# Upload, convert/scale/letterbox on the device, download: the plugin core
# on its own. Shows a 1080p NV12 camera-like source turned into the 640x640
# RGB letterboxed frame a YOLO model wants, without copying the frames
# between elements (the stats line proves it).
#
#   pipelines/upload-vpp-download.sh [FILE | /dev/videoN]
#
# With FILE (any video GStreamer can decode) or a camera it runs on that
# instead. Adapt: change format/width/height in the caps after npuvpp, or
# set add-borders=false to stretch instead of letterboxing.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if [ $# -ge 1 ]; then
  source_desc="$(npu_source "$1") ! video/x-raw,format=NV12"
else
  source_desc="videotestsrc num-buffers=${NUM_BUFFERS:-120} ! video/x-raw,format=NV12,width=1920,height=1080"
fi

eval gst-launch-1.0 "$source_desc" ! npuupload name=up ! \
  npuvpp add-borders=true border-color=0xff727272 ! \
  '"video/x-raw(memory:NPUMemory),format=RGB,width=640,height=640"' ! \
  npudownload name=down ! fakesink
