"""One launch or two for a small SFT call on a GPU, timed in the same run (issue 16, ≤ 40 µs).

A float32 Gaussian or Morlet transform of one GPU signal runs the fused SFT kernels of
:mod:`fastmoments.signal.triton_sft`: the tile totals, then the output tiles. Small jobs can
run both as one cooperative launch whose programs meet at a barrier between the two
(``_sft_single``); a replayed call then also returns when the kernel writes its NaN/inf
verdict at that barrier, not when the stream is done. This script builds each plan twice,
with ``FASTMOMENTS_SFT_SINGLE=0`` (two launches) and ``=1`` (one launch) while its calls are
recorded, checks that both give the same bits, and times the warm public call (each followed
by a synchronisation, as ``signal_latency.py``) of both in alternating rounds, plus the GPU
time of the kernels alone (their durations under the profiler) and, for a
batch of 1000 signals, the two-kernel path that batches keep (its kernels were rewritten as
shared loop bodies in the same change).

    PYTHONPATH=src python benchmarks/signal_single_launch.py

Writes ``benchmarks/results/signal_call_runs/single_launch.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
RESULTS = Path(__file__).resolve().parent / "results" / "signal_call_runs"

from signal_call_profile import fused_kernels_us, interleaved  # noqa: E402 - after the path


def kernels_us(bank, x, single: str, reps: int = 50) -> float:
    """GPU µs of the kernels of one ``fused_apply`` with ``FASTMOMENTS_SFT_SINGLE=single``."""
    return fused_kernels_us(bank, x, {"FASTMOMENTS_SFT_SINGLE": single}, reps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=102400)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--out", default=str(RESULTS / "single_launch"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("signal_single_launch.py needs a CUDA GPU")
    import triton

    import fastmoments as fm
    from fastmoments.signal import CWT, GaussianFilter, MorletTransform
    from fastmoments.signal.graphs import _Launches, plan_cache

    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(args.n), dtype=torch.float32, device="cuda")
    makers = {
        "GaussianFilter σ=1 (FIR, one launch either way)": lambda: GaussianFilter(1.0),
        "GaussianFilter σ=16": lambda: GaussianFilter(16.0),
        "GaussianFilter σ=256 order 1": lambda: GaussianFilter(256.0, order=1),
        "GaussianFilter σ=8192 order 2": lambda: GaussianFilter(8192.0, order=2),
        "MorletTransform σ=64": lambda: MorletTransform(64.0),
        "CWT, 64 scales": lambda: CWT(np.geomspace(2, 1024, 64)),
    }
    rows = []
    for name, make in makers.items():
        plans, kinds, signals = {}, {}, {}
        for single in ("0", "1"):
            os.environ["FASTMOMENTS_SFT_SINGLE"] = single
            plan = make()
            for _ in range(6):  # warm-up, recording (3rd call), first replays
                y = plan(x)
            torch.cuda.synchronize()
            cache = plan_cache(plan)
            entries = [e for e in cache._entries.values() if type(e) is _Launches]
            kinds[single] = ",".join(cache.kinds())
            signals[single] = bool(entries and entries[0].program.signals)
            plans[single] = (plan, y)
        same = torch.equal(plans["0"][0](x), plans["1"][0](x))
        t = interleaved({s: (lambda p=p: p(x)) for s, (p, _) in plans.items()}, args.calls,
                        rounds=10, sync=torch.cuda.synchronize)
        tu = interleaved({s: (lambda p=p: p(x, check_finite=False)) for s, (p, _) in
                          plans.items()}, args.calls, rounds=10, sync=torch.cuda.synchronize)
        bank = getattr(plans["1"][0], "bank", None)
        if name.startswith("CWT"):
            from fastmoments.signal.cwt import _group_bank

            bank = _group_bank(tuple(plans["1"][0].plans))
        kern = {}
        if bank is not None and "FIR" not in name:
            for s in ("0", "1"):
                kern[s] = kernels_us(bank, x[None], s)
        rows.append(dict(call=name, kinds=kinds, signals=signals, bitwise_equal=same,
                         checked_us=t, unchecked_us=tu, kernels_us=kern))
        print(name, kinds, signals, same, t, tu, kern, flush=True)
    # the batch keeps the two kernels: their time after the rewrite into shared loop bodies
    batch = []
    xb = torch.tensor(rng.standard_normal((1000, args.n)), dtype=torch.float32, device="cuda")
    os.environ.pop("FASTMOMENTS_SFT_SINGLE", None)
    for name, plan in (("Gaussian σ=16", GaussianFilter(16.0)),
                       ("Gaussian σ=8192", GaussianFilter(8192.0)),
                       ("Morlet σ=256", MorletTransform(256.0))):
        ms = 1e-3 * kernels_us(plan.bank, xb, "0", reps=10)
        nbytes = xb.numel() * (4 + (8 if plan.bank.complex_output else 4))  # read + write
        batch.append(dict(job=name, kernels_ms=ms, gb_per_s=nbytes / (ms * 1e-3) / 1e9))
        print(name, ms, flush=True)
    meta = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                device=torch.cuda.get_device_name(), torch=torch.__version__,
                triton=triton.__version__, fastmoments=fm.__version__, n=args.n,
                calls=args.calls)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(dict(meta=meta, rows=rows, batch=batch),
                                                   indent=1))
    lines = [f"# One launch or two for small SFT calls ({meta['device']})", "",
             f"{meta['date']}; torch {meta['torch']}, triton {meta['triton']}; one signal of "
             f"{args.n} float32 samples on the GPU; median µs of {args.calls} public calls "
             "each followed by a synchronisation, the two variants in 10 alternating rounds "
             "(same process). *two*: `FASTMOMENTS_SFT_SINGLE=0` while the plan's calls were "
             "recorded; *one*: `=1`. *kernels*: GPU µs of the kernels of one `fused_apply` "
             "(their durations summed by the profiler: no launch gaps, no host time). "
             "Written by `benchmarks/signal_single_launch.py`.", "",
             "| call | replay | verdict early | same bits | checked two | checked one | "
             "unchecked two | unchecked one | kernels two | kernels one |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        k = r["kernels_us"]
        lines.append(
            f"| {r['call']} | {r['kinds']['1']} | {'yes' if r['signals']['1'] else 'no'} | "
            f"{'yes' if r['bitwise_equal'] else 'NO'} | {r['checked_us']['0']:.1f} | "
            f"{r['checked_us']['1']:.1f} | {r['unchecked_us']['0']:.1f} | "
            f"{r['unchecked_us']['1']:.1f} | "
            f"{k.get('0', float('nan')):.1f} | {k.get('1', float('nan')):.1f} |")
    lines += ["", "Batch of 1000 signals (two kernels, as before):", "",
              "| job | kernels ms | of 2940 GB/s |", "|---|---|---|"]
    for b in batch:
        lines.append(f"| {b['job']} | {b['kernels_ms']:.3f} | "
                     f"{100 * b['gb_per_s'] / 2940:.1f}% |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
