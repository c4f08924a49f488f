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
import math
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import onnx_numpy  # noqa: E402,F401  (before onnx)

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

OUT = sys.argv[1]
shutil.rmtree(OUT, ignore_errors=True)  # no case left behind by an older generator
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


def write_graph(name, shape, x_params, build, kernels, opset=13, relaid=None):
    """A float input quantised with x_params, then what build(b, q, real,
    params) adds (returning the last quantised tensor, its values and
    parameters); the last quantised output is y. `relaid`: the tensors the
    plan must keep in the backend's layout (None: not checked)."""
    b = Builder()
    x = rng.normal(0, 1, shape).astype(np.float32)
    q = b.quantise("x", *x_params)
    q, values, params = build(b, q, x, x_params)
    b.nodes.append(helper.make_node("Identity", [q], ["y"]))
    graph = helper.make_graph(
        b.nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TYPES[params[2]], values.shape)], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid("com.microsoft", 1)])
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, array in (("input", x), ("output", values)):
        with open(os.path.join(folder, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())
    with open(os.path.join(folder, "kernels"), "w") as f:
        f.write(f"{kernels}\n")
    if relaid is not None:
        with open(os.path.join(folder, "relaid"), "w") as f:
            f.write(f"{relaid}\n")


def write_case(name, shape, x_params, specs, kernels):
    """The Convs of `specs` in a chain (each the next one's input) after
    the quantised input (see write_graph)."""
    def build(b, q, real, params):
        for spec in specs:
            q, values, params = qdq_conv(b, q, real, params, spec)
            real = dequantise(values, params[0], params[1])
        return q, values, params
    write_graph(name, shape, x_params, build, kernels)


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


# ---- The int8 operators between convolutions --------------------------------------

def max_pool(x, kernel, stride, pad):
    """NCHW max pooling, padding never chosen."""
    n, c, h, w = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    oh, ow = (h + 2 * pad - kernel) // stride + 1, (w + 2 * pad - kernel) // stride + 1
    y = np.full((n, c, oh, ow), -np.inf, np.float32)
    for i in range(kernel):
        for j in range(kernel):
            y = np.maximum(y, padded[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride])
    return y


def conv_on(b, q, real, params, spec):
    """qdq_conv, returning the real values of its quantised output too."""
    q, values, out = qdq_conv(b, q, real, params, spec)
    return q, values, out, dequantise(values, out[0], out[1])


def requantised_conv(b, tensor, real, y_type):
    """Q(tensor) with min-max parameters of its real values, then a
    16-channel convolution reading it: (its output, values, parameters)."""
    scale = np.float32((real.max() - real.min()) / 255)
    zero = int(np.clip(np.rint(-real.min() / scale) + (-128 if y_type == np.int8 else 0),
                       *limits(y_type)))
    params = (scale, zero, y_type)
    values = dequantise(quantise(real, *params), scale, zero)
    q, out_values, out, _ = conv_on(b, b.quantise(tensor, *params), values, params, {"out": 16})
    return q, out_values, out


def residual(relu, y_type, y_zero):
    """conv1 -> conv2, DQ(conv1) + DQ(conv2) [-> Relu] -> Q -> conv3: the
    Add's tensors are all convolution outputs (channels-last int8)."""
    def build(b, q, x, params):
        low = -128 if y_type == np.int8 else 0  # (Relu: a saturation)
        q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 16, "activation": "Relu",
                                                  "y_type": y_type, "y_zero": low})
        q2, _, p2, r2 = conv_on(b, q1, r1, p1, {"out": 16, "y_type": y_type, "y_zero": y_zero})
        total = b.node("Add", [b.dequantise(q1, *p1), b.dequantise(q2, *p2)])
        real = r1 + r2
        if relu:
            total = b.node("Relu", [total])
            real = np.maximum(real, 0)
        p3 = (np.float32(np.abs(real).max() / 100), low if relu else y_zero, y_type)
        q3 = b.quantise(total, *p3)
        r3 = dequantise(quantise(real, *p3), p3[0], p3[1])
        q4, values, p4, _ = conv_on(b, q3, r3, p3, {"out": 16, "y_type": y_type})
        return q4, values, p4
    return build


def broadcast_add(b, q, x, params):
    """DQ(conv) + DQ(int8 constant of one value per channel) -> Q."""
    q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 8, "y_type": np.int8, "y_zero": -3})
    shift_q = rng.integers(-100, 100, (1, 8, 1, 1)).astype(np.int8)
    shift_params = (np.float32(0.01), np.int8(7), np.int8)
    total = b.node("Add", [b.dequantise(q1, *p1),
                           b.dequantise(b.const("shift", shift_q), *shift_params)])
    real = r1 + dequantise(shift_q, shift_params[0], shift_params[1])
    p2 = (np.float32(np.abs(real).max() / 90), 4, np.int8)
    return b.quantise(total, *p2), quantise(real, *p2), p2


def pool(same_params):
    """conv -> DQ -> MaxPool 3x3/2 -> Q -> conv; the pool's Q takes the
    conv's parameters (int8 pooling) or others (int8 pooling, then a
    table requantising it)."""
    def build(b, q, x, params):
        q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 16, "activation": "Relu"})
        pooled = b.node("MaxPool", [b.dequantise(q1, *p1)], kernel_shape=[3, 3],
                        strides=[2, 2], pads=[1, 1, 1, 1])
        real = max_pool(r1, 3, 2, 1)
        p2 = p1 if same_params else (np.float32(p1[0] * 1.5), 3, p1[2])
        r2 = dequantise(quantise(real, *p2), p2[0], p2[1])
        q3, values, p3, _ = conv_on(b, b.quantise(pooled, *p2), r2, p2, {"out": 16})
        return q3, values, p3
    return build


def branches(y_type, conv_zero, add_scale_factor):
    """x -> conv_a (1x1 stride 2) and x -> conv_b (3x3 stride 2), DQ(a) + DQ(b)
    -> Relu -> Q -> conv: a downsampling block's join. The planner fuses the
    Add into conv_b (the later one: conv_a's output is computed by then)
    unless the Add dequantises conv_b's output with other parameters than
    conv_b quantised it (add_scale_factor != 1)."""
    def build(b, q, x, params):
        low = -128 if y_type == np.int8 else 0
        qa, _, pa, ra = conv_on(b, q, x, params, {"out": 16, "kernel": 1, "pad": 0, "stride": 2,
                                                  "y_type": y_type, "y_zero": conv_zero})
        qb, vb, pb, rb = conv_on(b, q, x, params, {"out": 16, "stride": 2, "y_type": y_type,
                                                   "y_zero": conv_zero})
        pb_add = (np.float32(pb[0] * add_scale_factor), pb[1], pb[2])
        rb = dequantise(vb, pb_add[0], pb_add[1])
        total = b.node("Relu", [b.node("Add", [b.dequantise(qa, *pa), b.dequantise(qb, *pb_add)])])
        real = np.maximum(ra + rb, 0)
        p3 = (np.float32(real.max() / 200), low, y_type)
        r3 = dequantise(quantise(real, *p3), p3[0], p3[1])
        q4, values, p4, _ = conv_on(b, b.quantise(total, *p3), r3, p3, {"out": 8, "y_type": y_type})
        return q4, values, p4
    return build


