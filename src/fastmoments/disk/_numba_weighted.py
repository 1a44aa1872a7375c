r"""The per-object Zernike sums of an intensity image on the CPU, for degrees up to
:data:`fastmoments.disk.labels.ROW_ORDER`, from each object's rows as the one-pass geometry
met them (:func:`._numba_labels.hulls_from_rows`).

As in :func:`._numba_rowsums.zernike_row_sums`, an object's sums are its monomial moments
:math:`M_{pq} = \sum f\, \hat x^p \hat y^q` times the kernels' integer coefficients
(:func:`._numba_rowsums.monomial_table`). Here the moments are taken the other way round:
each row adds its weights times its powers :math:`\hat y^q` to per-column accumulators,

.. math:: G_{qt} \mathrel{+}= \hat y_i^q\, f_{it} \quad (q \le \text{order}), \qquad
          M_{pq} = \sum_t \hat x_t^p\, G_{qt},

whole vectors of the box's width with no reduction (the weights of a row sit in a buffer
as wide as the box, a multiple of :data:`LANES`, zero outside the object's pixels), and the
dot products come once an object (``(order + 1)(order + 2) / 2`` of them, :math:`p + q \le`
order). The rows go into :math:`G` :data:`ROWS` at a time, ``order + 1`` loops over the box's
width for all of them: a loop over a box of 20-40 columns costs about as much to start as
to run (one row at a time, the 512 x 512 nuclei took 0.31 ms on one thread, four at a time
0.23 ms; 5120 x 5120: 44 against 35 ms). The weights of a row are
those of the columns that pass the test :math:`\hat x^2 + \hat y^2 \le` ``limit``, an
interval found from the row's extremes inwards (:func:`._numba_rowsums.zernike_run_sums`);
the labels are read only in rows where the object has several runs, and no other pixel of
the box is visited. (The row dot products of :func:`~._numba_rowsums.zernike_row_sums`,
``order + 1`` horizontal reductions a row, took about 470 cycles a row on the 5120 x 5120
nuclei set.)

Imported lazily; compiled with ``cache=True``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from .._numba import CHUNKS
from ._numba_intrinsics import prefetch
from ._numba_rowsums import _column_powers, add_table, disk_span, zernike_run_sums

__all__ = ["LANES", "PREFETCH_BYTES", "RUN_ROW_WORK", "run_sums", "weighted_sums",
           "zernike_weighted_sums"]

#: The buffers' widths are multiples of this many float64 (one 512-bit vector).
LANES = 8
#: The objects' rows are prefetched when the label and intensity images together pass this
#: many bytes (half the last cache level of this machine's processor, 32 MiB): smaller ones
#: stay in the caches (512 x 512 nuclei, one thread: 0.27 against 0.31 ms with the
#: prefetch; 5120 x 5120: 41 against 79 ms without).
PREFETCH_BYTES = 1 << 24
#: Rows added to :math:`G` together (:func:`_add_rows`, written out for four; eight took
#: as long).
ROWS = 4


def weighted_sums(lab: np.ndarray, ids: np.ndarray, img: np.ndarray, bbox: np.ndarray,
                  centre: np.ndarray, radius: np.ndarray, order: int, limit: float,
                  out: np.ndarray, rows: Any, table: tuple[np.ndarray, ...]) -> None:
    """:func:`zernike_weighted_sums` on the threads its work is worth
    (:func:`fastmoments._threads.threads_for`, about ``2 (order + 1)`` multiply-adds a
    pixel): on one thread the objects go through :func:`_objects_sums` directly, with no
    parallel region to start. ``rows``: the objects' rows
    (:class:`.label_geometry.ObjectRows`); ``table``: the monomial table."""
    from .._numba import threads
    from .._threads import threads_for

    parts = (rows.first, rows.count, rows.row, rows.lo, rows.hi, rows.pixels)
    count = threads_for(2.0 * (order + 1) * float(rows.pixels.sum()))
    if count > 1:
        with threads(count):
            zernike_weighted_sums(lab, ids, img, bbox, centre, radius, order, limit, out,
                                  *parts, *table, CHUNKS * count)
        return
    _objects_sums(lab, ids, img, bbox, centre, radius, order, limit, out, *parts, *table,
                  _by_first_row(bbox, lab.shape[0]))


#: The work of a row of an object in :func:`._numba_rowsums.zernike_run_sums`, in
#: multiply-adds (the unit of :data:`fastmoments._threads.GRAIN`) times ``(order + 1)^2``:
#: one thread, the 5120 x 5120 nuclei set (292,500 rows, degree 9): about 17 ms.
RUN_ROW_WORK = 2.0


def run_sums(lab: np.ndarray, ids: np.ndarray, bbox: np.ndarray, centre: np.ndarray,
             radius: np.ndarray, order: int, limit: float, out: np.ndarray, rows: Any,
             table: tuple[np.ndarray, ...]) -> None:
    """:func:`._numba_rowsums.zernike_run_sums` (the shape sums from the objects' rows) on
    the threads its work is worth (:data:`RUN_ROW_WORK`), each thread taking runs of
    consecutive objects (:func:`_run_sums_parallel`); one thread calls it directly."""
    from .._numba import threads
    from .._threads import threads_for

    parts = (rows.first, rows.count, rows.row, rows.lo, rows.hi, rows.pixels)
    count = threads_for(RUN_ROW_WORK * (order + 1) ** 2 * len(rows.row))
    if count > 1:
        with threads(count):
            _run_sums_parallel(lab, ids, bbox, centre, radius, order, limit, out, *parts,
                               *table, CHUNKS * count)
        return
    zernike_run_sums(lab, ids, bbox, centre, radius, order, limit, out, *parts, *table)


@njit(cache=True, parallel=True)
def _run_sums_parallel(lab, ids, bbox, centre, radius, order, limit, out, first, nrow, row,
                       lo, hi, npx, dst, src, coef, parts):  # pragma: no cover - compiled
    """:func:`._numba_rowsums.zernike_run_sums` of ``parts`` runs of consecutive objects,
    shared by numba's threads: each run is that function on the objects' own entries (its
    rows are read where ``first`` points), so each object's sums are those of one call."""
    n = radius.shape[0]
    parts = max(1, min(n, parts))
    for c in prange(parts):
        k0 = c * n // parts
        k1 = (c + 1) * n // parts
        zernike_run_sums(lab, ids[k0:k1], bbox[k0:k1], centre[k0:k1], radius[k0:k1], order,
                         limit, out[k0:k1], first[k0:k1], nrow[k0:k1], row, lo, hi, npx, dst,
                         src, coef)


@njit(cache=True, parallel=True)
def zernike_weighted_sums(lab, ids, img, bbox, centre, radius, order, limit, out, first, nrow,
                          row, lo, hi, npx, dst, src, coef,
                          parts=1):  # pragma: no cover - compiled
    r"""Add each object's Zernike sums of the weights ``img`` (module notes) to ``out``.

    ``lab``, ``img``: the label and intensity images; ``ids``: each object's label;
    ``bbox``: ``(n, 4)`` boxes; ``centre``, ``radius``: the disks; ``order``: the largest
    degree; ``limit``: the largest :math:`\rho^2` kept; ``out``: ``(n, K, 2)`` sums, added
    to; ``first``, ``nrow``, ``row``, ``lo``, ``hi``, ``npx``: each object's rows
    (:class:`.label_geometry.ObjectRows`); ``dst``, ``src``, ``coef``: the monomial table.
    The same positions and test as :func:`._numba_rowsums.zernike_row_sums`; the sums
    agree with it to rounding.

    The objects are taken in the order of their first rows, in ``parts`` runs of
    consecutive ones that numba's threads share (:data:`fastmoments._numba.CHUNKS` a
    thread); each object writes only its own sums, so the result does not depend on the
    threads."""
    visit = _by_first_row(bbox, lab.shape[0])
    n = visit.shape[0]
    parts = max(1, min(n, parts))
    for c in prange(parts):
        _objects_sums(lab, ids, img, bbox, centre, radius, order, limit, out, first, nrow,
                      row, lo, hi, npx, dst, src, coef, visit[c * n // parts:(c + 1) * n // parts])


@njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract"})
def _objects_sums(lab, ids, img, bbox, centre, radius, order, limit, out, first, nrow, row, lo,
                  hi, npx, dst, src, coef, visit):  # pragma: no cover - compiled
    """:func:`zernike_weighted_sums` of the objects ``visit``, one after the other; while one
    computes, the rows of the next are asked for (:func:`_prefetch_row`, for images
    larger than :data:`PREFETCH_BYTES`)."""
    P = order + 1
    wmax = 1
    for e in range(visit.shape[0]):
        k = visit[e]
        wmax = max(wmax, bbox[k, 3] - bbox[k, 1])
    wpad = (wmax + LANES - 1) // LANES * LANES
    x2 = np.empty(wpad)
    X = np.zeros((max(P, 2), wpad))  # X[p, t] = x_t^p
    G = np.zeros((P, wpad))  # G[q, t]: the column sums of f y^q
    B = np.zeros((ROWS, wpad))  # rows' weights, 0 outside the object's pixels
    ys = np.zeros(ROWS)  # and their y
    M = np.zeros(P * P)
    flat = out.reshape(-1)
    K2 = out.shape[1] * 2
    n_visit = visit.shape[0]
    fetch = lab.nbytes + img.nbytes > PREFETCH_BYTES
    for e in range(n_visit):
        k = visit[e]
        # the next object's rows are asked for, one a row of this one, while it computes
        nx = visit[e + 1] if e + 1 < n_visit else k
        ahead = first[nx] if e + 1 < n_visit else 0
        ahead_end = first[nx] + nrow[nx] if e + 1 < n_visit and fetch else ahead
        r = radius[k]
        if not r > 0:  # radius 0 or NaN: no pixel passes the test
            for g in range(ahead, ahead_end):
                _prefetch_row(lab, img, row[g], lo[g], hi[g], npx[g] != hi[g] - lo[g] + 1)
            continue
        ci = centre[k, 0]
        j0 = bbox[k, 1]
        Wp = _columns(X, x2, G, j0, bbox[k, 3] - j0, centre[k, 1], r, P, limit)
        nb = 0
        for g in range(first[k], first[k] + nrow[k]):
            if ahead < ahead_end:
                _prefetch_row(lab, img, row[ahead], lo[ahead], hi[ahead],
                              npx[ahead] != hi[ahead] - lo[ahead] + 1)
                ahead += 1
            i = row[g]
            dy, a, b = disk_span(x2, limit, i, ci, r, lo[g] - j0, hi[g] - j0)
            if a <= b:
                # the row's weights into B[nb, a..b]: those of the object's label, 0 for
                # the others, all of them where the row is one run. Written here, not in
                # an inlined function: numba counts the references of the arrays it is
                # given at each call (an atomic increment and decrement each) when it
                # holds a loop. Unsigned indices: numba's index of a signed integer that
                # may be negative wraps around, and LLVM then moves the row with gathers
                # and scatters (512 x 512 nuclei, one thread: the objects' sums took 0.26
                # ms with both, 0.20 without)
                ua = np.uint64(a)
                uj = np.uint64(j0 + a)
                width = np.uint64(b + 1 - a)
                if npx[g] == hi[g] - lo[g] + 1:
                    for t in range(width):
                        B[nb, ua + t] = np.float64(img[i, uj + t])
                else:
                    v = ids[k]
                    for t in range(width):
                        f = np.float64(img[i, uj + t])
                        B[nb, ua + t] = f if np.int64(lab[i, uj + t]) == v else 0.0
                ys[nb] = dy
                nb += 1
                if nb == ROWS:
                    _add_rows(B, ys, nb, P, Wp, G)
                    nb = 0
        if nb:
            _add_rows(B, ys, nb, P, Wp, G)
        for g in range(ahead, ahead_end):  # the next object's rows not asked for yet
            _prefetch_row(lab, img, row[g], lo[g], hi[g], npx[g] != hi[g] - lo[g] + 1)
        _add_object(X, G, M, P, Wp, flat, k * K2, dst, src, coef)


@njit(cache=True, inline="always")
def _columns(X, x2, G, j0, W, cj, r, P, limit):  # pragma: no cover - compiled
    r"""An object's columns ``j0 .. j0 + W - 1``: ``x2`` and ``X`` by
    :func:`._numba_rowsums._column_powers` (0 in the columns no pixel of which passes the
    test), and 0 up to the width rounded up to :data:`LANES`, which is returned; ``G`` set
    to 0."""
    _column_powers(X, x2, j0, W, cj, r, P, limit)
    Wp = (W + LANES - 1) // LANES * LANES
    for p in range(P):
        for t in range(W, Wp):
            X[p, t] = 0.0
        for t in range(Wp):
            G[p, t] = 0.0
    return Wp


@njit(cache=True, inline="always", fastmath={"reassoc", "contract"})
def _add_rows(B, ys, nb, P, Wp, G):  # pragma: no cover - compiled
    r"""The first ``nb`` rows of weights ``B`` (at :math:`\hat y` = ``ys``) added to
    ``G[q, t]`` times :math:`\hat y^q`, :data:`ROWS` of them in each pass over whole
    vectors of the box's width (a row past ``nb`` weighs 0); ``B`` is 0 again after.
    Written out for :data:`ROWS` = 4."""
    for j in range(nb, ROWS):
        ys[j] = 0.0
    y0 = y1 = y2 = y3 = 1.0
    for q in range(P):
        for t in range(Wp):
            G[q, t] += y0 * B[0, t] + y1 * B[1, t] + y2 * B[2, t] + y3 * B[3, t]
        y0 *= ys[0]
        y1 *= ys[1]
        y2 *= ys[2]
        y3 *= ys[3]
    for j in range(nb):
        for t in range(Wp):
            B[j, t] = 0.0


@njit(cache=True, inline="always", fastmath={"reassoc", "contract"})
def _add_object(X, G, M, P, Wp, flat, base, dst, src, coef):  # pragma: no cover - compiled
    r"""The object's moments :math:`M_{pq} = \sum_t X_{pt} G_{qt}` (:math:`p + q < P`),
    times the monomial table, added to its sums ``flat[base:]``
    (:func:`._numba_rowsums.add_table`)."""
    for p in range(P):
        for q in range(P - p):
            s = 0.0
            for t in range(Wp):
                s += X[p, t] * G[q, t]
            M[p * P + q] = s
    add_table(flat, base, M, dst, src, coef)


@njit(cache=True, inline="always")
def _prefetch_row(lab, img, i, lo, hi, several):  # pragma: no cover - compiled
    """Ask for the pixels of row ``i`` from column ``lo`` to ``hi`` of ``img`` (and of
    ``lab`` too when the object has ``several`` runs in the row), a cache line (64 bytes)
    at a time. (The row's numbers come as scalars: given the arrays of the rows, numba
    counted their references at each call, 2.5 of the 30 ms of the objects' sums on the
    5120 x 5120 nuclei set, one thread.)"""
    for j in range(lo, hi + 1, max(1, 64 // img.itemsize)):
        prefetch(img, i, j)
    prefetch(img, i, hi)
    if several:
        for j in range(lo, hi + 1, max(1, 64 // lab.itemsize)):
            prefetch(lab, i, j)
        prefetch(lab, i, hi)


@njit(cache=True)
def _by_first_row(bbox, height):  # pragma: no cover - compiled
    """The objects in the order of the first rows of their boxes (a counting sort: objects
    of one row keep their order)."""
    n = bbox.shape[0]
    start = np.zeros(height + 1, np.int64)
    for k in range(n):
        start[bbox[k, 0] + 1] += 1
    for i in range(height):
        start[i + 1] += start[i]
    visit = np.empty(n, np.int64)
    for k in range(n):
        i = bbox[k, 0]
        visit[start[i]] = k
        start[i] += 1
    return visit
