"""The fused SFT kernels with TF32 products (``tf32x3``) against float16 products (``fp16x3``),
in one run on one GPU (issue 16: batch bandwidth).

Both schemes split each operand in two and sum three tensor-core products, which keeps
float32 accuracy (22 significant bits per operand); float16 tensor cores run at twice the
TF32 rate on an H100 and their operands take half the registers and shared memory. The
float16 scheme scales every chunk of the signal by a power of two first (float16 has a
small range, see :func:`fastmoments._triton.scaled_halves`), so its error bound is relative
to the largest sample of each 32-sample chunk rather than to each sample.

Checks, then times (the precision is switched through ``FASTMOMENTS_SFT_PRECISION`` between
calls; the kernels compile once per precision):

* error against the float64 torch engine for Gaussian orders 0-2 and Morlet banks, on white
  noise, a random walk, spikes 10^4 above the noise, and white noise scaled by 10^-30 and
  10^30 (the float16 range);
* the kernels replayed from a CUDA graph: a batch of 1000 × 102400 samples (effective
  bandwidth against the card's copy bandwidth), one signal, and the 64-scale CWT; alternating
  rounds, median of the rounds' medians;
* the public call on the batch, and each kernel's time from the torch profiler.

Usage (repository root, on the GPU machine): ``PYTHONPATH=src python
benchmarks/signal_precision.py --out DIR``. Writes ``signal_precision.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import torch

import fastmoments
from fastmoments.signal import CWT, GaussianFilter, MorletTransform
from fastmoments.signal.chunked import chunked_apply, fused_eligible
from fastmoments.signal.cwt import _group_bank
from fastmoments.signal.triton_sft import fused_apply
from signal_common import capture_graph, rel, timer
from signal_fused import copy_bandwidth, kernel_times

PRECISIONS = ("tf32x3", "fp16x3")


def use(prec: str, join: str | None = None) -> None:
    os.environ["FASTMOMENTS_SFT_PRECISION"] = prec
    if join is None:
        os.environ.pop("FASTMOMENTS_SFT_JOIN", None)
    else:
        os.environ["FASTMOMENTS_SFT_JOIN"] = join


def signals(rng, n: int, dev) -> dict[str, torch.Tensor]:
    white = rng.standard_normal((2, n))
    spikes = white.copy()
    spikes[:, :: 4999] += 1e4
    out = {"white": white, "random walk": np.cumsum(white, axis=1), "spikes 1e4": spikes,
           "white x 1e-30": white * 1e-30, "white x 1e30": white * 1e30}
    return {k: torch.tensor(v, device=dev) for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    dev = torch.device("cuda")
    rng = np.random.default_rng(0)
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": torch.version.cuda, "python": sys.version.split()[0],
           "fastmoments": fastmoments.__version__, "platform": platform.platform()}
    import triton
    env["triton"] = triton.__version__
    env["copy_bandwidth_GBps"] = copy_bandwidth(dev)
    rows: list[dict] = []
    t0 = time.perf_counter()

    def record(**kw):
        rows.append(kw)
        print(json.dumps(kw), flush=True)

    n = 102400
    banks = {f"gaussian{o} σ={s:g}": GaussianFilter(s, order=o).bank
             for o in (0, 1, 2) for s in (1.0, 16.0, 256.0, 8192.0)}
    banks.update({f"morlet σ={s:g}": MorletTransform(s, 6.0).bank for s in (16.0, 256.0, 8192.0)})
    banks["cwt64 2-1024"] = _group_bank(tuple(CWT(np.geomspace(2.0, 1024.0, 64)).plans))
    banks = {k: b for k, b in banks.items() if fused_eligible(b)}  # the others run on torch

    # accuracy: max error over the float64 engine's, scaled by Σ|h| max|x| (as the tests)
    for sname, x64 in signals(rng, n, dev).items():
        x32 = x64.float()
        for bname, bank in banks.items():
            ref = chunked_apply(bank, x64, "reflect")
            j = np.arange(-bank.pad, bank.pad + 1)
            scale = float(np.abs(bank.kernel(j)).sum(1).max()) * float(x64.abs().max())
            res = {}
            for prec in PRECISIONS:
                use(prec)
                y = fused_apply(bank, x32, "reflect")
                if not bool(torch.isfinite(torch.view_as_real(y) if y.is_complex() else y).all()):
                    res[prec] = {"max_err": float("nan"), "rel_l2": float("nan")}
                    continue
                res[prec] = {"max_err": float((y.to(ref.dtype) - ref).abs().max()) / scale,
                             "rel_l2": rel(y, ref)}
            record(section="accuracy", signal=sname, bank=bname,
                   **{f"{p}_{k}": v for p, r in res.items() for k, v in r.items()})
    print("accuracy done", time.perf_counter() - t0, flush=True)

    # times: the kernels from a CUDA graph, alternating precisions over rounds
    x1 = torch.tensor(rng.standard_normal((1, n)), dtype=torch.float32, device=dev)
    xb = torch.tensor(rng.standard_normal((1000, n)), dtype=torch.float32, device=dev)
    variants = [("tf32x3", None), ("fp16x3", None), ("fp16x3", "1"), ("fp16x3", "0")]
    jobs = [(name, bank, xx) for name, bank in banks.items()
            if name.startswith(("gaussian0", "gaussian2", "morlet")) and "σ=1" not in name
            for xx in (xb,)]
    jobs += [("gaussian0 σ=16 single", banks["gaussian0 σ=16"], x1),
             ("morlet σ=8192 single", banks["morlet σ=8192"], x1),
             ("cwt64 2-1024 single", banks["cwt64 2-1024"], x1)]
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for name, bank, xx in jobs:
            for prec, join in variants:
                if join is not None and xx is x1:
                    continue
                use(prec, join)
                g, _out = capture_graph(lambda b=bank, xx=xx: fused_apply(b, xx, "reflect"))
                ms = timer(g.replay, warmup=2, repeat=9 if xx is xb else 30)[0]
                times.setdefault((name, f"{prec} join={join or 'default'}"), []).append(ms)
                del g, _out
    for (name, var), ms in times.items():
        batch = not name.endswith("single")
        med = statistics.median(ms)
        extra = {}
        if batch:
            out_bytes = xb.numel() * (8 if name.startswith("morlet") else 4)
            gbps = (xb.numel() * 4 + out_bytes) / med / 1e6
            extra = {"effective_GBps": gbps,
                     "bandwidth_fraction": gbps / env["copy_bandwidth_GBps"]}
        record(section="graph", job=name, variant=var, ms=med, rounds=ms, **extra)
    print("graph done", time.perf_counter() - t0, flush=True)

    # the public call on the batch, and the kernels under the profiler
    for sigma in (16.0, 8192.0):
        plan = GaussianFilter(sigma)
        for prec in PRECISIONS:
            use(prec)
            ms = timer(lambda p=plan: p(xb), warmup=2, repeat=9)[0]
            gbps = 2 * xb.numel() * 4 / ms / 1e6
            record(section="public", job=f"gaussian0 σ={sigma:g} batch", variant=prec, ms=ms,
                   bandwidth_fraction=gbps / env["copy_bandwidth_GBps"],
                   kernels_ms=kernel_times(lambda b=plan.bank: fused_apply(b, xb, "reflect")))
    env["seconds"] = time.perf_counter() - t0
    with open(os.path.join(args.out, "signal_precision.json"), "w") as fh:
        json.dump({"env": env, "rows": rows}, fh, indent=1)
    write_md(env, rows, os.path.join(args.out, "signal_precision.md"))
    print("done", env["seconds"], flush=True)
    return 0


def write_md(env: dict, rows: list[dict], path: str) -> None:
    lines = [f"# Fused SFT kernels: TF32 against float16 products ({env['device']})", "",
             f"{env['date']}; torch {env['torch']} (CUDA {env['cuda']}), Triton {env['triton']}; "
             f"copy bandwidth {env['copy_bandwidth_GBps']:.0f} GB/s. Written by "
             "`benchmarks/signal_precision.py`.", "",
             "## Times (kernels replayed from a CUDA graph; median over alternating rounds)", "",
             "| job | variant | ms | fraction of copy bandwidth |", "|---|---|---|---|"]
    for r in rows:
        if r["section"] == "graph":
            frac = f"{r['bandwidth_fraction']:.1%}" if "bandwidth_fraction" in r else ""
            lines.append(f"| {r['job']} | {r['variant']} | {r['ms']:.4f} | {frac} |")
    lines += ["", "## Public call on the batch (1000 × 102400, float32)", "",
              "| job | precision | ms | fraction of copy bandwidth | kernels (profiler, ms) |",
              "|---|---|---|---|---|"]
    for r in rows:
        if r["section"] == "public":
            ks = ", ".join(f"{k} {v}" for k, v in r["kernels_ms"].items())
            lines.append(f"| {r['job']} | {r['variant']} | {r['ms']:.3f} | "
                         f"{r['bandwidth_fraction']:.1%} | {ks} |")
    lines += ["", "## Error against the float64 engine", "",
              "`max`: max |y − y64| / (Σ|h| · max|x|); `rel`: relative L2.", "",
              "| signal | bank | tf32x3 max | fp16x3 max | tf32x3 rel | fp16x3 rel |",
              "|---|---|---|---|---|---|"]
    for r in rows:
        if r["section"] == "accuracy":
            lines.append(f"| {r['signal']} | {r['bank']} | {r['tf32x3_max_err']:.1e} | "
                         f"{r['fp16x3_max_err']:.1e} | {r['tf32x3_rel_l2']:.1e} | "
                         f"{r['fp16x3_rel_l2']:.1e} |")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
