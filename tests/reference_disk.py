"""Independent float64 references for the disk transforms: the definitions, summed directly.

Radial polynomials come from their factorial sums with exact rational coefficients
(:class:`fractions.Fraction`) evaluated with mpmath carrying more digits than the sum
cancels, so they stay exact at any order; the moments are the direct sums of thesis Eq. 3.23
over every sample point of every used pixel, with no symmetry and no grouping.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import mpmath
import numpy as np


@cache
def zernike_coeffs(n: int, m: int) -> tuple[tuple[int, Fraction], ...]:
    m = abs(m)
    return tuple(
        (n - 2 * s, Fraction((-1) ** s * math.factorial(n - s),
                             math.factorial(s) * math.factorial((n + m) // 2 - s)
                             * math.factorial((n - m) // 2 - s)))
        for s in range((n - m) // 2 + 1))


@cache
def pseudo_coeffs(n: int, m: int) -> tuple[tuple[int, Fraction], ...]:
    m = abs(m)
    return tuple(
        (n - s, Fraction((-1) ** s * math.factorial(2 * n + 1 - s),
                         math.factorial(s) * math.factorial(n + m + 1 - s)
                         * math.factorial(n - m - s)))
        for s in range(n - m + 1))


def radial_exact(family: str, n: int, m: int, r: np.ndarray) -> np.ndarray:
    """R_nm(r) from the exact coefficients, evaluated in 40-digit arithmetic."""
    coeffs = zernike_coeffs(n, m) if family == "zernike" else pseudo_coeffs(n, m)
    out = np.empty(np.shape(r))
    # the alternating sum cancels as many digits as its largest coefficient has
    digits = max(len(str(abs(c.numerator))) for _p, c in coeffs) + 30
    with mpmath.workdps(digits):
        for i, rv in enumerate(np.ravel(r)):
            x = mpmath.mpf(float(rv))
            acc = mpmath.mpf(0)
            for p, c in coeffs:
                acc += mpmath.mpf(c.numerator) / c.denominator * x**p
            out.flat[i] = float(acc)
    return out


def sample_points(N: int, k: int, quadrature: str = "midpoint", rule: str = "inscribed"):
    """Every sample point: (row, col, x, y, weight), straight from thesis Eq. 2.3-2.4 and
    3.21-3.22 (or Gauss-Legendre nodes)."""
    if quadrature == "midpoint":
        off = (2 * np.arange(1, k + 1) - k - 1) / (N * k)
        w1 = np.full(k, 2.0 / (N * k))
    else:
        nodes, wts = np.polynomial.legendre.leggauss(k)
        off = nodes / N
        w1 = wts / N
    rows, cols, xs, ys, ws = [], [], [], [], []
    for j in range(N):
        for i in range(N):
            xc = (2 * i - N + 1) / N
            yc = (N - 2 * j - 1) / N
            if rule == "inscribed":
                inside = (abs(xc) + 1 / N) ** 2 + (abs(yc) + 1 / N) ** 2 <= 1 + 1e-15
            else:
                inside = xc**2 + yc**2 <= 1 + 1e-15
            if not inside:
                continue
            for s in range(k):
                for t in range(k):
                    rows.append(j)
                    cols.append(i)
                    xs.append(xc + off[s])
                    ys.append(yc + off[t])
                    ws.append(w1[s] * w1[t])
    return (np.array(rows), np.array(cols), np.array(xs), np.array(ys), np.array(ws))


def moments_direct(family: str, img: np.ndarray, pairs, k: int = 1,
                   quadrature: str = "midpoint", rule: str = "inscribed") -> np.ndarray:
    """A_nm = (n+1)/pi * sum_p w_p f_p R_nm(r_p) e^{-i m theta_p}, by the definition."""
    N = img.shape[-1]
    rows, cols, x, y, w = sample_points(N, k, quadrature, rule)
    r = np.hypot(x, y)
    th = np.arctan2(y, x)
    f = img[rows, cols]
    out = []
    cache: dict = {}
    for n, m in pairs:
        key = (n, abs(m))
        if key not in cache:
            cache[key] = radial_exact(family, n, abs(m), r)
        R = cache[key]
        out.append((n + 1) / math.pi * np.sum(w * f * R * np.exp(-1j * m * th)))
    return np.array(out)


def basis_image(family: str, N: int, n: int, m: int) -> np.ndarray:
    """Re V_nm at the pixel centres, 0 outside the inscribed disk mask."""
    rows, cols, x, y, _w = sample_points(N, 1)
    img = np.zeros((N, N))
    r = np.hypot(x, y)
    img[rows, cols] = radial_exact(family, n, m, r) * np.cos(m * np.arctan2(y, x))
    return img


def sum_bound(images: np.ndarray, coef: float, k: int = 1) -> np.ndarray:
    r"""Bound on the difference between two float64 evaluations of one disk moment that sum
    the same products in different orders (blocked matrix products, another batch shape,
    another method, a turned image), per image.

    A moment is :math:`\sum_p f_p M_p` over the ``P = N^2 k^2`` sample points with
    :math:`|M_p| \le c\, w_p`, where ``coef`` bounds :math:`c |R|` (``(n + 1)/pi`` for the
    Zernike families of order ``n``, since :math:`|R_{nm}| \le 1` on the disk; ``2/pi`` for
    the polar harmonic ones, whose radial functions have modulus at most 1) and the weights
    of a pixel's points add up to :math:`(2/N)^2`. Any ordering of the sum is within
    :math:`\gamma_P \sum_p |f_p M_p|` of the exact value, :math:`\gamma_P = Pu/(1 - Pu)`
    (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Eq. 3.5), so two
    orderings are within twice that.
    """
    N = images.shape[-1]
    total = np.abs(images.reshape(-1, N * N)).sum(axis=1)
    P = N * N * k * k
    u = np.finfo(np.float64).eps / 2
    gamma = P * u / (1 - P * u)
    return 2 * gamma * coef * (2 / N) ** 2 * total


def pht_moments_direct(kind: str, img: np.ndarray, pairs, k: int = 1,
                       quadrature: str = "midpoint", rule: str = "inscribed") -> np.ndarray:
    r"""Polar harmonic moments by their definition (Yang et al. 2020, Eq. 4, 9, 15):
    :math:`M_{nl} = c_n \sum_p w_p f_p R^*_n(r_p) e^{-il\theta_p}` over every sample point,
    with :math:`R_n = e^{i2\pi n r^2}` (PCET), :math:`\cos(\pi n r^2)` (PCT),
    :math:`\sin(\pi n r^2)` (PST), :math:`c_n = 1/\pi` (PCET, and :math:`n = 0`) or
    :math:`2/\pi`. ``img`` may be a batch ``(..., N, N)``; returns ``(..., len(pairs))``."""
    N = img.shape[-1]
    rows, cols, x, y, w = sample_points(N, k, quadrature, rule)
    r2 = x * x + y * y
    th = np.arctan2(y, x)
    f = img[..., rows, cols]
    out = []
    for n, l in pairs:
        if kind == "pcet":
            R, c = np.exp(2j * np.pi * n * r2), 1 / math.pi
        elif kind == "pct":
            R, c = np.cos(np.pi * n * r2), (1 / math.pi if n == 0 else 2 / math.pi)
        elif kind == "pst":
            R, c = np.sin(np.pi * n * r2), 2 / math.pi
        else:
            raise ValueError(kind)
        out.append(c * np.sum(w * f * np.conj(R) * np.exp(-1j * l * th), axis=-1))
    return np.stack(out, -1)
