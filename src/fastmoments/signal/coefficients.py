"""Least-squares Fourier-series fits of the Gaussian, its derivatives and the Morlet wavelet.

Yamashita & Wakahara (2022, "Morlet wavelet transform using attenuated sliding Fourier transform
and kernel integral for GPU", below *the paper*) approximate a kernel on the window
``-K <= k <= K`` by a short series in ``cos(β p k)`` and ``sin(β p k)`` with ``β = π / K``:

* Gaussian ``G[k] = sqrt(γ/π) exp(-γ k²)``, ``γ = 1 / (2σ²)`` (Eq. 1), by
  ``Σ_{p=0}^{P} a_p cos(β p k)`` (Eq. 9);
* ``G_D[k] = -2γk G[k]`` (Eq. 2) by ``Σ_{p=1}^{P} b_p sin(β p k)`` (Eq. 10);
* ``G_DD[k] = (4γ²k² - 2γ) G[k]`` (Eq. 3) by ``Σ_{p=0}^{P} d_p cos(β p k)`` (Eq. 11);
* the Morlet wavelet ``ψ_{σ,ξ}[k]`` (Eq. 52) by ``Σ_{p=P_S}^{P_S+P_D-1} m_p cos(β p k) +
  l_p sin(β p k)`` (Eq. 53).

The coefficients minimise the squared error on the window (Eq. 12). The half-width ``K``
(equivalently ``β``) is chosen as the paper does for its Table 1: the ratio ``K / σ`` that
minimises the relative RMSE of the smoothing kernel (Eq. 48) for each ``P``; derivatives use
the same ``K``. For the Morlet wavelet, ``K`` and the first order ``P_S`` minimise Eq. 66.

Everything here is NumPy float64 and cached on plain values (``functools.lru_cache``), and
on disk (:mod:`.fit_cache`). SciPy is imported by the fits themselves, not with the module: a
cached fit costs no SciPy import.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .fit_cache import persistent

__all__ = [
    "GaussianFit",
    "MorletFit",
    "discrete_gaussian_kernel",
    "fit_gaussian",
    "fit_morlet",
    "gaussian_kernel",
    "gaussian_ratio",
    "morlet_constants",
    "morlet_kernel",
]

_TABLE_K = 256  # the window of the paper's Table 1

# Designs shipped with the package for the defaults (ξ = 6, relative RMSE 1e-4), so that a
# first call on a new machine skips their searches (1-3 s on 2 cores); the values are what
# the functions below compute (tests/signal/test_fit_cache.py recomputes every entry and compares).
#: ξ -> P_D -> (K/σ, P_S) of :func:`morlet_design`
_SHIPPED_MORLET_DESIGN = {6.0: {6: (3.03125, 3), 7: (3.625, 4), 8: (3.53125, 3), 9: (4.125, 4),
                                10: (4.0, 3), 11: (4.21875, 3), 12: (4.46875, 3),
                                13: (4.65625, 3), 14: (4.90625, 3)}}
#: (ξ, target) -> P_D of :func:`default_morlet_terms`
_SHIPPED_MORLET_TERMS = {(6.0, 1e-4): 11}
#: P -> K/σ of :func:`gaussian_ratio`
_SHIPPED_GAUSSIAN_RATIO = {2: 2.9201805593214245, 3: 3.4232165115364532, 4: 3.8507725629255765,
                           5: 4.241559707850877, 6: 4.594849688966798, 7: 4.926014362329734,
                           8: 5.233791476780244, 9: 5.526402151867758, 10: 5.802662288415093,
                           11: 6.06769902377287}


def gaussian_kernel(k: np.ndarray, sigma: float, order: int) -> np.ndarray:
    """Sampled Gaussian (Eq. 1) or its first / second derivative (Eqs. 2-3), float64.

    >>> float(gaussian_kernel(np.array([0.0]), 1.0, 0)[0])  # 1 / sqrt(2π)
    0.3989422804014327
    """
    k = np.asarray(k, dtype=np.float64)
    gamma = 1.0 / (2.0 * sigma * sigma)
    g = math.sqrt(gamma / math.pi) * np.exp(-gamma * k * k)
    if order == 0:
        return g
    if order == 1:
        return -2.0 * gamma * k * g
    if order == 2:
        return (4.0 * gamma * gamma * k * k - 2.0 * gamma) * g
    raise ValueError(f"order must be 0, 1 or 2, got {order}")


# below this σ the sampled Gaussian is a unit impulse to double precision (G[1]/G[0] < 2e-18)
_IMPULSE_SIGMA = 0.11
# from this σ on the sampled Gaussian sums to one to double precision (Poisson summation:
# Σ_k G[k] = 1 + 2 Σ_m exp(-2π²σ²m²), and exp(-2π²·16) < 1e-137)
_CONTINUUM_SIGMA = 4.0


def discrete_gaussian_kernel(k: np.ndarray, sigma: float, order: int) -> np.ndarray:
    """The kernels the Gaussian filters target: scipy.ndimage's on the whole line (float64).

    ``φ[k] = G[k] / Σ_j G[j]`` (order 0: it sums to one, so constants pass unchanged at every
    σ), ``-k/σ² φ[k]`` (order 1, antisymmetric: zero on constants) and
    ``(k²/σ⁴ - 1/σ²) φ[k] - c φ[k]`` with ``c`` the sum of the first term (order 2: zero on
    constants and on linear ramps). The sampled continuous kernels (:func:`gaussian_kernel`)
    sum to ``1 + 2 Σ_m exp(-2π²σ²m²)`` instead (Poisson summation): 1.0144 at σ = 0.5 and
    ``1/(σ sqrt(2π))`` as σ → 0. From σ = 4 on the two agree to double precision and the
    continuous form is returned; below σ = 0.11 the kernels are a unit impulse and zero.

    >>> round(float(discrete_gaussian_kernel(np.arange(-7, 8), 0.5, 0).sum()), 14)
    1.0
    >>> round(float(gaussian_kernel(np.arange(-3, 4), 0.5, 0).sum()), 4)
    1.0144
    """
    k = np.asarray(k, dtype=np.float64)
    if sigma >= _CONTINUUM_SIGMA:
        return gaussian_kernel(k, sigma, order)
    if sigma < _IMPULSE_SIGMA:
        return (k == 0).astype(np.float64) if order == 0 else np.zeros_like(k)
    w = math.ceil(12 * sigma) + 1  # G[w] / G[0] < exp(-72)
    j = np.arange(-w, w + 1, dtype=np.float64)
    g = np.exp(-0.5 * (j / sigma) ** 2)
    total = float(g.sum())
    phi = np.exp(-0.5 * (k / sigma) ** 2) / total
    if order == 0:
        return phi
    if order == 1:
        return -k / sigma**2 * phi
    if order == 2:
        c = float(np.sum((j**2 / sigma**4 - 1 / sigma**2) * g)) / total
        return (k**2 / sigma**4 - 1 / sigma**2 - c) * phi
    raise ValueError(f"order must be 0, 1 or 2, got {order}")


def morlet_constants(xi: float) -> tuple[float, float]:
    """``(C_ξ, κ_ξ)`` of Eqs. 50-51.

    >>> c, kappa = morlet_constants(6.0)
    >>> round(c, 9), kappa < 1e-7
    (1.0, True)
    """
    # 1 + e^{-ξ²} - 2e^{-3ξ²/4} = 2(1 - e^{-3ξ²/4}) - (1 - e^{-ξ²}): written with expm1 it keeps
    # its precision as ξ -> 0 (about ξ²/2; the plain sum cancels to 0 below ξ ~ 1e-8)
    base = -2.0 * math.expm1(-0.75 * xi * xi) + math.expm1(-xi * xi)
    if not base > 0.0:
        raise ValueError(f"xi={xi!r} is too small: the Morlet wavelet's normalisation "
                         "underflows (xi > 1e-150 works)")
    return base ** -0.5, math.exp(-0.5 * xi * xi)


def morlet_kernel(k: np.ndarray, sigma: float, xi: float) -> np.ndarray:
    """The discrete Morlet wavelet ``ψ_{σ,ξ}[k]`` of Eq. 52 (complex128).

    ``ψ = C_ξ π^{-1/4} σ^{-1/2} exp(-k²/(2σ²)) (exp(iξk/σ) - κ_ξ)``: Eq. 49 dilated by σ with
    the ``1/sqrt(σ)`` normalisation (the paper's Eq. 52 prints ``π^{-1/4}`` in the denominator,
    which contradicts Eq. 49; we follow Eq. 49).
    """
    k = np.asarray(k, dtype=np.float64)
    c, kappa = morlet_constants(xi)
    amp = c * math.pi ** -0.25 / math.sqrt(sigma)
    return amp * np.exp(-0.5 * (k / sigma) ** 2) * (np.exp(1j * xi * k / sigma) - kappa)


def _rel_rmse(approx: np.ndarray, exact: np.ndarray) -> float:
    den = float(np.sum(np.abs(exact) ** 2))
    return math.sqrt(float(np.sum(np.abs(approx - exact) ** 2)) / den) if den > 0 else 0.0


def _lstsq(basis: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Least squares (Eq. 12) for the nearly orthogonal Fourier bases used here.

    The columns ``cos(βpk)``, ``sin(βpk)`` on ``k = -K..K`` are orthogonal up to one endpoint
    term, so the normal equations are well conditioned and solved by Cholesky (``G = L Lᵀ``,
    then the two triangular systems by NumPy's solver: no scipy import on a first call, which
    cost ~0.5 s of a cold 64-scale CWT); zero columns (``sin(0·k)``) get a zero coefficient,
    and a rank-deficient basis (``P ≥ K`` at tiny σ) falls back to pivoted QR (LAPACK gelsy).
    """
    norms = np.einsum("ij,ij->j", basis, basis)
    keep = norms > 1e-12 * norms.max()
    b = basis[:, keep]
    gram = b.T @ b
    out = np.zeros((basis.shape[1], *target.shape[1:]))
    try:
        low = np.linalg.cholesky(gram)
        d = np.diag(low) ** 2
        if d.min() < 1e-10 * d.max():
            raise np.linalg.LinAlgError("ill-conditioned")
        rhs = b.T @ target
        out[keep] = np.linalg.solve(low.T, np.linalg.solve(low, rhs))
    except np.linalg.LinAlgError:
        import scipy.linalg

        out[keep] = scipy.linalg.lstsq(b, target, lapack_driver="gelsy", check_finite=False)[0]
    return out


