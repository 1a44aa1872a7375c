"""Wavelets as small frozen objects (PyWavelets-style: objects, not strings): the Morlet and
the derivatives of Gaussians (:mod:`.dog` holds the latter's transform and its math)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import check_int
from .coefficients import morlet_constants, morlet_kernel

__all__ = ["MAX_XI", "DerivativeOfGaussian", "MexicanHat", "Morlet"]

MAX_XI = 1000.0  # beyond, the carrier is meaningless next to the envelope (and overflows)


@dataclass(frozen=True)
class Morlet:
    """The complex Morlet wavelet with admissibility correction (equations 49-51 of the
    :ref:`ASFT paper <bib-asft-paper>`).

    ``ψ_ξ(t) = C_ξ π^{-1/4} e^{-t²/2} (e^{iξt} - κ_ξ)``, ``κ_ξ = e^{-ξ²/2}``,
    ``C_ξ = (1 + e^{-ξ²} - 2 e^{-3ξ²/4})^{-1/2}``, dilated by the scale σ as
    ``ψ_{σ,ξ}[n] = σ^{-1/2} ψ_ξ(n/σ)`` (Eq. 52).

    Parameters
    ----------
    xi : float
        ξ, the number of radians per standard deviation of the envelope (> 0). The default
        6.0 is the common choice (κ negligible, about 1 cycle per σ).

    Examples
    --------
    >>> w = Morlet(xi=6.0)
    >>> round(w.center_frequency, 6)  # cycles per unit of scale: ξ / (2π)
    0.95493
    """

    xi: float = 6.0

    def __post_init__(self) -> None:
        xi = self.xi
        if isinstance(xi, bool) or not isinstance(xi, (int, float, np.floating, np.integer)):
            raise TypeError(f"xi must be a real number, got {xi!r}")
        if not math.isfinite(float(xi)) or float(xi) <= 0:
            raise ValueError(f"xi must be finite and > 0, got {xi}")
        if float(xi) > MAX_XI:
            raise ValueError(f"xi must be <= {MAX_XI:g} (radians per σ of the envelope), got {xi}")
        object.__setattr__(self, "xi", float(xi))

    @property
    def center_frequency(self) -> float:
        """``ξ / (2π)``: frequency (cycles per unit of scale) of the wavelet's carrier."""
        return self.xi / (2.0 * math.pi)

    @property
    def constants(self) -> tuple[float, float]:
        """``(C_ξ, κ_ξ)`` of Eqs. 50-51."""
        return morlet_constants(self.xi)

    def sampled(self, n: np.ndarray, scale: float) -> np.ndarray:
        """``ψ_{σ,ξ}[n]`` (Eq. 52) at integer or real offsets ``n`` for scale ``σ`` (complex128)."""
        return morlet_kernel(np.asarray(n, dtype=np.float64), float(scale), self.xi)


_NORM = {1: math.sqrt(2.0) * math.pi ** -0.25, 2: 2.0 / (math.sqrt(3.0) * math.pi ** 0.25)}
_SIGN = {1: 1.0, 2: -1.0}


