#!/usr/bin/env python3
"""Structural mutator for the model fuzz target: rewrites seed models the
way a hostile or broken exporter would (dims, dtypes, attributes, dangling
names, cycles, external data, op types and opsets; ranks 0 and 8+, dims
whose product overflows, zero-size tensors, initializer bytes that disagree
with their dims, int8 scales and zero points, duplicate output names,
attributes of the wrong type, unknown domains, If and Loop around a node,
a dynamic batch; each mutant stays a valid protobuf) and writes each mutant
as a file, to grow a libFuzzer corpus or to be replayed by the tests.
  mutate_models.py [--count N] [--seed S] SEED_FOLDER OUT_FOLDER
OUT_FOLDER also gets the external data files the mutants refer to:
external.bin inside it, and escape.bin, a symlink to a file outside."""
import argparse
import os
import pathlib
import random

import onnx
from onnx import TensorProto

HUGE = [0, 1, -1, -2, 2**31, 2**32 + 1, 2**62, 2**63 - 1, -(2**63)]


def pick(rng, items):
    if not items:
        raise LookupError("nothing to mutate")
    return rng.choice(list(items))


def odd_int(rng):
    return rng.choice(HUGE + [rng.randint(-4, 16)])


def mutate_dims(rng, model):
    g = model.graph
    holders = [v.type.tensor_type.shape.dim for v in list(g.input) + list(g.output) +
               list(g.value_info) if v.type.tensor_type.HasField("shape")]
    holders = [h for h in holders if len(h)]
    if rng.random() < 0.5 and g.initializer:
        t = pick(rng, g.initializer)
        if t.dims and rng.random() < 0.7:
            t.dims[rng.randrange(len(t.dims))] = odd_int(rng)
        else:
            t.dims.append(odd_int(rng))
        return
    dims = pick(rng, holders)
    dim = dims[rng.randrange(len(dims))]
    if rng.random() < 0.2:
        dim.dim_param = "n"
    else:
        dim.dim_value = max(0, odd_int(rng))


def mutate_dtype(rng, model):
    g = model.graph
    dtype = rng.randint(0, 17)
    if rng.random() < 0.5 and g.initializer:
        pick(rng, g.initializer).data_type = dtype
    else:
        pick(rng, list(g.input) + list(g.output)).type.tensor_type.elem_type = dtype


def mutate_attribute(rng, model):
    node = pick(rng, model.graph.node)
    if not node.attribute or rng.random() < 0.2:
        node.attribute.append(onnx.helper.make_attribute(
            pick(rng, ["axis", "axes", "pads", "perm", "kernel_shape", "strides", "group",
                       "keepdims", "mode", "to", "value", "epsilon", "alpha", "dilations"]),
            pick(rng, [odd_int(rng), [odd_int(rng) for _ in range(rng.randint(0, 12))],
                       1e30, float("nan"), "bogus"])))
        return
    a = pick(rng, node.attribute)
    choice = rng.random()
    if choice < 0.15:
        node.attribute.remove(a)
    elif a.ints and choice < 0.6:
        a.ints[rng.randrange(len(a.ints))] = odd_int(rng)
    elif a.ints and choice < 0.8:
        for _ in range(rng.randint(1, 10)):
            a.ints.append(odd_int(rng))
    elif a.ints:
        del a.ints[rng.randrange(len(a.ints)):]
    elif a.type == onnx.AttributeProto.INT:
        a.i = odd_int(rng)
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = pick(rng, [0.0, -1.0, 1e38, float("inf"), float("nan")])
    else:
        a.type = rng.randint(0, 14)


def mutate_name(rng, model):
    g = model.graph
    node = pick(rng, g.node)
    names = [n for n in node.input] + [n for n in node.output]
    replacement = pick(rng, ["", "dangling", pick(rng, names or ["x"])] +
                       [n for other in g.node for n in other.output])
    if node.input and rng.random() < 0.6:
        node.input[rng.randrange(len(node.input))] = replacement
    elif node.output:
        node.output[rng.randrange(len(node.output))] = replacement
    else:
        node.input.append(replacement)