# ---------------------------------------------------------------------------------- Gaussian
@dataclass(frozen=True)
class GaussianFit:
    """Fitted coefficients of the Gaussian and its derivatives on ``[-K, K]``.

    Attributes
    ----------
    sigma, terms, K : float, int, int
        Standard deviation, ``P`` and the window half-width (``β = π/K``).
    a, b, d : numpy.ndarray
        ``a_p`` (p = 0..P) for G, ``b_p`` (p = 1..P, stored with ``b[0] = 0``) for G_D and
        ``d_p`` (p = 0..P) for G_DD (Eqs. 9-11).
    rmse : tuple of float
        Relative RMSE (Eq. 48, window ``[-W, W]`` with ``W = max(3K, 10σ)``) of the fitted
        G, G_D and G_DD, zero outside ``[-K, K]``.
    """

    sigma: float
    terms: int
    K: int
    a: np.ndarray
    b: np.ndarray
    d: np.ndarray
    rmse: tuple[float, float, float]

    @property
    def beta(self) -> float:
        return math.pi / self.K


def _fit_gaussian_k(sigma: float, terms: int, K: float,
                    discrete: bool = False) -> tuple[np.ndarray, ...]:
    kern = discrete_gaussian_kernel if discrete else gaussian_kernel
    k = np.arange(-math.floor(K), math.floor(K) + 1, dtype=np.float64)
    beta = math.pi / K
    p = np.arange(terms + 1)
    cos = np.cos(beta * np.outer(k, p))
    sin = np.sin(beta * np.outer(k, p[1:]))
    ad = _lstsq(cos, np.stack([kern(k, sigma, 0), kern(k, sigma, 2)], 1))
    a, d = np.ascontiguousarray(ad[:, 0]), np.ascontiguousarray(ad[:, 1])
    b = np.concatenate([[0.0], _lstsq(sin, kern(k, sigma, 1))])
    return a, b, d


