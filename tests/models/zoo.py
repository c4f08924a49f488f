#!/usr/bin/python3
"""The model zoo (make_zoo.py) against ONNX Runtime 1.30 (onnxruntime-node,
fetch_assets.sh), each engine in its own process on the same seeded input:
our npu-run and ort_reference.js.

  zoo.py check [--build DIR] [--batches 1,2] [--threads N] [--extra] [NAME...]
      Every model at each batch: outputs within 1e-4 relative L2 of ORT's
      (outputs near zero, e.g. a random detector's scores: 1e-5 absolute).
      Models in zoo_known_failures.txt are reported, not counted. Exports
      and fetches what is missing (apt-get, npm); exits 77 when it cannot,
      1 on an unexpected failure. --extra: the opt-in extra zoo (make_zoo.py's
      EXTRA: architectures and export variants beyond the CI zoo) instead,
      in every command; a model exported with a fixed batch runs at that
      batch only.
  zoo.py bench [--build DIR] [--batches 1,8] [--threads N] [--rounds N]
               [--seconds S] [--extra] [NAME...]
      Median latency of ours and ORT's, measured A/B interleaved (rounds of
      one process each, order alternating; 4 by default), their ratio, peak RSS of each
      process (ORT: Node.js's own baseline subtracted), the geometric mean of
      the ratios; prints a Markdown table.
  zoo.py profile [--build DIR] [--batches 1] [--threads N] [--rounds N] NAME...
      Where each engine spends its time, per operator type: our kernels'
      (NPU_CPU_PROFILE=1, less a run of npu-run's first run) and ORT's (its
      profiler, after the warm-up) shares of their kernel time, times each
      engine's median latency; ORT's fused operators
      (FusedConv, FusedMatMul, BiasGelu...) keep their own names. The shares
      are summed over the rounds (ours and ORT's alternating), so a loaded
      machine moves them less than the latencies.
  zoo.py nodes [--build DIR] [--batches 1] [--threads 1] [--rounds N] [--top N] NAME...
      The same per node: each kernel's fastest launch in ours
      (NPU_CPU_PROFILE=nodes) against ORT's nodes that compute the same
      (ORT names a node it relaid or fused after its output: traced back
      through the ONNX graph to the node our kernel is named after), the
      fastest over the rounds; prints the sums and the TOP nodes (20) where
      the engines differ most. One thread by default: per node, the
      least disturbed figure on a shared machine.
  zoo.py input FILE.npy SHAPE          the seeded input (SHAPE: 1x3x224x224)
"""
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:  # Debian's python3-numpy (pipelines/ensure-build.sh installs it)
    print("zoo: SKIP: numpy is missing")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
RELATIVE_L2, ABSOLUTE = 1e-4, 1e-5


def write_input(path, shape):
    """The benchmarks' input: uniform in [0, 1), seed 7."""
    np.save(path, np.random.default_rng(7).random(shape, dtype=np.float32))


def compare_outputs(ours_dir, reference_dir):
    """(max |a-b|, max relative L2 error, problem or None) over the outputs
    that ORT wrote to reference_dir."""
    worst_abs = worst_rel = 0.0
    references = sorted(glob.glob(os.path.join(reference_dir, "*.npy")))
    if not references:
        return math.inf, math.inf, "ORT wrote no output"
    for reference in references:
        name = os.path.basename(reference)
        want = np.load(reference).astype(np.float64)
        try:
            got = np.load(os.path.join(ours_dir, name)).astype(np.float64)
        except OSError:
            return math.inf, math.inf, f"output {name} missing"
        if got.shape != want.shape:
            return math.inf, math.inf, f"output {name}: shape {got.shape} != ORT's {want.shape}"
        if not np.all(np.isfinite(got)):
            return math.inf, math.inf, f"output {name}: not finite"
        worst_abs = max(worst_abs, float(np.max(np.abs(got - want), initial=0.0)))
        worst_rel = max(worst_rel, float(np.linalg.norm(got - want) /
                                         max(np.linalg.norm(want), 1e-30)))
    return worst_abs, worst_rel, None


