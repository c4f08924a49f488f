#!/usr/bin/env python3
"""Writes tests of the quantised operators that ONNX's node tests do not
cover into OUTDIR, in the node-test layout run_node_tests reads: ONNX
Runtime's com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearGlobalAveragePool (both layouts) and QLinearConcat, int8 and uint8;
and float16 models (weights, inputs, outputs), which run in float32.
Expected outputs come from a numpy reference that rounds as the operators
do (float32 arithmetic, half to even, saturated)."""
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import onnx_numpy  # noqa: E402,F401  (before onnx)

from onnx import helper, numpy_helper  # noqa: E402
from onnx.mapping import NP_TYPE_TO_TENSOR_TYPE  # noqa: E402

OUT = sys.argv[1]
shutil.rmtree(OUT, ignore_errors=True)  # no case left behind by an older generator
rng = np.random.default_rng(17)


def write_case(name, nodes, inits, inputs, expected, opset=13):
    """inputs: [(name, array)]; expected: the output array, named y."""
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
         for n, a in inputs],
        [helper.make_tensor_value_info("y", NP_TYPE_TO_TENSOR_TYPE[expected.dtype],
                                       expected.shape)],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid("com.microsoft", 1)])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    arrays = [("input", i, a) for i, (_, a) in enumerate(inputs)] + [("output", 0, expected)]
    for kind, index, array in arrays:
        with open(os.path.join(folder, "test_data_set_0", f"{kind}_{index}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())


def limits(dtype):
    return (-128, 127) if dtype == np.int8 else (0, 255)


def quantise(real, scale, zero, dtype):
    lo, hi = limits(dtype)
    q = np.rint(real.astype(np.float32) / np.float32(scale)) + np.float32(zero)
    return np.clip(q, lo, hi).astype(dtype)


def dequantise(q, scale, zero):
    return (q.astype(np.float32) - np.float32(zero)) * np.float32(scale)


def random_q(shape, dtype):
    lo, hi = limits(dtype)
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def params(prefix, scale, zero, dtype):
    return [(prefix + "_scale", np.array(scale, np.float32)),
            (prefix + "_zero", np.array(zero, dtype))]


def binary_case(op, dtype, a_shape, b_shape):
    a, b = random_q(a_shape, dtype), random_q(b_shape, dtype)
    zero = -3 if dtype == np.int8 else 120
    inits = (params("a", 0.05, zero, dtype) + params("b", 0.03, zero + 7, dtype) +
             params("y", 0.08, zero - 2, dtype))
    ra, rb = dequantise(a, 0.05, zero), dequantise(b, 0.03, zero + 7)
    real = ra * rb if op == "QLinearMul" else ra + rb
    node = helper.make_node(op, ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale",
                                 "y_zero"], ["y"], domain="com.microsoft")
    write_case(f"test_{op.lower()}_{np.dtype(dtype).name}_broadcast", [node], inits,
               [("a", a), ("b", b)], quantise(real, 0.08, zero - 2, dtype))


def sigmoid_case(dtype):
    x = random_q((2, 3, 5), dtype)
    zero = 5 if dtype == np.int8 else 128
    inits = params("x", 0.04, zero, dtype) + params("y", 1 / 256, limits(dtype)[0], dtype)
    real = 1 / (1 + np.exp(-dequantise(x, 0.04, zero)))
    node = helper.make_node("QLinearSigmoid", ["x", "x_scale", "x_zero", "y_scale", "y_zero"],
                            ["y"], domain="com.microsoft")
    write_case(f"test_qlinearsigmoid_{np.dtype(dtype).name}", [node], inits, [("x", x)],
               quantise(real.astype(np.float32), 1 / 256, limits(dtype)[0], dtype))


def average_case(dtype, channels_last):
    x = random_q((2, 4, 3, 5) if not channels_last else (2, 3, 5, 4), dtype)
    zero = 2 if dtype == np.int8 else 100
    inits = params("x", 0.1, zero, dtype) + params("y", 0.05, zero + 1, dtype)
    axes = (1, 2) if channels_last else (2, 3)
    total = (x.astype(np.int64) - zero).sum(axis=axes, keepdims=True)
    area = np.float32(15)
    real = total.astype(np.float32) / area * np.float32(np.float32(0.1) / np.float32(0.05))
    node = helper.make_node("QLinearGlobalAveragePool",
                            ["x", "x_scale", "x_zero", "y_scale", "y_zero"], ["y"],
                            domain="com.microsoft", channels_last=int(channels_last))
    layout = "nhwc" if channels_last else "nchw"
    write_case(f"test_qlinearglobalaveragepool_{np.dtype(dtype).name}_{layout}", [node], inits,
               [("x", x)], quantise(real, 1, zero + 1, dtype))


def concat_case(dtype):
    a, b = random_q((2, 3, 4), dtype), random_q((2, 5, 4), dtype)
    zero = -1 if dtype == np.int8 else 127
    inits = (params("y", 0.1, zero, dtype) + params("a", 0.07, zero + 3, dtype) +
             params("b", 0.2, zero - 4, dtype))
    real = [dequantise(a, 0.07, zero + 3), dequantise(b, 0.2, zero - 4)]
    # as the kernel computes: (q - zero) * (x_scale / y_scale)
    parts = [(q.astype(np.float32) - np.float32(z)) * (np.float32(s) / np.float32(0.1))
             for q, s, z in ((a, 0.07, zero + 3), (b, 0.2, zero - 4))]
    assert np.allclose(np.concatenate(real, 1) / 0.1, np.concatenate(parts, 1), atol=1e-3)
    node = helper.make_node("QLinearConcat", ["y_scale", "y_zero", "a", "a_scale", "a_zero", "b",
                                              "b_scale", "b_zero"], ["y"],
                            domain="com.microsoft", axis=1)
    write_case(f"test_qlinearconcat_{np.dtype(dtype).name}", [node], inits, [("a", a), ("b", b)],
               quantise(np.concatenate(parts, 1), 1, zero, dtype))


def float16_conv_case(name, output_type):
    """float16 input, weights and bias into a Conv and Relu; the output float16
    (small integers throughout: exact in float16) or Cast to float32."""
    x = rng.integers(-4, 5, size=(1, 3, 6, 6)).astype(np.float16)
    w = rng.integers(-2, 3, size=(4, 3, 3, 3)).astype(np.float16)
    b = np.array([1, -2, 0.5, 3], np.float16)
    wide = x.astype(np.float32)
    padded = np.pad(wide, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, 4, 6, 6), np.float32)
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,mc->nmhw", padded[:, :, i:i + 6, j:j + 6],
                           w[:, :, i, j].astype(np.float32))
    y = np.maximum(y + b.astype(np.float32).reshape(1, 4, 1, 1), 0)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r" if output_type == np.float32 else "y"])]
    if output_type == np.float32:
        nodes.append(helper.make_node("Cast", ["r"], ["y"], to=1))
    write_case(name, nodes, [("w", w), ("b", b)], [("x", x)], y.astype(output_type))