def _gaussian_rmse(sigma: float, K: float, a, b, d, window: float,
                   discrete: bool = False) -> tuple[float, float, float]:
    kern = discrete_gaussian_kernel if discrete else gaussian_kernel
    w = math.ceil(window)
    j = np.arange(-w, w + 1, dtype=np.float64)
    inside = np.abs(j) <= math.floor(K)
    beta = math.pi / K
    p = np.arange(len(a))
    cos = np.cos(beta * np.outer(j, p)) * inside[:, None]
    sin = np.sin(beta * np.outer(j, p)) * inside[:, None]
    return (
        _rel_rmse(cos @ a, kern(j, sigma, 0)),
        _rel_rmse(sin @ b, kern(j, sigma, 1)),
        _rel_rmse(cos @ d, kern(j, sigma, 2)),
    )


@functools.lru_cache(maxsize=32)
def gaussian_ratio(terms: int) -> float:
    """``K / σ`` minimising the Gaussian's relative RMSE (Eq. 48) at ``K = 256`` (Table 1).

    Cached on disk (:mod:`.fit_cache`).

    >>> round(gaussian_ratio(4), 2)
    3.85
    """
    terms = int(terms)
    if terms in _SHIPPED_GAUSSIAN_RATIO:
        return _SHIPPED_GAUSSIAN_RATIO[terms]
    return _gaussian_ratio(terms)


