#!/usr/bin/python3
"""CPU time per image of two builds' npu-run, alternated round by round.

  cpu_time_ab.py OLD_BUILD NEW_BUILD [--batch B] [--rounds R] [--iterations N] MODEL.onnx...

On one thread, from npu-run's throughput run (cores busy x 1000 / inferences
per second): the work a run costs, which other processes on a shared machine
disturb far less than its wall-clock latency. Prints, per model, the minimum
and median of each build and the ratio of the medians (new / old)."""
import argparse
import re
import statistics
import subprocess


def cpu_ms_per_image(build, model, batch, iterations):
    out = subprocess.run([f"{build}/runtime/tools/npu-run", model, "-b", str(batch),
                          "-n", str(iterations), "-w", "2", "-t", "1"],
                         capture_output=True, text=True, check=True).stdout
    found = re.search(r"throughput:\s+([\d.]+) inferences/s.*?([\d.]+) cores busy", out)
    return float(found.group(2)) * 1000 / float(found.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=40)
    o = parser.parse_args()
    for model in o.models:
        times = {o.old: [], o.new: []}
        for r in range(o.rounds):
            for build in (o.old, o.new) if r % 2 == 0 else (o.new, o.old):
                times[build].append(cpu_ms_per_image(build, model, o.batch, o.iterations))
        old, new = times[o.old], times[o.new]
        print(f"{model} batch {o.batch}: CPU ms per image, old min {min(old):.2f} median "
              f"{statistics.median(old):.2f}, new min {min(new):.2f} median "
              f"{statistics.median(new):.2f}; new / old {statistics.median(new) / statistics.median(old):.3f}",
              flush=True)


if __name__ == "__main__":
    main()
