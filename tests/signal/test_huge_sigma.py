"""Gaussian filters whose kernel is longer than the signal (memory): the folded path."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as ndi
import torch

import fastmoments as fm
from fastmoments.signal import MODES, GaussianFilter
from fastmoments.signal.boundary import extension_indices
from fastmoments.signal.folded import FOLD_BLOCK, folded_kernel

from ..reference_signal import sampled_kernel

EPS = np.finfo(np.float64).eps
RNG = np.random.default_rng(1313)


def _scipy_kernel(sigma: float, order: int, radius: int) -> np.ndarray:
    """scipy.ndimage's kernel (normalised Gaussian times its Hermite polynomial), with the
    module's order-2 convention: minus its sum times the order-0 kernel."""
    return sampled_kernel(sigma, order, radius)


def _scipy_ref(x, sigma, order, mode, cval=0.0, truncate=4.0):
    """scipy.ndimage.gaussian_filter1d with our truncation (σ·truncate an integer, so that
    scipy's radius int(truncate σ + 0.5) equals ceil(truncate σ)); order 2 shifted to the
    zero-sum kernel. ``truncate=10``: the untruncated kernel of the folded path for "auto"
    and the SFT methods (folded.full_radius)."""
    y = ndi.gaussian_filter1d(x, sigma, order=order, mode=mode, cval=cval, truncate=truncate)
    if order == 2:
        r = int(truncate * sigma + 0.5)
        k = np.arange(-r, r + 1, dtype=np.float64)
        phi = np.exp(-0.5 * (k / sigma) ** 2)
        phi /= phi.sum()
        c = float(np.sum((k**2 / sigma**4 - 1 / sigma**2) * phi))
        y = y - c * ndi.gaussian_filter1d(x, sigma, order=0, mode=mode, cval=cval,
                                          truncate=truncate)
    return y