@persistent()
def _gaussian_ratio(terms: int) -> float:
    def err(sigma: float) -> float:
        a, b, d = _fit_gaussian_k(sigma, terms, _TABLE_K)
        return _gaussian_rmse(sigma, _TABLE_K, a, b, d, 3 * _TABLE_K)[0]

    lo, hi = _TABLE_K / 9.0, _TABLE_K / 1.5
    grid = np.geomspace(lo, hi, 48)
    best = min(grid, key=err)
    i = int(np.searchsorted(grid, best))
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(err, bounds=(grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]),
                          method="bounded", options={"xatol": 1e-6})
    return _TABLE_K / float(res.x)


@functools.lru_cache(maxsize=512)
def fit_gaussian(sigma: float, terms: int, K: int | None = None,
                 discrete: bool = False) -> GaussianFit:
    """Fit ``a_p, b_p, d_p`` for ``σ`` and ``P = terms`` (cached per ``(σ, P, K)``).

    Parameters
    ----------
    sigma : float
        Standard deviation in samples.
    terms : int
        ``P``, the highest order of the cosine series.
    K : int, optional
        Window half-width. By default ``K = round(r_P σ)`` with ``r_P`` from
        :func:`gaussian_ratio`; for small σ (``K < 64``) the neighbouring integers are tried
        and the one with the smallest RMSE of G is kept.
    discrete : bool
        Fit :func:`discrete_gaussian_kernel` (the Gaussian filters' targets) instead of the
        sampled continuous kernels (the Morlet wavelet's envelope); they differ below σ = 4.

    Examples
    --------
    >>> fit = fit_gaussian(85.0, 4)
    >>> fit.K, fit.rmse[0] < 4e-4
    (327, True)
    """
    return _fit_gaussian(float(sigma), int(terms), None if K is None else int(K), bool(discrete))


