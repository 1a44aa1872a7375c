"""The NumPy fast path of kernels longer than the signal (gaussian_paths._fast_folded) against the
torch folded path of a plan and against the direct sum over the extended signal."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import ndimage

import fastmoments as fm
from fastmoments.signal import GaussianFilter
from fastmoments.signal.folded import full_radius, truncation_radius
from fastmoments.signal.gaussian_paths import _fast_folded

MODES = ["reflect", "mirror", "wrap", "nearest", "constant"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize(("shape", "axis"), [((257,), -1), ((3, 120), 1), ((90, 2, 3), 0)])
def test_fast_folded_matches_the_plan(mode, order, shape, axis):
    rng = np.random.default_rng(order)
    x = rng.standard_normal(shape)
    sigma = 3.0 * shape[axis]
    y = fm.gaussian_filter1d(x, sigma, axis=axis, order=order, mode=mode, cval=0.7)
    ref = GaussianFilter(sigma, order=order, method="sft")(
        torch.as_tensor(x), axis=axis, mode=mode, cval=0.7).numpy()
    # float64 rounding of two FFT routes: |Δy| ≲ 1e-15 Σ|h| max|x| (Σ|h| ≤ 1 + 2/σ here)
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-13 * np.abs(x).max())


@pytest.mark.parametrize("mode", MODES)
def test_fast_folded_order0_is_scipys_kernel(mode):
    # order 0: scipy's truncated kernel, applied to the extended signal (scipy extends a
    # signal shorter than the kernel the same way)
    x = np.random.default_rng(5).standard_normal(40)
    sigma = 30.0
    y = _fast_folded(x, 0, sigma, 0, truncation_radius(sigma, 4.0), mode, 0.25)
    ref = ndimage.gaussian_filter1d(x, sigma, mode=mode, cval=0.25)
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-14)


def test_fast_folded_keeps_dtype_and_refuses_nan():
    x = np.linspace(0, 1, 100, dtype=np.float32)
    y = fm.gaussian_filter1d(x, 500.0)
    assert y.dtype == np.float32 and y.shape == x.shape
    np.testing.assert_allclose(y, fm.gaussian_filter1d(x.astype(np.float64), 500.0),
                               rtol=2e-6)
    bad = x.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        fm.gaussian_filter1d(bad, 500.0)
    assert np.isnan(bad[3])  # the input is not modified


def _fft_route(x, sigma, order, mode, monkeypatch):
    """``_fast_folded`` with the low-frequency route switched off (its FFT route)."""
    from fastmoments.signal import gaussian_paths

    gaussian_paths._folded_spectrum.cache_clear()
    with monkeypatch.context() as m:
        m.setattr(gaussian_paths, "LOW_COMPONENTS", -1)
        y = _fast_folded(x, -1, sigma, order, full_radius(sigma, 4.0), mode, 0.0)
    gaussian_paths._folded_spectrum.cache_clear()
    return y


@pytest.mark.parametrize("mode", ["reflect", "mirror", "wrap"])
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize(("n", "sigma"), [(1, 50.0), (2, 9.0), (7, 40.0), (300, 2000.0),
                                          (1000, 8192.0), (3000, 8192.0)])
def test_low_frequency_route_matches_the_fft_route(mode, order, n, sigma, monkeypatch):
    from fastmoments.signal.gaussian_paths import _folded_spectrum, _kernel_l1

    x = np.random.default_rng(n + order).standard_normal((2, n))
    assert _folded_spectrum(sigma, order, full_radius(sigma, 4.0), n, mode)[2] is not None
    y = _fast_folded(x, -1, sigma, order, full_radius(sigma, 4.0), mode, 0.0)
    ref = _fft_route(x, sigma, order, mode, monkeypatch)
    # the components left out are below 2^-52 ‖h‖₁ each (Parseval: ≤ √2 2^-52 ‖h‖₁ ‖x‖₂ in
    # all); both routes round at ~1e-16 ‖h‖₁ max|x| per output
    tol = 8 * 2.0**-52 * _kernel_l1(sigma, order) * np.sqrt(2 * n) * np.abs(x).max()
    np.testing.assert_allclose(y, ref, rtol=0, atol=tol)


def test_low_frequency_route_refuses_nan_even_with_no_component_kept():
    from fastmoments.signal.gaussian_paths import _folded_spectrum

    sigma, n = 8192.0, 1000
    # a first derivative smoothed 8x beyond the signal: no Fourier component reaches
    # 2^-52 ‖h‖₁, the result is 0 (exact: ~e^-300) and x never enters a product
    low = _folded_spectrum(sigma, 1, full_radius(sigma, 4.0), n, "reflect")[2]
    assert low is not None and low[0].shape == (n, 0)
    x = np.random.default_rng(3).standard_normal(n)
    assert np.all(fm.gaussian_filter1d(x, sigma, order=1) == 0.0)
    for order in (0, 1):
        bad = x.copy()
        bad[10] = np.inf
        with pytest.raises(ValueError, match="NaN or infinity"):
            fm.gaussian_filter1d(bad, sigma, order=order)
