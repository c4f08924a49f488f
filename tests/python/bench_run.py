#!/usr/bin/env python3
"""The npu Python module's overhead, printed (a benchmark, not a test):
1. Context.run() from Python against npu-run on MobileNetV2 batch 1 (median
   latency; Python's includes converting the input, its upload, the output
   download and the numpy outputs, npu-run's only the run). Rounds alternate
   between the two, as the machine's speed drifts.
2. Throughput: 4 streams of run_async (a context each) against one
   synchronous run() loop, and npu-run --streams 4 for reference.

    PYTHONPATH=build/python /usr/bin/python3 tests/python/bench_run.py \\
        [--build build] [--iterations 200] [--rounds 3] [--model mobilenet_v2.onnx]

Without --model it generates MobileNetV2 (torchvision's structure, random
weights) with tests/models/make_vision_models.py.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import npu

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHAPE = (1, 3, 224, 224)


def npu_run(binary, model, iterations, streams=1):
    done = subprocess.run([binary, model, "--shape", "input=" + "x".join(map(str, SHAPE)),
                           "--iterations", str(iterations), "--warmup", "10",
                           "--streams", str(streams), "--json"],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def python_latency(context, image, iterations):
    for _ in range(10):
        context.run(image)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        context.run(image)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def sync_throughput(context, image, runs):
    start = time.perf_counter()
    for _ in range(runs):
        context.run(image)
    return runs / (time.perf_counter() - start)


def async_throughput(model, image, runs, streams):
    lanes = [(npu.Context(model, shapes=[SHAPE]), npu.Stream()) for _ in range(streams)]
    for context, _ in lanes:
        context.run(image)  # planned and warm
    start = time.perf_counter()
    pending = [context.run_async(image, stream=stream) for context, stream in lanes]
    for _ in range(runs // streams - 1):
        for lane, (context, stream) in enumerate(lanes):
            pending[lane].result()
            pending[lane] = context.run_async(image, stream=stream)
    for future in pending:
        future.result()
    return (runs // streams) * streams / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model")
    args = parser.parse_args()
    binary = os.path.join(args.build, "runtime", "tools", "npu-run")
    with tempfile.TemporaryDirectory() as work:
        model_path = args.model
        if not model_path:
            subprocess.run([sys.executable, os.path.join(ROOT, "tests", "models",
                                                         "make_vision_models.py"),
                            work, "mobilenet_v2"], check=True)
            model_path = os.path.join(work, "mobilenet_v2.onnx")
        model = npu.Model(model_path)
        context = npu.Context(model, shapes=[SHAPE])
        image = np.random.default_rng(7).random(SHAPE, dtype=np.float32)

        print(f"MobileNetV2 batch 1, {npu.Device().name}, median of {args.iterations} runs")
        print(f"{'round':>5} {'npu-run ms':>11} {'Python run() ms':>16} {'ratio':>6}")
        ours, theirs = [], []
        for round_ in range(args.rounds):
            theirs.append(npu_run(binary, model_path, args.iterations)["latency_ms"]["median"])
            ours.append(python_latency(context, image, args.iterations))
            print(f"{round_ + 1:>5} {theirs[-1]:>11.3f} {ours[-1]:>16.3f} "
                  f"{ours[-1] / theirs[-1]:>6.3f}")
        ratio = statistics.median(ours) / statistics.median(theirs)
        print(f"{'all':>5} {statistics.median(theirs):>11.3f} {statistics.median(ours):>16.3f} "
              f"{ratio:>6.3f}  (Python overhead {100 * (ratio - 1):+.1f}%)")

        runs = args.iterations
        sync = sync_throughput(context, image, runs)
        overlapped = async_throughput(model, image, runs, 4)
        reference = npu_run(binary, model_path, runs // 4, streams=4)["throughput_per_s"]
        print(f"throughput, {runs} runs: 1 synchronous run() loop {sync:.1f}/s, "
              f"4 streams of run_async {overlapped:.1f}/s ({overlapped / sync:.2f}x), "
              f"npu-run --streams 4 {reference:.1f}/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
