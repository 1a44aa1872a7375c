"""Clipping 3-D reconstructions by planes (Jacobi thesis Sec. 6.2, Figs. 17 and 19).

The reference is independent of the package: the truncated series summed term by term in
float64 with scipy's Jacobi polynomials at the voxel centres, and the kept voxels decided in
exact rational arithmetic from the plane's equation as written (integer normal, offset exactly
representable), so that voxels lying exactly on a plane are tested too.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import eval_jacobi

from fastmoments.box import JacobiTransform, Plane, clip_mask, clip_region, jacobi_moments
from fastmoments.box.clip import as_planes, clip_boxes

SHAPE = (6, 7, 8)           # (D, H, W) = (z, y, x); 7 is odd: a centre lies on y = 0
ORDER = 5
AB = (0.3, 0.7)


def centres(n):
    """Voxel centres -1 + (2i + 1)/n as exact fractions."""
    return [Fraction(2 * i + 1 - n, n) for i in range(n)]


def exact_mask(shape, planes):
    """Kept voxels from ``a x + b y + c z <= d`` (or ``>=``) in exact arithmetic.

    ``planes``: tuples ``(a, b, c, d, keep)`` with integer a, b, c and d a float that is exact
    in binary (so ``Fraction(d)`` is the offset the package receives)."""
    z, y, x = (centres(n) for n in shape)
    out = np.ones(shape, dtype=bool)
    for a, b, c, d, keep in planes:
        d = Fraction(d)
        for (i, zi), (j, yj), (k, xk) in itertools.product(enumerate(z), enumerate(y),
                                                           enumerate(x)):
            s = a * xk + b * yj + c * zi
            out[i, j, k] &= (s <= d) if keep == "below" else (s >= d)
    return out


def as_plane(t):
    a, b, c, d, keep = t
    return Plane((a, b, c), d, keep=keep)


def direct_reconstruction(J, shape, order, alpha, beta):
    """The series sum_{p+q+r <= order} J_pqr P_p(z) P_q(y) P_r(x), term by term, float64,
    and the sum of the terms' magnitudes (for the rounding bound)."""
    coef = np.asarray(J, dtype=np.float64)
    polys = [np.array([[eval_jacobi(p, alpha, beta, float(c)) for c in centres(n)]
                       for p in range(order + 1)]) for n in shape]
    out = np.zeros(shape)
    mag = np.zeros(shape)
    for p, q, r in itertools.product(range(order + 1), repeat=3):
        if p + q + r > order:
            continue
        term = coef[p, q, r] * np.einsum("i,j,k->ijk", polys[0][p], polys[1][q], polys[2][r])
        out += term
        mag += np.abs(term)
    return out, mag


@pytest.fixture(scope="module")
def volume64():
    vol = np.random.default_rng(7).random(SHAPE)
    plan = JacobiTransform(SHAPE, ORDER, alpha=AB[0], beta=AB[1], k=2, dtype=torch.float64)
    J = plan.forward(vol)
    ref, mag = direct_reconstruction(J.numpy(), SHAPE, ORDER, *AB)
    return plan, J, ref, mag


PLANE_SETS = [
    [(1, 0, 0, -0.5, "below")],                       # x <= -0.5: a quarter along W
    [(1, 1, 1, 0.0, "below")],                        # oblique, through the centre
    [(-1, 1, 1, 0.25, "above")],                      # the thesis's -x + y + z family
    [(0, 1, 0, 0.0, "below")],                        # y = 0 holds voxel centres (H = 7)
    [(1, -2, 0, 0.0, "above")],                       # voxels exactly on the plane (x = 2y)
    [(1, 0, 1, 0.5, "below"), (0, 1, 0, -0.25, "above"), (2, -1, 3, 1.0, "below")],
]


@pytest.mark.parametrize("planes", PLANE_SETS, ids=range(len(PLANE_SETS)))
def test_matches_direct_float64_sum(volume64, planes):
    _plan, J, ref, mag = volume64
    got = J.reconstruct(clip=[as_plane(p) for p in planes])
    keep = exact_mask(SHAPE, planes)
    assert keep.any() and not keep.all()
    np.testing.assert_array_equal(np.isnan(got), ~keep)
    # at most 56 terms and three factors each: twice gamma_64 of the magnitudes' sum
    bound = 2 * 64 * 2.0**-53 * mag
    assert np.all(np.abs(got - ref)[keep] <= bound[keep])
    # the mask alone is the exact one, as are the planes given as 4 numbers (keep 'below')
    np.testing.assert_array_equal(clip_mask(SHAPE, [as_plane(p) for p in planes]).numpy(), keep)


