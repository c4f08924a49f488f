#!/usr/bin/python3
"""int8 accuracy across the model zoo: each model quantised by npu.quantize
(what npu-quantize runs: per-channel int8 weights, uint8 activations,
min-max calibration) on synthetic pictures, then its QDQ form and fp32 run
by our runtime on other pictures, and the SQNR of every output against
fp32 printed (10 log10 of signal over noise power, over all test samples).

  zoo_sqnr.py [--build DIR] [--calibration N] [--test N] [--exclude-depthwise]
              [--method minmax|percentile|entropy|mse] [NAME...]

--exclude-depthwise keeps depthwise convolutions fp32, --method chooses the
activation ranges (npu-quantize's options; default minmax).

The pictures are drawn here, seeded (smooth colour fields, shapes and noise,
normalised as each model expects): no image data set is available, so the
figures say how much int8 loses on such inputs, not accuracy on a task. The
zoo's torchvision models carry random weights (make_zoo.py); PP-OCR's and
YOLOv8n's are as their exports give them. Prints a Markdown table; exits 77
when numpy, onnx or the zoo cannot be had.
"""
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

try:
    import numpy as np
    import onnx
except ImportError as missing:
    print(f"zoo_sqnr: SKIP: {missing.name} is missing")
    sys.exit(77)

IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
# (mean, std) on pixels scaled to [0, 1], by model; ImageNet's otherwise
NORMALISATION = {"yolov8n": ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
                 "ppocr_rec": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
                 "ppocr_cls": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))}


def picture(rng, height, width):
    """An RGB picture in [0, 1]: a smooth colour field, a few flat shapes and
    a little noise, so activations see edges, flat areas and texture."""
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    ys, xs = ys / height, xs / width
    image = np.zeros((3, height, width), np.float32)
    for channel in range(3):
        for _ in range(3):
            fy, fx, phase = rng.uniform(0.5, 4.0), rng.uniform(0.5, 4.0), rng.uniform(0, 6.3)
            image[channel] += np.sin(2 * math.pi * (fy * ys + fx * xs) + phase) / 6
    image += 0.5
    for _ in range(rng.integers(2, 7)):
        y0, x0 = rng.uniform(0, 0.8, 2)
        h, w = rng.uniform(0.05, 0.4, 2)
        colour = rng.uniform(0, 1, 3).astype(np.float32)[:, None]
        if rng.random() < 0.5:
            inside = (ys >= y0) & (ys < y0 + h) & (xs >= x0) & (xs < x0 + w)
        else:
            inside = ((ys - y0 - h / 2) / (h / 2)) ** 2 + ((xs - x0 - w / 2) / (w / 2)) ** 2 < 1
        image[:, inside] = colour
    image += rng.normal(0, 0.03, image.shape).astype(np.float32)
    return np.clip(image, 0, 1)


def sample(rng, name, shape):
    """One model input [1, *shape] as the model expects it."""
    mean, std = NORMALISATION.get(name, IMAGENET)
    if len(shape) == 4:  # video [3, frames, H, W]: one picture drifting across the frames
        still = picture(rng, shape[2], shape[3] + shape[1])
        frames = np.stack([still[:, :, t:t + shape[3]] for t in range(shape[1])], axis=1)
        pixels = frames
    else:
        pixels = picture(rng, shape[1], shape[2])
    mean = np.array(mean, np.float32).reshape((3,) + (1,) * (len(shape) - 1))
    std = np.array(std, np.float32).reshape((3,) + (1,) * (len(shape) - 1))
    return ((pixels - mean) / std)[None].astype(np.float32)


def measure(name, entry, calibration, test, exclude_depthwise, method):
    from npu import quantize
    from npu.quantize.report import Powers
    from npu.quantize.runner import Runner

    rng = np.random.default_rng(sum(map(ord, name)))
    make = lambda count: [{entry["input"]: sample(rng, name, entry["shape"])}
                          for _ in range(count)]
    calibration_samples, test_samples = make(calibration), make(test)
    model = onnx.load(entry["file"])
    start = time.monotonic()
    options = quantize.Options(report_samples=0, exclude_depthwise=exclude_depthwise,
                               method=method)
    result = quantize.quantize(model, calibration_samples, options)
    seconds = time.monotonic() - start
    outputs = [o.name for o in model.graph.output]
    fp32, qdq = Runner(model, ()), Runner(result.model, ())
    powers = Powers()
    for inputs in test_samples:
        reference, quantised = fp32.run(inputs), qdq.run(inputs)
        for output in outputs:
            powers.add(output, reference[output], quantised[output] - reference[output])
    return len(result.quantised_nodes), [(o, powers.db(o)) for o in outputs], seconds


def main(args):
    build, calibration, test, names = os.path.join(ROOT, "build"), 16, 8, []
    exclude_depthwise, method = False, "minmax"
    while args:
        arg = args.pop(0)
        if arg == "--exclude-depthwise":
            exclude_depthwise = True
        elif arg in ("--build", "--calibration", "--test", "--method") and args:
            value = args.pop(0)
            if arg == "--method":
                method = value
            elif arg == "--build":
                build = value
            elif arg == "--calibration":
                calibration = int(value)
            else:
                test = int(value)
        elif arg.startswith("-"):
            sys.exit(__doc__)
        else:
            names.append(arg)
    sys.path.insert(0, os.path.join(build, "python"))
    sys.path.insert(0, HERE)
    from npu.quantize.ranges import METHODS
    if method not in METHODS:
        sys.exit(f"zoo_sqnr: --method is one of {', '.join(METHODS)}")
    import make_zoo
    try:
        manifest, failed = make_zoo.ensure(names or None, log=lambda line: print(f"# {line}"))
    except make_zoo.Unavailable as error:
        print(f"zoo_sqnr: SKIP: {error}")
        return 77
    print(f"# {calibration} calibration and {test} test pictures per model (synthetic, seeded), "
          f"{method} ranges" + (", depthwise convolutions kept fp32" if exclude_depthwise else ""))
    print("| model | nodes quantised | output SQNR vs fp32, dB | quantise s |")
    print("|---|---|---|---|")
    for name in names or list(manifest):
        if name not in manifest:
            print(f"| {name} | - | not exported: {failed.get(name, 'unknown model')} | - |")
            continue
        try:
            nodes, outputs, seconds = measure(name, manifest[name], calibration, test,
                                              exclude_depthwise, method)
        except Exception as error:  # one model's failure is reported, the rest still run
            print(f"| {name} | - | failed: {type(error).__name__}: {error} | - |", flush=True)
            continue
        figures = ", ".join(f"{db:.1f}" if len(outputs) == 1 else f"{output} {db:.1f}"
                            for output, db in outputs)
        print(f"| {name} | {nodes} | {figures} | {seconds:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
