"""
Scalograms of real signals
==========================

``fastmoments.cwt`` returns ``(coefficients, frequencies)`` like ``pywt.cwt``. Here: the
electrocardiogram and the El Niño sea-surface-temperature record that PyWavelets ships, with
the cone of influence, inside which edge effects are small.

Scales are σ, the standard deviation of the Morlet wavelet's Gaussian envelope in samples;
the wavelet has unit energy at every scale. To compare with PyWavelets' ``cmorB-C`` wavelet at
scale ``a``: its envelope ``exp(-t²/(B a²))`` and carrier ``exp(2πiCt/a)`` are ours with
σ = a√(B/2) and ξ = πC√(2B).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pywt

import fastmoments as fm


def scalogram(ax, t, x, dt, scales, title, unit):
    coef, freqs = fm.cwt(x - x.mean(), scales, fm.Morlet(xi=6.0), sampling_period=dt)
    power = np.abs(coef) ** 2
    mesh = ax.pcolormesh(t, freqs, np.log10(power + power.max() * 1e-6), shading="auto",
                         cmap="viridis")
    ax.set_yscale("log")
    # cone of influence: e-folding time sqrt(2) * sigma of the Morlet envelope at each scale
    coi = np.sqrt(2) * np.asarray(scales) * dt
    ax.fill_betweenx(freqs, t[0], t[0] + coi, color="w", alpha=0.35, lw=0)
    ax.fill_betweenx(freqs, t[-1] - coi, t[-1], color="w", alpha=0.35, lw=0)
    ax.set_ylabel(f"frequency ({unit})")
    ax.set_title(title)
    plt.colorbar(mesh, ax=ax, label="log10 |W|²")


# %%
# Electrocardiogram (360 Hz)
# --------------------------
ecg = pywt.data.ecg().astype(float)
fs = 360.0
t = np.arange(len(ecg)) / fs
scales = np.geomspace(1.5, 60, 48)

# %%
# El Niño sea-surface temperature (quarterly)
# -------------------------------------------
years, sst = pywt.data.nino()
dt_years = float(years[1] - years[0])
scales_nino = np.geomspace(2, 40, 48)

fig, axes = plt.subplots(3, 1, figsize=(9, 9), height_ratios=[1, 2, 2])
axes[0].plot(t, ecg, lw=0.8)
axes[0].set_title("ECG (PyWavelets sample)")
axes[0].set_xlim(t[0], t[-1])
scalogram(axes[1], t, ecg, 1 / fs, scales, "ECG scalogram", "Hz")
axes[1].set_xlabel("time (s)")
scalogram(axes[2], years, np.asarray(sst, dtype=float), dt_years, scales_nino,
          "El Niño SST scalogram", "cycles / year")
axes[2].set_xlabel("year")
fig.tight_layout()

# %%
# Each scale's kernel is a fitted approximation; the plan reports its relative RMSE
plan = fm.CWT(scales, fm.Morlet(xi=6.0))
print(f"{len(plan.scales)} scales, largest kernel RMSE {max(p.rmse for p in plan.plans):.1e}")
