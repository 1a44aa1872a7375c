"""The CWT of complex signals: linear, W(a + ib) = W(a) + i W(b), for every wavelet."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments.signal import CWT, MexicanHat, Morlet, cwt

WAVELETS = [Morlet(6.0), MexicanHat()]


def _direct_morlet(z: np.ndarray, sigma: float, xi: float = 6.0) -> np.ndarray:
    """Reference: the float64 convolution of the reflect-extended complex signal with the
    sampled Morlet wavelet (Eq. 52), out to 12 σ."""
    w = Morlet(xi)
    half = int(12 * sigma)
    taps = w.sampled(np.arange(-half, half + 1), sigma)
    ext = np.pad(z, half, mode="symmetric")
    return np.convolve(ext, taps, mode="valid")


@pytest.mark.parametrize("wavelet", WAVELETS)
def test_linear_in_real_and_imaginary_parts(wavelet):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 700))
    scales = [2.0, 5.0, 30.0]
    wz, freqs = cwt(a + 1j * b, scales, wavelet)
    wa, fa = cwt(a, scales, wavelet)
    wb, _ = cwt(b, scales, wavelet)
    assert wz.dtype == np.complex128 and wz.shape == (3, 3, 700)
    np.testing.assert_allclose(wz, wa + 1j * wb, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(freqs, fa)


def test_against_direct_convolution():
    rng = np.random.default_rng(1)
    z = rng.standard_normal(600) + 1j * rng.standard_normal(600)
    scales = [3.0, 20.0]
    got, _ = cwt(z, scales)
    for i, s in enumerate(scales):
        ref = _direct_morlet(z, s)
        err = np.linalg.norm(got[i] - ref) / np.linalg.norm(ref)
        assert err < 3e-4, (s, err)  # the SFT fit's stated error (rmse <= 1e-4 per kernel)


@pytest.mark.parametrize("wavelet", WAVELETS)
def test_dtype_hop_out_axis_and_tensor(wavelet):
    rng = np.random.default_rng(2)
    z = (rng.standard_normal((400, 2)) + 1j * rng.standard_normal((400, 2)))
    scales = [2.0, 8.0]
    ref, _ = cwt(z, scales, wavelet, axis=0)
    single, _ = cwt(z.astype(np.complex64), scales, wavelet, axis=0)
    assert single.dtype == np.complex64
    assert np.abs(single - ref).max() < 1e-3 * np.abs(ref).max()
    dec, _ = cwt(z, scales, wavelet, axis=0, hop=4, method="sft")
    full, _ = cwt(z, scales, wavelet, axis=0, method="sft")
    np.testing.assert_allclose(dec, full[:, ::4], rtol=0, atol=1e-12 * np.abs(full).max())
    out = np.empty(ref.shape, dtype=np.complex128)
    res = CWT(scales, wavelet)(z, axis=0, out=out)
    assert res is out
    np.testing.assert_array_equal(out, ref)
    tens = CWT(scales, wavelet)(torch.from_numpy(z), axis=0)
    assert isinstance(tens, torch.Tensor) and tens.dtype == torch.complex128
    np.testing.assert_allclose(tens.numpy(), ref, rtol=0, atol=1e-12)
    z0 = z.copy()
    cwt(z, scales, wavelet, axis=0)
    np.testing.assert_array_equal(z, z0)  # never modified


def test_complex_list_and_bad_input():
    got, _ = cwt([1 + 1j, 2.0, 3 - 1j, 0.5j] * 8, [2.0])
    assert got.dtype == np.complex128 and got.shape == (1, 32)
    with pytest.raises(ValueError, match="x"):
        cwt(np.array([1 + 1j, np.nan, 0j]), [2.0])
    with pytest.raises(ValueError, match="out"):
        cwt(np.ones(32, complex), [2.0], hop=2, out=np.zeros((1, 16), complex))


def test_morlet_plan_and_one_call_take_complex_input():
    from fastmoments.signal import MorletTransform, morlet_transform

    rng = np.random.default_rng(5)
    z = rng.standard_normal((2, 500)) + 1j * rng.standard_normal((2, 500))
    plan = MorletTransform(7.0)
    got = plan(z)
    np.testing.assert_allclose(got, plan(z.real) + 1j * plan(z.imag), rtol=0, atol=1e-12)
    np.testing.assert_allclose(morlet_transform(z, 7.0), got, rtol=0, atol=1e-12)
    out = np.empty_like(got)
    assert plan(z, out=out) is out
    np.testing.assert_array_equal(out, got)
    ref = _direct_morlet(z[0], 7.0)
    assert np.linalg.norm(got[0] - ref) / np.linalg.norm(ref) < 3e-4
