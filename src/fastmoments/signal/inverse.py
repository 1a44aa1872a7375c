"""Inverse continuous wavelet transform for the Morlet, derivative-of-Gaussian and generalized
Morse wavelets.

Both inverses take the coefficients of :func:`~fastmoments.signal.cwt` (Morlet or derivative
of Gaussian, ``hop=1``) at the scales they were computed at, with the transform's
normalisation (unit-energy wavelets, ``W = ψ_σ * x``), and return real signals.

* ``method="least-squares"`` (default): per frequency, the real signal whose transform is
  closest to the coefficients, ``X(ω) = Σ_j [conj Ψ_j(ω) W_j(ω) + Ψ_j(-ω) conj W_j(-ω)] /
  D(ω)``, ``D(ω) = Σ_j |Ψ_j(ω)|² + |Ψ_j(-ω)|²`` (the pseudo-inverse of the transform at these
  scales, with ``Ψ_j`` the exact discrete-time Fourier transform of each scale's wavelet).
  It is the exact inverse on the band the scales cover, ``√D(ω) > rcond · max √D``, and zero
  outside it (a truncated pseudo-inverse: no division by the small ``D`` of uncovered
  frequencies).
* ``method="single-integral"``: Morlet's reconstruction (Grossmann & Morlet 1984; Farge 1992;
  Torrence & Compo 1998, Eq. 11), ``x(t) = Re ∫ W(σ, t) σ^{-3/2} dσ / K_ψ``, by the sum
  ``Re Σ_j W_j σ_j^{-1/2} Δ_j(ln σ) / K_ψ`` with the constant
  ``K_ψ = ½ ∫ Re Ψ(s) / |s| ds`` of the mother wavelet's transform ``Ψ`` (computed here for the
  wavelet and our normalisation: :func:`reconstruction_constant`). It needs no FFT
  (``O(J N)``) and recovers the frequencies whose wavelet responses lie well inside the
  scales (:func:`icwt_response`, the band's edges roll off over about one wavelet bandwidth).
  An odd real wavelet (order-1 DoG) has ``K_ψ = 0``: the sum returns a Hilbert transform
  (``method="least-squares"`` inverts it).

Neither recovers the mean (the wavelets have zero mean) nor frequencies outside the scales'
band. The least-squares inverse is exact on the covered band for the boundary modes
``"wrap"`` (the transform is then a circular convolution of period ``N``), ``"reflect"``
(the transform's default) and ``"mirror"``: these extend ``x`` symmetrically, so the transform
is the circular convolution of the symmetric signal of period ``2N`` (``2N - 2``), and the
coefficients of its second half follow from those of ``x`` by the wavelet's parity
(``W_e[2N-1-n] = conj W[n]`` for the Morlet and the Morse wavelets, whose
``ψ(-k) = conj ψ(k)`` (their Fourier transforms are real); ``W[n]`` for the even
order-2 DoG; ``-W[n]`` for the odd order-1 DoG). The single integral is a sum at each time
and needs no mode.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._array import as_tensor, to_output
from .._cache import plan_cache
from .._threads import cpu_call, per_value
from .._validate import check_choice, check_int, check_real
from .morse import GeneralizedMorse
from .wavelets import DerivativeOfGaussian, Morlet

#: The wavelets the inverse takes.
AnyWavelet = Morlet | DerivativeOfGaussian | GeneralizedMorse

__all__ = ["ICWT", "INVERSE_MODES", "METHODS", "icwt", "icwt_band", "icwt_response",
           "reconstruction_constant", "wavelet_response"]

#: The values of ``method``.
METHODS = ("least-squares", "single-integral")

#: The boundary modes of the transform that the least-squares inverse inverts exactly.
INVERSE_MODES = ("reflect", "mirror", "wrap")

#: Scales whose spectra the least-squares inverse takes together (the scratch of a block:
#: ``LS_BLOCK`` spectra of one period, instead of every scale's at once).
LS_BLOCK = 8

#: Default ``rcond`` of the least-squares inverse: frequencies whose ``√D`` is below 1e-3 of
#: its largest value are left out (amplification of the coefficients' errors ≤ 1000 there).
RCOND = 1e-3


def _check_wavelet(wavelet: Any) -> Morlet | DerivativeOfGaussian | GeneralizedMorse:
    if wavelet is None:
        return Morlet()
    if not isinstance(wavelet, (Morlet, DerivativeOfGaussian, GeneralizedMorse)):
        raise TypeError(f"wavelet must be a Morlet, a DerivativeOfGaussian or a "
                        f"GeneralizedMorse, got {wavelet!r}")
    return wavelet


def wavelet_response(wavelet: Morlet | DerivativeOfGaussian, omega: np.ndarray,
                     scale: float) -> np.ndarray:
    """``Ψ_σ(ω) = Σ_k ψ_σ[k] e^{-iωk}``: the discrete-time Fourier transform of the wavelet at
    scale σ (complex128), so that ``W(ω) = Ψ_σ(ω) X(ω)``.

    Morlet (Poisson summation of the continuous transform, ``ν = ω + 2πm``):
    ``C_ξ π^{-1/4} √(2πσ) Σ_m [e^{-(σν - ξ)²/2} - κ_ξ e^{-σ²ν²/2}]``; the DoG wavelets:
    :meth:`~fastmoments.signal.dog.DerivativeOfGaussian.frequency_response`.

    >>> w = wavelet_response(Morlet(6.0), np.array([0.0, 6.0 / 10]), 10.0)
    >>> bool(abs(w[0]) < 1e-12), round(float(w[1].real), 3)   # zero mean; peak √(2√π σ)
    (True, 5.954)
    """
    wavelet = _check_wavelet(wavelet)
    if isinstance(wavelet, (DerivativeOfGaussian, GeneralizedMorse)):
        return wavelet.frequency_response(omega, scale)
    sigma = float(scale)
    w = np.asarray(omega, dtype=np.float64)
    c, kappa = wavelet.constants
    m_max = math.ceil((9.0 / sigma + wavelet.xi / sigma + math.pi) / (2 * math.pi)) + 1
    acc = np.zeros(w.shape, dtype=np.float64)
    for m in range(-m_max, m_max + 1):
        nu = sigma * (w + 2 * math.pi * m)
        # only where a term is above e^{-800} (most of the grid at large σ): the exponentials
        # are most of the cost of the tables
        near = np.flatnonzero(np.abs(nu - wavelet.xi) < 40.0)
        acc[near] += np.exp(-0.5 * (nu[near] - wavelet.xi) ** 2)
        if kappa > 0.0:
            near = np.flatnonzero(np.abs(nu) < 40.0)
            acc[near] -= kappa * np.exp(-0.5 * nu[near] ** 2)
    return (c * math.pi ** -0.25 * math.sqrt(2 * math.pi * sigma) * acc).astype(np.complex128)


def _mother_real(wavelet: Morlet | DerivativeOfGaussian, s: np.ndarray) -> np.ndarray:
    """``Re Ψ(s)``: the real part of the continuous Fourier transform of the mother wavelet."""
    if isinstance(wavelet, GeneralizedMorse):
        return wavelet.mother(s)
    if isinstance(wavelet, DerivativeOfGaussian):
        if wavelet.order == 1:
            return np.zeros_like(s)  # i c_1 √(2π) s e^{-s²/2}: imaginary
        return wavelet.norm * math.sqrt(2 * math.pi) * s * s * np.exp(-0.5 * s * s)
    c, kappa = wavelet.constants
    return (c * math.pi ** -0.25 * math.sqrt(2 * math.pi)
            * (np.exp(-0.5 * (s - wavelet.xi) ** 2) - kappa * np.exp(-0.5 * s * s)))


def reconstruction_constant(wavelet: AnyWavelet | None = None) -> float:
    """``K_ψ = ½ ∫ Re Ψ(s) / |s| ds`` of the single-integral inverse (continuous transform
    ``Ψ(s) = ∫ ψ(u) e^{-isu} du`` of the unit-energy mother wavelet).

    With ``ψ_σ(t) = σ^{-1/2} ψ(t/σ)``, ``∫ W(σ, t) σ^{-3/2} dσ`` multiplies the positive
    frequencies of ``x`` by ``∫₀^∞ Ψ(s)/s ds`` and the negative ones by ``∫₀^∞ Ψ(-s)/s ds``;
    for real ``x`` and real ``Ψ`` the real part is ``K_ψ x``. Mexican hat: ``c_2 √(2π) =
    2√2 π^{1/4} / √3`` = 2.1741; Morlet: by Gauss-Legendre quadrature (exact to rounding for
    this smooth integrand), 0.4053 for ξ = 6 (``≈ π^{3/4}/ξ`` as ξ grows).
    Zero for the order-1 DoG (its ``Ψ`` is imaginary). Generalized Morse (``Ψ = a ω^β
    e^{-ω^γ}`` for ω > 0, zero below): ``a Γ(β/γ) / (2γ)`` in closed form.

    >>> round(reconstruction_constant(DerivativeOfGaussian(2)), 4)
    2.1741
    >>> round(reconstruction_constant(Morlet(6.0)), 4)
    0.4053
    """
    wavelet = _check_wavelet(wavelet)
    if isinstance(wavelet, GeneralizedMorse):
        return wavelet.reconstruction_constant()
    if isinstance(wavelet, DerivativeOfGaussian):
        if wavelet.order == 1:
            return 0.0
        return wavelet.norm * math.sqrt(2 * math.pi)
    # Gauss-Legendre (32 nodes) on pieces of width 1/2 up to ξ + 40, where the integrand is
    # below e^{-800}: exact to rounding for this smooth integrand (finite as s -> 0)
    nodes, weights = np.polynomial.legendre.leggauss(32)
    edges = np.arange(0.0, wavelet.xi + 40.5, 0.5)
    mid, half = 0.5 * (edges[1:] + edges[:-1]), 0.5 * (edges[1:] - edges[:-1])
    s = (mid[:, None] + half[:, None] * nodes[None, :]).ravel()
    f = (_mother_real(wavelet, s) + _mother_real(wavelet, -s)) / s
    return 0.5 * float(np.sum(f.reshape(len(mid), -1) * weights[None, :] * half[:, None]))


def _log_steps(scales: tuple[float, ...]) -> np.ndarray:
    """``Δ_j(ln σ)``: half the distance between the neighbours' logarithms (a full step at
    the ends), the rectangle weights of the integral over ``ln σ``."""
    lg = np.log(np.asarray(scales, dtype=np.float64))
    order = np.argsort(lg)
    s = lg[order]
    d = np.empty_like(s)
    d[1:-1] = 0.5 * (s[2:] - s[:-2])
    d[0] = s[1] - s[0]
    d[-1] = s[-1] - s[-2]
    out = np.empty_like(d)
    out[order] = d
    return out


def _check_scales(scales: Any) -> tuple[float, ...]:
    if isinstance(scales, (str, bytes)) or scales is None:
        raise TypeError(f"scales must be a sequence of real numbers, got {scales!r}")
    if isinstance(scales, torch.Tensor):
        scales = scales.detach().cpu().numpy()
    arr = np.asarray(scales)
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise TypeError(f"scales must be real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"scales must be 1-D, got shape {arr.shape}")
    vals = arr.astype(np.float64)
    if vals.size < 2:
        raise ValueError(f"scales must hold at least 2 scales to invert, got {vals.size}")
    if not (np.isfinite(vals).all() and (vals > 0).all()):
        raise ValueError("scales must be finite and > 0")
    if len(np.unique(vals)) != len(vals):
        raise ValueError("scales must not repeat a scale")
    return tuple(vals.tolist())


class ICWT:
    """Plan of the inverse CWT at a set of scales (tables per signal length, built once).

    Parameters
    ----------
    scales : sequence of float
        The scales σ the coefficients were computed at (at least two, distinct, any order).
    wavelet : Morlet, DerivativeOfGaussian or GeneralizedMorse
        The wavelet (default ``Morlet(6.0)``).
    method : {"least-squares", "single-integral"}
        See the module notes.
    rcond : float
        Least squares: frequencies with ``√D(ω) ≤ rcond · max √D`` are not covered and come
        out zero (``0 ≤ rcond < 1``).

    Attributes
    ----------
    constant : float
        ``K_ψ`` (single integral).
    """

    def __init__(self, scales: Sequence[float], wavelet: Morlet | DerivativeOfGaussian | None
                 = None, *, method: str = "least-squares", rcond: float = RCOND) -> None:
        self.scales = _check_scales(scales)
        self.wavelet = _check_wavelet(wavelet)
        self.method = check_choice("method", method, METHODS)
        self.rcond = check_real("rcond", rcond, minimum=0.0, maximum=1.0)
        if self.rcond >= 1.0:
            raise ValueError(f"rcond must be < 1, got {self.rcond}")
        self.constant = reconstruction_constant(self.wavelet)
        if self.method == "single-integral" and self.constant == 0.0:
            raise ValueError("method='single-integral' cannot invert an odd real wavelet (the "
                             "order-1 derivative of Gaussian): its sum gives the Hilbert "
                             "transform of x; use method='least-squares'")
        self.weights = np.asarray(self.scales) ** -0.5 * _log_steps(self.scales)
        self._tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def tables(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For ``n`` samples (rfft frequencies ``ω_k = 2πk/n``): ``(G_pos, G_neg, covered)``
        with ``X = Σ_j G_pos[j] W_j(ω) + G_neg[j] conj W_j(-ω)`` (float64 tables, real for
        the wavelets whose transform is real)."""
        if n not in self._tables:
            omega = 2 * np.pi * np.arange(n // 2 + 1) / n
            # the Morlet's and the Mexican hat's transforms are real: real tables (half the
            # memory and work); the order-1 DoG's are imaginary
            real = not (isinstance(self.wavelet, DerivativeOfGaussian)
                        and self.wavelet.order == 1)
            pos = np.empty((len(self.scales), len(omega)),
                           dtype=np.float64 if real else np.complex128)
            neg = np.empty_like(pos)
            for j, s in enumerate(self.scales):
                p = wavelet_response(self.wavelet, omega, s)
                q = wavelet_response(self.wavelet, -omega, s)
                pos[j], neg[j] = (p.real, q.real) if real else (p, q)
            den = np.einsum("jk,jk->k", pos.conj(), pos).real
            den += np.einsum("jk,jk->k", neg.conj(), neg).real
            covered = np.sqrt(den) > self.rcond * np.sqrt(den.max())
            inv = np.where(covered, 1.0 / np.where(covered, den, 1.0), 0.0)
            if len(self._tables) >= 4:
                self._tables.pop(next(iter(self._tables)))
            pos = pos.conj()
            pos *= inv
            neg *= inv
            self._tables[n] = (pos, neg, covered)
        return self._tables[n]

    def response(self, n: int) -> np.ndarray:
        """The factor ``R(ω_k)`` (rfft frequencies of ``n`` samples) by which the inverse of the
        transform multiplies ``X(ω_k)`` of a real ``x`` (complex128): 1 on the covered band
        and 0 elsewhere for least squares; ``(A(ω) + conj A(-ω)) / (2 K_ψ)``,
        ``A = Σ_j σ_j^{-1/2} Δ_j Ψ_j``, for the single integral."""
        if self.method == "least-squares":
            return self.tables(n)[2].astype(np.complex128)
        omega = 2 * np.pi * np.arange(n // 2 + 1) / n
        a_pos = sum(w * wavelet_response(self.wavelet, omega, s)
                    for w, s in zip(self.weights, self.scales, strict=True))
        a_neg = sum(w * wavelet_response(self.wavelet, -omega, s)
                    for w, s in zip(self.weights, self.scales, strict=True))
        return (a_pos + np.conj(a_neg)) / (2 * self.constant)

    @cpu_call(per_value(4, arg=1))
    def __call__(self, coefs: Any, axis: int = -1, mode: str = "reflect") -> Any:
        """The real signals ``(*shape)`` from coefficients ``(len(scales), *shape)``.

        ``axis`` is the time axis of the signal and ``mode`` the boundary mode the
        coefficients were computed with (as in :func:`~fastmoments.signal.cwt`; one of
        :data:`INVERSE_MODES`). NumPy in, NumPy out; a tensor stays on its device
        (differentiable)."""
        mode = check_choice("mode", mode, INVERSE_MODES)
        # the finiteness of coefs is checked through the result (below): a separate pass
        # over the coefficients cost as much as the single integral itself
        t, kind = as_tensor(coefs, "coefs", min_ndim=2, allow_complex=True, check_finite=False)
        if t.shape[0] != len(self.scales):
            raise ValueError(f"coefs must have one row per scale on its first axis "
                             f"({len(self.scales)}), got shape {tuple(t.shape)}")
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"axis must be an integer, got {axis!r}")
        nd = t.ndim - 1
        if not -nd <= int(axis) < nd:
            raise ValueError(f"axis={axis} is out of range for signals with {nd} dimensions")
        ax = int(axis) % nd + 1
        w = t.movedim(ax, -1)
        real = torch.float64 if w.dtype in (torch.float64, torch.complex128) else torch.float32
        if self.method == "single-integral":
            wt = torch.as_tensor(self.weights / self.constant, dtype=real, device=w.device)
            if w.is_complex() and ax == t.ndim - 1:  # time last: one pass over (re, im)
                flat = torch.view_as_real(w.resolve_conj()).reshape(w.shape[0], -1)
                both = (wt @ flat).reshape(*w.shape[1:], 2)
                x, probe = both[..., 0], both  # the imaginary sums carry the imaginary parts
            else:
                wr = w.real if w.is_complex() else w
                x = probe = torch.tensordot(wt, wr, dims=([0], [0]))
                if w.is_complex():  # only the real parts were read
                    probe = None
        else:
            n = w.shape[-1]
            x = probe = self._least_squares(w, real, mode)[..., :n]
        _check_finite(t, probe)
        return to_output(x.movedim(-1, ax - 1), kind)

    def _least_squares(self, w: torch.Tensor, real: torch.dtype, mode: str) -> torch.Tensor:
        """The least-squares inverse of ``w`` (time last), :data:`LS_BLOCK` scales at a time:
        each block's spectra over one period of the ``mode`` extension, weighted and summed
        into one spectrum (scratch of a block, not of all the scales)."""
        cdt = torch.complex128 if real == torch.float64 else torch.complex64
        extra = (1,) * (w.ndim - 2)
        xf = None
        for a in range(0, w.shape[0], LS_BLOCK):
            part = _symmetric(w[a: a + LS_BLOCK], mode, self.wavelet)
            n = part.shape[-1]
            g_pos, g_neg, _ = self.tables(n)
            tdt = cdt if np.iscomplexobj(g_pos) else real
            rows = slice(a, a + part.shape[0])
            gp = torch.as_tensor(g_pos[rows], dtype=tdt, device=w.device).reshape(
                part.shape[0], *extra, -1)
            gn = torch.as_tensor(g_neg[rows], dtype=tdt, device=w.device).reshape(gp.shape)
            if not part.is_complex():  # a real transform: W(-ω) = conj W(ω), the terms agree
                term = ((gp + gn) * torch.fft.rfft(part, dim=-1)).sum(0)
            else:
                full = torch.fft.fft(part, dim=-1)
                # W(-ω_k) = full[(-k) mod n]: index 0, then n - 1 down to n - n//2
                back = torch.as_tensor(np.r_[0, n - 1: n - n // 2 - 1: -1], device=w.device)
                term = (gp * full[..., : n // 2 + 1]).sum(0)
                term += (gn * full.index_select(-1, back).conj()).sum(0)
            xf = term if xf is None else xf + term
        return torch.fft.irfft(xf, n=n, dim=-1)


def _check_finite(t: torch.Tensor, probe: torch.Tensor | None) -> None:
    """Refuse NaN or infinity in the coefficients ``t``. A non-finite coefficient makes its
    sums (``probe``: positive weights times every coefficient, or the FFTs' mixing of them)
    non-finite, so a finite ``probe`` clears ``t`` without a pass over it; otherwise (or
    without a probe) ``t`` itself is checked, which also tells an overflow of finite
    coefficients from bad input."""
    if probe is not None and bool(torch.isfinite(probe.detach()).all()):
        return
    as_tensor(t.detach(), "coefs", min_ndim=2, allow_complex=True)  # raises by name


def _symmetric(w: torch.Tensor, mode: str, wavelet: Any) -> torch.Tensor:
    """The coefficients (time last) over one period of the symmetric extension of ``x`` that
    ``mode`` implies (module notes): unchanged for ``"wrap"``."""
    n = w.shape[-1]
    if mode == "wrap" or (mode == "mirror" and n < 3):
        return w
    if isinstance(wavelet, DerivativeOfGaussian):
        mirrored = -w if wavelet.order == 1 else w
    else:
        mirrored = w.conj() if w.is_complex() else w
    tail = mirrored if mode == "reflect" else mirrored[..., 1:n - 1]
    out = torch.empty((*w.shape[:-1], n + tail.shape[-1]), dtype=w.dtype, device=w.device)
    out[..., :n] = w
    out[..., n:] = tail.flip(-1)
    return out


def _extend_signal(x: np.ndarray, mode: str) -> np.ndarray:
    """One period of the symmetric (or periodic) extension of ``x`` (time last)."""
    if mode == "wrap" or (mode == "mirror" and x.shape[-1] < 3):
        return x
    tail = x if mode == "reflect" else x[..., 1:-1]
    return np.concatenate((x, tail[..., ::-1]), axis=-1)


@plan_cache(maxsize=8)
def _plan(scales: tuple[float, ...], wavelet: Any, method: str, rcond: float) -> ICWT:
    return ICWT(scales, wavelet, method=method, rcond=rcond)


def icwt(coefs: Any, scales: Sequence[float], wavelet: AnyWavelet | None = None,
         axis: int = -1, *, mode: str = "reflect", method: str = "least-squares",
         rcond: float = RCOND) -> Any:
    """Inverse continuous wavelet transform: real signals from their coefficients.

    Parameters
    ----------
    coefs : array_like or torch.Tensor
        ``(len(scales), *shape)`` as returned by :func:`~fastmoments.signal.cwt` (complex,
        Morlet) or with a derivative of Gaussian (real); leading axes of ``shape``
        are a batch. Never modified.
    scales : sequence of float
        The scales σ of the coefficients (at least two, distinct).
    wavelet : Morlet, DerivativeOfGaussian or GeneralizedMorse, optional
        The wavelet of the transform (default ``Morlet(6.0)``).
    axis : int
        Time axis of the signals (the ``axis`` given to the transform).
    mode : {"reflect", "mirror", "wrap"}
        The boundary mode of the transform (default ``"reflect"``, the transform's default):
        the least-squares inverse is exact on the covered band for these three (module notes).
    method : {"least-squares", "single-integral"}
        ``"least-squares"`` (default): exact on the band the scales cover;
        ``"single-integral"``: Morlet's sum over scales, no FFT (module notes).
    rcond : float
        Least squares: the relative threshold of the covered band (default :data:`RCOND`).

    Returns
    -------
    numpy.ndarray or torch.Tensor
        Real, ``shape``, float32 for complex64/float32 coefficients, else float64.

    Raises
    ------
    ValueError
        For a first axis that is not ``len(scales)``, fewer than two scales, repeated or
        non-positive scales, an unknown ``method``, ``rcond`` outside ``[0, 1)``, NaN or
        infinity in ``coefs``, an ``axis`` out of range, or the single integral of the
        order-1 DoG.
    TypeError
        For a wavelet that is not a :class:`~fastmoments.signal.Morlet`, a
        :class:`~fastmoments.signal.DerivativeOfGaussian` or a
        :class:`~fastmoments.signal.GeneralizedMorse`, or a non-integer ``axis``.

    Notes
    -----
    What each method recovers, for ``n`` samples: :func:`icwt_response`. Least squares
    (the truncated pseudo-inverse of the transform over ``ω``):
    ``X(ω) = Σ_j [conj Ψ_j(ω) W_j(ω) + Ψ_j(-ω) conj W_j(-ω)] / D(ω)`` where ``√D(ω) > rcond
    max √D``, else 0 (:func:`wavelet_response` gives ``Ψ_j``). Single integral:
    ``x = Re Σ_j W_j σ_j^{-1/2} Δ_j(ln σ) / K_ψ`` (:func:`reconstruction_constant`); its
    response depends on the density of the scales: for the Morlet at ξ = 6 it is flat to
    2e-6 (8 or more scales per octave; 2e-5 with 4, 4e-2 with 2) at the frequencies with
    ``σ_min ω ≤ ξ - 5`` and ``σ_max ω ≥ ξ + 5``, and rolls off beyond.
    Cost: least squares ``J`` FFTs of ``n`` samples (``2n`` for the symmetric modes) and one
    inverse FFT; the single integral ``J n`` multiply-adds.

    Examples
    --------
    >>> import numpy as np
    >>> from fastmoments.signal import cwt
    >>> t = np.arange(2048)
    >>> x = np.cos(2 * np.pi * 40 * (t + 0.5) / 4096)   # smooth under the reflect extension
    >>> scales = np.geomspace(2, 200, 64)
    >>> coefs, _ = cwt(x, scales)
    >>> y = icwt(coefs, scales)
    >>> bool(np.max(np.abs(y - x)) < 1e-3)
    True
    """
    scales_t = _check_scales(scales)
    wavelet = _check_wavelet(wavelet)
    method = check_choice("method", method, METHODS)
    rcond = check_real("rcond", rcond, minimum=0.0, maximum=1.0)
    return _plan(scales_t, wavelet, method, rcond)(coefs, axis, mode)


def icwt_response(scales: Sequence[float], n: int,
                  wavelet: AnyWavelet | None = None, *,
                  method: str = "least-squares", rcond: float = RCOND) -> np.ndarray:
    """What :func:`icwt` recovers of ``cwt`` for signals of ``n`` samples: the factor
    ``R(ω_k)`` on the rfft frequencies ``ω_k = 2πk/n`` (complex128, see
    :meth:`ICWT.response`); ``irfft(R · rfft(x))`` is the band-limited signal the round trip
    returns (periodic boundary).

    >>> r = icwt_response(np.geomspace(2, 200, 80), 1024)
    >>> float(r[0].real), float(r[1024 // 20].real)    # the mean is never covered; ω = 2π/20 is
    (0.0, 1.0)
    """
    n = check_int("n", n, minimum=2)
    return _plan(_check_scales(scales), _check_wavelet(wavelet),
                 check_choice("method", method, METHODS),
                 check_real("rcond", rcond, minimum=0.0, maximum=1.0)).response(n)


def icwt_band(x: Any, scales: Sequence[float],
              wavelet: AnyWavelet | None = None, axis: int = -1, *,
              mode: str = "reflect", method: str = "least-squares",
              rcond: float = RCOND) -> np.ndarray:
    """The signal that ``icwt(cwt(x, scales, mode=mode), scales, mode=mode)`` returns in exact
    arithmetic: ``x`` filtered by :func:`icwt_response` on one period of its ``mode``
    extension (float64 NumPy; the reference of the round trip's accuracy).

    >>> t = np.arange(1000)
    >>> x = np.cos(2 * np.pi * 25 * (t + 0.5) / 2000)   # inside the band, smooth when reflected
    >>> y = icwt_band(x, np.geomspace(2, 100, 60))
    >>> bool(np.max(np.abs(y - x)) < 1e-9)
    True
    """
    mode = check_choice("mode", mode, INVERSE_MODES)
    arr = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    n = arr.shape[-1]
    ext = _extend_signal(arr, mode)
    r = icwt_response(scales, ext.shape[-1], wavelet, method=method, rcond=rcond)
    y = np.fft.irfft(r * np.fft.rfft(ext, axis=-1), ext.shape[-1], axis=-1)[..., :n]
    return np.moveaxis(y, -1, axis)
