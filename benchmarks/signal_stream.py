"""Streaming Gaussian smoothing: a long signal in chunks equals the one-shot filter, at constant
memory.

For each method (``"direct"``, ``"sft"``) the signal (float32 white noise, ``--n`` samples,
default 10^8) is pushed through :meth:`fastmoments.signal.GaussianFilter.stream` in chunks
of ``--chunk`` samples (default 10^6) into a preallocated output; then the one-shot
``gaussian_filter1d`` of the whole signal is computed and compared (both after a
warm-up). Memory: the largest number of samples the stream carried between pushes
(``GaussianStream.carried``), and the growth of the process's peak RSS during the streaming
pass (the input and output arrays are allocated before it).
Writes ``results/signal_stream.json`` and ``.md``.
Run: ``OMP_NUM_THREADS=1 python benchmarks/signal_stream.py [--n N] [--note TEXT]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np
import torch

import fastmoments
from fastmoments import gaussian_filter1d
from fastmoments.signal import GaussianFilter, GaussianStream

OUT = Path(__file__).parent / "results"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _stream(x: np.ndarray, out: np.ndarray, stream: GaussianStream, chunk: int) -> dict:
    held, pos_out = 0, 0
    rss0 = _peak_rss_mb()
    t0 = time.perf_counter()
    for a in range(0, len(x), chunk):
        y = stream.push(x[a:a + chunk])
        out[pos_out:pos_out + len(y)] = y
        pos_out += len(y)
        held = max(held, stream.carried)
    y = stream.flush()
    out[pos_out:pos_out + len(y)] = y
    seconds = time.perf_counter() - t0
    return {"stream_s": seconds, "max_carried_samples": held,
            "peak_rss_growth_mb": _peak_rss_mb() - rss0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=float, default=1e8)
    ap.add_argument("--chunk", type=float, default=1e6)
    ap.add_argument("--sigma", type=float, default=50.0)
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    n, chunk = int(args.n), int(args.chunk)
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    outs = {m: np.empty_like(x) for m in ("direct", "sft")}
    for o in outs.values():
        o[:] = 0.0  # touch the pages before the measurement
    rows = []
    for method, out in outs.items():  # every streaming pass before any one-shot result
        stream = GaussianFilter(args.sigma, method=method).stream()
        for a in range(0, 3 * chunk, chunk):  # warm-up: first-call costs (numba, plans)
            stream.push(x[a:a + chunk])
        stream.flush()
        gaussian_filter1d(x[:chunk], args.sigma, method=method)
        rows.append({"method": method, "delay": stream.delay,
                     **_stream(x, out, stream, chunk)})
    for row, out in zip(rows, outs.values(), strict=True):
        t0 = time.perf_counter()
        ref = gaussian_filter1d(x, args.sigma, method=row["method"])
        row["one_shot_s"] = time.perf_counter() - t0
        row["max_abs_diff"] = float(np.max(np.abs(out - ref)))
        row["max_abs_ref"] = float(np.max(np.abs(ref)))
        del ref
        print(row, flush=True)
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "threads": torch.get_num_threads(), "n": n, "chunk": chunk, "sigma": args.sigma,
        "dtype": "float32", "fastmoments": fastmoments.__version__,
        "torch": torch.__version__, "numpy": np.__version__, "note": args.note,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "signal_stream.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    lines = [
        "# Streaming Gaussian smoothing (`GaussianStream`) against the one-shot filter",
        "",
        f"{n:.0e} float32 samples in chunks of {chunk:.0e}, σ = {args.sigma:g}, order 0, "
        "reflect. *carried*: the most samples the stream held between pushes; *RSS growth*: "
        "the peak resident memory added during the streaming pass (input and output were "
        "allocated before).",
        "",
        f"Run: {info['date']}, {info['machine']}, {info['threads']} torch thread(s), "
        f"fastmoments {info['fastmoments']}, torch {info['torch']}. {args.note}",
        "",
        "| method | delay | carried | RSS growth MB | stream s | one-shot s | max abs diff "
        "| max abs output |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['method']} | {r['delay']} | {r['max_carried_samples']} | "
                     f"{r['peak_rss_growth_mb']:.0f} | {r['stream_s']:.1f} | "
                     f"{r['one_shot_s']:.1f} | {r['max_abs_diff']:.1e} | "
                     f"{r['max_abs_ref']:.2f} |")
    (OUT / "signal_stream.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
