"""Gaussian filters at small σ: constants pass unchanged, derivatives vanish on polynomials,
results match scipy.ndimage, and ``rmse`` describes the kernel actually applied."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.ndimage as ndi

import fastmoments as fm
from fastmoments.signal import GaussianFilter

from ..reference_signal import discrete_gaussian

SIGMAS = [1e-300, 1e-9, 0.05, 0.1, 0.3, 0.49, 0.5, 0.7, 1.0, 1.5, 3.0]
METHODS = ["sft", "asft", "direct"]


target = discrete_gaussian  # the target, from tests/reference_signal.py


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sigma", SIGMAS)
def test_polynomials(sigma, method):
    n = 120
    ramp = np.arange(n, dtype=np.float64)
    for order in (0, 1, 2):
        plan = GaussianFilter(sigma, order=order, method=method)
        inner = slice(plan.bank.pad, n - plan.bank.pad)  # where no boundary is read
        one = plan(np.full(n, 3.0))
        lin = plan(ramp)
        if order == 0:
            np.testing.assert_allclose(one, 3.0, rtol=1e-13)  # every sample, any mode
        else:
            scale = 1.0 / max(sigma, 1e-3) ** order  # the kernel's size
            np.testing.assert_allclose(one, 0.0, atol=1e-13 * 3 * scale)
        if order == 2:
            np.testing.assert_allclose(lin[inner], 0.0, atol=1e-13 * n * scale)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sigma", SIGMAS)
def test_rmse_describes_the_applied_kernel(sigma, method):
    for order in (0, 1, 2):
        plan = GaussianFilter(sigma, order=order, method=method)
        w = plan.bank.pad + math.ceil(10 * sigma) + 2
        j = np.arange(-w, w + 1, dtype=np.float64)
        h, t = plan.kernel(j), target(j, sigma, order)
        err = float(np.sqrt(np.sum((h - t) ** 2)))
        energy = float(np.sqrt(np.sum(t**2)))
        measured = err / energy if energy > 0 else err
        if method != "direct" or sigma < 1.0:  # else truncated at 4σ on purpose
            assert plan.rmse <= 1e-4
        # the same quantity, up to the float64 rounding of either sum
        assert measured <= 1.01 * plan.rmse + 1e-13


@pytest.mark.parametrize("mode", ["reflect", "nearest", "mirror", "wrap", "constant"])
@pytest.mark.parametrize("sigma", [1e-9, 0.1, 0.3, 0.5, 0.7, 1.0, 1.5])
def test_matches_scipy(sigma, mode):
    x = np.random.default_rng(3).standard_normal(97)
    for order in (0, 1):
        for method in METHODS:
            plan = GaussianFilter(sigma, order=order, method=method)
            y = fm.gaussian_filter(x, sigma, order=order, mode=mode, method=method, cval=0.4)
            ref = ndi.gaussian_filter1d(x, sigma, order=order, mode=mode, truncate=12.0,
                                        cval=0.4)
            scale = np.linalg.norm(ndi.gaussian_filter1d(x, sigma, order=0, truncate=12.0))
            # the kernels differ by the plan's rmse (relative), and by the truncation at
            # 4σ of the direct method (tail below 7e-5 of the kernel's energy)
            tol = 3 * plan.rmse + (1e-4 if method == "direct" or sigma < 1.0 else 0) + 1e-13
            assert np.linalg.norm(y - ref) <= tol * scale / max(sigma, 1e-3) ** order
    # order 2: scipy's kernel minus its sum times the smoothing kernel (zero on constants)
    w = math.ceil(12 * sigma) + 2
    k = np.arange(-w, w + 1, dtype=np.float64)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    c = np.sum((k**2 / sigma**4 - 1 / sigma**2) * g) / g.sum() if sigma >= 0.11 else 0.0
    ref = (ndi.gaussian_filter1d(x, sigma, order=2, mode=mode, truncate=12.0, cval=0.4)
           - c * ndi.gaussian_filter1d(x, sigma, order=0, mode=mode, truncate=12.0, cval=0.4))
    if sigma < 0.11:
        ref = np.zeros_like(x)
    plan = GaussianFilter(sigma, order=2)
    y = plan(x, mode=mode, cval=0.4)
    assert np.linalg.norm(y - ref) <= (3 * plan.rmse + 1e-4) * np.linalg.norm(x) / max(
        sigma, 1e-3) ** 2


def test_issue_examples():
    np.testing.assert_allclose(fm.gaussian_filter(np.ones(50), 0.1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(fm.gaussian_filter(np.ones(50), 0.5), 1.0, rtol=1e-14)
    np.testing.assert_allclose(fm.gaussian_filter(np.ones(50), 1e-9), 1.0, rtol=1e-14)
    np.testing.assert_allclose(fm.gaussian_filter(np.ones(50, np.float32), 0.5), 1.0,
                               rtol=1e-6)
