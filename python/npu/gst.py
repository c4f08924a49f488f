"""npuinfer's results in GStreamer buffers, read from Python (PyGObject).

npuinfer attaches each frame's output tensors as a GstNpuTensorMeta
(the GstNpu-1.0 typelib describes it); npudecode writes its answers as
GstVideoRegionOfInterestMeta params. In a pad probe or on an appsink's
samples:

    import npu.gst
    for result in npu.gst.tensor_metas(buffer):
        print(result.pad_index, result.roi_id, result.tensors["scores"].shape)
    for region in npu.gst.regions(buffer):
        print(region.box, region.params.get("text", {}).get("text"))

Arrays are copies: they stay valid after the buffer is gone.
"""
from collections import namedtuple

import gi
import numpy as np

gi.require_version("Gst", "1.0")
gi.require_version("GstVideo", "1.0")
gi.require_version("GstNpu", "1.0")
from gi.repository import GLib, GstNpu  # noqa: E402

from ._npu import numpy_dtype  # noqa: E402

TensorResult = namedtuple("TensorResult", "tensors roi_id pad_index batch_index batch_size "
                                          "scale offset")
TensorResult.__doc__ = """One inference's outputs on a frame: tensors {name: ndarray}; roi_id
the region they were computed on (-1: the whole frame); the pad (sink_%u) and
batch slot; scale and offset map frame pixels into the model input
(input = frame * scale + offset; scale (0, 0) when not known)."""

Region = namedtuple("Region", "id type box params")
Region.__doc__ = """A GstVideoRegionOfInterestMeta: id, type (e.g. 'text'), box
(x, y, width, height) and params {structure name: {field: value}}, e.g.
params['text']['text'] after npudecode method=ctc."""


def tensor_array(tensor):
    """A GstNpu.Tensor's values as a numpy array of its dtype and dims."""
    data = tensor.get_bytes()
    if data is None:
        raise ValueError(f"the values of tensor '{tensor.name}' cannot be mapped")
    return np.frombuffer(data.get_data(), dtype=numpy_dtype(tensor.dtype)).reshape(
        tensor.get_dims())


def tensor_metas(buffer):
    """Every GstNpuTensorMeta of a Gst.Buffer as TensorResult, in the order
    they were attached (one per region in npuinfer's roi mode)."""
    results = []
    for meta in GstNpu.buffer_get_npu_tensor_metas(buffer):
        tensors = {}
        for index in range(meta.n_tensors):
            tensor = meta.get_tensor(index)
            tensors[tensor.name] = tensor_array(tensor)
        results.append(TensorResult(tensors, meta.roi_id, meta.pad_index, meta.batch_index,
                                    meta.batch_size, (meta.scale_x, meta.scale_y),
                                    (meta.offset_x, meta.offset_y)))
    return results


def _structure_dict(structure):
    names = [structure.nth_field_name(i) for i in range(structure.n_fields())]
    return {name: structure.get_value(name) for name in names}


def regions(buffer):
    """Every GstVideoRegionOfInterestMeta of a Gst.Buffer as Region, its
    params as dicts (npudecode's classification, detection, text)."""
    found = []
    for roi in GstNpu.buffer_get_npu_region_metas(buffer):
        params = {structure.get_name(): _structure_dict(structure)
                  for structure in GstNpu.region_get_params(roi)}
        found.append(Region(roi.id, GLib.quark_to_string(roi.roi_type),
                            (roi.x, roi.y, roi.w, roi.h), params))
    return found