@persistent(GaussianFit)
def _fit_gaussian(sigma: float, terms: int, K: int | None, discrete: bool) -> GaussianFit:
    window = max(3.0 * (K or gaussian_ratio(terms) * sigma), 10.0 * sigma)
    if K is None:
        k0 = max(1, round(gaussian_ratio(terms) * sigma))
        # K >= P keeps the frequencies β p <= π: no two orders alias on the integer grid
        cands = range(max(1, k0 - 3, terms), max(k0 + 4, terms + 1)) if k0 < 64 else (k0,)
        best = None
        for kk in cands:
            a, b, d = _fit_gaussian_k(sigma, terms, kk, discrete)
            e = _gaussian_rmse(sigma, kk, a, b, d, window, discrete)
            if best is None or e[0] < best[0][0]:
                best = (e, kk, a, b, d)
        e, K, a, b, d = best
    else:
        a, b, d = _fit_gaussian_k(sigma, terms, K, discrete)
        e = _gaussian_rmse(sigma, K, a, b, d, window, discrete)
    for arr in (a, b, d):
        arr.setflags(write=False)
    return GaussianFit(float(sigma), int(terms), int(K), a, b, d, e)


@functools.lru_cache(maxsize=8)
def default_gaussian_terms(order: int, target: float = 1e-4) -> int:
    """Smallest ``P`` whose fitted kernel of ``order`` has relative RMSE ≤ ``target``
    (evaluated at ``K = 256``, as in the :ref:`ASFT paper <bib-asft-paper>`).

    >>> default_gaussian_terms(0), default_gaussian_terms(1), default_gaussian_terms(2)
    (5, 7, 7)
    """
    for terms in range(2, 16):
        sigma = _TABLE_K / gaussian_ratio(terms)
        if fit_gaussian(sigma, terms, _TABLE_K).rmse[order] <= target:
            return terms
    raise ValueError(  # pragma: no cover
        f"no number of terms up to 15 reaches relative RMSE {target}")


# ---------------------------------------------------------------------------------- Morlet
@dataclass(frozen=True)
class MorletFit:
    """Direct-method fit of the Morlet wavelet (Eq. 53) on ``[-K, K]``.

    Attributes
    ----------
    sigma, xi : float
        Scale and ξ.
    K, first, terms : int
        Window half-width, ``P_S`` and ``P_D``.
    m, l : numpy.ndarray
        Complex coefficients of ``cos(β p k)`` and ``sin(β p k)`` for
        ``p = P_S .. P_S + P_D - 1`` (for the plain SFT, ``m`` is real and ``l`` imaginary).
    rmse : float
        Relative RMSE of Eq. 66 (window ``[-5K, 5K]``).
    """

    sigma: float
    xi: float
    K: int
    first: int
    terms: int
    m: np.ndarray
    l: np.ndarray
    rmse: float

    @property
    def beta(self) -> float:
        return math.pi / self.K


class _MorletWindow:
    """What every fit on one window ``[-K, K]`` shares: the target, the exact wavelet's energy
    on ``[-5K, 5K]`` and outside the window, and the basis columns (computed once per order
    ``p``). A search over the first order ``P_S`` reuses it instead of recomputing the
    complex exponentials of ``[-5K, 5K]`` per candidate (3-4x faster fits)."""

    def __init__(self, sigma: float, xi: float, K: float, shift: int = 0) -> None:
        kmax = math.floor(K)
        self.k = np.arange(-kmax, kmax + 1, dtype=np.float64)
        self.beta = math.pi / K
        self.alpha = shift / (sigma * sigma)
        self.target = np.exp(-self.alpha * self.k) * morlet_kernel(self.k - shift, sigma, xi)
        self.rhs = np.stack([self.target.real, self.target.imag], axis=1)
        self.weight = np.exp(self.alpha * self.k)
        # Eq. 66 on [-5K, 5K] in the output's frame j = k - n0: outside the window the error
        # is the exact wavelet itself
        w = 5 * kmax
        j = np.arange(-w, w + 1, dtype=np.float64)
        exact = morlet_kernel(j, sigma, xi)
        power = np.abs(exact) ** 2
        self.energy = float(np.sum(power))
        self.outside = float(np.sum(power[np.abs(j + shift) > kmax]))
        self._cols: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def basis(self, first: int, terms: int) -> np.ndarray:
        for p in range(first, first + terms):
            if p not in self._cols:
                arg = (self.beta * p) * self.k
                self._cols[p] = (np.cos(arg), np.sin(arg))
        ps = range(first, first + terms)
        return np.stack([self._cols[p][0] for p in ps] + [self._cols[p][1] for p in ps],
                        axis=1)


