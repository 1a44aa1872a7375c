r"""Where the unit disk sits on an image: its centre and radius in pixels, on any image shape.

By default a disk transform maps a square :math:`N \times N` image onto the unit disk: the
disk inscribed in the image (:mod:`fastmoments.disk.sampling`). A :class:`Placement` puts it
anywhere on an :math:`H \times W` image instead, as mahotas and scikit-image do:

* pixel :math:`(i, j)` (row :math:`i` from the top, column :math:`j` from the left, both
  from 0) has its centre at the point :math:`(i, j)`, so the image centre is
  :math:`((H - 1)/2, (W - 1)/2)`;
* a sample point at :math:`(i', j')` (a pixel centre, or a sub-pixel point of it) maps to
  the disk point

  .. math:: x = \frac{j' - c_j}{R}, \qquad y = -\frac{i' - c_i}{R}

  for the centre :math:`c = (c_i, c_j)` and the radius :math:`R` in pixels (:math:`x` along
  the columns, :math:`y` up the rows: the orientation of the default mapping);
* every point of a pixel carries that pixel's value and the weight of its share of the pixel
  in disk units, :math:`(1/(kR))^2` for the :math:`k \times k` midpoint rule;
* a pixel is used when it lies entirely inside the disk (``rule="inscribed"``: its farthest
  corner within :math:`R` of the centre) or when its centre does (``rule="centre"``, the
  closed disk: a centre at distance exactly :math:`R` is used). Pixels outside the disk,
  and parts of the disk outside the image, are ignored (as if the image were zero there).

The default mapping is the placement with :math:`c = ((N-1)/2, (N-1)/2)` and
:math:`R = N/2` on a square image: :func:`resolve_placement` returns None for it, so that it
runs the default plan unchanged.

``center="centroid"`` is the intensity centre of mass of each image,
:math:`c = \sum_p f_p\,(i_p, j_p) / \sum_p f_p` over all its pixels (mahotas'
``center_of_mass``). It depends on the data, so a plan (built for one geometry) cannot take
it: the one-call functions compute it per image and run one plan per distinct centre.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._validate import check_real

__all__ = ["CENTRES", "Placement", "centroid", "check_center", "resolve_placement"]

#: ``center=`` strings (besides a point and None).
CENTRES = ("centroid",)


@dataclass(frozen=True)
class Placement:
    """A disk on an ``height x width`` image: centre ``(row, col)`` and radius, in pixels.

    Plain values only: a placement is a plan cache key.

    Examples
    --------
    >>> p = Placement(20, 30, (9.5, 14.5), 8.0)
    >>> p.shape, p.symmetric
    ((20, 30), True)
    """

    height: int
    width: int
    centre: tuple[float, float]
    radius: float

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height, self.width)

    @property
    def symmetric(self) -> bool:
        """Whether the centre lies on a pixel centre or a pixel corner: twice each
        coordinate is an integer and both have the same fractional part. The pixel grid
        around the centre then has the 8 symmetries of the square (the engine's orbits)."""
        a, b = 2 * self.centre[0], 2 * self.centre[1]
        return a == math.floor(a) and b == math.floor(b) and (a - b) % 2 == 0


def _finite_real(what: str, value: Any) -> float:
    return check_real(what, value)


def check_center(center: Any, shape: tuple[int, int] | None = None,
                 allow_centroid: bool = True) -> tuple[float, float] | str | None:
    """``center`` as ``(row, col)`` floats, ``"centroid"`` or None; a ``ValueError`` or
    ``TypeError`` naming ``center`` otherwise, and (given the image ``shape``) for a centre
    outside the image (the pixel squares: rows ``-0.5 .. H - 0.5``, columns ``-0.5 .. W -
    0.5``).

    >>> check_center((3, 4.5))
    (3.0, 4.5)
    >>> check_center((1.0, float("nan")))
    Traceback (most recent call last):
    ...
    ValueError: center[1] must be a number, got nan
    """
    if center is None:
        return None
    if isinstance(center, str):
        if center in CENTRES and allow_centroid:
            return center
        valid = ("a point (row, col)", "None", *((repr(c) for c in CENTRES)
                                                 if allow_centroid else ()))
        extra = ("" if allow_centroid else "; a plan is built for one centre: compute the "
                 "centroid with fastmoments.disk.centroid(image), or call the one-call "
                 "function with center='centroid' (one plan per distinct centroid)")
        raise ValueError(f"center must be one of {', '.join(valid)}, got {center!r}{extra}")
    if isinstance(center, torch.Tensor):
        center = center.detach().cpu().numpy()
    try:
        values = list(center)
    except TypeError:
        raise TypeError(f"center must be a point (row, col) of two numbers, 'centroid' or "
                        f"None, got {center!r}") from None
    if len(values) != 2:
        raise ValueError(f"center must be a point (row, col) of length 2, got length "
                         f"{len(values)}: {center!r}")
    row, col = (_finite_real(f"center[{i}]", v) for i, v in enumerate(values))
    if shape is not None:
        H, W = shape
        if not (-0.5 <= row <= H - 0.5 and -0.5 <= col <= W - 0.5):
            raise ValueError(f"center=({row}, {col}) lies outside the {H} x {W} image (rows "
                             f"-0.5..{H - 0.5}, columns -0.5..{W - 0.5} in pixel units, pixel "
                             f"centres at integers)")
    return (row + 0.0, col + 0.0)  # -0.0 -> 0.0: one cache key


def check_radius(radius: Any) -> float | None:
    """``radius`` in pixels as a positive float, or None.

    >>> check_radius(8)
    8.0
    >>> check_radius(-1)
    Traceback (most recent call last):
    ...
    ValueError: radius must be > 0 pixels, got -1.0
    """
    if radius is None:
        return None
    if isinstance(radius, torch.Tensor) and radius.ndim == 0:
        radius = radius.item()
    r = check_real("radius", radius)
    if r <= 0:
        raise ValueError(f"radius must be > 0 pixels, got {r}")
    return r


def resolve_placement(shape: tuple[int, int], center: tuple[float, float] | None,
                      radius: float | None) -> Placement | None:
    """The :class:`Placement` of checked ``center`` (a point or None) and ``radius`` on
    images of ``shape`` ``(H, W)``; None for the default mapping (a square image, its centre
    and radius ``N/2``).

    ``center=None`` is the image centre; ``radius=None`` the largest disk around the centre
    that the image holds (for the image centre: ``min(H, W) / 2``, the inscribed disk).

    >>> resolve_placement((16, 16), None, None) is None
    True
    >>> resolve_placement((16, 16), (7.5, 7.5), 8) is None
    True
    >>> resolve_placement((12, 16), None, None)
    Placement(height=12, width=16, centre=(5.5, 7.5), radius=6.0)
    """
    H, W = int(shape[0]), int(shape[1])
    if center is None:
        center = ((H - 1) / 2, (W - 1) / 2)
    else:
        center = check_center(center, (H, W), allow_centroid=False)  # type: ignore[assignment]
    assert isinstance(center, tuple)
    if radius is None:
        r, c = center
        radius = min(r + 0.5, H - 0.5 - r, c + 0.5, W - 0.5 - c)
        if radius <= 0:
            raise ValueError(f"radius=None takes the largest disk around center={center} "
                             f"inside the image, and there is none (the centre is on the "
                             f"image's edge); give radius=")
    p = Placement(H, W, (float(center[0]), float(center[1])), float(radius))
    if H == W and p.centre == ((H - 1) / 2, (H - 1) / 2) and p.radius == H / 2:
        return None
    return p


def centroid(image: Any) -> np.ndarray:
    r"""The intensity centre of mass ``(row, col)`` of each image of ``(..., H, W)``, in
    pixels (pixel centres at integers), as float64: :math:`\sum_p f_p (i_p, j_p) / \sum_p
    f_p` over every pixel.

    This is the centre that ``center="centroid"`` uses (mahotas' ``center_of_mass``).

    Returns
    -------
    numpy.ndarray
        ``(..., 2)`` float64.

    Raises
    ------
    ValueError
        For an image whose pixels sum to zero (no centre of mass), naming ``center``.

    Examples
    --------
    >>> img = np.zeros((5, 8)); img[1, 6] = 1.0; img[3, 6] = 3.0
    >>> centroid(img)
    array([2.5, 6. ])
    """
    if isinstance(image, torch.Tensor):
        x = image.detach().to("cpu", torch.float64).numpy()
    else:
        x = np.asarray(image, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"image must be 2-D or a batch (..., H, W), got shape {x.shape}")
    H, W = x.shape[-2:]
    total = x.sum(axis=(-2, -1))
    rows = x.sum(axis=-1) @ np.arange(H, dtype=np.float64)
    cols = x.sum(axis=-2) @ np.arange(W, dtype=np.float64)
    bad = ~(np.isfinite(total) & (total != 0))
    if np.any(bad):
        where = np.argwhere(np.atleast_1d(bad))[0]
        at = "" if x.ndim == 2 else f" (image {tuple(int(i) for i in where)} of the batch)"
        raise ValueError(f"center='centroid' needs images whose pixels have a nonzero, finite "
                         f"sum (the centre of mass divides by it){at}; give center=(row, col)")
    return np.stack([rows / total, cols / total], axis=-1)
