#!/usr/bin/env python3
"""A model on several streams at once: one context per stream (contexts
share the loaded model and its weights), each run queued with run_async
and collected through its future while the others compute.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/async_streams.py MODEL.onnx \
        [--streams 4] [--runs 32] [--batch 1]

Inputs are random, of each input's shape (open axes: --batch for the first,
1 for the others); prints the outputs' shapes, runs/s and the device's
counters.
"""
import argparse
import time

import numpy as np

import npu


def input_shapes(model, batch):
    return {info.name: tuple(batch if dim is None and axis == 0 else (dim or 1)
                             for axis, dim in enumerate(info.shape))
            for info in model.inputs}


def random_inputs(model, shapes, rng):
    return {info.name: (rng.random(shapes[info.name]) * 255).astype(info.dtype)
            for info in model.inputs}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--runs", type=int, default=32, help="runs per stream")
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()

    device = npu.Device()
    model = npu.Model(args.model)
    shapes = input_shapes(model, args.batch)
    rng = np.random.default_rng(0)
    lanes = []
    for _ in range(args.streams):
        context = npu.Context(model, device, shapes=shapes)
        lanes.append((context, npu.Stream(device), random_inputs(model, shapes, rng)))

    start = time.perf_counter()
    pending = [context.run_async(inputs, stream=stream) for context, stream, inputs in lanes]
    for _ in range(args.runs - 1):
        for lane, (context, stream, inputs) in enumerate(lanes):
            pending[lane].result()  # this stream's previous run, while the others compute
            pending[lane] = context.run_async(inputs, stream=stream)
    outputs = [future.result() for future in pending]
    elapsed = time.perf_counter() - start

    for name, array in outputs[0].items():
        print(f"output {name}: {array.dtype} {array.shape}")
    total = args.runs * args.streams
    print(f"{args.streams} streams x {args.runs} runs: {total / elapsed:.1f} runs/s")
    stats = device.stats()
    print(f"device: {stats['bytes_h2d']} bytes uploaded, {stats['bytes_d2h']} downloaded, "
          f"{stats['allocations']} allocations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
