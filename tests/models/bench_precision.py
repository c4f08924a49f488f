#!/usr/bin/python3
"""fp32 against bf16 (npu-run --precision) on ResNet-50, MobileNetV2 and
YOLOv8n (make_vision_models.py: random weights, BN kept) at batch 1 and 8:
npu-run runs alternate between the two precisions for ROUNDS rounds (a
loaded machine drifts; interleaving shares the drift), and each row gives
both latencies' min and median over all rounds' runs, the speed-up of the
medians, and bf16's error: the relative L2 distance of its outputs from
fp32's on the same (npu-run's fixed-seed random) input.

    tests/models/bench_precision.py [--rounds 3] [--iterations 5] [--threads 2]
                                    [--batches 1,8] [--models resnet50,...]

Needs a build (NPU_BUILD_DIR, default build/) and python3-onnx/torch for the
models (generated once into BUILD/pipeline-cache/vision-models).
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("NPU_BUILD_DIR", os.path.join(ROOT, "build"))


def models_dir():
    path = os.path.join(BUILD, "pipeline-cache", "vision-models")
    if not os.path.exists(os.path.join(path, "yolov8n.onnx")):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests/models/make_vision_models.py"),
                        path], check=True, stdout=subprocess.DEVNULL)
    return path


def npu_run(model, batch, precision, args, output_dir):
    """npu-run's JSON report; the outputs go to output_dir."""
    command = [os.path.join(BUILD, "runtime/tools/npu-run"), model, "--batch", str(batch),
               "--precision", precision, "-n", str(args.iterations), "-w", "1",
               "-t", str(args.threads), "--json", "-o", output_dir]
    return json.loads(subprocess.run(command, check=True, capture_output=True,
                                     text=True).stdout)


def relative_l2(dir_a, dir_b):
    """Over all outputs together."""
    num = den = 0.0
    for path in sorted(glob.glob(os.path.join(dir_a, "*.npy"))):
        a = np.load(path).astype(np.float64)
        b = np.load(os.path.join(dir_b, os.path.basename(path))).astype(np.float64)
        num += float(np.sum((a - b) ** 2))
        den += float(np.sum(a ** 2))
    return (num / den) ** 0.5 if den else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--models", default="resnet50,mobilenet_v2,yolov8n")
    args = parser.parse_args()
    directory = models_dir()
    print(f"{'model':<13} {'batch':>5} {'fp32 min/median ms':>20} {'bf16 min/median ms':>20} "
          f"{'speed-up':>8} {'bf16 rel. L2':>12}")
    for name in args.models.split(","):
        model = os.path.join(directory, name + ".onnx")
        for batch in map(int, args.batches.split(",")):
            runs = {"fp32": [], "bf16": []}
            with tempfile.TemporaryDirectory() as out:
                for _ in range(args.rounds):
                    for precision in runs:
                        report = npu_run(model, batch, precision, args,
                                         os.path.join(out, precision))
                        runs[precision].append(report["latency_ms"])
                error = relative_l2(os.path.join(out, "fp32"), os.path.join(out, "bf16"))
            cells = {}
            for precision, latencies in runs.items():
                minimum = min(l["min"] for l in latencies)
                median = statistics.median(l["median"] for l in latencies)
                cells[precision] = (minimum, median)
            speedup = cells["fp32"][1] / cells["bf16"][1]
            print(f"{name:<13} {batch:>5} {cells['fp32'][0]:>9.1f} / {cells['fp32'][1]:<8.1f} "
                  f"{cells['bf16'][0]:>9.1f} / {cells['bf16'][1]:<8.1f} {speedup:>7.2f}x "
                  f"{error:>12.2e}", flush=True)


if __name__ == "__main__":
    main()