def agrees(worst_abs, worst_rel):
    return worst_rel <= RELATIVE_L2 or worst_abs <= ABSOLUTE


class Engines:
    """Runs a model in npu-run or in ONNX Runtime, one process per call."""

    def __init__(self, build, threads):
        self.npu_run = os.path.join(build, "runtime", "tools", "npu-run")
        self.threads = threads
        status, self.ort_module = fetch_asset("npu_fetch_ort", "NPU_ORT_MODULE")
        if status != 0:
            self.ort_module = None

    def run(self, engine, model, input_name, npy, outdir, iterations, warmup, profile=None):
        """The engine's JSON report, or a string saying why it failed. With
        `profile` "1", the report's "profile_ms" holds each operator type's
        kernel time (ours: over all of npu-run's runs; ORT's: per timed run);
        with "nodes", "profile_nodes" each node's {"op", "ms": fastest run}
        (ours: per kernel, named after its first node)."""
        common = ["--threads", str(self.threads), "--iterations", str(iterations),
                  "--warmup", str(warmup)]
        if engine == "ours":
            command = [self.npu_run, model, "--input", f"{input_name}={npy}", "--json"] + common
            if outdir:
                command += ["--output-dir", outdir]
            env = dict(os.environ, NPU_CPU_PROFILE=profile) if profile else None
        else:
            command = ["node", os.path.join(HERE, "ort_reference.js"), model, outdir,
                       f"{input_name}={npy}"] + common + (["--profile"] if profile else [])
            env = dict(os.environ, ORT_NODE_MODULE=self.ort_module)
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, check=False)
        if result.returncode != 0:
            why = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
            return f"{'npu-run' if engine == 'ours' else 'ORT'} failed: {why}"
        report = json.loads(result.stdout.strip().splitlines()[-1])
        if engine == "ort":
            report["peak_rss_kib"] -= report["node_baseline_rss_kib"]
        elif profile == "nodes":
            report["profile_nodes"] = node_profile(result.stderr)
        elif profile:
            report["profile_ms"] = kernel_profile(result.stderr)
        return report


def kernel_profile(stderr):
    """{operator type: ms} from the CPU backend's NPU_CPU_PROFILE=1 report
    ('  Conv   855.73 ms  91.1%   1664 launches')."""
    times = {}
    for line in stderr.splitlines():
        fields = line.split()
        if len(fields) == 6 and fields[2] == "ms" and fields[5] == "launches":
            times[fields[0]] = float(fields[1])
    return times


def node_profile(stderr):
    """{node: {"op", "ms": fastest launch}} from NPU_CPU_PROFILE=nodes ("  node
    '/conv1/Conv' (Conv) 1x3x224x224->1x64x112x112/c16  12.3 ms  4.1%  20 launches
    0.5912 ms fastest")."""
    nodes = {}
    for line in stderr.splitlines():
        found = re.match(r"\s+node '(.*)' \((\w+)\) (\S+)\s+[\d.]+ ms\s+[\d.]+%\s+\d+ launches\s+"
                         r"([\d.]+) ms fastest$", line)
        if found:
            nodes[found.group(1)] = {"op": found.group(2), "shapes": found.group(3),
                                     "ms": float(found.group(4))}
    return nodes


def fetch_asset(function, variable):
    """Runs fetch_assets.sh's FUNCTION; returns (status, $VARIABLE)."""
    result = subprocess.run(["bash", "-c", f'source "$1" && {function} && echo "${variable}"',
                             "bash", os.path.join(HERE, "fetch_assets.sh")],
                            stdout=subprocess.PIPE, text=True, check=False)
    return result.returncode, result.stdout.strip()


