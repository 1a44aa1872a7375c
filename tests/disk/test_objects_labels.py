"""Per-object moments of a label image on the objects' own pixels (fastmoments.disk.labels):
a plain per-object direct sum in float64 as the reference, properties, bad input, memory."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fastmoments.disk.enclosing import convex_hulls, minimum_enclosing_circles
from fastmoments.disk.labels import (
    label_geometry,
    object_moments,
    object_table,
)


# ------------------------------------------------------------------------------ data
def ellipses(shape=(96, 112), seed=0, step=24, label_dtype=np.int32, gaps=True):
    """A label image of random ellipses on a grid; labels not contiguous when ``gaps``."""
    rng = np.random.default_rng(seed)
    lab = np.zeros(shape, dtype=label_dtype)
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    value = 0
    for cy in range(step // 2, shape[0] - step // 2 + 1, step):
        for cx in range(step // 2, shape[1] - step // 2 + 1, step):
            value += 7 if gaps else 1
            a, b = rng.uniform(2.5, step / 2 - 1, 2)
            t = rng.uniform(0, np.pi)
            dy = yy - cy - rng.uniform(-0.5, 0.5)
            dx = xx - cx - rng.uniform(-0.5, 0.5)
            u = dy * np.cos(t) + dx * np.sin(t)
            v = -dy * np.sin(t) + dx * np.cos(t)
            lab[(u / a) ** 2 + (v / b) ** 2 <= 1] = value
    return lab


def zernike_radial(n, m, r):
    """R_nm(r) by the factorial sum (exact enough in float64 at these orders)."""
    out = np.zeros_like(r)
    for s in range((n - m) // 2 + 1):
        c = ((-1) ** s * math.factorial(n - s)
             / (math.factorial(s) * math.factorial((n + m) // 2 - s)
                * math.factorial((n - m) // 2 - s)))
        out += c * r ** (n - 2 * s)
    return out


def pseudo_radial(n, m, r):
    out = np.zeros_like(r)
    for s in range(n - m + 1):
        c = ((-1) ** s * math.factorial(2 * n + 1 - s)
             / (math.factorial(s) * math.factorial(n + m + 1 - s) * math.factorial(n - m - s)))
        out += c * r ** (n - s)
    return out


def direct_standard(lab, image, label, centre, radius, pairs, radial):
    """A_nm of one object, cut out alone, by the plain sum of the definition."""
    rows, cols = np.nonzero(lab == label)
    f = np.ones(len(rows)) if image is None else image[rows, cols].astype(np.float64)
    dy = (rows - centre[0]) / radius
    dx = (cols - centre[1]) / radius
    rho2 = dx ** 2 + dy ** 2
    inside = rho2 <= 1 + 1e-10  # the closed disk: pixels on the circle count
    rho = np.sqrt(rho2[inside])
    theta = np.arctan2(-dy[inside], dx[inside])
    out = []
    for n, m in pairs:
        kern = radial(n, m, rho) * np.exp(-1j * m * theta)
        out.append((n + 1) / np.pi * np.sum(f[inside] * kern) / radius ** 2)
    return np.array(out)


def direct_cellprofiler_shape(lab, label, centre, radius, pairs):
    """CellProfiler's shape Zernike of one object, from its definition (module notes)."""
    rows, cols = np.nonzero(lab == label)
    y = (rows - centre[0]) / radius
    x = (cols - centre[1]) / radius
    rho2 = x ** 2 + y ** 2
    inside = rho2 <= 1
    y, x, rho = y[inside], x[inside], np.sqrt(rho2[inside])
    phi = np.arctan2(x, y)
    return np.array([abs(np.sum(zernike_radial(n, m, rho) * np.exp(1j * m * phi)))
                     / (np.pi * radius ** 2) for n, m in pairs])


