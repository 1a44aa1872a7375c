"""fastmoments.dask's Gaussian filters as drop-ins for dask_image.ndfilters: the same positional
order (array, sigma, order, mode, cval, truncate; no order for the Laplacian and the gradient
magnitude), positional calls equal to keyword calls and to the in-memory filters, across chunk
edges."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from scipy import ndimage

da = pytest.importorskip("dask.array")

import fastmoments.dask as fmd  # noqa: E402
from fastmoments import signal  # noqa: E402

SYNC = {"scheduler": "sync"}

#: dask_image.ndfilters' parameters after the array (its gaussian_filter,
#: gaussian_laplace, gaussian_gradient_magnitude; the last two also take **kwargs)
DASK_IMAGE = {
    "gaussian_filter": ["sigma", "order", "mode", "cval", "truncate"],
    "gaussian_laplace": ["sigma", "mode", "cval", "truncate"],
    "gaussian_gradient_magnitude": ["sigma", "mode", "cval", "truncate"],
}


def _positional(fn) -> list[str]:
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.kind is p.POSITIONAL_OR_KEYWORD]


@pytest.mark.parametrize("name", sorted(DASK_IMAGE))
def test_positional_order_is_dask_images(name):
    ours = _positional(getattr(fmd, name))
    assert ours[1:] == DASK_IMAGE[name]
    try:
        import dask_image.ndfilters as dif
    except ImportError:
        return
    theirs = _positional(getattr(dif, name))
    assert ours[1:len(theirs)] == theirs[1:]


def test_gaussian_filter_positional(rng):
    img = rng.random((40, 36))
    x = da.from_array(img, chunks=(7, 12))  # chunks shorter than the kernel's support
    pos = fmd.gaussian_filter(x, [3.0, 1.5], [1, 0], "nearest", 0.0, 3.0)
    kw = fmd.gaussian_filter(x, sigma=[3.0, 1.5], order=[1, 0], mode="nearest", cval=0.0,
                             truncate=3.0)
    got = pos.compute(**SYNC)
    np.testing.assert_array_equal(got, kw.compute(**SYNC))
    rows = signal.GaussianFilter(3.0, order=1, truncate=3.0)(img, axis=0, mode="nearest")
    ours_mem = signal.GaussianFilter(1.5, truncate=3.0)(rows, axis=1, mode="nearest")
    assert np.abs(got - ours_mem).max() <= 1e-12 * np.abs(ours_mem).max()
    const = fmd.gaussian_filter(x, 2.0, 0, "constant", 0.5, 4.0).compute(**SYNC)
    assert np.abs(const - ndimage.gaussian_filter(img, 2.0, 0, None, "constant", 0.5)
                  ).max() < 1e-4


def test_gaussian_filter1d_positional(rng):
    """(array, sigma, axis, order, mode, cval, truncate): scipy.ndimage.gaussian_filter1d's
    order without its ``output`` (dask_image has no 1-D Gaussian)."""
    sig = rng.standard_normal((3, 500))
    x = da.from_array(sig, chunks=(2, 90))
    pos = fmd.gaussian_filter1d(x, 12.0, -1, 2, "mirror", 0.0, 4.0).compute(**SYNC)
    ref = signal.GaussianFilter(12.0, order=2)(sig, axis=-1, mode="mirror")
    assert np.abs(pos - ref).max() <= 1e-12 * np.abs(ref).max()
    assert _positional(fmd.gaussian_filter1d)[1:] == ["sigma", "axis", "order", "mode", "cval",
                                                      "truncate"]


@pytest.mark.parametrize("name", ["gaussian_laplace", "gaussian_gradient_magnitude"])
def test_derived_filters_positional(name, rng):
    img = rng.random((30, 26))
    x = da.from_array(img, chunks=(8, 9))
    ours = getattr(fmd, name)
    pos = ours(x, [2.0, 1.2], ["reflect", "wrap"], 0.0, 4.0).compute(**SYNC)
    kw = ours(x, sigma=[2.0, 1.2], mode=["reflect", "wrap"], cval=0.0, truncate=4.0)
    np.testing.assert_array_equal(pos, kw.compute(**SYNC))
    mem = getattr(signal, name)(img, [2.0, 1.2], mode=["reflect", "wrap"])
    assert np.abs(pos - mem).max() <= 1e-12 * np.abs(mem).max()
    peer = getattr(ndimage, name)(img, [2.0, 1.2], mode=["reflect", "wrap"])
    assert np.abs(pos - peer).max() <= 2e-3 * np.abs(peer).max()
    assert pos.dtype == np.float64
    small = ours(x.astype(np.float32), 2.0).compute(**SYNC)
    assert small.dtype == np.float32


def test_derived_filters_bad_input(rng):
    x = da.from_array(rng.random((10, 10)), chunks=5)
    with pytest.raises(ValueError, match="mode"):
        fmd.gaussian_laplace(x, 2.0, ["reflect"] * 3)
    with pytest.raises(ValueError, match="sigma"):
        fmd.gaussian_gradient_magnitude(x, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="dask array"):
        fmd.gaussian_laplace(np.zeros((4, 4)), 1.0)
    with pytest.raises(ValueError, match="mode"):
        fmd.gaussian_gradient_magnitude(x, 1.0, "bogus")
