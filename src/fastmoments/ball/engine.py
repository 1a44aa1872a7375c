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
:math:`z \to -z`. Stage 1a (azimuthal) forms :math:`E` as one batched matrix product per
ring size (rings hold 8 to about 100 points on a centred grid; all rings of one size are a
``(rings, B, size) @ (rings, size, 4 (L + 1))`` product of the volumes' values with the
folded phases, :math:`O(P L)`), stage 1b (Legendre) the shell sums :math:`S` chunk by chunk
over the rings (:math:`O(Q L^2 / 2)`), stage 2 (radial) contracts them with the radial table,
one matrix product per degree :math:`l` (:math:`O(G L^3 / 12)`), with :math:`P` points,
:math:`Q \approx P / 20` rings, :math:`G \ll Q` distinct radii and :math:`L` the order,
instead of :math:`O(P L^3 / 12)` for a direct sum. Chunks are sized from the memory budget.
Only :math:`m \ge 0` is computed: for a real volume
:math:`\Omega_{nl}^{-m} = (-1)^m \overline{\Omega_{nl}^m}`.

The synthesis (reconstruction and adjoint) runs the same stages backwards. Tables (radial
polynomials, harmonics) are computed in float64 (:mod:`.functions`) and cast once to the
working dtype. Moments are stored in a flat axis, degree-major: for each :math:`l`, each
:math:`n = l, l+2, \ldots`, each :math:`m = 0..l` (:class:`BallIndex`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from .._memory import memory_budget, rows_per_chunk
from .._progress import progress_bar
from .functions import SYNTHESIS_SCALE, legendre_table, radial_table
from .routes import choose_route
from .sampling import BallSampling

__all__ = ["BallEngine", "BallIndex"]

#: Work (sample points times harmonics, per volume) from which a call is *large*: its progress
#: bar shows (by default) once it has run for a second.
PROGRESS_FROM = 10**9

#: :math:`\sqrt{3/(4\pi)}`, the forward scale (:math:`\tfrac{3}{4\pi}\sqrt{4\pi/3}`).
FORWARD_SCALE = 1.0 / SYNTHESIS_SCALE


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
    """Rings grouped by their number of points: ``(size, rings, offset)`` per size, and the
    points in that order (``offset`` is where the bucket's points start in it). The points of
    a ring are contiguous (sorted by ring), so each bucket is a ``(rings, size)`` block."""
    counts = np.bincount(ring)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    buckets, order, off = [], [], 0
    for size in np.unique(counts):
        rings = np.nonzero(counts == size)[0]
        order.append((start[rings][:, None] + np.arange(size)).reshape(-1))
        buckets.append((int(size), rings, off))
        off += rings.size * int(size)
    return buckets, np.concatenate(order)


def _accumulate(acc: torch.Tensor, index: torch.Tensor, values: torch.Tensor,
                grad: bool) -> torch.Tensor:
    """``acc.index_add(1, index, values)``: in place unless autograd records it."""
    if grad:
        return acc.index_add(1, index, values)
    return acc.index_add_(1, index, values)


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
        self.route = choose_route(sampling.n_points, sampling.n_rings, self.index.n_harmonics,
                                  order, dtype, device, self.index.size)
        self._buckets, point_order = _ring_buckets(sampling.ring)
        self._bucket_rings = [torch.as_tensor(r, device=dev) for _n, r, _o in self._buckets]
        self._point_order = torch.as_tensor(point_order, device=dev)
        self._bucket_pos = torch.as_tensor(np.argsort(point_order), device=dev)
        ring_order = np.concatenate([rings for _size, rings, _off in self._buckets])
        self._ring_inverse = torch.as_tensor(np.argsort(ring_order), device=dev)
        self._legendre: torch.Tensor | None = None
        self._folded: torch.Tensor | None = None
        self._gemm_tabs: list[torch.Tensor] | None = None
        if self.route.kernel in ("cached-tables", "ring-gemm"):
            self._legendre = self._compute_legendre(0, sampling.n_rings)
            self._folded = self._compute_folded(self._point_order)
        if self.route.kernel == "ring-gemm":
            self._build_gemm()

    # ------------------------------------------------------------------ tables
    def _build_gemm(self) -> None:
        r"""The tables of the ``ring-gemm`` route: for each parity and :math:`m`, the matrix
        :math:`R_{nl}(r_{g(q)}) \bar P_l^m(q)` over rings :math:`q` and the moments
        :math:`(n, l, m)` with :math:`l + m` of that parity."""
        L1 = self.order + 1
        ring_group = self.ring_group
        cols, tabs, where = [], [], []
        self._gemm_pos: list[torch.Tensor] = []
        for m in range(L1):
            for par in (0, 1):
                parts, pos = [], []
                for l in range(m + par, L1, 2):
                    p = self._legendre[:, l * (l + 1) // 2 + m]  # (Q,)
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

    def _compute_folded(self, points: torch.Tensor) -> torch.Tensor:
        r"""``(e^{-im\varphi_p}, \operatorname{sign}(z_p) e^{-im\varphi_p})`` of ``points``:
        ``(P, 4 (L + 1))`` laid out ``(parity, m, (cos, -sin))``, in the working dtype."""
        xyz = self._xyz[points]
        phi = torch.atan2(xyz[:, 1], xyz[:, 0])
        m = torch.arange(self.order + 1, dtype=torch.float64, device=self.device)
        ang = phi[:, None] * m[None, :]
        out = torch.empty(len(points), 2, self.order + 1, 2, dtype=self.dtype,
                          device=self.device)
        out[:, 0, :, 0] = torch.cos(ang)
        out[:, 0, :, 1] = torch.sin(ang).neg_()
        sign = torch.where(xyz[:, 2] < 0, -1.0, 1.0).to(self.dtype)[:, None, None]
        torch.mul(out[:, 0], sign, out=out[:, 1])
        return out.reshape(len(points), -1)

    def legendre(self, q0: int, q1: int) -> torch.Tensor:
        if self._legendre is not None:
            return self._legendre[q0:q1]
        return self._compute_legendre(q0, q1)

    def folded(self, r0: int, r1: int) -> torch.Tensor:
        """Rows ``r0:r1`` of the folded phases in bucket order (:func:`_ring_buckets`)."""
        if self._folded is not None:
            return self._folded[r0:r1]
        return self._compute_folded(self._point_order[r0:r1])

    def _chunks(self, batch: int) -> tuple[int, int]:
        """Points per chunk (azimuthal stage) and rings per chunk (Legendre stage)."""
        item = torch.finfo(self.dtype).bits // 8
        LM, L1 = self.index.n_harmonics, self.order + 1
        s = self.sampling
        cached = self._folded is not None
        fixed = batch * (s.n_groups * LM + s.n_rings * 2 * L1) * 2 * item
        budget = memory_budget(self.device, self.budget)
        what = f"3-D Zernike moments of order {self.order} for a batch of {batch}"
        per_point = 4 * batch * 2 * L1 * 2 * item + (0 if cached else L1 * 4 * 8)
        per_ring = 3 * batch * LM * 2 * item + (0 if cached else LM * (item + 3 * 8))
        return (rows_per_chunk(per_point, budget, s.n_points, fixed_bytes=fixed, what=what),
                rows_per_chunk(per_ring, budget, s.n_rings, fixed_bytes=fixed, what=what))

    # ------------------------------------------------------------------ forward
    def _bar(self, batch: int, step_p: int | None, step_q: int | None, show: bool | None,
             desc: str):
        """A progress bar over the chunks of the stages whose step is given."""
        s = self.sampling
        total = 0
        if step_p is not None:
            total += sum(-(-len(r) // max(1, step_p // n)) for n, r, _o in self._buckets)
        if step_q is not None:
            total += -(-s.n_rings // step_q)
        large = batch * s.n_points * self.index.n_harmonics >= PROGRESS_FROM
        return progress_bar(total, desc=desc, show=show, large=large, unit="chunk")

    def azimuthal_sums(self, values: torch.Tensor, progress: bool | None = None
                       ) -> torch.Tensor:
        """Stage 1a: ``E[b, q, (parity, m), c]`` from weighted point values ``(B, P)``: one
        batched product per ring size, ``(B, s) @ (s, 4 (L + 1))`` for each ring."""
        B = values.shape[0]
        L1 = self.order + 1
        step_p, _step_q = self._chunks(B)
        bar = self._bar(B, step_p, None, progress, "3-D Zernike moments")
        ordered = values[:, self._point_order]
        outs = []
        for size, rings, off in self._buckets:
            step = max(1, step_p // size)
            for a in range(0, len(rings), step):
                b = min(len(rings), a + step)
                r0, r1 = off + a * size, off + b * size
                f = ordered[:, r0:r1].reshape(B, b - a, size).transpose(0, 1)
                tab = self.folded(r0, r1).reshape(b - a, size, 4 * L1)
                outs.append(torch.bmm(f, tab))
                bar.update()
        bar.close()
        E = torch.cat(outs)[self._ring_inverse].transpose(0, 1)
        return E.reshape(B, self.sampling.n_rings, 2 * L1, 2)

    def shell_sums(self, E: torch.Tensor, progress: bool | None = None) -> torch.Tensor:
        """Stage 1b: ``S[b, g, lm, c]`` from the azimuthal sums ``E``."""
        B = E.shape[0]
        grad = torch.is_grad_enabled() and E.requires_grad
        s = self.sampling
        _step_p, step_q = self._chunks(B)
        bar = self._bar(B, None, step_q, progress, "3-D Zernike shells")
        S = torch.zeros(B, s.n_groups, self.index.n_harmonics, 2, dtype=self.dtype,
                        device=self.device)
        for q0 in range(0, s.n_rings, step_q):
            q1 = min(s.n_rings, q0 + step_q)
            e = E[:, q0:q1][:, :, self.parity_m]  # (B, Qc, LM, 2)
            prod = e * self.legendre(q0, q1)[None, :, :, None]
            S = _accumulate(S, self.ring_group[q0:q1], prod, grad)
            bar.update()
        bar.close()
        return S

    def radial_stage(self, S: torch.Tensor) -> torch.Tensor:
        """Stage 2: moments ``(B, K, 2)`` from shell sums ``(B, G, LM, 2)``."""
        out = []
        for l in range(self.order + 1):
            c0 = l * (l + 1) // 2
            block = torch.einsum("gj,bgmc->bjmc", self.radial[l], S[:, :, c0:c0 + l + 1])
            out.append(block.reshape(S.shape[0], -1, 2))
        return torch.cat(out, dim=1)

    def point_values(self, volumes: torch.Tensor) -> torch.Tensor:
        """Weighted values ``w_p f(voxel(p))`` ``(B, P)`` of flattened volumes ``(B, V)``."""
        return volumes[:, self.voxel] * self.weight

    def ring_gemm(self, E: torch.Tensor) -> torch.Tensor:
        """Stages 1b and 2 at once (route ``ring-gemm``): moments ``(B, K, 2)`` from the
        azimuthal sums ``(B, Q, 2 (L + 1), 2)``, one matrix product per ``(parity, m)``
        with the kept tables :math:`R_{nl}(r_{g(q)}) \bar P_l^m(q)`."""
        B = E.shape[0]
        outs = [torch.einsum("bqc,qk->bkc", E[:, :, col], tab)
                for col, tab in zip(self._gemm_cols, self._gemm_tabs, strict=True)]
        return torch.cat(outs, dim=1)[:, self._gemm_inverse].reshape(B, -1, 2)

    def _moments(self, values: torch.Tensor, progress: bool | None) -> torch.Tensor:
        E = self.azimuthal_sums(values, progress)
        coef = (self.ring_gemm(E) if self._gemm_tabs is not None
                else self.radial_stage(self.shell_sums(E, progress)))
        return torch.view_as_complex(coef.contiguous())

    def forward(self, volumes: torch.Tensor, progress: bool | None = None) -> torch.Tensor:
        """Moments ``(B, K)`` complex of flattened real volumes ``(B, V)``."""
        return self._moments(self.point_values(volumes), progress)

    def forward_points(self, values: torch.Tensor) -> torch.Tensor:
        """Moments ``(B, K)`` complex of functions given at the sample points ``(B, P)``
        (for quadrature studies: the values are not tied to voxels)."""
        return self._moments(values * self.weight, None)

    # ------------------------------------------------------------------ synthesis
    def _shell_synthesis(self, c: torch.Tensor, step_q: int, bar) -> torch.Tensor:
        """Stages 2 and 1b backwards: ``U[b, q, (parity, m), c]`` from coefficients
        ``(B, K, 2)``."""
        B = c.shape[0]
        L1 = self.order + 1
        off = self.index.offsets
        T = []
        for l in range(L1):
            blk = c[:, int(off[l]):int(off[l + 1])].reshape(B, self.index.n_orders(l), l + 1, 2)
            T.append(torch.einsum("gj,bjmc->bgmc", self.radial[l], blk))
        T = torch.cat(T, dim=2)  # (B, G, LM, 2)
        U = []
        for q0 in range(0, self.sampling.n_rings, step_q):
            q1 = min(self.sampling.n_rings, q0 + step_q)
            prod = T[:, self.ring_group[q0:q1]] * self.legendre(q0, q1)[None, :, :, None]
            u = torch.zeros(B, q1 - q0, 2 * L1, 2, dtype=self.dtype, device=self.device)
            U.append(u.index_add(2, self.parity_m, prod))
            bar.update()
        return torch.cat(U, dim=1)

    def synthesize(self, coef: torch.Tensor, progress: bool | None = None) -> torch.Tensor:
        r"""Real values :math:`\mathrm{Re}\sum_K c_K Z_K(x_p)` at the sample points,
        ``(B, P)``, from complex coefficients ``(B, K)`` (``m >= 0`` only: the caller folds
        the weights of negative :math:`m` into ``coef``)."""
        B = coef.shape[0]
        c = torch.view_as_real(coef.resolve_conj()).to(self.dtype)
        s = self.sampling
        L1 = self.order + 1
        step_p, step_q = self._chunks(B)
        if self._gemm_tabs is not None:  # route ring-gemm: one product per (parity, m)
            bar = self._bar(B, step_p, None, progress, "3-D Zernike synthesis")
            parts = [torch.einsum("qk,bkc->bqc", tab, c[:, pos])
                     for pos, tab in zip(self._gemm_pos, self._gemm_tabs, strict=True)]
            U = torch.zeros(B, s.n_rings, 2 * L1, 2, dtype=self.dtype, device=self.device)
            U = U.index_copy(2, self._gemm_col_index, torch.stack(parts, dim=2))
        else:
            bar = self._bar(B, step_p, step_q, progress, "3-D Zernike synthesis")
            U = self._shell_synthesis(c, step_q, bar)
        # Re(U e^{im phi}) = U_re cos - U_im sin: the dot of U (both parities) with the
        # folded phases (cos, -sin) and sign(z) (cos, -sin); one batched product per ring size
        U = U.reshape(B, s.n_rings, 4 * L1)
        out = []
        for i, (size, rings, off) in enumerate(self._buckets):
            step = max(1, step_p // size)
            for a in range(0, len(rings), step):
                b = min(len(rings), a + step)
                r0, r1 = off + a * size, off + b * size
                u = U[:, self._bucket_rings[i][a:b]].transpose(0, 1)
                tab = self.folded(r0, r1).reshape(b - a, size, 4 * L1)
                out.append(torch.bmm(u, tab.transpose(1, 2)).transpose(0, 1).reshape(B, -1))
                bar.update()
        bar.close()
        return torch.cat(out, dim=1)[:, self._bucket_pos] * SYNTHESIS_SCALE

    def scatter(self, point_values: torch.Tensor) -> torch.Tensor:
        """Sum ``(B, P)`` point values into their voxels: ``(B, V)``."""
        B = point_values.shape[0]
        V = math.prod(self.sampling.shape)
        zero = torch.zeros(B, V, dtype=point_values.dtype, device=point_values.device)
        return zero.index_add(1, self.voxel, point_values)
