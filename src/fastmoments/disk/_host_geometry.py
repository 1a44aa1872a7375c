r"""The compiled passes of the per-object geometry on the host (:mod:`._numba_labels`),
for :mod:`fastmoments.disk.label_geometry`: each reads a host label array in place and
returns the parts the geometry is made of (labels, counts, sums, boxes, and column extremes
or convex hull vertices), or None when it cannot (labels not on the host, or too large for
the budget's tables), and the torch passes take over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["ObjectRows"]


def _as_host_array(x: Any) -> np.ndarray | None:
    """``x`` as a C-ordered NumPy array for the compiled loops (no copy when it is one, or a
    contiguous CPU tensor), else None. Strided views are copied: read through their strides,
    ``np.rot90(labels, 3)`` gave one object's sums wrong in some processes (cause not
    found; ``tests/recognition/test_object_features.py``, the quarter turns)."""
    if isinstance(x, torch.Tensor):
        if x.device.type != "cpu" or x.dtype in (torch.uint16, torch.uint32, torch.uint64):
            return None
        x = x.numpy()
    return np.ascontiguousarray(x) if x.dtype.isnative else None


def _fused_pass(lab: Any, budget: int) -> tuple[np.ndarray, ...] | None:
    """The geometry pass by the compiled whole-image loops (:mod:`._numba_labels`): the
    labels' counts, sums and boxes by label value (or, for large labels, the labels flagged
    in a table, then those by object), then the column extremes, each one pass over the
    image with no scratch but per-label arrays. None when the labels are
    not on the host or the largest label is too large for a lookup table in the budget."""
    arr = _as_host_array(lab)
    if arr is None:
        return None
    from . import _numba_labels as nk

    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        return None  # the torch path says why
    lo, top = nk.label_extent(arr)
    if lo < 0:
        raise ValueError(f"labels must be >= 0 (0 is background), got the label {lo}")
    if (top + 1) * 8 > budget // 4:
        return None
    big = np.iinfo(np.int64).max
    if (top + 1) * 64 <= budget // 4:
        # counts, sums and boxes by label value in the same pass that finds the labels
        m = top + 1
        cnt_v, sums_v = np.zeros(m, np.int64), np.zeros((m, 2))
        low_v, high_v = np.full((m, 2), big, np.int64), np.full((m, 2), -1, np.int64)
        nk.label_stats(arr, np.arange(m, dtype=np.int64), cnt_v, sums_v, low_v, high_v)
        ids = np.flatnonzero(cnt_v)  # label 0 is skipped: its count stays 0
        cnt, sums, low, high = cnt_v[ids], sums_v[ids], low_v[ids], high_v[ids]
        n = len(ids)
        lut = np.full(m, -1, dtype=np.int64)
        lut[ids] = np.arange(n)
    else:
        seen = np.zeros(top + 1, dtype=np.bool_)
        nk.flag_labels(arr, seen)
        seen[0] = False
        ids = np.flatnonzero(seen)
        n = len(ids)
        lut = np.full(top + 1, -1, dtype=np.int64)
        lut[ids] = np.arange(n)
        cnt = np.zeros(n, np.int64)
        sums = np.zeros((n, 2))
        low = np.full((n, 2), big, np.int64)
        high = np.full((n, 2), -1, np.int64)
        nk.label_stats(arr, lut, cnt, sums, low, high)
    widths = high[:, 1] - low[:, 1] + 1
    offset = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    total = int(widths.sum())
    rmin = np.full(total, big, np.int64)
    rmax = np.full(total, -1, np.int64)
    nk.column_extremes(arr, lut, low[:, 1].copy(), offset, rmin, rmax)
    obj = np.repeat(np.arange(n), widths)
    col = np.arange(total) - offset[obj] + low[obj, 1]
    keep = rmax >= 0
    bbox = np.concatenate([low, high + 1], axis=1)
    return ids, cnt, sums, bbox, obj[keep], col[keep], rmin[keep], rmax[keep], lut


@dataclass(frozen=True, eq=False)
class ObjectRows:
    """Each object's rows as the one-pass geometry met them (:func:`_hull_pass`).

    Attributes
    ----------
    first, count : numpy.ndarray
        ``(n,)`` object ``k``'s rows are entries ``first[k] .. first[k] + count[k] - 1``.
    row, lo, hi, pixels : numpy.ndarray
        ``(E,)`` int64 per entry: the row, the first and the last column of the object in
        that row, and its number of pixels there (one run when it is ``hi - lo + 1``); each
        object's rows in increasing order.
    """

    first: np.ndarray
    count: np.ndarray
    row: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    pixels: np.ndarray


def _hull_pass(lab: Any, budget: int) -> tuple[Any, ...] | None:
    """The geometry's parts for ``centre="enclosing"`` in one pass over the image, by the
    compiled loops of :mod:`._numba_labels` (:func:`~._numba_labels.row_runs`: counts,
    sums, boxes and each object's row extremes, read run by run; then
    :func:`~._numba_labels.hulls_from_rows`): ``(ids, count, sums, bbox, points, counts,
    lut, rows)`` with each object's convex hull vertices as :func:`.enclosing.convex_hulls`
    gives them and its rows (:class:`ObjectRows`). None when the labels are not a host
    array or their largest value, or the number of (object, row) pairs, outgrows the
    budget."""
    arr = _as_host_array(lab)
    if arr is None or (arr.dtype == np.uint64 and arr.size
                       and int(arr.max()) > np.iinfo(np.int64).max):
        return None  # the torch path reads it (and says why it cannot)
    from . import _numba_labels as nk

    per_value = 72  # count, sums, boxes, last entry and lookup table of one label value
    per_entry = 112  # label, row, extremes, pixels of one (object, row) pair, and scratch
    status, value, cnt_v, sums_v, low_v, high_v, bands = _row_runs(
        arr, max(budget // 4 // per_value, 1), max(budget // 4 // per_entry, 1))
    if status == nk.PASS_NEGATIVE:
        raise ValueError(f"labels must be >= 0 (0 is background), got the label {value}")
    if status != nk.PASS_OK:
        return None
    ids = np.flatnonzero(cnt_v)  # label 0 is skipped: its count stays 0
    n = len(ids)
    lut = np.full(int(ids[-1]) + 1 if n else 1, -1, dtype=np.int64)
    lut[ids] = np.arange(n)
    bbox = np.concatenate([low_v[ids], high_v[ids] + 1], axis=1)
    pts, counts, *entries = nk.hulls_from_rows(bands, lut, n)
    # (P, 2) with contiguous columns, as the circles read them
    return ids, cnt_v[ids], sums_v[ids], bbox, pts.T, counts, lut, ObjectRows(*entries)


#: The work of :func:`._numba_labels.row_runs` a pixel, in the unit of
#: :data:`fastmoments._threads.GRAIN` (one thread, the 5120 x 5120 nuclei set: 26 ms for 26
#: million pixels, about two multiply-adds' time a pixel).
RUN_WORK = 2.0


def _row_runs(arr: np.ndarray, max_values: int, max_entries: int) -> tuple[Any, ...]:
    """:func:`._numba_labels.row_runs` of the whole image, in bands of rows on as many
    threads as its work is worth (:func:`fastmoments._threads.threads_for`, :data:`RUN_WORK`
    a pixel; the compiled pass releases the GIL): ``(status, value, count, sums, low, high,
    bands)``, the numbers by label of the whole image (:func:`_merge_runs`) and each
    band's entries where its pass left them, ``(ent_v, ent_i, ent_lo, ent_hi, ent_n,
    n_ent)`` a band, in the order of the rows (what
    :func:`._numba_labels.hulls_from_rows` reads)."""
    from .._threads import threads_for
    from . import _numba_labels as nk

    h = arr.shape[0]
    count = min(threads_for(RUN_WORK * arr.size), h)
    if count < 2:
        parts = [nk.row_runs(arr, max_values, max_entries, 0)]
    else:
        from concurrent.futures import ThreadPoolExecutor

        cuts = [h * b // count for b in range(count + 1)]
        with ThreadPoolExecutor(count - 1) as pool:
            later = [pool.submit(nk.row_runs, arr[cuts[b]:cuts[b + 1]], max_values,
                                 max_entries, cuts[b]) for b in range(1, count)]
            parts = [nk.row_runs(arr[:cuts[1]], max_values, max_entries, 0)]
            parts += [f.result() for f in later]
    for part in parts:  # the first band's error, as one pass meets it
        if part[0] != nk.PASS_OK:
            return (*part[:6], ())
    return _merge_runs(parts, max_entries)


def _merge_runs(parts: list[tuple[Any, ...]], max_entries: int) -> tuple[Any, ...]:
    """The results of :func:`._numba_labels.row_runs` on consecutive bands of rows as one
    pass's: counts and sums added, extremes the smallest and largest; the entries stay in
    each band's arrays (copying them into one set of arrays faulted in fresh pages: 11.5
    ms for the two bands of the 5120 x 5120 nuclei set, 292,500 entries, on this 2-core
    machine, where each page fault takes 1-3 us), and :data:`PASS_TOO_LARGE` when they
    are more than ``max_entries`` together."""
    from . import _numba_labels as nk

    bands = tuple((*p[6:11], int(p[11])) for p in parts)
    if len(parts) == 1:
        return (*parts[0][:6], bands)
    m = max(len(p[2]) for p in parts)
    big = np.iinfo(np.int64).max
    count = np.zeros(m, np.int64)
    sums = np.zeros((m, 2))
    low = np.full((m, 2), big, np.int64)
    high = np.full((m, 2), -1, np.int64)
    for p in parts:
        k = len(p[2])
        count[:k] += p[2]
        sums[:k] += p[3]
        np.minimum(low[:k], p[4], out=low[:k])
        np.maximum(high[:k], p[5], out=high[:k])
    if sum(b[5] for b in bands) > max_entries:
        return (nk.PASS_TOO_LARGE, 0, count, sums, low, high, ())
    return (nk.PASS_OK, 0, count, sums, low, high, bands)
