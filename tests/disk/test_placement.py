"""The disk placed anywhere on an image of any shape (``center=``, ``radius=``): against an
independent float64 direct sum, and its properties (zero padding, turns by 90 degrees, batch
against loop, adjoint, the default mapping unchanged, the errors)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.disk import Placement, PolarHarmonicTransform, ZernikeTransform, centroid
from fastmoments.disk.placement import check_center

from ..reference_disk import radial_exact

FAMILIES = ["zernike", "pseudo-zernike"]
FUNCS = {"zernike": fm.zernike_moments, "pseudo-zernike": fm.pseudo_zernike_moments}
PHT = {"pcet": fm.pcet, "pct": fm.pct, "pst": fm.pst}


def placed_points(shape, center, radius, k=1, quadrature="midpoint", rule="inscribed"):
    """Every sample point (row, col, x, y, weight) of a disk of ``radius`` pixels at
    ``center`` on an image of ``shape``, by the definition: pixel (i, j) centred at the point
    (i, j), disk coordinates x = (col - c_col)/R, y = -(row - c_row)/R, a pixel used when its
    farthest corner (``inscribed``) or its centre (``centre``) is within R, weights the
    pixel's share of the area in disk units."""
    H, W = shape
    cr, cc = center
    R = float(radius)
    if quadrature == "midpoint":
        off = (2 * np.arange(1, k + 1) - k - 1) / (2 * k)  # pixels
        w1 = np.full(k, 1.0 / (k * R))
    else:
        nodes, wts = np.polynomial.legendre.leggauss(k)
        off = nodes / 2
        w1 = wts / (2 * R)
    rows, cols, xs, ys, ws = [], [], [], [], []
    for i in range(H):
        for j in range(W):
            dy, dx = i - cr, j - cc
            if rule == "inscribed":
                inside = math.hypot(abs(dx) + 0.5, abs(dy) + 0.5) <= R * (1 + 1e-15)
            else:
                inside = math.hypot(dx, dy) <= R * (1 + 1e-15)
            if not inside:
                continue
            for s in range(k):
                for t in range(k):
                    rows.append(i)
                    cols.append(j)
                    xs.append((dx + off[t]) / R)
                    ys.append(-(dy + off[s]) / R)
                    ws.append(w1[s] * w1[t])
    return tuple(np.array(a) for a in (rows, cols, xs, ys, ws))


def direct(family, img, pairs, center, radius, **sampling):
    """A_nm = c_nm sum_p w_p f_p conj(R_nm(r_p)) e^{-i m theta_p}, every point summed."""
    rows, cols, x, y, w = placed_points(img.shape, center, radius, **sampling)
    r = np.hypot(x, y)
    th = np.arctan2(y, x)
    f = img[rows, cols]
    out = []
    for n, m in pairs:
        if family in ("zernike", "pseudo-zernike"):
            R, c = radial_exact(family, n, abs(m), r), (n + 1) / math.pi
        elif family == "pcet":
            R, c = np.exp(2j * np.pi * n * r * r), 1 / math.pi
        elif family == "pct":
            R, c = np.cos(np.pi * n * r * r), (1 if n == 0 else 2) / math.pi
        else:
            R, c = np.sin(np.pi * n * r * r), 2 / math.pi
        out.append(c * np.sum(w * f * np.conj(R) * np.exp(-1j * m * th)))
    return np.array(out)


def _pairs(family, T):
    fam = fm.disk.get_family(family)
    return [(n, m) for n in range(T + 1) for m in range(-n, n + 1) if fam.is_valid(n, m)]


# a centre on a pixel centre and on a pixel corner (the orbits of the square), a centre
# elsewhere, and disks cut by the image's edge
PLACEMENTS = [
    ((21, 26), (10.0, 13.0), 7.0),
    ((21, 26), (9.5, 12.5), 6.5),
    ((21, 26), (9.3, 14.6), 7.2),
    ((21, 26), (10.0, 13.5), 6.0),
    ((21, 26), (2.0, 22.0), 6.0),
    ((19, 30), (17.25, 3.75), 8.3),
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("shape,center,radius", PLACEMENTS)
@pytest.mark.parametrize("rule", ["inscribed", "centre"])
def test_against_direct_sum(family, shape, center, radius, rule, rng):
    img = rng.random(shape)
    T = 8
    A = FUNCS[family](img, T, center=center, radius=radius, rule=rule, dtype="float64")
    pairs = _pairs(family, T)
    ref = direct(family, img, pairs, center, radius, rule=rule)
    got = np.array([A[n, m] for n, m in pairs])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13 * np.abs(ref).max())
    assert A.center == center and A.radius == radius


