"""CPU benchmark of the numba engine: the 64-scale Morlet CWT against fCWT, and
Gaussian smoothing against scipy.ndimage.gaussian_filter1d and the chunked engine.

1. The 64-scale Morlet CWT (ξ = 6, scales log-spaced 2-1024) of N = 102400 float32 samples on
   ONE thread, writing into a preallocated output (``out=``, as fCWT writes into its own
   array): engines ``"numba"`` (the SIMD kernels of ``fastmoments.signal._numba_cwt``),
   ``"auto"`` (which picks them once loaded) and ``"chunked"`` (torch), and fCWT (``pip
   install fCWT``, which needs ``libfftw3-single3``) with its default plans and with
   FFTW_MEASURE plans (their one-off planning time is recorded, not timed). Accuracy:
   relative error of |W| against the exact float64 convolution with the Morlet wavelet
   truncated at 10σ, after one least-squares real factor per scale, on the interior (as in
   ``benchmarks/signal_cpu.py``); median over scales.
2. Gaussian smoothing, order 0, float64, mode reflect, through the public plan call: N ∈
   {1e3, 1e4, 1e5, 1e6} × σ ∈ {4, 32, 256, 8192} on one thread (engines ``"numba"``,
   ``"chunked"`` and scipy), and the target row (N = 102400, σ = 8192) on ``--threads`` too.
   Signals shorter than the kernel go through the folded path, the same for every engine
   (marked "folded"). Accuracy: relative error against the exact float64 convolution with
   the discrete Gaussian truncated at 10σ.

Timings are medians (min-max) of repeated calls after a warm-up (the CWT implementations
round-robin, one call each per round, so that a shared machine's varying load moves them
alike); the 1-minute load average is recorded at the start and the end: run on a quiet
machine.

Usage: ``PYTHONPATH=src python benchmarks/signal_numba.py [--threads 2]`` (about 2-3 min on
2 cores). Writes ``benchmarks/results/signal_numba.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import tempfile
import time

import numpy as np

from disk_common import cpu_name


def timer(fn, repeat: int = 5, warmup: int = 1) -> tuple[float, float, float]:
    """Median, min and max wall time of ``fn()`` in ms."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(ts), min(ts), max(ts)


ROUNDS = 15  # round-robin rounds of the CWT timings


def magnitude_error(w: np.ndarray, ref: np.ndarray) -> float:
    """Median over scales of the relative error of |w| against |ref| after the best real
    factor, on the interior (10 σ_max = 10240 samples from each end)."""
    inner = slice(10240, w.shape[-1] - 10240)
    errs = []
    for a, b in zip(np.abs(w[..., inner]), np.abs(ref[..., inner]), strict=True):
        c = float(np.dot(a, b) / max(np.dot(a, a), 1e-300))
        errs.append(float(np.linalg.norm(c * a - b) / np.linalg.norm(b)))
    return float(np.median(errs))


