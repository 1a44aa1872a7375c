"""The options of the one-call Gaussian filters checked, as scipy.ndimage reads them: one
value or one per filtered axis, the filtered axes, the default ``truncate`` told apart from a
given one, and the options of an exactly applied truncated kernel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import check_choice, check_int, check_positive_float
from ._apply import normalize_axis
from .boundary import MODE_ALIASES, MODES
from .gaussian import METHODS, check_sigma
from .gaussian_truncated import check_radius
from .routes import GAUSSIAN_KERNELS

__all__ = ["MAX_ORDER", "TRUNCATE", "SequenceLengthError", "checked_options", "exact_kernel",
           "filtered_axes", "per_axis", "unsmoothed"]


class _DefaultTruncate(float):
    """The default ``truncate`` (4.0), told apart from a ``truncate`` the caller gives."""

    def __repr__(self) -> str:
        return "4.0"


#: The default of ``truncate``: 4.0, scipy.ndimage's, as a distinct object. Left at its
#: default, ``truncate`` only sets the direct route's radius and each method applies its own
#: kernel to its stated error; given (even as 4.0), the kernel is truncated at
#: ``round(truncate σ)`` as in scipy.ndimage and applied exactly
#: (:mod:`~fastmoments.signal.gaussian_truncated`).
TRUNCATE = _DefaultTruncate(4.0)


#: The highest derivative order of the one-call filters: orders 0-2 run every method, orders
#: 3 to MAX_ORDER scipy's truncated kernel exactly (:mod:`.gaussian_truncated`; scipy.ndimage
#: takes any order, but the polynomial's float64 values lose their digits beyond ~20)
MAX_ORDER = 20


class SequenceLengthError(ValueError, RuntimeError):
    """A per-axis option whose length is not the number of filtered axes: a
    :class:`ValueError` (the package's) that is also the :class:`RuntimeError` scipy.ndimage
    raises there."""


def per_axis(name: str, value: Any, n: int) -> list:
    if type(value) in _SCALARS:  # the common case, without the ABC checks below
        return [value] * n
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != n:
            raise SequenceLengthError(
                f"{name} must be a scalar or have one entry per axis ({n} filtered), got "
                f"{len(value)} entries (as scipy.ndimage says: a sequence argument must have "
                f"length equal to input rank, the axes filtered)")
        return list(value)
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return per_axis(name, value.tolist(), n)
    if isinstance(value, np.ndarray) and value.ndim == 0:  # a 0-d array is its one value
        return [value.item()] * n
    return [value] * n


def unsmoothed(sigma: Any, order: Any, mode: Any, axes: list[int],
                radius: Any = None) -> tuple:
    """The axes, σ, orders, modes and radii left once the axes of ``sigma = 0`` are dropped:
    as in scipy.ndimage, σ = 0 on an axis leaves that axis alone (a channel axis, say)."""
    k = len(axes)
    sigmas, orders, modes = (per_axis("sigma", sigma, k), per_axis("order", order, k),
                             per_axis("mode", mode, k))
    radii = None if radius is None else per_axis("radius", radius, k)
    keep = [i for i, s in enumerate(sigmas)
            if not (isinstance(s, (int, float, np.integer, np.floating))
                    and not isinstance(s, (bool, np.bool_)) and s == 0)]
    if len(keep) == k:
        return axes, sigma, order, mode, radii
    return ([axes[i] for i in keep], [sigmas[i] for i in keep], [orders[i] for i in keep],
            [modes[i] for i in keep], None if radii is None else [radii[i] for i in keep])


_SCALARS = (float, int, str)


def filtered_axes(axes: Any, channel_axis: Any, ndim: int) -> list[int]:
    """The axes :func:`gaussian_filter` filters: ``axes`` (checked, non-negative, no repeats),
    or every axis but ``channel_axis``.

    >>> filtered_axes(None, None, 3), filtered_axes(None, -1, 3), filtered_axes((0, -1), None, 3)
    ([0, 1, 2], [0, 1], [0, 2])
    """
    ch = None if channel_axis is None else normalize_axis(channel_axis, ndim, "channel_axis")
    if axes is None:
        return [a for a in range(ndim) if a != ch]
    if isinstance(axes, (bool, np.bool_)) or isinstance(axes, str):
        raise TypeError(f"axes must be an integer or a sequence of integers, got {axes!r}")
    if isinstance(axes, np.ndarray):
        axes = axes.tolist() if axes.ndim else [axes.item()]
    if not isinstance(axes, Sequence):
        axes = (axes,)
    for a in axes:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"axes must be integers: {a!r} cannot be interpreted as an "
                            f"integer")
    out = [normalize_axis(a, ndim, "axes") for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"axes must be unique (no axis repeated), got {tuple(axes)}")
    if ch is not None and ch in out:
        raise ValueError(f"axes must not include channel_axis={channel_axis} (the colour "
                         f"channels are not smoothed), got {tuple(axes)}")
    return out


def checked_options(sigma: Any, order: Any, mode: Any, truncate: Any, method: Any, terms: Any,
             shift: Any, k: int) -> tuple:
    """The options of :func:`gaussian_filter` checked (``sigma``, ``order``, ``mode`` as one
    value per filtered axis, ``k`` of them)."""
    sigmas = [check_sigma(s) for s in per_axis("sigma", sigma, k)]
    orders = [check_int("order", o, minimum=0, maximum=MAX_ORDER)
              for o in per_axis("order", order, k)]
    modes = [check_choice("mode", MODE_ALIASES.get(m, m) if isinstance(m, str) else m, MODES)
             for m in per_axis("mode", mode, k)]
    truncate = check_positive_float("truncate", truncate)
    method = check_choice("method", method, METHODS)
    terms = None if terms is None else check_int("terms", terms, minimum=1, maximum=64)
    if shift is not None:
        if method != "asft":
            raise ValueError("shift is only used with method='asft'")
        shift = check_int("shift", shift, minimum=1)
    return sigmas, orders, modes, truncate, method, terms, shift


def exact_kernel(truncate: Any, radius: Any, kernel: Any) -> tuple[float, tuple | None]:
    """``truncate`` checked, and the options of the exactly applied truncated kernel
    (``(truncate, radius, kernel)``) where ``truncate`` or ``radius`` was given or
    ``kernel="scipy"``, else ``None`` (each method's own kernel)."""
    kernel = check_choice("kernel", kernel, GAUSSIAN_KERNELS)
    given = truncate is not TRUNCATE
    truncate = check_positive_float("truncate", truncate) if given else 4.0
    if radius is not None:
        for r in per_axis("radius", radius, 1) if not isinstance(
                radius, (Sequence, np.ndarray)) else list(np.asarray(radius).reshape(-1)):
            check_radius(r.item() if isinstance(r, np.generic) else r)
        radius = (tuple(int(r) for r in np.asarray(radius).reshape(-1))
                  if isinstance(radius, (Sequence, np.ndarray)) else int(radius))
    exact = ((truncate, radius, kernel) if given or radius is not None or kernel == "scipy"
             else None)
    return truncate, exact
