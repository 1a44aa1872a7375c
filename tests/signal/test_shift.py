"""The ASFT shift n0: accepted where the fit is accurate and well conditioned, refused (with
the working range) elsewhere; and the Morlet transform at σ of a sample or two."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fastmoments as fm
from fastmoments.signal import GaussianFilter, MorletTransform
from fastmoments.signal.gaussian import max_shift


@pytest.mark.parametrize("sigma", [0.5, 2.0, 5.0, 16.0, 100.0])
def test_gaussian_shift_range(sigma):
    top = max_shift(sigma)
    assert top == max(1, math.floor(sigma / 2))
    x = np.random.default_rng(0).standard_normal(4000)
    for order in (0, 1, 2):
        for shift in sorted({1, top}):
            plan = GaussianFilter(sigma, order=order, method="asft", shift=shift)
            assert plan.rmse <= 1e-4
            ref = GaussianFilter(sigma, order=order, method="direct", truncate=12.0)(x)
            y = plan(x)
            assert np.all(np.isfinite(y))
            # against a truncated convolution at 12σ: the plan's rmse (plus rounding)
            err = np.linalg.norm(y - ref) / np.linalg.norm(ref)
            assert err <= 3 * plan.rmse + 1e-12
            # well conditioned: float32 within 1e-5 of float64 (relative)
            y32 = plan(x.astype(np.float32))
            assert np.linalg.norm(y32 - y) / np.linalg.norm(y) <= 1e-5
        for bad in (top + 1, 10 * top + 10, 1000):
            with pytest.raises(ValueError, match=rf"shift must be in 1\.\.{top} "):
                GaussianFilter(sigma, order=order, method="asft", shift=bad)


def test_issue_example_shift_1000():
    with pytest.raises(ValueError, match=r"shift must be in 1\.\.1 for sigma=2\.0"):
        GaussianFilter(2.0, method="asft", shift=1000)
    with pytest.raises(ValueError, match="shift"):
        GaussianFilter(2.0, method="asft", shift=10)
    with pytest.raises(ValueError, match="shift"):
        fm.gaussian_filter(np.ones(30), 2.0, method="asft", shift=1000)
    for bad in (0, -3):
        with pytest.raises(ValueError, match="shift"):
            GaussianFilter(2.0, method="asft", shift=bad)


@pytest.mark.parametrize("sigma", [4.0, 16.0, 64.0])
def test_morlet_shift_range(sigma):
    top = max_shift(sigma)
    plan = MorletTransform(sigma, method="asft", shift=top)
    assert plan.rmse <= 1e-4
    for bad in (top + 1, 1000):
        with pytest.raises(ValueError, match=rf"shift must be in 1\.\.{top} "):
            MorletTransform(sigma, method="asft", shift=bad)
        with pytest.raises(ValueError, match="shift"):
            fm.morlet_transform(np.ones(30), sigma, method="asft", shift=bad)


def _morlet_reference(x, sigma, xi=6.0):
    c = (1.0 + math.exp(-xi * xi) - 2.0 * math.exp(-0.75 * xi * xi)) ** -0.5
    w = math.ceil(10 * sigma) + 1
    k = np.arange(-w, w + 1, dtype=np.float64)
    psi = (c * math.pi ** -0.25 / math.sqrt(sigma) * np.exp(-0.5 * (k / sigma) ** 2)
           * (np.exp(1j * xi * k / sigma) - math.exp(-0.5 * xi * xi)))
    xp = np.pad(x, w, mode="symmetric")
    return np.convolve(xp, psi, mode="valid")


@pytest.mark.parametrize("sigma", [0.3, 0.7, 1.0, 1.5, 2.5])
@pytest.mark.parametrize("method", ["sft", "asft", "direct"])
def test_morlet_small_sigma(sigma, method):
    # the series fits failed here (relative RMSE 0.3-0.5 for the SFT, NaN for the ASFT)
    x = np.random.default_rng(1).standard_normal(200)
    plan = MorletTransform(sigma, method=method)
    assert plan.rmse <= 1e-4
    y = plan(x)
    ref = _morlet_reference(x, sigma)
    assert np.linalg.norm(y - ref) / np.linalg.norm(ref) <= 3 * plan.rmse + 1e-13
    coef, _ = fm.cwt(x, [8.0, sigma, 3.0], method=method)  # mixed direct and SFT scales
    assert np.linalg.norm(coef[1] - ref) / np.linalg.norm(ref) <= 3 * plan.rmse + 1e-13
