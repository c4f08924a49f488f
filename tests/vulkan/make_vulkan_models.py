#!/usr/bin/env python3
"""Writes conv_features.onnx into OUTDIR (Debian's python3-onnx): a small
convolutional network for npuinfer on the Vulkan device, N x 3 x 32 x 32 ->
a feature map N x 4 x 16 x 16 ("features") and its per-channel means
N x 4 ("pooled"). Conv, Relu, MaxPool and Sigmoid run on the Vulkan device,
the Flatten after the pooling on the CPU backend (HAL partitioning). Weights
are seeded random numbers."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import onnx_numpy  # noqa: E402,F401  (before onnx)

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

OUT = sys.argv[1]
rng = np.random.default_rng(16)


def weights(name, shape, scale):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


image = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 32, 32])
features = helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", 4, 16, 16])
pooled = helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["N", 4])
initializers = [weights("w1", [8, 3, 3, 3], 0.5), weights("b1", [8], 0.1),
                weights("w2", [4, 8, 3, 3], 0.3), weights("b2", [4], 0.1)]
nodes = [
    helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
    helper.make_node("Sigmoid", ["c2"], ["features"]),
    helper.make_node("GlobalAveragePool", ["features"], ["g"]),
    helper.make_node("Flatten", ["g"], ["pooled"], axis=1),
]
graph = helper.make_graph(nodes, "conv_features", [image], [features, pooled], initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "conv_features.onnx"), "wb") as f:
    f.write(model.SerializeToString())
