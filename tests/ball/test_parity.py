"""Parity with ZMPY3D (Lai, Burley and Duarte 2024), where it is installed.

ZMPY3D integrates every voxel as a box, exactly, through geometric moments, over the ball
it places at the volume's centroid with 1.8 times the mass-weighted RMS radius. When every
non-zero voxel lies whole inside that ball, our moments on the same ball with a
Gauss-Legendre rule exact for the polynomial degree (``k > order / 2``) integrate the same
thing, so the descriptors agree to the accuracy of both programs. ZMPY3D is GPL: it is used
here only as an independent reference, never by the library.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from fastmoments.ball import zernike3d_moments

z = pytest.importorskip("ZMPY3D")


def zmpy3d_descriptor(vol: np.ndarray, order: int):
    """ZMPY3D's 3DZD descriptor ``[n, l]``, with the centre and radius it chose."""
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
