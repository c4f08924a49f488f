"""npu.to_tensor against numpy."""
import numpy as np
import pytest

import npu

rng = np.random.default_rng(11)


def test_rgb_to_normalised_planar_tensor():
    frame = rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)
    mean, std = (0.485 * 255, 0.456 * 255, 0.406 * 255), (0.229 * 255, 0.224 * 255, 0.225 * 255)
    tensor = npu.to_tensor(frame, "RGB", (32, 24), mean=mean, std=std)
    assert tensor.shape == (1, 3, 24, 32) and tensor.dtype == np.float32
    expected = ((frame - np.array(mean)) / np.array(std)).transpose(2, 0, 1)[None]
    np.testing.assert_allclose(tensor, expected, rtol=1e-5, atol=1e-5)


def test_bgrx_to_interleaved_uint8_keeps_pixels():
    frame = rng.integers(0, 256, (10, 12, 4), dtype=np.uint8)
    tensor = npu.to_tensor(frame, "BGRx", (12, 10), dtype="uint8", layout="nhwc", order="bgr")
    assert tensor.shape == (1, 10, 12, 3) and tensor.dtype == np.uint8
    np.testing.assert_array_equal(tensor[0], frame[:, :, :3])


def test_nv12_matches_bt601_within_one_level():
    h, w = 16, 20
    y = rng.integers(16, 236, (h, w), dtype=np.uint8)
    u, v = 90, 170  # one chroma for the whole frame: no chroma interpolation in the reference
    frame = np.concatenate([y, np.tile(np.array([u, v], np.uint8), (h // 2, w // 2))])
    tensor = npu.to_tensor(frame, "NV12", (w, h), dtype="uint8")  # (H * 3/2, W): OpenCV's layout
    yy = 1.164 * (y.astype(np.float64) - 16)
    expected = np.stack([yy + 1.596 * (v - 128), yy - 0.392 * (u - 128) - 0.813 * (v - 128),
                         yy + 2.017 * (u - 128)])
    expected = np.clip(np.round(expected), 0, 255)
    assert np.abs(tensor[0].astype(np.int16) - expected).max() <= 1


def test_rois_become_batch_slots():
    frame = rng.integers(0, 256, (40, 60), dtype=np.uint8)
    rois = [(0, 0, 8, 6), (30, 20, 8, 6)]
    tensor = npu.to_tensor(frame, "GRAY8", (8, 6), rois=rois, dtype="uint8")
    assert tensor.shape == (2, 3, 6, 8)
    for slot, (x, y, w, h) in enumerate(rois):
        for channel in range(3):
            np.testing.assert_array_equal(tensor[slot, channel], frame[y:y + h, x:x + w])


def test_letterbox_mapping_and_padding():
    frame = np.full((50, 100, 3), 200, np.uint8)
    tensor, mappings = npu.to_tensor(frame, "RGB", (64, 64), dtype="uint8", letterbox=True,
                                     pad=(1, 2, 3), with_mapping=True)
    (scale_x, scale_y, pad_x, pad_y), = mappings
    assert scale_x == pytest.approx(0.64) and scale_y == pytest.approx(0.64)
    assert pad_x == 0 and pad_y == pytest.approx(16)
    np.testing.assert_array_equal(tensor[0, :, 0, 0], [1, 2, 3])       # padding above
    np.testing.assert_array_equal(tensor[0, :, 32, 32], [200, 200, 200])  # the picture
    boxes = np.array([[0, 16, 64, 48, 0.9, 1]], np.float32)  # the whole picture, in the model
    frame_boxes = npu.unletterbox(boxes, mappings[0], 100, 50)
    np.testing.assert_allclose(frame_boxes[0, :4], [0, 0, 100, 50], atol=1e-3)


def test_device_buffer_frame():
    frame = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
    buffer = npu.Buffer(frame.nbytes)
    npu.memcpy(buffer, frame)
    from_device = npu.to_tensor(buffer, "RGB", (8, 8), width=8, height=8)
    np.testing.assert_array_equal(from_device, npu.to_tensor(frame, "RGB", (8, 8)))


def test_errors():
    frame = np.zeros((8, 8, 3), np.uint8)
    with pytest.raises(ValueError, match="format must be one of NV12, NV21"):
        npu.to_tensor(frame, "P010", (8, 8))
    with pytest.raises(ValueError, match="layout must be one of nchw, nhwc"):
        npu.to_tensor(frame, "RGB", (8, 8), layout="chw")
    with pytest.raises(ValueError, match="needs 768 bytes, the frame has 192"):
        npu.to_tensor(frame, "RGB", (8, 8), width=16, height=16)
    with pytest.raises(TypeError, match="width and height"):
        npu.to_tensor(bytes(192), "RGB", (8, 8))
    with pytest.raises(npu.Error) as error:
        npu.to_tensor(frame, "RGB", (0, 8))
    assert error.value.message
