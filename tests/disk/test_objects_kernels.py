"""The compiled per-object passes of fastmoments.disk.labels against their references: the
one-pass geometry (run by run, hulls from the row extremes) against the column-extreme pass
and hulls, the compiled minimum enclosing circles against the lock-step NumPy ones (to the
bit), the Zernike sums read from each object's bounding box against the band sums, and the
row-by-row monomial sums against the pixel-by-pixel ones, their coefficients against the
explicit radial polynomials."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fastmoments.disk.enclosing import convex_hulls, minimum_enclosing_circles
from fastmoments.disk.label_geometry import _fused_pass, _hull_pass
from fastmoments.disk.labels import object_moments

from .test_objects_labels import ellipses


def awkward(dtype=np.int32):
    """Ellipses, one-pixel objects, lines (a row, a column, diagonals), squares (four pixel
    centres on one circle: tied angles), ragged blobs, labels above 1024 (the tables grow)
    and an object in two pieces."""
    rng = np.random.default_rng(8)
    lab = ellipses((120, 130), seed=8, step=10).astype(dtype)
    lab[0, 0] = 500
    lab[5, 3:9] = 501
    lab[100:110, 127] = 502
    lab[np.arange(110, 118), np.arange(110, 118)] = 503
    lab[np.arange(110, 116), np.arange(126, 120, -1)] = 504
    lab[60:66, 60:66] = 2000
    lab[70:75, 2:9] = 3001
    lab[119, 129] = 3001  # far from the rest of it
    for t in range(6):
        r, c = rng.integers(0, 112, 2)
        lab[r:r + 6, c:c + 6][rng.random((6, 6)) < 0.5] = 600 + t
    return lab


def column_pass(lab):
    """The geometry parts of the column-extreme pass, with its hulls."""
    ids, cnt, sums, bbox, obj, col, rmin, rmax, _lut = _fused_pass(lab, 2**30)
    pts, counts = convex_hulls(obj, col, rmin, rmax, len(ids))
    return ids, cnt, sums, bbox, pts, counts


@pytest.mark.parametrize("dtype", [np.int32, np.uint16])
def test_the_one_pass_geometry_equals_the_column_extreme_pass(dtype):
    lab = awkward(dtype)
    ids, cnt, sums, bbox, pts, counts, lut, _rows = _hull_pass(lab, 2**30)
    ref = column_pass(lab)
    for a, b in zip((ids, cnt, sums, bbox, pts, counts), ref, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(lut[ids], np.arange(len(ids)))


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 2**32 - 1))
def test_the_one_pass_geometry_equals_the_column_extreme_pass_on_random_labels(seed):
    rng = np.random.default_rng(seed)
    # rows narrower and wider than one vector comparison of the labels (64 bytes: 64
    # labels of uint8 down to 8 of int64), in the labels' own dtype
    shape = (int(rng.integers(1, 24)), int(rng.integers(1, 150)))
    lab = rng.integers(0, 5, size=shape) * (rng.random(shape) < rng.uniform(0.2, 1))
    lab = lab * int(rng.integers(1, 60))
    lab = lab.astype(rng.choice([np.uint8, np.uint16, np.int32, np.int64, np.uint64]))
    res = _hull_pass(lab, 2**30)
    if not lab.any():
        assert len(res[0]) == 0 and len(res[4]) == 0
        return
    for a, b in zip(res[:6], column_pass(lab), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_one_pass_geometry_refuses_negative_labels_and_gives_way_to_large_ones():
    lab = awkward(np.int64)
    lab[50, 50] = -3
    with pytest.raises(ValueError, match="got the label -3"):
        _hull_pass(lab, 2**30)
    lab[50, 50] = 2**40  # too large for a table in this budget: the other passes take it
    assert _hull_pass(lab, 2**20) is None
    assert _hull_pass(awkward(), 4000) is None  # (object, row) pairs past the budget


@pytest.mark.parametrize("hull, followed", [
    # a nucleus of the stardist image: two vertices tie as moves of the first side, and
    # both roads end on the same circle (centre exact, the same radius bits)
    ([[248, 508], [247, 509], [247, 510], [258, 510], [258, 509], [257, 508]], True),
    # a small blob whose ties come in two steps: copies of copies, all on one circle
    ([[2, 1], [1, 2], [1, 4], [4, 4], [5, 3], [5, 2], [4, 1]], True),
    # a small ellipse whose tied roads end on circles of other bits: NumPy's sort decides
    ([[44, 23], [43, 24], [43, 26], [45, 28], [46, 28], [48, 26], [47, 24], [46, 23]],
     False),
])
def test_tied_smallest_angles_are_followed_or_sorted_to_the_reference_bits(
        monkeypatch, hull, followed):
    from fastmoments.disk import enclosing

    pts = np.array(hull, dtype=float)
    counts = np.array([len(pts)])
    ref = minimum_enclosing_circles(pts, counts, method="numpy")
    steps = (np.ascontiguousarray(pts[:, 0]), np.ascontiguousarray(pts[:, 1]),
             np.zeros(1, np.int64), counts)
    answers = [enclosing._circle_steps(*steps, follow=False),
               enclosing._circle_steps(*steps, follow=True),  # one object of one: sorted
               minimum_enclosing_circles(pts, counts)]
    monkeypatch.setattr(enclosing, "FOLLOW_SHARE", 1.0)  # follow whatever the share
    answers.append(enclosing._circle_steps(*steps, follow=True))
    assert (answers[-1] is not None) == followed
    for got in answers:
        if got is not None:
            np.testing.assert_array_equal(got[0], ref[0])
            np.testing.assert_array_equal(got[1], ref[1])


def ellipses_and_tied_nuclei() -> tuple[np.ndarray, np.ndarray]:
    """Hull vertices (float) and counts of 39 ellipses (3 of them with ties that need the
    sort) and three copies of a stardist nucleus whose ties settle."""
    lab = ellipses((240, 260), seed=1, step=40)
    *_, pts, counts = column_pass(lab)
    tie = np.array([[248, 508], [247, 509], [247, 510], [258, 510], [258, 509], [257, 508]])
    pts = np.concatenate([pts, *(tie + np.array([300 + 20 * t, 7 * t]) for t in range(3))])
    counts = np.concatenate([counts, [len(tie)] * 3])
    return pts.astype(float), counts


@pytest.mark.parametrize("share", [None, 1.0])
def test_ties_followed_among_many_objects_give_the_reference_bits(monkeypatch, share):
    from fastmoments.disk import enclosing

    pts, counts = ellipses_and_tied_nuclei()
    if share is not None:
        monkeypatch.setattr(enclosing, "FOLLOW_SHARE", share)
    ref = minimum_enclosing_circles(pts, counts, method="numpy")
    got = enclosing._circle_steps(np.ascontiguousarray(pts[:, 0]),
                                  np.ascontiguousarray(pts[:, 1]),
                                  np.cumsum(counts) - counts, counts, follow=True)
    assert got is not None  # followed (share 1) or sorted from the step (3 of 39 tied)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])


def settled(pts, counts, angle_margin, cosine_margin):
    """``circles_settled`` of every object: centres, radii and the unsettled objects."""
    from fastmoments.disk import _numba_circles as nk

    n = len(counts)
    centres, radii, left = np.zeros((n, 2)), np.zeros(n), np.empty(n, np.int64)
    m = nk.circles_settled(np.ascontiguousarray(pts[:, 0]), np.ascontiguousarray(pts[:, 1]),
                           np.cumsum(counts) - counts, counts.astype(np.int64), centres,
                           radii, angle_margin, cosine_margin, left)
    return centres, radii, left[:m]


#: A small ellipse's hull whose tied roads end on circles of other bits (NumPy's sort of
#: every object's angles decides which one CellProfiler's code takes).
SORTED_HULL = [[44, 23], [43, 24], [43, 26], [45, 28], [46, 28], [48, 26], [47, 24], [46, 23]]


def test_the_settled_circles_are_the_reference_bits_and_leave_the_doubtful_objects():
    from fastmoments.disk import _numba_circles as nk

    pts, counts = ellipses_and_tied_nuclei()
    pts = np.concatenate([pts, np.array(SORTED_HULL, dtype=float) + 300])
    counts = np.append(counts, len(SORTED_HULL))
    ref = minimum_enclosing_circles(pts, counts, method="numpy")
    # the product's margins: the ties of the ellipses and the nuclei settle (every road
    # ends on one circle); the small ellipse's do not
    centres, radii, left = settled(pts, counts, nk.ANGLE_MARGIN, nk.COSINE_MARGIN)
    assert left.tolist() == [len(counts) - 1]
    np.testing.assert_array_equal(centres[:-1], ref[0][:-1])
    np.testing.assert_array_equal(radii[:-1], ref[1][:-1])
    # wide margins: more roads are followed and more objects left, never a wrong bit
    centres, radii, left = settled(pts, counts, 0.05, 0.05)
    ok = np.ones(len(counts), bool)
    ok[left] = False
    assert len(left) > 1 and ok.sum() > 5
    np.testing.assert_array_equal(centres[ok], ref[0][ok])
    np.testing.assert_array_equal(radii[ok], ref[1][ok])
    # a cosine of exactly 0 is the angle pi/2 in any arccos: a nucleus of the stardist
    # image whose first side has a right angle at S0 settles with any margin
    hull = np.array([[99, 0], [99, 2], [100, 4], [101, 5], [103, 6], [106, 6], [118, 4],
                     [121, 3], [123, 2], [126, 0]], dtype=float)
    one = settled(hull, np.array([len(hull)]), 1e-3, 1e-3)
    ref = minimum_enclosing_circles(hull, np.array([len(hull)]), method="numpy")
    assert len(one[2]) == 0
    np.testing.assert_array_equal(one[0], ref[0])
    np.testing.assert_array_equal(one[1], ref[1])


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("margin", [None, 0.05])
def test_the_objects_left_by_the_settled_circles_get_the_reference_bits(monkeypatch, threads,
                                                                       margin):
    import fastmoments._threads as th
    from fastmoments.disk import _numba_circles as nk
    from fastmoments.disk import enclosing

    pts, counts = ellipses_and_tied_nuclei()
    if margin is not None:  # many objects left, each settled by its own lock steps
        monkeypatch.setattr(nk, "ANGLE_MARGIN", margin)
        monkeypatch.setattr(nk, "COSINE_MARGIN", margin)
    monkeypatch.setattr(th, "threads_for", lambda work, grain=th.GRAIN: threads)
    lock_step = []
    real = enclosing._lock_step

    def spy(*args):
        lock_step.append(real(*args))
        return lock_step[-1]

    monkeypatch.setattr(enclosing, "_lock_step", spy)
    ref = minimum_enclosing_circles(pts, counts, method="numpy")
    got = minimum_enclosing_circles(pts, counts)
    assert not lock_step
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    # with the small ellipse, NumPy's sort of every object's angles decides: all the
    # objects go through the lock-step steps together, once
    pts = np.concatenate([pts, np.array(SORTED_HULL, dtype=float) + 300])
    counts = np.append(counts, len(SORTED_HULL))
    ref = minimum_enclosing_circles(pts, counts, method="numpy")
    got = minimum_enclosing_circles(pts, counts)
    assert len(lock_step) == 1
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])


@pytest.mark.parametrize("seed", [0, 1])
def test_the_settled_circles_of_points_off_the_grid_are_the_reference_bits(seed):
    # convex polygons of float vertices: on circles (every vertex sees a side under
    # nearly the same angle, ties to the last bits), on ellipses, and on circles rounded
    # to quarter pixels (exact ties)
    rng = np.random.default_rng(seed)
    polys = []
    for k in range(300):
        m = int(rng.integers(3, 40))
        t = np.sort(rng.uniform(0, 2 * np.pi, m))
        a, b = rng.uniform(1, 60), rng.uniform(1, 60)
        if k % 3 == 0:
            b = a
        p = np.stack([a * np.sin(t), b * np.cos(t)], 1) + rng.uniform(-500, 500, 2)
        if k % 3 == 2:
            p = np.round(p * 4) / 4
        polys.append(p[np.r_[True, np.any(np.diff(p, axis=0) != 0, axis=1)]])
    pts = np.concatenate(polys)
    counts = np.array([len(p) for p in polys])
    ref = minimum_enclosing_circles(pts, counts, method="numpy")
    got = minimum_enclosing_circles(pts, counts)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])


@pytest.mark.parametrize("kind", ["pixels", "floats", "half pixels"])
def test_points_that_are_not_hulls_get_the_reference_bits_or_a_clear_error(kind):
    # clouds with points inside and repeated points: the compiled steps (NumPy's error
    # model: inf and NaN, no exception) give the lock-step reference's bits, NaN included
    rng = np.random.default_rng({"pixels": 3, "floats": 4, "half pixels": 5}[kind])
    counts = rng.integers(1, 30, 200)
    shape = (int(counts.sum()), 2)
    pts = {"pixels": rng.integers(0, 40, shape).astype(float),
           "floats": rng.normal(0, 50, shape),
           "half pixels": np.round(rng.normal(0, 10, shape) * 2) / 2}[kind]
    with np.errstate(all="ignore"):
        ref = minimum_enclosing_circles(pts, counts, method="numpy")
    got = minimum_enclosing_circles(pts, counts)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    # a repeated point as the first side: the steps would go round for ever
    pts = np.array([[11.0, 6.0], [11.0, 6.0], [2.0, 18.0]])
    for method in ("numpy", "numba"):
        with pytest.raises(ValueError, match=r"points: .* convex hull"), \
                np.errstate(all="ignore"):
            minimum_enclosing_circles(pts, np.array([3]), method=method)


@pytest.mark.parametrize("share", [None, 1.0])
@pytest.mark.parametrize("seed, step", [(1, 40), (8, 10), (11, 12)])
def test_the_compiled_circles_equal_the_lock_step_ones_to_the_bit(monkeypatch, seed, step,
                                                                  share):
    from fastmoments.disk import enclosing

    if share is not None:  # follow every tie: copies that differ, then the sort
        monkeypatch.setattr(enclosing, "FOLLOW_SHARE", share)
    # ellipses and squares: many objects have vertices that see the side under the same
    # computed angle, where NumPy's sort of all the angles decides (module notes)
    lab = ellipses((240, 260), seed=seed, step=step)
    lab[0, 0] = 900
    lab[60, 2:9] = 901
    for t in range(8):
        lab[200 + 4 * t : 203 + 4 * t, 3 + 9 * t : 3 + 9 * t + t + 1] = 910 + t
    *_, pts, counts = column_pass(lab)
    a = minimum_enclosing_circles(pts.astype(float), counts, method="numba")
    b = minimum_enclosing_circles(pts.astype(float), counts, method="numpy")
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    empty = minimum_enclosing_circles(np.zeros((0, 2)), np.zeros(0, np.int64))
    assert empty[0].shape == (0, 2) and empty[1].shape == (0,)
    with pytest.raises(ValueError, match="method"):
        minimum_enclosing_circles(pts.astype(float), counts, method="scipy")


@pytest.mark.parametrize("convention", ["standard", "cellprofiler"])
def test_the_box_sums_equal_the_band_sums(convention):
    from fastmoments.disk import _numba_labels as nk
    from fastmoments.disk.label_geometry import _geometry

    lab = awkward()
    img = np.random.default_rng(3).random(lab.shape)
    geo, lut = _geometry(lab, "enclosing", torch.device("cpu"), 2**30)
    cp = convention == "cellprofiler"
    limit = 1.0 if cp else 1.0 + 1e-10
    for f in (np.zeros((0, 0)), img):
        a = np.zeros((len(geo), 30, 2))
        b = np.zeros((len(geo), 30, 2))
        visit = np.arange(len(geo))[::-1].copy()  # any order: each object's own sums
        nk.zernike_box_sums(lab, geo.labels, geo.bbox, f, geo.centre, geo.radius, 9, cp,
                            limit, a, visit)
        nk.zernike_image_sums(lab, lut, f, geo.centre, geo.radius, 9, cp, limit, b)
        # the same terms (each |R_nm u^m f| <= 1) added in another order, ~100 of them
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        assert np.isfinite(a).all()


@pytest.mark.parametrize("cellprofiler", [False, True])
@pytest.mark.parametrize("order", [0, 1, 9, 12])
def test_the_monomial_table_gives_the_zernike_kernels(order, cellprofiler):
    from fastmoments.disk import _numba_rowsums as rs

    dst, src, coef = rs.monomial_table(order, cellprofiler)
    rng = np.random.default_rng(order)
    rho = np.sqrt(rng.random(200))
    theta = rng.uniform(-np.pi, np.pi, 200)
    x, y = rho * np.cos(theta), rho * np.sin(theta)
    P = order + 1
    mono = np.stack([x ** (s // P) * y ** (s % P) for s in range(P * P)])
    got = np.zeros((2 * sum(n // 2 + 1 for n in range(P)), 200))
    np.add.at(got, dst, coef[:, None] * mono[src])
    u = (y + 1j * x) / rho if cellprofiler else (x + 1j * y) / rho
    K = 0
    for n in range(P):
        for m in range(n % 2, n + 1, 2):
            s = (n - m) // 2
            radial = sum((-1) ** k * math.factorial(n - k) * rho ** (n - 2 * k)
                         / (math.factorial(k) * math.factorial((n + m) // 2 - k)
                            * math.factorial(s - k)) for k in range(s + 1))
            ref = radial * u**m
            # the coefficients' sizes (840 at degree 9, 27,720 at 12) bound the rounding
            tol = 1e-14 * max(1.0, float(np.abs(coef).max()))
            np.testing.assert_allclose(got[2 * K], ref.real, rtol=0, atol=tol)
            np.testing.assert_allclose(got[2 * K + 1], ref.imag, rtol=0, atol=tol)
            K += 1
    assert np.array_equal(coef, np.round(coef))  # exact integers


@pytest.mark.parametrize("convention", ["standard", "cellprofiler"])
@pytest.mark.parametrize("order", [0, 3, 9, 10])
def test_the_row_sums_equal_the_pixel_sums(convention, order):
    from fastmoments.disk import _numba_labels as nk
    from fastmoments.disk import _numba_rowsums as rs
    from fastmoments.disk.label_geometry import _geometry

    lab = awkward()
    img = np.random.default_rng(4).random(lab.shape)
    img[lab == 0] = np.nan  # read in the boxes, never added
    geo, _lut = _geometry(lab, "enclosing", torch.device("cpu"), 2**30)
    cp = convention == "cellprofiler"
    limit = 1.0 if cp else 1.0 + 1e-10
    K = sum(n // 2 + 1 for n in range(order + 1))
    visit = np.arange(len(geo))[::-1].copy()  # any order: each object's own sums
    for f in (np.zeros((0, 0)), img, img.astype(np.float32)):
        a = np.zeros((len(geo), K, 2))
        b = np.zeros((len(geo), K, 2))
        rs.zernike_row_sums(lab, geo.labels, geo.bbox, f, geo.centre, geo.radius, order,
                            limit, a, visit, *rs.monomial_table(order, cp))
        nk.zernike_box_sums(lab, geo.labels, geo.bbox, f, geo.centre, geo.radius, order, cp,
                            limit, b, visit)
        assert np.isfinite(a).all()
        # each term |R_nm u^m f| <= 1; the monomial route's rounding grows with the
        # coefficients (840 at degree 9, 3,780 at 10): a bound per pixel of each object
        tol = 1e-15 * max(1.0, float(np.abs(rs.monomial_table(order, cp)[2]).max()))
        err = np.abs(a - b).max(axis=(1, 2))
        assert (err <= tol * np.maximum(geo.area, 1)).all(), (err / geo.area).max()
        one = geo.radius == 0  # one-pixel objects: no pixel passes, as pixel by pixel
        assert one.any() and not a[one].any()


def test_objects_whose_boxes_overlap_much_take_the_band_sums():
    # three diagonals across the image: their boxes cover it three times over
    lab = np.zeros((64, 64), np.int32)
    idx = np.arange(64)
    lab[idx, idx] = 1
    lab[idx[:-2], idx[2:]] = 2
    lab[idx[2:], idx[:-2]] = 3
    lab[20:30, 40:50] = 4
    a = object_moments(lab, order=6, kind="complex", method="numba", dtype="float64")
    b = object_moments(lab, order=6, kind="complex", method="torch", dtype="float64")
    np.testing.assert_allclose(a.values, b.values, rtol=0, atol=1e-12)


# ------------------------------------------------------ the geometry in torch operations
def host_geometry(lab):
    from fastmoments.disk.label_geometry import _geometry

    return _geometry(lab, "enclosing", torch.device("cpu"), 2**30)[0]


def assert_same_circles(g, ref, scale):
    for field in ("labels", "area", "centroid", "bbox"):
        np.testing.assert_array_equal(getattr(g, field), getattr(ref, field))
    # the same circle; its centre and radius to the rounding of coordinates up to ``scale``
    np.testing.assert_allclose(g.centre, ref.centre, rtol=0, atol=4e-16 * scale)
    np.testing.assert_allclose(g.radius, ref.radius, rtol=0, atol=4e-16 * scale)


@pytest.mark.parametrize("budget", [2**30, 200_000])  # one block, or 2 rows a block
def test_the_torch_geometry_gives_the_minimum_enclosing_circles(budget):
    from fastmoments.disk.label_geometry import _device_geometry

    lab = awkward()
    g = _device_geometry(torch.from_numpy(lab), torch.device("cpu"), budget)
    assert_same_circles(g, host_geometry(lab), max(lab.shape))


def test_the_torch_geometry_adds_the_hull_vertices_that_the_directions_miss():
    from fastmoments.disk.label_geometry import _device_geometry

    # four directions find four extreme pixels of each ellipse: the circles around them are
    # too small, and the pixels outside them are added until none is
    lab = ellipses((200, 220), seed=5, step=40)
    four = ((1, 0), (0, 1), (-1, 0), (0, -1))
    g = _device_geometry(torch.from_numpy(lab), torch.device("cpu"), 2**30, directions=four)
    assert_same_circles(g, host_geometry(lab), max(lab.shape))
    none = _device_geometry(torch.zeros(5, 6, dtype=torch.int32), torch.device("cpu"), 2**30)
    assert len(none) == 0 and none.centre.shape == (0, 2)


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 2**32 - 1))
def test_the_torch_geometry_on_random_labels(seed):
    from fastmoments.disk.label_geometry import _device_geometry

    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 30, size=2))
    lab = rng.integers(0, 4, size=shape) * (rng.random(shape) < rng.uniform(0.2, 1))
    g = _device_geometry(torch.from_numpy(lab), torch.device("cpu"), 2**30)
    assert_same_circles(g, host_geometry(lab), max(shape))


@pytest.mark.parametrize("dtype", [np.int32, np.uint16])
def test_the_one_pass_rows_are_each_objects_rows(dtype):
    lab = awkward(dtype)
    ids, *_, rows = _hull_pass(lab, 2**30)
    for k, v in enumerate(ids):
        mask = lab == v
        at = np.flatnonzero(mask.any(axis=1))
        g = slice(rows.first[k], rows.first[k] + rows.count[k])
        row, lo, hi, npx = rows.row[g], rows.lo[g], rows.hi[g], rows.pixels[g]
        np.testing.assert_array_equal(row, at)
        np.testing.assert_array_equal(lo, [np.flatnonzero(mask[i])[0] for i in at])
        np.testing.assert_array_equal(hi, [np.flatnonzero(mask[i])[-1] for i in at])
        np.testing.assert_array_equal(npx, mask[at].sum(axis=1))
    assert (rows.pixels < rows.hi - rows.lo + 1).any()  # rows of several runs


@pytest.mark.parametrize("convention", ["standard", "cellprofiler"])
@pytest.mark.parametrize("order", [0, 3, 9, 10])
def test_the_shape_sums_from_the_rows_equal_the_row_sums(convention, order):
    from fastmoments.disk import _numba_rowsums as rs
    from fastmoments.disk.label_geometry import _cpu_geometry

    lab = awkward()
    geo, _lut, rows = _cpu_geometry(lab, "enclosing", 2**30)
    cp = convention == "cellprofiler"
    limit = 1.0 if cp else 1.0 + 1e-10
    K = sum(n // 2 + 1 for n in range(order + 1))
    table = rs.monomial_table(order, cp)
    a = np.zeros((len(geo), K, 2))
    b = np.zeros((len(geo), K, 2))
    rs.zernike_run_sums(lab, geo.labels, geo.bbox, geo.centre, geo.radius, order, limit, a,
                        rows.first, rows.count, rows.row, rows.lo, rows.hi, rows.pixels,
                        *table)
    rs.zernike_row_sums(lab, geo.labels, geo.bbox, np.zeros((0, 0)), geo.centre, geo.radius,
                        order, limit, b, np.arange(len(geo)), *table)
    # the same terms added in another order (differences of prefix sums of powers
    # |x|^p <= 1), rounding that grows with the coefficients: a bound per pixel
    tol = 1e-15 * max(1.0, float(np.abs(table[2]).max()))
    err = np.abs(a - b).max(axis=(1, 2))
    assert (err <= tol * np.maximum(geo.area, 1)).all(), (err / geo.area).max()
    one = geo.radius == 0
    assert one.any() and not a[one].any()


def test_an_integer_image_needs_no_finiteness_check_and_gives_its_float_features():
    lab = awkward()
    img = np.random.default_rng(5).integers(0, 65536, lab.shape).astype(np.uint16)
    a = object_moments(lab, img, order=6, convention="cellprofiler")
    b = object_moments(lab, img.astype(np.float64), order=6, convention="cellprofiler")
    np.testing.assert_array_equal(a.features, b.features)
    bad = img.astype(np.float32)
    bad[tuple(np.argwhere(lab == 0)[-1])] = np.nan  # a background pixel: still refused
    with pytest.raises(ValueError, match="image contains NaN or infinity"):
        object_moments(lab, bad, order=6, convention="cellprofiler")


@pytest.mark.parametrize("convention", ["standard", "cellprofiler"])
@pytest.mark.parametrize("order", [0, 3, 9, 10])
def test_the_weighted_sums_from_the_rows_equal_the_row_sums(convention, order):
    from fastmoments.disk import _numba_rowsums as rs
    from fastmoments.disk._numba_weighted import zernike_weighted_sums
    from fastmoments.disk.label_geometry import _cpu_geometry

    lab = awkward()
    img = np.random.default_rng(6).random(lab.shape)
    img[lab == 0] = np.nan  # never read
    geo, _lut, rows = _cpu_geometry(lab, "enclosing", 2**30)
    cp = convention == "cellprofiler"
    limit = 1.0 if cp else 1.0 + 1e-10
    K = sum(n // 2 + 1 for n in range(order + 1))
    table = rs.monomial_table(order, cp)
    counts = (np.nan_to_num(img) * 1000).astype(np.uint16)
    for f in (img, img.astype(np.float32), counts):
        a = np.zeros((len(geo), K, 2))
        b = np.zeros((len(geo), K, 2))
        zernike_weighted_sums(lab, geo.labels, f, geo.bbox, geo.centre, geo.radius, order,
                              limit, a, rows.first, rows.count, rows.row, rows.lo, rows.hi,
                              rows.pixels, *table)
        rs.zernike_row_sums(lab, geo.labels, geo.bbox, f, geo.centre, geo.radius, order,
                            limit, b, np.arange(len(geo)), *table)
        assert np.isfinite(a).all()
        # the same terms |x^p y^q f| <= max f added in another order, times coefficients
        # that grow with the degree: a bound per pixel of each object
        tol = 1e-15 * max(1.0, float(np.abs(table[2]).max())) * float(np.nanmax(f))
        err = np.abs(a - b).max(axis=(1, 2))
        assert (err <= tol * np.maximum(geo.area, 1)).all(), (err / geo.area).max()
        one = geo.radius == 0
        assert one.any() and not a[one].any()


def test_the_weighted_sums_of_an_image_past_the_prefetch_size_equal_the_row_sums():
    """Past :data:`PREFETCH_BYTES` the rows of the next object are asked for while one
    computes (objects of radius 0 among them): the sums are those of the boxes' rows."""
    from fastmoments.disk import _numba_rowsums as rs
    from fastmoments.disk import _numba_weighted as nw
    from fastmoments.disk.label_geometry import _cpu_geometry

    tile = awkward()
    reps = (12, 12)
    offsets = np.arange(np.prod(reps)).reshape(reps) * (int(tile.max()) + 1)
    lab = np.block([[np.where(tile > 0, tile + o, 0) for o in row] for row in offsets])
    img = np.random.default_rng(9).random(lab.shape)
    assert lab.nbytes + img.nbytes > nw.PREFETCH_BYTES
    geo, _lut, rows = _cpu_geometry(lab, "enclosing", 2**31)
    table = rs.monomial_table(9, True)
    a = np.zeros((len(geo), 30, 2))
    b = np.zeros_like(a)
    nw._objects_sums(lab, geo.labels, img, geo.bbox, geo.centre, geo.radius, 9, 1.0, a,
                     rows.first, rows.count, rows.row, rows.lo, rows.hi, rows.pixels, *table,
                     nw._by_first_row(geo.bbox, lab.shape[0]))
    rs.zernike_row_sums(lab, geo.labels, geo.bbox, img, geo.centre, geo.radius, 9, 1.0, b,
                        np.arange(len(geo)), *table)
    tol = 1e-15 * float(np.abs(table[2]).max())  # as for the awkward objects above
    err = np.abs(a - b).max(axis=(1, 2))
    assert (err <= tol * np.maximum(geo.area, 1)).all(), (err / geo.area).max()
    assert (geo.radius == 0).any()


