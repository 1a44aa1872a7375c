r"""One 3-D Zernike transform over several devices: the sample points cut into blocks of radii.

The :class:`~fastmoments.parallel.protocol.WorkSplit` of the ball plans. A moment is a sum
over the sample points, :math:`\Omega_{nl}^m = \tfrac{3}{4\pi}\sum_p w_p f_p
\overline{Z_{nl}^m(x_p)}`, and the points are sorted by radius group (rings inside a group
are contiguous), so a contiguous block of radius groups is a sampling of its own (a spherical
shell of the ball) and its engine computes *partial* moments of every :math:`(n, l, m)`;
the moments are the sum of the blocks' partial moments, gathered on the first device. Blocks
are cut at equal modelled cost (:func:`~fastmoments.parallel.partition.contiguous_blocks`
with :func:`group_costs`). Each device builds the engine of its shell once, on first use, and
keeps it. Batches of at least as many volumes as devices are spread by volumes instead
(:class:`~fastmoments.parallel.ParallelPlan`). A reconstruction is split the same way: by
volumes, or into shells of the voxel centres (where it is evaluated), each device summing
the functions at its points and the first device adding the partial volumes.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from .._array import ArrayKind
from ..parallel.partition import contiguous_blocks, even_splits
from ..parallel.protocol import Replicas
from ..parallel.runner import gather_tensors, run_parts, settle, to_device
from .engine import BallEngine
from .moments import Zernike3DMoments
from .sampling import BallSampling

__all__ = ["BallSplit", "group_costs", "shell_sampling"]


def group_costs(sampling: BallSampling, order: int, gemm: bool) -> np.ndarray:
    r"""Modelled cost of each radius group (multiply-adds per volume).

    A group of :math:`P_g` points in :math:`Q_g` rings costs :math:`4(L+1) P_g` in the
    azimuthal stage, then either :math:`K Q_g` (route ``ring-gemm``: one product over rings
    and moments) or :math:`H Q_g + K` (Legendre stage over the :math:`H` harmonics, then the
    radial stage), with :math:`L` the order and :math:`K` the moments.

    >>> from fastmoments.ball.sampling import ball_sampling
    >>> c = group_costs(ball_sampling((8, 8, 8)), 4, gemm=True)
    >>> c.shape == (ball_sampling((8, 8, 8)).n_groups,), bool((c > 0).all())
    (True, True)
    """
    L1 = order + 1
    n_harm = L1 * (L1 + 1) // 2
    n_mom = sum(((order - l) // 2 + 1) * (l + 1) for l in range(L1))
    points = np.bincount(sampling.group, minlength=sampling.n_groups).astype(np.float64)
    rings = np.bincount(sampling.ring_group, minlength=sampling.n_groups).astype(np.float64)
    if gemm:
        return 4.0 * L1 * points + n_mom * rings
    return 4.0 * L1 * points + n_harm * rings + n_mom


def shell_sampling(sampling: BallSampling, g0: int, g1: int) -> BallSampling:
    """The sampling of radius groups ``g0:g1`` only (a shell of the ball), renumbered.

    >>> from fastmoments.ball.sampling import ball_sampling
    >>> s = ball_sampling((8, 8, 8))
    >>> a, b = shell_sampling(s, 0, 3), shell_sampling(s, 3, s.n_groups)
    >>> a.n_points + b.n_points == s.n_points, a.n_groups + b.n_groups == s.n_groups
    (True, True)
    """
    if not 0 <= g0 < g1 <= sampling.n_groups:
        raise ValueError(f"groups must satisfy 0 <= g0 < g1 <= {sampling.n_groups}, got "
                         f"({g0}, {g1})")
    p0, p1 = (int(v) for v in np.searchsorted(sampling.group, [g0, g1]))
    q0, q1 = (int(v) for v in np.searchsorted(sampling.ring_group, [g0, g1]))
    return BallSampling(
        shape=sampling.shape, k=sampling.k, quadrature=sampling.quadrature,
        center=sampling.center, radius=sampling.radius, voxel=sampling.voxel[p0:p1],
        xyz=sampling.xyz[p0:p1], weight=sampling.weight[p0:p1],
        group=sampling.group[p0:p1] - g0, radii=sampling.radii[g0:g1],
        ring=sampling.ring[p0:p1] - q0, ring_group=sampling.ring_group[q0:q1] - g0,
        ring_point=sampling.ring_point[q0:q1] - p0, zsign=sampling.zsign[p0:p1],
        exact=sampling.exact)


class BallSplit:
    """The work split of a :class:`~fastmoments.ball.Zernike3DTransform` (``plan`` is the
    first replica).

    Attributes
    ----------
    min_cost : float
        Smallest modelled job cost (:func:`group_costs` summed over the volumes) that
        ``split="auto"`` spreads over the devices. Not yet calibrated by a multi-GPU run: set
        at about one 100^3 volume at order 40 (modelled 1.1e8 with ``k = 1``; 6.6e7 at
        order 20), so that small jobs stay on the first device.
    """

    core_ndim = 3
    coef_ndim = 1
    min_cost = 1e8

    def __init__(self, plan: Any) -> None:
        self.plan = plan
        self._recon_parts: list[list[Any]] | None = None

    def _costs(self) -> np.ndarray:
        p = self.plan
        return group_costs(p.sampling, p.order, p.engine.stages == "ring-gemm")

    def item_cost(self) -> float:
        """Modelled cost of one volume's moments."""
        return float(self._costs().sum())

    def pieces(self, n: int) -> list[tuple[int, int]]:
        """``[start, stop)`` blocks of radius groups of ``n`` devices, equal in cost."""
        return contiguous_blocks(self._costs(), n)

    def _engine(self, owner: Replicas, slot: int) -> BallEngine:
        """The engine of part ``slot``'s shell on its device (built once, then kept)."""
        part = owner.parts()[slot]
        if part[1] is None:
            p = self.plan
            g0, g1 = part[2]
            part[1] = BallEngine(shell_sampling(p.sampling, g0, g1), p.order, p.dtype,
                                 owner.devices[part[0]], p._budget)
        return part[1]

    def forward(self, owner: Replicas, x: Any, kind: ArrayKind) -> Zernike3DMoments:
        """The moments of ``x``: each device computes the partial moments of its shell, and
        their sum is gathered on the first device."""
        r0 = self.plan
        flat, _kind, batch = r0._volumes(x)  # checked (shape, NaN, complex) by the plan
        parts = owner.parts()

        def work(slot: int) -> torch.Tensor:
            eng = self._engine(owner, slot)
            return eng.forward(to_device(flat, owner.devices[parts[slot][0]]))

        res = run_parts([owner.devices[p[0]] for p in parts],
                        [functools.partial(work, s) for s in range(len(parts))],
                        what=f"3-D Zernike moments of order {r0.order} split over "
                             f"{len(parts)} devices")
        dev0 = owner.devices[0]
        total = res[0].to(dev0).clone()
        for r in res[1:]:
            total += r.to(dev0)
        settle(dev0)
        return Zernike3DMoments(total.reshape(*batch, -1), owner, kind)

    def _recon_shells(self, owner: Replicas) -> list[list[Any]]:
        """``[device entry, engine or None, (g0, g1)]``: the shells of the voxel centres."""
        if self._recon_parts is None:
            p = self.plan
            s = p.recon_engine().sampling
            costs = group_costs(s, p.order, p.engine.stages == "ring-gemm")
            self._recon_parts = [[i, None, piece] for i, piece in
                                 enumerate(contiguous_blocks(costs, len(owner.devices)))]
        return self._recon_parts

    def synthesize(self, owner: Replicas, coef: torch.Tensor,
                   progress: bool | None = None) -> torch.Tensor:
        """Volumes ``(B, D, H, W)`` from ``(B, K)`` coefficients (as
        :meth:`Zernike3DTransform.synthesize`): volumes spread over the devices, or (fewer
        volumes than devices) the sum of the shells' partial volumes, on the first device."""
        r0 = self.plan
        b = coef.shape[0]
        dev0 = owner.devices[0]
        mode = owner.mode("auto", b)
        if mode == "one":
            return owner.replica(0).synthesize(coef.to(dev0), progress)
        if mode == "batch":
            spans = even_splits(b, len(owner.devices))

            def piece(i: int, a: int, z: int) -> torch.Tensor:
                return owner.replica(i).synthesize(coef[a:z].to(owner.devices[i]))

            res = run_parts(owner.devices[:len(spans)],
                            [functools.partial(piece, i, a, z) for i, (a, z) in
                             enumerate(spans)], what="3-D Zernike reconstruction")
            return gather_tensors(res, dev0)
        parts = self._recon_shells(owner)
        s = r0.recon_engine().sampling

        def shell(slot: int) -> torch.Tensor:
            part = parts[slot]
            dev = owner.devices[part[0]]
            if part[1] is None:
                g0, g1 = part[2]
                part[1] = BallEngine(shell_sampling(s, g0, g1), r0.order, r0.dtype, dev,
                                     r0._budget)
            eng = part[1]
            return eng.scatter(eng.synthesize(coef.to(dev)))

        res = run_parts([owner.devices[p[0]] for p in parts],
                        [functools.partial(shell, i) for i in range(len(parts))],
                        what="3-D Zernike partial reconstruction")
        total = res[0].to(dev0).clone()
        for r in res[1:]:
            total += r.to(dev0)
        settle(dev0)
        return total.reshape(-1, *r0.shape)