# --------------------------------------------------------------------------- geometry
def test_geometry_equals_a_plain_per_object_computation():
    lab = ellipses(label_dtype=np.uint16)
    g = label_geometry(lab, centre="centroid-enclosing")
    ids = np.unique(lab)[1:]
    np.testing.assert_array_equal(g.labels, ids)
    for k, v in enumerate(ids):
        rows, cols = np.nonzero(lab == v)
        assert g.area[k] == len(rows)
        np.testing.assert_allclose(g.centroid[k], [rows.mean(), cols.mean()], rtol=0,
                                   atol=1e-12)
        assert tuple(g.bbox[k]) == (rows.min(), cols.min(), rows.max() + 1, cols.max() + 1)
        far = np.sqrt((np.abs(rows - g.centroid[k, 0]) + 0.5) ** 2
                      + (np.abs(cols - g.centroid[k, 1]) + 0.5) ** 2).max()
        assert g.radius[k] == pytest.approx(far, rel=1e-14)
    ga = label_geometry(lab, centre="area")
    np.testing.assert_allclose(ga.radius, np.sqrt(ga.area / np.pi), rtol=1e-15)
    np.testing.assert_array_equal(ga.centre, ga.centroid)


def _brute_force_circle(points):
    """Smallest circle through 2 or 3 of the points that holds them all (plain search)."""
    best = (np.inf, None)
    pts = points.astype(np.float64)
    cands = []
    for p, q in itertools.combinations(pts, 2):
        cands.append(((p + q) / 2, np.linalg.norm(p - q) / 2))
    for p, q, s in itertools.combinations(pts, 3):
        a = np.array([q - p, s - p])
        if abs(np.linalg.det(a)) < 1e-12:
            continue
        rhs = 0.5 * np.array([(q - p) @ (q + p), (s - p) @ (s + p)])
        c = np.linalg.solve(a, rhs)
        cands.append((c, np.linalg.norm(p - c)))
    for c, r in cands:
        if r < best[0] and np.all(np.linalg.norm(pts - c, axis=1) <= r * (1 + 1e-12) + 1e-12):
            best = (r, c)
    return best


def test_minimum_enclosing_circle_is_the_smallest_circle_around_the_pixel_centres():
    rng = np.random.default_rng(3)
    lab = np.zeros((60, 60), dtype=np.int64)
    for k in range(12):  # small random blobs (not convex), a line, a pixel
        r0, c0 = divmod(k, 4)
        blob = rng.random((9, 9)) < 0.45
        blob[4, :] = True
        lab[r0 * 15 + 2 : r0 * 15 + 11, c0 * 15 + 2 : c0 * 15 + 11][blob] = k + 1
    lab[55, 3:12] = 40
    lab[57, 50] = 41
    g = label_geometry(lab)
    for k, v in enumerate(g.labels):
        pts = np.argwhere(lab == v)
        if len(pts) == 1:
            assert g.radius[k] == 0
            np.testing.assert_array_equal(g.centre[k], pts[0])
            continue
        # the circle around the topmost and bottommost pixel of every column is the circle
        # around all pixels (every pixel lies between two of them)
        ext = np.array([p for c in np.unique(pts[:, 1])
                        for p in ((pts[pts[:, 1] == c, 0].min(), c),
                                  (pts[pts[:, 1] == c, 0].max(), c))])
        r, c = _brute_force_circle(np.unique(ext, axis=0))
        assert g.radius[k] == pytest.approx(r, rel=1e-12)
        np.testing.assert_allclose(g.centre[k], c, rtol=0, atol=1e-9)


@pytest.mark.parametrize("method", ["numba", "numpy"])
def test_convex_hull_vertices_are_the_strict_hull(method):
    rng = np.random.default_rng(5)
    for _ in range(20):
        pts = np.unique(rng.integers(0, 12, size=(25, 2)), axis=0)  # (row, col)
        obj = np.zeros(len(pts), np.int64)
        keys = pts[:, 1]
        cols = np.unique(keys)
        rmin = np.array([pts[keys == c, 0].min() for c in cols])
        rmax = np.array([pts[keys == c, 0].max() for c in cols])
        hull, counts = convex_hulls(np.zeros(len(cols), np.int64), cols, rmin, rmax, 1,
                                    method=method)
        del obj
        # every vertex is a point; every point is inside or on the hull (counter-clockwise
        # in (x, y) = (col, row): left of every edge); no three consecutive vertices collinear
        h = hull[:, ::-1].astype(np.int64)  # (x, y)
        k = len(h)
        if k >= 3:
            for i in range(k):
                a, b = h[i], h[(i + 1) % k]
                cross = ((b[0] - a[0]) * (pts[:, 0] - a[1])
                         - (b[1] - a[1]) * (pts[:, 1] - a[0]))
                assert np.all(cross >= 0)
                c = h[(i + 2) % k]
                assert (b[0] - a[0]) * (c[1] - b[1]) - (c[0] - b[0]) * (b[1] - a[1]) > 0
        # the first vertex is the smallest (col, row)
        order = np.lexsort((pts[:, 0], pts[:, 1]))
        np.testing.assert_array_equal(hull[0], pts[order[0]])
        centre, radius = minimum_enclosing_circles(hull.astype(float), counts)
        assert np.all(np.hypot(pts[:, 0] - centre[0, 0], pts[:, 1] - centre[0, 1])
                      <= radius[0] * (1 + 1e-12))


