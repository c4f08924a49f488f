#!/usr/bin/python3
"""The detector alone, quickly: how close quantised PP-OCRv4 det models come
to fp32's probability map on frames of random text rendered as
pipelines/ocr_calibration.py renders its calibration frames (another seed:
other text, fonts and backgrounds), the detector's counterpart of
rec_cer.py.

    PYTHONPATH=build/python tests/ocr/det_map.py [--frames N] DET_MODEL QUANTISED_MODEL...

Prints, for each quantised model, the SQNR of its map against the first
model's and the share of the first model's text pixels (probability above
0.3, npudecode's dbnet threshold in pipelines/ocr.sh) on which the two
disagree. Needs python3-pil.
"""
import glob
import os
import random
import sys

import numpy as np

import npu

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pipelines"))
import ocr_calibration  # noqa: E402

FRAMES, SEED, THRESHOLD = 16, 4242, 0.3
MEAN, STD = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)


def frames(count):
    """Input arrays 1x3x480x640, normalised as npuinfer's mean and std in ocr.sh."""
    fonts = sorted(glob.glob("/usr/share/fonts/truetype/**/*.ttf", recursive=True))
    rng = random.Random(SEED)
    made = []
    for _ in range(count):
        image = ocr_calibration.render_frame(rng, fonts)
        x = (np.asarray(image, np.float32) / 255 - MEAN) / STD
        made.append(np.ascontiguousarray(x.transpose(2, 0, 1)[None]))
    return made


def maps(path, inputs):
    model = npu.Model(path)
    context = npu.Context(model, shapes=[inputs[0].shape])
    return [context.run({model.inputs[0].name: x})[model.outputs[0].name] for x in inputs]


def main():
    args = sys.argv[1:]
    count = FRAMES
    if args[:1] == ["--frames"] and len(args) > 1 and args[1].isdigit():
        count, args = int(args[1]), args[2:]
    if len(args) < 2 or args[0].startswith("-"):
        sys.exit(__doc__)
    inputs = frames(count)
    reference = maps(args[0], inputs)
    signal = sum(float(np.sum(r.astype(np.float64) ** 2)) for r in reference)
    text = sum(int(np.sum(r > THRESHOLD)) for r in reference)
    for path in args[1:]:
        result = maps(path, inputs)
        noise = sum(float(np.sum((r.astype(np.float64) - q) ** 2))
                    for r, q in zip(reference, result))
        differ = sum(int(np.sum((r > THRESHOLD) != (q > THRESHOLD)))
                     for r, q in zip(reference, result))
        print(f"{path}: SQNR {10 * np.log10(signal / max(noise, 1e-30)):.2f} dB, map differs "
              f"on {100 * differ / max(text, 1):.2f}% of the first's text pixels")


if __name__ == "__main__":
    main()
