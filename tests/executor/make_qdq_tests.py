#!/usr/bin/env python3
"""Writes QDQ Conv models (as ONNX Runtime's quantiser lays them out:
QuantizeLinear -> DequantizeLinear on activations, DequantizeLinear on
constant int8 weights, a float or dequantised int32 bias, Relu or Clip,
QuantizeLinear) into OUTDIR in the node-test layout run_node_tests reads.
The expected outputs are what the graph computes as written, through
float32 (numpy, float64 convolution); the runtime rewrites these Convs into
QLinearConv, whose integer arithmetic must agree within one quantisation
step (run with NPU_NODE_TESTS_INTEGER_TOLERANCE=1). Each test's `kernels`
file holds the launches per run the plan must have: fewer where the
rewrite happened, the float count where it must not (a Relu or Clip that
is not a saturation of the output's range)."""
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore", FutureWarning)
for alias, value in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if not hasattr(np, alias):  # removed in numpy 1.24; onnx 1.12 still uses them
        setattr(np, alias, value)

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

OUT = sys.argv[1]
rng = np.random.default_rng(1717)
TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


def limits(dtype):
    return (-128, 127) if dtype == np.int8 else (0, 255)


def quantise(real, scale, zero, dtype):
    lo, hi = limits(dtype)
    q = np.rint(real.astype(np.float32) / np.float32(scale)) + np.float32(zero)
    return np.clip(q, lo, hi).astype(dtype)


def dequantise(q, scale, zero):
    return ((q.astype(np.float32) - np.float32(zero)) * np.float32(scale)).astype(np.float32)


def conv(x, w, bias, stride, pad, dilation, group):
    """NCHW convolution in float64 (symmetric pads)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - (kh - 1) * dilation - 1) // stride + 1
    ow = (wd + 2 * pad - (kw - 1) * dilation - 1) // stride + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg]
        ws = w[g * mg:(g + 1) * mg].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilation:i * dilation + stride * oh:stride,
                           j * dilation:j * dilation + stride * ow:stride]
                y[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, ws[:, :, i, j])
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


class Builder:
    """One QDQ graph under construction."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, stem):
        self.count += 1
        return f"{stem}{self.count}"

    def const(self, stem, array):
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def quantise(self, tensor, scale, zero, dtype):
        return self.node("QuantizeLinear", [tensor, self.const("s", np.float32(scale)),
                                            self.const("z", dtype(zero))])

    def dequantise(self, tensor, scale, zero, dtype, axis=None):
        attrs = {} if axis is None else {"axis": axis}
        return self.node("DequantizeLinear", [tensor, self.const("s", np.float32(scale)
                                                                 if np.ndim(scale) == 0 else scale),
                                              self.const("z", np.asarray(zero, dtype))], **attrs)