def qoperator_conv(b, q, real, params, y_params):
    """QLinearConv (3x3, 16 output channels, per-channel weights, int32
    bias) on q, whose dequantised values are `real`: (its output, values)."""
    x_scale, x_zero, x_type = params
    w_real = rng.normal(0, 0.3, (16, real.shape[1], 3, 3)).astype(np.float32)
    w_scale = (np.abs(w_real).reshape(16, -1).max(axis=1) / 127).astype(np.float32)
    w_q = np.clip(np.rint(w_real / w_scale.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
    b_q = np.rint(rng.normal(0, 0.5, 16) / (np.float32(x_scale) * w_scale)).astype(np.int32)
    y = b.node("QLinearConv", [q, b.const("s", np.float32(x_scale)), b.const("z", x_type(x_zero)),
                               b.const("w", w_q), b.const("ws", w_scale),
                               b.const("wz", np.zeros(16, np.int8)),
                               b.const("s", np.float32(y_params[0])),
                               b.const("z", y_params[2](y_params[1])), b.const("bq", b_q)],
               pads=[1, 1, 1, 1])
    y_real = conv(real, w_q.astype(np.float32) * w_scale.reshape(-1, 1, 1, 1),
                  dequantise(b_q, np.float32(x_scale) * w_scale, 0), 1, 1, 1, 1)
    return y, quantise(y_real, *y_params)


def qoperator_residual(b, q, x, params):
    """ONNX Runtime's QOperator form of a residual block: conv1, conv2 on
    it, QLinearAdd(conv2, conv1) (u8, conv2's zero point 0 clipping its
    negative values), conv3 on the sum."""
    real = dequantise(quantise(x, *params), params[0], params[1])
    c1_params = (np.float32(0.04), 0, np.uint8)
    q1, v1 = qoperator_conv(b, q, real, params, c1_params)
    r1 = dequantise(v1, 0.04, 0)
    c2_params = (np.float32(0.05), 0, np.uint8)
    q2, v2 = qoperator_conv(b, q1, r1, c1_params, c2_params)
    s_params = (np.float32(0.06), 0, np.uint8)
    total = b.node("QLinearAdd", [q2, b.const("s", np.float32(0.05)), b.const("z", np.uint8(0)),
                                  q1, b.const("s", np.float32(0.04)), b.const("z", np.uint8(0)),
                                  b.const("s", np.float32(0.06)), b.const("z", np.uint8(0))],
                   domain="com.microsoft")
    r_sum = dequantise(quantise(dequantise(v2, 0.05, 0) + r1, *s_params), 0.06, 0)
    y_params = (np.float32(0.1), 128, np.uint8)
    q3, v3 = qoperator_conv(b, total, r_sum, s_params, y_params)
    return q3, v3, y_params


# Kernels: the input's QuantizeLinear, one per int8 node, the Identity; a
# residual Add runs inside the convolution before it (one kernel less): the
# u8 one where that convolution's own quantisation (zero point 0) clips its
# negative values before the Add, the s8 one where it saturates nowhere.
write_graph("test_qdq_add_relu_residual_u8", (1, 8, 10, 10), U8_X, residual(True, np.uint8, 0), 5)
write_graph("test_qdq_add_residual_s8", (2, 16, 9, 7), S8_X, residual(False, np.int8, 10), 5)
# Q, conv_a, conv_b with the Add, conv, Identity; where the Add reads conv_b
# with other parameters, the Add runs apart (6).
write_graph("test_qdq_add_branches_u8", (2, 8, 12, 10), U8_X, branches(np.uint8, 0, 1), 5)
write_graph("test_qdq_add_branches_s8", (1, 8, 9, 11), S8_X, branches(np.int8, -20, 1), 5)
write_graph("test_qdq_add_branches_other_parameters_u8", (1, 8, 8, 8), U8_X,
            branches(np.uint8, 0, 1.5), 6)
# Q, conv1, conv2 with the Add, conv3, Identity.
write_graph("test_qoperator_conv_add_u8", (1, 8, 7, 9), U8_X, qoperator_residual, 5)
write_graph("test_qdq_add_broadcast_constant_s8", (1, 8, 6, 6), S8_X, broadcast_add, 4)
write_graph("test_qdq_max_pool_u8", (1, 8, 13, 13), U8_X, pool(True), 5)
# Other parameters after the pool: the int8 MaxPool and a QLinearLookup requantising.
write_graph("test_qdq_max_pool_requantised", (1, 8, 13, 13), U8_X, pool(False), 6)


def lookup(silu, y_type):
    """conv -> DQ -> Sigmoid [-> Mul by its input: SiLU] -> Q -> conv: the
    function becomes a 256-entry table (the conv's output in channels-last
    int8 on both sides)."""
    def build(b, q, x, params):
        q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 16, "y_type": y_type,
                                                  "y_zero": 3 if y_type == np.int8 else 120})
        d = b.dequantise(q1, *p1)
        s = b.node("Sigmoid", [d])
        real = (1 / (1 + np.exp(-r1.astype(np.float64)))).astype(np.float32)
        if silu:
            s = b.node("Mul", [d, s])
            real = real * r1
        return requantised_conv(b, s, real, y_type)
    return build


write_graph("test_qdq_sigmoid_lookup_u8", (1, 8, 11, 9), U8_X, lookup(False, np.uint8), 5)
write_graph("test_qdq_silu_lookup_s8", (2, 8, 7, 7), S8_X, lookup(True, np.int8), 5)


def concat(same_params):
    """conv1, conv2 -> DQ each -> Concat on channels -> Q -> conv3: a copy of
    the 8-bit values where all three share parameters, else requantised."""
    def build(b, q, x, params):
        q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 16, "y_type": np.int8})
        spec = {"out": 8, "y_type": np.int8}
        if same_params:
            spec.update(y_scale=p1[0], y_zero=p1[1])
        q2, _, p2, r2 = conv_on(b, q, x, params, spec)
        joined = b.node("Concat", [b.dequantise(q1, *p1), b.dequantise(q2, *p2)], axis=1)
        real = np.concatenate([r1, r2], axis=1)
        p3 = p1 if same_params else (np.float32(np.abs(real).max() / 110), -2, np.int8)
        r3 = dequantise(quantise(real, *p3), p3[0], p3[1])
        q4, values, p4, _ = conv_on(b, b.quantise(joined, *p3), r3, p3, {"out": 16})
        return q4, values, p4
    return build


