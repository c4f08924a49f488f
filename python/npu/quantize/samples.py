"""Calibration samples: model inputs read from .npy/.npz files, or pictures
and videos pre-processed as npuinfer does (size, scale, mean/std, channel
order, letterbox) through the runtime's VPP."""
import os
from dataclasses import dataclass

import numpy as np
from onnx import mapping

import npu

from . import images

ARRAY_SUFFIXES = (".npy", ".npz")
PICTURE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")
VIDEO_SUFFIXES = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".ts", ".h264", ".h265")


class SampleError(Exception):
    pass


@dataclass
class Preprocessing:
    """npuinfer's input = (pixel * scale - mean) / std, in the model's channel order."""
    scale: float = 1.0 / 255.0
    mean: tuple = (0.0,)
    std: tuple = (1.0,)
    channel_order: str = "rgb"
    letterbox: bool = False
    size: tuple = None       # (width, height) for a model whose input size is open
    frame_step: int = 1      # every Nth frame of a video


@dataclass
class ModelInput:
    name: str
    dtype: np.dtype
    shape: tuple  # ints, None where open


def model_inputs(model):
    initializers = {init.name for init in model.graph.initializer}
    found = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim)
        found.append(ModelInput(value.name, mapping.TENSOR_TYPE_TO_NP_TYPE[tensor.elem_type],
                                shape))
    return found


def fit(path, model_input, array):
    """array as the input's type, with a batch axis added when it lacks one."""
    if array.ndim == len(model_input.shape) - 1:
        array = array[None]
    fixed = all(want in (None, got) for want, got in zip(model_input.shape, array.shape))
    if array.ndim != len(model_input.shape) or not fixed:
        wanted = "x".join("?" if d is None else str(d) for d in model_input.shape)
        raise SampleError(f"{path}: shape {'x'.join(map(str, array.shape))} does not fit "
                          f"input '{model_input.name}' ({wanted})")
    return np.ascontiguousarray(array, model_input.dtype)


def array_sample(path, inputs):
    """One sample from a .npy (a model of one input) or .npz (arrays named as the inputs)."""
    try:
        data = np.load(path)
    except (OSError, ValueError) as error:
        raise SampleError(f"{path}: not a numpy file: {error}") from None
    if path.endswith(".npy"):
        if len(inputs) != 1:
            raise SampleError(f"{path}: the model has {len(inputs)} inputs: give .npz files "
                              "with one array per input name")
        return {inputs[0].name: fit(path, inputs[0], data)}
    missing = [i.name for i in inputs if i.name not in data.files]
    if missing:
        raise SampleError(f"{path}: no array for input(s) {', '.join(missing)}")
    return {i.name: fit(path, i, data[i.name]) for i in inputs}


def picture_samples(path, inputs, pre):
    """The frames of a picture or video as samples of a one-image-input model."""
    if len(inputs) != 1 or len(inputs[0].shape) != 4:
        raise SampleError(f"{path}: pictures calibrate models of one NCHW or NHWC input")
    model_input = inputs[0]
    channels_last = model_input.shape[3] in (1, 3) and model_input.shape[1] not in (1, 3)
    height, width = model_input.shape[1:3] if channels_last else model_input.shape[2:4]
    if height is None or width is None:
        if pre.size is None:
            raise SampleError(f"input '{model_input.name}' has an open size: give --size WxH")
        width, height = pre.size
    float_input = model_input.dtype == np.float32
    options = dict(dtype="float32" if float_input else "uint8",
                   layout="nhwc" if channels_last else "nchw", order=pre.channel_order,
                   letterbox=pre.letterbox, pad=(114, 114, 114))
    if float_input:  # to_tensor computes (pixel - mean') / std' in pixel units
        options.update(mean=[m / pre.scale for m in pre.mean],
                       std=[s / pre.scale for s in pre.std])
    try:
        for index, (pixel_format, frame) in enumerate(images.frames(path)):
            if index % pre.frame_step == 0:
                yield {model_input.name: npu.to_tensor(frame, pixel_format, (width, height),
                                                       **options)}
    except images.DecodeError as error:
        raise SampleError(str(error)) from None


def file_samples(path, inputs, pre):
    suffix = os.path.splitext(path)[1].lower()
    if suffix in ARRAY_SUFFIXES:
        yield array_sample(path, inputs)
    elif suffix in PICTURE_SUFFIXES + VIDEO_SUFFIXES + images.PNM_SUFFIXES:
        yield from picture_samples(path, inputs, pre)
    else:
        raise SampleError(f"{path}: not a calibration file (.npy, .npz, a picture or a video)")


def load(paths, inputs, pre, limit):
    """Up to limit samples ({input name: array}) from files and folders (their
    files of known kinds, in name order)."""
    samples = []
    for path in paths:
        if os.path.isdir(path):
            files = [os.path.join(path, f) for f in sorted(os.listdir(path))
                     if f.lower().endswith(ARRAY_SUFFIXES + PICTURE_SUFFIXES + VIDEO_SUFFIXES
                                           + images.PNM_SUFFIXES)]
        elif os.path.exists(path):
            files = [path]
        else:
            raise SampleError(f"{path}: no such file or folder")
        for file in files:
            for sample in file_samples(file, inputs, pre):
                if len(samples) == limit:
                    return samples
                samples.append(sample)
    if not samples:
        raise SampleError("no calibration samples: give .npy/.npz files, pictures, videos "
                          "or folders of them with --calibration")
    return samples
