r"""Zernike and pseudo-Zernike moments through the image's geometric moments.

The method of the Zernike thesis, Sec. 3.1 (Eq. 3.1-3.9), after Hosny: expand every kernel
:math:`R_{nm}(r) e^{-im\theta}` into monomials :math:`x^a y^b` and sum the image's geometric
moments with those coefficients. With :math:`z^* = x - iy` (stored repetitions
:math:`m \ge 0`, the conjugate kernel of the forward transform),

.. math:: r^k e^{-im\theta} = (x - iy)^m (x^2 + y^2)^{S}
   = \sum_{p=0}^{S} \sum_{q=0}^{m} \binom{S}{p}\binom{m}{q} (-i)^q x^{k-2p-q} y^{2p+q},
   \qquad S = (k - m)/2,

so the *radial-power moments* :math:`P_{km} = \sum_s w_s f_s r_s^k e^{-im\theta_s}` are
combinations of :math:`G_{ab} = \sum_s w_s f_s x_s^a y_s^b` (Eq. 3.8) and, for the
pseudo-Zernike terms with :math:`k - m` odd, of
:math:`H_{ab} = \sum_s w_s f_s x_s^a y_s^b r_s` (Eq. 3.9, with :math:`S = (k - m - 1)/2`).
Then :math:`A_{nm} = \frac{n+1}{\pi} \sum_k B_{nmk} P_{km}` with the radial coefficients

.. math:: B_{nmk} = \frac{(-1)^{(n-k)/2} ((n+k)/2)!}{((n-k)/2)!\,((k+m)/2)!\,((k-m)/2)!}
   \ \text{(Zernike, Eq. 3.3)}, \qquad
   B_{nmk} = \frac{(-1)^{n-k} (n+k+1)!}{(n-k)!\,(m+k+1)!\,(k-m)!}
   \ \text{(pseudo-Zernike, Eq. 3.7)},

both integers (multinomial coefficients). The sums run over the plan's sample points
(:mod:`fastmoments.disk.sampling`) with its weights, so the moments are those of every other
method: the same index set and normalisation :math:`\frac{n+1}{\pi}\sum f V^* \Delta x\Delta y`.

Two arithmetics:

``"geometric"``
    Everything in float64. The :math:`B_{nmk}` grow exponentially with :math:`n` while
    :math:`A_{nm}` stays small, so the sum cancels. The thesis (Fig. 3.1) shows a broken
    reconstruction at order 23 on a 64 x 64 image; with coordinates in :math:`[-1, 1]` as
    here, the moments of the 64 x 64 camera image at order 23 are within 9e-8 of the exact
    ones (relative to the largest) and the reconstruction equals Deng's (22.03 dB both),
    while at order 45 it is broken (3.5 dB against 25.2 dB;
    ``benchmarks/geometric_fig31.py``). Pseudo-Zernike breaks earlier (0.11 relative at
    order 20 on 32 x 32).
``"geometric-exact"``
    Exact rational arithmetic in Python integers: the sample coordinates, weights and image
    values (float64 numbers are rationals with power-of-two denominators) are put over
    common denominators, so :math:`G_{ab}` and every sum are exact; only the final division
    by :math:`\pi` and the rounding to float64 remain. The radii in :math:`H_{ab}` are
    irrational: they are carried as fixed-point integers with
    :data:`extra bits <FIXED_POINT_BITS>` more than the sum can cancel. Slow (seconds for
    64 x 64 images to order 30): a reference, not a production path.

The disk engine's two-stage structure (angular sums per radius, then a radial table) does not
hold moment-space sums, so this is its own engine, :class:`GeometricEngine`, with the
:class:`~fastmoments.disk.engine.DiskEngine` interface (``forward`` gives the coefficient
layout of the plan); reconstruction and the adjoint go through the family's default
recurrence, since they do not involve geometric moments. :func:`geometric_moments` runs it on
any Zernike or pseudo-Zernike plan.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from .._array import complex_dtype
from .._cache import plan_cache
from .._route import Route
from .engine import DiskEngine
from .indexing import IndexSet
from .sampling import DiskSampling

__all__ = ["FIXED_POINT_BITS", "GEOMETRIC_METHODS", "GeometricEngine", "geometric_moments",
           "make_engine"]

#: The methods served by this module (float64 and exact arithmetic).
GEOMETRIC_METHODS = ("geometric", "geometric-exact")
#: Fixed-point bits of the radii in the exact pseudo-Zernike sums, plus 8 per unit of order
#: (the coefficients B_nmk times the binomials stay below 2^(4n + 4)).
FIXED_POINT_BITS = 96


def _coordinates(size: int, k: int, quadrature: str) -> tuple[list[Fraction], list[Fraction]]:
    """Ascending 1-D sample coordinates over the whole axis and their weights, exact."""
    N = size
    if quadrature == "midpoint":
        xs = [Fraction(k * (2 * i - N + 1) + 2 * s - k - 1, N * k)
              for i in range(N) for s in range(1, k + 1)]
        ws = [Fraction(2, N * k)] * (N * k)
    else:
        nodes, wts = np.polynomial.legendre.leggauss(k)
        xs = [Fraction(float(x)) for i in range(N)
              for x in ((2 * i - N + 1 + nodes) / N)]
        ws = [Fraction(float(w)) for _i in range(N) for w in (wts / N)]
    return xs, ws


def _common(values: list[Fraction]) -> tuple[list[int], int]:
    den = math.lcm(*(v.denominator for v in values)) if values else 1
    return [v.numerator * (den // v.denominator) for v in values], den


@lru_cache(maxsize=64)
def _binom(n: int, k: int) -> int:
    return math.comb(n, k)


@plan_cache(maxsize=8)
def _terms(family: str, T: int
           ) -> tuple[list[tuple[int, int]], list[list[tuple[int, int, int, int]]]]:
    """The (k, m) of the radial-power moments up to order T and, for each, its monomial terms
    ``(coefficient, a, b, q mod 4)`` of :math:`\\binom{S}{p}\\binom{m}{q} (-i)^q x^a y^b`
    (``b`` counts the powers of y; for odd ``k - m`` in the pseudo-Zernike family the
    terms refer to H)."""
    km, terms = [], []
    for m in range(T + 1):
        for kk in range(m, T + 1):
            odd = (kk - m) % 2
            if odd and family == "zernike":
                continue
            S = (kk - m - odd) // 2
            row = []
            for p in range(S + 1):
                for q in range(m + 1):
                    row.append((_binom(S, p) * _binom(m, q), kk - odd - 2 * p - q, 2 * p + q,
                                q % 4))
            km.append((kk, m))
            terms.append(row)
    return km, terms


def radial_coefficient(family: str, n: int, m: int, k: int) -> int:
    """The exact coefficient :math:`B_{nmk}` of equation 3.3 (Zernike) or 3.7 (pseudo-Zernike) of
    the :ref:`Zernike thesis <bib-zernike-thesis>`.

    Examples
    --------
    >>> radial_coefficient("zernike", 4, 0, 2)  # R_40 = 6 r^4 - 6 r^2 + 1
    -6
    >>> radial_coefficient("pseudo-zernike", 1, 0, 0)  # R_10 = 3 r - 2
    -2
    """
    f = math.factorial
    if family == "zernike":
        if (n - k) % 2 or (k - m) % 2 or not m <= k <= n:
            return 0
        return ((-1) ** ((n - k) // 2) * f((n + k) // 2)
                // (f((n - k) // 2) * f((k + m) // 2) * f((k - m) // 2)))
    if not m <= k <= n:
        return 0
    return (-1) ** (n - k) * f(n + k + 1) // (f(n - k) * f(m + k + 1) * f(k - m))


class GeometricEngine:
    """Moments of a disk plan through geometric moments (equations 3.1-3.9 of the
    :ref:`Zernike thesis <bib-zernike-thesis>`).

    Parameters are those of :class:`~fastmoments.disk.engine.DiskEngine`; ``method`` is
    ``"geometric"`` (float64) or ``"geometric-exact"`` (exact rationals). Only the Zernike and
    pseudo-Zernike families are served. :meth:`forward` returns ``(B, n_cols, n_rows)``
    complex coefficients in the layout of ``index``; :meth:`synthesize` (and every other
    attribute) comes from a :class:`DiskEngine` running the family's default recurrence.
    """

    def __init__(self, sampling: DiskSampling, family: Any, index: IndexSet, method: str,
                 dtype: torch.dtype, device: torch.device, budget: int | None = None) -> None:
        if method not in GEOMETRIC_METHODS:
            raise ValueError(f"method must be one of {GEOMETRIC_METHODS} for the geometric "
                             f"engine, got {method!r}")
        if family.name not in ("zernike", "pseudo-zernike"):
            raise ValueError(f"method={method!r} serves the 'zernike' and 'pseudo-zernike' "
                             f"families, got family {family.name!r}")
        self.method = method
        self.exact = method == "geometric-exact"
        self.sampling = sampling
        self.family = family
        self.index = index
        self.dtype = dtype
        self.device = device
        self._inner = DiskEngine(sampling, family, index, family.default_method, dtype,
                                 device, budget)
        self.T = index.max_order
        s = sampling
        xs, ws = _coordinates(s.size, s.k, s.quadrature)
        self._x = xs
        self._w = ws
        self._mask = np.repeat(np.repeat(s.mask, s.k, axis=0), s.k, axis=1)
        self._pix = np.arange(s.size * s.k) // s.k

    @property
    def route(self) -> Route:
        """The route (:mod:`.routes`): geometric moments on the host, as ``method`` asked."""
        return self.route_for(1)

    def route_for(self, batch: int) -> Route:
        """The route of a call of ``batch`` images: the same for every batch."""
        return Route(self.method, "numpy", "exact-rationals" if self.exact else "float64",
                     "method= given (a reference method)")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_inner":
            raise AttributeError(name)
        return getattr(self._inner, name)

    def synthesize(self, coef: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        """Reconstruction (and the adjoint): by the family's default recurrence."""
        return self._inner.synthesize(coef, **kwargs)

    # ------------------------------------------------------------------ forward
    def forward(self, x: torch.Tensor, progress: bool | None = None) -> torch.Tensor:
        """Coefficients ``(B, n_cols, n_rows)`` of images ``x`` shaped ``(B, N*N)``."""
        imgs = x.detach().to("cpu", torch.float64).numpy().reshape(-1, self.sampling.size,
                                                                    self.sampling.size)
        if not np.isfinite(imgs).all():
            raise ValueError("image must be finite for the geometric method (NaN or infinity "
                             "found)")
        fam = self.family.name
        km, terms = _terms(fam, self.T)
        if self.exact:
            P = [self._power_moments_exact(img, km, terms) for img in imgs]
        else:
            P = self._power_moments_float(imgs, km, terms)
        pos = {key: i for i, key in enumerate(km)}
        out = np.zeros((imgs.shape[0], self.index.n_cols, self.index.n_rows), np.complex128)
        for c, (m, col) in enumerate(zip(self.index.ms, self.index.ns, strict=True)):
            for j, n in enumerate(col):
                ks = [kk for kk in range(m, n + 1) if radial_coefficient(fam, n, m, kk)]
                if self.exact:
                    for b in range(imgs.shape[0]):
                        out[b, c, j] = self._combine_exact(P[b], pos, fam, n, m, ks)
                else:
                    B = np.array([float(radial_coefficient(fam, n, m, kk)) for kk in ks])
                    vals = P[:, [pos[(kk, m)] for kk in ks]]
                    out[:, c, j] = (n + 1) / math.pi * (vals @ B)
        res = torch.as_tensor(out).to(complex_dtype(self.dtype))
        return res.to(x.device)

    def _grid(self):
        """Sub-sampled image layout: row coordinate t (top to bottom) has y = -x[t]."""
        return self._pix, self._mask

    def _power_moments_float(self, imgs: np.ndarray, km, terms) -> np.ndarray:
        T = self.T
        x = np.array([float(v) for v in self._x])
        w = np.array([float(v) for v in self._w])
        y = -x
        pix, mask = self._grid()
        F = imgs[:, pix][:, :, pix] * mask  # (B, L, L), rows t, columns i
        xp = w[:, None] * x[:, None] ** np.arange(T + 1)  # (L, T+1)
        yp = w[:, None] * y[:, None] ** np.arange(T + 1)
        G = np.einsum("bti,ia,tc->bac", F, xp, yp)
        H = None
        if self.family.name == "pseudo-zernike":
            r = np.hypot(y[:, None], x[None, :])
            H = np.einsum("bti,ia,tc->bac", F * r, xp, yp)
        phase = np.array([1, -1j, -1, 1j])
        P = np.zeros((imgs.shape[0], len(km)), np.complex128)
        for i, ((kk, m), row) in enumerate(zip(km, terms, strict=True)):
            src = H if (kk - m) % 2 else G
            if not row:
                continue
            coef, a, b, q = (np.array(v) for v in zip(*row, strict=True))
            P[:, i] = src[:, a, b] @ (coef * phase[q])
        return P

    def _power_moments_exact(self, img: np.ndarray, km, terms) -> list[tuple[int, int, int]]:
        """Each P_km as integers ``(real, imaginary, k)`` over the common denominator
        ``den0 * D^k`` (``self._den = (den0, D)``; see :meth:`_combine_exact`)."""
        T = self.T
        X, D = _common(self._x)
        Wn, Wd = _common(self._w)
        pix, mask = self._grid()
        vals = img[np.ix_(pix, pix)] * mask
        fr = [Fraction(float(v)) for v in vals.ravel()]
        Fv, Fd = _common(fr)
        L = len(X)
        Y = [-v for v in X]
        Fobj = np.array(Fv, dtype=object).reshape(L, L)
        xp = np.array([[Wn[i] * X[i] ** a for a in range(T + 1)] for i in range(L)], dtype=object)
        yp = np.array([[Wn[t] * Y[t] ** b for b in range(T + 1)] for t in range(L)], dtype=object)
        G = yp.T.dot(Fobj.dot(xp))  # [b, a]
        bits = 0
        H = None
        if self.family.name == "pseudo-zernike":
            bits = FIXED_POINT_BITS + 8 * T
            R = np.array([[math.isqrt((X[i] ** 2 + Y[t] ** 2) << (2 * bits)) for i in range(L)]
                          for t in range(L)], dtype=object)
            H = yp.T.dot((Fobj * R).dot(xp))
        scale = 1 << bits
        out = []
        for (kk, m), row in zip(km, terms, strict=True):
            odd = (kk - m) % 2
            src = H if odd else G
            re = im = 0
            for coef, a, b, q in row:
                v = coef * src[b, a]
                if q == 0:
                    re += v
                elif q == 1:
                    im -= v
                elif q == 2:
                    re -= v
                else:
                    im += v
            if not odd:
                re, im = re * scale, im * scale
            # G terms of P_km have a + b = k; H terms a + b = k - 1 and r carries 1/D
            out.append((re, im, kk))
        self._den = (Fd * Wd * Wd * scale, D)
        return out

    def _combine_exact(self, P, pos, fam: str, n: int, m: int, ks: list[int]) -> complex:
        den0, D = self._den
        re = im = 0
        for kk in ks:
            B = radial_coefficient(fam, n, m, kk)
            pr, pi, _k = P[pos[(kk, m)]]
            f = D ** (n - kk)
            re += B * pr * f
            im += B * pi * f
        den = den0 * D**n
        c = (n + 1) / math.pi
        return complex(float(Fraction(re, den)) * c, float(Fraction(im, den)) * c)