@pytest.mark.parametrize("k,quadrature", [(2, "midpoint"), (3, "gauss")])
@pytest.mark.parametrize("center,radius", [((10.0, 13.0), 7.0), ((9.3, 14.6), 7.2)])
def test_sub_pixel_sampling_against_direct_sum(k, quadrature, center, radius, rng):
    img = rng.random((21, 26))
    A = fm.zernike_moments(img, 8, center=center, radius=radius, k=k, quadrature=quadrature,
                           dtype="float64")
    pairs = _pairs("zernike", 8)
    ref = direct("zernike", img, pairs, center, radius, k=k, quadrature=quadrature)
    got = np.array([A[n, m] for n, m in pairs])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13 * np.abs(ref).max())


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("shape,center,radius", [((43, 44), (21.0, 22.0), 20.0),
                                                 ((25, 28), (11.3, 14.6), 11.0)])
def test_compressed_radial_stage(family, shape, center, radius, rng):
    """At order 30 the radial stage runs at Chebyshev nodes (orbits of the square, and
    points of their own)."""
    img = rng.random((2, *shape))
    A = FUNCS[family](img, 30, center=center, radius=radius, dtype="float64")
    assert A.plan.route.kernel == "compressed"
    pairs = [(30, 0), (29, 5), (30, 30), (25, 13)]
    pairs = [p for p in pairs if fm.disk.get_family(family).is_valid(*p)]
    ref = direct(family, img[1], pairs, center, radius)
    got = np.array([A[n, m][1] for n, m in pairs])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("kind", ["pcet", "pct", "pst"])
@pytest.mark.parametrize("method", ["engine", "gemm"])
@pytest.mark.parametrize("center,radius", [((9.5, 12.5), 6.5), ((9.3, 14.6), 7.2)])
def test_polar_harmonic_against_direct_sum(kind, method, center, radius, rng):
    img = rng.random((21, 26))
    M = PHT[kind](img, 3, 3, center=center, radius=radius, method=method, rule="centre",
                  dtype="float64")
    pairs = M.pairs
    ref = direct(kind, img, pairs, center, radius, rule="centre")
    got = np.asarray(M.values())
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13 * np.abs(ref).max())
    plan = PolarHarmonicTransform(kind, (21, 26), 3, 3, center=center, radius=radius,
                                  rule="centre", method=method, dtype="float64")
    np.testing.assert_array_equal(np.asarray(plan.forward(img).values()), got)


# ------------------------------------------------------------------ default unchanged
@pytest.mark.parametrize("N", [15, 16])
def test_default_disk_is_the_default_plan(N, rng):
    img = rng.random((2, N, N))
    A = fm.zernike_moments(img, 10, dtype="float64")
    B = fm.zernike_moments(img, 10, dtype="float64", center=((N - 1) / 2, (N - 1) / 2),
                           radius=N / 2)
    assert B.plan is A.plan and A.plan.placement is None
    np.testing.assert_array_equal(np.asarray(A), np.asarray(B))
    plan = ZernikeTransform((N, N), 10, center=((N - 1) / 2, (N - 1) / 2), radius=N / 2,
                            dtype="float64")
    assert plan.placement is None and plan.size == N
    np.testing.assert_array_equal(np.asarray(plan.forward(img)), np.asarray(A))
    assert A.center == ((N - 1) / 2, (N - 1) / 2) and A.radius == N / 2


# ------------------------------------------------------------------ properties
@pytest.mark.parametrize("family", [*FAMILIES, "pcet"])
@pytest.mark.parametrize("N", [12, 13])
@pytest.mark.parametrize("rule", ["inscribed", "centre"])
def test_zero_padding_changes_nothing(family, N, rule, rng):
    """The default disk of an N x N image, and the same disk placed on the image padded with
    zeros: the same orbits, so the same sums (bit for bit)."""
    tight = rng.random((N, N))
    big = np.zeros((N + 9, N + 14))
    big[4:4 + N, 11:11 + N] = tight
    centre = (4 + (N - 1) / 2, 11 + (N - 1) / 2)
    if family == "pcet":
        a = fm.pcet(tight, 4, 4, rule=rule, method="engine", dtype="float64")
        b = fm.pcet(big, 4, 4, center=centre, radius=N / 2, rule=rule, method="engine",
                    dtype="float64")
    else:
        a = FUNCS[family](tight, 10, rule=rule, dtype="float64")
        b = FUNCS[family](big, 10, center=centre, radius=N / 2, rule=rule, dtype="float64")
    np.testing.assert_array_equal(np.asarray(b), np.asarray(a))


