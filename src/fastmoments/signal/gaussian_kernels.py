"""The Gaussian filters' kernels: the SFT bank fitted to the Gaussian (with its exact low
moments), the truncated kernel of the direct FIR and its half, and the radius that
``method="auto"`` widens it to.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .coefficients import discrete_gaussian_kernel, fit_gaussian
from .direct import DirectBank
from .fir import half_kernel
from .folded import truncation_radius
from .routes import AUTO_TAIL_RMSE, WIDE_RADIUS
from .sliding import SFTBank

__all__ = ["DIRECT_BELOW", "MAX_SIGMA", "auto_radius"]


# the largest σ a plan is built for: its SFT fit grows with σ (2.5 min and ~0.5 GB of float64
# tables at σ = 1e6 on the development CPU; built only for signals longer than 4σ) and so does
# the folded kernel's O(10σ) sum (~0.15 s at 2^20, once per length and mode)
MAX_SIGMA = float(2**20)


# σ below which the filters apply their (few-sample) kernel directly, whatever the method: the
# ASFT's attenuation e^{n0 k/σ²} over [-K, K] costs float64 digits there (a constant came
# out 4e-9 off at σ = 0.5), and 2⌈4σ⌉ + 1 ≤ 9 taps cost less than an SFT bank
DIRECT_BELOW = 1.0


def auto_radius(sigma: float, order: int, truncate: float = 4.0) -> int:
    """Half-width ``W`` of the direct kernel that ``method="auto"`` applies: the smallest
    ``W ≥ ceil(truncate σ)`` (scipy's truncation or longer) whose truncated tail has relative
    RMSE ≤ :data:`~fastmoments.signal.routes.AUTO_TAIL_RMSE` (70% of it, a margin for the moment
    correction) and at most
    half that of scipy's radius ``round(truncate σ)`` against the untruncated kernel, so that
    picking the FIR costs accuracy neither against the SFT nor against scipy (about 14% more
    taps than scipy's at large σ).

    >>> auto_radius(1.0, 0), auto_radius(10.0, 0), auto_radius(10.0, 2)
    (5, 45, 52)
    """
    return _auto_radius(float(sigma), int(order), float(truncate))


@functools.lru_cache(maxsize=512)
def _auto_radius(sigma: float, order: int, truncate: float) -> int:
    w0 = truncation_radius(sigma, truncate)
    wmax = max(w0, math.ceil(12 * sigma) + 2)
    j = np.arange(0, wmax + 1, dtype=np.float64)
    h2 = discrete_gaussian_kernel(j, sigma, order) ** 2
    h2[1:] *= 2  # both sides
    total = float(h2.sum())
    if not total > 0:
        return w0
    # energy beyond |k| = W, summed from the far end (no cancellation for tiny tails)
    tail = np.append(np.cumsum(h2[::-1])[::-1][1:], 0.0)
    # below the SFT's error, and at most half scipy's own truncation error (its radius
    # round(truncate σ)): the moment correction of a short kernel adds an error of the
    # tail's size, which would otherwise leave the FIR less accurate than scipy at σ ≈ 0.5
    w_scipy = min(int(truncate * sigma + 0.5), wmax)
    target = min((0.7 * AUTO_TAIL_RMSE) ** 2 * total, 0.25 * float(tail[w_scipy]))
    ok = np.nonzero(tail <= target)[0]
    return max(w0, int(ok[0]) if len(ok) else wmax)


@functools.lru_cache(maxsize=512)
def _auto_truncate(sigma: float, order: int, truncate: float) -> float:
    w = _auto_radius(sigma, order, truncate)
    if w <= truncation_radius(sigma, truncate):
        return truncate
    return (w - 0.5) / sigma  # ceil((w - 0.5)/σ · σ) = w


@functools.lru_cache(maxsize=512)
def _half_kernel(sigma: float, order: int, truncate: float, dtype: str) -> tuple[np.ndarray,
                                                                                  bool]:
    """The direct kernel's half ``h[0..W]`` in ``dtype`` (a NumPy dtype or its character
    code) and its parity (cached)."""
    hh, odd = half_kernel(_gaussian_bank(sigma, order, "direct", 1, 0, truncate).taps[0])
    if np.dtype(dtype) != np.float32 or len(hh) - 1 > WIDE_RADIUS:
        hh = hh.astype(dtype)
    hh.setflags(write=False)
    return hh, odd


def _moment_map(sigma: float, order: int, j: np.ndarray, columns: Any,
                weights: np.ndarray) -> np.ndarray:
    """Weights of a kernel of ``order`` corrected to keep the target's low moments exactly.

    The kernel is ``h = Σ_c w_c φ_c`` on the offsets ``j`` (its whole support); ``columns(j)``
    gives the ``φ_c`` (``None``: the taps themselves, ``h = w``). The result keeps the
    moments ``μ_m = Σ_j j^m h[j]`` of the target
    :func:`~fastmoments.signal.coefficients.discrete_gaussian_kernel`
    (:func:`~fastmoments.signal.coefficients.target_moments`) exactly for ``m = 0, 1``
    (order 0: ``Σ h0 = 1``, ``Σ j h0 = 0``), ``m = 0, 1`` (order 1: ``Σ h1 = 0``,
    ``Σ j h1 = -1``) and ``m = 0, 1, 2`` (order 2: ``Σ h2 = Σ j h2 = 0``, ``Σ j² h2 = 2``),
    the values from σ = 4 on; below, the discrete kernel's own (Poisson terms < 1e-7 from
    σ = 1 on). With ``y[n] = Σ_j h[j] x[n - j]``, constants pass unchanged (order 0) or give
    0, the ramp ``x = n`` gives ``+1`` (order 1, the sign of scipy.ndimage's
    ``gaussian_filter1d(order=1)``) and ``n²`` gives 2 (order 2), to rounding.

    The change is the smallest in the kernel's L2 norm
    (:func:`~fastmoments.signal.coefficients.constrain_moments`); for the plain SFT this is
    the equality-constrained least-squares fit. Its cost, measured at σ = 16-1000 with the
    default terms: the relative RMSE of G_D goes from 2.05e-5 to 2.23e-5 and that of G_DD
    from 8.9e-5 to 9.4e-5 (G: 6.4e-5 to 6.2e-5); the error on a random walk went from up to
    1.2x to at most 0.5x the (new) RMSE.
    """
    from .coefficients import constrain_moments, target_moments

    target = target_moments(sigma, order)[:max(2, order + 1)]
    scale = max(sigma, 1.0)  # target_moments' units: (j / scale)^m
    if columns is None:  # free taps: Δh = Uᵀ (U Uᵀ)⁻¹ r, U[m] = (j/scale)^m
        u = np.stack([(j / scale) ** m for m in range(len(target))])
        resid = target - u @ weights
        return weights + u.T @ np.linalg.solve(u @ u.T, resid)
    return constrain_moments(columns, weights, j, scale, target)


@functools.lru_cache(maxsize=256)
def _gaussian_bank(sigma, order, method, terms, shift, truncate, exact_moments=True):
    """The bank of one Gaussian plan (``exact_moments=False``: the paper's raw fit, without
    :func:`_moment_map`, as its Table 1 measures it)."""
    if method in ("direct", "direct-moments"):
        w = math.ceil(truncate * sigma)
        j = np.arange(-w, w + 1, dtype=np.float64)
        # normalised over the truncated support as scipy.ndimage does: orders 0 and 1 are
        # scipy's gaussian_filter1d kernels exactly (method="direct" is scipy's filter); the
        # second derivative's loses its sum times h0, h2 = (k² - M2/S) g / (σ⁴ S), so that
        # constants and ramps give 0 (the kernel of the folded path, :mod:`.folded`). The few-
        # sample kernels that the SFT methods apply below σ = 1 ("direct-moments") keep the
        # target's low moments exactly, as the fitted kernels do (:func:`_moment_map`).
        if method == "direct-moments":
            taps = discrete_gaussian_kernel(j, sigma, order)
            if exact_moments and len(j) >= 3:
                taps = _moment_map(sigma, order, j, None, taps)
        else:
            with np.errstate(over="ignore", under="ignore", invalid="ignore",
                             divide="ignore"):
                g = np.exp(-0.5 * (j / sigma) ** 2)
                s = float(np.sum(g))
                if order == 0:
                    taps = g / s
                elif order == 1:
                    taps = -j * g / (sigma**2 * s)
                elif exact_moments:
                    taps = (j**2 - float(np.sum(j**2 * g)) / s) * g / (sigma**4 * s)
                else:  # scipy's own second-derivative kernel
                    taps = (j**2 / sigma**4 - 1 / sigma**2) * g / s
            if not np.all(np.isfinite(taps)):  # σ so small that σ² or σ⁴ underflows
                taps = discrete_gaussian_kernel(j, sigma, order)
        return DirectBank(taps[None, :], complex_output=False)
    fit = fit_gaussian(sigma, terms, discrete=True)
    p = np.arange(terms + 1)
    zeros = np.zeros(terms + 1)
    if method == "sft":
        weights = [(fit.a, zeros), (zeros, -fit.b), (fit.d, zeros)]
        alpha = 0.0
    else:
        alpha = shift / sigma**2
        e = math.exp(-0.5 * (shift / sigma) ** 2)  # exp(-α²/(4γ))
        weights = [
            (e * fit.a, zeros),
            (e * alpha * fit.a, -e * fit.b),
            (e * (fit.d + alpha**2 * fit.a), -e * 2 * alpha * fit.b),
        ]
    rows = terms + 1
    mu, nu = (np.asarray(v, dtype=np.float64) for v in weights[order])

    def bank(mu, nu, channels):
        return SFTBank(
            omega=np.tile(fit.beta * p, channels), alpha=np.full(rows * channels, alpha),
            half=np.full(rows * channels, fit.K), shift=np.full(rows * channels, shift),
            mu=mu.reshape(-1).astype(np.complex128), nu=nu.reshape(-1).astype(np.complex128),
            channel=np.repeat(np.arange(channels), rows), n_channels=channels,
            complex_output=False)

    if exact_moments:
        # one channel per column: μ_r = 1 (cosine part) and ν_r = 1 (sine part) of each row
        eye = np.eye(rows)
        zero = np.zeros((rows, rows))
        cols = bank(np.concatenate([eye, zero]), np.concatenate([zero, eye]), 2 * rows)
        j = np.arange(-cols.pad, cols.pad + 1, dtype=np.float64)
        w = _moment_map(sigma, order, j, cols.kernel, np.concatenate([mu, nu]))
        mu, nu = w[:rows], w[rows:]
    return bank(mu, nu, 1)