def split(b, q, x, params):
    """conv -> DQ -> Split 16 = 8 + 8 -> Q each (the conv's parameters) ->
    conv on each, concatenated (requantised) -> Q."""
    q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 16})
    halves = [b.name("half"), b.name("half")]
    b.nodes.append(helper.make_node("Split", [b.dequantise(q1, *p1), b.const("sizes", np.array(
        [8, 8], np.int64))], halves, axis=1))
    parts, reals, outs = [], [], []
    for k, half in enumerate(halves):
        qk, _, pk, rk = conv_on(b, b.quantise(half, *p1), r1[:, 8 * k:8 * k + 8], p1, {"out": 8})
        parts.append(b.dequantise(qk, *pk))
        reals.append(rk)
    real = np.concatenate(reals, axis=1)
    p2 = (np.float32(np.abs(real).max() / 60), 30, np.uint8)  # (coarser than the parts)
    return b.quantise(b.node("Concat", parts, axis=1), *p2), quantise(real, *p2), p2


def resize(b, q, x, params):
    """conv -> DQ -> Resize nearest x2 -> Q (the conv's parameters) -> conv."""
    q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 16, "y_type": np.int8, "y_zero": -5})
    scaled = b.node("Resize", [b.dequantise(q1, *p1), "",
                               b.const("scales", np.array([1, 1, 2, 2], np.float32))],
                    mode="nearest")
    real = np.repeat(np.repeat(r1, 2, axis=2), 2, axis=3)
    q3, values, p3, _ = conv_on(b, b.quantise(scaled, *p1), real, p1, {"out": 8})
    return q3, values, p3


def head_reshape(same_params):
    """conv -> DQ -> Reshape to (N, C, H*W) -> Q, as a detection head reads
    its channels-last int8 output: the DequantizeLinear (per tensor with u8,
    per channel with s8) writes the plain float tensor itself; with the
    conv's parameters on the Q (`same_params`) the Reshape runs on the 8-bit
    values instead."""
    return lambda b, q, x, params: head_reshape_on(b, q, x, params, same_params)


def head_reshape_on(b, q, x, params, same_params):
    q1, v1, p1, r1 = conv_on(b, q, x, params, {"out": 16, "y_type": params[2]})
    shape = b.const("shape", np.array([r1.shape[0], 16, -1], np.int64))
    softplus = params[2] == np.uint8 and not same_params
    if params[2] == np.uint8:
        real, out = r1, p1 if same_params else (np.float32(p1[0] * 1.5), 0, np.uint8)
        dequantised = b.dequantise(q1, *p1)
    else:
        scales = (np.linspace(0.5, 2, 16) * p1[0]).astype(np.float32)
        zeros = np.arange(-8, 8).astype(np.int8)
        real = (v1.astype(np.float32) - zeros.reshape(1, -1, 1, 1)) * scales.reshape(1, -1, 1, 1)
        out = (scales.max(), 0, np.int8)  # (a step of the conv's: at most one of y's)
        dequantised = b.dequantise(q1, scales, zeros, np.int8, axis=1)
    flat = b.node("Reshape", [dequantised, shape])
    real = real.reshape(real.shape[0], 16, -1)
    if softplus:  # (no int8 form: the float DequantizeLinear stays)
        flat = b.node("Softplus", [flat])
        real = np.log1p(np.exp(real.astype(np.float64))).astype(np.float32)
    return b.quantise(flat, *out), quantise(real, *out), out


# Kernels: Q, conv1, conv2, (QLinear)Concat, conv3, Identity; the split:
# Q, conv1, Split, two convs, QLinearConcat, Identity. The Concats' inputs
# and output stay channels-last, the int8 convolutions' layout (3 tensors).
write_graph("test_qdq_concat_copy_s8", (1, 8, 9, 9), S8_X, concat(True), 6, relaid=3)
write_graph("test_qdq_concat_requantised_s8", (2, 8, 7, 9), S8_X, concat(False), 6, relaid=3)
write_graph("test_qdq_split_u8", (1, 8, 9, 9), U8_X, split, 7)
# Q, conv, DequantizeLinear, Reshape, Softplus (u8) or Q, Identity: the
# conv's output stays channels-last (1 tensor), the DequantizeLinear writes
# the plain float one.
write_graph("test_qdq_dequantize_head_u8", (1, 8, 6, 5), U8_X, head_reshape(False), 7,
            relaid=1)
write_graph("test_qdq_dequantize_head_per_channel_s8", (2, 8, 5, 7), S8_X, head_reshape(False),
            6, relaid=1)
# Q, conv, the Reshape of 8-bit values, Identity.
write_graph("test_qdq_reshape_int8_u8", (1, 8, 6, 5), U8_X, head_reshape(True), 4)
# Q, conv1, Resize, conv2, Identity.
write_graph("test_qdq_resize_nearest_s8", (1, 8, 6, 5), S8_X, resize, 5)


def region(kind, y_type):
    """conv -> DQ -> a chain of elementwise float nodes with one-value
    constants -> Q -> conv: the chain becomes one 256-entry table.
    "hardswish": PP-OCR's scaling (Mul, Add) and HardSwish written out
    (Add 3, Clip 0..6, Mul, Div 6), then another scaling; "mixed": the
    operators HardSwish (opset 14), HardSigmoid, Tanh, LeakyRelu, Sub, Neg, Abs, Relu."""
    def build(b, q, x, params):
        q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 16, "y_type": y_type,
                                                  "y_zero": 3 if y_type == np.int8 else 120})
        d = b.dequantise(q1, *p1)
        f32 = np.float32
        if kind == "hardswish":
            a = b.node("Add", [b.node("Mul", [b.const("k", f32(1.3)), d]), b.const("c", f32(-0.2))])
            ra = r1 * f32(1.3) + f32(-0.2)
            c = b.node("Clip", [b.node("Add", [a, b.const("three", f32(3))]),
                                b.const("lo", f32(0)), b.const("hi", f32(6))])
            s = b.node("Div", [b.node("Mul", [a, c]), b.const("six", f32(6))])
            s = b.node("Add", [b.node("Mul", [b.const("k", f32(0.8)), s]), b.const("c", f32(0.1))])
            real = (ra * np.clip(ra + f32(3), f32(0), f32(6)) / f32(6)) * f32(0.8) + f32(0.1)
        elif kind == "gelu":  # opset 20's Gelu, both forms
            s = b.node("Gelu", [b.node("Gelu", [d], approximate="tanh")])
            r = r1.astype(np.float64)
            t = 0.5 * r * (1 + np.tanh(math.sqrt(2 / math.pi) * (r + 0.044715 * r ** 3)))
            real = 0.5 * t * (1 + np.vectorize(math.erf)(t / math.sqrt(2)))
        else:
            s = b.node("HardSwish", [d])
            s = b.node("HardSigmoid", [s], alpha=0.25, beta=0.4)
            s = b.node("Tanh", [s])
            s = b.node("LeakyRelu", [s], alpha=0.3)
            s = b.node("Sub", [b.const("k", f32(0.25)), s])
            s = b.node("Relu", [b.node("Abs", [b.node("Neg", [s])])])
            h = r1 * np.clip(r1 / f32(6) + f32(0.5), f32(0), f32(1))
            h = np.clip(f32(0.25) * h + f32(0.4), f32(0), f32(1))
            t = np.tanh(h.astype(np.float64)).astype(np.float32)
            t = np.where(t >= 0, t, t * f32(0.3))
            real = np.abs(f32(0.25) - t)
        real = real.astype(np.float32)
        return requantised_conv(b, s, real, y_type)
    return build


