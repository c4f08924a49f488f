#!/usr/bin/env python3
"""Writes npuinfer's test models into OUTDIR (Debian's python3-onnx):
channel_mean.onnx (N x 3 x 8 x 8 -> each channel's mean and max, N
dynamic), batch2_mean.onnx (the same with N fixed at 2), grey_map.onnx
(N x 3 x H x W -> the channels' mean per pixel, N x 1 x H x W, every axis
open) and grey_rows.onnx (the same with H fixed at 16), not_image.onnx
(a 2-D input), corrupt.onnx (bytes that are no model) and channel_double.onnx
(channel_mean's outputs doubled, named double_mean and double_max: the model
swapped in by the live reload test)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import onnx_numpy  # noqa: E402,F401  (before onnx)

from onnx import TensorProto, helper  # noqa: E402

OUT = sys.argv[1]


def save(name, graph):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(model.SerializeToString())


def channel_stats(batch):
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, 8, 8])
    mean = helper.make_tensor_value_info("mean", TensorProto.FLOAT, [batch, 3])
    peak = helper.make_tensor_value_info("max", TensorProto.FLOAT, [batch, 3])
    nodes = [helper.make_node("ReduceMean", ["image"], ["mean"], axes=[2, 3], keepdims=0),
             helper.make_node("ReduceMax", ["image"], ["max"], axes=[2, 3], keepdims=0)]
    return helper.make_graph(nodes, "channel_stats", [x], [mean, peak])


def grey(height):
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, height, "W"])
    y = helper.make_tensor_value_info("grey", TensorProto.FLOAT, ["N", 1, height, "W"])
    node = helper.make_node("ReduceMean", ["image"], ["grey"], axes=[1], keepdims=1)
    return helper.make_graph([node], "grey", [x], [y])


def channel_double():
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 8, 8])
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", 3])
               for name in ("double_mean", "double_max")]
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    nodes = [helper.make_node("ReduceMean", ["image"], ["m"], axes=[2, 3], keepdims=0),
             helper.make_node("ReduceMax", ["image"], ["p"], axes=[2, 3], keepdims=0),
             helper.make_node("Mul", ["m", "two"], ["double_mean"]),
             helper.make_node("Mul", ["p", "two"], ["double_max"])]
    return helper.make_graph(nodes, "channel_double", [x], outputs, initializer=[two])


os.makedirs(OUT, exist_ok=True)
save("channel_double.onnx", channel_double())
save("grey_map.onnx", grey("H"))
save("grey_rows.onnx", grey(16))
save("channel_mean.onnx", channel_stats("N"))
save("batch2_mean.onnx", channel_stats(2))
flat = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 10])
out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])
save("not_image.onnx", helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "flat",
                                         [flat], [out]))
with open(os.path.join(OUT, "corrupt.onnx"), "wb") as f:
    f.write(b"\x08\x07this is not a protobuf model\xff\xff\xff")
