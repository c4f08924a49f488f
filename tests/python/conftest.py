"""Fixtures of the Python tests: they run under `meson test --suite python`
with the build tree's npu package on PYTHONPATH (and the GstNpu typelib,
plugin and test models in the environment, see meson.build)."""
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """The directory make_models.py filled, with a load(name, key) helper
    for the weights saved beside each model."""
    out = tmp_path_factory.mktemp("models")
    subprocess.run([sys.executable, os.path.join(HERE, "make_models.py"), str(out)], check=True)

    class Models:
        dir = str(out)

        @staticmethod
        def path(name):
            return os.path.join(out, name + ".onnx")

        @staticmethod
        def weight(name, key):
            return np.load(os.path.join(out, f"{name}.{key}.npy"))

    return Models
