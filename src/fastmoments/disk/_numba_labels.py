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

Imported lazily (``import fastmoments`` does not import numba); compiled with
``cache=True``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["zernike_label_sums"]


@njit(cache=True, error_model="numpy")  # x / 0 gives inf or NaN, as NumPy
def zernike_label_sums(obj, rows, cols, f, centre, radius, order, cellprofiler, limit,
                       out):  # pragma: no cover - compiled
    r"""Add each pixel's Zernike kernel values to its object's sums.

    ``obj``, ``rows``, ``cols``: ``(G,)`` int64 object index, row and column of each pixel;
    ``f``: ``(G,)`` float64 weights, or ``(0,)`` for weight 1; ``centre``: ``(n, 2)``,
    ``radius``: ``(n,)`` float64; ``order``: the largest ``n``; ``cellprofiler``: the unit
    direction is :math:`(\hat y + i \hat x)/\rho` (else :math:`(\hat x + i \hat y)/\rho`, the
    conjugate kernel of the standard moments with :math:`y` up); ``limit``: largest
    :math:`\rho^2` kept; ``out``: ``(n, K, 2)`` float64 sums, pairs in ``(n, m)`` order with
    ``m = n mod 2, ..., n``, added to.
    """
    T = order
    H = T // 2 + 2
    prev2 = np.zeros(H)
    prev1 = np.zeros(H)
    cur = np.zeros(H)
    pr = np.empty(T + 1)
    pi = np.empty(T + 1)
    weighted = f.shape[0] > 0
    for p in range(obj.shape[0]):
        k = obj[p]
        r = radius[k]
        dy = (rows[p] - centre[k, 0]) / r
        dx = (cols[p] - centre[k, 1]) / r
        rho2 = dx * dx + dy * dy
        if not rho2 <= limit:  # NaN (radius 0) too
            continue
        rho = math.sqrt(rho2)
        w = f[p] if weighted else 1.0
        if rho > 0:
            if cellprofiler:
                ur, ui = dy / rho, dx / rho
            else:
                ur, ui = dx / rho, dy / rho
        else:
            ur, ui = 0.0, 0.0
        pr[0], pi[0] = w, 0.0
        for m in range(1, T + 1):
            pr[m] = pr[m - 1] * ur - pi[m - 1] * ui
            pi[m] = pr[m - 1] * ui + pi[m - 1] * ur
        for i in range(H):
            prev2[i] = 0.0
            prev1[i] = 0.0
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
                        for i in range(1, L - 1):
                            cur[i] = rho * (prev1[i - 1] + prev1[i]) - prev2[i]
                    else:
                        for i in range(L - 1):
                            cur[i] = rho * (prev1[i] + prev1[i + 1]) - prev2[i]
            par = n % 2
            for i in range(L):
                m = par + 2 * i
                out[k, pos + i, 0] += cur[i] * pr[m]
                out[k, pos + i, 1] += cur[i] * pi[m]
            pos += L
            for i in range(L):
                prev2[i] = prev1[i]
                prev1[i] = cur[i]
