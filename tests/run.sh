#!/usr/bin/env bash
# The test command: installs what is missing, builds with warnings as
# errors, runs the whole suite with meson test.
#   tests/run.sh             everything, in build/
#   tests/run.sh --sanitize  unit tests under AddressSanitizer + UBSan, in build-asan/
set -euo pipefail
source "$(dirname "$0")/../pipelines/ensure-build.sh"
npu_install_missing_packages

if [ "${1:-}" = "--sanitize" ]; then
  npu_build "$NPU_ROOT/build-asan" -Db_sanitize=address,undefined -Db_lundef=false
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  meson test -C "$NPU_ROOT/build-asan" --print-errorlogs --num-processes 2 \
    --suite runtime --suite vpp --suite executor
else
  npu_build "$NPU_ROOT/build"
  meson test -C "$NPU_ROOT/build" --print-errorlogs --num-processes 2
fi
