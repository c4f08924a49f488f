#!/usr/bin/python3
"""How far float32 outputs of a one-output zoo model are from its exact (float64)
forward.

  zoo_float64.py NAME INPUT.npy OUTPUT.npy...

Rebuilds NAME's torchvision module with make_zoo.py's seeded weights (the
cached export's), runs it on INPUT in float32 and in float64, and prints the
relative L2 error against the float64 forward of torch's float32 forward and
of each OUTPUT (e.g. npu-run's or ORT's --output-dir files for that input).
It tells a wrong kernel from a model that amplifies float32 rounding at that
input: there every float32 engine lands far from the float64 result."""
import sys
import zlib

import numpy as np

import make_zoo


def relative_l2(got, want):
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    name, input_path, outputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    torch, torchvision = make_zoo.import_torchvision()
    kind, shape = {**make_zoo.ZOO, **make_zoo.EXTRA}[name]
    seed = zlib.crc32(name.encode())  # as make_zoo.export
    torch.manual_seed(seed)
    model, _ = make_zoo.build(torch, torchvision, name, kind)
    make_zoo.randomise(torch, model, seed, shape)
    x = torch.from_numpy(np.load(input_path))
    with torch.no_grad():
        single = model(x).numpy().astype(np.float64)
        exact = model.double()(x.double()).numpy()
    print(f"torch float32: relative L2 {relative_l2(single, exact):.2e} from float64")
    for path in outputs:
        got = np.load(path).astype(np.float64)
        print(f"{path}: relative L2 {relative_l2(got, exact):.2e} from float64")


if __name__ == "__main__":
    main()
