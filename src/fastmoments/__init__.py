"""fastmoments: orthogonal moments and fast transforms of images, volumes and signals.

Disk transforms (Zernike, pseudo-Zernike, polar harmonic) share one two-stage engine in
:mod:`fastmoments.disk`; box moments (Legendre, Gegenbauer, Jacobi) share one separable engine
in :mod:`fastmoments.box`; signal transforms (Gaussian smoothing, Morlet wavelets) live in
:mod:`fastmoments.signal`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import data, disk

# box moments: Legendre, Gegenbauer, Jacobi in 2-D and 3-D (fastmoments.box)
from .box import (
    BoxMoments,
    JacobiTransform,
    Plane,
    gegenbauer_moments,
    jacobi_moments,
    legendre_moments,
)

# disk transforms: Zernike, pseudo-Zernike, polar harmonic (fastmoments.disk)
from .disk import (
    DiskMoments,
    DiskTransform,
    PHTMoments,
    PolarHarmonicTransform,
    PseudoZernikeTransform,
    ZernikeTransform,
    order_pairs,
    pcet,
    pct,
    pseudo_zernike_moments,
    pst,
    zernike_moments,
)

# moment features for recognition (fastmoments.features)
from .features import (
    FeatureSet,
    ObjectFeatures,
    feature_distances,
    features,
    object_features,
    pair_statistics,
)
from .metrics import psnr
from .moments import Moments

# signal transforms: Gaussian smoothing, Morlet wavelets (fastmoments.signal)
from .signal import (
    CWT,
    GaussianFilter,
    Morlet,
    MorletTransform,
    cwt,
    gaussian_filter,
    gaussian_filter1d,
    morlet_transform,
)

__all__ = [
    "CWT",
    "BoxMoments",
    "DiskMoments",
    "DiskTransform",
    "FeatureSet",
    "GaussianFilter",
    "JacobiTransform",
    "Moments",
    "Morlet",
    "MorletTransform",
    "ObjectFeatures",
    "PHTMoments",
    "Plane",
    "PolarHarmonicTransform",
    "PseudoZernikeTransform",
    "ZernikeTransform",
    "__version__",
    "cwt",
    "data",
    "disk",
    "feature_distances",
    "features",
    "gaussian_filter",
    "gaussian_filter1d",
    "gegenbauer_moments",
    "jacobi_moments",
    "legendre_moments",
    "morlet_transform",
    "object_features",
    "order_pairs",
    "pair_statistics",
    "pcet",
    "pct",
    "pseudo_zernike_moments",
    "psnr",
    "pst",
    "zernike_moments",
]
