"""The generalized Morse CWT: against ssqueezepy, a direct float64 convolution, and its
properties (hop, dtype, batch, linearity, inverse)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.special import gammaln

from fastmoments.signal import GeneralizedMorse, cwt, icwt, icwt_band
from fastmoments.signal.routes import morse_route

CASES = [(20.0, 3.0), (60.0, 3.0), (3.0, 3.0), (7.0, 2.0)]


def _mother(w: np.ndarray, beta: float, gamma: float) -> np.ndarray:
    """Ψ(ω) written out again (unit energy: a² = 2πγ 2^r / Γ(r))."""
    r = (2 * beta + 1) / gamma
    log_a = 0.5 * (math.log(2 * math.pi * gamma) + r * math.log(2) - gammaln(r))
    out = np.zeros_like(w)
    p = w > 0
    out[p] = np.exp(log_a + beta * np.log(w[p]) - w[p] ** gamma)
    return out


def _kernel(scale: float, beta: float, gamma: float, m: int = 1 << 18) -> np.ndarray:
    """ψ_s[k] for k in [-m/2, m/2): the inverse DFT of √s Ψ(sω) on a grid of m points (the
    kernel periodised with period m: its tail beyond m/2 is far below the tolerances)."""
    w = 2 * np.pi * np.fft.fftfreq(m)
    h = math.sqrt(scale) * _mother(scale * w, beta, gamma)
    return np.fft.fftshift(np.fft.ifft(h))


@pytest.mark.parametrize(("beta", "gamma"), CASES)
def test_equals_ssqueezepy(beta, gamma):
    sq = pytest.importorskip("ssqueezepy")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(777)
    scales = np.geomspace(1.0, 150.0, 12)
    w = GeneralizedMorse(beta, gamma)
    ours, freqs = cwt(x, scales, w, mode="wrap")
    params = {"beta": beta, "gamma": gamma, "dtype": "float64"}
    ref, _ = sq.cwt(x, sq.Wavelet(("gmw", {**params, "norm": "energy"})), scales=scales,
                    l1_norm=False, padtype=None)
    ref = np.asarray(ref)
    assert np.abs(ours - ref).max() <= 1e-12 * np.abs(ref).max()
    band, _ = sq.cwt(x, sq.Wavelet(("gmw", {**params, "norm": "bandpass"})), scales=scales,
                     l1_norm=True, padtype=None)
    band = np.asarray(band)
    fac = np.array([w.bandpass_factor(s) for s in scales])[:, None]
    assert np.abs(ours * fac - band).max() <= 1e-12 * np.abs(band).max()
    np.testing.assert_allclose(freqs, w.peak_frequency / (2 * np.pi) / scales, rtol=1e-15)


@pytest.mark.parametrize(("beta", "gamma"), [(20.0, 3.0), (60.0, 3.0), (7.0, 2.0)])
@pytest.mark.parametrize("mode", ["reflect", "mirror", "wrap"])
def test_direct_convolution(beta, gamma, mode):
    """Against the linear convolution (float64) of the mode-extended signal with the kernel
    truncated to |k| <= 2400."""
    rng = np.random.default_rng(1)
    n, half = 300, 2400
    x = rng.standard_normal(n)
    pad = {"reflect": "symmetric", "mirror": "reflect", "wrap": "wrap"}[mode]
    ext = np.pad(x, half, mode=pad)
    scales = [2.0, 6.0, 40.0]  # where Ψ(sπ) is negligible: no Nyquist jump (1/k tail)
    ours, _ = cwt(x, scales, GeneralizedMorse(beta, gamma), mode=mode)
    for i, s in enumerate(scales):
        k = _kernel(s, beta, gamma)
        mid = len(k) // 2
        taps = k[mid - half: mid + half + 1]
        ref = np.convolve(ext, taps, mode="valid")[: n]
        assert np.abs(ours[i] - ref).max() <= 1e-9 * np.abs(ref).max(), (s, mode)


def test_quadrature_kernel_and_energy():
    w = GeneralizedMorse(20, 3)
    k = np.arange(-40, 41)
    fft_kernel = _kernel(4.0, 20.0, 3.0)
    mid = len(fft_kernel) // 2
    np.testing.assert_allclose(w.sampled(k, 4.0), fft_kernel[mid - 40: mid + 41], atol=1e-13)
    taps = _kernel(8.0, 20.0, 3.0)
    assert abs(np.sum(np.abs(taps) ** 2) - 1.0) < 1e-12  # unit energy (below Nyquist)
    assert abs(w.peak_frequency - (20 / 3) ** (1 / 3)) < 1e-15
    assert w.mother(np.array([-1.0, 0.0]))[0] == 0.0
    # K_ψ = ½ ∫ Ψ(ω)/ω dω, by quadrature
    om = np.linspace(1e-9, 12.0, 400001)
    num = 0.5 * np.trapezoid(w.mother(om) / om, om)
    assert abs(w.reconstruction_constant() - num) < 1e-8 * num


@pytest.mark.parametrize("mode", ["reflect", "mirror", "wrap"])
@pytest.mark.parametrize("hop", [2, 7, 16])
def test_hop_equals_slice(mode, hop):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 1000))
    scales = np.geomspace(1.0, 100.0, 9)
    full, _ = cwt(x, scales, GeneralizedMorse(), mode=mode)
    dec, _ = cwt(x, scales, GeneralizedMorse(), mode=mode, hop=hop)
    assert dec.shape == (9, 2, -(-1000 // hop))
    assert np.abs(dec - full[..., ::hop]).max() <= 1e-13 * np.abs(full).max()


def test_batch_axis_dtype_and_out():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 500))
    scales = [2.0, 9.0, 33.0]
    w = GeneralizedMorse(30, 3)
    batch, _ = cwt(x, scales, w)
    for i in range(3):
        one, _ = cwt(x[i], scales, w)
        np.testing.assert_allclose(batch[:, i], one, rtol=0, atol=1e-13)
    moved, _ = cwt(x.T, scales, w, axis=0)
    np.testing.assert_allclose(moved, np.moveaxis(batch, 2, 1), rtol=0, atol=1e-13)
    single, _ = cwt(x.astype(np.float32), scales, w)
    assert single.dtype == np.complex64
    assert np.abs(single - batch).max() <= 2e-6 * np.abs(batch).max()
    out = np.empty_like(batch)
    res, _ = cwt(x, scales, w, out=out)
    assert res is out
    np.testing.assert_array_equal(out, batch)
    t = torch.from_numpy(x)
    tens, _ = cwt(t, scales, w, memory_budget=1 << 14)  # one scale per block
    assert isinstance(tens, torch.Tensor)
    np.testing.assert_allclose(tens.numpy(), batch, rtol=0, atol=1e-13)


def test_complex_input_is_linear():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 600))
    scales = [3.0, 12.0]
    w = GeneralizedMorse()
    wz, _ = cwt(a + 1j * b, scales, w)
    wa, _ = cwt(a, scales, w)
    wb, _ = cwt(b, scales, w)
    np.testing.assert_allclose(wz, wa + 1j * wb, rtol=0, atol=1e-13)
    # an analytic wavelet does not see e^{-iωt}
    t = np.arange(600)
    omega = 2 * np.pi * 29 / 600  # periodic over the 600 samples
    neg, _ = cwt(np.exp(-1j * omega * t), [w.peak_frequency / omega], w, mode="wrap")
    pos, _ = cwt(np.exp(1j * omega * t), [w.peak_frequency / omega], w, mode="wrap")
    assert np.abs(neg).max() < 1e-12 * np.abs(pos).max()


@pytest.mark.parametrize("method", ["least-squares", "single-integral"])
@pytest.mark.parametrize("mode", ["reflect", "wrap"])
def test_inverse_recovers_the_band(method, mode):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1024)
    scales = np.geomspace(1.2, 300.0, 60)
    w = GeneralizedMorse(20, 3)
    coef, _ = cwt(x, scales, w, mode=mode)
    y = icwt(coef, scales, w, mode=mode, method=method)
    band = icwt_band(x, scales, w, mode=mode, method=method)
    assert np.abs(y - band).max() <= 1e-12 * np.abs(band).max()


def test_route_and_plan():
    from fastmoments.signal import CWT

    plan = CWT([2.0, 4.0], GeneralizedMorse())
    assert plan.method == "fft" and plan.rmse == 0.0
    plan(np.zeros(64))
    assert plan.route == morse_route()
    assert "GeneralizedMorse" in repr(plan)


def test_bad_input():
    with pytest.raises(ValueError, match="beta"):
        GeneralizedMorse(beta=0.0)
    with pytest.raises(ValueError, match="gamma"):
        GeneralizedMorse(gamma=-1.0)
    with pytest.raises(TypeError, match="beta"):
        GeneralizedMorse(beta="20")
    with pytest.raises(ValueError, match="mode"):
        cwt(np.zeros(32), [2.0], GeneralizedMorse(), mode="constant")
    with pytest.raises(ValueError, match="method"):
        cwt(np.zeros(32), [2.0], GeneralizedMorse(), method="sft")
    with pytest.raises(ValueError, match="x"):
        cwt(np.array([0.0, np.nan, 1.0]), [2.0], GeneralizedMorse())
    with pytest.raises(ValueError, match="out"):
        cwt(np.zeros(32), [2.0], GeneralizedMorse(), hop=2, out=np.zeros((1, 16), complex))
    x = np.arange(16.0)
    cwt(x, [2.0], GeneralizedMorse())
    np.testing.assert_array_equal(x, np.arange(16.0))  # never modified


def test_gradient():
    x = torch.randn(64, dtype=torch.float64, requires_grad=True)
    w = GeneralizedMorse(20, 3)
    assert torch.autograd.gradcheck(lambda v: cwt(v, [2.0, 5.0], w)[0].abs(), (x,))
    assert torch.autograd.gradcheck(lambda v: cwt(v, [3.0], w, hop=4, mode="wrap")[0].real,
                                    (x,))
    with torch.no_grad():
        ref = cwt(x, [2.0, 5.0], w)[0]
    np.testing.assert_allclose(cwt(x, [2.0, 5.0], w)[0].detach().numpy(), ref.numpy(),
                               rtol=0, atol=1e-14)


def _period_fft(x: np.ndarray, scales, w: GeneralizedMorse) -> np.ndarray:
    """The reflect CWT by a float64 NumPy FFT over the period 2N of (x, reversed x)."""
    n = x.shape[-1]
    ext = np.concatenate([x, x[..., ::-1]], axis=-1)
    omega = 2 * np.pi * np.fft.fftfreq(2 * n)
    spec = np.fft.fft(ext, axis=-1)
    return np.stack([np.fft.ifft(spec * w.frequency_response(omega, s), axis=-1)[..., :n]
                     for s in scales])


@pytest.mark.parametrize("n", [1, 2, 3, 64, 333, 1000])
def test_reflect_real_transforms_equal_the_period_fft(n):
    """The CPU route of mode="reflect" (a DCT-II, then a DCT-III and a DST-III per scale)
    gives the FFT of the period 2N to rounding, for real and complex signals, in blocks of
    scales, and keeps its tables on the plan."""
    from fastmoments.signal import CWT

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, n))
    scales = np.geomspace(0.7, 400.0, 7)
    w = GeneralizedMorse(20, 3)
    plan = CWT(scales, w)
    ours = plan(x)
    assert plan.route.kernel == "dct"
    ref = _period_fft(x, scales, w)
    assert np.abs(ours - ref).max() <= 1e-13 * np.abs(ref).max()
    assert len(plan._morse_tables) == 2  # the bands, and the scaled float64 responses
    np.testing.assert_array_equal(plan(x), ours)  # from the kept tables
    z = x + 1j * rng.standard_normal((2, n))
    blocks = plan(z, memory_budget=1 << 10)  # one scale per block
    assert np.abs(blocks - _period_fft(z, scales, w)).max() <= 1e-13 * np.abs(ref).max()
    single = plan(x.astype(np.float32))
    assert single.dtype == np.complex64
    assert np.abs(single - ref).max() <= 1e-5 * np.abs(ref).max()


def test_reflect_route_choices():
    """hop > 1, other modes, CUDA tensors and recorded gradients take the FFT route."""
    from fastmoments.signal import CWT

    plan = CWT([2.0, 9.0], GeneralizedMorse())
    x = np.random.default_rng(8).standard_normal(200)
    full = plan(x)
    assert plan.route == morse_route("cpu", "reflect", 1, False)
    dec = plan(x, hop=3)
    assert plan.route.kernel == "fft"
    assert np.abs(dec - full[:, ::3]).max() <= 1e-13 * np.abs(full).max()
    plan(x, mode="wrap")
    assert plan.route.kernel == "fft"
    t = torch.from_numpy(x).requires_grad_(True)
    y = plan(t)
    assert plan.route.kernel == "fft"
    np.testing.assert_allclose(y.detach().numpy(), full, rtol=0, atol=1e-13)
    out = np.empty((2, 200), complex)[:, ::1]
    strided = np.empty((200, 2), complex).T  # not C-contiguous: through a temporary
    assert plan(x, out=out) is out and plan(x, out=strided) is strided
    np.testing.assert_allclose(strided, full, rtol=0, atol=1e-15)
    assert morse_route("cuda").kernel == "fft"


def test_plan_tables_stay_small():
    """A plan applied to many signal lengths keeps the tables of the latest few only."""
    from fastmoments.signal import CWT
    from fastmoments.signal.morse import MAX_TABLES

    plan = CWT([2.0, 7.0], GeneralizedMorse())
    for n in range(20, 40):
        x = np.random.default_rng(n).standard_normal(n)
        np.testing.assert_allclose(plan(x), _period_fft(x, [2.0, 7.0], GeneralizedMorse()),
                                   rtol=0, atol=1e-13)
    assert len(plan._morse_tables) <= MAX_TABLES
