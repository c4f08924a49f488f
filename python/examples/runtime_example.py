#!/usr/bin/env python3
"""The runtime example of the README (tests/runtime/example_runtime.c) in
Python: upload a frame on one stream, wait for it on another stream through
an event (the device waits, not this thread), read it back.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/runtime_example.py
"""
import numpy as np

import npu


def main():
    frame = np.full(4096, 0x42, np.uint8)
    device = npu.Device()                 # NPU_BACKEND / NPU_DEVICE choose
    upload, infer = npu.Stream(device), npu.Stream(device)
    uploaded = npu.Event(device)
    buffer = npu.Buffer(frame.nbytes, device)
    npu.memcpy(buffer, frame, stream=upload)
    uploaded.record(upload)
    infer.wait_event(uploaded)            # queued on the device
    back = np.empty_like(frame)
    npu.memcpy(back, buffer, stream=infer)
    infer.synchronize()
    ok = np.array_equal(frame, back)
    print(f"{device.name}: round trip {'ok' if ok else 'CORRUPT'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
