#!/usr/bin/env python3
"""Structural mutator for the model fuzz target: rewrites seed models the
way a hostile or broken exporter would (dims, dtypes, attributes, dangling
names, cycles, external data, op types and opsets) and writes each mutant
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
        entries["offset"] = str(pick(rng, [0, 1, 4096, -1, 2**62, rng.randint(0, 8192)]))
    if rng.random() < 0.5:
        entries["length"] = str(pick(rng, [size, size + 1, 0, -5, 2**63 - 1]))
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


MUTATIONS = [mutate_dims, mutate_dtype, mutate_attribute, mutate_name, mutate_cycle,
             mutate_external, mutate_op, mutate_structure]


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
