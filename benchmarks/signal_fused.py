"""Benchmark of the chunked SFT engine and its fused Triton kernels, on one GPU.

Checks, then times, in one run:

* accuracy of the fused float32 kernels against the exact float64 convolution (kernel truncated
  at 10σ, by FFT) and against the float64 torch chunked engine, for Gaussian orders 0-2, every
  boundary mode, the Morlet transform (ξ = 1, 6, 20) and a 64-scale CWT; the float32 drift on
  10^7 samples;
* single-signal times (N = 102400) for σ = 16 … 8192: the public call (eager), the fused kernels
  alone, and the fused kernels replayed from a CUDA graph; the row-by-row "prefix" engine's graph
  time in the same run for the ratio;
* a batch of 1000 signals: effective bandwidth ``(input + output bytes) / time`` against the
  card's measured copy bandwidth;
* the 64-scale CWT of 102400 samples;
* kernel variants (chunks per tile, warps, dot precision).

Usage (repository root, on the GPU machine): ``PYTHONPATH=src python benchmarks/signal_fused.py
--out DIR``. Writes ``signal_fused.json`` and ``signal_fused.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time

import numpy as np
import torch

import fastmoments
from fastmoments.signal import CWT, GaussianFilter, MorletTransform
from fastmoments.signal.boundary import MODES, extend
from fastmoments.signal.chunked import chunked_apply, fused_eligible
from fastmoments.signal.coefficients import gaussian_kernel, morlet_kernel
from fastmoments.signal.cwt import _group_bank
from fastmoments.signal.triton_sft import fused_apply
from signal_common import capture_graph, fft_reference, rel, timer


def cuda_time(fn, warmup=3, repeat=20):
    """Median, min and max in ms of ``fn()`` after warm-up (CUDA events)."""
    return timer(fn, warmup=warmup, repeat=repeat, cuda=True)


def graph_of(fn):
    """Capture ``fn`` (static inputs) in a CUDA graph; returns a replay function."""
    return capture_graph(fn)[0].replay


def copy_bandwidth(dev) -> float:
    """Read + write GB/s of a 1 GiB device-to-device copy."""
    src = torch.empty(2**28, dtype=torch.float32, device=dev)
    dst = torch.empty_like(src)
    ms = cuda_time(lambda: dst.copy_(src), repeat=10)[0]
    return 2 * src.numel() * 4 / ms / 1e6


def kernel_times(fn) -> dict:
    """Device time (ms) per CUDA kernel of one call of ``fn``, from the torch profiler."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    out: dict = {}
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0)
        if t:
            out[ev.key[:40]] = round(t / 1e3, 4)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--sections", default="acc,single,batch,cwt")
    ap.add_argument("--name", default="signal_fused", help="result file name (without .json)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    rng = np.random.default_rng(0)
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "numpy": np.__version__, "python": sys.version.split()[0],
        "fastmoments": fastmoments.__version__, "platform": platform.platform(),
    }
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:  # pragma: no cover
        env["triton"] = None
    rows: list[dict] = []
    t0 = time.perf_counter()

    def record(**kw):
        rows.append(kw)
        print(json.dumps(kw), flush=True)

    def dump():
        with open(os.path.join(args.out, args.name + ".json"), "w") as fh:
            json.dump({"env": env, "rows": rows}, fh, indent=1)

    # copy bandwidth of the card (read + write bytes per second)
    env["copy_bandwidth_GBps"] = copy_bandwidth(dev)
    print("copy bandwidth", env["copy_bandwidth_GBps"], flush=True)
    n = 102400
    sections = set(args.sections.split(","))

    if "acc" in sections:
        x64 = torch.tensor(rng.standard_normal((2, n)), device=dev)
        x32 = x64.float()
        for sigma in (1.0, 4.0, 16.0, 256.0, 8192.0):
            for order in (0, 1, 2):
                for method in ("sft", "asft"):
                    plan = GaussianFilter(sigma, order=order, method=method)
                    w = int(10 * sigma) + 1
                    ref = fft_reference(x64, gaussian_kernel(np.arange(-w, w + 1), sigma, order))
                    modes = MODES if sigma in (16.0, 8192.0) and method == "sft" else ("reflect",)
                    for mode in modes:
                        if mode != "reflect":
                            ref = fft_reference(x64, gaussian_kernel(np.arange(-w, w + 1), sigma,
                                                                     order), mode)
                        y = plan(x32, mode=mode)
                        y64 = chunked_apply(plan.bank, x64, mode)[:, 0]
                        record(section="acc", kind="gaussian", sigma=sigma, order=order,
                               method=method, mode=mode, fused=fused_eligible(plan.bank),
                               rel_err_exact=rel(y, ref), rel_err_f64=rel(y, y64),
                               f64_rel_err_exact=rel(y64, ref), kernel_rmse=plan.rmse)
        for sigma in (4.0, 16.0, 256.0, 8192.0):
            for xi in (1.0, 6.0, 20.0):
                plan = MorletTransform(sigma, xi)
                w = int(10 * sigma) + 1
                ref = fft_reference(x64, morlet_kernel(np.arange(-w, w + 1), sigma, xi))
                y = plan(x32)
                record(section="acc", kind="morlet", sigma=sigma, xi=xi, method="sft",
                       mode="reflect", fused=fused_eligible(plan.bank),
                       rel_err_exact=rel(y, ref),
                       rel_err_f64=rel(y, chunked_apply(plan.bank, x64, "reflect")[:, 0]),
                       kernel_rmse=plan.rmse)
        scales = np.geomspace(2.0, 1024.0, 64)
        coef = CWT(scales)(x32[:1])
        errs = []
        for i, s in enumerate(scales):
            w = int(10 * s) + 1
            ref = fft_reference(x64[:1], morlet_kernel(np.arange(-w, w + 1), s, 6.0))
            errs.append(rel(coef[i], ref))
        record(section="acc", kind="cwt64", rel_err_exact_max=max(errs),
               rel_err_exact_median=float(np.median(errs)))
        # float32 stability on 10^7 samples
        xl = torch.tensor(rng.standard_normal(10**7), device=dev)
        for method in ("sft", "asft"):
            plan = GaussianFilter(256.0, method=method)
            y32 = plan(xl.float())
            y64 = chunked_apply(plan.bank, xl[None], "reflect")[0, 0]
            record(section="acc", kind="float32_1e7", method=method, sigma=256.0,
                   rel_err_f64=rel(y32, y64),
                   head_tail_err=[rel(y32[:10000], y64[:10000]), rel(y32[-10000:], y64[-10000:])])
        del xl
        dump()
        print("acc done", time.perf_counter() - t0, flush=True)

    sigmas = (16.0, 64.0, 256.0, 1024.0, 4096.0, 8192.0)
    if "single" in sections:
        x = torch.tensor(rng.standard_normal((1, n)), dtype=torch.float32, device=dev)
        for kind in ("gaussian0", "gaussian1", "gaussian2", "morlet"):
            for sigma in sigmas:
                plan = (MorletTransform(sigma, 6.0) if kind == "morlet"
                        else GaussianFilter(sigma, order=int(kind[-1])))
                bank = plan.bank
                eager = cuda_time(lambda p=plan: p(x))
                core = cuda_time(lambda b=bank: fused_apply(b, x, "reflect"))
                graph = cuda_time(graph_of(lambda b=bank: fused_apply(b, x, "reflect")))
                extra = {}
                if sigma in (16.0, 256.0, 8192.0):
                    xs = x.clone()

                    def prefix(b=bank, xs=xs):
                        return b.apply(extend(xs, b.pad, b.pad, "reflect"), n, "prefix")
                    extra["prefix_graph_ms"] = cuda_time(graph_of(prefix))[0]
                record(section="single", kind=kind, sigma=sigma, n=n, rows=bank.n_rows,
                       eager_ms=eager[0], fused_ms=core[0], graph_ms=graph[0],
                       graph_min_ms=graph[1], **extra)
        dump()
        print("single done", time.perf_counter() - t0, flush=True)

    if "batch" in sections:
        xb = torch.tensor(rng.standard_normal((1000, n)), dtype=torch.float32, device=dev)
        for kind in ("gaussian0", "morlet"):
            for sigma in (16.0, 256.0, 8192.0):
                plan = (MorletTransform(sigma, 6.0) if kind == "morlet"
                        else GaussianFilter(sigma))
                ms = cuda_time(lambda b=plan.bank: fused_apply(b, xb, "reflect"), warmup=2,
                               repeat=7)
                out_bytes = xb.numel() * (8 if kind == "morlet" else 4)
                gbps = (xb.numel() * 4 + out_bytes) / ms[0] / 1e6
                record(section="batch", kind=kind, sigma=sigma, batch=1000, n=n, ms=ms[0],
                       ms_min=ms[1], effective_GBps=gbps,
                       bandwidth_fraction=gbps / env["copy_bandwidth_GBps"],
                       kernels_ms=kernel_times(lambda b=plan.bank: fused_apply(b, xb, "reflect")))
        del xb
        dump()
        print("batch done", time.perf_counter() - t0, flush=True)

    if "cwt" in sections:
        x = torch.tensor(rng.standard_normal((1, n)), dtype=torch.float32, device=dev)
        for lo, hi in ((2.0, 1024.0), (16.0, 8192.0)):
            plan = CWT(np.geomspace(lo, hi, 64))
            bank = _group_bank(tuple(plan.plans))
            eager = cuda_time(lambda p=plan: p(x))
            core = cuda_time(lambda b=bank: fused_apply(b, x, "reflect"))
            graph = cuda_time(graph_of(lambda b=bank: fused_apply(b, x, "reflect")))
            record(section="cwt", scales=f"64 log-spaced {lo:g}-{hi:g}", n=n, rows=bank.n_rows,
                   eager_ms=eager[0], fused_ms=core[0], graph_ms=graph[0])
        dump()
        print("cwt done", time.perf_counter() - t0, flush=True)

    if "public_graph" in sections:  # the public plan calls captured in a CUDA graph
        x = torch.tensor(rng.standard_normal((1, n)), dtype=torch.float32, device=dev)
        plans = [("gaussian" + str(o), s, GaussianFilter(s, order=o))
                 for o in (0, 1, 2) for s in (16.0, 256.0, 8192.0)]
        plans += [("morlet", s, MorletTransform(s, 6.0)) for s in (16.0, 256.0, 8192.0)]
        plans += [("cwt64", 0.0, CWT(np.geomspace(2.0, 1024.0, 64)))]
        for kind, sigma, plan in plans:
            def call(p=plan):
                return p(x, check_finite=False, memory_budget=2**30)
            graph = cuda_time(graph_of(call))
            bank = plan.bank if kind != "cwt64" else _group_bank(tuple(plan.plans))
            fused = cuda_time(lambda b=bank: fused_apply(b, x, "reflect"))
            record(section="public_graph", kind=kind, sigma=sigma, n=n,
                   public_graph_ms=graph[0], public_graph_min_ms=graph[1],
                   public_no_check_ms=cuda_time(call)[0], kernels_ms=fused[0])
        dump()

    if "variant" in sections:  # the configuration in the environment (one per process)
        x = torch.tensor(rng.standard_normal((1, n)), dtype=torch.float32, device=dev)
        xb = torch.tensor(rng.standard_normal((1000, n)), dtype=torch.float32, device=dev)
        cwt_bank = _group_bank(tuple(CWT(np.geomspace(2.0, 1024.0, 64)).plans))
        g256 = GaussianFilter(256.0).bank
        m256 = MorletTransform(256.0, 6.0).bank
        cfg = {k: os.environ.get("FASTMOMENTS_SFT_" + k.upper(), "default")
               for k in ("bc", "warps", "precision")}
        ref = chunked_apply(g256, x.double(), "reflect")
        res = {"gauss_rel_err_f64": rel(fused_apply(g256, x, "reflect"), ref)}
        for name, bank, xx in (("gauss_single", g256, x), ("gauss_batch", g256, xb),
                               ("morlet_batch", m256, xb), ("cwt64", cwt_bank, x)):
            res[name + "_ms"] = cuda_time(
                graph_of(lambda b=bank, xx=xx: fused_apply(b, xx, "reflect")),
                warmup=2, repeat=7)[0]
        record(section="variants", **cfg, **res)
        with open(os.path.join(args.out, "signal_fused_variants.jsonl"), "a") as fh:
            fh.write(json.dumps({**cfg, **res}) + "\n")
        return 0

    env["seconds"] = time.perf_counter() - t0
    dump()
    print("done", env["seconds"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
