"""Running a test script in a fresh interpreter (the Triton interpreter is chosen by an
environment variable read at import time)."""

from __future__ import annotations

import os
import subprocess
import sys


def run_script(script: str, **env: str) -> str:
    """Run ``script`` with ``python -c`` and extra environment variables; assert it succeeds
    and printed ``ok`` last; return its standard output."""
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, **env),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok"), out.stdout[-2000:]
    return out.stdout
