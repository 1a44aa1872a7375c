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


def med_us(fn, n=300, host_only=False) -> float:
    """Median time of ``fn()`` until the GPU is done, or (``host_only``) of ``fn()`` alone,
    the GPU drained between calls."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        if host_only:
            ts.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        if not host_only:
            ts.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(ts)


def host_us(fn, n=300) -> float:
    """Median host time of ``fn()`` alone (the GPU drained between calls)."""
    return med_us(fn, n, host_only=True)


def steps(name, plan, xx, entry) -> None:
    """Host time of each step of a replayed call, and a CPU + CUDA trace of three calls."""
    from fastmoments.signal.graphs import plain_key

    out = {
        "host: whole call": host_us(lambda: plan(xx)),
        "host: whole call, check_finite=False": host_us(lambda: plan(xx, check_finite=False)),
        "host: static_in.copy_(x)": host_us(lambda: entry.static_in.copy_(xx)),
        "host: graph.replay()": host_us(entry.graph.replay),
        "host: static_out.clone()": host_us(entry.static_out.clone),
        "host: bool(flag) after replay": host_us(lambda: (entry.graph.replay(),
                                                          bool(entry.flag))),
        "host: entry.finite() after replay": host_us(lambda: (entry.graph.replay(),
                                                              entry.finite())),
        "host: is_current_stream_capturing": host_us(torch.cuda.is_current_stream_capturing),
        "host: torch.cuda.current_stream()": host_us(torch.cuda.current_stream),
        "host: plain_key": host_us(lambda: plain_key("call", -1, "reflect", 0.0, "auto")),
        "host: empty torch.empty_like(out)": host_us(lambda: torch.empty_like(entry.static_out)),
        "sync: copy + replay + clone + sync": med_us(
            lambda: (entry.static_in.copy_(xx), entry.graph.replay(), entry.static_out.clone())),
        "sync: replay + flag": med_us(lambda: (entry.graph.replay(), bool(entry.flag))),
    }
    for k, v in out.items():
        print(f"  {name} | {k}: {v:.1f} us")
    dest = os.environ.get("OUT")
    if dest and ("s=16" in name or "cwt" in name):
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(3):
                plan(xx)
                torch.cuda.synchronize()
        safe = "".join(c if c.isalnum() else "_" for c in name)
        prof.export_chrome_trace(os.path.join(dest, f"trace_{safe}.json"))


def main() -> None:
    dev = torch.device("cuda")
    x = torch.randn(102400, device=dev)
    print("empty synchronize", f"{med_us(lambda: None):.1f} us")
    print("x.clone()", f"{med_us(lambda: x.clone()):.1f} us")
    print("isfinite(x).all().item()", f"{med_us(lambda: torch.isfinite(x).all().item()):.1f} us")
    from fastmoments._array import finite_flag
    from fastmoments._finite_kernel import fused_finite_flag

    print("finite_flag(x) (aminmax)", f"{med_us(lambda: bool(finite_flag(x))):.1f} us")
    print("fused_finite_flag(x)", f"{med_us(lambda: bool(fused_finite_flag(x))):.1f} us")
    for name, fn in (("isfinite.all", lambda t: torch.isfinite(t).all()),
                     ("aminmax flag", finite_flag), ("fused flag", fused_finite_flag)):
        for n in (102400, 1000 * 102400):
            t = torch.randn(n, device=dev)
            fn(t)
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(20):
                fn(t)
            e1.record()
            torch.cuda.synchronize()
            us = 1e3 * e0.elapsed_time(e1) / 20
            print(f"GPU time back to back, {name}, n={n}: {us:.1f} us "
                  f"({4 * n / us / 1e3:.0f} GB/s read)")
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
        steps(name, plan, xx, entry)
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
