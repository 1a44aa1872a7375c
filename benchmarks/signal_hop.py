"""A decimated scalogram: ``cwt(..., hop=16)`` against the full ``cwt`` (``hop=1``),
time and peak memory.

Each case runs in a fresh process (the peak resident memory of a process only grows), on
``--n`` float64 samples of white noise (default 2^20) at 32 Morlet scales from 2 to 1024,
both with the chunked engine (``engine="auto"`` loads the numba kernels in a background
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


def _case(n: int, hop: int) -> dict:
    import torch

    from fastmoments.signal import cwt

    scales = np.geomspace(2.0, 1024.0, 32)
    x = np.random.default_rng(0).standard_normal(n)
    eng = {"engine": "chunked"}  # one engine for both (the numba engine loads its kernels
    cwt(x[:65536], scales, **eng)  # in a background thread: memory of its own); plans built
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    t0 = time.perf_counter()
    c = cwt(x, scales, hop=hop, **eng)[0]
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0 - rss0
    row = {"hop": hop, "seconds": seconds, "peak_rss_growth_mb": peak,
           "result_mb": c.nbytes / 2**20, "threads": torch.get_num_threads()}
    if hop > 1:
        full = cwt(x, scales, **eng)[0]
        row["max_abs_diff"] = float(np.max(np.abs(c - full[..., ::hop])))
        row["max_abs"] = float(np.max(np.abs(full)))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2**20)
    ap.add_argument("--note", default="")
    ap.add_argument("--case", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        print(json.dumps(_case(args.n, args.case)))
        return
    rows = []
    for hop in (1, 16):
        done = subprocess.run([sys.executable, __file__, "--n", str(args.n), "--case", str(hop)],
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
        "# Decimated scalogram: `cwt(hop=16)` against `cwt` (hop = 1)",
        "",
        f"{args.n} float64 samples, 32 Morlet scales geomspace(2, 1024); each case in a fresh "
        "process; *peak RSS growth*: the resident memory added by the call.",
        "",
        f"Run: {info['date']}, {info['machine']}, {info['threads']} torch thread(s), "
        f"fastmoments {info['fastmoments']}, torch {info['torch']}. {args.note}",
        "",
        "| hop | s | peak RSS growth MB | result MB | max abs diff to cwt[..., ::hop] |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        diff = f"{r['max_abs_diff']:.1e} (of {r['max_abs']:.1f})" if "max_abs_diff" in r else "-"
        lines.append(f"| {r['hop']} | {r['seconds']:.2f} | {r['peak_rss_growth_mb']:.0f} | "
                     f"{r['result_mb']:.0f} | {diff} |")
    (OUT / "signal_hop.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
