"""Context precision: 'bf16' computes convolutions and matrix products on
bfloat16-rounded inputs where the device multiplies bfloat16 (its outputs then
differ from fp32's, within bfloat16's rounding), is ignored where it does not,
and an unknown precision is refused."""
import numpy as np
import pytest

import npu

# Relative L2 error against float64 allowed for bf16: each of the three
# layers rounds its inputs and weights to 8 significant bits (2^-9 relative
# each); 1.5e-3 measured on this model (fp32: 2.3e-7).
BF16_TOLERANCE = 1e-2
FP32_TOLERANCE = 1e-5


def cpu_has_avx512_bf16():
    with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
        return any(line.startswith("flags") and " avx512_bf16" in line for line in f)


def conv_nchw(x, w, pad):
    """Convolution, stride 1, in float64."""
    k = w.shape[2]
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    h, width = x.shape[2], x.shape[3]
    windows = np.stack([padded[:, :, dy:dy + h, dx:dx + width]
                        for dy in range(k) for dx in range(k)], axis=-1)  # n c h w k*k
    return np.einsum("nchwk,ock->nohw", windows, w.reshape(w.shape[0], w.shape[1], k * k))


def features_reference(models, image):
    def weight(key):
        return models.weight("features", key).astype(np.float64)
    r1 = np.maximum(conv_nchw(image, weight("w1"), 1) + weight("b1")[None, :, None, None], 0)
    pooled = conv_nchw(r1, weight("w2"), 0).mean(axis=(2, 3))
    return pooled @ weight("w3").T + weight("b3")


def relative_l2(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def run(models, image, **options):
    context = npu.Context(npu.Model(models.path("features")), shapes=[image.shape], **options)
    return context.run({"image": image})["logits"]


@pytest.fixture(scope="module")
def image():
    return np.random.default_rng(11).standard_normal((2, 16, 24, 24)).astype(np.float32)


def test_bf16_within_tolerance(models, image):
    expected = features_reference(models, image)
    fp32 = run(models, image)
    bf16 = run(models, image, precision="bf16")
    assert relative_l2(fp32, expected) < FP32_TOLERANCE
    assert relative_l2(bf16, expected) < BF16_TOLERANCE
    assert np.array_equal(run(models, image, precision="fp32"), fp32)


def test_bf16_takes_effect_where_the_cpu_has_it(models, image):
    if not cpu_has_avx512_bf16():
        pytest.skip("this CPU has no avx512_bf16: bf16 runs as fp32 here")
    assert npu.Device().properties()["caps"]["bf16_compute"]
    fp32, bf16 = run(models, image), run(models, image, precision="bf16")
    # Rounded inputs: not the fp32 result, but not far from it either.
    assert relative_l2(bf16, fp32) > 1e-4


def test_bf16_ignored_where_the_cpu_lacks_it(models, image):
    if cpu_has_avx512_bf16():
        pytest.skip("this CPU has avx512_bf16: bf16 takes effect here")
    assert not npu.Device().properties()["caps"]["bf16_compute"]
    assert np.array_equal(run(models, image, precision="bf16"), run(models, image))


def test_replanning_keeps_the_precision(models, image):
    """A bf16 context planned for batch 1 and re-planned for 2 answers as one
    planned for 2 (the weights packed in bfloat16 once are run again)."""
    context = npu.Context(npu.Model(models.path("features")), shapes=[(1, 16, 24, 24)],
                          precision="bf16")
    context.run({"image": image[:1]})
    replanned = context.run({"image": image})["logits"]
    assert np.array_equal(replanned, run(models, image, precision="bf16"))


def test_unknown_precision_refused(models):
    model = npu.Model(models.path("features"))
    with pytest.raises(npu.Error, match="unknown precision 'fp16'"):
        npu.Context(model, precision="fp16")
