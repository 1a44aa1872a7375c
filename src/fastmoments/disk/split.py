"""One disk transform over several devices: the moment set cut into columns of repetitions.

The :class:`~fastmoments.parallel.protocol.WorkSplit` of the disk plans. A column (one
repetition and all its orders) is independent of the others, so any set of columns is a
valid piece; columns are balanced by their modelled cost
(:func:`~fastmoments.parallel.partition.disk_column_costs`). Each device runs a plan of its
own columns (built once, on first use), the moments are gathered on the first device, and a
reconstruction is the sum of the partial reconstructions.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import torch

from .._array import ArrayKind
from ..parallel.partition import balance, disk_column_costs, even_splits
from ..parallel.protocol import Replicas
from ..parallel.runner import gather_tensors, run_parts, settle, to_device
from .indexing import IndexSet

__all__ = ["DiskSplit"]


class DiskSplit:
    """The work split of a disk plan (``plan`` is the first replica).

    Attributes
    ----------
    min_cost : float
        Smallest modelled job cost that ``split="auto"`` spreads over the devices: about
        10 ms of work on one H200 (``benchmarks/multigpu.py``, results in
        ``benchmarks/results/multigpu.md``: smaller jobs ran slower split than on one GPU).
    """

    core_ndim = 2
    coef_ndim = 2
    min_cost = 1e10

    def __init__(self, plan: Any) -> None:
        self.plan = plan

    def _costs(self) -> list[float]:
        s = self.plan.sampling
        return disk_column_costs([len(c) for c in self.plan.index.ns], s.n_groups, s.n_orbits)

    def item_cost(self) -> float:
        """Modelled cost of one image's moment set."""
        return sum(self._costs())

    def pieces(self, n: int) -> list[list[int]]:
        """The columns of each of ``n`` devices, balanced by cost."""
        return balance(self._costs(), n)

    def _partial(self, owner: Replicas, slot: int) -> Any:
        """The plan of the columns of part ``slot`` on its device (built once, then kept)."""
        part = owner.parts()[slot]
        if part[1] is None:
            index = self.plan.index
            cols = part[2]
            sub = IndexSet(tuple(index.ms[c] for c in cols), tuple(index.ns[c] for c in cols))
            plan = self.plan.partial_plan(sub, owner.devices[part[0]], owner.arguments())
            if plan.index.ms != sub.ms or plan.index.ns != sub.ns:  # pragma: no cover - guard
                raise RuntimeError("a partial plan's index does not match its columns")
            part[1] = plan
        return part[1]

    def forward(self, owner: Replicas, x: Any, kind: ArrayKind) -> Any:
        """The moments of ``x``: each device computes its columns, gathered on the first."""
        r0 = self.plan
        parts = owner.parts()

        def work(slot: int) -> Any:
            plan = self._partial(owner, slot)
            return plan.forward(to_device(x, owner.devices[parts[slot][0]]))

        res = run_parts([owner.devices[p[0]] for p in parts],
                        [functools.partial(work, s) for s in range(len(parts))],
                        what=f"{r0.index.size} moments split over {len(parts)} devices")
        dev0 = owner.devices[0]
        d0 = res[0].data
        lead = tuple(d0.shape[:-2])
        full = torch.zeros(*lead, r0.index.n_cols, r0.index.n_rows, dtype=d0.dtype,
                           device=dev0)
        for (_, _, cols), m in zip(parts, res, strict=True):
            c = torch.as_tensor(cols, device=dev0)
            full[..., c, :m.data.shape[-1]] = m.data.to(dev0)
        settle(dev0)
        out = copy.copy(res[0])
        out._data = full
        out.plan = owner
        out.kind = kind
        return out

    def synthesize(self, owner: Replicas, coef: torch.Tensor,
                   gamma: torch.Tensor) -> torch.Tensor:
        """Reconstruction from ``(B, cols, rows)`` coefficients: batches split over the
        devices, or (fewer images than devices) the sum of the partial reconstructions of the
        column parts, gathered on the first device."""
        b = coef.shape[0]
        dev0 = owner.devices[0]
        mode = owner.mode("auto", b)
        if mode == "one":
            return owner.replica(0).synthesize(coef.to(dev0), gamma.to(dev0))
        if mode == "batch":
            spans = even_splits(b, len(owner.devices))

            def piece(i: int, a: int, z: int) -> torch.Tensor:
                dev = owner.devices[i]
                return owner.replica(i).synthesize(coef[a:z].to(dev), gamma.to(dev))

            res = run_parts(owner.devices[:len(spans)],
                            [functools.partial(piece, i, a, z) for i, (a, z) in
                             enumerate(spans)], what="reconstruction")
            return gather_tensors(res, dev0)
        parts = owner.parts()

        def partial(slot: int) -> torch.Tensor:
            plan = self._partial(owner, slot)
            dev = owner.devices[parts[slot][0]]
            cols = torch.as_tensor(parts[slot][2], device=coef.device)
            c = coef[:, cols, :plan.index.n_rows].to(dev)
            return plan.synthesize(c, gamma[cols.to(gamma.device)].to(dev))

        res = run_parts([owner.devices[p[0]] for p in parts],
                        [functools.partial(partial, s) for s in range(len(parts))],
                        what="partial reconstruction")
        total = res[0].to(dev0).clone()
        for r in res[1:]:
            total += r.to(dev0)
        settle(dev0)
        return total
