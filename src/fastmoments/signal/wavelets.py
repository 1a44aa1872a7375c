"""Wavelets as small frozen objects (PyWavelets-style: objects, not strings)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .coefficients import morlet_constants, morlet_kernel

__all__ = ["MAX_XI", "Morlet"]

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
