#!/usr/bin/env bash
# Plugin-core benchmark: frames/s and CPU time of
#   1080p NV12 -> npuupload ! npuvpp (640x640 RGB) ! npudownload
# against
#   1080p NV12 -> videoconvertscale (640x640 RGB)
# on the same frame pushed repeatedly (imagefreeze), so the source costs
# nothing. Prints a table; asserts nothing.
#   tests/gst/bench_gst.sh [BUILD_DIR] [FRAMES]
set -euo pipefail
build="${1:-$(dirname "$0")/../../build}"
frames="${2:-300}"
export GST_PLUGIN_PATH="$build/gst"
export GST_REGISTRY="$build/tests/gst/bench-registry.bin"
source_desc="videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1 ! imagefreeze num-buffers=$frames"
out_caps="format=RGB,width=640,height=640"

run() { # name, threads, pipeline tail
  local start end cpu
  start=$(date +%s.%N)
  cpu=$( { /usr/bin/time -f "%U %S" gst-launch-1.0 -q $source_desc ! $3 ! fakesink sync=false >/dev/null; } 2>&1 | tail -1) || { echo "$1: pipeline failed: $cpu" >&2; return 1; }
  end=$(date +%s.%N)
  awk -v n="$1" -v t="$2" -v f="$frames" -v s="$start" -v e="$end" -v c="$cpu" \
    'BEGIN { split(c, u, " "); printf "%-44s %7s %10.1f %12.2f\n", n, t, f / (e - s), (u[1] + u[2]) / f * 1000 }'
}

printf "%-44s %7s %10s %12s\n" "pipeline (1080p NV12 -> 640x640 RGB)" threads "frames/s" "CPU ms/frame"
for threads in 1 2; do
  NPU_NUM_THREADS=$threads run "npuupload ! npuvpp ! npudownload" "$threads" \
    "npuupload ! npuvpp ! video/x-raw(memory:NPUMemory),$out_caps ! npudownload"
  NPU_NUM_THREADS=$threads run "npuupload ! npuvpp add-borders=true ! npudownload" "$threads" \
    "npuupload ! npuvpp add-borders=true ! video/x-raw(memory:NPUMemory),$out_caps ! npudownload"
  run "videoconvertscale n-threads=$threads" "$threads" \
    "videoconvertscale n-threads=$threads ! video/x-raw,$out_caps"
done
