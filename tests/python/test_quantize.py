"""npu-quantize (npu.quantize): a seeded conv net quantised from .npy and
picture calibration, its QDQ model run on the runtime against fp32, node
exclusion, the calibration methods and the command line's errors."""
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import npu
from npu.quantize import cli, ranges

SIZE = 16


def conv_net(path):
    """image [1, 3, 16, 16] -> conv1 3x3 + Relu -> conv2 3x3 + Clip(0, 6) -> residual Add
    -> GlobalAveragePool -> Flatten -> fc (Gemm, 10 classes)."""
    rng = np.random.default_rng(17)
    weights = {"w1": rng.normal(0, 0.3, (8, 3, 3, 3)), "b1": rng.normal(0, 0.1, 8),
               "w2": rng.normal(0, 0.2, (8, 8, 3, 3)), "b2": rng.normal(0, 0.1, 8),
               "fc_w": rng.normal(0, 0.5, (10, 8)), "fc_b": rng.normal(0, 0.1, 10),
               "low": np.array(0.0), "high": np.array(6.0)}
    nodes = [helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], "conv1", pads=[1] * 4),
             helper.make_node("Relu", ["c1"], ["r1"], "relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], "conv2", pads=[1] * 4),
             helper.make_node("Clip", ["c2", "low", "high"], ["r2"], "clip2"),
             helper.make_node("Add", ["r1", "r2"], ["sum"], "add"),
             helper.make_node("GlobalAveragePool", ["sum"], ["pooled"], "pool"),
             helper.make_node("Flatten", ["pooled"], ["flat"], "flatten"),
             helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], "fc", transB=1)]
    graph = helper.make_graph(
        nodes, "conv_net",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def sqnr_db(reference, test):
    return 10 * np.log10(np.sum(reference ** 2) / np.sum((reference - test) ** 2))


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """The model and a folder of 8 calibration inputs."""
    root = tmp_path_factory.mktemp("quantize")
    conv_net(str(root / "net.onnx"))
    (root / "calibration").mkdir()
    rng = np.random.default_rng(18)
    for i in range(8):
        np.save(root / "calibration" / f"{i}.npy",
                rng.standard_normal((1, 3, SIZE, SIZE)).astype(np.float32))
    return root


def quantise(net, capsys, *args):
    status = cli.main([str(net / "net.onnx"), str(net / "net.qdq.onnx"),
                       "-c", str(net / "calibration"), *args])
    return status, capsys.readouterr()


def producers(model):
    return {out: node for node in model.graph.node for out in node.output}


@pytest.mark.parametrize("args", [(), ("--method", "percentile", "--activation-type", "int8"),
                                  ("--method", "entropy",), ("--method", "mse")])
def test_qdq_model_runs_close_to_fp32(net, capsys, args):
    status, out = quantise(net, capsys, *args)
    assert status == 0, out.err
    qdq = onnx.load(str(net / "net.qdq.onnx"))
    onnx.checker.check_model(qdq, full_check=True)
    made = producers(qdq)
    initializers = {i.name: numpy_helper.to_array(i) for i in qdq.graph.initializer}
    for node in qdq.graph.node:
        if node.op_type in ("Conv", "Gemm"):
            data, weight, bias = (made[name] for name in node.input)
            assert data.op_type == weight.op_type == bias.op_type == "DequantizeLinear"
            assert initializers[weight.input[0]].dtype == np.int8
            assert initializers[weight.input[1]].shape == (initializers[weight.input[0]].shape[0],)
            assert initializers[bias.input[0]].dtype == np.int32
    # Q/DQ after the Relu and the Clip (not between them and their convolution), on the
    # residual Add's output (an int8 feature map) and on logits
    quantized = {node.input[0] for node in qdq.graph.node if node.op_type == "QuantizeLinear"}
    assert quantized == {"image", "r1", "r2", "sum", "flat", "logits_float"}
    activation_type = np.int8 if "int8" in args else np.uint8
    assert initializers["r1_zero_point"].dtype == activation_type
    image = np.random.default_rng(19).standard_normal((1, 3, SIZE, SIZE)).astype(np.float32)
    reference = npu.Context(npu.Model(str(net / "net.onnx"))).run({"image": image})["logits"]
    quantised = npu.Context(npu.Model(str(net / "net.qdq.onnx"))).run({"image": image})["logits"]
    assert sqnr_db(reference, quantised) > 20
    # the report: a row per weight and activation, and the output's SQNR
    assert "conv2 (Conv)" in out.out and "clip2 (Clip)" in out.out
    assert "logits: SQNR" in out.out and "4 nodes quantised, 8 calibration samples" in out.out


def test_excluded_nodes_stay_float(net, capsys):
    status, out = quantise(net, capsys, "--exclude-nodes", "conv2", "--exclude-op-types", "Gemm")
    assert status == 0, out.err
    qdq = onnx.load(str(net / "net.qdq.onnx"))
    made = producers(qdq)
    nodes = {node.name: node for node in qdq.graph.node}
    for name in ("conv2", "fc"):
        assert all(made.get(i) is None or made[i].op_type != "DequantizeLinear"
                   for i in nodes[name].input)
    floats = {i.name for i in qdq.graph.initializer if i.data_type == TensorProto.FLOAT}
    assert {"w2", "b2", "fc_w", "fc_b"} <= floats
    assert nodes["conv1"].input[1].endswith("_dequantized")
    assert "2 nodes quantised" in out.out  # conv1 and the Add


def quantise_small(tmp_path, capsys, rng, name, nodes, out_shape, values=None, options=()):
    """The graph of `nodes` (input `image` [1, 3, 8, 8], output `out_shape`
    named by the last node, `values` as initializers) saved as NAME.onnx and
    quantised (with the command line's `options`) on 4 random inputs into
    NAME.qdq.onnx; returns the QDQ model and a function running (fp32 model,
    QDQ model) on one more random input."""
    values = values or {}
    output = nodes[-1].output[0]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, out_shape)],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in values.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              str(tmp_path / f"{name}.onnx"))
    (tmp_path / "calibration").mkdir()
    for i in range(4):
        np.save(tmp_path / "calibration" / f"{i}.npy",
                rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
    status = cli.main([str(tmp_path / f"{name}.onnx"), str(tmp_path / f"{name}.qdq.onnx"),
                       "-c", str(tmp_path / "calibration"), *options])
    assert status == 0, capsys.readouterr().err
    image = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)

    def run_both():
        return [npu.Context(npu.Model(str(tmp_path / f"{name}{kind}.onnx"))).run(
            {"image": image})[output] for kind in ("", ".qdq")]
    return onnx.load(str(tmp_path / f"{name}.qdq.onnx")), run_both


