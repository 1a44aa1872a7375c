"""The numba engine (engine="numba"): the bank's exact kernel, the torch engines, the float64
references, every boundary mode, float32, edge cases and the dispatch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.signal import fftconvolve

from fastmoments.signal import CWT, GaussianFilter, MorletTransform, _apply, gaussian_filter
from fastmoments.signal._apply import resolve_engine
from fastmoments.signal.boundary import MODES, extend
from fastmoments.signal.chunked import chunked_apply
from fastmoments.signal.sliding import SFTBank

from ..reference_signal import discrete_gaussian

pytest.importorskip("numba")
from fastmoments.signal._numba_sft import numba_apply

NP_MODE = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap",
           "constant": "constant"}


def _bank(rng, alpha: bool, cplx: bool) -> SFTBank:
    """Rows in five groups over three channels: windows shorter and longer than a chunk, ASFT
    shifts, and a channel fed by two groups (shifts 0 and 2)."""
    half = np.array([3, 3, 9, 9, 9, 40, 40, 150])
    r = len(half)
    shift = np.array([0, 0, 2, 2, 2, -4, -4, 5]) if alpha else np.zeros(r, int)
    c = (lambda k: rng.standard_normal(k) + 1j * rng.standard_normal(k)) if cplx else \
        (lambda k: rng.standard_normal(k) + 0j)
    return SFTBank(
        omega=rng.uniform(-3, 3, r), alpha=rng.uniform(0.005, 0.2, r) if alpha else np.zeros(r),
        half=half, shift=shift, mu=c(r), nu=c(r), channel=np.array([0, 0, 1, 1, 1, 2, 2, 0]),
        n_channels=3, complex_output=cplx)


def _tolerance(bank: SFTBank, x: np.ndarray, chunk: int, cval: float = 0.0) -> float:
    """The bound of the module's Notes, ``(C + max(16, F) + F) ε Σ|h| max|x̃|``, doubled."""
    h1 = np.abs(bank.kernel(np.arange(-bank.pad, bank.pad + 1))).sum(1).max()
    f = int(np.max(2 * bank.half + 1)) // chunk
    return 2 * (chunk + max(16, f) + f) * 2.0**-53 * h1 * max(np.abs(x).max(), abs(cval))


def _kernel_reference(bank: SFTBank, x: np.ndarray, mode: str, cval: float) -> np.ndarray:
    """Σ_j h[j] x̃[n - j] with h = SFTBank.kernel (a direct double sum in float64)."""
    n = x.shape[-1]
    pad = bank.pad
    xp = extend(torch.from_numpy(x), pad, pad, mode, cval).numpy()
    j = np.arange(-pad, pad + 1)
    h = bank.kernel(j)
    ref = np.zeros((x.shape[0], bank.n_channels, n), dtype=h.dtype)
    for t, jj in enumerate(j):
        ref += h[None, :, t, None] * xp[:, None, pad - jj: pad - jj + n]
    return ref


@pytest.mark.parametrize("alpha", [False, True])
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_bank_kernel_every_mode(alpha, cplx, mode, rng):
    """Signals from 1 sample to several chunks, chunk lengths from 8 (windows of up to 38
    chunks: anchors by the chunk-level recursion between Horner resets) to 64."""
    bank = _bank(rng, alpha, cplx)
    for n in (1, 2, 7, 64, 65, 333):
        x = rng.standard_normal((2, n))
        ref = _kernel_reference(bank, x, mode, 0.7)
        for chunk in (8, 64):
            y = numba_apply(bank, torch.from_numpy(x), mode, 0.7, chunk=chunk).numpy()
            np.testing.assert_allclose(y, ref, rtol=0, atol=_tolerance(bank, x, chunk, 0.7),
                                       err_msg=f"{n} {chunk}")


@pytest.mark.parametrize("alpha", [False, True])
def test_matches_the_chunked_engine(alpha, rng):
    bank = _bank(rng, alpha, True)
    x = torch.from_numpy(rng.standard_normal((3, 1000)))
    tol = 2 * _tolerance(bank, x.numpy(), 64, -1.5)  # both engines' rounding
    for mode in MODES:
        np.testing.assert_allclose(numba_apply(bank, x, mode, -1.5).numpy(),
                                   chunked_apply(bank, x, mode, -1.5).numpy(),
                                   rtol=0, atol=tol)


def test_long_resonant_signal_does_not_drift(rng):
    """A sinusoid at a row's own frequency, 300000 samples (the worst case for a recursion with
    |q| = 1: every rounding of q adds coherently): sampled outputs against the direct sum."""
    plan = GaussianFilter(40.0, order=2)
    bank = plan.bank
    n = 300_000
    t = np.arange(n)
    x = 100.0 * np.cos(bank.omega[2] * t + 0.3) + rng.standard_normal(n)
    y = numba_apply(bank, torch.from_numpy(x[None]), "reflect", chunk=64)[0, 0].numpy()
    k = np.arange(-bank.pad, bank.pad + 1)
    h = bank.kernel(k)[0]
    scale = np.abs(h).sum() * np.abs(x).max()
    for i in rng.integers(bank.pad, n - bank.pad, 40):
        ref = np.dot(h, x[i - k])
        assert abs(y[i] - ref) <= 1e-13 * scale


