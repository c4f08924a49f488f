"""Runs an ONNX model on gst-npu's runtime with chosen intermediate tensors
as extra graph outputs (what calibration and the report read)."""
import copy

import onnx

import npu


class Runner:
    def __init__(self, model, tensors):
        """model: an onnx ModelProto; tensors: names to return besides its outputs."""
        extended = copy.deepcopy(model)
        outputs = {o.name for o in extended.graph.output}
        for name in tensors:
            if name not in outputs:
                # No type or shape: the runtime's own inference gives them.
                extended.graph.output.append(onnx.ValueInfoProto(name=name))
        self.model = npu.Model.from_bytes(extended.SerializeToString())
        self.contexts = {}  # input shapes -> context planned for them

    def run(self, inputs):
        """inputs: {name: array}; returns {name: array} of every output."""
        shapes = tuple(sorted((name, array.shape) for name, array in inputs.items()))
        context = self.contexts.get(shapes)
        if context is None:
            context = npu.Context(self.model, shapes=dict(shapes))
            self.contexts[shapes] = context
        return context.run(inputs)
