"""Derivative-of-Gaussian wavelets (order 1, and order 2 = the Mexican hat) and their CWT.

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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._array import as_tensor, to_output
from .._validate import check_choice, check_int, check_positive_float
from . import gaussian_filter1d

__all__ = ["MIN_DOG_SCALE", "DerivativeOfGaussian", "MexicanHat", "dog_cwt", "from_pywt_dog"]

#: Smallest scale σ of the DoG wavelets. Below, the sampled wavelet is mostly aliased and the
#: discrete Gaussian derivatives that the transform applies depart from it (relative L2
#: difference of the kernels: 1.4e-2 and 0.13 for orders 1 and 2 at σ = 0.5, 5e-9 and 2.5e-7
#: at σ = 1, rounding from σ = 1.5).
MIN_DOG_SCALE = 1.0

_NORM = {1: math.sqrt(2.0) * math.pi ** -0.25, 2: 2.0 / (math.sqrt(3.0) * math.pi ** 0.25)}
_SIGN = {1: 1.0, 2: -1.0}


@dataclass(frozen=True)
class DerivativeOfGaussian:
    """The derivative-of-Gaussian wavelet of order 1 or 2 (2 = the Mexican hat).

    ``ψ_{σ,p}[n] = σ^{-1/2} ψ_p(n/σ)`` with ``ψ_1(u) = -√2 π^{-1/4} u e^{-u²/2}`` and
    ``ψ_2(u) = 2/(√3 π^{1/4}) (1 - u²) e^{-u²/2}``: σ is the standard deviation of the
    Gaussian in samples, and the wavelet has unit energy at every scale (module notes).

    Parameters
    ----------
    order : {1, 2}
        The derivative's order.

    Notes
    -----
    Fourier transform (``∫ ψ(u) e^{-isu} du``): ``Ψ_p(s) = s_p c_p (is)ᵖ √(2π) e^{-s²/2}``,
    ``i c_1 √(2π) s e^{-s²/2}`` and ``c_2 √(2π) s² e^{-s²/2}``; ``|Ψ_p|`` peaks at ``s = √p``,
    so the centre frequency is ``√p / (2π)`` cycles per σ (:attr:`center_frequency`).

    **PyWavelets.** ``gaus1`` at scale ``a`` is ``order=1`` at ``σ = a/√2`` (its Gaussian is
    ``e^{-t²}``), ``mexh`` at ``a`` is ``order=2`` at ``σ = a``, and ``gaus2`` at ``a`` is
    ``order=2`` at ``σ = a/√2`` (:func:`from_pywt_dog`); the sampled kernels are then the same,
    normalisation included. ``pywt.cwt`` correlates where we convolve and differentiates an
    integrated wavelet: its coefficients are ``ε W(σ, n - 1/2)``, half a sample later, with
    ``ε = -1`` for ``gaus1`` (an odd wavelet: correlation flips the sign) and ``+1`` for
    ``mexh`` and ``gaus2``, up to its discretisation (0.1 % at ``a = 8``, tested). Its
    ``frequencies`` use numerically estimated centre frequencies (0.2 for ``gaus1``, 0.25 for
    ``mexh``, per unit of ``a``); ours are the exact peak ``√p / (2π σ)`` (0.225/a for both).

    Examples
    --------
    >>> w = DerivativeOfGaussian(2)
    >>> round(w.center_frequency, 6)
    0.225079
    >>> n = np.arange(-60, 61)
    >>> round(float(np.sum(w.sampled(n, 8.0) ** 2)), 9)  # unit energy
    1.0
    """

    order: int = 2

    def __post_init__(self) -> None:
        order = check_int("order", self.order, minimum=1, maximum=2)
        object.__setattr__(self, "order", order)

    @property
    def center_frequency(self) -> float:
        """``√p / (2π)``: the peak of ``|Ψ_p|`` in cycles per unit of scale."""
        return math.sqrt(self.order) / (2.0 * math.pi)

    @property
    def norm(self) -> float:
        """``c_p``: ``1/‖dᵖ/duᵖ e^{-u²/2}‖₂``."""
        return _NORM[self.order]

    @property
    def sign(self) -> float:
        """``s_p``: +1 for order 1 (PyWavelets' ``gaus1``), -1 for order 2 (``mexh``)."""
        return _SIGN[self.order]

    def sampled(self, n: np.ndarray, scale: float) -> np.ndarray:
        """``ψ_{σ,p}[n] = σ^{-1/2} ψ_p(n/σ)`` at offsets ``n`` for scale σ (float64)."""
        u = np.asarray(n, dtype=np.float64) / float(scale)
        poly = -u if self.order == 1 else 1.0 - u * u
        return self.norm * float(scale) ** -0.5 * poly * np.exp(-0.5 * u * u)

    def filter_factor(self, scale: float) -> float:
        """``s_p c_p √(2π) σ^{p + 1/2}``: the coefficients are this times
        ``gaussian_filter1d(x, σ, order=p)``."""
        return self.sign * self.norm * math.sqrt(2 * math.pi) * scale ** (self.order + 0.5)

    def frequency_response(self, omega: np.ndarray, scale: float) -> np.ndarray:
        """``Σ_k ψ_{σ,p}[k] e^{-iωk}`` (complex128) of the kernel :func:`dog_cwt` applies.

        That kernel is :meth:`filter_factor` times scipy.ndimage's discrete Gaussian
        derivative (``g[k]/S``, ``S = Σ_j g[j]``; order 2 corrected to zero sum by the
        constant ``c``), whose transform is, with ``ν = ω + 2πm`` (Poisson summation),
        ``(√(2π)σ/S) Σ_m (iν) e^{-σ²ν²/2}`` (order 1) and
        ``-(√(2π)σ/S) Σ_m (ν² + c) e^{-σ²ν²/2}`` (order 2). For σ ≥ 1 it equals the
        transform of the sampled wavelet to 2.5e-7 relative (to rounding from σ = 1.5).
        """
        sigma = float(scale)
        w = np.asarray(omega, dtype=np.float64)
        m_max = math.ceil((9.0 / sigma + math.pi) / (2 * math.pi)) + 1
        j = np.arange(-math.ceil(12 * sigma) - 1, math.ceil(12 * sigma) + 2, dtype=np.float64)
        g = np.exp(-0.5 * (j / sigma) ** 2)
        total = float(g.sum())
        acc = np.zeros(w.shape, dtype=np.complex128)
        c = 0.0
        if self.order == 2:
            c = float(np.sum((j**2 / sigma**4 - 1 / sigma**2) * g)) / total
        for m in range(-m_max, m_max + 1):
            nu = w + 2 * math.pi * m
            near = np.flatnonzero(np.abs(sigma * nu) < 40.0)  # elsewhere below e^{-800}
            v = nu[near]
            e = np.exp(-0.5 * (sigma * v) ** 2)
            acc[near] += 1j * v * e if self.order == 1 else -(v * v + c) * e
        return self.filter_factor(sigma) * math.sqrt(2 * math.pi) * sigma / total * acc


@dataclass(frozen=True)
class MexicanHat(DerivativeOfGaussian):
    """The Mexican hat: :class:`DerivativeOfGaussian` of order 2 (PyWavelets' ``mexh``).

    >>> isinstance(MexicanHat(), DerivativeOfGaussian), MexicanHat().order
    (True, 2)
    """

    order: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.order != 2:
            raise ValueError(f"order must be 2 for the Mexican hat, got {self.order}")


_PYWT = {"gaus1": (1, math.sqrt(0.5), -1.0), "gaus2": (2, math.sqrt(0.5), 1.0),
         "mexh": (2, 1.0, 1.0)}


def from_pywt_dog(name: str, scales: Any) -> tuple[DerivativeOfGaussian, np.ndarray, float]:
    """Our wavelet, scales σ and sign ``ε`` for PyWavelets' ``gaus1``, ``gaus2`` or ``mexh``
    at its scales ``a``: ``pywt.cwt(x, a, name)[0] ≈ ε dog_cwt(x, σ, wavelet)[0]`` half a
    sample later (see :class:`DerivativeOfGaussian`, Notes).

    >>> w, s, eps = from_pywt_dog("gaus1", [2.0, 8.0])
    >>> w.order, [round(float(v), 4) for v in s], eps
    (1, [1.4142, 5.6569], -1.0)
    """
    check_choice("name", name, tuple(_PYWT))
    order, factor, eps = _PYWT[name]
    a = np.asarray(scales, dtype=np.float64)
    return DerivativeOfGaussian(order), factor * a, eps


def _check_scales(scales: Any) -> tuple[float, ...]:
    if isinstance(scales, (str, bytes)) or scales is None:
        raise TypeError(f"scales must be a real number or a sequence of them, got {scales!r}")
    if isinstance(scales, torch.Tensor):
        scales = scales.detach().cpu().numpy()
    arr = np.asarray(scales)
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise TypeError(f"scales must be real numbers, got dtype {arr.dtype}")
    if arr.ndim > 1:
        raise ValueError(f"scales must be 1-D, got shape {arr.shape}")
    values = tuple(check_positive_float("scales", float(v)) for v in np.atleast_1d(arr))
    if not values:
        raise ValueError("scales must not be empty")
    return values


def _wavelet(wavelet: Any) -> DerivativeOfGaussian:
    if wavelet is None:
        return DerivativeOfGaussian(2)
    if not isinstance(wavelet, DerivativeOfGaussian):
        raise TypeError(f"wavelet must be a DerivativeOfGaussian, got {wavelet!r}")
    return wavelet


def dog_cwt(x: Any, scales: Sequence[float] | float, wavelet: DerivativeOfGaussian | None = None,
            axis: int = -1, *, sampling_period: float = 1.0, mode: str = "reflect",
            cval: float = 0.0, truncate: float = 4.0, **options: Any) -> tuple[Any, np.ndarray]:
    """Continuous wavelet transform with a derivative-of-Gaussian wavelet.

    Parameters
    ----------
    x : array_like or torch.Tensor
        Real signals, transformed along ``axis``; never modified.
    scales : float or sequence of float
        Scales σ ≥ :data:`MIN_DOG_SCALE` in samples: the standard deviation of the Gaussian.
    wavelet : DerivativeOfGaussian, optional
        Default the Mexican hat, ``DerivativeOfGaussian(2)``.
    axis : int
        Axis of ``x`` holding time.
    sampling_period : float
        Sampling period used to express ``frequencies``.
    mode, cval, truncate
        Boundary extension and truncation, as in :func:`~fastmoments.signal.gaussian_filter1d`.
    **options
        ``method``, ``terms``, ``engine``, ``memory_budget`` of
        :func:`~fastmoments.signal.gaussian_filter1d` (``method="auto"``: the faster of the
        direct FIR and the SFT at each scale).

    Returns
    -------
    coefficients : numpy.ndarray or torch.Tensor
        Real, ``(len(scales), *x.shape)``, in the working dtype (float32 or float64):
        ``W[i, ..., n] = Σ_k ψ_{σ_i,p}[k] x[..., n - k]``.
    frequencies : numpy.ndarray
        ``√p / (2π σ_i) / sampling_period``: the peak frequency of each scale's wavelet.

    Raises
    ------
    ValueError
        For a scale below :data:`MIN_DOG_SCALE` or not finite, NaN or infinity in ``x``, and
        the option errors of :func:`~fastmoments.signal.gaussian_filter1d`.
    TypeError
        For a wavelet that is not a :class:`DerivativeOfGaussian`, scales that are not
        numbers.

    Notes
    -----
    ``W_p(σ, ·) = s_p c_p √(2π) σ^{p+1/2} gaussian_filter1d(x, σ, order=p)`` (module notes):
    one Gaussian derivative per scale, whose cost does not grow with σ. The Gaussian filters
    use scipy.ndimage's discrete kernels (sum one; order 2 with zero sum), which equal the
    sampled continuous ones to 2.5e-7 relative at σ = 1 and to rounding from σ = 1.5,
    and fit them to a relative RMSE ≤ 1e-4 (the FIR of ``method="auto"``: ≤ 2e-5); that is
    the error of ``W`` against the direct convolution with the sampled wavelet (tested).
    PyWavelets' ``gaus1``/``gaus2``/``mexh``: :func:`from_pywt_dog`.

    Examples
    --------
    >>> t = np.arange(2048)
    >>> x = np.cos(2 * np.pi * t / 64)
    >>> coef, freqs = dog_cwt(x, [4.0, 14.4, 40.0])    # 14.4 = √2 · 64 / (2π)
    >>> int(np.argmax(np.abs(coef[:, 1024]))), round(float(freqs[1] * 64), 3)
    (1, 1.0)
    """
    wavelet = _wavelet(wavelet)
    scales_t = _check_scales(scales)
    for s in scales_t:
        if s < MIN_DOG_SCALE:
            raise ValueError(f"scales must be >= {MIN_DOG_SCALE} for a derivative-of-Gaussian "
                             f"wavelet, got {s:g}")
    dt = check_positive_float("sampling_period", sampling_period)
    t, kind = as_tensor(x, "x")
    if t.requires_grad and torch.is_grad_enabled():  # differentiable: no writes in place
        out = torch.stack([gaussian_filter1d(t, s, axis, wavelet.order, mode, cval, truncate,
                                             **options) * wavelet.filter_factor(s)
                           for s in scales_t])
    else:
        out = torch.empty((len(scales_t), *t.shape), dtype=t.dtype, device=t.device)
        for i, s in enumerate(scales_t):
            gaussian_filter1d(t, s, axis, wavelet.order, mode, cval, truncate, out=out[i],
                              **options)
            out[i].mul_(wavelet.filter_factor(s))
    freqs = np.array([wavelet.center_frequency / s / dt for s in scales_t])
    return to_output(out, kind), freqs
