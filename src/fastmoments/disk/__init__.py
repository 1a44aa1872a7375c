"""Transforms on the unit disk, sharing one two-stage engine (:mod:`.engine`).

Geometry (:mod:`.sampling`) -> families (:mod:`.families`, radial functions in
:mod:`.radial`) -> engine (:mod:`.engine`) -> plans (:mod:`.transform`) -> moments objects
(:mod:`.moments`) -> one-call functions (:mod:`.api`).
"""

from .api import order_pairs, pseudo_zernike_moments, zernike_moments
from .families import FAMILIES, DiskFamily, get_family
from .moments import DiskMoments
from .placement import Placement, centroid
from .sampling import DiskSampling, disk_sampling, pixel_mask
from .transform import DiskTransform, PseudoZernikeTransform, ZernikeTransform

__all__ = [
    "FAMILIES",
    "DiskFamily",
    "DiskMoments",
    "DiskSampling",
    "DiskTransform",
    "Placement",
    "PseudoZernikeTransform",
    "ZernikeTransform",
    "centroid",
    "disk_sampling",
    "get_family",
    "order_pairs",
    "pixel_mask",
    "pseudo_zernike_moments",
    "zernike_moments",
]

# polar harmonic transforms; importing registers the "pcet", "pct", "pst" families
from .pht import PHTMoments, PolarHarmonicTransform, pcet, pct, pst

__all__ += ["PHTMoments", "PolarHarmonicTransform", "pcet", "pct", "pst"]