def cwt_section(env: dict, rows: list) -> None:
    import torch
    from scipy.signal import fftconvolve

    from fastmoments.signal import CWT, Morlet
    from fastmoments.signal.coefficients import morlet_kernel

    n, xi = 102400, 6.0
    scales = np.geomspace(2.0, 1024.0, 64)
    x = np.random.default_rng(0).standard_normal(n)
    x32 = x.astype(np.float32)
    ref = np.stack([
        fftconvolve(np.pad(x32.astype(np.float64), math.ceil(10 * s), mode="symmetric"),
                    morlet_kernel(np.arange(-math.ceil(10 * s), math.ceil(10 * s) + 1), s, xi),
                    mode="valid") for s in scales])
    torch.set_num_threads(1)
    plan = CWT(scales, Morlet(xi))
    impls = []  # (name, call, output, extra fields), timed round-robin below
    for engine in ("numba", "auto", "chunked"):
        buf = plan(x32, engine=engine, progress=False)
        impls.append((f"fastmoments engine={engine}, out=",
                      lambda e=engine, b=buf: plan(x32, engine=e, out=b, progress=False),
                      lambda b=buf: b, {}))
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as wisdom:  # FFTW wisdom files land in the cwd
        os.chdir(wisdom)
        try:
            try:
                import fcwt

                from signal_common import fcwt_plan
            except ImportError as exc:
                env["fCWT"] = f"not installed: {exc}"
                fcwt = None
            if fcwt is not None:
                try:
                    from importlib.metadata import version

                    env["fCWT"] = version("fCWT")
                except Exception:  # a build without metadata
                    env["fCWT"] = getattr(fcwt, "__version__", "installed")
                f0, f1 = xi / (2 * np.pi * scales[-1]), xi / (2 * np.pi * scales[0])
                for plans in (False, True):
                    obj, sc, morl, plan_s = fcwt_plan(fcwt, xi, scales, n, 1, f0, f1, 1,
                                                       plans)
                    out = np.zeros((len(scales), n), dtype=np.complex64)
                    obj.cwt(x32, sc, out)
                    freqs = np.zeros(len(scales), dtype=np.float32)
                    sc.getFrequencies(freqs)
                    order = np.argsort(-freqs)  # highest frequency (smallest scale) first
                    impls.append(("fCWT, FFTW_MEASURE plans" if plans else "fCWT, default plans",
                                  # the wavelet is kept alive with the plan (fCWT holds a
                                  # pointer to it)
                                  lambda o=obj, s=sc, b=out, w=morl: o.cwt(x32, s, b),
                                  lambda b=out, k=order: b[k].astype(np.complex128),
                                  dict(plan_build_s=plan_s)))
            # round robin: every implementation once per round, so that all of them see the
            # same state of a shared machine (load from elsewhere moves all alike)
            times = {name: [] for name, *_ in impls}
            for _, call, _, _ in impls:
                call()  # warm-up
            for _ in range(ROUNDS):
                for name, call, _, _ in impls:
                    t0 = time.perf_counter()
                    call()
                    times[name].append(1e3 * (time.perf_counter() - t0))
        finally:
            os.chdir(here)
    env["cwt_rounds"] = ROUNDS
    for name, _, result, extra in impls:
        ts = times[name]
        row = dict(section="cwt", impl=name, threads=1, dtype="float32",
                   ms=statistics.median(ts), ms_min=min(ts), ms_max=max(ts),
                   mag_err=magnitude_error(result(), ref), times_ms=ts, **extra)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "times_ms"}), flush=True)


