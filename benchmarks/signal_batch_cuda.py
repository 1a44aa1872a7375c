"""Batches of 1000 × 102400 float32 signals on one GPU (target: ≥ 50 % of the copy
bandwidth): the CUDA C++ kernel (:mod:`fastmoments.signal.cuda_sft`) against the Triton
kernels (:mod:`fastmoments.signal.triton_sft`) and against ``cupyx.scipy.ndimage``, all in one
run, with the card's copy bandwidth measured in the same run.

For each job (Gaussian filters, and the Morlet transform with its complex64 output): the two
kernels alone (each with its NaN/inf flag; the GPU's time only: the host queues the launches
behind a sleep kernel), the public call
``plan(x)`` as a user writes it (the input check included) with the CUDA kernel, with the
graphs on and off (``FASTMOMENTS_CUDA_GRAPHS=0``) in alternating rounds; on the Triton
kernels (the CUDA kernel's eligibility patched off in this script); and
``cupyx.scipy.ndimage.gaussian_filter1d`` on the batch (Gaussian, σ ≤ 64). Bandwidth
fraction: (input + output bytes) / time / copy bandwidth, where the copy bandwidth is
``2 × bytes / time`` of a 1 GiB device-to-device copy. Errors:
the largest absolute error over three white-noise signals and one random walk, against the
float64 chunked engine, divided by the largest output. Also the batch size at σ = 16 (CUDA
kernel against Triton kernels).

Run on a CUDA machine with CuPy from the repository root::

    python benchmarks/signal_batch_cuda.py

Writes ``benchmarks/results/signal_batch_cuda.{json,md,png}``. Times are medians of
CUDA-event timings after warm-up calls; the public calls start on an idle GPU, so their
times include the host's work before the launch and the wait for the NaN/inf verdict.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from disk_common import time_samples
from signal_common import timer
from signal_fused import copy_bandwidth

# (σ, Gaussian order; None: the Morlet transform, ξ = 6, complex output)
JOBS = [(16.0, 0), (64.0, 0), (256.0, 0), (1024.0, 0), (4096.0, 0), (8192.0, 0), (16.0, 2),
        (256.0, 1), (16.0, None), (256.0, None)]
BATCHES = [256, 512, 1000, 2000]
ROUNDS = 5  # alternating rounds of 10 timed public calls, routed and general
N = 102400


def errors(bank, apply, rng, dev) -> float:
    """Largest error / largest output over white noise and a random walk (float64 ref.)."""
    from fastmoments.signal.chunked import chunked_apply

    noise = rng.standard_normal((3, N))
    walk = np.cumsum(rng.standard_normal((1, N)), axis=1)
    worst = 0.0
    for x in (noise, walk):
        xt = torch.tensor(x, dtype=torch.float32, device=dev)
        ref = chunked_apply(bank, xt.double(), "reflect")
        y = apply(bank, xt)
        worst = max(worst, float((y.to(ref.dtype) - ref).abs().max() / ref.abs().max()))
    return worst


def floor(x: torch.Tensor, dev: torch.device) -> dict:
    """What torch's own one-kernel pass over the same bytes costs when timed as the public
    call is (from an idle GPU, a stream synchronisation inside), and its kernel alone:
    ``torch.neg`` (float32 out, as a Gaussian) and ``x.to(complex64)`` (as the Morlet
    transform's output). The host's share of a call is no smaller for any library."""
    out = {}
    for name, fn in (("neg", lambda: torch.neg(x)), ("to_complex64",
                                                       lambda: x.to(torch.complex64))):
        def synced(fn=fn):
            fn()
            torch.cuda.current_stream().synchronize()

        ts = []
        for _ in range(ROUNDS):
            ts += time_samples(synced, dev, warmup=2, repeat=10)
        out[name + "_ms"] = 1e3 * statistics.median(ts)
        out[name + "_kernel_ms"] = timer(fn, warmup=2, repeat=15, device_only=True)[0]
        torch.cuda.empty_cache()
    return out


def run() -> dict:
    import cupy
    import triton

    from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft
    from fastmoments.signal.triton_sft import fused_apply

    dev = torch.device("cuda")
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((1000, N)), dtype=torch.float32, device=dev)
    copy = copy_bandwidth(dev)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": torch.version.cuda, "triton": triton.__version__,
           "cupy": cupy.__version__, "copy_GBps": copy, "batch": [1000, N], "jobs": [],
           "batches": []}
    flag = torch.ones((), dtype=torch.uint8, device=dev)
    res["floor"] = floor(x, dev)
    print(json.dumps(res["floor"]), flush=True)

    for sigma, order in JOBS:
        plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(
            sigma, 6.0)
        moved = 1000 * N * (4 + (4 if order is not None else 8))  # input + output bytes

        def frac(ms, moved=moved):
            return moved / ms / 1e6 / copy

        bank = plan.bank
        row = {"sigma": sigma, "order": order, "cuda_takes": cuda_sft.takes(bank, x, "reflect")}
        # the public calls first, on an allocator that holds only this job's blocks: the
        # default path and the eager one (graphs off), in alternating rounds
        routed, general = [], []
        for _ in range(ROUNDS):
            routed += time_samples(lambda p=plan: p(x), dev, warmup=2, repeat=10)
            os.environ["FASTMOMENTS_CUDA_GRAPHS"] = "0"
            general += time_samples(lambda p=plan: p(x), dev, warmup=2, repeat=10)
            del os.environ["FASTMOMENTS_CUDA_GRAPHS"]
        row["public_ms"] = 1e3 * statistics.median(routed)
        row["public_min_ms"], row["public_max_ms"] = 1e3 * min(routed), 1e3 * max(routed)
        row["public_general_ms"] = 1e3 * statistics.median(general)
        layout = cuda_sft.eligible_layout  # the Triton kernels take the batch
        cuda_sft.eligible_layout = lambda *a: None
        row["public_triton_ms"] = timer(lambda p=plan: p(x), warmup=3, repeat=30)[0]
        cuda_sft.eligible_layout = layout
        row["cuda_ms"] = timer(lambda b=bank: cuda_sft.apply(b, x, "reflect", flag=flag),
                               warmup=2, repeat=15, device_only=True)[0]
        row["triton_ms"] = timer(lambda b=bank: fused_apply(b, x, "reflect", flag=flag),
                                 warmup=2, repeat=15, device_only=True)[0]
        if sigma <= 64 and order is not None:
            import cupyx.scipy.ndimage as cnd

            xc = cupy.asarray(x)
            row["cupyx_ms"] = timer(lambda s=sigma, o=order, xc=xc: cnd.gaussian_filter1d(
                xc, s, axis=-1, order=o), warmup=1, repeat=5)[0]
            del xc
            cupy.get_default_memory_pool().free_all_blocks()  # (its results' blocks)
        for k in ("cuda", "triton", "public", "public_general", "public_triton", "cupyx"):
            if k + "_ms" in row:
                row[k + "_fraction"] = frac(row[k + "_ms"])
        row["cuda_error"] = errors(bank, lambda b, t: cuda_sft.apply(b, t, "reflect"), rng, dev)
        row["triton_error"] = errors(bank, lambda b, t: fused_apply(b, t, "reflect"), rng, dev)
        torch.cuda.empty_cache()  # the next job starts from the same allocator state
        print(json.dumps(row), flush=True)
        res["jobs"].append(row)
    bank = GaussianFilter(16.0).bank
    for b in BATCHES:
        xb = torch.tensor(rng.standard_normal((b, N)), dtype=torch.float32, device=dev)
        row = {"signals": b,
               "cuda_ms": timer(lambda xb=xb: cuda_sft.apply(bank, xb, "reflect"), warmup=2,
                                repeat=15, device_only=True)[0],
               "triton_ms": timer(lambda xb=xb: fused_apply(bank, xb, "reflect"), warmup=2,
                                  repeat=15, device_only=True)[0]}
        print(json.dumps(row), flush=True)
        res["batches"].append(row)
    return res


def report(res: dict, out: str) -> None:
    """The Markdown table and the figure."""
    lines = [f"# Batches of {res['batch'][0]} × {res['batch'][1]} float32 signals "
             f"({res['device']})", "",
             f"{res['date']}; torch {res['torch']} (CUDA {res['cuda']}), Triton "
             f"{res['triton']}, CuPy {res['cupy']}. Copy bandwidth in the same run: "
             f"{res['copy_GBps']:.0f} GB/s (read + write of a 1 GiB copy). *fraction*: "
             "(input + output bytes) / time / copy bandwidth (target ≥ 50 %). *kernel*: the "
             "GPU's time alone (launches queued behind a sleep kernel). *public*: "
             "`plan(x)` with its NaN/inf check, from an idle GPU (host work included), "
             "repeated calls (batches this large are never captured into graphs); "
             "*public, general path*: the same with `FASTMOMENTS_CUDA_GRAPHS=0`, "
             "in alternating rounds; *public, Triton*: the same on the Triton kernels. "
             "Errors: largest error / largest output, white noise "
             "and a random walk, against float64. Written by `benchmarks/signal_batch_cuda.py`.",
             ""]
    fl = res.get("floor")
    if fl:
        moved = 8 * res["batch"][0] * res["batch"][1]  # float32 in and out
        share = 100 * moved / fl["neg_ms"] / 1e6 / res["copy_GBps"]
        lines += [
            "*The host's floor*: torch's own one-kernel pass over the same bytes, timed as the "
            f"public call is: `torch.neg(x)` {fl['neg_ms']:.3f} ms (kernel alone "
            f"{fl['neg_kernel_ms']:.3f} ms; {share:.0f} % of the copy bandwidth as a public "
            "call), `x.to(torch.complex64)` "
            f"{fl['to_complex64_ms']:.3f} ms (kernel alone {fl['to_complex64_kernel_ms']:.3f} "
            "ms). What a call adds to its kernel on this host is at least their difference.",
            ""]
    lines += [
             "| σ | filter | CUDA kernel ms (fraction) | Triton kernels ms (fraction) | public ms "
             "(fraction) | public, general path ms (fraction) | public, Triton ms (fraction) | "
             "cupyx ms (fraction) | CUDA / Triton kernels | error CUDA | error Triton |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["jobs"]:
        def cell(k, r=r):
            return (f"{r[k + '_ms']:.3f} ({100 * r[k + '_fraction']:.0f} %)"
                    if k + "_ms" in r else "")
        kind = "Morlet" if r["order"] is None else f"Gaussian, order {r['order']}"
        lines.append(f"| {r['sigma']:g} | {kind} | {cell('cuda')} | {cell('triton')} | "
                     f"{cell('public')} | {cell('public_general')} | {cell('public_triton')} | "
                     f"{cell('cupyx')} | "
                     f"{r['triton_ms'] / r['cuda_ms']:.2f}× | {r['cuda_error']:.1e} | "
                     f"{r['triton_error']:.1e} |")
    lines += ["", f"The public call's spread over its {10 * ROUNDS} timed calls (routed), and "
              "what its median adds to the kernel alone:", "",
              "| σ | filter | min ms | median ms | max ms | median − kernel µs |",
              "|---|---|---|---|---|---|"]
    for r in res["jobs"]:
        if "public_min_ms" in r:
            kind = "Morlet" if r["order"] is None else f"Gaussian, order {r['order']}"
            lines.append(f"| {r['sigma']:g} | {kind} | {r['public_min_ms']:.3f} | "
                         f"{r['public_ms']:.3f} | {r['public_max_ms']:.3f} | "
                         f"{1e3 * (r['public_ms'] - r['cuda_ms']):.0f} |")
    lines += ["", "Batch size (σ = 16, order 0, 102400 samples per signal):", "",
              "| signals | CUDA kernel ms | Triton kernels ms |", "|---|---|---|"]
    for r in res["batches"]:
        lines.append(f"| {r['signals']} | {r['cuda_ms']:.3f} | {r['triton_ms']:.3f} |")
    lines += ["", "![fraction of the copy bandwidth](signal_batch_cuda.png)", ""]
    with open(os.path.join(out, "signal_batch_cuda.md"), "w") as f:
        f.write("\n".join(lines))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    names = [f"σ={r['sigma']:g}\n" + (f"order {r['order']}" if r["order"] is not None
                                      else "Morlet") for r in res["jobs"]]
    pos = np.arange(len(names))
    bars = [("cuda", "CUDA kernel"), ("triton", "Triton kernels"), ("public", "public call"),
            ("public_general", "public call, general path"),
            ("public_triton", "public call, Triton")]
    bars = [b for b in bars if all(b[0] + "_fraction" in r for r in res["jobs"])]
    width = 0.8 / len(bars)
    for i, (k, label) in enumerate(bars):
        ax.bar(pos + (i - (len(bars) - 1) / 2) * width,
               [100 * r[k + "_fraction"] for r in res["jobs"]], width, label=label)
    ax.axhline(50, color="k", ls="--", lw=1, label="target 50 %")
    ax.set_xticks(pos, names)
    ax.set_ylabel("% of copy bandwidth")
    ax.set_title(f"1000 × 102400 float32 signals ({res['device']})")
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "signal_batch_cuda.png"), dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--report-only", action="store_true",
                    help="redraw the table and figure from the saved JSON")
    args = ap.parse_args()
    path = os.path.join(args.out, "signal_batch_cuda.json")
    if args.report_only:
        with open(path) as f:
            res = json.load(f)
    else:
        res = run()
        os.makedirs(args.out, exist_ok=True)
        with open(path, "w") as f:
            json.dump(res, f, indent=1)
    report(res, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
