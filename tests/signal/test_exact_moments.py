"""The Gaussian filters keep the target's low-order moments exactly.

Order 0 sums to one, order 1 has ``Σ h = 0`` and ``Σ j h = -1`` (``+1`` on the ramp
``x = n``, as scipy.ndimage's ``gaussian_filter1d(order=1)``), order 2 has ``Σ h = Σ j h = 0``
and ``Σ j² h = 2``; so constants and ramps come out exact to rounding, and on low-frequency
signals (a random walk, real data) the output error stays at the size of the kernel's RMSE
instead of 10-30 times it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.signal

from fastmoments.signal import GaussianFilter
from fastmoments.signal.coefficients import (
    constrain_moments,
    discrete_gaussian_kernel,
    target_moments,
)
from fastmoments.signal.gaussian import max_shift
from fastmoments.signal.gaussian_kernels import _gaussian_bank

from ..reference_signal import discrete_gaussian

SIGMAS = (1e-9, 0.3, 0.5, 1.5, 3.0, 7.3, 16.0, 50.0, 333.0, 8192.0)
PLANS = [(s, o, m, sh) for s in SIGMAS for o in (0, 1, 2)
         for m, sh in (("sft", None), ("asft", None), ("asft", max_shift(s)))]


def _moments(h: np.ndarray, j: np.ndarray) -> np.ndarray:
    return np.array([np.sum(h), np.sum(j * h), np.sum(j * j * h)])


@pytest.mark.parametrize("sigma", [7.3, 100.0, 4000.0])
def test_target_moments_are_the_derivatives_of_polynomials(sigma):
    w = math.ceil(12 * sigma) + 2
    j = np.arange(-w, w + 1, dtype=np.float64)
    for order, want in ((0, [1, 0, sigma**2]), (1, [0, -1, 0]), (2, [0, 0, 2])):
        got = _moments(discrete_gaussian(j, sigma, order), j)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * sigma**2)
        scaled = target_moments(sigma, order) * sigma ** np.arange(3)
        np.testing.assert_allclose(scaled, want, rtol=1e-12, atol=1e-12 * sigma**2)


@pytest.mark.parametrize("sigma", [1e-300, 0.05, 0.3, 0.5, 1.5, 3.0])
def test_target_moments_below_the_continuum_are_the_discrete_kernels(sigma):
    w = math.ceil(12 * sigma) + 2
    j = np.arange(-w, w + 1, dtype=np.float64)
    for order in (0, 1, 2):
        want = _moments(discrete_gaussian(j, sigma, order), j) / max(sigma, 1) ** np.arange(3)
        np.testing.assert_allclose(target_moments(sigma, order), want, rtol=1e-12,
                                   atol=1e-14)


@pytest.mark.parametrize(("sigma", "order", "method", "shift"), PLANS)
def test_applied_kernel_keeps_the_moments(sigma, order, method, shift):
    plan = GaussianFilter(sigma, order=order, method=method, shift=shift)
    pad = plan.bank.pad
    j = np.arange(-pad, pad + 1, dtype=np.float64)
    h = plan.kernel(j)
    got = _moments(h, j)
    want = target_moments(sigma, order) * max(sigma, 1.0) ** np.arange(3)
    # rounding of sums of ~2K terms of size max|h|, times |j|^m <= pad^m
    tol = 1e-12 * np.sum(np.abs(h)) * np.array([1.0, pad, pad * pad])
    keep = max(2, order + 1)  # the moments constrained for this order
    for m in range(keep):
        assert abs(got[m] - want[m]) <= tol[m], (m, got[m], want[m])


def test_raw_fit_misses_the_moments_that_the_plans_keep():
    # the bug this fixes: the fitted G_DD had Σ j² h = 0.9997-0.9999
    sigma = 100.0
    raw = _gaussian_bank(sigma, 2, "sft", 7, 0, 4.0, exact_moments=False)
    j = np.arange(-raw.pad, raw.pad + 1, dtype=np.float64)
    assert abs(_moments(raw.kernel(j)[0], j)[2] - 2.0) > 1e-5
    fixed = GaussianFilter(sigma, order=2, terms=7)
    assert abs(_moments(fixed.kernel(j), j)[2] - 2.0) < 1e-10


@pytest.mark.parametrize("method", ["sft", "asft", "direct"])
@pytest.mark.parametrize("order", [1, 2])
def test_constant_100_gives_zero(method, order):
    for sigma in (0.5, 3.0, 16.0, 250.0):
        plan = GaussianFilter(sigma, order=order, method=method)
        y = plan(np.full(8 * math.ceil(4 * sigma) + 50, 100.0))
        # rounding: 100 x (a few ulps) x Σ|h| x (window) -- far below the fit's 1e-4
        assert np.max(np.abs(y)) < 1e-10 * 100, (sigma, np.max(np.abs(y)))


@pytest.mark.parametrize("method", ["sft", "asft"])
def test_ramp_and_parabola_are_differentiated_exactly(method):
    n = np.arange(3000, dtype=np.float64)
    for sigma in (2.0, 40.0):
        w = math.ceil(4 * sigma) + sigma  # away from the ends
        inner = slice(int(4 * w), -int(4 * w))
        y1 = GaussianFilter(sigma, order=1, method=method)(n / 100)
        np.testing.assert_allclose(y1[inner], 0.01, rtol=1e-9)
        y2 = GaussianFilter(sigma, order=2, method=method)((n / 100) ** 2)
        np.testing.assert_allclose(y2[inner], 2e-4, rtol=1e-8)


def _valid_error(plan: GaussianFilter, x: np.ndarray) -> float:
    """Relative error of the plan's output against the float64 reference kernel, away from
    the ends (no boundary handling in the comparison)."""
    sigma, order = plan.sigma, plan.order
    w = math.ceil(12 * sigma) + 2
    j = np.arange(-w, w + 1, dtype=np.float64)
    ref = scipy.signal.fftconvolve(x, discrete_gaussian(j, sigma, order), mode="valid")
    y = plan(x)[w:len(x) - w]
    return float(np.linalg.norm(y - ref) / np.linalg.norm(ref))


@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize(("method", "shift"), [("sft", None), ("asft", None), ("asft", "max")])
def test_random_walk_error_is_within_twice_the_kernel_rmse(order, method, shift):
    rng = np.random.default_rng(16)
    for sigma in (1.5, 3.0, 16.0, 50.0, 333.0, 8192.0):
        n = max(4096, 28 * math.ceil(sigma))
        x = np.cumsum(rng.standard_normal(n))
        plan = GaussianFilter(sigma, order=order, method=method,
                              shift=max_shift(sigma) if shift == "max" else None)
        err = _valid_error(plan, x)
        assert err <= 2 * plan.rmse, (sigma, err, plan.rmse)


def _real_signals() -> list[np.ndarray]:
    """Real low-frequency data shipped with matplotlib: a share price (1047 days), one EEG
    channel and a terrain profile (344 x 403 elevation grid read row after row)."""
    cbook = pytest.importorskip("matplotlib.cbook")
    goog = cbook.get_sample_data("goog.npz")["price_data"]["close"].astype(np.float64)
    with cbook.get_sample_data("eeg.dat") as f:
        eeg = np.frombuffer(f.read(), dtype=np.int16).astype(np.float64)
    dem = cbook.get_sample_data("jacksboro_fault_dem.npz")["elevation"].astype(np.float64)
    dem[1::2] = dem[1::2, ::-1]  # boustrophedon: a continuous profile
    return [goog, eeg, dem.ravel()]


@pytest.mark.parametrize("order", [0, 1, 2])
def test_real_signals_error_is_within_twice_the_kernel_rmse(order):
    for x in _real_signals():
        # σ ≤ 256: at σ = 1024 the terrain profile's energy sits at its row period (806
        # samples), where the target's response is e^-32, and the derivatives' error there
        # (2.7x and 6.5x the RMSE for orders 1 and 2) is the fit's stop-band leak, which no
        # moment constraint removes
        for sigma in (1.5, 4.0, 16.0, 64.0, 256.0):
            if 28 * sigma > len(x):
                continue
            for method in ("sft", "asft"):
                plan = GaussianFilter(sigma, order=order, method=method)
                err = _valid_error(plan, x)
                assert err <= 2 * plan.rmse, (len(x), sigma, method, err, plan.rmse)


def test_constrained_fit_is_the_smallest_change():
    # the correction is orthogonal (in the kernel's L2 norm) to every moment-keeping change
    rng = np.random.default_rng(3)
    j = np.arange(-20, 21, dtype=np.float64)
    cols = np.stack([np.cos(np.pi * p * j / 20) for p in range(6)])
    w0 = rng.standard_normal(6)
    target = np.array([1.0, 0.0, 0.5])
    w = constrain_moments(lambda jb: cols[:, (jb + 20).astype(int)], w0, j, 4.0, target)
    u = np.stack([(j / 4.0) ** m for m in range(3)])
    np.testing.assert_allclose(u @ (cols.T @ w), [1.0, 0.0, 0.5], atol=1e-12)
    # a kernel change that keeps the moments: project a random direction on the null space
    c = u @ cols.T
    d = rng.standard_normal(6)
    d -= np.linalg.pinv(c) @ (c @ d)
    np.testing.assert_allclose(c @ d, 0, atol=1e-10)
    assert abs((cols.T @ (w - w0)) @ (cols.T @ d)) < 1e-9 * np.linalg.norm(cols.T @ d)


def test_discrete_gaussian_kernel_agrees_with_the_reference():
    j = np.arange(-30, 31, dtype=np.float64)
    for sigma in (0.5, 2.0, 5.0):
        for order in (0, 1, 2):
            np.testing.assert_allclose(discrete_gaussian_kernel(j, sigma, order),
                                       discrete_gaussian(j, sigma, order), atol=1e-15)


@pytest.mark.parametrize("method", ["sft", "asft"])
def test_morlet_fit_dc_leak_is_below_its_rmse(method):
    # Why the Morlet fit is not constrained: the wavelet is zero-mean (κ term), and the fitted
    # kernel's response to a constant, relative to its response to its own carrier, stays
    # below the kernel's relative RMSE (measured 0.01-0.32 of it for ξ = 3 and 6)
    from fastmoments.signal import MorletTransform
    from fastmoments.signal.coefficients import morlet_kernel

    for xi in (3.0, 6.0):
        for sigma in (3.0, 8.0, 32.0, 200.0, 2000.0):
            plan = MorletTransform(sigma, xi, method=method)
            pad = plan.bank.pad
            dc = abs(np.sum(plan.kernel(np.arange(-pad, pad + 1))))
            w = math.ceil(12 * sigma) + 2
            j = np.arange(-w, w + 1, dtype=np.float64)
            peak = abs(np.sum(morlet_kernel(j, sigma, xi) * np.exp(-1j * xi / sigma * j)))
            assert dc / peak < 0.5 * plan.rmse, (xi, sigma, dc / peak, plan.rmse)