def _fit_morlet_k(sigma, xi, K, first, terms, shift=0, window=None):
    """Fit ``exp(-αk) ψ[k - n0]`` (``n0 = shift``; the ASFT target, see Eq. 40) on ``[-K, K]``
    (``window``: a :class:`_MorletWindow` of the same σ, ξ, K and shift, to reuse)."""
    win = _MorletWindow(sigma, xi, K, shift) if window is None else window
    basis = win.basis(first, terms)
    sol = _lstsq(basis, win.rhs)
    coef = sol[:, 0] + 1j * sol[:, 1]
    m, l = coef[:terms], coef[terms:]
    # inside the window the error is e^{αk} times the fit's residual
    inside_err = win.weight * (basis @ coef - win.target)
    err2 = float(np.sum(np.abs(inside_err) ** 2)) + win.outside
    return m, l, math.sqrt(err2 / win.energy)


_MORLET_REF_SIGMA = 32.0


@functools.lru_cache(maxsize=256)
def morlet_design(xi: float, terms: int) -> tuple[float, int]:
    """``(K/σ, P_S)`` minimising Eq. 66 for ξ and ``P_D = terms`` at a reference σ = 32.

    The relative RMSE depends on σ only through ``K/σ`` once σ is a few samples (the
    continuum limit), so the design found at the reference σ is reused at every σ. Cached on
    disk (:mod:`.fit_cache`).
    """
    shipped = _SHIPPED_MORLET_DESIGN.get(float(xi), {}).get(int(terms))
    return shipped if shipped is not None else _morlet_design(float(xi), int(terms))


@persistent()
def _morlet_design(xi: float, terms: int) -> tuple[float, int]:
    sigma = _MORLET_REF_SIGMA
    best = None
    # centre of the wavelet's spectrum at p ≈ ξ K / (π σ): try the bands of orders around it
    for ratio in np.arange(2.0, 8.01, 0.5):
        centre = round(xi * ratio / math.pi - (terms - 1) / 2)
        win = _MorletWindow(sigma, xi, round(ratio * sigma))
        for first in sorted({0, *range(max(0, centre - 1), max(0, centre + 2))}):
            e = _fit_morlet_k(sigma, xi, round(ratio * sigma), first, terms, 0, win)[2]
            if best is None or e < best[0]:
                best = (e, float(ratio), first)
    _, ratio0, first = best
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(
        lambda r: _fit_morlet_k(sigma, xi, round(r * sigma), first, terms)[2],
        bounds=(ratio0 - 0.5, ratio0 + 0.5), method="bounded", options={"xatol": 1e-3})
    return float(round(res.x * sigma) / sigma), first


@functools.lru_cache(maxsize=64)
def default_morlet_terms(xi: float, target: float = 1e-4) -> int:
    """Smallest ``P_D`` whose fitted Morlet wavelet has relative RMSE (Eq. 66) ≤ ``target``
    (cached on disk, :mod:`.fit_cache`)."""
    shipped = _SHIPPED_MORLET_TERMS.get((float(xi), float(target)))
    return shipped if shipped is not None else _default_morlet_terms(float(xi), float(target))


