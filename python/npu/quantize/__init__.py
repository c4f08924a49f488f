"""npu.quantize: post-training quantisation of an fp32 ONNX model into a QDQ
ONNX model (what `npu-quantize` runs): per-channel symmetric int8 weights of
Conv/Gemm/MatMul with int32 biases, uint8 or int8 activations calibrated on
samples run through gst-npu's runtime, and SQNR against fp32 per tensor.

    from npu import quantize
    result = quantize.quantize(onnx.load("model.onnx"), samples, quantize.Options())
    onnx.save(result.model, "model.qdq.onnx"); print(result.report())
"""
from dataclasses import dataclass, field

import onnx

from . import report as sqnr
from .fold import fold_batch_norms
from .graph import make_plan
from .opset import upgrade
from .params import activation_params
from .qdq import to_qdq
from .ranges import calibrate, clip_to_saturation
from .runner import Runner


class QuantizeError(Exception):
    pass


@dataclass
class Options:
    activation_type: str = "uint8"       # or "int8"
    method: str = "minmax"               # "percentile", "entropy"
    percentile: float = 99.99
    exclude_nodes: tuple = ()
    exclude_op_types: tuple = ()
    report_samples: int = 16             # samples the SQNR report runs (0: no report)
    exclude_depthwise: bool = False      # depthwise convolutions stay fp32
    fold: bool = True                    # BatchNormalization and bias Adds into convolutions


@dataclass
class Result:
    model: onnx.ModelProto
    quantised_nodes: list                 # (name, op type)
    weight_rows: list = field(default_factory=list)
    activation_rows: list = field(default_factory=list)
    output_db: dict = field(default_factory=dict)  # graph output -> SQNR of the QDQ model
    kept_opset: str = None                # why the weights are per tensor, if they are

    def report(self):
        weights = (f"weights (per-tensor symmetric int8: {self.kept_opset}):" if self.kept_opset
                   else "weights (per-channel symmetric int8):")
        lines = [sqnr.table(self.weight_rows, weights), "",
                 sqnr.table(self.activation_rows, "activations:"), "", "model outputs:"]
        lines += [f"  {name}: SQNR {sqnr.format_db(db)} dB vs fp32"
                  for name, db in self.output_db.items()]
        return "\n".join(lines)


def producers(model):
    return {out: f"{node.name or '?'} ({node.op_type})"
            for node in model.graph.node for out in node.output}


def quantize(model, samples, options):
    """The QDQ form of model, calibrated on samples ({input name: array}, run
    on the runtime's default device), with its SQNR report. A
    BatchNormalization after a Conv is folded into it first (in a copy;
    unless options.fold is off), and a model below opset 13 is brought to
    13, for per-channel weights."""
    folded = onnx.ModelProto()
    folded.CopyFrom(model)
    if options.fold:
        fold_batch_norms(folded)
    model, kept_opset = upgrade(folded, samples[0])
    plan = make_plan(model, options.exclude_nodes, options.exclude_op_types,
                     options.exclude_depthwise)
    if not plan.nodes:
        raise QuantizeError("nothing to quantise: no Conv, Gemm or MatMul on float32 data "
                            "is left after the exclusions")
    fp32 = Runner(model, plan.activations)
    ranges = clip_to_saturation(calibrate(fp32.run, samples, plan.activations, options.method,
                                          options.percentile), model.graph)
    params = {name: activation_params(*ranges[name], options.activation_type)
              for name in plan.activations}
    for name, source in plan.same_as.items():
        params[name] = params[source]
    qdq, dequantized, weights = to_qdq(model, plan, params)
    onnx.checker.check_model(qdq)
    nodes = [(model.graph.node[i].name, model.graph.node[i].op_type) for i in plan.nodes]
    result = Result(qdq, nodes, sqnr.weight_rows(weights), kept_opset=kept_opset)
    if options.report_samples:
        outputs = [o.name for o in model.graph.output]
        quantised = Runner(qdq, dequantized.values())
        quant, measured = sqnr.measure(fp32.run, quantised.run, samples[:options.report_samples],
                                       params, dequantized, outputs)
        result.activation_rows = sqnr.activation_rows(plan.activations, params,
                                                      producers(model), quant, measured)
        result.output_db = {name: measured.db(name) for name in outputs}
    return result
