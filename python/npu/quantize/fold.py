"""BatchNormalization folded into the Conv before it (as ONNX Runtime's
quantisation pre-processing does): the Conv's output then goes straight to
its activation and the next quantised node, so the int8 graph has no float
BatchNormalization between a QuantizeLinear and a DequantizeLinear."""
import numpy as np
from onnx import numpy_helper

from .graph import attribute, constants, consumers


def fold_batch_norms(model):
    """Folds in place every BatchNormalization whose input is the only use of
    a Conv's output, where the Conv's weights, bias and the normalisation's
    parameters are float initializers or Constants; returns how many."""
    graph = model.graph
    consts = constants(graph)
    initializers = {init.name: init for init in graph.initializer}
    users = consumers(graph)
    producer = {out: node for node in graph.node for out in node.output}
    graph_outputs = {o.name for o in graph.output}
    folded = []
    for bn in graph.node:
        if bn.op_type != "BatchNormalization" or len(bn.output) != 1:
            continue
        conv = producer.get(bn.input[0])
        params = [consts.get(name) for name in bn.input[1:5]]
        if (conv is None or conv.op_type != "Conv" or conv.output[0] in graph_outputs
                or len(users.get(conv.output[0], [])) != 1 or conv.input[1] not in initializers
                or any(p is None for p in params)
                or (len(conv.input) > 2 and conv.input[2] and conv.input[2] not in initializers)
                or len(users.get(conv.input[1], [])) != 1):
            continue
        weight = numpy_helper.to_array(initializers[conv.input[1]]).astype(np.float64)
        if weight.dtype.kind != "f" or initializers[conv.input[1]].data_type != 1:
            continue
        scale, shift, mean, var = (p.astype(np.float64) for p in params)
        factor = scale / np.sqrt(var + attribute(bn, "epsilon", 1e-5))
        has_bias = len(conv.input) > 2 and conv.input[2]
        bias = (numpy_helper.to_array(initializers[conv.input[2]]).astype(np.float64)
                if has_bias else np.zeros(weight.shape[0]))
        new_weight = weight * factor.reshape(-1, *([1] * (weight.ndim - 1)))
        new_bias = (bias - mean) * factor + shift
        initializers[conv.input[1]].CopyFrom(
            numpy_helper.from_array(new_weight.astype(np.float32), conv.input[1]))
        bias_name = conv.input[2] if has_bias and len(users.get(conv.input[2], [])) == 1 \
            else conv.output[0] + "_folded_bias"
        if bias_name in initializers:
            initializers[bias_name].CopyFrom(
                numpy_helper.from_array(new_bias.astype(np.float32), bias_name))
        else:
            graph.initializer.append(numpy_helper.from_array(new_bias.astype(np.float32),
                                                             bias_name))
        while len(conv.input) < 3:
            conv.input.append("")
        conv.input[2] = bias_name
        conv.output[0] = bn.output[0]
        folded.append(bn)
    for bn in folded:
        graph.node.remove(bn)
    return len(folded)