def test_compiled_hulls_equal_the_lock_step_reference():
    # many objects at once, with one-pixel objects, lines (rows, columns, diagonals) and end
    # columns of one pixel, which the two chains share
    rng = np.random.default_rng(8)
    lab = ellipses((120, 130), seed=8, step=10)
    lab[0, 0] = 500
    lab[5, 3:9] = 501
    lab[100:110, 127] = 502
    lab[np.arange(110, 118), np.arange(110, 118)] = 503
    lab[np.arange(110, 116), np.arange(126, 120, -1)] = 504
    for _ in range(6):
        r, c = rng.integers(0, 112, 2)
        lab[r:r + 6, c:c + 6][rng.random((6, 6)) < 0.5] = 600 + _
    from fastmoments.disk.label_geometry import _fused_pass

    ids, _cnt, _sums, _bbox, obj, col, rmin, rmax, _lut = _fused_pass(lab, 2**30)
    a = convex_hulls(obj, col, rmin, rmax, len(ids), method="numba")
    b = convex_hulls(obj, col, rmin, rmax, len(ids), method="numpy")
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[0], b[0])
    with pytest.raises(ValueError, match="method"):
        convex_hulls(obj, col, rmin, rmax, len(ids), method="scipy")


# ---------------------------------------------------------------------------- moments
@pytest.mark.parametrize("method", ["torch", "numba"])
@pytest.mark.parametrize("centre", ["enclosing", "centroid-enclosing", "area"])
def test_zernike_equals_the_direct_sum_per_object(centre, method):
    lab = ellipses()
    img = np.random.default_rng(1).random(lab.shape)
    om = object_moments(lab, img, order=7, centre=centre, kind="complex", method=method)
    assert om.route.backend == method
    g = om.geometry
    assert om.values.dtype == np.complex128
    for k, v in enumerate(g.labels):
        ref = direct_standard(lab, img, v, g.centre[k], g.radius[k], om.pairs,
                              zernike_radial)
        np.testing.assert_allclose(om.values[k], ref, rtol=0, atol=1e-12)


