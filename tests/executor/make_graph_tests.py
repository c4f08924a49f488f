#!/usr/bin/env python3
"""Writes graph tests for the load-time rewrites into OUTDIR, in the ONNX
backend node-test layout (CASE/model.onnx, CASE/test_data_set_0/*.pb) so
run_node_tests checks them: Conv -> BatchNormalization folding and chains
of elementwise nodes fused into convolutions (activations, scalar affine
steps, the expanded HardSwish and Swish patterns exporters emit), and
layouts planned across residual, squeeze-excitation, Split and Concat.
Expected outputs come from a float64 numpy reference of the unfused graph."""
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
rng = np.random.default_rng(11)
CHANNELS, SIZE = 8, 10


def conv(x, w, b, group=1, stride=1, pad=1):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow))
    per_group = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * per_group:(g + 1) * per_group]
        for i in range(kh):
            for j in range(kw):
                window = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, g * per_group:(g + 1) * per_group] += np.einsum("nchw,mc->nmhw", window,
                                                                     ws[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name: (ONNX nodes after the conv, numpy of the same); each step reads `t`.
STEPS = {
    "relu": (lambda t, o: [helper.make_node("Relu", [t], [o])], lambda v: np.maximum(v, 0)),
    "relu6": (lambda t, o: [helper.make_node("Clip", [t, "zero", "six"], [o])],
              lambda v: np.clip(v, 0, 6)),
    "leaky": (lambda t, o: [helper.make_node("LeakyRelu", [t], [o], alpha=0.1)],
              lambda v: np.where(v > 0, v, 0.1 * v)),
    "sigmoid": (lambda t, o: [helper.make_node("Sigmoid", [t], [o])], sigmoid),
    "tanh": (lambda t, o: [helper.make_node("Tanh", [t], [o])], np.tanh),
    "hardsigmoid": (lambda t, o: [helper.make_node("HardSigmoid", [t], [o])],
                    lambda v: np.clip(0.2 * v + 0.5, 0, 1)),
    "hardswish": (lambda t, o: [helper.make_node("HardSwish", [t], [o])],
                  lambda v: v * np.clip(v / 6 + 0.5, 0, 1)),
    "mul": (lambda t, o: [helper.make_node("Mul", ["k_mul", t], [o])], lambda v: 0.75 * v),
    "add": (lambda t, o: [helper.make_node("Add", [t, "k_add"], [o])], lambda v: v + 0.5),
    "rsub": (lambda t, o: [helper.make_node("Sub", ["k_add", t], [o])], lambda v: 0.5 - v),
    "div": (lambda t, o: [helper.make_node("Div", [t, "six"], [o])], lambda v: v / 6),
    "mul_channel": (lambda t, o: [helper.make_node("Mul", ["k_channel", t], [o])],
                    lambda v: v * K_CHANNEL.reshape(1, -1, 1, 1)),
    "add_channel": (lambda t, o: [helper.make_node("Add", [t, "k_channel"], [o])],
                    lambda v: v + K_CHANNEL.reshape(1, -1, 1, 1)),
    # x * Clip(x + 3, 0, 6) / 6, as Paddle and PyTorch exporters write HardSwish
    "hardswish_expanded": (lambda t, o: [
        helper.make_node("Add", [t, "three"], [o + "_a"]),
        helper.make_node("Clip", [o + "_a", "zero", "six"], [o + "_c"]),
        helper.make_node("Mul", [t, o + "_c"], [o + "_m"]),
        helper.make_node("Div", [o + "_m", "six"], [o])],
        lambda v: v * np.clip(v + 3, 0, 6) / 6),
    # x * (1 + Erf(x / sqrt 2)) * 0.5, as PyTorch exports GELU
    "gelu_expanded": (lambda t, o: [
        helper.make_node("Div", [t, "sqrt2"], [o + "_d"]),
        helper.make_node("Erf", [o + "_d"], [o + "_e"]),
        helper.make_node("Add", [o + "_e", "one"], [o + "_a"]),
        helper.make_node("Mul", [t, o + "_a"], [o + "_m"]),
        helper.make_node("Mul", [o + "_m", "half"], [o])],
        lambda v: v * (1 + np.vectorize(math.erf)(v / math.sqrt(2))) * 0.5),
    # x * Tanh(Softplus(x)), as PyTorch exports Mish before opset 18
    "mish_expanded": (lambda t, o: [
        helper.make_node("Softplus", [t], [o + "_s"]),
        helper.make_node("Tanh", [o + "_s"], [o + "_t"]),
        helper.make_node("Mul", [t, o + "_t"], [o])],
        lambda v: v * np.tanh(np.log1p(np.exp(v)))),
    "swish_expanded": (lambda t, o: [
        helper.make_node("Sigmoid", [t], [o + "_s"]),
        helper.make_node("Mul", [o + "_s", t], [o])],
        lambda v: v * sigmoid(v)),
}

K_CHANNEL = np.linspace(-1.5, 2.0, CHANNELS).astype(np.float32)
CONSTANTS = {"k_mul": 0.75, "k_add": 0.5, "zero": 0.0, "six": 6.0, "three": 3.0,
             "sqrt2": math.sqrt(2), "one": 1.0, "half": 0.5,
             "k_channel": K_CHANNEL.reshape(-1, 1, 1)}


def write_case(name, nodes, inits, x, expected, opset=14, more_outputs=(), kernels=None):
    """The graph's outputs: "y" (`expected`), then each (name, value) of
    `more_outputs`; `kernels`: the launches a run must take (run_node_tests
    checks it), where the case is about fusion."""
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    outputs = [("y", expected)] + list(more_outputs)
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    if kernels is not None:
        with open(os.path.join(folder, "kernels"), "w") as f:
            f.write(f"{kernels}\n")
    files = [("input_0", x)] + [(f"output_{i}", v.astype(np.float32)) for i, (_, v) in enumerate(outputs)]
    for file, array in files:
        with open(os.path.join(folder, "test_data_set_0", f"{file}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())


def write_steps_case(name, nodes, inits, x, tensor, value, steps, kernels=None):
    """Appends `steps` (STEPS names) after `tensor`, whose expected value is
    `value`, the last one writing "y", with the constants they read."""
    for i, step in enumerate(steps):
        make, reference = STEPS[step]
        out = "y" if i == len(steps) - 1 else f"s{i}"
        nodes += make(tensor, out)
        value = reference(value)
        tensor = out
    if not steps:
        nodes[-1].output[0] = "y"
    used = {i for n in nodes for i in n.input}
    inits += [numpy_helper.from_array(np.array(v, np.float32), k)
              for k, v in CONSTANTS.items() if k in used]
    write_case(name, nodes, inits, x, value, kernels=kernels)


def conv_case(name, steps, group=1, batch_norm=False, bias=True, stride=1, kernels=None):
    x = rng.standard_normal((2, CHANNELS, SIZE, SIZE)).astype(np.float32)
    w = (rng.standard_normal((CHANNELS, CHANNELS // group, 3, 3)) * 0.3).astype(np.float32)
    b = rng.standard_normal(CHANNELS).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    inputs = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(b, "b"))
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["t0"], group=group, pads=[1, 1, 1, 1],
                              strides=[stride, stride])]
    value = conv(x.astype(np.float64), w.astype(np.float64),
                 b.astype(np.float64) if bias else np.zeros(CHANNELS), group, stride)
    tensor = "t0"
    if batch_norm:
        gamma, beta = rng.uniform(0.5, 1.5, CHANNELS), rng.standard_normal(CHANNELS)
        mean, var = rng.standard_normal(CHANNELS), rng.uniform(0.5, 2, CHANNELS)
        for n, v in (("gamma", gamma), ("beta", beta), ("mean", mean), ("var", var)):
            inits.append(numpy_helper.from_array(v.astype(np.float32), n))
        nodes.append(helper.make_node("BatchNormalization", ["t0", "gamma", "beta", "mean", "var"],
                                      ["bn"], epsilon=1e-3))
        shape = (1, -1, 1, 1)
        value = ((value - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-3) *
                 gamma.reshape(shape) + beta.reshape(shape))
        tensor = "bn"
    write_steps_case(name, nodes, inits, x, tensor, value, steps, kernels)


conv_case("fold_conv_bn", [], batch_norm=True)
conv_case("fold_conv_nobias_bn_relu", ["relu"], batch_norm=True, bias=False)
conv_case("fold_depthwise_bn_hardswish", ["hardswish"], group=CHANNELS, batch_norm=True)
conv_case("fuse_conv_relu6", ["relu6"])
conv_case("fuse_conv_leaky_mul", ["leaky", "mul"], stride=2)
conv_case("fuse_conv_mul_add_relu", ["mul", "add", "relu"])
conv_case("fuse_conv_rsub_div", ["rsub", "div"])
conv_case("fold_conv_bn_mul_add_channel_relu", ["mul_channel", "add_channel", "relu"],
          batch_norm=True)
conv_case("fuse_conv_mul_hardsigmoid_mul", ["mul", "hardsigmoid", "mul"])
conv_case("fuse_conv_tanh_mul_tanh_add", ["tanh", "mul", "tanh", "add"])
conv_case("fuse_depthwise_mul_add_hardswish_expanded", ["mul", "add", "hardswish_expanded"],
          group=CHANNELS)
conv_case("fuse_conv_bn_swish_expanded", ["swish_expanded"], batch_norm=True)
conv_case("fuse_conv_sigmoid_hardswish", ["sigmoid", "hardswish"])
conv_case("fuse_conv_gelu_expanded", ["gelu_expanded"])
conv_case("fuse_conv_bn_mish_expanded", ["mish_expanded"], batch_norm=True, kernels=1)
conv_case("fuse_conv_mish_expanded_add", ["mish_expanded", "add"], kernels=1)


def network_case(name):
    """Convolutions joined by activations, a residual Add, a broadcast
    (squeeze-excitation) Mul and odd channel counts: activations between
    kernels change layout (channel blocks, channels-last, plain) and back."""
    x = rng.standard_normal((2, 3, SIZE, SIZE)).astype(np.float32)
    inits, nodes = [], []
    value, tensor = x.astype(np.float64), "x"

    def add_conv(src, value, out_channels, group=1):
        in_channels = value.shape[1]
        fan_in = in_channels // group * 9  # He-style scale: activations stay near 1
        w = (rng.standard_normal((out_channels, in_channels // group, 3, 3)) *
             np.sqrt(1 / fan_in)).astype(np.float32)
        b = rng.standard_normal(out_channels).astype(np.float32)
        k = len(inits)
        inits.extend([numpy_helper.from_array(w, f"w{k}"), numpy_helper.from_array(b, f"b{k}")])
        out = f"conv{k}"
        nodes.append(helper.make_node("Conv", [src, f"w{k}", f"b{k}"], [out], group=group,
                                      pads=[1, 1, 1, 1]))
        return out, conv(value, w.astype(np.float64), b.astype(np.float64), group)

    def add_node(op, inputs, out, **attrs):
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    tensor, value = add_conv(tensor, value, 16)
    tensor, value = add_node("Relu", [tensor], "r0"), np.maximum(value, 0)
    skip, skip_value = tensor, value
    tensor, value = add_conv(tensor, value, 16, group=16)
    tensor, value = add_conv(tensor, value, 16)
    tensor, value = add_node("Add", [tensor, skip], "res"), value + skip_value
    tensor, value = add_node("Relu", [tensor], "r1"), np.maximum(value, 0)
    tensor, value = add_conv(tensor, value, 12)
    pooled = add_node("GlobalAveragePool", [tensor], "gap")
    gate = add_node("Sigmoid", [pooled], "gate")
    tensor = add_node("Mul", [tensor, gate], "se")
    value = value * sigmoid(value.mean(axis=(2, 3), keepdims=True))
    tensor, value = add_conv(tensor, value, 24)
    tensor, value = add_node("Clip", [tensor, "zero", "six"], "r2"), np.clip(value, 0, 6)
    tensor, value = add_conv(tensor, value, 8)
    # a 2x2 max pool from the convolutions' layout into the plain output
    nodes.append(helper.make_node("MaxPool", [tensor], ["y"], kernel_shape=[2, 2], strides=[2, 2]))
    n, c, h, w = value.shape
    value = value.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    inits += [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
              numpy_helper.from_array(np.array(6.0, np.float32), "six")]
    write_case(name, nodes, inits, x, value)


network_case("layout_network")


def attention_case(name, channels):
    """Squeeze-excitation (a [N, C, 1, 1] gate) and spatial attention (a
    [N, 1, H, W] gate) multiplied into activations that stay in the
    convolutions' layout: channel blocks of 16 or 8, or channels-last, by
    `channels`; the broadcast operands keep their own layouts."""
    x = rng.standard_normal((2, 3, SIZE, SIZE)).astype(np.float32)
    inits, nodes = [], []

    def add_conv(src, value, out_channels, group=1, kernel=3):
        in_channels = value.shape[1]
        fan_in = in_channels // group * kernel * kernel
        w = (rng.standard_normal((out_channels, in_channels // group, kernel, kernel)) *
             np.sqrt(1 / fan_in)).astype(np.float32)
        b = rng.standard_normal(out_channels).astype(np.float32)
        k = len(inits)
        inits.extend([numpy_helper.from_array(w, f"w{k}"), numpy_helper.from_array(b, f"b{k}")])
        pad = kernel // 2
        nodes.append(helper.make_node("Conv", [src, f"w{k}", f"b{k}"], [f"conv{k}"], group=group,
                                      pads=[pad] * 4))
        return f"conv{k}", conv(value, w.astype(np.float64), b.astype(np.float64), group,
                                pad=pad)

    def add_node(op, inputs, out):
        nodes.append(helper.make_node(op, inputs, [out]))
        return out

    tensor, value = add_conv("x", x.astype(np.float64), channels)
    tensor, value = add_conv(tensor, value, channels, group=channels)
    pooled = add_node("GlobalAveragePool", [tensor], "gap")
    squeezed, squeezed_value = add_conv(pooled, value.mean(axis=(2, 3), keepdims=True),
                                        max(channels // 4, 1), kernel=1)
    squeezed = add_node("Relu", [squeezed], "squeeze_relu")
    gate, gate_value = add_conv(squeezed, np.maximum(squeezed_value, 0), channels, kernel=1)
    gate = add_node("Sigmoid", [gate], "gate")
    tensor = add_node("Mul", [tensor, gate], "se")
    value = value * sigmoid(gate_value)
    spatial, spatial_value = add_conv(tensor, value, 1)
    spatial = add_node("Sigmoid", [spatial], "spatial_gate")
    tensor = add_node("Mul", [spatial, tensor], "attended")
    value = sigmoid(spatial_value) * value
    tensor, value = add_conv(tensor, value, channels)
    tensor = add_node("Add", [tensor, gate], "biased")  # a broadcast Add of the gate
    value = value + sigmoid(gate_value)
    tensor, value = add_conv(tensor, value, 8)
    nodes[-1].output[0] = "y"
    write_case(name, nodes, inits, x, value)


for channels, layout in ((32, "blocks16"), (24, "blocks8"), (12, "channels_last")):
    attention_case(f"layout_broadcast_gates_{layout}", channels)


def two_branch_case(name):
    """Add(conv_a(x), relu(conv_b(x))) with conv_a first in the graph's order:
    conv_a's chain may not take the Add (its other operand comes later); the
    later branch's may."""
    x = rng.standard_normal((1, 8, SIZE, SIZE)).astype(np.float32)
    inits, nodes = [], []
    outputs = {}
    for branch in ("a", "b"):
        w = (rng.standard_normal((8, 8, 3, 3)) * 0.1).astype(np.float32)
        b = rng.standard_normal(8).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w_{branch}"), numpy_helper.from_array(b, f"b_{branch}")]
        nodes.append(helper.make_node("Conv", ["x", f"w_{branch}", f"b_{branch}"], [f"c_{branch}"],
                                      pads=[1, 1, 1, 1]))
        outputs[branch] = conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64))
    nodes.append(helper.make_node("Relu", ["c_b"], ["r_b"]))
    nodes.append(helper.make_node("Add", ["c_a", "r_b"], ["y"]))
    write_case(name, nodes, inits, x, outputs["a"] + np.maximum(outputs["b"], 0))


two_branch_case("fuse_residual_add_order")


def residual_output_case(name):
    """Two residual blocks relu(conv(x) + x) whose first block's output is a
    graph output too: the second convolution adds it in as a fused post-op
    while it lives in the caller's output buffer (npu-run died of SIGBUS
    there: the addend was never bound to that buffer)."""
    x = rng.random((1, 64, 28, 28)).astype(np.float32)
    inits, nodes, value, tensor = [], [], x.astype(np.float64), "x"
    for block, out in enumerate(("block", "y")):
        w = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
        b = rng.standard_normal(64).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{block}"), numpy_helper.from_array(b, f"b{block}")]
        nodes += [helper.make_node("Conv", [tensor, f"w{block}", f"b{block}"], [f"c{block}"],
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Add", [f"c{block}", tensor], [f"a{block}"]),
                  helper.make_node("Relu", [f"a{block}"], [out])]
        value = np.maximum(conv(value, w.astype(np.float64), b.astype(np.float64)) + value, 0)
        if block == 0:
            first = value
        tensor = out
    write_case(name, nodes, inits, x, value, more_outputs=[("block", first)])


residual_output_case("fuse_residual_add_graph_output")


def split_concat_case(name, first, second, size=SIZE):
    """A YOLO C2f-like block: conv, Split along channels, a conv on one half,
    Concat of the halves and that conv's output, conv; batch 2, so each item
    has its own run of channel blocks. With `first` and `second` channel
    counts that are not whole blocks of the wider width, Concat and Split
    take narrower blocks, and with counts that fill no block, channels-last
    (channels innermost). A large `size` makes the CPU backend deal the copies
    to its threads in pieces (the last of each row partial)."""
    x = rng.standard_normal((2, 3, size, size)).astype(np.float32)
    inits, nodes, k = [], [], [0]

    def add_conv(src, value, out_channels):
        fan_in = value.shape[1] * 9
        w = (rng.standard_normal((out_channels, value.shape[1], 3, 3)) *
             np.sqrt(1 / fan_in)).astype(np.float32)
        b = rng.standard_normal(out_channels).astype(np.float32)
        k[0] += 1
        inits.extend([numpy_helper.from_array(w, f"w{k[0]}"),
                      numpy_helper.from_array(b, f"b{k[0]}")])
        out = f"conv{k[0]}"
        nodes.append(helper.make_node("Conv", [src, f"w{k[0]}", f"b{k[0]}"], [out],
                                      pads=[1, 1, 1, 1]))
        return out, conv(value, w.astype(np.float64), b.astype(np.float64))

    whole, whole_value = add_conv("x", x.astype(np.float64), first + second)
    inits.append(numpy_helper.from_array(np.array([first, second], np.int64), "sizes"))
    nodes.append(helper.make_node("Split", [whole, "sizes"], ["half_a", "half_b"], axis=1))
    half_a, half_b = whole_value[:, :first], whole_value[:, first:]
    more, more_value = add_conv("half_b", half_b, second)
    nodes.append(helper.make_node("Concat", ["half_a", "half_b", more], ["joined"], axis=-3))
    joined = np.concatenate([half_a, half_b, more_value], axis=1)
    tensor, value = add_conv("joined", joined, 8)
    nodes.append(helper.make_node("Relu", [tensor], ["y"]))
    write_case(name, nodes, inits, x, np.maximum(value, 0))


split_concat_case("layout_split_concat_blocks", 16, 16)
split_concat_case("layout_split_concat_partial_blocks", 8, 16)
split_concat_case("layout_split_concat_channels_last", 12, 4)
split_concat_case("layout_split_concat_large_blocks", 16, 48, size=57)
split_concat_case("layout_split_concat_large_channels_last", 12, 4, size=61)


def patch_deconv_case(name, out_channels):
    """A segmentation head's end: conv to 24 channels (channel blocks), then
    ConvTranspose 2x2, stride 2 into few channels, batch 2: every input
    pixel paints its own 2x2 patch."""
    x = rng.standard_normal((2, 3, SIZE, SIZE)).astype(np.float32)
    w = (rng.standard_normal((24, 3, 3, 3)) * 0.3).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    dw = (rng.standard_normal((24, out_channels, 2, 2)) * 0.3).astype(np.float32)
    db = rng.standard_normal(out_channels).astype(np.float32)
    hidden = conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64))
    n, _, h, wd = hidden.shape
    y = np.einsum("nchw,coab->nohawb", hidden, dw.astype(np.float64))
    y = y.reshape(n, out_channels, 2 * h, 2 * wd) + db.reshape(1, -1, 1, 1)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["hidden"], pads=[1, 1, 1, 1]),
             helper.make_node("ConvTranspose", ["hidden", "dw", "db"], ["y"],
                              kernel_shape=[2, 2], strides=[2, 2])]
    inits = [numpy_helper.from_array(a, k) for a, k in ((w, "w"), (b, "b"), (dw, "dw"), (db, "db"))]
    write_case(name, nodes, inits, x, y)


patch_deconv_case("deconv_patch_one_channel", 1)
patch_deconv_case("deconv_patch_three_channels", 3)


def linear_taps(size, scale):
    """half_pixel linear interpolation along one axis: (first, second, weight) per output."""
    out = np.arange(int(size * scale))
    source = np.clip((out + 0.5) / scale - 0.5, 0, size - 1)
    first = np.floor(source).astype(int)
    return first, np.minimum(first + 1, size - 1), source - first


def cubic_weights(ratio, a=-0.75):
    """Keys' weights of the four inputs around a point `ratio` past the second."""
    return [(((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1
             else ((a * d - 5 * a) * d + 8 * a) * d - 4 * a)
            for d in (1 + ratio, ratio, 1 - ratio, 2 - ratio)]


def cubic_matrix(size, scale):
    """half_pixel cubic interpolation along one axis (edge inputs repeated),
    as an (output, input) matrix."""
    out = int(size * scale)
    m = np.zeros((out, size))
    for o in range(out):
        source = (o + 0.5) / scale - 0.5
        base = math.floor(source)
        for i, w in enumerate(cubic_weights(source - base)):
            m[o, min(max(base - 1 + i, 0), size - 1)] += w
    return m


def resize_case(name, channels, mode):
    """Conv, Resize x2 (nearest floor/asymmetric, linear or cubic half_pixel), conv,
    at batch 2: Resize runs in the convolutions' layout (whole channel blocks,
    or channels-last for channel counts that are not)."""
    x = rng.standard_normal((2, 3, SIZE, SIZE)).astype(np.float32)
    w1 = (rng.standard_normal((channels, 3, 3, 3)) * 0.3).astype(np.float32)
    b1 = rng.standard_normal(channels).astype(np.float32)
    w2 = (rng.standard_normal((8, channels, 3, 3)) * 0.2).astype(np.float32)
    b2 = rng.standard_normal(8).astype(np.float32)
    hidden = conv(x.astype(np.float64), w1.astype(np.float64), b1.astype(np.float64))
    if mode == "nearest":
        up = hidden.repeat(2, axis=2).repeat(2, axis=3)
        attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor")
    elif mode == "linear":
        f, s2, wt = linear_taps(SIZE, 2.0)
        rows = hidden[:, :, f] * (1 - wt)[None, None, :, None] + hidden[:, :, s2] * wt[None, None, :, None]
        up = rows[:, :, :, f] * (1 - wt) + rows[:, :, :, s2] * wt
        attrs = dict(mode="linear", coordinate_transformation_mode="half_pixel")
    else:
        m = cubic_matrix(SIZE, 2.0)
        up = np.einsum("ph,nchw,qw->ncpq", m, hidden, m)
        attrs = dict(mode="cubic", coordinate_transformation_mode="half_pixel")
    y = conv(up, w2.astype(np.float64), b2.astype(np.float64))
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["hidden"], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["hidden", "", "scales"], ["up"], **attrs),
             helper.make_node("Conv", ["up", "w2", "b2"], ["y"], pads=[1, 1, 1, 1])]
    inits = [numpy_helper.from_array(a, k) for a, k in
             ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"),
              (np.array([1, 1, 2, 2], np.float32), "scales"))]
    write_case(name, nodes, inits, x, y)


resize_case("layout_resize_nearest_blocks", 16, "nearest")
resize_case("layout_resize_linear_blocks", 16, "linear")
resize_case("layout_resize_nearest_12_channels", 12, "nearest")
resize_case("layout_resize_cubic_blocks", 16, "cubic")
resize_case("layout_resize_cubic_12_channels", 12, "cubic")
resize_case("layout_resize_linear_12_channels", 12, "linear")


def deconv_bn_case(name):
    """ConvTranspose (2x2, stride 2, 24 channels: oneDNN's) followed by
    BatchNormalization and Relu, as a segmentation head upsamples: the BN is
    folded into the ConvTranspose's weights and bias at load."""
    x = rng.standard_normal((2, 16, SIZE, SIZE)).astype(np.float32)
    dw = (rng.standard_normal((16, 24, 2, 2)) * 0.3).astype(np.float32)
    gamma, beta = rng.uniform(0.5, 1.5, 24), rng.uniform(-0.5, 0.5, 24)
    mean, var = rng.uniform(-0.5, 0.5, 24), rng.uniform(0.5, 1.5, 24)
    y = np.einsum("nchw,coab->nohawb", x.astype(np.float64), dw.astype(np.float64))
    y = y.reshape(2, 24, 2 * SIZE, 2 * SIZE)
    y = (y - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5)
    y = np.maximum(y * gamma.reshape(1, -1, 1, 1) + beta.reshape(1, -1, 1, 1), 0)
    nodes = [helper.make_node("ConvTranspose", ["x", "dw"], ["up"], kernel_shape=[2, 2],
                              strides=[2, 2]),
             helper.make_node("BatchNormalization", ["up", "gamma", "beta", "mean", "var"],
                              ["normed"], epsilon=1e-5),
             helper.make_node("Relu", ["normed"], ["y"])]
    inits = [numpy_helper.from_array(np.asarray(a, np.float32), k) for a, k in
             ((dw, "dw"), (gamma, "gamma"), (beta, "beta"), (mean, "mean"), (var, "var"))]
    write_case(name, nodes, inits, x, y)


deconv_bn_case("fold_deconv_bn_relu")


def shared_weights_case(name):
    """Weights packed once for every kernel with the same values and
    layouts, and only then: one matrix read as is (MatMul) and transposed
    (Gemm transB), and a convolution whose weights differ from another's
    only in two signs."""
    x = rng.standard_normal((2, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
    k1 = (rng.standard_normal((16, 16, 3, 3)) * 0.2).astype(np.float32)
    k2 = k1.copy()
    k2.reshape(-1)[[1, 3]] *= -1
    xd, wd = x.astype(np.float64), w.astype(np.float64)
    image = xd.reshape(2, 16, 1, 1) * np.ones((1, 1, 4, 4))
    c1 = conv(image, k1.astype(np.float64), np.zeros(16))
    c2 = conv(image, k2.astype(np.float64), np.zeros(16))
    y = (xd @ wd + xd @ wd.T).reshape(2, 16, 1, 1) + c1 - c2
    nodes = [helper.make_node("MatMul", ["x", "w"], ["plain"]),
             helper.make_node("Gemm", ["x", "w"], ["transposed"], transB=1),
             helper.make_node("Add", ["plain", "transposed"], ["products"]),
             helper.make_node("Reshape", ["x", "image_shape"], ["pixels"]),
             helper.make_node("Expand", ["pixels", "image_size"], ["image"]),
             helper.make_node("Conv", ["image", "k1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["image", "k2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Sub", ["c1", "c2"], ["difference"]),
             helper.make_node("Reshape", ["products", "image_shape"], ["products_4d"]),
             helper.make_node("Add", ["products_4d", "difference"], ["y"])]
    inits = [numpy_helper.from_array(a, k) for a, k in
             ((w, "w"), (k1, "k1"), (k2, "k2"), (np.array([2, 16, 1, 1], np.int64), "image_shape"),
              (np.array([2, 16, 4, 4], np.int64), "image_size"))]
    write_case(name, nodes, inits, x, y)


shared_weights_case("packed_weights_shared_only_when_equal")


def matmul_bias_case(name, x_shape, bias_shape, residual):
    """MatMul by constant weights, a constant bias Add along the last axis
    (fused into the product), then Relu and, with `residual`, an Add of the
    input's own projection: the batches of A fold into the product's rows."""
    k, n = x_shape[-1], 12
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = (rng.standard_normal((k, n)) * 0.3).astype(np.float32)
    bias = rng.standard_normal(bias_shape).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["product"]),
             helper.make_node("Add", ["product", "bias"], ["biased"]),
             helper.make_node("Relu", ["biased"], ["y" if not residual else "activated"])]
    value = np.maximum(x.astype(np.float64) @ w + bias, 0)
    if residual:
        w2 = (rng.standard_normal((k, n)) * 0.3).astype(np.float32)
        inits.append(numpy_helper.from_array(w2, "w2"))
        nodes = [helper.make_node("MatMul", ["x", "w2"], ["skip"])] + nodes
        nodes.append(helper.make_node("Add", ["activated", "skip"], ["y"]))
        value = value + x.astype(np.float64) @ w2
    write_case(name, nodes, inits, x, value)


matmul_bias_case("fuse_matmul_bias_relu", (6, 8), (12,), False)
matmul_bias_case("fuse_matmul_batches_bias_relu", (5, 1, 8), (1, 12), False)
matmul_bias_case("fuse_matmul_batches_bias_relu_residual", (2, 5, 8), (1, 1, 12), True)


def matmul_gelu_case(name):
    """A transformer's MLP: MatMul, bias, GELU as exported (Div, Erf, Add,
    Mul, Mul), one launch."""
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 12)) * 0.3).astype(np.float32)
    bias = rng.standard_normal(12).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")]
    inits += [numpy_helper.from_array(np.array(v, np.float32), k)
              for k, v in (("sqrt2", math.sqrt(2)), ("one", 1.0), ("half", 0.5))]
    make, reference = STEPS["gelu_expanded"]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["product"]),
             helper.make_node("Add", ["product", "bias"], ["biased"])] + make("biased", "y")
    write_case(name, nodes, inits, x, reference(x.astype(np.float64) @ w + bias))


matmul_gelu_case("fuse_matmul_bias_gelu_expanded")


def attention_scores_case(name):
    """Attention's scores as exporters write them: the queries divided by a
    scalar and the keys multiplied by one (scalar first), both moved out of
    a Transpose, then MatMul and Softmax: the scalings move past the
    product and run as its post-ops."""
    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["x"], ["q"], perm=[1, 0, 2]),
             helper.make_node("Div", ["q", "root"], ["q_scaled"]),
             helper.make_node("Transpose", ["x"], ["k"], perm=[1, 2, 0]),
             helper.make_node("Mul", ["half", "k"], ["k_scaled"]),
             helper.make_node("MatMul", ["q_scaled", "k_scaled"], ["scores"]),
             helper.make_node("Softmax", ["scores"], ["y"], axis=-1)]
    inits = [numpy_helper.from_array(np.array(v, np.float32), k)
             for k, v in (("root", math.sqrt(8)), ("half", 0.5))]
    x64 = x.astype(np.float64)
    scores = (np.transpose(x64, (1, 0, 2)) / math.sqrt(8)) @ (0.5 * np.transpose(x64, (1, 2, 0)))
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    write_case(name, nodes, inits, x, e / e.sum(axis=-1, keepdims=True))


