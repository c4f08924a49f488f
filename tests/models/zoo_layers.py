#!/usr/bin/python3
"""Where a model's float32 rounding error comes from, layer by layer: its ONNX
graph evaluated in float64 (torch, operator by operator, on the file's own
float32 weights) against float32 engines' intermediate tensors.

  zoo_layers.py expose MODEL.onnx OUT.onnx [--exclude TEXT...]
      A copy with file-safe tensor names ('/' -> '_') whose Relu outputs
      (those whose name holds none of TEXT) are graph outputs too:
      npu-run --output-dir and ort_reference.js then write each as NAME.npy.
      Relu outputs end our fused kernels, so exposing them keeps the fusion.
  zoo_layers.py compare MODEL.onnx INPUT.npy DIR...
      Per graph output: its relative L2 error from the float64 evaluation,
      for torch's float32 evaluation and each DIR's NAME.npy ('-' where a DIR
      lacks it). The float64 outputs are cached as MODEL.onnx.INPUT.npz.
  zoo_layers.py inject MODEL.onnx INPUT.npy TENSOR FILE...
      The first output's error from float64 when only TENSOR carries FILE's
      float32 value and everything else is float64: the share of the final
      error that this one tensor's rounding causes, after amplification.
  zoo_layers.py own MODEL.onnx INPUT.npy DIR...
      Per graph output: the error its own node(s) added, for each DIR: the
      float64 evaluation fed DIR's values of the earlier outputs, against
      DIR's value of this one (a layer's own rounding; only meaningful where
      DIR holds the outputs its inputs come from).
  zoo_layers.py split-stem MODEL.onnx OUT.onnx
      The graph's first Conv as one Conv per input channel summed by Adds
      (the bias in the last): each channel's products summed apart, as
      ONNX Runtime 1.30's convolution on an NCHW input sums them.

Operators: those of the ResNet family and FCN's head (Conv, Relu, Add,
MaxPool, GlobalAveragePool, Flatten, Gemm, Resize and its shape arithmetic).
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def file_safe(name):
    return name.replace("/", "_").replace(":", "_").lstrip("_")


def expose(source, destination, excluded):
    model = onnx.load(source)
    g = model.graph
    for node in g.node:
        node.input[:] = [file_safe(x) for x in node.input]
        node.output[:] = [file_safe(x) for x in node.output]
    for tensor in g.initializer:
        tensor.name = file_safe(tensor.name)
    for value in list(g.input) + list(g.output) + list(g.value_info):
        value.name = file_safe(value.name)
    outputs = {o.name for o in g.output}
    for node in g.node:
        name = node.output[0]
        if node.op_type == "Relu" and name not in outputs and not any(t in name for t in excluded):
            g.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    onnx.save(model, destination)


def attributes(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def evaluate(model, x, dtype, replaced=None, own_errors=None):
    """Every tensor of the graph computed in `dtype` (torch), as numpy;
    `replaced` ({name: array}) sets those tensors where they are computed,
    first noting in `own_errors` (a dict, or None) each one's relative L2
    from what its node computed."""
    import torch
    import torch.nn.functional as F

    values = {}
    for t in model.graph.initializer:
        v = numpy_helper.to_array(t)
        values[t.name] = torch.from_numpy(v.astype(np.float64 if dtype == torch.float64 else v.dtype)
                                          if v.dtype.kind == "f" else v.copy())
    values[model.graph.input[0].name] = torch.from_numpy(x).to(dtype)
    for node in model.graph.node:
        a, op = attributes(node), node.op_type
        i = [values[name] if name else None for name in node.input]
        if op == "Conv":
            pads = a.get("pads", [0, 0, 0, 0])
            if pads[:2] != pads[2:]:
                raise NotImplementedError("Conv with uneven pads")
            y = F.conv2d(i[0], i[1], i[2] if len(i) > 2 else None, a.get("strides", [1, 1]),
                         pads[:2], a.get("dilations", [1, 1]), a.get("group", 1))
        elif op == "Relu":
            y = torch.relu(i[0])
        elif op == "Add":
            y = i[0] + i[1]
        elif op == "MaxPool":
            pads = a.get("pads", [0, 0, 0, 0])
            y = F.max_pool2d(i[0], a["kernel_shape"], a.get("strides"), pads[:2],
                             ceil_mode=bool(a.get("ceil_mode", 0)))
        elif op == "GlobalAveragePool":
            y = i[0].mean(dim=(2, 3), keepdim=True)
        elif op == "Flatten":
            y = i[0].reshape(i[0].shape[0], -1)
        elif op == "Gemm":
            y = i[0] @ (i[1].t() if a.get("transB", 0) else i[1]) + i[2]
        elif op == "Constant":
            y = torch.from_numpy(numpy_helper.to_array(a["value"]).copy())
        elif op == "Shape":
            y = torch.tensor(list(i[0].shape), dtype=torch.int64)
        elif op == "Gather":
            y = torch.from_numpy(np.asarray(np.take(i[0].numpy(), i[1].numpy(), a.get("axis", 0))))
        elif op == "Unsqueeze":
            y = i[0].reshape([1] + list(i[0].shape)) if i[0].dim() == 0 else i[0].unsqueeze(int(i[1][0]))
        elif op == "Concat":
            y = torch.cat(i, dim=a["axis"])
        elif op == "Slice" and len(i) == 4 and i[0].dim() == 1:
            y = i[0][int(i[1][0]):int(i[2][0])]
        elif op == "Cast" and a["to"] == onnx.TensorProto.INT64:
            y = i[0].to(torch.int64)
        elif (op == "Resize" and a.get("mode") == b"linear" and
              a.get("coordinate_transformation_mode") == b"half_pixel"):
            y = F.interpolate(i[0], size=[int(s) for s in i[3][2:]], mode="bilinear",
                              align_corners=False)
        else:
            raise NotImplementedError(f"{op} ({node.name})")
        name = node.output[0]
        if replaced and name in replaced:
            if own_errors is not None:
                own_errors[name] = relative_l2(replaced[name], y.numpy())
            y = torch.from_numpy(np.asarray(replaced[name])).to(dtype)
        values[name] = y
    return {k: v.numpy() for k, v in values.items()}


def relative_l2(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def float64_outputs(model_path, model, input_path, x):
    """{output: float64 value}, cached beside the model."""
    import torch

    cache = f"{model_path}.{os.path.splitext(os.path.basename(input_path))[0]}.npz"
    names = [o.name for o in model.graph.output]
    if not os.path.exists(cache):
        exact = evaluate(model, x, torch.float64)
        np.savez(cache, **{name: exact[name] for name in names})
    stored = np.load(cache)
    return {name: stored[name] for name in names}


def compare(model_path, input_path, dirs):
    import torch

    model, x = onnx.load(model_path), np.load(input_path)
    exact = float64_outputs(model_path, model, input_path, x)
    single = evaluate(model, x, torch.float32)
    columns = ["torch float32"] + [os.path.basename(d.rstrip("/")) for d in dirs]
    print("| tensor | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for name, want in exact.items():
        row = [f"{relative_l2(single[name], want):.2e}"]
        for d in dirs:
            path = os.path.join(d, name + ".npy")
            row.append(f"{relative_l2(np.load(path), want):.2e}" if os.path.exists(path) else "-")
        print(f"| {name} | " + " | ".join(row) + " |")


def inject(model_path, input_path, tensor, files):
    import torch

    model, x = onnx.load(model_path), np.load(input_path)
    first = model.graph.output[0].name
    exact = float64_outputs(model_path, model, input_path, x)[first]
    for path in files:
        values = evaluate(model, x, torch.float64, {tensor: np.load(path)})
        print(f"{path}: {first} {relative_l2(values[first], exact):.2e} from float64 "
              f"with only {tensor} rounded")


def own_errors(model_path, input_path, dirs):
    import torch

    model, x = onnx.load(model_path), np.load(input_path)
    names = [o.name for o in model.graph.output]
    columns = {}
    for d in dirs:
        given = {n: np.load(os.path.join(d, n + ".npy")) for n in names
                 if os.path.exists(os.path.join(d, n + ".npy"))}
        columns[os.path.basename(d.rstrip("/"))] = errors = {}
        evaluate(model, x, torch.float64, given, errors)
    print("| tensor | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for name in names:
        print(f"| {name} | " + " | ".join(
            f"{c[name]:.2e}" if name in c else "-" for c in columns.values()) + " |")


def split_stem(source, destination):
    model = onnx.load(source)
    g = model.graph
    at = next(k for k, n in enumerate(g.node) if n.op_type == "Conv")
    conv = g.node[at]
    weights = {t.name: t for t in g.initializer}
    w = numpy_helper.to_array(weights[conv.input[1]])
    nodes, total = [], None
    g.initializer.append(numpy_helper.from_array(np.array([1], np.int64), "stem_axis"))
    for c in range(w.shape[1]):
        begin, end, part = f"stem_begin{c}", f"stem_end{c}", f"stem_input{c}"
        g.initializer.extend([numpy_helper.from_array(np.array([c], np.int64), begin),
                              numpy_helper.from_array(np.array([c + 1], np.int64), end),
                              numpy_helper.from_array(w[:, c:c + 1].copy(), f"stem_w{c}")])
        nodes.append(helper.make_node("Slice", [conv.input[0], begin, end, "stem_axis"], [part]))
        last = c == w.shape[1] - 1
        inputs = [part, f"stem_w{c}"] + (list(conv.input[2:]) if last else [])
        one = helper.make_node("Conv", inputs, [f"stem_conv{c}"])
        one.attribute.extend(conv.attribute)
        nodes.append(one)
        if total is not None:
            summed = conv.output[0] if last else f"stem_sum{c}"
            nodes.append(helper.make_node("Add", [f"stem_conv{c}", total], [summed]))
            total = summed
        else:
            total = f"stem_conv{c}"
    del g.node[at]
    for k, node in enumerate(nodes):
        g.node.insert(at + k, node)
    onnx.save(model, destination)


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "expose":
        excluded = args[4:] if len(args) > 3 and args[3] == "--exclude" else []
        expose(args[1], args[2], excluded)
    elif len(args) >= 4 and args[0] == "compare":
        compare(args[1], args[2], args[3:])
    elif len(args) >= 4 and args[0] == "own":
        own_errors(args[1], args[2], args[3:])
    elif len(args) >= 5 and args[0] == "inject":
        inject(args[1], args[2], args[3], args[4:])
    elif len(args) == 3 and args[0] == "split-stem":
        split_stem(args[1], args[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
