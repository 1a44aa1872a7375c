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

from dataclasses import dataclass

import numpy as np

from .._cache import plan_cache

__all__ = ["QUADRATURES", "RULES", "DiskSampling", "disk_sampling", "pixel_mask", "sample_points"]

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
        return pixel_mask(self.size, self.rule)


def _coordinates(size: int, k: int, quadrature: str):
    """Positive 1-D coordinates q, their integer form (midpoint), weights and pixel offsets."""
    N = size
    c = 2 * np.arange(N) - N + 1  # pixel centres in units of 1/N
    if quadrature == "midpoint":
        off = 2 * np.arange(1, k + 1) - k - 1  # units of 1/(N k)
        U = (k * c[:, None] + off[None, :]).ravel()  # integer coordinates, ascending
        x = U / (N * k)
        w1 = np.full(U.shape, 2.0 / (N * k))
    else:
        nodes, wts = np.polynomial.legendre.leggauss(k)
        x = (c[:, None] + nodes[None, :]).ravel() / N
        w1 = np.tile(wts / N, N)  # (2/N) * w_s / 2
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
    N = size
    q, Uq, wq, pixcol, L, npos = _coordinates(N, k, quadrature)
    cabs = np.abs(2 * pixcol - N + 1)  # |pixel centre| (units 1/N) of each positive coord
    alpha, beta = np.triu_indices(npos)  # beta >= alpha ... swap to beta <= alpha below
    alpha, beta = beta, alpha
    ca, cb = cabs[alpha], cabs[beta]
    if rule == "inscribed":
        keep = (ca + 1) ** 2 + (cb + 1) ** 2 <= N * N
    else:
        keep = ca**2 + cb**2 <= N * N
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
    pix = (slots_b // k) * N + (slots_a // k)

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
        radius = np.sqrt(keys.astype(np.float64)) / (N * k)
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
    )


@plan_cache(maxsize=8)
def sample_points(size: int, k: int, quadrature: str, rule: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Every sample point of the disk engine's sampling, flattened.

    Returns
    -------
    r, theta, weight, pix : ndarray, shape (P,)
        Radius, angle (:math:`\sigma\theta_0 + \kappa\pi/2`), quadrature weight and linear
        pixel index (``row * N + col``) of each point (coinciding orbit images kept once).
    """
    smp: DiskSampling = disk_sampling(size, k, quadrature, rule)
    theta = SLOT_SIGMA[None, :] * smp.theta0[:, None] + SLOT_KAPPA[None, :] * (np.pi / 2)
    r = np.broadcast_to(smp.radius[smp.group][:, None], theta.shape)
    w = np.broadcast_to(smp.weight[:, None], theta.shape)
    used = smp.slot_used
    out = (np.ascontiguousarray(r[used]), np.ascontiguousarray(theta[used]),
           np.ascontiguousarray(w[used]), np.ascontiguousarray(smp.pix[used]))
    for a in out:
        a.setflags(write=False)
    return out
