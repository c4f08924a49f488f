"""Bringing a model below opset 13 to opset 13, where DequantizeLinear takes
an axis: per-channel weights instead of one scale per tensor (PP-OCR's
exports are opset 9 and 11, and one scale for a whole depthwise or
BatchNorm-scaled weight loses most of its channels)."""
import copy

import onnx
from onnx import helper, version_converter

from .qdq import PER_AXIS_OPSET, default_opset
from .runner import Runner

# Operators whose opset 13 form differs by the input's rank (the converter
# needs it, and a dynamic model's shape inference may not give it).
RANK_DEPENDENT = ("Softmax", "LogSoftmax", "Hardmax")


def known_ranks(model):
    inferred = onnx.shape_inference.infer_shapes(model)
    return {v.name for v in list(inferred.graph.value_info) + list(inferred.graph.input)
            if v.type.tensor_type.HasField("shape")}


def upgrade(model, sample):
    """(model at opset 13, None), or (model unchanged, why not) when it is at
    13 already or the conversion fails. `sample` ({input: array}) is run once
    on the runtime for the ranks shape inference leaves open."""
    opset = default_opset(model)
    if opset >= PER_AXIS_OPSET:
        return model, None
    annotated = copy.deepcopy(model)
    known = known_ranks(model)
    unknown = sorted({n.input[0] for n in model.graph.node
                      if n.op_type in RANK_DEPENDENT and n.input[0] not in known})
    if unknown:
        shapes = Runner(model, unknown).run(sample)
        for name in unknown:
            dims = [f"{name}_{d}" for d in range(shapes[name].ndim)]
            annotated.graph.value_info.append(
                helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, dims))
    try:
        upgraded = version_converter.convert_version(annotated, PER_AXIS_OPSET)
        onnx.checker.check_model(upgraded)
    except (RuntimeError, onnx.checker.ValidationError) as error:
        return model, f"opset {opset} kept (weights per tensor): {error}"
    return upgraded, None
