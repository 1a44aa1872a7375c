"""Per-call time of the public signal calls on one GPU signal, against cupyx.

What a user sees in a loop over signals: each call as written (``gaussian_filter1d(x, σ)``,
``plan(x)``, ``morlet_transform``, a 64-scale ``cwt``), its result ready (a synchronisation
after every call), on one signal of ``N`` samples already on the GPU. Each fastmoments call
is timed with the replayed CUDA graphs on (the default; :mod:`fastmoments._cuda_graph`) and
off (``FASTMOMENTS_CUDA_GRAPHS=0``: the eager path), and
``cupyx.scipy.ndimage.gaussian_filter1d`` in the same run. Median of ``--calls`` timed calls
per row, in :data:`ROUNDS` alternating rounds with the other rows of its group (the two
spellings and cupyx at :data:`GROUP_SIGMAS` σ and every order; the Morlet transform with the
CWT), each round after 5 warm-up calls (the graphs are captured on the third): the host's
slow spells, which last seconds and can make one row 10-20 µs slower than its neighbour in a
sequential run, fall on the rows of a group alike. Correctness: each result against the eager
one (the replayed kernels are the eager ones: 0 expected) and against a float64 reference by
FFT.

Run on a CUDA machine::

    PYTHONPATH=src python benchmarks/signal_latency.py            # ~4 minutes on an H100

Writes ``benchmarks/results/signal_latency.json`` and ``.md`` (``--out`` changes the stem).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
RESULTS = Path(__file__).resolve().parent / "results"

SIGMAS = [0.5, 1.0, 2.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 8192.0]


#: Alternating rounds per mode: each row's calls are timed in this many blocks, the rows of a
#: group taking turns.
ROUNDS = 4
#: σ per group (three orders, two spellings and cupyx each): the one-call function's cache
#: holds 16 keys, so a group's 3 σ × 3 orders stay replayed between their turns.
GROUP_SIGMAS = 3


def samples(fn, calls: int, sync) -> list[float]:
    """Seconds of ``fn(); sync()`` for each of ``calls`` calls, after 5 warm-up calls."""
    for _ in range(5):
        fn()
    sync()
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return ts


def per_call(fn, calls: int, sync) -> float:
    """Median seconds of ``fn(); sync()`` over ``calls`` calls after 5 warm-up calls."""
    return statistics.median(samples(fn, calls, sync))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=102400)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "signal_latency"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("signal_latency.py needs a CUDA GPU")
    import cupy
    from cupyx.scipy import ndimage as cndi

    import fastmoments as fm
    from fastmoments import _cuda_graph as fg
    from fastmoments.signal import GaussianFilter
    from signal_scipy_grid import exact

    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False

    def sync():
        torch.cuda.synchronize()

    sigmas = [1.0, 16.0, 1024.0] if args.quick else SIGMAS
    orders = [0] if args.quick else [0, 1, 2]
    calls = 40 if args.quick else args.calls
    rng = np.random.default_rng(0)
    x64 = rng.standard_normal(args.n)
    rows = []

    modes = (("eager_us", {fg.ENV: "0"}), ("graphs_us", {fg.ENV: "1"}))
    peer_sync = cupy.cuda.Device().synchronize

    def run_group(group: list[dict]) -> None:
        """Time a group of rows (``make``: a zero-argument call; ``peer``: cupyx's, timed with
        the default only) mode by mode, the rows of a mode in ``ROUNDS`` alternating rounds,
        so that the host's slow spells fall on every row of the group alike; then check each
        of ours against its eager result and the float64 reference ``ref``."""
        per = max(1, calls // ROUNDS)
        results: list[dict] = [{} for _ in group]
        for mode, env in modes:
            os.environ.update(env)
            fg.clear_all()
            ts: list[list[float]] = [[] for _ in group]
            for _ in range(ROUNDS):
                for i, g in enumerate(group):
                    if g["peer"] and mode != "graphs_us":
                        continue
                    ts[i] += samples(g["make"], per, peer_sync if g["peer"] else sync)
            for i, g in enumerate(group):
                if ts[i]:
                    g[mode] = 1e6 * statistics.median(ts[i])
                if not g["peer"]:
                    results[i][mode] = g["make"]()  # (a cache of the group's size keeps it)
        for g, res in zip(group, results, strict=True):
            if g["peer"]:
                y = cupy.asnumpy(g["make"]()).astype(np.float64)
                err = float(np.linalg.norm(y - g["ref"]) / np.linalg.norm(g["ref"]))
                rows.append(dict(call=g["name"], **g["fields"], peer_us=g["graphs_us"],
                                 rel_err_vs_f64=err))
                print(rows[-1], flush=True)
                continue
            eager_y, y = res["eager_us"], res["graphs_us"]
            g["graphs_only_us"] = g["graphs_us"]  # (one replay mechanism: CUDA graphs)
            diff = float((y - eager_y).abs().max())
            fg.clear_all()  # what the default replays, this row alone
            for _ in range(5):
                g["make"]()
            kinds = ["graph"] if any(len(c) for c in list(fg._CACHES)) else []
            err = None
            if g["ref"] is not None:
                yy = y.detach().double().cpu().numpy() if not y.is_complex() else \
                    y.detach().cpu().numpy().astype(np.complex128)
                err = float(np.linalg.norm(yy - g["ref"]) / np.linalg.norm(g["ref"]))
            rows.append(dict(call=g["name"], **g["fields"], graphs_us=g["graphs_us"],
                             graphs_only_us=g["graphs_only_us"], eager_us=g["eager_us"],
                             replay=",".join(kinds), replay_vs_eager_max_diff=diff,
                             rel_err_vs_f64=err))
            print(rows[-1], flush=True)

    def row(name, make, ref, peer=False, **fields):
        return dict(name=name, make=make, ref=ref, peer=peer, fields=fields)

    floors: dict[str, list[float]] = {}

    def floor(x):
        """torch's own one-kernel pass on the signal (``torch.neg``), timed the same way."""
        floors.setdefault(str(x.dtype).removeprefix("torch."), []).append(
            1e6 * per_call(lambda: torch.neg(x), calls, sync))

    for dt in ("float32", "float64"):
        x = torch.as_tensor(x64, dtype=getattr(torch, dt), device=dev)
        xc = cupy.asarray(x64.astype(dt))
        floor(x)
        for first in range(0, len(sigmas), GROUP_SIGMAS):
            group = []
            for s in sigmas[first:first + GROUP_SIGMAS]:
                for o in orders:
                    # the exact convolution (untruncated kernel, by FFT, float64); for order 2
                    # each library against its own kernel: ours sums to zero, scipy's does not
                    ref = exact(x64, s, o)
                    ref_peer = ref if o != 2 else exact(x64, s, o, zero_sum=False)
                    plan = GaussianFilter(s, order=o)
                    group += [
                        row("gaussian_filter1d",
                            lambda x=x, s=s, o=o: fm.gaussian_filter1d(x, s, order=o), ref,
                            dtype=dt, sigma=s, order=o),
                        row("GaussianFilter plan", lambda plan=plan, x=x: plan(x), ref,
                            dtype=dt, sigma=s, order=o, method=plan.method),
                        row("cupyx gaussian_filter1d",
                            lambda xc=xc, s=s, o=o: cndi.gaussian_filter1d(xc, s, order=o),
                            ref_peer, peer=True, dtype=dt, sigma=s, order=o)]
            run_group(group)
        scales = np.geomspace(2.0, 1024.0, 64)  # as benchmarks/signal_gpu.py
        run_group([row("morlet_transform", lambda x=x: fm.morlet_transform(x, 64.0), None,
                       dtype=dt, sigma=64.0),
                   row("cwt, 64 scales", lambda x=x, scales=scales: fm.cwt(x, scales)[0], None,
                       dtype=dt, scales="geomspace(2, 1024, 64)")])
        floor(x)

    from fastmoments.signal import gaussian_calls as fg_gauss

    failures = {str(k): v for k, v in fg_gauss._GRAPHS.failures.items()}
    meta = dict(device=torch.cuda.get_device_name(dev), n=args.n, calls=calls,
                capture_failures=failures, floor_us=floors, rounds=ROUNDS,
                group_sigmas=GROUP_SIGMAS,
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                torch=torch.__version__, cupy=cupy.__version__, numpy=np.__version__,
                python=sys.version.split()[0], quick=bool(args.quick),
                command="python benchmarks/signal_latency.py " + " ".join(sys.argv[1:]))
    try:
        import triton

        meta["triton"] = triton.__version__
    except ImportError:  # pragma: no cover
        pass
    Path(args.out + ".json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    write_md(Path(args.out + ".md"), meta, rows)
    print(Path(args.out + ".md").read_text())


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:.2e}"


