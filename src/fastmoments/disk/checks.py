"""What a disk plan checks before it is built: the pixels its disk holds, the image size a
one-call function reads, the memory its tables need, and the moments it computes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .._array import resolve_device
from .._memory import format_bytes
from .._memory import memory_budget as _memory_budget
from .._validate import check_int, check_int_list, check_int_pairs, colour_hint
from .families import DiskFamily
from .indexing import IndexSet
from .placement import Placement

__all__ = ["INDEX_BYTES_PER_MOMENT", "check_disk_pixels", "check_placed_pixels",
           "estimate_disk_memory", "image_size", "moment_index"]

#: Host memory of the Python index of one stored moment (``IndexSet``: its tuples and the
#: position dictionary), measured with ``tracemalloc``: 210-236 bytes at 23k-181k moments
#: (peak while building), rounded up.
INDEX_BYTES_PER_MOMENT = 256


def _full_counts(family: DiskFamily, order: int,
                 repetitions: Sequence[int] | None) -> tuple[int, int, int] | None:
    """``(moments, columns, rows)`` of a family's full set up to ``order`` from closed forms
    (nothing is built), or None for a family without one."""
    T = order
    if family.name == "zernike":
        def col(m: int) -> int:
            return (T - m) // 2 + 1 if m <= T else 0
        if repetitions is None:
            return T + 1 + T * T // 4, T + 1, T // 2 + 1
    elif family.name == "pseudo-zernike":
        def col(m: int) -> int:
            return T - m + 1 if m <= T else 0
        if repetitions is None:
            return (T + 1) * (T + 2) // 2, T + 1, T + 1
    else:
        return None
    ms = {abs(m) for m in repetitions}
    counts = [col(m) for m in ms]
    return sum(counts), len(ms), max(counts, default=0)




def check_placed_pixels(placement: Placement, sampling: Any) -> None:
    """Refuse a placed disk that holds no sample point (every moment would be 0), naming
    ``radius`` and the rule."""
    if sampling.n_points == 0:
        raise ValueError(f"radius={placement.radius} at center={placement.centre} leaves no "
                         f"pixel of the {placement.height} x {placement.width} image inside "
                         f"the disk with rule={sampling.rule!r}; use a larger radius or "
                         "rule='centre'")


def check_disk_pixels(size: int, rule: str, name: str | None = None) -> None:
    """Refuse a size whose sampling keeps no pixel (every moment would be 0 whatever the
    image): with ``rule='inscribed'`` a pixel must lie entirely inside the unit disk, so
    the innermost one, whose centre is ``c = 0`` (odd ``N``) or ``1`` (even ``N``) half-pixels
    off each axis, needs ``2 (c + 1)^2 <= N^2``; that fails for ``N = 1`` and ``N = 2``.
    ``name`` is the image's parameter name when the size comes from an image.

    >>> check_disk_pixels(3, "inscribed")
    >>> try:
    ...     check_disk_pixels(2, "inscribed")
    ... except ValueError as exc:
    ...     print(str(exc).split(" (")[0])
    size=2 leaves no pixel inside the unit disk with rule='inscribed'
    """
    c = 1 - size % 2
    if rule == "inscribed" and 2 * (c + 1) ** 2 > size * size:
        where = f"{name} of {size} x {size} pixels: " if name else ""
        raise ValueError(f"{where}size={size} leaves no pixel inside the unit disk with "
                         f"rule={rule!r} (a pixel must lie entirely inside it); use "
                         "rule='centre' or at least 3 x 3 pixels")


def image_size(shape: Sequence[int], name: str = "image", rule: str | None = None) -> int:
    """The side ``N`` of square ``(..., N, N)`` images of ``shape``; a ``ValueError`` naming
    ``name`` for fewer than two axes, non-square images, images with no pixel, and (given a
    ``rule``) images with no pixel inside the unit disk (:func:`check_disk_pixels`).

    >>> image_size((3, 16, 16))
    16
    >>> image_size((0, 0))
    Traceback (most recent call last):
    ...
    ValueError: image must have at least one pixel (N >= 1), got shape (0, 0)
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) < 2:
        raise ValueError(f"{name} must be 2-D or a batch (..., N, N), got shape {shape}")
    if shape[-1] != shape[-2]:
        raise ValueError(colour_hint(shape, name) or
                         f"{name} must be square (..., N, N) to map onto the unit disk, got "
                         f"shape {shape}; crop or pad it first, or place a disk on it with "
                         "center= and radius= (in pixels)")
    if shape[-1] == 0:
        raise ValueError(f"{name} must have at least one pixel (N >= 1), got shape {shape}")
    if rule is not None:
        check_disk_pixels(shape[-1], rule, name)
    return shape[-1]


