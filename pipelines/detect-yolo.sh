#!/usr/bin/env bash
# Object detection with a YOLO model, drawn on the video and written to a
# file: npuupload and npuvpp bring the frames into device memory as BGRx,
# npuinfer runs the model on the letterboxed frame, npudecode method=yolo
# turns its output into boxes (confidence threshold, class-wise NMS, mapped
# back through the letterbox into frame pixels) as
# GstVideoRegionOfInterestMeta, npumetaconvert writes them as JSON lines,
# npuoverlay draws them on the frames still in device memory, and npudownload
# hands the frames to the encoder.
#
#   pipelines/detect-yolo.sh [MODEL.onnx [LABELS.txt [INPUT]]]
#
# MODEL: a YOLOv8 export (output 1 x (4 + classes) x anchors) or, with
# YOLO_VERSION=5, a YOLOv5 one (1 x anchors x (5 + classes)); LABELS: one
# class name per line (e.g. COCO's 80). INPUT: a video file or a camera
# (/dev/video0); default: videotestsrc's moving ball, NUM_BUFFERS frames.
# Without a model it generates a small detector of bright objects with
# YOLOv8's output layout (tests/models/make_detector_model.py: no weights
# to download, it finds the ball exactly). Writes detections.avi and
# detections.jsonl to DETECT_OUTPUT (default build/detect-output). Adapt:
# THRESHOLD (confidence, default 0.5), IOU (NMS, default 0.45), and mean/std
# on npuinfer for models not trained on 0..1 RGB (Ultralytics' are).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if [ $# -ge 1 ]; then
  model=$1
  labels=${2:-}
else
  model=$(npu_generated_model bright_objects.onnx make_detector_model.py)
  labels=${model%.onnx}.txt
fi
if [ $# -ge 3 ]; then
  source_desc=$(npu_source "$3")
else
  source_desc="videotestsrc pattern=ball num-buffers=${NUM_BUFFERS:-300} ! video/x-raw,width=640,height=480"
fi
output=${DETECT_OUTPUT:-$NPU_BUILD_DIR/detect-output}
mkdir -p "$output"

eval gst-launch-1.0 -q -e "$source_desc" ! npuupload ! npuvpp ! \
  '"video/x-raw(memory:NPUMemory),format=BGRx"' ! \
  npuinfer model="$(npu_quote "$model")" letterbox=true ! \
  npudecode method=yolo yolo-version="${YOLO_VERSION:-8}" threshold="${THRESHOLD:-0.5}" \
  iou-threshold="${IOU:-0.45}" ${labels:+labels=$(npu_quote "$labels")} ! \
  npumetaconvert location="$(npu_quote "$output/detections.jsonl")" ! npuoverlay ! npudownload ! \
  "$(npu_video_file_sink "$output/detections.avi")"

/usr/bin/python3 - "$output/detections.jsonl" <<'PY'
import collections, json, sys

with open(sys.argv[1], encoding="utf-8") as f:
    frames = [json.loads(line) for line in f if line.strip()]
labels = collections.Counter(roi["label"] for frame in frames for roi in frame["rois"])
found = ", ".join(f"{label} x{count}" for label, count in labels.most_common())
print(f"{len(frames)} frames, {sum(labels.values())} detections{': ' + found if found else ''}")
PY
echo "annotated video: $output/detections.avi; detections (JSON lines): $output/detections.jsonl"
