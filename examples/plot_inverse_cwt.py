"""
Inverting a scalogram
=====================

``fm.icwt`` takes the coefficients of ``fm.cwt`` back to the signal.
Two inverses: ``method="single-integral"`` (Morlet's sum over the scales, no FFT) and
``method="least-squares"`` (the exact inverse of the transform on the band the scales
cover). Neither recovers what the scales do not cover, nor the mean: ``icwt_band`` gives the
band-limited signal each one returns in exact arithmetic, the reference of the SNR below.

Here: the photoplethysmogram (PPG) that HeartPy ships (100 Hz) and a chirp.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import fastmoments as fm
from fastmoments.data import PPG_SAMPLING_RATE, ppg_recording
from fastmoments.signal import icwt, icwt_band


def snr(y, ref):
    return 10 * np.log10(np.sum(ref ** 2) / np.sum((y - ref) ** 2))


ppg = ppg_recording()[:6000].astype(float)
ppg -= ppg.mean()
n = 4096
chirp = np.cos(2 * np.pi * (0.005 * np.arange(n) + 0.08 * np.arange(n) ** 2 / (2 * n)))
scales = np.geomspace(2, 512, 129)  # 16 per octave

fig, axes = plt.subplots(2, 1, figsize=(9, 6))
signals = [("PPG", ppg, PPG_SAMPLING_RATE), ("chirp", chirp, 1.0)]
for ax, (name, x, fs) in zip(axes, signals, strict=True):
    coef, _ = fm.cwt(x, scales)
    t = np.arange(len(x)) / fs
    ax.plot(t, x, lw=1.5, color="0.7", label=name)
    for method, color in (("single-integral", "C0"), ("least-squares", "C1")):
        y = icwt(coef, scales, method=method)
        band = icwt_band(x, scales, method=method)
        print(f"{name}, {method}: {snr(y, band):.1f} dB to its band, {snr(y, x):.1f} dB to x")
        ax.plot(t, y, lw=0.8, color=color,
                label=f"{method}: {snr(y, band):.0f} dB to its band, {snr(y, x):.0f} dB to x")
    ax.set_xlim(t[0], t[min(len(t) - 1, 1500)])
    ax.legend(loc="upper right", fontsize=8)
axes[0].set_xlabel("time (s)")
axes[1].set_xlabel("sample")
fig.tight_layout()
