"""float32 signals through the short direct FIR: sums in float64, one rounding (as scipy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import ndimage

import fastmoments as fm
from fastmoments.signal.gaussian_kernels import _half_kernel
from fastmoments.signal.routes import WIDE_RADIUS


def _exact(x: np.ndarray, sigma: float) -> np.ndarray:
    """The untruncated order-0 kernel (to 12σ) in float64, reflect mode, along every axis."""
    w = math.ceil(12 * sigma) + 2
    k = np.arange(-w, w + 1)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    g /= g.sum()
    y = x.astype(np.float64)
    for ax in range(y.ndim):
        y = ndimage.correlate1d(y, g, axis=ax, mode="reflect")
    return y


@pytest.mark.parametrize("shape", [(10_000,), (300, 200)])
@pytest.mark.parametrize("sigma", [0.5, 1.0])
def test_float32_error_at_most_scipys(shape, sigma):
    x64 = np.random.default_rng(3).standard_normal(shape)
    x = x64.astype(np.float32)
    ref = _exact(x64, sigma)
    ours = fm.gaussian_filter(x, sigma)
    theirs = ndimage.gaussian_filter(x, sigma)
    assert ours.dtype == np.float32
    err = np.linalg.norm(ours - ref) / np.linalg.norm(ref)
    err_sp = np.linalg.norm(theirs - ref) / np.linalg.norm(ref)
    # scipy's float32 result is its float64 sums rounded once (~2^-24 / sqrt(3) relative);
    # ours must not add float32 roundings of the sums on top
    assert err <= err_sp, (err, err_sp)
    assert err < 6e-8


def test_short_kernels_keep_float64_taps_for_float32():
    hh, _ = _half_kernel(0.5, 0, 4.0, "f")
    assert hh.dtype == np.float64 and len(hh) - 1 <= WIDE_RADIUS
    hh, _ = _half_kernel(8.0, 0, 4.0, "f")
    assert hh.dtype == np.float32  # long kernels: float32 sums, twice the SIMD width
    hh, _ = _half_kernel(0.5, 0, 4.0, "d")
    assert hh.dtype == np.float64
