"""The symmetries of the cube on a cubic grid: exact (to rounding) for the 3-D Zernike moments.

A cube of voxels about the default centre is mapped onto itself by the 48 elements of the
octahedral group (the 6 permutations of the axes times the 8 sign changes; the 24 of
determinant +1 are the rotations). Each maps the sample points onto sample points with the same
weights, so the quadrature sum sees the same values at permuted points and

* the invariants :math:`\\|\\Omega_{nl}\\|` are unchanged under all 48, to rounding (a rotation
  mixes the moments of one :math:`(n, l)` by a unitary Wigner matrix; a reflection is a rotation
  times the inversion :math:`x \\to -x`, which multiplies them by :math:`(-1)^l`);
* the moments follow the closed forms of the generators: a quarter turn about :math:`z`
  multiplies :math:`\\Omega_{nl}^m` by :math:`i^m`, the mirror :math:`z \\to -z` by
  :math:`(-1)^{l+m}`, the mirror :math:`x \\to -x` conjugates it and multiplies by
  :math:`(-1)^m` (for a real volume).

The test in ``test_moments.py`` covers the 24 rotations for one grid (12^3, k = 1, midpoint,
order 8); here: the reflections, odd and even sides, sub-voxel points (midpoint and Gauss),
float32, and the moments themselves.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fastmoments.ball import Zernike3DTransform

RNG = np.random.default_rng(11)


def octahedral_group(a: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """The 48 maps of the cube applied to the volume ``a`` (its last three axes), each with its
    determinant: an axis permutation followed by flips of some axes."""
    out = []
    for perm in itertools.permutations(range(3)):
        sign = np.linalg.det(np.eye(3)[list(perm)])
        for flips in itertools.product((False, True), repeat=3):
            b = np.transpose(a, (*range(a.ndim - 3), *(a.ndim - 3 + p for p in perm)))
            axes = tuple(a.ndim - 3 + i for i, f in enumerate(flips) if f)
            if axes:
                b = np.flip(b, axes)
            out.append((np.ascontiguousarray(b), round(sign) * (-1) ** sum(flips)))
    return out


def test_the_group_has_48_distinct_maps_24_of_them_rotations():
    a = RNG.random((5, 5, 5))
    maps = octahedral_group(a)
    assert len({b.tobytes() for b, _ in maps}) == 48
    assert sum(det == 1 for _, det in maps) == 24
    rot = {np.rot90(np.rot90(a, i, (0, 1)), j, (1, 2)).tobytes()
           for i in range(4) for j in range(4)}
    rotations = {b.tobytes() for b, det in maps if det == 1}
    assert rot <= rotations  # the rot90 compositions are proper rotations


@pytest.mark.parametrize("n, order, k, quadrature", [
    (12, 8, 1, "midpoint"),
    (11, 8, 1, "midpoint"),  # odd side: the centre on a voxel centre
    (8, 6, 2, "midpoint"),
    (7, 6, 2, "gauss"),
])
def test_invariants_unchanged_by_all_48_maps_of_the_cube(n, order, k, quadrature):
    vol = RNG.random((n, n, n))
    plan = Zernike3DTransform((n, n, n), order, k=k, quadrature=quadrature, dtype="float64")
    maps = octahedral_group(vol)
    batch = np.stack([b for b, _ in maps])  # one call for the 48 volumes
    inv = plan.forward(batch).invariants()
    ref = plan.forward(vol).invariants()
    # sums of the same terms in another order: a few ulps of the largest invariant
    assert np.max(np.abs(inv - ref)) <= 1e-14 * ref.max()
    # not a constant: a different volume has other invariants
    other = plan.forward(RNG.random((n, n, n))).invariants()
    assert np.max(np.abs(other - ref)) > 1e-3 * ref.max()


def test_float32_invariants_unchanged_to_float32_rounding():
    vol = RNG.random((10, 10, 10)).astype(np.float32)
    plan = Zernike3DTransform((10, 10, 10), 8)
    inv = plan.forward(np.stack([b for b, _ in octahedral_group(vol)])).invariants()
    ref = plan.forward(vol).invariants()
    assert np.max(np.abs(inv - ref)) <= 2e-6 * ref.max()


@pytest.mark.parametrize("n", [9, 10])
def test_moments_follow_the_generators_exactly(n):
    """The closed forms of a quarter turn about z and the two mirrors, moment by moment."""
    vol = RNG.random((n, n, n))  # axes (z, y, x) = (D, H, W)
    plan = Zernike3DTransform((n, n, n), 7, k=2, dtype="float64")
    Om = plan.forward(vol)
    _, l, m = plan.index.nlm.T
    v = Om.values()
    scale = np.abs(v).max()
    # b(x, y) = a(-y, x): np.rot90 over (H, W), a counter-clockwise quarter turn about z
    turned = plan.forward(np.rot90(vol, 1, axes=(1, 2)).copy()).values()
    np.testing.assert_allclose(turned, (1j) ** m * v, rtol=0, atol=1e-14 * scale)
    mirror_z = plan.forward(vol[::-1].copy()).values()
    np.testing.assert_allclose(mirror_z, (-1.0) ** (l + m) * v, rtol=0, atol=1e-14 * scale)
    mirror_x = plan.forward(vol[:, :, ::-1].copy()).values()
    np.testing.assert_allclose(mirror_x, (-1.0) ** m * np.conj(v), rtol=0, atol=1e-14 * scale)
    # the inversion x -> -x (all three mirrors): (-1)^l
    inverted = plan.forward(vol[::-1, ::-1, ::-1].copy()).values()
    np.testing.assert_allclose(inverted, (-1.0) ** l * v, rtol=0, atol=1e-14 * scale)
