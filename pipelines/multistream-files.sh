#!/usr/bin/env bash
# Eight video files through ONE model: each file is decoded, uploaded to
# device memory (npuupload) and scaled there to the model's 224x224 RGB
# (npuvpp), and all eight streams meet in one npuinfer (request pads
# sink_0..sink_7, batch-size 8: one execution of the model per eight frames,
# one loaded model); npudecode labels every frame and npumetaconvert writes
# one JSON line per frame and stream. At the end it prints each stream's
# frame count and the total frames per second, decoding included.
#
#   pipelines/multistream-files.sh [FILE...]
#
# Without files it renders eight short clips (videotestsrc patterns 0-7,
# NUM_BUFFERS frames each, default 150; Motion-JPEG) once into
# build/pipeline-cache. The model is classify-streams.sh's generated
# MobileNetV2 (random weights: the labels mean nothing) unless MODEL (and
# LABELS) name yours. Adapt: BATCH (batch-size, default: one frame per
# file), mean/std for your model, and the caps after npuvpp for its input
# size. Results: MULTISTREAM_OUTPUT (default build/multistream-output).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  frames=${NUM_BUFFERS:-150}
  clips=$NPU_PIPELINE_CACHE/clips-$frames
  if [ ! -d "$clips" ]; then
    tmp=$(mktemp -d "$NPU_PIPELINE_CACHE/clips.XXXXXX")
    render=""
    for s in $(seq 0 7); do
      render+=" videotestsrc pattern=$s num-buffers=$frames ! video/x-raw,width=320,height=240 !"
      render+=" $(npu_video_file_sink "$tmp/stream$s.avi")"
    done
    eval gst-launch-1.0 -q "$render"
    mv -T "$tmp" "$clips" 2>/dev/null || rm -rf "$tmp" # whole, unless another run was first
  fi
  files=("$clips"/stream{0..7}.avi)
fi
model=${MODEL:-$(npu_generated_model mobilenet_v2.onnx make_vision_models.py mobilenet_v2)}
output=${MULTISTREAM_OUTPUT:-$NPU_BUILD_DIR/multistream-output}
mkdir -p "$output"
rm -f "$output"/stream*.jsonl

pipeline="npuinfer name=infer model=$(npu_quote "$model") batch-size=${BATCH:-${#files[@]}}"
pipeline+=" batch-timeout=20000 mean=0.485,0.456,0.406 std=0.229,0.224,0.225 stats-interval=1"
for s in "${!files[@]}"; do
  pipeline+=" $(npu_source "${files[$s]}") ! npuupload ! npuvpp !"
  pipeline+=' "video/x-raw(memory:NPUMemory),format=RGB,width=224,height=224" !'
  pipeline+=" infer.sink_$s infer.src_$s ! npudecode method=classify"
  pipeline+=" ${LABELS:+labels=$(npu_quote "$LABELS")} !"
  pipeline+=" npumetaconvert location=$(npu_quote "$output/stream$s.jsonl") ! fakesink"
done
start=$(date +%s.%N)
# -m: the bus messages, npuinfer's statistics among them (stats-interval: after each batch)
eval gst-launch-1.0 -m "$pipeline" >"$output/messages.log"
end=$(date +%s.%N)

/usr/bin/python3 - "$output" "$start" "$end" "${files[@]}" <<'PY'
import json, re, sys

output, start, end, files = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
total = 0
for stream, name in enumerate(files):
    with open(f"{output}/stream{stream}.jsonl", encoding="utf-8") as f:
        frames = [json.loads(line) for line in f if line.strip()]
    total += len(frames)
    label = frames[-1]["rois"][0]["label"] if frames and frames[-1]["rois"] else "-"
    print(f"stream {stream}: {len(frames)} frames (last: {label})  {name}")
print(f"total: {total} frames in {end - start:.2f} s: {total / (end - start):.1f} frames/s "
      f"({len(files)} streams, one npuinfer)")
with open(f"{output}/messages.log", encoding="utf-8") as f:
    stats = [line for line in f if "npuinfer-stats" in line][-1]
batches, mean, run = (re.search(rf"{key}=\(\w+\)([0-9.e+-]+)", stats).group(1)
                      for key in ("batches", "mean-batch", "mean-run-us"))
print(f"npuinfer: {batches} executions of the model, {float(mean):.2f} frames each, "
      f"{float(run) / 1000:.1f} ms each")
PY
echo "results (JSON lines, one file per stream): $output"
