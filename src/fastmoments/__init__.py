"""fastmoments: orthogonal moments and fast transforms of images, volumes and signals.

Disk transforms (Zernike, pseudo-Zernike, polar harmonic) share one two-stage engine in
:mod:`fastmoments.disk`; box moments (Legendre, Gegenbauer, Jacobi) share one separable engine
in :mod:`fastmoments.box`; signal transforms (Gaussian smoothing, Morlet wavelets) live in
:mod:`fastmoments.signal`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Names are imported on first use (PEP 562): ``import fastmoments`` imports neither torch nor
# scipy, so a command or a first call pays only for what it uses. Each public name maps to
# the submodule that defines it; ``from fastmoments import X``, ``fastmoments.X`` and tab
# completion (``__dir__``) work as if everything had been imported here.
_LAZY: dict[str, tuple[str, ...]] = {
    # 3-D Zernike moments of volumes on the unit ball (fastmoments.ball)
    ".ball": ("Zernike3DMoments", "Zernike3DTransform", "zernike3d_moments"),
    # box moments: Legendre, Gegenbauer, Jacobi in 2-D and 3-D (fastmoments.box)
    ".box": (
        "BoxMoments",
        "JacobiTransform",
        "Plane",
        "gegenbauer_moments",
        "jacobi_moments",
        "legendre_moments",
    ),
    # disk transforms: Zernike, pseudo-Zernike, polar harmonic (fastmoments.disk)
    ".disk": (
        "DiskMoments",
        "DiskTransform",
        "PHTMoments",
        "PolarHarmonicTransform",
        "PseudoZernikeTransform",
        "ZernikeTransform",
        "order_pairs",
        "pcet",
        "pct",
        "pseudo_zernike_moments",
        "pst",
        "zernike_moments",
    ),
    # moment features for recognition (fastmoments.recognition)
    ".recognition": (
        "FeatureSet",
        "ObjectMoments",
        "feature_distances",
        "features",
        "object_features",
        "pair_statistics",
        "regionprops_property",
    ),
    ".metrics": ("psnr",),
    ".moments": ("Moments",),
    # signal transforms: Gaussian smoothing, wavelets and their inverse (fastmoments.signal)
    ".signal": (
        "CWT",
        "DerivativeOfGaussian",
        "GaussianFilter",
        "GaussianStream",
        "GeneralizedMorse",
        "ICWT",
        "MexicanHat",
        "Morlet",
        "MorletTransform",
        "cwt",
        "gaussian_filter",
        "gaussian_filter1d",
        "gaussian_gradient_magnitude",
        "gaussian_laplace",
        "icwt",
        "icwt_band",
        "icwt_response",
        "morlet_transform",
    ),
}

#: Subpackages reachable as attributes (``fastmoments.disk``) without importing them first.
_SUBMODULES = ("ball", "box", "cli", "collections", "dask", "data", "disk", "metrics", "moments",
               "parallel", "recognition", "signal", "sklearn", "viz")

_WHERE = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import a public name (or a subpackage) on first access and keep it (PEP 562)."""
    module = _WHERE.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))


if TYPE_CHECKING:  # the eager imports, for type checkers and IDEs only
    from . import data, disk
    from .ball import Zernike3DMoments, Zernike3DTransform, zernike3d_moments
    from .box import (
        BoxMoments,
        JacobiTransform,
        Plane,
        gegenbauer_moments,
        jacobi_moments,
        legendre_moments,
    )
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
    from .metrics import psnr
    from .moments import Moments
    from .recognition import (
        FeatureSet,
        ObjectMoments,
        feature_distances,
        features,
        object_features,
        pair_statistics,
        regionprops_property,
    )
    from .signal import (
        CWT,
        ICWT,
        DerivativeOfGaussian,
        GaussianFilter,
        GaussianStream,
        GeneralizedMorse,
        MexicanHat,
        Morlet,
        MorletTransform,
        cwt,
        gaussian_filter,
        gaussian_filter1d,
        gaussian_gradient_magnitude,
        gaussian_laplace,
        icwt,
        icwt_band,
        icwt_response,
        morlet_transform,
    )

__all__ = [
    "CWT",
    "ICWT",
    "BoxMoments",
    "DerivativeOfGaussian",
    "DiskMoments",
    "DiskTransform",
    "FeatureSet",
    "GaussianFilter",
    "GaussianStream",
    "GeneralizedMorse",
    "JacobiTransform",
    "MexicanHat",
    "Moments",
    "Morlet",
    "MorletTransform",
    "ObjectMoments",
    "PHTMoments",
    "Plane",
    "PolarHarmonicTransform",
    "PseudoZernikeTransform",
    "Zernike3DMoments",
    "Zernike3DTransform",
    "ZernikeTransform",
    "__version__",
    "cwt",
    "data",
    "disk",
    "feature_distances",
    "features",
    "gaussian_filter",
    "gaussian_filter1d",
    "gaussian_gradient_magnitude",
    "gaussian_laplace",
    "gegenbauer_moments",
    "icwt",
    "icwt_band",
    "icwt_response",
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
    "regionprops_property",
    "zernike3d_moments",
    "zernike_moments",
]
