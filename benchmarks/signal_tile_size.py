"""Tiles of 16 or 32 chunks for a small SFT call on a GPU, timed in the same run (issue 16).

A float32 Gaussian or Morlet transform of one GPU signal runs the one-launch SFT kernel of
:mod:`fastmoments.signal.triton_sft` (``_sft_single``): one program per tile of ``BC``
chunks of 32 samples, all resident at once. Small jobs use ``BC = 32``
(``triton_sft._settings``); this script asks whether tiles of 16 chunks (twice the
programs, each with half the work; the tile anchor then sums twice as many tile totals)
shorten the kernel and the call. Each plan is built once per tile size, with
``FASTMOMENTS_SFT_BC`` set while its calls are recorded; both results are compared with
the float64 plan's, and the warm public call (each followed by a synchronisation, as in
``signal_latency.py``) of both is timed in alternating rounds, with and without the
NaN/inf check, plus the GPU time of the kernels alone (the profiler's durations).

    PYTHONPATH=src python benchmarks/signal_tile_size.py

Writes ``benchmarks/results/signal_call_runs/tile_size.json`` and ``.md``.
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

VARIANTS = {"default": None, "16 chunks": "16"}


def _with_bc(bc: str | None):
    if bc is None:
        os.environ.pop("FASTMOMENTS_SFT_BC", None)
    else:
        os.environ["FASTMOMENTS_SFT_BC"] = bc


def kernels_us(bank, x, bc: str | None, reps: int = 50) -> float:
    """GPU µs of the kernels of one ``fused_apply`` with ``FASTMOMENTS_SFT_BC=bc``."""
    return fused_kernels_us(bank, x, {"FASTMOMENTS_SFT_BC": bc}, reps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=102400)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--out", default=str(RESULTS / "tile_size"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("signal_tile_size.py needs a CUDA GPU")
    import triton

    import fastmoments as fm
    from fastmoments.signal import CWT, GaussianFilter, MorletTransform
    from fastmoments.signal.graphs import plan_cache

    rng = np.random.default_rng(0)
    x64 = torch.tensor(rng.standard_normal(args.n), dtype=torch.float64, device="cuda")
    x = x64.float()
    makers = {f"GaussianFilter σ={s:g} order {o}": (lambda s=s, o=o: GaussianFilter(s, order=o))
              for s in (4.0, 16.0, 256.0, 8192.0) for o in (0, 2)}
    makers["MorletTransform σ=64"] = lambda: MorletTransform(64.0)
    makers["CWT, 64 scales"] = lambda: CWT(np.geomspace(2, 1024, 64))
    rows = []
    for name, make in makers.items():
        ref = make()(x64)
        plans, kinds, errs = {}, {}, {}
        for v, bc in VARIANTS.items():
            _with_bc(bc)
            plan = make()
            for _ in range(6):  # warm-up, recording (3rd call), first replays
                y = plan(x)
            torch.cuda.synchronize()
            _with_bc(None)
            kinds[v] = ",".join(plan_cache(plan).kinds())
            errs[v] = float(torch.linalg.vector_norm((y - ref).flatten())
                            / torch.linalg.vector_norm(ref.flatten()))
            plans[v] = plan
        t = interleaved({v: (lambda p=p: p(x)) for v, p in plans.items()}, args.calls,
                        rounds=10, sync=torch.cuda.synchronize)
        tu = interleaved({v: (lambda p=p: p(x, check_finite=False)) for v, p in plans.items()},
                         args.calls, rounds=10, sync=torch.cuda.synchronize)
        bank = getattr(plans["default"], "bank", None)
        if name.startswith("CWT"):
            from fastmoments.signal.cwt import _group_bank

            bank = _group_bank(tuple(plans["default"].plans))
        kern = {}
        if bank is not None and kinds["default"] == "launches":
            from fastmoments.signal.chunked import fused_eligible

            if fused_eligible(bank):
                kern = {v: kernels_us(bank, x[None], bc) for v, bc in VARIANTS.items()}
        rows.append(dict(call=name, kinds=kinds, rel_err_vs_float64=errs, checked_us=t,
                         unchecked_us=tu, kernels_us=kern))
        print(name, kinds, errs, t, tu, kern, flush=True)
    meta = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                device=torch.cuda.get_device_name(), torch=torch.__version__,
                triton=triton.__version__, fastmoments=fm.__version__, n=args.n,
                calls=args.calls)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    names = list(VARIANTS)
    lines = [f"# Tiles of 16 or 32 chunks for small SFT calls ({meta['device']})", "",
             f"{meta['date']}; torch {meta['torch']}, triton {meta['triton']}; one signal of "
             f"{args.n} float32 samples on the GPU; median µs of {args.calls} public calls "
             "each followed by a synchronisation, the variants in 10 alternating rounds (same "
             "process). *default*: the tiles `triton_sft._settings` picks; *16 chunks*: "
             "`FASTMOMENTS_SFT_BC=16` while the plan's calls were recorded. *kernels*: GPU µs "
             "of one `fused_apply` (the profiler's durations). *err*: relative L2 error "
             "against the float64 plan. Written by `benchmarks/signal_tile_size.py`.", "",
             "| call | replay | " + " | ".join(f"checked {v}" for v in names) + " | "
             + " | ".join(f"unchecked {v}" for v in names) + " | "
             + " | ".join(f"kernels {v}" for v in names) + " | "
             + " | ".join(f"err {v}" for v in names) + " |",
             "|---|---|" + "---|" * (4 * len(names))]
    for r in rows:
        k = r["kernels_us"]
        lines.append(
            f"| {r['call']} | {r['kinds']['default']} | "
            + " | ".join(f"{r['checked_us'][v]:.1f}" for v in names) + " | "
            + " | ".join(f"{r['unchecked_us'][v]:.1f}" for v in names) + " | "
            + " | ".join(f"{k.get(v, float('nan')):.1f}" for v in names) + " | "
            + " | ".join(f"{r['rel_err_vs_float64'][v]:.1e}" for v in names) + " |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
