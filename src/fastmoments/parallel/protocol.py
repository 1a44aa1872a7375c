"""What a plan tells :class:`~fastmoments.parallel.ParallelPlan` so that one job can be split.

A batch of at least as many items as devices is always spread by items: every plan can do
that, since each replica runs its own ``forward``. Spreading the work of *one* job (fewer
items than devices) needs the family: which pieces its moment set falls into, what each
costs, how to compute a piece on a device and how to put the pieces together. A family says
so with an object of the :class:`WorkSplit` protocol, handed to
:func:`~fastmoments.parallel.multi_device` as ``split=``; this package imports no family.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import torch

from .._array import ArrayKind

__all__ = ["Replicas", "WorkSplit"]


class Replicas(Protocol):
    """What a :class:`WorkSplit` may use of the parallel plan that runs it."""

    devices: tuple[torch.device, ...]

    def replica(self, i: int) -> Any:
        """The plan replica of device entry ``i``."""

    def parts(self) -> list[list[Any]]:
        """The partition of one job: ``[device entry, slot for the family's cache, piece]``."""

    def arguments(self) -> dict[str, Any]:
        """The plan constructor's arguments by name (``device`` excluded)."""

    def mode(self, split: str, batch: int) -> str:
        """How ``batch`` items run: ``"one"`` (first device), ``"batch"`` or ``"work"``."""

    def batched(self, method: str, x: Any, core: int, kind: ArrayKind | None = None,
                **options: Any) -> Any:
        """Run a replica method on pieces of the flattened batch and gather the results."""


class WorkSplit(Protocol):
    """How one job of a plan is split over devices (built from the plan's first replica).

    Attributes
    ----------
    core_ndim : int
        Trailing dimensions of one input item (2 for images, 3 for volumes).
    coef_ndim : int
        Trailing dimensions of one item's coefficients.
    min_cost : float
        Smallest modelled cost of a job (units of :meth:`item_cost`) that ``split="auto"``
        spreads over the devices; smaller jobs run on the first device.
    """

    core_ndim: int
    coef_ndim: int
    min_cost: float

    def item_cost(self) -> float:
        """Modelled cost of the work of one item (:mod:`fastmoments.parallel.partition`)."""

    def pieces(self, n: int) -> Sequence[Any]:
        """The moment set cut into ``n`` pieces of about equal cost."""

    def forward(self, owner: Replicas, x: Any, kind: ArrayKind) -> Any:
        """The moments of ``x``, each device computing the pieces of :meth:`Replicas.parts`
        given to it, gathered on the first device."""
