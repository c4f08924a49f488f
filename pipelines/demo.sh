#!/usr/bin/env bash
# The main job on a new machine: installs what is missing, builds gst-npu,
# shows the device it runs on, runs a zero-copy upload -> VPP -> download
# pipeline (1080p NV12 to a 640x640 letterboxed RGB model input), and
# measures the VPP against GStreamer's own converter.
# (The OCR demo replaces this once npuinfer lands.)
set -euo pipefail
source "$(dirname "$0")/ensure-build.sh"
npu_prepare_build

"$NPU_BUILD_DIR/runtime/tools/npu-info"
echo
echo "== 1080p NV12 -> npuupload ! npuvpp (letterbox 640x640 RGB) ! npudownload, 120 frames"
NUM_BUFFERS=120 NPU_BUILD_DIR="$NPU_BUILD_DIR" "$NPU_ROOT/pipelines/upload-vpp-download.sh"
echo
"$NPU_BUILD_DIR/tests/vpp/bench_vpp"
