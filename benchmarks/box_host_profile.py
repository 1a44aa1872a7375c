"""Host (Python) time of the box engine's calls: cProfile of forward plus reconstruction of the
512^3, order-500, k = 23 job with float16 split products and parity (issue 16), whose GPU work
is shorter than its host work (``box_product_times.md``), next to the float32 products.

Run from the repository root on a CUDA machine: ``PYTHONPATH=src python
benchmarks/box_host_profile.py --out benchmarks/results/box_runs``. Writes ``box_host_profile.txt``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from pathlib import Path

import torch

from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "box_runs"))
    args = ap.parse_args()
    dev = torch.device("cuda")
    shape = (512,) * 3
    x = phantom_tensor(shape, device=dev, dtype=torch.float32)
    text = io.StringIO()
    for precision, parity, block in (("fp16x3", True, 256), ("float32", True, 256)):
        plan = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, device=dev,
                               precision=precision, parity=parity, block=block)
        for _ in range(3):
            plan.inverse(plan.forward(x).data)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        plan.inverse(plan.forward(x).data)
        host = time.perf_counter() - t0
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
        prof = cProfile.Profile()
        prof.enable()
        plan.inverse(plan.forward(x).data)
        prof.disable()
        torch.cuda.synchronize()
        text.write(f"=== {precision}, parity {parity}, blocks of {block}: host {1e3 * host:.2f} "
                   f"ms until the call returns, {1e3 * wall:.2f} ms until the GPU is done "
                   "(no profiler)\n")
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(25)
        del plan
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "box_host_profile.txt").write_text(text.getvalue())
    print(text.getvalue()[:6000])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
