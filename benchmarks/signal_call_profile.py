"""Where the time of one repeated public signal call goes on a GPU (issue 16, ≤ 40 µs).

For a warm plan whose calls replay recorded launches (:mod:`fastmoments._launches`), times
(median of ``--calls``, after warm-up) the whole call with its synchronisation, the host time
until the call returns (no synchronisation), each step of the replay on its own, and the GPU
time of back-to-back calls (CUDA events; the kernels of one call, when the host keeps ahead).
The SM clock is read through NVML before and after. Writes a text report to ``--out``.

    PYTHONPATH=src python benchmarks/signal_call_profile.py \\
        --out benchmarks/results/signal_runs/call_profile.txt
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from signal_latency import per_call


def med(fn, calls: int) -> float:
    """Median µs of ``fn()`` (host time until it returns), as ``signal_latency.per_call``."""
    return 1e6 * per_call(fn, calls, lambda: None)


def interleaved(fns: dict, calls: int, rounds: int = 8, sync=None) -> dict:
    """Median µs of each zero-argument callable, timed in alternating rounds of ``calls //
    rounds`` calls each (the host's slow spells then fall on every variant alike)."""
    per = max(1, calls // rounds)
    ts = {k: [] for k in fns}
    for fn in fns.values():
        for _ in range(10):
            fn()
    torch.cuda.synchronize()
    for _ in range(rounds):
        for k, fn in fns.items():
            for _ in range(per):
                t0 = time.perf_counter()
                fn()
                if sync:
                    sync()
                ts[k].append(time.perf_counter() - t0)
    return {k: 1e6 * statistics.median(v) for k, v in ts.items()}


def fused_kernels_us(bank, x, env: dict[str, str | None], reps: int = 50) -> float:
    """GPU µs of the kernels of one ``fused_apply(bank, x, "reflect")`` with the environment
    variables ``env`` set (``None``: unset) while it runs: the sum of the kernels' durations
    as the profiler (CUPTI) records them, per call (no launch gaps, no host time)."""
    import os

    from torch.profiler import ProfilerActivity, profile

    from fastmoments.signal.triton_sft import fused_apply

    saved = {k: os.environ.get(k) for k in env}

    def put(values):
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    put(env)
    try:
        for _ in range(5):
            fused_apply(bank, x, "reflect")
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(reps):
                fused_apply(bank, x, "reflect")
            torch.cuda.synchronize()
    finally:
        put(saved)
    total = 0.0
    for e in prof.key_averages():
        if str(e.device_type).endswith("CUDA"):
            total += getattr(e, "self_device_time_total", None) or e.self_cuda_time_total
    return total / reps


def gpu_only(fn, calls: int) -> float:
    """GPU µs per ``fn()`` from a CUDA graph of ``fn`` replayed back to back (no host)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return gpu_per_call(g.replay, calls)


def gpu_per_call(fn, calls):
    for _ in range(10):
        fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    a.record()
    for _ in range(calls):
        fn()
    b.record()
    b.synchronize()
    return 1e3 * a.elapsed_time(b) / calls


def clock():
    try:
        return f"{torch.cuda.clock_rate()} MHz"
    except Exception as exc:
        return f"? ({exc})"


def row(label: str, us: float) -> str:
    return f"  {label:<48} {us:7.1f} us"


def profile_plan(name, plan, x, calls: int) -> list[str]:
    """The report lines of one plan (made warm here)."""
    from fastmoments.signal.graphs import _raw_stream, plan_cache

    sync = torch.cuda.synchronize
    for _ in range(4):
        plan(x)
    cache = plan_cache(plan)
    out = [f"\n== {name}: {cache.kinds()} {dict(cache.failures)}"]
    entry = next(iter(cache._entries.values()))
    stream = _raw_stream(x.get_device())
    key = next(iter(cache._entries))[0]
    run = lambda t: plan._call(t, check_finite=False)  # noqa: E731 - as replayed_call
    fns = {"plan(x) + sync": lambda: plan(x),
           "plan(x, check_finite=False) + sync": lambda: plan(x, check_finite=False),
           "GraphCache.call(x, key, ...) + sync":
               lambda: cache.call(x, key, run, True, 8 * x.numel())}
    if type(entry).__name__ == "_Launches":
        fns["entry.replay(x, checked) (syncs inside)"] = lambda: entry.replay(x, stream, True)
    for k, v in interleaved(fns, calls, sync=sync).items():
        out.append(row(k, v))
    out.append(row("host until return (check_finite=False)",
                   med(lambda: plan(x, check_finite=False), calls)))
    out.append(row("GPU per call, back to back (check_finite=False)",
                   gpu_per_call(lambda: plan(x, check_finite=False), calls)))
    if type(entry).__name__ != "_Launches":
        return out
    prog, ptr = entry.program, entry.scratch.data_ptr()
    host_t, host_v = entry.host
    hptr = host_t.data_ptr()

    def host_flag_sync():
        host_v[()] = 1
        prog(x, stream, hptr)
        entry.stream.synchronize()
        return host_v[()]

    def device_flag_sync():
        prog(x, stream, ptr)
        entry.stream.synchronize()

    def device_flag_torch_sync():
        prog(x, stream, ptr)
        torch.cuda.synchronize()

    def host_flag_torch_sync():
        prog(x, stream, hptr)
        torch.cuda.synchronize()

    out.append("  -- the program with the flag in pinned host or in device memory, interleaved:")
    for k, v in interleaved({"replay(checked)": lambda: entry.replay(x, stream, True),
                             "replay(unchecked) + device sync":
                                 lambda: (entry.replay(x, stream, False),
                                          torch.cuda.synchronize()),
                             "host flag, stream sync": host_flag_sync,
                             "device flag, stream sync": device_flag_sync,
                             "host flag, device sync": host_flag_torch_sync,
                             "device flag, device sync": device_flag_torch_sync},
                            calls).items():
        out.append(row(k, v))
    out.append(row("GPU per program, from a CUDA graph of it", gpu_only(
        lambda: prog(x, torch.cuda.current_stream().cuda_stream, ptr), calls)))
    out.append(row("program only (host)", med(lambda: prog(x, stream, ptr), calls)))
    out.append(row("program + stream sync",
                   med(lambda: (prog(x, stream, ptr), entry.stream.synchronize()), calls)))
    out.append(row("GPU per program, back to back",
                   gpu_per_call(lambda: prog(x, stream, ptr), calls)))
    out.append(row("result allocation", med(prog._result, calls)))
    for k, (kernel, grid, vals, _) in enumerate(prog._steps):
        def one(kernel=kernel, grid=grid, vals=vals):
            kernel.run(grid[0], grid[1], grid[2], stream, kernel.function,
                       kernel.packed_metadata, None, None, None, *vals)
        out.append(row(f"launch {k} {kernel.name} {grid}, {len(vals)} args: host",
                       med(one, calls)))
        out.append(row(f"launch {k}: GPU back to back", gpu_per_call(one, calls)))
    out.append(row("stream sync, nothing queued", med(entry.stream.synchronize, calls)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=102400)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--out", default=None)
    ap.add_argument("--pin", type=int, default=None, help="pin the process to this CPU")
    args = ap.parse_args()
    from fastmoments.signal import GaussianFilter, MorletTransform

    lines = [f"{torch.cuda.get_device_name()}, torch {torch.__version__}, n = {args.n}, "
             f"median of {args.calls}", f"SM clock at start: {clock()}"]
    if args.pin is not None:
        import os

        os.sched_setaffinity(0, {args.pin})
        lines.append(f"process pinned to CPU {args.pin}")
    x = torch.randn(args.n, device="cuda")
    for name, plan in [("gauss s=1 (FIR)", GaussianFilter(1.0)),
                       ("gauss s=16", GaussianFilter(16.0)),
                       ("gauss s=8192 order 2", GaussianFilter(8192.0, order=2)),
                       ("morlet s=64", MorletTransform(64.0))]:
        lines += profile_plan(name, plan, x, args.calls)
        lines.append(f"  SM clock now: {clock()}")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
