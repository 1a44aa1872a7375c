r"""Jacobi polynomials through their orthonormal three-term recurrence, in float64.

The Jacobi polynomials :math:`P_n^{(\alpha,\beta)}` are orthogonal on :math:`[-1, 1]` for the
weight :math:`w^{(\alpha,\beta)}(x) = (1-x)^\alpha (1+x)^\beta` (thesis Eq. 14-15), with

.. math:: \int_{-1}^{1} w^{(\alpha,\beta)} P_m^{(\alpha,\beta)} P_n^{(\alpha,\beta)}\,dx
          = \rho_n^{(\alpha,\beta)} \delta_{mn},\qquad
          \rho_n^{(\alpha,\beta)} = \frac{2^{\alpha+\beta+1}}{2n+\alpha+\beta+1}
          \frac{\Gamma(n+\alpha+1)\Gamma(n+\beta+1)}{\Gamma(n+\alpha+\beta+1)\, n!}

(thesis Eq. 16-17). Evaluating :math:`P_n` by its classical recurrence (Eq. 13) is fine at low
degree, but the values and the normalisation grow or shrink like powers of :math:`n` and the
ratio :math:`P_n/\rho_n` is formed from two large numbers. Here we evaluate the *orthonormal*
polynomials :math:`p_n = P_n / \sqrt{\rho_n}` instead, with the symmetric (Jacobi-matrix) form of
the recurrence

.. math:: \sqrt{b_{n+1}}\, p_{n+1}(x) = (x - a_n)\, p_n(x) - \sqrt{b_n}\, p_{n-1}(x),
          \qquad p_0 = 1/\sqrt{\rho_0},

.. math:: a_n = \frac{\beta^2-\alpha^2}{(2n+\alpha+\beta)(2n+\alpha+\beta+2)},\qquad
          b_n = \frac{4n(n+\alpha)(n+\beta)(n+\alpha+\beta)}
          {(2n+\alpha+\beta)^2(2n+\alpha+\beta+1)(2n+\alpha+\beta-1)}

(the monic Jacobi recurrence coefficients; :math:`a_0 = (\beta-\alpha)/(\alpha+\beta+2)` and
:math:`b_1 = 4(1+\alpha)(1+\beta)/((2+\alpha+\beta)^2(3+\alpha+\beta))` are written out so that
:math:`\alpha+\beta \in \{0, -1\}` needs no limit). The values stay of order
:math:`n^{\max(\alpha,\beta)+1/2}` at worst, so degrees of several thousand neither overflow nor
lose accuracy. The normalisations :math:`\rho_n` are computed through ``gammaln``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.special import gammaln, gammasgn

__all__ = [
    "gegenbauer_scale",
    "jacobi_norms",
    "jacobi_orthonormal",
    "jacobi_recurrence",
    "jacobi_weight",
]


def _check_ab(alpha: float, beta: float) -> None:
    for name, v in (("alpha", alpha), ("beta", beta)):
        if not math.isfinite(v) or v <= -1.0:
            raise ValueError(f"{name} must be a finite number > -1, got {v}")


def jacobi_recurrence(n_max: int, alpha: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Coefficients of the orthonormal recurrence: ``a[0..n_max]`` and ``sqrt(b[0..n_max+1])``.

    ``sb[n] = sqrt(b_n)`` for ``n >= 1`` (``sb[0] = 0``).

    Examples
    --------
    >>> a, sb = jacobi_recurrence(3, 0.0, 0.0)   # Legendre: b_n = n^2 / (4 n^2 - 1)
    >>> bool(np.allclose(sb[1:] ** 2, [1 / 3, 4 / 15, 9 / 35, 16 / 63]))
    True
    """
    _check_ab(alpha, beta)
    a = np.zeros(n_max + 1)
    b = np.zeros(n_max + 2)
    s = alpha + beta
    a[0] = (beta - alpha) / (s + 2.0)
    n = np.arange(1, n_max + 1, dtype=np.float64)
    if n_max >= 1:
        a[1:] = (beta**2 - alpha**2) / ((2 * n + s) * (2 * n + s + 2))
    b[1] = 4.0 * (1 + alpha) * (1 + beta) / ((2 + s) ** 2 * (3 + s))
    m = np.arange(2, n_max + 2, dtype=np.float64)
    b[2:] = (4 * m * (m + alpha) * (m + beta) * (m + s)
             / ((2 * m + s) ** 2 * (2 * m + s + 1) * (2 * m + s - 1)))
    return a, np.sqrt(b)


