"""fastmoments.dask's Gaussian with σ several times the chunk: the prefix-sum route (no σ-wide
halos), equal to the in-memory filter, with every task's data bounded by a few chunks."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from dask.callbacks import Callback  # noqa: E402

import dask  # noqa: E402
import fastmoments.dask as fmd  # noqa: E402
from fastmoments.dask._signal import _prefix_applies  # noqa: E402
from fastmoments.signal import GaussianFilter  # noqa: E402

SYNC = {"scheduler": "sync"}


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


class _Largest(Callback):
    """The largest array any task of a computation returns (bytes)."""

    def __init__(self):
        super().__init__()
        self.largest = 0

    def _posttask(self, key, result, dsk, state, worker_id):
        name = key[0] if isinstance(key, tuple) else key
        if isinstance(result, np.ndarray) and not str(name).startswith("finalize"):
            self.largest = max(self.largest, result.nbytes)


@pytest.mark.parametrize(("sigma", "chunk", "mode", "order"), [
    (400.0, 333, "reflect", 0),
    (700.0, 257, "wrap", 1),
    (250.0, 201, "constant", 2),
    (600.0, 211, "mirror", 0),
    (300.0, 197, "nearest", 1),
])
def test_equals_in_memory(sigma, chunk, mode, order):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6001)) + 3.0  # a mean: the prefix sums grow along the signal
    d = da.from_array(x, chunks=(1, chunk))  # the chunks do not divide N
    y = fmd.gaussian_filter1d(d, sigma, order=order, mode=mode, cval=0.5)
    assert y.chunks == d.chunks
    got = y.compute(**SYNC)
    ref = GaussianFilter(sigma, order=order, method="sft")(x, mode=mode, cval=0.5)
    assert _rel(got, ref) < 1e-11
    auto = GaussianFilter(sigma, order=order)(x, mode=mode, cval=0.5)
    assert _rel(got, auto) < 1e-11  # "auto" takes the SFT here too


def test_memory_is_bounded_by_the_chunk():
    """No task returns more than a few chunks (or the scan's few numbers per chunk), while σ
    spans 10 chunks (a halo route would give each task 2 × 4σ samples)."""
    n, chunk, sigma = 8000, 100, 1000.0
    x = np.random.default_rng(1).standard_normal(n)
    d = da.from_array(x, chunks=chunk)
    plan = GaussianFilter(sigma, method="sft")
    assert _prefix_applies(plan, n, chunk)
    y = fmd.gaussian_filter1d(d, sigma)
    with _Largest() as cb:
        got = y.compute(**SYNC)
    # a few chunks (complex128 at most), or the scan's rows sums per chunk (a few numbers each)
    chunks_ext = -(-(n + 2 * (plan.bank.pad + 1)) // chunk)
    assert cb.largest <= max(4 * chunk * 16, (chunks_ext + 1) * plan.bank.n_rows * 16)
    assert _rel(got, plan(x)) < 1e-11


def test_other_axes_float32_and_axis0():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3000, 3)).astype(np.float32)
    d = da.from_array(x, chunks=(256, 2))
    y = fmd.gaussian_filter1d(d, 500.0, axis=0)
    got = y.compute(**SYNC)
    assert got.dtype == np.float32 and y.chunks == d.chunks
    ref = GaussianFilter(500.0, method="sft")(x.astype(np.float64), axis=0)
    assert _rel(got, ref) < 1e-6
    nd = fmd.gaussian_filter(da.from_array(x.astype(np.float64), chunks=(250, 3)), (400.0, 0.7))
    ref2 = GaussianFilter(0.7)(GaussianFilter(400.0)(x.astype(np.float64), axis=0), axis=1)
    assert _rel(nd.compute(**SYNC), ref2) < 1e-9


def test_small_sigma_keeps_the_halo_route():
    plan = GaussianFilter(3.0, method="sft")
    assert not _prefix_applies(plan, 10000, 1000)
    assert not _prefix_applies(GaussianFilter(400.0, method="asft"), 10000, 100)
    assert not _prefix_applies(GaussianFilter(4000.0, method="sft"), 1000, 100)  # folds
    with dask.config.set(scheduler="sync"):
        x = np.arange(50.0)
        np.testing.assert_allclose(fmd.gaussian_filter1d(da.from_array(x, chunks=7), 40.0)
                                   .compute(), GaussianFilter(40.0)(x), rtol=0, atol=1e-12)
