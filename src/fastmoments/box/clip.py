r"""Clipping planes for 3-D reconstructions: half-spaces, their voxel masks and bounding boxes.

A :class:`Plane` is the set :math:`\{\mathbf x : \mathbf n\cdot\mathbf x = d\}` in the volume's
normalised coordinates, and clipping by it keeps the voxels whose centre satisfies
:math:`\mathbf n\cdot\mathbf x \le d` (``keep='below'``) or :math:`\ge d` (``keep='above'``);
several planes keep the intersection of their half-spaces (the thesis's clipped volumes,
``jacobi-3d-gpu-thesis`` Sec. 6.2, Figs. 17 and 19, where each plane is written as an equation
such as :math:`-x + y + z = c`).

**Coordinates.** The box convention of :mod:`fastmoments.box.plan`: for an axis of ``N``
voxels, voxel ``i`` covers :math:`[-1 + 2i/N, -1 + 2(i+1)/N]` and its centre is
:math:`-1 + (2i + 1)/N`. A volume ``(D, H, W)`` has ``z`` along D, ``y`` along H and ``x``
along W (as :data:`fastmoments.box.moments.PLANES`), and a normal is written ``(nx, ny, nz)``.
So ``Plane((1, 0, 0), -0.5)`` keeps the voxels with :math:`x \le -0.5`, the first quarter of
the W axis.

**Reconstruction cost.** The reconstruction is separable, one GEMM per axis, while a plane
mask is not. Clipping therefore reconstructs boxes and masks them (:class:`Rows` holds the kept
voxels as one interval per row along W, so the mask costs :math:`O(DH)` to describe and one
comparison per voxel of a box to apply): only the bounding box of the kept voxels is
reconstructed, through the ``region=`` path of
:meth:`~fastmoments.box.plan.JacobiTransform.inverse`, and voxels outside it are never computed.
The engine's first products cost the most per output voxel, so the axis that the box shrinks
most (relative to the volume) is contracted first (the coefficients are permuted once; the
total-degree set is symmetric in the axes). The box may further be split into 2, 4 or 8 slabs
along that axis, each cut to its own kept voxels: slabs repeat no product, but each call
copies the coefficient blocks again, so slabs are used only when the voxels they save exceed
:math:`(\text{order}+1)^3` per extra call. Fractions of a 64^3 volume's voxels that are kept /
inside the bounding box / in the best slabs without that call cost (:func:`clip_boxes`,
``call_cost=0``): :math:`x \le -0.5` 0.25 / 0.25 / 0.25; the corner cut
:math:`x + y + z \le -1.5` 0.070 / 0.40 / 0.16; :math:`x + y + z \le 0` through the centre
0.50 / 1.0 / 0.83. A plane through the centre at an oblique angle thus saves little; a plane
that cuts an axis saves in proportion.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._validate import check_choice

__all__ = ["KEEPS", "SLABS", "TOLERANCE", "Plane", "Rows", "as_planes",
           "clip_boxes", "clip_mask", "clip_region", "clip_rows"]

#: The sides a plane can keep: ``'below'`` keeps :math:`n\cdot x \le d`, ``'above'`` keeps
#: :math:`n\cdot x \ge d`.
KEEPS = ("below", "above")

#: A voxel centre within this distance of a plane (in normalised coordinates, with the unit
#: normal) counts as on the plane, and is kept on either side. Voxel centres that lie on the
#: plane in exact arithmetic are thus kept whatever the rounding of :math:`n\cdot x`; it is
#: 5e-7 of a voxel on an axis of 1000 voxels (voxels are 2/N wide).
TOLERANCE = 1e-9

#: The most slabs a clipped reconstruction is split into (see the module notes).
SLABS = 8




def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


@dataclass(frozen=True, init=False)
class Plane:
    r"""A clipping plane :math:`\mathbf n\cdot\mathbf x = d` and the side of it that is kept.

    Parameters
    ----------
    normal : sequence of 3 real numbers
        ``(nx, ny, nz)``, any non-zero vector: ``x`` runs along W, ``y`` along H and ``z``
        along D of a ``(D, H, W)`` volume.
    offset : float
        ``d`` in the equation as written. Both ``normal`` and ``offset`` are divided by
        :math:`|\mathbf n|`, so ``Plane((2, 0, 0), 1)`` is the plane ``x = 0.5``; with a unit
        normal ``d`` is the signed distance of the plane from the volume's centre, in the
        normalised coordinates (the volume spans ``[-1, 1]`` on every axis).
    keep : {'below', 'above'}
        Keep the voxels with :math:`\mathbf n\cdot\mathbf x \le d` (default) or
        :math:`\ge d`. Voxel centres on the plane (within :data:`TOLERANCE`) are kept either
        way.

    Attributes
    ----------
    normal : tuple of 3 floats
        The unit normal.
    offset : float
        The offset for the unit normal (the signed distance from the centre).
    keep : str

    Raises
    ------
    TypeError
        If ``normal`` is not a sequence of real numbers or ``offset`` is not a real number
        (bools and strings included).
    ValueError
        If ``normal`` does not have 3 entries, is zero, or holds NaN or infinity; if
        ``offset`` is not finite; if ``keep`` is not one of :data:`KEEPS`.

    Examples
    --------
    >>> p = Plane((0, 3, 4), 10.0)
    >>> p.normal, p.offset
    ((0.0, 0.6, 0.8), 2.0)
    >>> Plane((1, 0, 0), -0.5, keep="above")
    Plane(normal=(1.0, 0.0, 0.0), offset=-0.5, keep='above')
    """

    normal: tuple[float, float, float]
    offset: float
    keep: str

    def __init__(self, normal: Any, offset: Any, *, keep: str = "below") -> None:
        if isinstance(normal, (torch.Tensor, np.ndarray)):
            if normal.ndim != 1:
                raise ValueError(f"normal must be 3 numbers (nx, ny, nz), got an array of shape "
                                 f"{tuple(normal.shape)}")
            normal = normal.tolist()
        if isinstance(normal, (str, bytes)) or not isinstance(normal, Sequence):
            raise TypeError(f"normal must be a sequence of 3 real numbers (nx, ny, nz), got "
                            f"{type(normal).__name__} {normal!r}")
        if len(normal) != 3:
            raise ValueError(f"normal must have 3 entries (nx, ny, nz), got {len(normal)}: "
                             f"{tuple(normal)!r}")
        n = [_real(f"normal[{i}]", v) for i, v in enumerate(normal)]
        d = _real("offset", offset)
        check_choice("keep", keep, KEEPS)
        big = max(abs(v) for v in n)
        if big == 0.0:
            raise ValueError(f"normal must be a non-zero vector, got {tuple(normal)!r}")
        # scale by the largest entry first so that neither the norm nor d / |n| overflows
        n = [v / big for v in n]
        length = math.sqrt(sum(v * v for v in n))
        object.__setattr__(self, "normal", tuple(v / length for v in n))
        object.__setattr__(self, "offset", d / big / length)
        object.__setattr__(self, "keep", keep)

    def __repr__(self) -> str:
        return f"Plane(normal={self.normal}, offset={self.offset}, keep={self.keep!r})"

    @property
    def axis_coefficients(self) -> tuple[float, float, float]:
        """The unit normal in array axis order ``(D, H, W)``: ``(nz, ny, nx)``."""
        nx, ny, nz = self.normal
        return (nz, ny, nx)

    def equation(self, digits: int = 2) -> str:
        """The kept half-space as text, e.g. ``'-0.58x + 0.58y + 0.58z <= 0'``.

        Examples
        --------
        >>> Plane((1, 0, 0), -0.5).equation()
        'x <= -0.5'
        """
        terms = []
        for c, name in zip(self.normal, "xyz", strict=True):
            c = round(c, digits)
            if c == 0:
                continue
            mag = "" if abs(c) == 1 else f"{abs(c):g}"
            sign = "-" if c < 0 else "+"
            terms.append(f"{sign} {mag}{name}" if terms else f"{'-' if c < 0 else ''}{mag}{name}")
        op = "<=" if self.keep == "below" else ">="
        return f"{' '.join(terms)} {op} {round(self.offset, digits) + 0.0:g}"


def as_planes(clip: Any, name: str = "clip") -> tuple[Plane, ...]:
    """Read ``clip`` as planes: a :class:`Plane`, 4 numbers ``(nx, ny, nz, d)``, or a sequence
    of them (intersected). An empty sequence clips nothing.

    Raises
    ------
    TypeError
        If ``clip`` (or one of its entries) is neither a plane nor 4 real numbers.
    ValueError
        If a plane's entries are invalid (see :class:`Plane`) or 4 numbers are not 4.

    Examples
    --------
    >>> as_planes((1, 0, 0, 0.5))
    (Plane(normal=(1.0, 0.0, 0.0), offset=0.5, keep='below'),)
    >>> len(as_planes([Plane((1, 1, 0), 0), (0, 0, 1, -0.2)]))
    2
    """
    if isinstance(clip, Plane):
        return (clip,)
    if isinstance(clip, (torch.Tensor, np.ndarray)):
        clip = clip.tolist()
    if isinstance(clip, (str, bytes)) or not isinstance(clip, Sequence):
        raise TypeError(f"{name} must be a Plane, 4 numbers (nx, ny, nz, d) or a sequence of "
                        f"them, got {type(clip).__name__} {clip!r}")
    if len(clip) and not _plane_like(clip[0]):
        return (_from_numbers(clip, name),)           # 4 numbers (checked there)
    out = []
    for i, entry in enumerate(clip):
        if isinstance(entry, Plane):
            out.append(entry)
        elif _plane_like(entry):
            entry = entry.tolist() if isinstance(entry, (torch.Tensor, np.ndarray)) else entry
            out.append(_from_numbers(entry, f"{name}[{i}]"))
        else:
            raise TypeError(f"{name}[{i}] must be a Plane or 4 numbers (nx, ny, nz, d), got "
                            f"{type(entry).__name__} {entry!r}")
    return tuple(out)


def _plane_like(entry: Any) -> bool:
    """Whether ``entry`` reads as one plane (not as a number of a plane)."""
    return isinstance(entry, (Plane, torch.Tensor, np.ndarray)) or (
        isinstance(entry, Sequence) and not isinstance(entry, (str, bytes)))


def _from_numbers(values: Sequence[Any], name: str) -> Plane:
    if len(values) != 4:
        raise ValueError(f"{name} must be 4 numbers (nx, ny, nz, d) or a Plane, got "
                         f"{len(values)} entries: {tuple(values)!r}")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name}[{i}] must be a real number, got {type(v).__name__} {v!r}")
    try:
        return Plane(values[:3], values[3])
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}") from None


def _centres(n: int, idx: Sequence[int] | range, device: Any) -> torch.Tensor:
    """Normalised voxel centres ``-1 + (2i + 1)/n`` (float64) of the indices ``idx``."""
    if isinstance(idx, range):
        i = torch.arange(idx.start, idx.stop, idx.step, dtype=torch.float64, device=device)
    else:
        i = torch.as_tensor(list(idx), dtype=torch.float64, device=device)
    return (2.0 * i + 1.0) / n - 1.0


@dataclass(frozen=True)
class Rows:
    r"""The kept voxels as one interval per row along W: ``lo[z, y] <= k < hi[z, y]``.

    ``k`` counts positions in the frame (the ``ranges`` along W); a row keeps nothing when
    ``lo >= hi``. A half-space cuts every straight line in an interval, so an intersection of
    half-spaces does too: the rows describe the kept set exactly, with
    :math:`O(D H)` numbers and without evaluating :math:`\mathbf n\cdot\mathbf x` voxel by
    voxel.
    """

    lo: torch.Tensor
    hi: torch.Tensor
    width: int

    def kept(self) -> torch.Tensor:
        """Whether each row keeps a voxel, ``(D, H)``."""
        return self.lo < self.hi

    def full(self, box: Sequence[tuple[int, int]]) -> bool:
        """Whether every voxel of ``box`` is kept (then no mask is needed)."""
        (z0, z1), (y0, y1), (x0, x1) = box
        return bool(((self.lo[z0:z1, y0:y1] <= x0) & (self.hi[z0:z1, y0:y1] >= x1)).all())

    def _box(self, box: Sequence[tuple[int, int]] | None) -> tuple[Any, Any, Any]:
        if box is None:
            box = ((0, self.lo.shape[0]), (0, self.lo.shape[1]), (0, self.width))
        (z0, z1), (y0, y1), (x0, x1) = box
        k = torch.arange(x0, x1, device=self.lo.device)
        return k, self.lo[z0:z1, y0:y1, None], self.hi[z0:z1, y0:y1, None]

    def mask(self, box: Sequence[tuple[int, int]] | None = None) -> torch.Tensor:
        """The boolean mask of the kept voxels, of the whole frame or of ``box``."""
        k, lo, hi = self._box(box)
        return (k >= lo) & (k < hi)

    def outside(self, box: Sequence[tuple[int, int]] | None = None) -> torch.Tensor:
        """The complement of :meth:`mask`: the voxels clipped away."""
        k, lo, hi = self._box(box)
        return (k < lo) | (k >= hi)


def clip_rows(shape: Sequence[int], planes: Any, *, ranges: Sequence[range] | None = None,
              device: Any = None) -> Rows:
    r"""The kept voxels of ``planes`` as one interval per row along W (see :class:`Rows`).

    For a plane kept below (``s = 1``; ``s = -1`` above) the voxel with centre
    :math:`(x, y, z)` is kept iff :math:`s n_x x \le b(y, z) = s d + \epsilon - s(n_y y +
    n_z z)`, with :math:`\epsilon` = :data:`TOLERANCE`: for :math:`s n_x > 0` that is
    :math:`x \le b/(s n_x)`, for :math:`s n_x < 0` it is :math:`x \ge b/(s n_x)`, and for
    :math:`n_x = 0` the whole row or nothing. The bounds of all planes are intersected and
    turned into positions by a binary search in the (monotone) centres of the frame.
    """
    planes = as_planes(planes, "planes")
    shape = tuple(shape)
    ranges = [range(n) for n in shape] if ranges is None else list(ranges)
    z, y, x = (_centres(n, r, device) for n, r in zip(shape, ranges, strict=True))
    rows = (len(z), len(y))
    lo_val = torch.full(rows, -math.inf, dtype=torch.float64, device=device)
    hi_val = torch.full(rows, math.inf, dtype=torch.float64, device=device)
    for p in planes:
        s = 1.0 if p.keep == "below" else -1.0
        cz, cy, cx = p.axis_coefficients
        b = (s * p.offset + TOLERANCE) - s * (cz * z[:, None] + cy * y[None, :])
        a = s * cx
        if a > 0:
            hi_val = torch.minimum(hi_val, b / a)
        elif a < 0:
            lo_val = torch.maximum(lo_val, b / a)
        else:
            hi_val = torch.where(b >= 0, hi_val, -math.inf)
    width = len(x)
    flip = width > 1 and ranges[2].step < 0
    xs = x.flip(0) if flip else x
    lo = torch.searchsorted(xs, lo_val.reshape(-1), side="left").reshape(rows)
    hi = torch.searchsorted(xs, hi_val.reshape(-1), side="right").reshape(rows)
    if flip:
        lo, hi = width - hi, width - lo
    return Rows(lo, hi, width)


def clip_mask(shape: Sequence[int], planes: Any, *, ranges: Sequence[range] | None = None,
              device: Any = None) -> torch.Tensor:
    """Boolean mask of the kept voxels of a ``(D, H, W)`` volume (True = kept).

    Parameters
    ----------
    shape : tuple of 3 ints
        The volume's ``(D, H, W)``.
    planes : Plane, 4 numbers or a sequence of them
        See :func:`as_planes`.
    ranges : sequence of 3 ranges, optional
        Only these voxel indices per axis (default: all); the mask has their lengths.
    device : optional
        Where the mask is built.

    Examples
    --------
    >>> clip_mask((1, 1, 4), (1, 0, 0, 0.0)).tolist()          # centres -0.75 .. 0.75
    [[[True, True, False, False]]]
    """
    return clip_rows(shape, planes, ranges=ranges, device=device).mask()


def _span(flags: torch.Tensor) -> tuple[int, int] | None:
    idx = torch.nonzero(flags).flatten()
    if idx.numel() == 0:
        return None
    return int(idx[0]), int(idx[-1]) + 1


def _box(rows: Rows, window: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...] | None:
    """The bounding box of the kept voxels inside ``window`` (frame positions), or ``None``."""
    (z0, z1), (y0, y1), (x0, x1) = window
    lo, hi = rows.lo[z0:z1, y0:y1], rows.hi[z0:z1, y0:y1]
    lo, hi = lo.clamp(min=x0), hi.clamp(max=x1)
    kept = lo < hi
    zs = _span(kept.any(dim=1))
    if zs is None:
        return None
    ys = _span(kept.any(dim=0))
    assert ys is not None
    return ((z0 + zs[0], z0 + zs[1]), (y0 + ys[0], y0 + ys[1]),
            (int(lo[kept].min()), int(hi[kept].max())))


def clip_boxes(shape: Sequence[int], planes: Any, *, ranges: Sequence[range] | None = None,
               slabs: int = SLABS, call_cost: float = 0.0, device: Any = None
               ) -> tuple[int, list[tuple[tuple[int, int], ...]], Rows,
                          tuple[tuple[int, int], ...] | None]:
    """The boxes a clipped reconstruction computes, the kept rows, and their bounding box.

    Returns ``(axis, boxes, rows, hull)``: ``rows`` are the kept voxels (:class:`Rows`),
    ``hull`` the bounding box of the kept voxels, one ``(start, stop)`` pair of *frame*
    positions (positions in ``ranges``) per axis, ``axis`` the axis the hull shrinks most
    (relative to the frame; the first on ties), and ``boxes`` 1, 2, 4, ... up to ``slabs``
    slabs along ``axis``, each cut to the bounding box of its kept voxels, that together hold
    every kept voxel once. The number of slabs minimises the voxels of the boxes plus
    ``call_cost`` per box (the fixed cost of one reconstruction call, in voxels). When nothing
    is kept, ``(0, [], rows, None)``.
    """
    rows = clip_rows(shape, planes, ranges=ranges, device=device)
    size = (rows.lo.shape[0], rows.lo.shape[1], rows.width)
    hull = _box(rows, [(0, n) for n in size])
    if hull is None:
        return 0, [], rows, None
    ratios = [(b - a) / n for (a, b), n in zip(hull, size, strict=True)]
    axis = ratios.index(min(ratios))
    h0, h1 = hull[axis]
    best: tuple[float, list[tuple[tuple[int, int], ...]]] = (_volume(hull) + call_cost, [hull])
    kept = int((rows.hi - rows.lo).clamp(min=0).sum())      # no split computes fewer voxels
    nslab = 2
    while nslab <= min(slabs, h1 - h0) and kept + nslab * call_cost < best[0]:
        cuts = [h0 + round(i * (h1 - h0) / nslab) for i in range(nslab + 1)]
        boxes = []
        for c0, c1 in itertools.pairwise(cuts):
            window = list(hull)
            window[axis] = (c0, c1)
            box = _box(rows, window)
            if box is not None:
                boxes.append(box)
        cost = sum(map(_volume, boxes)) + call_cost * len(boxes)
        if cost < best[0]:
            best = (cost, boxes)
        nslab *= 2
    return axis, best[1], rows, hull


def _volume(box: Sequence[tuple[int, int]]) -> int:
    return math.prod(b - a for a, b in box)


def clip_region(shape: Sequence[int], planes: Any) -> tuple[slice, slice, slice] | None:
    """The bounding box of the voxels that ``planes`` keep, as a ``region=`` tuple of slices.

    ``None`` when the planes keep no voxel. Pass it as ``region=`` to reconstruct only that
    box (then mask it with :func:`clip_mask`), or as ``clip=`` with ``region=`` to get the
    clipped volume cropped to it.

    Examples
    --------
    >>> clip_region((8, 8, 8), (1, 0, 0, -0.5))      # x <= -0.5: the first quarter along W
    (slice(0, 8, None), slice(0, 8, None), slice(0, 2, None))
    >>> clip_region((8, 8, 8), (1, 1, 1, -3.5)) is None      # beyond the corner
    True
    """
    _axis, _boxes, _rows, hull = clip_boxes(shape, planes, slabs=1)
    if hull is None:
        return None
    return tuple(slice(a, b) for a, b in hull)  # type: ignore[return-value]
