"""Which nodes of an fp32 ONNX graph get quantised, and which of their tensors
need activation Q/DQ pairs or weight quantisation (the plan); no numbers yet."""
from dataclasses import dataclass, field

import onnx
from onnx import TensorProto, numpy_helper

# Operators with an int8 form: their data inputs and outputs get Q/DQ pairs,
# their constant weights per-channel int8 and their bias int32 (a grouped
# ConvTranspose's weights have M/group channels along axis 1, shared by the
# groups: its bias of M values stays float, the runtime quantises it).
QUANTISED_OPS = ("Conv", "ConvTranspose", "Gemm", "MatMul")
# Operators between convolutions that run on int8 with no weights (as ONNX
# Runtime's quantiser does them): their 4-D float inputs and outputs get Q/DQ
# pairs, so the runtime keeps the feature maps int8 through them.
ACTIVATION_OPS = ("Add", "Concat", "Split", "MaxPool", "Resize")
# Of those, the ones whose outputs take their input's parameters (values
# only move): the runtime then runs them on the 8-bit values as they are.
SAME_PARAMETER_OPS = ("Split", "MaxPool", "Resize")
# A quantised op's only consumer of these kinds moves the output's Q/DQ after
# it: DQ -> Conv -> Relu -> Q is one int8 kernel with a fused activation, and
# the range of Clip(0, 6)'s output wastes no levels on values Clip removes.
FUSED_ACTIVATIONS = ("Relu", "Clip")


@dataclass
class Weight:
    """A constant weight input (input index) of a quantised node (its position
    in the graph), quantised along axis (the output channels)."""
    node: int
    index: int
    axis: int


@dataclass
class Bias:
    """A constant bias of a quantised node: int32 at the scale of its data
    input times its weight's."""
    node: int
    index: int
    data: str
    weight: Weight


@dataclass
class Plan:
    nodes: list = field(default_factory=list)        # positions of the quantised nodes
    activations: list = field(default_factory=list)  # tensors getting a Q/DQ pair, in order
    weights: list = field(default_factory=list)
    biases: list = field(default_factory=list)
    producer: dict = field(default_factory=dict)     # activation -> position of its quantised producer
    excluded: set = field(default_factory=set)       # positions of the nodes the user excluded
    same_as: dict = field(default_factory=dict)      # activation -> whose parameters it takes


def constants(graph):
    """name -> numpy array of every initializer and Constant node with a tensor value."""
    values = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            values[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    return values


def float_tensors(model):
    """Names of the tensors known to be float32 after shape inference, and of
    those whose type nothing declares (taken as float: they are checked when
    the model runs); every tensor's type; the rank of those with a shape."""
    inferred = onnx.shape_inference.infer_shapes(model)
    graph = inferred.graph
    values = list(graph.input) + list(graph.output) + list(graph.value_info)
    types = {v.name: v.type.tensor_type.elem_type for v in values}
    types.update({init.name: init.data_type for init in graph.initializer})
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in values
             if v.type.tensor_type.HasField("shape")}
    return {name for name, elem in types.items() if elem == TensorProto.FLOAT}, types, ranks


def attribute(node, name, default):
    for attr in node.attribute:
        if attr.name == name:
            return onnx.helper.get_attribute_value(attr)
    return default


def weight_axis(node, weight):
    """The output-channel axis of a node's weight input 1."""
    if node.op_type == "Gemm":
        return 0 if attribute(node, "transB", 0) else 1
    if node.op_type == "MatMul":
        return weight.ndim - 1
    if node.op_type == "ConvTranspose":
        return 1  # [C, M/group, kh, kw], as ONNX Runtime's quantiser takes it
    return 0  # Conv: [M, C/group, kh, kw]


def consumers(graph):
    users = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    return users


def depthwise(node, consts):
    """A convolution of one input channel per group (its weight's axis 1 is 1)
    and more than one group: MobileNet's and PP-OCR's depthwise layers."""
    weight = consts.get(node.input[1]) if len(node.input) > 1 else None
    group = next((a.i for a in node.attribute if a.name == "group"), 1)
    return node.op_type == "Conv" and group > 1 and weight is not None and weight.shape[1] == 1


def make_plan(model, exclude_names=(), exclude_types=(), exclude_depthwise=False):
    """Chooses the nodes to quantise (QUANTISED_OPS on float32 data and
    ACTIVATION_OPS on float32 feature maps, minus the excluded names, op
    types and, if asked, depthwise convolutions) and the tensors around
    them."""
    graph = model.graph
    consts = constants(graph)
    floats, types, ranks = float_tensors(model)
    users = consumers(graph)
    position_of = {id(node): i for i, node in enumerate(graph.node)}
    graph_outputs = {o.name for o in graph.output}
    plan = Plan(excluded={i for i, node in enumerate(graph.node)
                          if node.name in exclude_names or node.op_type in exclude_types
                          or (exclude_depthwise and depthwise(node, consts))})

    def is_float(name):
        return name in floats or name not in types

    def fused_output(output):
        """The tensor that takes the pair of a quantised node's output: that
        of its only consumer when that is a fused activation."""
        follower = users.get(output, [])
        if (output not in graph_outputs and len(follower) == 1
                and follower[0].op_type in FUSED_ACTIVATIONS
                and position_of[id(follower[0])] not in plan.excluded):
            return follower[0].output[0]
        return output

    def add_activation(name, producer=None):
        if name not in plan.activations:
            plan.activations.append(name)
        if producer is not None:
            plan.producer[name] = producer

    def feature_maps(names):
        return [n for n in names if n and n not in consts and is_float(n) and ranks.get(n) == 4]

    for position, node in enumerate(graph.node):
        if node.op_type in ACTIVATION_OPS and position not in plan.excluded:
            # (Split's sizes and Resize's roi, scales and sizes are no data)
            data = [n for n in node.input[:1 if node.op_type in ("Split", "Resize") else None]
                    if n]
            inputs, outputs = feature_maps(data), feature_maps(node.output)
            if inputs and len(inputs) == len(data) and len(outputs) == len(node.output):
                plan.nodes.append(position)
                for name in inputs:
                    add_activation(name)
                for name in outputs:
                    add_activation(fused_output(name), position)
                    if node.op_type in SAME_PARAMETER_OPS and fused_output(name) == name:
                        plan.same_as[name] = inputs[0]
            continue
        if (node.op_type not in QUANTISED_OPS or position in plan.excluded
                or not all(is_float(i) for i in node.input[:2])):
            continue
        plan.nodes.append(position)
        weight = None
        if node.input[1] in consts and consts[node.input[1]].ndim >= 2:
            weight = Weight(position, 1, weight_axis(node, consts[node.input[1]]))
            plan.weights.append(weight)
        for index, name in enumerate(node.input[:2]):
            if index != 1 or weight is None:
                add_activation(name)
        bias = node.input[2] if len(node.input) > 2 else ""
        if weight is not None and bias in consts and unit_bias(node, consts, weight):
            plan.biases.append(Bias(position, 2, node.input[0], weight))
        add_activation(fused_output(node.output[0]), position)
    return plan


def unit_bias(node, consts, weight):
    """A bias that is one value per output channel, added as it is (Gemm's
    alpha and beta 1), so it can be int32 at the input scale x weight scale."""
    bias = consts[node.input[2]]
    channels = consts[node.input[1]].shape[weight.axis]
    if bias.shape != (channels,):
        return False
    return node.op_type != "Gemm" or (attribute(node, "alpha", 1.0) == 1.0
                                      and attribute(node, "beta", 1.0) == 1.0)
