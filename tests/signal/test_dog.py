"""Derivative-of-Gaussian wavelets against a direct float64 convolution with the sampled
wavelet written here, and against PyWavelets' gaus1 / gaus2 / mexh."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fastmoments.signal import CWT, DerivativeOfGaussian, MexicanHat, cwt, from_pywt_dog


def _psi(order: int, u: np.ndarray) -> np.ndarray:
    """The unit-energy mother wavelets, written from their definition."""
    if order == 1:
        return -math.sqrt(2.0) * math.pi ** -0.25 * u * np.exp(-u * u / 2)
    return 2 / (math.sqrt(3) * math.pi ** 0.25) * (1 - u * u) * np.exp(-u * u / 2)


def _direct(x: np.ndarray, sigma: float, order: int) -> np.ndarray:
    """``Σ_k σ^{-1/2} ψ(k/σ) x[n - k]`` with the reflect extension, by a loop over k."""
    r = math.ceil(12 * sigma)
    k = np.arange(-r, r + 1)
    h = sigma ** -0.5 * _psi(order, k / sigma)
    e = np.pad(x, r, mode="symmetric")
    n = len(x)
    y = np.zeros(n)
    for j, w in zip(k, h, strict=True):  # y[n] += h[j] x[n - j] = h[j] e[n - j + r]
        y += w * e[r - j: r - j + n]
    return y


def _signal(n: int = 3000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.standard_normal(n)) * 0.1 + rng.standard_normal(n)


@pytest.mark.parametrize("order", [1, 2])
def test_unit_energy_and_closed_form_transform(order):
    w = DerivativeOfGaussian(order)
    n = np.arange(-200, 201)
    assert abs(np.sum(w.sampled(n, 10.0) ** 2) - 1) < 1e-12
    # frequency_response against the DTFT of the sampled wavelet summed here
    om = np.linspace(-np.pi, np.pi, 33)
    for s in (1.0, 3.0, 10.0):
        h = w.sampled(n, s)
        dtft = (h[None, :] * np.exp(-1j * om[:, None] * n[None, :])).sum(1)
        np.testing.assert_allclose(w.frequency_response(om, s), dtft, rtol=0,
                                   atol=(1e-6 if s < 1.5 else 1e-13) * np.abs(dtft).max())


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("method", ["auto", "sft", "direct"])
def test_against_direct_convolution(order, method):
    x = _signal()
    scales = [1.0, 3.0, 17.0, 60.0]
    coef, freqs = cwt(x, scales, DerivativeOfGaussian(order), method=method,
                      truncate=6.0 if method == "direct" else 4.0)
    assert coef.shape == (4, 3000) and coef.dtype == np.float64
    for i, s in enumerate(scales):
        ref = _direct(x, s, order)
        err = np.sqrt(np.mean((coef[i] - ref) ** 2) / np.mean(ref ** 2))
        # the Gaussians' kernels: relative RMSE <= 1e-4 (direct: the tail beyond 6σ)
        assert err < (2e-4 if method != "direct" else 1e-5), (s, err)
    np.testing.assert_allclose(freqs, math.sqrt(order) / (2 * np.pi * np.array(scales)))


def test_batch_axis_dtype_tensor_and_input_untouched():
    x = np.stack([_signal(500, s) for s in range(3)], axis=0)
    keep = x.copy()
    c, _ = cwt(x.T, [2.0, 9.0], MexicanHat(), axis=0)
    for j in range(3):
        c1, _ = cwt(x[j], [2.0, 9.0], MexicanHat())
        np.testing.assert_allclose(c[:, :, j], c1, rtol=0, atol=1e-12 * np.abs(c1).max())
    c32, _ = cwt(x.astype(np.float32), [2.0, 9.0], MexicanHat())
    assert c32.dtype == np.float32
    c64, _ = cwt(x, [2.0, 9.0], MexicanHat())
    np.testing.assert_allclose(c32, c64, rtol=0, atol=1e-5 * np.abs(c64).max())
    t = torch.from_numpy(x).requires_grad_(True)
    ct, f = cwt(t, [2.0, 9.0], DerivativeOfGaussian(1))
    assert isinstance(ct, torch.Tensor) and isinstance(f, np.ndarray)
    ct.sum().backward()
    assert t.grad is not None and t.grad.shape == t.shape
    assert np.array_equal(x, keep)


def test_bad_input():
    with pytest.raises(ValueError, match="order"):
        DerivativeOfGaussian(3)
    with pytest.raises(TypeError, match="order"):
        DerivativeOfGaussian(2.0)
    with pytest.raises(ValueError, match="Mexican"):
        MexicanHat(1)
    with pytest.raises(TypeError, match="wavelet"):
        cwt(np.ones(10), [2.0], "mexh")
    with pytest.raises(ValueError, match="scales"):
        cwt(np.ones(10), [0.9], MexicanHat())
    with pytest.raises(ValueError, match="scales"):
        cwt(np.ones(10), [], MexicanHat())
    with pytest.raises(ValueError, match="NaN"):
        cwt(np.array([1.0, np.nan, 2.0]), [1.0], MexicanHat())
    with pytest.raises(ValueError, match="approximation"):
        cwt(np.ones(10), [2.0], MexicanHat(), approximation="multiplication")
    with pytest.raises(ValueError, match="name"):
        from_pywt_dog("gaus3", [2.0])


@pytest.mark.parametrize("name", ["gaus1", "gaus2", "mexh"])
def test_against_pywavelets(name):
    """``pywt.cwt(x, a, name) ≈ ε W(σ, n - 1/2)``: compared with the mean of ours at n - 1 and
    n (a half-sample shift of a smooth signal, exact to O(1/σ²))."""
    pywt = pytest.importorskip("pywt")
    t = np.arange(4096)
    x = np.sin(2 * np.pi * t / 150) + 0.5 * np.cos(2 * np.pi * t / 47 + 1)
    a = np.array([12.0, 30.0, 60.0])
    wavelet, sigmas, eps = from_pywt_dog(name, a)
    ours, _ = cwt(x, sigmas, wavelet)
    theirs, _ = pywt.cwt(x, a, name, precision=16)
    inner = slice(1000, 3000)
    for i in range(len(a)):
        half = 0.5 * (ours[i, 999:2999] + ours[i, 1000:3000])
        err = np.max(np.abs(theirs[i, inner] - eps * half)) / np.max(np.abs(half))
        assert err < 3e-3, (name, a[i], err)


def test_plan_equals_the_call_and_out():
    x = _signal(800)
    scales = [1.5, 6.0, 40.0]
    plan = CWT(scales, DerivativeOfGaussian(1), method="sft")
    ref, f = cwt(x, scales, DerivativeOfGaussian(1), method="sft")
    np.testing.assert_allclose(plan(x), ref, rtol=0, atol=1e-13 * np.abs(ref).max())
    np.testing.assert_allclose(plan.frequencies(), f, rtol=1e-15)
    assert plan.rmse <= 1e-4 and len(plan.plans) == 3
    out = np.empty((3, 800))
    got, _ = cwt(x, scales, DerivativeOfGaussian(1), method="sft", out=out)
    assert got is out
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-13 * np.abs(ref).max())
