r"""The two-stage engine of the 3-D Zernike transforms: shells of equal radius, then radii.

With the sample points :math:`p` of a :class:`~fastmoments.ball.sampling.BallSampling`
(weights :math:`w_p`, radius group :math:`g(p)` of radius :math:`r_g`), a moment of a real
volume :math:`f` is

.. math::

    \Omega_{nl}^m = \tfrac{3}{4\pi} \sum_p w_p f_p \overline{Z_{nl}^m(x_p)}
    = \sqrt{\tfrac{3}{4\pi}} \sum_g R_{nl}(r_g)\, S_{g,lm}, \qquad
    S_{g,lm} = \sum_{g(p) = g} w_p f_p \overline{Y_l^m(x_p)}.

Stage 1 (angular) forms the shell sums :math:`S_{g,lm}` chunk by chunk over the points (one
multiply and one ``index_add`` per chunk, the chunk sized from the memory budget); stage 2
(radial) contracts them with the radial table, one matrix product per degree :math:`l`. The
cost is :math:`O(P L^2/2)` for the first stage and :math:`O(G L^3/12)` for the second, with
:math:`P` points, :math:`G \ll P` distinct radii and :math:`L` the order, instead of
:math:`O(P L^3/12)` for a direct sum. Only :math:`m \ge 0` is computed: for a real volume
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
from .functions import SYNTHESIS_SCALE, radial_table, spherical_harmonics
from .routes import choose_route
from .sampling import BallSampling

__all__ = ["BallEngine", "BallIndex"]

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
        self.group = torch.as_tensor(sampling.group, device=dev)
        self.weight = torch.as_tensor(sampling.weight * FORWARD_SCALE, device=dev).to(dtype)
        radii = torch.as_tensor(sampling.radii, device=dev)
        self.radial = [t.to(dtype) for t in radial_table(order, order, radii)]
        self.route = choose_route(sampling.n_points, self.index.n_harmonics, dtype, device)
        self._harmonics: torch.Tensor | None = None
        if self.route.kernel == "cached-harmonics":
            self._harmonics = self._compute_harmonics(0, sampling.n_points)

    # ------------------------------------------------------------------ tables
    def _compute_harmonics(self, p0: int, p1: int) -> torch.Tensor:
        """``conj(Y_l^m)`` at points ``p0:p1`` as ``(P, LM, 2)`` (real, imaginary) in the
        working dtype (computed in float64 in slices of bounded size)."""
        xyz = torch.as_tensor(self.sampling.xyz[p0:p1], device=self.device)
        step = max(1, (32 * 2**20) // (self.index.n_harmonics * 8 * 8))
        out = torch.empty(p1 - p0, self.index.n_harmonics, 2, dtype=self.dtype,
                          device=self.device)
        for a in range(0, p1 - p0, step):
            b = min(a + step, p1 - p0)
            y = spherical_harmonics(self.order, xyz[a:b, 0], xyz[a:b, 1], xyz[a:b, 2])
            y[..., 1].neg_()
            out[a:b] = y.to(self.dtype)
        return out

    def harmonics(self, p0: int, p1: int) -> torch.Tensor:
        """``conj(Y)`` at points ``p0:p1``: from the cached table or computed now."""
        if self._harmonics is not None:
            return self._harmonics[p0:p1]
        return self._compute_harmonics(p0, p1)

    def _chunk(self, batch: int) -> int:
        """Points per chunk for a batch of ``batch`` volumes."""
        item = torch.finfo(self.dtype).bits // 8
        lm = self.index.n_harmonics
        per_point = 3 * batch * lm * 2 * item + (0 if self._harmonics is not None
                                                  else lm * 2 * (item + 3 * 8))
        fixed = batch * self.sampling.n_groups * lm * 2 * item
        budget = memory_budget(self.device, self.budget)
        return rows_per_chunk(per_point, budget, self.sampling.n_points, fixed_bytes=fixed,
                              what=f"3-D Zernike moments of order {self.order} for a batch of "
                                   f"{batch}")

    # ------------------------------------------------------------------ forward
    def shell_sums(self, values: torch.Tensor) -> torch.Tensor:
        """Stage 1: ``S[b, g, lm, c]`` from weighted point values ``values`` ``(B, P)``."""
        B, P = values.shape
        G, LM = self.sampling.n_groups, self.index.n_harmonics
        S = torch.zeros(B, G, LM, 2, dtype=self.dtype, device=self.device)
        step = self._chunk(B)
        for p0 in range(0, P, step):
            p1 = min(P, p0 + step)
            Y = self.harmonics(p0, p1)
            prod = values[:, p0:p1, None, None] * Y[None]
            S = S.index_add(1, self.group[p0:p1], prod)
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

    def forward(self, volumes: torch.Tensor) -> torch.Tensor:
        """Moments ``(B, K)`` complex of flattened real volumes ``(B, V)``."""
        coef = self.radial_stage(self.shell_sums(self.point_values(volumes)))
        return torch.view_as_complex(coef.contiguous())

    def forward_points(self, values: torch.Tensor) -> torch.Tensor:
        """Moments ``(B, K)`` complex of functions given at the sample points ``(B, P)``
        (for quadrature studies: the values are not tied to voxels)."""
        coef = self.radial_stage(self.shell_sums(values * self.weight))
        return torch.view_as_complex(coef.contiguous())

    # ------------------------------------------------------------------ synthesis
    def synthesize(self, coef: torch.Tensor) -> torch.Tensor:
        r"""Real values :math:`\mathrm{Re}\sum_K c_K Z_K(x_p)` at the sample points,
        ``(B, P)``, from complex coefficients ``(B, K)`` (``m >= 0`` only: the caller folds
        the weights of negative :math:`m` into ``coef``)."""
        B = coef.shape[0]
        c = torch.view_as_real(coef.resolve_conj()).to(self.dtype)
        G, LM = self.sampling.n_groups, self.index.n_harmonics
        off = self.index.offsets
        T = []
        for l in range(self.order + 1):
            blk = c[:, int(off[l]):int(off[l + 1])].reshape(B, self.index.n_orders(l), l + 1, 2)
            T.append(torch.einsum("gj,bjmc->bgmc", self.radial[l], blk))
        T = torch.cat(T, dim=2) if T else torch.zeros(B, G, LM, 2, dtype=self.dtype)
        P = self.sampling.n_points
        out = []
        step = self._chunk(B)
        for p0 in range(0, P, step):
            p1 = min(P, p0 + step)
            Y = self.harmonics(p0, p1)
            out.append(torch.einsum("bpmc,pmc->bp", T[:, self.group[p0:p1]], Y))
        return torch.cat(out, dim=1) * SYNTHESIS_SCALE

    def scatter(self, point_values: torch.Tensor) -> torch.Tensor:
        """Sum ``(B, P)`` point values into their voxels: ``(B, V)``."""
        B = point_values.shape[0]
        V = math.prod(self.sampling.shape)
        zero = torch.zeros(B, V, dtype=point_values.dtype, device=point_values.device)
        return zero.index_add(1, self.voxel, point_values)