attention_scores_case("matmul_scaled_operands_attention")


def causal_attention_case(name, steps):
    """Attention under a causal mask, as a decoder or a streaming encoder
    writes it: a constant -inf upper triangle added to the scores, Softmax,
    then the product with the values. The masked probabilities must be 0
    exactly ("y": Cast(Greater(p, 0)), the triangle of ones), not e^-87
    (once 1e-38, scaled into denormals that made the MatMul after it 70
    times slower); "context" is the product with the values."""
    x = rng.standard_normal((2, 4, steps, steps)).astype(np.float32) * 3
    values = rng.standard_normal((2, 4, steps, 16)).astype(np.float32)
    mask = np.triu(np.full((steps, steps), -np.inf, np.float32), 1)
    nodes = [helper.make_node("Add", ["x", "mask"], ["scores"]),
             helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "values"], ["context"]),
             helper.make_node("Greater", ["p", "zero"], ["kept"]),
             helper.make_node("Cast", ["kept"], ["y"], to=TensorProto.FLOAT)]
    inits = [numpy_helper.from_array(mask, "mask"), numpy_helper.from_array(values, "values"),
             numpy_helper.from_array(np.array(0.0, np.float32), "zero")]
    scores = x.astype(np.float64) + mask
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    write_case(name, nodes, inits, x, (p > 0).astype(np.float32),
               more_outputs=[("context", p @ values)])


