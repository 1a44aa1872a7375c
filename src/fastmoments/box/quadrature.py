r"""Per-axis matrices of the separable box moments: k-point integration and reconstruction.

For an axis of ``n`` samples the pixel ``i`` (``i = 0..n-1``) covers
:math:`[-1 + i\Delta, -1 + (i+1)\Delta]` with :math:`\Delta = 2/n`, so the coordinate runs from
-1 to 1 as the array index grows (the thesis, Eq. 34, runs its y axis from 1 down to -1; we use
the same direction on every axis so that index order and coordinate order agree).

**Analysis matrix** (thesis Eq. 33 and 38-44). The integral of the weighted polynomial over a
pixel is replaced by a k-point rule with nodes :math:`x_{i,r}` and weights :math:`\omega_r`:

.. math:: A_{n,i} = \frac{1}{s_n \rho_n}\sum_{r=1}^{k} \omega_r\,
          P_n^{(\alpha,\beta)}(x_{i,r})\, w^{(\alpha,\beta)}(x_{i,r})

* ``"midpoint"`` (the thesis's k x k scheme, Eq. 34): :math:`x_{i,r} = -1 + (ik + r - 1/2)\Delta/k`,
  :math:`\omega_r = \Delta/k`;
* ``"gauss"``: k-point Gauss-Legendre nodes and weights mapped onto each pixel.

Here :math:`s_n = 1` for Jacobi (and Legendre) moments and :math:`s_n = c_n` of Eq. 20 for
Gegenbauer moments, whose polynomial :math:`G_n^{(\lambda)} = c_n P_n^{(\lambda-1/2,\lambda-1/2)}`
has norm :math:`c_n^2 \rho_n`. The product of one such matrix per axis contracted with the image
gives :math:`\hat J_{m,n}` of Eq. 31/35 (and :math:`\hat J_{m,n,o}` of Eq. 42).

**Synthesis matrix** (Eq. 23/26): :math:`S_{n,i} = s_n P_n^{(\alpha,\beta)}(\bar x_i)` at the pixel
centres :math:`\bar x_i = -1 + (i + 1/2)\Delta`, so that
:math:`\hat f = \sum J_{m,n} S_{m,i} S_{n,j}`.

Both are computed in float64 from the orthonormal recurrence
(:func:`~fastmoments.box.polynomials.jacobi_orthonormal`): :math:`P_n/\rho_n = p_n/\sqrt{\rho_n}`
and :math:`P_n = \sqrt{\rho_n}\,p_n`. When :math:`\alpha=\beta` only the left half of the pixels
is evaluated and the right half follows from :math:`P_n(-x) = (-1)^n P_n(x)` (Eq. 18).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from .._validate import check_choice
from .polynomials import gegenbauer_scale, jacobi_norms, jacobi_orthonormal, jacobi_weight

__all__ = ["NORMALIZATIONS", "QUADRATURES", "analysis_matrix", "subpoints", "synthesis_matrix"]

QUADRATURES = ("midpoint", "gauss")
NORMALIZATIONS = ("jacobi", "gegenbauer")

_CHUNK_VALUES = 2_000_000  # polynomial values evaluated at once (16 MB of float64)


def subpoints(n: int, k: int, quadrature: str) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``(n, k)`` and weights ``(k,)`` of the per-pixel rule on an axis of ``n`` pixels.

    Examples
    --------
    >>> x, w = subpoints(2, 2, "midpoint")
    >>> x
    array([[-0.75, -0.25],
           [ 0.25,  0.75]])
    >>> w
    array([0.5, 0.5])
    """
    check_choice("quadrature", quadrature, QUADRATURES)
    delta = 2.0 / n
    i = np.arange(n, dtype=np.float64)[:, None]
    if quadrature == "midpoint":
        r = np.arange(k, dtype=np.float64)[None, :]
        x = -1.0 + (i * k + r + 0.5) * (delta / k)
        w = np.full(k, delta / k)
    else:
        t, g = np.polynomial.legendre.leggauss(k)
        x = -1.0 + (i + 0.5) * delta + t[None, :] * (delta / 2)
        w = g * (delta / 2)
    return x, w


