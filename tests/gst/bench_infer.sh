#!/usr/bin/env bash
# npuinfer's multi-stream benchmark: a MobileNetV2-structured model (224x224,
# generated) on 1, 4 and 8 streams of 1080p NV12 frames from memory
# (bench_infer: pre-rendered frames pushed by appsrc, so the source costs
# next to nothing) through ONE npuinfer at batch 1, 4 and 8, against the
# model alone in npu-run at the same batch. Prints aggregate inferences/s,
# their ratio, the cores each keeps busy (process CPU time over wall time: under
# 2 on 2 cores is time the device waited), and each stream's latency through
# npuinfer (p50/p99).
# Each case runs NPU_BENCH_ROUNDS times (3 by default), npuinfer and npu-run
# alternating, so that both see the same machine; the row gives the medians of
# the rounds and the median of the rounds' ratios (each round's ratio and
# figures on a line of its own above it).
#   tests/gst/bench_infer.sh [BUILD_DIR] [FRAMES_PER_STREAM] [STREAMSxBATCH...]
# NPU_BENCH_PLUGIN_DIR measures another build's plugin with the same tools.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
frames=${2:-60}
shift $(($# > 2 ? 2 : $#))
cases=${*:-1x1 4x4 8x8}
export GST_PLUGIN_PATH=${NPU_BENCH_PLUGIN_DIR:-$build/gst}
export GST_REGISTRY=$build/tests/gst/bench-registry-$$.bin
work=$(mktemp -d)
trap 'rm -rf "$work" "$GST_REGISTRY"' EXIT
/usr/bin/python3 "$root/tests/models/make_vision_models.py" "$work" >/dev/null
model=$work/mobilenet_v2.onnx
rounds=${NPU_BENCH_ROUNDS:-3}
median() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf '%-8s %-6s %14s %10s %7s %12s  %s\n' streams batch "npuinfer/s" "npu-run/s" ratio \
  "cores busy" "latency ms p50/p99 per stream"
for case in $cases; do
  streams=${case%x*} batch=${case#*x}
  : >"$work/rounds"
  for round in $(seq "$rounds"); do
    out=$("$build/tests/gst/bench_infer" "$model" "$streams" "$batch" "$frames")
    shared=$(sed -n 's/^inferences\/s //p' <<<"$out")
    shared_busy=$(sed -n 's/^cores busy //p' <<<"$out")
    latency=$(sed -n 's/^stream [0-9]* latency ms p50 \([0-9.]*\) p99 \([0-9.]*\).*/\1\/\2/p' \
      <<<"$out" | paste -sd ' ')
    # as many batches as npuinfer ran
    runs=$((frames * streams / batch > 20 ? frames * streams / batch : 20))
    json=$("$build/runtime/tools/npu-run" "$model" --batch "$batch" --iterations "$runs" \
      --warmup 2 --json)
    alone=$(sed -E 's/.*"throughput_per_s": ([0-9.]+).*/\1/' <<<"$json")
    alone_busy=$(sed -E 's/.*"cores_busy": ([0-9.]+).*/\1/' <<<"$json")
    ratio=$(echo "100 * $shared / $alone" | bc -l)
    echo "$shared $alone $ratio" >>"$work/rounds"
    if [ "$rounds" -gt 1 ]; then
      printf '  round %-3s %11.1f %10.1f %6.0f%% %5s / %-5s  %s\n' "$round" "$shared" "$alone" \
        "$ratio" "$shared_busy" "$alone_busy" "$latency"
    fi
  done
  printf '%-8s %-6s %14.1f %10.1f %6.0f%% %5s / %-5s  %s\n' "$streams" "$batch" \
    "$(cut -d' ' -f1 "$work/rounds" | median)" "$(cut -d' ' -f2 "$work/rounds" | median)" \
    "$(cut -d' ' -f3 "$work/rounds" | median)" "$shared_busy" "$alone_busy" "$latency"
done
echo "npu-run/s: the model alone at that batch; npuinfer also scales each 1080p NV12 frame to"
echo "224x224 and normalises it (one VPP pass per batch). A case's row: the medians of"
echo "its rounds (ratio: the median of the rounds' ratios); cores busy and latency: its last round."
