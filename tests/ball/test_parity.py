"""Parity with the peers, where they are installed: ZMPY3D (Lai, Burley and Duarte 2024) and
Novotni and Klein's own C++ code (the ``zernike-descriptors`` package, module ``pyzernike``).
Both are GPL: they are used here only as independent references, never by the library.

ZMPY3D integrates every voxel as a box, exactly, through geometric moments, over the ball
it places at the volume's centroid with 1.8 times the mass-weighted RMS radius. When every
non-zero voxel lies whole inside that ball, our moments on the same ball with a
Gauss-Legendre rule exact for the polynomial degree (``k > order / 2``) integrate the same
thing, so the descriptors agree to the accuracy of both programs.

Novotni and Klein's code does the same with a ball of its own: the centroid of the voxel boxes
(voxel ``i`` spanning ``[i, i + 1]``) and twice the root-mean-square distance of the non-zero
voxels from it, measured from their lower corners ``i``; it sets the voxels whose corner lies
outside that ball to zero (in the array it is given) and integrates every voxel box exactly.
Its radius (``ComputeScale_RadiusVar`` in version 0.1.0 of ``zernike-descriptors``) pairs the
voxel indices along the array's axes 0, 1, 2 with the centroid's components along axes 2, 0,
1, so the radius, and with it the descriptor, changes when the object moves by a voxel (by a quarter
at order 6 for a random blob moved by one voxel); the test reproduces that radius to compare
the same integral.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from fastmoments.ball import zernike3d_moments


def zmpy3d_descriptor(vol: np.ndarray, order: int):
    """ZMPY3D's 3DZD descriptor ``[n, l]``, with the centre and radius it chose."""
    z = pytest.importorskip("ZMPY3D")
    cache = os.path.join(os.path.dirname(z.__file__), "cache_data",
                         f"LogG_CLMCache_MaxOrder{order:02d}.pkl")
    with open(cache, "rb") as fh:
        c = pickle.load(fh)
    edges = {key: np.arange(n + 1) for key, n in zip(("X_sample", "Y_sample", "Z_sample"),
                                                     vol.shape, strict=True)}
    mass, center, _ = z.calculate_bbox_moment(vol, 1, edges)
    radius, _ = z.calculate_molecular_radius(vol, center, mass, 1.8)
    ball = z.get_bbox_moment_xyz_sample(center, radius, vol.shape)
    _, _, geo = z.calculate_bbox_moment(vol, order, ball)
    scaled, _ = z.calculate_bbox_moment_2_zm(order, c["GCache_complex"], c["GCache_pqr_linear"],
                                             c["GCache_complex_index"], c["CLMCache3D"], geo)
    return z.get_3dzd_121_descriptor(scaled.copy()), np.asarray(center), float(radius)


def random_ball_volume(n: int, seed: int) -> np.ndarray:
    """Random values on the voxels that lie whole in a centred ball of radius 0.45 n."""
    g = np.abs(np.arange(n) - (n - 1) / 2) + 0.5
    inside = g[:, None, None] ** 2 + g[None, :, None] ** 2 + g[None, None, :] ** 2 \
        <= (0.45 * n) ** 2
    vol = np.zeros((n, n, n))
    vol[inside] = np.random.default_rng(seed).random(inside.sum())
    return vol


@pytest.mark.parametrize("order, n, k, tol", [
    (6, 12, 4, 1e-13),
    pytest.param(20, 6, 11, 1e-9, marks=pytest.mark.slow),
])
def test_descriptor_equals_zmpy3d(order, n, k, tol):
    pytest.importorskip("ZMPY3D")
    vol = random_ball_volume(n, order)
    theirs, center, radius = zmpy3d_descriptor(vol, order)
    # ZMPY3D's voxel i spans [i, i + 1]: its centre is our index coordinate i
    Om = zernike3d_moments(vol, order, k=k, quadrature="gauss", center=tuple(center - 0.5),
                           radius=radius, dtype="float64")
    assert Om.plan.mask[vol != 0].all()
    # every non-zero voxel whole in the ball: the same integral for both
    corners = np.abs(np.argwhere(vol != 0) - (center - 0.5)) + 0.5
    assert np.sqrt((corners**2).sum(axis=1)).max() <= radius
    ours = Om.invariants()
    ref = np.array([theirs[a, b] for a, b in Om.pairs])
    assert np.max(np.abs(ours - ref)) <= tol * ref.max()


#: Their extension is built with -ffast-math: loading it turns on flush-to-zero for the whole
#: process (subnormal floats read as 0), which would change every later test's numbers. So it
#: runs in a process of its own.
_NK_SCRIPT = """
import sys
import numpy as np
from pyzernike._core import ZernikeDescriptorDouble
vol = np.load(sys.argv[1])  # their code zeroes the voxels outside its ball in place
np.save(sys.argv[2], np.asarray(ZernikeDescriptorDouble(vol, int(sys.argv[3])).get_descriptors()))
"""


