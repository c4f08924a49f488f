#!/usr/bin/env bash
# Detection, tracking and line counting drawn on the video: npuinfer and
# npudecode find the objects, nputrack gives each an id, npuanalytics
# counts them crossing a line (LINE; forward: from its left to its right
# looking from its first point to its second), npumetaconvert writes
# each frame's results as JSON lines, and npuoverlay draws the boxes with
# their track ids, the trails and the line with its counts. When an MQTT
# broker answers on localhost:1883 (e.g. `mosquitto -d`), npupublish also
# sends each frame's JSON to it (topic npu/{stream}/results); otherwise
# nothing is published, and the script says so. Prints the counts at the
# end.
#
#   pipelines/track-and-count.sh [INPUT]
#
# INPUT: a video file or a camera (/dev/video0), with MODEL (a YOLOv8
# export), LABELS and LINE ("x1,y1,x2,y2" in pixels of the input) set for
# it. Default: videotestsrc's ball on a 640 x 480 frame, NUM_BUFFERS frames
# (default 300), found by the generated bright-object detector
# (tests/models/make_detector_model.py, as detect-yolo.sh), counted on the
# line y = 300 drawn left to right (forward: upwards), which the ball
# crosses downwards on frame 5 and upwards on frame 67. Writes
# counted.avi and counted.jsonl to COUNT_OUTPUT (default
# build/count-output).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if [ -n "${MODEL:-}" ]; then
  model=$MODEL
  labels=${LABELS:-}
else
  model=$(npu_generated_model bright_objects.onnx make_detector_model.py)
  labels=${model%.onnx}.txt
fi
if [ $# -ge 1 ]; then
  source_desc=$(npu_source "$1")
  line=${LINE:?set LINE=x1,y1,x2,y2 (pixels) for your video}
else
  source_desc="videotestsrc pattern=ball num-buffers=${NUM_BUFFERS:-300} ! video/x-raw,width=640,height=480"
  line=${LINE:-0,300,640,300}
fi
output=${COUNT_OUTPUT:-$NPU_BUILD_DIR/count-output}
mkdir -p "$output"
rm -f "$output/counted.jsonl"

publish=""
if gst-inspect-1.0 npupublish >/dev/null 2>&1 &&
    timeout 1 bash -c '</dev/tcp/127.0.0.1/1883' 2>/dev/null; then
  publish="npupublish host=localhost port=1883 topic=npu/{stream}/results !"
  echo "publishing each frame's results to the MQTT broker on localhost:1883 (topic npu/<stream>/results)"
else
  echo "no MQTT broker answers on localhost:1883: not publishing (start one, e.g. mosquitto -d, to publish)"
fi

eval gst-launch-1.0 -q -e "$source_desc" ! npuupload ! npuvpp ! \
  '"video/x-raw(memory:NPUMemory),format=BGRx"' ! \
  npuinfer model="$(npu_quote "$model")" letterbox=true ! \
  npudecode method=yolo yolo-version=8 threshold="${THRESHOLD:-0.5}" \
  ${labels:+labels=$(npu_quote "$labels")} ! \
  nputrack ! npuanalytics lines="crossing:$line" post-messages=false ! \
  npumetaconvert location="$(npu_quote "$output/counted.jsonl")" ! $publish \
  npuoverlay ! npudownload ! "$(npu_video_file_sink "$output/counted.avi")"

# the counts: the last frame's totals of the line
/usr/bin/python3 - "$output/counted.jsonl" <<'PY'
import json, sys

with open(sys.argv[1], encoding="utf-8") as f:
    frames = [json.loads(line) for line in f if line.strip()]
ids = {roi["tracking"]["object-id"] for frame in frames for roi in frame["rois"] if "tracking" in roi}
crossings = [event for frame in frames for event in frame.get("analytics", {}).get("events", [])
             if event["type"] == "cross"]
last = frames[-1]["analytics"]["lines"][0] if frames else {"forward": 0, "backward": 0}
print(f"{len(frames)} frames, {len(ids)} tracks, {len(crossings)} crossings")
print(f"counts: forward {last['forward']} backward {last['backward']}")
PY
echo "annotated video: $output/counted.avi; results (JSON lines): $output/counted.jsonl"