@persistent()
def _default_morlet_terms(xi: float, target: float) -> int:
    for terms in range(6, 24):
        ratio, first = morlet_design(xi, terms)
        sigma = _MORLET_REF_SIGMA
        if _fit_morlet_k(sigma, xi, round(ratio * sigma), first, terms)[2] <= target:
            return terms
    raise ValueError(  # pragma: no cover
        f"no P_D from 6 to 23 reaches relative RMSE {target} for xi={xi}")


@functools.lru_cache(maxsize=1024)
def fit_morlet(sigma: float, xi: float, terms: int, shift: int = 0,
               K: int | None = None, first: int | None = None) -> MorletFit:
    """Fit the direct-method coefficients ``m_p, l_p`` (cached per plain values).

    ``shift = n0 > 0`` fits the attenuated (ASFT) form: the series times ``exp(α k)`` with
    ``α = n0/σ²`` approximates ``ψ[k - n0]`` (Eq. 40 applied to the wavelet's envelope).

    Cached in memory and on disk (:mod:`.fit_cache`): a fit costs 10-70 ms, a read well
    under one.

    >>> fit = fit_morlet(60.0, 6.0, 11)
    >>> fit.K, fit.first, fit.rmse < 1e-4
    (253, 3, True)
    """
    return _fit_morlet(float(sigma), float(xi), int(terms), int(shift),
                       None if K is None else int(K), None if first is None else int(first))


@persistent(MorletFit)
def _fit_morlet(sigma: float, xi: float, terms: int, shift: int, K: int | None,
                first: int | None) -> MorletFit:
    ratio, first0 = morlet_design(float(xi), int(terms))
    if K is None or first is None:
        k0 = max(1, round(ratio * sigma))
        ks = range(max(1, k0 - 2), k0 + 3) if k0 < 48 else (k0,)
        # the attenuated target is not zero-mean: its best band can start lower
        firsts = range(max(0, first0 - 1), first0 + 2) if (k0 < 48 or shift) else (first0,)
        if K is not None:
            ks = (K,)
        if first is not None:
            firsts = (first,)
        # the sampled carrier's frequency, folded into [0, π] (ξ/σ > π aliases on the grid)
        folded = abs((xi / sigma + math.pi) % (2 * math.pi) - math.pi)
        best = None
        for kk in sorted({*ks, *(f + terms - 1 for f in firsts)}):
            if K is not None and kk != K:
                continue
            win = None  # built on the first candidate that needs it
            centre = round(folded * kk / math.pi - (terms - 1) / 2)
            cands = set(firsts) | {centre - 1, centre, centre + 1} if first is None else {first}
            for f in sorted(cands):
                # orders up to K only (β p <= π): no two orders alias on the integer grid
                if f < 0 or f + terms - 1 > kk:
                    continue
                if win is None:
                    win = _MorletWindow(sigma, xi, kk, shift)
                m, l, e = _fit_morlet_k(sigma, xi, kk, f, terms, shift, win)
                if best is None or e < best[0]:
                    best = (e, kk, f, m, l)
        e, K, first, m, l = best
    else:
        m, l, e = _fit_morlet_k(sigma, xi, K, first, terms, shift)
    m.setflags(write=False)
    l.setflags(write=False)
    return MorletFit(float(sigma), float(xi), int(K), int(first), int(terms), m, l, float(e))


# ------------------------------------------------------------------------- exact moments
#: moments ``M_m = Σ_j (j/σ)^m h[j]`` (m = 0, 1, 2) that the fitted kernels keep exactly
MOMENTS = (0, 1, 2)


