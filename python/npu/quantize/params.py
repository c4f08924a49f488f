"""Scales and zero points: activations from their calibrated ranges
(asymmetric uint8 or int8), weights per channel symmetric int8, biases int32."""
from dataclasses import dataclass

import numpy as np

ACTIVATION_TYPES = {"uint8": (np.uint8, 0, 255), "int8": (np.int8, -128, 127)}
WEIGHT_LEVEL = 127  # symmetric [-127, 127]: no -128, so w and -w quantise alike
INT32_MAX = np.iinfo(np.int32).max


@dataclass
class ActivationParams:
    scale: np.float32
    zero_point: np.ndarray  # a scalar of the activation type
    low: float
    high: float

    def fake_quantize(self, x):
        """x through QuantizeLinear then DequantizeLinear, as the QDQ model computes it."""
        info = np.iinfo(self.zero_point.dtype)
        zp = int(self.zero_point)
        q = np.clip(np.round(x / self.scale) + zp, info.min, info.max)
        return ((q - zp) * self.scale).astype(np.float32)


def activation_params(low, high, type_name):
    """Asymmetric parameters for [low, high] widened to hold 0 (zero padding and
    Relu's zeros are then exact)."""
    dtype, qmin, qmax = ACTIVATION_TYPES[type_name]
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    scale = np.float32((high - low) / (qmax - qmin)) or np.float32(1.0)
    zero_point = int(np.clip(np.round(qmin - low / scale), qmin, qmax))
    return ActivationParams(scale, np.array(zero_point, dtype), low, high)


def quantize_weight(weight, axis):
    """Per-channel (axis) symmetric int8: (int8 values, float32 scales). An
    axis of None quantises the whole tensor with one scale."""
    others = tuple(a for a in range(weight.ndim) if a != axis) if axis is not None else None
    absmax = np.abs(weight).max(axis=others)
    scale = np.array(absmax / WEIGHT_LEVEL, np.float32)  # an array also per tensor
    scale[scale == 0] = 1.0  # an all-zero channel: any scale gives zeros
    shaped = scale if axis is None else scale.reshape(
        [-1 if a == axis else 1 for a in range(weight.ndim)])
    values = np.clip(np.round(weight / shaped), -WEIGHT_LEVEL, WEIGHT_LEVEL).astype(np.int8)
    return values, scale


def dequantize_weight(values, scale, axis):
    shaped = scale if axis is None else scale.reshape(
        [-1 if a == axis else 1 for a in range(values.ndim)])
    return values.astype(np.float32) * shaped


def quantize_bias(bias, input_scale, weight_scale):
    """int32 bias at input scale x weight scale (what an int8 kernel's
    accumulator holds), saturated; returns (int32 values, float32 scales)."""
    scale = (np.float32(input_scale) * weight_scale).astype(np.float32)
    values = np.clip(np.round(bias / scale), -INT32_MAX, INT32_MAX).astype(np.int32)
    return values, scale
