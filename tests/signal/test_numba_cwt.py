"""The SIMD numba kernels of the CPU CWT (:mod:`fastmoments.signal._numba_cwt`): the bank's exact
kernel by a float64 double sum, every boundary mode, float32 against float64 with the bound of
the module's Notes, long signals, batches, axes, ``out=``, NaN, threads and the dispatch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fastmoments.signal import CWT
from fastmoments.signal.boundary import MODES, extend
from fastmoments.signal.cwt import _group_bank
from fastmoments.signal.routes import cwt_simd
from fastmoments.signal.sliding import SFTBank

pytest.importorskip("numba")
from fastmoments.signal import _numba_cwt
from fastmoments.signal._numba_cwt import CHUNK, eligible, numba_cwt_apply

EPS = {np.float32: 2.0**-24, np.float64: 2.0**-53}


def _cwt_bank(scales, method="sft", approximation="direct"):
    plan = CWT(scales, method=method, approximation=approximation)
    return _group_bank(tuple(plan.plans))


def _random_bank(rng, alpha: bool) -> SFTBank:
    """Three channels, one row group each, with random complex weights: output maps that are
    not rotations (the engine's general form), windows below and above the direct limit."""
    half = np.repeat([5, 70, 300], [3, 5, 6])
    r = len(half)
    c = lambda k: rng.standard_normal(k) + 1j * rng.standard_normal(k)  # noqa: E731
    return SFTBank(omega=rng.uniform(-3, 3, r), alpha=rng.uniform(0.002, 0.05, r) if alpha
                   else np.zeros(r), half=half,
                   shift=np.repeat([0, 3, -5], [3, 5, 6]) if alpha else np.zeros(r, int),
                   mu=c(r), nu=c(r), channel=np.repeat([0, 1, 2], [3, 5, 6]), n_channels=3,
                   complex_output=True)


def _reference(bank: SFTBank, x: np.ndarray, mode: str, cval: float) -> np.ndarray:
    """``Σ_j h[j] x̃[n - j]`` with ``h = SFTBank.kernel`` (a direct double sum in float64)."""
    n = x.shape[-1]
    pad = bank.pad
    xp = extend(torch.from_numpy(x.astype(np.float64)), pad, pad, mode, cval).numpy()
    j = np.arange(-pad, pad + 1)
    h = bank.kernel(j)
    ref = np.zeros((x.shape[0], bank.n_channels, n), dtype=np.complex128)
    for t, jj in enumerate(j):
        ref += h[None, :, t, None] * xp[:, None, pad - jj: pad - jj + n]
    return ref


def _bound(bank: SFTBank, x: np.ndarray, chunk: int, eps: float, cval: float = 0.0):
    """The error bound of the module's Notes per channel, ``(C + 2 max(16, F) + 16) ε`` times
    the rows' ``Σ_r (|A_r| + |B_r|) Σ_s |x̃| |q_r|^s``, bounded by ``2 (|μ_r| + |ν_r|)
    e^{α_r K_r} L max|x̃|`` (``A``, ``B`` from ``μ``, ``ν`` and ``w^K``, ``|w^K| =
    e^{α K}``), shape ``(n_channels, 1)``."""
    top = max(float(np.abs(x).max()), abs(cval))
    out = np.zeros((bank.n_channels, 1))
    for r0, r1, ch, half, _ in bank.groups:
        big_l = 2 * half + 1
        f = big_l // chunk
        rows = 2 * (np.abs(bank.mu[r0:r1]) + np.abs(bank.nu[r0:r1])) * np.exp(
            bank.alpha[r0:r1] * half)
        out[ch] += (chunk + 2 * max(16, f) + 16) * eps * rows.sum() * big_l * top
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["cwt", "asft", "random"])
def test_exact_kernel_every_mode_float64(mode, kind, rng):
    """Float64 signals from 1 sample to several segments of chunks, chunk lengths 16 (windows
    of up to 38 chunks: anchors by the chunk-level recursion between Horner re-anchorings)
    and the default, against the float64 double sum with the bank's kernel."""
    if kind == "random":
        bank = _random_bank(rng, alpha=False)
    else:
        bank = _cwt_bank([2.0, 4.0, 9.0, 25.0, 70.0], method="sft" if kind == "cwt" else "asft")
    assert eligible(bank)
    for n in (1, 2, 7, 64, 65, 1000, 2333):
        x = rng.standard_normal((2, n))
        ref = _reference(bank, x, mode, 0.7)
        for chunk in (16, CHUNK):
            y = numba_cwt_apply(bank, torch.from_numpy(x), mode, 0.7, chunk=chunk).numpy()
            tol = _bound(bank, x, chunk, EPS[np.float64], 0.7)
            assert np.all(np.abs(y - ref) <= tol[None]), (n, chunk)