def _scale(order: int, alpha: float, beta: float, normalization: str) -> np.ndarray:
    check_choice("normalization", normalization, NORMALIZATIONS)
    if normalization == "jacobi":
        return np.ones(order + 1)
    if alpha != beta:
        raise ValueError(f"normalization='gegenbauer' needs alpha == beta, got {alpha}, {beta}")
    return gegenbauer_scale(order, alpha + 0.5)


def _columns(n: int, alpha: float, beta: float) -> int:
    """How many pixel columns to evaluate (half when the parity symmetry gives the rest)."""
    return n - n // 2 if alpha == beta else n


def _mirror(half: np.ndarray, n: int) -> np.ndarray:
    """Complete a left-half table with P_n(-x) = (-1)^n P_n(x)."""
    order = half.shape[0] - 1
    sign = np.where(np.arange(order + 1) % 2 == 0, 1.0, -1.0)[:, None]
    right = (sign * half[:, : n // 2])[:, ::-1]
    return np.ascontiguousarray(np.concatenate([half, right], axis=1))


@lru_cache(maxsize=64)
def analysis_matrix(n: int, order: int, alpha: float, beta: float, k: int, quadrature: str,
                    normalization: str = "jacobi") -> np.ndarray:
    r"""The float64 analysis matrix :math:`A` of shape ``(order + 1, n)`` (read-only, cached).

    Examples
    --------
    >>> A = analysis_matrix(64, 3, 0.0, 0.0, 4, "midpoint")
    >>> A.shape
    (4, 64)
    >>> round(float(A[0].sum()), 12)   # J_0 of a constant 1 image is 1
    1.0
    """
    scale = _scale(order, alpha, beta, normalization)
    nodes, weights = subpoints(n, k, quadrature)
    cols = _columns(n, alpha, beta)
    nodes = nodes[:cols]
    rows = 1.0 / (scale * np.sqrt(jacobi_norms(order, alpha, beta)))
    out = np.zeros((order + 1, cols))
    step = max(1, _CHUNK_VALUES // max(1, (order + 1) * k))
    wt = torch.from_numpy(weights)
    for c0 in range(0, cols, step):
        x = torch.from_numpy(np.ascontiguousarray(nodes[c0:c0 + step]))
        vals = jacobi_orthonormal(order, alpha, beta, x)          # (order+1, m, k)
        vals = vals * (jacobi_weight(x, alpha, beta) * wt)
        out[:, c0:c0 + step] = vals.sum(-1).numpy()
    out *= rows[:, None]
    if cols < n:
        out = _mirror(out, n)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=64)
def synthesis_matrix(n: int, order: int, alpha: float, beta: float,
                     normalization: str = "jacobi") -> np.ndarray:
    r"""The float64 synthesis matrix :math:`S_{n,i} = s_n P_n(\bar x_i)`, ``(order + 1, n)``.

    Examples
    --------
    >>> S = synthesis_matrix(4, 1, 0.0, 0.0)     # P_0 = 1, P_1 = x at the pixel centres
    >>> S
    array([[ 1.  ,  1.  ,  1.  ,  1.  ],
           [-0.75, -0.25,  0.25,  0.75]])
    """
    scale = _scale(order, alpha, beta, normalization)
    cols = _columns(n, alpha, beta)
    x = torch.from_numpy(-1.0 + (np.arange(cols, dtype=np.float64) + 0.5) * (2.0 / n))
    vals = jacobi_orthonormal(order, alpha, beta, x).numpy()
    out = vals * (scale * np.sqrt(jacobi_norms(order, alpha, beta)))[:, None]
    if cols < n:
        out = _mirror(out, n)
    out.setflags(write=False)
    return out