# Q, conv1, the table, conv2, Identity.
write_graph("test_qdq_region_hardswish_u8", (1, 8, 11, 9), U8_X, region("hardswish", np.uint8), 5)
write_graph("test_qdq_region_mixed_s8", (2, 8, 7, 7), S8_X, region("mixed", np.int8), 5, opset=14)
write_graph("test_qdq_region_gelu_u8", (1, 8, 11, 9), U8_X, region("gelu", np.uint8), 5, opset=20)


def average(y_type):
    """conv -> DQ -> GlobalAveragePool -> Q -> 1x1 conv: the mean of the
    8-bit values (the conv's output channels-last)."""
    def build(b, q, x, params):
        q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 24, "y_type": y_type,
                                                  "y_zero": -7 if y_type == np.int8 else 100})
        pooled = b.node("GlobalAveragePool", [b.dequantise(q1, *p1)])
        real = r1.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32)
        p2 = (np.float32(np.abs(real).max() / 100), 1 if y_type == np.int8 else 128, y_type)
        r2 = dequantise(quantise(real, *p2), p2[0], p2[1])
        q3, values, p3, _ = conv_on(b, b.quantise(pooled, *p2), r2, p2,
                                    {"out": 8, "kernel": 1, "pad": 0})
        return q3, values, p3
    return build


# Q, conv1, the average, conv2, Identity.
write_graph("test_qdq_global_average_u8", (2, 8, 9, 11), U8_X, average(np.uint8), 5)
write_graph("test_qdq_global_average_s8", (1, 8, 6, 6), S8_X, average(np.int8), 5)


def pair(kind):
    """Two dequantised inputs through elementwise nodes to one Q: a table
    of 65536. "excite": PP-OCR's squeeze-excitation, conv1 -> DQ ->
    GlobalAveragePool -> Q -> 1x1 conv -> DQ -> HardSigmoid, times DQ(conv1)
    (one scale per channel); "same": DQ(conv1) * DQ(conv2) - 0.5, one shape;
    "spatial": DQ(conv1) * Sigmoid(DQ(1-channel conv of conv1)), one scale
    per pixel (any other broadcast: strides, channels-last)."""
    def build(b, q, x, params):
        q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 16, "y_zero": 110})
        f32 = np.float32
        if kind == "excite":
            pooled = b.node("GlobalAveragePool", [b.dequantise(q1, *p1)])
            rp = r1.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32)
            pp = (np.float32(np.abs(rp).max() / 100), 128, np.uint8)
            rp = dequantise(quantise(rp, *pp), pp[0], pp[1])
            q2, _, p2, r2 = conv_on(b, b.quantise(pooled, *pp), rp, pp,
                                    {"out": 16, "kernel": 1, "pad": 0, "y_type": np.int8,
                                     "y_zero": 2})
            gate = b.node("HardSigmoid", [b.dequantise(q2, *p2)], alpha=0.2, beta=0.5)
            y = b.node("Mul", [b.dequantise(q1, *p1), gate])
            real = r1 * np.clip(f32(0.2) * r2 + f32(0.5), f32(0), f32(1))
        elif kind == "spatial":
            q2, _, p2, r2 = conv_on(b, q1, r1, p1, {"out": 1, "y_type": np.uint8, "y_zero": 128})
            gate = b.node("Sigmoid", [b.dequantise(q2, *p2)])
            y = b.node("Mul", [gate, b.dequantise(q1, *p1)])
            real = r1 * (1 / (1 + np.exp(-r2.astype(np.float64)))).astype(np.float32)
        else:
            q2, _, p2, r2 = conv_on(b, q, x, params, {"out": 16, "y_type": np.uint8,
                                                      "y_zero": 90})
            y = b.node("Sub", [b.node("Mul", [b.dequantise(q2, *p2), b.dequantise(q1, *p1)]),
                              b.const("half", f32(0.5))])
            real = r2 * r1 - f32(0.5)
        real = real.astype(np.float32)
        p3 = (np.float32((real.max() - real.min()) / 255), 0, np.uint8)
        p3 = (p3[0], int(np.clip(np.rint(-real.min() / p3[0]), 0, 255)), np.uint8)
        r3 = dequantise(quantise(real, *p3), p3[0], p3[1])
        q4, values, p4, _ = conv_on(b, b.quantise(y, *p3), r3, p3, {"out": 8})
        return q4, values, p4
    return build


# Q, conv1, the average, the 1x1 conv, the table, conv3, Identity; Q,
# conv1, conv2, the table, conv3, Identity.
write_graph("test_qdq_pair_excite_u8", (2, 8, 7, 9), U8_X, pair("excite"), 7)
write_graph("test_qdq_pair_same_shape_u8", (1, 8, 6, 7), U8_X, pair("same"), 6)
# Q, conv1, the 1-channel conv, the table, conv3, Identity.
write_graph("test_qdq_pair_spatial_u8", (2, 8, 5, 6), U8_X, pair("spatial"), 6)


# ---- ConvTranspose: QLinearConvTranspose ---------------------------------------------

