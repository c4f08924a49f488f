"""Calibration: the range [low, high] of each activation over the calibration
samples, by min-max, percentile, entropy (KL divergence, TensorRT's method) or
mse (the least squared error of the quantised values)."""
import numpy as np

from .graph import consumers

METHODS = ("minmax", "percentile", "entropy", "mse")
HISTOGRAM_BINS = 2048
ENTROPY_STEP = 16     # thresholds tried every this many histogram bins
# Fewer values than this make a histogram of HISTOGRAM_BINS too sparse for KL
# to mean anything (a pooled vector): such tensors keep their min-max range.
ENTROPY_MIN_VALUES = 4 * HISTOGRAM_BINS
# Sigmoid's output moves by less than 1.2e-7 beyond inputs of this magnitude:
# a range wider than that spends levels on values that make no difference
# (PP-OCR det's logits span about [-174, 113], a step of 1.1 in uint8,
# around its probability map's threshold at -0.85).
SIGMOID_SATURATION = 16.0
# The ends the mse method tries: the observed minimum and maximum times
# 2^(-k / MSE_STEPS_PER_OCTAVE), down to 1 / 2^MSE_OCTAVES of them.
MSE_STEPS_PER_OCTAVE, MSE_OCTAVES = 16, 8


def observed_extremes(run, samples, names):
    """{name: (min, max)} over all samples (the min-max method, and the
    histograms' ranges for the others)."""
    extremes = {}
    for sample in samples:
        outputs = run(sample)
        for name in names:
            x = outputs[name]
            low, high = float(x.min()), float(x.max())
            if name in extremes:
                low, high = min(low, extremes[name][0]), max(high, extremes[name][1])
            extremes[name] = (low, high)
    return extremes


def histograms(run, samples, names, extremes, magnitude):
    """{name: counts} of each tensor's values over its [min, max] (or of its
    magnitudes over [0, max |x|] when magnitude is set)."""
    counts = {name: np.zeros(HISTOGRAM_BINS, np.int64) for name in names}
    for sample in samples:
        outputs = run(sample)
        for name in names:
            x = outputs[name].ravel()
            low, high = extremes[name]
            if magnitude:
                x, low, high = np.abs(x), 0.0, max(-low, high)
            counts[name] += np.histogram(x, HISTOGRAM_BINS, (low, high or 1.0))[0]
    return counts


def percentile_range(counts, low, high, percentile):
    """The values below which (100 - percentile)% and percentile% of the samples lie."""
    cumulative = np.cumsum(counts) / max(counts.sum(), 1)
    edges = np.linspace(low, high, HISTOGRAM_BINS + 1)
    tail = 1.0 - percentile / 100.0
    first = int(np.searchsorted(cumulative, tail, side="right"))
    last = int(np.searchsorted(cumulative, 1.0 - tail, side="left"))
    return float(edges[first]), float(edges[min(last + 1, HISTOGRAM_BINS)])


def entropy_threshold(counts, magnitude_max, levels=128):
    """The |x| threshold whose clipped histogram, quantised to levels (those
    on one side of zero), diverges least (KL) from the observed one."""
    counts = counts.astype(np.float64)
    best_bins, best_divergence = HISTOGRAM_BINS, np.inf
    for bins in range(levels, HISTOGRAM_BINS + 1, ENTROPY_STEP):
        reference = counts[:bins].copy()
        reference[-1] += counts[bins:].sum()  # the clipped values land in the last bin
        kept = counts[:bins]
        level = np.arange(bins) * levels // bins
        level_sum = np.bincount(level, weights=kept, minlength=levels)
        level_used = np.bincount(level, weights=kept > 0, minlength=levels)
        # each level's count spread evenly over the bins it covers that had values
        candidate = np.where(kept > 0, level_sum[level] / np.maximum(level_used[level], 1), 0)
        divergence = kl_divergence(reference, candidate)
        if divergence < best_divergence:
            best_bins, best_divergence = bins, divergence
    return best_bins * magnitude_max / HISTOGRAM_BINS


def mse_range(counts, low, high, levels=255):
    """The range inside [low, high] (zero kept in it) over which quantising
    to levels + 1 values (asymmetric) gives the least squared error, clipped
    values included, over the histogram's bin centres: an end that outliers
    widen is pulled in only while the finer step repays the clipping. Each
    end is searched with the other fixed, twice over."""
    edges = np.linspace(low, high, HISTOGRAM_BINS + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    weights = counts.astype(np.float64)
    shares = 2.0 ** (-np.arange(MSE_STEPS_PER_OCTAVE * MSE_OCTAVES + 1) / MSE_STEPS_PER_OCTAVE)

    def error(lo, hi):
        step = (hi - lo) / levels or 1.0
        zero = np.round(-lo / step)
        q = (np.clip(np.round(centres / step) + zero, 0, levels) - zero) * step
        return float(np.sum(weights * (centres - q) ** 2))

    best = (min(low, 0.0), max(high, 0.0))
    for _ in range(2):
        lows = [(min(low * s, 0.0), best[1]) for s in shares]
        best = min(lows, key=lambda r: error(*r))
        highs = [(best[0], max(high * s, 0.0)) for s in shares]
        best = min(highs, key=lambda r: error(*r))
    return best


def kl_divergence(p, q):
    p, q = p / max(p.sum(), 1e-30), q / max(q.sum(), 1e-30)
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / np.maximum(q[mask], 1e-12))))


def calibrate(run, samples, names, method="minmax", percentile=99.99):
    """{name: (low, high)}: one pass over the samples for min-max, two for the others."""
    extremes = observed_extremes(run, samples, names)
    if method == "minmax":
        return extremes
    counts = histograms(run, samples, names, extremes, magnitude=(method == "entropy"))
    ranges = {}
    for name in names:
        low, high = extremes[name]
        if method == "percentile":
            ranges[name] = percentile_range(counts[name], low, high, percentile)
        elif method == "mse":
            ranges[name] = mse_range(counts[name], low, high)
        elif counts[name].sum() < ENTROPY_MIN_VALUES:
            ranges[name] = (low, high)
        elif low < 0:
            threshold = entropy_threshold(counts[name], max(-low, high), 128)
            ranges[name] = (max(low, -threshold), min(high, threshold))
        else:
            # No negative values: all the type's levels on one side, and the
            # zeros (half a Relu's output, exact at any threshold) left out,
            # as their spike would smear into the first level of each candidate.
            nonzero = counts[name].copy()
            nonzero[0] = 0
            ranges[name] = (low, min(high, entropy_threshold(nonzero, high, 256)))
    return ranges


def clip_to_saturation(ranges, graph):
    """The ranges of the tensors that only Sigmoids read (not graph outputs)
    clipped to [-SIGMOID_SATURATION, SIGMOID_SATURATION], in place."""
    readers = consumers(graph)
    outputs = {o.name for o in graph.output}
    for name, (low, high) in ranges.items():
        nodes = readers.get(name, [])
        if nodes and name not in outputs and all(n.op_type == "Sigmoid" for n in nodes):
            ranges[name] = (max(low, -SIGMOID_SATURATION), min(high, SIGMOID_SATURATION))
    return ranges
