"""A decimated scalogram: the CWT at every ``hop``-th sample, in memory proportional to N/hop,
behind :func:`~fastmoments.signal.cwt` ``(..., hop=h)``.

:func:`cwt_hop` runs the transform it is given (the CWT of one block, Morlet or derivative of
Gaussian) on blocks of the signal with a halo wider than the kernels, keeps every ``hop``-th
coefficient of each block, and frees the block: the full ``(n_scales, N)`` array never exists.
It takes the transform as a callable and imports no transform.

:func:`cwt_hop_prefix` computes the kept samples only, for SFT banks without attenuation (the
Morlet's default): the window sums at the kept samples from prefix sums over segments of
``hop`` samples, in matrix products (its notes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .._array import as_tensor, complex_dtype, to_output
from .._validate import check_int
from .wavelets import DerivativeOfGaussian, Morlet

__all__ = ["GROUP", "MIN_BLOCK", "cwt_hop"]

#: Scales transformed together (sorted by σ, so that a group's halo fits its largest scale).
GROUP = 16

#: Fewest samples of a block (before rounding up to a multiple of ``hop``): short blocks would
#: spend their time on the per-call overhead.
MIN_BLOCK = 4096


def _halo(sigma: float, truncate: float) -> int:
    """Samples on each side of a block: ``ceil(max(8, truncate) σ) + 4``, more than the
    half-width of the kernels the transforms apply (at most about 6σ for the Morlet and
    Gaussian SFT fits, ``truncate σ`` for the direct kernels)."""
    return math.ceil(max(8.0, truncate) * sigma) + 4


def cwt_hop(transform: Callable[..., tuple[Any, np.ndarray]], x: Any,
            scales: tuple[float, ...], wavelet: Morlet | DerivativeOfGaussian, hop: int,
            axis: int = -1, *, truncate: float = 4.0, **options: Any) -> tuple[Any, np.ndarray]:
    """The CWT at samples ``0, hop, 2 hop, ...`` only, in memory proportional to ``N / hop``.

    Parameters
    ----------
    transform : callable
        ``transform(x, scales, wavelet, axis=-1, truncate=..., **options)``: the full CWT of
        one block, ``(coefficients, frequencies)``, as :func:`~fastmoments.signal.cwt` with
        ``hop=1``.
    x : array_like or torch.Tensor
        Real signals, transformed along ``axis``; never modified.
    scales : tuple of float
        Scales σ in samples (checked by the caller).
    wavelet : Morlet or DerivativeOfGaussian
        The wavelet.
    hop : int
        Keep every ``hop``-th coefficient (``hop >= 1``).
    axis : int
        Axis of ``x`` holding time.
    truncate : float
        The direct kernels' truncation (checked, > 0): it widens the halo.
    **options
        Passed to ``transform`` (``sampling_period``, ``mode``, ``method``, ...).

    Returns
    -------
    coefficients : numpy.ndarray or torch.Tensor
        ``(len(scales), *x.shape)`` with the time axis ``ceil(N / hop)`` long:
        ``cwt(x, scales)[0][..., ::hop]`` (complex for the Morlet, real for the DoG).
    frequencies : numpy.ndarray
        As the transform returns them.

    Raises
    ------
    ValueError
        For ``hop < 1``, an ``axis`` out of range, NaN or infinity in ``x``, and the errors
        of the transform.
    TypeError
        For a non-integer ``hop`` or ``axis``.

    Notes
    -----
    The scales are transformed in groups of :data:`GROUP` (by increasing σ); each group runs
    on blocks of ``B`` samples (a multiple of ``hop``, ``B ≥ max(4H, MIN_BLOCK)``) extended by
    a halo of ``H = ceil(max(8, truncate) σ_max) + 4`` samples on each side, or by the
    boundary ``mode`` at the ends of the signal, so that every kept coefficient is the one
    the whole signal's transform gives (to rounding: tested). For the DoG wavelets the
    Gaussians' ``method="auto"`` picks its route by the length of each call, so the blocks
    run ``method="sft"`` for ``"auto"``: equal to ``cwt(..., method="sft")`` and to the
    ``"auto"`` transform to the Gaussians' stated error (≤ 1e-4). **Memory**: the result,
    ``J N / hop`` coefficients, plus one block's scratch, ``GROUP (B + 2H)`` per signal,
    which does not grow with ``N``. **Time**: the sliding Fourier transform's recursions
    still pass over every sample, so a call costs about the full transform's time plus the
    halos (at most ``2H/B ≤ 1/2`` more): a hop saves memory, not arithmetic.
    """
    hop = check_int("hop", hop, minimum=1)
    trunc = float(truncate)
    sc = np.asarray(scales, dtype=np.float64).reshape(-1)
    t, kind = as_tensor(x, "x")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer, got {axis!r}")
    if not -t.ndim <= int(axis) < t.ndim:
        raise ValueError(f"axis={axis} is out of range for x with {t.ndim} dimensions")
    ax = int(axis) % t.ndim
    tl = t.movedim(ax, -1)
    n = tl.shape[-1]
    is_dog = isinstance(wavelet, DerivativeOfGaussian)
    if is_dog and options.get("method", "auto") == "auto":
        options = {**options, "method": "sft"}
    kw = dict(truncate=trunc, **options)
    # a first call on a tiny piece checks the scales and options and gives the frequencies
    _, freqs = transform(tl[..., : min(n, 1)], tuple(sc), wavelet, **kw)
    n_out = -(-n // hop)
    dtype = tl.dtype if is_dog else complex_dtype(tl.dtype)
    out = torch.empty((len(sc), *tl.shape[:-1], n_out), dtype=dtype, device=tl.device)
    order = np.argsort(sc, kind="stable")
    for g in range(0, len(sc), GROUP):
        idx = order[g: g + GROUP]
        group = sc[idx]
        halo = _halo(float(group.max()), trunc)
        block = hop * -(-max(4 * halo, MIN_BLOCK) // hop)
        rows = torch.as_tensor(idx, device=tl.device)
        for a in range(0, n, block):
            b = min(n, a + block)
            lo, hi = max(0, a - halo), min(n, b + halo)
            coef, _ = transform(tl[..., lo:hi], tuple(group.tolist()), wavelet, **kw)
            part = coef[..., a - lo: b - lo: hop]
            out[rows, ..., a // hop: a // hop + part.shape[-1]] = part
    return to_output(out.movedim(-1, ax + 1), kind), freqs


def prefix_hop_applies(banks: list) -> bool:
    """Whether :func:`cwt_hop_prefix` can run these banks: SFT banks without attenuation
    (``α = 0``: their prefix sums stay bounded) or explicit kernels (``taps``)."""
    for b in banks:
        if hasattr(b, "taps"):
            continue
        if not hasattr(b, "alpha") or np.any(b.alpha):
            return False
    return True


def _kept_direct(xe: torch.Tensor, taps: np.ndarray, start: int, hop: int,
                 n_out: int) -> torch.Tensor:
    """``Σ_k h[k] x_e[start + j hop - k]`` for ``j < n_out`` (``h`` on ``[-W, W]``): a strided
    correlation with the flipped kernel."""
    w = (len(taps) - 1) // 2
    flipped = np.ascontiguousarray(taps[::-1])
    seg = xe[:, start - w: start - w + (n_out - 1) * hop + 2 * w + 1].unsqueeze(1)
    parts = []
    for part in (flipped.real, flipped.imag):
        k = torch.as_tensor(np.ascontiguousarray(part), dtype=xe.dtype,
                            device=xe.device).reshape(1, 1, -1)
        parts.append(torch.nn.functional.conv1d(seg, k, stride=hop)[:, 0, :n_out])
    return torch.complex(parts[0], parts[1])


def _rotations(omega: torch.Tensor, start: float, step: float, count: int,
               sign: float) -> torch.Tensor:
    """``e^{i sign ω_r (start + step j)}`` for ``j < count``: ``(rows, count)`` complex128,
    from two tables of ``√count`` cosines and sines each (``j = a L + b``: the phase of
    ``a L`` times the phase of ``b``; exact to rounding, without a sine per entry)."""
    dev = omega.device
    size = max(1, math.isqrt(max(count, 1)))
    outer = -(-count // size)
    om = sign * omega[:, None]
    fine = torch.polar(torch.ones((len(omega), size), dtype=torch.float64, device=dev),
                       om * (step * torch.arange(size, dtype=torch.float64, device=dev)))
    coarse = torch.polar(torch.ones((len(omega), outer), dtype=torch.float64, device=dev),
                         om * (start + step * size * torch.arange(outer, dtype=torch.float64,
                                                                    device=dev)))
    return (coarse[:, :, None] * fine[:, None, :]).reshape(len(omega), -1)[:, :count]


def _segment_sums(xe: torch.Tensor, omega: torch.Tensor, d: int, hop: int,
                  n_out: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(Q_r(d), S_r)``: the prefix sum ``Q_r(d) = Σ_{u ≤ d} e^{-iω_r u} x_e[u]``
    ``(B, rows)`` and the unrotated sums over the segments ``(d + (j-1) hop, d + j hop]``,
    ``S_r[j] = Σ_{t=1}^{hop} e^{-iω_r t} x_e[d + (j-1) hop + t]`` for ``1 ≤ j < n_out``
    ``(B, rows, n_out - 1)``: one real matrix product (the segments as rows, times ``cos``
    and ``sin`` of ``ω_r t``)."""
    dev = xe.device
    rows = len(omega)
    u0 = torch.outer(torch.arange(d + 1, dtype=torch.float64, device=dev), omega)
    lead = xe[:, : d + 1]
    head = torch.complex(lead @ torch.cos(u0), -(lead @ torch.sin(u0)))
    ang = torch.outer(torch.arange(1, hop + 1, dtype=torch.float64, device=dev), omega)
    basis = torch.cat((torch.cos(ang), -torch.sin(ang)), dim=1)  # e^{-iωt} = cos - i sin
    seg = xe[:, d + 1: d + 1 + (n_out - 1) * hop].reshape(xe.shape[0], n_out - 1, hop)
    prod = (seg @ basis).transpose(1, 2)  # (B, 2 rows, n_out - 1)
    return head, torch.complex(prod[:, :rows], prod[:, rows:])


