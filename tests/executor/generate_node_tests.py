#!/usr/bin/env python3
"""Generates the ONNX backend node tests into OUTDIR with Debian's
python3-onnx (numpy >= 1.24 lost aliases that onnx 1.12 still uses)."""
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
for alias, value in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if alias not in np.__dict__:
        setattr(np, alias, value)

from onnx.backend.test.cmd_tools import main  # noqa: E402

sys.argv = ["cmd_tools", "generate-data", "-o", sys.argv[1]]
main()
