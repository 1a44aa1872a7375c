"""The generalized Morse wavelets (Olhede & Walden 2002; Lilly & Olhede 2009, 2012) and their
CWT, which :func:`~fastmoments.signal.cwt` runs for a :class:`GeneralizedMorse` wavelet.

The wavelet is defined by its Fourier transform, zero at negative frequencies (analytic)::

    Ψ_{β,γ}(ω) = a_{β,γ} ω^β e^{-ω^γ}   (ω > 0),   0   (ω ≤ 0),

``a_{β,γ}² = 2π γ 2^r / Γ(r)``, ``r = (2β + 1)/γ``, so that ``(1/2π) ∫ |Ψ|² dω = 1`` (unit
energy). At scale ``s`` (dimensionless, in samples per unit of the mother wavelet's time, as
ssqueezepy's ``scales``) the kernel applied to the samples is the band-limited wavelet::

    ψ_s[k] = (1/2π) ∫_{-π}^{π} √s Ψ(sω) e^{iωk} dω,

whose discrete-time Fourier transform is ``√s Ψ(sω)`` on ``(-π, π)`` (half of it at the
Nyquist frequency ``ω = π``, where the periodic transform jumps). It has unit energy up to the
part of ``Ψ(sω)`` beyond Nyquist, peaks at ``ω_p / s`` radians per sample with
``ω_p = (β/γ)^{1/γ}``, and its time-bandwidth product is ``P = √(βγ)``.

**Why an FFT and not the sliding Fourier transform.** Every other wavelet of this package
costs ``O(N)`` per scale whatever the scale, by a fit of a short sum of windowed complex
exponentials to a kernel of finite support (a Gaussian envelope, 4-6 σ). The Morse kernel
has no finite support: ``Ψ`` vanishes at ``ω = 0`` only as ``ω^β`` and is exactly zero
below it, so ``ψ_s[k]`` decays only as ``|k|^{-(β+1)}``, and the window that holds all but
1e-4 of its RMS is ``16 s`` wide on each side at (β, γ) = (20, 3), ``20 s`` at (60, 3),
``21 s`` at (3, 3) and ``400 s`` at (1, 3) (``benchmarks/signal_dog.py``, recorded in
``benchmarks/results/signal_dog.md``): a window of tens of envelope widths, whose fit would
need tens of terms per scale, and none at all for small β. The transform is therefore
computed exactly in the frequency domain (the route :func:`~fastmoments.signal.routes.
morse_route` names): one FFT of the boundary-extended signal shared by all scales, then per
scale a product and an inverse FFT, ``O(L log L)`` with ``L = 2N`` for ``"reflect"``. With
a ``hop`` the inverse FFT is folded to ``L / hop`` points (the spectrum is aliased onto the
coarser grid, an exact identity), so the time and memory per scale fall as ``N / hop``.

**Boundaries, exactly.** ``"reflect"`` and ``"mirror"`` extend ``x`` symmetrically to a
period of ``2N`` (``2N - 2``) and ``"wrap"`` periodically to ``N``; the linear convolution of
the extended signal with ``ψ_s`` is then the circular convolution over that period, whose
DFT is the product with ``√s Ψ(sω_k)`` at ``ω_k = 2πk/L``: no truncation and no padding
error. Zero or constant padding would need the infinite kernel's tail and is not offered.

**ssqueezepy.** ``ssqueezepy.cwt(x, Wavelet(('gmw', {'beta': β, 'gamma': γ, 'norm':
'energy'})), scales, l1_norm=False, padtype=None)`` computes the same coefficients as
``cwt(x, scales, GeneralizedMorse(β, γ), mode="wrap")`` (tested to 1e-12 relative in float64;
pass ``dtype='float64'`` to ssqueezepy, whose default is float32). Its default ``norm=
'bandpass'`` (with ``l1_norm=True``, jLab's default too) scales each wavelet so that ``Ψ``
peaks at 2 at every scale: multiply our coefficients by :meth:`GeneralizedMorse.bandpass_factor`
``(s)``. Its default padding (``padtype='reflect'`` up to a power of two) is not one of our
modes; the coefficients agree away from the ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._array import as_tensor, complex_dtype, to_output
from .._memory import memory_budget as _budget
from .._validate import check_choice
from ._apply import output_target
from .routes import real_transforms

__all__ = ["MORSE_MODES", "GeneralizedMorse"]

#: The boundary modes of the Morse CWT (module notes: each is exact).
MORSE_MODES = ("reflect", "mirror", "wrap")

#: Largest β and γ accepted: beyond, ``ω^β e^{-ω^γ}`` is a spike narrower than any grid.
MAX_BETA = 1000.0
MAX_GAMMA = 100.0


def _check_parameter(name: str, value: Any, maximum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v <= 0 or v > maximum:
        raise ValueError(f"{name} must be finite, > 0 and <= {maximum:g}, got {value}")
    return v


@dataclass(frozen=True)
class GeneralizedMorse:
    """The generalized Morse wavelet of parameters β (order of the zero at ω = 0) and γ
    (shape of the decay), unit-energy and analytic (:mod:`~fastmoments.signal.morse`).

    ``Ψ_{β,γ}(ω) = a_{β,γ} ω^β e^{-ω^γ}`` for ω > 0 and 0 otherwise, ``a² = 2πγ 2^r/Γ(r)``,
    ``r = (2β+1)/γ`` (Olhede & Walden 2002; Lilly & Olhede 2009, 2012); at scale ``s`` the
    kernel's discrete-time Fourier transform is ``√s Ψ(sω)`` on ``(-π, π)``.

    Parameters
    ----------
    beta : float
        β > 0 (default 20): the wavelet's number of oscillations grows with β.
    gamma : float
        γ > 0 (default 3, the Airy family that jLab and ssqueezepy use by default, the most
        nearly symmetric in time and frequency). ssqueezepy's default β is 60.

    Notes
    -----
    Peak frequency ``ω_p = (β/γ)^{1/γ}`` radians per unit of scale
    (:attr:`peak_frequency`); time-bandwidth product ``P = √(βγ)``. The transform is computed
    in the frequency domain, exactly, at ``O(N log N)`` per scale (module notes say why no
    fit of constant cost per scale reaches it).

    Examples
    --------
    >>> w = GeneralizedMorse(20, 3)
    >>> round(w.peak_frequency, 6), round(w.time_bandwidth, 4)
    (1.882072, 7.746)
    >>> omega = 2 * np.pi * np.arange(4096) / 8192
    >>> psi = w.frequency_response(omega, 10.0)
    >>> round(float(np.sum(psi.real ** 2)) / 8192, 6)   # unit energy (Parseval)
    1.0
    """

    beta: float = 20.0
    gamma: float = 3.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", _check_parameter("beta", self.beta, MAX_BETA))
        object.__setattr__(self, "gamma", _check_parameter("gamma", self.gamma, MAX_GAMMA))

    @property
    def peak_frequency(self) -> float:
        """``ω_p = (β/γ)^{1/γ}``: where ``Ψ`` peaks, radians per unit of scale."""
        return (self.beta / self.gamma) ** (1.0 / self.gamma)

    @property
    def center_frequency(self) -> float:
        """``ω_p / (2π)``: the peak frequency in cycles per unit of scale (a scale ``s``
        peaks at ``ω_p / (2π s)`` cycles per sample)."""
        return self.peak_frequency / (2.0 * math.pi)

    @property
    def time_bandwidth(self) -> float:
        """``P = √(βγ)``."""
        return math.sqrt(self.beta * self.gamma)

    @property
    def log_norm(self) -> float:
        """``ln a_{β,γ}``, ``a² = 2πγ 2^r / Γ(r)``, ``r = (2β + 1)/γ``."""
        r = (2.0 * self.beta + 1.0) / self.gamma
        return 0.5 * (math.log(2.0 * math.pi * self.gamma) + r * math.log(2.0) - math.lgamma(r))

    def mother(self, omega: np.ndarray) -> np.ndarray:
        """``Ψ_{β,γ}(ω)`` of the mother wavelet (float64; 0 for ω ≤ 0)."""
        w = np.asarray(omega, dtype=np.float64)
        out = np.zeros(w.shape)
        pos = w > 0
        u = w[pos]
        out[pos] = np.exp(self.log_norm + self.beta * np.log(u) - u ** self.gamma)
        return out

    def frequency_response(self, omega: np.ndarray, scale: float) -> np.ndarray:
        """``Σ_k ψ_s[k] e^{-iωk}`` (complex128, real-valued): ``√s Ψ(s ω')`` with ``ω'`` the
        frequency taken into ``(-π, π]``, halved at ``ω' = π`` (the midpoint of the jump)."""
        w = np.asarray(omega, dtype=np.float64)
        # into (-π, π], touching only the frequencies outside it (a subtraction from π would
        # cost the small ω their relative precision, which e^{-(sω)^γ} multiplies)
        outside = (w > np.pi) | (w <= -np.pi)
        wrapped = np.where(outside, np.pi - np.mod(np.pi - w, 2 * np.pi), w)
        out = math.sqrt(float(scale)) * self.mother(float(scale) * wrapped)
        nyquist = np.abs(wrapped - np.pi) <= 1e-12
        out[nyquist] *= 0.5
        return out.astype(np.complex128)

    def sampled(self, n: np.ndarray, scale: float, *, nodes: int = 512) -> np.ndarray:
        """``ψ_s[n] = (1/2π) ∫_0^π √s Ψ(sω) e^{iωn} dω`` at integer offsets ``n`` (complex128),
        by Gauss-Legendre quadrature on ``nodes`` points (a reference for tests; accurate
        while ``|n| ≪ nodes``)."""
        x, wts = np.polynomial.legendre.leggauss(int(nodes))
        omega = 0.5 * np.pi * (x + 1.0)
        f = math.sqrt(float(scale)) * self.mother(float(scale) * omega) * 0.5 * np.pi * wts
        k = np.asarray(n, dtype=np.float64)
        return (np.exp(1j * np.multiply.outer(k, omega)) @ f) / (2 * np.pi)

    def bandpass_factor(self, scale: float) -> float:
        """The factor from our coefficients to ssqueezepy's and jLab's default ``'bandpass'``
        normalisation (``Ψ`` peaking at 2 at every scale): ``2 ω_p^{-β} e^{ω_p^γ} / (a √s)``.

        >>> round(GeneralizedMorse(20, 3).bandpass_factor(1.0), 6)
        0.523056
        """
        wp = self.peak_frequency
        return 2.0 * math.exp(-self.beta * math.log(wp) + wp ** self.gamma - self.log_norm
                              ) / math.sqrt(float(scale))

    def reconstruction_constant(self) -> float:
        """``K_ψ = ½ ∫_0^∞ Ψ(ω)/ω dω = a Γ(β/γ) / (2γ)``: the constant of the single-integral
        inverse (:func:`~fastmoments.signal.inverse.reconstruction_constant`)."""
        return 0.5 * math.exp(self.log_norm + math.lgamma(self.beta / self.gamma)) / self.gamma


def _extend(t: torch.Tensor, mode: str) -> torch.Tensor:
    """One period of the ``mode`` extension of ``t`` (time last): ``2N`` samples for
    ``"reflect"``, ``2N - 2`` for ``"mirror"`` (``N`` below 3), ``N`` for ``"wrap"``."""
    n = t.shape[-1]
    if mode == "wrap" or (mode == "mirror" and n < 3):
        return t
    tail = t if mode == "reflect" else t[..., 1:n - 1]
    return torch.cat((t, tail.flip(-1)), dim=-1)


def _band(wavelet: GeneralizedMorse, scale: float, length: int) -> tuple[int, int]:
    """The DFT indices ``[lo, hi)`` (of ``0 .. L//2``) outside which ``√s Ψ(sω_k)`` is below
    ``e^{-700}`` (zero to float64 beside a peak of order one): ``ln Ψ(u) = ln a + β ln u -
    u^γ`` is below ``-700`` where ``β ln u < -700 - ln a`` and where
    ``u^γ > 700 + ln a + β ln u`` (solved by fixed-point steps, which increase to the root)."""
    c = 700.0 + wavelet.log_norm + 0.5 * math.log(scale)
    u_lo = math.exp(-c / wavelet.beta)
    u = max(wavelet.peak_frequency, c ** (1.0 / wavelet.gamma))
    for _ in range(50):
        nxt = (c + wavelet.beta * math.log(u)) ** (1.0 / wavelet.gamma)
        if nxt <= u * (1 + 1e-12):
            break
        u = nxt
    step = scale * 2 * math.pi / length
    lo = max(0, math.floor(u_lo / step))
    hi = min(length // 2 + 1, math.ceil(1.01 * u / step) + 1)
    return lo, max(lo, hi)



#: Scratch (bytes) of one block of scales of the real-transform route when no
#: ``memory_budget`` is given: three ``(scales, signals, N)`` real arrays.
R2R_SCRATCH = 32 << 20


#: Tables a plan keeps (:func:`_tables`; bands, scaled responses and device tensors per
#: signal length): the oldest go first, so a plan applied to many lengths stays small.
MAX_TABLES = 8


def _remember(tables: dict | None, key: tuple, value: Any) -> None:
    """Keep ``value`` under ``key`` in a plan's ``tables`` (at most :data:`MAX_TABLES`)."""
    if tables is None:
        return
    tables[key] = value
    while len(tables) > MAX_TABLES:
        del tables[next(iter(tables))]


def _tables(wavelet: GeneralizedMorse, scales: tuple[float, ...], length: int,
            tables: dict | None) -> list[tuple[int, int, np.ndarray]]:
    """Each scale's band ``[lo, hi)`` (:func:`_band`) and float64 response ``√s Ψ(s ω_k)`` on
    it, ``ω_k = 2πk / length``; kept in ``tables`` (a plan's dict) when given."""
    key = ("bands", int(length))
    if tables is not None and key in tables:
        return tables[key]
    omega = 2 * np.pi * np.arange(length // 2 + 1) / length
    out = []
    for s in (float(v) for v in scales):
        lo, hi = _band(wavelet, s, length)
        out.append((lo, hi, wavelet.frequency_response(omega[lo:hi], s).real))
    _remember(tables, key, out)
    return out


def _reflect_r2r(tl: torch.Tensor, scales: tuple[float, ...], wavelet: GeneralizedMorse,
                 target: torch.Tensor, tables: dict | None,
                 memory_budget: float | None) -> None:
    """The ``"reflect"`` CWT of the CPU signals ``tl`` (time last) into ``target`` ``(J,
    *tl.shape)`` by real transforms of length ``N``, exactly the period-``2N`` FFT route's
    coefficients (to rounding).

    The extension ``x_e = (x, reversed x)`` has the DFT ``X_e[k] = e^{iπk/2N} C[k]`` with
    ``C = DCT-II(x)`` (real), and ``C[N] = 0``. The coefficients on ``0 ≤ n < N`` are then
    ``W[n] = (1/2N) Σ_{0<k<N} a_k e^{iπk(n+½)/N}``, ``a_k = √s Ψ(s πk/N) C[k]`` real: the real
    part is a DCT-III of ``a``, the imaginary part a DST-III of ``a`` shifted by one,
    ``W = (DCT-III(a) + i DST-III(a_{1..N}))/(4N)`` in scipy's unnormalised convention. Per
    scale two real transforms of ``N`` points instead of a complex one of ``2N`` (a length
    whose factors, such as 2N = 2^3·17·19·53 for the 68476-sample PPG recording, are slow
    for FFT libraries). Complex signals: ``W(a + ib) = W(a) + i W(b)``.
    """
    import scipy.fft as sfft

    n = tl.shape[-1]
    nsig = int(np.prod(tl.shape[:-1], dtype=np.int64))
    xn = tl.detach().reshape(nsig, n).numpy()
    parts = [xn.real, xn.imag] if np.iscomplexobj(xn) else [xn]
    rdt = parts[0].dtype
    coef = [sfft.dct(p, type=2, axis=-1) for p in parts]
    key = ("r2r", n, rdt.str)
    bands = None if tables is None else tables.get(key)
    if bands is None:  # the responses scaled by 1/(4N), in the working precision
        bands = [(lo, min(hi, n), (tab[: max(0, min(hi, n) - lo)] / (4 * n)).astype(rdt))
                 for lo, hi, tab in _tables(wavelet, scales, 2 * n, tables)]  # C[N] = 0
        _remember(tables, key, bands)
    work = target if target.is_contiguous() else torch.empty(target.shape, dtype=target.dtype)
    res = work.numpy().reshape(len(scales), nsig, n)
    room = (R2R_SCRATCH if memory_budget is None
            else _budget(torch.device("cpu"), memory_budget))  # (<= 1: a fraction of free)
    block = int(max(1, min(len(scales), room // (3 * rdt.itemsize * nsig * (n + 1)))))
    for j0 in range(0, len(scales), block):
        j1 = min(len(scales), j0 + block)
        for p, c in enumerate(coef):
            a = np.zeros((j1 - j0, nsig, n + 1), dtype=rdt)
            for i, (lo, hi, tab) in enumerate(bands[j0:j1]):
                if hi > lo:
                    np.multiply(c[:, lo:hi], tab, out=a[i, :, lo:hi])
            re = sfft.dct(a[..., :n], type=3, axis=-1, overwrite_x=False)
            im = sfft.dst(a[..., 1:], type=3, axis=-1, overwrite_x=True)
            out = res[j0:j1]
            if p == 0:
                out.real[...] = re
                out.imag[...] = im
            else:  # + i W(b)
                out.real[...] -= im
                out.imag[...] += re
    if work is not target:
        target.copy_(work)


def _ifft(y: torch.Tensor, grad: bool) -> torch.Tensor:
    """The inverse FFT along the last axis: scipy.fft's on the CPU without a gradient (faster
    than torch's at lengths of large prime factors: 4.4 against 10.5 ms at 2^3·17·19·53
    points, one thread), torch's otherwise."""
    if grad or y.device.type != "cpu":
        return torch.fft.ifft(y, dim=-1)
    import scipy.fft as sfft

    return torch.from_numpy(sfft.ifft(y.numpy(), axis=-1))


def _scales_by_fft(spec: torch.Tensor, bands: list, y: torch.Tensor, target: torch.Tensor,
                   sizes: tuple[int, int, int, int, int, int], grad: bool) -> list:
    """The per-scale loop of :func:`morse_cwt`'s frequency-domain route: each scale's product
    on its band of ``spec`` (in the scratch row ``y``), one inverse FFT, written into
    ``target[j]``; with ``grad`` the results are returned instead (no writes in place).
    ``sizes``: ``(N, N_out, hop, L, fold, rows)``."""
    n, n_out, hop, length, fold, rows = sizes
    cuda = spec.device.type != "cpu"
    kept = []
    for j, (lo, hi, tab) in enumerate(bands):
        if grad:  # differentiable: the product padded with zeros, no writes in place
            y = torch.nn.functional.pad(spec[..., lo:hi] * tab, (lo, rows - hi))
        else:
            torch.mul(spec[..., lo:hi], tab, out=y[..., lo:hi])
        if fold != length:
            folded = y.reshape(*y.shape[:-1], rows // fold, fold).sum(-2)
            w = _ifft(folded, grad)[..., :n_out] / hop
        elif length == n and hop == 1 and not grad and target[j].is_contiguous() and cuda:
            torch.fft.ifft(y, dim=-1, out=target[j])
            w = None
        else:
            w = _ifft(y, grad)[..., :n:hop]
        if grad:
            kept.append(w)
        else:
            if w is not None:
                target[j].copy_(w)
            y[..., lo:hi] = 0
    return kept


def morse_cwt(x: Any, scales: tuple[float, ...], wavelet: GeneralizedMorse, axis: int = -1,
              *, mode: str = "reflect", hop: int = 1, out: Any = None,
              memory_budget: float | None = None, check_finite: bool = True,
              tables: dict | None = None) -> Any:
    """The body of :func:`~fastmoments.signal.cwt` for a :class:`GeneralizedMorse` wavelet:
    coefficients ``(len(scales), *x.shape)`` (the time axis ``ceil(N / hop)`` long), complex.

    ``x`` may be real or complex (the transform is linear: ``W(a + ib) = W(a) + i W(b)``).
    ``W[j, ..., n] = Σ_k ψ_{s_j}[k] x_e[..., n - k]`` over the ``mode`` extension ``x_e`` of
    ``x``, computed exactly in the frequency domain (module notes): ``X = FFT_L(x_e)``,
    ``W_j = IFFT_L(√s_j Ψ(s_j ω) X)[:N]``. With ``hop > 1`` and ``L`` a multiple of ``hop``,
    ``W_j[m hop] = IFFT_{L/hop}(Σ_q Y_j[r + qL/hop])[m] / hop`` (the product ``Y_j`` folded
    onto ``L/hop`` frequencies); otherwise the full inverse is sliced. The scales run one by
    one, each on its band (where ``Ψ(sω) > e^{-700}``): scratch of one scale's spectrum and
    inverse, ``O(L)`` per signal, besides the result.

    On the CPU, for ``mode="reflect"``, ``hop=1`` and no gradient recorded, the same
    coefficients come from real transforms of length ``N``
    (:func:`~fastmoments.signal.routes.real_transforms`, :func:`_reflect_r2r`), the scales
    in blocks whose scratch fits ``memory_budget`` (default 32 MiB). ``tables``: a plan's dict
    that keeps each scale's band and float64 response between calls (built on the first call
    of each length).
    """
    mode = check_choice("mode", mode, MORSE_MODES)
    t, kind = as_tensor(x, "x", min_ndim=1, allow_complex=True, check_finite=check_finite)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer, got {axis!r}")
    if not -t.ndim <= int(axis) < t.ndim:
        raise ValueError(f"axis={axis} is out of range for x with {t.ndim} dimensions")
    ax = int(axis) % t.ndim
    real = t.real.dtype if t.is_complex() else t.dtype
    cdt = complex_dtype(real)
    tl = t.movedim(ax, -1)
    n = tl.shape[-1]
    n_out = -(-n // hop)
    shape = (len(scales), *tl.shape[:-1], n_out)
    grad = torch.is_grad_enabled() and t.requires_grad
    if hop > 1 and out is not None:
        raise ValueError(f"out must not be given with hop={hop}")
    final = (len(scales), *t.shape[:ax], n_out, *t.shape[ax + 1:])
    if real_transforms(t.device.type, mode, hop, grad) and n > 0:
        user_out, tgt = output_target(out, x, t, kind, final, cdt)
        target = (torch.empty(shape, dtype=cdt) if tgt is None else tgt.movedim(ax + 1, -1))
        _reflect_r2r(tl, scales, wavelet, target, tables, memory_budget)
        if user_out is not None:
            return user_out
        return to_output(target.movedim(-1, ax + 1), kind)
    ext = _extend(tl, mode)
    length = ext.shape[-1]
    # the spectrum at ω_k, k = 0 .. L//2: the wavelet is zero at the other half
    half = length // 2 + 1
    spec = (torch.fft.fft(ext, dim=-1)[..., :half] if ext.is_complex()
            else torch.fft.rfft(ext, dim=-1))
    fold = length // hop if (hop > 1 and length % hop == 0) else length
    rows = -(-half // fold) * fold  # the positive half padded to whole periods of the fold
    user_out, tgt = output_target(out, x, t, kind, final, cdt)
    target = (torch.empty(shape, dtype=cdt, device=t.device) if tgt is None
              else tgt.movedim(ax + 1, -1))
    # one scale at a time: the product on the wavelet's band only (the rest of the scratch
    # row stays zero), then one inverse FFT, written straight into the result where it can be
    y = torch.zeros((*tl.shape[:-1], rows), dtype=cdt, device=t.device)
    key = ("tensors", length, str(t.device), str(real))
    bands = None if tables is None else tables.get(key)
    if bands is None:  # the responses on the device, in the working precision, once
        bands = [(lo, hi, torch.as_tensor(tab, device=t.device).to(real))
                 for lo, hi, tab in _tables(wavelet, scales, length, tables)]
        _remember(tables, key, bands)
    kept = _scales_by_fft(spec, bands, y, target, (n, n_out, hop, length, fold, rows), grad)
    if grad:
        if out is not None:
            raise ValueError("out must not be given while a gradient is recorded for x")
        return to_output(torch.stack(kept).movedim(-1, ax + 1), kind)
    if user_out is not None:
        return user_out
    return to_output(target.movedim(-1, ax + 1), kind)
