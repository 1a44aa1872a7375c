"""Gaussian smoothing and Morlet wavelet transforms by the (attenuated) sliding Fourier transform.

Methods of Y. Yamashita and T. Wakahara, "Morlet wavelet transform using attenuated sliding
Fourier transform and kernel integral for graphic processing unit" (2022): the cost per sample
does not grow with σ.

* :func:`gaussian_filter` (every axis, as scipy.ndimage), :func:`gaussian_filter1d` (one axis)
  / :class:`GaussianFilter`: smoothing and first/second derivatives;
* :func:`morlet_transform` / :class:`MorletTransform`: one scale, complex output;
* :func:`cwt` / :class:`CWT` with :class:`Morlet`: many scales at once.

What runs a call, and why, is decided in one place: :mod:`.routes` (the route table; plans
show its answer as ``plan.route``).

Modules: :mod:`.coefficients` (least-squares fits), :mod:`.chunked` (the default engine: the
bank as small matrix products), :mod:`.triton_sft` (its fused GPU kernels), :mod:`.sliding`
(the row-by-row SFT/ASFT engines), :mod:`.boundary` (scipy.ndimage modes), :mod:`.direct`
(truncated convolution), :mod:`.fir` (the direct FIR in numba on the CPU),
:mod:`._numba_sft` (the SFT recursions in numba on the CPU), :mod:`.recursive2` (the ASFT
paper's second-order filters), :mod:`.scales` (scale <-> frequency, cone of influence,
PyWavelets ``cmor`` mapping), :mod:`.fit_cache` (fitted coefficients cached on disk),
:mod:`._apply` (running a bank along an axis), :mod:`.cuda_sft` (the CUDA C++ batch kernel,
through CuPy).
"""

from __future__ import annotations

from .boundary import MODES
from .cwt import CWT, cwt
from .gaussian import GaussianFilter
from .gaussian_calls import gaussian_filter, gaussian_filter1d
from .morlet import MorletTransform, morlet_transform
from .scales import (
    cone_of_influence,
    frequency_to_scale,
    from_pywt_cmor,
    pywt_cmor_factor,
    scale_to_frequency,
    scales_for_band,
    to_pywt_cmor,
)
from .sliding import ENGINES
from .wavelets import Morlet

__all__ = [
    "CWT",
    "ENGINES",
    "MODES",
    "GaussianFilter",
    "Morlet",
    "MorletTransform",
    "cone_of_influence",
    "cwt",
    "frequency_to_scale",
    "from_pywt_cmor",
    "gaussian_filter",
    "gaussian_filter1d",
    "morlet_transform",
    "pywt_cmor_factor",
    "scale_to_frequency",
    "scales_for_band",
    "to_pywt_cmor",
]