def cwt_hop_prefix(t: torch.Tensor, banks: list, hop: int, *, mode: str,
                   cval: float) -> torch.Tensor:
    """The coefficients of every ``hop``-th sample, ``(len(banks), B, ceil(N / hop))``
    (complex128), from signals ``t`` of shape ``(B, N)``, computing only the kept samples.

    For an SFT bank without attenuation (the Morlet's ``method="sft"``, the default), each
    row's windowed sum ``Z_r[n] = Σ_{|k| ≤ K_r} e^{iω_r k} x[m - k]`` (``m = n + n0_r``) is
    ``e^{iω_r m} (Q_r(m + K_r) - Q_r(m - K_r - 1))`` with the prefix sums
    ``Q_r(p) = Σ_{u ≤ p} e^{-iω_r u} x_e[u]`` of the extended signal; at the kept samples
    ``m = j hop + n0_r`` these are sums over segments of ``hop`` samples, one matrix product
    per scale and window end (:func:`_prefix_at`), and
    ``W[j] = Σ_r μ_r Re Z_r - ν_r Im Z_r`` (:meth:`~fastmoments.signal.sliding.SFTBank.kernel`).
    Explicit kernels run as strided correlations. Cost ``O(N R)`` multiply-adds in matrix
    products (``R`` rows) plus ``O(N R / hop)`` for the rest, instead of the recursions'
    ``O(N R)`` sequential steps and the ``J N`` outputs; rounding grows as
    ``ε Σ|x| / |Z|`` (the prefix sums' size against a window's), far below the fits' error.
    """
    from .boundary import extend

    n = t.shape[-1]
    n_out = -(-n // hop)
    pad = max(int(b.pad) for b in banks) + hop + 2
    xe = extend(t.to(torch.float64), pad, pad + hop, mode, cval)
    out = torch.empty((len(banks), t.shape[0], n_out), dtype=torch.complex128,
                      device=t.device)
    for i, b in enumerate(banks):
        if hasattr(b, "taps"):
            out[i] = _kept_direct(xe, np.asarray(b.taps[0]), pad, hop, n_out)
            continue
        acc = torch.zeros((t.shape[0], n_out), dtype=torch.complex128, device=t.device)
        for key in sorted(set(zip(b.half.tolist(), b.shift.tolist(), strict=True))):
            sel = np.flatnonzero((b.half == key[0]) & (b.shift == key[1]))
            om = torch.as_tensor(np.asarray(b.omega[sel], dtype=np.float64), device=t.device)
            k, n0 = int(key[0]), int(key[1])
            lo, hi = pad + n0 - k - 1, pad + n0 + k
            head_hi, s_hi = _segment_sums(xe, om, hi, hop, n_out)
            head_lo, s_lo = _segment_sums(xe, om, lo, hop, n_out)
            # Q(hi + j hop) - Q(lo + j hop): the segment sums rotated to their starts
            # (e^{-iω(lo + (j-1) hop)}, and e^{-iω(hi - lo)} more for the upper end), summed
            s_hi *= _rotations(om, hi - lo, 0.0, 1, -1.0)
            s_hi -= s_lo
            s_hi *= _rotations(om, lo, hop, n_out - 1, -1.0)
            z = torch.empty((t.shape[0], len(sel), n_out), dtype=torch.complex128,
                            device=t.device)
            z[..., 0] = head_hi - head_lo
            torch.cumsum(s_hi, dim=-1, out=z[..., 1:])
            z[..., 1:] += z[..., :1]
            z *= _rotations(om, pad + n0, hop, n_out, 1.0)
            # W = Σ_r μ_r Re Z_r - ν_r Im Z_r, as one real product
            parts = torch.view_as_real(z)  # (B, rows, n_out, 2)
            mix = torch.as_tensor(np.concatenate(
                [np.stack([b.mu[sel].real, b.mu[sel].imag]),
                 -np.stack([b.nu[sel].real, b.nu[sel].imag])], axis=1), device=t.device)
            both = torch.cat((parts[..., 0], parts[..., 1]), dim=1)  # (B, 2 rows, n_out)
            res = mix @ both  # (B, 2, n_out): real and imaginary parts of W
            acc += torch.complex(res[:, 0], res[:, 1])
        out[i] = acc
    return out
