"""The box engine's Triton kernels (tensor-core products, halves, folds) on the CPU: their test
files run again in a fresh interpreter with ``TRITON_INTERPRET=1``, which Triton reads at
import time. On a CUDA machine those files test the compiled kernels directly."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("triton")

HERE = Path(__file__).resolve().parent
FILES = ["test_tensor_cores.py", "test_split_halves.py", "test_halves.py", "test_fold.py",
         "test_routes.py"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA runs the compiled kernels")
@pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") == "1",
                    reason="this session already interprets the kernels")
def test_box_kernels_in_the_interpreter():
    env = dict(os.environ, TRITON_INTERPRET="1")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         *(str(HERE / f) for f in FILES)],
        cwd=HERE.parents[1], env=env, capture_output=True, text=True)
    tail = out.stdout[-3000:] + out.stderr[-2000:]
    assert out.returncode == 0, tail
    summary = out.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary) and "skipped" not in summary, tail  # all ran
