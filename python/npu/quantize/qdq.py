"""Rewrites an fp32 model into its QDQ form from a plan and the activations'
parameters: QuantizeLinear + DequantizeLinear after each planned activation,
DequantizeLinear over int8 weights and int32 biases."""
import copy

import numpy as np
from onnx import helper, numpy_helper

from . import params as qparams
from .graph import constants

# Per-axis DequantizeLinear needs opset 13; older models get per-tensor weights
# (unless opset.upgrade brought them to 13).
PER_AXIS_OPSET = 13


def default_opset(model):
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


class Rewriter:
    def __init__(self, model, plan, activation_params):
        self.model = copy.deepcopy(model)
        self.graph = self.model.graph
        self.plan = plan
        self.params = activation_params
        self.per_axis = default_opset(model) >= PER_AXIS_OPSET
        self.initializers = []
        self.dequantized = {}  # activation -> the name its dequantised value has
        self.weight_report = []

    def constant(self, name, array):
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def activation_pair(self, name):
        """Q/DQ nodes for one activation; renames so that the graph's own
        outputs keep their names and excluded nodes keep the float tensor."""
        p = self.params[name]
        scale = self.constant(name + "_scale", np.array(p.scale, np.float32))
        zero_point = self.constant(name + "_zero_point", p.zero_point)
        graph_outputs = {o.name for o in self.graph.output}
        source, result = name, name + "_dequantized"
        if name in graph_outputs:
            source, result = name + "_float", name
            for node in self.graph.node:
                rename(node.output, name, source)
        for position, node in enumerate(self.graph.node):
            rename(node.input, name, source if position in self.plan.excluded else result)
        self.dequantized[name] = result
        return [helper.make_node("QuantizeLinear", [source, scale, zero_point],
                                 [name + "_quantized"], name=name + "_QuantizeLinear"),
                helper.make_node("DequantizeLinear", [name + "_quantized", scale, zero_point],
                                 [result], name=name + "_DequantizeLinear")]

    def weight_nodes(self, weight, values):
        """DequantizeLinear over the int8 weight; the node reads its output.
        Returns the weight's scales (for the bias) and the node."""
        node = self.graph.node[weight.node]
        name = node.input[weight.index]
        axis = weight.axis if self.per_axis else None
        quantized, scale = qparams.quantize_weight(values[name], axis)
        prefix = f"{node.name or name}_{name}"
        inputs = [self.constant(prefix + "_quantized", quantized),
                  self.constant(prefix + "_scale", scale),
                  self.constant(prefix + "_zero_point", np.zeros(scale.shape, np.int8))]
        self.weight_report.append((name, node.name, node.op_type, values[name],
                                   qparams.dequantize_weight(quantized, scale, axis)))
        return scale, self.dequantize(node, weight.index, prefix, inputs, axis)

    def bias_node(self, bias, values, weight_scale):
        node = self.graph.node[bias.node]
        name = node.input[bias.index]
        quantized, scale = qparams.quantize_bias(values[name], self.params[bias.data].scale,
                                                 weight_scale)
        prefix = f"{node.name or name}_{name}"
        inputs = [self.constant(prefix + "_quantized", quantized),
                  self.constant(prefix + "_scale", scale)]
        return self.dequantize(node, bias.index, prefix, inputs, 0 if scale.ndim else None)

    @staticmethod
    def dequantize(node, index, prefix, inputs, axis):
        """A DequantizeLinear of constants whose output replaces node's input index."""
        result = prefix + "_dequantized"
        node.input[index] = result
        attrs = {"axis": axis} if axis is not None else {}
        return helper.make_node("DequantizeLinear", inputs, [result],
                                name=prefix + "_DequantizeLinear", **attrs)

    def rewrite(self):
        """The QDQ model: nodes in their order, constants' DequantizeLinear and
        graph inputs' pairs first, each other activation's pair right after
        its producer."""
        values = constants(self.graph)
        first, weight_scales = [], {}
        for weight in self.plan.weights:
            weight_scales[weight.node], node = self.weight_nodes(weight, values)
            first.append(node)
        for bias in self.plan.biases:
            first.append(self.bias_node(bias, values, weight_scales[bias.node]))
        original = list(self.graph.node)
        produced = {out: i for i, n in enumerate(original) for out in n.output}
        after = {}
        for name in self.plan.activations:
            pair = self.activation_pair(name)
            if name in produced:
                after.setdefault(produced[name], []).extend(pair)
            else:
                first.extend(pair)
        nodes = list(first)
        for i, node in enumerate(original):
            nodes.append(node)
            nodes.extend(after.get(i, []))
        self.graph.ClearField("node")
        self.graph.node.extend(nodes)
        self.graph.initializer.extend(self.initializers)
        remove_unused(self.graph)
        return self.model


def rename(names, old, new):
    for i, name in enumerate(names):
        if name == old:
            names[i] = new


def remove_unused(graph):
    """Drops the float weights (initializers, Constant nodes) no node reads any more."""
    used = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
    kept = [init for init in graph.initializer if init.name in used]
    graph.ClearField("initializer")
    graph.initializer.extend(kept)
    nodes = [n for n in graph.node if n.op_type != "Constant" or n.output[0] in used]
    graph.ClearField("node")
    graph.node.extend(nodes)


def to_qdq(model, plan, activation_params):
    """The QDQ model, the name each activation's dequantised value has in it,
    and, for the report, (weight, node name, op type, float values,
    dequantised values) of each weight."""
    rewriter = Rewriter(model, plan, activation_params)
    qdq = rewriter.rewrite()
    return qdq, rewriter.dequantized, rewriter.weight_report