def conv_add_case(dtype):
    """QLinearConv (3x3, 16 -> 16 channels, int32 bias) then QLinearAdd of
    its output and the conv's own input, as ONNX Runtime's QOperator
    format writes a residual block: the planner may run the Add inside the
    convolution; the conv's zero point at the bottom of its range saturates
    its negative values before the Add."""
    x, w = random_q((1, 16, 7, 6), dtype), rng.integers(-127, 128, (16, 16, 3, 3)).astype(np.int8)
    low = limits(dtype)[0]
    xs, xz, ws, cs, ys = 0.03, low + 100, 0.002, 0.05, 0.06
    bias = rng.integers(-3000, 3000, 16).astype(np.int32)
    padded = np.pad(x.astype(np.int64) - xz, ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = np.zeros((1, 16, 7, 6), np.int64) + bias.reshape(1, -1, 1, 1)
    for i in range(3):
        for j in range(3):
            acc += np.einsum("nchw,mc->nmhw", padded[:, :, i:i + 7, j:j + 6], w[:, :, i, j].astype(np.int64))
    c = quantise(acc.astype(np.float32) * np.float32(xs * ws / cs), 1, low, dtype)
    inits = (params("x", xs, xz, dtype) + params("w", ws, 0, np.int8) + params("c", cs, low, dtype) +
             params("y", ys, low + 5, dtype) + [("w", w), ("bias", bias)])
    nodes = [helper.make_node("QLinearConv", ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero",
                                              "c_scale", "c_zero", "bias"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("QLinearAdd", ["c", "c_scale", "c_zero", "x", "x_scale", "x_zero",
                                             "y_scale", "y_zero"], ["y"], domain="com.microsoft")]
    real = dequantise(c, cs, low) + dequantise(x, xs, xz)
    write_case(f"test_qlinearconv_qlinearadd_{np.dtype(dtype).name}", nodes, inits, [("x", x)],
               quantise(real, ys, low + 5, dtype))


for dtype in (np.uint8, np.int8):
    conv_add_case(dtype)
    binary_case("QLinearAdd", dtype, (2, 3, 4), (3, 1))
    binary_case("QLinearMul", dtype, (1, 4), (3, 2, 4))
    sigmoid_case(dtype)
    average_case(dtype, False)
    average_case(dtype, True)
    concat_case(dtype)
float16_conv_case("test_float16_conv_relu", np.float16)
float16_conv_case("test_float16_conv_relu_cast_float", np.float32)
