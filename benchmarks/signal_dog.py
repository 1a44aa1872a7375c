"""Derivative-of-Gaussian CWTs: fastmoments' ``cwt`` with those wavelets against
PyWavelets' ``gaus1`` and ``mexh`` on the same scales (the PPG recording, float64).

Each library is compared with the float64 convolution of the signal with its own sampled
wavelet, computed here by FFT with the reflect extension: ours ``Σ_k ψ_σ(k) x[n - k]``,
PyWavelets' the same wavelet half a sample later, ``ε Σ_k ψ_σ(k - 1/2) x[n - k]``
(:class:`fastmoments.signal.dog.DerivativeOfGaussian`, Notes). Error: relative RMS over the
samples ``8σ`` from the ends. Times: median (min-max) of 3 runs after one warm-up
(PyWavelets with ``method="fft"``, its faster method at these scales). Writes
``results/signal_dog.json`` and ``.md``.
Run: ``OMP_NUM_THREADS=1 python benchmarks/signal_dog.py [--note TEXT]``.
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
from pathlib import Path

import numpy as np
import torch

import fastmoments
from fastmoments.data import ppg_recording
from fastmoments.signal import cwt, from_pywt_dog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from signal_common import cpu_times

OUT = Path(__file__).parent / "results"



def _time(fn, repeat: int = 3) -> tuple[float, float, float]:
    return cpu_times(fn, repeat)


def _reference(x: np.ndarray, wavelet, sigma: float, shift: float) -> np.ndarray:
    """``Σ_k ψ_σ(k - shift) x[n - k]`` by FFT (reflect extension), float64."""
    r = math.ceil(12 * sigma) + 1
    k = np.arange(-r, r + 1)
    h = wavelet.sampled(k - shift, sigma)
    e = np.pad(x, r, mode="symmetric")
    size = len(e) + len(h) - 1
    y = np.fft.irfft(np.fft.rfft(e, size) * np.fft.rfft(h, size), size)
    return y[2 * r: 2 * r + len(x)]


def _rel(y: np.ndarray, ref: np.ndarray, margin: int) -> float:
    a, b = y[margin:-margin], ref[margin:-margin]
    return float(np.sqrt(np.mean((a - b) ** 2) / np.mean(b ** 2)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    import pywt

    x = ppg_recording().astype(np.float64)
    x -= x.mean()
    a = np.geomspace(4.0, 256.0, 32)  # PyWavelets' scales
    rows = []
    for name in ("gaus1", "mexh"):
        wavelet, sigmas, eps = from_pywt_dog(name, a)
        ours, _ = cwt(x, sigmas, wavelet)
        theirs, _ = pywt.cwt(x, a, name, method="fft", precision=12)
        err_f, err_p = [], []
        for i, s in enumerate(sigmas):
            margin = math.ceil(8 * s)
            err_f.append(_rel(ours[i], _reference(x, wavelet, s, 0.0), margin))
            err_p.append(_rel(theirs[i], eps * _reference(x, wavelet, s, 0.5), margin))
        row = {
            "wavelet": name, "n": len(x), "n_scales": len(a),
            "fastmoments_s": _time(lambda s=sigmas, w=wavelet: cwt(x, s, w)),
            "pywt_s": _time(lambda n=name: pywt.cwt(x, a, n, method="fft", precision=12)),
            "fastmoments_err_max": max(err_f), "fastmoments_err_median":
                statistics.median(err_f),
            "pywt_err_max": max(err_p), "pywt_err_median": statistics.median(err_p),
        }
        rows.append(row)
        print(row, flush=True)
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "threads": torch.get_num_threads(), "fastmoments": fastmoments.__version__,
        "pywt": pywt.__version__, "torch": torch.__version__, "numpy": np.__version__,
        "scales": "PyWavelets a = geomspace(4, 256, 32)", "note": args.note,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "signal_dog.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    lines = [
        "# Derivative-of-Gaussian CWT: fastmoments `cwt` against PyWavelets `cwt`",
        "",
        "The PPG recording (68476 samples, mean removed), PyWavelets' scales "
        "a = geomspace(4, 256, 32) and ours the same wavelets (σ = a/√2 for gaus1, a for "
        "mexh). Error: relative RMS against each library's own float64 convolution with "
        "the sampled wavelet, 8σ from the ends (median and largest over the scales). "
        "Times in s, median (min-max) of 3 runs.",
        "",
        f"Run: {info['date']}, {info['machine']}, {info['threads']} torch thread(s), "
        f"fastmoments {info['fastmoments']}, PyWavelets {info['pywt']}, torch "
        f"{info['torch']}. {args.note}",
        "",
        "| wavelet | fastmoments s | PyWavelets s | fastmoments error (median / max) "
        "| PyWavelets error (median / max) |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        f, p = r["fastmoments_s"], r["pywt_s"]
        lines.append(f"| {r['wavelet']} | {f[0]:.2f} ({f[1]:.2f}-{f[2]:.2f}) | {p[0]:.2f} "
                     f"({p[1]:.2f}-{p[2]:.2f}) | {r['fastmoments_err_median']:.1e} / "
                     f"{r['fastmoments_err_max']:.1e} | {r['pywt_err_median']:.1e} / "
                     f"{r['pywt_err_max']:.1e} |")
    (OUT / "signal_dog.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
