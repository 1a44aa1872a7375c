"""
Smoothing a recording with missing samples
==========================================

A sensor drops samples: they are NaN. ``gaussian_filter1d(..., nan_policy=...)`` smooths
around them.
``nan_policy="omit"`` is normalised convolution, ``G*(x m) / G*m`` with ``m`` the mask of the
samples present (NaN where less than ``min_weight`` of the kernel's weight is on data);
``nan_policy="propagate"`` marks every output whose kernel support touches a missing sample.
A recording that does not fit in memory is smoothed chunk by chunk by ``GaussianFilter.stream()``,
equal to the one-shot filter.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from fastmoments.data import PPG_SAMPLING_RATE, ppg_recording
from fastmoments.signal import GaussianFilter, gaussian_filter1d

x = ppg_recording()[:3000].astype(float)
rng = np.random.default_rng(0)
gappy = x.copy()
gappy[rng.random(len(x)) < 0.1] = np.nan  # 10 % of the samples lost at random
gappy[1200:1260] = np.nan                 # and a gap of 0.6 s
t = np.arange(len(x)) / PPG_SAMPLING_RATE

omit = gaussian_filter1d(gappy, 4.0, nan_policy="omit")
prop = gaussian_filter1d(gappy, 4.0, nan_policy="propagate")
print(f"NaN outputs: omit {np.isnan(omit).mean():.1%} (the middle of the gap), "
      f"propagate {np.isnan(prop).mean():.1%} (a missing sample in almost every window)")
gap_only = x.copy()
gap_only[1200:1260] = np.nan
omit_gap = gaussian_filter1d(gap_only, 4.0, nan_policy="omit")
prop_gap = gaussian_filter1d(gap_only, 4.0, nan_policy="propagate")

# chunk by chunk: the same result as the one-shot filter
stream = GaussianFilter(4.0, method="direct").stream()
chunks = [stream.push(x[i:i + 250]) for i in range(0, len(x), 250)] + [stream.flush()]
print("stream delay:", stream.delay, "samples; largest difference to the one-shot filter:",
      float(np.max(np.abs(np.concatenate(chunks)
                          - gaussian_filter1d(x, 4.0, method="direct")))))

fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
axes[0].plot(t, gappy, ".", ms=2, color="0.6", label="samples present (10 % lost, one gap)")
axes[0].plot(t, omit, lw=1.2, label='nan_policy="omit"')
axes[1].plot(t, gap_only, ".", ms=2, color="0.6", label="samples present (one gap)")
axes[1].plot(t, omit_gap, lw=1.2, label='nan_policy="omit"')
axes[1].plot(t, prop_gap, lw=1.2, label='nan_policy="propagate"')
axes[1].set_xlim(10, 16)
axes[1].set_xlabel("time (s)")
for ax in axes:
    ax.legend(fontsize=8, loc="upper right")
fig.tight_layout()