def make_engine(sampling: DiskSampling, family: Any, index: IndexSet, method: str,
                dtype: torch.dtype, device: torch.device, budget: int | None = None):
    """The engine for ``method``: :class:`GeometricEngine` for :data:`GEOMETRIC_METHODS`,
    else :class:`~fastmoments.disk.engine.DiskEngine` (the hook for the plans)."""
    cls = GeometricEngine if method in GEOMETRIC_METHODS else DiskEngine
    return cls(sampling, family, index, method, dtype, device, budget)


def geometric_moments(plan: Any, image: Any, *, exact: bool = False):
    r"""The moments of ``plan`` computed through geometric moments (equations 3.1-3.9 of the
    :ref:`Zernike thesis <bib-zernike-thesis>`).

    Parameters
    ----------
    plan : DiskTransform
        A Zernike or pseudo-Zernike plan (any order, sampling, selection; its ``method`` is
        not used).
    image : array_like or torch.Tensor
        Images ``(..., N, N)`` as for ``plan.forward``.
    exact : bool
        Exact rational arithmetic (``"geometric-exact"``) instead of float64.

    Returns
    -------
    DiskMoments
        Moments in the plan's layout and normalisation, as ``plan.forward`` gives them.

    Raises
    ------
    TypeError
        If ``exact`` is not a bool.
    ValueError
        For another family than Zernike or pseudo-Zernike, or non-finite images.

    Examples
    --------
    >>> import numpy as np
    >>> from fastmoments.disk import ZernikeTransform
    >>> plan = ZernikeTransform(16, 6, dtype="float64")
    >>> img = np.arange(256.0).reshape(16, 16)
    >>> a = geometric_moments(plan, img, exact=True)
    >>> bool(np.allclose(a.data.numpy(), plan.forward(img).data.numpy(), atol=1e-10))
    True
    """
    from .moments import DiskMoments

    if not isinstance(exact, bool):
        raise TypeError(f"exact must be a bool, got {type(exact).__name__}")
    method = "geometric-exact" if exact else "geometric"
    eng = GeometricEngine(plan.sampling, plan.family, plan.index, method, plan.dtype,
                          plan.device, plan._budget)
    x, kind, batch = plan._images(image)
    coef = eng.forward(x)
    coef = coef.reshape(*batch, plan.index.n_cols, plan.index.n_rows)
    return DiskMoments(coef, plan, kind)
