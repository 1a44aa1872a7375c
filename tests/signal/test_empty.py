"""Zero-size inputs: empty batches and signals of no samples give empty results of the right
shape and dtype (as scipy.ndimage does); an empty scale list is a clear error."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as ndi
import torch

import fastmoments as fm
from fastmoments.signal import CWT, GaussianFilter, MorletTransform

SHAPES = [(0, 16), (3, 0), (0,), (0, 0), (2, 0, 7)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_empty_numpy(shape, dtype):
    x = np.zeros(shape, dtype=dtype)
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    for axis in range(-1, -len(shape) - 1, -1):
        for sigma in (0.3, 2.0, 40.0):
            y = fm.gaussian_filter1d(x, sigma, axis=axis)
            ref = ndi.gaussian_filter1d(x, sigma, axis=axis)
            assert y.shape == ref.shape == shape and y.dtype == dtype
            for order in (1, 2):
                assert GaussianFilter(sigma, order=order)(x, axis=axis).shape == shape
            m = fm.morlet_transform(x, sigma, axis=axis)
            assert m.shape == shape and m.dtype == cdt
        for kw in ({}, {"engine": "sliding"}, {"engine": "recursive"}, {"method": "direct"},
                   {"method": "asft"}):
            coef, freqs = fm.cwt(x, [30.0, 2.0, 0.5], axis=axis, **kw)
            assert coef.shape == (3, *shape) and coef.dtype == cdt and freqs.shape == (3,)
    out = np.empty((2, *shape), dtype=cdt)
    assert CWT([3.0, 1.0])(x, out=out) is out
    out = np.empty(shape, dtype=dtype)
    assert fm.gaussian_filter(x, 2.0, out=out) is out
    assert fm.gaussian_filter(x, [1.0] * len(shape), axes=tuple(range(len(shape)))).shape == shape


@pytest.mark.parametrize("shape", SHAPES)
def test_empty_torch(shape):
    x = torch.zeros(shape, dtype=torch.float32, requires_grad=True)
    y = fm.gaussian_filter(x, 3.0)
    assert isinstance(y, torch.Tensor) and y.shape == x.shape and y.dtype == torch.float32
    y.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape
    z = MorletTransform(5.0)(x.detach())
    assert z.shape == x.shape and z.dtype == torch.complex64


def test_empty_scales_is_an_error():
    for scales in ([], (), np.array([])):
        with pytest.raises(ValueError, match="scales"):
            fm.cwt(np.ones(10), scales)
        with pytest.raises(ValueError, match="scales"):
            CWT(scales)
