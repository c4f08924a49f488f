#!/usr/bin/env bash
# pipelines/detect-yolo.sh as a user first runs it (generated detector,
# videotestsrc's moving ball at 640x480, its default input), checked: every
# frame has exactly one detection, the ball's box as measured on the same
# frames rendered in grey (IoU >= 0.8), and the annotated video is written.
set -euo pipefail
source "$(dirname "$0")/../../pipelines/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
frames=${NUM_BUFFERS:-10}
DETECT_OUTPUT=$work NUM_BUFFERS=$frames "$NPU_ROOT/pipelines/detect-yolo.sh"
gst-launch-1.0 -q videotestsrc pattern=ball num-buffers="$frames" ! \
  video/x-raw,format=GRAY8,width=640,height=480 ! filesink location="$work/ball.gray"
[ -s "$work/detections.avi" ] || { echo "check-detect-yolo.sh: no annotated video" >&2; exit 1; }
/usr/bin/python3 - "$work" "$frames" <<'PY'
import json, sys

import numpy as np

work, count = sys.argv[1], int(sys.argv[2])
grey = np.fromfile(f"{work}/ball.gray", np.uint8).reshape(count, 480, 640)
with open(f"{work}/detections.jsonl", encoding="utf-8") as f:
    frames = [json.loads(line) for line in f if line.strip()]
assert len(frames) == count, f"{len(frames)} frames of results, {count} expected"
for i, (frame, image) in enumerate(zip(frames, grey)):
    ys, xs = np.nonzero(image > 127)
    ball = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    assert len(frame["rois"]) == 1, f"frame {i}: {len(frame['rois'])} detections"
    roi = frame["rois"][0]
    box = (roi["x"], roi["y"], roi["x"] + roi["w"], roi["y"] + roi["h"])
    inter = max(0, min(box[2], ball[2]) - max(box[0], ball[0])) * \
        max(0, min(box[3], ball[3]) - max(box[1], ball[1]))
    union = roi["w"] * roi["h"] + (ball[2] - ball[0]) * (ball[3] - ball[1]) - inter
    assert roi["label"] == "bright object", f"frame {i}: label {roi['label']}"
    assert inter / union >= 0.8, f"frame {i}: box {box}, the ball is at {ball}"
print(f"{count} frames: the ball found on each")
PY