@pytest.mark.parametrize("center,radius", [((6.3, 7.8), 5.4), ((6.0, 7.5), 5.0)])
def test_zero_padding_off_the_pixel_grid(center, radius, rng):
    """A disk at any centre gives the same moments on a zero-padded image, to rounding of
    the shifted coordinates."""
    tight = rng.random((14, 17))
    big = np.zeros((30, 40))
    big[9:23, 5:22] = tight
    a = fm.zernike_moments(tight, 10, center=center, radius=radius, dtype="float64")
    b = fm.zernike_moments(big, 10, center=(center[0] + 9, center[1] + 5), radius=radius,
                           dtype="float64")
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=0,
                               atol=1e-13 * np.abs(np.asarray(a)).max())


# the polar harmonic kernels have no angle at r = 0 (R_n(0) = 1 for every l), so they turn
# with the image only when no sample point sits at the disk centre: a centre on a corner
@pytest.mark.parametrize("family,center,radius", [
    *[(f, (8.0, 11.0), 6.5) for f in FAMILIES],
    *[(f, (7.5, 12.5), 5.2) for f in FAMILIES],
    ("pct", (7.5, 12.5), 5.2),
])
def test_turn_by_90_degrees_about_a_pixel_centre(family, center, radius, rng):
    """np.rot90 turns the image by 90 degrees counterclockwise about the disk's centre,
    pixel (i, j) -> (W - 1 - j, i): |A_nm| is unchanged and A_nm turns by exp(-i m pi/2).
    The sample points are the same (the orbits of the square) and only the order of the
    four values of each orbit's sum changes, so they agree to a few units of rounding."""
    img = rng.random((17, 23))
    W = img.shape[1]
    turned = np.rot90(img)
    tc = (W - 1 - center[1], center[0])
    if family == "pct":
        a = fm.pct(img, 4, 4, center=center, radius=radius, method="engine", dtype="float64")
        b = fm.pct(turned, 4, 4, center=tc, radius=radius, method="engine", dtype="float64")
    else:
        a = FUNCS[family](img, 12, center=center, radius=radius, dtype="float64")
        b = FUNCS[family](turned, 12, center=tc, radius=radius, dtype="float64")
    scale = a.invariants().max()
    np.testing.assert_allclose(b.invariants(), a.invariants(), rtol=0, atol=1e-14 * scale)
    m = np.array([p[1] for p in a.pairs])
    np.testing.assert_allclose(np.asarray(b), np.asarray(a) * np.exp(-1j * m * np.pi / 2),
                               rtol=0, atol=1e-14 * np.abs(np.asarray(a)).max())


