#!/usr/bin/env bash
# What the pipeline scripts share; sourced, never run. It builds gst-npu when
# needed (ensure-build.sh), points GStreamer at the plugin, and gives the
# pieces of a gst-launch line the scripts have in common. The lines are
# strings for `eval gst-launch-1.0 ...`: paths in them go through npu_quote,
# so a file name with spaces stays one argument.
source "$(dirname "${BASH_SOURCE[0]}")/ensure-build.sh"
npu_prepare_build
export GST_PLUGIN_PATH="$NPU_BUILD_DIR/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
# generated models and clips, kept between runs
NPU_PIPELINE_CACHE=$NPU_BUILD_DIR/pipeline-cache

npu_quote() {
  printf '%q' "$1"
}

# npu_source INPUT: decoded frames in system memory from INPUT, a video file
# (anything decodebin reads) or a V4L2 camera (a device such as /dev/video0,
# raw or Motion-JPEG; NUM_BUFFERS frames when set, else until Ctrl-C).
npu_source() {
  if [ -c "$1" ]; then
    echo "v4l2src device=$(npu_quote "$1") num-buffers=${NUM_BUFFERS:--1} ! decodebin ! videoconvert"
  elif [ -f "$1" ]; then
    echo "filesrc location=$(npu_quote "$1") ! decodebin ! videoconvert"
  else
    echo "$(basename "$0"): $1: no such video file or camera device" >&2
    return 1
  fi
}

# npu_video_file_sink FILE: writes the frames to FILE as Motion-JPEG in AVI
# (jpegenc and avimux, from gstreamer1.0-plugins-good; any player reads it).
npu_video_file_sink() {
  echo "videoconvert ! jpegenc ! avimux ! filesink location=$(npu_quote "$1")"
}

# npu_generated_model FILE SCRIPT [ARGS...]: the path of FILE as
# `tests/models/SCRIPT DIR ARGS...` writes it (with its siblings), generated
# once into the cache (a directory per version of the generators, which
# import each other, and arguments).
npu_generated_model() {
  local key
  key=$({ cat "$NPU_ROOT"/tests/models/make_*.py; echo "$2 ${*:3}"; } | cksum)
  local dir=$NPU_PIPELINE_CACHE/models-${key%% *}
  if [ ! -f "$dir/$1" ]; then
    local tmp file
    mkdir -p "$NPU_PIPELINE_CACHE"
    tmp=$(mktemp -d "$NPU_PIPELINE_CACHE/models.XXXXXX")
    /usr/bin/python3 "$NPU_ROOT/tests/models/$2" "$tmp" "${@:3}" >&2
    mkdir -p "$dir"
    # renames, FILE last: a script running at the same time never reads half of one
    for file in "$tmp"/*; do
      [ "$file" = "$tmp/$1" ] || mv -f "$file" "$dir"/
    done
    mv -f "$tmp/$1" "$dir"/
    rmdir "$tmp"
  fi
  echo "$dir/$1"
}
