"""Inverse CWT round trips: fastmoments ``cwt`` + ``icwt`` against ssqueezepy's ``cwt`` +
``icwt`` (Morlet, ξ = μ = 6, the same scales) on the PPG recording and on a chirp, in
float64 and in float32 (each library computing in the signal's dtype; ssqueezepy's own
default is float32).

ssqueezepy's Morlet at scale ``s`` has the transform ``exp(-(sω - μ)²/2)`` (minus its
admissibility term), ours at σ the same with ξ = μ: the scales are the same numbers. Each
library inverts its own coefficients (ssqueezepy: its single integral, ``one_int=True``, the
default; fastmoments: least squares and the single integral). SNR (dB) of the reconstruction
against the signal without its mean (no wavelet transform keeps the mean) and against the
band-limited signal that the inverse returns in exact arithmetic (``icwt_band`` of the
method; for ssqueezepy's single integral, the same formula's band as fastmoments').
Times: median (min-max) of the forward transform alone, of the inverse alone and of the round
trip (forward + inverse). Both libraries on one thread: ssqueezepy's FFTs (scipy.fft) take
every core unless ``SSQ_PARALLEL=0``, which this script sets.
Writes ``results/signal_icwt.json`` and ``.md``.
Run: ``OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/signal_icwt.py [--note TEXT]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
from pathlib import Path

import numpy as np
import torch

import fastmoments
from fastmoments.data import ppg_recording
from fastmoments.signal import Morlet, cwt, icwt, icwt_band

sys.path.insert(0, str(Path(__file__).resolve().parent))
from signal_common import cpu_times

OUT = Path(__file__).parent / "results"
os.environ.setdefault("SSQ_PARALLEL", "0")  # ssqueezepy on one thread, as fastmoments


def _time(fn, repeat: int = 3) -> tuple[float, float, float]:
    return cpu_times(fn, repeat)


def _snr(y: np.ndarray, ref: np.ndarray) -> float:
    return 10 * math.log10(float(np.sum(ref ** 2) / np.sum((y - ref) ** 2)))


def _signals() -> dict[str, np.ndarray]:
    ppg = ppg_recording().astype(np.float64)
    n = 65536
    t = np.arange(n)
    chirp = np.cos(2 * np.pi * (0.002 * t + 0.1 * t * t / (2 * n)))
    return {"ppg": ppg - ppg.mean(), "chirp": chirp - chirp.mean()}


def _row(ssq, name, dtype, x, x64, scales, wav, sq_wavelet, bands) -> dict:
    """Times and SNRs of one signal in one dtype."""
    coef, _ = cwt(x, scales, wav)
    row = {"signal": name, "dtype": dtype, "n": len(x), "n_scales": len(scales),
           "fm_forward_s": _time(lambda: cwt(x, scales, wav))}
    for method in ("least-squares", "single-integral"):
        y = icwt(coef, scales, wav, method=method).astype(np.float64)
        row[f"fm_{method}_snr_x"] = _snr(y, x64)
        row[f"fm_{method}_snr_band"] = _snr(y, bands[method])
        row[f"fm_{method}_inverse_s"] = _time(
            lambda m=method, c=coef: icwt(c, scales, wav, method=m))
        row[f"fm_{method}_round_trip_s"] = _time(
            lambda m=method: icwt(cwt(x, scales, wav)[0], scales, wav, method=m))
    del coef
    wx, _ = ssq.cwt(x, sq_wavelet, scales=scales, astensor=False)
    ys = np.asarray(ssq.icwt(wx, sq_wavelet, scales=scales, one_int=True), dtype=np.float64)
    row["ssq_dtype"] = str(wx.dtype)
    row["ssq_snr_x"] = _snr(ys, x64)
    row["ssq_snr_band"] = _snr(ys, bands["single-integral"])
    row["ssq_inverse_s"] = _time(
        lambda w=wx: ssq.icwt(w, sq_wavelet, scales=scales, one_int=True))
    del wx
    row["ssq_forward_s"] = _time(lambda: ssq.cwt(x, sq_wavelet, scales=scales, astensor=False))
    row["ssq_round_trip_s"] = _time(lambda: ssq.icwt(
        ssq.cwt(x, sq_wavelet, scales=scales, astensor=False)[0], sq_wavelet, scales=scales,
        one_int=True))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    import ssqueezepy as ssq

    scales = np.geomspace(2.0, 1024.0, 145)  # 16 per octave
    wav = Morlet(6.0)
    rows = []
    for name, x64 in _signals().items():
        bands = {m: icwt_band(x64, scales, wav, method=m)
                 for m in ("least-squares", "single-integral")}
        for dtype in ("float64", "float32"):
            # ssqueezepy computes in float32 unless told: each library in the signal's dtype
            sq_wavelet = ssq.Wavelet(("morlet", {"mu": 6.0, "dtype": dtype}))
            x = x64.astype(dtype)
            rows.append(_row(ssq, name, dtype, x, x64, scales, wav, sq_wavelet, bands))
            print(rows[-1], flush=True)
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "threads": torch.get_num_threads(), "fastmoments": fastmoments.__version__,
        "ssqueezepy": ssq.__version__, "ssq_parallel": os.environ["SSQ_PARALLEL"],
        "torch": torch.__version__, "numpy": np.__version__,
        "load_average": os.getloadavg(),
        "scales": "geomspace(2, 1024, 145)", "note": args.note,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "signal_icwt.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    lines = [
        "# Inverse CWT round trips: fastmoments against ssqueezepy (Morlet ξ = 6)",
        "",
        "Scales σ = geomspace(2, 1024, 145) (16 per octave), reflect boundary; each signal "
        "in float64 and in float32, each library computing in the signal's dtype "
        "(ssqueezepy's `Wavelet(..., dtype=...)`: its default is float32). SNR in "
        "dB against the signal without its mean (*x*) and against the band-limited signal "
        "the method returns in exact arithmetic (*band*: `icwt_band`; for ssqueezepy the "
        "single integral's). Times in s, "
        "median (min-max) of 3 runs after one warm-up; *forward s*: the CWT alone, the same "
        "for both inverses; *ratio*: ssqueezepy's round trip over this one. Both libraries on "
        f"one thread (ssqueezepy with SSQ_PARALLEL={info['ssq_parallel']}).",
        "",
        f"Run: {info['date']}, {info['machine']}, {info['threads']} torch thread(s), "
        f"fastmoments {info['fastmoments']}, ssqueezepy {info['ssqueezepy']}, torch "
        f"{info['torch']}, load average {info['load_average'][0]:.1f}. {args.note}",
        "",
        "| signal | dtype | inverse | SNR x | SNR band | forward s | inverse s | round trip s "
        "| ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def fmt(t):
        return f"{t[0]:.3f} ({t[1]:.3f}-{t[2]:.3f})"

    for r in rows:
        label = f"{r['signal']} ({r['n']}) | {r['dtype']}"
        for method in ("least-squares", "single-integral"):
            p = f"fm_{method}"
            ratio = r["ssq_round_trip_s"][0] / r[p + "_round_trip_s"][0]
            lines.append(f"| {label} | fastmoments {method} | {r[p + '_snr_x']:.1f} | "
                         f"{r[p + '_snr_band']:.1f} | {fmt(r['fm_forward_s'])} | "
                         f"{fmt(r[p + '_inverse_s'])} | {fmt(r[p + '_round_trip_s'])} | "
                         f"{ratio:.2f} |")
        lines.append(f"| {label} | ssqueezepy one_int | {r['ssq_snr_x']:.1f} | "
                     f"{r['ssq_snr_band']:.1f} | {fmt(r['ssq_forward_s'])} | "
                     f"{fmt(r['ssq_inverse_s'])} | {fmt(r['ssq_round_trip_s'])} | 1 |")
    (OUT / "signal_icwt.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