@pytest.mark.parametrize("fold", [True, False])
def test_batch_norm_folds_into_its_conv(tmp_path, capsys, fold):
    """Conv -> BatchNormalization -> Relu: the QDQ model has no
    BatchNormalization, and its Conv's pair comes after the Relu; with
    --no-fold the BatchNormalization stays (float, after the Conv's pair)."""
    rng = np.random.default_rng(23)
    values = {"w": rng.normal(0, 0.3, (4, 3, 3, 3)), "scale": rng.uniform(0.5, 2, 4),
              "shift": rng.normal(0, 0.2, 4), "mean": rng.normal(0, 0.2, 4),
              "var": rng.uniform(0.5, 2, 4)}
    nodes = [helper.make_node("Conv", ["image", "w"], ["c"], "conv", pads=[1] * 4),
             helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"],
                              ["n"], "bn"),
             helper.make_node("Relu", ["n"], ["out"], "relu")]
    qdq, run_both = quantise_small(tmp_path, capsys, rng, "bn", nodes, [1, 4, 8, 8], values,
                                   () if fold else ("--no-fold",))
    assert ("BatchNormalization" in {node.op_type for node in qdq.graph.node}) == (not fold)
    quantized = {node.input[0] for node in qdq.graph.node if node.op_type == "QuantizeLinear"}
    assert quantized == ({"image", "out_float"} if fold else {"image", "c"})
    assert sqnr_db(*run_both()) > 30


