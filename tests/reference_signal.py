"""Float64 references for the signal tests, written out independently of the library."""

from __future__ import annotations

import math

import numpy as np


def discrete_gaussian(j: np.ndarray, sigma: float, order: int) -> np.ndarray:
    """The Gaussian filters' target at offsets ``j``: scipy.ndimage's normalised discrete
    Gaussian on the whole line, ``φ = G/ΣG`` (the sum over ``|k| ≤ 12σ + 2``), ``-j/σ² φ`` for
    order 1 and, for order 2, ``(j²/σ⁴ - 1/σ²) φ`` minus its sum times ``φ`` (zero on
    constants). Below σ = 0.11 (``G[1]/G[0] < 2e-18``) it is a unit impulse with zero
    derivatives."""
    j = np.asarray(j, dtype=np.float64)
    if sigma < 0.11:
        return (j == 0).astype(float) if order == 0 else np.zeros(len(j))
    w = math.ceil(12 * sigma) + 2
    k = np.arange(-w, w + 1, dtype=np.float64)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    phi = np.exp(-0.5 * (j / sigma) ** 2) / g.sum()
    if order == 0:
        return phi
    if order == 1:
        return -j / sigma**2 * phi
    c = np.sum((k**2 / sigma**4 - 1 / sigma**2) * g) / g.sum()
    return (j**2 / sigma**4 - 1 / sigma**2 - c) * phi


def sampled_kernel(sigma: float, order: int, radius: int, zero_sum: bool = True) -> np.ndarray:
    """scipy.ndimage's kernel on ``[-radius, radius]``: the Gaussian normalised over that
    window, times ``-k/σ²`` (order 1) or ``k²/σ⁴ - 1/σ²`` (order 2; with ``zero_sum``, minus
    its sum times the order-0 kernel, the convention that makes it zero on constants)."""
    k = np.arange(-radius, radius + 1, dtype=np.float64)
    phi = np.exp(-0.5 * (k / sigma) ** 2)
    phi /= phi.sum()
    if order == 0:
        return phi
    if order == 1:
        return -k / sigma**2 * phi
    h = (k**2 / sigma**4 - 1 / sigma**2) * phi
    return h - h.sum() * phi if zero_sum else h