def mutate_cycle(rng, model):
    nodes = model.graph.node
    if len(nodes) < 2:
        node = pick(rng, nodes)
        node.input.append(node.output[0] if node.output else "self")
        return
    i = rng.randrange(len(nodes) - 1)
    j = rng.randrange(i + 1, len(nodes))
    if nodes[j].output and nodes[i].input:
        nodes[i].input[rng.randrange(len(nodes[i].input))] = nodes[j].output[0]


def mutate_external(rng, model):
    t = pick(rng, model.graph.initializer)
    size = len(t.raw_data) or 4
    t.ClearField("raw_data")
    for field in ["float_data", "int32_data", "int64_data", "double_data"]:
        t.ClearField(field)
    t.data_location = TensorProto.EXTERNAL
    del t.external_data[:]
    location = pick(rng, ["external.bin", "escape.bin", "missing.bin", "../external.bin",
                          "/etc/hostname", "", "sub/../external.bin", "."])
    entries = {"location": location}
    if rng.random() < 0.5:
        entries["offset"] = str(pick(rng, [0, 1, 4096, -1, 2**62, 2**64 - 1, "12abc",
                                           rng.randint(0, 8192)]))
    if rng.random() < 0.5:
        entries["length"] = str(pick(rng, [size, size + 1, 0, -5, 2**63 - 1, 2**64 + 4]))
    for key, value in entries.items():
        entry = t.external_data.add()
        entry.key, entry.value = key, value


def mutate_op(rng, model):
    ops = ["Add", "Conv", "Gemm", "Reshape", "Expand", "Slice", "Concat", "Split", "Gather",
           "Transpose", "ReduceMax", "Resize", "BatchNormalization", "Pad", "Tile", "MatMul",
           "Squeeze", "Unsqueeze", "ConstantOfShape", "TopK", "Clip", "Softmax", "Where",
           "Cast", "Range", "NonZero", "If", "Loop", "Unknown"]
    node = pick(rng, model.graph.node)
    node.op_type = pick(rng, ops)


def mutate_structure(rng, model):
    g = model.graph
    choice = rng.random()
    if choice < 0.3 and g.node:
        del g.node[rng.randrange(len(g.node))]
    elif choice < 0.6 and g.node:
        g.node.append(pick(rng, g.node))
    elif choice < 0.8 and model.opset_import:
        model.opset_import[0].version = pick(rng, [0, 1, 6, 7, 9, 11, 13, 17, 18, 19, 99])
    elif g.output:
        del g.output[rng.randrange(len(g.output))]
    else:
        del g.input[:]


def replace_shape(rng, model, dims):
    """Gives an initializer (half the time) or a declared value `dims`."""
    g = model.graph
    if rng.random() < 0.5 and g.initializer:
        t = pick(rng, g.initializer)
        del t.dims[:]
        t.dims.extend(dims)
        return
    shape = pick(rng, [v for v in list(g.input) + list(g.output) + list(g.value_info)
                       if v.type.HasField("tensor_type")]).type.tensor_type.shape
    del shape.dim[:]
    for d in dims:
        shape.dim.add().dim_value = d


def mutate_rank(rng, model):
    """Rank 0, or rank 8 and beyond."""
    replace_shape(rng, model, [pick(rng, [1, 1, 1, 2, 0])
                               for _ in range(pick(rng, [0, 8, 9, 16, 64]))])


def mutate_overflow(rng, model):
    """Dims each in range whose product passes int64 / size_t, or a zero dim."""
    replace_shape(rng, model, pick(rng, [[2**31, 2**31, 4], [2**62, 4], [2**32, 2**32],
                                         [3, 2**62, 2], [0, 2**62], [1, 0, 3], [0],
                                         [2**20, 2**20, 2**20, 2**20]]))