def test_on_plane_voxels_are_kept_on_both_sides():
    shape = (5, 7, 9)                                  # odd: centres at 0 on every axis
    for normal in [(1, 1, 1), (1, -1, 0), (-1, 1, 1), (3, 0, -1)]:
        below = exact_mask(shape, [(*normal, 0.0, "below")])
        above = exact_mask(shape, [(*normal, 0.0, "above")])
        on = below & above
        assert on.any()                                # the test covers ties
        got_b = clip_mask(shape, Plane(normal, 0.0)).numpy()
        got_a = clip_mask(shape, Plane(normal, 0.0, keep="above")).numpy()
        np.testing.assert_array_equal(got_b, below)
        np.testing.assert_array_equal(got_a, above)
        assert (got_a | got_b).all()


def test_axis_aligned_planes_equal_the_region_path(volume64):
    _plan, J, _ref, _mag = volume64
    full = J.reconstruct()
    scale = np.abs(full).max()
    # W = 8 centres -7/8 .. 7/8: x <= -0.5 keeps 0, 1, 2 ... -0.5 is between -5/8 and -3/8
    cases = [
        ((1, 0, 0, -0.5, "below"), (slice(None), slice(None), slice(0, 2))),
        ((0, 0, 1, 0.25, "above"), (slice(4, 6), slice(None), slice(None))),   # D = 6
        ((0, -1, 0, 0.1, "below"), (slice(None), slice(3, 7), slice(None))),   # y >= -0.1
    ]
    for plane, region in cases:
        got = J.reconstruct(clip=as_plane(plane))
        part = J.reconstruct(region=region)
        assert clip_region(SHAPE, as_plane(plane)) == tuple(
            slice(*r.indices(n)[:2]) for r, n in zip(region, SHAPE, strict=True))
        # the same sums evaluated on a box of another size: float64 rounding only
        np.testing.assert_allclose(got[region], part, rtol=0, atol=1e-13 * scale)
        outside = np.ones(SHAPE, dtype=bool)
        outside[region] = False
        assert np.isnan(got[outside]).all() and not np.isnan(got[region]).any()


def _spy(plan, monkeypatch):
    """The regions of the boxes reconstructed for ``plan`` while the test runs."""
    from fastmoments.box import clipped

    calls = []
    real = clipped._synth_box

    def spy(p, c, order, region, perm):
        if p is plan:
            calls.append(region)
        return real(p, c, order, region, perm)

    monkeypatch.setattr(clipped, "_synth_box", spy)
    return calls


def test_bounding_box_shrinks(monkeypatch):
    n = 16
    plan = JacobiTransform((n, n, n), 6, alpha=0.3, beta=0.3, dtype=torch.float64)
    J = plan.forward(np.random.default_rng(1).random((n, n, n)))
    calls = _spy(plan, monkeypatch)
    # x <= -0.5 keeps the first quarter of W (centres -1 + (2i+1)/16 <= -0.5: i <= 3)
    J.reconstruct(clip=Plane((1, 0, 0), -0.5))
    assert clip_region((n, n, n), Plane((1, 0, 0), -0.5)) == (slice(0, n), slice(0, n),
                                                             slice(0, 4))
    assert calls and all(r[1] == slice(None) and r[2] == slice(0, 4, 1) for r in calls)
    depth = sorted(i for r in calls for i in range(n)[r[0]])
    assert depth == list(range(n))                    # slabs along D, each voxel once
    # a corner cut: the regions passed hold every kept voxel, inside the kept voxels' hull
    calls.clear()
    corner = Plane((1, 1, 1), -1.5)
    got = J.reconstruct(clip=corner)
    kept = clip_mask((n, n, n), corner).numpy()
    np.testing.assert_array_equal(np.isfinite(got), kept)
    covered = np.zeros((n, n, n), dtype=int)
    for r in calls:
        covered[r] += 1
    hull = clip_region((n, n, n), corner)
    assert hull == (slice(0, 11), slice(0, 11), slice(0, 11))    # kept: i + j + k <= 10
    assert covered.max() == 1 and (covered[kept] == 1).all() and covered[hull].sum() == \
        covered.sum()
    # without a cost per call, slabs cut the computed voxels to about twice the kept ones
    _axis, boxes, _rows, _hull = clip_boxes((n, n, n), corner, call_cost=0)
    computed = sum(np.prod([b - a for a, b in box]) for box in boxes)
    assert kept.sum() <= computed < 3 * kept.sum() < 11**3
    # nothing kept: no reconstruction at all, every voxel is the fill value
    calls.clear()
    empty = J.reconstruct(clip=(1, 1, 1, -3.0), fill=0.0)
    assert calls == [] and (empty == 0).all() and empty.shape == (n, n, n)
    assert clip_region((n, n, n), (1, 1, 1, -3.0)) is None