def test_the_weighted_sums_do_not_depend_on_the_threads():
    from fastmoments._numba import threads
    from fastmoments.disk import _numba_rowsums as rs
    from fastmoments.disk import _numba_weighted as nw
    from fastmoments.disk.label_geometry import _cpu_geometry

    lab = awkward()
    img = np.random.default_rng(7).random(lab.shape)
    geo, _lut, rows = _cpu_geometry(lab, "enclosing", 2**30)
    parts = (rows.first, rows.count, rows.row, rows.lo, rows.hi, rows.pixels)
    table = rs.monomial_table(9, True)
    args = (lab, geo.labels, img, geo.bbox, geo.centre, geo.radius, 9, 1.0)
    one = np.zeros((len(geo), 30, 2))
    nw._objects_sums(*args, one, *parts, *table, np.arange(len(geo)))
    for count, runs in ((1, 1), (2, 3), (2, 1000)):
        out = np.zeros_like(one)
        with threads(count):
            nw.zernike_weighted_sums(*args, out, *parts, *table, runs)
        np.testing.assert_array_equal(out, one)  # each object's sums, whoever computes them


def test_the_shape_sums_do_not_depend_on_the_threads():
    from fastmoments._numba import threads
    from fastmoments.disk import _numba_rowsums as rs
    from fastmoments.disk import _numba_weighted as nw
    from fastmoments.disk.label_geometry import _cpu_geometry

    lab = awkward()
    geo, _lut, rows = _cpu_geometry(lab, "enclosing", 2**30)
    parts = (rows.first, rows.count, rows.row, rows.lo, rows.hi, rows.pixels)
    table = rs.monomial_table(9, False)
    args = (lab, geo.labels, geo.bbox, geo.centre, geo.radius, 9, 1.0 + 1e-10)
    one = np.zeros((len(geo), 30, 2))
    rs.zernike_run_sums(*args, one, *parts, *table)
    for count, runs in ((1, 1), (2, 3), (2, 1000)):
        out = np.zeros_like(one)
        with threads(count):
            nw._run_sums_parallel(*args, out, *parts, *table, runs)
        np.testing.assert_array_equal(out, one)
    out = np.zeros_like(one)
    nw.run_sums(*args, out, rows, table)  # the dispatch, on the threads its work is worth
    np.testing.assert_array_equal(out, one)



