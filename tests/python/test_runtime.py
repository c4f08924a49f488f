"""Devices, streams, events, memory and pools from Python."""
import numpy as np
import pytest

import npu


def test_devices_and_properties():
    assert npu.device_count() >= 1
    assert "cpu" in npu.backends()
    devices = npu.devices()
    assert len(devices) == npu.device_count()
    device = npu.Device()
    props = device.properties()
    assert props["backend"] == device.backend
    assert props["name"] == device.name and props["index"] == device.index
    assert props["compute_units"] >= 1
    free, total = device.memory_info()
    assert 0 < free <= total == props["memory_total"]
    cpu = npu.Device(backend="cpu")
    assert cpu.backend == "cpu"
    assert set(props["caps"]) >= {"host_visible_memory", "host_import", "async_copy"}


def test_unknown_device_raises_the_runtime_message():
    with pytest.raises(npu.Error) as error:
        npu.Device(backend="no-such-backend")
    assert error.value.status == "NPU_ERROR_NOT_FOUND"
    assert "no-such-backend" in error.value.message
    assert str(error.value).startswith("NPU_ERROR_NOT_FOUND: ")


def test_memcpy_round_trips_are_byte_exact():
    data = np.random.default_rng(1).integers(0, 256, 1 << 20, dtype=np.uint8)
    a, b = npu.Buffer(data.nbytes), npu.Buffer(data.nbytes)
    npu.memcpy(a, data)                                   # h2d
    npu.memcpy(b, a)                                      # d2d
    back = np.empty_like(data)
    npu.memcpy(back, b)                                   # d2h
    assert back.tobytes() == data.tobytes()
    # offsets and sizes, from bytes as well as arrays
    npu.memcpy(a, b"\x01\x02\x03\x04", dst_offset=10)
    part = bytearray(6)
    npu.memcpy(part, a, src_offset=9)
    assert bytes(part) == bytes([data[9], 1, 2, 3, 4, data[14]])


def test_async_copies_between_streams_with_an_event():
    """The C runtime example: upload on one stream, the other waits for it
    through an event on the device, reads it back."""
    device = npu.Device()
    upload, infer = npu.Stream(device), npu.Stream(device)
    uploaded = npu.Event(device)
    frame = np.full(4096, 0x42, np.uint8)
    buffer = npu.Buffer(frame.nbytes, device)
    npu.memcpy(buffer, frame, stream=upload)
    uploaded.record(upload)
    infer.wait_event(uploaded)
    back = np.zeros_like(frame)
    npu.memcpy(back, buffer, stream=infer)
    infer.synchronize()
    assert np.array_equal(back, frame)
    assert infer.query() and uploaded.query()
    assert upload.stats()["tasks_completed"] >= 1


def test_async_copy_keeps_a_temporary_source_alive():
    stream = npu.Stream()
    buffer = npu.Buffer(1 << 22)
    npu.memcpy(buffer, np.full(1 << 22, 7, np.uint8), stream=stream)  # the array is dropped here
    stream.synchronize()
    back = np.empty(1 << 22, np.uint8)
    npu.memcpy(back, buffer)
    assert (back == 7).all()


def test_event_timing():
    stream = npu.Stream()
    start, end = npu.Event(), npu.Event()
    start.record(stream)
    npu.memset(npu.Buffer(1 << 24), 1, stream=stream)
    end.record(stream)
    end.synchronize()
    assert start.elapsed_ms(end) >= 0
    with pytest.raises(npu.Error):
        npu.Event(timing=False).elapsed_ms(end)


def test_host_visible_buffer_is_a_numpy_view():
    device = npu.Device()
    buffer = npu.Buffer(64, device)
    if not device.properties()["caps"]["host_visible_memory"]:
        with pytest.raises(npu.Error):
            np.asarray(buffer)
        return
    view = np.asarray(buffer)
    assert view.dtype == np.uint8 and view.shape == (64,) and len(buffer) == 64
    view[:] = np.arange(64, dtype=np.uint8)
    back = np.empty(64, np.uint8)
    npu.memcpy(back, buffer)
    assert np.array_equal(back, np.arange(64))
    floats = np.frombuffer(buffer, np.float32)
    assert floats.shape == (16,)


def test_pinned_host_memory_and_memset():
    host = npu.HostMemory(256)
    view = np.frombuffer(host, np.uint8)
    view[:] = 9
    buffer = npu.Buffer(256)
    stream = npu.Stream()
    npu.memcpy(buffer, host, stream=stream)
    npu.memset(buffer, 0xAB, size=16, offset=8, stream=stream)
    stream.synchronize()
    out = np.empty(256, np.uint8)
    npu.memcpy(out, buffer)
    expected = np.full(256, 9, np.uint8)
    expected[8:24] = 0xAB
    assert np.array_equal(out, expected)


def test_copy_errors():
    buffer = npu.Buffer(16)
    with pytest.raises(npu.Error) as error:
        npu.memcpy(buffer, np.zeros(32, np.uint8))
    assert error.value.status == "NPU_ERROR_INVALID_ARGUMENT" and error.value.message
    with pytest.raises(ValueError, match="read-only"):
        npu.memcpy(b"0123456789abcdef", buffer)
    with pytest.raises(ValueError, match="C-contiguous"):
        npu.memcpy(buffer, np.zeros((8, 4), np.uint8)[:, ::2])
    with pytest.raises(TypeError):
        npu.memcpy(bytearray(4), b"abcd")


def test_pool_reuses_memory():
    pool = npu.Pool(max_cached_bytes=1 << 24)
    first = pool.alloc(1 << 20)
    assert first.size >= 1 << 20
    del first
    second = pool.alloc(1 << 20)
    stats = pool.stats()
    assert stats["requests"] == 2 and stats["hits"] == 1 and stats["allocations"] == 1
    assert stats["bytes_live"] >= 1 << 20
    del second
    pool.trim()
    assert pool.stats()["bytes_cached"] == 0


def test_device_stats_count_copies():
    device = npu.Device()
    before = device.stats()
    npu.memcpy(npu.Buffer(1000, device), np.zeros(1000, np.uint8))
    after = device.stats()
    assert after["bytes_h2d"] - before["bytes_h2d"] == 1000
    assert after["copies"] > before["copies"]