def test_oblique_planes_through_the_centre():
    n = 8
    cube = JacobiTransform((n, n, n), 4, alpha=0.3, beta=0.3, dtype=torch.float64)
    Jc = cube.forward(np.random.default_rng(3).random((n, n, n)))
    full = Jc.reconstruct()
    for normal in [(1, 1, 1), (-1, 1, 1), (1, 0, 2), (0.3, -0.8, 0.6)]:
        below = Jc.reconstruct(clip=Plane(normal, 0.0))
        above = Jc.reconstruct(clip=Plane(normal, 0.0, keep="above"))
        kb, ka = np.isfinite(below), np.isfinite(above)
        # even n: n x . normal is an odd multiple of 1/n (or 0.1/n), never 0: no centre lies
        # on these planes through the centre, so the two halves are mirror images (the point
        # reflection x -> -x) and split the cube
        assert (kb ^ ka).all()
        np.testing.assert_array_equal(kb, ka[::-1, ::-1, ::-1])
        assert kb.sum() == n**3 // 2
        np.testing.assert_allclose(below[kb], full[kb], rtol=0,
                                   atol=1e-13 * np.abs(full).max())


def test_fill_values_and_kinds(volume64):
    plan, J, _ref, _mag = volume64
    planes = [(1, 1, 0, 0.2), (0, 0, 1, 0.5)]
    nan = J.reconstruct(clip=planes)
    kept = np.isfinite(nan)
    for fill in (0.0, 0, -7.5, np.float32(3.0), float("inf")):
        got = J.reconstruct(clip=planes, fill=fill)
        # fill changes only the clipped voxels: same computation, so the kept ones are
        # bit-identical (that is the property tested)
        np.testing.assert_array_equal(got[kept], nan[kept])
        assert (got[~kept] == float(fill)).all()
    # torch in, torch out; a batch equals a loop over it
    vols = torch.from_numpy(np.random.default_rng(4).random((2, *SHAPE)))
    Jt = plan.forward(vols)
    out = Jt.reconstruct(clip=planes)
    assert isinstance(out, torch.Tensor) and out.shape == (2, *SHAPE)
    for b in range(2):
        one = plan.forward(vols[b]).reconstruct(clip=planes)
        assert torch.equal(torch.isnan(out[b]), torch.isnan(one))
        torch.testing.assert_close(out[b][~torch.isnan(one)], one[~torch.isnan(one)],
                                   rtol=0, atol=1e-13)


def test_region_and_slice_with_clip(volume64):
    _plan, J, _ref, _mag = volume64
    planes = [Plane((1, 1, 1), 0.1), Plane((0, 1, 0), -0.6, keep="above")]
    full = J.reconstruct(clip=planes)
    same = dict(rtol=0, atol=1e-13 * np.nanmax(np.abs(full)), equal_nan=True)
    np.testing.assert_allclose(J.slice("xy", 2, clip=planes), full[2], **same)
    np.testing.assert_allclose(J.slice("xz", -1, clip=planes), full[:, -1], **same)
    np.testing.assert_allclose(J.slice("yz", 5, clip=planes, fill=0.0),
                               np.nan_to_num(full[:, :, 5]), **same)
    region = (slice(None, None, -1), (1, 6), slice(1, 8, 3))
    np.testing.assert_allclose(J.reconstruct(region=region, clip=planes),
                               full[::-1, 1:6, 1:8:3], **same)
    # a region that the planes clip away entirely: all fill, shape kept
    assert np.isnan(J.reconstruct(region=(0, 0, slice(6, 8)), clip=(1, 0, 0, -0.9))).all()


