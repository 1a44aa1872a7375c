r"""The two-stage engine of the 3-D Zernike transforms: shells of equal radius, then radii.

With the sample points :math:`p` of a :class:`~fastmoments.ball.sampling.BallSampling`
(weights :math:`w_p`, radius group :math:`g(p)` of radius :math:`r_g`), a moment of a real
volume :math:`f` is

.. math::

    \Omega_{nl}^m = \tfrac{3}{4\pi} \sum_p w_p f_p \overline{Z_{nl}^m(x_p)}
    = \sqrt{\tfrac{3}{4\pi}} \sum_g R_{nl}(r_g)\, S_{g,lm}, \qquad
    S_{g,lm} = \sum_{q \in g} \bar P_l^m(|\cos\theta_q|)\, E^{(l+m) \bmod 2}_{q,m},

    E^{0}_{q,m} = \sum_{p \in q} w_p f_p e^{-im\varphi_p}, \qquad
    E^{1}_{q,m} = \sum_{p \in q} \operatorname{sign}(z_p)\, w_p f_p e^{-im\varphi_p},

where :math:`q` runs over the *rings* of the sampling (points of one radius and one
:math:`|z|`) and :math:`\bar P_l^m(-x) = (-1)^{l+m} \bar P_l^m(x)` folds the mirror
:math:`z \to -z`. Stage 1a (azimuthal) forms :math:`E` from the fact that the points lie
on *slabs* of equal :math:`z` and, across slabs, on the same in-plane positions
:math:`(x, y)`: the phases :math:`e^{-im\varphi}` are one table of the in-plane positions
(:math:`J \approx P^{2/3}` rows, shared by every slab), the positions are grouped into
*circles* that fall in one ring on every slab, and the sums over each circle on each slab are
one batched matrix product per circle size, ``(circles, B A, size) @ (circles, size,
2 (L + 1))`` (:math:`A` slabs, :math:`O(A J L)`); a ring then adds up its (slab, circle)
cells, with :math:`\operatorname{sign}(z)` for :math:`E^1`. Stage 1b (Legendre) forms the
shell sums :math:`S` in cache-sized chunks of rings (:math:`O(Q L^2 / 2)`), stage 2 (radial)
contracts them with the radial table, one matrix product per degree :math:`l`
(:math:`O(G L^3 / 12)`), with :math:`P` points, :math:`Q \approx P / 20` rings,
:math:`G \ll Q` distinct radii and :math:`L` the order, instead of :math:`O(P L^3 / 12)`
for a direct sum. The tables a call streams are the Legendre table (:math:`Q` rows) and the
small phase table; chunks are sized from the memory budget. On CUDA (routes
``ring-phases+...``, :data:`~fastmoments.ball.routes.RING_PHASES_CACHE`) stage 1a instead
reads the points ring by ring with a kept table of every point's weighted phases, one
batched product ``(4 (L + 1), s) @ (s, B)`` per ring size :math:`s`, so that each ring's sums
are written once (no scatter of cells into rings).
Only :math:`m \ge 0` is computed: for a real volume
:math:`\Omega_{nl}^{-m} = (-1)^m \overline{\Omega_{nl}^m}`.

The synthesis (reconstruction and adjoint) runs the same stages backwards. Tables (radial
polynomials, harmonics) are computed in float64 (:mod:`.functions`) and cast once to the
working dtype. Moments are stored in a flat axis, degree-major: for each :math:`l`, each
:math:`n = l, l+2, \ldots`, each :math:`m = 0..l` (:class:`BallIndex`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import torch

from .._memory import memory_budget, rows_per_chunk
from .._progress import progress_bar
from .functions import SYNTHESIS_SCALE, legendre_table, radial_table
from .routes import NUMBA_SHELL_WORK, choose_route
from .sampling import BallSampling

__all__ = ["BallEngine", "BallIndex"]

#: Work (sample points times harmonics, per volume) from which a call is *large*: its progress
#: bar shows (by default) once it has run for a second.
PROGRESS_FROM = 10**9

#: :math:`\sqrt{3/(4\pi)}`, the forward scale (:math:`\tfrac{3}{4\pi}\sqrt{4\pi/3}`).
FORWARD_SCALE = 1.0 / SYNTHESIS_SCALE

#: Bytes of products per chunk of the Legendre stage (rings x harmonics x batch): about a
#: core's share of the cache, so that the products are summed into their shells before they
#: go out to memory.
CHUNK_BYTES = 2**20


@dataclass(frozen=True)
class BallIndex:
    """The moments ``(n, l, m >= 0)`` up to ``order``, in the engine's flat layout."""

    order: int

    @property
    def n_harmonics(self) -> int:
        """Columns ``(l, m >= 0)`` of the harmonics table."""
        return (self.order + 1) * (self.order + 2) // 2

    def n_orders(self, l: int) -> int:
        """How many ``n`` go with degree ``l``."""
        return (self.order - l) // 2 + 1

    @cached_property
    def offsets(self) -> np.ndarray:
        """Start of degree ``l``'s block in the flat axis (``order + 2`` entries)."""
        sizes = [self.n_orders(l) * (l + 1) for l in range(self.order + 1)]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    @property
    def size(self) -> int:
        return int(self.offsets[-1])

    def position(self, n: int, l: int, m: int) -> int | None:
        """Flat position of stored ``(n, l, m)`` (``m >= 0``), or None if not computed."""
        if not (0 <= l <= n <= self.order and (n - l) % 2 == 0 and 0 <= m <= l):
            return None
        return int(self.offsets[l]) + ((n - l) // 2) * (l + 1) + m

    @cached_property
    def nlm(self) -> np.ndarray:
        """``(K, 3)`` int64: ``(n, l, m)`` of each flat position."""
        rows = []
        for l in range(self.order + 1):
            for n in range(l, self.order + 1, 2):
                for m in range(l + 1):
                    rows.append((n, l, m))
        return np.array(rows, dtype=np.int64).reshape(-1, 3)


def _ring_buckets(ring: np.ndarray) -> tuple[list[tuple[int, np.ndarray, int]], np.ndarray]:
    """Sets (rings, circles) grouped by their number of members: ``(size, sets, offset)`` per
    size, and the members in that order (``offset`` is where the bucket's members start in
    it). ``ring`` is the set of each member, non-decreasing, so each bucket is a
    ``(sets, size)`` block."""
    counts = np.bincount(ring)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    buckets, order, off = [], [], 0
    for size in np.unique(counts):
        rings = np.nonzero(counts == size)[0]
        order.append((start[rings][:, None] + np.arange(size)).reshape(-1))
        buckets.append((int(size), rings, off))
        off += rings.size * int(size)
    return buckets, np.concatenate(order)


def _plane_circles(plane: np.ndarray, slab: np.ndarray, ring: np.ndarray, n_plane: int,
                   n_slab: int) -> np.ndarray:
    """Circle of each in-plane position: positions that fall in the same ring on every slab
    (or outside the ball together) share a circle. Found by hashing each position's rings
    over the slabs (uint64 arithmetic, wrapping) and checked: if two points of one (slab,
    circle) cell lie in different rings, every position is its own circle."""
    mult = np.random.default_rng(0).integers(1, 2**62, size=n_slab, dtype=np.int64)
    mult = mult.astype(np.uint64) * np.uint64(2) + np.uint64(1)
    key = np.zeros(n_plane, dtype=np.uint64)
    np.add.at(key, plane, mult[slab] * (ring.astype(np.uint64) + np.uint64(1)))
    circle = np.unique(key, return_inverse=True)[1].reshape(-1)
    cell = circle[plane].astype(np.int64) * n_slab + slab
    pair = cell * (int(ring.max()) + 1) + ring  # (cell, ring) as one integer: below 2^63
    if np.unique(pair).size != np.unique(cell).size:
        return np.arange(n_plane)
    return circle


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_inverse=True)`` of a ``(P, 2)`` float array, by ranks:
    each column's values ranked (a 1-D sort each), the pairs of ranks as one integer, and
    those unique (another 1-D sort). The rows come out in the same lexicographic order;
    ``np.unique``'s row sort compares whole rows and took minutes at 10^7 points."""
    v0, r0 = np.unique(a[:, 0], return_inverse=True)
    v1, r1 = np.unique(a[:, 1], return_inverse=True)
    key = r0.reshape(-1).astype(np.int64) * v1.size + r1.reshape(-1)
    keys, inverse = np.unique(key, return_inverse=True)
    return np.stack([v0[keys // v1.size], v1[keys % v1.size]], axis=1), inverse.reshape(-1)


def _accumulate(acc: torch.Tensor, index: torch.Tensor, values: torch.Tensor,
                grad: bool, dim: int = 1) -> torch.Tensor:
    """``acc.index_add(dim, index, values)``: in place unless autograd records it."""
    if grad:
        return acc.index_add(dim, index, values)
    return acc.index_add_(dim, index, values)


class BallEngine:
    """Tables and contractions for one sampling, order, dtype and device.

    Parameters
    ----------
    sampling : BallSampling
        The points.
    order : int
        Highest order :math:`n`.
    dtype : torch.dtype
        Working dtype (float32 or float64).
    device : torch.device
        Where the tables live and the work runs.
    budget : float, optional
        Scratch memory in bytes (or a fraction of the free memory if <= 1).
    """

    def __init__(self, sampling: BallSampling, order: int, dtype: torch.dtype,
                 device: torch.device, budget: float | None = None) -> None:
        self.sampling = sampling
        self.index = BallIndex(order)
        self.order = order
        self.dtype = dtype
        self.device = device
        self.budget = budget
        dev = device
        self.voxel = torch.as_tensor(sampling.voxel, device=dev)
        self._xyz = torch.as_tensor(sampling.xyz, device=dev)
        self.ring_group = torch.as_tensor(sampling.ring_group, device=dev)
        self.weight = torch.as_tensor(sampling.weight * FORWARD_SCALE, device=dev).to(dtype)
        radii = torch.as_tensor(sampling.radii, device=dev)
        self.radial = [t.to(dtype) for t in radial_table(order, order, radii)]
        L1 = order + 1
        ls = np.concatenate([np.full(l + 1, l) for l in range(L1)])
        ms = np.concatenate([np.arange(l + 1) for l in range(L1)])
        # column of E (parity-major, then m) that each harmonic (l, m) reads
        self.parity_m = torch.as_tensor(((ls + ms) % 2) * L1 + ms, device=dev)
        self._build_planes()
        #: the compiled CPU Legendre stage (:mod:`._numba_shells`) for large calls
        self._numba_shells = device.type == "cpu"
        self._parity_m_np = self.parity_m.cpu().numpy().astype(np.int64)
        self._group_start = np.searchsorted(sampling.ring_group,
                                            np.arange(sampling.n_groups + 1)).astype(np.int64)
        self.route = choose_route(self._n_plane, sampling.n_rings, self.index.n_harmonics,
                                  order, dtype, device, self.index.size, sampling.n_points)
        #: the azimuthal stage by rings with every point's phases (``ring-phases+`` routes)
        self._by_ring = self.route.kernel.startswith("ring-phases+")
        #: the kernel of the Legendre and radial stages
        self.stages = self.route.kernel.split("+")[-1]
        self._legendre: torch.Tensor | None = None
        self._gemm_tabs: list[torch.Tensor] | None = None
        rows = None
        if self._by_ring:
            rows = self._build_ring_phases()
        if self.stages in ("cached-tables", "ring-gemm"):
            self._legendre = self._compute_legendre(0, sampling.n_rings)
        if self.stages == "ring-gemm":
            self._build_gemm(rows)

    # ------------------------------------------------------------------ tables
    def _build_planes(self) -> None:
        r"""The slab-and-circle layout of the azimuthal stage.

        The points lie on *slabs* (equal :math:`z`) and, across slabs, on the same in-plane
        positions :math:`(x, y)`. A *circle* is a set of in-plane positions that falls in one
        ring on every slab (found by hashing each position's rings over the slabs, then
        checked; singletons if the check fails), so that the phase sums of a ring are sums
        of (slab, circle) *cells*. The phases :math:`e^{-im\varphi}` are then a table of the
        in-plane positions only, shared by every slab."""
        s = self.sampling
        dev = self.device
        zs, slab = np.unique(s.xyz[:, 2], return_inverse=True)
        xy, plane = _unique_rows(s.xyz[:, :2])
        slab, plane = slab.reshape(-1), plane.reshape(-1)
        A, J = zs.shape[0], xy.shape[0]
        circle = _plane_circles(plane, slab, s.ring, J, A)
        by_circle = np.argsort(circle, kind="stable")
        buckets, order = _ring_buckets(circle[by_circle])
        plane_seq = by_circle[order]  # in-plane positions in bucket order
        circ_seq = np.concatenate([c for _n, c, _o in buckets])  # circles in bucket order
        circ_pos = np.empty(circle.max() + 1, dtype=np.int64)
        circ_pos[circ_seq] = np.arange(circ_seq.size)
        plane_pos = np.empty(J, dtype=np.int64)
        plane_pos[plane_seq] = np.arange(J)
        NC = circ_seq.size
        # cells (slab a, circle c) that hold points, sorted by slab: flat index a * NC + c
        cellp = slab * NC + circ_pos[circle[plane]]
        cells, first = np.unique(cellp, return_index=True)
        self._n_plane, self._n_slab, self._n_circle = J, A, NC
        self._plane_buckets = [(n, len(c), o) for n, c, o in buckets]
        self._slot = torch.as_tensor(slab * J + plane_pos[plane], device=dev)
        self._cells = torch.as_tensor(cells, device=dev)
        self._cell_start = np.searchsorted(cells, np.arange(A + 1) * NC)
        self._cell_ring = torch.as_tensor(s.ring[first], device=dev)
        self._cell_sign = torch.as_tensor(np.where(zs[cells // NC] < 0, -1.0, 1.0),
                                          device=dev).to(self.dtype)
        phi = np.arctan2(xy[plane_seq, 1], xy[plane_seq, 0])
        ang = torch.as_tensor(phi, device=dev)[:, None] * torch.arange(
            self.order + 1, dtype=torch.float64, device=dev)
        self._phases = torch.stack([torch.cos(ang), torch.sin(ang).neg_()], dim=2).reshape(
            J, -1).to(self.dtype)  # (J, (m, (cos, -sin)))

    def _build_ring_phases(self) -> torch.Tensor:
        r"""The tables of the ``ring-phases`` azimuthal stage: the points in order of their
        ring's size (:func:`_ring_buckets`) and, for each, the row
        :math:`w_p (e^{-im\varphi_p}, \operatorname{sign}(z_p) e^{-im\varphi_p})` (the
        forward scale and the point's weight folded in) as (parity, :math:`m`, (cos, -sin)).
        Returns the rings in that order (the rows of :meth:`ring_phase_sums`)."""
        s = self.sampling
        dev = self.device
        buckets, order = _ring_buckets(s.ring)  # the points are sorted by ring
        self._ring_buckets = []
        q0 = 0
        for size, rings, off in buckets:
            self._ring_buckets.append((size, len(rings), off, q0))
            q0 += len(rings)
        seq = np.concatenate([r for _n, r, _o in buckets])
        self._point_seq = torch.as_tensor(order, device=dev)
        self._voxel_seq = torch.as_tensor(s.voxel[order], device=dev)
        self._ring_seq_inverse = torch.as_tensor(np.argsort(seq), device=dev)
        xyz = s.xyz[order]
        phi = torch.as_tensor(np.arctan2(xyz[:, 1], xyz[:, 0]), device=dev)
        ang = phi[:, None] * torch.arange(self.order + 1, dtype=torch.float64, device=dev)
        ph = torch.stack([torch.cos(ang), torch.sin(ang).neg_()], dim=2)  # (P, m, c)
        # the weights folded in: the points' values go in as they are
        ph *= torch.as_tensor(s.weight[order] * FORWARD_SCALE, device=dev)[:, None, None]
        sign = torch.as_tensor(s.zsign[order], device=dev, dtype=torch.float64)
        self._ring_phases = torch.stack([ph, ph * sign[:, None, None]], dim=1).reshape(
            s.n_points, -1).to(self.dtype)  # (P, (parity, m, c))
        return torch.as_tensor(seq, device=dev)

    def _build_gemm(self, rows: torch.Tensor | None = None) -> None:
        r"""The tables of the ``ring-gemm`` route: for each parity and :math:`m`, the matrix
        :math:`R_{nl}(r_{g(q)}) \bar P_l^m(q)` over rings :math:`q` (in the order ``rows``
        where given) and the moments :math:`(n, l, m)` with :math:`l + m` of that parity."""
        L1 = self.order + 1
        ring_group = self.ring_group
        legendre = self._legendre
        if rows is not None:
            ring_group, legendre = ring_group[rows], legendre[rows]
        cols, tabs, where = [], [], []
        self._gemm_pos: list[torch.Tensor] = []
        for m in range(L1):
            for par in (0, 1):
                parts, pos = [], []
                for l in range(m + par, L1, 2):
                    p = legendre[:, l * (l + 1) // 2 + m]  # (Q,)
                    parts.append(self.radial[l][ring_group] * p[:, None])  # (Q, n_l)
                    base = int(self.index.offsets[l])
                    pos += [base + j * (l + 1) + m for j in range(self.index.n_orders(l))]
                if parts:
                    cols.append(par * L1 + m)
                    tabs.append(torch.cat(parts, dim=1))
                    where += pos
                    self._gemm_pos.append(torch.as_tensor(pos, device=self.device))
        self._gemm_cols = cols
        self._gemm_col_index = torch.as_tensor(cols, device=self.device)
        self._gemm_tabs = tabs
        self._gemm_inverse = torch.as_tensor(np.argsort(where), device=self.device)

    def _compute_legendre(self, q0: int, q1: int) -> torch.Tensor:
        r""":math:`\bar P_l^m(|\cos\theta|)` of rings ``q0:q1``: ``(Q, LM)`` working dtype
        (computed in float64 in slices of bounded size)."""
        xyz = self._xyz[torch.as_tensor(self.sampling.ring_point[q0:q1], device=self.device)]
        LM = self.index.n_harmonics
        step = max(1, memory_budget(self.device, self.budget) // (LM * 8 * 4))
        out = torch.empty(q1 - q0, LM, dtype=self.dtype, device=self.device)
        for a in range(0, q1 - q0, step):
            b = min(a + step, q1 - q0)
            out[a:b] = legendre_table(self.order, xyz[a:b, 0], xyz[a:b, 1],
                                      xyz[a:b, 2].abs()).to(self.dtype)
        return out

    def legendre(self, q0: int, q1: int) -> torch.Tensor:
        if self._legendre is not None:
            return self._legendre[q0:q1]
        return self._compute_legendre(q0, q1)

    def _chunks(self, batch: int) -> tuple[int, int]:
        """Slabs per chunk (azimuthal stage) and rings per chunk (Legendre stage)."""
        item = torch.finfo(self.dtype).bits // 8
        LM, L1 = self.index.n_harmonics, self.order + 1
        s = self.sampling
        cached = self._legendre is not None
        fixed = batch * (s.n_groups * LM + s.n_rings * 2 * L1 * 2
                         + self._n_slab * self._n_plane) * 2 * item
        budget = memory_budget(self.device, self.budget)
        what = f"3-D Zernike moments of order {self.order} for a batch of {batch}"
        per_slab = batch * (self._n_plane + 3 * self._n_circle * 2 * L1) * item * 2
        per_ring = 3 * batch * LM * 2 * item + (0 if cached else LM * (item + 3 * 8))
        step_a = rows_per_chunk(per_slab, budget, self._n_slab, fixed_bytes=fixed, what=what)
        if torch.get_num_threads() == 1:
            # the circle sums of a chunk of slabs are gathered into rings right away: keep
            # them about the size of a cache. With several threads, fewer and larger ops:
            # every op is a parallel region, and on a busy machine each one waits for its
            # threads (100^3, order 20, batch 4 on 2 shared cores: 1 s against 3 s)
            step_a = max(1, min(step_a,
                                4 * CHUNK_BYTES // (self._n_circle * batch * 2 * L1 * item)))
        return (step_a,
                rows_per_chunk(per_ring, budget, s.n_rings, fixed_bytes=fixed, what=what))

    def _ring_step(self, batch: int, step_q: int) -> int:
        """Rings per piece of the Legendre stage on the CPU: within the budget's ``step_q``
        and small enough that one piece's products (rings x harmonics x batch) stay in cache
        (:data:`CHUNK_BYTES`), since that stage is a stream of elementwise products. On a
        GPU, where each piece is a few kernel launches, the budget's chunk."""
        if self.device.type != "cpu":
            return step_q
        item = torch.finfo(self.dtype).bits // 8
        per_ring = self.index.n_harmonics * batch * 2 * item
        return max(1, min(step_q, CHUNK_BYTES // per_ring))

    def _ring_pieces(self, batch: int, step_q: int, bar: Any
                     ) -> Iterator[tuple[int, int, torch.Tensor]]:
        """``(q0, q1, P)`` over the rings: the Legendre table ``P`` of rings ``q0:q1``, read
        (kept table) or computed (``recomputed-tables``) once per chunk of the budget's
        ``step_q`` rings, then handed out in pieces of :meth:`_ring_step` rings. (Computing
        it per piece would run its recurrence, some 15 operations per degree, for every
        piece: with pieces of one ring at high order, hours instead of seconds.)"""
        n_rings = self.sampling.n_rings
        piece = self._ring_step(batch, step_q)
        for c0 in range(0, n_rings, step_q):
            c1 = min(n_rings, c0 + step_q)
            P = self.legendre(c0, c1)
            for q0 in range(c0, c1, piece):
                q1 = min(c1, q0 + piece)
                yield q0, q1, P[q0 - c0:q1 - c0]
            bar.update()

    def scratch_bytes(self, batch: int) -> int:
        """Scratch memory of a forward call of ``batch`` volumes on a ``ring-phases`` route
        (the points' values, the ring sums, the products and the moments)."""
        item = torch.finfo(self.dtype).bits // 8
        s = self.sampling
        per = s.n_points + s.n_rings * 4 * (self.order + 1) + 4 * self.index.size
        return batch * per * item

    # ------------------------------------------------------------------ forward
    def _bar(self, batch: int, step_a: int | None, step_q: int | None, show: bool | None,
             desc: str):
        """A progress bar over the chunks of the stages whose step is given."""
        total = 0
        if step_a is not None:
            total += -(-self._n_slab // step_a)
        if step_q is not None:
            total += -(-self.sampling.n_rings // step_q)
        large = batch * self.sampling.n_points * self.index.n_harmonics >= PROGRESS_FROM
        return progress_bar(total, desc=desc, show=show, large=large, unit="chunk")

    def _circle_products(self, F: torch.Tensor, adjoint: bool) -> torch.Tensor:
        """Forward: the phase sums ``(NC, R, 2 (L + 1))`` of the circles from in-plane values
        ``(R, J)`` (rows: batch x slabs); adjoint: the values from the sums. One batched
        product per circle size, ``(R, s) @ (s, 2 (L + 1))`` for each circle."""
        R = F.shape[1] if adjoint else F.shape[0]
        L2 = 2 * (self.order + 1)
        out = []
        c0 = 0
        for size, n, off in self._plane_buckets:
            tab = self._phases[off:off + n * size].reshape(n, size, L2)
            if adjoint:
                out.append(torch.bmm(F[c0:c0 + n], tab.transpose(1, 2)).transpose(0, 1)
                           .reshape(R, n * size))
            else:
                f = F[:, off:off + n * size].reshape(R, n, size).transpose(0, 1)
                out.append(torch.bmm(f, tab))
            c0 += n
        return torch.cat(out, dim=1 if adjoint else 0)

    def azimuthal_sums(self, values: torch.Tensor, progress: bool | None = None
                       ) -> torch.Tensor:
        """Stage 1a: ``E[q, (parity, m), (b, c)]`` from weighted point values ``(B, P)``.

        The values are laid out on slabs x in-plane positions (zero where no point is), the
        phase sums of every circle on every slab are batched products with the shared phase
        table (:meth:`_circle_products`), and each ring adds up its cells, with the sign of
        :math:`z` for the odd parity."""
        B = values.shape[0]
        L1 = self.order + 1
        A, J, NC = self._n_slab, self._n_plane, self._n_circle
        step_a, _step_q = self._chunks(B)
        bar = self._bar(B, step_a, None, progress, "3-D Zernike moments")
        F = values.new_zeros(B, A * J).index_copy(1, self._slot, values).reshape(B, A, J)
        Q = self.sampling.n_rings
        E0 = values.new_zeros(Q, L1, 2 * B)
        E1 = values.new_zeros(Q, L1, 2 * B)
        grad = torch.is_grad_enabled() and values.requires_grad
        for a0 in range(0, A, step_a):
            a1 = min(A, a0 + step_a)
            C = self._circle_products(F[:, a0:a1].reshape(-1, J), False)  # (NC, B Ac, 2 L1)
            C = C.reshape(NC, B, a1 - a0, L1, 2).permute(2, 0, 3, 1, 4).reshape(-1, L1, 2 * B)
            k0, k1 = int(self._cell_start[a0]), int(self._cell_start[a1])
            vals = torch.index_select(C, 0, self._cells[k0:k1] - a0 * NC)
            ring = self._cell_ring[k0:k1]
            E0 = _accumulate(E0, ring, vals, grad, dim=0)
            E1 = _accumulate(E1, ring, vals * self._cell_sign[k0:k1, None, None], grad, dim=0)
            bar.update()
        bar.close()
        return torch.cat([E0, E1], dim=1)

    def shell_sums(self, E: torch.Tensor, progress: bool | None = None) -> torch.Tensor:
        """Stage 1b: ``S[g, lm, (b, c)]`` from the azimuthal sums ``E[q, (parity, m), (b,
        c)]``: each ring adds one contiguous row of products to its group."""
        B = E.shape[2] // 2
        grad = torch.is_grad_enabled() and E.requires_grad
        s = self.sampling
        _step_a, step_q = self._chunks(B)
        if (self._numba_shells and self._legendre is not None and not grad
                and s.n_rings * self.index.n_harmonics * 2 * B >= NUMBA_SHELL_WORK):
            return self._shell_sums_numba(E)
        bar = self._bar(B, None, step_q, progress, "3-D Zernike shells")
        S = E.new_zeros(s.n_groups, self.index.n_harmonics, 2 * B)
        for q0, q1, P in self._ring_pieces(B, step_q, bar):
            prod = torch.index_select(E[q0:q1], 1, self.parity_m)
            prod = prod.mul_(P[:, :, None])
            S = _accumulate(S, self.ring_group[q0:q1], prod, grad, dim=0)
        bar.close()
        return S

    def _shell_sums_numba(self, E: torch.Tensor) -> torch.Tensor:
        """:meth:`shell_sums` on the CPU by the compiled kernel (:mod:`._numba_shells`)."""
        from . import _numba_shells as kern

        s = self.sampling
        B2 = E.shape[2]
        out = np.empty((s.n_groups, self.index.n_harmonics, B2),
                       dtype=np.float64 if self.dtype == torch.float64 else np.float32)
        kern.shell_sums(E.detach().contiguous().numpy(), self._legendre.numpy(),
                        self._parity_m_np, self._group_start, out)
        return torch.from_numpy(out)

    def radial_stage(self, S: torch.Tensor) -> torch.Tensor:
        """Stage 2: moments ``(K, 2 B)`` from shell sums ``(G, LM, 2 B)``: one matrix
        product ``(n_l, G) @ (G, (l + 1) 2 B)`` per degree."""
        G, _LM, B2 = S.shape
        out = []
        for l in range(self.order + 1):
            c0 = l * (l + 1) // 2
            block = self.radial[l].T @ S[:, c0:c0 + l + 1].reshape(G, -1)
            out.append(block.reshape(-1, B2))
        return torch.cat(out)  # (K, 2 B)

    def point_values(self, volumes: torch.Tensor) -> torch.Tensor:
        """Weighted values ``w_p f(voxel(p))`` ``(B, P)`` of flattened volumes ``(B, V)``."""
        return volumes[:, self.voxel] * self.weight

    def ring_phase_sums(self, v: torch.Tensor) -> torch.Tensor:
        """Stage 1a by rings (``ring-phases`` routes): ``E[q, (parity, m), (c, b)]`` from
        the points' values ``(B, P)`` (not weighted) in the table's order (``_point_seq``),
        the rings in order of their size, each ring's sums written once: one batched product
        per ring size, ``(4 (L + 1), s) @ (s, B)`` for each ring, with the kept table of
        every point's weighted phases. The last axis is component-major (``(c, b)``, not
        ``(b, c)`` as :meth:`azimuthal_sums`)."""
        B = v.shape[0]
        Q = self.sampling.n_rings
        C = self._ring_phases.shape[1]
        grad = torch.is_grad_enabled() and v.requires_grad
        E = None if grad else v.new_empty(Q, C, B)
        outs = []
        for size, n, off, q0 in self._ring_buckets:
            f = v[:, off:off + n * size].reshape(B, n, size).permute(1, 2, 0)  # (n, s, B)
            tab = self._ring_phases[off:off + n * size].reshape(n, size, C).transpose(1, 2)
            if grad:
                outs.append(torch.bmm(tab, f))
            else:
                torch.bmm(tab, f, out=E[q0:q0 + n])
        if grad:
            E = torch.cat(outs)
        return E.reshape(Q, C // 2, 2 * B)

    def ring_gemm(self, E: torch.Tensor) -> torch.Tensor:
        r"""Stages 1b and 2 at once (route ``ring-gemm``): moments ``(K, 2 B)`` from the
        azimuthal sums ``E[q, (parity, m), :]``, one matrix product per ``(parity, m)`` with
        the kept tables :math:`R_{nl}(r_{g(q)}) \bar P_l^m(q)`."""
        outs = [tab.T @ E[:, col] for col, tab in zip(self._gemm_cols, self._gemm_tabs,
                                                       strict=True)]
        return torch.cat(outs)[self._gemm_inverse]

    def _moments(self, values: torch.Tensor, progress: bool | None) -> torch.Tensor:
        """Moments ``(B, K)`` complex from the points' values: weighted ``(B, P)`` in the
        sampling's order, or, on ``ring-phases`` routes, not weighted, in the order of
        :meth:`ring_phase_sums`."""
        B = values.shape[0]
        if self._by_ring:
            E = self.ring_phase_sums(values)
            if self._gemm_tabs is None:  # the Legendre stage reads the rings in order
                E = E.index_select(0, self._ring_seq_inverse)
        else:
            E = self.azimuthal_sums(values, progress)
        coef = (self.ring_gemm(E) if self._gemm_tabs is not None
                else self.radial_stage(self.shell_sums(E, progress)))  # (K, 2 B)
        if self._by_ring:  # (c, b)
            coef = coef.reshape(-1, 2, B).permute(2, 0, 1)
        else:  # (b, c)
            coef = coef.reshape(-1, B, 2).transpose(0, 1)
        return torch.view_as_complex(coef.contiguous())

    def forward(self, volumes: torch.Tensor, progress: bool | None = None) -> torch.Tensor:
        """Moments ``(B, K)`` complex of flattened real volumes ``(B, V)``."""
        if self._by_ring:  # one gather, ring by ring (the weights are in the phase table)
            return self._moments(volumes.index_select(1, self._voxel_seq), progress)
        return self._moments(self.point_values(volumes), progress)

    def forward_points(self, values: torch.Tensor) -> torch.Tensor:
        """Moments ``(B, K)`` complex of functions given at the sample points ``(B, P)``
        (for quadrature studies: the values are not tied to voxels)."""
        if self._by_ring:
            return self._moments(values.index_select(1, self._point_seq), None)
        return self._moments(values * self.weight, None)

    # ------------------------------------------------------------------ synthesis
    def _shell_synthesis(self, ct: torch.Tensor, step_q: int, bar) -> torch.Tensor:
        """Stages 2 and 1b backwards: ``U[q, (parity, m), (b, c)]`` from coefficients
        ``(K, 2 B)``."""
        B2 = ct.shape[1]
        L1 = self.order + 1
        off = self.index.offsets
        G = self.sampling.n_groups
        T = []
        for l in range(L1):
            blk = ct[int(off[l]):int(off[l + 1])].reshape(self.index.n_orders(l), -1)
            T.append((self.radial[l] @ blk).reshape(G, l + 1, B2))
        T = torch.cat(T, dim=1)  # (G, LM, 2 B)
        U = []
        for q0, q1, P in self._ring_pieces(B2 // 2, step_q, bar):
            prod = torch.index_select(T, 0, self.ring_group[q0:q1])
            prod = prod.mul_(P[:, :, None])
            u = ct.new_zeros(q1 - q0, 2 * L1, B2)
            U.append(u.index_add(1, self.parity_m, prod))
        return torch.cat(U)

    def synthesize(self, coef: torch.Tensor, progress: bool | None = None) -> torch.Tensor:
        r"""Real values :math:`\mathrm{Re}\sum_K c_K Z_K(x_p)` at the sample points,
        ``(B, P)``, from complex coefficients ``(B, K)`` (``m >= 0`` only: the caller folds
        the weights of negative :math:`m` into ``coef``)."""
        B = coef.shape[0]
        c = torch.view_as_real(coef.resolve_conj()).to(self.dtype)
        ct = c.transpose(0, 1).reshape(-1, 2 * B)  # (K, (b, c))
        s = self.sampling
        L1 = self.order + 1
        A, J, NC = self._n_slab, self._n_plane, self._n_circle
        step_a, step_q = self._chunks(B)
        if self._gemm_tabs is not None:  # route ring-gemm: one product per (parity, m)
            bar = self._bar(B, step_a, None, progress, "3-D Zernike synthesis")
            parts = [tab @ ct[pos] for pos, tab in zip(self._gemm_pos, self._gemm_tabs,
                                                         strict=True)]
            U = ct.new_zeros(s.n_rings, 2 * L1, 2 * B)
            U = U.index_copy(1, self._gemm_col_index, torch.stack(parts, dim=1))
            if self._by_ring:  # the tables' rows are the rings in order of size
                U = U.index_select(0, self._ring_seq_inverse)
        else:
            bar = self._bar(B, step_a, step_q, progress, "3-D Zernike synthesis")
            U = self._shell_synthesis(ct, step_q, bar)
        # Re(U e^{im phi}) = U_re cos - U_im sin: the dot of each cell's U0 + sign(z) U1
        # with the phases (cos, -sin); one batched product per circle size
        U0, U1 = U[:, :L1], U[:, L1:]
        out = []
        for a0 in range(0, A, step_a):
            a1 = min(A, a0 + step_a)
            k0, k1 = int(self._cell_start[a0]), int(self._cell_start[a1])
            ring = self._cell_ring[k0:k1]
            vals = U0[ring] + U1[ring] * self._cell_sign[k0:k1, None, None]  # (cells, L1, 2B)
            C = ct.new_zeros((a1 - a0) * NC, L1, 2 * B)
            C = C.index_copy(0, self._cells[k0:k1] - a0 * NC, vals)
            C = C.reshape(a1 - a0, NC, L1, B, 2).permute(1, 3, 0, 2, 4).reshape(
                NC, B * (a1 - a0), 2 * L1)
            out.append(self._circle_products(C, True).reshape(B, a1 - a0, J))
            bar.update()
        bar.close()
        F = torch.cat(out, dim=1).reshape(B, A * J)
        return F[:, self._slot] * SYNTHESIS_SCALE

    def scatter(self, point_values: torch.Tensor) -> torch.Tensor:
        """Sum ``(B, P)`` point values into their voxels: ``(B, V)``."""
        B = point_values.shape[0]
        V = math.prod(self.sampling.shape)
        zero = torch.zeros(B, V, dtype=point_values.dtype, device=point_values.device)
        return zero.index_add(1, self.voxel, point_values)
