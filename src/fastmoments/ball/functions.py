r"""The 3-D Zernike functions: radial polynomials, spherical harmonics, their product.

The functions of Canterakis (1999) and Novotni and Klein (2003) on the unit ball are

.. math::

    Z_{nl}^m(r, \theta, \varphi) = \sqrt{\tfrac{4\pi}{3}}\; R_{nl}(r)\, Y_l^m(\theta, \varphi),
    \qquad n - l \ge 0 \text{ even}, \quad |m| \le l,

with, in this module,

* the radial polynomial, normalised so that :math:`\int_0^1 R_{nl}(r)^2\, r^2\, dr = 1`,

  .. math::

      R_{nl}(r) = \sqrt{2n + 3}\; r^l\, P_k^{(0,\, l + 1/2)}(2r^2 - 1), \qquad k = (n - l)/2,

  where :math:`P_k^{(\alpha, \beta)}` is the Jacobi polynomial (so :math:`R_{nl}(1) =
  \sqrt{2n+3} > 0`). The Jacobi norm :math:`h_k = 2^{\beta + 1} / (2k + \beta + 1)` for
  :math:`\alpha = 0` gives the factor :math:`\sqrt{2n + 3}`;

* the spherical harmonics, orthonormal on the sphere (:math:`\int |Y_l^m|^2 d\Omega = 1`),
  **with** the Condon-Shortley phase :math:`(-1)^m` (the convention of mpmath's
  ``spherharm`` and SciPy's ``sph_harm``; polar angle :math:`\theta` from the :math:`+z`
  axis, azimuth :math:`\varphi` from :math:`+x` towards :math:`+y`):

  .. math::

      Y_l^m = \bar P_l^m(\cos\theta)\, e^{im\varphi}, \qquad
      Y_l^{-m} = (-1)^m\, \overline{Y_l^m}.

The factor :math:`\sqrt{4\pi/3}` makes the functions orthonormal for Novotni and Klein's inner
product, :math:`\tfrac{3}{4\pi}\int_{\|x\| \le 1} Z_{nl}^m\, \overline{Z_{n'l'}^{m'}}\, dx =
\delta_{nn'}\delta_{ll'}\delta_{mm'}`, so that the moments
:math:`\Omega_{nl}^m = \tfrac{3}{4\pi}\int f\, \overline{Z_{nl}^m}\, dx` rebuild
:math:`f = \sum \Omega_{nl}^m Z_{nl}^m`.

Both factors are computed by three-term recurrences that stay accurate to order 500 and beyond
in float64 (no factorial ratios, no geometric moments, no expansion in powers of :math:`r`):

* :math:`P_k^{(0, \beta)}` by the Jacobi recurrence in the degree :math:`k`, for every
  :math:`l` at once (Szegő, *Orthogonal Polynomials*, Eq. 4.5.1);
* the normalised associated Legendre functions :math:`\bar P_l^m` by the standard recurrence
  in :math:`l` for every :math:`m` at once, started from the sectoral values
  :math:`\bar P_m^m = -\sqrt{(2m+1)/(2m)}\, \sin\theta\, \bar P_{m-1}^{m-1}`
  (Holmes and Featherstone, J. Geodesy 76, 2002, "standard forward column" method). Where
  :math:`\sin^m\theta` underflows the true values are below :math:`10^{-200}` for
  :math:`l \le 500`.

References
----------
N. Canterakis, "3D Zernike moments and Zernike affine invariants for 3D image analysis and
recognition", Proc. 11th Scandinavian Conference on Image Analysis, 1999.
M. Novotni and R. Klein, "3D Zernike descriptors for content based shape retrieval", Proc. 8th
ACM Symposium on Solid Modeling and Applications, 2003.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from .._validate import check_int

__all__ = [
    "SYNTHESIS_SCALE",
    "legendre_table",
    "lm_index",
    "radial",
    "radial_table",
    "spherical_harmonics",
    "zernike3d",
]

#: :math:`\sqrt{4\pi/3}`: :math:`Z = \sqrt{4\pi/3}\, R\, Y`.
SYNTHESIS_SCALE = math.sqrt(4.0 * math.pi / 3.0)


def lm_index(l: int, m: int) -> int:
    """Column of :math:`Y_l^m` (``0 <= m <= l``) in :func:`spherical_harmonics`' table:
    ``l (l + 1) / 2 + m``.

    >>> lm_index(2, 1)
    4
    """
    return l * (l + 1) // 2 + m


def _as_f64(x: Any) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64)
    return torch.as_tensor(np.asarray(x, dtype=np.float64))


def radial_table(lmax: int, order: int, r: Any) -> list[torch.Tensor]:
    r"""The radial polynomials :math:`R_{nl}(r)` for every valid ``(n, l)`` up to ``order``.

    Parameters
    ----------
    lmax : int
        Largest degree :math:`l` wanted (``<= order``).
    order : int
        Largest order :math:`n`.
    r : array_like or torch.Tensor, shape (G,)
        Radii in :math:`[0, 1]` (float64 is used whatever the input; the result is on the
        device of a tensor ``r``).

    Returns
    -------
    list of torch.Tensor
        Entry ``l`` is a float64 ``(G, (order - l) // 2 + 1)`` tensor whose column ``j`` is
        :math:`R_{l + 2j,\, l}(r)`.

    Notes
    -----
    The Jacobi recurrence for :math:`\alpha = 0`, :math:`\beta = l + 1/2`,
    :math:`s = 2k + \beta`, :math:`t = 2r^2 - 1`:

    .. math::

        2k (k + \beta)(s - 2) P_k = (s - 1)\,[s (s - 2) t - \beta^2]\, P_{k-1}
        - 2 (k - 1)(k + \beta - 1)\, s\, P_{k-2},

    from :math:`P_0 = 1`, :math:`P_1 = ((\beta + 2) t - \beta) / 2`, run for all :math:`l`
    at once (one vector operation per degree :math:`k`). It is written in :math:`u = 1 + t =
    2r^2`, never forming :math:`t` itself: near :math:`r = 0` the rounding of
    :math:`2r^2 - 1` (an absolute error of :math:`\varepsilon`, amplified by
    :math:`dP_k/dt \sim k^2`) would cost three digits at order 500, while :math:`2r^2`
    carries a relative error only.
    """
    r = _as_f64(r).reshape(-1)
    dev = r.device
    L = lmax + 1
    beta = torch.arange(L, dtype=torch.float64, device=dev) + 0.5  # (L,)
    u = (2.0 * r * r)[:, None]  # 1 + t, exact up to the rounding of r^2: (G, 1)
    kmax = order // 2
    polys = [torch.ones(r.shape[0], L, dtype=torch.float64, device=dev)]
    if kmax >= 1:
        polys.append((beta + 2.0) * u / 2.0 - (beta + 1.0))
    for k in range(2, kmax + 1):
        s = 2.0 * k + beta
        c0 = 2.0 * k * (k + beta) * (s - 2.0)
        c1 = (s - 1.0) * (s * (s - 2.0) * u - (s * (s - 2.0) + beta * beta))
        c2 = 2.0 * (k - 1.0) * (k + beta - 1.0) * s
        polys.append((c1 * polys[-1] - c2 * polys[-2]) / c0)
    out = []
    for l in range(lmax + 1):
        nk = (order - l) // 2 + 1
        if nk <= 0:
            out.append(torch.zeros(r.shape[0], 0, dtype=torch.float64, device=dev))
            continue
        p = torch.stack([polys[k][:, l] for k in range(nk)], dim=1)
        n = l + 2 * torch.arange(nk, dtype=torch.float64, device=dev)
        rl = r.pow(l)[:, None]
        out.append(torch.sqrt(2.0 * n + 3.0)[None, :] * rl * p)
    return out


def radial(n: int, l: int, r: Any) -> Any:
    r"""The radial polynomial :math:`R_{nl}(r) = \sqrt{2n+3}\, r^l P_{(n-l)/2}^{(0, l+1/2)}
    (2r^2 - 1)`, normalised by :math:`\int_0^1 R_{nl}^2 r^2 dr = 1`.

    Parameters
    ----------
    n, l : int
        Order and degree, ``n - l`` even and ``>= 0``.
    r : array_like or torch.Tensor
        Radii (float64; NumPy in, NumPy out).

    Returns
    -------
    ndarray or torch.Tensor
        :math:`R_{nl}(r)`, shaped like ``r``, float64.

    Raises
    ------
    ValueError
        For ``l < 0`` or ``n - l`` odd or negative.

    Examples
    --------
    >>> float(radial(2, 0, 1.0)) ** 2  # R_nl(1)^2 = 2n + 3
    7.000000000000001
    """
    n = check_int("n", n, minimum=0)
    l = check_int("l", l, minimum=0)
    if l > n or (n - l) % 2:
        raise ValueError(f"n - l must be even and >= 0, got n={n}, l={l}")
    rt = _as_f64(r)
    col = radial_table(l, n, rt.reshape(-1))[l][:, -1].reshape(rt.shape)
    return col if isinstance(r, torch.Tensor) else col.numpy()


def _legendre_rows(lmax: int, x: torch.Tensor, s: torch.Tensor) -> list[torch.Tensor]:
    r"""Rows ``l = 0..lmax`` of normalised associated Legendre values, ``(P, l + 1)`` each.

    ``x * v`` is computed as ``sign(x) (v - d v)`` with ``d = 1 - |x| = s^2 / (1 + |x|)``,
    so that near the poles the effective :math:`\cos\theta` is the one of ``s`` to a
    relative error of ``d`` (a rounded ``x`` alone would move :math:`\theta` by
    :math:`\varepsilon / \sin\theta`).
    """
    rows = [torch.full((x.shape[0], 1), 1.0 / math.sqrt(4.0 * math.pi),
                       dtype=torch.float64, device=x.device)]
    sgn = torch.where(x < 0, -1.0, 1.0).to(torch.float64)[:, None]
    d = (s * s / (1.0 + x.abs()))[:, None]

    def times_x(v: torch.Tensor) -> torch.Tensor:
        return sgn * (v - d * v)

    for l in range(1, lmax + 1):
        prev = rows[-1]
        diag = prev[:, l - 1:l]
        sub = math.sqrt(2.0 * l + 1.0) * times_x(diag)  # P_l^{l-1}
        top = -math.sqrt((2.0 * l + 1.0) / (2.0 * l)) * s[:, None] * diag  # P_l^l
        if l >= 2:
            m = torch.arange(l - 1, dtype=torch.float64, device=x.device)
            a = torch.sqrt((4.0 * l * l - 1.0) / (l * l - m * m))
            b = torch.sqrt(((l - 1.0) ** 2 - m * m) / (4.0 * (l - 1.0) ** 2 - 1.0))
            low = a * (times_x(prev[:, : l - 1]) - b * rows[-2])
            rows.append(torch.cat([low, sub, top], dim=1))
        else:
            rows.append(torch.cat([sub, top], dim=1))
    return rows


def _direction(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor):
    """cos(theta), sin(theta), cos(phi), sin(phi) of points (the +z axis at the origin)."""
    rxy = torch.hypot(x, y)
    r = torch.hypot(rxy, z)
    safe = torch.where(r > 0, r, torch.ones_like(r))
    ct = torch.where(r > 0, z / safe, torch.ones_like(r))
    st = rxy / safe
    safe_xy = torch.where(rxy > 0, rxy, torch.ones_like(rxy))
    cp = torch.where(rxy > 0, x / safe_xy, torch.ones_like(rxy))
    sp = y / safe_xy
    return ct, st, cp, sp


def legendre_table(lmax: int, x: Any, y: Any, z: Any) -> torch.Tensor:
    r"""Normalised associated Legendre values :math:`\bar P_l^m(\cos\theta)` (with the
    Condon-Shortley phase, :math:`Y_l^m = \bar P_l^m e^{im\varphi}`) in the directions of
    the points ``(x, y, z)``: a float64 ``(P, (lmax + 1)(lmax + 2) / 2)`` tensor, column
    :func:`lm_index` ``(l, m)``.

    >>> round(float(legendre_table(1, [0.0], [0.0], [2.0])[0, 1]), 12)  # sqrt(3 / (4 pi))
    0.488602511903
    """
    x, y, z = (_as_f64(v).reshape(-1) for v in (x, y, z))
    ct, st, _cp, _sp = _direction(x, y, z)
    return torch.cat(_legendre_rows(lmax, ct, st), dim=1)


def spherical_harmonics(lmax: int, x: Any, y: Any, z: Any) -> torch.Tensor:
    r"""Orthonormal spherical harmonics :math:`Y_l^m` (Condon-Shortley phase, ``m >= 0``) in
    the directions of the points ``(x, y, z)``.

    Parameters
    ----------
    lmax : int
        Largest degree.
    x, y, z : array_like or torch.Tensor, shape (P,)
        Cartesian points; only their directions matter (the origin counts as the :math:`+z`
        direction).

    Returns
    -------
    torch.Tensor
        ``(P, (lmax + 1)(lmax + 2) / 2, 2)`` float64: real and imaginary parts of
        :math:`Y_l^m` in column :func:`lm_index` ``(l, m)``.

    Notes
    -----
    :math:`e^{im\varphi}` is :math:`(\cos\varphi + i \sin\varphi)^m` computed as
    :math:`\cos(m\varphi)`, :math:`\sin(m\varphi)` from :math:`\varphi =
    \operatorname{atan2}(y, x)` (absolute phase error about :math:`m \varepsilon`).

    Examples
    --------
    >>> Y = spherical_harmonics(1, [0.0], [0.0], [1.0])
    >>> round(float(Y[0, lm_index(1, 0), 0]), 12)  # sqrt(3 / (4 pi))
    0.488602511903
    """
    x, y, z = (_as_f64(v).reshape(-1) for v in (x, y, z))
    ct, st, cp, sp = _direction(x, y, z)
    rows = _legendre_rows(lmax, ct, st)
    phi = torch.atan2(sp, cp)
    m = torch.arange(lmax + 1, dtype=torch.float64, device=x.device)
    ang = phi[:, None] * m[None, :]
    cos_m, sin_m = torch.cos(ang), torch.sin(ang)
    re = torch.cat([row * cos_m[:, : row.shape[1]] for row in rows], dim=1)
    im = torch.cat([row * sin_m[:, : row.shape[1]] for row in rows], dim=1)
    return torch.stack([re, im], dim=-1)


def zernike3d(n: int, l: int, m: int, x: Any, y: Any, z: Any) -> Any:
    r"""The 3-D Zernike function :math:`Z_{nl}^m = \sqrt{4\pi/3}\, R_{nl}(r)\, Y_l^m` at
    points of the unit ball (float64, complex).

    Parameters
    ----------
    n, l, m : int
        ``n - l`` even and ``>= 0``, ``|m| <= l`` (negative ``m`` by
        :math:`Y_l^{-m} = (-1)^m \overline{Y_l^m}`).
    x, y, z : array_like or torch.Tensor
        Coordinates of the same shape (NumPy in, NumPy out).

    Returns
    -------
    ndarray or torch.Tensor
        complex128 values, shaped like ``x``.

    Raises
    ------
    ValueError
        For indices that name no function.

    Examples
    --------
    >>> v = zernike3d(0, 0, 0, [0.3], [0.1], [0.2])
    >>> round(complex(v[0]).real, 12)  # Z_000 = 1: (3 / 4 pi) times the ball's volume
    1.0
    """
    n = check_int("n", n, minimum=0)
    l = check_int("l", l, minimum=0)
    m = check_int("m", m, minimum=None)
    if l > n or (n - l) % 2 or abs(m) > l:
        raise ValueError(f"Z_nl^m needs n - l even and >= 0 and |m| <= l, got n={n}, l={l}, "
                         f"m={m}")
    is_tensor = isinstance(x, torch.Tensor)
    xt, yt, zt = (_as_f64(v) for v in (x, y, z))
    shape = xt.shape
    xt, yt, zt = xt.reshape(-1), yt.reshape(-1), zt.reshape(-1)
    r = torch.sqrt(xt * xt + yt * yt + zt * zt)
    rad = radial_table(l, n, r)[l][:, -1]
    ct, st, cp, sp = _direction(xt, yt, zt)
    p = _legendre_rows(l, ct, st)[l][:, abs(m)]
    phi = torch.atan2(sp, cp)
    y_lm = torch.complex(p * torch.cos(abs(m) * phi), p * torch.sin(abs(m) * phi))
    if m < 0:
        y_lm = (-1) ** abs(m) * y_lm.conj()
    out = (SYNTHESIS_SCALE * rad * y_lm).resolve_conj().reshape(shape)
    return out if is_tensor else out.numpy()
