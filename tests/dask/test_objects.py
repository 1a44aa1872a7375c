"""fastmoments.dask.object_features against the in-memory object_features, with objects cut
by chunk edges and corners."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from dask.delayed import Delayed  # noqa: E402

import fastmoments.dask as fmd  # noqa: E402
from fastmoments.recognition import object_features  # noqa: E402

from ..disk.test_objects_labels import ellipses  # noqa: E402


def scene(seed=0):
    """Ellipses on a grid, plus a disk centred on a chunk corner (4 chunks), a one-pixel
    object at a corner and a thin line across a chunk edge."""
    lab = ellipses((90, 100), seed=seed, step=20)
    yy, xx = np.mgrid[:90, :100]
    lab[(yy - 48) ** 2 + (xx - 44) ** 2 <= 40] = 1000  # chunks of 16 x 22: corner (48, 44)
    lab[0, 99] = 1001
    lab[70, 30:60] = 1002
    return lab


def assert_same(got, ref, atol):
    g, r = got.geometry, ref.geometry
    np.testing.assert_array_equal(g.labels, r.labels)
    np.testing.assert_array_equal(g.area, r.area)
    np.testing.assert_array_equal(g.bbox, r.bbox)
    np.testing.assert_array_equal(g.centroid, r.centroid)
    np.testing.assert_array_equal(g.centre, r.centre)  # the same hull, the same bits
    np.testing.assert_array_equal(g.radius, r.radius)
    assert got.names == ref.names and got.pairs == ref.pairs
    # CellProfiler's values are the raw sums, of the order of the pixel count: compared per
    # pixel (the monomial route rounds to ~1e-14 of the count; pixel by pixel, ~1e-16)
    cp = ref.convention == "cellprofiler"
    scale = np.maximum(r.area, 1)[:, None] if cp else 1.0
    np.testing.assert_allclose(got.values / scale, ref.values / scale, rtol=0, atol=atol)
    K = len(ref.pairs)
    if not (cp and ref.features.shape[1] == 2 * K):
        np.testing.assert_allclose(got.features, ref.features, rtol=0, atol=atol)
        return
    mag = ref.features[:, :K]  # intensity: |sum| / count, then the phases
    np.testing.assert_allclose(got.features[:, :K], mag, rtol=0, atol=atol)
    # a phase moves by the sum's error over its size: atol per pixel over the magnitude
    dphi = np.abs(np.angle(np.exp(1j * (got.features[:, K:] - ref.features[:, K:]))))
    ok = np.isfinite(mag) & (mag > 0)
    assert (dphi[ok] <= atol / mag[ok] + atol).all()
    np.testing.assert_array_equal(np.isnan(got.features), np.isnan(ref.features))


@pytest.mark.parametrize("chunks", [(16, 22), (90, 100), (7, 100), (23, 9)])
def test_cellprofiler_shape_and_intensity_equal_the_in_memory_result(chunks):
    lab = scene()
    img = np.random.default_rng(3).random(lab.shape)
    dl, di = da.from_array(lab, chunks=chunks), da.from_array(img, chunks=chunks)
    for image, dimage in ((None, None), (img, di)):
        ref = object_features(lab, image, convention="cellprofiler")
        got = fmd.object_features(dl, dimage, convention="cellprofiler")
        # sums of a few hundred terms below 1 in other orders: a few units of 1e-16
        assert_same(got, ref, 1e-13)


@pytest.mark.parametrize("centre", ["enclosing", "centroid-enclosing", "area"])
@pytest.mark.parametrize("family", ["zernike", "pseudo-zernike", "pcet"])
def test_standard_moments_of_every_family_and_centre(family, centre):
    lab = scene(seed=4)
    img = np.random.default_rng(5).random(lab.shape)
    ref = object_features(lab, img, family=family, orders=5, centre=centre, kind="complex",
                          dtype="float64")
    got = fmd.object_features(da.from_array(lab, chunks=(16, 22)),
                              da.from_array(img, chunks=(30, 25)),  # rechunked to labels'
                              family=family, orders=5, centre=centre, kind="complex",
                              dtype="float64")
    assert_same(got, ref, 1e-12)  # |A| up to (n + 1) / pi times the area over R^2


def test_orders_normalize_and_float32_follow_the_in_memory_function():
    lab = scene(seed=2)
    img = np.random.default_rng(1).random(lab.shape).astype(np.float32)
    kw = {"orders": [0, 2, 4], "normalize": "z00"}
    ref = object_features(lab, img, **kw)
    got = fmd.object_features(da.from_array(lab, chunks=20), da.from_array(img, chunks=20),
                              **kw)
    assert got.features.dtype == ref.features.dtype == np.float32
    assert got.normalize == "z00" and got.names == ref.names
    np.testing.assert_allclose(got.features, ref.features, rtol=0, atol=1e-5)


def test_an_empty_chunk_and_labels_of_any_integer_dtype():
    lab = np.zeros((40, 40), np.uint16)
    lab[2:12, 3:30] = 7
    lab[25:39, 25:39] = 65535
    ref = object_features(lab, orders=3, dtype="float64")
    got = fmd.object_features(da.from_array(lab, chunks=(10, 20)), orders=3, dtype="float64")
    assert_same(got, ref, 1e-13)
    empty = fmd.object_features(da.zeros((20, 20), dtype=np.int32, chunks=10), orders=3)
    assert len(empty) == 0 and empty.features.shape == (0, 6)


def test_compute_false_gives_one_delayed_graph():
    lab = scene()
    out = fmd.object_features(da.from_array(lab, chunks=30), orders=3, compute=False)
    assert isinstance(out, Delayed)
    ref = object_features(lab, orders=3)
    np.testing.assert_allclose(out.compute().features, ref.features, rtol=0, atol=1e-6)


def test_bad_input_names_the_parameter():
    lab = scene()
    with pytest.raises(TypeError, match="labels must be a dask array"):
        fmd.object_features(lab)
    dl = da.from_array(lab, chunks=30)
    with pytest.raises(ValueError, match="labels must be 2-D"):
        fmd.object_features(dl[None])
    with pytest.raises(TypeError, match="labels must hold integers"):
        fmd.object_features(dl.astype(float))
    with pytest.raises(ValueError, match="image must have the shape of labels"):
        fmd.object_features(dl, da.zeros((10, 10), chunks=5))
    with pytest.raises(ValueError, match="centre"):
        fmd.object_features(dl, centre="middle")
    with pytest.raises(ValueError, match="convention='cellprofiler'"):
        fmd.object_features(dl, convention="cellprofiler", family="pcet")
    with pytest.raises(TypeError, match="compute"):
        fmd.object_features(dl, compute="yes")


def test_a_zarr_backed_label_image(tmp_path):
    pytest.importorskip("zarr")
    lab = scene(seed=6)
    da.from_array(lab, chunks=(25, 30)).to_zarr(str(tmp_path / "labels.zarr"))
    dl = da.from_zarr(str(tmp_path / "labels.zarr"))
    assert dl.chunks != ((90,), (100,))
    ref = object_features(lab, convention="cellprofiler")
    assert_same(fmd.object_features(dl, convention="cellprofiler"), ref, 1e-13)


def test_chunks_take_the_per_pixel_route_where_memory_would_take_the_box_kernel(monkeypatch):
    """A chunk cannot run the box kernel (an object's box reaches past its chunk): where the
    in-memory call would take it, the chunks and the result name the torch route."""
    import torch

    import fastmoments.disk.labels as labels
    from fastmoments.dask._objects import _chunk_route

    monkeypatch.setattr(labels, "triton_ok", lambda device: True)
    cuda = torch.device("cuda")
    assert labels.choose_route("zernike", cuda, "auto").backend == "triton"
    route = _chunk_route("zernike", cuda)
    assert (route.backend, route.kernel) == ("torch", "pixels:index_add")
    assert "chunk" in route.reason
    cpu = torch.device("cpu")
    assert _chunk_route("zernike", cpu) == labels.choose_route("zernike", cpu, "auto")
