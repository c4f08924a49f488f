#!/usr/bin/env bash
# npuinfer's multi-stream benchmark: a MobileNetV2-structured model (224x224,
# generated) fed by 1, 4 and 8 videotestsrc streams of 1080p NV12 through ONE
# npuinfer at batch-size 1, 4 and 8, against (a) the model alone in npu-run
# at the same batch and (b) one npuinfer per stream. Prints a table of
# aggregate inferences/s (wall clock, model loading included once per run).
#   tests/gst/bench_infer.sh [BUILD_DIR] [FRAMES_PER_STREAM]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
frames=${2:-60}
export GST_PLUGIN_PATH=$build/gst GST_REGISTRY=$build/tests/gst/bench-registry.bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/tests/models/make_vision_models.py" "$work" >/dev/null
model=$work/mobilenet_v2.onnx
# One 1080p NV12 source, teed to every stream (the frames are shared, not
# copied: generating 1080p frames per stream would cost more than the model).
source="videotestsrc num-buffers=$frames ! video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1 ! tee name=t"
branch() { echo "t. ! queue max-size-buffers=4"; }
run_rate() { # pipeline description, inferences -> inferences/s
  local start end
  start=$(date +%s.%N)
  gst-launch-1.0 -q $1 >/dev/null
  end=$(date +%s.%N)
  echo "$2 / ($end - $start)" | bc -l
}
printf '%-8s %-6s %16s %16s %20s\n' streams batch "one npuinfer/s" "npu-run/s" "npuinfer per stream/s"
for streams in 1 4 8; do
  for batch in 1 4 8; do
    [ "$batch" -gt "$streams" ] && continue # a batch no stream count can fill
    one="$source npuinfer name=infer model=$model batch-size=$batch batch-timeout=50000"
    each="$source"
    for s in $(seq 0 $((streams - 1))); do
      one+=" $(branch) ! infer.sink_$s infer.src_$s ! fakesink sync=false"
      each+=" $(branch) ! npuinfer model=$model ! fakesink sync=false"
    done
    total=$((streams * frames))
    shared=$(run_rate "$one" $total)
    alone=$("$build/runtime/tools/npu-run" "$model" --batch "$batch" --iterations 20 --warmup 2 \
      --json | sed -E 's/.*"throughput_per_s": ([0-9.]+).*/\1/')
    separate=$([ "$batch" = 1 ] && run_rate "$each" $total || echo "")
    printf '%-8s %-6s %16.1f %16.1f %20s\n' "$streams" "$batch" "$shared" "$alone" \
      "${separate:+$(printf '%.1f' "$separate")}"
  done
done
echo "npu-run/s: the model alone at that batch (frames/s); npuinfer also scales each 1080p NV12"
echo "frame to 224x224 and normalises it (one VPP pass); one 1080p source is teed to all streams."
