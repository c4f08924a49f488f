"""gst-npu's runtime (libnpu) from Python.

Devices, streams, events, device buffers and pinned host memory, pools,
models and contexts (run / run_async), the VPP (to_tensor) and the
post-processing helpers; runtime failures raise npu.Error with the
runtime's message. ``npu.gst`` reads npuinfer's tensors from GStreamer
buffers (PyGObject and the GstNpu-1.0 typelib).

    import npu
    model = npu.Model("model.onnx")
    context = npu.Context(model)
    outputs = context.run({"input": array})
"""
from ._npu import *  # noqa: F401,F403