@pytest.mark.parametrize("sigma", [2.0, 16.0, 300.0])
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("method", ["sft", "asft"])
def test_gaussian_against_float64_reference(sigma, order, method, rng):
    """Against the target kernel of tests/reference_signal.py (within the fit's RMSE) and
    against the chunked engine (to float64 rounding)."""
    plan = GaussianFilter(sigma, order=order, method=method)
    x = rng.standard_normal(max(3000, 10 * plan.K))
    y = plan(x, engine="numba", mode="reflect")
    w = math.ceil(10 * sigma)
    h = discrete_gaussian(np.arange(-w, w + 1, dtype=np.float64), sigma, order)
    exact = fftconvolve(np.pad(x, w, mode="symmetric"), h, mode="valid")
    assert np.linalg.norm(y - exact) <= (1.5 * plan.rmse + 1e-12) * np.linalg.norm(exact)
    np.testing.assert_allclose(y, plan(x, engine="chunked"), rtol=0,
                               atol=1e-13 * np.abs(y).max())


@pytest.mark.parametrize("method", ["sft", "asft"])
def test_morlet_and_cwt_match_chunked(method, rng):
    x = rng.standard_normal((2, 700))
    m = MorletTransform(9.0, method=method)
    np.testing.assert_allclose(m(x, engine="numba"), m(x, engine="chunked"), rtol=0, atol=1e-13)
    c = CWT([2.0, 4.5, 30.0], method=method)
    np.testing.assert_allclose(c(x, engine="numba"), c(x, engine="chunked"), rtol=0, atol=1e-13)


def test_float32_is_one_rounding_of_float64(rng):
    """Float32 signals are widened and filtered in float64; the result is rounded once, so it
    is within 2^-24 relative of the float64 result of the same (widened) samples."""
    x32 = rng.standard_normal((2, 2000)).astype(np.float32)
    for plan in (GaussianFilter(20.0, order=1, method="sft"), MorletTransform(12.0, method="asft")):
        y32 = plan(x32, engine="numba")
        y64 = plan(x32.astype(np.float64), engine="numba")
        assert y32.dtype == (np.float32 if y64.dtype == np.float64 else np.complex64)
        bound = 2.0**-24 * np.abs(y64) * math.sqrt(2) + 1e-12 * np.abs(y64).max()
        assert np.all(np.abs(y32 - y64) <= bound)


def test_edges_batches_axes_out_and_nan(rng):
    plan = GaussianFilter(6.0)
    assert plan(np.zeros(0), engine="numba").shape == (0,)
    assert plan(np.zeros((3, 0)), engine="numba").shape == (3, 0)
    np.testing.assert_allclose(plan(np.array([2.5]), engine="numba"), [2.5], atol=1e-12)
    x = rng.standard_normal((4, 5, 90))
    ref = plan(x, engine="chunked")
    np.testing.assert_allclose(plan(x, engine="numba"), ref, rtol=0, atol=1e-13)
    np.testing.assert_allclose(plan(np.moveaxis(x, -1, 1), axis=1, engine="numba"),
                               np.moveaxis(ref, -1, 1), rtol=0, atol=1e-13)
    out = np.empty((90, 5, 4)).transpose()  # not C-contiguous: filled through a temporary
    assert plan(x, engine="numba", out=out) is out
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-13)
    x[1, 2, 40] = np.nan
    y = plan(x, engine="numba", check_finite=False)
    assert np.isnan(y[1, 2, 40]) and np.isfinite(y[0]).all()


@pytest.mark.parametrize("case", ["jobs", "split"])
def test_threads_do_not_change_the_result(case, rng):
    """Several jobs over threads, or one long job split over time (anchors by row, outputs
    by runs of chunks): the same result as one thread."""
    if case == "jobs":
        x = torch.from_numpy(rng.standard_normal((5, 400)))
        bank = MorletTransform(7.0).bank
    else:
        x = torch.from_numpy(rng.standard_normal((1, 9000)))
        bank = GaussianFilter(30.0, order=2, method="asft").bank
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = numba_apply(bank, x, "wrap")
        torch.set_num_threads(2)
        two = numba_apply(bank, x, "wrap")
    finally:
        torch.set_num_threads(before)
    # the same arithmetic; the serial and parallel kernels are compiled apart, so their
    # roundings (contractions into FMAs) may differ in the last bits
    np.testing.assert_allclose(one.numpy(), two.numpy(), rtol=0,
                               atol=1e-14 * np.abs(one.numpy()).max())


def test_gradient_falls_back_to_the_torch_engine(rng):
    plan = GaussianFilter(5.0, order=1)
    x = torch.tensor(rng.standard_normal((2, 80)), requires_grad=True)
    y = plan(x, engine="numba")
    assert y.requires_grad
    y.pow(2).sum().backward()
    x2 = x.detach().clone().requires_grad_(True)
    plan(x2, engine="chunked").pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=0, atol=1e-12)


def test_auto_picks_numba_for_real_banks():
    cpu = torch.device("cpu")
    assert resolve_engine("auto", "sft", cpu, GaussianFilter(30.0).bank) == "numba"
    assert resolve_engine("auto", "sft", cpu, MorletTransform(30.0).bank) == "chunked"
    assert resolve_engine("auto", "sft", cpu) == "chunked"
    assert resolve_engine("numba", "asft", cpu) == "numba"
    # the interior of a ramp is unchanged by a symmetric kernel (to the fit's accuracy)
    np.testing.assert_allclose(gaussian_filter(np.arange(60.0), 3.0)[20:40],
                               np.arange(20.0, 40.0), atol=1e-3)


def test_engine_numba_errors(monkeypatch):
    """Off the CPU, or without numba, engine='numba' is refused by name (before any work)."""
    with pytest.raises(ValueError, match="engine='numba' runs on the CPU only"):
        resolve_engine("numba", "sft", torch.device("cuda"))
    monkeypatch.setattr(_apply, "numba_available", lambda: False)
    with pytest.raises(ValueError, match="engine='numba' needs the numba package"):
        GaussianFilter(3.0, method="sft")(np.ones(10), engine="numba")
