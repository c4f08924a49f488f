#!/usr/bin/python3
"""The recogniser alone, quickly: CER of PP-OCRv4 rec models on text lines
of random characters rendered as pipelines/ocr_calibration.py renders its
calibration lines (another seed: other text), read by greedy CTC decoding.
A check of a quantised recogniser in seconds, before the OCR suite's
minutes; its text is hard (no words), so fp32 itself misreads some.

    PYTHONPATH=build/python tests/ocr/rec_cer.py [--lines N] REC_MODEL [QUANTISED_MODEL...]

--lines: how many lines (default 48; more tell smaller differences apart).

Prints each model's CER against the truth, and the others' against the first.
Needs python3-pil and the model package (tests/models/fetch_assets.sh).
"""
import glob
import os
import random
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

import npu

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pipelines"))
import ocr_calibration  # noqa: E402
from ocr_text import distance  # noqa: E402

LINES, SEED = 48, 777
KEYS = os.path.expanduser("~/.cache/gst-npu/ocr/package/assets/ppocr_keys_v1.txt")


def lines(count=LINES):
    """(text, input array 1x3x48x320 normalised as npuinfer's mean=0.5 std=0.5)."""
    fonts = sorted(glob.glob("/usr/share/fonts/truetype/**/*.ttf", recursive=True))
    rng = random.Random(SEED)
    width, height = ocr_calibration.REC_SIZE
    made = []
    for _ in range(count):
        pixels, colour = ocr_calibration.background(rng, width, height)
        image = Image.fromarray(pixels.astype(np.uint8))
        font = ImageFont.truetype(rng.choice(fonts), rng.randint(24, 38))
        text = ocr_calibration.fitting_text(rng, font, width - 8, rng.randint(5, 25))
        left, top, _, bottom = font.getbbox(text)
        ImageDraw.Draw(image).text((4 - left, (height - (bottom - top)) // 2 - top), text,
                                   font=font, fill=colour)
        x = (np.asarray(image, np.float32) / 255 - 0.5) / 0.5
        made.append((text, np.ascontiguousarray(x.transpose(2, 0, 1)[None])))
    return made


def read(path, samples, keys):
    model = npu.Model(path)
    context = npu.Context(model, shapes=[samples[0][1].shape])
    texts = []
    for _, x in samples:
        steps = context.run({model.inputs[0].name: x})[model.outputs[0].name][0].argmax(-1)
        previous, text = 0, []
        for k in steps:  # class 0 the CTC blank, then the dictionary, then the space
            if k != previous and k != 0:
                text.append(keys[k - 1])
            previous = k
        texts.append("".join(text))
    return texts


def cer(read_texts, truth):
    return 100.0 * sum(map(distance, read_texts, truth)) / sum(len(t) for t in truth)


def main():
    args = sys.argv[1:]
    count = LINES
    if args[:1] == ["--lines"] and len(args) > 1 and args[1].isdigit():
        count, args = int(args[1]), args[2:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    with open(KEYS, encoding="utf-8") as f:
        keys = f.read().splitlines() + [" "]
    samples = lines(count)
    truth = [text for text, _ in samples]
    first = None
    for path in args:
        texts = read(path, samples, keys)
        against = f", {cer(texts, first):.2f}% against the first" if first else ""
        print(f"{path}: CER {cer(texts, truth):.2f}%{against}")
        first = first or texts


if __name__ == "__main__":
    main()
