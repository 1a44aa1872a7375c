r"""Clipping planes for 3-D reconstructions: half-spaces, their voxel masks and bounding boxes.

A :class:`Plane` is the set :math:`\{\mathbf x : \mathbf n\cdot\mathbf x = d\}` in the volume's
normalised coordinates, and clipping by it keeps the voxels whose centre satisfies
:math:`\mathbf n\cdot\mathbf x \le d` (``keep='below'``) or :math:`\ge d` (``keep='above'``);
several planes keep the intersection of their half-spaces (the thesis's clipped volumes,
``jacobi-3d-gpu-thesis`` Sec. 6.2, Figs. 17 and 19, where each plane is written as an equation
such as :math:`-x + y + z = c`).

**Coordinates.** The box convention of :mod:`fastmoments.box.api`: for an axis of ``N``
voxels, voxel ``i`` covers :math:`[-1 + 2i/N, -1 + 2(i+1)/N]` and its centre is
:math:`-1 + (2i + 1)/N`. A volume ``(D, H, W)`` has ``z`` along D, ``y`` along H and ``x``
along W (as :data:`fastmoments.box.moments.PLANES`), and a normal is written ``(nx, ny, nz)``.
So ``Plane((1, 0, 0), -0.5)`` keeps the voxels with :math:`x \le -0.5`, the first quarter of
the W axis.

**Reconstruction cost.** The reconstruction is separable, :math:`\hat f = S_z \times_0 (S_y
\times_1 (S_x \times_2 J))`, one GEMM per axis, while a plane mask is not. Clipping therefore
reconstructs boxes and masks them: the kept voxels are split into slabs along D (at most
:data:`SLABS`), and each slab reconstructs only the bounding box of its kept voxels (through the
``region=`` path of :meth:`~fastmoments.box.api.JacobiTransform.inverse`). The three products
cost about :math:`b_D P^3/6`, :math:`b_D b_H P^2/2` and :math:`b_D b_H b_W P` multiply-adds for
a box :math:`b_D \times b_H \times b_W` and :math:`P-1` the order (total-degree set); slabs along
D split the first factor :math:`b_D` without repeating any work, and each has its own, smaller
:math:`b_H \times b_W`. Measured on a 64^3 grid (the fractions of the volume's voxels that are
kept / inside the one bounding box / computed in slabs): a plane :math:`x \le -0.5` 0.25 /
0.25 / 0.25; a corner cut :math:`x + y + z \le -1.5` 0.070 / 0.40 / 0.16; an oblique plane
through the centre, :math:`x + y + z \le 0`, 0.50 / 1.0 / 0.83, and :math:`x + z \le 0`
0.51 / 1.0 / 0.56. Voxels outside every box are never computed.
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

__all__ = ["KEEPS", "SLABS", "TOLERANCE", "Plane", "as_planes", "clip_boxes", "clip_mask",
           "clip_region"]

#: The sides a plane can keep: ``'below'`` keeps :math:`n\cdot x \le d`, ``'above'`` keeps
#: :math:`n\cdot x \ge d`.
KEEPS = ("below", "above")

#: A voxel centre within this distance of a plane (in normalised coordinates, with the unit
#: normal) counts as on the plane, and is kept on either side. Voxel centres that lie on the
#: plane in exact arithmetic are thus kept whatever the rounding of :math:`n\cdot x`; it is
#: 5e-7 of a voxel on an axis of 1000 voxels (voxels are 2/N wide).
TOLERANCE = 1e-9

#: The most slabs along D that a clipped reconstruction is split into (see the module notes).
SLABS = 8

_SLAB_VOXELS = 1 << 22  # float64 voxels per step of the mask computation (32 MiB)


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
    i = torch.as_tensor(list(idx), dtype=torch.float64, device=device)
    return (2.0 * i + 1.0) / n - 1.0


def _terms(shape: Sequence[int], ranges: Sequence[range], planes: Sequence[Plane],
           device: Any) -> list[tuple[list[torch.Tensor], float]]:
    """Per plane, per axis ``s c_a x_a`` and the bound ``s d + tol`` (``s = -1`` for 'above')."""
    coords = [_centres(n, r, device) for n, r in zip(shape, ranges, strict=True)]
    out = []
    for p in planes:
        s = 1.0 if p.keep == "below" else -1.0
        terms = [s * c * x for c, x in zip(p.axis_coefficients, coords, strict=True)]
        out.append((terms, s * p.offset + TOLERANCE))
    return out


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
    planes = as_planes(planes, "planes")
    shape = tuple(shape)
    ranges = [range(n) for n in shape] if ranges is None else list(ranges)
    size = [len(r) for r in ranges]
    mask = torch.ones(size, dtype=torch.bool, device=device)
    per = max(1, _SLAB_VOXELS // max(1, size[1] * size[2]))
    for terms, bound in _terms(shape, ranges, planes, device):
        tz, ty, tx = terms
        for z0 in range(0, size[0], per):
            z1 = min(z0 + per, size[0])
            t = (tz[z0:z1, None, None] + ty[None, :, None]) + tx[None, None, :]
            mask[z0:z1] &= t <= bound
    return mask


def _possible(shape: Sequence[int], ranges: Sequence[range], planes: Sequence[Plane],
              device: Any) -> list[torch.Tensor]:
    """Per axis, the frame indices that some voxel kept by every single plane can have.

    For one plane :math:`\\sum_a t_a(i_a) \\le b`, index ``i`` on axis ``a`` is possible iff
    :math:`t_a(i) + \\sum_{b \\ne a} \\min t_b \\le b`: exact for one plane, a superset of the
    intersection's indices for several.
    """
    ok = [torch.ones(len(r), dtype=torch.bool, device=device) for r in ranges]
    for terms, bound in _terms(shape, ranges, planes, device):
        mins = [float(t.min()) for t in terms]
        for a, t in enumerate(terms):
            rest = sum(m for b, m in enumerate(mins) if b != a)
            ok[a] &= t + rest <= bound
    return ok


def _span(flags: torch.Tensor) -> tuple[int, int] | None:
    idx = torch.nonzero(flags).flatten()
    if idx.numel() == 0:
        return None
    return int(idx[0]), int(idx[-1]) + 1


def clip_boxes(shape: Sequence[int], planes: Any, *, ranges: Sequence[range] | None = None,
               slabs: int = SLABS, device: Any = None
               ) -> tuple[list[tuple[tuple[int, int], ...]], torch.Tensor | None,
                          tuple[tuple[int, int], ...] | None]:
    """The boxes a clipped reconstruction computes, and the kept mask inside their hull.

    Returns ``(boxes, mask, hull)``: ``hull`` is the bounding box of the kept voxels, one
    ``(start, stop)`` pair of *frame* positions (positions in ``ranges``) per axis, ``mask``
    the kept voxels within it, and ``boxes`` up to ``slabs`` boxes (slabs along D, each the
    bounding box of its kept voxels) that together hold every kept voxel. When nothing is
    kept, ``([], None, None)``.
    """
    planes = as_planes(planes, "planes")
    shape = tuple(shape)
    ranges = [range(n) for n in shape] if ranges is None else list(ranges)
    spans = [_span(f) for f in _possible(shape, ranges, planes, device)]
    if any(s is None for s in spans):
        return [], None, None
    sub = [r[a:b] for r, (a, b) in zip(ranges, spans, strict=True)]   # type: ignore[misc]
    mask = clip_mask(shape, planes, ranges=sub, device=device)
    exact = []
    for ax in range(3):
        other = tuple(b for b in range(3) if b != ax)
        s = _span(mask.any(dim=other))
        if s is None:
            return [], None, None
        exact.append(s)
    mask = mask[tuple(slice(a, b) for a, b in exact)]
    hull = tuple((spans[ax][0] + a, spans[ax][0] + b)       # type: ignore[index]
                 for ax, (a, b) in enumerate(exact))
    depth = hull[0][1] - hull[0][0]
    nslab = max(1, min(slabs, depth))
    cuts = [round(i * depth / nslab) for i in range(nslab + 1)]
    boxes = []
    for z0, z1 in itertools.pairwise(cuts):
        part = mask[z0:z1]
        ys = _span(part.any(dim=(0, 2)))
        if ys is None:
            continue
        xs = _span(part[:, ys[0]:ys[1]].any(dim=(0, 1)))
        zs = _span(part.any(dim=(1, 2)))
        assert xs is not None and zs is not None
        boxes.append(((hull[0][0] + z0 + zs[0], hull[0][0] + z0 + zs[1]),
                      (hull[1][0] + ys[0], hull[1][0] + ys[1]),
                      (hull[2][0] + xs[0], hull[2][0] + xs[1])))
    return boxes, mask, hull


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
    _boxes, _mask, hull = clip_boxes(shape, planes, slabs=1)
    if hull is None:
        return None
    return tuple(slice(a, b) for a, b in hull)  # type: ignore[return-value]