causal_attention_case("softmax_causal_mask_exact_zeros", 24)


def convnext_block_case(name):
    """A ConvNeXt block: depthwise convolution, Transpose to channels-last,
    LayerNormalization, the MLP (MatMul, bias, Relu, MatMul, bias),
    Transpose back, the layer scale ([C, 1, 1]) and the residual Add. The
    Transposes next to the convolutions' channels-last tensors become plain
    copies; the layer scale (behind an Identity, as exporters share it)
    merges into the second product."""
    c, hidden = 16, 32
    x = rng.standard_normal((2, c, 6, 5)).astype(np.float32)
    w = (rng.standard_normal((c, 1, 3, 3)) * 0.5).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    scale, shift = (1 + 0.1 * rng.standard_normal((2, c))).astype(np.float32)
    w1 = (rng.standard_normal((c, hidden)) * 0.3).astype(np.float32)
    b1 = rng.standard_normal(hidden).astype(np.float32)
    w2 = (rng.standard_normal((hidden, c)) * 0.3).astype(np.float32)
    b2 = rng.standard_normal(c).astype(np.float32)
    gamma = rng.standard_normal((c, 1, 1)).astype(np.float32)
    inits = [numpy_helper.from_array(v, k) for k, v in
             (("w", w), ("b", b), ("scale", scale), ("shift", shift), ("w1", w1), ("b1", b1),
              ("w2", w2), ("b2", b2), ("gamma", gamma))]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["dw"], group=c, pads=[1, 1, 1, 1]),
             helper.make_node("Transpose", ["dw"], ["last"], perm=[0, 2, 3, 1]),
             helper.make_node("LayerNormalization", ["last", "scale", "shift"], ["normed"],
                              axis=-1, epsilon=1e-6),
             helper.make_node("MatMul", ["normed", "w1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["hr"]),
             helper.make_node("MatMul", ["hr", "w2"], ["o"]),
             helper.make_node("Add", ["b2", "o"], ["ob"]),
             helper.make_node("Transpose", ["ob"], ["first"], perm=[0, 3, 1, 2]),
             helper.make_node("Identity", ["gamma"], ["gamma_shared"]),
             helper.make_node("Mul", ["gamma_shared", "first"], ["scaled"]),
             helper.make_node("Add", ["scaled", "x"], ["y"])]
    x64 = x.astype(np.float64)
    last = np.transpose(conv(x64, w.astype(np.float64), b, group=c), (0, 2, 3, 1))
    mean, var = last.mean(-1, keepdims=True), last.var(-1, keepdims=True)
    normed = (last - mean) / np.sqrt(var + 1e-6) * scale + shift
    o = np.maximum(normed @ w1 + b1, 0) @ w2 + b2
    write_case(name, nodes, inits, x, gamma * np.transpose(o, (0, 3, 1, 2)) + x64, opset=17)


convnext_block_case("convnext_block_transposes_layer_scale")


def transpose_scale_case(name, shape, perm, scale_shape):
    """A Mul by a constant after a Transpose: moved before it, the constant
    permuted to the Transpose's input axes."""
    x = rng.standard_normal(shape).astype(np.float32)
    k = rng.standard_normal(scale_shape).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["x"], ["moved"], perm=list(perm)),
             helper.make_node("Mul", ["moved", "k"], ["y"])]
    write_case(name, nodes, [numpy_helper.from_array(k, "k")], x,
               np.transpose(x.astype(np.float64), perm) * k)


transpose_scale_case("transpose_then_mul_matrix", (2, 3, 4, 5), (0, 3, 1, 2), (5, 1, 4))
transpose_scale_case("transpose_then_mul_full", (3, 4), (1, 0), (2, 1, 4, 3))


def transpose_case(name, shape, perm, dtype=np.float32):
    """A Transpose moving the innermost axis (copied in tiles, several per
    axis and partial ones at the ends), then a Slice reversing the new last
    axis with a step of -2 and halving the first."""
    x = rng.standard_normal(shape).astype(dtype)
    moved = np.transpose(x, perm)
    nodes = [helper.make_node("Transpose", ["x"], ["moved"], perm=list(perm)),
             helper.make_node("Slice", ["moved", "starts", "ends", "axes", "steps"], ["y"])]
    starts, ends, axes, steps = [-1, 0], [-(1 << 62), moved.shape[0] // 2 + 1], [-1, 0], [-2, 1]
    inits = [numpy_helper.from_array(np.array(v, np.int64), k)
             for k, v in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps))]
    value = moved[:moved.shape[0] // 2 + 1, ..., ::-2]
    write_case(name, nodes, inits, x, value)


transpose_case("transpose_channels_last_to_first_tiles", (2, 37, 19, 21), (0, 3, 1, 2))
transpose_case("transpose_channels_first_to_last_tiles", (3, 21, 17, 40), (0, 2, 3, 1))
transpose_case("transpose_swap_rows_tiles", (45, 70), (1, 0))
# attention's keys transposed for Q.K^T ([seq, heads, dim] -> [heads, dim, seq])
transpose_case("transpose_keys_of_attention_tiles", (37, 6, 20), (1, 2, 0))
# large enough for the CPU backend to deal ranges of positions to its threads
transpose_case("transpose_channel_shuffle_runs_large", (3, 2, 29, 28, 27), (0, 2, 1, 3, 4))
transpose_case("transpose_channels_first_to_last_tiles_large", (4, 29, 33, 50), (0, 2, 3, 1))
# tokens to channels (SegFormer, MobileViT): one pair of tiled axes dealt in
# bands of rows (the last band and tiles partial), alone and in a batch
transpose_case("transpose_tokens_to_channels_bands_large", (1, 517, 300), (0, 2, 1))
transpose_case("transpose_tokens_to_channels_bands_batch", (3, 300, 517), (0, 2, 1))


def pointwise_case(name, steps, outputs=16, bias=True):
    """1x1 convolutions of one position (squeeze-and-excitation's), with
    fused activations: the CPU backend's own small kernel runs them (an odd
    `outputs` leaves a tail after the vector loops)."""
    x = rng.standard_normal((2, 24, 1, 1)).astype(np.float32)
    w = (rng.standard_normal((outputs, 24, 1, 1)) * 0.5).astype(np.float32)
    b = rng.standard_normal(outputs).astype(np.float32) if bias else np.zeros(outputs, np.float32)
    inits = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(b, "b")] if bias else [])
    nodes = [helper.make_node("Conv", ["x", "w", "b"] if bias else ["x", "w"], ["t0"])]
    value = np.einsum("nc,mc->nm", x[:, :, 0, 0].astype(np.float64),
                      w[:, :, 0, 0].astype(np.float64))[:, :, None, None] + b.reshape(1, -1, 1, 1)
    write_steps_case(name, nodes, inits, x, "t0", value, steps)


pointwise_case("pointwise_conv_swish_expanded", ["swish_expanded"])
pointwise_case("pointwise_conv_hardswish_leaky", ["hardswish", "leaky"])
pointwise_case("pointwise_conv_gelu_relu6", ["gelu_expanded", "relu6"])
pointwise_case("pointwise_conv_tanh_mul_add", ["tanh", "mul", "add"])
pointwise_case("pointwise_conv_sigmoid", ["sigmoid"])
pointwise_case("pointwise_conv_no_bias_relu6", ["relu6"], bias=False)


def narrow_block_conv_case(name):
    """SqueezeNet's classifier end: a dense convolution into 40 channels (8
    of them past the last 16-channel block, so the tensor takes blocks of 8)
    with ReLU, then GlobalAveragePool; batch 2. On AVX-512 the convolution
    runs on 16-channel blocks in the workspace and is reordered to the
    tensor's 8-channel blocks on the way out."""
    x = rng.standard_normal((2, 64, SIZE, SIZE)).astype(np.float32)
    w = (rng.standard_normal((40, 64, 3, 3)) * np.sqrt(1 / (64 * 9))).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["y"])]
    value = np.maximum(conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64)), 0)
    write_case(name, nodes, inits, x, value.mean(axis=(2, 3), keepdims=True))


narrow_block_conv_case("conv_narrow_blocks_global_pool")


def squeeze_excitation_case(name, gate_first, reread=False, square=False):
    """A squeeze-and-excitation block as EfficientNet's: depthwise 3x3 +
    SiLU over 32 channels (16-channel blocks), GlobalAveragePool, 1x1 + Relu,
    1x1 + Sigmoid, the channel gate's Mul (`gate_first`: as Mul(gate, x)),
    then a 1x1 projection to 16 channels; batch 2. The Mul writes its output
    over the depthwise output, which dies there (the CPU backend's
    kernel_in_place_inputs). `reread`: the depthwise output is added to the
    projection's input after the Mul as well, so it must keep its memory;
    `square`: Mul(x, x) before the gate, both operands one tensor."""
    channels = 32
    x = rng.standard_normal((2, channels, SIZE, SIZE)).astype(np.float32)
    wd = (rng.standard_normal((channels, 1, 3, 3)) * 0.4).astype(np.float32)
    bd = (0.1 * rng.standard_normal(channels)).astype(np.float32)
    w1 = (rng.standard_normal((8, channels, 1, 1)) * 0.3).astype(np.float32)
    b1 = (0.1 * rng.standard_normal(8)).astype(np.float32)
    w2 = (rng.standard_normal((channels, 8, 1, 1)) * 0.3).astype(np.float32)
    b2 = (0.1 * rng.standard_normal(channels)).astype(np.float32)
    wp = (rng.standard_normal((16, channels, 1, 1)) * 0.2).astype(np.float32)
    bp = (0.1 * rng.standard_normal(16)).astype(np.float32)
    inits = [numpy_helper.from_array(v, k) for k, v in
             {"wd": wd, "bd": bd, "w1": w1, "b1": b1, "w2": w2, "b2": b2, "wp": wp,
              "bp": bp}.items()]
    nodes = [helper.make_node("Conv", ["x", "wd", "bd"], ["d"], group=channels,
                              pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["d"], ["ds"]),
             helper.make_node("Mul", ["d", "ds"], ["a"])]
    f64 = lambda v: v.astype(np.float64)
    d = conv(f64(x), f64(wd), f64(bd), group=channels)
    a = d * sigmoid(d)
    if square:
        nodes.append(helper.make_node("Mul", ["a", "a"], ["a2"]))
        a, src = a * a, "a2"
    else:
        src = "a"
    nodes += [helper.make_node("GlobalAveragePool", [src], ["p"]),
              helper.make_node("Conv", ["p", "w1", "b1"], ["f1"]),
              helper.make_node("Relu", ["f1"], ["r1"]),
              helper.make_node("Conv", ["r1", "w2", "b2"], ["f2"]),
              helper.make_node("Sigmoid", ["f2"], ["g"]),
              helper.make_node("Mul", ["g", src] if gate_first else [src, "g"], ["m"])]
    p_ = a.mean(axis=(2, 3), keepdims=True)
    g = sigmoid(conv(np.maximum(conv(p_, f64(w1), f64(b1), pad=0), 0), f64(w2), f64(b2), pad=0))
    m = a * g
    if reread:
        nodes.append(helper.make_node("Add", ["m", src], ["mr"]))
        m, last = m + a, "mr"
    else:
        last = "m"
    nodes.append(helper.make_node("Conv", [last, "wp", "bp"], ["y"]))
    write_case(name, nodes, inits, x, conv(m, f64(wp), f64(bp), pad=0))


