"""Box moments: Legendre, Gegenbauer and Jacobi moments on the square and the cube.

One separable engine (:mod:`.engine`) contracts one axis at a time with per-axis matrices
(:mod:`.quadrature`) built from the orthonormal Jacobi recurrence (:mod:`.polynomials`).
"""

from .api import JacobiTransform, gegenbauer_moments, jacobi_moments, legendre_moments
from .clip import Plane, clip_mask, clip_region
from .moments import BoxMoments

__all__ = [
    "BoxMoments",
    "JacobiTransform",
    "Plane",
    "clip_mask",
    "clip_region",
    "gegenbauer_moments",
    "jacobi_moments",
    "legendre_moments",
]