def test_the_one_pass_geometry_grows_its_entries_and_tables():
    """An entry per pixel: each column a label of its own, in rows of 3,000 columns, and
    labels from 1 to 3,000 met in one row: both the entries (room for one per
    :data:`ENTRY_PIXELS` pixels at first) and the tables by label (1,024) grow, between
    rows; the numbers equal the column-extreme pass's."""
    from fastmoments.disk import _numba_labels as nk

    rows, cols = 40, 3000
    lab = np.broadcast_to(np.arange(1, cols + 1, dtype=np.int32), (rows, cols)).copy()
    lab[::7] = 0  # rows without labels between the others
    lab[5, 100:200] = 2  # a label met twice in a row: one entry
    start = nk.row_runs(lab, 1 << 20, 1 << 20, 0)
    assert start[0] == nk.PASS_OK
    assert start[11] > max(1 << 12, rows * cols // nk.ENTRY_PIXELS)  # the entries grew
    ids, cnt, sums, bbox, pts, counts, _lut, _rows = _hull_pass(lab, 2**30)
    for a, b in zip((ids, cnt, sums, bbox, pts, counts), column_pass(lab), strict=True):
        np.testing.assert_array_equal(a, b)

@pytest.mark.parametrize("bands", [2, 3, 7])
def test_the_geometry_pass_in_bands_of_rows_equals_one_pass(monkeypatch, bands):
    import fastmoments._threads as th
    from fastmoments.disk import _host_geometry as hg
    from fastmoments.disk import _numba_labels as nk

    lab = awkward()
    one = nk.row_runs(lab, 1 << 20, 1 << 20, 0)
    monkeypatch.setattr(th, "threads_for", lambda work, grain=th.GRAIN: bands)
    got = hg._row_runs(lab, 1 << 20, 1 << 20)
    assert got[0] == nk.PASS_OK and len(got[6]) == bands
    assert sum(band[5] for band in got[6]) == one[11]
    ids = np.flatnonzero(one[2])
    np.testing.assert_array_equal(np.flatnonzero(got[2]), ids)
    for a, b in zip(got[2:6], one[2:6], strict=True):
        np.testing.assert_array_equal(a[ids], b[ids])
    for f in range(5):  # the bands' entries one after the other: the rows' order
        joined = np.concatenate([band[f][: band[5]] for band in got[6]])
        np.testing.assert_array_equal(joined, one[6 + f][: one[11]])
    assert hg._row_runs(lab, 1 << 20, one[11] - 1)[0] == nk.PASS_TOO_LARGE
    bad = lab.astype(np.int64)
    bad[-1, -1] = -4  # in the last band
    assert hg._row_runs(bad, 1 << 20, 1 << 20)[:2] == (nk.PASS_NEGATIVE, -4)
    a = _hull_pass(lab, 2**30)
    monkeypatch.undo()
    b = _hull_pass(lab, 2**30)
    for x, y in zip(a[:7], b[:7], strict=True):
        np.testing.assert_array_equal(x, y)
