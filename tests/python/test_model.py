"""Models and contexts: real runs compared against numpy."""
import threading

import numpy as np
import pytest

import npu


def conv_reference(image, w, b):
    """3x3 convolution, padding 1, stride 1, then Relu, in float64."""
    padded = np.pad(image.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    _, _, h, width = image.shape
    windows = np.stack([padded[:, :, dy:dy + h, dx:dx + width]
                        for dy in range(3) for dx in range(3)], axis=-1)  # n c h w 9
    out = np.einsum("nchwk,ock->nohw", windows, w.reshape(w.shape[0], w.shape[1], 9))
    return np.maximum(out + b[None, :, None, None], 0)


def affine_reference(models, x):
    w, b = models.weight("affine", "w"), models.weight("affine", "b")
    return np.maximum(x @ w + b, 0), x * 2


def test_model_description(models):
    model = npu.Model(models.path("affine"))
    (x,), (y, z) = model.inputs, model.outputs
    assert (x.name, x.dtype, x.shape, x.dim_names) == ("x", np.float32, (None, 4),
                                                        ("batch", None))
    assert (y.name, y.shape, z.name) == ("y", (None, 3), "z")
    assert model.opset == 13 and model.node_count == 4


def test_run_matches_numpy(models):
    model = npu.Model(models.path("conv"))
    context = npu.Context(model)
    image = np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32)
    outputs = context.run({"image": image})
    assert list(outputs) == ["features"]
    features = outputs["features"]
    assert features.dtype == np.float32 and features.shape == (1, 8, 16, 16)
    expected = conv_reference(image, models.weight("conv", "w"), models.weight("conv", "b"))
    np.testing.assert_allclose(features, expected, rtol=1e-4, atol=1e-4)
    stats = context.stats()
    assert stats["kernels"] >= 1 and stats["subgraphs"] == 1 and stats["transfer_bytes"] == 0
    assert stats["stream"]["tasks_completed"] >= 1


def test_dynamic_batch_and_replanning(models):
    model = npu.Model(models.path("affine"))
    context = npu.Context(model, shapes={"x": (2, 4)})
    assert context.inputs[0].shape == (2, 4) and context.outputs[0].shape == (2, 3)
    rng = np.random.default_rng(4)
    for batch in (2, 7, 2):  # a new batch re-plans; going back reuses the plan
        x = rng.standard_normal((batch, 4)).astype(np.float32)
        outputs = context.run([x])
        y, z = affine_reference(models, x)
        np.testing.assert_allclose(outputs["y"], y, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(outputs["z"], z)
        assert context.inputs[0].shape == (batch, 4)
    assert context.stats()["shape_plans"] == 2


def test_model_from_bytes_and_uint8_input(models):
    with open(models.path("scale_u8"), "rb") as f:
        model = npu.Model.from_bytes(f.read())
    pixels = np.arange(10, dtype=np.uint8).reshape(2, 5) * 25
    scaled = npu.Context(model).run(pixels)["scaled"]
    np.testing.assert_allclose(scaled, pixels / 255, rtol=1e-6)


def test_run_async_futures_on_streams(models):
    model = npu.Model(models.path("conv"))
    streams = [npu.Stream() for _ in range(3)]
    contexts = [npu.Context(model) for _ in streams]  # one context per concurrent stream
    rng = np.random.default_rng(5)
    images = [rng.standard_normal((1, 3, 16, 16)).astype(np.float32) for _ in streams]
    futures = [c.run_async({"image": i}, stream=s) for c, i, s in zip(contexts, images, streams)]
    w, b = models.weight("conv", "w"), models.weight("conv", "b")
    for future, image, stream in zip(futures, images, streams):
        assert future.stream is stream
        features = future.result()["features"]
        assert future.done()
        np.testing.assert_allclose(features, conv_reference(image, w, b), rtol=1e-4, atol=1e-4)
        assert future.result()["features"] is features  # the same outputs again
    # the default stream: the context's own; the input a temporary the future holds
    expected = conv_reference(images[1], w, b)
    future = contexts[0].run_async(images[1].copy())
    assert future.stream is contexts[0].stream
    np.testing.assert_allclose(future.result()["features"], expected, rtol=1e-4, atol=1e-4)


def test_dropped_future_still_completes(models):
    context = npu.Context(npu.Model(models.path("conv")))
    for _ in range(4):
        context.run_async(np.ones((1, 3, 16, 16), np.float32))  # dropped at once
    out = context.run(np.ones((1, 3, 16, 16), np.float32))["features"]
    assert np.isfinite(out).all()


def test_threads_run_concurrently(models):
    model = npu.Model(models.path("affine"))
    results, errors = {}, []

    def worker(k):
        try:
            context = npu.Context(model, shapes=[(3, 4)])
            x = np.full((3, 4), k, np.float32)
            for _ in range(20):
                results[k] = context.run({"x": x})["z"]
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        np.testing.assert_array_equal(results[k], np.full((3, 4), 2 * k))


def test_input_errors(models):
    model = npu.Model(models.path("affine"))
    with pytest.raises(npu.Error, match="axis 0") as error:
        npu.Context(model)  # an open axis needs a size
    assert error.value.status == "NPU_ERROR_INVALID_ARGUMENT"
    with pytest.raises(KeyError, match="does not have"):
        npu.Context(model, shapes={"x": (1, 4), "typo": (1, 4)})
    context = npu.Context(model, shapes={"x": (1, 4)})
    with pytest.raises(KeyError, match="'x'"):
        context.run({"wrong": np.zeros((1, 4), np.float32)})
    with pytest.raises(ValueError, match="takes 1 inputs, 2 given"):
        context.run({"x": np.zeros((1, 4), np.float32), "y": 1})
    with pytest.raises(TypeError, match="float64"):
        context.run({"x": np.zeros((1, 4))})  # no silent narrowing
    with pytest.raises(ValueError, match="must have 2 dims"):
        context.run({"x": np.zeros(4, np.float32)})
    with pytest.raises(npu.Error) as error:
        context.run({"x": np.zeros((1, 5), np.float32)})  # a fixed axis cannot change
    assert error.value.message


def test_bad_models_raise_the_runtime_message(models, tmp_path):
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(b"this is not a protobuf")
    with pytest.raises(npu.Error) as error:
        npu.Model(str(corrupt))
    assert error.value.status == "NPU_ERROR_INVALID_MODEL" and error.value.message
    with pytest.raises(npu.Error, match="NPU_ERROR_INVALID_MODEL"):
        npu.Model.from_bytes(b"\x08\x07garbage")
    with pytest.raises(npu.Error) as error:
        npu.Model(str(tmp_path / "missing.onnx"))
    assert "missing.onnx" in error.value.message
