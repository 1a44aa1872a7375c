"""Calibrate ``method="auto"`` of the Gaussian filters: where the direct FIR stops being faster
than the SFT.

For each dtype (float32, float64), order (0, 1, 2) and signal length N, σ climbs a geometric
grid (ratio √2 from 0.5) and both routes that ``method="auto"`` chooses between are timed on
one signal of N samples (median of several calls after a warm-up):

* the direct route of an ``"auto"`` plan (its kernel radius :func:`~fastmoments.signal.
  gaussian.auto_radius`; numba loops on the CPU, ``conv1d`` on a GPU);
* ``GaussianFilter(σ, method="sft")`` with ``engine="auto"``: whatever engine
  ``_apply.resolve_engine(..., "auto")`` gives on the device (and the folded kernel where the
  kernel is longer than the signal).

Each ``(N, dtype, order)`` is timed twice: on one signal (where the SFT's fixed cost per
call weighs most) and on a batch of ``max(1, 2^18 // N)`` signals (where it is amortised, as
along the axes of an image). The crossover σ* is the largest σ of the grid at which the direct
route was still the faster (half the first σ where the SFT always wins; the largest σ of the
grid where the FIR always wins). The scan stops after the SFT has won twice in a row.

Writes the table into ``src/fastmoments/signal/routes.py`` (entries of other devices
are kept) and the raw timings into ``benchmarks/results/signal_crossover_<device>.json``
and ``.md``. Rerun after a change of either engine:

    PYTHONPATH=src python benchmarks/signal_crossover.py            # CPU, ~2-4 min on 2 cores
    PYTHONPATH=src python benchmarks/signal_crossover.py --device cuda
    PYTHONPATH=src python benchmarks/signal_crossover.py --quick    # N up to 1e5, fewer calls
    PYTHONPATH=src python benchmarks/signal_crossover.py --from-json RUN.json  # a saved run
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "src", "fastmoments", "signal", "routes.py")
BEGIN, END = "# BEGIN MEASURED TABLE\n", "# END MEASURED TABLE\n"
RESULTS = os.path.join(ROOT, "benchmarks", "results")
BATCH = 1 << 18  # samples per call of the batch measurements


def timed(fn, device: str, budget_s: float, max_reps: int) -> float:
    """Median seconds of ``fn()`` after one warm-up, with as many calls as fit ``budget_s``."""
    fn()
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    one = time.perf_counter() - t0
    reps = int(max(3, min(max_reps, budget_s / max(one, 1e-7))))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def sigma_grid(top: float) -> list[float]:
    out, s = [], 0.5
    while s <= top * 1.0001:
        out.append(round(s, 6))
        s *= math.sqrt(2.0)
    return out


def write_table(dev: str, meta: dict, table: dict) -> None:
    """Rewrite the measured table of the package's route table (the block between
    :data:`BEGIN` and :data:`END` in ``signal/routes.py``) for device ``dev`` with ``table``,
    keeping the other devices' entries. ``table[(dev, dtype, order)]`` lists
    ``(N, σ*_one, σ*_batch)``."""
    with open(TABLE) as f:
        text = f.read()
    head, rest = text.split(BEGIN)
    block, tail = rest.split(END)
    ns: dict = {}
    exec(compile(block, TABLE, "exec"), ns)  # the committed table (plain literals)
    measured = dict(ns.get("MEASURED", {}))
    up_to = {k: v for k, v in ns.get("DIRECT_UP_TO", {}).items() if k[0] != dev}
    measured[dev] = meta
    up_to.update({k: tuple(v) for k, v in table.items()})
    entries = []
    for key in sorted(up_to):
        pts = "".join(f"        ({n}, {a:.6g}, {b:.6g}),\n" for n, a, b in up_to[key])
        entries.append(f"    {key!r}: (\n{pts}    ),\n")
    block = (f"BATCH = {BATCH}\n\n"
             "MEASURED: dict = {\n"
             + "".join(f"    {d!r}: {{\n" + "".join(f"        {k!r}: {v!r},\n"
                                                   for k, v in sorted(m.items())) + "    },\n"
                       for d, m in sorted(measured.items()))
             + "}\n\nDIRECT_UP_TO: dict = {\n" + "".join(entries) + "}\n")
    with open(TABLE, "w") as f:
        f.write(head + BEGIN + block + END + tail)
    print(f"wrote {TABLE}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--quick", action="store_true", help="N up to 1e5 and fewer calls")
    ap.add_argument("--no-write", action="store_true", help="do not rewrite the package table")
    ap.add_argument("--from-json", metavar="PATH",
                    help="write the package table from a saved run's JSON instead of timing")
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        meta = saved["meta"]
        dev = meta["device"]
        table = {}
        for key, pts in saved["table"].items():
            dt, order = key.split("/order")
            table[(dev, dt, int(order))] = [tuple(p) for p in pts]
        write_table(dev, meta, table)
        return

    from fastmoments._cuda_graph import GraphCache
    from fastmoments._progress import progress
    from fastmoments.signal import GaussianFilter
    from fastmoments.signal.gaussian_paths import _run_direct

    device = torch.device(args.device)
    dev = device.type
    lengths = [100, 1000, 10_000, 100_000] + ([] if args.quick else [1_000_000])
    budget = 0.05 if args.quick else 0.15
    grid = sigma_grid(512.0)
    rng = np.random.default_rng(0)
    rows, table = [], {}
    jobs = [(dt, order, n, b) for dt in ("float32", "float64") for order in (0, 1, 2)
            for n in lengths for b in sorted({1, max(1, BATCH // n)})]
    stars: dict = {}
    for dt, order, n, b in progress(jobs, desc="crossover", total=len(jobs), show=True):
        tdt = getattr(torch, dt)
        x = torch.as_tensor(rng.standard_normal((b, n)) if b > 1 else rng.standard_normal(n),
                            dtype=tdt, device=device)
        if dev == "cpu":
            x = x.numpy()  # the NumPy route is the one users time against scipy
        star, losses, wins_all = None, 0, True
        for s in grid:
            auto = GaussianFilter(s, order=order)
            sft = GaussianFilter(s, order=order, method="sft")

            def run_direct(t, auto=auto, check=True):
                return _run_direct(t, [-1], [auto], ["reflect"], cval=0.0, engine="auto",
                                   memory_budget=None, check_finite=check, out=None,
                                   progress=None)

            graphs = GraphCache()

            def direct(auto=auto, x=x, run_direct=run_direct, graphs=graphs):
                # on a GPU both routes replay a CUDA graph from the third call on, as the
                # public calls do (fastmoments._cuda_graph): the SFT plan's call by itself,
                # the direct route through a cache of its own
                hit = graphs.call(x, ("direct",),
                                  lambda t: run_direct(t, check=False), True, 8 * x.numel()) \
                    if dev == "cuda" else None
                return hit[0] if hit is not None else run_direct(x)

            t_d = timed(direct, dev, budget, 200)
            t_s = timed(lambda sft=sft, x=x: sft(x), dev, budget, 200)
            rows.append(dict(dtype=dt, order=order, n=n, batch=b, sigma=s, direct_s=t_d,
                             sft_s=t_s))
            if t_d <= t_s:
                star, losses = s, 0
            else:
                wins_all = False
                losses += 1
                if losses >= 2:
                    break
        if star is None:
            star = grid[0] / 2
        elif wins_all:
            star = grid[-1]
        stars[(dt, order, n, b > 1)] = float(star)
    for dt, order, n, b in jobs:
        if b == 1:
            pts = table.setdefault((dev, dt, order), [])
            pts.append((n, stars[(dt, order, n, False)],
                        stars.get((dt, order, n, True), stars[(dt, order, n, False)])))

    meta = dict(device=dev, name=(torch.cuda.get_device_name(device) if dev == "cuda"
                                  else platform.processor() or platform.machine()),
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                torch=torch.__version__, numpy=np.__version__, python=sys.version.split()[0],
                threads=torch.get_num_threads(), quick=bool(args.quick),
                load=os.getloadavg()[0] if hasattr(os, "getloadavg") else None)
    try:
        import numba

        meta["numba"] = numba.__version__
    except ImportError:  # pragma: no cover
        pass
    os.makedirs(RESULTS, exist_ok=True)
    base = os.path.join(RESULTS, f"signal_crossover_{dev}")
    with open(base + ".json", "w") as f:
        json.dump(dict(meta=meta, rows=rows,
                       table={f"{k[1]}/order{k[2]}": v for k, v in table.items()}), f, indent=1)
    lines = [f"# Crossover of method='auto' on {meta['name']} ({dev})", "",
             f"{meta['date']}, torch {meta['torch']}, {meta['threads']} threads, load "
             f"{meta['load']}; `python benchmarks/signal_crossover.py"
             f"{' --quick' if args.quick else ''} --device {args.device}`.", "",
             "Largest σ at which the direct FIR was faster than the SFT, on one signal / on "
             f"a batch of {BATCH} samples:", "",
             "| dtype | order | " + " | ".join(f"N={n:g}" for n in lengths) + " |",
             "|---|---|" + "---|" * len(lengths)]
    for (_, dt, order), pts in sorted(table.items()):
        lines.append(f"| {dt} | {order} | "
                     + " | ".join(f"{a:.3g} / {b:.3g}" for _, a, b in pts) + " |")
    lines += ["", "Timings (µs, median): σ, direct, sft", ""]
    for r in rows:
        lines.append(f"- {r['dtype']} order {r['order']} N={r['n']} batch={r['batch']} "
                     f"σ={r['sigma']:g}: {1e6 * r['direct_s']:.1f}, {1e6 * r['sft_s']:.1f}")
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")

    if args.no_write:
        return
    write_table(dev, meta, table)
    print(f"and {base}.json/.md")


if __name__ == "__main__":
    main()
