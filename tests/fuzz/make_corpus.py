#!/usr/bin/env python3
"""Seed corpus for the fuzz targets: OUT/model holds every small model the
executor tests generate (found under the given folders), OUT/npy a few
.npy files of each type, version and header form numpy writes.
  make_corpus.py OUT MODEL_FOLDER..."""
import hashlib
import io
import pathlib
import sys

import numpy as np

MAX_SEED_BYTES = 64 << 10  # small seeds keep the fuzzer fast


def write_seed(folder, data, suffix):
    name = hashlib.sha1(data).hexdigest() + suffix
    (folder / name).write_bytes(data)


def model_seeds(out, sources):
    for source in sources:
        for path in sorted(pathlib.Path(source).rglob("*.onnx")):
            data = path.read_bytes()
            if len(data) <= MAX_SEED_BYTES:
                write_seed(out, data, ".onnx")


def npy_seeds(out):
    arrays = [np.zeros((2, 3), np.float32), np.arange(5, dtype=np.uint8),
              np.array(7, dtype=np.int64), np.ones((1, 3, 4, 4), np.float16),
              np.array([True, False]), np.arange(6, dtype=np.int32).reshape(3, 2, 1),
              np.zeros((0, 4), np.int8), np.zeros((2, 2), np.float64)]
    for array in arrays:
        for version in [(1, 0), (2, 0), (3, 0)]:
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, version=version)
            write_seed(out, buffer.getvalue(), ".npy")


def main():
    out = pathlib.Path(sys.argv[1])
    for sub in ["model", "npy"]:
        (out / sub).mkdir(parents=True, exist_ok=True)
    model_seeds(out / "model", sys.argv[2:])
    npy_seeds(out / "npy")


if __name__ == "__main__":
    main()