def estimate_disk_memory(family: DiskFamily, size: int | tuple[int, int],
                         order: int | None, *,
                         pairs: Sequence[tuple[int, int]] | None = None,
                         repetitions: Sequence[int] | None = None,
                         n_moments: int | None = None, slots: int | None = None, k: int = 1,
                         dtype: torch.dtype = torch.float32, device: Any = None,
                         memory_budget: float | None = None) -> dict[str, int] | None:
    """The memory a disk plan needs before anything is built, checked against the budget.

    Counts the index of the stored moments (host memory, :data:`INDEX_BYTES_PER_MOMENT` each),
    the family's tables over the dense ``(columns, rows)`` layout, and the coefficients and
    scratch of one image (three copies of the layout, the image in and out). A larger batch
    or a longer radial table is split into chunks by the engine, so this is the least the
    job can run in.

    Parameters
    ----------
    family : DiskFamily
        The family.
    size : int or (int, int)
        Image side ``N`` or shape ``(H, W)``.
    order : int or None
        Highest order of a full set (None with ``pairs`` or ``n_moments``).
    pairs, repetitions : optional
        A selection, or the repetitions of a full set.
    n_moments, slots : int, optional
        The number of moments and of dense slots when the caller knows them (the polar
        harmonic plans).
    k, dtype, device, memory_budget :
        As for :class:`DiskTransform`.

    Returns
    -------
    dict or None
        ``{"moments", "slots", "index_bytes", "device_bytes", "budget"}``; None when the
        family has no closed form for its counts (nothing is checked then).

    Raises
    ------
    MemoryError
        When the least the job needs is over the memory budget; the message names the order,
        the memory needed and the budget.

    Examples
    --------
    >>> from fastmoments.disk import get_family
    >>> est = estimate_disk_memory(get_family("zernike"), 40, 10)
    >>> est["moments"], est["slots"]
    (36, 66)
    >>> estimate_disk_memory(get_family("zernike"), 40, 100_000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    MemoryError: zernike moments of order 100000 (2500100001 moments) need at least ...
    """
    if n_moments is not None:
        K, S = int(n_moments), int(slots if slots is not None else n_moments)
        what = f"order {order}" if order is not None else "this selection"
    elif pairs is not None:
        K = S = len(pairs)
        what = (f"the selection up to order "
                f"{max((abs(n) for n, _m in pairs), default=0)}")
    else:
        assert order is not None
        counts = _full_counts(family, order, repetitions)
        if counts is None:
            return None
        K, cols, rows = counts
        S = cols * rows
        what = f"order {order}"
    dev = resolve_device(device)
    item = 8 if dtype == torch.float64 else 4
    index_bytes = K * INDEX_BYTES_PER_MOMENT + S * 9  # + valid mask and order table
    if getattr(family, "name", "") in ("zernike", "pseudo-zernike"):
        # the radial recurrences place their values through two int64 lookup tables
        # indexed [n, m] up to the highest order (fastmoments.disk.radial._Placement)
        top = order if order is not None else max((abs(n) for n, _m in pairs or ()),
                                                  default=0)
        index_bytes += 16 * (top + 1) ** 2
    H, W = (size, size) if isinstance(size, int) else size
    pixels = H * W
    # coefficients (and three working copies) of one image, the image in and out, and the
    # sampling's arrays (about 40 bytes per orbit of 8 sample points)
    device_bytes = S * (item + 3 * 2 * item) + 2 * pixels * item + pixels * k * k * 5
    budget = _memory_budget(dev, memory_budget)
    if dev.type == "cpu":
        need, host_budget = index_bytes + device_bytes, budget
    else:
        need, host_budget = device_bytes, _memory_budget(torch.device("cpu"), None)
    fam = getattr(family, "name", str(family))
    if index_bytes > host_budget or need > budget:
        over_host = index_bytes > host_budget
        need_show = index_bytes if over_host and dev.type != "cpu" else need
        budget_show = host_budget if over_host and dev.type != "cpu" else budget
        raise MemoryError(
            f"{fam} moments of {what} ({K} moments) need at least "
            f"{format_bytes(need_show)} (index and lookup tables of the moments "
            f"{format_bytes(index_bytes)}, "
            f"coefficients and scratch of one {H}x{W} image "
            f"{format_bytes(device_bytes)}) but the memory budget is "
            f"{format_bytes(budget_show)}; lower the order or select fewer moments, or raise "
            "memory_budget")
    return {"moments": K, "slots": S, "index_bytes": index_bytes,
            "device_bytes": device_bytes, "budget": budget}


def moment_index(family: DiskFamily, shape: tuple[int, int], order: int,
                 repetitions: Sequence[int] | None, pairs: Sequence[tuple[int, int]] | None,
                 index: IndexSet | None, *, k: int, dtype: torch.dtype, device: torch.device,
                 memory_budget: float | None) -> IndexSet:
    """The moments a plan computes (``index`` as given; the ``pairs`` selected; or every
    moment up to ``order``, of the ``repetitions`` given), checked, once the memory they
    need is known to fit (:func:`estimate_disk_memory`)."""
    mem = {"k": k, "dtype": dtype, "device": device, "memory_budget": memory_budget}
    if index is not None:
        if not isinstance(index, IndexSet):
            raise TypeError(f"index must be an IndexSet, got {type(index).__name__}")
        if index.size == 0:
            raise ValueError("index must hold at least one moment")
        estimate_disk_memory(family, shape, index.max_order, n_moments=index.size,
                             slots=index.n_cols * index.n_rows, **mem)
        return index
    if pairs is not None:
        pairs = check_int_pairs("pairs", pairs, allow_empty=True)
        if not pairs:
            raise ValueError("pairs must name at least one (n, m)")
        estimate_disk_memory(family, shape, None, pairs=pairs, **mem)
        return family.selection(pairs)
    order = check_int("order", order, minimum=0)
    reps = None
    if repetitions is not None:
        reps = check_int_list("repetitions", repetitions, minimum=None, allow_empty=True)
        if not reps:
            raise ValueError("repetitions must name at least one repetition (or be None for "
                             "all of them)")
        bad = [m for m in reps if abs(m) > order]
        if bad:
            raise ValueError(f"repetitions must satisfy |m| <= order={order}, got {bad}")
    estimate_disk_memory(family, shape, order, repetitions=reps, **mem)
    return family.full(order, reps)