def _tol(sigma, order, radius, x, cval=0.0):
    """64 ε Σ|h| max|x|: float64 rounding of sums of O(W) terms (pairwise and blockwise)."""
    mass = float(np.abs(_scipy_kernel(sigma, order, radius)).sum())
    return 64 * EPS * mass * max(float(np.abs(x).max()), abs(cval), 1.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("n", [1, 2, 5, 50, 131])
def test_folded_matches_scipy(mode, order, n):
    sigma = 200.0  # radius 800 > n: folded; periods 1..262 take both the direct and FFT sums
    x = RNG.standard_normal(n)
    # "direct": scipy's kernel truncated at 4σ; the SFT methods and "auto": the untruncated
    # kernel (cut at 10σ, below float64 rounding)
    for method, truncate in (("sft", 10.0), ("auto", 10.0), ("direct", 4.0)):
        y = fm.gaussian_filter(x, sigma, order=order, mode=mode, cval=0.7, method=method)
        ref = _scipy_ref(x, sigma, order, mode, cval=0.7, truncate=truncate)
        radius = int(truncate * sigma)
        assert np.max(np.abs(y - ref)) <= _tol(sigma, order, radius, x, 0.7)


@pytest.mark.parametrize("mode", MODES)
def test_constants_preserved(mode):
    c = 3.25
    for sigma in (60.0, 1e4, 1e6):
        for order in (0, 1, 2):
            y = fm.gaussian_filter(np.full(37, c), sigma, order=order, mode=mode, cval=c)
            want = c if order == 0 else 0.0
            assert np.max(np.abs(y - want)) <= 64 * EPS * c


def test_huge_sigma_zeros_and_random_runs_without_a_fit():
    plan = GaussianFilter(1e6)
    assert not plan._built  # the SFT fit (145 s at this σ) is never built
    assert fm.gaussian_filter(np.zeros(512), 1e6).tolist() == [0.0] * 512
    x = RNG.random(512)
    y = fm.gaussian_filter(x, 1e6)
    # σ ≫ 2N: the folded kernel is 1/P up to the truncation edge (g(W)/S ~ e^-8/σ per tap)
    assert np.max(np.abs(y - x.mean())) <= 1e-8
    assert not fm.signal.gaussian._cached_plan(1e6, 0, "sft", None, None, 4.0)._built


@pytest.mark.parametrize("sigma", [1e6, 2.0**20])
@pytest.mark.parametrize("mode", MODES)
def test_huge_sigma_limits(sigma, mode):
    x = RNG.standard_normal(64)
    y0 = fm.gaussian_filter(x, sigma, mode=mode, cval=0.5)
    # periodic modes: the mean over one period of the extension (mirror counts the two end
    # samples once, the others twice); constant ends: the outside value, the signal's own
    # weight being ~N/(σ sqrt(2π))
    period_mean = {"mirror": (2 * x.sum() - x[0] - x[-1]) / (2 * len(x) - 2)}
    limit = {"nearest": 0.5 * (x[0] + x[-1]), "constant": 0.5,
             **period_mean}.get(mode, x.mean())
    tol = 1e-8 if mode in ("reflect", "mirror", "wrap") else len(x) * 4 / sigma
    assert np.max(np.abs(y0 - limit)) <= tol
    for order in (1, 2):  # derivatives of a near-constant: ~1/σ and ~1/σ²
        y = fm.gaussian_filter(x, sigma, order=order, mode=mode, cval=0.5)
        assert np.max(np.abs(y)) <= 10 * np.abs(x).max() / sigma**order


def _direct_reference(x, sigma, order, mode, cval=0.0, block=1 << 16, truncate=4.0):
    """Σ_{|k|≤W} h[k] x_ext[n-k] summed in blocks of k (an independent O(N W) sum),
    ``W = ceil(truncate σ)``."""
    n = len(x)
    r = int(np.ceil(truncate * sigma))
    k_all = np.arange(-r, r + 1)
    g_sum = 0.0
    m2 = 0.0
    for i in range(0, len(k_all), block):
        k = k_all[i:i + block].astype(np.float64)
        g = np.exp(-0.5 * (k / sigma) ** 2)
        g_sum += g.sum()
        m2 += (k * k * g).sum()
    y = np.zeros(n)
    idx = extension_indices(n, r + n, r + n, mode)  # x_ext[m] = x[idx[m + r + n]]
    xe = np.where(idx < 0, cval, x[np.maximum(idx, 0)])
    for i in range(0, len(k_all), block):
        k = k_all[i:i + block].astype(np.float64)
        g = np.exp(-0.5 * (k / sigma) ** 2)
        h = [g / g_sum, -k * g / (sigma**2 * g_sum),
             (k * k - m2 / g_sum) * g / (sigma**4 * g_sum)][order]
        for j in range(n):
            y[j] += np.dot(h, xe[(j - k_all[i:i + block]) + r + n])
    return y


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1, 2])
def test_large_sigma_against_blockwise_direct_sum(mode, order):
    # "auto": the untruncated kernel, W = 10σ = 300000 ≫ N: 2.5·10^4 periods folded
    _check_direct(3e4, 6, mode, order, "auto", 10.0)


@pytest.mark.parametrize(("mode", "order"), [("reflect", 0), ("nearest", 2), ("mirror", 1)])
def test_huge_sigma_against_blockwise_direct_sum(mode, order):
    # "direct": scipy's kernel truncated at W = 4·10^6: ~10^6 periods folded
    _check_direct(1e6, 3, mode, order, "direct", 4.0)


def _check_direct(sigma, n, mode, order, method, truncate):
    x = RNG.standard_normal(n)
    y = fm.gaussian_filter(x, sigma, order=order, mode=mode, cval=-0.3, method=method)
    ref = _direct_reference(x, sigma, order, mode, cval=-0.3, block=1 << 20,
                            truncate=truncate)
    assert np.max(np.abs(y - ref)) <= _tol(sigma, order, int(truncate * sigma), x, 0.3)


