"""The examples in python/examples run as a user runs them."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                        "examples")


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args],
                          capture_output=True, text=True, timeout=240)


def test_runtime_example():
    done = run("runtime_example.py")
    assert done.returncode == 0, done.stderr
    assert "round trip ok" in done.stdout


def test_async_streams_example(models):
    done = run("async_streams.py", models.path("conv"), "--streams", "2", "--runs", "4")
    assert done.returncode == 0, done.stderr
    assert "output features: float32 (1, 8, 16, 16)" in done.stdout
    assert "2 streams x 4 runs" in done.stdout


@pytest.mark.skipif(not os.environ.get("NPU_INFER_MODELS"), reason="needs the plugin and typelib")
def test_ocr_app_reads_the_text():
    done = run("ocr_app.py", "--frames", "2")
    if done.returncode == 77:
        pytest.skip(done.stderr.strip())
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("HELLO WORLD 2026") == 2
    assert "regions softmax" in done.stdout  # the recogniser's tensors, one per region
