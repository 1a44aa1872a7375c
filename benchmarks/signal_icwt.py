"""Inverse CWT round trips: fastmoments ``cwt`` + ``icwt`` against ssqueezepy's ``cwt`` +
``icwt`` (Morlet, ξ = μ = 6, the same scales) on the PPG recording and on a chirp.

ssqueezepy's Morlet at scale ``s`` has the transform ``exp(-(sω - μ)²/2)`` (minus its
admissibility term), ours at σ the same with ξ = μ: the scales are the same numbers. Each
library inverts its own coefficients (ssqueezepy: its single integral, ``one_int=True``, the
default; fastmoments: least squares and the single integral). SNR (dB) of the reconstruction
against the signal without its mean (no wavelet transform keeps the mean) and against the
band-limited signal that the inverse returns in exact arithmetic (``icwt_band`` of the
method; for ssqueezepy's single integral, the same formula's band as fastmoments').
Times: median (min-max) of the round trip (forward + inverse) and of the inverse alone.
Writes ``results/signal_icwt.json`` and ``.md``.
Run: ``OMP_NUM_THREADS=1 python benchmarks/signal_icwt.py [--note TEXT]``.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    import ssqueezepy as ssq

    scales = np.geomspace(2.0, 1024.0, 145)  # 16 per octave
    wav = Morlet(6.0)
    sq_wavelet = ssq.Wavelet(("morlet", {"mu": 6.0}))
    rows = []
    for name, x in _signals().items():
        bands = {m: icwt_band(x, scales, wav, method=m)
                 for m in ("least-squares", "single-integral")}
        coef, _ = cwt(x, scales, wav)
        row = {"signal": name, "n": len(x), "n_scales": len(scales)}
        for method in ("least-squares", "single-integral"):
            y = icwt(coef, scales, wav, method=method)
            row[f"fm_{method}_snr_x"] = _snr(y, x)
            row[f"fm_{method}_snr_band"] = _snr(y, bands[method])
            row[f"fm_{method}_inverse_s"] = _time(
                lambda m=method, c=coef: icwt(c, scales, wav, method=m))
            row[f"fm_{method}_round_trip_s"] = _time(
                lambda m=method, x=x: icwt(cwt(x, scales, wav)[0], scales, wav, method=m))
        wx, _ = ssq.cwt(x, sq_wavelet, scales=scales, astensor=False)
        ys = ssq.icwt(wx, sq_wavelet, scales=scales, one_int=True)
        row["ssq_snr_x"] = _snr(ys, x)
        row["ssq_snr_band"] = _snr(ys, bands["single-integral"])
        row["ssq_inverse_s"] = _time(lambda w=wx: ssq.icwt(w, sq_wavelet, scales=scales,
                                                           one_int=True))
        row["ssq_round_trip_s"] = _time(lambda x=x: ssq.icwt(
            ssq.cwt(x, sq_wavelet, scales=scales, astensor=False)[0], sq_wavelet,
            scales=scales, one_int=True))
        rows.append(row)
        print(row, flush=True)
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "threads": torch.get_num_threads(), "fastmoments": fastmoments.__version__,
        "ssqueezepy": ssq.__version__, "torch": torch.__version__, "numpy": np.__version__,
        "scales": "geomspace(2, 1024, 145)", "note": args.note,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "signal_icwt.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    lines = [
        "# Inverse CWT round trips: fastmoments against ssqueezepy (Morlet ξ = 6)",
        "",
        "Scales σ = geomspace(2, 1024, 145) (16 per octave), reflect boundary, float64. SNR in "
        "dB against the signal without its mean (*x*) and against the band-limited signal "
        "the method returns in exact arithmetic (*band*: `icwt_band`; for ssqueezepy the "
        "single integral's). Times in s, "
        "median (min-max) of 3 runs after one warm-up.",
        "",
        f"Run: {info['date']}, {info['machine']}, {info['threads']} torch thread(s), "
        f"fastmoments {info['fastmoments']}, ssqueezepy {info['ssqueezepy']}, torch "
        f"{info['torch']}. {args.note}",
        "",
        "| signal | inverse | SNR x | SNR band | inverse s | round trip s |",
        "|---|---|---|---|---|---|",
    ]

    def fmt(t):
        return f"{t[0]:.3f} ({t[1]:.3f}-{t[2]:.3f})"

    for r in rows:
        label = f"{r['signal']} ({r['n']})"
        for method in ("least-squares", "single-integral"):
            p = f"fm_{method}"
            lines.append(f"| {label} | fastmoments {method} | {r[p + '_snr_x']:.1f} | "
                         f"{r[p + '_snr_band']:.1f} | {fmt(r[p + '_inverse_s'])} | "
                         f"{fmt(r[p + '_round_trip_s'])} |")
        lines.append(f"| {label} | ssqueezepy one_int | {r['ssq_snr_x']:.1f} | "
                     f"{r['ssq_snr_band']:.1f} | {fmt(r['ssq_inverse_s'])} | "
                     f"{fmt(r['ssq_round_trip_s'])} |")
    (OUT / "signal_icwt.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
