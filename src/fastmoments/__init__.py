"""fastmoments: orthogonal moments and fast transforms of images, volumes and signals.

Disk transforms (Zernike, pseudo-Zernike, polar harmonic) share one two-stage engine in
:mod:`fastmoments.disk`; box moments (Legendre, Gegenbauer, Jacobi) share one separable engine
in :mod:`fastmoments.box`; signal transforms (Gaussian smoothing, Morlet wavelets) live in
:mod:`fastmoments.signal`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .metrics import psnr
from .moments import Moments

# --- disk transforms (Zernike, pseudo-Zernike) ---
from .disk import (
    DiskMoments,
    DiskTransform,
    PseudoZernikeTransform,
    ZernikeTransform,
    order_pairs,
    pseudo_zernike_moments,
    zernike_moments,
)

# --- polar harmonic transforms (issue 3) ---
from .disk import PHTMoments, PolarHarmonicTransform, pcet, pct, pst

# --- box moments (issue 4) ---
from .box import (
    BoxMoments,
    JacobiTransform,
    gegenbauer_moments,
    jacobi_moments,
    legendre_moments,
)

# --- signal transforms (issue 5) ---

# --- features (issue 6) ---

__all__ = [
    "PHTMoments",
    "PolarHarmonicTransform",
    "pcet",
    "pct",
    "pst",
    "DiskMoments",
    "DiskTransform",
    "PseudoZernikeTransform",
    "ZernikeTransform",
    "order_pairs",
    "pseudo_zernike_moments",
    "zernike_moments",
    "BoxMoments",
    "JacobiTransform",
    "gegenbauer_moments",
    "jacobi_moments",
    "legendre_moments",
    "Moments",
    "__version__",
    "psnr",
]