def target_moments(sigma: float, order: int) -> np.ndarray:
    """Scaled moments ``M_m = Σ_j (j/s)^m h[j]``, ``m = 0, 1, 2``, ``s = max(σ, 1)``, of the
    Gaussian filters' target :func:`discrete_gaussian_kernel` of ``order`` on the whole line
    (float64).

    With the convolution ``y[n] = Σ_j h[j] x[n - j]`` a kernel with moments ``μ_m = Σ_j j^m
    h[j]`` maps ``x = 1, n, n²`` to ``μ_0``, ``μ_0 n - μ_1`` and ``μ_0 n² - 2μ_1 n + μ_2``.
    From σ = 4 on (the continuum limit, see :func:`discrete_gaussian_kernel`) the targets are
    ``μ = (1, 0, σ²)`` (order 0: constants and ramps pass unchanged), ``(0, -1, 0)`` (order 1:
    0 on constants, ``+1`` on the ramp ``x = n``, ``2n`` on ``n²``; scipy.ndimage's
    ``gaussian_filter1d(order=1)`` has the same sign) and ``(0, 0, 2)`` (order 2: 0 on
    constants and ramps, 2 on ``n²``). Below σ = 4 they are the discrete kernel's own,
    which differ from these by the Poisson terms ``~ e^{-2π²σ²}`` (below 1e-7 from σ = 1 on).

    >>> target_moments(10.0, 1) * 10.0  # μ_1 = -1
    array([ 0., -1.,  0.])
    >>> target_moments(10.0, 2) * 100.0  # μ_2 = 2
    array([0., 0., 2.])
    """
    if sigma >= _CONTINUUM_SIGMA:
        return np.array([[1.0, 0.0, 1.0], [0.0, -1.0 / sigma, 0.0],
                         [0.0, 0.0, 2.0 / sigma**2]])[order]
    w = math.ceil(12 * sigma) + 2
    j = np.arange(-w, w + 1, dtype=np.float64)
    h = discrete_gaussian_kernel(j, sigma, order)
    u = j / max(sigma, 1.0)
    return np.array([float(np.sum(u**m * h)) for m in MOMENTS])


def constrain_moments(columns, weights: np.ndarray, j: np.ndarray, scale: float,
                      target: np.ndarray, block: int = 1 << 15) -> np.ndarray:
    """The weights nearest to ``weights`` whose kernel keeps the moments ``target`` exactly.

    The kernel is ``h[j] = Σ_c w_c φ_c[j]`` on the offsets ``j`` (its whole support) with
    the columns ``φ_c = columns(j)`` (shape ``(C, len(j))``, evaluated in blocks). Returns
    ``w + Δw`` with ``Δw`` the smallest change of the kernel in the L2 norm,
    ``min ||Σ_c Δw_c φ_c||²``, subject to ``Σ_j (j/scale)^m h[j] = target[m]``: the
    Lagrange solution ``Δw = G⁺ Cᵀ (C G⁺ Cᵀ)⁻¹ (target - C w)`` with the Gram matrix
    ``G = Φ Φᵀ`` and ``C[m, c] = Σ_j (j/scale)^m φ_c[j]``. When ``weights`` is the
    least-squares fit of a target on these columns (the plain SFT), this is the
    equality-constrained least-squares fit of that target, so the RMSE grows by the least
    possible amount (measured in the tests). Columns that vanish are left out.
    """
    w = np.asarray(weights, dtype=np.float64)
    n_col = len(w)
    gram = np.zeros((n_col, n_col))
    cmat = np.zeros((len(target), n_col))
    for i in range(0, len(j), block):
        jb = j[i:i + block]
        phi = columns(jb)
        gram += phi @ phi.T
        u = jb / scale
        cmat += np.stack([u**m for m in MOMENTS[:len(target)]]) @ phi.T
    norms = np.sqrt(np.diag(gram))
    keep = norms > 1e-12 * norms.max()
    d = 1.0 / norms[keep]
    g = gram[np.ix_(keep, keep)] * d[:, None] * d[None, :]
    c = cmat[:, keep] * d[None, :]
    resid = np.asarray(target, dtype=np.float64) - cmat @ w
    ginv_ct = np.linalg.lstsq(g, c.T, rcond=1e-13)[0]
    lam = np.linalg.lstsq(c @ ginv_ct, resid, rcond=1e-15)[0]
    out = w.copy()
    out[keep] += d * (ginv_ct @ lam)
    return out
