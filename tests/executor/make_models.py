#!/usr/bin/env python3
"""Writes the loader's test models into OUTDIR: one good model (dynamic batch,
raw and typed initializers), the same with external data, and one broken
model per validation rule. Uses Debian's python3-onnx."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import onnx_numpy  # noqa: E402,F401  (before onnx)

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

OUT = sys.argv[1]
rng = np.random.default_rng(7)


def save(model, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(model.SerializeToString())


def model_of(nodes, inputs, outputs, initializers=(), opset=13, domain=""):
    graph = helper.make_graph(nodes, "test", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])


image = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 8, 8])
scores = helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", 5])
conv_w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv_w")
gemm_w = helper.make_tensor("gemm_w", TensorProto.FLOAT, [5, 4],
                            rng.standard_normal(20).astype(np.float32).tolist())  # typed field
shape_c = helper.make_tensor("flat_shape", TensorProto.INT64, [2], [0, -1])
good_nodes = [
    helper.make_node("Conv", ["image", "conv_w"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["conv"], ["relu"], name="relu"),
    helper.make_node("GlobalAveragePool", ["relu"], ["pool"], name="pool"),
    helper.make_node("Reshape", ["pool", "flat_shape"], ["flat"], name="flatten"),
    helper.make_node("Gemm", ["flat", "gemm_w"], ["scores"], name="classifier", transB=1),
]
good = model_of(good_nodes, [image], [scores], [conv_w, gemm_w, shape_c])
save(good, "good.onnx")

# The same with the convolution weights in a file beside the model.
external = model_of(good_nodes, [image], [scores], [conv_w, gemm_w, shape_c])
weights = external.graph.initializer[0]
payload = weights.raw_data
with open(os.path.join(OUT, "good_weights.bin"), "wb") as f:
    f.write(b"\0" * 16 + payload)
weights.ClearField("raw_data")
weights.data_location = TensorProto.EXTERNAL
for key, value in (("location", "good_weights.bin"), ("offset", "16"), ("length", str(len(payload)))):
    entry = weights.external_data.add()
    entry.key, entry.value = key, value
save(external, "external.onnx")

# Initializer data large enough for the loader to lift out of the protobuf
# bytes (model.c, onnx_wire.c) beside a typed one: y = (x + w) * s, w[i] = i / 8.
lifted_w = numpy_helper.from_array(np.arange(4096, dtype=np.float32) / 8, "w")
lifted_s = helper.make_tensor("s", TensorProto.FLOAT, [1], [2.0])
save(model_of([helper.make_node("Add", ["x", "w"], ["sum"]),
               helper.make_node("Mul", ["sum", "s"], ["y"])],
              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4096])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4096])],
              [lifted_w, lifted_s]), "lifted.onnx")

escape = model_of(good_nodes, [image], [scores], [conv_w, gemm_w, shape_c])
escape.CopyFrom(external)
escape.graph.initializer[0].external_data[0].value = "../outside.bin"
save(escape, "escape_external.onnx")


def weight(name, shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


# Every kind of kernel that takes relaid activations, over 64 and 32 channels (whole
# blocks of 4 to 32): convolutions plain -> blocked -> blocked, pools, a 1x1
# convolution of one position, a gate (Sigmoid, Mul), Concat, Resize, a residual Add,
# a global pool to the plain output.
block_nodes = [
    helper.make_node("Conv", ["image", "stem_w", "stem_b"], ["stem"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["stem"], ["stem_relu"]),
    helper.make_node("MaxPool", ["stem_relu"], ["pooled"], kernel_shape=[3, 3], strides=[2, 2],
                     pads=[1, 1, 1, 1]),
    helper.make_node("GlobalAveragePool", ["pooled"], ["squeeze"]),
    helper.make_node("Conv", ["squeeze", "excite_w"], ["excite"]),
    helper.make_node("Sigmoid", ["excite"], ["gate"]),
    helper.make_node("Mul", ["pooled", "gate"], ["gated"]),
    helper.make_node("Conv", ["gated", "left_w"], ["left"]),
    helper.make_node("Conv", ["gated", "right_w"], ["right"], pads=[1, 1, 1, 1]),
    helper.make_node("Concat", ["left", "right"], ["joined"], axis=1),
    helper.make_node("AveragePool", ["joined"], ["smooth"], kernel_shape=[3, 3],
                     pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["smooth", "gated"], ["residual"]),
    helper.make_node("Resize", ["residual", "", "scales"], ["upsampled"], mode="nearest"),
    helper.make_node("Conv", ["upsampled", "head_w"], ["head"], strides=[2, 2], pads=[0, 0, 1, 1]),
    helper.make_node("GlobalMaxPool", ["head"], ["summary"]),
]
save(model_of(block_nodes, [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                                          [1, 3, 16, 16])],
              [helper.make_tensor_value_info("summary", TensorProto.FLOAT, [1, 64, 1, 1])],
              [weight("stem_w", (64, 3, 3, 3)), weight("stem_b", (64,)),
               weight("excite_w", (64, 64, 1, 1)), weight("left_w", (32, 64, 1, 1)),
               weight("right_w", (32, 64, 3, 3)), weight("head_w", (64, 64, 3, 3)),
               numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]),
     "channel_blocks.onnx")

# One model, many batch sizes: 3x3 convolutions over 256 and 64 channels between 1x1
# ones (the runtime relays their tensors to channel blocks), 28x28 (enough positions for
# the CPU backend to re-plan larger batches in slices of batch 1). On 2 threads oneDNN
# packs Winograd weights for batch 1 in a format it refuses at batch 2 (256 channels:
# run a slice of the batch at a time) and takes at batch 2 (64 channels), and 1x1 ones
# in a layout of any batch; the last adds a residual.
replan_nodes = [
    helper.make_node("Conv", ["x", "widen_w"], ["wide"]),
    helper.make_node("Conv", ["wide", "wide3x3_w", "wide3x3_b"], ["wide3x3"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["wide3x3"], ["wide_relu"]),
    helper.make_node("Conv", ["wide_relu", "narrow_w"], ["narrow"]),
    helper.make_node("Conv", ["narrow", "narrow3x3_w"], ["narrow3x3"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["narrow3x3"], ["narrow_relu"]),
    helper.make_node("Conv", ["narrow_relu", "out_w"], ["out"]),
    helper.make_node("Add", ["out", "x"], ["y"]),
]

def save_replan_convs(size, file):
    image = ["batch", 16, size, size]
    save(model_of(replan_nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, image)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, image)],
                  [weight("widen_w", (256, 16, 1, 1)), weight("wide3x3_w", (256, 256, 3, 3)),
                   weight("wide3x3_b", (256,)), weight("narrow_w", (64, 256, 1, 1)),
                   weight("narrow3x3_w", (64, 64, 3, 3)), weight("out_w", (16, 64, 1, 1))]),
         file)


save_replan_convs(28, "replan_convs.onnx")
# The same at 14x14: too few positions for slices to stay; re-planned batches run in
# slices only until the whole batch's primitives are compiled in the background.
save_replan_convs(14, "replan_small.onnx")

# Residual Adds in the forms the CPU backend gives them beside oneDNN's binary post-op,
# re-planned in slices of an earlier batch: a basic block of 32 channels (Winograd, the
# residual summed onto the output) and an inverted residual into 24 channels (channels-last:
# the projection writes channel blocks, moved out with the residual added).
replan_residual_nodes = [
    helper.make_node("Conv", ["x", "stem_w"], ["stem"]),
    helper.make_node("Relu", ["stem"], ["a"]),
    helper.make_node("Conv", ["a", "block1_w", "block1_b"], ["block1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["block1"], ["b"]),
    helper.make_node("Conv", ["b", "block2_w", "block2_b"], ["block2"], pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["block2", "a"], ["summed"]),
    helper.make_node("Relu", ["summed"], ["e"]),
    helper.make_node("Conv", ["e", "narrow_w"], ["f"]),
    helper.make_node("Conv", ["f", "expand_w"], ["expanded"]),
    helper.make_node("Relu", ["expanded"], ["g"]),
    helper.make_node("Conv", ["g", "project_w"], ["projected"]),
    helper.make_node("Add", ["projected", "f"], ["i"]),
    helper.make_node("Conv", ["i", "out_w"], ["y"]),
]
save(model_of(replan_residual_nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                    ["batch", 16, 28, 28])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16, 28, 28])],
              [weight("stem_w", (32, 16, 1, 1)), weight("block1_w", (32, 32, 3, 3)),
               weight("block1_b", (32,)), weight("block2_w", (32, 32, 3, 3)),
               weight("block2_b", (32,)), weight("narrow_w", (24, 32, 1, 1)),
               weight("expand_w", (96, 24, 1, 1)), weight("project_w", (24, 96, 1, 1)),
               weight("out_w", (16, 24, 1, 1))]),
     "replan_residuals.onnx")

# One model, many image sizes: the CPU backend re-plans a new size on its own loops over
# the weights packed for the first (hal/cpu/kernels/direct_conv.c) while oneDNN compiles
# the new size in the background. Every kind of window they take: a strided stem from 3
# plain channels with ReLU6, a dilated depthwise one, 1x1 with HardSwish, groups of 8
# channels, 5x5 with a residual Add, a projection to 24 channels (channels-last), a
# depthwise one on those 24 (a last vector of 8 groups), a deconvolution and an
# asymmetrically padded strided one.
replan_image_nodes = [
    helper.make_node("Conv", ["x", "stem_w", "stem_b"], ["stem"], strides=[2, 2],
                     pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["stem", "zero", "six"], ["stem6"]),
    helper.make_node("Conv", ["stem6", "depth_w"], ["depth"], group=32, dilations=[2, 2],
                     pads=[2, 2, 2, 2]),
    helper.make_node("Relu", ["depth"], ["depth_relu"]),
    helper.make_node("Conv", ["depth_relu", "widen_w", "widen_b"], ["wide"]),
    helper.make_node("HardSwish", ["wide"], ["wide_swish"]),
    helper.make_node("Conv", ["wide_swish", "grouped_w"], ["grouped"], group=6,
                     pads=[1, 1, 1, 1]),
    helper.make_node("Conv", ["grouped", "five_w"], ["five"], pads=[2, 2, 2, 2]),
    helper.make_node("Add", ["five", "wide_swish"], ["summed"]),
    helper.make_node("Relu", ["summed"], ["summed_relu"]),
    helper.make_node("Conv", ["summed_relu", "project_w"], ["projected"]),
    helper.make_node("Conv", ["projected", "depth24_w"], ["projected_depth"], group=24,
                     pads=[1, 1, 1, 1]),
    helper.make_node("ConvTranspose", ["projected_depth", "up_w", "up_b"], ["up"],
                     kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["up", "out_w"], ["y"], strides=[2, 2], pads=[0, 0, 1, 1]),
]
save(model_of(replan_image_nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                 ["batch", 3, "h", "w"])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                             ["batch", 16, "out_h", "out_w"])],
              [weight("stem_w", (32, 3, 3, 3)), weight("stem_b", (32,)),
               numpy_helper.from_array(np.array(0, np.float32), "zero"),
               numpy_helper.from_array(np.array(6, np.float32), "six"),
               weight("depth_w", (32, 1, 3, 3)), weight("widen_w", (48, 32, 1, 1)),
               weight("widen_b", (48,)), weight("grouped_w", (48, 8, 3, 3)),
               weight("five_w", (48, 48, 5, 5)), weight("project_w", (24, 48, 1, 1)),
               weight("depth24_w", (24, 1, 3, 3)),
               weight("up_w", (24, 16, 2, 2)), weight("up_b", (16,)),
               weight("out_w", (16, 16, 3, 3))], opset=14),
     "replan_images.onnx")

# The same for sequences of any length: products of tokens by constant weights (with a
# bias row, a ReLU, a residual Add) and a Gemm with C over their rows.
replan_token_nodes = [
    helper.make_node("MatMul", ["x", "up_w"], ["up"]),
    helper.make_node("Add", ["up", "up_b"], ["up_biased"]),
    helper.make_node("Relu", ["up_biased"], ["up_relu"]),
    helper.make_node("MatMul", ["up_relu", "down_w"], ["down"]),
    helper.make_node("Add", ["down", "x"], ["summed"]),
    helper.make_node("Reshape", ["summed", "rows"], ["flat"]),
    helper.make_node("Gemm", ["flat", "head_w", "head_c"], ["y"]),
]
save(model_of(replan_token_nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                 ["batch", "tokens", 32])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", 40])],
              [weight("up_w", (32, 96)), weight("up_b", (96,)), weight("down_w", (96, 32)),
               numpy_helper.from_array(np.array([-1, 32], np.int64), "rows"),
               weight("head_w", (32, 40)), weight("head_c", (40,))]),
     "replan_tokens.onnx")

# Re-planned batches on 20x20 positions (the fewest the CPU backend runs in slices of an
# earlier batch) and a deconvolution, whose slices share its packing the same way.
replan_deconv_nodes = [
    helper.make_node("Conv", ["x", "expand_w", "expand_b"], ["expanded"]),
    helper.make_node("Relu", ["expanded"], ["expanded_relu"]),
    helper.make_node("ConvTranspose", ["expanded_relu", "up_w", "up_b"], ["y"],
                     kernel_shape=[2, 2], strides=[2, 2]),
]
save(model_of(replan_deconv_nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                  ["batch", 16, 20, 20])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16, 40, 40])],
              [weight("expand_w", (64, 16, 1, 1)), weight("expand_b", (64,)),
               weight("up_w", (64, 16, 2, 2)), weight("up_b", (16,))]),
     "replan_deconv.onnx")

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
broken = {
    "cycle": model_of([helper.make_node("Add", ["x", "b"], ["a"], name="first"),
                       helper.make_node("Relu", ["a"], ["b"], name="second"),
                       helper.make_node("Identity", ["a"], ["y"], name="out")], [x], [y]),
    "missing_input": model_of([helper.make_node("Add", ["x", "nope"], ["y"], name="adder")],
                              [x], [y]),
    "unknown_op": model_of([helper.make_node("FancyOp", ["x"], ["y"], name="fancy")], [x], [y]),
    "bad_arity": model_of([helper.make_node("Add", ["x"], ["y"], name="lonely_add")], [x], [y]),
    "duplicate_output": model_of([helper.make_node("Relu", ["x"], ["y"], name="one"),
                                  helper.make_node("Relu", ["x"], ["y"], name="two")], [x], [y]),
    "custom_domain": model_of([helper.make_node("Relu", ["x"], ["y"], name="ms",
                                                domain="com.microsoft")], [x], [y]),
    # Reshape took its shape as an attribute before opset 5
    "old_opset": model_of([helper.make_node("Reshape", ["x"], ["y"], shape=[-1])], [x], [y],
                          opset=4),
    "new_opset": model_of([helper.make_node("Relu", ["x"], ["y"])], [x], [y], opset=30),
    "no_output_producer": model_of([helper.make_node("Relu", ["x"], ["z"])], [x], [y]),
    # a graph output may not resize the constant or input it names (fuzz_model found it)
    "constant_output_resized": model_of(
        [helper.make_node("Constant", [], ["y"], value=helper.make_tensor(
            "v", TensorProto.FLOAT, [2], [1.0, 2.0]))], [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [15, 5])]),
    "input_output_retyped": model_of([], [x], [helper.make_tensor_value_info(
        "x", TensorProto.INT64, [2])]),
}


def raw_tensor(name, dims, raw):
    """A float tensor built by hand: make_tensor would refuse the bad ones."""
    tensor = TensorProto()
    tensor.name, tensor.data_type = name, TensorProto.FLOAT
    tensor.dims.extend(dims)
    tensor.raw_data = raw
    return tensor


for name, dims, raw in (("short_data", [4], b"\0" * 12), ("negative_dims", [-2], b"")):
    broken[name] = model_of([helper.make_node("Add", ["x", "w"], ["y"], name="adder")], [x], [y],
                            [raw_tensor("w", dims, raw)])
for name, model in broken.items():
    save(model, name + ".onnx")

# Crafted models (issue 12): each loads, and planning or running it must
# refuse it with a clear message (or run it correctly), never read or write
# out of bounds. test_model_loader.c holds the expected messages.
BIG = 1 << 62


def const(name, dtype, dims, values):
    return helper.make_tensor(name, dtype, dims, values)


def single(op, inputs, outputs, initializers=(), opset=13, graph_inputs=None, **attributes):
    """One node `op` named "n" reading `inputs`, with float outputs of unknown shape."""
    node = helper.make_node(op, inputs, outputs, name="n", **attributes)
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
    return model_of([node], graph_inputs or [], outs, initializers, opset=opset)


def float_input(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


f4 = [float_input("x", [4])]
nchw = [float_input("x", [1, 16, 2, 2])]
image4 = [float_input("x", [1, 1, 4, 4])]
params = ("scale", "bias", "mean", "var")
crafted = {
    # 1: sizes that overflow, or exceed the device's memory
    "expand_huge": single("Expand", ["x", "s"], ["y"],
                          [const("s", TensorProto.INT64, [2], [BIG, 4])],
                          graph_inputs=[float_input("x", [1, 1])]),
    "expand_count_overflow": single("Expand", ["x", "s"], ["y"],
                                    [const("s", TensorProto.INT64, [2], [BIG, BIG])],
                                    graph_inputs=[float_input("x", [1, 1])]),
    "constant_of_shape_huge": single("ConstantOfShape", ["s"], ["y"],
                                     [const("s", TensorProto.INT64, [1], [BIG])]),
    "constant_of_shape_beyond_memory": single("ConstantOfShape", ["s"], ["y"],
                                              [const("s", TensorProto.INT64, [1], [1 << 45])]),
    "tile_overflow": single("Tile", ["x", "r"], ["y"], [const("r", TensorProto.INT64, [1], [BIG])],
                            graph_inputs=f4),
    "empty_huge_dims": single("Relu", ["x"], ["y"], graph_inputs=[float_input("x", [0, BIG, 4])]),
    "pool_pads_overflow": single("AveragePool", ["x"], ["y"], graph_inputs=image4,
                                 kernel_shape=[2, 2], pads=[BIG, 0, BIG, 0]),
    # 2: more axes than a tensor can have
    "reducemax_many_axes": single("ReduceMax", ["x"], ["y"], graph_inputs=f4, axes=[0] * 12),
    "squeeze_many_axes": single("Squeeze", ["x"], ["y"], graph_inputs=[float_input("x", [1, 4])],
                                opset=11, axes=[0] * 12),
    # 3: BatchNormalization's parameters against the channels
    "bn_empty_params": single("BatchNormalization", ["x", *params], ["y"],
                              [const(p, TensorProto.FLOAT, [0], []) for p in params],
                              graph_inputs=nchw),
    "bn_short_params": single("BatchNormalization", ["x", *params], ["y"],
                              [const(p, TensorProto.FLOAT, [1], [1.0]) for p in params],
                              graph_inputs=nchw),
    "bn_rank0": single("BatchNormalization", ["x", *params], ["y"],
                       [const(p, TensorProto.FLOAT, [1], [1.0]) for p in params],
                       graph_inputs=[float_input("x", [])]),
    "bn_zero_channels": single("BatchNormalization", ["x", *params], ["y"],
                               [const(p, TensorProto.FLOAT, [0], []) for p in params],
                               graph_inputs=[float_input("x", [1, 0, 2, 2])]),
    # 4: Conv's bias against its output channels
    "conv_empty_bias": single("Conv", ["x", "w", "b"], ["y"],
                              [const("w", TensorProto.FLOAT, [8, 1, 1, 1], [1.0] * 8),
                               const("b", TensorProto.FLOAT, [0], [])], graph_inputs=image4),
    "conv_short_bias": single("Conv", ["x", "w", "b"], ["y"],
                              [const("w", TensorProto.FLOAT, [8, 1, 1, 1], [1.0] * 8),
                               const("b", TensorProto.FLOAT, [2], [1.0, 2.0])],
                              graph_inputs=image4),
    # 5: constant inputs of the wrong type or length
    "expand_float_shape": single("Expand", ["x", "s"], ["y"],
                                 [const("s", TensorProto.FLOAT, [2], [1.0, 4.0])],
                                 graph_inputs=[float_input("x", [1, 1])]),
    "reshape_uint8_shape": single("Reshape", ["x", "s"], ["y"],
                                  [const("s", TensorProto.UINT8, [2], [2, 2])], graph_inputs=f4),
    "split_few_sizes": model_of([helper.make_node("Split", ["x", "s"], ["a", "b", "c"], name="n")],
                                [float_input("x", [6])],
                                [float_input(o, None) for o in "abc"],
                                [const("s", TensorProto.INT64, [2], [3, 3])]),
    "clip_empty_min": single("Clip", ["x", "lo"], ["y"], [const("lo", TensorProto.FLOAT, [0], [])],
                             graph_inputs=f4),
    "conv_negative_pads": single("Conv", ["x", "w"], ["y"],
                                 [const("w", TensorProto.FLOAT, [8, 1, 1, 1], [1.0] * 8)],
                                 graph_inputs=image4, pads=[-1, 0, 0, 0]),
    "maxpool_zero_stride": single("MaxPool", ["x"], ["y"], graph_inputs=image4,
                                  kernel_shape=[2, 2], strides=[0, 1]),
    "averagepool_bad_pads": single("AveragePool", ["x"], ["y"], graph_inputs=image4,
                                   kernel_shape=[2, 2], pads=[1, 1]),
    "convtranspose_bad_pads": single("ConvTranspose", ["x", "w"], ["y"],
                                     [const("w", TensorProto.FLOAT, [1, 1, 3, 3], [1.0] * 9)],
                                     graph_inputs=image4, pads=[1]),
    # relations between inputs and attributes
    "conv_groups_mismatch": single("Conv", ["x", "w"], ["y"],
                                   [const("w", TensorProto.FLOAT, [8, 1, 1, 1], [1.0] * 8)],
                                   graph_inputs=image4, group=2),
    "conv_kernel_shape_mismatch": single("Conv", ["x", "w"], ["y"],
                                         [const("w", TensorProto.FLOAT, [8, 1, 1, 1], [1.0] * 8)],
                                         graph_inputs=image4, kernel_shape=[3, 3]),
    "gemm_short_c": single("Gemm", ["a", "b", "c"], ["y"],
                           [const("b", TensorProto.FLOAT, [4, 5], [1.0] * 20),
                            const("c", TensorProto.FLOAT, [3], [1.0] * 3)],
                           graph_inputs=[float_input("a", [2, 4])]),
    "einsum_three_inputs": single("Einsum", ["x", "x", "x"], ["y"], graph_inputs=f4,
                                  equation="i,i,i->i"),
    "einsum_diagonal_of_unknown_size": single("Einsum", ["x"], ["y"], equation="ii->i",
                                              graph_inputs=[float_input("x", ["N", "N"])]),
    "einsum_ellipsis_of_unknown_rank": model_of(  # (the Relu's output has no declared shape)
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("Einsum", ["r"], ["y"], name="n", equation="...i->i")],
        [float_input("x", [2, 3])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [], opset=13),
    "einsum_bad_label": single("Einsum", ["x"], ["y"], equation="i1->i",
                               graph_inputs=[float_input("x", [4, 4])]),
    "resize_int64_scales": single("Resize", ["x", "scales"], ["y"],
                                  [const("scales", TensorProto.INT64, [4], [1, 1, 2, 2])],
                                  graph_inputs=image4, opset=10),
    "transpose_repeated_perm": single("Transpose", ["x"], ["y"],
                                      graph_inputs=[float_input("x", [2, 3])], perm=[0, 0]),
    "unsqueeze_repeated_axes": single("Unsqueeze", ["x", "axes"], ["y"],
                                      [const("axes", TensorProto.INT64, [2], [0, 0])],
                                      graph_inputs=f4),
    "pad_beyond_axis": single("Pad", ["x", "pads"], ["y"],
                              [const("pads", TensorProto.INT64, [2], [-(1 << 63), (1 << 63) - 1])],
                              graph_inputs=f4),
    "slice_without_bounds": single("Slice", ["x"], ["y"], graph_inputs=f4, opset=12),
    "topk_without_k": model_of([helper.make_node("TopK", ["x"], ["v", "i"], name="n")], f4,
                               [float_input("v", None), float_input("i", None)], opset=11),
    "gather_from_empty": single("Gather", ["e", "i"], ["y"],
                                [const("e", TensorProto.FLOAT, [0, 5], [])],
                                graph_inputs=[helper.make_tensor_value_info("i", TensorProto.INT64,
                                                                            [2])]),
    "maxpool_huge_window": single("MaxPool", ["x"], ["y"], graph_inputs=image4,
                                  auto_pad="SAME_UPPER", kernel_shape=[1 << 31, 3], strides=[2, 2]),
    "resize_scales_and_sizes": single("Resize", ["x", "", "scales", "sizes"], ["y"],
                                      [const("scales", TensorProto.FLOAT, [4], [1, 1, 0, 0]),
                                       const("sizes", TensorProto.INT64, [4], [1, 1, 8, 8])],
                                      graph_inputs=image4),
    "matmul_bool_operand": single("MatMul", ["a", "b"], ["y"], graph_inputs=[
        float_input("a", [2, 4]), helper.make_tensor_value_info("b", TensorProto.BOOL, [4, 3])]),
    "concat_mixed_types": single("Concat", ["a", "b"], ["y"], graph_inputs=[
        float_input("a", [2, 4]), helper.make_tensor_value_info("b", TensorProto.INT64, [2, 4])],
        axis=0),
    "resize_negative_scale": single("Resize", ["x", "", "scales"], ["y"],
                                    [const("scales", TensorProto.FLOAT, [4], [1, 1, -2e38, 2])],
                                    graph_inputs=image4),
    # 13: edge cases the kernels must run cleanly (no undefined behaviour)
    "sigmoid": single("Sigmoid", ["x"], ["y"], graph_inputs=f4),
    "slice_huge_step": single("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"],
                              [const("starts", TensorProto.INT64, [1], [0]),
                               const("ends", TensorProto.INT64, [1], [(1 << 63) - 1]),
                               const("axes", TensorProto.INT64, [1], [0]),
                               const("steps", TensorProto.INT64, [1], [(1 << 63) - 1])],
                              graph_inputs=f4),
    "slice_negative_huge_step": single("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"],
                                       [const("starts", TensorProto.INT64, [1], [-1]),
                                        const("ends", TensorProto.INT64, [1], [-(1 << 63)]),
                                        const("axes", TensorProto.INT64, [1], [0]),
                                        const("steps", TensorProto.INT64, [1], [-(1 << 63)])],
                                       graph_inputs=f4),
    "pad_scalar": single("Pad", ["x"], ["y"], graph_inputs=[float_input("x", [])], opset=2),
    "concat_empty": single("Concat", ["e", "x"], ["y"], [const("e", TensorProto.FLOAT, [0], [])],
                           graph_inputs=f4, axis=0),
}
int_b = const("b", TensorProto.INT64, [4], [1, -1, 0, (1 << 62) + 1])
for op in ("Add", "Div", "Pow"):
    crafted["int_" + op.lower()] = model_of(
        [helper.make_node(op, ["a", "b"], ["y"], name="n")],
        [helper.make_tensor_value_info("a", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [4])], [int_b])
crafted["int_fmod"] = model_of(
    [helper.make_node("Mod", ["a", "b"], ["y"], name="n", fmod=1)],
    [helper.make_tensor_value_info("a", TensorProto.INT64, [4])],
    [helper.make_tensor_value_info("y", TensorProto.INT64, [4])], [int_b])
crafted["int_mod"] = model_of(
    [helper.make_node("Mod", ["a", "b"], ["y"], name="n")],
    [helper.make_tensor_value_info("a", TensorProto.INT64, [4])],
    [helper.make_tensor_value_info("y", TensorProto.INT64, [4])], [int_b])
crafted["mod_float_without_fmod"] = single(
    "Mod", ["x", "x"], ["y"], graph_inputs=f4)
# ScatterND into a 4 x 2 float tensor: constant indices are checked when
# planning; indices fed at run time are checked by the kernel (scatternd_fed_*).
data42 = [float_input("x", [4, 2])]
updates2 = const("u", TensorProto.FLOAT, [2, 2], [1, 2, 3, 4])
crafted["scatternd_index_out_of_range"] = single(
    "ScatterND", ["x", "i", "u"], ["y"], [const("i", TensorProto.INT64, [2, 1], [1, 4]), updates2],
    graph_inputs=data42, opset=16)
crafted["scatternd_negative_index_out_of_range"] = single(
    "ScatterND", ["x", "i", "u"], ["y"], [const("i", TensorProto.INT64, [2, 1], [-5, 0]), updates2],
    graph_inputs=data42, opset=16)
crafted["scatternd_long_tuples"] = single(
    "ScatterND", ["x", "i", "u"], ["y"], [const("i", TensorProto.INT64, [1, 3], [0, 0, 0]),
                                          const("u", TensorProto.FLOAT, [1], [1])],
    graph_inputs=data42, opset=16)
crafted["scatternd_updates_misshaped"] = single(
    "ScatterND", ["x", "i", "u"], ["y"], [const("i", TensorProto.INT64, [2, 1], [0, 1]),
                                          const("u", TensorProto.FLOAT, [2, 3], [0] * 6)],
    graph_inputs=data42, opset=16)
crafted["scatternd_max_before_18"] = single(
    "ScatterND", ["x", "i", "u"], ["y"], [const("i", TensorProto.INT64, [2, 1], [0, 1]), updates2],
    graph_inputs=data42, opset=16, reduction="max")
for reduction in ("none", "add", "mul", "max", "min"):
    crafted["scatternd_fed_" + reduction] = model_of(
        [helper.make_node("ScatterND", ["d", "i", "u"], ["y"], name="n", reduction=reduction)],
        [helper.make_tensor_value_info("i", TensorProto.INT64, [3, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2])],
        [const("d", TensorProto.FLOAT, [4, 2], [0, 1, 2, 3, 4, 5, 6, 7]),
         const("u", TensorProto.FLOAT, [3, 2], [10, 20, 30, 40, 50, 60])], opset=18)
# GatherElements, ScatterElements (axis 0) and GatherND of the same data,
# three indices fed at run time: checked by the kernels.
fed_indices = [helper.make_tensor_value_info("i", TensorProto.INT64, [3, 1])]
data_0_to_7 = const("d", TensorProto.FLOAT, [4, 2], [0, 1, 2, 3, 4, 5, 6, 7])
crafted["gather_elements_fed"] = model_of(
    [helper.make_node("GatherElements", ["d", "i"], ["y"], name="n", axis=0)], fed_indices,
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1])], [data_0_to_7])
crafted["scatter_elements_fed"] = model_of(
    [helper.make_node("ScatterElements", ["d", "i", "u"], ["y"], name="n", axis=0)],
    fed_indices, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2])],
    [data_0_to_7, const("u", TensorProto.FLOAT, [3, 1], [10, 30, 50])])
crafted["gather_nd_fed"] = model_of(
    [helper.make_node("GatherND", ["d", "i"], ["y"], name="n")], fed_indices,
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])], [data_0_to_7])
# Refused when planning: inputs the shape needs computed at run time,
# indices that do not fit the data, bad attributes.
int_scalar_input = [helper.make_tensor_value_info("k", TensorProto.INT64, [])]
crafted["cumsum_axis_at_run_time"] = model_of(
    [helper.make_node("CumSum", ["d", "k"], ["y"], name="n")], int_scalar_input,
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2])], [data_0_to_7])
crafted["cumsum_axis_out_of_range"] = single(
    "CumSum", ["x", "a"], ["y"], [const("a", TensorProto.INT64, [], [-2])], graph_inputs=f4)
crafted["one_hot_depth_at_run_time"] = model_of(
    [helper.make_node("OneHot", ["i", "k", "v"], ["y"], name="n")], int_scalar_input,
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [const("i", TensorProto.INT64, [2], [0, 1]), const("v", TensorProto.FLOAT, [2], [0, 1])])
crafted["one_hot_three_values"] = single(
    "OneHot", ["i", "k", "v"], ["y"],
    [const("i", TensorProto.INT64, [2], [0, 1]), const("k", TensorProto.INT64, [], [3]),
     const("v", TensorProto.FLOAT, [3], [0, 1, 2])])
crafted["gather_elements_indices_wider"] = single(
    "GatherElements", ["d", "i"], ["y"], [data_0_to_7, const("i", TensorProto.INT64, [4, 3],
                                                            [0] * 12)], axis=0)
crafted["scatter_elements_updates_misshaped"] = single(
    "ScatterElements", ["d", "i", "u"], ["y"],
    [data_0_to_7, const("i", TensorProto.INT64, [2, 2], [0] * 4),
     const("u", TensorProto.FLOAT, [2, 1], [1, 2])])
crafted["gather_nd_batch_dims_mismatch"] = single(
    "GatherND", ["d", "i"], ["y"], [data_0_to_7, const("i", TensorProto.INT64, [3, 1], [0] * 3)],
    batch_dims=1)
crafted["gather_elements_constant_index_out_of_range"] = single(
    "GatherElements", ["d", "i"], ["y"], [data_0_to_7, const("i", TensorProto.INT32, [1, 2],
                                                            [3, -5])], axis=0)
crafted["gather_nd_constant_index_out_of_range"] = single(
    "GatherND", ["d", "i"], ["y"], [data_0_to_7, const("i", TensorProto.INT64, [2, 2],
                                                      [3, 1, 0, 2])])
crafted["bitshift_without_direction"] = model_of(
    [helper.make_node("BitShift", ["a", "a"], ["y"], name="n")],
    [helper.make_tensor_value_info("a", TensorProto.UINT8, [4])],
    [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])], opset=11)
crafted["eye_like_of_rank_3"] = single("EyeLike", ["x"], ["y"],
                                       graph_inputs=[float_input("x", [2, 2, 2])])
for name, to in (("int64", TensorProto.INT64), ("int32", TensorProto.INT32),
                 ("uint8", TensorProto.UINT8)):
    crafted["cast_to_" + name] = model_of(
        [helper.make_node("Cast", ["x"], ["y"], name="n", to=to)], f4,
        [helper.make_tensor_value_info("y", to, [4])])
# A kernel that fails while folding constants (run then, on the host, as the plan is made):
# RoiAlign of a region of image 5 of 1, all of its inputs constants.
crafted["roi_align_folded_batch_index"] = single(
    "RoiAlign", ["x", "rois", "b"], ["y"],
    [const("x", TensorProto.FLOAT, [1, 1, 4, 4], [float(v) for v in range(16)]),
     const("rois", TensorProto.FLOAT, [1, 4], [0, 0, 2, 2]),
     const("b", TensorProto.INT64, [1], [5])], opset=16, output_height=2, output_width=2)
crafted["constant_of_shape_int64_max"] = model_of(
    [helper.make_node("ConstantOfShape", ["s"], ["y"], name="n",
                      value=const("v", TensorProto.INT64, [1], [(1 << 63) - 1]))], [],
    [helper.make_tensor_value_info("y", TensorProto.INT64, [2])],
    [const("s", TensorProto.INT64, [1], [2])])
# quantised operators: parameters of the wrong type, count or axis
u8x = [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 2, 2])]
scale3 = const("s", TensorProto.FLOAT, [3], [0.1, 0.2, 0.3])
crafted["dequantize_float_zero"] = single(
    "DequantizeLinear", ["x", "s", "z"], ["y"],
    [const("s", TensorProto.FLOAT, [], [0.1]), const("z", TensorProto.FLOAT, [], [0])],
    graph_inputs=u8x)
crafted["dequantize_zero_type_mismatch"] = single(
    "DequantizeLinear", ["x", "s", "z"], ["y"],
    [const("s", TensorProto.FLOAT, [], [0.1]), const("z", TensorProto.INT8, [], [0])],
    graph_inputs=u8x)
crafted["dequantize_scale_count"] = single(
    "DequantizeLinear", ["x", "s"], ["y"], [const("s", TensorProto.FLOAT, [2], [0.1, 0.2])],
    graph_inputs=u8x)
crafted["dequantize_axis_out_of_range"] = single(
    "DequantizeLinear", ["x", "s"], ["y"], [scale3], graph_inputs=u8x, axis=4)
crafted["quantize_scale_zero_shapes"] = single(
    "QuantizeLinear", ["x", "s", "z"], ["y"],
    [scale3, const("z", TensorProto.UINT8, [], [0])],
    graph_inputs=[float_input("x", [1, 3, 2, 2])])
crafted["quantize_int64_input"] = single(
    "QuantizeLinear", ["x", "s"], ["y"], [const("s", TensorProto.FLOAT, [], [0.1])],
    graph_inputs=[helper.make_tensor_value_info("x", TensorProto.INT64, [4])])
# opset 21: blocked quantisation and output types QuantizeLinear cannot make
crafted["dequantize_blocked"] = single(
    "DequantizeLinear", ["x", "s"], ["y"], [const("s", TensorProto.FLOAT, [2], [0.1, 0.2])],
    graph_inputs=[helper.make_tensor_value_info("x", TensorProto.UINT8, [4])], opset=21,
    axis=0, block_size=2)
crafted["quantize_to_uint16"] = single(
    "QuantizeLinear", ["x", "s"], ["y"], [const("s", TensorProto.FLOAT, [], [0.1])],
    graph_inputs=f4, opset=21, output_dtype=TensorProto.UINT16)
crafted["gelu_bad_approximation"] = single("Gelu", ["x"], ["y"], graph_inputs=f4, opset=20,
                                           approximate="sigmoid")
# vision and normalisation operators: attributes and inputs that do not fit
crafted["depth_to_space_block3"] = single("DepthToSpace", ["x"], ["y"], graph_inputs=nchw,
                                          blocksize=3)
crafted["group_norm_groups"] = single(
    "GroupNormalization", ["x", "s", "b"], ["y"],
    [const("s", TensorProto.FLOAT, [3], [1, 1, 1]), const("b", TensorProto.FLOAT, [3], [0, 0, 0])],
    graph_inputs=nchw, opset=18, num_groups=3)
crafted["lrn_size_zero"] = single("LRN", ["x"], ["y"], graph_inputs=nchw, size=0)
crafted["grid_sample_grid_shape"] = single(
    "GridSample", ["x", "g"], ["y"], [const("g", TensorProto.FLOAT, [1, 2, 2, 3], [0] * 12)],
    graph_inputs=nchw, opset=16)
crafted["roi_align_regions_shape"] = single(
    "RoiAlign", ["x", "r", "i"], ["y"],
    [const("r", TensorProto.FLOAT, [1, 3], [0, 0, 1]), const("i", TensorProto.INT64, [1], [0])],
    graph_inputs=nchw, opset=16)
crafted["resize_axis_out_of_range"] = single(
    "Resize", ["x", "", "s"], ["y"], [const("s", TensorProto.FLOAT, [2], [2, 2])],
    graph_inputs=nchw, opset=18, axes=[2, 4])
crafted["resize_unknown_policy"] = single(
    "Resize", ["x", "", "", "z"], ["y"], [const("z", TensorProto.INT64, [2], [4, 4])],
    graph_inputs=nchw, opset=18, axes=[2, 3], keep_aspect_ratio_policy="fit")
# recurrent operators: X [seq 5, batch 2, input 3], hidden 4 (LSTM: 4 gates of 4)
rnn_x = [float_input("x", [5, 2, 3])]


def lstm_case(w_dims=(1, 16, 3), weights_fed=False, **attributes):
    w = const("w", TensorProto.FLOAT, list(w_dims), [0.1] * int(np.prod(w_dims)))
    r = const("r", TensorProto.FLOAT, [1, 16, 4], [0.1] * 64)
    fed = [float_input("w", list(w_dims))] if weights_fed else []
    return single("LSTM", ["x", "w", "r"], ["y"], [r] + ([] if weights_fed else [w]),
                  graph_inputs=rnn_x + fed, opset=14, hidden_size=4, **attributes)


crafted["lstm_bad_direction"] = lstm_case(direction="sideways")
crafted["lstm_weights_misshaped"] = lstm_case(w_dims=(1, 16, 2))
crafted["lstm_weights_computed"] = lstm_case(weights_fed=True)
crafted["lstm_unknown_activation"] = lstm_case(activations=["Sigmoid", "Tanh", "Swish"])
crafted["lstm_hidden_size_mismatch"] = single(
    "LSTM", ["x", "w", "r"], ["y"], [const("w", TensorProto.FLOAT, [1, 16, 3], [0.1] * 48),
                                     const("r", TensorProto.FLOAT, [1, 16, 4], [0.1] * 64)],
    graph_inputs=rnn_x, opset=14, hidden_size=5)
crafted["qlinearconv_bias_type"] = single(
    "QLinearConv", ["x", "s", "z", "w", "s", "wz", "s", "z", "b"], ["y"],
    [const("s", TensorProto.FLOAT, [], [0.1]), const("z", TensorProto.UINT8, [], [0]),
     const("w", TensorProto.INT8, [2, 3, 1, 1], [1] * 6), const("wz", TensorProto.INT8, [], [0]),
     const("b", TensorProto.FLOAT, [2], [0, 0])], graph_inputs=u8x)
crafted["qlinearconv_weight_scales"] = single(
    "QLinearConv", ["x", "s", "z", "w", "ws", "wz", "s", "z"], ["y"],
    [const("s", TensorProto.FLOAT, [], [0.1]), const("z", TensorProto.UINT8, [], [0]),
     const("w", TensorProto.INT8, [2, 3, 1, 1], [1] * 6),
     const("ws", TensorProto.FLOAT, [3], [0.1, 0.2, 0.3]),
     const("wz", TensorProto.INT8, [3], [0, 0, 0])], graph_inputs=u8x)
crafted["qlinearmatmul_float_operand"] = single(
    "QLinearMatMul", ["x", "s", "z", "b", "s", "z", "s", "z"], ["y"],
    [const("s", TensorProto.FLOAT, [], [0.1]), const("z", TensorProto.UINT8, [], [0]),
     const("b", TensorProto.FLOAT, [2, 2], [1, 2, 3, 4])],
    graph_inputs=[helper.make_tensor_value_info("x", TensorProto.UINT8, [2, 2])])
crafted["qlinearconcat_loose_triple"] = model_of(
    [helper.make_node("QLinearConcat", ["s", "z", "x", "s", "z", "x"], ["y"], name="n", axis=1,
                      domain="com.microsoft")], u8x,
    [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
    [const("s", TensorProto.FLOAT, [], [0.1]), const("z", TensorProto.UINT8, [], [0])])
crafted["qlinearconcat_loose_triple"].opset_import.append(helper.make_opsetid("com.microsoft", 1))
for name, model in crafted.items():
    save(model, "crafted_" + name + ".onnx")

# A classifier head (last, so that the weights drawn before stay as they were): the CPU
# backend re-plans its Gemm for a multiple of a planned batch in slices of that batch's
# rows until the whole batch's matmul is compiled in the background, and its 1x1
# projection into 24 channels (channels-last) from 64 (channel blocks) is described in the
# tensors' own layouts last.
replan_head_nodes = [
    helper.make_node("Conv", ["x", "expand_w", "expand_b"], ["expanded"]),
    helper.make_node("Relu", ["expanded"], ["expanded_relu"]),
    helper.make_node("Conv", ["expanded_relu", "project_w"], ["projected"]),
    helper.make_node("GlobalAveragePool", ["projected"], ["pooled"]),
    helper.make_node("Flatten", ["pooled"], ["features"]),
    helper.make_node("Gemm", ["features", "fc_w", "fc_b"], ["y"], transB=1),
]
save(model_of(replan_head_nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                ["batch", 16, 14, 14])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1000])],
              [weight("expand_w", (64, 16, 1, 1)), weight("expand_b", (64,)),
               weight("project_w", (24, 64, 1, 1)), weight("fc_w", (1000, 24)),
               weight("fc_b", (1000,))]),
     "replan_head.onnx")
