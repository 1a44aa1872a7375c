"""A decimated scalogram: the CWT at every ``hop``-th sample, in memory proportional to N/hop,
behind :func:`~fastmoments.signal.cwt` ``(..., hop=h)``.

:func:`cwt_hop` runs the transform it is given (the CWT of one block, Morlet or derivative of
Gaussian) on blocks of the signal with a halo wider than the kernels, keeps every ``hop``-th
coefficient of each block, and frees the block: the full ``(n_scales, N)`` array never exists.
It takes the transform as a callable and imports no transform.
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
