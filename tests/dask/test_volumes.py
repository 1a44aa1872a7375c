"""fastmoments.dask.zernike3d over a Zarr store of volumes ``(N, D, H, W)`` chunked along N:
the invariants and moments equal the in-memory plan's, per volume and across chunk edges;
one plan per process; the results written back to Zarr chunk by chunk; bad input."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
zarr = pytest.importorskip("zarr")

import fastmoments.dask as fmd  # noqa: E402
from fastmoments.ball import Zernike3DTransform, zernike3d_moments  # noqa: E402

SYNC = {"scheduler": "sync"}
SHAPE = (9, 10, 11)


def volumes(n: int, seed: int = 0) -> np.ndarray:
    """``n`` random blobs: a random box of values inside each volume (differing centroids)."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, *SHAPE))
    for i in range(n):
        a, b, c = rng.integers(1, 4, size=3)
        out[i, a:a + 5, b:b + 5, c:c + 6] = rng.random((5, 5, 6))
    return out


@pytest.fixture
def store(tmp_path):
    """A Zarr store on disk of 7 float64 volumes, 3 per chunk (the last chunk short)."""
    vols = volumes(7)
    z = zarr.create_array(store=str(tmp_path / "volumes.zarr"), shape=vols.shape,
                          chunks=(3, *SHAPE), dtype="float64")
    z[...] = vols
    return tmp_path / "volumes.zarr", vols


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("kind", ["invariants", "moments"])
def test_zarr_stack_equals_the_in_memory_plan(store, kind):
    path, vols = store
    x = da.from_zarr(str(path))
    assert x.chunks[0] == (3, 3, 1)
    F = fmd.zernike3d(x, 6, kind=kind)
    Om = Zernike3DTransform(SHAPE, 6, dtype="float64").forward(vols)
    ref = Om.invariants() if kind == "invariants" else Om.values()
    assert F.shape == ref.shape and F.chunks == ((3, 3, 1), (ref.shape[1],))
    assert F.dtype == ref.dtype and F._meta.dtype == ref.dtype
    got = F.compute(**SYNC)
    # a batch of 3 (or 1) against one of 7: the same sums, rounded in another order
    assert _rel(got, ref) <= 1e-13
    names = fmd.zernike3d_names(6, kind)
    assert names == Om.names("invariant" if kind == "invariants" else "moment")
    assert len(names) == got.shape[1]


def test_float32_and_options_reach_the_plan(store):
    path, vols = store
    x = da.from_zarr(str(path)).astype(np.float32)
    F = fmd.zernike3d(x, 4, k=2, quadrature="gauss", center=(4.0, 4.5, 5.0), radius=4.2)
    assert F.dtype == np.float32
    ref = Zernike3DTransform(SHAPE, 4, k=2, quadrature="gauss", center=(4.0, 4.5, 5.0),
                             radius=4.2).forward(vols.astype(np.float32)).invariants()
    assert _rel(F.compute(**SYNC), ref) <= 1e-6  # float32 batches of other sizes
    M = fmd.zernike3d(x, 3, kind="moments", dtype="float64")
    assert M.dtype == np.complex128


def test_placement_per_volume(store):
    path, vols = store
    x = da.from_zarr(str(path))
    F = fmd.zernike3d(x, 4, center="centroid", radius="enclosing").compute(**SYNC)
    for i in (0, 4, 6):  # each volume its own ball, in whichever chunk it lies
        ref = zernike3d_moments(vols[i], 4, center="centroid", radius="enclosing").invariants()
        assert _rel(F[i], ref) <= 1e-13


def test_one_plan_per_process_and_results_written_to_zarr(store, tmp_path):
    path, vols = store
    x = da.from_zarr(str(path))
    F = fmd.zernike3d(x, 5, k=3)  # a configuration no other test uses
    before = fmd.plan_builds().get("zernike3d", 0)
    out = tmp_path / "invariants.zarr"
    da.to_zarr(F, str(out), compute=True)  # chunk by chunk, each written once
    assert fmd.plan_builds()["zernike3d"] == before + 1  # 3 chunks, one plan
    ref = Zernike3DTransform(SHAPE, 5, k=3, dtype="float64").forward(vols).invariants()
    assert _rel(zarr.open_array(str(out), mode="r")[...], ref) <= 1e-13


def test_batch_axes_and_a_single_volume():
    vols = volumes(4).reshape(2, 2, *SHAPE)
    x = da.from_array(vols, chunks=(1, 2, 9, 5, 11))  # the volume axes split: merged
    F = fmd.zernike3d(x, 3)
    assert F.shape == (2, 2, 6) and F.chunks == ((1, 1), (2,), (6,))
    ref = Zernike3DTransform(SHAPE, 3, dtype="float64").forward(vols).invariants()
    assert _rel(F.compute(**SYNC), ref) <= 1e-13
    one = fmd.zernike3d(da.from_array(vols[0, 0]), 3)
    assert one.shape == (6,)
    assert _rel(one.compute(**SYNC), ref[0, 0]) <= 1e-13


@pytest.mark.parametrize("call, exc, match", [
    (lambda x: fmd.zernike3d(np.zeros((2, 4, 4, 4)), 2), TypeError, "dask array"),
    (lambda x: fmd.zernike3d(x[0, 0], 2), ValueError, "at least 3 dimensions"),
    (lambda x: fmd.zernike3d(x, 2, kind="norms"), ValueError, "kind"),
    (lambda x: fmd.zernike3d(x, 2.5), TypeError, "order"),
    (lambda x: fmd.zernike3d(x, -1), ValueError, "order"),
    (lambda x: fmd.zernike3d(x, 2, k=0), ValueError, "k"),
    (lambda x: fmd.zernike3d(x, 2, quadrature="simpson"), ValueError, "quadrature"),
    (lambda x: fmd.zernike3d(x, 2, center="middle"), ValueError, "center"),
    (lambda x: fmd.zernike3d(x, 2, center=(1, 2)), ValueError, "center"),
    (lambda x: fmd.zernike3d(x, 2, radius=0), ValueError, "radius"),
    (lambda x: fmd.zernike3d(x, 2, device=["cpu", "cpu"]), ValueError, "one device"),
    (lambda x: fmd.zernike3d(x.astype(complex), 2), ValueError, "real"),
    (lambda x: fmd.zernike3d(x.rechunk((1, 4, 2, 4)), 2, rechunk=False), ValueError,
     "whole volumes"),
    (lambda x: fmd.zernike3d_names(2, "values"), ValueError, "kind"),
])
def test_bad_input(call, exc, match):
    x = da.zeros((3, 4, 4, 4), chunks=(1, 4, 4, 4))
    with pytest.raises(exc, match=match):
        call(x)


def test_nan_raises_when_computed():
    vols = volumes(2)
    vols[1, 4, 4, 4] = np.nan
    F = fmd.zernike3d(da.from_array(vols, chunks=(1, *SHAPE)), 2)
    with pytest.raises(ValueError, match="NaN"):
        F.compute(**SYNC)
