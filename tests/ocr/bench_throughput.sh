#!/usr/bin/env bash
# OCR throughput: 4 streams of 720p text video (FRAMES frames each, default
# 120, raw in Matroska so that decoding costs little) through pipelines/ocr.sh
# as a user runs it: ONE detector for all streams, ONE recogniser for every
# text region, JSON results, no video written. Prints ocr.sh's own
# "throughput:" line (all streams' frames over the wall time, start and the
# models' planning included) and a CER check of what was read.
#   tests/ocr/bench_throughput.sh [FRAMES]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
frames=${1:-120}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
texts=("Gate B12 - Flight LH 4402" "Invoice 2026/0193 | Total: 418.20"
  "Camera 3 - North entrance" "Save 25% - now 79.90 / kg")
files=()
for s in "${!texts[@]}"; do
  IFS='|' read -r first second <<<"${texts[$s]}"
  gst-launch-1.0 -q videotestsrc num-buffers="$frames" pattern=white ! \
    video/x-raw,format=I420,width=1280,height=720,framerate=30/1 ! \
    textoverlay text="$first" font-desc="Sans 28" valignment=top halignment=left \
      xpad=80 ypad=120 color=0xff000000 shaded-background=false ! \
    textoverlay text="${second:- }" font-desc="Serif 22" valignment=bottom halignment=right \
      xpad=80 ypad=100 color=0xff202080 shaded-background=false ! \
    matroskamux ! filesink location="$work/stream$s.mkv"
  files+=("$work/stream$s.mkv")
done
echo "4 x 1280x720, $frames frames each: pipelines/ocr.sh ${files[*]##*/}"
OCR_VIDEO=0 OCR_OUTPUT="$work/out" "$root/pipelines/ocr.sh" "${files[@]}" | grep -E "throughput|at 0.00 s"
