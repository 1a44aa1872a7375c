r"""Where the 3-D Zernike transforms sample a volume: points, weights and radius groups.

A volume of shape ``(D, H, W)`` has voxel ``(d, h, w)`` centred at index coordinates
``(d, h, w)``. The unit ball is placed at a centre :math:`c = (c_d, c_h, c_w)` (index
coordinates) with a radius :math:`\rho` in voxels; a point at index coordinates
:math:`(p_d, p_h, p_w)` has ball coordinates

.. math:: x = (p_w - c_w)/\rho, \qquad y = (p_h - c_h)/\rho, \qquad z = (p_d - c_d)/\rho,

so ``x`` runs along the last axis ``W``, ``y`` along ``H`` and ``z`` along ``D`` (a
right-handed frame). By default the ball is the one inscribed in the volume: the centre of the
box, :math:`c = ((D-1)/2, (H-1)/2, (W-1)/2)`, and :math:`\rho = \min(D, H, W)/2`.

Each voxel carries :math:`k^3` sample points: midpoints of :math:`k \times k \times k`
sub-cubes (offsets :math:`(2s - k - 1)/(2k)` voxels, weight :math:`(k\rho)^{-3}`) or the
tensor Gauss-Legendre rule (``quadrature="gauss"``: offsets at the nodes / 2, weight
:math:`\prod w_s / (2\rho)^3`). Each point carries its voxel's value, and a point is used
when it lies in the closed unit ball, :math:`x^2 + y^2 + z^2 \le 1`; voxels with no point in
the ball are ignored. The weights are the volume elements in ball coordinates, so that
:math:`\sum_p w_p\, g(x_p) \approx \int_{\|x\| \le 1} g\, dx`.

Points of equal radius form a *group*, so that the radial polynomials are evaluated once per
distinct radius, and the points of a group with equal :math:`|z|` form a *ring*, so that the
Legendre factor of the spherical harmonics is evaluated once per ring (the mirror
:math:`z \to -z` only changes its sign by :math:`(-1)^{l+m}`). When the centre lies on the
lattice of sub-voxel midpoints (``2 k c`` integer on every axis, as for the default centre)
every point has integer coordinates in units of :math:`1/(2k)` voxel, and the group key is
the exact integer
:math:`U_d^2 + U_h^2 + U_w^2`. Otherwise the key is the float64 :math:`r^2` computed from the
squared coordinates summed in ascending order (so that points that differ by a permutation or
sign change of their coordinates share a group).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._cache import plan_cache

__all__ = ["QUADRATURES", "BallSampling", "ball_sampling", "inscribed_placement"]

QUADRATURES = ("midpoint", "gauss")


@dataclass(frozen=True, eq=False)
class BallSampling:
    r"""Sample points of a ``(D, H, W)`` volume inside a ball, sorted by radius group.

    Attributes
    ----------
    shape, k, quadrature, center, radius :
        The geometry (``center`` in index coordinates, ``radius`` in voxels).
    voxel : ndarray of int64, shape (P,)
        Linear index ``(d * H + h) * W + w`` of each point's voxel.
    xyz : ndarray of float64, shape (P, 3)
        Ball coordinates ``(x, y, z)`` of each point.
    weight : ndarray of float64, shape (P,)
        Quadrature weight (volume element in ball coordinates).
    group : ndarray of int64, shape (P,)
        Radius group of each point (non-decreasing).
    radii : ndarray of float64, shape (G,)
        Radius of each group.
    ring : ndarray of int64, shape (P,)
        Ring of each point (non-decreasing): the points of one group with the same
        :math:`|z|`, which share :math:`|\cos\theta|` and so the Legendre factor of
        :math:`Y_l^m` up to the sign :math:`(-1)^{l+m}` of the mirror :math:`z \to -z`.
    ring_group : ndarray of int64, shape (R,)
        Group of each ring.
    ring_point : ndarray of int64, shape (R,)
        The first point of each ring (its direction gives the ring's angle).
    zsign : ndarray of float64, shape (P,)
        :math:`+1` for :math:`z \ge 0`, :math:`-1` below.
    exact : bool
        Whether the groups come from exact integer keys (centre on the sub-voxel lattice).
    """

    shape: tuple[int, int, int]
    k: int
    quadrature: str
    center: tuple[float, float, float]
    radius: float
    voxel: np.ndarray
    xyz: np.ndarray
    weight: np.ndarray
    group: np.ndarray
    radii: np.ndarray
    ring: np.ndarray
    ring_group: np.ndarray
    ring_point: np.ndarray
    zsign: np.ndarray
    exact: bool

    @property
    def n_points(self) -> int:
        return int(self.voxel.shape[0])

    @property
    def n_groups(self) -> int:
        return int(self.radii.shape[0])

    @property
    def n_rings(self) -> int:
        return int(self.ring_group.shape[0])

    def voxel_mask(self) -> np.ndarray:
        """Boolean ``(D, H, W)`` mask of the voxels with at least one point in the ball."""
        mask = np.zeros(int(np.prod(self.shape)), dtype=bool)
        mask[self.voxel] = True
        return mask.reshape(self.shape)


def inscribed_placement(shape: tuple[int, int, int]) -> tuple[tuple[float, float, float], float]:
    """The default centre and radius: the ball inscribed in the box.

    >>> inscribed_placement((4, 6, 6))
    ((1.5, 2.5, 2.5), 2.0)
    """
    center = tuple((s - 1) / 2.0 for s in shape)
    return center, min(shape) / 2.0  # type: ignore[return-value]


def _axis(n: int, k: int, quadrature: str, c: float, lattice: bool):
    """1-D sample coordinates (index units, relative to ``c``), integer form, weights, voxel."""
    idx = np.repeat(np.arange(n), k)
    if quadrature == "midpoint":
        off_int = np.tile(2 * np.arange(1, k + 1) - k - 1, n)  # units of 1/(2k)
        w = np.full(n * k, 1.0 / k)
        rel = (idx - c) + off_int / (2.0 * k)
        U = 2 * k * idx + off_int - round(2 * k * c) if lattice else None
    else:
        nodes, wts = np.polynomial.legendre.leggauss(k)
        rel = (idx - c) + np.tile(nodes / 2.0, n)
        w = np.tile(wts / 2.0, n)
        U = None
    return rel, U, w, idx


@plan_cache(maxsize=8)
def ball_sampling(shape: tuple[int, int, int], k: int = 1, quadrature: str = "midpoint",
                  center: tuple[float, float, float] | None = None,
                  radius: float | None = None) -> BallSampling:
    """Build (and cache) the sampling of a ``(D, H, W)`` volume (arguments already checked)."""
    c_def, r_def = inscribed_placement(shape)
    center = c_def if center is None else tuple(float(c) for c in center)
    radius = r_def if radius is None else float(radius)
    lattice = quadrature == "midpoint" and all(
        float(2 * k * c).is_integer() for c in center)
    axes = [_axis(n, k, quadrature, c, lattice) for n, c in zip(shape, center, strict=True)]
    (rd, Ud, wd, id_), (rh, Uh, wh, ih), (rw, Uw, ww, iw) = axes
    rho2 = radius * radius
    H, W = shape[1], shape[2]
    parts: dict[str, list[np.ndarray]] = {"vox": [], "xyz": [], "w": [], "key": [], "z": []}
    sq_h, sq_w = (rh / radius) ** 2, (rw / radius) ** 2
    for a in range(rd.shape[0]):  # one slab of points along z at a time (bounded memory)
        zz = rd[a] / radius
        if zz * zz > 1.0:
            continue
        if lattice:
            ikey = Ud[a] ** 2 + Uh[:, None].astype(np.int64) ** 2 + Uw[None, :] ** 2
            inside = ikey <= rho2 * (2 * k) ** 2
        else:
            sq = np.stack(np.broadcast_arrays(zz * zz, sq_h[:, None], sq_w[None, :]), axis=-1)
            sq = np.sort(sq, axis=-1)
            fkey = (sq[..., 0] + sq[..., 1]) + sq[..., 2]
            inside = fkey <= 1.0
        hh, ww_ = np.nonzero(inside)
        if hh.size == 0:
            continue
        parts["vox"].append((id_[a] * H + ih[hh]) * W + iw[ww_])
        parts["xyz"].append(np.stack([rw[ww_] / radius, rh[hh] / radius,
                                      np.full(hh.size, zz)], axis=1))
        parts["w"].append(wd[a] * wh[hh] * ww[ww_])
        parts["key"].append(ikey[hh, ww_] if lattice else fkey[hh, ww_])
        parts["z"].append(np.full(hh.size, abs(Ud[a]) if lattice else abs(zz)))
    if not parts["vox"]:
        raise ValueError(f"the ball (center={center}, radius={radius}) holds no sample point of "
                         f"a volume of shape {shape}")
    key = np.concatenate(parts["key"])
    zkey = np.concatenate(parts["z"])
    order = np.lexsort((zkey, key))  # by radius, then |z|
    key, zkey = key[order], zkey[order]
    keys, group = np.unique(key, return_inverse=True)
    group = group.astype(np.int64).reshape(-1)
    new_ring = np.ones(key.shape[0], dtype=bool)
    new_ring[1:] = (key[1:] != key[:-1]) | (zkey[1:] != zkey[:-1])
    ring = np.cumsum(new_ring) - 1
    ring_point = np.nonzero(new_ring)[0]
    radii = (np.sqrt(keys.astype(np.float64)) / (2 * k * radius) if lattice
             else np.sqrt(keys))
    wscale = (1.0 / radius) ** 3
    xyz = np.concatenate(parts["xyz"])[order]
    return BallSampling(
        shape=tuple(shape), k=k, quadrature=quadrature, center=center, radius=radius,
        voxel=np.concatenate(parts["vox"])[order].astype(np.int64), xyz=xyz,
        weight=np.concatenate(parts["w"])[order] * wscale, group=group, radii=radii,
        ring=ring.astype(np.int64), ring_group=group[ring_point],
        ring_point=ring_point.astype(np.int64), zsign=np.where(xyz[:, 2] < 0, -1.0, 1.0),
        exact=lattice)