def test_pseudo_zernike_shape_moments_equal_the_direct_sum():
    lab = ellipses(seed=2)
    om = object_moments(lab, family="pseudo-zernike", order=6, dtype="float64",
                        kind="complex")
    g = om.geometry
    for k, v in enumerate(g.labels):
        ref = direct_standard(lab, None, v, g.centre[k], g.radius[k], om.pairs,
                              pseudo_radial)
        np.testing.assert_allclose(om.values[k], ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("family", ["pcet", "pct", "pst"])
def test_polar_harmonic_moments_equal_the_direct_sum(family):
    lab = ellipses(seed=4)
    img = np.random.default_rng(2).random(lab.shape)
    om = object_moments(lab, img, family=family, order=3, kind="complex",
                        centre="centroid-enclosing")
    g = om.geometry
    for k, v in enumerate(g.labels):
        rows, cols = np.nonzero(lab == v)
        dy = (rows - g.centre[k, 0]) / g.radius[k]
        dx = (cols - g.centre[k, 1]) / g.radius[k]
        r = np.hypot(dx, dy)
        theta = np.arctan2(-dy, dx)
        f = img[rows, cols]
        for j, (n, m) in enumerate(om.pairs):
            if family == "pcet":
                radial, c = np.exp(-2j * np.pi * n * r ** 2), 1 / np.pi
            elif family == "pct":
                radial, c = np.cos(np.pi * n * r ** 2), (1 if n == 0 else 2) / np.pi
            else:
                radial, c = np.sin(np.pi * n * r ** 2), 2 / np.pi
            ref = c * np.sum(f * radial * np.exp(-1j * m * theta)) / g.radius[k] ** 2
            assert om.values[k, j] == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("method", ["torch", "numba"])
def test_cellprofiler_convention_equals_its_definition(method):
    lab = ellipses(seed=6)
    om = object_moments(lab, convention="cellprofiler", method=method)
    assert len(om.pairs) == 30 and om.names[-1] == "Zernike_9_9"
    g = om.geometry
    for k, v in enumerate(g.labels):
        ref = direct_cellprofiler_shape(lab, v, g.centre[k], g.radius[k], om.pairs)
        np.testing.assert_allclose(om.features[k], ref, rtol=0, atol=1e-12)
    # the documented relation to the standard moments, |A_nm| / (n + 1), on the objects
    # where CellProfiler's rounded test rho^2 <= 1 keeps every pixel on the circle
    std = object_moments(lab, order=9, dtype="float64", method=method)
    n = np.array([p[0] for p in om.pairs])
    same = []
    for k, v in enumerate(g.labels):
        rows, cols = np.nonzero(lab == v)
        rho2 = (((cols - g.centre[k, 1]) / g.radius[k]) ** 2
                + ((rows - g.centre[k, 0]) / g.radius[k]) ** 2)
        same.append(not np.any(rho2 > 1))
    same = np.array(same)
    assert 3 <= same.sum() < len(same)
    np.testing.assert_allclose(om.features[same], std.features[same] / (n + 1), rtol=0,
                               atol=1e-13)
    assert np.abs(om.features[~same] - std.features[~same] / (n + 1)).max() > 1e-4


@pytest.mark.parametrize("method", ["torch", "numba"])
def test_cellprofiler_intensity_magnitude_and_phase_equal_their_definition(method):
    lab = ellipses(seed=7)
    img = np.random.default_rng(3).random(lab.shape)
    om = object_moments(lab, img, order=5, convention="cellprofiler", image_name="DNA",
                        method=method)
    K = len(om.pairs)
    assert om.names[0] == "RadialDistribution_ZernikeMagnitude_DNA_0_0"
    assert om.names[K] == "RadialDistribution_ZernikePhase_DNA_0_0"
    g = om.geometry
    for k, v in enumerate(g.labels):
        rows, cols = np.nonzero(lab == v)
        y = (rows - g.centre[k, 0]) / g.radius[k]
        x = (cols - g.centre[k, 1]) / g.radius[k]
        rho2 = x ** 2 + y ** 2
        ins = rho2 <= 1
        rho, phi = np.sqrt(rho2[ins]), np.arctan2(x[ins], y[ins])
        for j, (n, m) in enumerate(om.pairs):
            s = np.sum(img[rows, cols][ins] * zernike_radial(n, m, rho) * np.exp(1j * m * phi))
            assert om.features[k, j] == pytest.approx(abs(s) / len(rows), abs=1e-12)
            if abs(s) > 1e-9:
                assert om.features[k, K + j] == pytest.approx(np.arctan2(s.real, s.imag),
                                                              abs=1e-10)


# ------------------------------------------------------------------------- properties
@pytest.mark.parametrize("centre", ["centroid-enclosing", "enclosing"])
def test_magnitudes_are_invariant_under_quarter_turns(centre):
    lab = ellipses(seed=8)
    img = np.random.default_rng(4).random(lab.shape)
    a = object_moments(lab, img, order=8, centre=centre)
    for k in (1, 2, 3):
        b = object_moments(np.rot90(lab, k), np.rot90(img, k), order=8, centre=centre)
        np.testing.assert_array_equal(a.labels, b.labels)
        np.testing.assert_allclose(b.features, a.features, rtol=1e-12, atol=1e-13)


def test_translation_leaves_the_moments_unchanged():
    lab = ellipses(seed=9)
    img = np.random.default_rng(5).random(lab.shape)
    a = object_moments(lab, img, order=6, kind="complex")
    big = np.zeros((lab.shape[0] + 13, lab.shape[1] + 6), lab.dtype)
    bimg = np.zeros(big.shape)
    big[13:, 6:] = lab
    bimg[13:, 6:] = img
    b = object_moments(big, bimg, order=6, kind="complex")
    np.testing.assert_allclose(b.values, a.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.geometry.centre - a.geometry.centre,
                               np.tile([13.0, 6.0], (len(a), 1)), rtol=0, atol=1e-10)


def test_a_batch_of_objects_equals_each_object_alone():
    lab = ellipses(seed=10)
    img = np.random.default_rng(6).random(lab.shape)
    om = object_moments(lab, img, order=5, kind="complex")
    for k, v in enumerate(om.labels):
        alone = np.where(lab == v, lab, 0)
        one = object_moments(alone, img, order=5, kind="complex")
        np.testing.assert_array_equal(one.labels, [v])
        np.testing.assert_allclose(one.values[0], om.values[k], rtol=0, atol=1e-13)


@pytest.mark.parametrize("method", ["torch", "numba"])
def test_float32_agrees_with_float64_within_a_stated_bound(method):
    lab = ellipses(seed=11)
    img = np.random.default_rng(7).random(lab.shape)
    hi = object_moments(lab, img, order=9, dtype="float64", method=method)
    lo = object_moments(lab, img.astype(np.float32), order=9, method=method)
    assert lo.features.dtype == np.float32
    # float32 sums of a few hundred pixels: about 1e-6 of the largest moment
    scale = np.abs(hi.features).max()
    np.testing.assert_allclose(lo.features, hi.features, rtol=0, atol=2e-5 * scale)


@pytest.mark.parametrize("method", ["torch", "numba"])
def test_a_small_memory_budget_chunks_the_work_and_gives_the_same_result(method):
    lab = ellipses(seed=12)
    img = np.random.default_rng(8).random(lab.shape)
    a = object_moments(lab, img, order=9, kind="complex", method=method)
    # one image row per block (torch path at order 9), a few (numba)
    b = object_moments(lab, img, order=9, kind="complex", memory_budget=250_000,
                       method=method)
    np.testing.assert_allclose(b.values, a.values, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(b.geometry.radius, a.geometry.radius)
    with pytest.raises(MemoryError, match="memory_budget"):
        object_moments(lab, img, order=9, memory_budget=1000)


# -------------------------------------------------------------------- input and output
# the compiled loops are specialised per label dtype (a compilation each, cached): the
# common and the extreme ones run them here, the others the torch passes
@pytest.mark.parametrize("dtype, method", [
    (np.uint8, "auto"), (np.uint64, "auto"), (np.int16, "torch"), (np.uint32, "torch"),
    (">i4", "auto")])
def test_any_integer_dtype_and_labels_not_contiguous(dtype, method):
    lab = np.zeros((40, 40), dtype=dtype)
    lab[2:12, 3:15] = 5
    lab[20:35, 20:30] = 200
    ref = object_moments(lab.astype(np.int64), order=4, dtype="float64")
    om = object_moments(lab, order=4, dtype="float64", method=method)
    np.testing.assert_array_equal(om.labels, [5, 200])
    # the two routes add the ~150 pixels of an object in different orders: N eps apart
    np.testing.assert_allclose(om.features, ref.features, rtol=0, atol=1e-14)
    img = np.linspace(0, 1, lab.size).reshape(lab.shape)
    a = object_moments(lab, img.astype(">f8"), order=4, method="torch")
    b = object_moments(lab, img.astype(">f8"), order=4, method=method)
    c = object_moments(lab.astype(np.int64), img, order=4)
    np.testing.assert_allclose(a.features, c.features, rtol=0, atol=1e-14)
    np.testing.assert_allclose(b.features, c.features, rtol=0, atol=1e-14)


def test_large_label_values_use_a_search_instead_of_a_table():
    lab = np.zeros((30, 30), dtype=np.int64)
    lab[2:10, 2:10] = 3
    lab[15:28, 12:25] = 2**40
    small = np.where(lab > 0, np.where(lab == 3, 1, 2), 0)
    a = object_moments(lab, order=4, dtype="float64", memory_budget=2**20)
    b = object_moments(small, order=4, dtype="float64")
    np.testing.assert_array_equal(a.labels, [3, 2**40])
    # the pixel list and the whole-image kernel sum in different orders
    np.testing.assert_allclose(a.features, b.features, rtol=0, atol=1e-15)


def test_inputs_are_not_modified_and_tensors_give_tensors():
    lab = ellipses(seed=13)
    img = np.random.default_rng(9).random(lab.shape)
    lab0, img0 = lab.copy(), img.copy()
    om = object_moments(lab, img, order=4)
    np.testing.assert_array_equal(lab, lab0)
    np.testing.assert_array_equal(img, img0)
    assert isinstance(om.features, np.ndarray)
    t = object_moments(torch.from_numpy(lab), torch.from_numpy(img), order=4)
    assert isinstance(t.features, torch.Tensor) and t.features.dtype == torch.float64
    np.testing.assert_allclose(t.features.numpy(), om.features, rtol=0, atol=1e-15)


def test_no_objects():
    om = object_moments(np.zeros((8, 8), np.int32), order=3)
    assert len(om) == 0 and om.features.shape == (0, 6)
    assert list(om.to_dict()["label"]) == []


def test_table_has_one_row_per_label():
    lab = ellipses(seed=14)
    d = object_moments(lab, order=3, convention="cellprofiler").to_dict()
    assert list(d)[:5] == ["label", "area", "centre_row", "centre_col", "radius"]
    assert list(d)[5:] == ["Zernike_0_0", "Zernike_1_1", "Zernike_2_0", "Zernike_2_2",
                           "Zernike_3_1", "Zernike_3_3"]
    assert all(len(v) == len(d["label"]) for v in d.values())
    pd = pytest.importorskip("pandas")
    t = object_table(lab, order=3, convention="cellprofiler")
    assert isinstance(t, pd.DataFrame) and list(t.columns) == list(d)
    np.testing.assert_array_equal(t["Zernike_2_0"].to_numpy(), d["Zernike_2_0"])


def test_only_objects_of_one_pixel():
    lab = np.zeros((6, 6), np.uint8)
    lab[1, 1], lab[4, 3] = 2, 9
    om = object_moments(lab, order=3)
    np.testing.assert_array_equal(om.geometry.centre, [[1, 1], [4, 3]])
    np.testing.assert_array_equal(om.geometry.radius, [0, 0])
    assert np.isnan(om.features).all()


def test_an_object_of_one_pixel_has_nan_moments():
    lab = np.zeros((10, 10), np.int32)
    lab[2, 2] = 1
    lab[5:9, 5:9] = 2
    om = object_moments(lab, order=2, dtype="float64")
    assert np.isnan(om.features[0]).all() and np.isfinite(om.features[1]).all()


@pytest.mark.parametrize("kwargs, exc, text", [
    (dict(labels=np.zeros((4, 4), float)), TypeError, "labels"),
    (dict(labels=np.zeros((4, 4, 2), int)), ValueError, "labels"),
    (dict(labels=-np.ones((4, 4), int)), ValueError, "labels"),
    (dict(image=np.zeros((4, 5))), ValueError, "image"),
    (dict(image=np.full((4, 4), np.nan)), ValueError, "image"),
    (dict(image=np.zeros((4, 4), complex)), TypeError, "image"),
    (dict(order=2.0), TypeError, "order"),
    (dict(centre="middle"), ValueError, "centre"),
    (dict(convention="cp"), ValueError, "convention"),
    (dict(family="zernike2"), ValueError, "family"),
    (dict(kind="phase"), ValueError, "kind"),
    (dict(convention="cellprofiler", family="pcet"), ValueError, "family"),
    (dict(memory_budget=-1), ValueError, "memory_budget"),
    (dict(method="fast"), ValueError, "method"),
    (dict(method="numba", family="pcet"), ValueError, "method"),
])
def test_bad_input_names_the_parameter(kwargs, exc, text):
    args = dict(labels=np.ones((4, 4), np.int32), image=None)
    args.update(kwargs)
    with pytest.raises(exc, match=text):
        object_moments(args.pop("labels"), args.pop("image"), **args)


def test_the_numba_and_torch_routes_agree_and_the_route_is_shown():
    lab = ellipses(seed=15)
    img = np.random.default_rng(10).random(lab.shape)
    a = object_moments(lab, img, order=12, kind="complex", method="torch")
    b = object_moments(lab, img, order=12, kind="complex")
    assert (a.route.backend, b.route.backend) == ("torch", "numba")
    assert "numba" in repr(b)
    np.testing.assert_allclose(b.values, a.values, rtol=0, atol=1e-13)
    assert object_moments(lab, order=3, family="pct").route.backend == "torch"


@pytest.mark.parametrize("centre", ["enclosing", "centroid-enclosing"])
def test_the_compiled_and_torch_geometry_passes_agree_to_the_bit(centre):
    lab = ellipses(seed=16, label_dtype=np.uint16)
    a = label_geometry(lab, centre=centre, method="torch")
    b = label_geometry(lab, centre=centre, method="numba")
    for field in ("labels", "area", "centroid", "bbox", "centre", "radius"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    # the compiled sums over the whole image equal those over row blocks of pixels
    c = object_moments(lab, order=6, kind="complex")
    d = object_moments(lab, order=6, kind="complex", memory_budget=100_000)
    np.testing.assert_allclose(c.values, d.values, rtol=0, atol=1e-13)


def test_tensor_labels_of_unsigned_dtypes_and_half_precision_images():
    lab = ellipses(seed=17)
    img = np.random.default_rng(11).random(lab.shape)
    ref = object_moments(lab, img.astype(np.float16).astype(np.float64), order=5)
    om = object_moments(torch.from_numpy(lab.astype(np.int32)).to(torch.uint16),
                        torch.from_numpy(img.astype(np.float16)), order=5, dtype="float64")
    np.testing.assert_allclose(om.features.numpy(), ref.features, rtol=0, atol=1e-13)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("convention", ["standard", "cellprofiler"])
def test_cuda_gives_the_cpu_numbers(convention):
    lab = ellipses(seed=18)
    img = np.random.default_rng(12).random(lab.shape)
    cpu = object_moments(lab, img, order=9, convention=convention, dtype="float64")
    gpu = object_moments(torch.from_numpy(lab).cuda(), torch.from_numpy(img).cuda(), order=9,
                         convention=convention, dtype="float64")
    from fastmoments._triton import HAVE_TRITON

    assert gpu.features.device.type == "cuda"
    assert gpu.route.backend == ("triton" if HAVE_TRITON else "torch")
    if convention == "cellprofiler":  # the host's circles: CellProfiler's bits
        np.testing.assert_array_equal(gpu.geometry.radius, cpu.geometry.radius)
    else:  # the circles solved on the GPU: the same, to the rounding of the coordinates
        np.testing.assert_allclose(gpu.geometry.radius, cpu.geometry.radius, rtol=0,
                                   atol=1e-13)
    assert_same_features(gpu.features.cpu().numpy(), cpu, 1e-12)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("convention", ["standard", "cellprofiler"])
def test_host_labels_cross_to_the_gpu_once(convention, monkeypatch):
    """NumPy labels on a GPU: the geometry and the sums read one copy of them there."""
    from fastmoments.disk import label_geometry, labels

    lab = ellipses(seed=19)
    copies = []
    real = label_geometry._block

    def counting(x, r0, r1, device, dtype=None):
        if isinstance(x, np.ndarray) and x.dtype == lab.dtype and device.type == "cuda":
            copies.append((r0, r1))
        return real(x, r0, r1, device, dtype)

    monkeypatch.setattr(label_geometry, "_block", counting)
    monkeypatch.setattr(labels, "_block", counting)
    got = object_moments(lab, order=9, convention=convention, device="cuda", dtype="float64")
    cpu = object_moments(lab, order=9, convention=convention, dtype="float64")
    assert_same_features(got.features, cpu, 1e-12)
    if got.route.backend == "triton":
        assert copies == [(0, lab.shape[0])]


def assert_same_features(got: np.ndarray, ref, atol: float) -> None:
    """``got`` equals ``ref.features`` to ``atol``; for CellProfiler's intensity features
    the phases to ``atol`` over the magnitude (a phase moves by its sum's error over the
    sum's size, and the CPU's monomial route rounds the sums to ~1e-14 of the pixel count)."""
    K = len(ref.pairs)
    if not (ref.convention == "cellprofiler" and ref.features.shape[1] == 2 * K):
        np.testing.assert_allclose(got, ref.features, rtol=0, atol=atol)
        return
    mag = ref.features[:, :K]
    np.testing.assert_allclose(got[:, :K], mag, rtol=0, atol=atol)
    dphi = np.abs(np.angle(np.exp(1j * (got[:, K:] - ref.features[:, K:]))))
    ok = np.isfinite(mag) & (mag > 0)
    assert (dphi[ok] <= atol / mag[ok] + atol).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref.features))


@pytest.mark.parametrize("convention", ["standard", "cellprofiler"])
def test_the_torch_route_gives_the_compiled_numbers(convention):
    """What the CUDA test above compares, on the CPU: the torch route (the one CUDA runs)
    against the compiled one, to the same bounds."""
    lab = ellipses(seed=18)
    img = np.random.default_rng(12).random(lab.shape)
    cpu = object_moments(lab, img, order=9, convention=convention, dtype="float64")
    tor = object_moments(lab, img, order=9, convention=convention, dtype="float64",
                         method="torch")
    assert cpu.route.backend == "numba" and tor.route.backend == "torch"
    assert_same_features(np.asarray(tor.features), cpu, 1e-12)


# ------------------------------------------------------------- property-based checks
PROPERTY = settings(max_examples=25, deadline=None, derandomize=True, database=None)


@PROPERTY
@given(st.integers(0, 2**32 - 1))
def test_random_label_images_give_the_direct_sums_and_enclosing_circles(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(6, 20, size=2))
    lab = rng.integers(0, 4, size=shape) * rng.integers(0, 2, size=shape)  # 3 ragged objects
    lab = np.where(lab > 0, lab * int(rng.integers(1, 50)), 0)
    img = rng.random(shape)
    a = object_moments(lab, img, order=5, kind="complex", method="torch")
    b = object_moments(lab, img, order=5, kind="complex", method="numba")
    g = a.geometry
    for k, v in enumerate(g.labels):
        pts = np.argwhere(lab == v)
        if len(pts) > 1:  # every pixel centre in the circle, and three or two on it
            d = np.hypot(pts[:, 0] - g.centre[k, 0], pts[:, 1] - g.centre[k, 1])
            assert d.max() <= g.radius[k] * (1 + 1e-12)
            assert np.sum(np.abs(d - g.radius[k]) <= 1e-9 * g.radius[k]) >= 2
            ref = direct_standard(lab, img, v, g.centre[k], g.radius[k], a.pairs,
                                  zernike_radial)
            np.testing.assert_allclose(a.values[k], ref, rtol=0, atol=1e-12)
            np.testing.assert_allclose(b.values[k], ref, rtol=0, atol=1e-12)
        else:
            assert np.isnan(a.values[k]).all() and np.isnan(b.values[k]).all()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_image_with_nan_or_infinity_anywhere_is_refused(bad, dtype):
    lab = ellipses(seed=2)
    img = np.ones(lab.shape, dtype)
    img[0, 0] = bad  # background: still refused
    for x in (img, torch.from_numpy(img), img[:, ::-1]):
        with pytest.raises(ValueError, match="NaN or infinity"):
            object_moments(lab if not isinstance(x, torch.Tensor) else torch.from_numpy(lab),
                           x, order=2)


def test_the_torch_circles_equal_the_numpy_ones_to_rounding():
    from fastmoments.disk.enclosing import minimum_enclosing_circles_torch
    from fastmoments.disk.label_geometry import _geometry

    lab = ellipses((120, 130), seed=11, step=12)
    lab[0, 0] = 900  # one pixel
    lab[60, 2:9] = 901  # a line
    cpu = torch.device("cpu")
    host, _ = _geometry(lab, "enclosing", cpu, 2**28)
    dev, _ = _geometry(lab, "enclosing", cpu, 2**28, circle_device=cpu)
    # the same circle: centre and radius up to rounding (ties may pick another hull vertex)
    np.testing.assert_allclose(dev.centre, host.centre, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dev.radius, host.radius, rtol=1e-14, atol=0)
    c, r = minimum_enclosing_circles_torch(torch.zeros(0, 2, dtype=torch.float64),
                                           torch.zeros(0, dtype=torch.int64))
    assert c.shape == (0, 2) and r.shape == (0,)
