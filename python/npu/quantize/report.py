"""Signal-to-quantisation-noise ratios against fp32, per quantised tensor:
'quant' is the tensor's own rounding (its fp32 values through its Q/DQ),
'model' the QDQ model's value against fp32's, with every error upstream."""
import math
from dataclasses import dataclass

import numpy as np


def sqnr_db(signal, noise):
    """10 log10(signal power / noise power); inf for no noise."""
    if noise == 0:
        return math.inf
    return 10.0 * math.log10(signal / noise) if signal > 0 else -math.inf


@dataclass
class Row:
    tensor: str
    source: str   # the node producing it ('name (Op)'), the weight's node, or 'graph input'
    detail: str   # the calibrated range, or the weight's channels
    quant_db: float
    model_db: float = None


class Powers:
    """Running sums of squares, per tensor, of the signal and of its errors."""

    def __init__(self):
        self.sums = {}

    def add(self, key, reference, error):
        signal, noise = self.sums.get(key, (0.0, 0.0))
        reference, error = reference.astype(np.float64), error.astype(np.float64)
        self.sums[key] = (signal + float(np.vdot(reference, reference)),
                          noise + float(np.vdot(error, error)))

    def db(self, key):
        return sqnr_db(*self.sums[key])


def measure(fp32_run, qdq_run, samples, params, dequantized, outputs):
    """Powers of 'quant' and 'model' errors per activation and of each graph output."""
    quant, model = Powers(), Powers()
    for sample in samples:
        reference, quantised = fp32_run(sample), qdq_run(sample)
        for name, p in params.items():
            x = reference[name]
            quant.add(name, x, x - p.fake_quantize(x))
            model.add(name, x, x - quantised[dequantized[name]])
        for name in outputs:
            model.add(name, reference[name], reference[name] - quantised[name])
    return quant, model


def weight_rows(weights):
    rows = []
    for name, node_name, op_type, values, dequantized in weights:
        error = values - dequantized
        db = sqnr_db(float(np.vdot(values, values)), float(np.vdot(error, error)))
        shape = "x".join(map(str, values.shape))
        rows.append(Row(name, f"{node_name} ({op_type})", shape, db))
    return rows


def activation_rows(activations, params, sources, quant, model):
    return [Row(name, sources.get(name, "graph input"),
                f"[{params[name].low:.4g}, {params[name].high:.4g}]",
                quant.db(name), model.db(name)) for name in activations]


def format_db(value):
    return "-" if value is None else f"{value:.1f}"


def table(rows, title):
    header = ("tensor", "from", "range / shape", "quant dB", "model dB")
    cells = [header] + [(r.tensor, r.source, r.detail, format_db(r.quant_db),
                         format_db(r.model_db)) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    lines = [title]
    for c in cells:
        lines.append("  ".join(c[i].ljust(widths[i]) if i < 3 else c[i].rjust(widths[i])
                               for i in range(len(header))))
    return "\n".join(lines)