squeeze_excitation_case("squeeze_excitation_mul_in_place_gate_first", gate_first=True)
squeeze_excitation_case("squeeze_excitation_mul_in_place_gate_second", gate_first=False)
squeeze_excitation_case("squeeze_excitation_mul_input_read_after", gate_first=True, reread=True)
squeeze_excitation_case("squeeze_excitation_mul_of_one_tensor_twice", gate_first=False,
                        square=True)


def channel_operand_case(name, op, pooled_first):
    """A convolution's output in 16-channel blocks (48 channels, batch 2)
    and its own global average pool, [2, 48, 1, 1], combined by `op` before
    a 1x1 projection: Mul and Add take the CPU kernels' path for one
    block's 16 lanes against a per-channel operand (either operand order),
    Sub must not (its order matters: the general loop)."""
    x = rng.standard_normal((2, 8, SIZE, SIZE)).astype(np.float32)
    w = (rng.standard_normal((48, 8, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(48).astype(np.float32)
    wq = (rng.standard_normal((16, 48, 1, 1)) * 0.2).astype(np.float32)
    bq = (0.1 * rng.standard_normal(16)).astype(np.float32)
    inits = [numpy_helper.from_array(v, k) for k, v in
             {"w": w, "b": b, "wq": wq, "bq": bq}.items()]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["c"], ["p"]),
             helper.make_node(op, ["p", "c"] if pooled_first else ["c", "p"], ["m"]),
             helper.make_node("Conv", ["m", "wq", "bq"], ["y"])]
    f64 = lambda v: v.astype(np.float64)
    c = conv(f64(x), f64(w), f64(b))
    p = c.mean(axis=(2, 3), keepdims=True)
    u, v = (p, c) if pooled_first else (c, p)
    m = {"Mul": u * v, "Add": u + v, "Sub": u - v}[op]
    write_case(name, nodes, inits, x, conv(m, f64(wq), f64(bq), pad=0))


channel_operand_case("channel_operand_mul_blocks_pooled_first", "Mul", True)
channel_operand_case("channel_operand_add_blocks", "Add", False)
channel_operand_case("channel_operand_sub_blocks_pooled_first", "Sub", True)


def spatial_mean_case(name, channels, keepdims):
    """ReduceMean over the spatial axes, as exporters write global average
    pooling (ShuffleNetV2's x.mean([2, 3])), of a convolution's output in
    its planned layout (16 channels: channel blocks; 12: channels-last),
    batch 2; then a Relu on the pooled values."""
    x = rng.standard_normal((2, 8, SIZE, SIZE)).astype(np.float32)
    w = (rng.standard_normal((channels, 8, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(channels).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("ReduceMean", ["c"], ["m"], axes=[2, -1], keepdims=keepdims),
             helper.make_node("Relu", ["m"], ["y"])]
    value = conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64))
    write_case(name, nodes, inits, x,
               np.maximum(value.mean(axis=(2, 3), keepdims=bool(keepdims)), 0))


spatial_mean_case("reduce_mean_spatial_blocks", 16, 0)
spatial_mean_case("reduce_mean_spatial_channels_last_keepdims", 12, 1)


def channel_shuffle_case(name):
    """ShuffleNet's channel shuffle between convolutions: Reshape to
    (N, 2, C/2, H, W), Transpose of the two channel axes, Reshape back, then
    the sum with the first convolution's output (still read after the first
    Reshape) and a Flatten; batch 2. Each Reshape whose input dies there
    takes that input's memory and copies nothing."""
    x = rng.standard_normal((2, 8, SIZE, SIZE)).astype(np.float32)
    w = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array([2, 2, 4, SIZE, SIZE], np.int64), "split_shape"),
             numpy_helper.from_array(np.array([2, 8, SIZE, SIZE], np.int64), "joined_shape")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Reshape", ["c", "split_shape"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["t", "joined_shape"], ["s"]),
             helper.make_node("Add", ["s", "c"], ["a"]),
             helper.make_node("Flatten", ["a"], ["y"])]
    value = conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64))
    shuffled = value.reshape(2, 2, 4, SIZE, SIZE).transpose(0, 2, 1, 3, 4).reshape(value.shape)
    write_case(name, nodes, inits, x, (shuffled + value).reshape(2, -1))


channel_shuffle_case("reshape_in_place_channel_shuffle")

pointwise_case("pointwise_conv_hardsigmoid_tail", ["hardsigmoid"], outputs=37)
pointwise_case("pointwise_conv_swish_tail", ["swish_expanded"], outputs=37)


