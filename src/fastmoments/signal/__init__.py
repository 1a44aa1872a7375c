"""Gaussian smoothing and Morlet wavelet transforms by the (attenuated) sliding Fourier transform.

Methods of Y. Yamashita and T. Wakahara, "Morlet wavelet transform using attenuated sliding
Fourier transform and kernel integral for graphic processing unit" (2022): the cost per sample
does not grow with σ.

* :func:`gaussian_filter` (every axis, as scipy.ndimage), :func:`gaussian_filter1d` (one axis)
  / :class:`GaussianFilter`: smoothing and first/second derivatives; with ``truncate=`` or
  ``radius=`` scipy's truncated kernel exactly (:class:`TruncatedGaussian`);
* :func:`gaussian_laplace`, :func:`gaussian_gradient_magnitude` (scipy.ndimage's signatures);
* :func:`morlet_transform` / :class:`MorletTransform`: one scale, complex output;
* :func:`cwt` / :class:`CWT` with :class:`Morlet`, :class:`DerivativeOfGaussian`,
  :class:`MexicanHat` or :class:`GeneralizedMorse`: many scales at once, at every sample or
  every ``hop``-th, of real or complex signals;
* :func:`icwt` / :class:`ICWT`: the inverse CWT (:func:`icwt_response`, :func:`icwt_band`:
  what it recovers);
* ``nan_policy=`` on the Gaussians: missing samples omitted (normalised convolution) or
  propagated;
* :meth:`GaussianFilter.stream` / :class:`GaussianStream`: smoothing chunk by chunk.

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
through CuPy), :mod:`.nan` (the NaN policies), :mod:`.dog` (the derivative-of-Gaussian CWT),
:mod:`.morse` (the generalized Morse wavelets and their CWT), :mod:`.hop` (the decimated
CWT), :mod:`.inverse` (the inverse CWT), :mod:`.stream` (the
streaming Gaussian).
"""

from __future__ import annotations

from .boundary import MODES
from .cwt import CWT, cwt
from .derived import gaussian_gradient_magnitude, gaussian_laplace
from .gaussian import GaussianFilter
from .gaussian_calls import gaussian_filter, gaussian_filter1d
from .gaussian_truncated import TruncatedGaussian
from .inverse import ICWT, icwt, icwt_band, icwt_response
from .morlet import MorletTransform, morlet_transform
from .morse import GeneralizedMorse
from .scales import (
    cone_of_influence,
    frequency_to_scale,
    from_pywt_cmor,
    from_pywt_dog,
    pywt_cmor_factor,
    scale_to_frequency,
    scales_for_band,
    to_pywt_cmor,
)
from .sliding import ENGINES
from .stream import GaussianStream
from .wavelets import DerivativeOfGaussian, MexicanHat, Morlet

__all__ = [
    "CWT",
    "ENGINES",
    "ICWT",
    "MODES",
    "DerivativeOfGaussian",
    "GaussianFilter",
    "GaussianStream",
    "GeneralizedMorse",
    "MexicanHat",
    "Morlet",
    "MorletTransform",
    "TruncatedGaussian",
    "cone_of_influence",
    "cwt",
    "frequency_to_scale",
    "from_pywt_cmor",
    "from_pywt_dog",
    "gaussian_filter",
    "gaussian_filter1d",
    "gaussian_gradient_magnitude",
    "gaussian_laplace",
    "icwt",
    "icwt_band",
    "icwt_response",
    "morlet_transform",
    "pywt_cmor_factor",
    "scale_to_frequency",
    "scales_for_band",
    "to_pywt_cmor",
]
