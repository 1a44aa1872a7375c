"""Per-call time of the public signal calls on one GPU signal, against cupyx (issue 16).

What a user sees in a loop over signals: each call as written (``gaussian_filter1d(x, σ)``,
``plan(x)``, ``morlet_transform``, a 64-scale ``cwt``), its result ready (a synchronisation
after every call), on one signal of ``N`` samples already on the GPU. Each fastmoments call
is timed with the replayed CUDA graphs on (the default; :mod:`fastmoments.signal.graphs`) and
off (``FASTMOMENTS_CUDA_GRAPHS=0``: the eager path), and
``cupyx.scipy.ndimage.gaussian_filter1d`` in the same run. Median of ``--calls`` timed calls
after 5 warm-up calls (the graphs are captured on the third). Correctness: each result against
the eager one (the replayed kernels are the eager ones: 0 expected) and against a float64
reference by FFT.

Run on a CUDA machine::

    PYTHONPATH=src python benchmarks/signal_latency.py            # ~1 minute on an H100

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


def per_call(fn, calls: int, sync) -> float:
    """Median seconds of ``fn(); sync()`` over ``calls`` calls after 5 warm-up calls."""
    for _ in range(5):
        fn()
    sync()
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


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
    from fastmoments.signal import GaussianFilter
    from fastmoments.signal import graphs as fg
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

    def both(name: str, make, ref=None, **fields):
        """Time ``make()`` (a zero-argument call) eagerly, with CUDA graphs only, and with
        the default (recorded launches where the call allows, else graphs); errors vs eager
        and vs the float64 reference ``ref``."""
        os.environ[fg.ENV] = "0"
        eager_y = make()
        t_off = per_call(make, calls, sync)
        os.environ[fg.ENV] = "1"
        os.environ[fg.LAUNCHES_ENV] = "0"
        fg.clear_all()
        t_graph = per_call(make, calls, sync)
        y_graph = make()
        os.environ[fg.LAUNCHES_ENV] = "1"
        fg.clear_all()
        t_on = per_call(make, calls, sync)
        kinds = sorted({k for c in list(fg._CACHES) for k in c.kinds()})
        y = make()
        diff = float((y - eager_y).abs().max()) if isinstance(y, torch.Tensor) else None
        diff_graph = float((y_graph - eager_y).abs().max())
        err = None
        if ref is not None:
            yy = y.detach().double().cpu().numpy() if not y.is_complex() else \
                y.detach().cpu().numpy().astype(np.complex128)
            err = float(np.linalg.norm(yy - ref) / np.linalg.norm(ref))
        rows.append(dict(call=name, **fields, graphs_us=1e6 * t_on, graphs_only_us=1e6 * t_graph,
                         eager_us=1e6 * t_off, replay=",".join(kinds),
                         replay_vs_eager_max_diff=max(diff, diff_graph), rel_err_vs_f64=err))
        print(rows[-1], flush=True)

    floors: dict[str, list[float]] = {}

    def floor(x):
        """torch's own one-kernel pass on the signal (``torch.neg``), timed the same way."""
        floors.setdefault(str(x.dtype).removeprefix("torch."), []).append(
            1e6 * per_call(lambda: torch.neg(x), calls, sync))

    for dt in ("float32", "float64"):
        x = torch.as_tensor(x64, dtype=getattr(torch, dt), device=dev)
        xc = cupy.asarray(x64.astype(dt))
        floor(x)
        for s in sigmas:
            for o in orders:
                # the exact convolution (untruncated kernel, by FFT, float64); for order 2 each
                # library against its own kernel: fastmoments' sums to zero, scipy's does not
                ref = exact(x64, s, o)
                ref_peer = ref if o != 2 else exact(x64, s, o, zero_sum=False)
                both("gaussian_filter1d", lambda x=x, s=s, o=o: fm.gaussian_filter1d(x, s,
                                                                                      order=o),
                     ref, dtype=dt, sigma=s, order=o)
                plan = GaussianFilter(s, order=o)
                both("GaussianFilter plan", lambda plan=plan, x=x: plan(x), ref, dtype=dt,
                     sigma=s, order=o, method=plan.method)
                t_cp = per_call(lambda xc=xc, s=s, o=o: cndi.gaussian_filter1d(xc, s, order=o),
                                calls, lambda: cupy.cuda.Device().synchronize())
                y_cp = cupy.asnumpy(cndi.gaussian_filter1d(xc, s, order=o)).astype(np.float64)
                err_cp = float(np.linalg.norm(y_cp - ref_peer) / np.linalg.norm(ref_peer))
                rows.append(dict(call="cupyx gaussian_filter1d", dtype=dt, sigma=s, order=o,
                                 peer_us=1e6 * t_cp, rel_err_vs_f64=err_cp))
                print(rows[-1], flush=True)
        both("morlet_transform", lambda x=x: fm.morlet_transform(x, 64.0), None, dtype=dt,
             sigma=64.0)
        scales = np.geomspace(2.0, 1024.0, 64)  # as benchmarks/signal_gpu.py
        both("cwt, 64 scales", lambda x=x, scales=scales: fm.cwt(x, scales)[0], None, dtype=dt,
             scales="geomspace(2, 1024, 64)")
        floor(x)

    from fastmoments.signal import gaussian as fg_gauss

    failures = {str(k): v for k, v in fg_gauss._GRAPHS.failures.items()}
    meta = dict(device=torch.cuda.get_device_name(dev), n=args.n, calls=calls,
                capture_failures=failures, floor_us=floors,
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
             "a synchronisation (the result ready), after 5 warm-up calls. *default*: "
             "repeated calls replay their recorded Triton launches where the call is nothing "
             "else (*replay* = launches), else a CUDA graph captured inside the plan; *graphs "
             "only*: `FASTMOMENTS_LAUNCH_REPLAY=0`; *eager*: `FASTMOMENTS_CUDA_GRAPHS=0`. "
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
                  + " (one launch and the wait for it: no GPU call takes less on this host).",
                  ""]
    for dt in ("float32", "float64"):
        mine = [r["graphs_us"] for r in rows if r["dtype"] == dt and "graphs_us" in r
                and r["call"] in ("gaussian_filter1d", "GaussianFilter plan", "morlet_transform")]
        if mine:
            lines.append(f"{dt}: {sum(t <= 40.0 for t in mine)} of {len(mine)} single-signal "
                         "calls (the Gaussian filters and the Morlet transform) at ≤ 40 µs by "
                         f"default, median {statistics.median(mine):.1f} µs.")
            lines.append("")
    lines += [
             "| call | dtype | σ | order | replay | default µs | graphs only µs | eager µs | "
             "cupyx µs | vs cupyx | replay = eager | rel. err | cupyx rel. err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
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
            f"{r['graphs_only_us']:.1f} | {r['eager_us']:.1f} | "
            f"{'' if p is None else f'{p:.1f}'} | "
            f"{vs} | "
            f"{'yes' if r['replay_vs_eager_max_diff'] == 0 else r['replay_vs_eager_max_diff']}"
            f" | {_fmt(r['rel_err_vs_f64'])} | {_fmt(perr.get(key))} |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
