"""Where the time of a replayed signal call goes (a diagnostic for issue 16, not a benchmark
page): CPU time of each step of :meth:`fastmoments.signal.graphs.GraphCache.call` and the
kernels inside the captured graph (``torch.profiler``), for a few representative calls.

Run on a CUDA machine: ``PYTHONPATH=src python benchmarks/signal_replay_profile.py``.
"""

from __future__ import annotations

import os
import statistics
import time

import torch

from fastmoments.signal import CWT, GaussianFilter
from fastmoments.signal.graphs import plan_cache


def med_us(fn, n=300) -> float:
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(ts)


def main() -> None:
    dev = torch.device("cuda")
    x = torch.randn(102400, device=dev)
    print("empty synchronize", f"{med_us(lambda: None):.1f} us")
    print("x.clone()", f"{med_us(lambda: x.clone()):.1f} us")
    print("isfinite(x).all().item()", f"{med_us(lambda: torch.isfinite(x).all().item()):.1f} us")
    cases = [("gauss f32 s=0.5", GaussianFilter(0.5), x),
             ("gauss f32 s=16", GaussianFilter(16.0), x),
             ("gauss f64 s=64", GaussianFilter(64.0), x.double()),
             ("cwt64 f32", CWT(torch.logspace(0.301, 3.01, 64).tolist()), x)]
    for name, plan, xx in cases:
        for _ in range(4):
            plan(xx)
        cache = plan_cache(plan)
        entry = next(e for e in cache._entries.values() if not isinstance(e, (int, str)))
        g = entry.graph
        full = med_us(lambda plan=plan, xx=xx: plan(xx))
        nocheck = med_us(lambda plan=plan, xx=xx: plan(xx, check_finite=False))
        replay = med_us(g.replay)
        ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ev0.record()
        for _ in range(100):
            g.replay()
        ev1.record()
        torch.cuda.synchronize()
        gpu = 1e3 * ev0.elapsed_time(ev1) / 100
        print(f"{name}: method {getattr(plan, 'method', '?')}; call {full:.1f} us, "
              f"check_finite=False {nocheck:.1f} us, replay+sync {replay:.1f} us, graph GPU "
              f"time back to back {gpu:.1f} us")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            os.environ["FASTMOMENTS_CUDA_GRAPHS"] = "0"
            plan(xx)
            os.environ["FASTMOMENTS_CUDA_GRAPHS"] = "1"
            torch.cuda.synchronize()
        for key in ("device_time_total", "cuda_time_total"):
            try:
                print(prof.key_averages().table(sort_by=key, row_limit=15,
                                                max_name_column_width=70))
                break
            except Exception as exc:  # the sort key's name changed across torch versions
                print("profile table:", type(exc).__name__, exc)


if __name__ == "__main__":
    main()
