"""A decimated scalogram: ``cwt(..., hop=16)`` and ``hop=64`` against the full ``cwt``
(``hop=1``), time and peak memory, for the Morlet (the prefix-sum route that computes only
the kept samples) and a generalized Morse wavelet (folded inverse FFTs).

Each case runs in a fresh process (the peak resident memory of a process only grows), on
``--n`` float64 samples of white noise (default 2^20) at 32 scales from 2 to 1024, the
Morlet with the chunked engine (``engine="auto"`` loads the numba kernels in a background
thread on a large call, whose memory would blur the comparison).
The peak RSS growth is measured from just before the call; the accuracy column is the largest
difference between the decimated result and every 16th coefficient of the full transform
(computed afterwards in the ``hop=16`` process). Writes ``results/signal_hop.json`` and ``.md``.
Run: ``OMP_NUM_THREADS=1 python benchmarks/signal_hop.py [--note TEXT]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "results"


def _case(n: int, hop: int, wavelet: str) -> dict:
    import torch

    from fastmoments.signal import CWT, GeneralizedMorse, Morlet

    scales = np.geomspace(2.0, 1024.0, 32)
    x = np.random.default_rng(0).standard_normal(n)
    morse = wavelet == "morse"
    plan = CWT(scales, GeneralizedMorse() if morse else Morlet())
    eng = {} if morse else {"engine": "chunked"}  # one engine for all (the numba engine
    plan(x[:65536], hop=hop, **eng)  # loads its kernels in a background thread); plans built
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    t0 = time.perf_counter()
    c = plan(x, hop=hop, **eng)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0 - rss0
    row = {"wavelet": wavelet, "hop": hop, "seconds": seconds, "peak_rss_growth_mb": peak,
           "result_mb": c.nbytes / 2**20, "threads": torch.get_num_threads(),
           "route": str(plan.route)}
    if hop > 1:
        full = plan(x, **eng)
        row["max_abs_diff"] = float(np.max(np.abs(c - full[..., ::hop])))
        row["max_abs"] = float(np.max(np.abs(full)))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2**20)
    ap.add_argument("--note", default="")
    ap.add_argument("--case", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--wavelet", default="morlet", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        print(json.dumps(_case(args.n, args.case, args.wavelet)))
        return
    rows = []
    for wavelet, hop in [(w, h) for w in ("morlet", "morse") for h in (1, 16, 64)]:
        done = subprocess.run([sys.executable, __file__, "--n", str(args.n), "--case", str(hop),
                               "--wavelet", wavelet],
                              capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    import torch

    import fastmoments
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "threads": rows[0]["threads"], "n": args.n, "scales": "geomspace(2, 1024, 32)",
        "fastmoments": fastmoments.__version__, "torch": torch.__version__,
        "note": args.note,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "signal_hop.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    lines = [
        "# Decimated scalogram: `cwt(hop=h)` against `cwt` (hop = 1)",
        "",
        f"{args.n} float64 samples, 32 scales geomspace(2, 1024) of the Morlet (ξ = 6) and "
        "of GeneralizedMorse(20, 3); each case in a fresh process; *peak RSS growth*: the "
        "resident memory added by the call; *route*: `plan.route` (Morlet `prefix`: only the "
        "kept samples computed, from prefix sums over segments of h samples; Morse `fft`: "
        "the inverse FFTs folded to N/h points).",
        "",
        f"Run: {info['date']}, {info['machine']}, {info['threads']} torch thread(s), "
        f"fastmoments {info['fastmoments']}, torch {info['torch']}. {args.note}",
        "",
        "| wavelet | hop | route | s | time / hop 1 | peak RSS growth MB | result MB "
        "| max abs diff to cwt[..., ::hop] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        diff = f"{r['max_abs_diff']:.1e} (of {r['max_abs']:.1f})" if "max_abs_diff" in r else "-"
        base = next(b for b in rows if b["wavelet"] == r["wavelet"] and b["hop"] == 1)
        lines.append(f"| {r['wavelet']} | {r['hop']} | {r['route']} | {r['seconds']:.2f} | "
                     f"{r['seconds'] / base['seconds']:.2f} | {r['peak_rss_growth_mb']:.0f} | "
                     f"{r['result_mb']:.0f} | {diff} |")
    (OUT / "signal_hop.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
