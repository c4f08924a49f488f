"""Imported before onnx by the test-model generators: Debian's onnx 1.12
still uses numpy aliases that numpy 1.24 removed, and warns about others."""
import warnings

import numpy as np

warnings.simplefilter("ignore", FutureWarning)
for alias, value in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if not hasattr(np, alias):
        setattr(np, alias, value)