def test_asft_random_rows(rng):
    bank = _random_bank(rng, alpha=True)
    x = rng.standard_normal((3, 1500))
    for mode in ("reflect", "constant"):
        ref = _reference(bank, x, mode, -1.2)
        y = numba_cwt_apply(bank, torch.from_numpy(x), mode, -1.2).numpy()
        assert np.all(np.abs(y - ref) <= _bound(bank, x, CHUNK, EPS[np.float64], -1.2)[None])


@pytest.mark.parametrize("mode", ["reflect", "wrap"])
def test_float32_error_against_float64(mode, rng):
    """Float32 signals are computed in float32: within the bound of the Notes of the float64
    result of the same samples, whatever the scale (64 log-spaced scales 2-1024)."""
    bank = _cwt_bank(np.geomspace(2.0, 1024.0, 64))
    x32 = rng.standard_normal((1, 12000)).astype(np.float32)
    y32 = numba_cwt_apply(bank, torch.from_numpy(x32), mode).numpy()
    y64 = numba_cwt_apply(bank, torch.from_numpy(x32.astype(np.float64)), mode).numpy()
    assert y32.dtype == np.complex64
    tol = _bound(bank, x32, CHUNK, EPS[np.float32])
    assert np.all(np.abs(y32 - y64) <= tol[None])
    # and in practice far below it: relative to each scale's largest coefficient
    rel = np.abs(y32 - y64).max(-1) / np.abs(y64).max(-1)
    assert rel.max() < 2e-5


def test_float32_error_does_not_grow_with_length(rng):
    """A 300000-sample resonant signal (a sinusoid at a scale's centre frequency plus noise):
    the float32 error at the end is no larger than at the start (anchors reset every chunk)."""
    bank = _cwt_bank([40.0, 400.0])
    n = 300_000
    t = np.arange(n)
    x = (np.cos(6.0 / 40.0 * t) + 0.1 * rng.standard_normal(n)).astype(np.float32)[None]
    y32 = numba_cwt_apply(bank, torch.from_numpy(x), "reflect").numpy()
    y64 = numba_cwt_apply(bank, torch.from_numpy(x.astype(np.float64)), "reflect").numpy()
    err = np.abs(y32 - y64)[0]
    tol = _bound(bank, x, CHUNK, EPS[np.float32])
    assert np.all(err <= tol)
    head, tail = err[:, 5000:50_000].max(-1), err[:, -50_000:-5000].max(-1)
    assert np.all(tail <= 2 * head + 1e-6 * np.abs(y64).max())


def test_matches_the_chunked_engine(rng):
    x = rng.standard_normal((2, 3000))
    for kw in (dict(method="sft"), dict(method="asft"), dict(approximation="multiplication")):
        plan = CWT([1.2, 3.0, 10.0, 33.0, 120.0], **kw)
        a = plan(x, engine="numba")
        b = plan(x, engine="chunked")
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-11 * np.abs(b).max(), err_msg=str(kw))