def jacobi_norms(n_max: int, alpha: float, beta: float) -> np.ndarray:
    r"""The normalisation constants :math:`\rho_n^{(\alpha,\beta)}`, ``n = 0..n_max`` (Eq. 16-17).

    Examples
    --------
    >>> jacobi_norms(2, 0.0, 0.0)        # Legendre: 2 / (2n + 1)
    array([2.        , 0.66666667, 0.4       ])
    """
    _check_ab(alpha, beta)
    n = np.arange(n_max + 1, dtype=np.float64)
    s = alpha + beta
    out = np.empty(n_max + 1)
    out[0] = math.exp((s + 1) * math.log(2.0) + gammaln(alpha + 1) + gammaln(beta + 1)
                      - gammaln(s + 2))
    if n_max >= 1:
        k = n[1:]
        out[1:] = np.exp((s + 1) * math.log(2.0) - np.log(2 * k + s + 1) + gammaln(k + alpha + 1)
                         + gammaln(k + beta + 1) - gammaln(k + s + 1) - gammaln(k + 1))
    return out


def gegenbauer_scale(n_max: int, lam: float) -> np.ndarray:
    r"""The factors :math:`c_n` of Eq. 20.

    :math:`G_n^{(\lambda)} = c_n P_n^{(\lambda-1/2,\lambda-1/2)}` with

    .. math:: c_n = \frac{\Gamma(\lambda+\tfrac12)\,\Gamma(n+2\lambda)}
                         {\Gamma(2\lambda)\,\Gamma(n+\lambda+\tfrac12)}

    Examples
    --------
    >>> from scipy.special import eval_gegenbauer, eval_jacobi
    >>> c = gegenbauer_scale(4, 1.5)
    >>> bool(np.isclose(eval_gegenbauer(4, 1.5, 0.3), c[4] * eval_jacobi(4, 1.0, 1.0, 0.3)))
    True
    """
    if not math.isfinite(lam) or lam <= -0.5 or lam == 0.0:
        raise ValueError(f"lam must be a finite number > -1/2 and != 0, got {lam}")
    n = np.arange(n_max + 1, dtype=np.float64)
    logc = gammaln(lam + 0.5) + gammaln(n + 2 * lam) - gammaln(2 * lam) - gammaln(n + lam + 0.5)
    sign = gammasgn(lam + 0.5) * gammasgn(n + 2 * lam) * gammasgn(2 * lam) * gammasgn(n + lam + 0.5)
    return sign * np.exp(logc)


def jacobi_weight(x: torch.Tensor, alpha: float, beta: float) -> torch.Tensor:
    r"""The weight :math:`w^{(\alpha,\beta)}(x) = (1-x)^\alpha (1+x)^\beta` (Eq. 15)."""
    return (1.0 - x) ** alpha * (1.0 + x) ** beta


def jacobi_orthonormal(n_max: int, alpha: float, beta: float, x: torch.Tensor) -> torch.Tensor:
    r"""Orthonormal Jacobi polynomials :math:`p_n(x) = P_n^{(\alpha,\beta)}(x)/\sqrt{\rho_n}`.

    Parameters
    ----------
    n_max : int
        Highest degree.
    alpha, beta : float
        Jacobi parameters, both > -1.
    x : torch.Tensor
        Points in :math:`[-1, 1]`, any shape; computed in float64.

    Returns
    -------
    torch.Tensor
        Shape ``(n_max + 1, *x.shape)``, float64, on ``x``'s device.

    Examples
    --------
    >>> from scipy.special import eval_jacobi
    >>> x = torch.linspace(-1, 1, 5, dtype=torch.float64)
    >>> p = jacobi_orthonormal(6, 0.3, 0.7, x)
    >>> ref = eval_jacobi(6, 0.3, 0.7, x.numpy()) / np.sqrt(jacobi_norms(6, 0.3, 0.7)[6])
    >>> bool(np.allclose(p[6].numpy(), ref, rtol=1e-13, atol=1e-13))
    True
    """
    a, sb = jacobi_recurrence(n_max, alpha, beta)
    x = x.to(torch.float64)
    out = torch.empty((n_max + 1, *x.shape), dtype=torch.float64, device=x.device)
    p0 = 1.0 / math.sqrt(jacobi_norms(0, alpha, beta)[0])
    out[0] = p0
    if n_max == 0:
        return out
    out[1] = (x - a[0]) * out[0] / sb[1]
    for n in range(1, n_max):
        # sqrt(b_{n+1}) p_{n+1} = (x - a_n) p_n - sqrt(b_n) p_{n-1}
        out[n + 1] = ((x - a[n]) * out[n] - sb[n] * out[n - 1]) / sb[n + 1]
    return out
