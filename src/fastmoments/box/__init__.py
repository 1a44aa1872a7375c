"""Box moments: Legendre, Gegenbauer and Jacobi moments on the square and the cube.

One separable engine (:mod:`.engine`) contracts one axis at a time with per-axis matrices
(:mod:`.quadrature`) built from the orthonormal Jacobi recurrence (:mod:`.polynomials`).
The plan is :mod:`.plan`, the one-call functions :mod:`.api`, the clipped reconstruction
:mod:`.clipped`, and what runs for each job is decided in one place, :mod:`.routes`.
"""

from .api import gegenbauer_moments, jacobi_moments, legendre_moments
from .clip import Plane, clip_mask, clip_region
from .moments import BoxMoments
from .plan import JacobiTransform

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
