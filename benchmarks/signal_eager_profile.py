"""Host time of an eager (not replayed) public signal call on a GPU: cProfile of repeated
``GaussianFilter(σ)(x)`` and ``MorletTransform`` calls on one float32 signal of 102400 samples
with the CUDA graphs switched off (what the first calls of a shape, non-contiguous input and
``out=`` cost), and the wall time per call with and without the input check.

Run from the repository root on a CUDA machine: ``PYTHONPATH=src python
benchmarks/signal_eager_profile.py --out DIR``. Writes ``signal_eager_profile.txt``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import time
from pathlib import Path

import torch

os.environ["FASTMOMENTS_CUDA_GRAPHS"] = "0"

from fastmoments.signal import GaussianFilter, MorletTransform


def per_call_us(fn, reps: int = 200) -> float:
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
        torch.cuda.synchronize()
    return 1e6 * (time.perf_counter() - t0) / reps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()
    x = torch.randn(102400, device="cuda")
    text = io.StringIO()
    for name, plan in (("gaussian σ=16", GaussianFilter(16.0)),
                       ("morlet σ=256", MorletTransform(256.0, 6.0))):
        on = per_call_us(lambda p=plan: p(x))
        off = per_call_us(lambda p=plan: p(x, check_finite=False))
        text.write(f"=== {name}: {on:.1f} us per call (check + sync), {off:.1f} us with "
                   "check_finite=False (+ sync)\n")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(200):
            plan(x)
        torch.cuda.synchronize()
        prof.disable()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(30)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "signal_eager_profile.txt").write_text(text.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