def test_conv_transpose_quantised_with_its_add_and_batch_norm_folded(tmp_path, capsys):
    """Conv (weights from Constant nodes, as PaddlePaddle exports them) ->
    BatchNormalization -> Relu -> ConvTranspose 2x2 stride 2 -> Add of a
    per-channel constant -> BatchNormalization -> Relu: both followers fold
    into each convolution, the ConvTranspose's weights are int8 per output
    channel (axis 1 of [C, M, kh, kw]) with an int32 bias, and the QDQ model
    runs within 30 dB of fp32."""
    rng = np.random.default_rng(29)

    def constant(name, value):
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
            value.astype(np.float32), name))

    def norm(prefix, channels):
        return [constant(prefix + "_scale", rng.uniform(0.5, 2, channels)),
                constant(prefix + "_shift", rng.normal(0, 0.2, channels)),
                constant(prefix + "_mean", rng.normal(0, 0.2, channels)),
                constant(prefix + "_var", rng.uniform(0.5, 2, channels))]

    bn = ["_scale", "_shift", "_mean", "_var"]
    nodes = [constant("w", rng.normal(0, 0.3, (6, 3, 3, 3))), *norm("bn1", 6),
             constant("up_w", rng.normal(0, 0.3, (6, 4, 2, 2))),
             constant("up_b", rng.normal(0, 0.2, (4, 1, 1))), *norm("bn2", 4),
             helper.make_node("Conv", ["image", "w"], ["c"], "conv", pads=[1] * 4),
             helper.make_node("BatchNormalization", ["c"] + ["bn1" + p for p in bn], ["n1"]),
             helper.make_node("Relu", ["n1"], ["r1"]),
             helper.make_node("ConvTranspose", ["r1", "up_w"], ["u"], "up", strides=[2, 2],
                              kernel_shape=[2, 2]),
             helper.make_node("Add", ["u", "up_b"], ["ub"]),
             helper.make_node("BatchNormalization", ["ub"] + ["bn2" + p for p in bn], ["n2"]),
             helper.make_node("Relu", ["n2"], ["out"])]
    qdq, run_both = quantise_small(tmp_path, capsys, rng, "up", nodes, [1, 4, 16, 16])
    onnx.checker.check_model(qdq, full_check=True)
    types = [node.op_type for node in qdq.graph.node]
    assert "BatchNormalization" not in types and "Add" not in types and "Constant" not in types
    made = producers(qdq)
    initializers = {i.name: numpy_helper.to_array(i) for i in qdq.graph.initializer}
    up = next(node for node in qdq.graph.node if node.op_type == "ConvTranspose")
    data, weight, bias = (made[name] for name in up.input)
    assert data.op_type == weight.op_type == bias.op_type == "DequantizeLinear"
    assert [a.i for a in weight.attribute if a.name == "axis"] == [1]
    assert initializers[weight.input[0]].dtype == np.int8
    assert initializers[weight.input[1]].shape == (4,)
    assert initializers[bias.input[0]].dtype == np.int32
    quantized = {node.input[0] for node in qdq.graph.node if node.op_type == "QuantizeLinear"}
    assert quantized == {"image", "r1", "out_float"}
    assert sqnr_db(*run_both()) > 30


def test_grouped_conv_transpose_quantised(tmp_path, capsys):
    """A ConvTranspose of 2 groups (4 -> 6 channels): int8 weights along axis
    1 (3 scales, shared by the groups), its bias of 6 values left float, and
    the QDQ model within 30 dB of fp32."""
    rng = np.random.default_rng(37)
    values = {"w": rng.normal(0, 0.3, (4, 3, 3, 3)), "up_w": rng.normal(0, 0.3, (4, 3, 2, 2)),
              "up_b": rng.normal(0, 0.2, 6)}
    nodes = [helper.make_node("Conv", ["image", "w"], ["c"], "conv", pads=[1] * 4),
             helper.make_node("Relu", ["c"], ["r"], "relu"),
             helper.make_node("ConvTranspose", ["r", "up_w", "up_b"], ["out"], "up",
                              strides=[2, 2], kernel_shape=[2, 2], group=2)]
    qdq, run_both = quantise_small(tmp_path, capsys, rng, "g", nodes, [1, 6, 16, 16], values)
    made = producers(qdq)
    initializers = {i.name: numpy_helper.to_array(i) for i in qdq.graph.initializer}
    up = next(node for node in qdq.graph.node if node.op_type == "ConvTranspose")
    weight = made[up.input[1]]
    assert made[up.input[0]].op_type == weight.op_type == "DequantizeLinear"
    assert [a.i for a in weight.attribute if a.name == "axis"] == [1]
    assert initializers[weight.input[1]].shape == (3,)
    assert up.input[2] == "up_b"
    assert sqnr_db(*run_both()) > 30


