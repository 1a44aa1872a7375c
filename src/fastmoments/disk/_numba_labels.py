r"""numba kernel of the per-object Zernike sums on the CPU (:mod:`fastmoments.disk.labels`).

The torch path evaluates every moment at every pixel of a row block as whole-array
operations, so each of the ``pixels x moments`` values passes through memory several times.
This kernel walks the pixels once and keeps everything of a pixel in registers: its
position in its object's disk,

.. math:: \hat y = (i - c_i) / R, \qquad \hat x = (j - c_j) / R, \qquad
          \rho^2 = \hat x^2 + \hat y^2,

computed with the same operations as the torch path (so the same pixels pass the test
:math:`\rho^2 \le` ``limit``), the powers :math:`u^m` of its unit direction, the radial
values :math:`R_{nm}(\rho)` by the recurrence of the Zernike thesis, Eq. 3.10-3.11 (Deng et
al.: :math:`R_{nn} = \rho R_{n-1,n-1}`,
:math:`R_{nm} = \rho (R_{n-1,|m-1|} + R_{n-1,m+1}) - R_{n-2,m}`), and adds
:math:`f\, R_{nm}(\rho)\, u^m` to its object's sums in float64.

Up to a moderate degree the objects read from their bounding boxes take a cheaper road,
by rows of monomial moments (:mod:`._numba_rowsums`).

The geometry has its compiled loops here too: one pass over the label image run by run
(:func:`row_runs`) and the convex hulls from the row extremes (:func:`hulls_from_rows`);
the steps of the minimum enclosing circles are in :mod:`._numba_circles`. Each runs on one
thread (the pass over the image in bands of rows on several, where its work is worth them:
:func:`._host_geometry._row_runs`).

Imported lazily (``import fastmoments`` does not import numba); compiled with
``cache=True``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._numba_intrinsics import CHANGE_BYTES, changes, lowest_bit

__all__ = ["column_extremes", "flag_labels", "hulls_from_rows", "label_extent", "label_stats",
           "row_runs", "zernike_box_sums", "zernike_image_sums", "zernike_label_sums"]


@njit(cache=True, error_model="numpy")  # x / 0 gives inf or NaN, as NumPy
def _add_pixel(k, i, j, w, centre, radius, order, cellprofiler, limit, out, prev2, prev1, cur,
               pr, pi):  # pragma: no cover - compiled
    """Add the kernel values of pixel ``(i, j)`` of object ``k``, weight ``w``, to
    ``out[k]`` (scratch: ``prev2``, ``prev1``, ``cur`` of ``order // 2 + 2``, ``pr``, ``pi``
    of ``order + 1``)."""
    r = radius[k]
    dy = (i - centre[k, 0]) / r
    dx = (j - centre[k, 1]) / r
    rho2 = dx * dx + dy * dy
    if not rho2 <= limit:  # NaN (radius 0) too
        return
    rho = math.sqrt(rho2)
    if rho > 0:
        if cellprofiler:
            ur, ui = dy / rho, dx / rho
        else:
            ur, ui = dx / rho, dy / rho
    else:
        ur, ui = 0.0, 0.0
    T = order
    pr[0], pi[0] = w, 0.0
    for m in range(1, T + 1):
        pr[m] = pr[m - 1] * ur - pi[m - 1] * ui
        pi[m] = pr[m - 1] * ui + pi[m - 1] * ur
    pos = 0
    for n in range(T + 1):
        L = n // 2 + 1
        if n == 0:
            cur[0] = 1.0
        else:
            cur[L - 1] = rho * prev1[(n - 1) // 2]
            if n >= 2:
                if n % 2 == 0:
                    cur[0] = 2.0 * rho * prev1[0] - prev2[0]
                    for q in range(1, L - 1):
                        cur[q] = rho * (prev1[q - 1] + prev1[q]) - prev2[q]
                else:
                    for q in range(L - 1):
                        cur[q] = rho * (prev1[q] + prev1[q + 1]) - prev2[q]
        par = n % 2
        for q in range(L):
            m = par + 2 * q
            out[k, pos + q, 0] += cur[q] * pr[m]
            out[k, pos + q, 1] += cur[q] * pi[m]
        pos += L
        for q in range(L):
            prev2[q] = prev1[q]
            prev1[q] = cur[q]


@njit(cache=True, error_model="numpy")
def zernike_label_sums(obj, rows, cols, f, centre, radius, order, cellprofiler, limit,
                       out):  # pragma: no cover - compiled
    r"""Add each pixel's Zernike kernel values to its object's sums.

    ``obj``, ``rows``, ``cols``: ``(G,)`` int64 object index, row and column of each pixel;
    ``f``: ``(G,)`` float64 weights, or ``(0,)`` for weight 1; ``centre``: ``(n, 2)``,
    ``radius``: ``(n,)`` float64; ``order``: the largest ``n``; ``cellprofiler``: the unit
    direction is :math:`(\hat y + i \hat x)/\rho` (else :math:`(\hat x + i \hat y)/\rho`,
    the conjugate kernel of the standard moments with :math:`y` up); ``limit``: largest
    :math:`\rho^2` kept; ``out``: ``(n, K, 2)`` float64 sums, pairs in ``(n, m)`` order with
    ``m = n mod 2, ..., n``, added to.
    """
    H = order // 2 + 2
    prev2, prev1, cur = np.zeros(H), np.zeros(H), np.zeros(H)
    pr, pi = np.empty(order + 1), np.empty(order + 1)
    weighted = f.shape[0] > 0
    for p in range(obj.shape[0]):
        w = f[p] if weighted else 1.0
        _add_pixel(obj[p], rows[p], cols[p], w, centre, radius, order, cellprofiler, limit,
                   out, prev2, prev1, cur, pr, pi)


# ----------------------------------------------------------------- whole-image passes
@njit(cache=True)
def label_extent(lab):  # pragma: no cover - compiled
    """Smallest and largest value of a 2-D integer array (``(0, 0)`` when empty)."""
    lo = 0
    hi = 0
    first = True
    for i in range(lab.shape[0]):
        for j in range(lab.shape[1]):
            v = np.int64(lab[i, j])
            if first:
                lo = v
                hi = v
                first = False
            elif v < lo:
                lo = v
            elif v > hi:
                hi = v
    return lo, hi


@njit(cache=True)
def flag_labels(lab, seen):  # pragma: no cover - compiled
    """``seen[v] = True`` for every value ``v`` of ``lab`` (all within ``seen``)."""
    for i in range(lab.shape[0]):
        for j in range(lab.shape[1]):
            seen[lab[i, j]] = True


@njit(cache=True)
def label_stats(lab, lut, count, sums, lo, hi):  # pragma: no cover - compiled
    """Per object (``lut[label]``, labels > 0): pixel count, sums of rows and columns
    (float64, exact for integers below 2**53), smallest and largest row and column."""
    for i in range(lab.shape[0]):
        for j in range(lab.shape[1]):
            v = lab[i, j]
            if v == 0:
                continue
            k = lut[v]
            count[k] += 1
            sums[k, 0] += i
            sums[k, 1] += j
            if i < lo[k, 0]:
                lo[k, 0] = i
            if j < lo[k, 1]:
                lo[k, 1] = j
            if i > hi[k, 0]:
                hi[k, 0] = i
            if j > hi[k, 1]:
                hi[k, 1] = j


@njit(cache=True)
def column_extremes(lab, lut, first_col, offset, rmin, rmax):  # pragma: no cover - compiled
    """Topmost and bottommost row of every column of every object: object ``k``'s column
    ``j`` is entry ``offset[k] + j - first_col[k]`` of ``rmin``, ``rmax`` (which start at
    a value above every row and at -1)."""
    for i in range(lab.shape[0]):
        for j in range(lab.shape[1]):
            v = lab[i, j]
            if v == 0:
                continue
            k = lut[v]
            e = offset[k] + j - first_col[k]
            if i < rmin[e]:
                rmin[e] = i
            if i > rmax[e]:
                rmax[e] = i


#: Pixels of one object evaluated together (their scratch, about 3 (order + 2) doubles a
#: pixel, stays in the first cache levels).
PIECE = 256
#: Labelled pixels gathered per band of rows (the band's scratch: 3 numbers a pixel).
BAND_PIXELS = 1 << 18


@njit(cache=True, error_model="numpy", fastmath={"reassoc"})
def zernike_image_sums(lab, lut, img, centre, radius, order, cellprofiler, limit, out,
                       row0=0, col0=0):  # pragma: no cover - compiled
    r""":func:`zernike_label_sums` over every labelled pixel of a whole label image (``img``:
    the intensities, or a ``(0, 0)`` array for weight 1), object by object.

    The image goes in bands of rows (about :data:`BAND_PIXELS` pixels); the labelled pixels
    of a band are put in order of their object (a counting sort), and each object's pixels
    are evaluated together, in pieces of :data:`PIECE`, each step a loop over the piece that
    the compiler can vectorise: the positions :math:`\hat x, \hat y, \rho^2` (with the
    operations of :func:`_add_pixel`, so that the same pixels pass the test
    :math:`\rho^2 \le` ``limit``; a pixel that fails it weighs 0), the powers :math:`u^m`,
    the radial recurrence, and for each moment the piece's sum, added to the object's sums
    once a piece (re-association is allowed in these sums only). ``row0``, ``col0``: where
    ``lab`` lies in a larger image (its pixel ``(i, j)`` is at ``(row0 + i, col0 + j)``, the
    coordinates of ``centre``).
    """
    T = order
    H = T // 2 + 2
    S = PIECE
    n_obj = radius.shape[0]
    height, width = lab.shape
    band = max(1, BAND_PIXELS // max(width, 1))
    count = np.zeros(n_obj, np.int64)
    fill = np.zeros(n_obj, np.int64)
    touched = np.empty(n_obj, np.int64)
    size = band * width
    prow = np.empty(size, np.int64)
    pcol = np.empty(size, np.int64)
    pw = np.empty(size)
    ur = np.empty(S)
    ui = np.empty(S)
    rho = np.empty(S)
    pr = np.empty((T + 1, S))
    pi = np.empty((T + 1, S))
    rad = np.zeros((3, H, S))  # R_n, R_{n-1}, R_{n-2} in rotating slots
    weighted = img.shape[0] > 0
    for b0 in range(0, height, band):
        b1 = min(height, b0 + band)
        nt = 0
        for i in range(b0, b1):
            for j in range(width):
                v = lab[i, j]
                if v != 0:
                    k = lut[v]
                    if count[k] == 0:
                        touched[nt] = k
                        nt += 1
                    count[k] += 1
        off = 0
        for e in range(nt):
            k = touched[e]
            fill[k] = off
            off += count[k]
        for i in range(b0, b1):
            for j in range(width):
                v = lab[i, j]
                if v != 0:
                    k = lut[v]
                    p = fill[k]
                    prow[p] = i + row0
                    pcol[p] = j + col0
                    pw[p] = np.float64(img[i, j]) if weighted else 1.0
                    fill[k] = p + 1
        for e in range(nt):
            k = touched[e]
            n_px = count[k]
            first = fill[k] - n_px
            count[k] = 0
            r = radius[k]
            if not r > 0:  # radius 0 or NaN: no pixel passes the test
                continue
            ci = centre[k, 0]
            cj = centre[k, 1]
            for p0 in range(first, first + n_px, S):
                L = min(S, first + n_px - p0)
                _piece_sums(L, p0, k, T, H, prow, pcol, pw, ci, cj, r, cellprofiler, limit,
                            out, ur, ui, rho, pr, pi, rad)


@njit(cache=True, error_model="numpy", fastmath={"reassoc"}, inline="always")
def _run_sums(L, k, T, H, out, ur, ui, rho, pr, pi, rad):  # pragma: no cover - compiled
    """Add the kernel values of the ``L`` pixels of a run (``rho``, unit direction ``ur``,
    ``ui``, weight ``pr[0]``) to ``out[k]``."""
    for m in range(1, T + 1):
        for t in range(L):
            pr[m, t] = pr[m - 1, t] * ur[t] - pi[m - 1, t] * ui[t]
            pi[m, t] = pr[m - 1, t] * ui[t] + pi[m - 1, t] * ur[t]
    cur, prev1, prev2 = rad[0], rad[1], rad[2]  # R_n, R_{n-1}, R_{n-2}, rotated
    pos = 0
    for n in range(T + 1):
        L2 = n // 2 + 1
        par = n % 2
        if n >= 1:
            top = (n - 1) // 2
            for t in range(L):
                cur[L2 - 1, t] = rho[t] * prev1[top, t]
        for q in range(L2):
            m = par + 2 * q
            sr = 0.0
            si = 0.0
            if n == 0:
                for t in range(L):
                    cur[0, t] = 1.0
                    sr += pr[0, t]
                    si += pi[0, t]
            elif q == L2 - 1:  # R_nn = rho R_{n-1,n-1}, made above
                for t in range(L):
                    v = cur[q, t]
                    sr += v * pr[m, t]
                    si += v * pi[m, t]
            elif par == 0 and q == 0:
                for t in range(L):
                    v = 2.0 * rho[t] * prev1[0, t] - prev2[0, t]
                    cur[0, t] = v
                    sr += v * pr[m, t]
                    si += v * pi[m, t]
            else:
                a = q - 1 + par  # R_{n-1, m-1} and R_{n-1, m+1} are rows a, a + 1
                for t in range(L):
                    v = rho[t] * (prev1[a, t] + prev1[a + 1, t]) - prev2[q, t]
                    cur[q, t] = v
                    sr += v * pr[m, t]
                    si += v * pi[m, t]
            out[k, pos + q, 0] += sr
            out[k, pos + q, 1] += si
        pos += L2
        cur, prev1, prev2 = prev2, cur, prev1


# ---------------------------------------------------------------------------- geometry
@njit(cache=True)
def _turns_left(ax, ay, bx, by, cx, cy):  # pragma: no cover - compiled
    """z of (b - a) x (c - b) > 0, exact in int64."""
    return (bx - ax) * (cy - by) - (cx - bx) * (by - ay) > 0


@njit(cache=True)
def convex_hulls_by_object(first, ncol, col, row_min, row_max, out_row, out_col,
                           counts):  # pragma: no cover - compiled
    """Strict convex hull vertices of every object from its column extremes, by Andrew's
    monotone chain per object: the lower chain (``row_min``, columns ascending), then the
    upper chain (``row_max``, columns descending), each pushed on a stack that drops its top
    while the path does not turn strictly left. An end column of one pixel is that pixel in
    both chains: it is shared, not repeated. Gives the vertices of
    :func:`fastmoments.disk.enclosing.convex_hulls`, in its order (object ``k``'s columns are
    entries ``first[k] .. first[k] + ncol[k] - 1``), object after object in ``out_*``
    (each object's stack takes at most twice its columns: ``out_*`` hold twice all the
    columns), their number to ``counts[k]``; returns the number of vertices."""
    at = 0
    for k in range(first.shape[0]):
        counts[k] = _hull_chain(first[k], ncol[k], col, row_min, row_max, out_row, out_col,
                                at)
        at += counts[k]
    return at


@njit(cache=True, inline="always")
def _hull_chain(s, n, col, row_min, row_max, out_row, out_col,
                base):  # pragma: no cover - compiled
    """One object's strict convex hull vertices by Andrew's monotone chain
    (:func:`convex_hulls_by_object`) from its columns ``s .. s + n - 1``, written to
    ``out_*[base ...]``; returns their number."""
    last = s + n - 1
    top = 0
    for e in range(s, last + 1):  # lower chain
        x = col[e]
        y = row_min[e]
        while top >= 2 and not _turns_left(out_col[base + top - 2], out_row[base + top - 2],
                                           out_col[base + top - 1], out_row[base + top - 1],
                                           x, y):
            top -= 1
        out_col[base + top] = x
        out_row[base + top] = y
        top += 1
    lower = top
    if row_max[last] == row_min[last]:
        start = top - 1  # the last column's pixel begins the upper chain
        e_begin = last - 1
    else:
        start = top
        e_begin = last
    for e in range(e_begin, s - 1, -1):  # upper chain
        x = col[e]
        y = row_max[e]
        while top - start >= 2 and not _turns_left(
                out_col[base + top - 2], out_row[base + top - 2],
                out_col[base + top - 1], out_row[base + top - 1], x, y):
            top -= 1
        out_col[base + top] = x
        out_row[base + top] = y
        top += 1
    if top > lower and row_max[s] == row_min[s]:
        top -= 1  # the upper chain ended on the lower chain's first pixel
    return top


@njit(cache=True)
def all_finite(img):  # pragma: no cover - compiled
    """Whether every value of a 2-D float array is finite (no NaN, no infinity)."""
    ok = True
    for i in range(img.shape[0]):
        for j in range(img.shape[1]):
            v = img[i, j]
            ok &= (v - v) == 0.0  # NaN and +-inf give NaN
        if not ok:
            return False
    return ok


# ------------------------------------------------------------ one pass for the geometry
#: Status codes of :func:`row_runs`.
PASS_OK, PASS_NEGATIVE, PASS_TOO_LARGE = 0, 1, 2
#: :func:`row_runs` starts with room for an entry per this many pixels, and at least 4,096
#: (it grows by half when a row would not fit): the nuclei sets have an entry per 90
#: pixels. Each array of entries smaller than the allocator's threshold for fresh pages
#: reuses the process's heap; larger ones are mapped and faulted in, page by page, at
#: every call (512 x 512 nuclei: the pass took 0.19 against 0.33 ms with room for 65,536
#: entries, in runs taken in turns).
ENTRY_PIXELS = 64


@njit(cache=True, nogil=True)
def row_runs(lab, max_values, max_entries, row0=0):  # pragma: no cover - compiled
    """Everything the geometry of ``centre="enclosing"`` needs from the pixels, in one pass
    over a C-ordered 2-D label image, run by run: each row is read once for its smallest
    and largest label and once for its runs of equal labels (:func:`_rows_runs`). ``row0``:
    the image's row that ``lab``'s first row is (a band of rows; the GIL is released, so
    that bands may go on threads of their own).

    By label value ``v`` (arrays that grow with the largest label met, up to
    ``max_values`` entries): the pixel count, the sums of rows and of columns (float64,
    exact for integers below 2**53; a run adds its integer sums), the smallest and largest
    row and column. And one *entry* per (label, row) that the label meets: the label, the
    row, the first and the last column of the label in that row (the row extremes) and its
    number of pixels in that row, in the order of the rows.

    Returns ``(status, value, count, sums, low, high, ent_v, ent_i, ent_lo, ent_hi, ent_n,
    n_ent)``: ``status`` :data:`PASS_OK`; :data:`PASS_NEGATIVE` with ``value`` a negative
    label; or :data:`PASS_TOO_LARGE` when a label is ``>= max_values`` or the entries would
    pass ``max_entries`` (the arrays are then incomplete).

    The arrays grow here, between the calls of :func:`_rows_runs`, which go through the
    rows until one needs more room: numba counts the references of an array that a loop
    may rebind at every turn of it (an atomic increment and decrement, each a call, for
    each array), and with the growth inside the loop of the rows that took 0.128 against
    0.073 ms for the whole pass on the 512 x 512 nuclei set (one thread, the same entries;
    0.061 ms with the rows also read in place, as :func:`_rows_runs` reads them).
    """
    h, w = lab.shape
    big = np.iinfo(np.int64).max
    m = min(1024, max_values)
    count = np.zeros(m, np.int64)
    sums = np.zeros((m, 2))
    low = np.full((m, 2), big, np.int64)
    high = np.full((m, 2), -1, np.int64)
    last = np.full(m, -1, np.int64)  # each label's entry of the row it was last met in
    # room for the entries at once where ENTRY_PIXELS holds: each growth copies them to
    # new pages (the 5120 x 5120 nuclei set, 292,500 entries: 26 ms, against 33 ms
    # growing from 65,536)
    cap = min(max(1 << 12, h * w // ENTRY_PIXELS), max_entries)
    ent_v = np.empty(cap, np.int64)
    ent_i = np.empty(cap, np.int64)
    ent_lo = np.empty(cap, np.int64)
    ent_hi = np.empty(cap, np.int64)
    ent_n = np.empty(cap, np.int64)
    n_ent = 0
    i = 0
    while i < h and w > 0:
        i, hi, n_ent = _rows_runs(lab, i, row0, count, sums, low, high, last, ent_v,
                                  ent_i, ent_lo, ent_hi, ent_n, n_ent)
        if hi < 0:
            return (PASS_NEGATIVE, hi, count, sums, low, high, ent_v, ent_i, ent_lo, ent_hi,
                    ent_n, 0)
        if i == h:
            break
        if hi >= m:  # room for the row's labels
            if hi >= max_values:
                return (PASS_TOO_LARGE, i, count, sums, low, high, ent_v, ent_i, ent_lo,
                        ent_hi, ent_n, 0)
            m = min(max(2 * m, hi + 1), max_values)
            count = _grow(count, m, 0)
            sums = _grow(sums, m, 0.0)
            low = _grow(low, m, big)
            high = _grow(high, m, -1)
            last = _grow(last, m, -1)
        if n_ent + w > cap:  # room for the row's entries
            if n_ent + w > max_entries:
                return (PASS_TOO_LARGE, i, count, sums, low, high, ent_v, ent_i, ent_lo,
                        ent_hi, ent_n, 0)
            # grow by half (each new page is a page fault: no more than needed)
            cap = min(max(cap + cap // 2, n_ent + w), max_entries)
            ent_v = _grow(ent_v[:n_ent], cap, 0)
            ent_i = _grow(ent_i[:n_ent], cap, 0)
            ent_lo = _grow(ent_lo[:n_ent], cap, 0)
            ent_hi = _grow(ent_hi[:n_ent], cap, 0)
            ent_n = _grow(ent_n[:n_ent], cap, 0)
    return PASS_OK, 0, count, sums, low, high, ent_v, ent_i, ent_lo, ent_hi, ent_n, n_ent


@njit(cache=True)
def _grow(a, size, fill):  # pragma: no cover - compiled
    """``a`` (1-D or 2-D) in a new array of ``size`` rows, the new rows set to ``fill``."""
    shape = (size,) + a.shape[1:]  # noqa: RUF005 (numba: no starred tuples)
    out = np.empty(shape, a.dtype)
    out[: a.shape[0]] = a
    out[a.shape[0]:] = fill
    return out


@njit(cache=True, nogil=True)
def _rows_runs(lab, i0, row0, count, sums, low, high, last, ent_v, ent_i, ent_lo, ent_hi,
               ent_n, n_ent):  # pragma: no cover - compiled
    """The runs of rows ``i0, i0 + 1, ...`` of ``lab`` (:func:`row_runs`), up to the first
    row whose labels or entries would not fit in the arrays as they are. Returns ``(i,
    value, n_ent)``: the row it stopped at (``h`` when every row was read), that row's
    negative label (a negative ``value``: the pass stops there) or its largest label, and
    the number of entries.

    A row is read in place (``lab[i, j]``, no view of it: each view's reference would be
    counted): once for its smallest and largest label, in the labels' own type (the
    comparisons vectorise), then for the columns where the label changes, a vector at a
    time, as the set bits of :func:`._numba_intrinsics.changes` (one comparison of
    :data:`._numba_intrinsics.CHANGE_BYTES` bytes), each taken by
    :func:`._numba_intrinsics.lowest_bit`: the work goes with the runs, not the pixels.
    (Passing over blocks of 16 labels that all continued the run, and going pixel by pixel
    through the others, took 0.24 against 0.20 ms for the whole pass on the 512 x 512
    nuclei set, and 28.5 against 20.7 ms on its 5120 x 5120 tiling, one thread, in runs
    taken in turns; the same entries.)"""
    h, w = lab.shape
    m = count.shape[0]
    cap = ent_v.shape[0]
    lanes = CHANGE_BYTES // lab.itemsize
    for i in range(i0, h):
        lo_v = lab[i, 0]
        hi_v = lab[i, 0]
        for j in range(1, w):
            lo_v = min(lo_v, lab[i, j])
            hi_v = max(hi_v, lab[i, j])
        if np.int64(lo_v) < 0:
            return i, np.int64(lo_v), n_ent
        hi = max(np.int64(hi_v), 0)
        if hi == 0:
            continue
        if hi >= m or n_ent + w > cap:
            return i, hi, n_ent
        ii = row0 + i
        start = 0
        j = 1
        while j + lanes <= w:
            bits = changes(lab, i, j)
            while bits:
                c = j + lowest_bit(bits)
                n_ent = _end_run(np.int64(lab[i, start]), ii, start, c, count, sums, low,
                                 high, last, ent_v, ent_i, ent_lo, ent_hi, ent_n, n_ent)
                start = c
                bits &= bits - np.uint64(1)
            j += lanes
        for c in range(j, w):
            if lab[i, c] != lab[i, c - 1]:
                n_ent = _end_run(np.int64(lab[i, start]), ii, start, c, count, sums, low,
                                 high, last, ent_v, ent_i, ent_lo, ent_hi, ent_n, n_ent)
                start = c
        n_ent = _end_run(np.int64(lab[i, start]), ii, start, w, count, sums, low, high,
                         last, ent_v, ent_i, ent_lo, ent_hi, ent_n, n_ent)
    return h, 0, n_ent


@njit(cache=True, inline="always")
def _end_run(q, i, start, c, count, sums, low, high, last, ent_v, ent_i, ent_lo, ent_hi,
             ent_n, n_ent):  # pragma: no cover - compiled
    """The run of label ``q`` on columns ``start .. c - 1`` of row ``i`` added to its
    label's numbers and entries (:func:`row_runs`; nothing for the background, 0);
    returns the number of entries."""
    if q == 0:
        return n_ent
    size = c - start
    if count[q] == 0:
        low[q, 0] = i
    count[q] += size
    sums[q, 0] += i * size
    sums[q, 1] += (start + c - 1) * size // 2
    high[q, 0] = i
    low[q, 1] = min(low[q, 1], start)
    high[q, 1] = max(high[q, 1], c - 1)
    e = last[q]
    if e >= 0 and ent_i[e] == i:
        ent_hi[e] = c - 1
        ent_n[e] += size
        return n_ent
    ent_v[n_ent] = q
    ent_i[n_ent] = i
    ent_lo[n_ent] = start
    ent_hi[n_ent] = c - 1
    ent_n[n_ent] = size
    last[q] = n_ent
    return n_ent + 1


@njit(cache=True)
def hulls_from_rows(bands, lut, n_objects):  # pragma: no cover - compiled
    """Strict convex hull vertices of every object from its row extremes, in the order of
    :func:`fastmoments.disk.enclosing.convex_hulls`: counter-clockwise in the
    ``(x, y) = (col, row)`` plane from the vertex of smallest ``(col, row)``. ``bands``:
    the entries of :func:`row_runs` on consecutive bands of rows, a tuple of ``(ent_v,
    ent_i, ent_lo, ent_hi, ent_n, n_ent)``, read where each band's pass left them (one
    band: the whole image); ``lut``: the object index of each label.

    The entries are put object by object (a counting sort, rows stay in order) and each
    object's go through Andrew's monotone chain (:func:`_hull_chain`, in its own scratch)
    with rows and columns swapped; the swap turns the vertices clockwise, so each
    object's are read back in reverse, from the vertex of smallest ``(col, row)``.
    Returns ``(points, counts, first, nrow, row, lo, hi, npx)``: the vertices (``(2, P)``
    float64 rows and columns, exact), their number per object, and the entries object by
    object (object ``k``'s are ``first[k] .. first[k] + nrow[k] - 1`` of ``row``, ``lo``,
    ``hi``, ``npx``: the row, its first and last column of the object, the object's
    pixels in it)."""
    nrow = np.zeros(n_objects, np.int64)
    n_e = 0
    for b in range(len(bands)):
        ent_v = bands[b][0]
        for e in range(bands[b][5]):
            nrow[lut[ent_v[e]]] += 1
        n_e += bands[b][5]
    first = np.empty(n_objects, np.int64)
    acc = 0
    for k in range(n_objects):
        first[k] = acc
        acc += nrow[k]
    fill = first.copy()
    srow = np.empty(n_e, np.int64)
    slo = np.empty(n_e, np.int64)
    shi = np.empty(n_e, np.int64)
    sn = np.empty(n_e, np.int64)
    for b in range(len(bands)):
        ent_v, ent_i, ent_lo, ent_hi, ent_n, n_b = bands[b]
        for e in range(n_b):
            k = lut[ent_v[e]]
            q = fill[k]
            srow[q] = ent_i[e]
            slo[q] = ent_lo[e]
            shi[q] = ent_hi[e]
            sn[q] = ent_n[e]
            fill[k] = q + 1
    mrow = 1
    for k in range(n_objects):
        mrow = max(mrow, nrow[k])
    out_c = np.empty(2 * mrow, np.int64)  # one object's; swapped: its "rows" are columns
    out_r = np.empty(2 * mrow, np.int64)
    counts = np.zeros(n_objects, np.int64)
    pts = np.empty((2, 2 * n_e))  # the vertices' rows and columns (exact in float64)
    at = 0
    for k in range(n_objects):
        c = _hull_chain(first[k], nrow[k], srow, slo, shi, out_c, out_r, 0)
        s = 0  # the vertex of smallest (col, row)
        for t in range(1, c):
            if (out_c[t] < out_c[s]
                    or (out_c[t] == out_c[s] and out_r[t] < out_r[s])):
                s = t
        for t in range(c):
            u = (s - t) % c
            pts[0, at + t] = out_r[u]
            pts[1, at + t] = out_c[u]
        counts[k] = c
        at += c
    return pts[:, :at], counts, first, nrow, srow, slo, shi, sn


# ------------------------------------------------------ Zernike sums, object by object
@njit(cache=True, error_model="numpy", fastmath={"reassoc"})
def zernike_box_sums(lab, ids, bbox, img, centre, radius, order, cellprofiler, limit, out,
                     visit):  # pragma: no cover - compiled
    r""":func:`zernike_image_sums` object by object: object ``k``'s pixels are those of label
    ``ids[k]`` within its bounding box ``bbox[k]`` (``(min_row, min_col, max_row + 1,
    max_col + 1)``), read in place, a piece of :data:`PIECE` at a time; no pass over the
    whole image, no scratch but the pieces. The same positions, test and kernel values as
    :func:`zernike_image_sums` (:func:`_piece_sums`); the sums are added in another order,
    so they agree to rounding. ``visit``: the order in which the objects are taken (by the
    first row of their boxes, so that the rows they read are still in the caches)."""
    T = order
    H = T // 2 + 2
    S = PIECE
    prow = np.empty(S, np.int64)
    pcol = np.empty(S, np.int64)
    pw = np.empty(S)
    ur = np.empty(S)
    ui = np.empty(S)
    rho = np.empty(S)
    pr = np.empty((T + 1, S))
    pi = np.empty((T + 1, S))
    rad = np.zeros((3, H, S))
    weighted = img.shape[0] > 0
    for e in range(visit.shape[0]):
        k = visit[e]
        r = radius[k]
        if not r > 0:  # radius 0 or NaN: no pixel passes the test
            continue
        v = ids[k]
        t = 0
        for i in range(bbox[k, 0], bbox[k, 2]):
            for j in range(bbox[k, 1], bbox[k, 3]):
                if np.int64(lab[i, j]) == v:
                    prow[t] = i
                    pcol[t] = j
                    pw[t] = np.float64(img[i, j]) if weighted else 1.0
                    t += 1
                    if t == S:
                        _piece_sums(S, 0, k, T, H, prow, pcol, pw, centre[k, 0],
                                    centre[k, 1], r, cellprofiler, limit, out, ur, ui, rho,
                                    pr, pi, rad)
                        t = 0
        if t:
            _piece_sums(t, 0, k, T, H, prow, pcol, pw, centre[k, 0], centre[k, 1], r,
                        cellprofiler, limit, out, ur, ui, rho, pr, pi, rad)


@njit(cache=True, error_model="numpy", fastmath={"reassoc"}, inline="always")
def _piece_sums(L, p0, k, T, H, prow, pcol, pw, ci, cj, r, cellprofiler, limit, out, ur, ui,
                rho, pr, pi, rad):  # pragma: no cover - compiled
    r"""Add the kernel values of the ``L`` pixels ``p0 .. p0 + L - 1`` of ``prow``, ``pcol``,
    ``pw`` (object ``k``, centre ``(ci, cj)``, radius ``r``) to ``out[k]``: their positions
    (the operations of :func:`_add_pixel`; a pixel that fails the test :math:`\rho^2 \le`
    ``limit`` weighs 0), then :func:`_run_sums`."""
    for t in range(L):
        dy = (prow[p0 + t] - ci) / r
        dx = (pcol[p0 + t] - cj) / r
        rho2 = dx * dx + dy * dy
        keep = rho2 <= limit
        inside = keep and rho2 > 0
        q = math.sqrt(rho2) if inside else 1.0
        a = dx
        b = dy
        if cellprofiler:
            a = dy
            b = dx
        rho[t] = q if inside else 0.0
        ur[t] = a / q if inside else 0.0
        ui[t] = b / q if inside else 0.0
        pr[0, t] = pw[p0 + t] if keep else 0.0
        pi[0, t] = 0.0
    _run_sums(L, k, T, H, out, ur, ui, rho, pr, pi, rad)
