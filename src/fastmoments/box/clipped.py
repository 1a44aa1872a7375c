"""Clipped reconstruction of box moments: the part of a volume on one side of planes.

:meth:`fastmoments.box.JacobiTransform.inverse` with ``clip=`` reconstructs only the voxels
the planes keep: the geometry (which boxes and slabs hold the kept voxels, and the mask of
each) is :mod:`.clip`; here those boxes are reconstructed from the moments and put together,
the voxels clipped away set to ``fill``.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any

import torch

from .._memory import format_bytes
from .clip import as_planes, clip_boxes

if TYPE_CHECKING:
    from .plan import JacobiTransform

__all__ = ["check_clip", "is_nan", "reconstruct"]


def is_nan(value: Any) -> bool:
    """Whether ``value`` is a real number that is NaN (the default ``fill``)."""
    return (not isinstance(value, bool) and isinstance(value, numbers.Real)
            and math.isnan(value))


def check_clip(plan: JacobiTransform, clip: Any, fill: Any) -> tuple[Any, ...]:
    """The planes of ``clip`` for :meth:`JacobiTransform.inverse`, checked with ``fill``.

    Raises
    ------
    TypeError
        If ``fill`` is not a real number, or ``clip`` is not planes or numbers.
    ValueError
        If ``fill`` is given without ``clip``, the moments are 2-D, or a plane is invalid.
    """
    if isinstance(fill, bool) or not isinstance(fill, numbers.Real):
        raise TypeError(f"fill must be a real number (NaN allowed), got "
                        f"{type(fill).__name__} {fill!r}")
    if clip is None:
        raise ValueError(f"fill={fill!r} is the value of clipped voxels and needs clip "
                         "(planes); without clip nothing is filled")
    if plan.ndim != 3:
        raise ValueError(f"clip needs 3-D moments (a volume (D, H, W)), got {plan.ndim}-D "
                         f"moments of shape {plan.shape}; use region= for part of an image")
    return as_planes(clip, "clip")

def reconstruct(plan: JacobiTransform, c: torch.Tensor, order: int, region: Any,
                planes: tuple[Any, ...], fill: float) -> torch.Tensor:
    """The volume (or ``region``) of the coefficients ``c`` at ``order`` with the voxels
    outside ``planes`` set to ``fill``: only the bounding box of the kept voxels (split into
    slabs where that pays, :func:`~.clip.clip_boxes`) is reconstructed.

    Raises
    ------
    MemoryError
        If the clipped output does not fit the plan's memory budget (said before
        allocating).
    """
    ranges, drop = plan._ranges(plan._region(region))
    frame = [range(n) if r is None else r for n, r in zip(plan.shape, ranges, strict=True)]
    batch = tuple(c.shape[:-plan.ndim])
    fshape = [len(r) for r in frame]
    voxels = math.prod(fshape)
    item = torch.finfo(plan.dtype).bits // 8
    # the output, one box's reconstruction and its masked copy (each at most the output),
    # the box's mask (bytes) and the rows' bounds (a few float64/int64 per row along W)
    need = 3 * math.prod(batch) * voxels * item + voxels + 48 * fshape[0] * fshape[1]
    budget = plan._budget_or_none(need)
    if budget is not None and need > budget:
        raise MemoryError(
            f"a clipped reconstruction of {batch + tuple(fshape)} voxels needs at least "
            f"{format_bytes(need)} but the budget is {format_bytes(budget)}; clip a region "
            "(region=), fewer volumes at a time, or raise memory_budget")
    boxes: list[Any] = []
    if math.prod(batch) > 0:
        # each call re-reads and copies the coefficient blocks: about one voxel's work
        # per coefficient (measured: slabs lost to one box below that)
        axis, boxes, rows, hull = clip_boxes(plan.shape, planes, ranges=frame,
                                             call_cost=float(plan.order + 1) ** 3,
                                             device=plan.device)
        if boxes:
            assert hull is not None
            perm = _contraction_order(axis, hull, fshape)
            outside = plan.outside(order)
            if outside is not None:           # once, not once per box
                c = c.masked_fill(outside, 0.0)
            # the coefficient axes in contraction order (the total-degree set and the box
            # set are symmetric in the axes), once for every box
            nb = len(batch)
            c = c.permute(*range(nb), *(nb + a for a in perm)).contiguous()
    whole = [(0, n) for n in fshape]
    if len(boxes) == 1 and list(boxes[0]) == whole:
        out = None                            # the box is the frame: no copy
    else:
        out = torch.full((*batch, *fshape), fill, dtype=plan.dtype, device=plan.device)
    for box in boxes:
        sub = tuple(_as_slice(frame[ax][a:b], n)
                    for ax, ((a, b), n) in enumerate(zip(box, plan.shape, strict=True)))
        rec = _synth_box(plan, c, order, sub, perm)
        if not rows.full(box):
            rec.masked_fill_(rows.outside(box), fill)
        if out is None:
            out = rec
        else:
            out[(Ellipsis, *(slice(a, b) for a, b in box))] = rec
    assert out is not None
    for ax in sorted(drop, reverse=True):
        out = out.squeeze(len(batch) + ax)
    return out

def _synth_box(plan: JacobiTransform, c: torch.Tensor, order: int,
               region: tuple[slice, ...], perm: tuple[int, ...]) -> torch.Tensor:
    """Reconstruct the box ``region`` (slices in array axis order) from coefficients
    already masked to the set and permuted to the contraction order ``perm``."""
    ops, out_shape, _drop = plan._ops(plan._synthesis, region)
    ops = [ops[a] for a in perm]
    batch = tuple(c.shape[:-plan.ndim])
    b = math.prod(batch)
    flat = c.reshape(b, *plan.coef_shape)
    step = plan._chunk(b, order)
    parts = [plan._run("inverse", flat[i:i + step], ops, order, None)
             for i in range(0, b, step)]
    out = parts[0] if len(parts) == 1 else torch.cat(parts)
    back = [perm.index(a) for a in range(plan.ndim)]
    out = out.permute(0, *(1 + a for a in back))
    return out.reshape(*batch, *out_shape)


def _contraction_order(axis: int, hull: Any, frame: list[int]) -> tuple[int, ...]:
    """Axes in the order the synthesis contracts them: ``axis`` (the slab axis, which the box
    shrinks most) first, then the others by how much the box shrinks them. The first
    products of the engine cost the most per output voxel (measured: a region of a quarter
    of the first axis took 0.45 of the full time, a quarter of the last 0.86, 128^3 at
    order 100 on one CPU thread), so the largest cut goes first."""
    rest = sorted((a for a in range(3) if a != axis),
                  key=lambda a: ((hull[a][1] - hull[a][0]) / frame[a], a))
    return (axis, *rest)


def _as_slice(r: range, n: int) -> slice:
    """A ``range`` of indices on an axis of ``n`` as the slice that selects it."""
    if r == range(n):
        return slice(None)
    return slice(r.start, r.stop if r.stop >= 0 else None, r.step)