def test_batches_axes_out_and_nan(rng):
    plan = CWT([2.0, 7.0, 90.0])
    x = rng.standard_normal((3, 4, 700))
    ref = plan(x, engine="chunked")
    y = plan(x, engine="numba")
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-11)
    loop = np.stack([plan(x[i], engine="numba") for i in range(3)], axis=1)
    np.testing.assert_allclose(y, loop, rtol=0, atol=1e-13)  # batch equals loop
    ya = plan(np.moveaxis(x, -1, 0), axis=0, engine="numba")
    np.testing.assert_allclose(ya, np.moveaxis(ref, -1, 1), rtol=0, atol=1e-11)
    out = np.empty(ref.shape, dtype=np.complex128)
    assert plan(x, engine="numba", out=out) is out
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-11)
    strided = np.empty((700, 4, 3, 3), dtype=np.complex128).transpose(3, 2, 1, 0)
    assert plan(x, engine="numba", out=strided) is strided  # not C-contiguous: a temporary
    np.testing.assert_allclose(strided, ref, rtol=0, atol=1e-11)
    x32 = x.astype(np.float32)
    out32 = np.empty(ref.shape, dtype=np.complex64)
    assert plan(x32, engine="numba", out=out32) is out32
    np.testing.assert_allclose(out32, ref, rtol=0, atol=1e-4 * np.abs(ref).max())
    with pytest.raises(TypeError, match="out must have dtype complex64"):
        plan(x32, engine="numba", out=out)
    with pytest.raises(ValueError, match="out is read-only"):
        ro = np.empty_like(out)
        ro.flags.writeable = False
        plan(x, engine="numba", out=ro)
    big = np.zeros((3, 3, 4, 700), dtype=np.complex128)
    with pytest.raises(ValueError, match="overlap"):
        plan(big.real[0], engine="numba", out=big)
    bad = x.copy()
    bad[1, 2, 5] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        plan(bad, engine="numba")
    bad[1, 2, 5] = np.nan
    y = plan(bad, engine="numba", check_finite=False)
    assert np.isnan(y[:, 1, 2]).any() and np.isfinite(y[:, 0]).all()


def test_tensors_in_and_out(rng):
    plan = CWT([3.0, 50.0])
    x = torch.from_numpy(rng.standard_normal((2, 500)).astype(np.float32))
    y = plan(x, engine="numba")
    assert isinstance(y, torch.Tensor) and y.dtype == torch.complex64
    out = torch.empty_like(y)
    assert plan(x, engine="numba", out=out) is out
    np.testing.assert_allclose(out.numpy(), y.numpy(), rtol=0, atol=0)


def test_threads_do_not_change_the_result(rng):
    """The (signal, run of scales) jobs over two threads: the same values as one thread (the
    same kernels on the same data)."""
    bank = _cwt_bank(np.geomspace(2.0, 300.0, 9))
    x = torch.from_numpy(rng.standard_normal((3, 5000)).astype(np.float32))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = numba_cwt_apply(bank, x, "reflect").numpy()
        torch.set_num_threads(2)
        two = numba_cwt_apply(bank, x, "reflect").numpy()
        single = numba_cwt_apply(bank, x[:1], "reflect").numpy()
    finally:
        torch.set_num_threads(before)
    tol = 1e-6 * np.abs(one).max()  # serial and parallel kernels are compiled apart
    np.testing.assert_allclose(one, two, rtol=0, atol=tol)
    np.testing.assert_allclose(one[:1], single, rtol=0, atol=tol)


