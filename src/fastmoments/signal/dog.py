"""The CWT with the derivative-of-Gaussian wavelets (order 1, and order 2 = the Mexican hat),
which :func:`~fastmoments.signal.cwt` runs for a
:class:`~fastmoments.signal.DerivativeOfGaussian` wavelet.

The wavelet of order ``p`` at scale σ (samples) is the ``p``-th derivative of a Gaussian of
standard deviation σ, with unit energy at every scale, as :class:`~fastmoments.signal.Morlet`::

    ψ_p(u) = s_p c_p dᵖ/duᵖ e^{-u²/2},     ψ_{σ,p}[n] = σ^{-1/2} ψ_p(n/σ),

``c_1 = √2 π^{-1/4}``, ``c_2 = 2 / (√3 π^{1/4})`` (``∫ ψ_p² du = 1``) and the signs
``s_1 = +1`` (``ψ_1(u) = -c_1 u e^{-u²/2}``, PyWavelets' ``gaus1``) and ``s_2 = -1``
(``ψ_2(u) = c_2 (1 - u²) e^{-u²/2}``, the Mexican hat, PyWavelets' ``mexh``). Since
``dᵖ/dnᵖ g_σ(n) = σ^{-p-1} (2π)^{-1/2} (dᵖ/duᵖ e^{-u²/2})(n/σ)`` for the normalised Gaussian
``g_σ``, the transform is a scaled Gaussian derivative filter:

    W_p(σ, n) = Σ_k ψ_{σ,p}[k] x[n - k] = s_p c_p √(2π) σ^{p + 1/2} (gᵖ_σ * x)[n],

computed by :func:`~fastmoments.signal.gaussian_filter1d` ``(x, σ, order=p)`` whose cost per
sample does not grow with σ (the sliding Fourier transform; Yamashita & Wakahara 2022).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .._array import to_output
from ._apply import as_signal, output_target
from .gaussian_calls import plan_filter1d
from .wavelets import DerivativeOfGaussian

__all__ = ["MIN_DOG_SCALE"]

#: Smallest scale σ of the DoG wavelets. Below, the sampled wavelet is mostly aliased and the
#: discrete Gaussian derivatives that the transform applies depart from it (relative L2
#: difference of the kernels: 1.4e-2 and 0.13 for orders 1 and 2 at σ = 0.5, 5e-9 and 2.5e-7
#: at σ = 1, rounding from σ = 1.5).
MIN_DOG_SCALE = 1.0


def check_dog_scales(scales: tuple[float, ...]) -> None:
    """Refuse a scale below :data:`MIN_DOG_SCALE` (the scales are checked numbers already)."""
    for s in scales:
        if s < MIN_DOG_SCALE:
            raise ValueError(f"scales must be >= {MIN_DOG_SCALE} for a derivative-of-Gaussian "
                             f"wavelet, got {s:g}")


def _dog_cwt(x: Any, scales: tuple[float, ...], wavelet: DerivativeOfGaussian, axis: int = -1,
             *, sampling_period: float = 1.0, mode: str = "reflect", cval: float = 0.0,
             truncate: float = 4.0, out: Any = None, progress: bool | None = None,
             **options: Any) -> tuple[Any, np.ndarray]:
    """The body of :func:`~fastmoments.signal.cwt` for a derivative-of-Gaussian wavelet.

    Parameters
    ----------
    x : array_like or torch.Tensor
        Real signals, transformed along ``axis``; never modified.
    scales : tuple of float
        Scales σ ≥ :data:`MIN_DOG_SCALE` in samples (checked by the caller): the standard
        deviation of the Gaussian.
    wavelet : DerivativeOfGaussian
        The wavelet.
    axis : int
        Axis of ``x`` holding time.
    sampling_period : float
        Sampling period (checked, > 0) used to express ``frequencies``.
    mode, cval, truncate, progress
        As in :func:`~fastmoments.signal.gaussian_filter1d`.
    out : numpy.ndarray or torch.Tensor, optional
        Preallocated real coefficients ``(len(scales), *x.shape)`` of the working dtype.
    **options
        ``method``, ``terms``, ``engine``, ``memory_budget`` of
        :func:`~fastmoments.signal.gaussian_filter1d` (``method="auto"``: the faster of the
        direct FIR and the SFT at each scale).

    Returns
    -------
    coefficients : numpy.ndarray or torch.Tensor
        Real, ``(len(scales), *x.shape)``, in the working dtype (float32 or float64):
        ``W[i, ..., n] = Σ_k ψ_{σ_i,p}[k] x[..., n - k]`` (``out`` when given).
    frequencies : numpy.ndarray
        ``√p / (2π σ_i) / sampling_period``: the peak frequency of each scale's wavelet.

    Notes
    -----
    ``W_p(σ, ·) = s_p c_p √(2π) σ^{p+1/2} gaussian_filter1d(x, σ, order=p)`` (module notes):
    one Gaussian derivative per scale, whose cost does not grow with σ. The Gaussian filters
    use scipy.ndimage's discrete kernels (sum one; order 2 with zero sum), which equal the
    sampled continuous ones to 2.5e-7 relative at σ = 1 and to rounding from σ = 1.5,
    and fit them to a relative RMSE ≤ 1e-4 (the FIR of ``method="auto"``: ≤ 2e-5); that is
    the error of ``W`` against the direct convolution with the sampled wavelet (tested).
    """
    check_dog_scales(scales)
    t, kind, _ = as_signal(x, False)  # each filter checks the finiteness itself
    shape = (len(scales), *t.shape)
    if t.requires_grad and torch.is_grad_enabled():  # differentiable: no writes in place
        if out is not None:
            raise ValueError("out must not be given while a gradient is recorded for x")
        coef = torch.stack([plan_filter1d(t, s, axis, wavelet.order, mode, cval, truncate,
                                          progress=progress, **options)
                            * wavelet.filter_factor(s) for s in scales])
        user_out = None
    else:
        user_out, target = output_target(out, x, t, kind, shape, t.dtype)
        coef = (torch.empty(shape, dtype=t.dtype, device=t.device) if target is None
                else target)
        for i, s in enumerate(scales):
            plan_filter1d(t, s, axis, wavelet.order, mode, cval, truncate, out=coef[i],
                              progress=progress, **options)
            coef[i].mul_(wavelet.filter_factor(s))
    freqs = np.array([wavelet.center_frequency / s / sampling_period for s in scales])
    return (user_out if user_out is not None else to_output(coef, kind)), freqs