def write_md(path: Path, meta: dict, rows: list[dict]) -> None:
    peer = {(r["dtype"], r["sigma"], r["order"]): r["peer_us"] for r in rows
            if r["call"].startswith("cupyx")}
    lines = [f"# Per-call time of the public signal calls ({meta['device']})", "",
             f"{meta['date']}; torch {meta['torch']}, cupy {meta['cupy']}"
             f"{', triton ' + meta['triton'] if 'triton' in meta else ''}; one signal of "
             f"{meta['n']} samples on the GPU; median of {meta['calls']} calls, each followed by "
             "a synchronisation (the result ready)"
             + (f", in {meta['rounds']} alternating rounds with the other rows of its group "
                f"({meta['group_sigmas']} σ, all orders, both spellings and cupyx), each after "
                "5 warm-up calls" if meta.get("rounds") else ", after 5 warm-up calls")
             + ". *default*: "
             "repeated calls replay a CUDA graph captured inside the plan (*replay* = graph); "
             "*graphs only*: the same (one mechanism); *eager*: `FASTMOMENTS_CUDA_GRAPHS=0`. "
             "*vs cupyx*: cupyx time / ours by default (> 1: we "
             "are faster); *replay = eager*: both replays bit-exact against the eager call. "
             "Errors: relative L2 against the exact convolution (untruncated "
             "kernel, float64, by FFT; for order 2 each library against its own kernel: ours "
             "sums to zero, scipy's/cupyx's does not). Written by "
             "`benchmarks/signal_latency.py`.", ""]
    if meta.get("floor_us"):
        lines += ["*The host's floor*: torch's own one-kernel pass on the same signal "
                  "(`torch.neg`), timed the same way before and after each dtype's rows: "
                  + "; ".join(f"{dt} {' and '.join(f'{v:.1f}' for v in vs)} µs"
                              for dt, vs in meta["floor_us"].items())
                  + " (one launch and the wait for it: no GPU call takes less on this host; "
                  "*default − floor*: a row's time above the mean floor of its dtype, which "
                  "varies less from machine to machine than the time itself).",
                  ""]
    floor = {dt: statistics.mean(v) for dt, v in meta.get("floor_us", {}).items() if v}
    for dt in ("float32", "float64"):
        mine = [r["graphs_us"] for r in rows if r["dtype"] == dt and "graphs_us" in r
                and r["call"] in ("gaussian_filter1d", "GaussianFilter plan", "morlet_transform")]
        if mine:
            above = (f", {statistics.median(mine) - floor[dt]:.1f} µs above the floor"
                     if dt in floor else "")
            lines.append(f"{dt}: {sum(t <= 40.0 for t in mine)} of {len(mine)} single-signal "
                         "calls (the Gaussian filters and the Morlet transform) at ≤ 40 µs by "
                         f"default, median {statistics.median(mine):.1f} µs{above}.")
            lines.append("")
    lines += [
             "| call | dtype | σ | order | replay | default µs | default − floor µs | "
             "graphs only µs | eager µs | cupyx µs | vs cupyx | replay = eager | rel. err | "
             "cupyx rel. err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    perr = {(r["dtype"], r["sigma"], r["order"]): r["rel_err_vs_f64"] for r in rows
            if r["call"].startswith("cupyx")}
    for r in rows:
        if r["call"].startswith("cupyx"):
            continue
        key = (r["dtype"], r.get("sigma"), r.get("order"))
        p = peer.get(key)
        vs = "" if p is None else f"{p / r['graphs_us']:.2f}"
        lines.append(
            f"| {r['call']} | {r['dtype']} | {r.get('sigma', r.get('scales', ''))} | "
            f"{r.get('order', '')} | {r.get('replay', '')} | {r['graphs_us']:.1f} | "
            + (f"{r['graphs_us'] - floor[r['dtype']]:.1f}" if r["dtype"] in floor else "")
            + f" | {r['graphs_only_us']:.1f} | {r['eager_us']:.1f} | "
            f"{'' if p is None else f'{p:.1f}'} | "
            f"{vs} | "
            f"{'yes' if r['replay_vs_eager_max_diff'] == 0 else r['replay_vs_eager_max_diff']}"
            f" | {_fmt(r['rel_err_vs_f64'])} | {_fmt(perr.get(key))} |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
