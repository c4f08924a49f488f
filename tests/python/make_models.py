#!/usr/bin/env python3
"""Writes the Python tests' models into OUTDIR (Debian's python3-onnx), with
their weights as .npy beside them so the tests compute the answers in numpy:
affine.onnx   x [batch, 4] -> y = Relu(x @ w + b) [batch, 3], z = 2 x (batch open)
conv.onnx     image [1, 3, 16, 16] -> Relu(Conv 3x3, 8 channels, pad 1, bias)
scale_u8.onnx pixels uint8 [2, 5] -> Cast to float32 / 255
features.onnx image [batch, 16, 24, 24] -> Relu(Conv 3x3, 32 channels) -> Conv 1x1, 32
              channels -> GlobalAveragePool -> Flatten -> Gemm to 10 (transB): convolutions
              and a matrix product, to compare precisions on"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
rng = np.random.default_rng(20)


def save(name, nodes, inputs, outputs, weights):
    initializers = [numpy_helper.from_array(array, key) for key, array in weights.items()]
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for key, array in weights.items():
        np.save(os.path.join(OUT, f"{name}.{key}.npy"), array)


def affine():
    weights = {"w": rng.standard_normal((4, 3)).astype(np.float32),
               "b": rng.standard_normal(3).astype(np.float32),
               "two": np.array(2, np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"]),
             helper.make_node("Add", ["xw", "b"], ["xwb"]),
             helper.make_node("Relu", ["xwb"], ["y"]),
             helper.make_node("Mul", ["x", "two"], ["z"])]
    save("affine", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3]),
          helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 4])], weights)


def conv():
    weights = {"w": (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32),
               "b": rng.standard_normal(8).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["image", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["features"])]
    save("conv", nodes, [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 16, 16])],
         [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 8, 16, 16])], weights)


def features():
    weights = {"w1": (rng.standard_normal((32, 16, 3, 3)) * 0.1).astype(np.float32),
               "b1": (rng.standard_normal(32) * 0.1).astype(np.float32),
               "w2": (rng.standard_normal((32, 32, 1, 1)) * 0.2).astype(np.float32),
               "w3": (rng.standard_normal((10, 32)) * 0.3).astype(np.float32),
               "b3": rng.standard_normal(10).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"]),
             helper.make_node("GlobalAveragePool", ["c2"], ["pooled"]),
             helper.make_node("Flatten", ["pooled"], ["flat"]),
             helper.make_node("Gemm", ["flat", "w3", "b3"], ["logits"], transB=1)]
    save("features", nodes,
         [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 16, 24, 24])],
         [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], weights)


def scale_u8():
    weights = {"inv255": np.array(1 / 255, np.float32)}
    nodes = [helper.make_node("Cast", ["pixels"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["f", "inv255"], ["scaled"])]
    save("scale_u8", nodes, [helper.make_tensor_value_info("pixels", TensorProto.UINT8, [2, 5])],
         [helper.make_tensor_value_info("scaled", TensorProto.FLOAT, [2, 5])], weights)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    affine()
    conv()
    features()
    scale_u8()
