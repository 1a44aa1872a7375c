"""fastmoments' Gaussian filters against scipy.ndimage on a grid, in one run.

Grid: 1-D signals of N ∈ {1e3, 1e4, 1e5, 1e6} samples, 512² and 2048² images (every axis) and
a 128³ volume (every axis), × σ ∈ {0.5, 1, 2, 4, 8, 32, 256, 8192} × orders 0, 1, 2 × float32
and float64. Each cell times ``fastmoments.gaussian_filter`` (``method="auto"``, the default)
and ``scipy.ndimage.gaussian_filter`` (``cupyx.scipy.ndimage`` with ``--device cuda``) on the
same array in the same process: the median of several calls after a warm-up (one call when a
call takes longer than ``--slow`` seconds). Both results are compared with the exact float64
convolution by the untruncated kernel (scipy.ndimage's normalised discrete Gaussian out to
``12σ + 2``; for order 2 each library's own: fastmoments corrects the second derivative to
zero sum, scipy does not), applied along each axis through an FFT of the mode-extended
signal: relative RMSE over the whole array.

Writes ``benchmarks/results/signal_scipy_grid_<device>.json`` and ``.md`` (a table with the
ratio ``t_scipy / t_fastmoments`` per cell, > 1 where fastmoments is faster, the method
``"auto"`` chose and both errors); the documentation draws its plots from the JSON.

    PYTHONPATH=src python benchmarks/signal_scipy_grid.py              # full grid (CPU)
    PYTHONPATH=src python benchmarks/signal_scipy_grid.py --quick      # a subset, ~1-2 min
    PYTHONPATH=src python benchmarks/signal_scipy_grid.py --device cuda   # against cupyx

The full CPU grid spends most of its time in scipy at large σ (a 65537-tap kernel at
σ = 8192: tens of seconds per call on 10⁶ samples, minutes on 2048²): ``--max-scipy-work``
(default 2e10 multiply-adds, ~10 s of scipy on one core) leaves the peer out of the cells
beyond it (fastmoments is still timed; no ratio is given, none is estimated). On the 2-core
development CPU the full grid then takes about 10 minutes (``--max-scipy-work 5e9``: ~5).
The peer's *error* in those cells is that of its kernel applied exactly (scipy.ndimage's
truncated kernel, ``round(4σ)`` taps a side, by the same FFT as the reference; float32:
computed in float64 and rounded to float32 after each axis, as scipy.ndimage does), marked
"emulated" (``scipy_err_how``); where scipy also ran, the emulated error is recorded beside
the measured one (``scipy_err_emulated``) to show that they agree.

``--accuracy-only`` skips every timing: one call of each library per cell, the errors, and
the list of the cells where fastmoments is less accurate than the peer (written to
``signal_scipy_grid_accuracy_<device>.json`` and ``.md``; the timed results are left as they
are). Accuracy is deterministic, so this mode can run on a busy machine: ~3 minutes on the
2-core development CPU (``--max-scipy-work 2e10``; most of it scipy on 2048² at σ = 256).

    PYTHONPATH=src python benchmarks/signal_scipy_grid.py --accuracy-only
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
RESULTS = os.path.join(ROOT, "benchmarks", "results")

SIGMAS = [0.5, 1.0, 2.0, 4.0, 8.0, 32.0, 256.0, 8192.0]
SHAPES = {"1e3": (1000,), "1e4": (10_000,), "1e5": (100_000,), "1e6": (1_000_000,),
          "512²": (512, 512), "2048²": (2048, 2048), "128³": (128, 128, 128)}
QUICK_SHAPES = ["1e3", "1e4", "1e5", "512²"]
QUICK_SIGMAS = [0.5, 2.0, 8.0, 32.0, 256.0]
QUICK_ORDERS = [0, 2]


# --------------------------------------------------------------------------- exact reference
def exact_kernel(sigma: float, order: int, zero_sum: bool = True) -> np.ndarray:
    """The untruncated kernel on ``[-W, W]``, ``W = ceil(12σ) + 2`` (float64): scipy.ndimage's
    formulas without truncation; ``zero_sum``: the second derivative minus its sum times the
    smoothing kernel (fastmoments' target: zero on constants), else scipy's own."""
    w = math.ceil(12 * sigma) + 2
    k = np.arange(-w, w + 1, dtype=np.float64)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    phi = g / g.sum()
    if order == 0:
        return phi
    if order == 1:
        return -k / sigma**2 * phi
    h = (k**2 / sigma**4 - 1 / sigma**2) * phi
    return h - h.sum() * phi if zero_sum else h


def exact_along(x: np.ndarray, h: np.ndarray, axis: int) -> np.ndarray:
    """``y[n] = Σ_k h[k] x_ext[n - k]`` along ``axis``, reflect mode, exactly (float64).

    The reflect extension is periodic with period ``2n`` (``x`` then ``x`` reversed), so the
    convolution is a circular one of that period with the kernel folded onto it
    (``f[q] = Σ_{k ≡ q mod 2n} h[k]``), by FFT: exact for any kernel length, in ``O(n)``
    memory per line (σ = 8192 on 512-sample lines needs no 200000-sample extension)."""
    w = (h.shape[0] - 1) // 2
    xm = np.moveaxis(x, axis, -1)
    n = xm.shape[-1]
    period = 2 * n
    f = np.zeros(period)
    np.add.at(f, np.arange(-w, w + 1) % period, h)
    xp = np.concatenate([xm, xm[..., ::-1]], axis=-1)
    y = np.fft.irfft(np.fft.rfft(xp, axis=-1) * np.fft.rfft(f), period, axis=-1)[..., :n]
    return np.moveaxis(y, -1, axis)


def exact(x: np.ndarray, sigma: float, order: int, zero_sum: bool = True) -> np.ndarray:
    h = exact_kernel(sigma, order, zero_sum)
    y = np.asarray(x, dtype=np.float64)
    for ax in range(y.ndim):
        y = exact_along(y, h, ax)
    return y


def scipy_kernel(sigma: float, order: int, truncate: float = 4.0) -> np.ndarray:
    """scipy.ndimage's truncated kernel as ``gaussian_filter1d`` convolves with it: radius
    ``int(truncate σ + 0.5)``, the Gaussian normalised over it, times ``1``, ``-k/σ²`` or
    ``k²/σ⁴ - 1/σ²`` (its Hermite-polynomial recursion for orders 0-2)."""
    w = int(truncate * sigma + 0.5)
    k = np.arange(-w, w + 1, dtype=np.float64)
    phi = np.exp(-0.5 / (sigma * sigma) * k**2)
    phi /= phi.sum()
    if order == 0:
        return phi
    if order == 1:
        return -k / sigma**2 * phi
    return (k**2 / sigma**4 - 1 / sigma**2) * phi


def emulated_scipy(x: np.ndarray, sigma: float, order: int) -> np.ndarray:
    """What ``scipy.ndimage.gaussian_filter(x, sigma, order)`` computes (reflect mode), by the
    exact convolution with its truncated kernel: lines in float64, each axis's result stored
    in ``x``'s dtype (float32 stays float32 between the passes, as in scipy.ndimage). Equal to
    scipy's output up to the order of the float64 sums; the cells where scipy itself is too
    slow to run get their error from this."""
    h = scipy_kernel(sigma, order)
    y = np.asarray(x)
    for ax in range(y.ndim):
        y = exact_along(y.astype(np.float64), h, ax).astype(x.dtype)
    return y


def relerr(y, ref, x) -> float:
    """``‖y - ref‖ / ‖ref‖``; where the exact result all but vanishes (a derivative at σ far
    beyond the signal's length, ``‖ref‖ < 1e-9 ‖x‖``), relative to ``1e-9 ‖x‖`` instead, so
    that rounding noise does not read as an error."""
    y = np.asarray(y, dtype=np.float64)
    return float(np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-9 * np.linalg.norm(x)))


# --------------------------------------------------------------------------- timing
def timed(fn, sync, budget: float, slow: float) -> tuple[float, int]:
    """Median seconds of ``fn()`` after a warm-up call (first calls compile numba kernels,
    fit plans and fill caches); one timed call when that one is longer than ``slow``."""
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    one = time.perf_counter() - t0
    if one > slow:
        return one, 1
    reps = int(max(3, min(100, budget / max(one, 1e-7))))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--quick", action="store_true",
                    help=f"shapes {QUICK_SHAPES}, σ {QUICK_SIGMAS}, orders {QUICK_ORDERS}")
    ap.add_argument("--budget", type=float, default=0.3, help="seconds of calls per timing")
    ap.add_argument("--slow", type=float, default=1.0,
                    help="a warm-up call longer than this is timed once")
    ap.add_argument("--max-scipy-work", type=float, default=2e10,
                    help="skip the peer where its truncated convolution needs more multiply-"
                         "adds than this (size × Σ_axes (2 round(4σ) + 1)); inf: time all")
    ap.add_argument("--accuracy-only", action="store_true",
                    help="no timings: the errors of one call per cell and the cells where "
                         "fastmoments is less accurate than the peer")
    args = ap.parse_args()
    if args.accuracy_only:
        accuracy_only(args)
        return

    import fastmoments as fm
    from fastmoments._progress import progress
    from fastmoments.signal import GaussianFilter

    device = torch.device(args.device)
    dev = device.type
    if dev == "cuda":
        import cupy
        from cupyx.scipy import ndimage as ndi

        def sync():
            torch.cuda.synchronize()
            cupy.cuda.Device().synchronize()

        peer = "cupyx.scipy.ndimage"
    else:
        from scipy import ndimage as ndi

        def sync():
            return None

        peer = "scipy.ndimage"
    shapes = QUICK_SHAPES if args.quick else list(SHAPES)
    sigmas = QUICK_SIGMAS if args.quick else SIGMAS
    orders = QUICK_ORDERS if args.quick else [0, 1, 2]
    rng = np.random.default_rng(0)
    data = {name: rng.standard_normal(SHAPES[name]) for name in shapes}
    rows = []
    jobs = [(dt, name, s, o) for dt in ("float32", "float64") for name in shapes
            for s in sigmas for o in orders]
    refs: dict = {}
    for dt, name, s, o in progress(jobs, desc="grid", total=len(jobs), show=True):
        x64 = data[name]
        x = x64.astype(dt)
        if dev == "cuda":
            xf = torch.as_tensor(x, device=device)
            xs = cupy.asarray(x)
        else:
            xf = xs = x
        t_fm, reps_fm = timed(lambda xf=xf, s=s, o=o: fm.gaussian_filter(xf, s, order=o), sync,
                              args.budget, args.slow)
        y_fm = fm.gaussian_filter(xf, s, order=o)
        y_fm = y_fm.cpu().numpy() if isinstance(y_fm, torch.Tensor) else y_fm
        n_ax = SHAPES[name][-1]
        method = GaussianFilter(s, order=o).choose(n_ax, batch=x.size // n_ax, dtype=dt,
                                                   device=dev)
        row = dict(dtype=dt, shape=name, sigma=s, order=o, fm_s=t_fm, fm_reps=reps_fm,
                   method=method)
        ref = refs.get(("ref", name, s, o))
        if ref is None:
            ref = exact(x64, s, o)
            refs[("ref", name, s, o)] = ref
        # the reference is computed on the float64 data; float32 cells are measured against
        # it too (their rounding of the input, ~6e-8, is part of their error)
        row["fm_err"] = relerr(y_fm, ref, x64)
        work = x64.size * x64.ndim * (2 * int(4 * s + 0.5) + 1)
        if work > args.max_scipy_work:
            # not timed; its error from its kernel applied exactly (see emulated_scipy)
            ref_sp = ref if o != 2 else exact(x64, s, o, zero_sum=False)
            row.update(scipy_s=None, ratio=None, scipy_work=work, scipy_err_how="emulated",
                       scipy_err=relerr(emulated_scipy(x, s, o), ref_sp, x64))
        else:
            t_sp, reps_sp = timed(lambda xs=xs, s=s, o=o: ndi.gaussian_filter(xs, s, order=o),
                                  sync, args.budget, args.slow)
            y_sp = ndi.gaussian_filter(xs, s, order=o)
            y_sp = cupy.asnumpy(y_sp) if dev == "cuda" else y_sp
            # each library against the exact convolution by its own untruncated kernel (they
            # differ for order 2: scipy's second derivative does not sum to zero)
            ref_sp = ref if o != 2 else exact(x64, s, o, zero_sum=False)
            row.update(scipy_s=t_sp, scipy_reps=reps_sp, ratio=t_sp / t_fm,
                       scipy_err=relerr(y_sp, ref_sp, x64), scipy_err_how="measured")
        rows.append(row)
        # keep only the references of the current shape (2048² and 1e6 ones are large)
        for key in [k for k in refs if k[0] == "ref" and k[1] != name]:
            del refs[key]

    from fastmoments.signal import gaussian_calls as gauss_mod

    # calls whose CUDA-graph capture failed run eagerly; say which and why
    failures = {str(k): v for k, v in gauss_mod._GRAPHS.failures.items()}
    if failures:
        print("graph captures that failed:", json.dumps(failures, indent=1))
    meta = dict(device=dev, capture_failures=failures,
                name=(torch.cuda.get_device_name(device) if dev == "cuda"
                                  else platform.processor() or platform.machine()),
                peer=peer, date=datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
                torch=torch.__version__, numpy=np.__version__, python=sys.version.split()[0],
                threads=torch.get_num_threads(), quick=bool(args.quick),
                load=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
                command="python benchmarks/signal_scipy_grid.py " + " ".join(sys.argv[1:]))
    try:
        import scipy

        meta["scipy"] = scipy.__version__
        import numba

        meta["numba"] = numba.__version__
    except ImportError:  # pragma: no cover
        pass
    os.makedirs(RESULTS, exist_ok=True)
    base = os.path.join(RESULTS, f"signal_scipy_grid_{dev}")
    with open(base + ".json", "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    write_md(base + ".md", meta, rows, shapes, sigmas, orders)
    print(f"wrote {base}.json and .md")


def accuracy_only(args) -> None:
    """``--accuracy-only``: the errors of ``method="auto"`` and of the peer in every cell, one
    call each, and the cells where fastmoments is the less accurate (``fm_err > scipy_err``);
    writes ``signal_scipy_grid_accuracy_<device>.json`` and ``.md``."""
    import fastmoments as fm
    from fastmoments._progress import progress
    from fastmoments.signal import GaussianFilter

    dev = torch.device(args.device).type
    if dev == "cuda":
        import cupy
        from cupyx.scipy import ndimage as ndi

        peer = "cupyx.scipy.ndimage"
    else:
        from scipy import ndimage as ndi

        peer = "scipy.ndimage"
    shapes = QUICK_SHAPES if args.quick else list(SHAPES)
    sigmas = QUICK_SIGMAS if args.quick else SIGMAS
    orders = QUICK_ORDERS if args.quick else [0, 1, 2]
    rng = np.random.default_rng(0)
    data = {name: rng.standard_normal(SHAPES[name]) for name in shapes}
    rows = []
    jobs = [(name, s, o) for name in shapes for s in sigmas for o in orders]
    for name, s, o in progress(jobs, desc="accuracy", total=len(jobs), show=True):
        x64 = data[name]
        ref = exact(x64, s, o)
        ref_sp = ref if o != 2 else exact(x64, s, o, zero_sum=False)
        work = x64.size * x64.ndim * (2 * int(4 * s + 0.5) + 1)
        for dt in ("float32", "float64"):
            x = x64.astype(dt)
            xf = torch.as_tensor(x, device=args.device) if dev == "cuda" else x
            y_fm = fm.gaussian_filter(xf, s, order=o)
            y_fm = y_fm.cpu().numpy() if isinstance(y_fm, torch.Tensor) else y_fm
            n_ax = SHAPES[name][-1]
            method = GaussianFilter(s, order=o).choose(n_ax, batch=x.size // n_ax, dtype=dt,
                                                       device=dev)
            row = dict(dtype=dt, shape=name, sigma=s, order=o, method=method,
                       fm_err=relerr(y_fm, ref, x64), scipy_work=work)
            emulated = relerr(emulated_scipy(x, s, o), ref_sp, x64)
            if work > args.max_scipy_work:
                row.update(scipy_err=emulated, scipy_err_how="emulated")
            else:
                if dev == "cuda":
                    y_sp = cupy.asnumpy(ndi.gaussian_filter(cupy.asarray(x), s, order=o))
                else:
                    y_sp = ndi.gaussian_filter(x, s, order=o)
                row.update(scipy_err=relerr(y_sp, ref_sp, x64), scipy_err_how="measured",
                           scipy_err_emulated=emulated)
            row["ok"] = bool(row["fm_err"] <= row["scipy_err"])
            rows.append(row)
    meta = dict(device=dev, peer=peer, accuracy_only=True, quick=bool(args.quick),
                name=(torch.cuda.get_device_name(args.device) if dev == "cuda"
                      else platform.processor() or platform.machine()),
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
                torch=torch.__version__, numpy=np.__version__, python=sys.version.split()[0],
                max_scipy_work=args.max_scipy_work,
                command="python benchmarks/signal_scipy_grid.py " + " ".join(sys.argv[1:]))
    try:
        import scipy

        meta["scipy"] = scipy.__version__
    except ImportError:  # pragma: no cover
        pass
    os.makedirs(RESULTS, exist_ok=True)
    base = os.path.join(RESULTS, f"signal_scipy_grid_accuracy_{dev}")
    with open(base + ".json", "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    write_accuracy_md(base + ".md", meta, rows, shapes, sigmas, orders)
    bad = [r for r in rows if not r["ok"]]
    for r in bad:
        print(f"LESS ACCURATE: {r['dtype']} order {r['order']} sigma {r['sigma']:g} "
              f"{r['shape']} ({r['method']}): {r['fm_err']:.3e} vs {r['scipy_err']:.3e} "
              f"({r['scipy_err_how']})")
    print(f"{len(bad)} of {len(rows)} cells less accurate than {peer}; wrote {base}.json, .md")


def write_accuracy_md(path, meta, rows, shapes, sigmas, orders) -> None:
    bad = [r for r in rows if not r["ok"]]
    checked = [r for r in rows if r["scipy_err_how"] == "measured"]
    agree = max((abs(r["scipy_err_emulated"] / r["scipy_err"] - 1) for r in checked
                 if r["scipy_err"] > 0), default=float("nan"))
    lines = [f"# Accuracy of the Gaussian filters against {meta['peer']} ({meta['name']}, "
             f"{meta['device']})", "",
             f"{meta['date']}; torch {meta['torch']}, numpy {meta['numpy']}, scipy "
             f"{meta.get('scipy')}. `{meta['command'].strip()}` (no timings).", "",
             "Relative RMSE of fastmoments (`method='auto'`, the method it chose along the "
             "last axis) and of the peer against the exact float64 convolution by each one's "
             "untruncated kernel (reflect mode). Peer errors in *italics* are emulated: its "
             "truncated kernel applied exactly, where running it costs more than "
             f"{meta['max_scipy_work']:.0e} multiply-adds; where it ran, the emulated and "
             f"measured errors agree to {agree:.1e} (relative, over {len(checked)} cells).",
             "", f"Cells where fastmoments is less accurate than the peer: {len(bad)} of "
             f"{len(rows)}" + ("." if not bad else ":"), ""]
    lines += [f"- {r['dtype']}, order {r['order']}, σ = {r['sigma']:g}, {r['shape']} "
              f"({r['method']}): {r['fm_err']:.3e} vs {r['scipy_err']:.3e} "
              f"({r['scipy_err_how']})" for r in bad]
    if bad:
        lines.append("")
    for dt in ("float32", "float64"):
        for o in orders:
            lines += [f"## {dt}, order {o}", "",
                      "| σ | " + " | ".join(shapes) + " |", "|---|" + "---|" * len(shapes)]
            for s in sigmas:
                cells = []
                for name in shapes:
                    r = next((r for r in rows if r["dtype"] == dt and r["order"] == o
                              and r["shape"] == name and r["sigma"] == s), None)
                    if r is None:
                        cells.append("")
                        continue
                    peer = (f"{r['scipy_err']:.1e}" if r["scipy_err_how"] == "measured"
                            else f"*{r['scipy_err']:.1e}*")
                    mark = "" if r["ok"] else " **worse**"
                    cells.append(f"{r['fm_err']:.1e} vs {peer} ({r['method']}){mark}")
                lines.append(f"| {s:g} | " + " | ".join(cells) + " |")
            lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_md(path, meta, rows, shapes, sigmas, orders) -> None:
    lines = [f"# Gaussian filters against {meta['peer']} ({meta['name']}, {meta['device']})", "",
             f"{meta['date']}; torch {meta['torch']}, numpy {meta['numpy']}, scipy "
             f"{meta.get('scipy')}, numba {meta.get('numba')}, {meta['threads']} threads, load "
             f"{meta['load']}. `{meta['command'].strip()}`.", "",
             "Ratio = t_peer / t_fastmoments (> 1: fastmoments faster), median after warm-up; "
             "method: what `method='auto'` chose (along the last axis); errors: relative "
             "RMSE against the exact float64 convolution (untruncated kernel).", ""]
    worst = [r for r in rows if r.get("ratio") is not None and r["ratio"] < 1.0]
    lines += [f"Cells where the peer was faster: {len(worst)} of "
              f"{sum(r.get('ratio') is not None for r in rows)}.", ""]
    less = [r for r in rows if r.get("scipy_err") is not None
            and not r["fm_err"] <= r["scipy_err"]]
    lines += [f"Cells where fastmoments was less accurate than the peer: {len(less)} of "
              f"{sum(r.get('scipy_err') is not None for r in rows)}"
              + "".join(f"; {r['dtype']} order {r['order']} σ {r['sigma']:g} {r['shape']} "
                        f"({r['fm_err']:.3g} vs {r['scipy_err']:.3g})" for r in less)
              + ". Peer errors marked emulated: its truncated kernel applied exactly "
                "(`emulated_scipy`), where the peer was not timed.", ""]
    for dt in ("float32", "float64"):
        for o in orders:
            lines += [f"## {dt}, order {o}", "",
                      "| σ | " + " | ".join(shapes) + " |", "|---|" + "---|" * len(shapes)]
            for s in sigmas:
                cells = []
                for name in shapes:
                    r = next((r for r in rows if r["dtype"] == dt and r["order"] == o
                              and r["shape"] == name and r["sigma"] == s), None)
                    if r is None:
                        cells.append("")
                    elif r.get("ratio") is None:
                        peer = ("" if r.get("scipy_err") is None else
                                f" vs {r['scipy_err']:.1e} emulated")
                        cells.append(f"{1e3 * r['fm_s']:.3g} ms ({r['method']}; err "
                                     f"{r['fm_err']:.1e}{peer}; peer not timed)")
                    else:
                        cells.append(f"**{r['ratio']:.2f}×** {1e3 * r['fm_s']:.3g} ms "
                                     f"({r['method']}; err {r['fm_err']:.1e} vs "
                                     f"{r['scipy_err']:.1e})")
                lines.append(f"| {s:g} | " + " | ".join(cells) + " |")
            lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
