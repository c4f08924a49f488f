#!/usr/bin/env bash
# The main job on a new machine: installs what is missing, builds gst-npu,
# then shows the device it runs on and measures the runtime under it.
# (The OCR demo pipeline replaces this once npuinfer lands.)
set -euo pipefail
source "$(dirname "$0")/ensure-build.sh"
npu_install_missing_packages
npu_build "$NPU_ROOT/build"
"$NPU_ROOT/build/runtime/tools/npu-info"
echo
"$NPU_ROOT/build/tests/runtime/bench_runtime"