def mutate_tensor_bytes(rng, model):
    """An initializer whose bytes disagree with its dims and type: raw_data
    short, long or empty, raw_data and a typed field both set, a typed field
    of the wrong length or of another type."""
    t = pick(rng, model.graph.initializer)
    choice = rng.random()
    if choice < 0.25 and t.raw_data:
        t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data))]
    elif choice < 0.4:
        t.raw_data = t.raw_data + bytes(rng.randint(1, 9))
    elif choice < 0.55:
        t.float_data.extend([1.0] * rng.randint(1, 5))  # besides raw_data (or instead)
    elif choice < 0.7:
        t.ClearField("raw_data")
        t.int64_data.extend([odd_int(rng) for _ in range(rng.randint(0, 6))])
    elif choice < 0.85:
        t.ClearField("raw_data")
        t.string_data.extend([b"x" * rng.randint(0, 4) for _ in range(rng.randint(0, 3))])
    else:
        t.ClearField("raw_data")
        t.int32_data.extend([(odd_int(rng) + 2**31) % 2**32 - 2**31
                             for _ in range(rng.randint(0, 6))])


QUANTIZED_OPS = {"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul",
                 "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearGlobalAveragePool",
                 "QLinearConcat", "MatMulInteger", "ConvInteger", "DynamicQuantizeLinear"}


def mutate_quantization(rng, model):
    """An int8 model's scales and zero points made hostile: zero, negative,
    NaN, infinite or denormal scales, zero points out of range or of another
    type, per-axis vectors of the wrong length, an axis out of range."""
    g = model.graph
    nodes = [n for n in g.node if n.op_type in QUANTIZED_OPS]
    node = pick(rng, nodes)
    if rng.random() < 0.2:
        node.attribute.append(onnx.helper.make_attribute("axis", odd_int(rng)))
        return
    by_name = {t.name: t for t in g.initializer}
    params = [by_name[n] for n in list(node.input)[1:] if n in by_name]
    t = pick(rng, params)
    count = pick(rng, [0, 1, 2, 3, 7, 64])
    if t.data_type in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE) or \
            rng.random() < 0.2:
        values = [pick(rng, [0.0, -1.0, float("nan"), float("inf"), 1e-45, 1e38])
                  for _ in range(count)]
        replacement = onnx.helper.make_tensor(t.name, TensorProto.FLOAT, [count] if count != 1
                                              else [], values)
    else:
        dtype = pick(rng, [t.data_type, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32,
                           TensorProto.INT16])
        values = [pick(rng, [0, 127, -128, 255, 2**31 - 1, -(2**31)]) for _ in range(count)]
        if dtype == TensorProto.UINT8:
            values = [v & 0xff for v in values]
        elif dtype == TensorProto.INT8:
            values = [(v + 128) % 256 - 128 for v in values]
        elif dtype == TensorProto.INT16:
            values = [(v + 32768) % 65536 - 32768 for v in values]
        replacement = onnx.helper.make_tensor(t.name, dtype, [count] if count != 1 else [],
                                              values)
    t.CopyFrom(replacement)


def mutate_duplicate_output(rng, model):
    """Two graph outputs, or two nodes, naming the same value."""
    g = model.graph
    if rng.random() < 0.5 and g.output:
        g.output.append(pick(rng, g.output))
        return
    producers = [n for n in g.node if n.output]
    first, second = pick(rng, producers), pick(rng, producers)
    second.output[rng.randrange(len(second.output))] = first.output[0]


def mutate_attribute_type(rng, model):
    """An attribute declared as another type than the one its value is in
    (an INT read as FLOATS, a GRAPH where ints are expected ...)."""
    node = pick(rng, model.graph.node)
    if node.attribute and rng.random() < 0.7:
        pick(rng, node.attribute).type = pick(rng, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14])
        return
    name = pick(rng, ["axis", "axes", "perm", "pads", "kernel_shape", "to", "value"])
    value = pick(rng, [onnx.helper.make_tensor("t", TensorProto.FLOAT, [2], [1.0, 2.0]),
                       onnx.helper.make_graph([], "empty", [], []), [1.5, 2.5], ["a", "b"],
                       b"bytes"])
    node.attribute.append(onnx.helper.make_attribute(name, value))


