#!/usr/bin/python3
"""Writes a small detector with YOLOv8's output layout, no training and no
download: bright_objects.onnx takes N x 3 x 320 x 320 RGB in 0..1 and
gives N x 5 x 400 (cx, cy, w, h, score for one class, on a 20 x 20 grid of
anchors, stride 16), and bright_objects.txt its one label. It finds
isolated bright objects up to about 80 px (e.g. videotestsrc pattern=ball):
    mask  = brightness > 0.5 (the mean of R, G, B; the letterbox's grey is not)
    box   = the mask's extent in the 96 x 96 window round each anchor (MaxPool
            of the mask times the pixel coordinates), exact in pixels
    score = (mask in the 96 px window / mask in the 192 px window) ** 8, 0 under
            16 pixels: only windows holding the whole object score; those give
            the same box, which NMS keeps once
Everything is computed, so the output is deterministic: the pipeline smoke
test asserts the ball's box.
    make_detector_model.py OUTDIR"""
import os
import sys

import numpy as np

from make_vision_models import Builder

SIZE, STRIDE, WINDOW = 320, 16, 96
GRID = SIZE // STRIDE


def window(b, op, x, size):
    """op ("MaxPool", or "Conv": a sum) over the size x size window centred
    on each anchor, separably: along rows, then along columns."""
    pad = (size - STRIDE) // 2
    for kernel in ([1, size], [size, 1]):
        strides = [STRIDE if k > 1 else 1 for k in kernel]
        pads = [pad if k > 1 else 0 for k in kernel] * 2
        inputs = [x, b.const("ones", np.ones([1, 1] + kernel))] if op == "Conv" else [x]
        x = b.node(op, inputs, kernel_shape=kernel, strides=strides, pads=pads)
    return x


def build(path):
    b = Builder()
    # brightness, then a 0/1 mask (the slope makes it binary but for 1/1000 of the range)
    bright = b.node("Conv", ["input", b.const("grey", np.full((1, 3, 1, 1), 1 / 3))],
                    kernel_shape=[1, 1])
    steep = b.node("Mul", [b.node("Sub", [bright, b.const("half", 0.5)]),
                           b.const("slope", 1000.0)])
    zero, one = b.const("zero", 0.0), b.const("one", 1.0)
    mask = b.node("Clip", [steep, zero, one])
    # per pixel: its right edge x+1, W-x, its bottom edge y+1, H-y; MaxPool over a window
    # gives the mask's right, (W - left), bottom, (H - top); dark windows give 0
    coords = np.arange(SIZE, dtype=np.float32)
    planes = np.stack([np.broadcast_to(coords[None, :] + 1, (SIZE, SIZE)),
                       np.broadcast_to(SIZE - coords[None, :], (SIZE, SIZE)),
                       np.broadcast_to(coords[:, None] + 1, (SIZE, SIZE)),
                       np.broadcast_to(SIZE - coords[:, None], (SIZE, SIZE))])[None]
    extent = window(b, "MaxPool", b.node("Mul", [mask, b.const("coords", planes)]), WINDOW)
    # (right, W - left, bottom, H - top) -> (cx, cy, w, h): one linear map, a 1x1 Conv
    to_box = np.array([[0.5, -0.5, 0, 0], [0, 0, 0.5, -0.5], [1, 1, 0, 0], [0, 0, 1, 1]])
    box = b.node("Conv", [extent, b.const("to_box", to_box[:, :, None, None]),
                          b.const("to_box_bias", [SIZE / 2, SIZE / 2, -SIZE, -SIZE])],
                 kernel_shape=[1, 1])
    inner = window(b, "Conv", mask, WINDOW)
    outer = window(b, "Conv", mask, 2 * WINDOW)
    ratio = b.node("Div", [inner, b.node("Add", [outer, b.const("eps", 1e-3)])])
    r2 = b.node("Mul", [ratio, ratio])
    r4 = b.node("Mul", [r2, r2])
    r8 = b.node("Mul", [r4, r4])
    big_enough = b.node("Clip", [b.node("Sub", [inner, b.const("min_pixels", 15.0)]), zero, one])
    score = b.node("Mul", [r8, big_enough])
    grid = b.node("Concat", [box, score], axis=1)
    output = b.node("Reshape", [grid, b.const("layout", [0, 5, GRID * GRID], np.int64)])
    b.save(path, "bright_objects", output, input_dims=["N", 3, SIZE, SIZE],
           output_dims=["N", 5, GRID * GRID])


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
build(os.path.join(out, "bright_objects.onnx"))
with open(os.path.join(out, "bright_objects.txt"), "w", encoding="utf-8") as f:
    f.write("bright object\n")