def test_float32_within_bound_of_float64(volume64):
    _plan, J, _ref, _mag = volume64
    vol = np.random.default_rng(7).random(SHAPE)   # as in the fixture
    planes = [(1, 1, 1, 0.0), (0, 1, 0, 0.5)]
    r64 = J.reconstruct(clip=planes)
    p32 = JacobiTransform(SHAPE, ORDER, alpha=AB[0], beta=AB[1], k=2, dtype=torch.float32)
    r32 = p32.forward(vol.astype(np.float32)).reconstruct(clip=planes)
    assert r32.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(r32), np.isnan(r64))
    kept = np.isfinite(r64)
    # the documented reconstruction bound of box/plan.py: 1e-4 of max|f64|
    assert np.abs(r32[kept] - r64[kept]).max() <= 1e-4 * np.abs(r64[kept]).max()


def test_inputs_unchanged(volume64):
    _plan, J, _ref, _mag = volume64
    before = J.data.clone()
    normal = np.array([1.0, -2.0, 0.5])
    planes = [Plane(normal, 0.1), [0.0, 1.0, 0.0, 0.2]]
    copy = [planes[0], list(planes[1])]
    J.reconstruct(clip=planes, fill=0.0)
    assert torch.equal(J.data, before)                # exact: nothing may write to them
    assert planes == copy and normal.tolist() == [1.0, -2.0, 0.5]


def test_plane_normalisation():
    p = Plane((0, 0, 262144), 262144 * 0.25)            # the thesis writes unnormalised normals
    assert p.normal == (0.0, 0.0, 1.0) and p.offset == pytest.approx(0.25, abs=1e-15)
    tiny = Plane((1e-300, 1e-300, 0), 1e-300)
    assert tiny.normal[0] == pytest.approx(2**-0.5) and tiny.offset == pytest.approx(2**-0.5)
    huge = Plane((1e308, 1e308, 0), 1e308)
    assert huge.normal[0] == pytest.approx(2**-0.5) and huge.offset == pytest.approx(2**-0.5)
    assert Plane((-1, 1, 1), 0.5).equation() == "-0.58x + 0.58y + 0.58z <= 0.29"
    assert as_planes(np.array([0.0, 2.0, 0.0, 1.0]))[0].offset == 0.5
    assert as_planes([]) == ()


@pytest.mark.parametrize(("clip", "err", "match"), [
    (object(), TypeError, "clip must be"),
    (["1", "0", "0", "0"], TypeError, r"clip\[0\] must be a real number"),
    ("1,0,0,0", TypeError, "clip must be"),
    ((1, 0, 0), ValueError, r"clip must be 4 numbers"),
    ((1, 0, 0, 0, 1), ValueError, r"clip must be 4 numbers"),
    ((0, 0, 0, 0.5), ValueError, "normal must be a non-zero vector"),
    ((0.0, -0.0, 0.0, 0.0), ValueError, "normal must be a non-zero vector"),
    ((np.nan, 1, 0, 0), ValueError, r"normal\[0\] must be finite"),
    ((1, np.inf, 0, 0), ValueError, r"normal\[1\] must be finite"),
    ((1, 0, 0, np.nan), ValueError, "offset must be finite"),
    ((1, 0, True, 0), TypeError, r"clip\[2\] must be a real number"),
    ((1, 0, "0", 0), TypeError, r"clip\[2\] must be a real number"),
    ([(1, 0, 0, 0), (1, 0)], ValueError, r"clip\[1\] must be 4 numbers"),
    ([(1, 0, 0, 0), (0, 0, 0, 0)], ValueError, r"clip\[1\]: normal must be a non-zero"),
    ([(1, 0, 0, 0), 3], TypeError, r"clip\[1\] must be a Plane"),
    ([(1, 0, 0, 0), None], TypeError, r"clip\[1\] must be a Plane"),
])
def test_bad_clip_names_the_parameter(volume64, clip, err, match):
    _plan, J, _ref, _mag = volume64
    with pytest.raises(err, match=match):
        J.reconstruct(clip=clip)


