"""
Three wavelets and a decimated scalogram
========================================

``fm.cwt`` takes the Morlet (the default), the derivatives of Gaussians
(``DerivativeOfGaussian(1)``, and ``MexicanHat()`` = order 2, PyWavelets' ``mexh``) and the
generalized Morse wavelets (``GeneralizedMorse(beta, gamma)``, ssqueezepy's ``gmw``), on the
same scales as PyWavelets and ssqueezepy. Each wavelet's scale ``s`` has its own centre
frequency, so the scales below are chosen per wavelet to cover the same band: the Morlet by
``scales_for_band``, the Mexican hat at ``σ = √2 / (2π f)`` samples (its spectrum peaks at
``√2 / (2π σ)`` cycles per sample) and the Morse wavelet at ``s = ω_p / (2π f)`` (its peak
``ω_p`` radians per unit of scale). The real Mexican hat follows the signal's phase; the
analytic Morlet and Morse wavelets give a smooth magnitude.

``hop=h`` keeps every ``h``-th sample of the scalogram, in time and memory proportional to
``N / h``: the kept samples equal those of the full transform to rounding.

Here: the photoplethysmogram (PPG) that HeartPy ships (100 Hz) and a chirp.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import fastmoments as fm
from fastmoments.data import PPG_SAMPLING_RATE, ppg_recording
from fastmoments.signal import GeneralizedMorse, MexicanHat, Morlet, scales_for_band

ppg = ppg_recording()[:3000].astype(float)
ppg -= ppg.mean()
n = 4096
chirp = np.cos(2 * np.pi * (0.005 * np.arange(n) + 0.08 * np.arange(n) ** 2 / (2 * n)))
signals = [("PPG", ppg, 0.3 / PPG_SAMPLING_RATE, 8.0 / PPG_SAMPLING_RATE), ("chirp", chirp,
                                                                           0.003, 0.12)]
morse = GeneralizedMorse(20, 3)
wavelets = [
    ("Morlet (ξ = 6)", Morlet(), lambda f: scales_for_band(f.min(), f.max(), num=len(f))),
    ("Mexican hat", MexicanHat(), lambda f: np.sqrt(2) / (2 * np.pi * f[::-1])),
    ("Morse (β = 20, γ = 3)", morse, lambda f: morse.peak_frequency / (2 * np.pi * f[::-1])),
]

fig, axes = plt.subplots(len(wavelets), 2, figsize=(10, 7.5), sharex="col")
for col, (name, x, f_lo, f_hi) in enumerate(signals):
    band = np.geomspace(f_lo, f_hi, 64)  # cycles per sample
    for row, (wname, wavelet, scales_of) in enumerate(wavelets):
        scales = scales_of(band)
        coef, freqs = fm.cwt(x, scales, wavelet)
        ax = axes[row, col]
        fs = PPG_SAMPLING_RATE if name == "PPG" else 1.0
        ax.pcolormesh(np.arange(len(x)) / fs, np.asarray(freqs) * fs, np.abs(coef),
                      shading="auto", cmap="magma")
        ax.set_yscale("log")
        ax.set_title(f"{name}, {wname}", fontsize=9)
        ax.set_ylabel("Hz" if name == "PPG" else "cycles / sample", fontsize=8)
axes[-1, 0].set_xlabel("time (s)")
axes[-1, 1].set_xlabel("sample")
fig.tight_layout()

# %%
# A decimated scalogram: ``hop=16`` computes every 16th sample only.
scales = scales_for_band(0.3 / PPG_SAMPLING_RATE, 8.0 / PPG_SAMPLING_RATE, num=64)
full, _ = fm.cwt(ppg, scales)
kept, freqs = fm.cwt(ppg, scales, hop=16)
print("hop=1:", full.shape, "hop=16:", kept.shape,
      "largest difference at the kept samples, relative:",
      f"{np.abs(kept - full[:, ::16]).max() / np.abs(full).max():.1e}")

fig, ax = plt.subplots(figsize=(9, 3))
ax.pcolormesh(np.arange(0, len(ppg), 16) / PPG_SAMPLING_RATE,
              np.asarray(freqs) * PPG_SAMPLING_RATE, np.abs(kept), shading="auto",
              cmap="magma")
ax.set_yscale("log")
ax.set_xlabel("time (s)")
ax.set_ylabel("Hz")
ax.set_title("PPG, Morlet, hop = 16", fontsize=9)
fig.tight_layout()
plt.show()