def test_turn_with_the_centroid(rng):
    """The centre of mass turns with the image: the same magnitudes to rounding."""
    img = rng.random((17, 23)) ** 3
    a = fm.zernike_moments(img, 12, center="centroid", radius=6.0, dtype="float64")
    b = fm.zernike_moments(np.rot90(img), 12, center="centroid", radius=6.0, dtype="float64")
    c = np.asarray(a.center)
    np.testing.assert_allclose(b.center, [img.shape[1] - 1 - c[1], c[0]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.invariants(), a.invariants(), rtol=0,
                               atol=1e-12 * a.invariants().max())


@pytest.mark.parametrize("center", [(9.0, 12.0), (9.3, 14.6)])
def test_batch_equals_loop(center, rng):
    imgs = rng.random((3, 2, 21, 26))
    A = fm.zernike_moments(imgs, 9, center=center, radius=7.5, dtype="float64")
    assert A.batch_shape == (3, 2)
    for i in range(3):
        for j in range(2):
            one = fm.zernike_moments(imgs[i, j], 9, center=center, radius=7.5,
                                     dtype="float64")
            np.testing.assert_allclose(np.asarray(A)[i, j], np.asarray(one), rtol=0,
                                       atol=1e-14 * np.abs(np.asarray(one)).max())


def test_centroid_batch_equals_loop(rng):
    """Images of a batch with center='centroid' each get their own centre; images of equal
    centre share one plan; the reconstruction uses each image's own disk."""
    a, b = rng.random((2, 20, 27))
    a[3:9, 4:12] += 5  # pulls its centre of mass up and left
    imgs = np.stack([a, b, a])
    A = fm.zernike_moments(imgs, 8, center="centroid", radius=6.0, dtype="float64")
    assert len(A.placed) == 2
    np.testing.assert_allclose(A.center, centroid(imgs), rtol=0, atol=0)
    np.testing.assert_array_equal(A.center[0], A.center[2])
    recon = A.reconstruct()
    assert recon.shape == imgs.shape
    for i, img in enumerate(imgs):
        one = fm.zernike_moments(img, 8, center="centroid", radius=6.0, dtype="float64")
        np.testing.assert_array_equal(np.asarray(A)[i], np.asarray(one))
        np.testing.assert_array_equal(one.center, A.center[i])
        np.testing.assert_allclose(recon[i], one.reconstruct(), rtol=0, atol=1e-12)
        exp = fm.zernike_moments(img, 8, center=tuple(A.center[i]), radius=6.0,
                                 dtype="float64")
        np.testing.assert_array_equal(np.asarray(exp), np.asarray(one))


@pytest.mark.parametrize("kind", ["pcet", "pct", "pst"])
def test_centroid_batch_polar_harmonic(kind, rng):
    imgs = rng.random((3, 20, 27))
    imgs[0, 2:6, 3:9] += 4
    M = PHT[kind](imgs, 3, 3, center="centroid", radius=6.0, dtype="float64")
    assert type(M).__name__ == "PHTMoments" and len(M.placed) == 3
    rec = M.reconstruct(nmax=2)
    for i, img in enumerate(imgs):
        one = PHT[kind](img, 3, 3, center="centroid", radius=6.0, dtype="float64")
        np.testing.assert_allclose(np.asarray(M)[i], np.asarray(one), rtol=0,
                                   atol=1e-14 * np.abs(np.asarray(one)).max())
        np.testing.assert_allclose(rec[i], one.reconstruct(nmax=2), rtol=0, atol=1e-12)


def test_centroid_is_the_centre_of_mass(rng):
    img = rng.random((2, 13, 9))
    rows, cols = np.mgrid[:13, :9]
    want = [[(im * rows).sum() / im.sum(), (im * cols).sum() / im.sum()] for im in img]
    np.testing.assert_allclose(centroid(img), want, rtol=1e-15, atol=0)
    np.testing.assert_allclose(centroid(torch.as_tensor(img)), want, rtol=1e-15, atol=0)


def test_centroid_with_the_default_radius(rng):
    """radius=None with a centroid: the largest disk around each image's centre of mass."""
    img = np.zeros((20, 30))
    img[5:9, 20:26] = 1.0  # centre of mass (6.5, 22.5)
    A = fm.zernike_moments(img, 4, center="centroid", dtype="float64")
    assert A.center.tolist() == [6.5, 22.5] and A.radius == 7.0


@pytest.mark.parametrize("center,radius", [((8.0, 11.0), 6.5), ((7.3, 12.6), 5.2),
                                           ((1.0, 20.0), 6.0)])
@pytest.mark.parametrize("family", ["zernike", "pcet"])
def test_adjoint(center, radius, family, rng):
    """<A x, y> = <x, A^H y> (real inner products) on a placed disk."""
    if family == "pcet":
        plan = PolarHarmonicTransform("pcet", (17, 23), 3, 3, center=center, radius=radius,
                                      method="engine", dtype="float64")
    else:
        plan = ZernikeTransform((17, 23), 8, center=center, radius=radius, dtype="float64")
    x = rng.random((17, 23))
    shape = (plan.index.n_cols, plan.index.n_rows)
    y = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * plan.index.valid_mask()
    ax = plan.forward(x).data.numpy()
    lhs = np.real(np.vdot(y, ax))
    rhs = float(np.sum(x * plan.adjoint(y)))
    assert abs(lhs - rhs) <= 1e-12 * max(1.0, abs(lhs))


@pytest.mark.parametrize("center,radius", [((8.0, 11.0), 6.5), ((7.3, 12.6), 5.2),
                                           ((1.0, 20.0), 6.0)])
def test_reconstruction_at_the_pixel_centres(center, radius, rng):
    """reconstruct() is sum_nm A_nm V_nm at the centres of the disk's pixels (V_nm by the
    exact radial polynomials), zero elsewhere."""
    shape = (17, 23)
    plan = ZernikeTransform(shape, 6, center=center, radius=radius, rule="centre",
                            dtype="float64")
    A = plan.forward(rng.random(shape))
    rec = A.reconstruct()
    rows, cols, x, y, _w = placed_points(shape, center, radius, rule="centre")
    r, th = np.hypot(x, y), np.arctan2(y, x)
    want = np.zeros(shape)
    for n, m in A.pairs:
        for mm in ([m, -m] if m else [0]):
            want[rows, cols] += np.real(A[n, mm] * radial_exact("zernike", n, m, r)
                                        * np.exp(1j * mm * th))
    np.testing.assert_allclose(rec, want, rtol=0, atol=1e-13)
    assert plan.mask.sum() == rows.size and plan.mask[rows, cols].all()


def test_float32_agrees_with_float64(rng):
    img = rng.random((21, 26))
    a = fm.zernike_moments(img, 12, center=(9.3, 14.6), radius=8.0, dtype="float64")
    b = fm.zernike_moments(img, 12, center=(9.3, 14.6), radius=8.0, dtype="float32")
    ref = np.asarray(a)
    assert np.linalg.norm(np.asarray(b) - ref) <= 1e-5 * np.linalg.norm(ref)


def test_torch_in_torch_out(rng):
    img = torch.as_tensor(rng.random((2, 21, 26)))
    A = fm.zernike_moments(img, 6, center="centroid", radius=5.0)
    assert isinstance(A.values(), torch.Tensor)
    B = fm.zernike_moments(img.numpy(), 6, center="centroid", radius=5.0)
    np.testing.assert_array_equal(A.values().numpy(), B.values())


def test_plan_cache_keys_are_plain():
    p = Placement(10, 12, (4.0, 5.5), 3.0)
    assert hash(p) == hash(Placement(10, 12, (4.0, 5.5), 3.0))
    a = fm.zernike_moments(np.ones((10, 12)), 3, center=(4, 5.5), radius=3)
    b = fm.zernike_moments(np.ones((10, 12)), 3, center=(4.0, 5.5), radius=3.0)
    assert a.plan is b.plan


def test_repr_and_route():
    plan = ZernikeTransform((10, 12), 4, center=(4.2, 5.5), radius=3.0)
    assert "center=(4.2, 5.5)" in repr(plan) and "radius=3.0" in repr(plan)
    assert plan.size is None and plan.shape == (10, 12)
    assert plan.route.method == plan.method


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("radius,match", [(-1.0, "radius must be > 0"),
                                          (0, "radius must be > 0"),
                                          (float("nan"), "radius must be a number"),
                                          (float("inf"), "radius must be finite")])
def test_bad_radius(radius, match):
    with pytest.raises(ValueError, match=match):
        fm.zernike_moments(np.ones((10, 10)), 3, radius=radius)
    with pytest.raises(ValueError, match=match):
        ZernikeTransform(10, 3, radius=radius)


def test_radius_of_the_wrong_type():
    with pytest.raises(TypeError, match="radius"):
        fm.zernike_moments(np.ones((10, 10)), 3, radius="3")


@pytest.mark.parametrize("center,err,match", [
    ((10.0, 3.0), ValueError, r"center=\(10.0, 3.0\) lies outside the 10 x 12 image"),
    ((-0.6, 3.0), ValueError, "lies outside"),
    ((3.0, 11.6), ValueError, "lies outside"),
    ((3.0,), ValueError, "center must be a point .* length 2"),
    ((1.0, 2.0, 3.0), ValueError, "length 2"),
    ((float("nan"), 2.0), ValueError, r"center\[0\] must be a number"),
    ((2.0, float("inf")), ValueError, r"center\[1\] must be finite"),
    ("middle", ValueError, "center must be one of"),
    (3.0, TypeError, "center must be a point"),
    (("a", 2.0), TypeError, r"center\[0\] must be a real number"),
])
def test_bad_center(center, err, match):
    with pytest.raises(err, match=match):
        fm.zernike_moments(np.ones((10, 12)), 3, center=center, radius=2.0)
    with pytest.raises(err, match=match):
        fm.pcet(np.ones((10, 12)), 2, 2, center=center, radius=2.0)


def test_centroid_of_a_blank_image():
    imgs = np.ones((3, 10, 12))
    imgs[1] = 0
    with pytest.raises(ValueError, match=r"center='centroid' .* \(image \(1,\) of the batch"):
        fm.zernike_moments(imgs, 3, center="centroid", radius=2.0)


def test_plan_takes_no_centroid():
    with pytest.raises(ValueError, match="a plan is built for one centre"):
        ZernikeTransform((10, 12), 3, center="centroid")
    assert check_center("centroid") == "centroid"


def test_disk_with_no_pixel():
    with pytest.raises(ValueError, match=r"radius=0.5 .* leaves no pixel .* rule='inscribed'"):
        fm.zernike_moments(np.ones((10, 12)), 3, center=(4.0, 5.0), radius=0.5)
    A = fm.zernike_moments(np.ones((10, 12)), 3, center=(4.0, 5.0), radius=0.5,
                           rule="centre")
    assert A.plan.mask.sum() == 1


def test_non_square_needs_a_disk():
    with pytest.raises(ValueError, match=r"must be square .* center= and radius="):
        fm.zernike_moments(np.ones((10, 12)), 3)
    with pytest.raises(ValueError, match="colour image"):
        fm.zernike_moments(np.ones((10, 12, 3)), 3, radius=2.0)


def test_plan_checks_the_image_shape():
    plan = ZernikeTransform((10, 12), 3, center=(4.0, 5.0), radius=3.0)
    with pytest.raises(ValueError, match=r"image must be 10x12 for this plan"):
        plan.forward(np.ones((12, 10)))


def test_geometric_method_refused_on_a_placed_disk():
    with pytest.raises(ValueError, match="method='geometric'"):
        ZernikeTransform((10, 12), 3, center=(4.0, 5.0), radius=3.0, method="geometric")


def test_user_input_unchanged(rng):
    img = rng.random((10, 12))
    keep = img.copy()
    centre = [4.0, 5.0]
    fm.zernike_moments(img, 3, center=centre, radius=3.0)
    fm.zernike_moments(img, 3, center="centroid", radius=3.0)
    np.testing.assert_array_equal(img, keep)
    assert centre == [4.0, 5.0]


@pytest.mark.parametrize("center,radius", [((20.0, 25.0), 15.0), ((20.5, 24.5), 14.0),
                                           ((19.3, 26.6), 16.2), ((4.0, 45.0), 12.0)])
def test_every_device_agrees(device, center, radius, rng):
    """The placed disk on each device (CUDA: the fused Triton stages, the dense GEMM over all
    pixels) against the CPU in float64, forward and reconstruction."""
    imgs = rng.random((2, 41, 51))
    x = torch.as_tensor(imgs, device=device)
    for f, T in ((fm.zernike_moments, 12), (fm.pseudo_zernike_moments, 30)):
        a = f(imgs, T, center=center, radius=radius, dtype="float64")
        b = f(x, T, center=center, radius=radius, dtype="float64")
        scale = np.abs(np.asarray(a)).max()
        np.testing.assert_allclose(b.values().cpu().numpy(), np.asarray(a), rtol=0,
                                   atol=1e-12 * scale)
        np.testing.assert_allclose(b.reconstruct().cpu().numpy(), a.reconstruct(), rtol=0,
                                   atol=1e-10)
    for method in ("engine", "gemm"):
        a = fm.pcet(imgs, 4, 4, center=center, radius=radius, method=method, dtype="float64")
        b = fm.pcet(x, 4, 4, center=center, radius=radius, method=method, dtype="float64")
        np.testing.assert_allclose(b.values().cpu().numpy(), np.asarray(a), rtol=0,
                                   atol=1e-12 * np.abs(np.asarray(a)).max())
    a = fm.zernike_moments(imgs, 10, center="centroid", radius=10.0, dtype="float64")
    b = fm.zernike_moments(x, 10, center="centroid", radius=10.0, dtype="float64")
    np.testing.assert_allclose(b.center, a.center, rtol=1e-14, atol=0)
    np.testing.assert_allclose(b.values().cpu().numpy(), np.asarray(a), rtol=0,
                               atol=1e-12 * np.abs(np.asarray(a)).max())
