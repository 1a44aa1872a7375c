"""Inverse CWT: exact on the covered band (least squares) against transforms computed here by
FFT of the sampled wavelets, round trips through the transforms, and the constants."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.signal import (
    ICWT,
    DerivativeOfGaussian,
    Morlet,
    cwt,
    icwt,
    icwt_band,
    icwt_response,
)
from fastmoments.signal.inverse import reconstruction_constant, wavelet_response

WAVELETS = [Morlet(6.0), DerivativeOfGaussian(1), DerivativeOfGaussian(2)]


def _snr(y: np.ndarray, ref: np.ndarray) -> float:
    return 10 * math.log10(float(np.sum(ref ** 2) / np.sum((y - ref) ** 2)))


def _sampled(wavelet, k: np.ndarray, s: float) -> np.ndarray:
    """The sampled wavelet, written from its definition."""
    u = k / s
    if isinstance(wavelet, Morlet):
        xi = wavelet.xi
        c = (1 + math.exp(-xi * xi) - 2 * math.exp(-0.75 * xi * xi)) ** -0.5
        return (c * math.pi ** -0.25 * s ** -0.5 * np.exp(-u * u / 2)
                * (np.exp(1j * xi * u) - math.exp(-xi * xi / 2)))
    if wavelet.order == 1:
        return -math.sqrt(2) * math.pi ** -0.25 * s ** -0.5 * u * np.exp(-u * u / 2)
    return 2 / (math.sqrt(3) * math.pi ** 0.25) * s ** -0.5 * (1 - u * u) * np.exp(-u * u / 2)


def _circular_transform(x: np.ndarray, wavelet, scales) -> np.ndarray:
    """``W_j = ψ_j ⊛ x`` (circular) with each sampled wavelet folded onto ``n`` samples."""
    n = x.shape[-1]
    out = []
    for s in scales:
        r = math.ceil(14 * s)
        k = np.arange(-r, r + 1)
        h = np.zeros(n, dtype=np.complex128)
        np.add.at(h, k % n, _sampled(wavelet, k, s))
        out.append(np.fft.ifft(np.fft.fft(h) * np.fft.fft(x)))
    w = np.stack(out)
    return w if isinstance(wavelet, Morlet) else w.real


def test_reconstruction_constant_against_quadrature():
    mpmath = pytest.importorskip("mpmath")
    for xi in (3.0, 6.0):
        c = (1 + math.exp(-xi * xi) - 2 * math.exp(-0.75 * xi * xi)) ** -0.5
        kappa = math.exp(-xi * xi / 2)

        def re_psi(s, xi=xi, c=c, kappa=kappa):
            return (c * mpmath.pi ** -0.25 * mpmath.sqrt(2 * mpmath.pi)
                    * (mpmath.exp(-(s - xi) ** 2 / 2) - kappa * mpmath.exp(-s * s / 2)))

        k = 0.5 * mpmath.quad(lambda s: (re_psi(s) + re_psi(-s)) / s, [0, xi, mpmath.inf])
        assert abs(reconstruction_constant(Morlet(xi)) - float(k)) < 1e-12
    assert abs(reconstruction_constant(DerivativeOfGaussian(2))
               - 2 * math.sqrt(2) * math.pi ** 0.25 / math.sqrt(3)) < 1e-14
    assert reconstruction_constant(DerivativeOfGaussian(1)) == 0.0


@pytest.mark.parametrize("wavelet", WAVELETS, ids=lambda w: repr(w))
def test_wavelet_response_is_the_dtft_of_the_sampled_wavelet(wavelet):
    k = np.arange(-120, 121)
    om = np.linspace(-np.pi, np.pi, 41)
    for s in (1.5, 4.0, 12.0):
        dtft = (_sampled(wavelet, k, s)[None, :] * np.exp(-1j * om[:, None] * k)).sum(1)
        np.testing.assert_allclose(wavelet_response(wavelet, om, s), dtft, rtol=0,
                                   atol=1e-13 * np.abs(dtft).max())


@pytest.mark.parametrize("wavelet", WAVELETS, ids=lambda w: repr(w))
def test_least_squares_is_exact_on_the_covered_band(wavelet):
    n = 512
    scales = np.geomspace(1.5, 60, 48)
    rng = np.random.default_rng(0)
    band = np.arange(20, 120)  # ω = 2πk/n with σω from 0.37 to 88: well covered
    assert np.all(icwt_response(scales, n, wavelet)[band] == 1)
    spec = np.zeros(n // 2 + 1, dtype=np.complex128)
    spec[band] = rng.standard_normal(len(band)) + 1j * rng.standard_normal(len(band))
    x = np.fft.irfft(spec, n)
    w = _circular_transform(x, wavelet, scales)
    y = icwt(w, scales, wavelet, mode="wrap")
    assert np.max(np.abs(y - x)) < 1e-12 * np.max(np.abs(x))
    # what is outside the band is removed, not amplified
    leak = np.zeros(n // 2 + 1, dtype=np.complex128)
    leak[0] = 3.0
    y0 = icwt(_circular_transform(np.fft.irfft(spec + leak, n), wavelet, scales), scales,
              wavelet, mode="wrap")
    assert np.max(np.abs(y0 - x)) < 1e-12 * np.max(np.abs(x))


MORLET_SCALES = np.geomspace(2, 256, 64)
DOG_SCALES = np.geomspace(1.5, 256, 48)


def _chirp(n: int = 2000) -> np.ndarray:
    t = np.arange(n)
    return (np.cos(2 * np.pi * (0.01 * t + 0.04 * t * t / (2 * n)))
            + 0.5 * np.sin(2 * np.pi * t / 70))


def _band_limited(n: int, mode: str, ks: range) -> np.ndarray:
    """A sum of the cosines that ``mode``'s extension keeps smooth and periodic (DCT bases for
    the symmetric modes), at the integer frequencies ``ks``: band-limited for the inverse."""
    t = np.arange(n)
    rng = np.random.default_rng(4)
    period = {"wrap": n, "reflect": 2 * n, "mirror": 2 * n - 2}[mode]
    shift = 0.5 if mode == "reflect" else 0.0
    phase = rng.uniform(0, 2 * np.pi, len(ks)) if mode == "wrap" else np.zeros(len(ks))
    return sum(np.cos(2 * np.pi * k * (t + shift) / period + p)
               for k, p in zip(ks, phase, strict=True))


@pytest.mark.parametrize("mode", ["reflect", "mirror", "wrap"])
@pytest.mark.parametrize("method", ["least-squares", "single-integral"])
def test_round_trip_morlet(mode, method):
    x = _chirp()
    coefs, _ = cwt(x, MORLET_SCALES, Morlet(6.0), mode=mode)
    y = icwt(coefs, MORLET_SCALES, Morlet(6.0), mode=mode, method=method)
    ref = icwt_band(x, MORLET_SCALES, Morlet(6.0), mode=mode, method=method)
    # the forward transform's kernels have relative RMSE <= 1e-4: about 80 dB
    assert _snr(y, ref) > 75
    if method == "least-squares":  # a band-limited signal inside the band: x itself
        period = {"wrap": 2000, "reflect": 4000, "mirror": 3998}[mode]
        xb = _band_limited(2000, mode, range(period // 100, period // 8, 7))
        cb, _ = cwt(xb, MORLET_SCALES, mode=mode)
        assert _snr(icwt(cb, MORLET_SCALES, mode=mode), xb) > 75


@pytest.mark.parametrize("order", [1, 2])
def test_round_trip_dog(order):
    x = _chirp()
    wv = DerivativeOfGaussian(order)
    coefs, _ = cwt(x, DOG_SCALES, wv)
    y = icwt(coefs, DOG_SCALES, wv)
    assert _snr(y, icwt_band(x, DOG_SCALES, wv)) > 75
    xb = _band_limited(2000, "reflect", range(40, 500, 11))
    cb, _ = cwt(xb, DOG_SCALES, wv)
    assert _snr(icwt(cb, DOG_SCALES, wv), xb) > 75
    if order == 2:
        ys = icwt(coefs, DOG_SCALES, wv, method="single-integral")
        assert _snr(ys, icwt_band(x, DOG_SCALES, wv, method="single-integral")) > 75


def test_single_integral_recovers_a_tone_inside_the_band():
    t = np.arange(2000)
    x = np.sin(2 * np.pi * t / 25) + 0.5 * np.sin(2 * np.pi * t / 64 + 1)
    coefs, _ = cwt(x, MORLET_SCALES)
    y = icwt(coefs, MORLET_SCALES, method="single-integral")
    inner = slice(400, 1600)
    assert _snr(y[inner], x[inner]) > 60


def test_batch_axis_dtype_and_tensor():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 400))
    scales = np.geomspace(2, 50, 30)
    coefs, _ = cwt(x, scales)
    y = icwt(coefs, scales)
    for i in range(3):
        np.testing.assert_allclose(y[i], icwt(coefs[:, i], scales), rtol=0, atol=1e-12)
    yt = icwt(np.moveaxis(coefs, -1, 1), scales, axis=0)  # signals (400, 3), time first
    np.testing.assert_allclose(yt, y.T, rtol=0, atol=1e-12)
    y32 = icwt(coefs.astype(np.complex64), scales)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, y, rtol=0, atol=1e-5 * np.abs(y).max())
    keep = coefs.copy()
    tc = torch.from_numpy(coefs).requires_grad_(True)
    out = icwt(tc, scales)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    out.sum().backward()
    assert tc.grad is not None
    assert np.array_equal(coefs, keep)


def test_bad_input():
    scales = np.geomspace(2, 50, 10)
    c = np.zeros((10, 100), dtype=np.complex128)
    with pytest.raises(ValueError, match="Hilbert"):
        icwt(np.zeros((10, 100)), scales, DerivativeOfGaussian(1), method="single-integral")
    with pytest.raises(ValueError, match="coefs"):
        icwt(c[:9], scales)
    with pytest.raises(ValueError, match="mode"):
        icwt(c, scales, mode="nearest")
    with pytest.raises(ValueError, match="method"):
        icwt(c, scales, method="pinv")
    with pytest.raises(ValueError, match="rcond"):
        icwt(c, scales, rcond=1.0)
    with pytest.raises(ValueError, match="scales"):
        icwt(c[:1], [2.0])
    with pytest.raises(ValueError, match="scales"):
        icwt(c[:2], [2.0, 2.0])
    with pytest.raises(TypeError, match="wavelet"):
        icwt(c, scales, "morl")
    with pytest.raises(ValueError, match="axis"):
        icwt(c, scales, axis=1)
    c[0, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        icwt(c, scales)


def test_public_names():
    assert fm.icwt is icwt and fm.ICWT is ICWT
    assert fm.icwt_band is icwt_band and fm.icwt_response is icwt_response
