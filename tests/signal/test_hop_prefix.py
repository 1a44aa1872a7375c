"""The Morlet CWT at every hop-th sample from prefix sums (only the kept samples computed):
equal to the full transform's every hop-th coefficient, and its route."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments.signal import CWT, Morlet, cwt
from fastmoments.signal.hop import cwt_hop_prefix, prefix_hop_applies


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
@pytest.mark.parametrize("hop", [2, 16, 333])
def test_equals_every_hop_th_coefficient(mode, hop):
    rng = np.random.default_rng(hop)
    x = rng.standard_normal((2, 4001)) + 4.0  # a mean: the prefix sums grow
    scales = np.array([90.0, 0.6, 2.0, 11.0])  # unsorted; 0.6: an explicit kernel
    plan = CWT(scales, Morlet(6.0))
    got = plan(x, hop=hop, mode=mode, cval=0.25)
    assert str(plan.route) == "sft/torch:prefix"
    full = plan(x, mode=mode, cval=0.25, engine="chunked")
    assert got.shape == (4, 2, -(-4001 // hop))
    assert np.abs(got - full[..., ::hop]).max() <= 1e-11 * np.abs(full).max()


def test_against_direct_convolution():
    """Independent float64 reference: the bank's own kernel convolved directly."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(700)
    plan = CWT([5.0, 30.0])
    got = plan(x, hop=7, mode="wrap")
    for i, p in enumerate(plan.plans):
        w = p.bank.pad
        h = p.bank.kernel(np.arange(-w, w + 1))[0]
        ext = np.concatenate([x[-w:], x, x[:w]]) if w <= len(x) else None
        ref = np.convolve(ext, h, mode="valid")[::7]
        np.testing.assert_allclose(got[i], ref, rtol=0, atol=1e-11 * np.abs(ref).max())


def test_float32_axis_tensor_and_fallback():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((500, 3)).astype(np.float32)
    plan = CWT([3.0, 40.0])
    got = plan(x, hop=5, axis=0)
    assert got.dtype == np.complex64 and got.shape == (2, 100, 3)
    full = plan(x, axis=0)
    assert np.abs(got - full[:, ::5]).max() <= 1e-5 * np.abs(full).max()
    t = torch.from_numpy(x[:, 0].astype(np.float64))
    assert isinstance(plan(t, hop=5), torch.Tensor)
    asft = CWT([3.0, 40.0], method="asft")  # attenuated rows: the block route
    asft(x[:, 0], hop=5)
    assert str(asft.route).startswith("blocks")
    assert not prefix_hop_applies([b.bank for b in asft.plans])


def test_hop_longer_than_the_signal():
    x = np.random.default_rng(2).standard_normal(50)
    got = cwt(x, [2.0, 8.0], hop=100)[0]
    full = cwt(x, [2.0, 8.0])[0]
    np.testing.assert_allclose(got, full[:, :1], rtol=0, atol=1e-12 * np.abs(full).max())
    out = cwt_hop_prefix(torch.from_numpy(x)[None], [p.bank for p in CWT([2.0]).plans], 3,
                         mode="reflect", cval=0.0)
    assert out.shape == (1, 1, 17)
