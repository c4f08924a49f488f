#!/usr/bin/python3
"""Builds ResNet-50 and MobileNetV2 as ONNX (opset 13) with the layer
structure of torchvision's models, and YOLOv8n with that of Ultralytics'
(its 640x640 export: SiLU as Sigmoid*x, C2f split/concat blocks, SPPF,
nearest upsampling, the DFL box decoder; output N x 84 x 8400), with
fixed-seed random weights, as an unfolded export would give them
(BatchNormalization nodes kept, ReLU6 as Clip). The batch axis is dynamic ('N').
    make_vision_models.py OUTDIR [resnet50] [mobilenet_v2] [yolov8n]   (default: all)"""
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
        return self.outputs(op, inputs, 1, **attrs)[0]

    def outputs(self, op, inputs, count, **attrs):
        outs = [self.name(op.lower()) for _ in range(count)]
        self.nodes.append(helper.make_node(op, inputs, outs, **attrs))
        return outs

    def conv(self, x, cin, cout, k, stride=1, groups=1, bias=False):
        fan_in = cin // groups * k * k
        w = rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // groups, k, k))
        inputs = [x, self.const("w", w)]
        if bias:
            inputs.append(self.const("b", rng.uniform(-0.1, 0.1, cout)))
        return self.node("Conv", inputs, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[k // 2] * 4, group=groups)

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

    def silu_conv(self, x, cin, cout, k=1, stride=1):
        y = self.conv_bn(x, cin, cout, k, stride)
        return self.node("Mul", [y, self.node("Sigmoid", [y])])

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


def yolov8n(path):
    b = Builder()

    def c2f(x, cin, cout, n, shortcut):
        c = cout // 2
        parts = b.outputs("Split", [b.silu_conv(x, cin, 2 * c), b.const("split", [c, c], np.int64)],
                          2, axis=1)
        for _ in range(n):
            y = b.silu_conv(b.silu_conv(parts[-1], c, c, 3), c, c, 3)
            parts.append(b.node("Add", [parts[-1], y]) if shortcut else y)
        return b.silu_conv(b.node("Concat", parts, axis=1), (2 + n) * c, cout)

    def sppf(x, c):
        pools = [b.silu_conv(x, c, c // 2)]
        for _ in range(3):
            pools.append(b.node("MaxPool", [pools[-1]], kernel_shape=[5, 5], strides=[1, 1],
                                pads=[2, 2, 2, 2]))
        return b.silu_conv(b.node("Concat", pools, axis=1), 2 * c, c)

    def upsample(x):
        return b.node("Resize", [x, "", b.const("scales", [1, 1, 2, 2])], mode="nearest",
                      coordinate_transformation_mode="asymmetric", nearest_mode="floor")

    def cat(*xs):
        return b.node("Concat", list(xs), axis=1)

    x = b.silu_conv(b.silu_conv("input", 3, 16, 3, 2), 16, 32, 3, 2)
    x = c2f(x, 32, 32, 1, True)
    p3 = c2f(b.silu_conv(x, 32, 64, 3, 2), 64, 64, 2, True)
    p4 = c2f(b.silu_conv(p3, 64, 128, 3, 2), 128, 128, 2, True)
    p5 = sppf(c2f(b.silu_conv(p4, 128, 256, 3, 2), 256, 256, 1, True), 256)
    h4 = c2f(cat(upsample(p5), p4), 384, 128, 1, False)
    n3 = c2f(cat(upsample(h4), p3), 192, 64, 1, False)
    n4 = c2f(cat(b.silu_conv(n3, 64, 64, 3, 2), h4), 192, 128, 1, False)
    n5 = c2f(cat(b.silu_conv(n4, 128, 128, 3, 2), p5), 384, 256, 1, False)

    reg_max, classes, levels, anchors, strides = 16, 80, [], [], []
    for x, c, stride in ((n3, 64, 8), (n4, 128, 16), (n5, 256, 32)):
        box = b.silu_conv(b.silu_conv(x, c, 64, 3), 64, 64, 3)
        cls = b.silu_conv(b.silu_conv(x, c, 80, 3), 80, 80, 3)
        level = cat(b.conv(box, 64, 4 * reg_max, 1, bias=True),
                    b.conv(cls, 80, classes, 1, bias=True))
        levels.append(b.node("Reshape", [level, b.const("shape", [0, 4 * reg_max + classes, -1],
                                                        np.int64)]))
        side = 640 // stride
        ys, xs = np.meshgrid(np.arange(side) + 0.5, np.arange(side) + 0.5, indexing="ij")
        anchors.append(np.stack([xs.ravel(), ys.ravel()]))
        strides.append(np.full(side * side, stride))
    x = b.node("Concat", levels, axis=2)
    box, cls = b.outputs("Split", [x, b.const("split", [4 * reg_max, classes], np.int64)], 2,
                         axis=1)
    # DFL: the expectation of a softmax over 16 bins per box side.
    box = b.node("Reshape", [box, b.const("shape", [0, 4, reg_max, -1], np.int64)])
    box = b.node("Softmax", [b.node("Transpose", [box], perm=[0, 2, 1, 3])], axis=1)
    box = b.node("Conv", [box, b.const("bins", np.arange(reg_max).reshape(1, reg_max, 1, 1))])
    box = b.node("Reshape", [box, b.const("shape", [0, 4, -1], np.int64)])
    lt, rb = b.outputs("Split", [box, b.const("split", [2, 2], np.int64)], 2, axis=1)
    centres = b.const("anchors", np.concatenate(anchors, axis=1)[None])
    top_left = b.node("Sub", [centres, lt])
    bottom_right = b.node("Add", [centres, rb])
    centre = b.node("Div", [b.node("Add", [top_left, bottom_right]), b.const("two", 2.0)])
    size = b.node("Sub", [bottom_right, top_left])
    box = b.node("Mul", [cat(centre, size), b.const("strides", np.concatenate(strides)[None, None])])
    b.save(path, "yolov8n", cat(box, b.node("Sigmoid", [cls])), input_dims=("N", 3, 640, 640),
           output_dims=("N", 4 + classes, 8400))


if __name__ == "__main__":
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    models = {"resnet50": resnet50, "mobilenet_v2": mobilenet_v2, "yolov8n": yolov8n}
    for name in sys.argv[2:] or models:
        models[name](os.path.join(outdir, name + ".onnx"))