def prepare(options):
    """(engines, manifest, export failures); exits 77 with the reason when
    the zoo or ORT cannot be had here."""
    import make_zoo

    def skip(why):
        print(f"zoo: SKIP: {why}")
        sys.exit(77)

    engines = Engines(options["build"], options["threads"])
    if not os.access(engines.npu_run, os.X_OK):
        skip(f"{engines.npu_run} is not built")
    if not engines.ort_module:
        skip("onnxruntime-node is not available from npm")
    start = time.monotonic()
    try:
        manifest, failed = make_zoo.ensure(options["models"] or (
            list(make_zoo.EXTRA) if options["extra"] else None),
                                           log=lambda line: print(f"# {line}", flush=True))
    except make_zoo.Unavailable as error:
        skip(str(error))
    print(f"# zoo ready in {time.monotonic() - start:.0f} s ({make_zoo.CACHE})", flush=True)
    return engines, manifest, failed


def load_known_failures():
    """zoo_known_failures.txt: 'MODEL reason' per line, '#' comments. A
    reason starting 'accuracy:' excuses only an error above the limit and
    below ten times it; any other reason excuses whatever fails."""
    known = {}
    with open(os.path.join(HERE, "zoo_known_failures.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, _, reason = line.partition(" ")
                known[name] = reason.strip()
    return known


def runs_at(entry, batch):
    """Whether the model takes that batch (an export with a fixed batch takes
    only its own)."""
    return entry.get("batch", batch) == batch


def check_model(engines, name, entry, batches, work):
    """(max relative L2, max |diff|, problem or None, whether the problem is
    only an error above the limit, below ten times it) over the batches."""
    worst_rel = worst_abs = 0.0
    above = None  # the first error above the limit: the other batches still run
    npy = os.path.join(work, "input.npy")
    for batch in [b for b in batches if runs_at(entry, b)]:
        write_input(npy, [batch] + entry["shape"])
        dirs = {e: os.path.join(work, f"{name}-{batch}-{e}") for e in ("ours", "ort")}
        for engine in ("ours", "ort"):
            report = engines.run(engine, entry["file"], entry["input"], npy, dirs[engine], 1, 0)
            if isinstance(report, str):
                return worst_rel, worst_abs, f"batch {batch}: {report}", False
        batch_abs, batch_rel, problem = compare_outputs(dirs["ours"], dirs["ort"])
        if problem:
            return worst_rel, worst_abs, f"batch {batch}: {problem}", False
        worst_rel, worst_abs = max(worst_rel, batch_rel), max(worst_abs, batch_abs)
        print(f"# {name} batch {batch}: relative L2 {batch_rel:.2e}, max |diff| {batch_abs:.2e}",
              flush=True)
        if not agrees(batch_abs, batch_rel) and above is None:
            above = (f"batch {batch}: relative L2 error {batch_rel:.2e} above {RELATIVE_L2:g} "
                     f"(max |diff| {batch_abs:.2e})")
    return worst_rel, worst_abs, above, above is not None and worst_rel <= 10 * RELATIVE_L2


def check(options):
    engines, manifest, failed = prepare(options)
    known = load_known_failures()
    counts, start = {"ok": 0, "known": 0, "FAIL": 0}, time.monotonic()
    with tempfile.TemporaryDirectory(prefix="zoo-check-") as work:
        for name in options["models"] or list(manifest) + list(failed):
            if name in failed:
                worst_rel = worst_abs = 0.0
                problem, accuracy = f"not exported: {failed[name]}", False
            else:
                worst_rel, worst_abs, problem, accuracy = check_model(
                    engines, name, manifest[name], options["batches"], work)
            reason = known.get(name)
            if problem is None:
                verdict = "ok"
                print(f"ok   {name:<31} max relative L2 {worst_rel:.2e}, max |diff| "
                      f"{worst_abs:.2e}" + ("  (listed in zoo_known_failures.txt: take it off)"
                                            if reason else ""))
            elif reason and (accuracy or not reason.startswith("accuracy:")):
                verdict = "known"
                print(f"known failure {name}: {problem}\n    listed: {reason}")
            else:
                verdict = "FAIL"
                print(f"FAIL {name}: {problem}" + (f"\n    listed: {reason}" if reason else ""))
            counts[verdict] += 1
    print(f"# {sum(counts.values())} models: {counts['ok']} ok, {counts['known']} known failures, "
          f"{counts['FAIL']} unexpected failures; checked in {time.monotonic() - start:.0f} s")
    return 1 if counts["FAIL"] else 0


def milliseconds(value):
    """Three significant digits, never in e-notation."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def bench(options):
    engines, manifest, failed = prepare(options)
    for name, why in failed.items():
        print(f"# {name}: not exported: {why}")
    batches, threads = options["batches"], options["threads"]
    header = ["model", "input"]
    for batch in batches:
        header += [f"b{batch} ours ms", f"b{batch} ORT ms", f"b{batch} ratio"]
    header += ["ours MiB", "ORT MiB"]
    rows, ratios = [], {batch: [] for batch in batches}
    with tempfile.TemporaryDirectory(prefix="zoo-bench-") as work:
        npy = os.path.join(work, "input.npy")
        for name, entry in manifest.items():
            row = [name, "x".join(str(d) for d in entry["shape"])]
            rss = {"ours": 0, "ort": 0}
            for batch in batches:
                if not runs_at(entry, batch):
                    row += ["-", "-", "-"]
                    continue
                write_input(npy, [batch] + entry["shape"])
                medians = {"ours": [], "ort": []}
                iterations, problem = 3, None
                for round_ in range(options["rounds"]):
                    order = ("ours", "ort") if round_ % 2 == 0 else ("ort", "ours")
                    for engine in order:
                        # (ORT always writes its outputs)
                        outdir = os.path.join(work, "ort") if engine == "ort" else None
                        report = engines.run(engine, entry["file"], entry["input"], npy, outdir,
                                             iterations, 1)
                        if isinstance(report, str):
                            problem = report
                            break
                        medians[engine].append(report["latency_ms"]["median"])
                        rss[engine] = max(rss[engine], report["peak_rss_kib"])
                    if problem:
                        break
                    slowest = max(medians["ours"][-1], medians["ort"][-1])
                    iterations = max(3, min(30, round(options["seconds"] * 1000 / slowest)))
                if problem:
                    print(f"# {name} batch {batch}: {problem}", flush=True)
                    row += ["-", "-", "-"]
                    continue
                ours, ort = (float(np.median(medians[e])) for e in ("ours", "ort"))
                ratios[batch].append(ours / ort)
                row += [milliseconds(ours), milliseconds(ort), f"{ours / ort:.2f}"]
            row += [f"{rss[e] / 1024:.0f}" if rss[e] else "-" for e in ("ours", "ort")]
            rows.append(row)
            print(f"# {' | '.join(row)}", flush=True)
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    everything = [r for batch in batches for r in ratios[batch]]
    geomean = lambda values: math.exp(sum(map(math.log, values)) / len(values)) \
        if values else math.nan  # noqa: E731
    print("\ngeometric mean of the ratios: " + ", ".join(
        f"batch {batch} {geomean(ratios[batch]):.2f}" for batch in batches) +
        f", all {geomean(everything):.2f} ({len(everything)} ratios)")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "?")
    print(f"ratio = ours / ORT median latency (below 1: we are faster); {options['rounds']} "
          f"rounds per model and batch, {threads} threads, onnxruntime-node 1.30.0, "
          f"{os.cpu_count()} cores: {cpu}; MiB: peak RSS over the batches (ORT: Node.js's own "
          "baseline subtracted)")
    return 0


def model_batches(options, purpose):
    """(engines, name, manifest entry, batch, input .npy, work folder) for each
    model and batch, its seeded input written; says which models did not export."""
    engines, manifest, failed = prepare(options)
    for name, why in failed.items():
        print(f"# {name}: not exported: {why}")
    with tempfile.TemporaryDirectory(prefix=f"zoo-{purpose}-") as work:
        npy = os.path.join(work, "input.npy")
        for name, entry in manifest.items():
            for batch in [b for b in options["batches"] if runs_at(entry, b)]:
                write_input(npy, [batch] + entry["shape"])
                yield engines, name, entry, batch, npy, work


def profile(options):
    for engines, name, entry, batch, npy, work in model_batches(options, "profile"):
        times = {"ours": {}, "ort": {}}
        medians = {"ours": [], "ort": []}
        for round_ in range(options["rounds"]):
            for engine in ("ours", "ort") if round_ % 2 == 0 else ("ort", "ours"):
                report = engines.run(engine, entry["file"], entry["input"], npy,
                                     os.path.join(work, "ort"), 10, 2, profile="1")
                # Our profile counts every run of npu-run, the first (its
                # one-off costs) too: a run of 1 + 0 + 1 x 2 subtracted
                # leaves the 2 warm-up runs and 18 of the 20 measured.
                first = engines.run(engine, entry["file"], entry["input"], npy,
                                    None, 1, 0, profile="1") if engine == "ours" \
                    else {"profile_ms": {}}
                for problem in (report, first):
                    if isinstance(problem, str):
                        sys.exit(f"zoo: {name} batch {batch}: {problem}")
                medians[engine].append(report["latency_ms"]["median"])
                for op, ms in report["profile_ms"].items():
                    steady = max(0.0, ms - first["profile_ms"].get(op, 0.0))
                    times[engine][op] = times[engine].get(op, 0.0) + steady
        latency = {e: float(np.median(medians[e])) for e in medians}
        share = {e: {op: ms / sum(times[e].values()) for op, ms in times[e].items()}
                 for e in times}
        print(f"\n{name} batch {batch}: median latency ours "
              f"{milliseconds(latency['ours'])} ms, ORT {milliseconds(latency['ort'])} ms"
              f" ({options['rounds']} rounds, {options['threads']} threads)")
        print("| operator | ours ms | ORT ms | ours share | ORT share |\n|---|---|---|---|---|")
        ops = sorted(set(share["ours"]) | set(share["ort"]), key=lambda op: -max(
            share[e].get(op, 0.0) * latency[e] for e in share))
        for op in ops:
            cells = [milliseconds(share[e][op] * latency[e]) if op in share[e] else "-"
                     for e in ("ours", "ort")]
            cells += [f"{100 * share[e][op]:.1f}%" if op in share[e] else "-"
                      for e in ("ours", "ort")]
            print(f"| {op} | " + " | ".join(cells) + " |")
    return 0


class OnnxProducers:
    """Which node of the ONNX graph computes what ORT's trace names: its own
    nodes keep their names, those its NCHWc transformer relaid are named after
    their output ("..._output_0_nchwc"); a node fused into a kernel of ours is
    traced back through its inputs to the node that kernel is named after
    (nearest first; a convolution or product first among equals, as an Add
    joins a residual to the convolution both engines fuse it into)."""

    FUSING = ("Conv", "ConvTranspose", "MatMul", "Gemm")

    def __init__(self, path):
        import onnx
        graph = onnx.load(path, load_external_data=False).graph
        self.nodes = {n.name: n for n in graph.node}
        self.producer = {out: n.name for n in graph.node for out in n.output}

    def our_node(self, ort_name, ours):
        """The node of `ours` (our kernels' node names) that ORT's node
        `ort_name` computes part of, or None (ORT's own reorders)."""
        start = ort_name if ort_name in self.nodes else \
            self.producer.get(ort_name[:-len("_nchwc")]) if ort_name.endswith("_nchwc") else None
        frontier, seen = [start] if start else [], set()
        while frontier:
            found = [n for n in frontier if n in ours]
            if found:
                return next((n for n in found if self.nodes[n].op_type in self.FUSING), found[0])
            seen.update(frontier)
            frontier = [self.producer[i] for n in frontier for i in self.nodes[n].input
                        if i in self.producer and self.producer[i] not in seen]
        return None


def nodes(options):
    producers = {}
    for engines, name, entry, batch, npy, work in model_batches(options, "nodes"):
        if name not in producers:
            producers[name] = OnnxProducers(entry["file"])
        fastest = {"ours": {}, "ort": {}}
        medians = {"ours": [], "ort": []}
        iterations = max(3, 20 // batch)
        for round_ in range(options["rounds"]):
            for engine in ("ours", "ort") if round_ % 2 == 0 else ("ort", "ours"):
                report = engines.run(engine, entry["file"], entry["input"], npy,
                                     os.path.join(work, "ort"), iterations, 2,
                                     profile="nodes")
                if isinstance(report, str):
                    sys.exit(f"zoo: {name} batch {batch}: {report}")
                medians[engine].append(report["latency_ms"]["median"])
                for node, row in report["profile_nodes"].items():
                    best = fastest[engine].setdefault(node, dict(row))
                    best["ms"] = min(best["ms"], row["ms"])
        ours = fastest["ours"]
        rows = {node: {"op": row["op"], "shapes": row["shapes"], "ours": row["ms"],
                       "ort": 0.0, "ort_nodes": 0} for node, row in ours.items()}
        ort_own = 0.0
        for node, row in fastest["ort"].items():
            mine = producers[name].our_node(node, ours)
            if mine is None:
                ort_own += row["ms"]
                continue
            rows[mine]["ort"] += row["ms"]
            rows[mine]["ort_nodes"] += 1
        sums = {e: sum(r["ms"] for r in fastest[e].values()) for e in fastest}
        print(f"\n{name} batch {batch} ({options['threads']} threads, {options['rounds']} "
              f"rounds): fastest launch of each node summed, ours {sums['ours']:.3f} ms, "
              f"ORT {sums['ort']:.3f} ms ({ort_own:.3f} of it in nodes of ORT's own, "
              f"its layout reorders); median latency ours "
              f"{milliseconds(float(np.median(medians['ours'])))} ms, ORT "
              f"{milliseconds(float(np.median(medians['ort'])))} ms")
        by_op = {}
        for row in rows.values():
            mine = by_op.setdefault(row["op"], [0.0, 0.0])
            mine[0] += row["ours"]
            mine[1] += row["ort"]
        print("per operator type (ours / ORT ms): " + ", ".join(
            f"{op} {t[0]:.3f} / {t[1]:.3f}" for op, t in
            sorted(by_op.items(), key=lambda item: -max(item[1]))))
        print("| node | operator | shapes (ours) | ours ms | ORT ms (nodes) | ours - ORT |\n"
              "|---|---|---|---|---|---|")
        for node, row in sorted(rows.items(), key=lambda item: -abs(
                item[1]["ours"] - item[1]["ort"]))[:options["top"]]:
            print(f"| {node} | {row['op']} | {row['shapes']} | {row['ours']:.4f} | "
                  f"{row['ort']:.4f} ({row['ort_nodes']}) | "
                  f"{row['ours'] - row['ort']:+.4f} |")
    return 0


def parse(args):
    options = {"build": os.path.join(ROOT, "build"), "threads": 2, "rounds": 4, "seconds": 2.0,
               "top": 20, "models": [], "extra": False}
    options["batches"] = {"check": [1, 2], "bench": [1, 8], "profile": [1], "nodes": [1]}[args[0]]
    if args[0] == "nodes":
        options["threads"], options["rounds"] = 1, 2
    args = args[1:]
    while args:
        arg = args.pop(0)
        if arg in ("--build", "--batches", "--threads", "--rounds", "--seconds", "--top") and args:
            value = args.pop(0)
            key = arg[2:]
            options[key] = value if key == "build" else \
                [int(b) for b in value.split(",")] if key == "batches" else \
                float(value) if key == "seconds" else int(value)
        elif arg == "--extra":
            options["extra"] = True
        elif arg.startswith("-"):
            sys.exit(__doc__)
        else:
            options["models"].append(arg)
    return options


def main():
    args = sys.argv[1:]
    if args[:1] == ["input"] and len(args) == 3:
        write_input(args[1], [int(d) for d in args[2].split("x")])
        return 0
    if args[:1] not in (["check"], ["bench"], ["profile"], ["nodes"]):
        sys.exit(__doc__)
    options = parse(args)
    import make_zoo
    unknown = [m for m in options["models"] if m not in make_zoo.ZOO and m not in make_zoo.EXTRA]
    if unknown:
        sys.exit(f"zoo: unknown model(s) {' '.join(unknown)}; make_zoo.py --list lists the zoo")
    return {"check": check, "bench": bench, "profile": profile, "nodes": nodes}[args[0]](options)


if __name__ == "__main__":
    sys.exit(main())
