r"""The per-object Zernike sums of :mod:`._numba_labels` by rows of monomial moments, for
degrees up to :data:`fastmoments.disk.labels.ROW_ORDER`: each kernel is a polynomial in
:math:`\hat x, \hat y` with integer coefficients (:func:`monomial_table`), so an object's
sums are its monomial moments :math:`M_{pq} = \sum f \hat x^p \hat y^q` times those
coefficients; :math:`\hat y` is one number a row, so a row costs ``degree + 1`` dot
products of its pixels with the column powers of :math:`\hat x` (:func:`zernike_row_sums`).
While an object computes, the rows of the next object's box are asked for ahead
(:func:`._numba_intrinsics.prefetch`, LLVM's prefetch hint).

Without an image (shape moments) each object's rows come from the one-pass geometry
(:func:`zernike_run_sums`): a row of one run adds the differences of two prefix sums of the
column powers, a few operations whatever its length, and the labels are read only in the
rows where the object has several runs. With an image the pixels of a row must be weighed
one by one, and the box rows stay faster: dot products of a box's full width (about 35
columns on the nuclei) vectorise, those of a run's (about 22) fall to the scalar remainder
of the compiled loops (measured: 43-47 ms for the box rows, 50-110 ms for four layouts of
run-restricted sums on the 5120² nuclei, one thread).

Imported lazily; compiled with ``cache=True``.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from ._numba_intrinsics import prefetch

__all__ = ["monomial_table", "zernike_row_sums"]


@njit(cache=True)
def _prefetch_box(lab, img, weighted, b0, b1, c0, c1):  # pragma: no cover - compiled
    """:func:`._numba_intrinsics.prefetch` the rows ``b0 .. b1 - 1``, columns ``c0 .. c1 -
    1`` of ``lab`` (and of ``img`` when ``weighted``), a cache line (64 bytes) at a
    time."""
    sl = max(1, 64 // lab.itemsize)
    for i in range(b0, b1):
        for j in range(c0, c1, sl):
            prefetch(lab, i, j)
        prefetch(lab, i, c1 - 1)
    if weighted:
        si = max(1, 64 // img.itemsize)
        for i in range(b0, b1):
            for j in range(c0, c1, si):
                prefetch(img, i, j)
            prefetch(img, i, c1 - 1)


@njit(cache=True, inline="always")
def disk_span(x2, limit, i, ci, r, a, b):  # pragma: no cover - compiled
    r"""Row ``i`` of an object (centre row ``ci``, radius ``r``): :math:`\hat y` and its
    columns ``a..b`` (offsets in the box) trimmed at both ends to the pixels with
    ``x2[t]`` + :math:`\hat y^2 \le` ``limit``, the disk being convex; ``a > b`` when none
    is left (all of them when :math:`\hat y^2 >` ``limit``)."""
    dy = (i - ci) / r
    dy2 = dy * dy
    if not dy2 <= limit:  # no pixel of the row passes
        return dy, b + 1, b
    while a <= b and not x2[a] + dy2 <= limit:
        a += 1
    while b >= a and not x2[b] + dy2 <= limit:
        b -= 1
    return dy, a, b


@njit(cache=True, inline="always", error_model="numpy", fastmath={"reassoc"})
def _column_powers(X, x2, j0, W, cj, r, P, limit):  # pragma: no cover - compiled
    r"""An object's columns ``j0 .. j0 + W - 1`` (centre column ``cj``, radius ``r``):
    ``x2[t]`` = :math:`\hat x_t^2` and ``X[p, t]`` = :math:`\hat x_t^p`, 0 in the columns
    where :math:`\hat x^2 >` ``limit`` (no pixel of them passes the test)."""
    for t in range(W):
        dx = (j0 + t - cj) / r
        d2 = dx * dx
        x2[t] = d2
        ok = d2 <= limit  # else x^2 + y^2 > limit in the whole column
        X[0, t] = 1.0 if ok else 0.0
        X[1, t] = dx if ok else 0.0
    for p in range(2, P):
        for t in range(W):
            X[p, t] = X[p - 1, t] * X[1, t]


@functools.lru_cache(maxsize=32)
def monomial_table(order: int, cellprofiler: bool) -> tuple[np.ndarray, np.ndarray,
                                                            np.ndarray]:
    r"""The Zernike kernels up to degree ``order`` as polynomials in
    :math:`\hat x, \hat y`: ``(dst, src, coef)``, one entry per nonzero coefficient, such
    that sum ``dst = 2 K + part`` (``K`` the pair's place in ``(n, m)`` order, ``part`` 0
    real, 1 imaginary) gains ``coef`` times the moment ``src = p (order + 1) + q`` of
    :math:`\hat x^p \hat y^q`.

    With :math:`a + i b` the direction's numerator (:math:`\hat x + i \hat y`, or
    :math:`\hat y + i \hat x` for CellProfiler's convention) and :math:`s = (n - m)/2`,

    .. math:: R_{nm}(\rho)\, u^m = \sum_{k=0}^{s} c_{nmk}\, (a^2 + b^2)^{s-k}
              (a + i b)^m, \qquad
              c_{nmk} = \frac{(-1)^k (n-k)!}{k!\, (\tfrac{n+m}{2}-k)!\, (s-k)!},

    expanded by the binomial theorem in exact integers, then rounded to float64 (each is
    an integer below :math:`2^{53}` for the degrees used)."""
    from math import comb, factorial

    acc: dict[tuple[int, int], int] = {}
    K = 0
    for n in range(order + 1):
        for m in range(n % 2, n + 1, 2):
            s = (n - m) // 2
            for k in range(s + 1):
                c = ((-1) ** k * factorial(n - k)
                     // (factorial(k) * factorial((n + m) // 2 - k) * factorial(s - k)))
                e = s - k
                for t in range(e + 1):  # (a^2 + b^2)^e
                    for j in range(m + 1):  # (a + i b)^m: C(m, j) a^(m - j) (i b)^j
                        v = c * comb(e, t) * comb(m, j) * (1, 1, -1, -1)[j % 4]
                        pa, pb = 2 * t + m - j, 2 * (e - t) + j
                        p, q = (pb, pa) if cellprofiler else (pa, pb)
                        key = (2 * K + j % 2, p * (order + 1) + q)
                        acc[key] = acc.get(key, 0) + v
            K += 1
    # by moment, then sum: consecutive entries add to different sums (no chain of
    # read-modify-writes of one sum)
    items = sorted(((key, v) for key, v in acc.items() if v), key=lambda e: e[0][::-1])
    dst = np.array([key[0] for key, _ in items], np.int64)
    src = np.array([key[1] for key, _ in items], np.int64)
    coef = np.array([float(v) for _, v in items])
    return dst, src, coef


@njit(cache=True, inline="always")
def add_table(flat, base, M, dst, src, coef):  # pragma: no cover - compiled
    """An object's monomial moments ``M`` times the table of :func:`monomial_table`, added
    to its sums ``flat[base:]``, by unsigned indices: numba's index by a signed integer
    that may be negative wraps around, and LLVM then gathers and scatters."""
    ub = np.uint64(base)
    for c in range(dst.shape[0]):
        flat[ub + np.uint64(dst[c])] += coef[c] * M[np.uint64(src[c])]


@njit(cache=True, error_model="numpy", fastmath={"reassoc"})
def zernike_row_sums(lab, ids, bbox, img, centre, radius, order, limit, out, visit, dst, src,
                     coef):  # pragma: no cover - compiled
    r""":func:`zernike_image_sums` object by object, row by row: object ``k``'s pixels are
    those of label ``ids[k]`` within its bounding box ``bbox[k]`` (``(min_row, min_col,
    max_row + 1, max_col + 1)``), read in place. The same positions and test as
    :func:`._numba_labels._add_pixel` (:math:`\hat x` computed once a column, :math:`\hat y` once a
    row), but the kernel values are not evaluated at each pixel: a row of the box adds
    :math:`S_p = \sum f \hat x^p` over its pixels (a pixel that is not the object's or
    fails the test weighs 0), the object's moments :math:`M_{pq} = \sum_{\text{rows}}
    S_p \hat y^q` (:math:`p + q \le` ``order``) gain them, and its Zernike sums are
    :math:`M` times the kernels' monomial coefficients (:func:`monomial_table`: ``dst``,
    ``src``, ``coef``). The sums agree with the per-pixel evaluation to rounding.
    ``visit``: the order in which the objects are taken (by the first row of their boxes,
    so that the rows they read are still in the caches)."""
    T = order
    P = T + 1
    wmax = 1
    for k in range(bbox.shape[0]):
        wmax = max(wmax, bbox[k, 3] - bbox[k, 1])
    x2 = np.empty(wmax)
    X = np.empty((max(P, 2), wmax))  # X[p, t] = x_t^p, 0 in the columns no pixel can pass
    wt = np.empty(wmax)
    S = np.empty(P)
    M = np.empty(P * P)
    flat = out.reshape(-1)
    K2 = out.shape[1] * 2
    weighted = img.shape[0] > 0
    n_visit = visit.shape[0]
    for e in range(n_visit):
        # the box of the next object is asked for row by row while this one computes
        nx = visit[e + 1] if e + 1 < n_visit else visit[e]
        na0 = bbox[nx, 0]
        na1 = bbox[nx, 2] if e + 1 < n_visit else na0
        k = visit[e]
        r = radius[k]
        if not r > 0:  # radius 0 or NaN: no pixel passes the test
            _prefetch_box(lab, img, weighted, na0, na1, bbox[nx, 1], bbox[nx, 3])
            continue
        v = ids[k]
        ci = centre[k, 0]
        cj = centre[k, 1]
        j0 = bbox[k, 1]
        W = bbox[k, 3] - j0
        _column_powers(X, x2, j0, W, cj, r, P, limit)
        M[:] = 0.0
        for i in range(bbox[k, 0], bbox[k, 2]):
            ia = na0 + i - bbox[k, 0]
            if ia < na1:
                _prefetch_box(lab, img, weighted, ia, ia + 1, bbox[nx, 1], bbox[nx, 3])
            dy = (i - ci) / r
            dy2 = dy * dy
            if not dy2 <= limit:  # no pixel of the row passes
                continue
            for t in range(W):
                keep = (np.int64(lab[i, j0 + t]) == v) & (x2[t] + dy2 <= limit)
                f = np.float64(img[i, j0 + t]) if weighted else 1.0
                wt[t] = f if keep else 0.0
            for p in range(P):
                a = 0.0
                for t in range(W):
                    a += wt[t] * X[p, t]
                S[p] = a
            yq = 1.0
            for q in range(P):
                for p in range(P - q):
                    M[p * P + q] += S[p] * yq
                yq *= dy
        _prefetch_box(lab, img, weighted, max(na0, na0 + bbox[k, 2] - bbox[k, 0]), na1,
                      bbox[nx, 1], bbox[nx, 3])
        add_table(flat, k * K2, M, dst, src, coef)


@njit(cache=True, error_model="numpy", fastmath={"reassoc"})
def zernike_run_sums(lab, ids, bbox, centre, radius, order, limit, out, first, nrow, row, lo,
                     hi, npx, dst, src, coef):  # pragma: no cover - compiled
    r"""The shape sums (weight 1) of :func:`zernike_row_sums` from each object's rows as
    the one-pass geometry found them (:func:`._numba_labels.hulls_from_rows`: object
    ``k``'s rows are entries ``first[k] .. first[k] + nrow[k] - 1`` of ``row``, ``lo``,
    ``hi``, ``npx``: the row, the first and the last column of the label in it, and its
    number of pixels there): the label image is read only in the rows where the object's
    pixels are not one run.

    The same positions and test as :func:`zernike_row_sums`. The columns of a row that pass
    :math:`\hat x^2 + \hat y^2 \le` ``limit`` are an interval (each step of the test's
    arithmetic is monotone in :math:`|\hat x|`), found from the row's ends inwards; a run
    of the object's columns ``a .. b`` that pass adds :math:`S_p = C_p(b + 1) - C_p(a)`,
    from the object's prefix sums :math:`C_p` of the column powers :math:`\hat x^p` (a few
    operations a row, whatever its length). The sums agree with the pixel-by-pixel
    evaluation to rounding."""
    T = order
    P = T + 1
    wmax = 1
    for k in range(bbox.shape[0]):
        wmax = max(wmax, bbox[k, 3] - bbox[k, 1])
    x2 = np.empty(wmax)
    X = np.empty((max(P, 2), wmax))  # X[p, t] = x_t^p, 0 in the columns no pixel can pass
    C = np.empty((wmax + 1, P))  # C[t, p] = sum of X[p, :t]
    S = np.empty(P)
    M = np.empty(P * P)  # M[p P + q]
    flat = out.reshape(-1)
    K2 = out.shape[1] * 2
    for k in range(radius.shape[0]):
        r = radius[k]
        if not r > 0:  # radius 0 or NaN: no pixel passes the test
            continue
        ci = centre[k, 0]
        cj = centre[k, 1]
        j0 = bbox[k, 1]
        W = bbox[k, 3] - j0
        _column_powers(X, x2, j0, W, cj, r, P, limit)
        for p in range(P):
            C[0, p] = 0.0
        for t in range(W):  # the powers side by side: independent additions
            for p in range(P):
                C[t + 1, p] = C[t, p] + X[p, t]
        M[:] = 0.0
        for g in range(first[k], first[k] + nrow[k]):
            i = row[g]
            dy, a, b = disk_span(x2, limit, i, ci, r, lo[g] - j0, hi[g] - j0)
            if a > b:
                continue
            if npx[g] == hi[g] - lo[g] + 1:  # one run: nothing to look up
                for p in range(P):
                    S[p] = C[b + 1, p] - C[a, p]
            else:
                _runs_of(lab, i, j0, a, b, ids[k], C, S, P)
            yq = 1.0
            for q in range(P):
                for p in range(P - q):
                    M[p * P + q] += S[p] * yq
                yq *= dy
        add_table(flat, k * K2, M, dst, src, coef)


@njit(cache=True, error_model="numpy", fastmath={"reassoc"})
def _runs_of(lab, i, j0, a, b, v, C, S, P):  # pragma: no cover - compiled
    """``S[p]``: the sums of the column powers (prefix sums ``C``) over the runs of label
    ``v`` in columns ``j0 + a .. j0 + b`` of row ``i``."""
    S[:P] = 0.0
    s = -1
    for t in range(a, b + 2):
        inside = t <= b and np.int64(lab[i, j0 + t]) == v
        if inside and s < 0:
            s = t
        elif not inside and s >= 0:
            for p in range(P):
                S[p] += C[t, p] - C[s, p]
            s = -1


@njit(cache=True, error_model="numpy")
def cellprofiler_magnitudes(re, im, divisor, radius, feats):  # pragma: no cover - compiled
    r"""CellProfiler's magnitudes :math:`\sqrt{\Re S^2 + \Im S^2} / d_k` of the sums ``re``,
    ``im`` (``(n, K)``, any strides) into ``feats[:, :K]``, and NaN in the whole row of
    ``feats`` (the phases too) for the objects of radius 0: the operations of NumPy's
    ``sqrt(re * re + im * im) / d`` in their order (no contraction into fused
    multiply-adds), so the same bits, without its temporary arrays."""
    n, K = re.shape
    for k in range(n):
        d = divisor[k]
        for j in range(K):
            m = re[k, j] * re[k, j]
            m += im[k, j] * im[k, j]
            feats[k, j] = np.sqrt(m) / d
        if radius[k] == 0:
            feats[k, :] = np.nan
