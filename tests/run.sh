#!/usr/bin/env bash
# The test command: installs what is missing, builds with warnings as
# errors, runs the whole suite with meson test.
#   tests/run.sh             everything, in build/
#   tests/run.sh --sanitize  unit and element tests under AddressSanitizer + UBSan, in build-asan/
set -euo pipefail
source "$(dirname "$0")/../pipelines/ensure-build.sh"
npu_install_missing_packages

if [ "${1:-}" = "--sanitize" ]; then
  npu_build "$NPU_ROOT/build-asan" -Db_sanitize=address,undefined -Db_lundef=false
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # the zoo's models are checked in the plain build; under the sanitizers
  # they would take many minutes
  export NPU_TEST_SKIP_ZOO=1
  meson test -C "$NPU_ROOT/build-asan" --print-errorlogs --num-processes 2 \
    --suite runtime --suite vpp --suite executor --suite analytics --no-suite gst
  # The element tests too: GStreamer loads the plugin in the test process
  # (its plugin scanner lacks the sanitizer runtime, which must be loaded
  # first); leaks are the leaks tracer test's job (GLib keeps allocations
  # for the life of the process).
  rm -f "$NPU_ROOT/build-asan/tests/gst/registry.bin"
  GST_REGISTRY_FORK=no ASAN_OPTIONS=detect_leaks=0 meson test -C "$NPU_ROOT/build-asan" \
    --print-errorlogs --num-processes 2 --suite gst \
    --wrapper "env LD_PRELOAD=$(cc -print-file-name=libasan.so):$(cc -print-file-name=libubsan.so)"
else
  npu_install_test_packages
  npu_build "$NPU_ROOT/build"
  meson test -C "$NPU_ROOT/build" --print-errorlogs --num-processes 2
fi