def mutate_domain(rng, model):
    """A node in an unknown or non-default domain, or the opset imports of
    such domains, or none at all."""
    choice = rng.random()
    if choice < 0.5:
        pick(rng, model.graph.node).domain = pick(rng, ["com.microsoft", "ai.onnx.ml", "bogus",
                                                        "ai.onnx", ""])
    elif choice < 0.8:
        entry = model.opset_import.add()
        entry.domain = pick(rng, ["bogus", "com.microsoft", "ai.onnx.ml", ""])
        entry.version = pick(rng, [1, 99, -1, 2**40])
    else:
        del model.opset_import[:]


def mutate_control_flow(rng, model):
    """A node wrapped in If (both branches hold it, reading the outer scope)
    or in a Loop with a hostile trip count."""
    g = model.graph
    node = pick(rng, [n for n in g.node if n.output])
    inner = onnx.NodeProto()
    inner.CopyFrom(node)
    outputs = [onnx.helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
               for o in inner.output]
    branch = onnx.helper.make_graph([inner], "branch", [], outputs)
    if rng.random() < 0.5:
        cond = onnx.helper.make_tensor("cond_" + node.output[0], TensorProto.BOOL, [],
                                       [rng.random() < 0.5])
        g.initializer.append(cond)
        wrapper = onnx.helper.make_node("If", [cond.name], list(node.output),
                                        then_branch=branch, else_branch=branch)
    else:
        trip = onnx.helper.make_tensor("trip_" + node.output[0], TensorProto.INT64, [],
                                       [pick(rng, [0, 1, 3, -1, 2**62])])
        g.initializer.append(trip)
        body = onnx.helper.make_graph(
            [inner], "body",
            [onnx.helper.make_tensor_value_info("i", TensorProto.INT64, []),
             onnx.helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
            [onnx.helper.make_tensor_value_info("c", TensorProto.BOOL, [])] + outputs)
        wrapper = onnx.helper.make_node("Loop", [trip.name, ""], list(node.output), body=body)
    g.node.remove(node)
    g.node.append(wrapper)


def mutate_dynamic_batch(rng, model):
    """Every input's first axis made dynamic (so the harness re-plans the
    model at batch 2 and back at 1), the outputs' too or not."""
    g = model.graph
    values = list(g.input) + (list(g.output) if rng.random() < 0.5 else [])
    shapes = [v.type.tensor_type.shape for v in values
              if v.type.HasField("tensor_type") and len(v.type.tensor_type.shape.dim)]
    if not shapes:
        raise LookupError("no shaped inputs")
    for shape in shapes:
        shape.dim[0].dim_param = "N"


MUTATIONS = [mutate_dynamic_batch, mutate_dims, mutate_dtype, mutate_attribute, mutate_name, mutate_cycle,
             mutate_external, mutate_op, mutate_structure, mutate_rank, mutate_overflow,
             mutate_tensor_bytes, mutate_quantization, mutate_duplicate_output,
             mutate_attribute_type, mutate_domain, mutate_control_flow]


def write_external_files(out):
    (out / "external.bin").write_bytes(bytes(range(256)) * 64)
    outside = out.parent / "fuzz-outside.bin"
    outside.write_bytes(b"SECRET-OUTSIDE-THE-MODEL-FOLDER" * 8)
    link = out / "escape.bin"
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(os.path.relpath(outside, out), link)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("seeds")
    parser.add_argument("out")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_external_files(out)
    seeds = sorted(pathlib.Path(args.seeds).glob("*.onnx"))
    written = 0
    while written < args.count:
        model = onnx.ModelProto()
        try:
            model.ParseFromString(pick(rng, seeds).read_bytes())
        except Exception:  # a seed that is itself a malformed model
            continue
        try:
            for _ in range(rng.randint(1, 3)):
                pick(rng, MUTATIONS)(rng, model)
        except (LookupError, ValueError, TypeError):  # nothing of that kind in this model
            continue
        (out / f"mutant-{written:05d}.onnx").write_bytes(model.SerializeToString())
        written += 1


if __name__ == "__main__":
    main()
