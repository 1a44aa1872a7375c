"""The second-order recursive filter engine ("recursive2", ASFT paper Eqs. 29-31 and 39)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.signal import fftconvolve

from fastmoments import GaussianFilter, Morlet, MorletTransform, cwt
from fastmoments.signal import ENGINES
from fastmoments.signal.boundary import MODES
from fastmoments.signal.coefficients import morlet_kernel
from fastmoments.signal.recursive2 import VARIANTS, recursive_sums
from fastmoments.signal.sliding import SFTBank

from ..reference_signal import discrete_gaussian

NP_MODE = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap",
           "constant": "constant"}


def _relerr(y, ref) -> float:
    return float(np.linalg.norm(np.asarray(y) - ref) / np.linalg.norm(ref))


def _direct_sums(x: np.ndarray, q: np.ndarray, length: int, n: int) -> np.ndarray:
    """S[m] = Σ_{s<L} x[m + s] q^s by the double sum (float64/complex128)."""
    xp = np.concatenate([x, np.zeros((x.shape[0], length))], axis=1)
    s = np.zeros((x.shape[0], len(q), n), complex)
    for k in range(length):
        s += xp[:, None, k: k + n] * (q[:, None] ** k)
    return s


def test_engine_is_listed():
    assert "recursive2" in ENGINES


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variants_match_the_double_sum(variant, rng):
    order, windowed = VARIANTS[variant]
    x = rng.standard_normal((2, 300))
    # SFT (|q| = 1), ASFT (|q| < 1), ω = 0 (double pole) and ω = π
    q = np.array([np.exp(0.4j), np.exp(-0.05 - 2.1j), 1.0 + 0j, -1.0 + 0j, np.exp(-0.3)])
    length, n = 41, 250
    ref = _direct_sums(x, q, length, n)
    s = recursive_sums(torch.tensor(x), torch.tensor(q), length, n, order=order,
                       windowed=windowed).numpy()
    assert s.dtype == np.complex128
    np.testing.assert_allclose(s, ref, rtol=0, atol=1e-11)


@pytest.mark.parametrize("alpha", [False, True])
def test_bank_matches_its_kernel(alpha, rng, device):
    """Σ_j h[j] x[n - j] with h = SFTBank.kernel, as for the other row engines."""
    r = 7
    bank = SFTBank(
        omega=rng.uniform(-3, 3, r), alpha=rng.uniform(0.01, 0.3, r) if alpha else np.zeros(r),
        half=np.array([3, 3, 9, 9, 9, 20, 20]),
        shift=np.array([0, 0, 2, 2, 2, -4, -4]) if alpha else np.zeros(r, int),
        mu=rng.standard_normal(r) + 1j * rng.standard_normal(r),
        nu=rng.standard_normal(r) + 1j * rng.standard_normal(r),
        channel=np.array([0, 0, 1, 1, 1, 2, 2]), n_channels=3, complex_output=True)
    n = 64
    xp = torch.tensor(rng.standard_normal((2, n + 2 * bank.pad)), device=device)
    j = np.arange(-bank.pad, bank.pad + 1)
    h = bank.kernel(j)
    xnp = xp.cpu().numpy()
    ref = np.zeros((2, 3, n), complex)
    for t, jj in enumerate(j):
        ref += h[None, :, t, None] * xnp[:, None, bank.pad - jj: bank.pad - jj + n]
    y = bank.apply(xp, n, "recursive2")
    assert y.device == xp.device
    np.testing.assert_allclose(y.cpu().numpy(), ref, rtol=0, atol=1e-12)


def _gaussian_exact(x, sigma, order, mode, cval):
    w = math.ceil(10 * sigma)
    h = discrete_gaussian(np.arange(-w, w + 1, dtype=np.float64), sigma, order)
    kw = {"constant_values": cval} if mode == "constant" else {}
    return fftconvolve(np.pad(x, w, mode=NP_MODE[mode], **kw), h, mode="valid")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("method", ["sft", "asft"])
def test_gaussian_against_reference_and_engines(mode, order, method, rng):
    sigma = 12.0
    plan = GaussianFilter(sigma, order=order, method=method)
    x = rng.standard_normal((2, 700))
    y = plan(x, engine="recursive2", mode=mode, cval=0.4)
    assert y.dtype == np.float64
    for row in range(2):
        ref = _gaussian_exact(x[row], sigma, order, mode, 0.4)
        assert _relerr(y[row], ref) <= 1.5 * plan.rmse + 1e-12
    for other in ("sliding", "recursive") + (("prefix",) if method == "sft" else ()):
        np.testing.assert_allclose(y, plan(x, engine=other, mode=mode, cval=0.4),
                                   rtol=0, atol=1e-12 * np.abs(y).max())


@pytest.mark.parametrize(("method", "approximation"), [("sft", "direct"), ("asft", "direct"),
                                                       ("sft", "multiplication"),
                                                       ("asft", "multiplication")])
def test_morlet_against_reference_and_engines(method, approximation, rng):
    sigma, xi = 15.0, 6.0
    plan = MorletTransform(sigma, xi, method=method, approximation=approximation)
    x = rng.standard_normal(900)
    y = plan(x, engine="recursive2")
    assert y.dtype == np.complex128
    w = math.ceil(10 * sigma)
    ref = fftconvolve(np.pad(x, w, mode="symmetric"),
                      morlet_kernel(np.arange(-w, w + 1), sigma, xi), mode="valid")
    assert _relerr(y, ref) <= 1.5 * plan.rmse + 1e-12
    np.testing.assert_allclose(y, plan(x, engine="sliding"), rtol=0,
                               atol=1e-12 * np.abs(y).max())


def test_cwt_scales_in_groups(rng):
    x = rng.standard_normal(800)
    scales = [30.0, 3.0, 9.0]
    ref, _ = cwt(x, scales, Morlet(5.0), engine="sliding")
    got, _ = cwt(x, scales, Morlet(5.0), engine="recursive2")
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_float32_runs_in_float32_and_drifts_without_attenuation():
    """The second-order filter keeps float32 (complex64) arithmetic; for the plain SFT its
    error grows with the signal length, for the ASFT it stays at float32's rounding."""
    rng = np.random.default_rng(3)
    x64 = rng.random((1, 40000)) + 1.0
    q_sft = np.array([np.exp(1j * np.pi / 30)])
    q_asft = q_sft * np.exp(-0.02)
    errs = {}
    for name, q in (("sft", q_sft), ("asft", q_asft)):
        ref = recursive_sums(torch.tensor(x64), torch.tensor(q), 61, 200).numpy()
        s32 = recursive_sums(torch.tensor(x64, dtype=torch.float32), torch.tensor(q), 61, 200)
        assert s32.dtype == torch.complex64
        errs[name] = np.abs(s32.numpy() - ref).max() / np.abs(ref).max()
    assert errs["asft"] < 1e-5
    assert errs["sft"] > 10 * errs["asft"]


def test_errors_name_the_engine_or_parameter(rng):
    x = torch.tensor(rng.standard_normal((1, 50)), requires_grad=True)
    q = torch.tensor([np.exp(0.3j)])
    with pytest.raises(ValueError, match="recursive2"):
        recursive_sums(x, q, 5, 10)
    with pytest.raises(ValueError, match="order must be 1 or 2"):
        recursive_sums(x.detach(), q, 5, 10, order=3)
    with pytest.raises(ValueError, match="order must be 1 or 2"):
        recursive_sums(x.detach(), q, 5, 10, order=True)
    plan = GaussianFilter(4.0, method="sft")  # the SFT engines (auto may pick the FIR)
    with pytest.raises(ValueError, match="recursive2"):
        plan(x, engine="recursive2")
