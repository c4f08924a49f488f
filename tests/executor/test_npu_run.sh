#!/bin/sh
# npu-run on bad input: a shape beyond memory, a directory as the model and
# an unknown --precision are refused with their reason (nothing is allocated
# for them); and its latency percentiles come out in order (median <= p90 <=
# max).
#   test_npu_run.sh NPU_RUN MODELS_DIR
set -u
npu_run=$1
models=$2
failed=0

expect_refusal() { # message, then npu-run's arguments
  message=$1
  shift
  if output=$("$npu_run" "$@" 2>&1); then
    echo "not ok: npu-run $* succeeded"; failed=1
  elif ! printf '%s' "$output" | grep -qF "$message"; then
    echo "not ok: npu-run $*: '$output' lacks '$message'"; failed=1
  else
    echo "ok: npu-run $*: $output"
  fi
}

huge=4611686018427387904 # 2^62
good="$models/good.onnx"
expect_refusal "input 'image': shape too large" "$good" --shape image=${huge}x3x8x8
expect_refusal "input 'image': shape too large" "$good" --shape image=1099511627776x3x8x8
# The same shape from an .npy header (its data is absent: planning refuses first).
huge_npy=$(mktemp --suffix=.npy)
trap 'rm -f "$huge_npy"' EXIT
/usr/bin/python3 -c '
import struct, sys
header = "{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, "
header += "\x27shape\x27: (%s, 3, 8, 8), }" % sys.argv[1]
header += " " * (63 - (10 + len(header)) % 64) + "\n"
sys.stdout.buffer.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
' $huge > "$huge_npy"
expect_refusal "shape too large" "$good" --input image="$huge_npy"
expect_refusal "give the input's 4 dimensions" "$good" --shape image=abcx3x8x8
expect_refusal "not a regular file" "$models"
expect_refusal "unknown precision 'fp16' (fp32 or bf16)" "$good" --precision fp16

for n in 2 3 4 5 10; do
  if ! report=$("$npu_run" "$good" --iterations $n --warmup 0 --json); then
    echo "not ok: -n $n"; failed=1; continue
  fi
  if printf '%s' "$report" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)["latency_ms"]
sys.exit(0 if l["min"] <= l["median"] <= l["p90"] <= l["max"] else 1)'; then
    echo "ok: percentiles in order over $n runs"
  else
    echo "not ok: percentiles out of order over $n runs: $report"; failed=1
  fi
done
exit $failed