def test_bad_plane_and_fill():
    with pytest.raises(ValueError, match="normal must have 3 entries"):
        Plane((1, 0), 0.0)
    with pytest.raises(ValueError, match="normal must have 3 entries"):
        Plane([1, 0, 0, 0], 0.0)
    with pytest.raises(ValueError, match="normal must be 3 numbers"):
        Plane(np.eye(3), 0.0)
    with pytest.raises(TypeError, match="normal must be a sequence"):
        Plane(1.0, 0.0)
    with pytest.raises(TypeError, match="normal must be a sequence"):
        Plane("xyz", 0.0)
    with pytest.raises(TypeError, match="offset must be a real number"):
        Plane((1, 0, 0), "0")
    with pytest.raises(TypeError, match="offset must be a real number"):
        Plane((1, 0, 0), False)
    with pytest.raises(ValueError, match="offset must be finite"):
        Plane((1, 0, 0), float("-inf"))
    with pytest.raises(ValueError, match="keep must be one of 'below', 'above'"):
        Plane((1, 0, 0), 0.0, keep="left")
    J = jacobi_moments(np.ones((4, 5, 6)), 2, alpha=0.3, beta=0.3, ndim=3)
    for fill in ("0", True, None, 1j):
        with pytest.raises(TypeError, match="fill must be a real number"):
            J.reconstruct(clip=(1, 0, 0, 0), fill=fill)
    with pytest.raises(ValueError, match=r"fill=0.0 .* needs clip"):
        J.reconstruct(fill=0.0)
    with pytest.raises(ValueError, match="region must give one entry per spatial axis"):
        J.reconstruct(region=(slice(0, 2),), clip=(1, 0, 0, 0))
    with pytest.raises(ValueError, match="region selects no pixel along axis 2"):
        J.reconstruct(region=(0, 0, slice(3, 3)), clip=(1, 0, 0, 0))
    # images: clipping is for volumes
    J2 = jacobi_moments(np.ones((6, 6)), 2, alpha=0.3, beta=0.3)
    with pytest.raises(ValueError, match="clip needs 3-D moments"):
        J2.reconstruct(clip=(1, 0, 0, 0))
    with pytest.raises(ValueError, match="clip needs 3-D moments"):
        J2.plan.inverse(J2, clip=Plane((1, 0, 0), 0.0))


def test_memory_error_names_the_need():
    n = 32
    plan = JacobiTransform((n, n, n), 2, dtype=torch.float64, memory_budget=3 * 2**20)
    J = plan.forward(np.ones((n, n, n)))
    assert J.reconstruct(clip=(1, 0, 0, 0)).shape == (n, n, n)   # 1.6 MiB fits
    J4 = plan.forward(np.ones((4, n, n, n)))
    with pytest.raises(MemoryError, match=r"clipped reconstruction of .* needs at least"):
        J4.reconstruct(clip=(1, 0, 0, 0))


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.tuples(*(st.integers(1, 6),) * 3),
       planes=st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(-3, 3),
                                 st.sampled_from([-1.0, -0.5, -0.25, 0.0, 0.125, 0.5, 2.0]),
                                 st.sampled_from(["below", "above"]))
                       .filter(lambda p: any(p[:3])), min_size=1, max_size=3))
def test_masks_and_boxes_are_exact(shape, planes):
    keep = exact_mask(shape, planes)
    ps = [as_plane(p) for p in planes]
    np.testing.assert_array_equal(clip_mask(shape, ps).numpy(), keep)
    _axis, boxes, _rows, hull = clip_boxes(shape, ps)
    if not keep.any():
        assert boxes == [] and hull is None and clip_region(shape, ps) is None
        return
    covered = np.zeros(shape, dtype=int)
    for box in boxes:
        covered[tuple(slice(a, b) for a, b in box)] += 1
    assert covered.max() == 1 and (covered[keep] == 1).all()     # disjoint, hold every voxel
    idx = np.nonzero(keep)
    assert hull == tuple((int(i.min()), int(i.max()) + 1) for i in idx)   # tight
