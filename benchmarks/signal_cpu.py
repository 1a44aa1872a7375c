"""CPU benchmark: the Morlet CWT against fCWT, PyWavelets and ssqueezepy, and Gaussian
smoothing against scipy.ndimage.gaussian_filter1d (time against σ and against N).

A 64-scale Morlet CWT of N = 102400 samples (scales log-spaced from 2 to 1024 samples, ξ = 6),
with torch and the peers limited to the threads given (default 2; fCWT also on 1 thread).
Accuracy: each library's |W| against |W| of the exact float64 convolution with the Morlet
wavelet of Eq. 49 (truncated at 10σ), after one least-squares real factor per scale (the
libraries normalise their wavelets differently), on the interior samples (boundary extensions
differ); the median over scales and the worst scale are reported. fCWT is timed as constructed
by default and with the FFTW_MEASURE optimization plans its documentation recommends (their
one-off planning time is recorded, not timed). Peers are benchmark-only
dependencies (``pip install fCWT ssqueezepy PyWavelets``; fCWT needs ``libfftw3-single3``).

The fastmoments CWT is timed allocating its output on every call and, like fCWT's timing,
writing into one preallocated array (``out=``), on 1 and on ``--threads`` threads. The
1-minute load average at the start, after the CWT section and at the end is recorded: run on
a quiet machine.

Usage: ``PYTHONPATH=src python benchmarks/signal_cpu.py [--threads 2] [--n 102400]``.
Writes ``benchmarks/results/signal_cpu.json`` and ``.md``.
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
import tempfile
import time

import numpy as np


def timer(fn, repeat=5, warmup=1):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(ts), min(ts), max(ts)


def magnitude_error(w: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """Per-scale relative error of |w| vs |ref| after the best real factor; (median, max).

    Only the interior (10 σ_max = 10240 samples from each end) is compared, so that the
    libraries' different boundary extensions do not count.
    """
    inner = slice(10240, w.shape[-1] - 10240)
    errs = []
    for a, b in zip(np.abs(w[..., inner]), np.abs(ref[..., inner]), strict=True):
        c = float(np.dot(a, b) / max(np.dot(a, a), 1e-300))
        errs.append(float(np.linalg.norm(c * a - b) / np.linalg.norm(b)))
    return float(np.median(errs)), float(np.max(errs))


def gaussian_section(args, rng, timer) -> list[dict]:
    """fastmoments.gaussian_filter1d against scipy.ndimage.gaussian_filter1d, against σ and N
    (``method="auto"``; the method it chose is recorded)."""
    import torch
    from scipy.ndimage import gaussian_filter1d
    from scipy.signal import fftconvolve

    from fastmoments.signal import GaussianFilter
    from fastmoments.signal import gaussian_filter1d as gaussian_filter
    from fastmoments.signal.coefficients import gaussian_kernel

    out = []
    cases = [(args.n, s) for s in (4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 8192.0)]
    cases += [(m, 256.0) for m in (10**3, 10**4, 10**6)]
    for m, sigma in cases:
        x = rng.standard_normal(m)
        w = math.ceil(10 * sigma)
        exact = fftconvolve(np.pad(x, w, mode="symmetric"),
                            gaussian_kernel(np.arange(-w, w + 1), sigma, 0), mode="valid")
        rep = 2 if sigma * m > 2e8 else 5
        ts = {}
        for nth in (1, args.threads):
            torch.set_num_threads(nth)
            ts[nth] = timer(lambda x=x, s=sigma: gaussian_filter(x, s), repeat=5)[0]
        x32 = x.astype(np.float32)
        t32 = timer(lambda x=x32, s=sigma: gaussian_filter(x, s), repeat=5)[0]
        tsp = timer(lambda x=x, s=sigma: gaussian_filter1d(x, s), repeat=rep)[0]
        y, ys = gaussian_filter(x, sigma), gaussian_filter1d(x, sigma)
        row = dict(n=m, sigma=sigma, order=0, method=GaussianFilter(sigma).choose(m),
                   ours_1t_ms=ts[1], ours_ms=ts[args.threads],
                   ours_f32_ms=t32, scipy_ms=tsp,
                   err_ours=float(np.linalg.norm(y - exact) / np.linalg.norm(exact)),
                   err_scipy=float(np.linalg.norm(ys - exact) / np.linalg.norm(exact)))
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n", type=int, default=102400)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch
    from scipy.signal import fftconvolve

    import fastmoments
    from fastmoments.signal import CWT, Morlet
    from fastmoments.signal.coefficients import morlet_kernel

    torch.set_num_threads(args.threads)
    n, xi = args.n, 6.0
    scales = np.geomspace(2.0, 1024.0, 64)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n)
    x32 = x.astype(np.float32)
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
           "threads": args.threads, "torch": torch.__version__, "numpy": np.__version__,
           "fastmoments": fastmoments.__version__, "python": sys.version.split()[0],
           "note": "2-core virtual machine; fastmoments rows without out= include allocating "
                   "the output (fCWT writes into a preallocated array, as the out= rows do)",
           "loadavg_start": os.getloadavg()}
    t0 = time.perf_counter()
    ref = np.stack([
        fftconvolve(np.pad(x, math.ceil(10 * s), mode="symmetric"),
                    morlet_kernel(np.arange(-math.ceil(10 * s), math.ceil(10 * s) + 1), s, xi),
                    mode="valid") for s in scales])
    print(f"reference in {time.perf_counter() - t0:.1f} s", flush=True)
    rows = []

    def record(**kw):
        rows.append(kw)
        print(json.dumps(kw), flush=True)

    # (dtype, data, method, threads, out=): "out" writes into one preallocated array, reused
    # over the calls, as fCWT's timing below does; the other rows allocate the output per call
    for dtype, data, method, nth, pre in (("float32", x32, "sft", 1, False),
                                          ("float32", x32, "sft", 1, True),
                                          ("float32", x32, "sft", args.threads, False),
                                          ("float32", x32, "sft", args.threads, True),
                                          ("float32", x32, "asft", args.threads, False),
                                          ("float64", x, "sft", args.threads, False)):
        torch.set_num_threads(nth)
        t0 = time.perf_counter()
        plan = CWT(scales, Morlet(xi), method=method)
        build = time.perf_counter() - t0
        w = plan(data)
        buf = np.empty_like(w) if pre else None
        t = timer(lambda plan=plan, data=data, buf=buf: plan(data, out=buf), repeat=7)
        if pre:
            assert np.array_equal(buf, w)
        rel = float(np.linalg.norm(w - ref) / np.linalg.norm(ref))
        med, worst = magnitude_error(w, ref)
        record(impl=f"fastmoments cwt {method}" + (", out= preallocated" if pre else ""),
               dtype=dtype, threads=nth, out=pre, ms=t[0], ms_min=t[1], ms_max=t[2],
               plan_build_s=build, rel_err_complex=rel, mag_err_median=med,
               mag_err_max=worst)
    torch.set_num_threads(args.threads)

    try:
        import fcwt

        from signal_common import fcwt_plan

        env["fCWT"] = getattr(fcwt, "__version__", "installed")
        fs = 1  # fCWT wants an integer sampling rate
        f0, f1 = xi / (2 * np.pi * scales[-1]), xi / (2 * np.pi * scales[0])
        here = os.getcwd()
        # fCWT as constructed by default (FFTW_ESTIMATE plans), and with the optimization
        # plans its documentation recommends (FFTW_MEASURE wisdom, computed once per length
        # and thread count and written to the working directory: a temporary one here)
        with tempfile.TemporaryDirectory() as wisdom:
            os.chdir(wisdom)
            try:
                for plans, nth in ((False, 1), (False, args.threads), (True, 1),
                                   (True, args.threads)):
                    # _morl: the wavelet, alive while obj runs (fCWT points to it)
                    obj, sc, _morl, plan_s = fcwt_plan(fcwt, xi, scales, n, fs, f0, f1, nth,
                                                       plans)
                    out = np.zeros((len(scales), n), dtype=np.complex64)
                    obj.cwt(x32, sc, out)
                    t = timer(lambda obj=obj, sc=sc, out=out: obj.cwt(x32, sc, out),
                              repeat=7)
                    freqs = np.zeros(len(scales), dtype=np.float32)
                    sc.getFrequencies(freqs)
                    order = np.argsort(-freqs)  # highest frequency = smallest scale first
                    med, worst = magnitude_error(out[order].astype(np.complex128), ref)
                    record(impl="fCWT, FFTW_MEASURE plans" if plans else "fCWT, default",
                           dtype="float32", threads=nth, ms=t[0], ms_min=t[1], ms_max=t[2],
                           plan_build_s=plan_s, mag_err_median=med, mag_err_max=worst)
            finally:
                os.chdir(here)
    except Exception as exc:  # an import or API failure: keep the other rows
        env["fCWT"] = f"failed: {exc!r}"

    try:
        import pywt

        env["PyWavelets"] = pywt.__version__
        wav = f"cmor2.0-{xi / (2 * np.pi)}"  # exp(-t²/2) exp(i ξ t): Eq. 49 without κ
        coef, _ = pywt.cwt(x, scales, wav, method="fft")
        t = timer(lambda: pywt.cwt(x, scales, wav, method="fft"), repeat=3)
        med, worst = magnitude_error(coef, ref)
        record(impl="PyWavelets cwt method=fft", dtype="float64", threads=1, ms=t[0],
               ms_min=t[1], ms_max=t[2], mag_err_median=med, mag_err_max=worst,
               mag_err_per_scale=[magnitude_error(coef[i:i + 1], ref[i:i + 1])[0]
                                  for i in range(len(scales))])
    except Exception as exc:
        env["PyWavelets"] = f"failed: {exc!r}"

    try:
        import ssqueezepy

        env["ssqueezepy"] = ssqueezepy.__version__
        os.environ["SSQ_PARALLEL"] = "1" if args.threads > 1 else "0"
        wx, _ = ssqueezepy.cwt(x, ("morlet", {"mu": xi}), scales=scales.astype(np.float64),
                               padtype="reflect", l1_norm=False, astensor=False)
        t = timer(lambda: ssqueezepy.cwt(x, ("morlet", {"mu": xi}), scales=scales,
                                         padtype="reflect", l1_norm=False, astensor=False),
                  repeat=3)
        med, worst = magnitude_error(np.asarray(wx), ref)
        record(impl="ssqueezepy cwt", dtype="float64", threads=args.threads, ms=t[0],
               ms_min=t[1], ms_max=t[2], mag_err_median=med, mag_err_max=worst)
    except Exception as exc:
        env["ssqueezepy"] = f"failed: {exc!r}"

    env["loadavg_after_cwt"] = os.getloadavg()
    gauss = gaussian_section(args, rng, timer)
    env["loadavg_end"] = os.getloadavg()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "signal_cpu.json"), "w") as fh:
        json.dump({"env": env, "rows": rows, "gaussian": gauss}, fh, indent=1)
    load = ", ".join(f"{k[8:]} {v[0]:.2f}" for k, v in env.items() if k.startswith("loadavg"))
    lines = [f"CPU, {args.threads} threads, 64-scale Morlet CWT (ξ = 6, scales 2-1024) of "
             f"N = {n}; {env['date']}; {env['machine']}; {env['note']}; 1-minute load "
             f"average {load}", "",
             "| implementation | dtype | threads | median ms (min-max) "
             "| |W| error median / worst |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['impl']} | {r['dtype']} | {r['threads']} | {r['ms']:.0f} "
                     f"({r['ms_min']:.0f}-{r['ms_max']:.0f}) | {r['mag_err_median']:.1e} / "
                     f"{r['mag_err_max']:.1e} |")
    ours = {r["threads"]: r["ms"] for r in rows
            if r["impl"] == "fastmoments cwt sft, out= preallocated"}
    for r in rows:
        if r["impl"].startswith("fCWT") and r["threads"] in ours:
            lines.append("")
            lines.append(f"- {r['impl']}, {r['threads']} thread(s): fastmoments (out=) "
                         f"{ours[r['threads']]:.1f} ms against {r['ms']:.1f} ms, "
                         f"{r['ms'] / ours[r['threads']]:.2f}× (> 1: fastmoments faster)")
    lines += ["", "## Gaussian smoothing against scipy.ndimage.gaussian_filter1d", "",
              "Median ms (float64 input, mode reflect); relative error against the exact "
              "float64 convolution (kernel truncated at 10σ).", "",
              "| N | σ | order | fastmoments ms (1 thread) | fastmoments ms (2 threads) "
              "| float32, 2 threads | scipy ms | speed-up (2 threads) | error ours / scipy |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in gauss:
        lines.append(f"| {r['n']} | {r['sigma']:g} | {r['order']} | {r['ours_1t_ms']:.2f} | "
                     f"{r['ours_ms']:.2f} | {r['ours_f32_ms']:.2f} | {r['scipy_ms']:.1f} | "
                     f"{r['scipy_ms'] / r['ours_ms']:.0f}× | {r['err_ours']:.1e} / "
                     f"{r['err_scipy']:.1e} |")
    with open(os.path.join(args.out, "signal_cpu.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
