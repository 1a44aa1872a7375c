"""Wavelet CWTs against their peers: the derivatives of Gaussians against PyWavelets'
``gaus1`` and ``mexh``, and the generalized Morse wavelets against ssqueezepy's ``gmw``, on
the same scales (the PPG recording).

Each library is compared with the float64 convolution of the signal with its own sampled
wavelet, computed here by FFT with the reflect extension: ours ``Σ_k ψ_σ(k) x[n - k]``,
PyWavelets' the same wavelet half a sample later, ``ε Σ_k ψ_σ(k - 1/2) x[n - k]``
(:class:`fastmoments.signal.dog.DerivativeOfGaussian`, Notes). Error: relative RMS over the
samples ``8σ`` from the ends. Times: median (min-max) of 3 runs after one warm-up
(PyWavelets with ``method="fft"``, its faster method at these scales).

Morse: both libraries compute ``IFFT(√s Ψ(sω) FFT(x))`` over a period of the signal's
extension; ours with ``mode="wrap"`` against ssqueezepy with ``padtype=None`` (the same
period N, energy norm, ``l1_norm=False``), and ours with its default ``mode="reflect"``
(period 2N) against ssqueezepy's defaults (reflect padding to a power of two, bandpass
norm). Error: relative RMS against a float64 NumPy FFT of the same product written here
(wrap rows; float32 rows against the float64 reference). The *tail* table gives, for each
(β, γ), the half-width (in units of the scale) of the window outside which a Morse kernel
keeps 1e-4 (1e-6) of its RMS: the reason the Morse wavelets are not fitted by finite-window
sums (:mod:`fastmoments.signal.morse`).

Writes ``results/signal_dog.json`` and ``.md``.
Run: ``OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/signal_dog.py [--note TEXT]``.
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
from fastmoments.signal import GeneralizedMorse, cwt, from_pywt_dog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from signal_common import cpu_times

OUT = Path(__file__).parent / "results"
os.environ.setdefault("SSQ_PARALLEL", "0")  # ssqueezepy on one thread, as fastmoments



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


MORSE = ((20.0, 3.0), (60.0, 3.0))
MORSE_SCALES = np.geomspace(1.5, 2000.0, 64)


def _morse_reference(x: np.ndarray, wavelet: GeneralizedMorse) -> np.ndarray:
    """``IFFT_N(√s Ψ(s ω_k) FFT_N(x))`` (the wrap mode), float64 NumPy, Nyquist halved."""
    n = len(x)
    omega = 2 * np.pi * np.fft.fftfreq(n)
    spec = np.fft.fft(x)
    out = np.empty((len(MORSE_SCALES), n), dtype=np.complex128)
    for i, s in enumerate(MORSE_SCALES):
        r = (2 * wavelet.beta + 1) / wavelet.gamma
        log_a = 0.5 * (math.log(2 * math.pi * wavelet.gamma) + r * math.log(2)
                       - math.lgamma(r))
        u = s * np.where(omega > 0, omega, 1.0)
        h = np.where(omega > 0, math.sqrt(s) * np.exp(log_a + wavelet.beta * np.log(u)
                                                      - u ** wavelet.gamma), 0.0)
        if n % 2 == 0:
            h[n // 2] = 0.5 * math.sqrt(s) * math.exp(
                log_a + wavelet.beta * math.log(s * math.pi) - (s * math.pi) ** wavelet.gamma)
        out[i] = np.fft.ifft(spec * h)
    return out


def _morse_reflect_reference(x: np.ndarray, wavelet: GeneralizedMorse) -> np.ndarray:
    """The reflect CWT: ``IFFT_2N(√s Ψ(s ω_k) FFT_2N(x, reversed x))[:N]``, float64 NumPy."""
    n = len(x)
    omega = 2 * np.pi * np.fft.fftfreq(2 * n)
    spec = np.fft.fft(np.concatenate([x, x[::-1]]))
    return np.stack([np.fft.ifft(spec * wavelet.frequency_response(omega, s))[:n]
                     for s in MORSE_SCALES])


def _tail_radius(beta: float, gamma: float) -> dict:
    """Half-widths (in scales) holding all but 1e-4 and 1e-6 of a Morse kernel's RMS, from
    its samples at scale 64 on a grid of 2^20."""
    m, s = 1 << 20, 64.0
    w = GeneralizedMorse(beta, gamma)
    psi = np.fft.ifft(w.frequency_response(2 * np.pi * np.fft.fftfreq(m), s))
    e = np.abs(np.fft.fftshift(psi)) ** 2
    t = np.abs(np.arange(m) - m // 2) / s
    order = np.argsort(t, kind="stable")
    left = np.sqrt(np.maximum(e.sum() - np.cumsum(e[order]), 0.0) / e.sum())
    out = {"beta": beta, "gamma": gamma, "P": math.sqrt(beta * gamma)}
    for eps in (1e-4, 1e-6):
        hit = np.flatnonzero(left < eps)
        out[f"radius_{eps:.0e}"] = float(t[order][hit[0]]) if hit.size else None
    return out


def _morse_case(sq, xd: np.ndarray, w: GeneralizedMorse, ref: np.ndarray,
                ref_reflect: np.ndarray) -> dict:
    """Times and errors of one (β, γ) and dtype."""
    dtype = str(xd.dtype)
    params = {"beta": w.beta, "gamma": w.gamma, "dtype": dtype}
    energy = sq.Wavelet(("gmw", {**params, "norm": "energy"}))
    band = sq.Wavelet(("gmw", {**params, "norm": "bandpass"}))
    scales = MORSE_SCALES.astype(dtype)
    ours = cwt(xd, MORSE_SCALES, w, mode="wrap")[0]
    theirs = np.asarray(sq.cwt(xd, energy, scales=scales, l1_norm=False, padtype=None)[0])
    norm = float(np.linalg.norm(ref))
    return {
        "beta": w.beta, "gamma": w.gamma, "dtype": dtype, "n": len(xd),
        "n_scales": len(MORSE_SCALES),
        "fastmoments_wrap_s": _time(lambda: cwt(xd, MORSE_SCALES, w, mode="wrap")),
        "ssqueezepy_nopad_s": _time(lambda: sq.cwt(xd, energy, scales=scales, l1_norm=False,
                                                   padtype=None)),
        "fastmoments_reflect_s": _time(lambda: cwt(xd, MORSE_SCALES, w)),
        "ssqueezepy_default_s": _time(lambda: sq.cwt(xd, band, scales=scales)),
        "fastmoments_err": float(np.linalg.norm(ours - ref)) / norm,
        "ssqueezepy_err": float(np.linalg.norm(theirs - ref)) / norm,
        "fastmoments_reflect_err": float(np.linalg.norm(cwt(xd, MORSE_SCALES, w)[0]
                                                        - ref_reflect))
        / float(np.linalg.norm(ref_reflect)),
    }


def _morse_rows() -> tuple[list[dict], list[dict], str]:
    import ssqueezepy as sq

    x = ppg_recording().astype(np.float64)
    x -= x.mean()
    rows = []
    for beta, gamma in MORSE:
        w = GeneralizedMorse(beta, gamma)
        ref = _morse_reference(x, w)
        ref_reflect = _morse_reflect_reference(x, w)
        for dtype in ("float64", "float32"):
            rows.append(_morse_case(sq, x.astype(dtype), w, ref, ref_reflect))
            print(rows[-1], flush=True)
    tails = [_tail_radius(b, g) for b, g in ((20.0, 3.0), (60.0, 3.0), (3.0, 3.0),
                                             (1.0, 3.0), (20.0, 2.0), (30.0, 6.0))]
    return rows, tails, sq.__version__


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
    morse, tails, sq_version = _morse_rows()
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "threads": torch.get_num_threads(), "fastmoments": fastmoments.__version__,
        "pywt": pywt.__version__, "ssqueezepy": sq_version, "torch": torch.__version__,
        "numpy": np.__version__,
        "scales": "PyWavelets a = geomspace(4, 256, 32)", "note": args.note,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "signal_dog.json").write_text(json.dumps(
        {"info": info, "rows": rows, "morse": morse, "morse_tails": tails}, indent=1))
    lines = [
        "# Wavelet CWTs: derivatives of Gaussians against PyWavelets, generalized Morse "
        "against ssqueezepy",
        "",
        "## Derivative of Gaussian: fastmoments `cwt` against PyWavelets `cwt`",
        "",
        "The PPG recording (68476 samples, mean removed), PyWavelets' scales "
        "a = geomspace(4, 256, 32) and ours the same wavelets (σ = a/√2 for gaus1, a for "
        "mexh). Error: relative RMS against each library's own float64 convolution with "
        "the sampled wavelet, 8σ from the ends (median and largest over the scales). "
        "Times in s, median (min-max) of 3 runs.",
        "",
        f"Run: {info['date']}, {info['machine']}, {info['threads']} torch thread(s), "
        f"fastmoments {info['fastmoments']}, PyWavelets {info['pywt']}, ssqueezepy "
        f"{info['ssqueezepy']}, torch "
        f"{info['torch']}, load average {os.getloadavg()[0]:.1f}. {args.note}",
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
    lines += [
        "",
        "## Generalized Morse: fastmoments `cwt(..., GeneralizedMorse(β, γ))` against "
        "ssqueezepy `cwt(..., Wavelet(('gmw', ...)))`",
        "",
        f"The same recording, {len(MORSE_SCALES)} scales geomspace(1.5, 2000). *wrap / no "
        "pad*: ours `mode=\"wrap\"` against ssqueezepy `padtype=None` (the same period N, "
        "energy norm, `l1_norm=False`); *defaults*: ours `mode=\"reflect\"` (period 2N) "
        "against ssqueezepy's reflect padding to a power of two (bandpass norm). Error: "
        "relative RMS of the wrap coefficients against a float64 NumPy FFT reference, and of "
        "our reflect coefficients (on the CPU: real transforms of N points, "
        "`signal.morse`) against a NumPy FFT of the period 2N. Times in s, median "
        "(min-max) of 3 runs; both libraries on one thread (ssqueezepy with "
        f"SSQ_PARALLEL={os.environ['SSQ_PARALLEL']}).",
        "",
        "| β, γ | dtype | fastmoments wrap s | ssqueezepy no pad s | fastmoments reflect s "
        "| ssqueezepy default s | fastmoments error | ssqueezepy error "
        "| fastmoments reflect error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in morse:
        t = [r[k] for k in ("fastmoments_wrap_s", "ssqueezepy_nopad_s",
                            "fastmoments_reflect_s", "ssqueezepy_default_s")]
        lines.append(f"| {r['beta']:g}, {r['gamma']:g} | {r['dtype']} | "
                     + " | ".join(f"{v[0]:.2f} ({v[1]:.2f}-{v[2]:.2f})" for v in t)
                     + f" | {r['fastmoments_err']:.1e} | {r['ssqueezepy_err']:.1e} | "
                     f"{r['fastmoments_reflect_err']:.1e} |")
    lines += [
        "",
        "Morse kernels in time: the half-width, in units of the scale, outside which a kernel "
        "keeps 1e-4 (1e-6) of its RMS (scale 64, grid of 2^20; '-' beyond the grid).",
        "",
        "| β, γ | P = √(βγ) | radius 1e-4 | radius 1e-6 |",
        "|---|---|---|---|",
    ]
    for r in tails:
        a, b = r["radius_1e-04"], r["radius_1e-06"]
        lines.append(f"| {r['beta']:g}, {r['gamma']:g} | {r['P']:.2f} | "
                     f"{'-' if a is None else f'{a:.1f}'} | {'-' if b is None else f'{b:.1f}'} |")
    (OUT / "signal_dog.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
