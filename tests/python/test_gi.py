"""npuinfer's results read in Python through the GstNpu-1.0 typelib
(PyGObject): tensors from an appsink and a pad probe, regions and their
params, roi-mode tensors linked to their regions."""
import os

import numpy as np
import pytest

if not os.environ.get("NPU_INFER_MODELS"):
    pytest.skip("needs the plugin, the typelib and tests/gst's models (meson test sets "
                "NPU_INFER_MODELS)", allow_module_level=True)

import gi  # noqa: E402

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

import npu.gst  # noqa: E402

Gst.init(None)
CHANNEL_MEAN = os.path.join(os.environ["NPU_INFER_MODELS"], "channel_mean.onnx")


def pull_all(description):
    """Runs the pipeline to EOS and returns [(tensor results, regions)] of
    each frame its appsink 'results' got."""
    pipeline = Gst.parse_launch(description)
    sink = pipeline.get_by_name("results")
    pipeline.set_state(Gst.State.PLAYING)
    frames = []
    while (sample := sink.emit("pull-sample")) is not None:
        buffer = sample.get_buffer()
        frames.append((npu.gst.tensor_metas(buffer), npu.gst.regions(buffer)))
    error = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert error is None, error.parse_error()
    return frames


def test_tensors_and_classification_from_appsink():
    frames = pull_all(
        "videotestsrc num-buffers=3 pattern=red ! video/x-raw,width=64,height=64 ! "
        f"npuinfer model={CHANNEL_MEAN} ! npudecode method=classify ! appsink name=results")
    assert len(frames) == 3
    for results, regions in frames:
        (result,) = results
        assert result.roi_id == -1 and result.pad_index == 0 and result.batch_size == 1
        assert set(result.tensors) == {"mean", "max"}
        mean = result.tensors["mean"]
        assert mean.dtype == np.float32 and mean.shape == (1, 3)
        np.testing.assert_allclose(mean, [[1, 0, 0]], atol=2e-3)  # red, channels in 0..1
        np.testing.assert_allclose(result.tensors["max"], [[1, 0, 0]], atol=2e-3)
        assert result.scale == pytest.approx((0.125, 0.125))  # 64 x 64 into the model's 8 x 8
        (region,) = regions
        classification = region.params["classification"]
        assert classification["class-id"] == 0 and 0 < classification["confidence"] <= 1
        assert region.box == (0, 0, 64, 64)


def test_pad_probe_reads_tensors():
    pipeline = Gst.parse_launch(
        "videotestsrc num-buffers=2 pattern=blue ! video/x-raw,width=32,height=32 ! "
        f"npuinfer name=infer model={CHANNEL_MEAN} ! fakesink")
    means = []

    def probe(pad, info):
        means.extend(r.tensors["mean"] for r in npu.gst.tensor_metas(info.get_buffer()))
        return Gst.PadProbeReturn.OK

    pipeline.get_by_name("infer").get_static_pad("src_0").add_probe(Gst.PadProbeType.BUFFER,
                                                                    probe)
    pipeline.set_state(Gst.State.PLAYING)
    message = pipeline.get_bus().timed_pop_filtered(30 * Gst.SECOND,
                                                    Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert message is not None and message.type == Gst.MessageType.EOS
    assert len(means) == 2
    for mean in means:
        np.testing.assert_allclose(mean, [[0, 0, 1]], atol=2e-3)


def test_roi_mode_tensors_link_to_their_regions():
    frames = pull_all(
        "videotestsrc num-buffers=2 pattern=green ! video/x-raw,width=64,height=48 ! "
        f"npuinfer model={CHANNEL_MEAN} ! npudecode method=classify ! "
        f"npuinfer mode=roi model={CHANNEL_MEAN} ! appsink name=results")
    assert len(frames) == 2
    for results, regions in frames:
        by_roi = {r.roi_id: r for r in results}
        assert set(by_roi) == {-1, regions[0].id}
        np.testing.assert_allclose(by_roi[regions[0].id].tensors["mean"], [[0, 1, 0]], atol=2e-3)
