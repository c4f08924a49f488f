"""npu-quantize: the command line of npu.quantize.

Exit status: 0 written; 1 the runtime failed on the model; 2 a bad command
line, model file or calibration data."""
import argparse
import os
import sys
import time

import onnx

import npu

from . import Options, QuantizeError, quantize, samples
from .params import ACTIVATION_TYPES
from .ranges import METHODS

USAGE_ERROR, RUNTIME_ERROR = 2, 1


def numbers(text):
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not 1 or 3 numbers") from None


def size(text):
    try:
        width, height = (int(v) for v in text.lower().split("x"))
        return width, height
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not WIDTHxHEIGHT") from None


def names(text):
    return tuple(n for n in text.split(",") if n)


def parser():
    p = argparse.ArgumentParser(
        prog="npu-quantize",
        description="Quantise an fp32 ONNX model into a QDQ ONNX model (int8 weights per "
                    "channel, int32 biases, uint8/int8 activations calibrated by running the "
                    "model on gst-npu's runtime) and print the SQNR of each quantised tensor "
                    "against fp32.")
    p.add_argument("model", help="fp32 ONNX model")
    p.add_argument("output", nargs="?", help="QDQ model to write (default: MODEL.qdq.onnx)")
    p.add_argument("-c", "--calibration", action="append", default=[], metavar="PATH",
                   help=".npy (one input) or .npz (arrays named as the inputs) files, pictures "
                        "(PPM/PGM; JPEG, PNG... through GStreamer), videos, or folders of them; "
                        "repeatable")
    p.add_argument("--max-samples", type=int, default=100,
                   help="calibration samples used at most (default 100)")
    p.add_argument("--method", choices=METHODS, default="minmax",
                   help="activation ranges: min-max, percentile, entropy (KL) or mse (least squared "
                        "error of the quantised values) (default minmax)")
    p.add_argument("--percentile", type=float, default=99.99,
                   help="share of values the percentile range keeps (default 99.99)")
    p.add_argument("--activation-type", choices=tuple(ACTIVATION_TYPES), default="uint8",
                   help="activation integer type (default uint8)")
    p.add_argument("--exclude-nodes", type=names, default=(), metavar="NAME,...",
                   help="nodes left in fp32, by name")
    p.add_argument("--exclude-op-types", type=names, default=(), metavar="OP,...",
                   help="nodes left in fp32, by operator (Conv, Gemm, MatMul)")
    p.add_argument("--exclude-depthwise", action="store_true",
                   help="depthwise convolutions (one input channel per group) left in fp32: "
                        "with one scale per activation tensor they lose the most")
    p.add_argument("--no-fold", dest="fold", action="store_false",
                   help="leave BatchNormalizations and per-channel constant Adds after "
                        "convolutions as they are (by default they are folded into the "
                        "convolution's weights and bias, one rounding fewer)")
    p.add_argument("--report-samples", type=int, default=16,
                   help="calibration samples the SQNR report runs (0: no report; default 16)")
    pictures = p.add_argument_group("pictures and videos (as npuinfer pre-processes them: "
                                    "input = (pixel * scale - mean) / std)")
    pictures.add_argument("--scale", type=float, default=1 / 255, help="default 1/255")
    pictures.add_argument("--mean", type=numbers, default=(0.0,), help="r,g,b or one value")
    pictures.add_argument("--std", type=numbers, default=(1.0,), help="r,g,b or one value")
    pictures.add_argument("--channel-order", choices=("rgb", "bgr"), default="rgb")
    pictures.add_argument("--letterbox", action="store_true",
                          help="keep the aspect ratio, padding with grey (114)")
    pictures.add_argument("--size", type=size, metavar="WxH",
                          help="input size for a model whose input size is open")
    pictures.add_argument("--frame-step", type=int, default=1,
                          help="every Nth frame of a video (default 1)")
    return p


def fail(status, message):
    print(f"npu-quantize: {message}", file=sys.stderr)
    return status


def main(argv=None):
    args = parser().parse_args(argv)
    if not args.calibration:
        return fail(USAGE_ERROR, "no calibration data: give --calibration with .npy/.npz "
                                 "files, pictures, videos or folders of them")
    if args.max_samples < 1 or args.frame_step < 1 or not 0 < args.percentile <= 100:
        return fail(USAGE_ERROR, "--max-samples and --frame-step must be at least 1 and "
                                 "--percentile in (0, 100]")
    if not os.path.isfile(args.model):
        return fail(USAGE_ERROR, f"{args.model}: no such model file")
    try:
        model = onnx.load(args.model)
    except Exception as error:  # protobuf's and onnx's errors share no base class
        return fail(USAGE_ERROR, f"{args.model}: not an ONNX model: {error}")
    output = args.output or os.path.splitext(args.model)[0] + ".qdq.onnx"
    pre = samples.Preprocessing(args.scale, args.mean, args.std, args.channel_order,
                                args.letterbox, args.size, args.frame_step)
    options = Options(args.activation_type, args.method, args.percentile, args.exclude_nodes,
                      args.exclude_op_types, args.report_samples, args.exclude_depthwise, args.fold)
    started = time.monotonic()
    try:
        calibration = samples.load(args.calibration, samples.model_inputs(model), pre,
                                   args.max_samples)
        result = quantize(model, calibration, options)
    except (samples.SampleError, QuantizeError) as error:
        return fail(USAGE_ERROR, str(error))
    except npu.Error as error:
        return fail(RUNTIME_ERROR, f"{args.model}: the runtime failed: {error}")
    onnx.save(result.model, output)
    print(f"{len(result.quantised_nodes)} nodes quantised, {len(calibration)} calibration "
          f"samples, {args.method} ranges, {args.activation_type} activations, "
          f"{time.monotonic() - started:.1f} s")
    if args.report_samples:
        print(result.report())
    print(f"wrote {output}")
    return 0
