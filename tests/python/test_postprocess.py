"""Post-processing helpers on known answers."""
import numpy as np
import pytest

import npu


def test_topk_and_softmax():
    scores = np.array([0.5, 3.0, -1.0, 2.0], np.float32)
    indices, values = npu.topk(scores, 2)
    assert indices.tolist() == [1, 3] and values.tolist() == [3.0, 2.0]
    indices, probabilities = npu.topk(scores, 4, softmax=True)
    expected = np.exp(scores) / np.exp(scores).sum()
    np.testing.assert_allclose(probabilities, expected[indices], rtol=1e-5)


def test_yolov8_decode_then_nms():
    # [4 + 2 classes, 3 boxes]: cx, cy, w, h rows then class scores
    output = np.array([[50, 52, 200],
                       [50, 50, 100],
                       [20, 20, 10],
                       [20, 20, 10],
                       [0.9, 0.8, 0.1],
                       [0.1, 0.2, 0.7]], np.float32)[None]
    detections = npu.yolo_decode(output, version=8, threshold=0.5)
    assert detections.shape == (3, 6)
    kept = npu.nms(detections, iou_threshold=0.5)
    assert kept.shape == (2, 6)
    np.testing.assert_allclose(kept[0], [40, 40, 60, 60, 0.9, 0], rtol=1e-6)
    np.testing.assert_allclose(kept[1], [195, 95, 205, 105, 0.7, 1], rtol=1e-6)


def test_ssd_decode():
    boxes = np.array([[0.1, 0.2, 0.5, 0.6], [0, 0, 1, 1]], np.float32)
    scores = np.array([[0.1, 0.9], [0.9, 0.1]], np.float32)  # class 0: background
    detections = npu.ssd_decode(boxes, scores, 100, 50, threshold=0.5)
    np.testing.assert_allclose(detections, [[10, 10, 50, 30, 0.9, 1]], rtol=1e-6)


def test_ctc_decode():
    path = [1, 1, 0, 2, 0, 2, 2, 3]  # blank 0; repeats merge unless a blank separates them
    scores = np.full((len(path), 4), 0.01, np.float32)
    scores[np.arange(len(path)), path] = 0.9
    text, confidence = npu.ctc_decode(scores, ["a", "b", "c"])
    assert text == "abbc"
    assert confidence == pytest.approx(0.9)


def test_dbnet_regions_find_a_text_block():
    probability = np.zeros((1, 1, 64, 96), np.float32)
    probability[0, 0, 20:30, 10:70] = 0.95
    boxes, corners, scores = npu.dbnet_regions(probability, threshold=0.3, box_threshold=0.6)
    assert boxes.shape == (1, 4) and corners.shape == (1, 4, 2) and scores.shape == (1,)
    x0, y0, x1, y1 = boxes[0]
    assert x0 < 10 < 70 < x1 and y0 < 20 < 30 < y1  # unclipped outwards
    assert scores[0] == pytest.approx(0.95, abs=1e-3)


def test_errors():
    with pytest.raises(ValueError, match="N x 6"):
        npu.nms(np.zeros((2, 5), np.float32))
    with pytest.raises(ValueError, match="version must be 5 or 8"):
        npu.yolo_decode(np.zeros((6, 3), np.float32), version=7)
    with pytest.raises(npu.Error) as error:
        npu.topk(np.zeros(3, np.float32), 0)
    assert error.value.status == "NPU_ERROR_INVALID_ARGUMENT"
