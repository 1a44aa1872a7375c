"""Morlet transform and CWT against direct convolution with Eq. 52, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.signal import fftconvolve

from fastmoments import CWT, Morlet, MorletTransform, cwt, morlet_transform
from fastmoments.signal.coefficients import morlet_kernel


def exact(x: np.ndarray, sigma: float, xi: float) -> np.ndarray:
    """Σ_k ψ_{σ,ξ}[k] x[n - k] in complex128, wavelet truncated at 10σ, reflect ends."""
    w = math.ceil(10 * sigma)
    xp = np.pad(x, w, mode="symmetric")
    return fftconvolve(xp, morlet_kernel(np.arange(-w, w + 1), sigma, xi), mode="valid")


def relerr(y, ref) -> float:
    return float(np.linalg.norm(np.asarray(y) - ref) / np.linalg.norm(ref))


@pytest.mark.parametrize("xi", [1.0, 3.0, 6.0, 12.0, 20.0])
@pytest.mark.parametrize("sigma", [4.0, 60.0, 700.0])
@pytest.mark.parametrize("method,approximation", [("sft", "direct"), ("asft", "direct"),
                                                  ("sft", "multiplication"),
                                                  ("asft", "multiplication")])
def test_against_direct_convolution(xi, sigma, method, approximation, rng):
    plan = MorletTransform(sigma, xi, method=method, approximation=approximation)
    assert plan.rmse <= 1e-4
    x = rng.standard_normal(max(2000, 10 * plan.K))
    e = relerr(plan(x), exact(x, sigma, xi))
    assert e <= 1.5 * plan.rmse + 1e-12


def test_truncated_convolution_method(rng):
    x = rng.standard_normal(3000)
    plan = MorletTransform(30.0, 6.0, method="direct", truncate=4.0)
    assert relerr(plan(x), exact(x, 30.0, 6.0)) <= 1.5 * plan.rmse
    assert plan.rmse < 2e-4


def test_engines_agree(rng):
    x = rng.standard_normal((2, 700))
    plan = MorletTransform(25.0, 6.0)
    ys = [plan(x, engine=e) for e in ("prefix", "recursive", "sliding")]
    for y in ys[1:]:
        np.testing.assert_allclose(y, ys[0], rtol=0, atol=1e-13)
    pa = MorletTransform(25.0, 6.0, method="asft")
    np.testing.assert_allclose(pa(x, engine="recursive"), pa(x, engine="sliding"), atol=1e-13)


def test_float32_error_bound(rng):
    x = rng.standard_normal(6000)
    for method, engine in (("sft", "prefix"), ("sft", "sliding"), ("asft", "recursive")):
        plan = MorletTransform(200.0, 6.0, method=method)
        y64 = plan(x, engine=engine)
        y32 = plan(x.astype(np.float32), engine=engine)
        assert y32.dtype == np.complex64 and y64.dtype == np.complex128
        assert relerr(y32, y64) < 1e-5


def test_batch_equals_loop_and_kinds(rng, device):
    x = rng.standard_normal((3, 400))
    keep = x.copy()
    y = morlet_transform(x, 9.0, 5.0)
    np.testing.assert_array_equal(x, keep)
    for i in range(3):
        np.testing.assert_allclose(y[i], morlet_transform(x[i], 9.0, 5.0), atol=1e-14)
    t = torch.tensor(x, device=device)
    yt = morlet_transform(t, 9.0, 5.0)
    assert isinstance(yt, torch.Tensor) and yt.dtype == torch.complex128
    assert yt.device == t.device
    np.testing.assert_allclose(yt.cpu().numpy(), y, atol=1e-12)
    y0 = morlet_transform(x.T, 9.0, 5.0, axis=0)
    np.testing.assert_allclose(y0.T, y, atol=1e-14)


def test_gradcheck():
    x = torch.randn(30, dtype=torch.float64, requires_grad=True)
    plan = MorletTransform(3.0, 6.0)
    assert torch.autograd.gradcheck(lambda t: torch.view_as_real(plan(t)), (x,))


def test_errors_name_the_parameter():
    x = np.ones(20)
    with pytest.raises(ValueError, match="sigma"):
        morlet_transform(x, 0.0)
    with pytest.raises(ValueError, match="xi"):
        morlet_transform(x, 2.0, -1.0)
    with pytest.raises(ValueError, match="axis"):
        morlet_transform(x, 2.0, axis=2)
    with pytest.raises(ValueError, match="NaN"):
        morlet_transform(np.array([0.0, np.inf]), 2.0)
    with pytest.raises(ValueError, match="approximation must be one of 'direct', "):
        morlet_transform(x, 2.0, approximation="product")
    with pytest.raises(ValueError, match="xi must be finite and > 0"):
        Morlet(xi=0.0)


# ------------------------------------------------------------------------------------- CWT
def test_cwt_equals_per_scale_transforms(rng):
    x = rng.standard_normal((2, 1500))
    scales = [40.0, 2.0, 130.0, 7.5]  # unsorted: the row engines once returned sorted rows
    coef, freqs = cwt(x, scales, Morlet(5.0), sampling_period=0.01)
    assert coef.shape == (4, 2, 1500) and coef.dtype == np.complex128
    for i, s in enumerate(scales):
        np.testing.assert_allclose(coef[i], morlet_transform(x, s, 5.0), atol=1e-13)
        assert freqs[i] == pytest.approx(5.0 / (2 * np.pi * s) / 0.01)
    for engine in ("sliding", "prefix", "recursive"):
        c1, _ = cwt(x[0], scales, Morlet(5.0), engine=engine, memory_budget=2**22)
        np.testing.assert_allclose(c1, coef[:, 0], atol=1e-12)  # scales split into groups


def test_cwt_axis_and_torch(rng, device):
    x = rng.standard_normal((300, 3))
    coef, _ = cwt(x, [3.0, 10.0], axis=0)
    assert coef.shape == (2, 300, 3)
    np.testing.assert_allclose(coef[:, :, 1], cwt(x[:, 1], [3.0, 10.0])[0], atol=1e-14)
    ct, _ = cwt(torch.tensor(x, dtype=torch.float32, device=device), [3.0, 10.0], axis=0)
    assert isinstance(ct, torch.Tensor) and ct.dtype == torch.complex64
    np.testing.assert_allclose(ct.cpu().numpy(), coef, atol=1e-5)


def test_cwt_accuracy_across_scales(rng):
    x = rng.standard_normal(6000)
    scales = np.geomspace(2.0, 300, 9)  # ξ/σ < π: the carrier below the Nyquist frequency
    plan = CWT(scales, method="asft")
    coef = plan(x)
    for i, s in enumerate(scales):
        assert relerr(coef[i], exact(x, s, 6.0)) <= 1.5 * plan.plans[i].rmse + 1e-12


def test_cwt_peak_frequency(rng):
    # a pure tone's scalogram peaks at the scale whose frequency is the tone's
    n = np.arange(8192)
    scales = np.geomspace(4, 200, 40)
    coef, freqs = cwt(np.cos(2 * np.pi * 0.02 * n), scales, Morlet(8.0))
    best = freqs[np.argmax(np.abs(coef[:, 4096]))]
    assert best == pytest.approx(0.02, rel=0.06)


def test_cwt_errors():
    with pytest.raises(ValueError, match="scales"):
        cwt(np.ones(10), [1.0, -2.0])
    with pytest.raises(ValueError, match="scales"):
        cwt(np.ones(10), [])
    with pytest.raises(TypeError, match="wavelet"):
        cwt(np.ones(10), [1.0], "morl")
    with pytest.raises(ValueError, match="method must be one of"):
        cwt(np.ones(10), [1.0], method="fft")
