#!/usr/bin/python3
"""Calibration pictures for quantising PP-OCR (pipelines/ocr.sh OCR_PRECISION=int8).

    ocr_calibration.py OUTDIR [--frames N] [--lines N] [--seed S]

Writes OUTDIR/det/NNN.ppm, frames of 640x480 with a few lines of text, and
OUTDIR/rec/NNN.ppm, single text lines of 320x48 (the recogniser's height),
for npu-quantize. The text is random: strings of letters, digits and
punctuation drawn character by character (no word list, so none of the OCR
suite's lines, which come from tests/ocr/make_suite.py's vocabularies), in
any TrueType font installed, size, colour and background drawn at random
(plain, gradient, noise, blotches). Seeded: the same arguments give the same
pictures. Needs python3-pil and python3-numpy.
"""
import argparse
import glob
import os
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFont

DET_SIZE = (640, 480)
REC_SIZE = (320, 48)
CHARACTERS = ("abcdefghijklmnopqrstuvwxyz" * 3 + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 2 +
              "0123456789" * 2 + ".,:;-/#%$()&'+")


def random_text(rng, length):
    """Pseudo-words of 1 to 9 characters, spaces between them."""
    words, size = [], 0
    while size < length:
        word = "".join(rng.choice(CHARACTERS) for _ in range(rng.randint(1, 9)))
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:length].strip() or "x"


def background(rng, width, height):
    """An HxWx3 float array and a text colour that stands out on it."""
    base = np.array([rng.randint(0, 255) for _ in range(3)], np.float32)
    kind = rng.choice(["plain", "gradient", "noise", "blotches"])
    image = np.broadcast_to(base, (height, width, 3)).copy()
    if kind == "gradient":
        other = np.array([rng.randint(0, 255) for _ in range(3)], np.float32)
        t = np.linspace(0, 1, width, dtype=np.float32)[None, :, None]
        image = np.broadcast_to(base * (1 - t) + other * t, (height, width, 3))
    elif kind == "noise":
        noise = np.random.default_rng(rng.randint(0, 2**31)).normal(0, 25, (height, width, 1))
        image = image + noise.astype(np.float32)
    elif kind == "blotches":
        cells = np.random.default_rng(rng.randint(0, 2**31)).uniform(0, 255, (6, 8))
        smooth = Image.fromarray(cells.astype(np.uint8)).resize((width, height), Image.BICUBIC)
        image = image * 0.5 + np.asarray(smooth, np.float32)[:, :, None] * 0.5
    luminance = float(image.mean())
    ink = rng.randint(0, 60) if luminance > 128 else rng.randint(195, 255)
    colour = tuple(int(np.clip(ink + rng.randint(-40, 40), 0, 255)) for _ in range(3))
    return np.clip(image, 0, 255), colour


def fitting_text(rng, font, max_width, length):
    text = random_text(rng, length)
    while len(text) > 1 and font.getlength(text) > max_width:
        text = text[:-1].rstrip()
    return text


def render_frame(rng, fonts):
    width, height = DET_SIZE
    pixels, colour = background(rng, width, height)
    image = Image.fromarray(pixels.astype(np.uint8))
    draw = ImageDraw.Draw(image)
    y = rng.randint(10, 60)
    while y < height - 20:
        font = ImageFont.truetype(rng.choice(fonts), rng.randint(12, 56))
        x = rng.randint(5, width // 3)
        text = fitting_text(rng, font, width - x - 5, rng.randint(4, 40))
        top, bottom = font.getbbox(text)[1], font.getbbox(text)[3]
        if y + bottom > height - 5:
            break
        draw.text((x, y), text, font=font, fill=colour)
        y += bottom - top + rng.randint(8, 80)
    return image


def render_line(rng, fonts):
    width, height = REC_SIZE
    pixels, colour = background(rng, width, height)
    image = Image.fromarray(pixels.astype(np.uint8))
    font = ImageFont.truetype(rng.choice(fonts), rng.randint(24, 40))
    text = fitting_text(rng, font, width - 8, rng.randint(3, 30))
    left, top, right, bottom = font.getbbox(text)
    ImageDraw.Draw(image).text((rng.randint(2, max(2, width - (right - left) - 2)) - left,
                                (height - (bottom - top)) // 2 - top), text, font=font,
                               fill=colour)
    return image


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--frames", type=int, default=16)
    parser.add_argument("--lines", type=int, default=64)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    fonts = sorted(glob.glob("/usr/share/fonts/truetype/**/*.ttf", recursive=True))
    if not fonts:
        parser.error("no TrueType fonts under /usr/share/fonts/truetype")
    rng = random.Random(args.seed)
    for kind, count, render in (("det", args.frames, render_frame),
                                ("rec", args.lines, render_line)):
        os.makedirs(os.path.join(args.outdir, kind), exist_ok=True)
        for i in range(count):
            render(rng, fonts).save(os.path.join(args.outdir, kind, f"{i:03d}.ppm"))


if __name__ == "__main__":
    main()
