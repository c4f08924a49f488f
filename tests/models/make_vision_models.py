#!/usr/bin/python3
"""Builds ResNet-50 and MobileNetV2 as ONNX (opset 13) with the layer
structure of torchvision's models and fixed-seed random weights, as an
unfolded export would give them (BatchNormalization nodes kept, ReLU6 as
Clip). The batch axis is dynamic ('N').
    make_vision_models.py OUTDIR [resnet50] [mobilenet_v2]   (default: both)"""
import os
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

rng = np.random.default_rng(2026)


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, kind):
        self.count += 1
        return f"{kind}_{self.count}"

    def const(self, kind, array, dtype=np.float32):
        n = self.name(kind)
        self.inits.append(numpy_helper.from_array(np.asarray(array, dtype), n))
        return n

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, groups=1):
        fan_in = cin // groups * k * k
        w = rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // groups, k, k))
        return self.node("Conv", [x, self.const("w", w)], kernel_shape=[k, k],
                         strides=[stride, stride], pads=[k // 2] * 4, group=groups)

    def bn(self, x, c):
        scale = self.const("gamma", rng.uniform(0.3, 0.7, c))
        bias = self.const("beta", rng.uniform(-0.1, 0.1, c))
        mean = self.const("mean", rng.uniform(-0.1, 0.1, c))
        var = self.const("var", rng.uniform(0.8, 1.2, c))
        return self.node("BatchNormalization", [x, scale, bias, mean, var], epsilon=1e-5)

    def conv_bn(self, x, cin, cout, k, stride=1, groups=1):
        return self.bn(self.conv(x, cin, cout, k, stride, groups), cout)

    def relu6(self, x):
        if not hasattr(self, "six"):
            self.zero = self.const("zero", np.array(0.0))
            self.six = self.const("six", np.array(6.0))
        return self.node("Clip", [x, self.zero, self.six])

    def head(self, x, features, classes=1000):
        x = self.node("GlobalAveragePool", [x])
        x = self.node("Flatten", [x], axis=1)
        w = self.const("fc_w", rng.normal(0, np.sqrt(1.0 / features), (classes, features)))
        b = self.const("fc_b", rng.uniform(-0.1, 0.1, classes))
        return self.node("Gemm", [x, w, b], transB=1)

    def save(self, path, graph_name, output, input_dims=("N", 3, 224, 224),
             output_dims=("N", 1000)):
        graph = helper.make_graph(
            self.nodes, graph_name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, input_dims)],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, output_dims)],
            self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                  producer_name="gst-npu tests")
        model.ir_version = 7
        checker.check_model(model)
        save(model, path)


def resnet50(path):
    b = Builder()
    x = b.node("Relu", [b.conv_bn("input", 3, 64, 7, 2)])
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            s = stride if i == 0 else 1
            out = width * 4
            y = b.node("Relu", [b.conv_bn(x, cin, width, 1)])
            y = b.node("Relu", [b.conv_bn(y, width, width, 3, s)])
            y = b.conv_bn(y, width, out, 1)
            shortcut = b.conv_bn(x, cin, out, 1, s) if i == 0 else x
            x = b.node("Relu", [b.node("Add", [y, shortcut])])
            cin = out
    b.save(path, "resnet50", b.head(x, 2048))


def mobilenet_v2(path):
    b = Builder()
    x = b.relu6(b.conv_bn("input", 3, 32, 3, 2))
    cin = 32
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = x if t == 1 else b.relu6(b.conv_bn(x, cin, hidden, 1))
            y = b.relu6(b.conv_bn(y, hidden, hidden, 3, stride, groups=hidden))
            y = b.conv_bn(y, hidden, c, 1)
            x = b.node("Add", [x, y]) if stride == 1 and cin == c else y
            cin = c
    x = b.relu6(b.conv_bn(x, cin, 1280, 1))
    b.save(path, "mobilenet_v2", b.head(x, 1280))


if __name__ == "__main__":
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    models = {"resnet50": resnet50, "mobilenet_v2": mobilenet_v2}
    for name in sys.argv[2:] or models:
        models[name](os.path.join(outdir, name + ".onnx"))