def deconv(x, w, bias, stride, pad, output_padding, group=1):
    """NCHW transposed convolution in float64, weights [C, M/group, kh, kw]
    (symmetric pads): each group's channels on their own."""
    if group > 1:
        cg = x.shape[1] // group
        mg = w.shape[1]
        parts = [deconv(x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg],
                        None if bias is None else bias[g * mg:(g + 1) * mg], stride, pad,
                        output_padding) for g in range(group)]
        return np.concatenate(parts, axis=1)
    n, c, h, wd = x.shape
    _, m, kh, kw = w.shape
    full_h = (h - 1) * stride + kh + output_padding
    full_w = (wd - 1) * stride + kw + output_padding
    y = np.zeros((n, m, full_h, full_w))
    for i in range(kh):
        for j in range(kw):
            y[:, :, i:i + stride * h:stride, j:j + stride * wd:stride] += np.einsum(
                "nchw,cm->nmhw", x.astype(np.float64), w[:, :, i, j].astype(np.float64))
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y[:, :, pad:full_h - pad, pad:full_w - pad].astype(np.float32)


def qdq_deconv(spec):
    """[conv ->] DQ -> ConvTranspose [-> Relu] -> Q, as npu-quantize writes
    it: weights [C, M, k, k] per output channel (axis 1) or per tensor,
    int32 (or float) bias. spec: out, kernel, stride, pad, output_padding,
    bias ("int32", "float", None), per_channel, relu, y_type, y_zero,
    w_type (uint8: weights that do not fit int8 less their zero point, so
    oneDNN refuses them and the reference loops run), conv (a QLinearConv first: the deconvolution
    reads its channels-last output)."""
    def build(b, q, x, params):
        if spec.get("conv"):
            q, _, params, x = conv_on(b, q, x, params, {"out": 16, "activation": "Relu"})
        else:
            x = dequantise(quantise(x, *params), params[0], params[1])
        x_scale, x_zero, x_type = params
        c, m, k, group = x.shape[1], spec["out"], spec["kernel"], spec.get("group", 1)
        stride, pad, output_padding = spec["stride"], spec.get("pad", 0), \
            spec.get("output_padding", 0)
        w_real = rng.normal(0, 0.3, (c, m // group, k, k)).astype(np.float32)
        if spec.get("w_type") == np.uint8:  # zero point 0: values to 255, beyond int8
            w_scale = np.float32(np.abs(w_real).max() / 255)
            w_q = np.rint(np.abs(w_real) / w_scale).astype(np.uint8)
            w_deq = dequantise(w_q, w_scale, 0)
            w_in = b.dequantise(b.const("w", w_q), w_scale, np.uint8(0), np.uint8)
        else:
            per_channel = spec.get("per_channel", True)
            w_scale = (np.abs(w_real).transpose(1, 0, 2, 3).reshape(m // group, -1).max(axis=1)
                       / 127).astype(np.float32) if per_channel \
                else np.float32(np.abs(w_real).max() / 127)
            w_scale_b = w_scale.reshape(1, -1, 1, 1) if per_channel else w_scale
            w_q = np.clip(np.rint(w_real / w_scale_b), -127, 127).astype(np.int8)
            w_deq = (w_q.astype(np.float32) * w_scale_b).astype(np.float32)
            w_in = b.dequantise(b.const("w", w_q), w_scale, np.zeros(np.shape(w_scale), np.int8),
                                np.int8, axis=1 if per_channel else None)
        inputs = [b.dequantise(q, x_scale, x_zero, x_type), w_in]
        bias_real = None
        if spec.get("bias") == "float":
            bias_real = rng.normal(0, 0.5, m).astype(np.float32)
            inputs.append(b.const("b", bias_real))
        elif spec.get("bias") == "int32":
            b_scale = np.tile((np.float32(x_scale) * w_scale).astype(np.float32),
                              group if np.ndim(w_scale) else m)
            b_q = np.rint(rng.normal(0, 0.5, m) / b_scale).astype(np.int32)
            bias_real = dequantise(b_q, b_scale, 0)
            inputs.append(b.dequantise(b.const("bq", b_q), b_scale, np.zeros(m, np.int32),
                                       np.int32, axis=0))
        y = b.node("ConvTranspose", inputs, kernel_shape=[k, k], strides=[stride, stride],
                   pads=[pad] * 4, output_padding=[output_padding] * 2, group=group)
        real = deconv(x, w_deq, bias_real, stride, pad, output_padding, group)
        y_type, y_zero = spec.get("y_type", np.uint8), spec.get("y_zero", 0)
        if spec.get("relu"):
            y = b.node("Relu", [y])
            real = np.maximum(real, 0)
        out = (np.float32(np.abs(real).max() / 100), y_zero, y_type)
        return b.quantise(y, *out), quantise(real, *out), out
    return build


# Q, conv, the deconvolution, Identity: PP-OCR det's head (2x2, stride 2,
# Relu folded into u8 with zero point 0, int32 bias), on the conv's
# channels-last output (relaid; the deconvolution's, the graph's output, not).
write_graph("test_qdq_conv_transpose_head_u8", (1, 8, 9, 7), U8_X,
            qdq_deconv({"out": 8, "kernel": 2, "stride": 2, "bias": "int32", "relu": True,
                        "conv": True}), 4, relaid=1)
# Q, the deconvolution, Identity: overlapping taps, pads and output_padding,
# s8 with zero points, float bias, weights per tensor.
write_graph("test_qdq_conv_transpose_overlap_s8", (2, 16, 5, 6), (0.02, -3, np.int8),
            qdq_deconv({"out": 16, "kernel": 3, "stride": 2, "pad": 1, "output_padding": 1,
                        "bias": "float", "per_channel": False, "y_type": np.int8,
                        "y_zero": 9}), 3)
# Four groups of 4 -> 6 channels, weights per channel (the 6 scales of axis 1
# shared by the groups), int32 bias per output channel, u8 with a zero point.
write_graph("test_qdq_conv_transpose_groups_u8", (1, 16, 5, 4), U8_X,
            qdq_deconv({"out": 24, "kernel": 3, "stride": 2, "pad": 1, "group": 4,
                        "bias": "int32", "y_zero": 60}), 3)
# uint8 weights of zero point 0 up to 255: the reference loops, one output channel.
write_graph("test_qdq_conv_transpose_u8_weights", (1, 8, 4, 5), U8_X,
            qdq_deconv({"out": 1, "kernel": 2, "stride": 2, "y_zero": 100,
                        "w_type": np.uint8}), 3)


def batch_norm(y_type):
    """conv -> DQ -> BatchNormalization -> Relu -> Q -> conv, as PP-OCR det's
    head has it where nothing folded it: a depthwise 1x1 QLinearConv (one
    channel's factor 0, one negative)."""
    def build(b, q, x, params):
        low = -128 if y_type == np.int8 else 0
        q1, _, p1, r1 = conv_on(b, q, x, params, {"out": 16, "y_type": y_type, "y_zero": 5})
        f32 = np.float32
        scale = rng.uniform(0.5, 2, 16).astype(f32)
        scale[3], scale[7] = 0, -1.5
        shift, mean = rng.normal(0, 0.3, 16).astype(f32), rng.normal(0, 0.3, 16).astype(f32)
        var = rng.uniform(0.5, 2, 16).astype(f32)
        norm = b.node("BatchNormalization", [b.dequantise(q1, *p1), b.const("scale", scale),
                                             b.const("shift", shift), b.const("mean", mean),
                                             b.const("var", var)], epsilon=1e-3)
        shape = (1, -1, 1, 1)
        real = (r1 - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + f32(1e-3)) * \
            scale.reshape(shape) + shift.reshape(shape)
        real = np.maximum(real.astype(f32), 0)
        p2 = (np.float32(real.max() / 200), low, y_type)
        r2 = dequantise(quantise(real, *p2), p2[0], p2[1])
        q3, values, p3, _ = conv_on(b, b.quantise(b.node("Relu", [norm]), *p2), r2, p2,
                                    {"out": 8})
        return q3, values, p3
    return build


# Q, conv1, the normalisation, conv2, Identity.
write_graph("test_qdq_batch_norm_u8", (1, 8, 7, 9), U8_X, batch_norm(np.uint8), 5)
write_graph("test_qdq_batch_norm_s8", (2, 8, 5, 6), S8_X, batch_norm(np.int8), 5)


# ---- MatMul and Gemm: QLinearMatMul, QLinearMatMulBias ---------------------------------

def qdq_matmul(spec):
    """DQ(x) x DQ(int8 weights) [+ bias] [-> Relu] -> Q, as npu-quantize and
    ONNX Runtime's quantiser write it. spec: op ("MatMul", "Gemm"), out
    (columns), trans_b (Gemm's weights [N, K]), per_channel, bias (None,
    "float": Gemm's C or an Add after MatMul, "int32": a dequantised C),
    relu, y_type, y_zero, twice (the product read twice, by an Add of
    itself: no rewrite)."""
    def build(b, q, x, params):
        x = dequantise(quantise(x, *params), params[0], params[1])
        depth, n = x.shape[-1], spec["out"]
        trans_b = spec.get("trans_b", False)
        w_real = rng.normal(0, 0.3, (depth, n)).astype(np.float32)
        if spec.get("per_channel", True):
            w_scale = (np.abs(w_real).max(axis=0) / 127).astype(np.float32)
        else:
            w_scale = np.float32(np.abs(w_real).max() / 127)
        w_q = np.clip(np.rint(w_real / w_scale), -127, 127).astype(np.int8)
        w_deq = (w_q.astype(np.float32) * w_scale).astype(np.float32)
        axis = (0 if trans_b else 1) if np.ndim(w_scale) else None
        w_in = b.dequantise(b.const("w", w_q.T.copy() if trans_b else w_q), w_scale,
                            np.zeros(np.shape(w_scale), np.int8), np.int8, axis=axis)
        real = (x.astype(np.float64) @ w_deq.astype(np.float64))
        inputs = [b.dequantise(q, *params), w_in]
        bias = spec.get("bias")
        if bias == "int32":
            b_scale = (np.float32(params[0]) * w_scale).astype(np.float32)
            b_q = np.rint(rng.normal(0, 0.5, n) / b_scale).astype(np.int32)
            bias_real = dequantise(b_q, b_scale, 0)
            inputs.append(b.dequantise(b.const("bq", b_q), b_scale,
                                       np.zeros(np.shape(b_scale), np.int32), np.int32,
                                       axis=0 if np.ndim(b_scale) else None))
        elif bias == "float":
            bias_real = rng.normal(0, 0.5, n).astype(np.float32)
        if spec["op"] == "Gemm":
            if bias == "float":
                inputs.append(b.const("c", bias_real))
            y = b.node("Gemm", inputs, transB=int(trans_b))
        else:
            y = b.node("MatMul", inputs)
            if bias == "float":
                y = b.node("Add", [y, b.const("c", bias_real)])
        if bias:
            real = real + bias_real
        if spec.get("twice"):
            y = b.node("Add", [y, y])
            real = real * 2
        real = real.astype(np.float32)
        if spec.get("relu"):
            y = b.node("Relu", [y])
            real = np.maximum(real, 0)
        out = (np.float32(np.abs(real).max() / 100), spec.get("y_zero", 0),
               spec.get("y_type", np.uint8))
        return b.quantise(y, *out), quantise(real, *out), out
    return build


def activation_product(b, q, x, params):
    """DQ(x) x DQ(its transpose quantised per column): weights computed at
    run time with per-channel parameters (no rewrite)."""
    x = dequantise(quantise(x, *params), params[0], params[1])
    xt = b.node("Transpose", [b.dequantise(q, *params)], perm=[1, 0])
    scales = (np.abs(x).max(axis=1) / 127).astype(np.float32)
    zeros = np.zeros(scales.shape, np.int8)
    s, z = b.const("s", scales), b.const("z", zeros)
    w = b.node("DequantizeLinear", [b.node("QuantizeLinear", [xt, s, z], axis=1), s, z], axis=1)
    w_real = dequantise(quantise(x.T, scales, zeros, np.int8), scales, zeros)
    real = (x.astype(np.float64) @ w_real.astype(np.float64)).astype(np.float32)
    out = (np.float32(np.abs(real).max() / 100), 128, np.uint8)
    return b.quantise(b.node("MatMul", [b.dequantise(q, *params), w]), *out), \
        quantise(real, *out), out


# Q, the int8 product, Identity.
write_graph("test_qdq_gemm_trans_b_bias_u8", (4, 32), U8_X,
            qdq_matmul({"op": "Gemm", "out": 24, "trans_b": True, "bias": "float"}), 3)
write_graph("test_qdq_gemm_int32_bias_relu_s8", (5, 40), S8_X,
            qdq_matmul({"op": "Gemm", "out": 16, "bias": "int32", "relu": True,
                        "y_type": np.int8, "y_zero": -128}), 3)
write_graph("test_qdq_gemm_per_tensor_s8", (3, 16), (0.03, -7, np.int8),
            qdq_matmul({"op": "Gemm", "out": 8, "trans_b": True, "per_channel": False,
                        "y_type": np.int8, "y_zero": 11}), 3)
# [batch, tokens, K] x [K, N] + per-column Add: a transformer's Linear.
write_graph("test_qdq_matmul_batched_bias_u8", (2, 7, 48), U8_X,
            qdq_matmul({"op": "MatMul", "out": 40, "bias": "float", "y_zero": 120}), 3)
write_graph("test_qdq_matmul_batched_relu_s8", (3, 5, 24), S8_X,
            qdq_matmul({"op": "MatMul", "out": 12, "relu": True, "y_type": np.int8,
                        "y_zero": -128}), 3)
# Not rewritten (the float count): the product read twice; weights computed
# at run time with per-channel parameters.
write_graph("test_qdq_matmul_read_twice_stays_float", (4, 16), U8_X,
            qdq_matmul({"op": "MatMul", "out": 8, "twice": True}), 6)
write_graph("test_qdq_matmul_activation_weights_stay_float", (6, 16), U8_X,
            activation_product, 9)


# ---- Products of two activations: attention's Q K^T and softmax(..) V -----------------

def attention_product(b_params, y_zero, y_type, broadcast, int8_transpose):
    """DQ(x) x DQ(K^T): K^T from x itself (its first batch only where
    `broadcast`: B [1, .., K, N] against A's batches), transposed in float
    before its QuantizeLinear, or (`int8_transpose`) after a Q/DQ pair, the
    Transpose between that pair and another with the same parameters (the
    rewriting keeps it int8); -> Q."""
    def build(b, q, x, params):
        a = dequantise(quantise(x, *params), params[0], params[1])
        k = b.node("Slice", ["x", b.const("st", np.array([0], np.int64)),
                             b.const("en", np.array([1], np.int64)),
                             b.const("ax", np.array([0], np.int64))]) if broadcast else "x"
        k_real = x[:1] if broadcast else x
        perm = list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2]
        if int8_transpose:
            k = b.dequantise(b.quantise(k, *b_params), *b_params)
            k = b.quantise(b.node("Transpose", [k], perm=perm), *b_params)
        else:
            k = b.quantise(b.node("Transpose", [k], perm=perm), *b_params)
        k_real = dequantise(quantise(np.transpose(k_real, perm), *b_params), *b_params[:2])
        real = np.matmul(a.astype(np.float64), k_real.astype(np.float64)).astype(np.float32)
        y = b.node("MatMul", [b.dequantise(q, *params), b.dequantise(k, *b_params)])
        y_params = (np.float32(np.abs(real).max() / 100), y_zero, y_type)
        return b.quantise(y, *y_params), quantise(real, *y_params), y_params
    return build


# Q(x), [Slice], Transpose and Q(K^T) (or Q(K) and the int8 Transpose),
# QLinearMatMul, Identity.
write_graph("test_qdq_attention_u8_broadcast_int8_transpose", (2, 3, 9, 16), U8_X,
            attention_product((0.02, 120, np.uint8), 7, np.uint8, True, True), 6)
write_graph("test_qdq_attention_s8_x_u8", (4, 10, 24), S8_X,
            attention_product((0.025, 3, np.uint8), -5, np.int8, False, False), 5)
write_graph("test_qdq_attention_s8_x_s8_zero_points", (2, 6, 8, 12), (0.03, -9, np.int8),
            attention_product((0.02, 4, np.int8), 128, np.uint8, False, True), 5)


def linear_product(b, q, x, params, n):
    """DQ(x) x DQ(int8 weights per column, n columns): the MatMul's name and
    its float product."""
    x = dequantise(quantise(x, *params), params[0], params[1])
    depth = x.shape[-1]
    w_real = rng.normal(0, 0.3, (depth, n)).astype(np.float32)
    w_scale = (np.abs(w_real).max(axis=0) / 127).astype(np.float32)
    w_q = np.clip(np.rint(w_real / w_scale), -127, 127).astype(np.int8)
    w_deq = (w_q.astype(np.float32) * w_scale).astype(np.float32)
    w_in = b.dequantise(b.const("w", w_q), w_scale, np.zeros(n, np.int8), np.int8, axis=1)
    product = (x.astype(np.float64) @ w_deq.astype(np.float64)).astype(np.float32)
    return b.node("MatMul", [b.dequantise(q, *params), w_in]), product


def pair_bias(pair_step):
    """DQ(x) x DQ(int8 weights) -> Q -> DQ -> Add(a bias per column) -> Q,
    npu-quantize's Linear layer: the bias folds into QLinearMatMulBias where
    the pair's step is at most the output's (`pair_step`: the pair's over
    the output's)."""
    def build(b, q, x, params):
        n = 20
        y, product = linear_product(b, q, x, params, n)
        bias = rng.normal(0, 0.5, n).astype(np.float32)
        out = (np.float32(np.abs(product + bias).max() / 50), 128, np.uint8)
        pair = (np.float32(out[0] * pair_step), 128, np.uint8)
        assert np.abs(product).max() < 127 * pair[0]  # (inside the pair's range)
        y = b.dequantise(b.quantise(y, *pair), *pair)
        y = b.node("Add", [y, b.const("c", bias)])
        real = (dequantise(quantise(product, *pair), *pair[:2]) + bias).astype(np.float32)
        return b.quantise(y, *out), quantise(real, *out), out
    return build


# Q, QLinearMatMulBias, Identity; with a pair coarser than the output, the
# pair stays: Q, QLinearMatMul, DequantizeLinear, Add, QuantizeLinear, Identity.
write_graph("test_qdq_matmul_pair_bias_folded", (2, 6, 32), U8_X, pair_bias(0.5), 3)
write_graph("test_qdq_matmul_coarse_pair_bias_stays", (2, 6, 32), U8_X, pair_bias(2.0), 6)


def erf(values):
    return np.vectorize(math.erf)(values.astype(np.float64)).astype(np.float32)


def pair_bias_then(reader, y_type, bias_spread=0.1, twice=False):
    """npu-quantize's Linear layer whose biased sum a float node reads, no
    Q after the Add: DQ(x) x DQ(int8 weights) -> Q -> DQ -> Add(a bias
    per column) -> `reader` -> Q. "gelu": ViT's MLP, GELU written out
    (Div by sqrt(2), Erf, Add 1, Mul by the sum, Mul 0.5); "slice": the QKV
    projection's Slice of its last axis. The bias folds into
    QLinearMatMulBias, its sum quantised on the pair's range widened by
    the bias (the pair's rounding moved after the bias: the output steps
    here are 1.5x the pair's, so that the moved rounding, half a step of
    each grid, 1.2 pair steps here, through GELU's slope of at most 1.13,
    stays within one output step),
    and GELU becomes a table; it stays float where the bias spreads over
    more than the pair's range (`bias_spread`: its deviation over the
    pair's range), or where (`twice`) the pair's output is read again (GELU
    of the sum times the product)."""
    def build(b, q, x, params):
        n, f32 = 24, np.float32
        y, product = linear_product(b, q, x, params, n)
        zero = 128 if y_type == np.uint8 else 0
        pair = (f32(np.abs(product).max() * 1.02 / 127), zero, y_type)
        bias = (rng.normal(0, 1, n) * bias_spread * 255 * pair[0]).astype(f32)
        d = b.dequantise(b.quantise(y, *pair), *pair)
        p = dequantise(quantise(product, *pair), *pair[:2])
        s = b.node("Add", [b.const("c", bias), d])
        r = p + bias
        if reader == "gelu":
            e = b.node("Add", [b.node("Erf", [b.node("Div", [s, b.const("k", f32(1.4142135))])]),
                               b.const("one", f32(1))])
            y = b.node("Mul", [b.node("Mul", [s, e]), b.const("half", f32(0.5))])
            real = r * (erf(r / f32(1.4142135)) + f32(1)) * f32(0.5)
        else:
            y = b.node("Slice", [s, b.const("st", np.array([3], np.int64)),
                                 b.const("en", np.array([17], np.int64)),
                                 b.const("ax", np.array([-1], np.int64))])
            real = r[..., 3:17]
        if twice:
            y = b.node("Mul", [y, d])
            real = real * p
        real = real.astype(f32)
        low, high = min(real.min(), 0), max(real.max(), 0)
        step = f32(max(pair[0] * 1.5, (high - low) / 255))
        lo = limits(y_type)[0]
        out = (step, int(np.clip(np.rint(lo - low / step), lo, lo + 255)), y_type)
        return b.quantise(y, *out), quantise(real, *out), out
    return build


# Q, QLinearMatMulBias, QLinearLookup (GELU), Identity.
write_graph("test_qdq_matmul_bias_gelu_table_u8", (2, 7, 40), U8_X,
            pair_bias_then("gelu", np.uint8), 4)
write_graph("test_qdq_matmul_bias_gelu_table_s8", (3, 5, 32), S8_X,
            pair_bias_then("gelu", np.int8), 4)
# Q, QLinearMatMulBias, the Slice of 8-bit values, a QLinearLookup requantising, Identity.
write_graph("test_qdq_matmul_bias_slice_u8", (2, 6, 32), U8_X, pair_bias_then("slice", np.uint8),
            5)
# Not rewritten: a bias spread over more than the pair's range; the pair's
# output read again: Q, QLinearMatMul, DequantizeLinear, the Add and GELU's
# five nodes [and the Mul by the product], QuantizeLinear, Identity.
write_graph("test_qdq_matmul_wide_bias_gelu_stays_float", (2, 6, 32), U8_X,
            pair_bias_then("gelu", np.uint8, bias_spread=2.0), 11)
write_graph("test_qdq_matmul_pair_read_twice_gelu_stays_float", (2, 6, 32), U8_X,
            pair_bias_then("gelu", np.uint8, twice=True), 12)


def broadcast_pair_add(b_shape_of, y_params):
    """DQ(x) + DQ(a slice of x broadcast back: one value per row, or the
    first batch for every batch) -> Q: a standalone QLinearAdd of two
    activations whose producers are no convolutions, broadcast."""
    def build(b, q, x, params):
        starts, ends, axes = b_shape_of(x.shape)
        other = b.node("Slice", ["x", b.const("st", np.array(starts, np.int64)),
                                 b.const("en", np.array(ends, np.int64)),
                                 b.const("ax", np.array(axes, np.int64))])
        index = [slice(None)] * x.ndim
        for start, end, axis in zip(starts, ends, axes):
            index[axis] = slice(start, end)
        other_real = x[tuple(index)]
        o_params = (np.float32(0.03), params[1], params[2])
        o_q = b.quantise(other, *o_params)
        total = b.node("Add", [b.dequantise(q, *params), b.dequantise(o_q, *o_params)])
        real = dequantise(quantise(x, *params), *params[:2]) + \
            dequantise(quantise(other_real, *o_params), *o_params[:2])
        out = (np.float32(np.abs(real).max() / 100), y_params[0], y_params[1])
        return b.quantise(total, *out), quantise(real, *out), out
    return build


# Q(x), Slice, Q(slice), QLinearAdd, Identity.
write_graph("test_qdq_add_activations_row_broadcast_u8", (2, 5, 12), U8_X,
            broadcast_pair_add(lambda s: ([0], [1], [2]), (128, np.uint8)), 5)
write_graph("test_qdq_add_activations_batch_broadcast_s8", (3, 4, 70), S8_X,
            broadcast_pair_add(lambda s: ([0], [1], [0]), (-3, np.int8)), 5)


def moved_heads(same_params):
    """DQ -> Transpose -> Reshape -> Q, attention's heads joined again after
    softmax(..) V: with the input's parameters on the Q, both move the 8-bit
    values (the chain rewritten), with others too, then a table requantises
    them (QLinearLookup)."""
    def build(b, q, x, params):
        real = dequantise(quantise(x, *params), params[0], params[1])
        moved = b.node("Transpose", [b.dequantise(q, *params)], perm=[0, 2, 1, 3])
        n, h, t, d = x.shape
        flat = b.node("Reshape", [moved, b.const("shape", np.array([n, t, h * d], np.int64))])
        real = np.transpose(real, (0, 2, 1, 3)).reshape(n, t, h * d)
        out = params if same_params else (np.float32(params[0] * 1.25), params[1], params[2])
        return b.quantise(flat, *out), quantise(real, *out), out
    return build


# Q, Transpose, Reshape (a copy), Identity; with other parameters the
# QLinearLookup after them.
write_graph("test_qdq_transpose_reshape_int8_u8", (2, 3, 5, 4), U8_X, moved_heads(True), 4)
write_graph("test_qdq_transpose_reshape_requantised_table_u8", (2, 3, 5, 4), U8_X,
            moved_heads(False), 5)


def softmax(axis, y_params):
    """DQ -> Softmax -> Q, attention's probabilities: along the last axis
    an int8 softmax (QLinearSoftmax), along another it stays float."""
    def build(b, q, x, params):
        real = dequantise(quantise(x, *params), params[0], params[1])
        shifted = np.exp(real - real.max(axis=axis, keepdims=True))
        probabilities = (shifted / shifted.sum(axis=axis, keepdims=True)).astype(np.float32)
        y = b.node("Softmax", [b.dequantise(q, *params)], axis=axis)
        return b.quantise(y, *y_params), quantise(probabilities, *y_params), y_params
    return build


# Q, QLinearSoftmax, Identity; along axis 1: DequantizeLinear, Softmax, QuantizeLinear.
write_graph("test_qdq_softmax_u8", (2, 3, 7, 19), (0.05, 128, np.uint8),
            softmax(-1, (np.float32(1 / 255), 0, np.uint8)), 3)
write_graph("test_qdq_softmax_s8", (3, 40, 37), (0.04, -5, np.int8),
            softmax(-1, (np.float32(1 / 256), -128, np.int8)), 3)
write_graph("test_qdq_softmax_other_axis_stays_float", (2, 5, 6), (0.05, 128, np.uint8),
            softmax(1, (np.float32(1 / 255), 0, np.uint8)), 5)