def test_other_banks_keep_the_float64_recursions(rng):
    """A complex bank with two row groups on one channel is not this engine's: engine='numba'
    runs it with the float64 recursions of _numba_sft (the same values as chunked)."""
    bank = _random_bank(rng, alpha=False)
    two = SFTBank(omega=bank.omega, alpha=bank.alpha, half=bank.half, shift=bank.shift,
                  mu=bank.mu, nu=bank.nu, channel=np.repeat([0, 1, 0], [3, 5, 6]),
                  n_channels=2, complex_output=True)
    assert not eligible(two)
    from fastmoments.signal._apply import apply_bank

    x = torch.from_numpy(rng.standard_normal((2, 900)))
    a = apply_bank(two, x, axis=-1, mode="mirror", cval=0.0, engine="numba")
    b = apply_bank(two, x, axis=-1, mode="mirror", cval=0.0, engine="chunked")
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=1e-13 * np.abs(b.numpy()).max())


def test_auto_runs_large_cpu_cwts_on_the_simd_kernels():
    big, small = 102400, 1000
    assert cwt_simd("cpu", "sft", 64, big * 64, False)
    assert cwt_simd("cpu", "asft", 64, big * 64, False)
    assert not cwt_simd("cpu", "sft", 64, small * 64, False)  # small calls stay on torch
    assert not cwt_simd("cpu", "direct", 64, big * 64, False)
    assert not cwt_simd("cpu", "sft", 1, big, False)
    assert not cwt_simd("cpu", "sft", 64, big * 64, True)  # a gradient: torch
    assert not cwt_simd("cuda", "sft", 64, big * 64, False)
    plan = CWT(np.geomspace(2.0, 200.0, 8))
    x = np.random.default_rng(1).standard_normal(40_000)
    y = plan(x)
    assert str(plan.route) == "sft/numba:simd" and "route='sft/numba:simd'" in repr(plan)
    np.testing.assert_allclose(y, plan(x, engine="chunked"), rtol=0, atol=1e-11)
    assert plan.route.backend == "torch"


def test_gradient_falls_back_to_the_torch_engine(rng):
    plan = CWT([2.0, 30.0])
    x = torch.tensor(rng.standard_normal((1, 300)), requires_grad=True)
    y = plan(x, engine="numba")
    assert y.requires_grad
    y.abs().pow(2).sum().backward()
    assert torch.isfinite(x.grad).all()


def test_warm_up_and_tables_are_cached():
    _numba_cwt.warm_up()
    bank = _cwt_bank([5.0, 50.0])
    t1 = _numba_cwt._tables(bank, 64, np.float32)
    assert _numba_cwt._tables(bank, 64, np.float32) is t1
    assert _numba_cwt._tables(bank, 64, np.float64) is not t1
    assert math.isclose(float(np.abs(t1[1]).max()), float(np.abs(t1[1]).max()))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_periodic_rows_share_one_input(dtype, rng):
    """The Morlet's SFT rows have ``q^{2K} = 1``: their groups run the shared-input form,
    which gives the general form's coefficients within the rounding bound; an ASFT bank
    (attenuated rows) and random rows keep the general form."""
    bank = _cwt_bank([25.0, 70.0, 300.0])
    x = rng.standard_normal((1, 3000)).astype(dtype)
    tables = _numba_cwt._tables(bank, CHUNK, np.dtype(dtype))
    gt = tables[0]
    assert gt[:, 10].all() and not gt[:, 8].any()
    y = numba_cwt_apply(bank, torch.from_numpy(x), "reflect").numpy()
    gt[:, 10] = 0  # the general form on the same (cached) tables
    try:
        y_general = numba_cwt_apply(bank, torch.from_numpy(x), "reflect").numpy()
    finally:
        gt[:, 10] = 1
    tol = _bound(bank, x, CHUNK, EPS[dtype])
    assert np.all(np.abs(y - y_general) <= tol[None])
    ref = _reference(bank, x.astype(np.float64), "reflect", 0.0)
    assert np.all(np.abs(y - ref) <= tol[None])
    for other in (_cwt_bank([25.0, 70.0], method="asft"), _random_bank(rng, alpha=False)):
        assert not _numba_cwt._tables(other, CHUNK, np.dtype(dtype))[0][:, 10].any()