def gaussian_section(threads: int, rows: list) -> None:
    import torch
    from scipy.ndimage import gaussian_filter1d
    from scipy.signal import fftconvolve

    from fastmoments.signal import GaussianFilter
    from fastmoments.signal.coefficients import gaussian_kernel

    rng = np.random.default_rng(1)
    cases = [(m, s, 1) for m in (1000, 10_000, 100_000, 1_000_000)
             for s in (4.0, 32.0, 256.0, 8192.0)]
    cases += [(102_400, 8192.0, 1), (102_400, 8192.0, threads)]
    for m, sigma, nth in cases:
        torch.set_num_threads(nth)
        x = rng.standard_normal(m)
        w = math.ceil(10 * sigma)
        exact = fftconvolve(np.pad(x, w, mode="symmetric"),
                            gaussian_kernel(np.arange(-w, w + 1), sigma, 0), mode="valid")
        plan = GaussianFilter(sigma)
        row = dict(section="gaussian", n=m, sigma=sigma, threads=nth,
                   folded=bool(m < 2 * plan.K + 1))
        for engine in ("numba", "auto", "chunked"):
            y = plan(x, engine=engine)
            reps = 3 if m * max(sigma, 64) > 1e9 else 7
            row[f"{engine}_ms"] = timer(lambda e=engine, p=plan, x=x: p(x, engine=e),
                                        repeat=reps)[0]
            row[f"{engine}_err"] = float(np.linalg.norm(y - exact) / np.linalg.norm(exact))
        t0 = time.perf_counter()
        ys = gaussian_filter1d(x, sigma)
        once = time.perf_counter() - t0
        # scipy's direct convolution costs ~ N σ: one call where it takes seconds
        row["scipy_ms"] = timer(lambda x=x, s=sigma: gaussian_filter1d(x, s),
                                repeat=1 if once > 1.0 else 5, warmup=0 if once > 1.0 else 1)[0]
        row["scipy_err"] = float(np.linalg.norm(ys - exact) / np.linalg.norm(exact))
        rows.append(row)
        print(json.dumps(row), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import numba
    import scipy
    import torch

    import fastmoments
    started = time.perf_counter()
    from fastmoments.signal._numba_cwt import warm_up as warm_cwt
    from fastmoments.signal._numba_sft import warm_up

    warm_up()  # compile or load the kernels before anything is timed
    warm_cwt()
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "cpu": cpu_name(), "cpu_count": os.cpu_count(), "threads": args.threads,
           "python": sys.version.split()[0], "torch": torch.__version__,
           "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__,
           "fastmoments": fastmoments.__version__, "loadavg_start": os.getloadavg()}
    rows: list = []
    cwt_section(env, rows)
    gaussian_section(args.threads, rows)
    torch.set_num_threads(args.threads)
    env["loadavg_end"] = os.getloadavg()
    env["runtime_s"] = time.perf_counter() - started
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "signal_numba.json"), "w") as fh:
        json.dump({"env": env, "rows": rows}, fh, indent=1)
    lines = [f"# numba engine on the CPU ({env['date']})", "",
             f"{env['cpu']}, {env['cpu_count']} cores; Python {env['python']}, torch "
             f"{env['torch']}, numpy {env['numpy']}, scipy {env['scipy']}, numba "
             f"{env['numba']}, fCWT {env.get('fCWT')}; 1-minute load average "
             f"{env['loadavg_start'][0]:.2f} at the start, {env['loadavg_end'][0]:.2f} at the "
             f"end; {env['runtime_s']:.0f} s in all."
             + (" The machine was busy (load above 1): the timings are indicative only."
                if max(env["loadavg_start"][0], env["loadavg_end"][0]) > 1.0 else ""), "",
             "## 64-scale Morlet CWT, N = 102400, float32, one thread", "",
             "| implementation | median ms (min-max) | |W| error (median over scales) |",
             "|---|---|---|"]
    cwt = [r for r in rows if r["section"] == "cwt"]
    for r in cwt:
        lines.append(f"| {r['impl']} | {r['ms']:.1f} ({r['ms_min']:.1f}-{r['ms_max']:.1f}) "
                     f"| {r['mag_err']:.1e} |")
    ours = {r["impl"]: r for r in cwt if r["impl"].startswith("fastmoments")}
    for r in cwt:
        if r["impl"].startswith("fCWT"):
            for name, o in ours.items():
                per_round = statistics.median(
                    a / b for a, b in zip(r["times_ms"], o["times_ms"], strict=True))
                lines.append(f"\n- {name} against {r['impl']}: {r['ms'] / o['ms']:.2f}× "
                             f"(ratio of medians; {per_round:.2f}× median of the "
                             f"{len(o['times_ms'])} per-round ratios; > 1: fastmoments "
                             f"faster; target ≥ 1.5× with FFTW_MEASURE)")
    lines += ["", "## Gaussian, order 0, float64, mode reflect (public plan call)", "",
              "Median ms per call; relative error against the exact float64 convolution.", "",
              "| N | σ | threads | numba ms | chunked ms | scipy ms | scipy / numba "
              "| chunked / numba | error numba / chunked / scipy |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["section"] != "gaussian":
            continue
        lines.append(
            f"| {r['n']} | {r['sigma']:g}{' (folded)' if r['folded'] else ''} | {r['threads']} "
            f"| {r['numba_ms']:.3f} | {r['chunked_ms']:.3f} | {r['scipy_ms']:.2f} | "
            f"{r['scipy_ms'] / r['numba_ms']:.0f}× | {r['chunked_ms'] / r['numba_ms']:.2f}× | "
            f"{r['numba_err']:.1e} / {r['chunked_err']:.1e} / {r['scipy_err']:.1e} |")
    with open(os.path.join(args.out, "signal_numba.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