def qdq_conv(b, x_q, x_real, x_params, spec):
    """A quantised Conv in QDQ form after x_q (whose real values are x_real,
    quantised with x_params); returns its output's name, its quantised
    values and parameters."""
    x_scale, x_zero, x_type = x_params
    m, c = spec["out"], x_real.shape[1]
    group = spec.get("group", 1)
    k, stride, pad, dil = spec.get("kernel", 3), spec.get("stride", 1), spec.get("pad", 1), \
        spec.get("dilation", 1)
    w_real = rng.normal(0, 0.3, (m, c // group, k, k)).astype(np.float32)
    if spec.get("per_channel", True):
        w_scale = (np.abs(w_real).reshape(m, -1).max(axis=1) / 127).astype(np.float32)
        w_scale_b = w_scale.reshape(-1, 1, 1, 1)
    else:
        w_scale = np.float32(np.abs(w_real).max() / 127)
        w_scale_b = w_scale
    w_q = np.clip(np.rint(w_real / w_scale_b), -127, 127).astype(np.int8)
    w_deq = (w_q.astype(np.float32) * w_scale_b).astype(np.float32)
    w_in = b.dequantise(b.const("w", w_q), w_scale, np.zeros(np.shape(w_scale), np.int8),
                        np.int8, axis=0 if spec.get("per_channel", True) else None)
    x_in = b.dequantise(x_q, x_scale, x_zero, x_type)
    bias_mode = spec.get("bias", "float")
    bias_real, inputs = None, [x_in, w_in]
    if bias_mode == "float":
        bias_real = rng.normal(0, 0.5, m).astype(np.float32)
        inputs.append(b.const("b", bias_real))
    elif bias_mode == "int32":  # ORT: int32 at scale x_scale * w_scale[m], dequantised
        b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        b_q = np.rint(rng.normal(0, 0.5, m) / b_scale).astype(np.int32)
        bias_real = dequantise(b_q, b_scale, 0)
        inputs.append(b.dequantise(b.const("bq", b_q), b_scale, np.zeros(np.shape(b_scale), np.int32),
                                   np.int32, axis=0 if np.ndim(b_scale) else None))
    attrs = {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [pad] * 4,
             "dilations": [dil, dil], "group": group}
    y = b.node("Conv", inputs, **attrs)
    y_real = conv(dequantise(quantise(x_real, x_scale, x_zero, x_type), x_scale, x_zero), w_deq,
                  bias_real, stride, pad, dil, group)
    activation = spec.get("activation")
    if activation == "Relu":
        y = b.node("Relu", [y])
        y_real = np.maximum(y_real, 0)
    elif activation:
        low, high = activation[1:]
        y = b.node("Clip", [y, b.const("lo", np.float32(low)), b.const("hi", np.float32(high))])
        y_real = np.clip(y_real, np.float32(low), np.float32(high))
    y_type = spec.get("y_type", np.uint8)
    y_scale = np.float32(spec.get("y_scale", np.abs(y_real).max() / 100))
    y_zero = spec.get("y_zero", 0)
    return b.quantise(y, y_scale, y_zero, y_type), quantise(y_real, y_scale, y_zero, y_type), \
        (y_scale, y_zero, y_type)


def write_case(name, shape, x_params, specs, kernels):
    """A float input quantised with x_params, then the Convs of `specs` in a
    chain (each the next one's input); the last quantised output is y."""
    b = Builder()
    x = rng.normal(0, 1, shape).astype(np.float32)
    q = b.quantise("x", *x_params)
    real, params = x, x_params
    for spec in specs:
        q, values, params = qdq_conv(b, q, real, params, spec)
        real = dequantise(values, params[0], params[1])
    b.nodes.append(helper.make_node("Identity", [q], ["y"]))
    graph = helper.make_graph(
        b.nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TYPES[params[2]], values.shape)], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, array in (("input", x), ("output", values)):
        with open(os.path.join(folder, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())
    with open(os.path.join(folder, "kernels"), "w") as f:
        f.write(f"{kernels}\n")


U8_X = (0.02, 128, np.uint8)
S8_X = (0.02, 0, np.int8)
# Kernels: QuantizeLinear of the input, a QLinearConv per rewritten Conv,
# the Identity (a copy); a Conv left in float runs as DequantizeLinear, Conv
# (its Relu or Clip fused) and QuantizeLinear.
write_case("test_qdq_conv_u8_relu_per_channel", (1, 8, 12, 12), U8_X,
           [{"out": 16, "activation": "Relu"}], 3)
write_case("test_qdq_conv_s8_int32_bias_per_tensor", (2, 8, 10, 10), S8_X,
           [{"out": 8, "per_channel": False, "bias": "int32", "y_type": np.int8,
             "y_zero": 5}], 3)
write_case("test_qdq_conv_depthwise_relu6_pointwise", (1, 16, 14, 14), U8_X,
           [{"out": 16, "group": 16, "stride": 2, "activation": ("Clip", 0, 6),
             "y_scale": 6 / 255},
            {"out": 24, "kernel": 1, "pad": 0, "bias": None, "y_type": np.int8}], 4)
write_case("test_qdq_conv_dilated_groups", (1, 8, 13, 11), S8_X,
           [{"out": 12, "group": 2, "dilation": 2, "pad": 2, "y_zero": 100}], 3)
write_case("test_qdq_conv_per_channel_int32_bias", (1, 8, 9, 9), U8_X,
           [{"out": 16, "bias": "int32", "activation": "Relu"}], 3)
# Not saturations: the Conv stays in float, with the same outputs.
write_case("test_qdq_conv_relu_above_zero_point", (1, 8, 10, 10), U8_X,
           [{"out": 8, "activation": "Relu", "y_zero": 40}], 5)
write_case("test_qdq_conv_clip_inside_range", (1, 8, 10, 10), U8_X,
           [{"out": 8, "activation": ("Clip", -0.5, 0.5), "y_scale": 0.01,
             "y_zero": 128}], 5)
