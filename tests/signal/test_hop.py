"""The decimated CWT equals every hop-th coefficient of the full transform."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments.signal import CWT, DerivativeOfGaussian, Morlet, cwt


@pytest.mark.parametrize("hop", [1, 7, 16])
def test_morlet_hop_equals_decimated_full_transform(hop):
    rng = np.random.default_rng(hop)
    x = rng.standard_normal(9001)  # blocks of 4096 and more: several blocks, a ragged end
    scales = np.array([60.0, 1.5, 8.0, 0.7, 25.0])  # unsorted: the output keeps this order
    c, f = cwt(x, scales, Morlet(5.0), hop=hop)
    full, f_full = cwt(x, scales, Morlet(5.0))
    assert c.shape == (5, -(-9001 // hop)) and c.dtype == np.complex128
    np.testing.assert_allclose(c, full[..., ::hop], rtol=0, atol=1e-11 * np.abs(full).max())
    np.testing.assert_array_equal(f, f_full)


def test_many_scales_groups_and_dog():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(6000)
    scales = np.geomspace(1.0, 120.0, 20)  # two groups
    c, _ = cwt(x, scales, DerivativeOfGaussian(2), hop=5, mode="mirror")
    full, _ = cwt(x, scales, DerivativeOfGaussian(2), mode="mirror", method="sft")
    assert c.dtype == np.float64
    np.testing.assert_allclose(c, full[..., ::5], rtol=0, atol=1e-11 * np.abs(full).max())


def test_batch_axis_short_signal_and_tensor():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((300, 2)).astype(np.float32)  # time first, shorter than a halo
    c, _ = cwt(x, [3.0, 50.0], hop=4, axis=0)
    full, _ = cwt(x, [3.0, 50.0], axis=0)
    assert c.shape == (2, 75, 2) and c.dtype == np.complex64
    np.testing.assert_allclose(c, full[:, ::4], rtol=0, atol=1e-5 * np.abs(full).max())
    t = torch.from_numpy(rng.standard_normal((2, 5000)))
    ct, _ = cwt(t, [2.0, 9.0], hop=3)
    assert isinstance(ct, torch.Tensor)
    ref = cwt(t.numpy(), [2.0, 9.0])[0][..., ::3]
    np.testing.assert_allclose(ct.numpy(), ref, rtol=0, atol=1e-11 * np.abs(ref).max())


def test_bad_input():
    x = np.ones(100)
    with pytest.raises(ValueError, match="hop"):
        cwt(x, [2.0], hop=0)
    with pytest.raises(TypeError, match="hop"):
        cwt(x, [2.0], hop=2.0)
    with pytest.raises(TypeError, match="wavelet"):
        cwt(x, [2.0], "morl")
    with pytest.raises(ValueError, match="axis"):
        cwt(x, [2.0], axis=1)
    with pytest.raises(ValueError, match="NaN"):
        cwt(np.array([1.0, np.nan]), [2.0])
    with pytest.raises(ValueError, match="NaN"):
        cwt(np.array([1.0, np.nan]), [2.0], hop=2)
    with pytest.raises(ValueError, match="out"):
        cwt(x, [2.0], hop=2, out=np.empty((1, 50), dtype=np.complex128))


def test_plan_hop_equals_the_call():
    x = np.random.default_rng(4).standard_normal(5000)
    for wavelet in (Morlet(), DerivativeOfGaussian(1)):
        plan = CWT([2.0, 30.0], wavelet, method="sft")
        ref, _ = cwt(x, [2.0, 30.0], wavelet, method="sft", hop=8)
        got = plan(x, hop=8)
        assert got.shape == (2, 625)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
