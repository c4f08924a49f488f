#!/usr/bin/env bash
# pipelines/ocr.sh on a video file, as a user runs it (and demo.sh FILE):
# renders NUM_BUFFERS frames with two lines of known text into a
# Motion-JPEG file whose name has a space, reads it back and checks both
# lines were recognised, in reading order. Exits 77 (skipped) where the OCR
# models cannot be fetched.
set -euo pipefail
source "$(dirname "$0")/../../pipelines/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
top="FILE 2026: OCR" bottom="SECOND LINE, 42"
video="$work/my video.avi"
eval gst-launch-1.0 -q videotestsrc num-buffers="${NUM_BUFFERS:-10}" pattern=white ! \
  video/x-raw,width=1280,height=720 ! \
  textoverlay text='"$top"' valignment=top font-desc='"Sans 48"' color=0xff000000 ! \
  textoverlay text='"$bottom"' valignment=bottom font-desc='"Sans 48"' color=0xff000000 ! \
  "$(npu_video_file_sink "$video")"
text="$top | $bottom"
status=0
read_text=$(OCR_OUTPUT="$work/out" "$NPU_ROOT/pipelines/ocr.sh" "$video") || status=$?
echo "$read_text"
[ "$status" -eq 0 ] || exit "$status"
grep -qxF "stream 0 at 0.00 s: $text" <<<"$read_text" || {
  echo "check-ocr-file.sh: expected \"$text\" at 0.00 s" >&2
  exit 1
}
[ -s "$work/out/stream0.avi" ] || { echo "check-ocr-file.sh: no annotated video" >&2; exit 1; }
