r"""Where the disk transforms sample an image: points, weights, symmetry orbits, radius groups.

An :math:`N \times N` image is mapped onto the unit disk as in the Zernike thesis (Eq. 2.3-2.4):
pixel :math:`(i, j)` (column :math:`i`, row :math:`j` from the top, both from 0) has its centre at

.. math:: x_i = \frac{2i - N + 1}{N}, \qquad y_j = \frac{N - 2j - 1}{N}.

Each pixel carries :math:`k \times k` sample points: the thesis's midpoint sub-regions
(Eq. 3.21-3.22, offsets :math:`(2s - k - 1)/(Nk)`, weight :math:`(2/(Nk))^2`) or a
Gauss-Legendre rule per axis (``quadrature="gauss"``; weight :math:`(2/N)^2 w_s w_t / 4`). All
points of a pixel carry that pixel's value. A pixel is used when it lies entirely inside the
unit disk (``rule="inscribed"``, the thesis's rule: its farthest corner within radius 1) or
when its centre does (``rule="centre"``).

The one-dimensional coordinates are symmetric about 0, so the set of points is invariant under
the 8 symmetries of the square (rotations by 90 degrees and mirrors). The points are therefore
stored as *orbits*: a base point :math:`(q_\alpha, q_\beta)` with :math:`0 \le q_\beta \le q_\alpha`
(angle :math:`\theta_0 \in [0, \pi/4]`) and its images at angles
:math:`\sigma\theta_0 + \kappa\pi/2` (:math:`\sigma = \pm 1`, :math:`\kappa = 0..3`), as in the
eight-fold and four-fold symmetric pixels of the thesis (Table 3.1-3.2); images that coincide
(on the axes and the diagonals) are kept once.

Orbits of equal radius form a *group*. For the midpoint rule every coordinate is an integer
multiple of :math:`1/(Nk)`, so the group key is the exact integer :math:`U^2 + V^2`; this also
merges orbits that meet on a circle by accident (:math:`5^2 + 0^2 = 3^2 + 4^2`). For the
Gauss rule each orbit is its own group.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._cache import plan_cache
from .placement import Placement

__all__ = ["QUADRATURES", "RULES", "DiskSampling", "disk_sampling", "pixel_mask",
           "placed_sampling", "plan_points", "sample_points", "sampling_points"]

QUADRATURES = ("midpoint", "gauss")
RULES = ("inscribed", "centre")

# slot order: (+,0) (+,1) (+,2) (+,3) (-,0) (-,1) (-,2) (-,3); sigma = +1 for slots 0-3
SLOT_SIGMA = np.array([1, 1, 1, 1, -1, -1, -1, -1])
SLOT_KAPPA = np.array([0, 1, 2, 3, 0, 1, 2, 3])


def pixel_mask(size: int, rule: str = "inscribed") -> np.ndarray:
    """Boolean ``(size, size)`` mask of the pixels a disk transform uses.

    Examples
    --------
    >>> pixel_mask(4).astype(int)
    array([[0, 0, 0, 0],
           [0, 1, 1, 0],
           [0, 1, 1, 0],
           [0, 0, 0, 0]])
    """
    c = np.abs(2 * np.arange(size) - size + 1)
    if rule == "inscribed":
        return (c[:, None] + 1) ** 2 + (c[None, :] + 1) ** 2 <= size * size
    return c[:, None] ** 2 + c[None, :] ** 2 <= size * size


@dataclass(frozen=True, eq=False)
class DiskSampling:
    """Orbits of sample points of an ``N x N`` image, grouped by exact radius.

    Attributes
    ----------
    size, k, quadrature, rule :
        The geometry.
    theta0 : ndarray, shape (O,)
        Base angle of each orbit, in :math:`[0, \\pi/4]`.
    weight : ndarray, shape (O,)
        Quadrature weight of each point of the orbit (:math:`\\Delta x \\Delta y` share).
    group : ndarray, shape (O,)
        Radius group of each orbit (orbits sorted by group).
    radius : ndarray, shape (G,)
        Radius of each group, float64.
    pix : ndarray, shape (O, 8)
        Linear pixel index (``row * N + col``) of each of the 8 images of the orbit.
    slot_used : ndarray of bool, shape (O, 8)
        False where an image coincides with an earlier one (axes, diagonals, centre).
    placement : Placement or None
        Where the disk sits on the image (:func:`placed_sampling`); None for the default
        mapping of an ``N x N`` image (then ``size`` is ``N``; for a placed disk ``size``
        is the side of the block of pixels its orbits cover, 0 without orbits).
    """

    size: int
    k: int
    quadrature: str
    rule: str
    theta0: np.ndarray
    weight: np.ndarray
    group: np.ndarray
    radius: np.ndarray
    pix: np.ndarray
    slot_used: np.ndarray
    placement: Placement | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """``(H, W)`` of the images this sampling reads."""
        if self.placement is None:
            return (self.size, self.size)
        return self.placement.shape

    @property
    def n_pixels(self) -> int:
        """Pixels of one image (``H * W``)."""
        h, w = self.shape
        return h * w

    @property
    def symmetric(self) -> bool:
        """Whether the points come in orbits of the 8 symmetries of the square about the
        disk centre (else every point is an orbit of its own)."""
        return self.placement is None or self.size > 0

    @property
    def n_orbits(self) -> int:
        return int(self.theta0.shape[0])

    @property
    def n_groups(self) -> int:
        return int(self.radius.shape[0])

    @property
    def n_points(self) -> int:
        return int(self.slot_used.sum())

    @property
    def mask(self) -> np.ndarray:
        """Boolean ``(H, W)`` mask of the pixels that carry a sample point."""
        if self.placement is None:
            return pixel_mask(self.size, self.rule)
        out = np.zeros(self.n_pixels, dtype=bool)
        out[self.pix[self.slot_used]] = True
        return out.reshape(self.shape)


def _coordinates(size: int, k: int, quadrature: str, span: float | int | None = None):
    """Positive 1-D coordinates q, their integer form (midpoint), weights and pixel offsets
    of ``size`` pixels centred on 0, on a disk of diameter ``span`` pixels (default
    ``size``: the inscribed disk)."""
    N = size
    D = N if span is None else span
    c = 2 * np.arange(N) - N + 1  # pixel centres in half-pixels
    if quadrature == "midpoint":
        off = 2 * np.arange(1, k + 1) - k - 1  # units of 1/(2 k) pixel
        U = (k * c[:, None] + off[None, :]).ravel()  # integer coordinates, ascending
        x = U / (D * k)
        w1 = np.full(U.shape, 2.0 / (D * k))
    else:
        nodes, wts = np.polynomial.legendre.leggauss(k)
        x = (c[:, None] + nodes[None, :]).ravel() / D
        w1 = np.tile(wts / D, N)  # (2/D) * w_s / 2
        U = None
    L = N * k
    npos = (L + 1) // 2  # number of coordinates >= 0
    start = L - npos
    q = x[start:]
    wq = w1[start:]
    Uq = U[start:] if U is not None else None
    pix_of = np.arange(start, L) // k  # pixel column of +q_alpha
    return q, Uq, wq, pix_of, L, npos


@plan_cache(maxsize=16)
def disk_sampling(size: int, k: int = 1, quadrature: str = "midpoint",
                  rule: str = "inscribed") -> DiskSampling:
    """Build (and cache) the sampling of an ``N x N`` image with ``k x k`` points per pixel."""
    return _orbit_sampling(size, size, k, quadrature, rule, 0, 0, size, None)


def _orbit_sampling(N: int, D: float | int, k: int, quadrature: str, rule: str, row0: int,
                    col0: int, width: int, placement: Any) -> DiskSampling:
    """The orbits of an ``N x N`` block of pixels (top-left pixel ``(row0, col0)`` of an
    image ``width`` pixels wide) centred on a disk of diameter ``D`` pixels."""
    q, Uq, wq, pixcol, L, npos = _coordinates(N, k, quadrature, D)
    cabs = np.abs(2 * pixcol - N + 1)  # |pixel centre| (half-pixels) of each positive coord
    alpha, beta = np.triu_indices(npos)  # beta >= alpha ... swap to beta <= alpha below
    alpha, beta = beta, alpha
    ca, cb = cabs[alpha], cabs[beta]
    if rule == "inscribed":
        keep = (ca + 1) ** 2 + (cb + 1) ** 2 <= D * D
    else:
        keep = ca**2 + cb**2 <= D * D
    alpha, beta = alpha[keep], beta[keep]
    qa, qb = q[alpha], q[beta]
    theta0 = np.arctan2(qb, qa)
    weight = wq[alpha] * wq[beta]

    # index of +q and -q in the full ascending coordinate list
    pos = (L - npos) + np.arange(npos)
    neg = L - 1 - pos
    pa, na, pb, nb = pos[alpha], neg[alpha], pos[beta], neg[beta]
    # (a, b): a = column coordinate index of x, b = row index of -y (rows go down)
    slots_a = np.stack([pa, nb, na, pb, pa, pb, na, nb], axis=1)
    slots_b = np.stack([nb, na, pb, pa, pb, na, nb, pa], axis=1)
    pix = (row0 + slots_b // k) * width + (col0 + slots_a // k)

    used = np.ones((alpha.size, 8), dtype=bool)
    zero = q[0] == 0.0
    on_diag = alpha == beta
    on_axis = (beta == 0) & zero
    used[on_diag | on_axis, 4:] = False
    centre = (alpha == 0) & (beta == 0) & zero
    used[centre, 1:] = False

    if quadrature == "midpoint":
        key = Uq[alpha].astype(np.int64) ** 2 + Uq[beta].astype(np.int64) ** 2
        keys, group = np.unique(key, return_inverse=True)
        radius = np.sqrt(keys.astype(np.float64)) / (D * k)
    else:
        r = np.hypot(qa, qb)
        order = np.argsort(r, kind="stable")
        group = np.empty_like(order)
        group[order] = np.arange(order.size)
        radius = r[order]
    order = np.argsort(group, kind="stable")
    return DiskSampling(
        size=N, k=k, quadrature=quadrature, rule=rule,
        theta0=theta0[order], weight=weight[order], group=group[order].astype(np.int64),
        radius=radius, pix=pix[order].astype(np.int64), slot_used=used[order],
        placement=placement,
    )


#: a sampling of a disk off the square's symmetries holds every point (about 100 bytes each:
#: 20 MB for a 512 x 512 image), and centres of mass rarely repeat: a small cache
@plan_cache(maxsize=4)
def placed_sampling(placement: Placement, k: int = 1, quadrature: str = "midpoint",
                    rule: str = "inscribed") -> DiskSampling:
    r"""The sampling of a disk placed on an image (:mod:`fastmoments.disk.placement`).

    When the centre lies on a pixel centre or a pixel corner and the disk's square of pixels
    lies inside the image, the points have the 8 symmetries of the square and are stored as
    orbits, as for the default mapping (:func:`disk_sampling`), translated. Otherwise every
    point is an orbit of its own (one used slot), with the image's pixels outside the disk
    left out; points of equal radius still share a group (exactly equal radii: integer keys
    when twice the centre's coordinates are integers, else equal float64 radii).

    Examples
    --------
    >>> s = placed_sampling(Placement(9, 12, (4.0, 5.0), 3.0), rule="centre")
    >>> s.shape, s.n_points, bool(s.symmetric)
    ((9, 12), 29, True)
    >>> s = placed_sampling(Placement(9, 12, (4.2, 5.0), 3.0), rule="centre")
    >>> s.n_points, bool(s.symmetric)
    (28, False)
    """
    H, W = placement.shape
    cr, cc = placement.centre
    D = 2 * placement.radius
    if placement.symmetric:
        # pixels across the disk: offsets c = 2i - n + 1 half-pixels, |c| <= D, parity of n
        # set by the centre (odd n: centre on a pixel centre)
        odd = 2 * cr % 2 == 0
        cmax = math.floor(D)
        if (cmax % 2 == 0) != odd:
            cmax -= 1
        n = cmax + 1
        row0, col0 = cr - (n - 1) / 2, cc - (n - 1) / 2
        if n >= 1 and row0 >= 0 and col0 >= 0 and row0 + n <= H and col0 + n <= W:
            return _orbit_sampling(n, D, k, quadrature, rule, int(row0), int(col0), W,
                                   placement)
    return _point_sampling(placement, k, quadrature, rule)


def _point_sampling(placement: Placement, k: int, quadrature: str, rule: str
                    ) -> DiskSampling:
    """Every sample point of the disk inside the image as an orbit of its own."""
    H, W = placement.shape
    cr, cc = placement.centre
    R = placement.radius
    D = 2 * R
    rows = np.arange(max(0, math.floor(cr - R - 1)), min(H, math.ceil(cr + R + 2)))
    cols = np.arange(max(0, math.floor(cc - R - 1)), min(W, math.ceil(cc + R + 2)))
    ci = 2 * (rows - cr)  # pixel centre offsets in half-pixels (exact for half-integers)
    cj = 2 * (cols - cc)
    if rule == "inscribed":
        inside = (np.abs(ci)[:, None] + 1) ** 2 + (np.abs(cj)[None, :] + 1) ** 2 <= D * D
    else:
        inside = ci[:, None] ** 2 + cj[None, :] ** 2 <= D * D
    pi, pj = np.nonzero(inside)
    if quadrature == "midpoint":
        off = (2 * np.arange(1, k + 1) - k - 1).astype(np.float64)  # 1/(2k) pixel
        Ui = (k * ci[:, None] + off[None, :])  # (rows, k), exact for half-integer centres
        Uj = (k * cj[:, None] + off[None, :])
        wi = np.full(k, 2.0 / (D * k))
        scale = D * k
    else:
        nodes, wts = np.polynomial.legendre.leggauss(k)
        Ui = ci[:, None] + nodes[None, :]
        Uj = cj[:, None] + nodes[None, :]
        wi = wts / D
        scale = D
    # all k x k points of each used pixel: (pixels, k, k)
    ui = np.broadcast_to(Ui[pi][:, :, None], (pi.size, k, k)).ravel()
    uj = np.broadcast_to(Uj[pj][:, None, :], (pi.size, k, k)).ravel()
    w = (wi[:, None] * wi[None, :]).ravel()
    weight = np.tile(w, pi.size)
    pix = np.repeat((rows[pi] * W + cols[pj]).astype(np.int64), k * k)
    x = uj / scale
    y = -ui / scale
    theta0 = np.arctan2(y, x)
    exact = quadrature == "midpoint" and 2 * cr == math.floor(2 * cr) and \
        2 * cc == math.floor(2 * cc) and np.abs(ui).max(initial=0) < 2**26
    if exact:  # integer keys: equal radii exactly
        key = ui.astype(np.int64) ** 2 + uj.astype(np.int64) ** 2
        keys, group = np.unique(key, return_inverse=True)
        radius = np.sqrt(keys.astype(np.float64)) / scale
    else:
        radius, group = np.unique(np.sqrt(x * x + y * y), return_inverse=True)
    order = np.argsort(group, kind="stable")
    used = np.zeros((x.size, 8), dtype=bool)
    used[:, 0] = True
    return DiskSampling(
        size=0, k=k, quadrature=quadrature, rule=rule,
        theta0=theta0[order], weight=weight[order], group=group[order].astype(np.int64),
        radius=radius, pix=np.repeat(pix[order][:, None], 8, axis=1), slot_used=used,
        placement=placement,
    )


@plan_cache(maxsize=8)
def sample_points(size: int, k: int, quadrature: str, rule: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Every sample point of the disk engine's sampling of an ``N x N`` image, flattened
    (:func:`sampling_points` of :func:`disk_sampling`)."""
    return sampling_points(disk_sampling(size, k, quadrature, rule))


def sampling_points(smp: DiskSampling) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Every sample point of a sampling, flattened.

    Returns
    -------
    r, theta, weight, pix : ndarray, shape (P,)
        Radius, angle (:math:`\sigma\theta_0 + \kappa\pi/2`), quadrature weight and linear
        pixel index (``row * W + col``) of each point (coinciding orbit images kept once),
        read-only.
    """
    theta = SLOT_SIGMA[None, :] * smp.theta0[:, None] + SLOT_KAPPA[None, :] * (np.pi / 2)
    r = np.broadcast_to(smp.radius[smp.group][:, None], theta.shape)
    w = np.broadcast_to(smp.weight[:, None], theta.shape)
    used = smp.slot_used
    out = (np.ascontiguousarray(r[used]), np.ascontiguousarray(theta[used]),
           np.ascontiguousarray(w[used]), np.ascontiguousarray(smp.pix[used]))
    for a in out:
        a.setflags(write=False)
    return out


def plan_points(plan: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The flattened sample points ``(r, theta, weight, pix)`` of a disk plan (cached for the
    default disk of ``N x N`` images)."""
    if plan.placement is None:
        return sample_points(plan.size, plan.k, plan.quadrature, plan.rule)
    return sampling_points(plan.sampling)