@pytest.mark.parametrize("mode", MODES)
def test_planned_scratch_is_order_n(mode):
    for n, sigma in ((1, 1e5), (7, 2.0**20), (512, 1e5), (4096, 1e5)):
        fk = folded_kernel(sigma, 2, int(np.ceil(4 * sigma)), n, mode)
        assert fk.period <= 2 * n
        assert fk.taps.shape == (fk.period,)
        assert fk.table_bytes <= 8 * 4 * n
        assert fk.block <= max(FOLD_BLOCK, 2 * n)  # the fold's blocks: independent of σ
        assert fk.fold_bytes <= 32 * max(FOLD_BLOCK, 2 * n)
        assert fk.apply_bytes(3, 8) <= 3 * 8 * 6 * (2 * n + 2)


def test_plan_axis_batch_out_float32_and_nd():
    plan = GaussianFilter(500.0, order=1)
    x = RNG.standard_normal((3, 40, 2))
    y = plan(x, axis=1, mode="nearest")
    for i in range(3):
        for j in range(2):
            want = _scipy_ref(x[i, :, j], 500.0, 1, "nearest", truncate=10.0)  # untruncated
            assert np.max(np.abs(y[i, :, j] - want)) <= _tol(500.0, 1, 5000, x)
    out = np.empty_like(x)
    assert plan(x, axis=1, mode="nearest", out=out) is out
    np.testing.assert_array_equal(out, y)
    y32 = plan(x.astype(np.float32), axis=1, mode="nearest")
    assert y32.dtype == np.float32
    assert np.max(np.abs(y32 - y)) <= 1e-6 * np.abs(x).max() * 2 / 500.0
    img = RNG.standard_normal((30, 500))
    y2 = fm.gaussian_filter(img, [100.0, 2.0], axes=(0, 1), order=[0, 1], mode="wrap")
    ref = ndi.gaussian_filter1d(ndi.gaussian_filter1d(img, 100.0, axis=0, mode="wrap"),
                                2.0, axis=1, order=1, mode="wrap")
    assert np.max(np.abs(y2 - ref)) <= 1e-3 * np.abs(ref).max()  # the SFT axis: rmse 1e-4


@pytest.mark.parametrize("mode", MODES)
def test_gradient_is_the_adjoint(mode):
    x = torch.tensor(RNG.standard_normal(9), requires_grad=True)
    w = torch.tensor(RNG.standard_normal(9))
    y = fm.gaussian_filter(x, 50.0, order=2, mode=mode, cval=1.5)
    (y * w).sum().backward()
    # the map is affine: x -> A x + b; its gradient is Aᵀ w, A's columns the unit responses
    b = fm.gaussian_filter(torch.zeros(9, dtype=torch.float64), 50.0, order=2, mode=mode,
                           cval=1.5)
    cols = [fm.gaussian_filter(torch.eye(9, dtype=torch.float64)[i], 50.0, order=2, mode=mode,
                               cval=1.5) - b for i in range(9)]
    a = torch.stack(cols, dim=1)
    assert torch.allclose(x.grad, a.T @ w, rtol=0, atol=1e-15)


def test_transition_at_the_radius():
    """Signals just shorter and just longer than the radius agree with scipy to the SFT's
    accuracy: the two paths target the same kernel (up to its truncated tail)."""
    sigma = 25.0  # W = 100
    for n in (100, 101):
        x = RNG.standard_normal(n)
        y = fm.gaussian_filter(x, sigma)
        ref = ndi.gaussian_filter1d(x, sigma, truncate=4.0)
        assert np.linalg.norm(y - ref) <= 1e-3 * np.linalg.norm(x)
    assert GaussianFilter(sigma).uses_folded(100)
    assert not GaussianFilter(sigma).uses_folded(101)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_matches_cpu(mode, dtype):
    x = torch.tensor(RNG.standard_normal((4, 300)), dtype=dtype)
    for order in (0, 1, 2):
        cpu = fm.gaussian_filter(x, 1e4, order=order, mode=mode, cval=0.25)
        gpu = fm.gaussian_filter(x.cuda(), 1e4, order=order, mode=mode, cval=0.25)
        assert gpu.device.type == "cuda" and gpu.dtype == dtype
        tol = (1e-6 if dtype == torch.float32 else 1e-14) / 1e4**order
        assert torch.allclose(gpu.cpu(), cpu, rtol=0, atol=tol * float(x.abs().max()))
