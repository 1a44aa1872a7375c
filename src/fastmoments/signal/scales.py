"""Scales and frequencies of the Morlet wavelet, the cone of influence, and PyWavelets' ``cmor``.

Our :class:`~fastmoments.signal.Morlet` at scale σ (in samples) is
``ψ_{σ,ξ}[n] = C_ξ π^{-1/4} σ^{-1/2} e^{-n²/(2σ²)} (e^{iξn/σ} - κ_ξ)`` (Yamashita & Wakahara
2022, Eqs. 49-52): σ is the standard deviation of the Gaussian envelope and the carrier turns
ξ radians per σ. With a sampling period ``dt`` (seconds per sample):

* *centre frequency* (the carrier, PyWavelets' ``scale2frequency`` convention, the
  ``frequencies`` that :func:`~fastmoments.signal.cwt` returns): ``f = ξ / (2π σ dt)``;
* *Fourier frequency* (Torrence & Compo 1998, Sec. 3h): the frequency of the sinusoid whose
  coefficient magnitude ``|W|`` peaks at scale σ. With unit-energy wavelets ``|W|`` of
  ``cos(ωn)`` grows as ``√σ e^{-(σω - ξ)²/2}``, which peaks at
  ``σω = (ξ + √(2 + ξ²))/2``: ``f = (ξ + √(2 + ξ²)) / (4π σ dt)``, 1.4 % above the centre
  frequency for ξ = 6.

PyWavelets' ``cmorB-C`` wavelet is ``(πB)^{-1/2} e^{-t²/B} e^{2πiCt}`` at scale ``a``: the same
Gaussian-windowed carrier when ``σ = a √(B/2)`` and ``ξ = πC√(2B)`` (:func:`from_pywt_cmor`,
:func:`to_pywt_cmor`), without our admissibility term ``κ_ξ = e^{-ξ²/2}`` (1.5e-8 at ξ = 6)
and with another normalisation: ``pywt.cwt`` returns ``(2πB)^{-1/4} / C_ξ`` times our
coefficients (:func:`pywt_cmor_factor`; tested against ``pywt.cwt``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_choice, check_int, check_positive_float
from .coefficients import morlet_constants
from .wavelets import DerivativeOfGaussian, Morlet

__all__ = [
    "COI_FACTOR",
    "cone_of_influence",
    "frequency_to_scale",
    "from_pywt_cmor",
    "from_pywt_dog",
    "pywt_cmor_factor",
    "scale_to_frequency",
    "scales_for_band",
    "to_pywt_cmor",
]

KINDS = ("center", "fourier")

#: e-folding time of the Morlet's Gaussian envelope in units of σ (Torrence & Compo 1998)
COI_FACTOR = math.sqrt(2.0)


def _wavelet(wavelet: Any) -> Morlet:
    if wavelet is None:
        return Morlet()
    if not isinstance(wavelet, Morlet):
        raise TypeError(f"wavelet must be a fastmoments.signal.Morlet, got {wavelet!r}")
    return wavelet


def _kind(kind: Any) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return kind


def _positive_array(name: str, values: Any) -> tuple[np.ndarray, bool]:
    """``values`` as a float64 array of finite positive numbers (and whether it was a
    scalar)."""
    if isinstance(values, (bool, np.bool_, str, bytes)):
        raise TypeError(f"{name} must be a positive number or an array of them, "
                        f"got {values!r}")
    try:
        arr = np.asarray(values)
    except Exception as exc:  # pragma: no cover - ragged input
        raise TypeError(f"{name} must be a positive number or an array of them") from exc
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0, got {values!r}")
    return arr, arr.ndim == 0


def _peak(xi: float, kind: str) -> float:
    """``σ ω`` (radians per σ) of the frequency of ``kind``."""
    return xi if kind == "center" else 0.5 * (xi + math.sqrt(2.0 + xi * xi))


def scale_to_frequency(scales: Any, wavelet: Morlet | None = None, *,
                       sampling_period: float = 1.0, kind: str = "center") -> Any:
    """Frequencies of the Morlet wavelets at ``scales`` (cycles per unit of time).

    Parameters
    ----------
    scales : float or array_like
        Scales σ in samples (> 0): the standard deviation of the Gaussian envelope.
    wavelet : Morlet, optional
        Default ``Morlet(xi=6.0)``.
    sampling_period : float
        Time between samples (``1/rate``); 1 gives cycles per sample.
    kind : {"center", "fourier"}
        ``"center"``: ``ξ / (2π σ dt)``, the carrier's frequency (what
        :func:`~fastmoments.signal.cwt` returns, as ``pywt.scale2frequency``);
        ``"fourier"``: ``(ξ + √(2 + ξ²)) / (4π σ dt)``, the frequency of the sinusoid whose
        ``|W|`` peaks at σ (Torrence & Compo 1998; see the module's docstring).

    Returns
    -------
    float or numpy.ndarray
        Same shape as ``scales``.

    Raises
    ------
    ValueError
        For scales or a sampling period that are not finite and positive, or an unknown
        ``kind``.
    TypeError
        For a wavelet that is not a :class:`~fastmoments.signal.Morlet`, or non-numeric
        scales.

    Examples
    --------
    >>> round(scale_to_frequency(19.1, sampling_period=1 / 1000), 2)  # Hz at 1 kHz
    50.0
    >>> round(scale_to_frequency(19.1, kind="fourier") / scale_to_frequency(19.1), 4)
    1.0137
    """
    w = _wavelet(wavelet)
    s, scalar = _positive_array("scales", scales)
    dt = check_positive_float("sampling_period", sampling_period)
    f = _peak(w.xi, _kind(kind)) / (2 * math.pi * s * dt)
    return float(f) if scalar else f


def frequency_to_scale(frequencies: Any, wavelet: Morlet | None = None, *,
                       sampling_period: float = 1.0, kind: str = "center") -> Any:
    """Scales σ (samples) whose Morlet wavelet has the given frequencies; the inverse of
    :func:`scale_to_frequency` (same parameters, ``frequencies`` in cycles per unit of time).

    Examples
    --------
    >>> round(frequency_to_scale(50.0, sampling_period=1 / 1000), 3)
    19.099
    >>> s = frequency_to_scale([0.1, 0.01])
    >>> np.allclose(scale_to_frequency(s), [0.1, 0.01])
    True
    """
    w = _wavelet(wavelet)
    f, scalar = _positive_array("frequencies", frequencies)
    dt = check_positive_float("sampling_period", sampling_period)
    s = _peak(w.xi, _kind(kind)) / (2 * math.pi * f * dt)
    return float(s) if scalar else s


def scales_for_band(f_min: float, f_max: float, wavelet: Morlet | None = None, *,
                    sampling_period: float = 1.0, num: int | None = None,
                    voices_per_octave: int | None = None, kind: str = "center") -> np.ndarray:
    """Log-spaced scales covering the frequency band ``[f_min, f_max]``, small scales first.

    Parameters
    ----------
    f_min, f_max : float
        Lowest and highest frequency (cycles per unit of time), ``0 < f_min ≤ f_max`` and
        ``f_max`` at most the Nyquist frequency ``1 / (2 dt)``.
    wavelet : Morlet, optional
        Default ``Morlet(xi=6.0)``.
    sampling_period : float
        Time between samples.
    num : int, optional
        Number of scales (both ends included). Give ``num`` or ``voices_per_octave``; by
        default 8 voices per octave.
    voices_per_octave : int, optional
        Scales per doubling of the frequency: ``2^(1/v)`` between neighbours, from the scale
        of ``f_max`` up to the first one at or beyond that of ``f_min``.
    kind : {"center", "fourier"}
        Which frequency of the wavelet is matched (see :func:`scale_to_frequency`).

    Returns
    -------
    numpy.ndarray
        Increasing scales σ in samples (decreasing frequencies), ready for
        :func:`~fastmoments.signal.cwt`.

    Raises
    ------
    ValueError
        For a band that is empty, not positive or beyond the Nyquist frequency, or for both
        ``num`` and ``voices_per_octave``.

    Examples
    --------
    >>> s = scales_for_band(5.0, 200.0, sampling_period=1 / 1000, voices_per_octave=4)
    >>> len(s), round(float(scale_to_frequency(s[0], sampling_period=1 / 1000)), 6)
    (23, 200.0)
    >>> scales_for_band(0.01, 0.1, num=3).round(2)
    array([ 9.55, 30.2 , 95.49])
    """
    w = _wavelet(wavelet)
    lo = check_positive_float("f_min", f_min)
    hi = check_positive_float("f_max", f_max)
    dt = check_positive_float("sampling_period", sampling_period)
    if lo > hi:
        raise ValueError(f"f_min must be <= f_max, got f_min={lo:g} > f_max={hi:g}")
    nyquist = 0.5 / dt
    if hi > nyquist * (1 + 1e-12):
        raise ValueError(f"f_max must be at most the Nyquist frequency 1/(2 sampling_period) = "
                         f"{nyquist:g}, got {hi:g}")
    if num is not None and voices_per_octave is not None:
        raise ValueError("give num or voices_per_octave, not both")
    s_lo = frequency_to_scale(hi, w, sampling_period=dt, kind=kind)
    s_hi = frequency_to_scale(lo, w, sampling_period=dt, kind=kind)
    if num is not None:
        n = check_int("num", num, minimum=1)
        return np.geomspace(s_lo, s_hi, n) if n > 1 else np.array([s_lo])
    v = 8 if voices_per_octave is None else check_int("voices_per_octave",
                                                      voices_per_octave, minimum=1)
    steps = math.ceil(v * math.log2(s_hi / s_lo) - 1e-9)
    return s_lo * 2.0 ** (np.arange(steps + 1) / v)


def cone_of_influence(scales: Any, n: int, *, factor: float = COI_FACTOR) -> np.ndarray:
    """Where the ends of an ``n``-sample signal affect the coefficients: ``(len(scales), n)``.

    Definition (Torrence & Compo 1998, Sec. 3g, for the Morlet wavelet): the e-folding time
    of the wavelet's Gaussian envelope at scale σ is ``τ = √2 σ`` samples, the time over
    which the power ``|W|²`` of a spike falls by ``e^{-2}``. Sample ``m`` of scale σ is
    inside the cone of influence (``True``) when it is closer to an end than that:
    ``min(m, n - 1 - m) < factor · σ`` with ``factor = √2``. Outside the cone (``False``)
    the coefficient depends on the boundary extension (``mode``) by less than ``e^{-2}`` of
    its power. With the default ``mode="reflect"`` an end is a mirror rather than a jump,
    so the cone is a conservative mask.

    Parameters
    ----------
    scales : float or array_like
        Scales σ in samples.
    n : int
        Signal length in samples.
    factor : float
        ``τ/σ``; ``√2`` by default.

    Returns
    -------
    numpy.ndarray of bool
        ``(len(scales), n)``; ``True`` inside the cone (edge-affected).

    Examples
    --------
    >>> cone_of_influence([1.0, 3.0], 8).astype(int)
    array([[1, 1, 0, 0, 0, 0, 1, 1],
           [1, 1, 1, 1, 1, 1, 1, 1]])
    """
    s, _ = _positive_array("scales", scales)
    n = check_int("n", n, minimum=0)
    f = check_positive_float("factor", factor)
    m = np.arange(n)
    edge = np.minimum(m, n - 1 - m)
    return edge[None, :] < f * np.atleast_1d(s)[:, None]


# ------------------------------------------------------------------- PyWavelets' cmor
def to_pywt_cmor(scales: Any, wavelet: Morlet | None = None, *,
                 bandwidth: float = 1.5) -> tuple[str, Any]:
    """PyWavelets' ``cmorB-C`` name and scales ``a`` giving our Morlet's wavelets.

    Matching ``(πB)^{-1/2} e^{-t²/B} e^{2πiCt}`` at scale ``a`` with our envelope
    ``e^{-n²/(2σ²)}`` and carrier ``e^{iξn/σ}``: ``a = σ √(2/B)`` and ``C = ξ / (π√(2B))``
    for a chosen bandwidth ``B`` (any ``B`` works: ``B`` and ``a`` trade off; 1.5 gives
    ``C = 1`` at ξ = π√3).

    Returns
    -------
    name : str
        ``"cmor{B}-{C}"`` with ``repr`` precision, for ``pywt.ContinuousWavelet``.
    scales : float or numpy.ndarray
        PyWavelets scales ``a``.

    Examples
    --------
    >>> name, a = to_pywt_cmor([10.0, 20.0], Morlet(xi=float(np.pi * np.sqrt(3.0))))
    >>> name, a.round(4)
    ('cmor1.5-1.0', array([11.547, 23.094]))
    """
    w = _wavelet(wavelet)
    b = check_positive_float("bandwidth", bandwidth)
    s, scalar = _positive_array("scales", scales)
    c = w.xi / (math.pi * math.sqrt(2.0 * b))
    a = s * math.sqrt(2.0 / b)
    return f"cmor{b!r}-{round(c, 12)!r}", (float(a) if scalar else a)


def from_pywt_cmor(name_or_b: str | float, center: float | None = None,
                   scales: Any = None) -> tuple[Morlet, Any]:
    """Our :class:`~fastmoments.signal.Morlet` and scales σ for PyWavelets' ``cmorB-C``.

    ``ξ = πC√(2B)`` and ``σ = a √(B/2)``.

    Parameters
    ----------
    name_or_b : str or float
        ``"cmorB-C"`` (e.g. ``"cmor1.5-1.0"``), or the bandwidth ``B`` with ``center = C``.
    center : float, optional
        ``C`` when ``name_or_b`` is ``B``.
    scales : float or array_like, optional
        PyWavelets scales ``a`` to convert (``None``: only the wavelet).

    Returns
    -------
    wavelet : Morlet
    scales : float, numpy.ndarray or None
        σ in samples.

    Raises
    ------
    ValueError
        For a name that is not ``cmorB-C`` with positive ``B`` and ``C``.

    Examples
    --------
    >>> w, s = from_pywt_cmor("cmor1.5-1.0", scales=[11.547, 23.094])
    >>> round(w.xi, 4), s.round(3)
    (5.4414, array([10., 20.]))
    """
    if isinstance(name_or_b, str):
        if center is not None:
            raise ValueError("give the wavelet's name or (bandwidth, center), not both")
        name = name_or_b.strip()
        try:
            if not name.startswith("cmor"):
                raise ValueError
            b_text, c_text = name[4:].split("-")
            b, c = float(b_text), float(c_text)
        except ValueError:
            raise ValueError(f"name must be PyWavelets' 'cmorB-C' (e.g. 'cmor1.5-1.0'), "
                             f"got {name_or_b!r}") from None
        b = check_positive_float("bandwidth B", b)
        c = check_positive_float("center frequency C", c)
    else:
        b = check_positive_float("bandwidth B", name_or_b)
        if center is None:
            raise ValueError("center (C) is required with a bandwidth B")
        c = check_positive_float("center", center)
    wavelet = Morlet(math.pi * c * math.sqrt(2.0 * b))
    if scales is None:
        return wavelet, None
    a, scalar = _positive_array("scales", scales)
    s = a * math.sqrt(b / 2.0)
    return wavelet, (float(s) if scalar else s)


_PYWT = {"gaus1": (1, math.sqrt(0.5), -1.0), "gaus2": (2, math.sqrt(0.5), 1.0),
         "mexh": (2, 1.0, 1.0)}


def from_pywt_dog(name: str, scales: Any) -> tuple[DerivativeOfGaussian, np.ndarray, float]:
    """Our wavelet, scales σ and sign ``ε`` for PyWavelets' ``gaus1``, ``gaus2`` or ``mexh``
    at its scales ``a``: ``pywt.cwt(x, a, name)[0] ≈ ε cwt(x, σ, wavelet)[0]`` half a
    sample later (see :class:`~fastmoments.signal.DerivativeOfGaussian`, Notes).

    >>> w, s, eps = from_pywt_dog("gaus1", [2.0, 8.0])
    >>> w.order, [round(float(v), 4) for v in s], eps
    (1, [1.4142, 5.6569], -1.0)
    """
    check_choice("name", name, tuple(_PYWT))
    order, factor, eps = _PYWT[name]
    a = np.asarray(scales, dtype=np.float64)
    return DerivativeOfGaussian(order), factor * a, eps


def pywt_cmor_factor(wavelet: Morlet | None = None, *, bandwidth: float = 1.5) -> float:
    """``|pywt.cwt| / |our cwt|`` for the matching ``cmorB-C`` (:func:`to_pywt_cmor`).

    PyWavelets samples ``(πB)^{-1/2} e^{-t²/B} e^{2πiCt}`` at ``t = k/a`` and divides by
    ``√a`` (its coefficients are ``a^{-1/2} Σ_k ψ(k/a) x[n - k]`` up to the discretisation of
    its integrated wavelet); ours is ``C_ξ π^{-1/4} σ^{-1/2}`` times the same Gaussian and
    carrier. With ``σ = a√(B/2)`` the ratio is ``(2πB)^{-1/4} / C_ξ``, the same at every
    scale (both have unit-energy, ``1/√scale``, normalisation up to that constant); our
    admissibility term ``κ_ξ`` adds a relative difference below ``e^{-ξ²/2}``.

    >>> round(pywt_cmor_factor(Morlet(6.0), bandwidth=1.5), 4)
    0.5707
    """
    w = _wavelet(wavelet)
    b = check_positive_float("bandwidth", bandwidth)
    c_xi, _ = morlet_constants(w.xi)
    return (2.0 * math.pi * b) ** -0.25 / c_xi
