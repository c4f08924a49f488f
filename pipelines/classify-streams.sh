#!/usr/bin/env bash
# Classification on several streams with ONE npuinfer: every stream's frames
# are batched into one execution of the model, pre-processed on the way in
# (scaled to the model's input, colour-converted, normalised), and npudecode
# turns the scores into a label per frame (a full-frame
# GstVideoRegionOfInterestMeta with a "classification" param), printed here.
#
#   pipelines/classify-streams.sh [MODEL.onnx [LABELS.txt]]
#
# Without a model it generates a MobileNetV2-structured one (random weights:
# the labels mean nothing, the plumbing is the point). Adapt: STREAMS
# (default 4), NUM_BUFFERS (frames per stream), BATCH (batch-size), and
# mean/std for your model (ImageNet's below).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

model=${1:-$(npu_generated_model mobilenet_v2.onnx make_vision_models.py mobilenet_v2)}
labels=${2:+labels=$(npu_quote "$2")}
pipeline="npuinfer name=infer model=$(npu_quote "$model") batch-size=${BATCH:-4}"
pipeline+=" batch-timeout=20000 mean=0.485,0.456,0.406 std=0.229,0.224,0.225"
for s in $(seq 0 $((${STREAMS:-4} - 1))); do
  pipeline+=" videotestsrc num-buffers=${NUM_BUFFERS:-30} pattern=$s !"
  pipeline+=" video/x-raw,format=NV12,width=1280,height=720 ! infer.sink_$s infer.src_$s !"
  pipeline+=" npudecode name=stream$s method=classify print-results=true $labels ! fakesink"
done
eval gst-launch-1.0 -q "$pipeline"
