"""python3 -m npu.quantize: the npu-quantize tool."""
import sys

from .cli import main

sys.exit(main())