@dataclass(frozen=True)
class DerivativeOfGaussian:
    """The derivative-of-Gaussian wavelet of order 1 or 2 (2 = the Mexican hat).

    ``ψ_{σ,p}[n] = σ^{-1/2} ψ_p(n/σ)`` with ``ψ_1(u) = -√2 π^{-1/4} u e^{-u²/2}`` and
    ``ψ_2(u) = 2/(√3 π^{1/4}) (1 - u²) e^{-u²/2}``: σ is the standard deviation of the
    Gaussian in samples, and the wavelet has unit energy at every scale (module notes).

    Parameters
    ----------
    order : {1, 2}
        The derivative's order.

    Notes
    -----
    Fourier transform (``∫ ψ(u) e^{-isu} du``): ``Ψ_p(s) = s_p c_p (is)ᵖ √(2π) e^{-s²/2}``,
    ``i c_1 √(2π) s e^{-s²/2}`` and ``c_2 √(2π) s² e^{-s²/2}``; ``|Ψ_p|`` peaks at ``s = √p``,
    so the centre frequency is ``√p / (2π)`` cycles per σ (:attr:`center_frequency`).

    **PyWavelets.** ``gaus1`` at scale ``a`` is ``order=1`` at ``σ = a/√2`` (its Gaussian is
    ``e^{-t²}``), ``mexh`` at ``a`` is ``order=2`` at ``σ = a``, and ``gaus2`` at ``a`` is
    ``order=2`` at ``σ = a/√2`` (:func:`~fastmoments.signal.scales.from_pywt_dog`); the sampled
    kernels are then the same, normalisation included. ``pywt.cwt`` correlates where we convolve
    and differentiates an integrated wavelet: its coefficients are ``ε W(σ, n - 1/2)``, half a
    sample later, with ``ε = -1`` for ``gaus1`` (an odd wavelet: correlation flips the sign) and
    ``+1`` for ``mexh`` and ``gaus2``, up to its discretisation (0.1 % at ``a = 8``, tested).
    Its ``frequencies`` use numerically estimated centre frequencies (0.2 for ``gaus1``, 0.25
    for ``mexh``, per unit of ``a``); ours are the exact peak ``√p / (2π σ)`` (0.225/a for
    both).

    Examples
    --------
    >>> w = DerivativeOfGaussian(2)
    >>> round(w.center_frequency, 6)
    0.225079
    >>> n = np.arange(-60, 61)
    >>> round(float(np.sum(w.sampled(n, 8.0) ** 2)), 9)  # unit energy
    1.0
    """

    order: int = 2

    def __post_init__(self) -> None:
        order = check_int("order", self.order, minimum=1, maximum=2)
        object.__setattr__(self, "order", order)

    @property
    def center_frequency(self) -> float:
        """``√p / (2π)``: the peak of ``|Ψ_p|`` in cycles per unit of scale."""
        return math.sqrt(self.order) / (2.0 * math.pi)

    @property
    def norm(self) -> float:
        """``c_p``: ``1/‖dᵖ/duᵖ e^{-u²/2}‖₂``."""
        return _NORM[self.order]

    @property
    def sign(self) -> float:
        """``s_p``: +1 for order 1 (PyWavelets' ``gaus1``), -1 for order 2 (``mexh``)."""
        return _SIGN[self.order]

    def sampled(self, n: np.ndarray, scale: float) -> np.ndarray:
        """``ψ_{σ,p}[n] = σ^{-1/2} ψ_p(n/σ)`` at offsets ``n`` for scale σ (float64)."""
        u = np.asarray(n, dtype=np.float64) / float(scale)
        poly = -u if self.order == 1 else 1.0 - u * u
        return self.norm * float(scale) ** -0.5 * poly * np.exp(-0.5 * u * u)

    def filter_factor(self, scale: float) -> float:
        """``s_p c_p √(2π) σ^{p + 1/2}``: the coefficients are this times
        ``gaussian_filter1d(x, σ, order=p)``."""
        return self.sign * self.norm * math.sqrt(2 * math.pi) * scale ** (self.order + 0.5)

    def frequency_response(self, omega: np.ndarray, scale: float) -> np.ndarray:
        """``Σ_k ψ_{σ,p}[k] e^{-iωk}`` (complex128) of the kernel the transform applies.

        That kernel is :meth:`filter_factor` times scipy.ndimage's discrete Gaussian
        derivative (``g[k]/S``, ``S = Σ_j g[j]``; order 2 corrected to zero sum by the
        constant ``c``), whose transform is, with ``ν = ω + 2πm`` (Poisson summation),
        ``(√(2π)σ/S) Σ_m (iν) e^{-σ²ν²/2}`` (order 1) and
        ``-(√(2π)σ/S) Σ_m (ν² + c) e^{-σ²ν²/2}`` (order 2). For σ ≥ 1 it equals the
        transform of the sampled wavelet to 2.5e-7 relative (to rounding from σ = 1.5).
        """
        sigma = float(scale)
        w = np.asarray(omega, dtype=np.float64)
        m_max = math.ceil((9.0 / sigma + math.pi) / (2 * math.pi)) + 1
        j = np.arange(-math.ceil(12 * sigma) - 1, math.ceil(12 * sigma) + 2, dtype=np.float64)
        g = np.exp(-0.5 * (j / sigma) ** 2)
        total = float(g.sum())
        acc = np.zeros(w.shape, dtype=np.complex128)
        c = 0.0
        if self.order == 2:
            c = float(np.sum((j**2 / sigma**4 - 1 / sigma**2) * g)) / total
        for m in range(-m_max, m_max + 1):
            nu = w + 2 * math.pi * m
            near = np.flatnonzero(np.abs(sigma * nu) < 40.0)  # elsewhere below e^{-800}
            v = nu[near]
            e = np.exp(-0.5 * (sigma * v) ** 2)
            acc[near] += 1j * v * e if self.order == 1 else -(v * v + c) * e
        return self.filter_factor(sigma) * math.sqrt(2 * math.pi) * sigma / total * acc


@dataclass(frozen=True)
class MexicanHat(DerivativeOfGaussian):
    """The Mexican hat: :class:`DerivativeOfGaussian` of order 2 (PyWavelets' ``mexh``).

    >>> isinstance(MexicanHat(), DerivativeOfGaussian), MexicanHat().order
    (True, 2)
    """

    order: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.order != 2:
            raise ValueError(f"order must be 2 for the Mexican hat, got {self.order}")
