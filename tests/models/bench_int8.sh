#!/usr/bin/env bash
# int8 against fp32 and against ONNX Runtime: for each model and batch,
# rounds alternate our fp32 model, our run of its QDQ form (npu-quantize)
# and ORT 1.30 running the same QDQ model, same input and threads; prints
# min and median latency over the rounds' runs (each round: N runs after a
# warm-up) and the SQNR of our int8 and ORT's int8 outputs against our fp32.
#   tests/models/bench_int8.sh MODELDIR [--rounds N] [--iterations N] [--threads N]
#        [--models NAME,...] [--batches 1,8]
# MODELDIR holds NAME.onnx and NAME.qdq.onnx (make_vision_models.py, then
# npu-quantize); NAME: resnet50, mobilenet_v2, yolov8n (input `input`) or
# ch_PP-OCRv4_det_infer (input `x`, 640x640).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/fetch_assets.sh"
[ $# -ge 1 ] || { echo "usage: $0 MODELDIR [options]" >&2; exit 2; }
dir=$1; shift
rounds=3 iterations=10 threads=2 names=resnet50,mobilenet_v2,yolov8n batches=1,8
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --models) names=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    *) echo "bench_int8: unknown option $1" >&2; exit 2 ;;
  esac
done
npu_run=${NPU_BUILD_DIR:-$root/build}/runtime/tools/npu-run
[ -x "$npu_run" ] || { echo "bench_int8: build first" >&2; exit 1; }
npu_fetch_ort || { echo "bench_int8: SKIP: onnxruntime-node not available from npm"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-22s %5s %15s %15s %15s %7s %7s %9s %9s\n' model batch "fp32 min/med" \
  "int8 min/med" "ORT int8 min/med" "x fp32" "x ORT" "SQNR ours" "SQNR ORT"
for name in ${names//,/ }; do
  input=input size=224
  case $name in
    yolov8n) size=640 ;;
    ch_PP-OCRv4_det_infer) input=x size=640 ;;
  esac
  for batch in ${batches//,/ }; do
    run=$work/$name-$batch
    mkdir -p "$run"/{fp32,int8,ort}
    /usr/bin/python3 "$here/zoo.py" input "$run/input.npy" "${batch}x3x${size}x${size}"
    for round in $(seq "$rounds"); do
      "$npu_run" "$dir/$name.onnx" --input "$input=$run/input.npy" --output-dir "$run/fp32" \
        -t "$threads" -n "$iterations" -w 2 --json >"$run/fp32.$round.json"
      "$npu_run" "$dir/$name.qdq.onnx" --input "$input=$run/input.npy" --output-dir "$run/int8" \
        -t "$threads" -n "$iterations" -w 2 --json >"$run/int8.$round.json"
      ORT_NODE_MODULE=$NPU_ORT_MODULE node "$here/ort_reference.js" "$dir/$name.qdq.onnx" \
        "$run/ort" "$input=$run/input.npy" --threads "$threads" --iterations "$iterations" \
        --warmup 2 >"$run/ort.$round.json"
    done
    /usr/bin/python3 - "$run" "$name" "$batch" <<'EOF'
import glob, json, os, sys
import numpy as np
run, name, batch = sys.argv[1:]

def latency(kind):
    lows, medians = [], []
    for f in sorted(glob.glob(f"{run}/{kind}.*.json")):
        ms = json.load(open(f))["latency_ms"]
        lows.append(ms["min"]); medians.append(ms["median"])
    return min(lows), float(np.median(medians))

def sqnr(kind):
    """Over every output, in dB, against our fp32 ones."""
    signal = noise = 0.0
    for f in glob.glob(f"{run}/fp32/*.npy"):
        ref = np.load(f).astype(np.float64)
        got = np.load(os.path.join(run, kind, os.path.basename(f))).astype(np.float64)
        signal += (ref ** 2).sum(); noise += ((ref - got) ** 2).sum()
    return 10 * np.log10(signal / noise) if noise else float("inf")

fp32, int8, ort = latency("fp32"), latency("int8"), latency("ort")
print(f"{name:<22} {batch:>5} {fp32[0]:7.1f}/{fp32[1]:<7.1f} {int8[0]:7.1f}/{int8[1]:<7.1f} "
      f"{ort[0]:7.1f}/{ort[1]:<7.1f} {fp32[1] / int8[1]:7.2f} {ort[1] / int8[1]:7.2f} "
      f"{sqnr('int8'):9.1f} {sqnr('ort'):9.1f}")
EOF
  done
done
echo "ms; x fp32 / x ORT: their median latency over ours in int8 (above 1: int8 is faster);"
echo "SQNR of the int8 outputs vs our fp32; threads $threads, $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
