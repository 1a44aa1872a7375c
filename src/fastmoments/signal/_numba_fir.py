"""numba kernels of the direct FIR (:mod:`.fir`): a symmetric or antisymmetric kernel along one
axis of a C-contiguous ``(pre, n, post)`` array, boundary modes handled inside the loops.

Imported lazily (by :func:`.fir.numba_kernels`), so that ``import fastmoments`` does not import
numba. Every function is compiled with ``cache=True``: the machine code is kept on disk and
later processes load it instead of compiling.

The kernel is given by its half ``hh[k]``, ``k = 0..W``: ``y[n] = hh[0] x[n] + Σ_{k≥1} hh[k]
(x[n-k] + s x[n+k])`` with ``s = +1`` (even kernels: orders 0 and 2) or ``s = -1`` (odd: order
1, where ``h[-k] = -h[k]`` and ``y[n] = Σ_k h[k] x[n-k]``). Samples outside ``[0, n)`` follow
:mod:`scipy.ndimage`'s modes, coded 0 reflect, 1 nearest, 2 mirror, 3 wrap, 4 constant.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._numba import set_threads

__all__ = ["all_finite", "fir_parallel", "fir_serial", "set_threads"]

# reassociation lets LLVM vectorise the sums; no "nnan"/"ninf": NaN and inf must propagate
_FM = {"reassoc", "contract"}

# samples per tile of a line (the working set stays in the L1 cache), columns per block of the
# strided kernel
TILE = 2048
BLOCK = 512


@njit(cache=True, inline="always")
def _src(j, n, mode):
    """Index in ``[0, n)`` of extended sample ``j`` (-1: the constant ``cval``)."""
    if 0 <= j < n:
        return j
    if mode == 0:
        p = 2 * n
        j = j % p
        if j >= n:
            j = p - 1 - j
        return j
    if mode == 1:
        return 0 if j < 0 else n - 1
    if mode == 2:
        if n == 1:
            return 0
        p = 2 * n - 2
        j = j % p
        if j >= n:
            j = p - j
        return j
    if mode == 3:
        return j % n
    return -1


@njit(cache=True, fastmath=_FM)
def _span(src, yv, hh, odd):
    """``yv[j] = hh[0] s[j] + Σ_k hh[k] (s[j-k] ± s[j+k])`` with ``s = src[W:]``: ``src`` holds
    the ``m + 2W`` inputs of the ``m`` outputs ``yv``. The slices are indexed from 0 by range
    variables (no negative-index wraparound), so LLVM vectorises the loops."""
    m = yv.shape[0]
    w = hh.shape[0] - 1
    xv = src[w:w + m]
    h0 = hh[0]
    acc = np.empty(m, dtype=hh.dtype)  # the sums in the kernel's precision (see fir.py)
    for j in range(m):
        acc[j] = h0 * xv[j]
    for k in range(1, w + 1):
        hk = hh[k]
        xa = src[w - k:w - k + m]
        xb = src[w + k:w + k + m]
        if odd:
            for j in range(m):
                acc[j] += hk * xa[j] - hk * xb[j]
        else:
            for j in range(m):
                acc[j] += hk * xa[j] + hk * xb[j]
    for j in range(m):
        yv[j] = acc[j]


@njit(cache=True)
def _edge(xr, yr, hh, odd, mode, cval, a0, a1):
    """Outputs ``a0..a1-1`` near an end: their ``a1 - a0 + 2W`` inputs, extended by the mode,
    gathered into a small buffer first (never the whole signal)."""
    n = xr.shape[0]
    w = hh.shape[0] - 1
    buf = np.empty(a1 - a0 + 2 * w, dtype=xr.dtype)
    for q in range(buf.shape[0]):
        s = _src(a0 - w + q, n, mode)
        buf[q] = cval if s < 0 else xr[s]
    _span(buf, yr[a0:a1], hh, odd)


@njit(cache=True)
def _line_tile(xr, yr, hh, odd, mode, cval, t0, t1):
    """Outputs ``t0..t1-1`` of one contiguous line ``xr`` into ``yr``."""
    n = xr.shape[0]
    w = hh.shape[0] - 1
    lo = max(t0, w)
    hi = min(t1, n - w)
    if lo < hi:
        _span(xr[lo - w:hi + w], yr[lo:hi], hh, odd)
        if t0 < lo:
            _edge(xr, yr, hh, odd, mode, cval, t0, lo)
        if hi < t1:
            _edge(xr, yr, hh, odd, mode, cval, hi, t1)
    else:
        _edge(xr, yr, hh, odd, mode, cval, t0, t1)


@njit(cache=True, fastmath=_FM)
def _col_block(x, y, hh, odd, mode, cval, p, i, c0, c1):
    """Output row ``i`` of ``y[p]`` (columns ``c0..c1-1``) along the middle axis of
    ``x`` ``(pre, n, post)``: the sum of ``2W + 1`` input rows, vectorised along the row (the
    rows are sliced first, so that the loops index from 0 and LLVM vectorises them)."""
    n = x.shape[1]
    w = hh.shape[0] - 1
    m = c1 - c0
    xp = x[p]
    yi = y[p, i, c0:c1]
    xi = xp[i, c0:c1]
    h0 = hh[0]
    acc = np.empty(m, dtype=hh.dtype)  # the sums in the kernel's precision (see fir.py)
    for c in range(m):
        acc[c] = h0 * xi[c]
    for k in range(1, w + 1):
        hk = hh[k]
        a = _src(i - k, n, mode)
        b = _src(i + k, n, mode)
        sk = -hk if odd else hk
        if a >= 0 and b >= 0:
            xa = xp[a, c0:c1]
            xb = xp[b, c0:c1]
            for c in range(m):
                acc[c] += hk * xa[c] + sk * xb[c]
        elif a >= 0:
            xa = xp[a, c0:c1]
            const = sk * cval
            for c in range(m):
                acc[c] += hk * xa[c] + const
        elif b >= 0:
            xb = xp[b, c0:c1]
            const = hk * cval
            for c in range(m):
                acc[c] += sk * xb[c] + const
        else:
            const = (hk + sk) * cval
            for c in range(m):
                acc[c] += const
    for c in range(m):
        yi[c] = acc[c]


@njit(cache=True)
def fir_serial(x, y, hh, odd, mode, cval):
    """``y = h * x`` along axis 1 of ``(pre, n, post)`` arrays, on the calling thread."""
    pre, n, post = x.shape
    if post == 1:
        xs = x.reshape(pre, n)
        ys = y.reshape(pre, n)
        for p in range(pre):
            for t0 in range(0, n, TILE):
                _line_tile(xs[p], ys[p], hh, odd, mode, cval, t0, min(t0 + TILE, n))
    else:
        for p in range(pre):
            for i in range(n):
                for c0 in range(0, post, BLOCK):
                    _col_block(x, y, hh, odd, mode, cval, p, i, c0, min(c0 + BLOCK, post))


@njit(cache=True, parallel=True)
def fir_parallel(x, y, hh, odd, mode, cval):
    """:func:`fir_serial` spread over numba's threads (tiles of lines, or output rows)."""
    pre, n, post = x.shape
    if post == 1:
        xs = x.reshape(pre, n)
        ys = y.reshape(pre, n)
        tiles = (n + TILE - 1) // TILE
        for job in prange(pre * tiles):
            p = job // tiles
            t0 = (job % tiles) * TILE
            _line_tile(xs[p], ys[p], hh, odd, mode, cval, t0, min(t0 + TILE, n))
    else:
        blocks = (post + BLOCK - 1) // BLOCK
        for job in prange(pre * n * blocks):
            c0 = (job % blocks) * BLOCK
            r = job // blocks
            _col_block(x, y, hh, odd, mode, cval, r // n, r % n, c0, min(c0 + BLOCK, post))


@njit(cache=True, fastmath={"reassoc"})
def all_finite(v):
    """Whether the flat array ``v`` holds only finite values (``v - v`` is NaN otherwise)."""
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i] - v[i]
    return s == 0.0
