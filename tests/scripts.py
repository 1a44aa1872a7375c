"""Helpers of the tests: a script run in a fresh interpreter (the Triton interpreter is chosen
by an environment variable read at import time), and a benchmark script loaded as a module."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType


def run_script(script: str, **env: str) -> str:
    """Run ``script`` with ``python -c`` and extra environment variables; assert it succeeds
    and printed ``ok`` last; return its standard output."""
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, **env),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok"), out.stdout[-2000:]
    return out.stdout


def load_benchmark(name: str) -> ModuleType:
    """The script ``benchmarks/<name>.py`` of this checkout, loaded as a module (the
    benchmarks are scripts, not a package)."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_benchmark_{name}", path)
    assert spec is not None and spec.loader is not None, path
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