def _novotni_klein_in_a_process(vol: np.ndarray, order: int) -> np.ndarray:
    if importlib.util.find_spec("pyzernike") is None:
        pytest.skip("pyzernike (zernike-descriptors) is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "vol.npy"), os.path.join(tmp, "out.npy")
        np.save(src, vol)
        subprocess.run([sys.executable, "-c", _NK_SCRIPT, src, out, str(order)], check=True,
                       capture_output=True)
        return np.load(out)


def novotni_klein_descriptor(vol: np.ndarray, order: int):
    """Novotni and Klein's invariants (by ``n``, then ``l``), with the ball their code chose,
    in our index coordinates (voxel ``i`` centred at ``i``)."""
    theirs = _novotni_klein_in_a_process(vol, order)
    idx = np.indices(vol.shape).reshape(3, -1).T.astype(np.float64)
    f = vol.reshape(-1)
    centroid = (idx + 0.5).T @ f / f.sum()  # of the boxes [i, i + 1]
    corner = idx[f != 0]  # the lower corners of the non-zero voxels, paired as their code does
    radius = 2.0 * np.sqrt(np.mean(((corner - centroid[[2, 0, 1]]) ** 2).sum(axis=1)))
    return np.asarray(theirs), centroid - 0.5, float(radius)


def off_centre_volume(n: int, seed: int) -> np.ndarray:
    """Random values on a ball of voxels off the box's centre (odd orders not small)."""
    g = np.arange(n) - (n - 1) / 2
    d = np.sqrt((g[:, None, None] - 1) ** 2 + (g[None, :, None] + 0.5) ** 2
                + g[None, None, :] ** 2)
    vol = np.zeros((n, n, n))
    inside = d <= 0.3 * n
    vol[inside] = np.random.default_rng(seed).random(inside.sum())
    return vol


@pytest.mark.parametrize("order, n, k, tol", [
    (6, 9, 4, 1e-13),
    pytest.param(20, 5, 11, 1e-11, marks=pytest.mark.slow),
])
def test_descriptor_equals_novotni_klein(order, n, k, tol):
    vol = off_centre_volume(n, order)
    theirs, center, radius = novotni_klein_descriptor(vol, order)
    Om = zernike3d_moments(vol, order, k=k, quadrature="gauss", center=tuple(center),
                           radius=radius, dtype="float64")
    # every non-zero voxel whole in their ball: nothing cut, the same integral for both
    corners = np.abs(np.argwhere(vol != 0) - center) + 0.5
    assert np.sqrt((corners**2).sum(axis=1)).max() <= radius
    ours = Om.invariants()
    assert theirs.shape == ours.shape  # their order: by n, then l, as Om.pairs
    assert np.max(np.abs(ours - theirs)) <= tol * ours.max()
    odd = np.array([n % 2 == 1 for n, _l in Om.pairs])
    assert ours[odd].max() > 1e-3 * ours.max()  # the odd orders are compared too


@pytest.mark.slow
def test_novotni_klein_breaks_down_at_order_40_where_we_do_not():
    """Their monomial coefficients in float64 overflow by order 40: infinite or zero invariants
    at the high orders (the low ones equal their order-20 run). Ours stay finite, non-zero,
    and the same for n <= 20 as an order-20 plan's."""
    vol = off_centre_volume(8, 1)
    theirs, center, radius = novotni_klein_descriptor(vol, 40)
    opts = dict(center=tuple(center), radius=radius, dtype="float64")
    ours = zernike3d_moments(vol, 40, **opts)
    low = zernike3d_moments(vol, 20, **opts).invariants()
    F = ours.invariants()
    high = np.array([n > 30 for n, _l in ours.pairs])
    assert not np.isfinite(theirs[high]).all() or (theirs[high] == 0).any()
    assert np.isfinite(F).all() and (F[high] > 0).all()
    np.testing.assert_allclose(F[: low.size], low, rtol=0, atol=1e-13 * low.max())


def test_novotni_klein_radius_moves_with_the_object():
    """What the reproduced radius says: their descriptor of a volume moved by one voxel is
    not the same, ours on the same ball (moved with it) is, to rounding."""
    vol = off_centre_volume(12, 3)
    moved = np.roll(vol, 1, axis=2)
    a, ca, ra = novotni_klein_descriptor(vol, 4)
    b, cb, rb = novotni_klein_descriptor(moved, 4)
    assert abs(ra - rb) > 0.1 and np.max(np.abs(a - b)) > 0.05 * a.max()
    ours = [zernike3d_moments(v, 4, k=3, quadrature="gauss", center=tuple(c), radius=ra,
                              dtype="float64").invariants() for v, c in ((vol, ca), (moved, cb))]
    assert np.max(np.abs(ours[0] - ours[1])) <= 1e-13 * ours[0].max()
