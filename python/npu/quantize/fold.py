"""Per-channel affine followers folded into the Conv or ConvTranspose before
them (as ONNX Runtime's quantisation pre-processing does for
BatchNormalization): a BatchNormalization, or an Add of one constant per
output channel (PaddlePaddle's exports add a ConvTranspose's bias that way).
The convolution's output then goes straight to its activation and the next
quantised node, so the int8 graph has no float BatchNormalization between a
QuantizeLinear and a DequantizeLinear."""
import numpy as np
from onnx import numpy_helper

from .graph import attribute, constants, consumers
from .qdq import remove_unused


def output_channels(conv, weight):
    """The output channels of a convolution's weight, or None where one
    scale per output channel is not one slice of it (a grouped
    ConvTranspose: its weight is [C, M/group, k...])."""
    if conv.op_type == "Conv":
        return weight.shape[0]
    return weight.shape[1] if attribute(conv, "group", 1) == 1 else None


def affine(node, consts, channels):
    """(factor, shift) per output channel when node computes x * factor +
    shift of its input 0 from constants, else None."""
    if node.op_type == "BatchNormalization" and len(node.output) == 1:
        params = [consts.get(name) for name in node.input[1:5]]
        if any(p is None or p.shape != (channels,) for p in params):
            return None
        scale, shift, mean, var = (p.astype(np.float64) for p in params)
        factor = scale / np.sqrt(var + attribute(node, "epsilon", 1e-5))
        return factor, shift - mean * factor
    if node.op_type == "Add" and len(node.input) == 2:
        addend = consts.get(node.input[1])
        if addend is None or addend.dtype != np.float32 or addend.size != channels or \
                addend.ndim > 4 or (addend.ndim >= 3 and addend.shape[-3] != channels) or \
                (addend.ndim < 3 and channels > 1):
            return None  # (only [C, 1, 1] and [1, C, 1, 1] add along the channels)
        return np.ones(channels), addend.reshape(-1).astype(np.float64)
    return None


def fold_batch_norms(model):
    """Folds in place every BatchNormalization or per-channel constant Add
    whose input is the only use of a Conv's or one-group ConvTranspose's
    output, where the weights, bias and follower's parameters are float
    constants (initializers or Constant nodes); returns how many. Nodes are
    in topological order, so a chain (ConvTranspose -> Add -> BatchNormalization)
    folds in one pass."""
    graph = model.graph
    consts = constants(graph)
    users = consumers(graph)
    producer = {out: node for node in graph.node for out in node.output}
    graph_outputs = {o.name for o in graph.output}
    folded = []
    for follower in graph.node:
        conv = producer.get(follower.input[0]) if follower.input else None
        if (conv is None or conv.op_type not in ("Conv", "ConvTranspose")
                or conv.output[0] in graph_outputs
                or len(users.get(conv.output[0], [])) != 1
                or consts.get(conv.input[1]) is None
                or consts[conv.input[1]].dtype != np.float32
                or (len(conv.input) > 2 and conv.input[2] and conv.input[2] not in consts)):
            continue
        weight = consts[conv.input[1]].astype(np.float64)
        channels = output_channels(conv, weight)
        params = affine(follower, consts, channels) if channels else None
        if params is None:
            continue
        factor, shift = params
        has_bias = len(conv.input) > 2 and conv.input[2]
        bias = consts[conv.input[2]].astype(np.float64) if has_bias else np.zeros(channels)
        axis = 0 if conv.op_type == "Conv" else 1
        shape = [-1 if a == axis else 1 for a in range(weight.ndim)]
        name = follower.output[0]
        consts[name + "_folded_weight"] = (weight * factor.reshape(shape)).astype(np.float32)
        consts[name + "_folded_bias"] = (bias * factor + shift).astype(np.float32)
        graph.initializer.extend(numpy_helper.from_array(consts[n], n) for n in
                                 (name + "_folded_weight", name + "_folded_bias"))
        conv.input[1] = name + "_folded_weight"
        while len(conv.input) < 3:
            conv.input.append("")
        conv.input[2] = name + "_folded_bias"
        conv.output[0] = name
        producer[name] = conv
        folded.append(follower)
    for node in folded:
        graph.node.remove(node)
    remove_unused(graph)  # the weights and biases folded away
    return len(folded)