def max_pool_ceil(x, kernel=3, stride=2):
    """MaxPool with ceil_mode=1 and no padding: the last window may hang over."""
    n, c, h, w = x.shape
    oh, ow = -(-(h - kernel) // stride) + 1, -(-(w - kernel) // stride) + 1
    y = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = x[:, :, i * stride:i * stride + kernel,
                              j * stride:j * stride + kernel].max(axis=(2, 3))
    return y


def fire_module_case(name, squeeze, expand, size):
    """SqueezeNet's fire module: a 1x1 squeeze, then 1x1 and 3x3 expands
    joined by Concat, a ceil-mode MaxPool and global pooling; with `squeeze`
    and `expand` of 16 channels or more (not both 16) the 3x3 expand runs
    oneDNN's Winograd on 16-channel blocks, at 16 -> 16 its direct kernel."""
    x = rng.standard_normal((2, 24, size, size)).astype(np.float32)
    inits, nodes, k = [], [], [0]

    def add_conv_relu(src, value, out_channels, kernel):
        fan_in = value.shape[1] * kernel * kernel
        w = (rng.standard_normal((out_channels, value.shape[1], kernel, kernel)) *
             np.sqrt(2 / fan_in)).astype(np.float32)
        b = (0.1 * rng.standard_normal(out_channels)).astype(np.float32)
        k[0] += 1
        inits.extend([numpy_helper.from_array(w, f"w{k[0]}"),
                      numpy_helper.from_array(b, f"b{k[0]}")])
        nodes.append(helper.make_node("Conv", [src, f"w{k[0]}", f"b{k[0]}"], [f"c{k[0]}"],
                                      pads=[kernel // 2] * 4))
        nodes.append(helper.make_node("Relu", [f"c{k[0]}"], [f"r{k[0]}"]))
        return f"r{k[0]}", np.maximum(conv(value, w.astype(np.float64), b.astype(np.float64),
                                           pad=kernel // 2), 0)

    squeezed, squeezed_value = add_conv_relu("x", x.astype(np.float64), squeeze, 1)
    ones, ones_value = add_conv_relu(squeezed, squeezed_value, expand, 1)
    threes, threes_value = add_conv_relu(squeezed, squeezed_value, expand, 3)
    nodes += [helper.make_node("Concat", [ones, threes], ["fire"], axis=1),
              helper.make_node("MaxPool", ["fire"], ["pooled"], kernel_shape=[3, 3],
                               strides=[2, 2], ceil_mode=1),
              helper.make_node("GlobalAveragePool", ["pooled"], ["mean"]),
              helper.make_node("Add", ["pooled", "mean"], ["y"])]
    pooled = max_pool_ceil(np.concatenate([ones_value, threes_value], axis=1))
    write_case(name, nodes, inits, x, pooled + pooled.mean(axis=(2, 3), keepdims=True))


fire_module_case("fire_module_winograd_16_to_64", 16, 64, 15)
fire_module_case("fire_module_winograd_32_to_16", 32, 16, 14)
fire_module_case("fire_module_direct_16_to_16", 16, 16, 13)


def global_pool_case(name, channels, size):
    """GlobalMaxPool and GlobalAveragePool over a convolution's output in its
    layout (channel blocks or channels-last, by `channels`): whole 16-channel
    lane groups, a narrower last group, and positions not a multiple of the
    pooling's unrolling."""
    x = rng.standard_normal((2, 3, size, size)).astype(np.float32)
    w = (rng.standard_normal((channels, 3, 3, 3)) * 0.3).astype(np.float32)
    b = rng.standard_normal(channels).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalMaxPool", ["c"], ["max"]),
             helper.make_node("GlobalAveragePool", ["c"], ["mean"]),
             helper.make_node("Add", ["max", "mean"], ["y"])]
    value = conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64))
    write_case(name, nodes, inits, x,
               value.max(axis=(2, 3), keepdims=True) + value.mean(axis=(2, 3), keepdims=True))


for channels, layout in ((48, "blocks16"), (40, "blocks8"), (37, "channels_last")):
    global_pool_case(f"global_pools_{layout}", channels, 7)
# channels-last pooled position by position, 128 channels to a task: two whole
# tasks and a narrower last one per image (SqueezeNet's 1000 classes are so);
# a last task of 12 channels runs the 16-lane loop at the stride of the row
global_pool_case("global_pools_channels_last_wide", 300, 13)
global_pool_case("global_pools_channels_last_narrow_tail", 140, 7)


def reshape_view_case(name):
    """A Reshape (Flatten) of a tensor that is read after it: the flattened
    output shares the tensor's memory (a view), and the Add that reads the
    tensor last, which may otherwise write its sum over it, must not (the
    flattened output would read the sums)."""
    x = rng.standard_normal((2, 3, SIZE, SIZE)).astype(np.float32)
    t = 1 / (1 + np.exp(-x.astype(np.float64)))
    nodes = [helper.make_node("Sigmoid", ["x"], ["t"]),
             helper.make_node("Flatten", ["t"], ["flat"]),
             helper.make_node("Add", ["t", "x"], ["sum"]),
             helper.make_node("Transpose", ["sum"], ["y"], perm=[0, 2, 3, 1]),
             helper.make_node("Transpose", ["flat"], ["flat_t"], perm=[1, 0])]
    write_case(name, nodes, [], x, np.transpose(t + x, (0, 2, 3, 1)),
               more_outputs=[("flat_t", t.reshape(2, -1).T)])


reshape_view_case("reshape_view_of_a_live_tensor")


def reduce_runs_case(name):
    """Reductions of one run of adjacent axes in float32 (vectors over a
    contiguous run, rows accumulated over a run with axes after it, in
    chunks of 256 outputs: 300 leaves a partial one) and of axes that are
    not adjacent (the generic path), against numpy in float64; a NaN
    propagates through the largest."""
    x = rng.standard_normal((2, 9, 7, 300)).astype(np.float32)
    x[1, 4, 3, 17] = np.nan
    v = x.astype(np.float64)
    cases = [("ReduceL2", [1, 2], np.sqrt((v * v).sum(axis=(1, 2), keepdims=True))),
             ("ReduceMax", [3], v.max(axis=3, keepdims=True)),
             ("ReduceMean", [0], v.mean(axis=0, keepdims=True)),
             ("ReduceMin", [2], v.min(axis=2, keepdims=True)),
             ("ReduceL1", [2, 3], np.abs(v).sum(axis=(2, 3), keepdims=True)),
             ("ReduceSum", [1, 3], v.sum(axis=(1, 3), keepdims=True))]
    nodes, outputs = [], []
    for i, (op, axes, value) in enumerate(cases):
        out = "y" if i == 0 else f"r{i}"
        nodes.append(helper.make_node(op, ["x"], [out], axes=axes))
        outputs.append((out, value))
    write_case(name, nodes, [], x, outputs[0][1], opset=13, more_outputs=outputs[1:])


reduce_runs_case("reduce_runs_float32")


def projection_residual_case(name, channels, expanded, size=SIZE, relu=False,
                             plain_residual=False, plain_expansion=False):
    """An inverted residual (MobileNetV2, EfficientNet): `channels` expanded
    to `expanded` (channel blocks) and projected back with the residual Add
    fused (after a Relu of the projection if `relu`). Where `channels` fill no
    whole block their tensors are in another layout than the expansion's: the
    projection reads blocks, writes blocks in its workspace and moves them to
    that layout adding the residual (in tasks of 512 positions: `size` 23
    leaves a partial one). `plain_residual`: the residual also Flattened into
    a second output, which keeps its tensors plain (PoolFormer's GroupNorm
    reshapes its residual stream so): the blocks then move to a plain output.
    `plain_expansion`: the expansion Flattened too (a diffusion UNet's
    GroupNorm before the convolution): the projection reads a plain input,
    reordered into blocks in its workspace."""
    x = rng.standard_normal((2, 3, size, size)).astype(np.float32)
    inits, nodes, value = [], [], x.astype(np.float64)
    tensor = "x"
    for k, (out_channels, kernel) in enumerate(((channels, 3), (expanded, 1), (channels, 1),
                                                (8, 1))):
        w = (rng.standard_normal((out_channels, value.shape[1], kernel, kernel)) *
             np.sqrt(1 / (value.shape[1] * kernel * kernel))).astype(np.float32)
        b = rng.standard_normal(out_channels).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{k}"), numpy_helper.from_array(b, f"b{k}")]
        nodes.append(helper.make_node("Conv", [tensor, f"w{k}", f"b{k}"], [f"conv{k}"],
                                      pads=[kernel // 2] * 4))
        value = conv(value, w.astype(np.float64), b.astype(np.float64), pad=kernel // 2)
        tensor = f"conv{k}"
        if k == 0:
            residual, residual_value = tensor, value
        if k == 1:
            expansion, expansion_value = tensor, value
        if k == 2 and relu:
            nodes.append(helper.make_node("Relu", [tensor], ["rectified"]))
            tensor, value = "rectified", np.maximum(value, 0)
        if k == 2:
            nodes.append(helper.make_node("Add", [tensor, residual], ["projected"]))
            tensor, value = "projected", value + residual_value
    nodes[-1].output[0] = "y"
    more = []
    if plain_residual:
        nodes.append(helper.make_node("Flatten", [residual], ["residual_flat"]))
        more = [("residual_flat", residual_value.reshape(residual_value.shape[0], -1))]
    if plain_expansion:
        nodes.append(helper.make_node("Flatten", [expansion], ["expansion_flat"]))
        more.append(("expansion_flat", expansion_value.reshape(expansion_value.shape[0], -1)))
    write_case(name, nodes, inits, x, value, more_outputs=more)


for channels in (24, 40, 12):
    projection_residual_case(f"projection_residual_{channels}_from_blocks", channels, 96)
projection_residual_case("projection_relu_residual_40_from_blocks_partial_task", 40, 48,
                         size=23, relu=True)
projection_residual_case("projection_residual_32_plain_from_blocks", 32, 96, plain_residual=True)
projection_residual_case("projection_residual_40_plain_from_blocks_partial_task", 40, 48,
                         size=23, plain_residual=True)
projection_residual_case("projection_residual_40_plain_from_plain", 40, 48, size=23,
                         plain_residual=True, plain_expansion=True)


def basic_block_case(name, channels, relu_before_add=False):
    """A ResNet basic block between a stem convolution and a 1x1 head (so that
    its tensors are the backend's, in channel blocks): two 3x3 convolutions
    of `channels` (16 to 511: oneDNN's Winograd at batch 2) with the residual
    Add fused into the second and a Relu after it, where Winograd sums the
    residual copied into the output; with `relu_before_add` the Relu comes
    first (Conv, Relu, Add), a chain Winograd does not take: it runs direct."""
    x = rng.standard_normal((2, 3, SIZE, SIZE)).astype(np.float32)
    inits, nodes = [], []
    value = x.astype(np.float64)
    tensor = "x"

    def add_conv(k, out_channels, kernel):
        nonlocal tensor, value
        w = (rng.standard_normal((out_channels, value.shape[1], kernel, kernel)) *
             np.sqrt(2 / (value.shape[1] * kernel * kernel))).astype(np.float32)
        b = rng.standard_normal(out_channels).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, f"w{k}"), numpy_helper.from_array(b, f"b{k}")])
        nodes.append(helper.make_node("Conv", [tensor, f"w{k}", f"b{k}"], [f"conv{k}"],
                                      pads=[kernel // 2] * 4))
        value = conv(value, w.astype(np.float64), b.astype(np.float64), pad=kernel // 2)
        tensor = f"conv{k}"

    def relu(k):
        nonlocal tensor, value
        nodes.append(helper.make_node("Relu", [tensor], [f"relu{k}"]))
        tensor, value = f"relu{k}", np.maximum(value, 0)

    add_conv(0, channels, 3)
    relu(0)
    residual, residual_value = tensor, value
    add_conv(1, channels, 3)
    relu(1)
    add_conv(2, channels, 3)
    if relu_before_add:
        relu(2)
    nodes.append(helper.make_node("Add", [tensor, residual], ["sum"]))
    tensor, value = "sum", value + residual_value
    if not relu_before_add:
        relu(2)
    add_conv(3, 8, 1)
    nodes[-1].output[0] = "y"
    write_case(name, nodes, inits, x, value)


basic_block_case("basic_block_winograd_residual_32", 32)
basic_block_case("basic_block_relu_before_residual_32", 32, relu_before_add=True)


def channel_parts_stem_case(name, batch, channels, kernel, stride, bias):
    """A network's first convolution over few input channels with a large
    window (ResNet's stem: 3 channels, 7x7), which the CPU backend sums per
    input channel, one primitive each onto the output (the bias with the
    first, the Relu after the last), image by image: then a MaxPool and a 1x1
    head, so that its output is in channel blocks."""
    x = rng.random((batch, channels, 2 * SIZE + 1, 2 * SIZE + 1), dtype=np.float32)
    w = (rng.standard_normal((16, channels, kernel, kernel)) *
         np.sqrt(2 / (channels * kernel * kernel))).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32) if bias else np.zeros(16, np.float32)
    head = (rng.standard_normal((8, 16, 1, 1)) * 0.25).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(head, "head")]
    if bias:
        inits.append(numpy_helper.from_array(b, "b"))
    pad = kernel // 2
    nodes = [helper.make_node("Conv", ["x", "w", "b"] if bias else ["x", "w"], ["stem"],
                              pads=[pad] * 4, strides=[stride, stride]),
             helper.make_node("Relu", ["stem"], ["rectified"]),
             helper.make_node("MaxPool", ["rectified"], ["pooled"], kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["pooled", "head"], ["y"])]
    value = np.maximum(conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                            stride=stride, pad=pad), 0)
    padded = np.pad(value, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    size = (value.shape[2] - 1) // 2 + 1
    pooled = np.max([padded[:, :, i:i + 2 * size:2, j:j + 2 * size:2]
                     for i in range(3) for j in range(3)], axis=0)
    write_case(name, nodes, inits, x, conv(pooled, head.astype(np.float64), np.zeros(8), pad=0))


channel_parts_stem_case("conv_channel_parts_stem_7x7", 2, 3, 7, 2, True)
channel_parts_stem_case("conv_channel_parts_4_channels_5x5_no_bias", 3, 4, 5, 1, False)


def winograd_images_case(name, batch, channels, size):
    """A 3x3 convolution whose batch oneDNN would run as F(4x4,3x3) Winograd
    where one image alone gets F(2x2,3x3) (fcn_resnet50's 64 channels at
    80x80, batch 2, on 2 threads): the CPU backend then runs it an image at a
    time. Between 1x1 convolutions, so that it reads and writes channel blocks."""
    x = rng.random((batch, channels, size, size), dtype=np.float32)
    weights = [(rng.standard_normal(shape) * np.sqrt(2 / (shape[1] * shape[2] * shape[3])))
               .astype(np.float32) for shape in ((channels, channels, 1, 1),
                                                 (channels, channels, 3, 3), (8, channels, 1, 1))]
    b = (0.1 * rng.standard_normal(channels)).astype(np.float32)
    inits = [numpy_helper.from_array(w, f"w{i}") for i, w in enumerate(weights)]
    inits.append(numpy_helper.from_array(b, "b"))
    nodes = [helper.make_node("Conv", ["x", "w0"], ["into"]),
             helper.make_node("Conv", ["into", "w1", "b"], ["wino"], pads=[1] * 4),
             helper.make_node("Relu", ["wino"], ["rectified"]),
             helper.make_node("Conv", ["rectified", "w2"], ["y"])]
    w64 = [w.astype(np.float64) for w in weights]
    value = conv(x.astype(np.float64), w64[0], np.zeros(channels), pad=0)
    value = np.maximum(conv(value, w64[1], b.astype(np.float64)), 0)
    write_case(name, nodes, inits, x, conv(value, w64[2], np.zeros(8), pad=0))


winograd_images_case("conv_winograd_2x2_per_image", 2, 64, 80)


def wide_rows_case(name, width):
    """Softmax, LayerNormalization and Erf along rows wider than one
    reduction step, with a tail (197: 12 steps of 16 and 5 more): their
    vectorised builds against float64."""
    x = (3 * rng.standard_normal((4, width))).astype(np.float32)
    scale, shift = (1 + 0.1 * rng.standard_normal((2, width))).astype(np.float32)
    inits = [numpy_helper.from_array(v, k) for k, v in (("scale", scale), ("shift", shift))]
    nodes = [helper.make_node("Softmax", ["x"], ["soft"], axis=-1),
             helper.make_node("LayerNormalization", ["x", "scale", "shift"], ["normed"],
                              axis=-1, epsilon=1e-5),
             helper.make_node("Erf", ["x"], ["erf"]),
             helper.make_node("Add", ["soft", "normed"], ["sum"]),
             helper.make_node("Add", ["sum", "erf"], ["y"])]
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    mean, var = x64.mean(-1, keepdims=True), x64.var(-1, keepdims=True)
    normed = (x64 - mean) / np.sqrt(var + 1e-5) * scale + shift
    write_case(name, nodes, inits, x, e / e.sum(-1, keepdims=True) + normed +
               np.vectorize(math.erf)(x64), opset=17)


wide_rows_case("softmax_layer_norm_erf_wide_rows", 197)


def mean_pool3(x):
    """3x3 mean, stride 1, no padding of its own."""
    oh, ow = x.shape[2] - 2, x.shape[3] - 2
    return sum(x[:, :, i:i + oh, j:j + ow] for i in range(3) for j in range(3)) / 9


def pads_case(name):
    """Zero Pads of the spatial axes taken into the Conv (on top of its own
    asymmetric pads) and the AveragePool (whose mean then counts them, as it
    counted the Pad's zeros) that read them; beside them Pads that must stay:
    a non-zero value, reflect mode, a Pad read twice."""
    x = rng.standard_normal((2, CHANNELS, SIZE, SIZE)).astype(np.float32)
    w = (rng.standard_normal((CHANNELS, CHANNELS, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(CHANNELS).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "p_conv"),
             numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "p_pool"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    nodes = [helper.make_node("Pad", ["x", "p_conv"], ["xp"]),
             helper.make_node("Conv", ["xp", "w", "b"], ["c"], pads=[1, 0, 0, 1]),
             helper.make_node("Pad", ["c", "p_pool"], ["cp"]),
             helper.make_node("AveragePool", ["cp"], ["merged"], kernel_shape=[3, 3]),
             helper.make_node("Pad", ["c", "p_pool", "half"], ["ch"]),
             helper.make_node("AveragePool", ["ch"], ["valued"], kernel_shape=[3, 3]),
             helper.make_node("Pad", ["c", "p_pool"], ["cr"], mode="reflect"),
             helper.make_node("Conv", ["cr", "w", "b"], ["reflected"]),
             helper.make_node("Pad", ["c", "p_pool"], ["twice"]),
             helper.make_node("AveragePool", ["twice"], ["t1"], kernel_shape=[3, 3]),
             helper.make_node("Relu", ["twice"], ["t2"]),
             helper.make_node("AveragePool", ["t2"], ["t3"], kernel_shape=[3, 3]),
             helper.make_node("Add", ["merged", "valued"], ["s1"]),
             helper.make_node("Add", ["s1", "reflected"], ["s2"]),
             helper.make_node("Add", ["s2", "t1"], ["s3"]),
             helper.make_node("Add", ["s3", "t3"], ["y"])]
    x64, w64, b64 = (a.astype(np.float64) for a in (x, w, b))
    xp = np.pad(x64, ((0, 0), (0, 0), (1 + 1, 2 + 0), (2 + 0, 1 + 1)))
    c = conv(xp, w64, b64, pad=0)
    spatial = ((0, 0), (0, 0), (1, 1), (1, 1))
    cp = np.pad(c, spatial)
    expected = (mean_pool3(cp) + mean_pool3(np.pad(c, spatial, constant_values=0.5)) +
                conv(np.pad(c, spatial, mode="reflect"), w64, b64, pad=0) + mean_pool3(cp) +
                mean_pool3(np.maximum(cp, 0)))
    write_case(name, nodes, inits, x, expected, opset=13)


pads_case("pads_into_conv_and_average_pool")


def gelu64(v, tanh_form):
    if tanh_form:
        return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    return 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))


def gelu_case(name, tanh_form):
    """Opset 20's Gelu node, standalone (an odd count: vector loops and
    their tail) and fused into the Conv and the MatMul + bias before it."""
    approximate = "tanh" if tanh_form else "none"
    x = (2 * rng.standard_normal((2, CHANNELS, 5, 7))).astype(np.float32)
    w = (rng.standard_normal((CHANNELS, CHANNELS, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(CHANNELS).astype(np.float32)
    m = (rng.standard_normal((7, 9)) * 0.5).astype(np.float32)
    bias = rng.standard_normal(9).astype(np.float32)
    inits = [numpy_helper.from_array(v, k) for k, v in (("w", w), ("b", b), ("m", m),
                                                         ("bias", bias))]
    nodes = [helper.make_node("Gelu", ["x"], ["alone"], approximate=approximate),
             helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Gelu", ["c"], ["conv_gelu"], approximate=approximate),
             helper.make_node("MatMul", ["x", "m"], ["p"]),
             helper.make_node("Add", ["p", "bias"], ["pb"]),
             helper.make_node("Gelu", ["pb"], ["y"], approximate=approximate)]
    x64 = x.astype(np.float64)
    c = conv(x64, w.astype(np.float64), b.astype(np.float64))
    write_case(name, nodes, inits, x, gelu64(x64 @ m + bias, tanh_form), opset=20,
               more_outputs=[("alone", gelu64(x64, tanh_form)),
                             ("conv_gelu", gelu64(c, tanh_form))])


gelu_case("gelu_opset20", False)
gelu_case("gelu_tanh_opset20", True)


def symmetric_taps(size, scale):
    """Linear interpolation matrix [out, size] of opset 19's half_pixel_symmetric
    (its offset moves the samples when size * scale is not whole)."""
    out = int(math.floor(size * scale))
    adjustment = out / (size * scale)
    taps = np.zeros((out, size))
    for o in range(out):
        s = size / 2 * (1 - adjustment) + (o + 0.5) / scale - 0.5
        s = min(max(s, 0), size - 1)
        f = int(math.floor(s))
        taps[o, f] += 1 - (s - f)
        taps[o, min(f + 1, size - 1)] += s - f
    return taps


def opset21_case(name):
    """What opsets 19 to 21 changed in operators the runtime runs: Pad's wrap
    mode (19, pads wider than the axis too), Resize's half_pixel_symmetric
    coordinates (19), QuantizeLinear's output_dtype (21: int8 without a
    zero point), in a model of opset 21."""
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    inits = [numpy_helper.from_array(np.array([0, 0, 2, 5, 0, 0, 4, 1], np.int64), "pads"),
             numpy_helper.from_array(np.array([], np.float32), "no_roi"),
             numpy_helper.from_array(np.array([1, 1, 1.7, 1.9], np.float32), "scales"),
             numpy_helper.from_array(np.array(0.02, np.float32), "qscale")]
    nodes = [helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap"),
             helper.make_node("Resize", ["x", "no_roi", "scales"], ["resized"],
                              mode="linear",
                              coordinate_transformation_mode="half_pixel_symmetric"),
             helper.make_node("QuantizeLinear", ["x", "qscale"], ["q"],
                              output_dtype=TensorProto.INT8),
             helper.make_node("DequantizeLinear", ["q", "qscale"], ["dq"])]
    x64 = x.astype(np.float64)
    # a torus, as the operator's definition says, also where the pads are wider than the
    # axis (numpy's own wrap mode, which ONNX's reference calls, is not periodic there)
    wrapped = np.take(np.take(x64, np.arange(-2, 3 + 4) % 3, axis=2), np.arange(-5, 4 + 1) % 4,
                      axis=3)
    resized = np.einsum("oh,nchw,pw->ncop", symmetric_taps(3, 1.7), x64, symmetric_taps(4, 1.9))
    dq = np.clip(np.round(x64 / 0.02), -128, 127) * 0.02
    write_case(name, nodes, inits, x, wrapped, opset=21,
               more_outputs=[("resized", resized), ("dq", dq)])


opset21_case("opset21_pad_wrap_resize_quantize")


def window_pads_case(name):
    """Swin's window padding and shifts where they are empty: a Pad of
    nothing, an inference Dropout and a Slice of whole axes pass their input
    through (planned in place), then a roll as two Slices and a Concat;
    beside them Pads, a Tile and Expands that move data, row by row:
    constant (0.5) pads inside and at the ends of rows, edge and reflect
    pads, repeats and broadcasts along the last axis and an inner one."""
    x = rng.standard_normal((2, 7, 6, 8)).astype(np.float32)

    def ints(name, values):
        return numpy_helper.from_array(np.array(values, np.int64), name)

    inits = [ints("no_pads", [0] * 8), ints("pads", [0, 0, 1, 2, 0, 0, 2, 1]),
             ints("edge_pads", [0, 0, 0, 2, 0, 0, 0, 3]),
             ints("reflect_pads", [0, 1, 0, 2, 0, 1, 0, 1]), ints("repeats", [1, 2, 1, 2]),
             ints("full", [2, 7, 6, 8]), ints("zero2", [0, 0]), ints("ends", [7, 6]),
             ints("axes12", [1, 2]), ints("three", [3]), ints("seven", [7]), ints("zero", [0]),
             ints("one", [1]), ints("axis1", [1]), ints("axis3", [3]),
             numpy_helper.from_array(np.array(0.5, np.float32), "half"),
             numpy_helper.from_array(np.array(0.0, np.float32), "no_ratio"),
             numpy_helper.from_array(np.array(False), "inference"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    nodes = [helper.make_node("Relu", ["x"], ["t"]),
             helper.make_node("Pad", ["t", "no_pads"], ["u"]),
             helper.make_node("Dropout", ["u", "no_ratio", "inference"], ["d", "mask"]),
             helper.make_node("Slice", ["d", "zero2", "ends", "axes12"], ["v"]),
             helper.make_node("Slice", ["v", "three", "seven", "axis1"], ["tail"]),
             helper.make_node("Slice", ["v", "zero", "three", "axis1"], ["head"]),
             helper.make_node("Concat", ["tail", "head"], ["rolled"], axis=1),
             helper.make_node("Mul", ["rolled", "two"], ["y"]),
             helper.make_node("Sigmoid", ["x"], ["s"]),
             helper.make_node("Pad", ["s", "pads", "half"], ["padded"]),
             helper.make_node("Pad", ["x", "edge_pads"], ["edge"], mode="edge"),
             helper.make_node("Pad", ["x", "reflect_pads"], ["reflected"], mode="reflect"),
             helper.make_node("Tile", ["x", "repeats"], ["tiled"]),
             helper.make_node("Slice", ["x", "zero", "one", "axis3"], ["column"]),
             helper.make_node("Expand", ["column", "full"], ["expanded_rows"]),
             helper.make_node("Slice", ["x", "zero", "one", "axis1"], ["plane"]),
             helper.make_node("Expand", ["plane", "full"], ["expanded_planes"])]
    x64 = x.astype(np.float64)
    t = np.maximum(x64, 0)
    s = 1 / (1 + np.exp(-x64))
    outputs = [("padded", np.pad(s, ((0, 0), (0, 0), (1, 2), (2, 1)), constant_values=0.5)),
               ("edge", np.pad(x64, ((0, 0), (0, 0), (0, 0), (2, 3)), mode="edge")),
               ("reflected", np.pad(x64, ((0, 0), (1, 1), (0, 0), (2, 1)), mode="reflect")),
               ("tiled", np.tile(x64, (1, 2, 1, 2))),
               ("expanded_rows", np.broadcast_to(x64[:, :, :, :1], x.shape)),
               ("expanded_planes", np.broadcast_to(x64[:, :1], x.shape))]
    write_case(name, nodes, inits, x, 2 * np.roll(t, -3, axis=1), more_outputs=outputs)


window_pads_case("window_pads_in_place_and_row_copies")


def pre_activation_case(name, first, second, activation="relu", spatial=True):
    """A pre-activation layer as DenseNet writes it: two convolutions'
    outputs (`first` and `second` channels) concatenated, normalised
    (BatchNormalization with its own statistics: nothing folds it), the
    activation, then a 1x1 convolution; batch 2. 16 + 16 channels plan in
    channel blocks, 12 + 6 channels-last; without spatial axes (N, C) the
    normalisation is plain. The activation runs inside the normalisation."""
    channels = first + second
    x = rng.standard_normal((2, 8, SIZE, SIZE)).astype(np.float32)
    weights = [(rng.standard_normal((m, 8, 3, 3)) * 0.2).astype(np.float32)
               for m in (first, second)]
    biases = [rng.standard_normal(m).astype(np.float32) for m in (first, second)]
    stats = [rng.uniform(0.5, 1.5, channels), rng.uniform(-0.5, 0.5, channels),
             rng.uniform(-0.5, 0.5, channels), rng.uniform(0.2, 2.0, channels)]
    head = (rng.standard_normal((8, channels, 1, 1)) * 0.3).astype(np.float32)
    inits = [numpy_helper.from_array(v, n) for v, n in
             zip(weights + biases, ["w0", "w1", "b0", "b1"])]
    inits += [numpy_helper.from_array(v.astype(np.float32), n) for v, n in
              zip(stats, ["gamma", "beta", "mean", "var"])]
    inits.append(numpy_helper.from_array(head, "head"))
    x64 = x.astype(np.float64)
    joined = np.concatenate([conv(x64, w.astype(np.float64), b.astype(np.float64))
                             for w, b in zip(weights, biases)], axis=1)
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["c0", "c1"], ["joined"], axis=1)]
    if not spatial:
        nodes.append(helper.make_node("GlobalAveragePool", ["joined"], ["pooled"]))
        nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"]))
        joined = joined.mean(axis=(2, 3))
    gamma, beta, mean, var = (s.astype(np.float32).astype(np.float64) for s in stats)
    shape = (1, -1, 1, 1) if spatial else (1, -1)
    normalised = ((joined - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-3)
                  * gamma.reshape(shape) + beta.reshape(shape))
    nodes.append(helper.make_node("BatchNormalization",
                                  ["joined" if spatial else "flat", "gamma", "beta", "mean", "var"],
                                  ["normalised"], epsilon=1e-3))
    make, reference = STEPS[activation]
    nodes += make("normalised", "activated")
    value = reference(normalised)
    if spatial:
        nodes.append(helper.make_node("Conv", ["activated", "head"], ["y"]))
        value = conv(value, head.astype(np.float64), np.zeros(8), pad=0)
    else:
        nodes[-1].output[0] = "y"
    used = {i for n in nodes for i in n.input}
    inits += [numpy_helper.from_array(np.array(v, np.float32), k)
              for k, v in CONSTANTS.items() if k in used]
    write_case(name, nodes, inits, x, value)


pre_activation_case("pre_activation_batch_norm_relu_blocks", 16, 16)
pre_activation_case("pre_activation_batch_norm_leaky_channels_last", 12, 6, activation="leaky")
pre_activation_case("pre_activation_batch_norm_sigmoid_plain", 16, 16, activation="sigmoid",
                    spatial=False)


def einsum_case(name, equation, shapes, batch=None, opset=14):
    """An Einsum of float inputs `shapes` against numpy.einsum (float64);
    with `batch`, axis 0 of every input is the model's dynamic "N", fed at
    that size."""
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    names = [f"x{i}" for i in range(len(shapes))]
    values = [rng.standard_normal([batch] + list(s[1:]) if batch else s).astype(np.float32)
              for s in shapes]
    expected = np.einsum(equation.replace(" ", ""), *(v.astype(np.float64) for v in values))
    declared = [["N"] + list(s[1:]) if batch else list(s) for s in shapes]
    graph = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=equation)], name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in zip(names, declared)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    files = [(f"input_{i}", v) for i, v in enumerate(values)]
    files.append(("output_0", np.asarray(expected, np.float32)))
    for file, array in files:
        with open(os.path.join(folder, "test_data_set_0", f"{file}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())


# maxvit_t's attention, as torch exports it (upper case, spaces), at a dynamic batch of 1 and 2
for b in (1, 2):
    einsum_case(f"einsum_maxvit_scores_batch{b}", "B G H I D, B G H J D -> B G H I J",
                [(b, 3, 2, 7, 5), (b, 3, 2, 7, 5)], batch=b)
    einsum_case(f"einsum_maxvit_values_batch{b}", "B G H I J, B G H J D -> B G H I D",
                [(b, 3, 2, 7, 7), (b, 3, 2, 7, 5)], batch=b)
    einsum_case(f"einsum_attention_scores_batch{b}", "bhqd,bhkd->bhqk",
                [(b, 3, 5, 4), (b, 3, 6, 4)], batch=b)
einsum_case("einsum_ellipsis_broadcast_matmul", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)])
einsum_case("einsum_outer", "i,j->ij", [(3,), (4,)])
einsum_case("einsum_transpose", "ij->ji", [(3, 4)])
einsum_case("einsum_sum_all", "ij->", [(3, 4)])
einsum_case("einsum_implicit_matmul", "ij,jk", [(3, 4), (4, 5)])
einsum_case("einsum_batch_outer", "bi,bj->bij", [(2, 3), (2, 4)])
einsum_case("einsum_elementwise", "ij,ij->ij", [(3, 4), (3, 4)])
einsum_case("einsum_two_contracted", "bkij,bjkl->bli", [(2, 3, 4, 5), (2, 5, 3, 6)])
einsum_case("einsum_row_dot", "ab,ab->a", [(3, 4), (3, 4)])
einsum_case("einsum_own_labels_summed", "ab,cb->", [(3, 4), (5, 4)])
einsum_case("einsum_trace", "ii", [(4, 4)])
einsum_case("einsum_opset12_sum_rows", "ij->i", [(3, 4)], opset=12)
# the ONNX node tests' float64 equations (float64 MatMul and ReduceSum do not run on the CPU
# backend), in float32
einsum_case("einsum_node_batch_matmul", "bij, bjk -> bik", [(5, 2, 3), (5, 3, 4)], opset=12)
einsum_case("einsum_node_inner_prod", "i,i", [(5,), (5,)], opset=12)
einsum_case("einsum_node_batch_diagonal", "...ii ->...i", [(3, 5, 5)], opset=12)


def variadic_case(name, op, order):
    """Sum, Mean, Max or Min of two convolutions' outputs (16 channels:
    channel blocks on the CPU) and the first one's global average pool
    (broadcast), in `order` (indices into them; a repeated one is read
    twice), before a 1x1 projection: one step per further input, in the
    output's layout, and no step may find an input already overwritten."""
    x = rng.standard_normal((2, 8, SIZE, SIZE)).astype(np.float32)
    weights = {k: (rng.standard_normal(s) * 0.2).astype(np.float32) for k, s in
               (("w1", (16, 8, 3, 3)), ("w2", (16, 8, 3, 3)), ("wq", (8, 16, 1, 1)))}
    inits = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    names = ["c1", "c2", "p"]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["c1"], ["p"]),
             helper.make_node(op, [names[i] for i in order], ["v"]),
             helper.make_node("Conv", ["v", "wq"], ["y"])]
    f64 = lambda v: v.astype(np.float64)
    c1, c2 = conv(f64(x), f64(weights["w1"]), np.zeros(16)), conv(f64(x), f64(weights["w2"]), np.zeros(16))
    values = [c1, c2, c1.mean(axis=(2, 3), keepdims=True)]
    operands = np.broadcast_arrays(*[values[i] for i in order])
    combined = {"Sum": lambda a: np.sum(a, axis=0), "Mean": lambda a: np.mean(a, axis=0),
                "Max": lambda a: np.max(a, axis=0), "Min": lambda a: np.min(a, axis=0)}[op]
    write_case(name, nodes, inits, x, conv(combined(np.stack(operands)), f64(weights["wq"]),
                                           np.zeros(8), pad=0))


variadic_case("variadic_max_blocks", "Max", [0, 1, 2])
variadic_case("variadic_sum_blocks_repeated", "Sum", [0, 2, 1, 0])
variadic_case("variadic_mean_blocks", "Mean", [2, 0, 1])
variadic_case("variadic_min_one_input", "Min", [1])


def index_case(name, op, x, inits, expected, opset=16, **attributes):
    """`op` of the input x and constants `inits` (names i0, i1...: their
    order is the node's), large enough for the CPU kernels to deal their
    work to several threads."""
    tensors = [numpy_helper.from_array(v, f"i{k}") for k, v in enumerate(inits)]
    node = helper.make_node(op, ["x"] + [t.name for t in tensors], ["y"], **attributes)
    write_case(name, [node], tensors, x, expected, opset=opset)


big = rng.standard_normal((6, 300, 20)).astype(np.float32)
gather_at = rng.integers(-300, 300, (6, 700, 20)).astype(np.int64)
index_case("gather_elements_large", "GatherElements", big, [gather_at],
           np.take_along_axis(big, gather_at, axis=1), axis=1)
# every line's updates at distinct positions (repeated ones have no order in numpy)
scatter_at = np.argsort(rng.random((6, 300, 20)), axis=1)[:, :250].astype(np.int64) - 300
scatter_updates = rng.standard_normal((6, 250, 20)).astype(np.float32)
scattered = big.copy()
np.put_along_axis(scattered, scatter_at, scatter_updates, axis=1)
index_case("scatter_elements_large", "ScatterElements", big, [scatter_at, scatter_updates],
           scattered, axis=-2)
scatter_sum = big.copy()
np.add.at(scatter_sum, (np.arange(6)[:, None, None], scatter_at % 300 // 7,
                        np.arange(20)[None, None, :]), scatter_updates)
index_case("scatter_elements_add_repeated", "ScatterElements", big,
           [scatter_at % 300 // 7, scatter_updates], scatter_sum, axis=1, reduction="add")
rows_at = rng.integers(-300, 300, (6, 900, 1)).astype(np.int64)
index_case("gather_nd_batch_large", "GatherND", big, [rows_at],
           np.stack([big[b][rows_at[b, :, 0]] for b in range(6)]), batch_dims=1)
index_case("cumsum_reverse_exclusive_large", "CumSum", big, [np.array(1, np.int64)],
           np.cumsum(big.astype(np.float64)[:, ::-1], axis=1)[:, ::-1] - big,
           exclusive=1, reverse=1)
index_case("trilu_lower_large", "Trilu", big, [np.array(-3, np.int64)], np.tril(big, -3),
           upper=0)
hard = big.reshape(6, 6000)
hardmax = np.zeros_like(hard)
hardmax[np.arange(6), np.argmax(hard, axis=1)] = 1
index_case("hardmax_large", "Hardmax", hard, [], hardmax, opset=13)
# before opset 13, Hardmax's rows are the axes from `axis` on, flattened
flat = np.zeros((6, 6000), np.float32)
flat[np.arange(6), np.argmax(big.reshape(6, 6000), axis=1)] = 1
index_case("hardmax_opset11_flattened", "Hardmax", big, [], flat.reshape(big.shape), opset=11,
           axis=1)
# OneHot's values (off, on) are the input; its indices and depth constants
hot_at = rng.integers(-12, 12, (300, 40)).astype(np.int64)
write_case("one_hot_axis1_large",
           [helper.make_node("OneHot", ["i", "depth", "x"], ["y"], axis=1)],
           [numpy_helper.from_array(hot_at, "i"), numpy_helper.from_array(np.array(12.0), "depth")],
           np.array([0.5, 2.0], np.float32),
           np.where(np.arange(12)[None, :, None] == (hot_at % 12)[:, None, :], 2.0, 0.5),
           opset=11)
def depth_to_space(v, b, mode):
    n, c, h, w = v.shape
    if mode == "DCR":
        t = v.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = v.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


def space_to_depth(v, b):
    n, c, h, w = v.shape
    t = v.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


def group_norm(v, groups, scale, bias, epsilon=1e-5):
    n, c = v.shape[:2]
    g = v.reshape(n, groups, -1)
    g = (g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + epsilon)
    shape = (1, c) + (1,) * (v.ndim - 2)
    return g.reshape(v.shape) * scale.reshape(shape) + bias.reshape(shape)


def lrn(v, size, alpha=1e-4, beta=0.75, bias=1.0):
    squares = np.zeros_like(v)
    c = v.shape[1]
    for k in range(c):
        first, last = max(0, k - (size - 1) // 2), min(c - 1, k + size - 1 - (size - 1) // 2)
        squares[:, k] = (v[:, first:last + 1] ** 2).sum(axis=1)
    return v / (bias + alpha / size * squares) ** beta


def between_convs_case(name, channels, make, reference, out_channels, opset=14):
    """Conv (into `channels`, at batch 2: the convolutions' blocked or
    channels-last layout) -> the operator under test -> Conv: the operator
    takes plain tensors, reordered around it. make(t, o) gives its nodes and
    constants; reference(v) its float64 value; out_channels its output's."""
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w1 = (rng.standard_normal((channels, 3, 3, 3)) * 0.3).astype(np.float32)
    b1 = rng.standard_normal(channels).astype(np.float32)
    w2 = (rng.standard_normal((8, out_channels, 3, 3)) * 0.2).astype(np.float32)
    b2 = rng.standard_normal(8).astype(np.float32)
    hidden = conv(x.astype(np.float64), w1.astype(np.float64), b1.astype(np.float64))
    nodes, inits = make("hidden", "middle")
    y = conv(reference(hidden), w2.astype(np.float64), b2.astype(np.float64))
    nodes = ([helper.make_node("Conv", ["x", "w1", "b1"], ["hidden"], pads=[1, 1, 1, 1])] + nodes +
             [helper.make_node("Conv", ["middle", "w2", "b2"], ["y"], pads=[1, 1, 1, 1])])
    inits += [numpy_helper.from_array(a, k) for a, k in
              ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))]
    write_case(name, nodes, inits, x, y, opset=opset)


def single_node(op, **attrs):
    return lambda t, o: ([helper.make_node(op, [t], [o], **attrs)], [])


def affine_node(op, scale, bias, **attrs):
    """`op` reading constants "scale" and "bias" (float32 `scale`, `bias`)."""
    return lambda t, o: ([helper.make_node(op, [t, "scale", "bias"], [o], **attrs)],
                         [numpy_helper.from_array(scale.astype(np.float32), "scale"),
                          numpy_helper.from_array(bias.astype(np.float32), "bias")])


for mode in ("DCR", "CRD"):
    between_convs_case(f"between_convs_depth_to_space_{mode.lower()}", 16,
                       single_node("DepthToSpace", blocksize=2, mode=mode),
                       lambda v, mode=mode: depth_to_space(v, 2, mode), 4)
between_convs_case("between_convs_space_to_depth", 16, single_node("SpaceToDepth", blocksize=2),
                   lambda v: space_to_depth(v, 2), 64)
for channels in (16, 12):
    s, b = (rng.standard_normal(channels).astype(np.float32) for _ in range(2))
    between_convs_case(f"between_convs_instance_norm_{channels}", channels,
                       affine_node("InstanceNormalization", s, b, epsilon=1e-3),
                       lambda v, s=s, b=b: group_norm(v, v.shape[1], s.astype(np.float64),
                                                      b.astype(np.float64), 1e-3), channels)
# GroupNormalization: opset 18's scale and bias per group, opset 21's per channel
s18, b18 = (rng.standard_normal(4).astype(np.float32) for _ in range(2))
between_convs_case("between_convs_group_norm_opset18", 16,
                   affine_node("GroupNormalization", s18, b18, num_groups=4),
                   lambda v: group_norm(v, 4, np.repeat(s18, 4).astype(np.float64),
                                        np.repeat(b18, 4).astype(np.float64)), 16, opset=18)
s21, b21 = (rng.standard_normal(16).astype(np.float32) for _ in range(2))
between_convs_case("between_convs_group_norm_opset21", 16,
                   affine_node("GroupNormalization", s21, b21, num_groups=4, epsilon=1e-4),
                   lambda v: group_norm(v, 4, s21.astype(np.float64), b21.astype(np.float64),
                                        1e-4), 16, opset=21)
between_convs_case("between_convs_lrn", 16, single_node("LRN", size=5, alpha=1e-3, beta=0.75,
                                                         bias=2.0),
                   lambda v: lrn(v, 5, 1e-3, 0.75, 2.0), 16)
between_convs_case("between_convs_mean_variance_norm", 16,
                   single_node("MeanVarianceNormalization"),
                   lambda v: (v - v.mean(axis=(0, 2, 3), keepdims=True))
                   / (v.std(axis=(0, 2, 3), keepdims=True) + 1e-9), 16)
for p in (1, 2):
    between_convs_case(f"between_convs_lp_norm_p{p}", 16, single_node("LpNormalization", axis=1, p=p),
                       lambda v, p=p: v / np.linalg.norm(v, ord=p, axis=1, keepdims=True), 16)


def conv_transpose(v, w, stride, output_padding):
    """ConvTranspose without padding, one group: the full output then
    output_padding rows and columns of zeros (the bias is added after)."""
    n, c, h, wd = v.shape
    _, m, kh, kw = w.shape
    y = np.zeros((n, m, (h - 1) * stride + kh + output_padding,
                  (wd - 1) * stride + kw + output_padding))
    for i in range(kh):
        for j in range(kw):
            y[:, :, i:i + stride * h:stride, j:j + stride * wd:stride] += np.einsum(
                "nchw,cm->nmhw", v, w[:, :, i, j])
    return y


# output_padding past the full output: oneDNN declines it, the plain kernel runs it
dw = (rng.standard_normal((16, 8, 2, 2)) * 0.3).astype(np.float32)
db = rng.standard_normal(8).astype(np.float32)
between_convs_case(
    "between_convs_conv_transpose_output_padding", 16,
    lambda t, o: ([helper.make_node("ConvTranspose", [t, "dw", "db"], [o], strides=[2, 2],
                                    output_padding=[1, 1])],
                  [numpy_helper.from_array(dw, "dw"), numpy_helper.from_array(db, "db")]),
    lambda v: conv_transpose(v, dw.astype(np.float64), 2, 1) + db.reshape(1, -1, 1, 1), 8)


def roi_align(image, rois, batch, out_h, out_w, ratio, scale, mode, half_pixel):
    """ONNX Runtime's RoiAlign (which ONNX's reference follows): per bin the
    mean of its bilinear samples, or the largest weighted neighbour of any."""
    _, c, height, width = image.shape
    y = np.zeros((len(rois), c, out_h, out_w))
    offset = 0.5 if half_pixel else 0.0
    for r, (box, n) in enumerate(zip(rois.astype(np.float64), batch)):
        x0, y0, x1, y1 = box * scale - offset
        roi_w, roi_h = x1 - x0, y1 - y0
        if not half_pixel:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / out_h, roi_w / out_w
        grid_h = ratio if ratio > 0 else math.ceil(bin_h)
        grid_w = ratio if ratio > 0 else math.ceil(bin_w)
        for ph in range(out_h):
            for pw in range(out_w):
                samples = []
                for iy in range(grid_h):
                    sy = y0 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                    for ix in range(grid_w):
                        sx = x0 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                        if sy < -1 or sy > height or sx < -1 or sx > width:
                            samples.append(np.zeros((4, c)))
                            continue
                        sy, sx = max(sy, 0.0), max(sx, 0.0)
                        ya, xa = int(sy), int(sx)
                        yb, xb = ya + 1, xa + 1
                        if ya >= height - 1:
                            ya = yb = height - 1
                            sy = ya
                        if xa >= width - 1:
                            xa = xb = width - 1
                            sx = xa
                        ly, lx = sy - ya, sx - xa
                        v = image[n].astype(np.float64)
                        samples.append(np.stack([(1 - ly) * (1 - lx) * v[:, ya, xa],
                                                 (1 - ly) * lx * v[:, ya, xb],
                                                 ly * (1 - lx) * v[:, yb, xa],
                                                 ly * lx * v[:, yb, xb]]))
                samples = np.array(samples)
                y[r, :, ph, pw] = (samples.max(axis=(0, 1)) if mode == "max"
                                   else samples.sum(axis=1).sum(axis=0) / max(grid_h * grid_w, 1))
    return y


def roi_align_case(name, mode, half_pixel, ratio):
    x = rng.standard_normal((2, 5, 12, 10)).astype(np.float32)
    rois = np.array([[0.5, 1.0, 7.5, 9.0], [2.0, 0.0, 9.5, 11.5], [-1.0, 3.0, 4.0, 5.0],
                     [1.0, 1.0, 1.2, 1.4]], np.float32)
    batch = np.array([0, 1, 1, 0], np.int64)
    attrs = dict(mode=mode, output_height=3, output_width=4, sampling_ratio=ratio,
                 spatial_scale=0.9)
    opset = 10
    if half_pixel:
        attrs["coordinate_transformation_mode"] = "half_pixel"
        opset = 16
    nodes = [helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], **attrs)]
    inits = [numpy_helper.from_array(rois, "rois"), numpy_helper.from_array(batch, "batch")]
    write_case(name, nodes, inits, x,
               roi_align(x, rois, batch, 3, 4, ratio, 0.9, mode, half_pixel), opset=opset)


roi_align_case("roi_align_max_half_pixel", "max", True, 2)
roi_align_case("roi_align_avg_opset10_adaptive", "avg", False, 0)
roi_align_case("roi_align_max_opset10", "max", False, 0)


def reflect(v, low, high):
    span = high - low
    if v < low or v > high:
        past = low - v if v < low else v - high
        folds = int(past / span)
        rest = past - folds * span
        v = low + rest if (v < low) == (folds % 2 == 0) else high - rest
    return v


def grid_sample(image, grid, mode, padding, align_corners):
    """ONNX Runtime's GridSample: a point outside the image is brought in
    (border: clamped; reflection: folded) in both coordinates, then sampled
    with padded pixel reads."""
    n, c, height, width = image.shape
    out_h, out_w = grid.shape[1:3]
    size = (width, height)
    low = [0.0 if align_corners else -0.5] * 2
    high = [s - 1.0 if align_corners else s - 0.5 for s in size]
    y = np.zeros((n, c, out_h, out_w))

    def pixel(img, row, col):
        if padding == "zeros":
            return img[:, row, col] if 0 <= row < height and 0 <= col < width else 0.0
        if padding == "reflection":
            col, row = int(reflect(col, low[0], high[0])), int(reflect(row, low[1], high[1]))
        return img[:, min(max(row, 0), height - 1), min(max(col, 0), width - 1)]

    for b in range(n):
        img = image[b].astype(np.float64)
        for i in range(out_h):
            for j in range(out_w):
                at = [((g + 1) / 2 * (s - 1) if align_corners else ((g + 1) * s - 1) / 2)
                      for g, s in zip(grid[b, i, j].astype(np.float64), size)]
                if mode == "nearest":
                    at = [float(np.rint(a)) for a in at]
                if any(a < lo or a > hi for a, lo, hi in zip(at, low, high)):
                    if padding == "border":
                        at = [min(max(a, 0.0), s - 1.0) for a, s in zip(at, size)]
                    elif padding == "reflection":
                        at = [reflect(a, lo, hi) for a, lo, hi in zip(at, low, high)]
                if mode == "nearest":
                    y[b, :, i, j] = pixel(img, int(at[1]), int(at[0]))
                    continue
                taps = 4 if mode == "bicubic" else 2
                x0, y0 = (math.floor(a) - (taps == 4) for a in at)
                if taps == 4:
                    weights = [cubic_weights(a - math.floor(a)) for a in at]
                else:
                    weights = [[1 - (a - math.floor(a)), a - math.floor(a)] for a in at]
                y[b, :, i, j] = sum(weights[1][r] * weights[0][q] * pixel(img, y0 + r, x0 + q)
                                    for r in range(taps) for q in range(taps))
    return y


def grid_sample_case(name, mode, padding, align_corners):
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = (rng.standard_normal((2, 4, 7, 2)) * 0.9).astype(np.float32)
    grid[0, 0, :3] = [[1.6, -1.7], [-2.9, 3.3], [0.999, -1.0]]  # outside, far outside, the edge
    nodes = [helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding,
                              align_corners=int(align_corners))]
    write_case(name, nodes, [numpy_helper.from_array(grid, "grid")], x,
               grid_sample(x, grid, mode, padding, align_corners), opset=16)


for mode in ("bilinear", "nearest", "bicubic"):
    for padding in ("zeros", "border", "reflection"):
        grid_sample_case(f"grid_sample_{mode}_{padding}", mode, padding, False)
grid_sample_case("grid_sample_bicubic_reflection_align_corners", "bicubic", "reflection", True)


def grid_sample_empty_case(name, padding):
    """An image of no rows (found by fuzz_model: border and reflection
    padding clamped the row to -1 and read before the image): every output
    is padding, 0."""
    x = np.zeros((2, 3, 0, 6), np.float32)
    grid = (rng.standard_normal((2, 4, 7, 2)) * 0.9).astype(np.float32)
    nodes = [helper.make_node("GridSample", ["x", "grid"], ["y"], mode="bicubic",
                              padding_mode=padding, align_corners=1)]
    write_case(name, nodes, [numpy_helper.from_array(grid, "grid")], x,
               np.zeros((2, 3, 4, 7), np.float32), opset=16)


grid_sample_empty_case("grid_sample_empty_image_reflection", "reflection")
grid_sample_empty_case("grid_sample_empty_image_border", "border")


def resize_coefficients(kind, ratio, scale, antialias):
    """ONNX's reference weights of the inputs around a point `ratio` (in
    (0, 1]) past the input before it: linear or cubic (a = -0.75), widened
    and normalised when antialiasing a downsampling."""
    s = min(scale, 1.0) if antialias else 1.0
    reach = 2 if kind == "cubic" else 1
    first = math.floor(-reach / s) + 1

    def kernel(d):
        d = abs(d)
        if kind == "linear":
            return max(0.0, 1 - d)
        a = -0.75
        return (((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1
                else ((a * d - 5 * a) * d + 8 * a) * d - 4 * a if d < 2 else 0.0)

    weights = np.array([kernel((i - ratio) * s) for i in range(first, 2 - first)])
    return weights / weights.sum() if antialias else weights


def resize_matrix(size, out, scale, kind, antialias):
    """half_pixel resizing of one axis as an (out, size) matrix: each output
    reads the n inputs nearest its source (preferring the lower ones, edge
    inputs repeated), as ONNX's reference picks them."""
    m = np.zeros((out, size))
    for o in range(out):
        source = (o + 0.5) / scale - 0.5
        ratio = 1.0 if source == math.floor(source) else source - math.floor(source)
        weights = resize_coefficients(kind, ratio, scale, antialias)
        n = len(weights)
        nearest = sorted(sorted(range(-n, size + n), key=lambda i: (abs(source - i), i))[:n])
        for i, w in zip(nearest, weights):
            m[o, min(max(i, 0), size - 1)] += w
    return m


def resize18_case(name, shape, kind, axes=None, scales=None, sizes=None, policy="stretch",
                  antialias=0):
    """Resize (opset 18) of the listed axes (all without `axes`) by scales or
    sizes (one scale for all with a keep_aspect_ratio_policy), against the
    separable float64 reference above."""
    x = rng.standard_normal(shape).astype(np.float32)
    listed = axes if axes is not None else list(range(len(shape)))
    factor = {}
    if scales is not None:
        factor = dict(zip(listed, scales))
    else:
        ratios = [s / shape[d] for d, s in zip(listed, sizes)]
        shared = {"not_larger": min(ratios), "not_smaller": max(ratios)}.get(policy)
        factor = {d: shared if shared else r for d, r in zip(listed, ratios)}
    value = x.astype(np.float64)
    for d in listed:
        if scales is not None:
            out = int(shape[d] * factor[d])
        elif policy == "stretch":
            out = sizes[listed.index(d)]
        else:
            out = int(factor[d] * shape[d] + 0.5)
        m = resize_matrix(shape[d], out, factor[d], kind, antialias)
        value = np.moveaxis(np.tensordot(m, np.moveaxis(value, d, 0), axes=1), 0, d)
    attrs = dict(mode=kind, antialias=antialias, keep_aspect_ratio_policy=policy)
    if axes is not None:
        attrs["axes"] = axes
    inputs = ["x", "", "scales"] if scales is not None else ["x", "", "", "sizes"]
    inits = [numpy_helper.from_array(np.array(scales, np.float32), "scales")
             if scales is not None else numpy_helper.from_array(np.array(sizes, np.int64), "sizes")]
    write_case(name, [helper.make_node("Resize", inputs, ["y"], **attrs)], inits, x, value,
               opset=18)


resize18_case("resize18_antialias_linear_down", (1, 2, 12, 10), "linear",
              scales=[1, 1, 0.4, 0.55], antialias=1)
resize18_case("resize18_antialias_cubic_down_axes", (2, 3, 14, 11), "cubic", axes=[2, 3],
              scales=[0.5, 0.3], antialias=1)
resize18_case("resize18_antialias_linear_up_axes", (1, 2, 5, 6), "linear", axes=[3],
              scales=[1.7], antialias=1)
resize18_case("resize18_sizes_not_larger_axes_reversed", (1, 2, 9, 12), "linear", axes=[3, 2],
              sizes=[7, 6], policy="not_larger")
resize18_case("resize18_sizes_not_smaller_cubic", (2, 1, 8, 10), "cubic", axes=[-2, -1],
              sizes=[5, 4], policy="not_smaller")
# rows longer than the CPU's stack blend (8192 floats): each output sums its tap rows itself
resize18_case("resize18_linear_rows_past_the_blend", (1, 1, 3, 8300), "linear", axes=[2, 3],
              scales=[2.0, 0.75])


def spread_case(name, op, shape, reference, **attrs):
    """`op` alone on a tensor large enough to be dealt to several threads."""
    x = rng.standard_normal(shape).astype(np.float32)
    write_case(name, [helper.make_node(op, ["x"], ["y"], **attrs)], [], x,
               reference(x.astype(np.float64)))


spread_case("mean_variance_norm_spatial_large", "MeanVarianceNormalization", (4, 64, 32, 32),
            lambda v: (v - v.mean(axis=(2, 3), keepdims=True))
            / (v.std(axis=(2, 3), keepdims=True) + 1e-9), axes=[2, 3])
spread_case("lp_norm_rows_large", "LpNormalization", (64, 3, 512),
            lambda v: v / np.linalg.norm(v, axis=-1, keepdims=True))
def recurrent_reference(op, x, w, r, b, lengths, h0, c0=None, peepholes=None,
                        direction="forward", linear_before_reset=0, functions=None, clip=None):
    """ONNX's LSTM (gates i, o, f, c), GRU (z, r, h) or RNN in float64 on X
    [seq, batch, input]: Y [seq, directions, batch, hidden] (zeros past each
    item's length), Y_h and Y_c [directions, batch, hidden] (zeros for an empty item).
    `functions`: per direction its (f, g, h) activations (LSTM's; GRU's f, g; RNN's f), else
    ONNX's defaults; `clip` bounds every gate's input."""
    seq, batch, _ = x.shape
    directions, hidden = w.shape[0], r.shape[2]
    defaults = {"LSTM": (sigmoid, np.tanh, np.tanh), "GRU": (sigmoid, np.tanh), "RNN": (np.tanh,)}
    functions = functions or [defaults[op]] * directions
    bound = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    y = np.zeros((seq, directions, batch, hidden))
    y_h, y_c = np.zeros((directions, batch, hidden)), np.zeros((directions, batch, hidden))
    for d in range(directions):
        wd, rd = w[d].astype(np.float64), r[d].astype(np.float64)
        wb, rb = np.split(b[d].astype(np.float64), 2)
        fn = functions[d]
        f, g = (lambda v: fn[0](bound(v))), (lambda v: fn[-1 if op == "RNN" else 1](bound(v)))
        for n in range(batch):
            h, c = h0[d, n].astype(np.float64), c0[d, n].astype(np.float64)
            steps = range(lengths[n])
            for t in (reversed(steps) if d == 1 or direction == "reverse" else steps):
                if op == "LSTM":
                    gi, go, gf, gc = np.split(x[t, n] @ wd.T + h @ rd.T + wb + rb, 4)
                    pi, po, pf = np.split(peepholes[d], 3)
                    c = f(gf + pf * c) * c + f(gi + pi * c) * g(gc)
                    h = f(go + po * c) * fn[2](c)
                elif op == "GRU":
                    xz, xr, xh = np.split(x[t, n] @ wd.T + wb, 3)
                    rz, rr, rh = np.split(rd, 3)
                    bz, br, bh = np.split(rb, 3)
                    z, reset = f(xz + h @ rz.T + bz), f(xr + h @ rr.T + br)
                    cand = g(xh + reset * (h @ rh.T + bh) if linear_before_reset
                             else xh + (reset * h) @ rh.T + bh)
                    h = (1 - z) * cand + z * h
                else:
                    h = f(x[t, n] @ wd.T + h @ rd.T + wb + rb)
                y[t, d, n] = h
            if lengths[n]:  # an empty item's last states: zeros, as ONNX Runtime gives
                y_h[d, n], y_c[d, n] = h, c
    return y, y_h, y_c


def recurrent_case(name, op, seq, batch, inputs, hidden, lengths, direction="forward",
                   layout=0, linear_before_reset=0, outputs=("Y", "Y_h", "Y_c"),
                   activations=None, clip=None):
    """One LSTM/GRU/RNN node with constant weights, biases and peepholes, fed
    X, sequence_lens and the initial states; the outputs named in `outputs`
    (the others left out). `activations`: (attributes, the reference's
    functions per direction)."""
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    directions = 2 if direction == "bidirectional" else 1
    x = rng.standard_normal((seq, batch, inputs)).astype(np.float32)
    w = (0.3 * rng.standard_normal((directions, gates * hidden, inputs))).astype(np.float32)
    r = (0.3 * rng.standard_normal((directions, gates * hidden, hidden))).astype(np.float32)
    b = (0.3 * rng.standard_normal((directions, 2 * gates * hidden))).astype(np.float32)
    p = (0.3 * rng.standard_normal((directions, 3 * hidden))).astype(np.float32)
    h0 = rng.standard_normal((directions, batch, hidden)).astype(np.float32)
    c0 = rng.standard_normal((directions, batch, hidden)).astype(np.float32)
    lens = np.array(lengths, np.int32)
    y, y_h, y_c = recurrent_reference(op, x, w, r, b, lens, h0, c0, p, direction,
                                      linear_before_reset, activations and activations[1], clip)
    feeds = [("X", x), ("sequence_lens", lens), ("initial_h", h0)]
    if op == "LSTM":
        feeds.append(("initial_c", c0))
    if layout:  # batch first
        x, h0, c0 = x.transpose(1, 0, 2), h0.transpose(1, 0, 2), c0.transpose(1, 0, 2)
        feeds = [(k, {"X": x, "initial_h": h0, "initial_c": c0}.get(k, v)) for k, v in feeds]
        y, y_h, y_c = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)
    node_inputs = ["X", "W", "R", "B", "sequence_lens", "initial_h"]
    node_inputs += ["initial_c", "P"] if op == "LSTM" else []
    wanted = [(n, v) for n, v in zip(("Y", "Y_h", "Y_c"), (y, y_h, y_c))
              if n in outputs and (n != "Y_c" or op == "LSTM")]
    names = [n if n in outputs else "" for n in ("Y", "Y_h", "Y_c")[:3 if op == "LSTM" else 2]]
    attributes = {"hidden_size": hidden, "direction": direction}
    if layout:
        attributes["layout"] = layout
    if op == "GRU":
        attributes["linear_before_reset"] = linear_before_reset
    if activations:
        attributes.update(activations[0])
    if clip:
        attributes["clip"] = clip
    node = helper.make_node(op, node_inputs, names, **attributes)
    inits = [numpy_helper.from_array(v, k) for k, v in (("W", w), ("R", r), ("B", b), ("P", p))
             if k in node_inputs]
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(k, TensorProto.INT32 if k == "sequence_lens"
                                       else TensorProto.FLOAT, v.shape) for k, v in feeds],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in wanted], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    files = [(f"input_{i}", v) for i, (_, v) in enumerate(feeds)]
    files += [(f"output_{i}", v.astype(np.float32)) for i, (_, v) in enumerate(wanted)]
    for file, array in files:
        with open(os.path.join(folder, "test_data_set_0", f"{file}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())


# OCR recognisers' and speech models' recurrences: 40 steps, items of different lengths
recurrent_case("lstm_bidirectional_lengths", "LSTM", 40, 3, 24, 32, [40, 17, 1],
               direction="bidirectional")
recurrent_case("lstm_reverse_batch_first_last_states", "LSTM", 9, 3, 5, 8, [9, 0, 4],
               direction="reverse", layout=1, outputs=("Y_h", "Y_c"))
recurrent_case("gru_linear_before_reset", "GRU", 12, 3, 7, 16, [12, 5, 9],
               direction="bidirectional", linear_before_reset=1)
recurrent_case("gru_reset_before_linear_only_y", "GRU", 6, 2, 4, 8, [6, 3], outputs=("Y",))
recurrent_case("rnn_bidirectional_batch_first", "RNN", 10, 2, 6, 12, [4, 10],
               direction="bidirectional", layout=1)
# more items than the kernel runs together (4): blocks of items of different lengths
recurrent_case("lstm_blocks_of_items", "LSTM", 12, 7, 6, 16, [5, 12, 0, 12, 3, 7, 1],
               direction="bidirectional")
recurrent_case("gru_blocks_of_items", "GRU", 8, 6, 5, 12, [8, 2, 8, 5, 0, 6],
               direction="reverse", layout=1)
# activations other than the defaults (those taking alpha or beta consume activation_alpha
# and activation_beta in order), and clip
recurrent_case("rnn_relu_leaky_relu", "RNN", 7, 2, 4, 6, [7, 5], direction="bidirectional",
               activations=({"activations": ["Relu", "LeakyRelu"], "activation_alpha": [0.2]},
                            [(lambda v: np.maximum(v, 0),),
                             (lambda v: np.where(v > 0, v, 0.2 * v),)]))
recurrent_case("gru_hard_sigmoid_softsign", "GRU", 6, 2, 3, 5, [6, 4],
               activations=({"activations": ["HardSigmoid", "Softsign"],
                             "activation_alpha": [0.3], "activation_beta": [0.4]},
                            [(lambda v: np.clip(0.3 * v + 0.4, 0, 1), lambda v: v / (1 + abs(v)))]))
recurrent_case("lstm_clip_scaled_tanh", "LSTM", 6, 2, 3, 5, [6, 3], clip=0.7,
               activations=({"activations": ["Sigmoid", "ScaledTanh", "Elu"],
                             "activation_alpha": [1.5, 0.8], "activation_beta": [0.5]},
                            [(sigmoid, lambda v: 1.5 * np.tanh(0.5 * v),
                              lambda v: np.where(v >= 0, v, 0.8 * (np.exp(v) - 1)))]))