def test_sigmoid_input_range_stops_where_it_saturates(tmp_path, capsys):
    """A conv whose wide output (about +-100) only a Sigmoid reads, as
    PP-OCR det's logits: its pair's range is clipped to [-16, 16] (a finer
    step where the probabilities change), and the QDQ model's
    probabilities stay close to fp32's."""
    rng = np.random.default_rng(31)
    values = {"w": rng.normal(0, 12, (2, 3, 3, 3))}
    nodes = [helper.make_node("Conv", ["image", "w"], ["logits"], "conv", pads=[1] * 4),
             helper.make_node("Sigmoid", ["logits"], ["p"], "sigmoid")]
    qdq, run_both = quantise_small(tmp_path, capsys, rng, "s", nodes, [1, 2, 8, 8], values)
    initializers = {i.name: numpy_helper.to_array(i) for i in qdq.graph.initializer}
    assert initializers["logits_scale"] <= np.float32(32 / 255)
    reference, quantised = run_both()
    assert np.abs(reference - quantised).max() < 0.1


def depthwise_net(path, opset):
    """image [1, 3, 16, 16] -> conv1 3x3 + Relu -> dw 3x3 depthwise (8 groups) -> Softmax
    over channels -> GlobalAveragePool -> Flatten -> fc, saved at `opset`."""
    rng = np.random.default_rng(23)
    weights = {"w1": rng.normal(0, 0.3, (8, 3, 3, 3)), "b1": rng.normal(0, 0.1, 8),
               "dw": rng.normal(0, 0.3, (8, 1, 3, 3)), "fc_w": rng.normal(0, 0.5, (8, 10))}
    nodes = [helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], "conv1", pads=[1] * 4),
             helper.make_node("Relu", ["c1"], ["r1"], "relu1"),
             helper.make_node("Conv", ["r1", "dw"], ["d"], "dw", pads=[1] * 4, group=8),
             helper.make_node("Softmax", ["d"], ["s"], "softmax", axis=1),
             helper.make_node("GlobalAveragePool", ["s"], ["pooled"], "pool"),
             helper.make_node("Flatten", ["pooled"], ["flat"], "flatten"),
             helper.make_node("MatMul", ["flat", "fc_w"], ["logits"], "fc")]
    graph = helper.make_graph(
        nodes, "depthwise_net",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


def test_old_opset_gets_per_channel_weights(net, tmp_path, capsys):
    """An opset 11 model (with a Softmax, which the converter changes by rank)
    is brought to 13 for per-channel weight scales and runs as close to fp32;
    --exclude-depthwise leaves the depthwise convolution in fp32."""
    depthwise_net(str(tmp_path / "old.onnx"), 11)
    image = np.random.default_rng(24).standard_normal((1, 3, SIZE, SIZE)).astype(np.float32)
    reference = npu.Context(npu.Model(str(tmp_path / "old.onnx"))).run({"image": image})
    for extra in ((), ("--exclude-depthwise",)):
        status = cli.main([str(tmp_path / "old.onnx"), str(tmp_path / "old.qdq.onnx"),
                           "-c", str(net / "calibration"), *extra])
        out = capsys.readouterr()
        assert status == 0, out.err
        assert "weights (per-channel symmetric int8)" in out.out
        qdq = onnx.load(str(tmp_path / "old.qdq.onnx"))
        assert [o.version for o in qdq.opset_import if o.domain == ""] == [13]
        initializers = {i.name: numpy_helper.to_array(i) for i in qdq.graph.initializer}
        made = producers(qdq)
        weights = {node.name: made.get(node.input[1]) for node in qdq.graph.node
                   if node.op_type in ("Conv", "MatMul")}
        assert initializers[weights["conv1"].input[1]].shape == (8,)
        assert (weights["dw"] is None) == bool(extra)
        quantised = npu.Context(npu.Model(str(tmp_path / "old.qdq.onnx"))).run({"image": image})
        assert sqnr_db(reference["logits"], quantised["logits"]) > 20


def test_calibration_from_pictures(net, tmp_path, capsys):
    """PPM pictures of another size, letterboxed and normalised as npuinfer would."""
    rng = np.random.default_rng(21)
    for i in range(3):
        pixels = rng.integers(0, 256, (24, 40, 3), dtype=np.uint8)
        (tmp_path / f"{i}.ppm").write_bytes(b"P6\n# a comment\n40 24\n255\n" + pixels.tobytes())
    status = cli.main([str(net / "net.onnx"), str(tmp_path / "net.qdq.onnx"), "-c",
                       str(tmp_path), "--letterbox", "--mean", "0.485,0.456,0.406",
                       "--std", "0.229,0.224,0.225"])
    out = capsys.readouterr()
    assert status == 0, out.err
    assert "3 calibration samples" in out.out


def test_percentile_and_entropy_ranges_clip_a_rare_outlier():
    values = np.concatenate([np.random.default_rng(22).uniform(-1, 1, 100000), [50.0]])
    low, high = values.min(), values.max()
    counts = np.histogram(values, ranges.HISTOGRAM_BINS, (low, high))[0]
    p_low, p_high = ranges.percentile_range(counts, low, high, 99.9)
    assert -1.1 < p_low < -0.9 and 0.9 < p_high < 1.1
    magnitudes = np.histogram(np.abs(values), ranges.HISTOGRAM_BINS, (0, 50))[0]
    # the outlier is clipped: the smallest threshold tried is 128 of the 2048 bins
    assert 1.0 <= ranges.entropy_threshold(magnitudes, 50.0) <= 128 * 50 / 2048


def test_mse_range_clips_long_tails_only():
    """The mse method pulls a normal distribution's ends in to where the
    finer step repays the clipping (about 4 standard deviations for 256
    levels), keeps the range of values spread evenly over it, and keeps the
    low end of non-negative values at zero."""
    rng = np.random.default_rng(25)
    for values, expected_low, expected_high in (
            (rng.standard_normal(100000), (-4.3, -3.0), (3.0, 4.3)),
            (rng.uniform(-1, 1, 100000), (-1.0, -0.98), (0.98, 1.0)),
            (rng.uniform(0, 1, 100000), (0.0, 0.0), (0.98, 1.0))):
        low, high = values.min(), values.max()
        counts = np.histogram(values, ranges.HISTOGRAM_BINS, (low, high))[0]
        m_low, m_high = ranges.mse_range(counts, low, high)
        assert expected_low[0] <= m_low <= expected_low[1], (m_low, m_high)
        assert expected_high[0] <= m_high <= expected_high[1], (m_low, m_high)


def run_tool(*args):
    """The tool as a command (python3 -m npu.quantize), its status and stderr."""
    done = subprocess.run([sys.executable, "-m", "npu.quantize", *args], capture_output=True,
                          text=True, env=dict(os.environ))
    return done.returncode, done.stderr


def test_command_line_errors(net, tmp_path):
    model = str(net / "net.onnx")
    assert run_tool(model) == (2, "npu-quantize: no calibration data: give --calibration "
                                  "with .npy/.npz files, pictures, videos or folders of them\n")
    status, err = run_tool(str(tmp_path / "missing.onnx"), "-c", str(net / "calibration"))
    assert (status, err) == (2, f"npu-quantize: {tmp_path / 'missing.onnx'}: no such model file\n")
    np.save(tmp_path / "wrong.npy", np.zeros((1, 3, 8, 8), np.float32))
    status, err = run_tool(model, str(tmp_path / "out.onnx"), "-c", str(tmp_path / "wrong.npy"))
    assert status == 2 and "shape 1x3x8x8 does not fit input 'image' (1x3x16x16)" in err
    (tmp_path / "empty").mkdir()
    status, err = run_tool(model, "-c", str(tmp_path / "empty"))
    assert status == 2 and "no calibration samples" in err
    assert not (tmp_path / "out.onnx").exists()
