"""One box transform over several devices: the moment set cut into blocks of first-axis degrees.

The :class:`~fastmoments.parallel.protocol.WorkSplit` of the box plans. A block of degrees
``p`` in ``[a, z)`` takes a slice of the first analysis matrix (and, under total-degree
truncation, only the later degrees that ``a`` leaves); blocks are contiguous and cut at equal
modelled cost (:func:`~fastmoments.parallel.partition.box_degree_costs`). The moments are
gathered on the first device; a reconstruction is the sum of the blocks' reconstructions.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import torch

from .._array import ArrayKind, as_tensor
from ..parallel.partition import box_degree_costs, contiguous_blocks
from ..parallel.plans import finish, for_replica
from ..parallel.protocol import Replicas
from ..parallel.runner import gather_tensors, run_parts, settle, to_device
from .moments import BoxMoments

__all__ = ["BoxSplit"]


class BoxSplit:
    """The work split of a box plan (``plan`` is the first replica).

    Attributes
    ----------
    min_cost : float
        Smallest modelled job cost that ``split="auto"`` spreads over the devices: about
        10 ms of work on one H200 (``benchmarks/multigpu.py``, results in
        ``benchmarks/results/multigpu.md``: smaller jobs ran slower split than on one GPU).
    """

    min_cost = 1e12

    def __init__(self, plan: Any) -> None:
        self.plan = plan
        self.core_ndim = plan.ndim
        self.coef_ndim = plan.ndim

    def _costs(self) -> list[float]:
        p = self.plan
        return box_degree_costs(p.shape, p.order, p.total)

    def item_cost(self) -> float:
        """Modelled cost of one item's moment set."""
        return sum(self._costs())

    def pieces(self, n: int) -> list[tuple[int, int]]:
        """``[start, stop)`` blocks of first-axis degrees of ``n`` devices, equal in cost."""
        return contiguous_blocks(self._costs(), n)

    def forward(self, owner: Replicas, x: Any, kind: ArrayKind) -> BoxMoments:
        """The moments of ``x``: each device computes its block of first-axis degrees."""
        r0 = self.plan
        nd = r0.ndim
        t, _ = as_tensor(x, "x", min_ndim=nd, dtype=r0.dtype)  # validates on the host side
        if tuple(t.shape[-nd:]) != r0.shape:
            return r0.forward(x)  # the plan's own error
        lead = tuple(t.shape[:-nd])
        flat = t.reshape(-1, *r0.shape)
        parts = owner.parts()

        def work(slot: int) -> torch.Tensor:
            i, _, (a, z) = parts[slot]
            rep = owner.replica(i)
            lim = _limit(rep, a, rep.order)  # total degree: later axes stop at order - a
            mats = rep.analysis_matrices()
            xt = to_device(flat, owner.devices[i]).to(rep.dtype)
            y = _contract(xt, [mats[0][a:z], *(mt[:lim] for mt in mats[1:])], analysis=True)
            mask = rep.outside()
            if mask is not None:
                y = y.masked_fill(mask[(slice(a, z),) + (slice(0, lim),) * (nd - 1)], 0)
            full = y.new_zeros(y.shape[0], z - a, *r0.coef_shape[1:])
            full[(slice(None), slice(None)) + (slice(0, lim),) * (nd - 1)] = y
            return full

        res = run_parts([owner.devices[p[0]] for p in parts],
                        [functools.partial(work, s) for s in range(len(parts))],
                        what=f"moments of order {r0.order} split over {len(parts)} devices")
        dev0 = owner.devices[0]
        data = gather_tensors(res, dev0, dim=1)
        return BoxMoments(data.reshape(*lead, *r0.coef_shape), owner, kind)

    def inverse(self, owner: Replicas, coeffs: Any, *, order: int | None = None,
                region: Any = None, **options: Any) -> Any:
        """Box reconstruction: batches split over the devices, or (fewer items than
        devices) the sum of the reconstructions from each device's block of degrees.

        A ``region=`` or any other option of the plan's ``inverse`` (``clip=``, ``fill=``)
        runs on the first device."""
        r0 = self.plan
        if region is not None or options:
            return r0.inverse(for_replica(coeffs, r0), order=order, region=region, **options)
        c, kind = r0._coeffs(for_replica(coeffs, r0), "coeffs")
        nd = r0.ndim
        lead = tuple(c.shape[:-nd])
        b = math.prod(lead)
        mode = owner.mode("auto", b)
        if mode == "one":
            return r0.inverse(c if kind.numpy is False else coeffs, order=order)
        if mode == "batch":
            return owner.batched("inverse", c, nd, kind, order=order)
        m = r0.order if order is None else order
        flat = c.reshape(b, *r0.coef_shape)
        parts = owner.parts()

        def work(slot: int) -> torch.Tensor:
            i, _, (a, z) = parts[slot]
            rep = owner.replica(i)
            lim = _limit(rep, a, m)
            mats = [s[:lim] for s in rep.synthesis_matrices()]
            cut = (slice(a, z),) + (slice(0, lim),) * (nd - 1)
            ct = flat[(slice(None), *cut)].to(owner.devices[i])
            mask = rep.outside(m)
            if mask is not None:
                ct = ct.masked_fill(mask[cut], 0)
            return _contract(ct, [rep.synthesis_matrices()[0][a:z], *mats[1:]], analysis=False)

        res = run_parts([owner.devices[p[0]] for p in parts],
                        [functools.partial(work, s) for s in range(len(parts))],
                        what="partial reconstruction")
        dev0 = owner.devices[0]
        total = res[0].to(dev0).clone()
        for r in res[1:]:
            total += r.to(dev0)
        settle(dev0)
        return finish(total.reshape(*lead, *r0.shape), kind)


def _limit(plan: Any, first: int, order: int) -> int:
    """Degrees needed on the later axes for a block starting at degree ``first``."""
    if plan.total:
        return max(1, min(plan.order, order) - first + 1)
    return plan.order + 1


_LETTERS = "pqr"
_AXES = "zyx"


def _contract(t: torch.Tensor, mats: list[torch.Tensor], analysis: bool) -> torch.Tensor:
    """Separable products: analysis ``(b, *shape) -> (b, *degrees)`` with ``mats[k]`` of shape
    ``(degrees_k, n_k)``; synthesis the transpose, one axis at a time."""
    nd = len(mats)
    deg, pix = _LETTERS[:nd], _AXES[-nd:]
    for k in range(nd):
        if analysis:
            src = "b" + deg[:k] + pix[k:]
            dst = "b" + deg[:k + 1] + pix[k + 1:]
            t = torch.einsum(f"{deg[k]}{pix[k]},{src}->{dst}", mats[k], t)
        else:
            j = nd - 1 - k  # last axis first
            src = "b" + deg[:j + 1] + pix[j + 1:]
            dst = "b" + deg[:j] + pix[j:]
            t = torch.einsum(f"{deg[j]}{pix[j]},{src}->{dst}", mats[j], t)
    return t
