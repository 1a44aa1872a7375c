r"""The CPU kernel of :func:`~fastmoments.recognition.pair_statistics`: one pass over the pairs.

Each pair's distance :math:`d_{ij} = \sqrt{\sum_k (x_{ik} - x_{jk})^2}` (the features in order,
in the features' dtype, as SciPy's ``pdist`` sums them) goes straight into its bin, the sum of
the distances and the list of the closest pairs: no block of distances is written to memory,
bucketized and reduced by separate passes. Rows are dealt to the blocks round-robin (block
``b`` takes rows ``b, b + B, ...``), which balances the triangle of pairs; the blocks run in
parallel, each with its own counts, sum and closest pairs, merged at the end.

Imported on first use only (``import fastmoments`` does not import numba).
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["pair_stats"]

#: Pairs ``(i, j), ..., (i, j + TILE - 1)`` whose distances are summed side by side (the
#: features of ``x`` transposed, so that this loop runs over contiguous memory and vectorizes).
TILE = 16


@numba.njit(cache=True, nogil=True, inline="always")
def _bin(dist, edges):
    """How many ``edges`` are ``<= dist`` (``torch.bucketize(..., right=True)``)."""
    lo = 0
    hi = edges.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if edges[mid] <= dist:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True, inline="always")
def _worst(bd, bi, b):
    """Position of the largest ``(distance, pair)`` in block ``b``'s list of closest pairs."""
    w = 0
    for q in range(1, bd.shape[1]):
        if bd[b, q] > bd[b, w] or (bd[b, q] == bd[b, w] and bi[b, q] > bi[b, w]):
            w = q
    return w


@numba.njit(parallel=True, cache=True, nogil=True)
def pair_stats(xt, r0, r1, edges, k, blocks):
    """Counts per bin, sum of the distances and each block's ``k`` closest pairs, over the
    pairs ``(i, j)``, ``r0 <= i < r1``, ``j > i``.

    Parameters
    ----------
    xt : ndarray
        ``(F, n)`` features, transposed and C-contiguous (float32 or float64).
    r0, r1 : int
        The rows ``i`` to pair with every later row.
    edges : ndarray
        Increasing bin edges, in the dtype of ``xt``.
    k : int
        Closest pairs kept per block (0: none).
    blocks : int
        Blocks of rows run in parallel.

    Returns
    -------
    counts : ndarray
        ``(len(edges) + 1,)`` int64: pairs with ``i`` edges at or below their distance.
    total : float
        Sum of the distances (float64).
    dist, pair : ndarray
        ``blocks * max(k, 1)`` candidates for the closest pairs (``pair = i * n + j``, -1 for
        an unused slot with distance ``inf``): each block's ``k`` smallest
        ``(distance, pair)``.
    """
    f, n = xt.shape
    nb = edges.size + 1
    kk = max(k, 1)
    counts = np.zeros((blocks, nb), np.int64)
    sums = np.zeros(blocks, np.float64)
    bd = np.full((blocks, kk), np.inf)
    bi = np.full((blocks, kk), -1, np.int64)
    for b in numba.prange(blocks):
        acc = np.empty(TILE, xt.dtype)
        total = 0.0
        worst = np.inf
        wpos = 0
        for i in range(r0 + b, min(r1, n - 1), blocks):
            j0 = i + 1
            while j0 < n:
                m = min(TILE, n - j0)
                for t in range(m):
                    acc[t] = 0.0
                for c in range(f):
                    xi = xt[c, i]
                    for t in range(m):
                        d = xi - xt[c, j0 + t]
                        acc[t] += d * d
                for t in range(m):
                    dist = math.sqrt(acc[t])
                    counts[b, _bin(dist, edges)] += 1
                    total += dist
                    # pairs come in increasing (i, j) within a block: one at the worst
                    # distance is never ahead of the pairs already kept
                    if k > 0 and dist < worst:
                        bd[b, wpos] = dist
                        bi[b, wpos] = i * n + j0 + t
                        wpos = _worst(bd, bi, b)
                        worst = bd[b, wpos]
                j0 += m
        sums[b] = total
    out = np.zeros(nb, np.int64)
    for b in range(blocks):
        for q in range(nb):
            out[q] += counts[b, q]
    return out, sums.sum(), bd.ravel(), bi.ravel()
