"""float64 signals through the fused SFT kernels against the torch engine, same run (issue 16).

The fused Triton kernels of :mod:`fastmoments.signal.triton_sft` were float32 only; float64
CUDA tensors ran the torch chunked engine (dozens of small kernels, replayed as a CUDA graph
for repeated calls). The kernels now also run with float64 tables and products. For each
job this script builds the same plan with ``FASTMOMENTS_SFT_FLOAT64=0`` (torch engine) and
``=1`` (fused kernels), checks that they agree, and times the warm public call of one GPU
signal (each followed by a synchronisation; alternating rounds) and a batch of 200 signals
(CUDA events around the public call).

    PYTHONPATH=src python benchmarks/signal_float64_fused.py

Writes ``benchmarks/results/signal_call_runs/float64_fused.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
RESULTS = Path(__file__).resolve().parent / "results" / "signal_call_runs"

from signal_call_profile import interleaved  # noqa: E402 - after the path


def event_ms(fn, reps: int = 5) -> float:
    """Median ms of ``fn()`` between two CUDA events, after two warm-up calls."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b))
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=102400)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--out", default=str(RESULTS / "float64_fused"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("signal_float64_fused.py needs a CUDA GPU")
    import triton

    import fastmoments as fm
    from fastmoments.signal import CWT, GaussianFilter, MorletTransform
    from fastmoments.signal.graphs import plan_cache

    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(args.n), dtype=torch.float64, device="cuda")
    xb = torch.tensor(rng.standard_normal((args.batch, args.n)), dtype=torch.float64,
                      device="cuda")
    jobs = {"GaussianFilter σ=256 order 1": lambda: GaussianFilter(256.0, order=1),
            "GaussianFilter σ=8192 order 2": lambda: GaussianFilter(8192.0, order=2),
            "MorletTransform σ=64": lambda: MorletTransform(64.0),
            "CWT, 64 scales": lambda: CWT(np.geomspace(2, 1024, 64))}
    rows = []
    for name, make in jobs.items():
        plans, outs, kinds = {}, {}, {}
        for f64 in ("0", "1"):
            os.environ["FASTMOMENTS_SFT_FLOAT64"] = f64
            plan = make()
            for _ in range(6):  # warm-up, recording or capture, first replays
                y = plan(x)
            torch.cuda.synchronize()
            plans[f64], outs[f64], kinds[f64] = plan, y, ",".join(plan_cache(plan).kinds())
        diff = float((outs["1"] - outs["0"]).abs().max() / outs["0"].abs().max())
        t = interleaved({f: (lambda p=p: p(x)) for f, p in plans.items()}, 200, rounds=10,
                        sync=torch.cuda.synchronize)
        batch = {}
        if not name.startswith("CWT"):  # (a 64-scale CWT of the batch: 10 GB of output)
            for f64 in ("0", "1"):
                os.environ["FASTMOMENTS_SFT_FLOAT64"] = f64
                batch[f64] = event_ms(lambda p=plans[f64]: p(xb))
        rows.append(dict(job=name, replay=kinds, rel_diff=diff, call_us=t, batch_ms=batch))
        print(name, kinds, diff, t, batch, flush=True)
    os.environ.pop("FASTMOMENTS_SFT_FLOAT64", None)
    meta = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                device=torch.cuda.get_device_name(), torch=torch.__version__,
                triton=triton.__version__, fastmoments=fm.__version__, n=args.n,
                batch=args.batch)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    lines = [f"# float64 through the fused SFT kernels ({meta['device']})", "",
             f"{meta['date']}; torch {meta['torch']}, triton {meta['triton']}; float64 "
             f"signals of {args.n} samples on the GPU. *torch*: `FASTMOMENTS_SFT_FLOAT64=0` "
             "(the torch chunked engine); *fused*: the Triton kernels with float64 tables and "
             "products. *call*: median µs of 200 warm public calls of one signal, each "
             "followed by a synchronisation, the two in 10 alternating rounds; *batch*: median "
             f"ms of the public call on {args.batch} signals (CUDA events). *rel. diff*: max "
             "|fused − torch| / max |torch|. Written by `benchmarks/signal_float64_fused.py`.",
             "", "| job | replay torch / fused | rel. diff | call torch µs | call fused µs | "
             "batch torch ms | batch fused ms |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        b = r["batch_ms"]
        lines.append(f"| {r['job']} | {r['replay']['0']} / {r['replay']['1']} | "
                     f"{r['rel_diff']:.1e} | {r['call_us']['0']:.1f} | {r['call_us']['1']:.1f} | "
                     f"{b.get('0', float('nan')):.3f} | {b.get('1', float('nan')):.3f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
