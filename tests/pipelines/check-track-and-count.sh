#!/usr/bin/env bash
# pipelines/track-and-count.sh as a user first runs it (generated detector,
# videotestsrc's ball, the line y = 300), 80 frames, checked against the
# ball itself: the frames rendered in grey give where its bottom centre
# crosses y = 300; the script must print those counts (1 forward: up, 1
# backward: down), its JSON must hold one track and a crossing event within
# a frame of each true crossing, and the annotated video must be written.
set -euo pipefail
source "$(dirname "$0")/../../pipelines/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
frames=80
COUNT_OUTPUT=$work NUM_BUFFERS=$frames "$NPU_ROOT/pipelines/track-and-count.sh" | tee "$work/printed"
gst-launch-1.0 -q videotestsrc pattern=ball num-buffers="$frames" ! \
  video/x-raw,format=GRAY8,width=640,height=480 ! filesink location="$work/ball.gray"
[ -s "$work/counted.avi" ] || { echo "check-track-and-count.sh: no annotated video" >&2; exit 1; }
/usr/bin/python3 - "$work" "$frames" <<'PY'
import json, sys

import numpy as np

work, count = sys.argv[1], int(sys.argv[2])
grey = np.fromfile(f"{work}/ball.gray", np.uint8).reshape(count, 480, 640)
bottoms = [np.nonzero(image > 127)[0].max() + 1 for image in grey]
# the ball's own crossings of y = 300: (frame, direction); down is backward
truth = [(i, "backward" if bottoms[i] > bottoms[i - 1] else "forward")
         for i in range(1, count) if (bottoms[i - 1] > 300) != (bottoms[i] > 300)]
assert [d for _, d in truth] == ["backward", "forward"], f"the ball crosses {truth}"
with open(f"{work}/counted.jsonl", encoding="utf-8") as f:
    frames = [json.loads(line) for line in f if line.strip()]
assert len(frames) == count, f"{len(frames)} frames of results"
ids = {roi["tracking"]["object-id"] for frame in frames for roi in frame["rois"] if "tracking" in roi}
assert len(ids) == 1, f"tracks {ids}"
events = [(i, e["direction"]) for i, frame in enumerate(frames)
          for e in frame["analytics"]["events"] if e["type"] == "cross"]
assert len(events) == len(truth), f"crossings {events}, the ball's {truth}"
for (at, direction), (true_at, true_direction) in zip(events, truth):
    assert direction == true_direction and abs(at - true_at) <= 1, f"{events} vs {truth}"
line = frames[-1]["analytics"]["lines"][0]
assert line["points"] == [[0, 300], [640, 300]], line
printed = open(f"{work}/printed", encoding="utf-8").read()
assert "counts: forward 1 backward 1" in printed, printed
print(f"crossings at frames {[at for at, _ in events]}, the ball's {[at for at, _ in truth]}")
PY
